// Stage 03's exercise, solved: the combine of two blocks' pairs and the one-block merge that
// folds every pair with it. The scaffold is ../exercise.cu; the answers to the README's steps are
// in README.md beside this file.
#include "../../02_multipass/block_reduce.cuh"
#include "../../common/check.h"
#include "../fused3kernel.h"

#define THREADS 256 // a power of two, for the trees

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// The statistic of a set of elements: m is their max and s = sum(exp(x - m)).
typedef struct {
    float m, s;
} block_stat;

static __device__ block_stat make_stat(float m, float s)
{
    block_stat t;
    t.m = m;
    t.s = s;
    return t;
}

// fused3kernel.cu's: block b writes its max m_b and sum s_b = sum(exp(x - m_b)).
static __global__ void block_stats_kernel(const float *x, size_t n, float *block_max, float *block_sum)
{
    __shared__ float shared[THREADS];
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    const float v = i < n ? x[i] : -INFINITY;
    const float m = block_reduce_max(v, shared);
    const float s = block_reduce_sum(v == -INFINITY ? 0.0f : expf(v - m), shared);
    if (threadIdx.x == 0) {
        block_max[blockIdx.x] = m;
        block_sum[blockIdx.x] = s;
    }
}

// The statistic of a's elements and b's together: m is the larger max, and each sum is moved to
// it by exp(its max - m), which is at most 1. A sum of 0 is skipped: it is the statistic of no
// element, whose max may be -inf, and exp(-inf - (-inf)) would be NaN. A NaN sum is not 0, so it
// reaches the result.
static __device__ block_stat combine_stats(block_stat a, block_stat b)
{
    const float m = fmaxf(a.m, b.m);
    const float sa = a.s == 0.0f ? 0.0f : a.s * expf(a.m - m);
    const float sb = b.s == 0.0f ? 0.0f : b.s * expf(b.m - m);
    return make_stat(m, sa + sb);
}

// Stage 02's tree, on pairs: every thread brings one and gets back the block's combine.
static __device__ block_stat block_combine(block_stat t, block_stat *shared)
{
    shared[threadIdx.x] = t;
    __syncthreads();
    for (unsigned active = THREADS / 2; active > 0; active /= 2) {
        if (threadIdx.x < active)
            shared[threadIdx.x] = combine_stats(shared[threadIdx.x], shared[threadIdx.x + active]);
        __syncthreads();
    }
    return shared[0];
}

// One block merges the count pairs: stats[0] = M, stats[1] = S.
static __global__ void merge_pairs_kernel(const float *block_max, const float *block_sum, size_t count,
                                          float *stats)
{
    __shared__ block_stat shared[THREADS];

    // Thread t folds pairs t, t + THREADS, ... in turn. The combine is associative, so any
    // grouping gives the same (M, S), up to rounding.
    block_stat t = make_stat(-INFINITY, 0.0f);
    for (size_t i = threadIdx.x; i < count; i += THREADS)
        t = combine_stats(t, make_stat(block_max[i], block_sum[i]));

    const block_stat row = block_combine(t, shared);
    if (threadIdx.x == 0) {
        stats[0] = row.m;
        stats[1] = row.s;
    }
}

static __global__ void normalize_kernel(const float *x, size_t n, const float *stats, float *y)
{
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    if (i < n)
        y[i] = expf(x[i] - stats[0]) / stats[1];
}

// Workspace: stats (M, S), then the block maxima and sums.
static size_t exercise_workspace_bytes(size_t rows, size_t n)
{
    (void)rows;
    return (2 + 2 * ceil_div(n, THREADS)) * sizeof(float);
}

// rows == 1: one softmax over n = cols.
static int exercise_softmax(const float *x, float *y, size_t rows, size_t n, void *workspace)
{
    (void)rows;
    const size_t blocks = ceil_div(n, THREADS);
    float *stats = (float *)workspace, *block_max = stats + 2, *block_sum = block_max + blocks;
    block_stats_kernel<<<(unsigned)blocks, THREADS>>>(x, n, block_max, block_sum);
    CUDA_CHECK_LAUNCH("block_stats_kernel");
    merge_pairs_kernel<<<1, THREADS>>>(block_max, block_sum, blocks, stats);
    CUDA_CHECK_LAUNCH("merge_pairs_kernel");
    normalize_kernel<<<(unsigned)blocks, THREADS>>>(x, n, stats, y);
    CUDA_CHECK_LAUNCH("normalize_kernel");
    return 3;
}

extern "C" const softmax_variant fused3kernel_exercise_variant = {EXERCISE_VARIANT, 12.0, exercise_workspace_bytes,
                                                                  exercise_softmax, single_row_only};
