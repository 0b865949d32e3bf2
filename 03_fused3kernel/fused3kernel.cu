// Stage 03 — three kernels: block statistics, one rescaled merge, normalize.
//
// What changed since stage 02: the max and the sum are found in the same read of x. Each block
// keeps its 256 elements in registers (one per thread), finds their max m_b, and then the sum
// s_b = sum(exp(x - m_b)) over the same registers: x is read once, not twice. The blocks'
// statistics are merged into the global ones by rescaling each sum to the global max:
//     M = max_b m_b,    S = sum_b s_b * exp(m_b - M)
// (each s_b was measured against m_b; multiplying by exp(m_b - M) re-expresses it against M).
// Then y = exp(x - M) / S. Bytes per element: 4 (kernel 1) + 8 (kernel 3) = 12 instead of 16,
// plus 8 bytes of statistics per 256 elements. And 3 launches, whatever n, instead of 2 per level.
//
//   1. block_stats_kernel   per block of 256 elements: m_b and s_b (one shared array, two reductions)
//   2. the merge, two versions (--variant):
//      single_block_merge: merge_one_block_kernel, one block of 256 threads striding over all
//          n/256 statistics. At n = 10^8 that is 390625 (m_b, s_b) pairs for one SM: each thread
//          walks 1526 of them twice, one dependent load after another, while the other 131 SMs
//          idle. Its time grows with n while the rest of the softmax runs at full bandwidth: the
//          regression at 100M (claim C4 in EXPERIMENTS.md).
//      fused: merge_many_blocks_kernel, the same merge spread over a full grid: each block merges
//          a slice of the statistics into one pair, and the last block to finish (it learns that
//          from an atomic counter) merges those few hundred pairs. Same 3 launches, all SMs busy.
//   3. normalize_kernel     y = exp(x - M) / S
//
// Run:   make stage3 && ./run                       (multipass vs both fused versions, 100K..100M)
//        ./run --n 100M --variant single_block_merge
//
// The numbers, measured: EXPERIMENTS.md, Experiment 3 (data: plots/data/h100-sxm/03_fused3kernel.csv).
// What holds fused back is the two shared-memory trees of block_stats_kernel: README.md says why.
#include "../02_multipass/block_reduce.cuh"
#include "../common/check.h"
#include "../common/gpu.h"
#include "fused3kernel.h"

#define THREADS 256           // a power of two, for the tree
#define MERGE_BLOCKS_PER_SM 4 // grid of the many-block merge: a few blocks on every SM

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// Per block: the max of its elements and the sum of exp(x - that max). The shared array serves both
// reductions: block_reduce ends with a barrier, so the first is finished before the second writes.
static __global__ void block_stats_kernel(const float *x, size_t n, float *block_max, float *block_sum)
{
    __shared__ float shared[THREADS];
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    const float v = i < n ? x[i] : -INFINITY;
    const float m = block_reduce_max(v, shared);
    // -inf (padding past n, or a masked logit) contributes exp(-inf) = 0; testing for it also keeps
    // a block of nothing but -inf from computing exp(-inf - (-inf)) = exp(NaN).
    const float s = block_reduce_sum(v == -INFINITY ? 0.0f : expf(v - m), shared);
    if (threadIdx.x == 0) {
        block_max[blockIdx.x] = m;
        block_sum[blockIdx.x] = s;
    }
}

// Merges the statistics at first, first + stride, ... (below count) over the calling block:
// every thread of the block gets back the pair (M, S) of those statistics. Two sweeps: the max
// first, then the sums rescaled to it. A pair (-inf, 0) is the identity: it changes neither.
static __device__ void merge_stats(const float *stat_max, const float *stat_sum, size_t first, size_t count,
                            size_t stride, float *shared, float *merged_max, float *merged_sum)
{
    float m = -INFINITY;
    for (size_t i = first; i < count; i += stride)
        m = fmaxf(m, __ldcg(&stat_max[i]));
    const float global_max = block_reduce_max(m, shared);

    // A sum of 0 comes from a block of nothing but -inf: it holds no probability, and its max would
    // give -inf - -inf. Every other block's sum is at least 1 (the exp(0) of its max), or NaN when
    // a NaN or +inf is among its elements, even amid -inf only; that NaN must reach S, to make the
    // whole softmax NaN (common/reference.h).
    float s = 0.0f;
    for (size_t i = first; i < count; i += stride) {
        const float si = __ldcg(&stat_sum[i]);
        if (si != 0.0f)
            s += si * expf(__ldcg(&stat_max[i]) - global_max);
    }
    *merged_max = global_max;
    *merged_sum = block_reduce_sum(s, shared);
}

// single_block_merge: one block, grid-stride over all the statistics. stats[0] = M, stats[1] = S.
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

// fused's merge: each block merges a grid-stride slice into one pair; the last block to finish
// merges the gridDim.x pairs. "Last" comes from an atomic counter. Two fences make the hand-off:
// the writer's, before the increment, makes a block's pair visible to every other block before the
// counter says it is done; the reader's, after the last block's ticket, orders its loads of the
// pairs after the tickets it saw, and __syncthreads() passes that order on to the whole block. The
// last block reads the pairs with __ldcg (from L2, where the fences put them, not from a stale L1)
// and resets the counter to 0 for the next call.
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
            __threadfence(); // the reader's side: the pairs fenced before the tickets it saw
    }
    __syncthreads();
    if (!is_last)
        return; // the whole block leaves together: no thread is left waiting at a barrier

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

// Workspace, in floats: stats (M, S), the per-block statistics (2 x n/256), the per-group pairs of
// the many-block merge (2 x its grid), and the counter (one unsigned, starting at 0).
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

// Both take one softmax over the whole array: rows == 1, n = cols.
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
