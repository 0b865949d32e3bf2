// Stage 03's exercise: the last-block merge of the fused softmax, the hand-off written by you.
//
// This is fused3kernel.cu's `fused` variant: block statistics, a merge spread over a full grid, a
// normalize. In the merge each block folds a slice of the n/256 block statistics into one pair
// (m, s) and writes it to group_max/group_sum; then the last block to finish must merge those
// gridDim.x pairs into (M, S) for normalize_kernel. How a block learns that it is the last, and
// that every other pair is written, is the hand-off, and it is left out: the region marked TODO in
// merge_many_blocks_kernel. As shipped every block leaves there, no block merges, stats keeps the
// zeros of the fresh workspace (M = 0, S = 0), and every output is exp(x) / 0: inf or NaN, FAIL.
//
// Your part: write the TODO region (its comment lists the steps; README.md, Exercise, has a hint),
// then run
//     make && ./run --variant exercise        (every row FAILs now, PASS when done; a timing row
//                                              is timed whether it passes or not)
//     ./run --variant exercise --n 100M       (beside ./run --n 100M: fused and the others)
// The worked solution is solution/exercise.cu; `./run_solution --variant exercise ...` runs it.
#include "../02_multipass/block_reduce.cuh"
#include "../common/check.h"
#include "../common/gpu.h"
#include "fused3kernel.h"

#define THREADS 256           // a power of two, for the tree
#define MERGE_BLOCKS_PER_SM 4 // grid of the many-block merge: a few blocks on every SM

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// fused3kernel.cu's: per block, the max of its elements and the sum of exp(x - that max). The
// shared array serves both reductions: block_reduce ends with a barrier.
static __global__ void block_stats_kernel(const float *x, size_t n, float *block_max, float *block_sum)
{
    __shared__ float shared[THREADS];
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    const float v = i < n ? x[i] : -INFINITY;
    const float m = block_reduce_max(v, shared);
    // -inf (padding past n, or a masked logit) contributes 0, and a block of nothing but -inf never
    // computes exp(-inf - (-inf)) = exp(NaN).
    const float s = block_reduce_sum(v == -INFINITY ? 0.0f : expf(v - m), shared);
    if (threadIdx.x == 0) {
        block_max[blockIdx.x] = m;
        block_sum[blockIdx.x] = s;
    }
}

// fused3kernel.cu's merge of many pairs, which the hand-off calls too: merges the pairs at first,
// first + stride, ... (below count) over the calling block, whose every thread must call it; every
// thread gets back (M, S):
//     M = max_i m_i,    S = sum_i s_i * exp(m_i - M)
// A pair (-inf, 0) is the identity. Its loads are __ldcg, cached in L2 only: L2 is where every SM
// sees the same memory, while this SM's L1 is not kept coherent with other SMs' stores.
static __device__ void merge_stats(const float *stat_max, const float *stat_sum, size_t first, size_t count,
                                   size_t stride, float *shared, float *merged_max, float *merged_sum)
{
    float m = -INFINITY;
    for (size_t i = first; i < count; i += stride)
        m = fmaxf(m, __ldcg(&stat_max[i]));
    const float global_max = block_reduce_max(m, shared);

    // A sum of 0 comes from nothing but -inf: no probability, and its max would give -inf - -inf.
    // Every other sum is at least 1, or NaN (a NaN or +inf among its elements), which must reach S.
    float s = 0.0f;
    for (size_t i = first; i < count; i += stride) {
        const float si = __ldcg(&stat_sum[i]);
        if (si != 0.0f)
            s += si * expf(__ldcg(&stat_max[i]) - global_max);
    }
    *merged_max = global_max;
    *merged_sum = block_reduce_sum(s, shared);
}

// Each block merges a grid-stride slice of the block statistics into its pair, group_max/sum[b];
// the last block to finish merges the gridDim.x pairs into stats[0] = M, stats[1] = S. On entry
// *blocks_done is 0, and it must be 0 again on exit, ready for the next call.
static __global__ void merge_many_blocks_kernel(const float *block_max, const float *block_sum,
                                                size_t count, float *group_max, float *group_sum,
                                                unsigned *blocks_done, float *stats)
{
    __shared__ float shared[THREADS];
    float m, s;
    merge_stats(block_max, block_sum, (size_t)blockIdx.x * THREADS + threadIdx.x, count,
                (size_t)gridDim.x * THREADS, shared, &m, &s);
    if (threadIdx.x == 0) {
        group_max[blockIdx.x] = m;
        group_sum[blockIdx.x] = s;
    }

    // ==== TODO: the hand-off to the last block. Write it here, and nowhere else. ================
    // 1. Thread 0: __threadfence(), so that this block's pair, written just above, is visible to
    //    every block before the counter counts this block; then take a ticket,
    //    atomicAdd(blocks_done, 1u). The block that draws gridDim.x - 1 is the last; its thread 0
    //    fences again, so that its loads of the pairs come after the tickets it saw.
    // 2. The whole block learns whether it is the last (a __shared__ bool, then __syncthreads());
    //    every block but the last returns here, all its threads together.
    // 3. The last block: merge_stats over the gridDim.x pairs of group_max/group_sum (first
    //    threadIdx.x, stride THREADS: thread t takes pairs t, t + 256, ...); then thread 0 writes
    //    M and S to stats[0] and stats[1], and sets *blocks_done back to 0.
    // ==== end of TODO ==========================================================================
}

static __global__ void normalize_kernel(const float *x, size_t n, const float *stats, float *y)
{
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    if (i < n)
        y[i] = expf(x[i] - stats[0]) / stats[1];
}

// Workspace, zeroed when allocated: stats (M, S), the block statistics (2 x n/256), the merge's
// pairs (2 x its grid), and the counter (one unsigned).
typedef struct {
    float *stats, *block_max, *block_sum, *group_max, *group_sum;
    unsigned *blocks_done;
    size_t blocks, merge_grid;
} workspace_layout;

static workspace_layout layout(size_t n, void *base)
{
    workspace_layout w;
    w.blocks = ceil_div(n, THREADS);
    w.merge_grid = (size_t)gpu_grid_size(w.blocks, THREADS, MERGE_BLOCKS_PER_SM);
    w.stats = (float *)base;
    w.block_max = w.stats + 2;
    w.block_sum = w.block_max + w.blocks;
    w.group_max = w.block_sum + w.blocks;
    w.group_sum = w.group_max + w.merge_grid;
    w.blocks_done = (unsigned *)(w.group_sum + w.merge_grid);
    return w;
}

static size_t exercise_workspace_bytes(size_t rows, size_t n)
{
    (void)rows;
    const size_t blocks = ceil_div(n, THREADS);
    const size_t merge_grid = (size_t)gpu_grid_size(blocks, THREADS, MERGE_BLOCKS_PER_SM);
    return (2 + 2 * blocks + 2 * merge_grid) * sizeof(float) + sizeof(unsigned);
}

// One softmax over the whole array (rows == 1, n = cols), in 3 launches.
static int exercise_softmax(const float *x, float *y, size_t rows, size_t n, void *workspace)
{
    (void)rows;
    const workspace_layout w = layout(n, workspace);
    block_stats_kernel<<<(unsigned)w.blocks, THREADS>>>(x, n, w.block_max, w.block_sum);
    CUDA_CHECK_LAUNCH("block_stats_kernel");
    merge_many_blocks_kernel<<<(unsigned)w.merge_grid, THREADS>>>(w.block_max, w.block_sum, w.blocks, w.group_max,
                                                                  w.group_sum, w.blocks_done, w.stats);
    CUDA_CHECK_LAUNCH("merge_many_blocks_kernel");
    normalize_kernel<<<(unsigned)w.blocks, THREADS>>>(x, n, w.stats, y);
    CUDA_CHECK_LAUNCH("normalize_kernel");
    return 3;
}

extern "C" const softmax_variant fused3kernel_exercise_variant = {EXERCISE_VARIANT, 12.0, exercise_workspace_bytes,
                                                                  exercise_softmax, single_row_only};
