/* What every GPU test starts with, and the one check it makes. Each Criterion test runs in a
 * process of its own, so each opens the GPU itself; with no GPU the test skips with one line. */
#ifndef TESTS_GPU_TEST_H
#define TESTS_GPU_TEST_H

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <cuda_runtime_api.h>

#include <math.h>

#include "../common/bench.h"
#include "../common/check.h"
#include "../common/gpu.h"
#include "../common/reference.h"

static inline void open_gpu_or_skip(gpu_info *info)
{
    char reason[256];
    if (!gpu_available(reason, sizeof reason))
        cr_skip_test("no CUDA device: %s", reason);
    gpu_open(info);
}

/* Runs a variant on an existing case with fresh workspace, and verifies it; *launches (if not
 * NULL) gets the number of kernel launches it made. */
static inline verify_result check_case(const softmax_variant *variant, softmax_case *c, int *launches)
{
    void *workspace = workspace_alloc(variant, c);
    int made;
    const verify_result r = case_check(c, variant, workspace, &made);
    CUDA_CHECK(cudaFree(workspace));
    if (launches)
        *launches = made;
    return r;
}

/* Fresh input of the shape from `seed`, one poisoned run of `variant`, verified against fp64. */
static inline verify_result check_variant(const softmax_variant *variant, softmax_shape shape,
                                          input_spec input, uint64_t seed, int *launches)
{
    softmax_case c = case_create(shape, input, seed);
    const verify_result r = check_case(variant, &c, launches);
    case_destroy(&c);
    return r;
}

/* After a test edits c->x_host: recompute the reference and upload x again. */
static inline void case_refresh(softmax_case *c)
{
    reference_softmax(c->x_host, c->ref, c->rows, c->cols);
    cr_assert_eq(cudaMemcpy(c->x, c->x_host, c->n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
}

/* Masks a case the way attention masks logits: x[i] = -inf for every i in [first, last). */
static inline void mask_case(softmax_case *c, size_t first, size_t last)
{
    for (size_t i = first; i < last && i < c->n; i++)
        c->x_host[i] = -INFINITY;
    case_refresh(c);
}


/* The input sets every stable softmax must get right: uniform [0,10], [500,1000] (stage 01's
 * overflow), [-1000,1000], and outliers. Each is drawn fresh from seed + k; every call must make
 * `launches` kernel launches (0: not checked). */
static inline void expect_passes_on_every_range(const softmax_variant *variant, softmax_shape shape,
                                                uint64_t seed, int launches)
{
    const input_spec ranges[] = {{DIST_UNIFORM, 0.0, 10.0}, {DIST_UNIFORM, 500.0, 1000.0},
                                 {DIST_UNIFORM, -1000.0, 1000.0}, {DIST_OUTLIERS, -5.0, 5.0}};
    for (int k = 0; k < 4; k++) {
        int made = 0;
        const verify_result v = check_variant(variant, shape, ranges[k], seed + (uint64_t)k, &made);
        cr_expect(v.pass, "%s, %zu x %zu, %s [%g,%g]: %zu failures (first at %zu), max rel err %.3g, %zu non-finite",
                  variant->name, shape.rows, shape.cols, dist_name(ranges[k].dist), ranges[k].lo, ranges[k].hi,
                  v.failures, v.first_failure, v.max_rel_err, v.nonfinite);
        if (launches)
            cr_expect_eq(made, launches, "%s, %zu x %zu: %d launches, expected %d", variant->name, shape.rows,
                         shape.cols, made, launches);
    }
}

#define EXPECT_PASS(v, what, ...)                                                                  \
    cr_expect((v).pass, what ": %zu failures (first at %zu), max rel err %.3g, %zu non-finite",      \
              __VA_ARGS__, (v).failures, (v).first_failure, (v).max_rel_err, (v).nonfinite)

#endif
