// Stage 03's exercise: the merge of the blocks' pairs, yours to write. block_stats_kernel leaves
// a pair (m_b, s_b) per block; merge_pairs_kernel folds them into the row's (M, S) in one block.
// Your part is the two TODO regions. As shipped, combine_stats adds the sums without rescaling
// them and each thread folds only its first pair, so `make && ./run --variant exercise` FAILs.
// The worked solution is solution/exercise.cu.
#include "../02_multipass/block_reduce.cuh"
#include "../common/check.h"
#include "fused3kernel.h"

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

// ==== TODO 1: the combine ====
// Returns the statistic of a's elements and b's together. (-inf, 0), the statistic of no element,
// must change nothing, even against itself. A NaN sum must stay NaN (common/reference.h).
static __device__ block_stat combine_stats(block_stat a, block_stat b)
{
    return make_stat(fmaxf(a.m, b.m), a.s + b.s); // TODO: rescale both sums
}
// ==== end of TODO 1 ====

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

    // ==== TODO 2: the fold ====
    // Fold every pair this thread owns with combine_stats, not only the first: pairs
    // i = threadIdx.x + k * THREADS below count. A thread that owns none holds (-inf, 0).
    block_stat t = make_stat(-INFINITY, 0.0f);
    if (threadIdx.x < count)
        t = make_stat(block_max[threadIdx.x], block_sum[threadIdx.x]);
    // ==== end of TODO 2 ====

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
