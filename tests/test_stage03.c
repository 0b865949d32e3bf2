/* Stage 03 on the GPU: both merges give the reference's softmax, the many-block merge resets its
 * counter for the next call, and blocks of nothing but -inf are handled. */
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

/* The many-block merge finds its last block with a counter that must be back at 0 after every call:
 * run it on two different inputs with the same workspace, and the second must be right too. */
Test(stage03, many_block_merge_is_ready_for_the_next_call)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    const size_t n = 10000000;
    softmax_case a = case_create((softmax_shape){1, n}, (input_spec){DIST_UNIFORM, 0.0, 10.0}, 31);
    softmax_case b = case_create((softmax_shape){1, n}, (input_spec){DIST_UNIFORM, 500.0, 1000.0}, 32);
    void *workspace = workspace_alloc(&fused_variant, &a);
    int launches;
    for (int round = 0; round < 3; round++) {
        const verify_result va = case_check(&a, &fused_variant, workspace, &launches);
        const verify_result vb = case_check(&b, &fused_variant, workspace, &launches);
        EXPECT_PASS(va, "round %d, input a", round);
        EXPECT_PASS(vb, "round %d, input b", round);
    }
    CUDA_CHECK(cudaFree(workspace));
    case_destroy(&a);
    case_destroy(&b);
}

Test(stage03, blocks_of_only_minus_infinity_are_handled)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    for (int v = 0; v < 2; v++) {
        softmax_case c = case_create((softmax_shape){1, 100000}, (input_spec){DIST_NORMAL, -3.0, 3.0}, 41);
        mask_case(&c, 0, 70000); /* the first 273 blocks are entirely -inf, one partly */
        const verify_result r = check_case(variants[v], &c, NULL);
        EXPECT_PASS(r, "%s", variants[v]->name);
        for (size_t i = 0; i < 70000; i++)
            cr_assert_eq(c.y_host[i], 0.0f, "%s: y[%zu] = %g", variants[v]->name, i, c.y_host[i]);
        case_destroy(&c);
    }
}
