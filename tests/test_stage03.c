/* Stage 03 on the GPU: both merges give the reference's softmax, the many-block merge resets its
 * counter for the next call, and blocks of nothing but -inf are handled; and the exercise's worked
 * solution (solution/exercise.cu), the combine of two pairs and a one-block merge that folds them,
 * on every range, on blocks whose maxima lie far apart, and on NaN and infinity. */
#include "../03_fused3kernel/fused3kernel.h"
#include "gpu_test.h"

/* Parameters are indices, not pointers: Criterion may run a test in a fresh process. */
static const softmax_variant *const variants[] = {&single_block_merge_variant, &fused_variant};

typedef struct {
    int variant;
    size_t n;
} case_params;

/* Around one block (256), one merge slice (256 x 256), and sizes where the many-block merge's grid
 * is capped and each of its blocks strides over several slices (5e7 and 1e8). */
static case_params params[] = {
    {0, 1},     {0, 255},   {0, 256},      {0, 257},           {0, 1000},     {0, 65537},
    {0, 65536 + 256},       {0, (size_t)1 << 20},              {0, 10000000}, {1, 1},
    {1, 255},   {1, 256},   {1, 257},      {1, 1000},          {1, 65537},    {1, 65536 + 256},
    {1, (size_t)1 << 20},   {1, 10000000}, {1, 50000000},      {1, 100000000},
};

ParameterizedTestParameters(stage03, matches_reference_on_every_range)
{
    return cr_make_param_array(case_params, params, sizeof params / sizeof params[0]);
}

ParameterizedTest(case_params *p, stage03, matches_reference_on_every_range)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    expect_passes_on_every_range(variants[p->variant], (softmax_shape){1, p->n}, 300 + p->n, 3);
}

/* A merge that finds its last block with a counter must leave it at 0 after every call: run the
 * variant on two different inputs in turn with the same workspace, three rounds, and each call must
 * be right, in 3 launches. Without the reset the second call merges nothing and keeps the first
 * call's (M, S). */
static void expect_ready_for_the_next_call(const softmax_variant *variant, size_t n, uint64_t seed)
{
    softmax_case a = case_create((softmax_shape){1, n}, (input_spec){DIST_UNIFORM, 0.0, 10.0}, seed);
    softmax_case b = case_create((softmax_shape){1, n}, (input_spec){DIST_UNIFORM, 500.0, 1000.0}, seed + 1);
    void *workspace = workspace_alloc(variant, &a);
    int launches;
    for (int round = 0; round < 3; round++) {
        const verify_result va = case_check(&a, variant, workspace, &launches);
        const verify_result vb = case_check(&b, variant, workspace, &launches);
        EXPECT_PASS(va, "%s, n = %zu, round %d, input a", variant->name, n, round);
        EXPECT_PASS(vb, "%s, n = %zu, round %d, input b", variant->name, n, round);
        cr_expect_eq(launches, 3, "%s: %d launches", variant->name, launches);
    }
    CUDA_CHECK(cudaFree(workspace));
    case_destroy(&a);
    case_destroy(&b);
}

Test(stage03, many_block_merge_is_ready_for_the_next_call)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    expect_ready_for_the_next_call(&fused_variant, 10000000, 31);
}

/* n = 100K with its first 70000 elements -inf: the first 273 blocks are entirely -inf, one partly,
 * and they get 0. In the many-block merge (2 blocks) the first block's whole slice, 256 block
 * statistics, is (-inf, 0), and so is the pair it hands the last block. */
static void expect_masked_blocks_handled(const softmax_variant *variant, uint64_t seed)
{
    softmax_case c = case_create((softmax_shape){1, 100000}, (input_spec){DIST_NORMAL, -3.0, 3.0}, seed);
    mask_case(&c, 0, 70000);
    const verify_result r = check_case(variant, &c, NULL);
    EXPECT_PASS(r, "%s", variant->name);
    for (size_t i = 0; i < 70000; i++)
        cr_assert_eq(c.y_host[i], 0.0f, "%s: y[%zu] = %g", variant->name, i, c.y_host[i]);
    case_destroy(&c);
}

Test(stage03, blocks_of_only_minus_infinity_are_handled)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    for (int v = 0; v < 2; v++)
        expect_masked_blocks_handled(variants[v], 41);
}

/* ---- The exercise's worked solution: combine_stats, and the one-block merge that folds with it - */

/* One block, so one pair and nothing to rescale (1 to 256); two pairs (257); at most one pair a
 * merge thread (up to 65536), then two (65537, 65792, 100K); odd sizes; 10M (up to 153 pairs a
 * thread) and 1e8 (up to 1526). */
static size_t exercise_sizes[] = {1,     2,     31,     32,     33,      255,      256,      257,      1000,
                                  65535, 65536, 65537,  65792,  99999,   100000,   1000001,  10000000, 100000000};

ParameterizedTestParameters(stage03, exercise_matches_reference_on_every_range)
{
    return cr_make_param_array(size_t, exercise_sizes, sizeof exercise_sizes / sizeof exercise_sizes[0]);
}

ParameterizedTest(size_t *n, stage03, exercise_matches_reference_on_every_range)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    expect_passes_on_every_range(&fused3kernel_exercise_variant, (softmax_shape){1, *n}, 700 + *n, 3);
}

/* 100K elements, 391 blocks of 256 (the last of 160), in block b x = offset(b) + u, u uniform in
 * [0, 1): the blocks' maxima lie far apart, and only a combine that rescales both sums to the
 * larger max gets S. Offsets 0, 2, 4, 6, 8, block after block: every step's share of S is above
 * the tolerance, a merge that adds the sums unrescaled is off about 4 times, and one that loses a
 * block of the top step about 1 %. Offsets -300, 0, 300, and 305 for the last, partial block,
 * which holds the row's max: the lower steps' rescale factors, about exp(-305) and exp(-605), are
 * 0 in float32, and the top step's 130 blocks weigh about as much as the last block. */
Test(stage03, exercise_rescales_block_maxima_far_apart)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    enum { N = 100000, BLOCK = 256 };
    const size_t last = (N - 1) / BLOCK;
    for (int shape = 0; shape < 2; shape++) {
        const input_spec unit = {DIST_UNIFORM, 0.0, 1.0};
        softmax_case c = case_create((softmax_shape){1, N}, unit, 81 + (uint64_t)shape);
        for (size_t i = 0; i < N; i++) {
            const size_t b = i / BLOCK;
            const double staircase = 2.0 * (double)(b % 5);
            const double far_apart = b == last ? 305.0 : 300.0 * (double)(b % 3) - 300.0;
            c.x_host[i] = (float)((shape == 0 ? staircase : far_apart) + c.x_host[i]);
        }
        case_refresh(&c);
        int launches = 0;
        const verify_result v = check_case(&fused3kernel_exercise_variant, &c, &launches);
        EXPECT_PASS(v, "%s", shape == 0 ? "maxima 2 apart, 5 steps" : "maxima 300 apart, the row's max last");
        cr_expect_eq(launches, 3);
        case_destroy(&c);
    }
}

Test(stage03, exercise_handles_blocks_of_only_minus_infinity)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    expect_masked_blocks_handled(&fused3kernel_exercise_variant, 61);
}

/* The rule for NaN and infinity (common/reference.h): a NaN or a +inf in one block makes its sum
 * NaN, which every combine must carry to S, and a row of nothing but -inf has S = 0: every output
 * NaN. Rows: a NaN in the first, a middle and the last pair; a +inf; only -inf; a NaN whose block
 * is otherwise -inf, so that its pair is (-inf, NaN); and one (n = 100) of a single block. The
 * output is poisoned with a number, 48.6 (bytes 0x42), so that an element never written cannot
 * pass for NaN. */
Test(stage03, exercise_gives_nan_throughout_where_there_is_no_softmax)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    enum { N = 1000000 };
    const struct {
        size_t n, at;
        float value;
        size_t minus_inf; /* x[0 .. minus_inf) = -inf first */
    } rows[] = {{N, 0, NAN, 0},       {N, N / 2, NAN, 0}, {N, N - 1, NAN, 0}, {N, N / 2, INFINITY, 0},
                {N, 0, -INFINITY, N}, {N, 255, NAN, 256}, {100, 50, NAN, 0}};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const size_t n = rows[r].n;
        softmax_case c = case_create((softmax_shape){1, n}, (input_spec){DIST_UNIFORM, 0.0, 10.0}, 71 + (uint64_t)r);
        for (size_t i = 0; i < rows[r].minus_inf; i++)
            c.x_host[i] = -INFINITY;
        c.x_host[rows[r].at] = rows[r].value;
        case_refresh(&c);
        void *workspace = workspace_alloc(&fused3kernel_exercise_variant, &c);
        cr_assert_eq(cudaMemset(c.y, 0x42, n * sizeof(float)), cudaSuccess);
        cr_expect_eq(fused3kernel_exercise_variant.run(c.x, c.y, 1, n, workspace), 3);
        cr_assert_eq(cudaMemcpy(c.y_host, c.y, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
        CUDA_CHECK(cudaFree(workspace));
        size_t not_nan = 0;
        for (size_t i = 0; i < n; i++)
            not_nan += !isnan(c.y_host[i]);
        cr_expect_eq(not_nan, 0, "row %zu (n = %zu, %g at %zu, %zu -inf first): %zu outputs not NaN", r, n,
                     rows[r].value, rows[r].at, rows[r].minus_inf, not_nan);
        case_destroy(&c);
    }
}
