/* What every GPU test starts with, and the one check it makes. Each Criterion test runs in a
 * process of its own, so each opens the GPU itself; with no GPU the test skips with one line. */
#ifndef TESTS_GPU_TEST_H
#define TESTS_GPU_TEST_H

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <cuda_runtime_api.h>

#include "../common/bench.h"
#include "../common/gpu.h"

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

#endif
