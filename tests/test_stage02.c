/* Stage 02 on the GPU: stable on every range, and the launch count is one per reduction level. */
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
