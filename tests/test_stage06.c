/* Stage 06 on the GPU, every variant against the fp64 top-K: row lengths from 1 to 128256 and K from
 * 1 to 1024 (and K = V), in float32, bf16 and fp16; many rows; rows full of ties; masked rows; huge
 * magnitudes. The fast kernels' own paths (a guess that fails, a batch of one, the split's order)
 * are tested in test_stage06_fast.c. */
#include "topk_test.h"

typedef struct {
    size_t cols;
    int k;
} vk;

ParameterizedTestParameters(stage06, every_variant_matches_the_reference)
{
    static const size_t lengths[] = {1, 2, 31, 32, 33, 1000, 50257, 128256};
    static const int ks[] = {1, 2, 10, 32, 33, 64, 256, 1024, 0 /* K = V */};
    static vk params[8 * 9];
    size_t n = 0;
    for (size_t i = 0; i < 8; i++)
        for (size_t j = 0; j < 9; j++) {
            const size_t k = ks[j] ? (size_t)ks[j] : lengths[i];
            if (k <= lengths[i] && k <= 1024)
                params[n++] = (vk){lengths[i], (int)k};
        }
    return cr_make_param_array(vk, params, n);
}

/* Three rows (so rows of odd length start off 16-byte boundaries), each dtype. */
ParameterizedTest(vk *p, stage06, every_variant_matches_the_reference)
{
    open_or_skip();
    for (int d = DTYPE_F32; d <= DTYPE_F16; d++) {
        topk_case c = topk_case_create(3, p->cols, (logit_dtype)d, (input_spec){DIST_NORMAL, -3.0, 3.0},
                                       900 + p->cols + (size_t)p->k + (size_t)d, p->k);
        expect_all_pass(&c, p->k, "normal(0,1)");
        topk_case_destroy(&c);
    }
}

/* Many rows: fast_row on a full grid (and fast choosing it), float32 and bf16 rows of odd length. */
Test(stage06, many_rows)
{
    open_or_skip();
    topk_case c = topk_case_create(1024, 50257, DTYPE_F32, (input_spec){DIST_UNIFORM, 0.0, 10.0}, 931, 64);
    expect_all_pass(&c, 10, "uniform [0,10]");
    expect_all_pass(&c, 64, "uniform [0,10]");
    topk_case_destroy(&c);
    c = topk_case_create(4096, 1001, DTYPE_BF16, (input_spec){DIST_UNIFORM, -5.0, 5.0}, 932, 50);
    expect_all_pass(&c, 50, "bf16 uniform [-5,5]");
    topk_case_destroy(&c);
}

/* Every logit equal: the answer is indices 0..K-1 with probability 1/V. Then logits from {0,1,2,3}:
 * thousands of ties per row, decided by index alone, across warps and across blocks. */
Test(stage06, rows_full_of_ties)
{
    open_or_skip();
    const size_t cols = 50257;
    topk_case c = topk_case_create(4, cols, DTYPE_F32, (input_spec){DIST_UNIFORM, 0.0, 1.0}, 941, 1024);
    for (size_t i = 0; i < c.rows * cols; i++)
        c.x_host[i] = 0.5f;
    topk_case_refresh(&c);
    for (int k = 1; k <= 1024; k *= 4)
        expect_all_pass(&c, k, "all equal");
    cr_expect_eq(c.idx_host[0], 0);
    for (size_t i = 0; i < c.rows * cols; i++)
        c.x_host[i] = (float)((i * 2654435761u >> 7) % 4);
    topk_case_refresh(&c);
    for (int k = 1; k <= 1024; k *= 4)
        expect_all_pass(&c, k, "values in {0,1,2,3}");
    topk_case_destroy(&c);
}

/* Masked logits: row r keeps only r + 3 finite entries at scattered places, so for K above that
 * the -inf entries fill the rest in index order, with probability 0. */
Test(stage06, masked_rows)
{
    open_or_skip();
    const size_t rows = 40, cols = 50257;
    topk_case c = topk_case_create(rows, cols, DTYPE_F32, (input_spec){DIST_NORMAL, -3.0, 3.0}, 951, 256);
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < cols; i++)
            if (i % 1237 != 5 || i / 1237 > r + 2)
                c.x_host[r * cols + i] = -INFINITY;
    topk_case_refresh(&c);
    for (int k = 1; k <= 256; k *= 4)
        expect_all_pass(&c, k, "masked");
    topk_case_destroy(&c);
}

/* Magnitudes far beyond where exp overflows: [500, 1000], [-1000, 1000], +-1e30. */
Test(stage06, huge_magnitudes)
{
    open_or_skip();
    const input_spec inputs[] = {{DIST_UNIFORM, 500.0, 1000.0}, {DIST_UNIFORM, -1000.0, 1000.0},
                                 {DIST_UNIFORM, -1e30, 1e30}, {DIST_OUTLIERS, -5.0, 5.0}};
    for (int i = 0; i < 4; i++) {
        topk_case c = topk_case_create(5, 50257, DTYPE_F32, inputs[i], 961 + (uint64_t)i, 50);
        expect_all_pass(&c, 50, dist_name(inputs[i].dist));
        topk_case_destroy(&c);
    }
}

