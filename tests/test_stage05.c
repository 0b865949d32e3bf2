/* Stage 05 on the GPU: the online softmax over n (sizes not multiples of 4, for the float4 path's
 * tail), online_rows on every row length (odd lengths make rows start off 16-byte boundaries; 70000
 * columns do not fit in shared memory), masked rows, and cuDNN, the baseline, checked as well. */
#include "../05_online/online.h"
#include "../05_online/cudnn_softmax.h"
#include "gpu_test.h"

static size_t sizes[] = {1, 3, 4, 5, 1023, 65537, ((size_t)1 << 20) + 3, 10000001, 50000000};

ParameterizedTestParameters(stage05, online_matches_reference)
{
    return cr_make_param_array(size_t, sizes, sizeof sizes / sizeof sizes[0]);
}

ParameterizedTest(size_t *n, stage05, online_matches_reference)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    expect_passes_on_every_range(&online_variant, (softmax_shape){1, *n}, 600 + *n, 2);
}

ParameterizedTestParameters(stage05, online_rows_match_reference)
{
    static const size_t cols[] = {1, 2, 31, 32, 33, 127, 128, 1000, 1024, 1025, 4097, 50257, 70000};
    static softmax_shape shapes[2 * 13 + 8];
    size_t n = 0;
    for (size_t r = 0; r < 2; r++)
        for (size_t c = 0; c < 13; c++)
            shapes[n++] = (softmax_shape){r == 0 ? 1 : 7, cols[c]};
    static const size_t many_rows_cols[] = {1, 33, 128, 1025, 4096, 4097, 16385, 50257};
    for (size_t c = 0; c < 8; c++)
        shapes[n++] = (softmax_shape){c == 7 ? 1024 : 8192, many_rows_cols[c]};
    return cr_make_param_array(softmax_shape, shapes, n);
}

ParameterizedTest(softmax_shape *shape, stage05, online_rows_match_reference)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    expect_passes_on_every_range(&online_rows_variant, *shape, 700 + shape->rows + shape->cols, 1);
}

/* Row r has its first 15 r entries masked; the last row keeps a single entry, which must get
 * probability 1 (in the cluster path, one block of that row sees nothing but -inf). Every path:
 * the warp (1001 columns), the cached block (5003), the cluster of two blocks (50257). */
Test(stage05, masked_rows)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    const size_t rows = 64, lengths[] = {1001, 5003, 50257};
    for (int k = 0; k < 3; k++) {
        const size_t cols = lengths[k];
        softmax_case c = case_create((softmax_shape){rows, cols}, (input_spec){DIST_NORMAL, -3.0, 3.0}, 71);
        for (size_t r = 0; r < rows; r++)
            for (size_t i = 0; i < (r + 1 == rows ? cols - 1 : 15 * r); i++)
                c.x_host[r * cols + i] = -INFINITY;
        case_refresh(&c);
        const verify_result res = check_case(&online_rows_variant, &c, NULL);
        EXPECT_PASS(res, "%zu columns", cols);
        cr_expect_eq(c.y_host[rows * cols - 1], 1.0f, "%zu columns: the only unmasked entry", cols);
        case_destroy(&c);
    }
}

#ifdef HAVE_CUDNN
Test(stage05, cudnn_baseline_matches_reference)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    expect_passes_on_every_range(&cudnn_variant, (softmax_shape){7, 1025}, 81, 0);
    expect_passes_on_every_range(&cudnn_variant, (softmax_shape){1, 100000}, 85, 0);
}
#endif

/* ---- The exercise's worked solution (solution/exercise.cu): online's softmax over n with each
 * element folded on its own (online_stat_add), in 2 launches. The last n % 4 elements are folded
 * as float4s padded with -inf. -------------------------------------------------------------------- */

/* Sizes of 1 to 5 (all in the padded tail; one float4 and a tail of 1), a warp's float4s (128
 * elements) and a block's (1024) with one less and one and three more, and many blocks with tails
 * of 1 to 3. */
static size_t exercise_sizes[] = {1, 2, 3, 4, 5, 127, 128, 129, 131, 1023, 1024, 1025, 1027, 65537,
                                  ((size_t)1 << 20) + 3, 10000001};

ParameterizedTestParameters(stage05, exercise_solution_matches_reference)
{
    return cr_make_param_array(size_t, exercise_sizes, sizeof exercise_sizes / sizeof exercise_sizes[0]);
}

ParameterizedTest(size_t *n, stage05, exercise_solution_matches_reference)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    expect_passes_on_every_range(&online_exercise_variant, (softmax_shape){1, *n}, 900 + *n, 2);
}

/* At a full grid (8 blocks of 256 threads an SM, exercise.cu's grid) each thread's unrolled loop
 * takes 4 float4s a trip, 16 x stride elements for the grid: around that edge some threads make
 * the trip and go on to the one-float4 loop, others skip it. */
Test(stage05, exercise_solution_at_the_unrolled_loops_edge)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    const size_t trip = 16 * (size_t)gpu.sms * 8 * 256;
    const size_t edges[] = {trip - 4, trip - 1, trip, trip + 5, 2 * trip + 7};
    for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++)
        expect_passes_on_every_range(&online_exercise_variant, (softmax_shape){1, edges[k]}, 950 + k, 2);
}

/* The exercise's own shape: ./run_solution --n 100M --variant exercise. */
Test(stage05, exercise_solution_at_100M)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    expect_passes_on_every_range(&online_exercise_variant, (softmax_shape){1, 100000000}, 960, 2);
}

/* Runs the solution once on c, its output poisoned with bytes 0x42 (the float 48.6, no
 * probability), so that an element never written passes neither verification nor for NaN. */
static void run_exercise_poisoned(softmax_case *c)
{
    void *workspace = workspace_alloc(&online_exercise_variant, c);
    cr_assert_eq(cudaMemset(c->y, 0x42, c->n * sizeof(float)), cudaSuccess);
    cr_expect_eq(online_exercise_variant.run(c->x, c->y, c->rows, c->cols, workspace), 2);
    cr_assert_eq(cudaMemcpy(c->y_host, c->y, c->n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    CUDA_CHECK(cudaFree(workspace));
}

/* The -inf padding of the tail and the NaN rule (common/reference.h), at 3 elements (all in the
 * tail) and 1025 (a tail of 1): one unmasked element among -inf gets probability 1, first or last
 * (in the tail); a NaN, in the tail or among -inf, and nothing but -inf make every output NaN. */
Test(stage05, exercise_solution_masks_and_nan)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    const size_t lengths[] = {3, 1025};
    for (int k = 0; k < 2; k++) {
        const size_t n = lengths[k];
        softmax_case c = case_create((softmax_shape){1, n}, (input_spec){DIST_UNIFORM, 0.0, 10.0}, 970 + n);
        const size_t keeps[2] = {0, n - 1}; /* the only unmasked element: the first, then the last */
        for (int j = 0; j < 2; j++) {
            const size_t keep = keeps[j];
            for (size_t i = 0; i < n; i++)
                c.x_host[i] = i == keep ? 1.0f : -INFINITY;
            case_refresh(&c);
            const verify_result v = check_case(&online_exercise_variant, &c, NULL);
            EXPECT_PASS(v, "n = %zu, only x[%zu] unmasked", n, keep);
            cr_expect_eq(c.y_host[keep], 1.0f, "n = %zu: y[%zu] = %g, the only unmasked entry", n, keep,
                         c.y_host[keep]);
        }
        const char *const kinds[] = {"a NaN last, the others -inf", "a NaN last", "nothing but -inf"};
        for (int kind = 0; kind < 3; kind++) {
            for (size_t i = 0; i < n; i++)
                c.x_host[i] = kind == 1 ? (float)i : -INFINITY;
            if (kind < 2)
                c.x_host[n - 1] = NAN;
            case_refresh(&c);
            run_exercise_poisoned(&c);
            size_t not_nan = 0;
            for (size_t i = 0; i < n; i++)
                not_nan += !isnan(c.y_host[i]);
            cr_expect_eq(not_nan, 0, "n = %zu, %s: %zu outputs not NaN", n, kinds[kind], not_nan);
        }
        case_destroy(&c);
    }
}
