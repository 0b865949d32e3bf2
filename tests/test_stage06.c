/* Stage 06 on the GPU: every variant against the fp64 top-K for row lengths from 1 to 128256 and K
 * from 1 to 1024 (and K = V), in float32, bf16 and fp16; rows full of ties, masked rows, huge
 * magnitudes, rows that fool fast_row's guessed threshold; the same answer bit for bit on every run; and
 * fast's choice of the split for a batch of one. */
#include <string.h>

#include "../06_fused_topk/fused_topk.h"
#include "gpu_test.h"

static const topk_variant *const variants[] = {&unfused_topk_variant, &fused_topk_variant, &fast_row_topk_variant,
                                               &fast_split_topk_variant, &fast_topk_variant};
#define N_VARIANTS 5

static gpu_info open_or_skip(void)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    return gpu;
}

/* Runs `v` on the case with fresh workspace and expects it to match the reference. The unfused
 * baseline ranks fp32 probabilities, which can tie where logits do not (two logits a few ulps apart,
 * or far enough below the max to underflow to 0); it is checked only on inputs where that cannot
 * happen (unfused_exact). */
static void expect_variant_passes(const topk_variant *v, topk_case *c, int k, const char *what)
{
    if (!topk_supports(v, c, k))
        return;
    void *workspace = topk_workspace_alloc(v, c, k);
    int launches;
    const topk_check r = topk_case_check(c, v, k, workspace, &launches);
    cudaFree(workspace);
    cr_expect(r.pass, "%s, %s %zu x %zu K=%d %s: %zu index errors, %zu probability failures (first bad row %zu), max rel err %.3g",
              v->name, dtype_name(c->dtype), c->rows, c->cols, k, what, r.index_errors, r.prob_failures,
              r.first_bad_row, r.max_rel_err);
}

static void expect_all_pass(topk_case *c, int k, bool unfused_exact, const char *what)
{
    for (int i = 0; i < N_VARIANTS; i++)
        if (variants[i] != &unfused_topk_variant || unfused_exact)
            expect_variant_passes(variants[i], c, k, what);
}

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
        /* 16-bit logits repeat often, and fp32 probabilities of logits a few ulps apart can tie. */
        expect_all_pass(&c, p->k, d == DTYPE_F32 && p->k <= 64, "normal(0,1)");
        topk_case_destroy(&c);
    }
}

/* Many rows: the block-per-row path on a full grid, and fast's choice at both ends. */
Test(stage06, many_rows)
{
    open_or_skip();
    topk_case c = topk_case_create(1024, 50257, DTYPE_F32, (input_spec){DIST_UNIFORM, 0.0, 10.0}, 931, 64);
    expect_all_pass(&c, 10, true, "uniform [0,10]");
    expect_all_pass(&c, 64, true, "uniform [0,10]");
    topk_case_destroy(&c);
    c = topk_case_create(4096, 1001, DTYPE_BF16, (input_spec){DIST_UNIFORM, -5.0, 5.0}, 932, 50);
    expect_all_pass(&c, 50, false, "bf16 uniform [-5,5]");
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
        expect_all_pass(&c, k, true, "all equal");
    cr_expect_eq(c.idx_host[0], 0);
    for (size_t i = 0; i < c.rows * cols; i++)
        c.x_host[i] = (float)((i * 2654435761u >> 7) % 4);
    topk_case_refresh(&c);
    for (int k = 1; k <= 1024; k *= 4)
        expect_all_pass(&c, k, true, "values in {0,1,2,3}");
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
        expect_all_pass(&c, k, true, "masked");
    topk_case_destroy(&c);
}

/* Rows that fool fast_row's guessed first threshold: in the logits it samples (`sampled` vectors a
 * lane), each lane gets `per_lane` large ones, 32 x per_lane in all, fewer than K, and the rest of
 * the row is small. The guess (a large logit) is then reached by fewer than K logits, and the warp
 * must rank the row again without one. Rows of 50257 start off 16-byte boundaries, so the sample
 * sits at a different offset in each. */
static void fool_the_guess(topk_case *c, int per_lane, int sampled)
{
    const size_t per_vector = 16 / dtype_size(c->dtype);
    for (size_t r = 0; r < c->rows; r++) {
        const size_t misaligned = r * c->cols % per_vector;
        const size_t head = misaligned ? per_vector - misaligned : 0;
        const size_t warp_rows = (c->cols - head) / per_vector / 32;
        for (size_t lane = 0; lane < 32; lane++)
            for (int j = 0; j < per_lane; j++) {
                const size_t i = (lane + 4 * (size_t)j) % (size_t)sampled;
                const size_t vector = FAST_SAMPLED_WARP_ROW(i, (size_t)sampled, warp_rows) * 32 + lane;
                c->x_host[r * c->cols + head + vector * per_vector] = 20.0f + (float)(lane + 32 * j) / 8.0f;
            }
    }
    topk_case_refresh(c);
}

Test(stage06, rows_that_fool_the_guess)
{
    open_or_skip();
    const struct {
        logit_dtype dtype;
        int k, per_lane, sampled; // sampled: vectors a lane in the guess's sample (fused_topk.h)
    } cases[] = {{DTYPE_F32, 50, 1, FAST_SAMPLE_VECTORS},
                 {DTYPE_BF16, 50, 1, FAST_SAMPLE_VECTORS},
                 {DTYPE_F16, 256, 1, FAST_SAMPLE_VECTORS},
                 {DTYPE_F32, 256, 1, FAST_WIDE_SAMPLE_LOGITS / (32 * 4)},
                 {DTYPE_F32, 1024, 2, FAST_SAMPLE_VECTORS}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        topk_case c = topk_case_create(3, 50257, cases[i].dtype, (input_spec){DIST_NORMAL, -3.0, 3.0},
                                       991 + (uint64_t)i, cases[i].k);
        fool_the_guess(&c, cases[i].per_lane, cases[i].sampled);
        expect_all_pass(&c, cases[i].k, false, "the guess fooled");
        topk_case_destroy(&c);
    }
}

/* Magnitudes far beyond where exp overflows: [500, 1000], [-1000, 1000], +-1e30. */
Test(stage06, huge_magnitudes)
{
    open_or_skip();
    const input_spec inputs[] = {{DIST_UNIFORM, 500.0, 1000.0}, {DIST_UNIFORM, -1000.0, 1000.0},
                                 {DIST_UNIFORM, -1e30, 1e30}, {DIST_OUTLIERS, -5.0, 5.0}};
    for (int i = 0; i < 4; i++) {
        topk_case c = topk_case_create(5, 50257, DTYPE_F32, inputs[i], 961 + (uint64_t)i, 50);
        expect_all_pass(&c, 50, i != 2, dist_name(inputs[i].dist));
        topk_case_destroy(&c);
    }
}

/* The same input, run many times: identical bits every time. The split's candidates reach their list
 * in whatever order the atomics hand out slots; the sort after it must make that invisible. */
Test(stage06, bitwise_identical_across_runs)
{
    const gpu_info gpu = open_or_skip();
    const topk_variant *const checked[] = {&fused_topk_variant, &fast_row_topk_variant, &fast_split_topk_variant};
    enum { K = 32 };
    topk_case c = topk_case_create(7, 262144, DTYPE_F32, (input_spec){DIST_NORMAL, -3.0, 3.0}, 971, K);
    const size_t out = c.rows * K;
    int *first_idx = malloc(out * sizeof(int));
    float *first_prob = malloc(out * sizeof(float));
    for (int v = 0; v < 3; v++) {
        void *workspace = topk_workspace_alloc(checked[v], &c, K);
        for (int run = 0; run < 20; run++) {
            int launches;
            const topk_check r = topk_case_check(&c, checked[v], K, workspace, &launches);
            cr_expect(r.pass, "%s run %d", checked[v]->name, run);
            if (run == 0) {
                memcpy(first_idx, c.idx_host, out * sizeof(int));
                memcpy(first_prob, c.prob_host, out * sizeof(float));
            } else {
                cr_expect_arr_eq(c.idx_host, first_idx, out * sizeof(int), "%s run %d", checked[v]->name, run);
                cr_expect_arr_eq(c.prob_host, first_prob, out * sizeof(float), "%s run %d", checked[v]->name, run);
            }
        }
        cudaFree(workspace);
    }
    cr_expect(gpu.cc_major < 9 || topk_supports(&fast_split_topk_variant, &c, K), "fast_split ran on an sm_90 GPU");
    free(first_idx);
    free(first_prob);
    topk_case_destroy(&c);
}

/* A batch of one for every vocabulary of the benchmark, and fast picks the split for it. */
Test(stage06, batch_of_one)
{
    const gpu_info gpu = open_or_skip();
    const size_t vocabularies[] = {50257, 128256, 262144};
    for (int i = 0; i < 3; i++) {
        topk_case c = topk_case_create(1, vocabularies[i], DTYPE_F32, (input_spec){DIST_UNIFORM, 0.0, 10.0},
                                       981 + (uint64_t)i, 1024);
        expect_all_pass(&c, 50, true, "batch 1");
        expect_all_pass(&c, 1024, true, "batch 1");
        cr_expect(gpu.cc_major < 9 || fast_takes_split(1, DTYPE_F32), "fast splits a batch of one on sm_90");
        topk_case_destroy(&c);
    }
}
