// Stage 02: the stable softmax in three phases. Read next: block_reduce.cuh, then exercise.cu.
//
//   1. m = max(x)             reads x              4 B/elem
//   2. s = sum(exp(x - m))    reads x              4 B/elem
//   3. y = exp(x - m) / s     reads x, writes y    8 B/elem
// Every exponent is <= 0, so every exp() lies in (0, 1] and s in [1, n].
//
// Each reduction level gives every thread one value and every block of THREADS threads one
// partial (block_reduce.cuh); the next level reduces the partials until one value is left.
#include "../common/check.h"
#include "block_reduce.cuh"
#include "multipass.h"

#define THREADS 256 // a power of two, for the tree

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// Threads past the end bring -inf, the identity of max.
static __global__ void max_reduce_kernel(const float *in, size_t count, float *out)
{
    __shared__ float shared[THREADS];
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    const float m = block_reduce_max(i < count ? in[i] : -INFINITY, shared);
    if (threadIdx.x == 0)
        out[blockIdx.x] = m;
}

// The sum's first level: each block adds exp(x - max) over its inputs.
static __global__ void sum_exp_reduce_kernel(const float *x, size_t n, const float *max, float *out)
{
    __shared__ float shared[THREADS];
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    const float s = block_reduce_sum(i < n ? expf(x[i] - *max) : 0.0f, shared);
    if (threadIdx.x == 0)
        out[blockIdx.x] = s;
}

// The later levels add partial sums, which are exps already.
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

// Runs `kernel` level by level until one value is left, in *result. Levels write alternately to
// `first` and `second`, so no level overwrites its own input. Returns the number of launches.
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

// Workspace: max, sum, then two level buffers of n/256 and n/256^2 floats.
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

    // Phase 1: the max.
    launches += reduce_levels(max_reduce_kernel, x, n, max, level_a, level_b);

    // Phase 2: the sum; only its first level applies exp.
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
