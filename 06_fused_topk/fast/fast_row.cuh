// fast/fast_row.cuh — fast_row: a warp per row, candidates in shared memory.
//
// What fused (fused_topk.cu) leaves on the table, and what this kernel does instead:
//   - 4-byte loads, one in flight per lane: here 16-byte loads (4 float32 or 8 bf16/fp16 logits),
//     FAST_UNROLL of them issued before any is used (logits16.cuh, warp_row.cuh);
//   - every logit compared with its lane's own K-th best, which stays low for long (a lane has seen
//     few logits), and an insertion that costs K selects a hit: here the 32 lanes share one
//     threshold, the K-th best the warp has seen, and one candidate buffer in shared memory
//     (candidates.cuh), so once the threshold has risen a chunk costs one compare of its largest
//     logit and one vote (ballot_append.cuh), beside the one FMA and one ex2 a logit of the
//     statistic (fast_exp.cuh);
//   - K in registers, so small and fixed at compile time: here K is a runtime number up to
//     FAST_MAX_K, and the buffer is sized for it at launch.
// It keeps fused's warp per row: one threshold serves the whole row, where a row split among
// several warps would need a threshold for each, every one rising from nothing.
//
// Each block has FAST_WARPS warps, each with its own row and its own part of the block's dynamic
// shared memory (warp_capacity keys). No block-wide barrier: a warp past the last row leaves.
// Assumes: rows x cols logits, row-major; cols <= FAST_ROW_MAX_COLS; K <= FAST_MAX_K, K <= cols.
// Read next: chunk_merge.cuh and fast_chunks.cuh, for a batch too small to fill the GPU this way.
#ifndef FAST_FAST_ROW_CUH
#define FAST_FAST_ROW_CUH

#include "../../common/check.h"
#include "dependent_launch.cuh"
#include "fast.h"
#include "draw.cuh"
#include "per_device.cuh"
#include "warp_row.cuh"

#define FAST_WARPS 4 // warps in a block, each with its own row
#define FAST_THREADS (FAST_WARPS * WARP_SIZE)

// The loads in flight come from the warps: 8 blocks of 4 warps an SM need at most 64 registers a
// thread.
// With Guess (K > GUESS_ABOVE_K) the first threshold is a guess, and a row in which fewer than K
// logits reached it is ranked again. That call costs registers even where it is not taken, so the
// kernel for K <= 32, where a certain threshold costs nothing more, is built without it.
// With Selects (K > SELECT_ABOVE_K) the warp keeps its candidates unsorted and chooses the best K
// by a select (candidates.cuh): a kernel of its own, so that the others carry no call to it.
// With Draw the warp also draws the row's token from its sorted winners (draw.cuh); without it the
// kernel is the top-K alone, and `draw` is not read.
#define GUESS_ABOVE_K 32
template <typename T, bool Guess, bool Selects, bool Draw>
static __global__ void __launch_bounds__(FAST_THREADS, 8)
    fast_row_kernel(const T *__restrict__ x, size_t rows, size_t cols, int k, int *__restrict__ indices,
                    float *__restrict__ probs, const draw_request draw)
{
    extern __shared__ rank_key buffers[]; // FAST_WARPS x capacity
    const int warp = threadIdx.x / WARP_SIZE;
    const size_t row = (size_t)blockIdx.x * FAST_WARPS + warp;
    if (row >= rows)
        return; // the whole warp: no block-wide barrier follows
    wait_for_launch_ahead(); // before the first global access (dependent_launch.cuh)
    const int capacity = warp_capacity(k, logits16<T>::count, Selects);
    warp_candidates<Selects> w = warp_candidates_init<Selects>(buffers + warp * capacity, k, capacity);
    online_stat s = ONLINE_IDENTITY;
    const T *xr = x + row * cols;
    warp_offer_row(w, s, xr, cols, Guess);
    warp_sort_best(w);
    if (Guess && w.buf[k - 1] == 0) // fewer than K logits reached the guess
        warp_rank_row_again(w.buf, k, xr, cols);
    write_topk(w.buf, warp_statistic(s), row, k, indices, probs);
    if (Draw)
        warp_draw(w.buf, k, row, draw);
}

template <typename T, bool Guess, bool Selects, bool Draw>
static void launch_fast_row_kernel(const void *x, size_t rows, size_t cols, int k, int *indices, float *probs,
                                   cudaStream_t stream, bool dependent, const draw_request &draw)
{
    static bool shared_memory_raised[FAST_MAX_DEVICES];
    const int per_lane = logits16<T>::count, device = fast_device();
    if (!shared_memory_raised[device]) { // room for the largest K
        const int most = FAST_WARPS * warp_capacity(FAST_MAX_K, per_lane, Selects) * (int)sizeof(rank_key);
        CUDA_CHECK(cudaFuncSetAttribute(fast_row_kernel<T, Guess, Selects, Draw>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, most));
        shared_memory_raised[device] = true;
    }
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)((rows + FAST_WARPS - 1) / FAST_WARPS)), config.blockDim = dim3(FAST_THREADS);
    config.dynamicSmemBytes = FAST_WARPS * warp_capacity(k, per_lane, Selects) * sizeof(rank_key);
    config.stream = stream;
    cudaLaunchAttribute attribute;
    config.attrs = &attribute, config.numAttrs = dependent_launch_attribute(&attribute, dependent);
    CUDA_CHECK(cudaLaunchKernelEx(&config, fast_row_kernel<T, Guess, Selects, Draw>, (const T *)x, rows, cols, k,
                                  indices, probs, draw));
    CUDA_CHECK_LAUNCH("fast_row_kernel");
}

// The kernel for K: a certain first threshold up to GUESS_ABOVE_K, a guess past it, and a select
// past SELECT_ABOVE_K.
template <typename T, bool Draw>
static void launch_fast_row_for_k(const void *x, size_t rows, size_t cols, int k, int *indices, float *probs,
                                  cudaStream_t stream, bool dependent, const draw_request &draw)
{
    if (warp_selects(k))
        launch_fast_row_kernel<T, true, true, Draw>(x, rows, cols, k, indices, probs, stream, dependent, draw);
    else if (k > GUESS_ABOVE_K)
        launch_fast_row_kernel<T, true, false, Draw>(x, rows, cols, k, indices, probs, stream, dependent, draw);
    else
        launch_fast_row_kernel<T, false, false, Draw>(x, rows, cols, k, indices, probs, stream, dependent, draw);
}

// A warp per row, on `stream`; `dependent`: a programmatic dependent launch; draw: NULL for the
// top-K alone.
template <typename T>
static void launch_fast_row(const void *x, size_t rows, size_t cols, int k, int *indices, float *probs,
                            cudaStream_t stream, bool dependent, const draw_request *draw)
{
    const draw_request none = {};
    if (draw)
        launch_fast_row_for_k<T, true>(x, rows, cols, k, indices, probs, stream, dependent, *draw);
    else
        launch_fast_row_for_k<T, false>(x, rows, cols, k, indices, probs, stream, dependent, none);
}

#endif
