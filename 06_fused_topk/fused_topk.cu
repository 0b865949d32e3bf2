// Stage 06 — top-K of a softmax, without writing the softmax.
//
// What changed since stage 05: the output is no longer the softmax but, per row, the K most
// probable indices and their probabilities, which is all that sampling the next token of a language
// model needs. Two facts make that cheap:
//   1. Top-K of softmax(x) is top-K of x. exp is increasing and every element is divided by the
//      same sum, so the order of the probabilities is the order of the logits: rank the logits,
//      exactly, and compute only K probabilities at the end.
//   2. The K probabilities need only (m, d). Stage 05's online statistic gives the row's max m and
//      d = sum exp(x - m) in the same read; a winner's probability is exp(x - m) / d.
// So a fused kernel reads each logit once and writes 2K numbers a row; the V-length softmax is
// never written.
//
// This file: the baseline and the first fused kernel.
//   unfused      stage 05's row softmax writes every probability; CUB sorts every row by logit;
//                the first K are copied out. What a framework does; 4 launches (5 for 16-bit), CUB's
//                sort counted as one (it launches a kernel for each radix pass).
//   fused        a warp per row, each lane a sorted array of K candidates in registers (K <= 32, a
//                template constant), then a shuffle merge of the 32 arrays.
// Then fast/, in the order the stage's README gives: fast_row, a warp per row with 16-byte loads, one
// threshold per warp and a candidate buffer in shared memory; fast_chunks, a row cut into chunks, a
// warp each, for a few rows; fast_split, a row over a cluster of 16 blocks for a batch of one; fast,
// which picks one of them.
//
// Run:   make stage6 && ./run
//        ./run --rows 8192 --cols 50257 --k 10 --variant fused
//        ./run --input logits.npy --output answer --k 50
#include <cub/cub.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "../05_online/online.h"
#include "../05_online/online_stat.cuh"
#include "../common/check.h"
#include "fused_topk.h"

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// ---- unfused: softmax, sort, take K --------------------------------------------------------------
// What a framework does: stage 05's row softmax writes every probability, CUB sorts every row, and
// the first K of each row are copied out with their probabilities. The sort's keys are the logits,
// not the probabilities: two logits a few ulps apart can round to the same float32 probability,
// and a sort of probabilities would then rank them by position, not by value (torch.topk of a
// softmax does exactly that). A radix sort is stable, so equal logits keep the lower index first.

template <typename T>
static __global__ void widen_kernel(const T *__restrict__ x, float *__restrict__ y, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] = (float)x[i];
}

// Each row's values for the sort, 0..cols-1, and (block 0) the rows' start offsets.
static __global__ void iota_rows_kernel(int *__restrict__ indices, int *__restrict__ offsets, size_t rows, size_t cols)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < rows * cols; i += (size_t)gridDim.x * blockDim.x)
        indices[i] = (int)(i % cols);
    if (blockIdx.x == 0)
        for (size_t r = threadIdx.x; r <= rows; r += blockDim.x)
            offsets[r] = (int)(r * cols);
}

static __global__ void take_k_kernel(const float *__restrict__ all_probs, const int *__restrict__ sorted_indices,
                                     size_t rows, size_t cols, int k, int *__restrict__ indices, float *__restrict__ probs)
{
    const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= rows * k)
        return;
    const size_t row = i / k;
    const int index = sorted_indices[row * cols + i % k];
    indices[i] = index;
    probs[i] = all_probs[row * cols + index];
}

// The workspace: probabilities, sorted logits, indices, sorted indices, offsets, the widened
// logits (16-bit input only) and CUB's scratch, each on a 256-byte boundary.
typedef struct {
    float *probs, *sorted_logits, *wide;
    int *indices, *sorted_indices, *offsets;
    void *cub_scratch;
    size_t cub_bytes, total;
} unfused_layout;

static size_t align256(size_t b) { return (b + 255) / 256 * 256; }

static unfused_layout unfused_plan(void *base, size_t rows, size_t cols, logit_dtype dtype)
{
    unfused_layout l = {0};
    const size_t n = rows * cols;
    CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairsDescending(
        NULL, l.cub_bytes, (const float *)NULL, (float *)NULL, (const int *)NULL, (int *)NULL, (int)n, (int)rows,
        (const int *)NULL, (const int *)NULL));
    char *p = (char *)base;
    l.probs = (float *)(p + l.total), l.total += align256(n * sizeof(float));
    l.sorted_logits = (float *)(p + l.total), l.total += align256(n * sizeof(float));
    l.indices = (int *)(p + l.total), l.total += align256(n * sizeof(int));
    l.sorted_indices = (int *)(p + l.total), l.total += align256(n * sizeof(int));
    l.offsets = (int *)(p + l.total), l.total += align256((rows + 1) * sizeof(int));
    l.wide = (float *)(p + l.total), l.total += dtype == DTYPE_F32 ? 0 : align256(n * sizeof(float));
    l.cub_scratch = p + l.total, l.total += l.cub_bytes;
    return l;
}

static size_t unfused_workspace_bytes(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)k;
    return unfused_plan(NULL, rows, cols, dtype).total;
}

// At least: the logits read by the softmax and by the sort (16-bit ones widened first: read, written
// as float32), the probabilities written, the indices written, one read and one write of the
// (logit, index) pairs by the sort (a radix sort of long rows takes several passes, each reading
// and writing them again), K pairs out.
static double unfused_bytes_per_row(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)rows;
    const double widen = dtype == DTYPE_F32 ? 0.0 : 4.0;
    return (double)cols * (dtype_size(dtype) + widen + 4.0 + 4.0 + 4.0 + 16.0) + 16.0 * k;
}

static bool unfused_fits(size_t rows, size_t cols)
{
    return cols <= INT32_MAX / rows; // rows x cols <= INT32_MAX: CUB's item count here is an int
}

static int unfused_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                        float *probs, void *workspace)
{
    unfused_layout l = unfused_plan(workspace, rows, cols, dtype);
    const size_t n = rows * cols;
    const int grid = gpu_grid_size(n, 256, 8);
    int launches = 0;
    const float *logits = (const float *)x;
    if (dtype != DTYPE_F32) {
        if (dtype == DTYPE_BF16)
            widen_kernel<<<grid, 256>>>((const __nv_bfloat16 *)x, l.wide, n);
        else
            widen_kernel<<<grid, 256>>>((const __half *)x, l.wide, n);
        CUDA_CHECK_LAUNCH("widen_kernel");
        logits = l.wide;
        launches++;
    }
    launches += online_rows_variant.run(logits, l.probs, rows, cols, NULL);
    iota_rows_kernel<<<grid, 256>>>(l.indices, l.offsets, rows, cols);
    CUDA_CHECK_LAUNCH("iota_rows_kernel");
    CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairsDescending(
        l.cub_scratch, l.cub_bytes, logits, l.sorted_logits, l.indices, l.sorted_indices, (int)n, (int)rows,
        l.offsets, l.offsets + 1));
    take_k_kernel<<<(unsigned)ceil_div(rows * k, 256), 256>>>(l.probs, l.sorted_indices, rows, cols, k,
                                                               indices, probs);
    CUDA_CHECK_LAUNCH("take_k_kernel");
    return launches + 3;
}

// ---- fused: one warp per row, K candidates in each lane's registers ----------------------------
// The textbook fused design, the one claims C7-C10 speak of: every lane folds its elements into its
// own (m, d) and keeps the K best it has seen in a sorted array; the warp then combines the 32
// statistics and merges the 32 arrays; the probabilities of the K winners are exp(x - m) / d.

#define FUSED_WARPS 4 // rows per block of 128 threads

__device__ __forceinline__ bool ranks_before(float x, int i, float y, int j) { return x > y || (x == y && i < j); }

template <int KMAX>
static __global__ void fused_warp_kernel(const float *__restrict__ x, size_t rows, size_t cols, int k,
                                         int *__restrict__ indices, float *__restrict__ probs)
{
    const unsigned lane = threadIdx.x % WARP_SIZE;
    const size_t row = blockIdx.x * (size_t)FUSED_WARPS + threadIdx.x / WARP_SIZE;
    if (row >= rows)
        return; // the whole warp leaves together
    const float *xr = x + row * cols;

    // The array stays in registers only if every index into it is known at compile time: the
    // insertion below is unrolled into KMAX compare-and-selects, with no loop over a runtime bound.
    float best[KMAX];
    int where[KMAX];
#pragma unroll
    for (int j = 0; j < KMAX; j++)
        best[j] = -INFINITY, where[j] = INT32_MAX; // empty: ranks after every element, -inf included

    online_stat s = ONLINE_IDENTITY;
    for (size_t c = lane; c < cols; c += WARP_SIZE) {
        const float v = xr[c];
        s = online_stat_add(s, v);
        // Most elements fail this test. A GPU has no branch predictor to make that cheap: what saves
        // the time is that usually all 32 lanes fail together, so the warp skips the insertion as
        // one; a lane that inserts makes the other 31 wait.
        if (ranks_before(v, (int)c, best[KMAX - 1], where[KMAX - 1])) {
            // Insertion, from the bottom up: slot j takes slot j-1's candidate if the new element
            // ranks before that one, the new element if it ranks before slot j's, else stays.
#pragma unroll
            for (int j = KMAX - 1; j > 0; j--) {
                const bool above = ranks_before(v, (int)c, best[j - 1], where[j - 1]);
                const bool here = ranks_before(v, (int)c, best[j], where[j]);
                best[j] = above ? best[j - 1] : here ? v : best[j];
                where[j] = above ? where[j - 1] : here ? (int)c : where[j];
            }
            if (ranks_before(v, (int)c, best[0], where[0]))
                best[0] = v, where[0] = (int)c;
        }
    }
    s = warp_combine(s);

    // The warp's K best: K rounds, each finding the best head of the 32 lanes' arrays with
    // shuffles; the lane it came from pops it. Lane j keeps the j-th winner.
    float mine = 0.0f;
    int mine_at = 0;
    for (int j = 0; j < k; j++) {
        float v = best[0];
        int at = where[0];
#pragma unroll
        for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) {
            const float other = __shfl_xor_sync(FULL_MASK, v, offset);
            const int other_at = __shfl_xor_sync(FULL_MASK, at, offset);
            if (ranks_before(other, other_at, v, at))
                v = other, at = other_at;
        }
        if (at == where[0]) { // indices are unique in a row: exactly one lane holds the winner
#pragma unroll
            for (int i = 0; i < KMAX - 1; i++)
                best[i] = best[i + 1], where[i] = where[i + 1];
            best[KMAX - 1] = -INFINITY, where[KMAX - 1] = INT32_MAX;
        }
        if (lane == (unsigned)j)
            mine = v, mine_at = at;
    }
    if (lane < (unsigned)k) {
        indices[row * k + lane] = mine_at;
        probs[row * k + lane] = expf(mine - s.m) / s.d;
    }
}

#define FUSED_MAX_K 32

// Reads the logits once; writes K pairs.
static double fused_bytes_per_row(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)rows;
    return (double)cols * dtype_size(dtype) + 8.0 * k;
}

static int fused_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                      float *probs, void *workspace)
{
    (void)dtype, (void)workspace;
    const unsigned grid = (unsigned)ceil_div(rows, FUSED_WARPS), threads = FUSED_WARPS * WARP_SIZE;
    const float *xf = (const float *)x;
    // The array's length must be a compile-time constant: the next power of two at or above k.
    if (k <= 1)
        fused_warp_kernel<1><<<grid, threads>>>(xf, rows, cols, k, indices, probs);
    else if (k <= 2)
        fused_warp_kernel<2><<<grid, threads>>>(xf, rows, cols, k, indices, probs);
    else if (k <= 4)
        fused_warp_kernel<4><<<grid, threads>>>(xf, rows, cols, k, indices, probs);
    else if (k <= 8)
        fused_warp_kernel<8><<<grid, threads>>>(xf, rows, cols, k, indices, probs);
    else if (k <= 16)
        fused_warp_kernel<16><<<grid, threads>>>(xf, rows, cols, k, indices, probs);
    else
        fused_warp_kernel<32><<<grid, threads>>>(xf, rows, cols, k, indices, probs);
    CUDA_CHECK_LAUNCH("fused_warp_kernel");
    return 1;
}

extern "C" const topk_variant unfused_topk_variant = {"unfused",   unfused_bytes_per_row, unfused_workspace_bytes,
                                                     unfused_topk, TOPK_ANY_K, true, unfused_fits, NULL};
extern "C" const topk_variant fused_topk_variant = {"fused", fused_bytes_per_row, NULL, fused_topk, FUSED_MAX_K, false,
                                                   NULL, NULL};
