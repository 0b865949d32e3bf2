/* What every GPU test starts with, and the one check it makes. Each Criterion test runs in a
 * process of its own, so each opens the GPU itself; with no GPU the test skips with one line. */
#ifndef TESTS_GPU_TEST_H
#define TESTS_GPU_TEST_H

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <cuda_runtime_api.h>

#include <math.h>

#include "../common/bench.h"
#include "../common/gpu.h"
#include "../common/reference.h"

static inline void open_gpu_or_skip(gpu_info *info)
{
    char reason[256];
    if (!gpu_available(reason, sizeof reason))
        cr_skip_test("no CUDA device: %s", reason);
    gpu_open(info);
}

/* Fresh input of n elements from `seed`, one poisoned run of `variant`, verified against fp64. */
static inline verify_result check_variant(const softmax_variant *variant, size_t n, input_spec input,
                                          uint64_t seed, int *launches)
{
    softmax_case c = case_create(n, input, seed);
    void *workspace = workspace_alloc(variant, n);
    const verify_result r = case_check(&c, variant, workspace, launches);
    cudaFree(workspace);
    case_destroy(&c);
    return r;
}

/* Masks a case the way attention masks logits: x[i] = -inf for every i in [first, last), then
 * recomputes the reference and uploads x again. */
static inline void mask_case(softmax_case *c, size_t first, size_t last)
{
    for (size_t i = first; i < last && i < c->n; i++)
        c->x_host[i] = -INFINITY;
    reference_softmax(c->x_host, c->ref, 1, c->n);
    cr_assert_eq(cudaMemcpy(c->x, c->x_host, c->n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
}

/* Runs a variant on an existing case with fresh workspace, and verifies it. */
static inline verify_result check_case(const softmax_variant *variant, softmax_case *c)
{
    void *workspace = workspace_alloc(variant, c->n);
    int launches;
    const verify_result r = case_check(c, variant, workspace, &launches);
    cudaFree(workspace);
    return r;
}

#define EXPECT_PASS(v, what, ...)                                                                  \
    cr_expect((v).pass, what ": %zu failures (first at %zu), max rel err %.3g, %zu non-finite",      \
              __VA_ARGS__, (v).failures, (v).first_failure, (v).max_rel_err, (v).nonfinite)

#endif
