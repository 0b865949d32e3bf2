/* Stage 04 on the GPU: the shuffle version of the fused softmax, and every row mapping on rows of
 * awkward lengths (1, around a warp, around 128 and 1024, odd so rows are not 16-byte aligned,
 * and a vocabulary's 50257), on every input range, with masked entries; and the exercise's worked
 * solution, a half-warp per row, on row counts around its warps and blocks. */
#include "../04_warp/warp.h"
#include "gpu_test.h"

static size_t sizes[] = {1, 255, 256, 257, 65537, (size_t)1 << 20, 10000000, 50000000};

ParameterizedTestParameters(stage04, fused_warp_matches_reference)
{
    return cr_make_param_array(size_t, sizes, sizeof sizes / sizeof sizes[0]);
}

ParameterizedTest(size_t *n, stage04, fused_warp_matches_reference)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    expect_passes_on_every_range(&fused_warp_variant, (softmax_shape){1, *n}, 400 + *n, 3);
}

/* Parameters are indices and sizes, not pointers: Criterion may run a test in a fresh process. */
static const softmax_variant *const row_variants[] = {&thread_per_row_variant, &warp_per_row_variant,
                                                      &block_per_row_variant};

typedef struct {
    int variant;
    size_t rows, cols;
} row_params;

ParameterizedTestParameters(stage04, rows_match_reference)
{
    static const size_t cols[] = {1, 2, 31, 32, 33, 127, 128, 1000, 1024, 1025, 4097, 50257};
    static const size_t many_rows_cols[] = {1, 2, 31, 33, 128, 1025, 4097};
    static row_params params[3 * (2 * 12 + 7)];
    size_t n = 0;
    for (int v = 0; v < 3; v++) {
        for (size_t r = 0; r < 2; r++)
            for (size_t c = 0; c < 12; c++)
                params[n++] = (row_params){v, r == 0 ? 1 : 7, cols[c]};
        for (size_t c = 0; c < 7; c++)
            params[n++] = (row_params){v, 8192, many_rows_cols[c]};
    }
    return cr_make_param_array(row_params, params, n);
}

ParameterizedTest(row_params *p, stage04, rows_match_reference)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    const softmax_variant *v = row_variants[p->variant];
    if (v->supports && !v->supports(p->rows, p->cols))
        return; /* warp_per_row holds at most 1024 columns in registers */
    expect_passes_on_every_range(v, (softmax_shape){p->rows, p->cols}, 500 + p->rows + p->cols, 1);
}

/* Row r has its first 15 r entries masked (-inf); the last row keeps a single entry, which must
 * get probability 1. 1001 columns: rows not 16-byte aligned, and short enough for warp_per_row. */
Test(stage04, masked_rows)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    const size_t rows = 64, cols = 1001;
    for (int v = 0; v < 3; v++) {
        softmax_case c = case_create((softmax_shape){rows, cols}, (input_spec){DIST_NORMAL, -3.0, 3.0}, 61);
        for (size_t r = 0; r < rows; r++)
            for (size_t k = 0; k < (r + 1 == rows ? cols - 1 : 15 * r); k++)
                c.x_host[r * cols + k] = -INFINITY;
        case_refresh(&c);
        const verify_result res = check_case(row_variants[v], &c, NULL);
        EXPECT_PASS(res, "%s", row_variants[v]->name);
        cr_expect_eq(c.y_host[rows * cols - 1], 1.0f, "%s: the only unmasked entry", row_variants[v]->name);
        case_destroy(&c);
    }
}

/* Long rows of four tied levels in [0, 10]: thread_per_row adds its 13777 terms in one thread, and
 * block_per_row its 4194304 in threads of 16384 each. Their terms repeat, so a plain float32
 * running sum rounds the same way again and again and ends some 1.2e-4 off (the random sweep found
 * such rows: 1 x 13777 and 1 x 4059499); the compensated sum (kahan_add in warp.cu) must hold. */
Test(stage04, long_rows_of_tied_logits)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    static const struct {
        const softmax_variant *variant;
        size_t cols;
    } cases[] = {{&thread_per_row_variant, 13777}, {&block_per_row_variant, (size_t)1 << 22}};
    for (int i = 0; i < 2; i++) {
        const size_t cols = cases[i].cols;
        softmax_case c = case_create((softmax_shape){1, cols}, (input_spec){DIST_UNIFORM, 0.0, 10.0}, 77);
        for (size_t k = 0; k < cols; k++)
            c.x_host[k] = (float)(round(c.x_host[k] * 0.3) * (10.0 / 3.0));
        case_refresh(&c);
        const verify_result res = check_case(cases[i].variant, &c, NULL);
        EXPECT_PASS(res, "%s on 1 x %zu, four levels", cases[i].variant->name, cols);
        case_destroy(&c);
    }
}

/* The exercise's solution (solution/exercise.cu): a half-warp per row, rows of at most 16 columns.
 * Its `handles` names the limit its `supports` draws: 16 columns taken, 17 not. */
Test(stage04, exercise_handles_what_its_message_says)
{
    const softmax_variant *v = &warp_exercise_variant;
    size_t most = 0;
    cr_assert_eq(sscanf(v->handles, "rows of at most %zu columns", &most), 1, "%s", v->handles);
    cr_expect_eq(most, 16);
    cr_expect(v->supports(3, most) && !v->supports(3, most + 1), "%s", v->handles);
    cr_expect(v->supports((size_t)1 << 31, 1), "any number of rows");
}

/* Row counts around a warp (2 rows) and a block (16 rows), and odd ones, where the last warp's
 * second half holds no row; column counts that leave lanes of each half without a column (1, 2, 7,
 * 15) and 16, which leaves none. Most shapes have several rows: with one row the other half of its
 * warp is empty, and a reduction that mixed the two halves would pass. */
typedef struct {
    size_t rows, cols;
} exercise_shape;

ParameterizedTestParameters(stage04, exercise_matches_reference)
{
    static const size_t rows[] = {1, 2, 3, 15, 16, 17, 31, 33, 1001, 65537};
    static const size_t cols[] = {1, 2, 7, 15, 16};
    static exercise_shape params[10 * 5];
    size_t n = 0;
    for (size_t r = 0; r < 10; r++)
        for (size_t c = 0; c < 5; c++)
            params[n++] = (exercise_shape){rows[r], cols[c]};
    return cr_make_param_array(exercise_shape, params, n);
}

ParameterizedTest(exercise_shape *p, stage04, exercise_matches_reference)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    expect_passes_on_every_range(&warp_exercise_variant, (softmax_shape){p->rows, p->cols},
                                 900 + p->rows + p->cols, 1);
}

/* The shape the README times it on: 2M rows of 16, one launch. */
Test(stage04, exercise_on_its_timing_shape)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    expect_passes_on_every_range(&warp_exercise_variant, (softmax_shape){2000000, 16}, 950, 1);
}

/* Row r of 33 has its first r % 16 entries masked (-inf), so masked lanes sit beside unmasked ones
 * in both halves of a warp; the last row keeps a single entry, which must get probability 1, and
 * its warp's second half holds no row. */
Test(stage04, exercise_masked_rows)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    const size_t rows = 33, cols = 16;
    softmax_case c = case_create((softmax_shape){rows, cols}, (input_spec){DIST_NORMAL, -3.0, 3.0}, 96);
    for (size_t r = 0; r < rows; r++)
        for (size_t k = 0; k < (r + 1 == rows ? cols - 1 : r % cols); k++)
            c.x_host[r * cols + k] = -INFINITY;
    case_refresh(&c);
    int launches = 0;
    const verify_result res = check_case(&warp_exercise_variant, &c, &launches);
    EXPECT_PASS(res, "%s", warp_exercise_variant.name);
    cr_expect_eq(launches, 1);
    cr_expect_eq(c.y_host[rows * cols - 1], 1.0f, "the only unmasked entry");
    case_destroy(&c);
}
