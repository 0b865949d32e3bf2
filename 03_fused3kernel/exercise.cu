// Stage 03's exercise: fused3kernel.cu's `fused`, with the hand-off in merge_many_blocks_kernel
// left to you. As shipped no block merges, every output is exp(x) / 0, and
// `make && ./run --variant exercise` FAILs every row. The worked solution is solution/exercise.cu.
#include "../02_multipass/block_reduce.cuh"
#include "../common/check.h"
#include "../common/gpu.h"
#include "fused3kernel.h"

#define THREADS 256           // a power of two
#define MERGE_BLOCKS_PER_SM 4 // blocks per SM of the merge

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

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

// fused3kernel.cu's merge, which your hand-off calls too. All the block's threads call it; each
// gets back (M, S) of the pairs at first, first + stride, ... (below count). Its loads are
// __ldcg, from L2, which every SM sees alike.
static __device__ void merge_stats(const float *stat_max, const float *stat_sum, size_t first, size_t count,
                                   size_t stride, float *shared, float *merged_max, float *merged_sum)
{
    float m = -INFINITY;
    for (size_t i = first; i < count; i += stride)
        m = fmaxf(m, __ldcg(&stat_max[i]));
    const float global_max = block_reduce_max(m, shared);

    // A sum of 0 (a block of nothing but -inf) is skipped; a NaN sum must reach S.
    float s = 0.0f;
    for (size_t i = first; i < count; i += stride) {
        const float si = __ldcg(&stat_sum[i]);
        if (si != 0.0f)
            s += si * expf(__ldcg(&stat_max[i]) - global_max);
    }
    *merged_max = global_max;
    *merged_sum = block_reduce_sum(s, shared);
}

// Block g merges a grid-stride slice into its pair group_max/sum[g]; the last block to finish must
// merge the gridDim.x pairs into stats. *blocks_done is 0 on entry and must be 0 on exit.
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

    // ==== TODO: the hand-off to the last block, here and nowhere else ====
    // Thread 0 fences this block's pair and draws a ticket from blocks_done; the block that draws
    // gridDim.x - 1 is the last, and its thread 0 fences again. Every other block returns whole.
    // The last block merges the gridDim.x pairs with merge_stats (first threadIdx.x, stride
    // THREADS); its thread 0 writes stats[0] = M and stats[1] = S and sets *blocks_done back to 0.
    // ==== end of TODO ====
}

static __global__ void normalize_kernel(const float *x, size_t n, const float *stats, float *y)
{
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    if (i < n)
        y[i] = expf(x[i] - stats[0]) / stats[1];
}

// Workspace, zeroed when allocated: stats, the block pairs, the merge's pairs, the counter.
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

// rows == 1: one softmax over n = cols.
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
