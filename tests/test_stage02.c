/* Stage 02 on the GPU: stable on every range, and the launch count is one per reduction level; the
 * same of the exercise's worked solution (solution/exercise.cu), which folds 8 elements a thread. */
#include "../02_multipass/multipass.h"
#include "gpu_test.h"

static size_t sizes[] = {1, 31, 32, 33, 255, 256, 257, 1000, 4097, 65537, (size_t)1 << 20, 10000000};

/* Levels of a reduction that divides the count by 256 until one value is left. */
static int levels(size_t n)
{
    int l = 0;
    do {
        n = (n + 255) / 256;
        l++;
    } while (n > 1);
    return l;
}

ParameterizedTestParameters(stage02, matches_reference_on_every_range)
{
    return cr_make_param_array(size_t, sizes, sizeof sizes / sizeof sizes[0]);
}

ParameterizedTest(size_t *n, stage02, matches_reference_on_every_range)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    expect_passes_on_every_range(&multipass_variant, (softmax_shape){1, *n}, 200 + *n, 2 * levels(*n) + 1);
}

Test(stage02, masked_entries_get_zero_probability)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    softmax_case c = case_create((softmax_shape){1, 100000}, (input_spec){DIST_NORMAL, -3.0, 3.0}, 21);
    mask_case(&c, 1000, 60000); /* whole blocks of -inf, and blocks that are partly -inf */
    const verify_result v = check_case(&multipass_variant, &c, NULL);
    EXPECT_PASS(v, "masked %s", "input");
    for (size_t i = 1000; i < 60000; i++)
        cr_assert_eq(c.y_host[i], 0.0f, "y[%zu] = %g", i, c.y_host[i]);
    case_destroy(&c);
}

/* The exercise's solution: the same three phases, each reduction's threads folding 8 elements before
 * the tree, on a grid of ceil(count / 2048) blocks a level. */
static int fold_levels(size_t n)
{
    int l = 0;
    do {
        n = (n + 2047) / 2048;
        l++;
    } while (n > 1);
    return l;
}

/* Around a warp, a block (256), a fold's block (2048), two levels (2048^2 = 4194304), and 10^7
 * (3 levels, the ones 10^8 takes as well). */
static size_t exercise_sizes[] = {1,    31,    32,    33,     255,     256,     257,          2047,
                                  2048, 2049,  4097,  16385,  65537,   4194303, (size_t)1 << 22, 4194305,
                                  10000000};

ParameterizedTestParameters(stage02, exercise_matches_reference_on_every_range)
{
    return cr_make_param_array(size_t, exercise_sizes, sizeof exercise_sizes / sizeof exercise_sizes[0]);
}

ParameterizedTest(size_t *n, stage02, exercise_matches_reference_on_every_range)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    expect_passes_on_every_range(&multipass_exercise_variant, (softmax_shape){1, *n}, 400 + *n,
                                 2 * fold_levels(*n) + 1);
}

/* Every logit negative: the fold starts from the max's identity, so were it 0 and not -inf, the max
 * would be 0, every exp(x - 0) would underflow to 0 and every output be 0/0. */
Test(stage02, exercise_passes_when_every_logit_is_negative)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    for (size_t n = 1000; n <= 1000000; n *= 1000) {
        const input_spec negative = {DIST_UNIFORM, -1000.0, -900.0};
        const verify_result v = check_variant(&multipass_exercise_variant, (softmax_shape){1, n}, negative, 31, NULL);
        EXPECT_PASS(v, "n = %zu, [-1000, -900]", n);
    }
}

/* 10^5 elements, 49 blocks: thread t of block b folds b * 256 + t + k * 12544 for k < 8. With the
 * first 90000 masked, blocks 0 to 7 fold nothing but -inf, and the other threads -inf and numbers. */
Test(stage02, exercise_masked_entries_get_zero_probability)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    softmax_case c = case_create((softmax_shape){1, 100000}, (input_spec){DIST_NORMAL, -3.0, 3.0}, 22);
    mask_case(&c, 0, 90000);
    const verify_result v = check_case(&multipass_exercise_variant, &c, NULL);
    EXPECT_PASS(v, "masked %s", "input");
    for (size_t i = 0; i < 90000; i++)
        cr_assert_eq(c.y_host[i], 0.0f, "y[%zu] = %g", i, c.y_host[i]);
    case_destroy(&c);
}

/* The rule for NaN and infinity (common/reference.h): a NaN or a +inf anywhere (the first element,
 * one in the middle, the last), nothing but -inf, or a NaN whose thread folds nothing else but -inf
 * (all -inf but the NaN and the last element): every output NaN. The output is poisoned with 0x42
 * bytes (the float 48.6), not NaN, so an element the kernels never wrote cannot pass for one. */
Test(stage02, exercise_gives_nan_throughout_where_there_is_no_softmax)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    enum { N = 10000 };
    const struct {
        size_t at;
        float value;
        size_t minus_inf; /* x[0 .. minus_inf) = -inf first */
    } rows[] = {{0, NAN, 0},        {N / 2, NAN, 0}, {N - 1, NAN, 0}, {N - 1, INFINITY, 0},
                {0, -INFINITY, N},  {N / 2, NAN, N - 1}};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        softmax_case c = case_create((softmax_shape){1, N}, (input_spec){DIST_UNIFORM, 0.0, 10.0}, 23);
        for (size_t i = 0; i < rows[r].minus_inf; i++)
            c.x_host[i] = -INFINITY;
        c.x_host[rows[r].at] = rows[r].value;
        case_refresh(&c);
        void *workspace = workspace_alloc(&multipass_exercise_variant, &c);
        cr_assert_eq(cudaMemset(c.y, 0x42, N * sizeof(float)), cudaSuccess);
        const int launches = multipass_exercise_variant.run(c.x, c.y, 1, N, workspace);
        cr_assert_eq(cudaMemcpy(c.y_host, c.y, N * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
        CUDA_CHECK(cudaFree(workspace));
        cr_expect_eq(launches, 2 * fold_levels(N) + 1);
        size_t not_nan = 0;
        for (size_t i = 0; i < N; i++)
            not_nan += !isnan(c.y_host[i]);
        cr_expect_eq(not_nan, 0, "row %zu (%g at %zu, %zu -inf first): %zu outputs not NaN", r, rows[r].value,
                     rows[r].at, rows[r].minus_inf, not_nan);
        case_destroy(&c);
    }
}
