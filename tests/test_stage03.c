/* Stage 03 on the GPU: both merges give the reference's softmax, the many-block merge resets its
 * counter for the next call, and blocks of nothing but -inf are handled; the same of the exercise's
 * worked solution (solution/exercise.cu), fused with its hand-off written out. */
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

/* ---- The exercise's worked solution: fused, its hand-off to the last block written out -------- */

/* Around a warp (32) and a block (256); one merge block (up to 65536), then two (65537, and the
 * 100K of the exercise's first table); odd sizes; 10M (153 merge blocks of one pair a thread); 5e7
 * and 1e8, where the merge's grid is capped at 4 blocks an SM and its threads stride. */
static size_t exercise_sizes[] = {1,     31,    32,    33,     255,     256,     257,      1000,     65535,
                                  65536, 65537, 65792, 99999, 100000, 1000001, 10000000, 50000000, 100000000};

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

/* The reset, with one merge block (1000), two (65537), 153 (10M) and a capped grid (5e7). */
Test(stage03, exercise_is_ready_for_the_next_call)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    static const size_t sizes[] = {1000, 65537, 10000000, 50000000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        expect_ready_for_the_next_call(&fused3kernel_exercise_variant, sizes[i], 51 + 2 * i);
}

Test(stage03, exercise_handles_blocks_of_only_minus_infinity)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    expect_masked_blocks_handled(&fused3kernel_exercise_variant, 61);
}

/* A NaN or a +inf in one block makes its sum NaN, which must survive both merges, whichever block
 * is the last: every output NaN (common/reference.h). The output is poisoned with a number, 48.6
 * (bytes 0x42), so that an element never written cannot pass for NaN. */
Test(stage03, exercise_makes_every_output_nan_for_a_nan_or_plus_infinity)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    const size_t n = 1000000; /* 16 merge blocks */
    const float planted[] = {NAN, INFINITY};
    for (int k = 0; k < 2; k++) {
        softmax_case c = case_create((softmax_shape){1, n}, (input_spec){DIST_UNIFORM, 0.0, 10.0}, 71 + (uint64_t)k);
        c.x_host[n / 2] = planted[k];
        case_refresh(&c);
        void *workspace = workspace_alloc(&fused3kernel_exercise_variant, &c);
        cr_assert_eq(cudaMemset(c.y, 0x42, n * sizeof(float)), cudaSuccess);
        cr_expect_eq(fused3kernel_exercise_variant.run(c.x, c.y, 1, n, workspace), 3);
        cr_assert_eq(cudaMemcpy(c.y_host, c.y, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
        CUDA_CHECK(cudaFree(workspace));
        size_t not_nan = 0;
        for (size_t i = 0; i < n; i++)
            not_nan += !isnan(c.y_host[i]);
        cr_expect_eq(not_nan, 0, "%s planted: %zu outputs not NaN", k ? "+inf" : "NaN", not_nan);
        case_destroy(&c);
    }
}
