/* What every stage 06 GPU test shares: the variants, and the check that each one that handles a
 * case gives the fp64 reference's answer on it. */
#ifndef TESTS_TOPK_TEST_H
#define TESTS_TOPK_TEST_H

#include "../06_fused_topk/fast/fast.h"
#include "../06_fused_topk/fused_topk.h"
#include "gpu_test.h"

static const topk_variant *const topk_variants[] = {&unfused_topk_variant,     &fused_topk_variant,
                                                    &threshold_topk_variant,   &fast_row_topk_variant,
                                                    &fast_chunks_topk_variant, &fast_split_topk_variant,
                                                    &fast_topk_variant,        &fast_logits_topk_variant,
                                                    &library_topk_variant,     &cub_topk_variant,
                                                    &flashinfer_topk_variant};
#define N_TOPK_VARIANTS 11

/* Whether v's answer is a library's (CUB's or FlashInfer's top-K): the sweep counts its failures
 * apart, as the course's are not. */
static inline bool topk_is_library(const topk_variant *v)
{
    return v == &library_topk_variant || v == &cub_topk_variant || v == &flashinfer_topk_variant;
}

static inline gpu_info open_or_skip(void)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    return gpu;
}

/* Runs `v` with top-k on the case with fresh workspace, and verifies it. */
static inline topk_check check_topk(const topk_variant *v, topk_case *c, int k)
{
    void *workspace = topk_workspace_alloc(v, c, k);
    int launches;
    const topk_check r = topk_case_check(c, v, k, workspace, &launches);
    CUDA_CHECK(cudaFree(workspace));
    return r;
}

/* Runs `v` on the case, if it handles the case, and expects the reference's answer: the same
 * indices, and every probability within the tolerance. */
static inline void expect_variant_passes(const topk_variant *v, topk_case *c, int k, const char *what)
{
    if (!topk_supports(v, c, k))
        return;
    const topk_check r = check_topk(v, c, k);
    cr_expect(r.pass, "%s, %s %zu x %zu K=%d %s: %zu index errors, %zu probability failures (first bad row %zu), max rel err %.3g",
              v->name, dtype_name(c->dtype), c->rows, c->cols, k, what, r.index_errors, r.prob_failures,
              r.first_bad_row, r.max_rel_err);
}

/* Every variant that handles the case. */
static inline void expect_all_pass(topk_case *c, int k, const char *what)
{
    for (int i = 0; i < N_TOPK_VARIANTS; i++)
        expect_variant_passes(topk_variants[i], c, k, what);
}

#endif
