/* Stage 01 on the GPU: right where float32 can hold exp(x), and wrong, as taught, where it cannot. */
#include <math.h>

#include "../01_naive/naive.h"
#include "gpu_test.h"

static const input_spec safe = {DIST_UNIFORM, 0.0, 10.0};

/* Sizes around a warp (31, 32, 33), a block's worth plus one (4097), a power of two, and large. */
static size_t sizes[] = {1, 31, 32, 33, 1000, 4097, (size_t)1 << 20, 10000000};

ParameterizedTestParameters(stage01, matches_reference_on_0_10)
{
    return cr_make_param_array(size_t, sizes, sizeof sizes / sizeof sizes[0]);
}

ParameterizedTest(size_t *n, stage01, matches_reference_on_0_10)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    int launches = 0;
    const verify_result v = check_variant(&naive_variant, (softmax_shape){1, *n}, safe, 100 + *n, &launches);
    cr_expect(v.pass, "n = %zu: %zu failures (first at %zu), max rel err %.3g, %zu non-finite", *n,
              v.failures, v.first_failure, v.max_rel_err, v.nonfinite);
    cr_expect_eq(v.nonfinite, 0);
    cr_expect_float_eq(v.worst_row_sum, 1.0, 1e-4);
    cr_expect_eq(launches, 2);
}

/* The lesson of the stage, asserted: every exp(x) overflows, so every output is inf/inf = NaN. */
Test(stage01, overflows_to_nan_on_500_1000)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    int launches;
    const verify_result v =
        check_variant(&naive_variant, (softmax_shape){1, 1000}, (input_spec){DIST_UNIFORM, 500.0, 1000.0}, 3, &launches);
    cr_expect_not(v.pass);
    cr_expect_eq(v.nonfinite, 1000);
    cr_expect(isnan(v.worst_row_sum));
}

/* The quieter failure: each exp(x) fits (x < 86 < 88.72) but their sum does not, so every output
 * is finite / inf = 0. Nothing is NaN, and the answer is still wrong. */
Test(stage01, silently_returns_zeros_when_only_the_sum_overflows)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    int launches;
    const verify_result v =
        check_variant(&naive_variant, (softmax_shape){1, 1000}, (input_spec){DIST_UNIFORM, 76.0, 86.0}, 4, &launches);
    cr_expect_not(v.pass);
    cr_expect_eq(v.nonfinite, 0);
    cr_expect_eq(v.failures, 1000);
    cr_expect_eq(v.worst_row_sum, 0.0);
}

/* Every element is written: the output starts as NaN (checked here), and after one run none is
 * left, at a size that is not a multiple of anything the grid-stride loop uses. */
Test(stage01, writes_every_output_element)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    const size_t n = (size_t)gpu.sms * 2048 * 3 + 17;
    softmax_case c = case_create((softmax_shape){1, n}, safe, 5);
    void *workspace = workspace_alloc(&naive_variant, &c);

    gpu_poison(c.y, n * sizeof(float));
    cr_assert_eq(cudaMemcpy(c.y_host, c.y, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = 0; i < n; i++)
        cr_assert(isnan(c.y_host[i]), "poison missing at %zu", i);

    int launches;
    const verify_result v = case_check(&c, &naive_variant, workspace, &launches);
    cr_expect_eq(v.nonfinite, 0, "%zu elements were never written", v.nonfinite);
    cr_expect(v.pass);
    CUDA_CHECK(cudaFree(workspace));
    case_destroy(&c);
}

/* The exercise's solution: with the bound B = 1000 subtracted, [500, 1000] passes; on [0, 10] every
 * exp(x - B) underflows to 0, so the sum is 0 and every output 0/0 = NaN, as its README asks the
 * student to explain. */
Test(stage01, exercise_bound_passes_on_500_1000_and_underflows_on_0_10)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    const softmax_shape shape = {1, 1000};
    const verify_result high = check_variant(&naive_exercise_variant, shape, (input_spec){DIST_UNIFORM, 500.0, 1000.0}, 5, NULL);
    cr_expect(high.pass, "[500, 1000]: %zu failures, max rel err %.3g, %zu non-finite", high.failures, high.max_rel_err,
              high.nonfinite);
    const verify_result low = check_variant(&naive_exercise_variant, shape, (input_spec){DIST_UNIFORM, 0.0, 10.0}, 6, NULL);
    cr_expect_not(low.pass);
    cr_expect_eq(low.nonfinite, 1000);
}
