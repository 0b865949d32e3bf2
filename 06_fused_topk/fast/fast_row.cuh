// fast/fast_row.cuh — fast_row: a warp per row, each warp with its own part of the block's
// shared memory and no block-wide barrier. K <= FAST_MAX_K and K <= cols.
// Read next: lane_counts.cuh.
#ifndef FAST_FAST_ROW_CUH
#define FAST_FAST_ROW_CUH

#include "../../common/check.h"
#include "dependent_launch.cuh"
#include "fast.h"
#include "draw.cuh"
#include "per_device.cuh"
#include "warp_row.cuh"

#define FAST_WARPS 4 // warps a block, a row each
#define FAST_THREADS (FAST_WARPS * WARP_SIZE)

// Guess: the first threshold is a guess, and a row that fewer than K logits reached is ranked
// again. Selects: the warp selects. Draw: it also draws the row's token. !Probs: logits out.
#define GUESS_ABOVE_K 32
template <typename T, bool Guess, bool Selects, bool Draw, bool Probs = true>
static __global__ void __launch_bounds__(FAST_THREADS, 8)
    fast_row_kernel(const T *__restrict__ x, size_t rows, size_t cols, int k, int *__restrict__ indices,
                    float *__restrict__ probs, const draw_request draw)
{
    extern __shared__ rank_key buffers[]; // each warp owns a part
    const int warp = threadIdx.x / WARP_SIZE;
    const size_t row = (size_t)blockIdx.x * FAST_WARPS + warp;
    if (row >= rows)
        return; // the whole warp leaves
    wait_for_launch_ahead(); // before any global access
    const int capacity = warp_capacity(k, logits16<T>::count, Selects);
    warp_candidates<Selects> w = warp_candidates_init<Selects>(buffers + warp * capacity, k, capacity);
    online_stat s = ONLINE_IDENTITY;
    const T *xr = x + row * cols;
    warp_offer_row<T, Selects, Probs>(w, s, xr, cols, Guess);
    warp_sort_best(w);
    if (Guess && w.buf[k - 1] == 0) // fewer than K reached the guess
        warp_rank_row_again(w.buf, k, xr, cols);
    write_topk<Probs>(w.buf, warp_statistic(s), row, k, indices, probs);
    if (Draw)
        warp_draw(w.buf, k, row, draw);
}

template <typename T, bool Guess, bool Selects, bool Draw, bool Probs>
static void launch_fast_row_kernel(const void *x, size_t rows, size_t cols, int k, int *indices, float *probs,
                                   cudaStream_t stream, bool dependent, const draw_request &draw)
{
    static bool shared_memory_raised[FAST_MAX_DEVICES];
    const int per_lane = logits16<T>::count, device = fast_device();
    if (!shared_memory_raised[device]) { // room for FAST_MAX_K
        const int most = FAST_WARPS * warp_capacity(FAST_MAX_K, per_lane, Selects) * (int)sizeof(rank_key);
        CUDA_CHECK(cudaFuncSetAttribute(fast_row_kernel<T, Guess, Selects, Draw, Probs>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, most));
        shared_memory_raised[device] = true;
    }
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)((rows + FAST_WARPS - 1) / FAST_WARPS)), config.blockDim = dim3(FAST_THREADS);
    config.dynamicSmemBytes = FAST_WARPS * warp_capacity(k, per_lane, Selects) * sizeof(rank_key);
    config.stream = stream;
    cudaLaunchAttribute attribute;
    config.attrs = &attribute, config.numAttrs = dependent_launch_attribute(&attribute, dependent);
    CUDA_CHECK(cudaLaunchKernelEx(&config, fast_row_kernel<T, Guess, Selects, Draw, Probs>, (const T *)x, rows, cols, k,
                                  indices, probs, draw));
    CUDA_CHECK_LAUNCH("fast_row_kernel");
}

// A certain threshold up to GUESS_ABOVE_K, a guess past it, a select past SELECT_ABOVE_K.
template <typename T, bool Draw, bool Probs>
static void launch_fast_row_for_k(const void *x, size_t rows, size_t cols, int k, int *indices, float *probs,
                                  cudaStream_t stream, bool dependent, const draw_request &draw)
{
    if (warp_selects(k))
        launch_fast_row_kernel<T, true, true, Draw, Probs>(x, rows, cols, k, indices, probs, stream, dependent, draw);
    else if (k > GUESS_ABOVE_K)
        launch_fast_row_kernel<T, true, false, Draw, Probs>(x, rows, cols, k, indices, probs, stream, dependent, draw);
    else
        launch_fast_row_kernel<T, false, false, Draw, Probs>(x, rows, cols, k, indices, probs, stream, dependent, draw);
}

// Launches a warp per row; draw is NULL for the top-K alone. !Probs: logits out, no draw.
template <typename T, bool Probs = true>
static void launch_fast_row(const void *x, size_t rows, size_t cols, int k, int *indices, float *probs,
                            cudaStream_t stream, bool dependent, const draw_request *draw)
{
    const draw_request none = {};
    if (!Probs)
        launch_fast_row_for_k<T, false, false>(x, rows, cols, k, indices, probs, stream, dependent, none);
    else if (draw)
        launch_fast_row_for_k<T, true, true>(x, rows, cols, k, indices, probs, stream, dependent, *draw);
    else
        launch_fast_row_for_k<T, false, true>(x, rows, cols, k, indices, probs, stream, dependent, none);
}

#endif
