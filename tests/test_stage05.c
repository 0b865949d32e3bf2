/* Stage 05 on the GPU: the online softmax over n (sizes not multiples of 4, for the float4 path's
 * tail), online_rows on every row length (odd lengths make rows start off 16-byte boundaries; 70000
 * columns do not fit in shared memory), masked rows, and cuDNN, the baseline, checked as well. */
#include "../05_online/online.h"
#include "../common/cudnn_softmax.h"
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
