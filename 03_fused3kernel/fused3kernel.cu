// Stage 03: the softmax of n floats in three kernels, joined by one rescaled merge.
//   1. block_stats_kernel writes each block's max m_b and sum s_b = sum(exp(x - m_b)).
//   2. A merge kernel computes M = max m_b and S = sum s_b * exp(m_b - M).
//   3. normalize_kernel writes y = exp(x - M) / S.
// Read next: exercise.cu, where the combine of two pairs and the merge are yours.
#include "../02_multipass/block_reduce.cuh"
#include "../common/check.h"
#include "../common/gpu.h"
#include "fused3kernel.h"

#define THREADS 256           // a power of two, for the tree
#define MERGE_BLOCKS_PER_SM 4 // blocks per SM of the many-block merge

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// Thread t of block b holds element b * 256 + t (-inf past n). One shared array serves both
// reductions: block_reduce ends with a barrier, so the max is read before the sum's tree writes.
static __global__ void block_stats_kernel(const float *x, size_t n, float *block_max, float *block_sum)
{
    __shared__ float shared[THREADS];
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    const float v = i < n ? x[i] : -INFINITY;
    const float m = block_reduce_max(v, shared);
    // An element of -inf adds 0; the test also spares a block of nothing but -inf the NaN of
    // exp(-inf - (-inf)).
    const float s = block_reduce_sum(v == -INFINITY ? 0.0f : expf(v - m), shared);
    if (threadIdx.x == 0) {
        block_max[blockIdx.x] = m;
        block_sum[blockIdx.x] = s;
    }
}

// Merges the pairs at first, first + stride, ... (below count) over the calling block, whose
// threads must all call it, and gives every thread (M, S): the first sweep finds M, the second
// adds the sums rescaled to it. The pair (-inf, 0) is the identity. The loads are __ldcg (L2, not
// L1) for the second call in merge_many_blocks_kernel: other blocks of the same kernel wrote those
// pairs, and this SM's L1 may hold stale copies. The first call's, from an earlier kernel, are
// safe either way.
static __device__ void merge_stats(const float *stat_max, const float *stat_sum, size_t first, size_t count,
                            size_t stride, float *shared, float *merged_max, float *merged_sum)
{
    float m = -INFINITY;
    for (size_t i = first; i < count; i += stride)
        m = fmaxf(m, __ldcg(&stat_max[i]));
    const float global_max = block_reduce_max(m, shared);

    // A sum of 0 comes only from a block of nothing but -inf, whose max could give -inf - (-inf):
    // it is skipped. Any other sum is at least 1, or NaN (a NaN or +inf among its elements), which
    // must reach S (common/reference.h).
    float s = 0.0f;
    for (size_t i = first; i < count; i += stride) {
        const float si = __ldcg(&stat_sum[i]);
        if (si != 0.0f)
            s += si * expf(__ldcg(&stat_max[i]) - global_max);
    }
    *merged_max = global_max;
    *merged_sum = block_reduce_sum(s, shared);
}

// single_block_merge: one block strides over all count pairs. stats[0] = M, stats[1] = S.
static __global__ void merge_one_block_kernel(const float *block_max, const float *block_sum,
                                              size_t count, float *stats)
{
    __shared__ float shared[THREADS];
    float m, s;
    merge_stats(block_max, block_sum, threadIdx.x, count, THREADS, shared, &m, &s);
    if (threadIdx.x == 0) {
        stats[0] = m;
        stats[1] = s;
    }
}

// fused: block g merges a grid-stride slice into its pair group_max/sum[g]; the last block to
// finish merges the gridDim.x pairs. Thread 0 fences, so that every block sees the pair before the
// ticket, then draws one from blocks_done; the block that draws gridDim.x - 1 is the last and
// fences again, so that its loads come after the tickets it saw. *blocks_done is 0 on entry and
// on exit.
static __global__ void merge_many_blocks_kernel(const float *block_max, const float *block_sum,
                                                size_t count, float *group_max, float *group_sum,
                                                unsigned *blocks_done, float *stats)
{
    __shared__ float shared[THREADS];
    __shared__ bool is_last;
    float m, s;
    merge_stats(block_max, block_sum, (size_t)blockIdx.x * THREADS + threadIdx.x, count,
                (size_t)gridDim.x * THREADS, shared, &m, &s);
    if (threadIdx.x == 0) {
        group_max[blockIdx.x] = m;
        group_sum[blockIdx.x] = s;
        __threadfence();
        is_last = atomicAdd(blocks_done, 1u) == gridDim.x - 1;
        if (is_last)
            __threadfence(); // the reader's fence
    }
    __syncthreads();
    if (!is_last)
        return; // the whole block leaves, so no thread waits at a barrier

    merge_stats(group_max, group_sum, threadIdx.x, gridDim.x, THREADS, shared, &m, &s);
    if (threadIdx.x == 0) {
        stats[0] = m;
        stats[1] = s;
        *blocks_done = 0;
    }
}

static __global__ void normalize_kernel(const float *x, size_t n, const float *stats, float *y)
{
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    if (i < n)
        y[i] = expf(x[i] - stats[0]) / stats[1];
}

// Workspace: stats (M, S), the block pairs, the merge's pairs, the counter (0 between calls).
typedef struct {
    float *stats, *block_max, *block_sum, *group_max, *group_sum;
    unsigned *blocks_done;
    size_t blocks, merge_grid;
} workspace_layout;

static workspace_layout layout(size_t n, void *base)
{
    workspace_layout w;
    w.blocks = ceil_div(n, THREADS);
    w.merge_grid = (size_t)gpu_grid_size(w.blocks, THREADS, MERGE_BLOCKS_PER_SM); // as counted below
    w.stats = (float *)base;
    w.block_max = w.stats + 2;
    w.block_sum = w.block_max + w.blocks;
    w.group_max = w.block_sum + w.blocks;
    w.group_sum = w.group_max + w.merge_grid;
    w.blocks_done = (unsigned *)(w.group_sum + w.merge_grid);
    return w;
}

static size_t fused_workspace_bytes(size_t rows, size_t n)
{
    (void)rows;
    const size_t blocks = ceil_div(n, THREADS);
    const size_t merge_grid = (size_t)gpu_grid_size(blocks, THREADS, MERGE_BLOCKS_PER_SM);
    return (2 + 2 * blocks + 2 * merge_grid) * sizeof(float) + sizeof(unsigned);
}

static int fused_softmax(const float *x, float *y, size_t n, void *workspace, bool one_block_merge)
{
    const workspace_layout w = layout(n, workspace);
    block_stats_kernel<<<(unsigned)w.blocks, THREADS>>>(x, n, w.block_max, w.block_sum);
    CUDA_CHECK_LAUNCH("block_stats_kernel");
    if (one_block_merge) {
        merge_one_block_kernel<<<1, THREADS>>>(w.block_max, w.block_sum, w.blocks, w.stats);
        CUDA_CHECK_LAUNCH("merge_one_block_kernel");
    } else {
        merge_many_blocks_kernel<<<(unsigned)w.merge_grid, THREADS>>>(
            w.block_max, w.block_sum, w.blocks, w.group_max, w.group_sum, w.blocks_done, w.stats);
        CUDA_CHECK_LAUNCH("merge_many_blocks_kernel");
    }
    normalize_kernel<<<(unsigned)w.blocks, THREADS>>>(x, n, w.stats, y);
    CUDA_CHECK_LAUNCH("normalize_kernel");
    return 3;
}

// Both take rows == 1: one softmax over n = cols.
static int single_block_merge_softmax(const float *x, float *y, size_t rows, size_t n, void *workspace)
{
    (void)rows;
    return fused_softmax(x, y, n, workspace, true);
}

static int fused_many_block_softmax(const float *x, float *y, size_t rows, size_t n, void *workspace)
{
    (void)rows;
    return fused_softmax(x, y, n, workspace, false);
}

extern "C" const softmax_variant single_block_merge_variant = {"single_block_merge", 12.0, fused_workspace_bytes,
                                                               single_block_merge_softmax, single_row_only};
extern "C" const softmax_variant fused_variant = {"fused", 12.0, fused_workspace_bytes,
                                                  fused_many_block_softmax, single_row_only};
