// Stage 06 — top-K of a softmax, without writing the softmax.
//
// What changed since stage 05: a row's output is its K most probable indices and their
// probabilities. Two facts make that cheap:
//   1. Top-K of softmax(x) is top-K of x: exp is increasing, and every element shares the sum.
//   2. The K probabilities need only stage 05's (m, d): a winner's is exp(x - m) / d.
// So a fused kernel reads each logit once and writes 2K numbers a row.
//
// This file, in reading order:
//   unfused    stage 05's softmax, CUB's sort of every row, the first K copied out.
//   fused      a warp per row; each lane keeps its best KMAX in registers.
//   threshold  a warp per row with one threshold (bar), a vote a chunk, and a buffer.
// Read next: exercise.cu.
//
// Run:   make stage6 && ./run
//        ./run --rows 8192 --cols 50257 --k 10 --variant threshold
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

// ---- unfused: softmax, sort, take K ----
// The sort's keys are the logits: two logits a few ulps apart can round to one float32
// probability. The radix sort is stable, so equal logits keep the lower index first.

template <typename T>
static __global__ void widen_kernel(const T *__restrict__ x, float *__restrict__ y, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] = (float)x[i];
}

// Each row's values 0..cols-1; block 0 writes the offsets.
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

// The workspace's arrays, each on a 256-byte boundary.
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

// A lower bound: logits read twice, probabilities and indices written, one sort pass over the
// pairs, K pairs out. 16-bit logits are read once more, to write the float32 copy read twice.
static double unfused_bytes_per_row(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)rows;
    const double widen = dtype == DTYPE_F32 ? 0.0 : 4.0 + 4.0; // the copy: written, one more read
    return (double)cols * (dtype_size(dtype) + widen + 4.0 + 4.0 + 4.0 + 16.0) + 16.0 * k;
}

static bool unfused_fits(size_t rows, size_t cols)
{
    return cols <= INT32_MAX / rows; // CUB's count: int
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
    CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairsDescending( // cub_bytes: unfused_plan's NULL call
        l.cub_scratch, l.cub_bytes, logits, l.sorted_logits, l.indices, l.sorted_indices, (int)n, (int)rows,
        l.offsets, l.offsets + 1));
    take_k_kernel<<<(unsigned)ceil_div(rows * k, 256), 256>>>(l.probs, l.sorted_indices, rows, cols, k,
                                                               indices, probs);
    CUDA_CHECK_LAUNCH("take_k_kernel");
    return launches + 3;
}

// ---- fused: K candidates in each lane's registers ----
// Every lane folds its logits into its own (m, d) and keeps its best KMAX (K rounded up to a power
// of 2) in a sorted array. The warp then combines the 32 statistics and merges the 32 arrays.

#define FUSED_WARPS 4 // rows per block of 128 threads

// The answer's order: larger logit first, then lower index.
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

    // Only constant indices keep an array in registers.
    float best[KMAX];
    int where[KMAX];
#pragma unroll
    for (int j = 0; j < KMAX; j++)
        best[j] = -INFINITY, where[j] = INT32_MAX; // ranks after every logit

    online_stat s = ONLINE_IDENTITY;
    for (size_t c = lane; c < cols; c += WARP_SIZE) {
        const float v = xr[c];
        s = online_stat_add(s, v);
        // A lane that fails skips the insertion; one that inserts stalls the other 31.
        if (ranks_before(v, (int)c, best[KMAX - 1], where[KMAX - 1])) {
            best[KMAX - 1] = v, where[KMAX - 1] = (int)c; // the last drops out
            // The new key swaps upward to its place; no break, so the loop unrolls.
#pragma unroll
            for (int j = KMAX - 1; j > 0; j--)
                if (ranks_before(best[j], where[j], best[j - 1], where[j - 1])) {
                    const float up = best[j];
                    const int up_at = where[j];
                    best[j] = best[j - 1], where[j] = where[j - 1];
                    best[j - 1] = up, where[j - 1] = up_at;
                }
        }
    }
    s = warp_combine(s);

    // K rounds: shuffles find the best head of the 32 arrays, and its lane pops it. Lane j keeps
    // winner j.
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
        if (at == where[0]) { // the winner's lane alone: indices are unique; K <= cols, so no empty slot wins
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
    // The array's length is a constant: k rounded up to a power of two.
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

// ---- threshold: one threshold (bar) for the whole warp ----
// fused's lanes each test against their own KMAX-th best, and one lane's insertion stalls the other
// 31. Here the warp shares one bar: the K-th best key it has merged so far. A chunk of 128 logits
// costs one test a logit and one vote, and most chunks stop there. The rare survivors are appended
// to the warp's buffer in shared memory, each at the slot a ballot gives it; past MERGE_MARK new
// keys the buffer is merged into the kept K, which raises the bar. Each lane sums (m, d) in
// segments of 64 chunks, so a long row's float sum grows its rounding error with the segments, not
// the logits.
//
//   buf: [ kept, best first | new candidates, unsorted | free ]
//          0            have                         n
//
// Invariants: buf[0..have) is the best `have` of all merged keys, sorted; every logit read so far
// is in buf[0..n) or ranks after the bar; have, n and the bar are equal in every lane.

#define THRESHOLD_WARPS 4 // rows per block
#define THRESHOLD_MAX_K 64
#define CHUNK_LOADS 4                      // one online_stat_add4
#define CHUNK (CHUNK_LOADS * WARP_SIZE)    // logits a chunk
#define MERGE_MARK 64                      // new ones before merging
#define BUFFER (THRESHOLD_MAX_K + MERGE_MARK + CHUNK)
#define SEGMENT_CHUNKS 64                  // chunks a partial statistic

typedef struct {
    float v;
    int at;
} candidate;

__device__ __forceinline__ bool before(candidate a, candidate b) { return ranks_before(a.v, a.at, b.v, b.at); }

// Merges the n keys of buf into the best min(n, k), sorted, in buf[0..min(n, k)); returns that count.
// A key's place is how many keys rank before it. Indices are unique, so places are too.
__device__ int merge_best(candidate *buf, candidate *merged, int n, int k)
{
    const int lane = threadIdx.x % WARP_SIZE;
    __syncwarp(); // every lane's appends are in
    for (int i = lane; i < n; i += WARP_SIZE) {
        const candidate c = buf[i];
        int place = 0;
        for (int j = 0; j < n; j++)
            place += before(buf[j], c);
        if (place < k)
            merged[place] = c;
    }
    __syncwarp();
    const int have = n < k ? n : k;
    for (int i = lane; i < have; i += WARP_SIZE)
        buf[i] = merged[i];
    __syncwarp();
    return have;
}

// Until K keys are kept the bar is the empty key, which every logit ranks before.
__device__ __forceinline__ candidate bar_of(const candidate *buf, int have, int k)
{
    const candidate empty = {-INFINITY, INT32_MAX};
    return have == k ? buf[k - 1] : empty;
}

static __global__ void threshold_warp_kernel(const float *__restrict__ x, size_t rows, size_t cols, int k,
                                             int *__restrict__ indices, float *__restrict__ probs)
{
    __shared__ candidate buffers[THRESHOLD_WARPS][BUFFER];
    __shared__ candidate merges[THRESHOLD_WARPS][THRESHOLD_MAX_K];
    const unsigned lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    const size_t row = blockIdx.x * (size_t)THRESHOLD_WARPS + warp;
    if (row >= rows)
        return; // the whole warp leaves together
    const float *xr = x + row * cols;
    candidate *buf = buffers[warp];
    const unsigned lanemask_lt = (1u << lane) - 1; // the lanes below this one

    int have = 0, n = 0;
    candidate bar = bar_of(buf, have, k);
    online_stat s = ONLINE_IDENTITY, part = ONLINE_IDENTITY; // part: this segment's sum
    for (size_t first = 0; first < cols; first += CHUNK) {
        float v[CHUNK_LOADS];
        unsigned above = 0; // bit j: load j survives
#pragma unroll
        for (int j = 0; j < CHUNK_LOADS; j++) {
            const size_t c = first + j * WARP_SIZE + lane;
            v[j] = c < cols ? xr[c] : -INFINITY; // -inf weighs 0
            const candidate here = {v[j], (int)c};
            above |= (unsigned)(c < cols && before(here, bar)) << j;
        }
        part = online_stat_add4(part, make_float4(v[0], v[1], v[2], v[3]));
        if (first / CHUNK % SEGMENT_CHUNKS == SEGMENT_CHUNKS - 1) // bounds rounding growth
            s = online_stat_combine(s, part), part = ONLINE_IDENTITY;
        if (!__any_sync(FULL_MASK, above != 0))
            continue; // the usual chunk
        // One ballot a load: a survivor's slot is n plus the survivors in lanes below.
#pragma unroll
        for (int j = 0; j < CHUNK_LOADS; j++) {
            const unsigned voted = __ballot_sync(FULL_MASK, above >> j & 1);
            if (above >> j & 1)
                buf[n + __popc(voted & lanemask_lt)] = {v[j], (int)(first + j * WARP_SIZE + lane)};
            n += __popc(voted);
        }
        if (n - have > MERGE_MARK) { // merge so the next chunk fits
            have = n = merge_best(buf, merges[warp], n, k);
            bar = bar_of(buf, have, k);
        }
    }
    // The bar was empty until K were kept, so every logit was appended until then: n >= K.
    merge_best(buf, merges[warp], n, k);
    s = warp_combine(online_stat_combine(s, part));
    for (int j = lane; j < k; j += WARP_SIZE) {
        indices[row * k + j] = buf[j].at;
        probs[row * k + j] = expf(buf[j].v - s.m) / s.d;
    }
}

static int threshold_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                          float *probs, void *workspace)
{
    (void)dtype, (void)workspace;
    const unsigned grid = (unsigned)ceil_div(rows, THRESHOLD_WARPS), threads = THRESHOLD_WARPS * WARP_SIZE;
    threshold_warp_kernel<<<grid, threads>>>((const float *)x, rows, cols, k, indices, probs);
    CUDA_CHECK_LAUNCH("threshold_warp_kernel");
    return 1;
}

extern "C" const topk_variant unfused_topk_variant = {"unfused",   unfused_bytes_per_row, unfused_workspace_bytes,
                                                     unfused_topk, TOPK_ANY_K, true, unfused_fits, NULL};
extern "C" const topk_variant fused_topk_variant = {"fused", fused_bytes_per_row, NULL, fused_topk, FUSED_MAX_K, false,
                                                   NULL, NULL};
extern "C" const topk_variant threshold_topk_variant = {"threshold", fused_bytes_per_row, NULL, threshold_topk,
                                                       THRESHOLD_MAX_K, false, NULL, NULL};
