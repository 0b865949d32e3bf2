// Stage 02 — the stable softmax, in three phases.
//
// What changed since stage 01: the max is subtracted first. softmax(x) = softmax(x - c) for any c,
// and with c = max(x) every exponent is <= 0, so every exp() lies in (0, 1] and the sum in
// [1, n]: nothing can overflow, whatever the inputs. (At least one term is exp(0) = 1, so the sum
// cannot underflow to 0 either.) The price is a third phase:
//   1. max:       m = max(x)                 read x        4 B/elem
//   2. sum:       s = sum(exp(x - m))        read x        4 B/elem
//   3. normalize: y = exp(x - m) / s         read x, write y  8 B/elem
// 16 bytes per element against stage 01's 12.
//
// How each reduction is done: one element per thread, and a block of 256 threads reduces its 256
// values to one with a shared-memory tree (block_reduce.cuh). That leaves n/256 partial results,
// so the same kernel runs again on those, and again, until one value is left: 10^8 elements take
// 4 levels (390625 -> 1526 -> 6 -> 1 blocks) per reduction, 9 launches in all. exp() is applied
// in the first level of the sum only: the later levels add numbers that are already exps (exp at
// every level would sum exp(exp(...)), an easy bug when one kernel serves every level).
//
// Run:   make stage2 && ./run                    (stable where 01 overflowed; timing vs 01)
//        ./run --n 1M --range 500:1000 --variant multipass
//
// The numbers, measured: EXPERIMENTS.md, Experiment 2 (data: plots/data/h200/02_multipass.csv).
// What limits this kernel is the shared-memory tree, not DRAM: README.md says why.
#include "../common/check.h"
#include "block_reduce.cuh"
#include "multipass.h"

#define THREADS 256 // a power of two, for the tree

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// Max of THREADS inputs per block. Threads past the end contribute -inf, the identity of max.
static __global__ void max_reduce_kernel(const float *in, size_t count, float *out)
{
    __shared__ float shared[THREADS];
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    const float m = block_reduce_max(i < count ? in[i] : -INFINITY, shared);
    if (threadIdx.x == 0)
        out[blockIdx.x] = m;
}

// First level of the sum: exp(x - max) of THREADS inputs per block, added up.
static __global__ void sum_exp_reduce_kernel(const float *x, size_t n, const float *max, float *out)
{
    __shared__ float shared[THREADS];
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    const float s = block_reduce_sum(i < n ? expf(x[i] - *max) : 0.0f, shared);
    if (threadIdx.x == 0)
        out[blockIdx.x] = s;
}

// Later levels of the sum: the inputs are partial sums of exps already; just add them.
static __global__ void sum_reduce_kernel(const float *in, size_t count, float *out)
{
    __shared__ float shared[THREADS];
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    const float s = block_reduce_sum(i < count ? in[i] : 0.0f, shared);
    if (threadIdx.x == 0)
        out[blockIdx.x] = s;
}

static __global__ void normalize_kernel(const float *x, size_t n, const float *max, const float *sum, float *y)
{
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    if (i < n)
        y[i] = expf(x[i] - *max) / *sum;
}

// Runs `kernel` level after level until `count` values are one, written to *result. Level outputs
// alternate between the buffers `first` and `second` (each level's input stays intact while it is
// read). Returns the number of launches.
static int reduce_levels(void (*kernel)(const float *, size_t, float *), const float *in, size_t count,
                         float *result, float *first, float *second)
{
    int launches = 0;
    do {
        const size_t blocks = ceil_div(count, THREADS);
        float *out = blocks == 1 ? result : (launches % 2 == 0 ? first : second);
        kernel<<<(unsigned)blocks, THREADS>>>(in, count, out);
        CUDA_CHECK_LAUNCH("reduce level");
        in = out;
        count = blocks;
        launches++;
    } while (count > 1);
    return launches;
}

// Workspace: the max, the sum, then two level buffers: n/256 floats (level 1 output) and n/256^2
// (level 2 output), which later levels reuse in turn.
static size_t multipass_workspace_bytes(size_t rows, size_t n)
{
    (void)rows;
    return (2 + ceil_div(n, THREADS) + ceil_div(n, (size_t)THREADS * THREADS)) * sizeof(float);
}

static int multipass_softmax(const float *x, float *y, size_t rows, size_t n, void *workspace)
{
    (void)rows; // 1: a single softmax over n elements
    float *max = (float *)workspace, *sum = max + 1;
    float *level_a = max + 2, *level_b = level_a + ceil_div(n, THREADS);
    int launches = 0;

    // Phase 1: the max, level by level.
    launches += reduce_levels(max_reduce_kernel, x, n, max, level_a, level_b);

    // Phase 2: the sum of exp(x - max); its first level applies exp, the rest only add.
    const size_t blocks = ceil_div(n, THREADS);
    sum_exp_reduce_kernel<<<(unsigned)blocks, THREADS>>>(x, n, max, blocks == 1 ? sum : level_a);
    CUDA_CHECK_LAUNCH("sum_exp_reduce_kernel");
    launches++;
    if (blocks > 1)
        launches += reduce_levels(sum_reduce_kernel, level_a, blocks, sum, level_b, level_a);

    // Phase 3: normalize.
    normalize_kernel<<<(unsigned)blocks, THREADS>>>(x, n, max, sum, y);
    CUDA_CHECK_LAUNCH("normalize_kernel");
    return launches + 1;
}

extern "C" const softmax_variant multipass_variant = {"multipass", 16.0, multipass_workspace_bytes,
                                                      multipass_softmax, single_row_only};
