// Stage 03's exercise: the last-block merge of the fused softmax, the hand-off written by you.
//
// This is fused3kernel.cu's `fused` variant: block statistics, a merge spread over a full grid, a
// normalize. In the merge each block folds a slice of the n/256 block statistics into one pair
// (m, s) and writes it to group_max/group_sum; the last block to finish merges those gridDim.x
// pairs into (M, S) for normalize_kernel. The scaffold, ../exercise.cu, leaves out the hand-off:
// the fence, the ticket, the test for the last block, its merge, the counter's reset.
//
// The worked solution: that hand-off, in merge_many_blocks_kernel below. The answers to the
// README's steps 2 to 4 follow, for a GPU of 132 SMs (H100 or H200; scale the grid to yours).
//
// Step 2, the time. This softmax runs fused's three kernels, so expect fused's time at every size,
// within the two rows' min-max spread, with 12 bytes per element and 3 launches. At n = 100M there
// are 390625 block statistics (m_b, s_b). single_block_merge's 256 threads load 390625 / 256 = 1526
// each, in each of its two sweeps, on one SM while 131 wait. This merge runs on
// min(ceil(390625 / 256), 4 x 132) = 528 blocks (gpu_grid_size, common/gpu.c), whose threads load
// at most ceil(390625 / (528 x 256)) = 3 each, and then the last block loads the 528 pairs (m, s),
// at most 3 a thread. So expect it well ahead of single_block_merge at 10M and 100M. At 100K the
// merge has 391 block statistics on 2 blocks, and one block merging them all does less: there the
// last block's second merge_stats, after a fence and an atomic, is added latency that pays for
// nothing. Expect the exercise level with single_block_merge there, or a little behind.
//
// Step 3, the fence. The write the last block can miss is another block's pair, group_max[b] and
// group_sum[b], stored by that block's thread 0 just before its atomicAdd. Without the fence
// nothing orders the stores before the atomic for the other SMs: the compiler may move them after
// it (different addresses, no dependence), and the memory system may deliver them after it (the
// pair and the counter lie at different addresses, which L2 may hold in different slices). Then the
// counter can say "all done" while a pair is still on its way, and the last block loads what was
// there before: in a fresh workspace, (0, 0). The merge skips a sum of 0 (it takes it for a slice
// of nothing but -inf), so that slice's share of S is lost. (The two stores may also arrive apart:
// a stale m = 0 beside the new s weighs s by exp(0 - M) in place of exp(m - M), another wrong S.)
// At n = 10M the merge has ceil(39063 / 256) = 153 blocks, most of them summing 65536 elements: on
// uniform input a lost pair is about 1/153 = 0.65 % of S, and every output comes out too large by
// the same factor, 1 / (1 - 1/153): 0.66 % too large, finite and plausible, the outputs summing to
// 1.0066. That is 66 times the 1e-4 the check allows: FAIL on every element. (On inputs all below 0
// the stale max 0 would become M too: on [-1000, -500] every term underflows, S = 0, and every
// output is 0/0 = NaN.) In the timed runs, which reuse the workspace on the same input, a stale
// pair is the previous call's: the same numbers, so a late store does no harm there, and nothing
// would show it anyway.
//
// What the fence costs: thread 0 waits until its two stores are visible at GPU scope, about one
// trip to L2 and back, once per block, in all 528 blocks at once. Well under a microsecond against
// a softmax of about a millisecond at 100M: expect no change in the time beyond the spread.
//
// Why the checks still pass without it: the missing fence permits the reordering; it does not cause
// it. As compiled by nvcc 13 for sm_90, the two stores (STG) sit right before the atomic (ATOMG)
// without the fence, and with it a MEMBAR.SC.GPU sits between them (`make sass STAGE=3`, from the
// repository root, lists your exercise.cu's SASS among the others), so on that build only the
// memory system could reorder, and it usually does not: to be missed, a store must still be in
// flight after its block's atomic, the atomics of every block after it, the last block's own
// atomic, its barrier and its first loads. That window is well under a microsecond, and open only
// to the few blocks that finish just before the last. One check is one call: a bug that shows once
// in a million calls passes nearly every check. Expect step 3's runs to pass, most likely every
// one: a PASS says this call was right, not that the code is.
//
// What makes it more likely to show: many calls, each checked, not a few; many merge blocks
// finishing at the same moment (equal slices, as at 10M); stores slowed on their way to L2 by other
// traffic (another kernel or process on the GPU) or by distance (the L2 of an A100, H100 or H200 is
// split in two halves, and crossing between them takes longer); and another compiler, driver or
// GPU, free to reorder where this one did not. compute-sanitizer is unlikely to find it: its
// racecheck watches shared memory, not global, and its slowdown may well close the window. The
// memory model does: a store that another block must see once a flag says so needs a fence between
// the store and the flag. That is the writer's side. On the reader's side, the last block's
// thread 0 learns that it is last from its atomicAdd, a relaxed atomic; __syncthreads() tells the
// block, and the block loads the pairs with __ldcg, from L2. This is the CUDA Programming Guide's
// threadfence-reduction pattern, and it works on current GPUs. The formal C++ memory model wants
// the reader's side made explicit too: the ticket drawn with acquire-release ordering
// (cuda::atomic_ref's fetch_add with memory_order_acq_rel), or a second __threadfence() after it.
//
// Step 4, the reset. Without `*blocks_done = 0` a call ends with the counter at gridDim.x = G, and
// the next call's tickets are G, ..., 2G - 1: none is G - 1, no block merges, and stats keeps the
// previous call's (M, S). The check still passes: it is the first call on a freshly zeroed
// workspace. The timed calls after it reuse the workspace on the same input, where the stale (M, S)
// is even right, and nothing checks them. On a new input the next call fails:
// y = exp(x - M_old) / S_old, e.g. every output 0 on [0, 10] after [500, 1000], where
// exp(x - ~1000) underflows. The last block may reset the counter itself: every ticket is drawn, so
// no block touches it again in this call, and the next kernel sees the 0. tests/test_stage03.c runs
// two inputs in turn on one workspace to catch a missing reset.
#include "../../02_multipass/block_reduce.cuh"
#include "../../common/check.h"
#include "../../common/gpu.h"
#include "../fused3kernel.h"

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

    // The hand-off. Thread 0 fences, so that the pair it stored above is visible to every block
    // before its ticket is, then draws a ticket: atomicAdd returns the count before its own add,
    // so the G blocks draw 0, ..., G - 1, in whatever order they finish, and exactly one draws
    // G - 1. Every other block fenced its pair before it drew, so that one can read them all.
    __shared__ bool is_last;
    if (threadIdx.x == 0) {
        __threadfence();
        is_last = atomicAdd(blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads(); // is_last, written by thread 0, read by all
    if (!is_last)
        return; // the whole block leaves together: merge_stats's barriers need all its threads

    // The last block merges the G pairs (merge_stats reads them from L2, __ldcg) and leaves the
    // counter at 0: every ticket is drawn, so nobody else touches it in this call.
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
