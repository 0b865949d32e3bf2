// Stage 06 — top-K of a softmax without writing the softmax.
//
// What changed since stage 05: the output is no longer the softmax but, per row, the K most
// probable indices and their probabilities. Softmax keeps order (exp is increasing, and every
// element is divided by the same sum), so the top K of the probabilities are the top K of the
// logits: rank the logits exactly, keep stage 05's online (m, d) beside them, and compute only
// the K probabilities exp(x - m) / d at the end. The V-length softmax is never written.
//
//   unfused      stage 05's row softmax writes every probability; CUB sorts every row by logit;
//                the first K are copied out. What a framework does; 4 launches (5 for 16-bit).
//   fused        seed 000's design: a warp per row, each lane a sorted array of K candidates in
//                registers (K <= 32, a template constant), a shuffle merge of the 32 arrays.
//   fast_row     a block of 4 warps per row: 16-byte loads, 4 in flight per lane; per warp one
//                threshold (its K-th best) and one candidate buffer in shared memory.
//   fast_split   the same kernel with a row split over several blocks; the last block of the row
//                to finish merges their lists (for a batch of one, or a huge V).
//   fast         fast_row when there are at least as many rows as SMs, fast_split otherwise.
//
// Run:   make stage6 && ./run
//        ./run --rows 8192 --cols 50257 --k 10 --dtype bf16 --variant fast
//        ./run --input logits.npy --output answer --k 50
//
// Measured on an H200 (plots/data/06_fused_topk.csv; EXPERIMENTS.md, Experiment 6): 8192 x 50257
//   float32, K = 10: unfused 22.8 ms, fused 2.54 ms (8.97x), fast 0.856 ms (26.6x, 42.9 % of the
//   read ceiling; the goal of 90 % is not met). K = 50: fast 1.48 ms. bf16, K = 10: 1.31 ms.
//   A batch of one, K = 50: 73 to 87 us (goal 8 us, not met). README.md says what limits it.
#include <cub/cub.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "../05_online/online.h"
#include "../05_online/online_stat.cuh"
#include "../common/check.h"
#include "fused_topk.h"

static __host__ __device__ size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// ---- Ranking: one 64-bit key per candidate -----------------------------------------------------
// A candidate ranks before another if its logit is larger, or equal at a lower index. Packing the
// logit's bits (made to sort as unsigned integers: flip every bit of a negative float, only the
// sign bit of a positive one) above the complement of the index gives a key whose unsigned order
// is exactly that rank, so every comparison is one 64-bit compare. Key 0 ranks below every real
// candidate (the key of -inf is 0x007FFFFF...): it marks an empty slot.
typedef unsigned long long rank_key;

__device__ __forceinline__ rank_key make_key(float x, int index)
{
    const unsigned u = __float_as_uint(x);
    const unsigned ordered = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    return (rank_key)ordered << 32 | (unsigned)~index;
}

__device__ __forceinline__ float key_logit(rank_key key)
{
    const unsigned ordered = (unsigned)(key >> 32);
    return __uint_as_float((ordered & 0x80000000u) ? (ordered & 0x7FFFFFFFu) : ~ordered);
}

__device__ __forceinline__ int key_index(rank_key key) { return (int)~(unsigned)key; }

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

static bool unfused_supports(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)k, (void)dtype;
    return rows * cols <= INT32_MAX; // CUB's item count here is an int
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
// The design of the seed: every lane folds its elements into its own (m, d) and keeps the K best
// it has seen in a sorted array; the warp then combines the 32 statistics and merges the 32
// arrays; the probabilities of the K winners are exp(x - m) / d.

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

static bool fused_supports(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)rows, (void)cols;
    return dtype == DTYPE_F32 && k <= FUSED_MAX_K;
}

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

// ---- fast: a block per row (or per slice of a row), candidates in shared memory ---------------
// What fused leaves on the table, fixed one by one:
//   - 4-byte loads, one in flight per lane: here 16 bytes per load (4 float32 or 8 bf16/fp16 logits)
//     and FAST_UNROLL loads issued before any is used;
//   - every element compared with the lane's own K-th best, which stays low for long (a lane has
//     seen few elements), and an insertion that costs K selects per hit: here the 32 lanes of a warp
//     share one candidate buffer in shared memory and one threshold, the K-th best the warp has
//     seen, so after the first few hundred elements almost every element costs one compare, and
//     the warp skips a whole load's worth of logits when no lane has a candidate;
//   - K in registers, so K is small and fixed at compile time: here K is a runtime number up to
//     1024 (the buffer is sized for it when the kernel is launched);
//   - one warp per row, so a batch of one row keeps one SM busy: here a row can be split over
//     several blocks, each finding its slice's best K and statistic; the last block of the row to
//     finish merges them.
//
// The warp's buffer holds `count` candidates; a step (one 16-byte load per lane) appends at most
// 32 x VEC of them. When the next step might not fit, or the warp first holds K, the warp sorts the
// buffer (bitonic, in shared memory), keeps the best K, and the K-th becomes the threshold. A warp
// visits its elements in index order (step after step), so an element equal to the threshold comes
// after it and ranks after it: `x > threshold` is exactly the test for "might be in the top K".

#define FAST_THREADS 128        // 4 warps a row: faster than 8 (README.md)
#define FAST_WARPS (FAST_THREADS / WARP_SIZE)
#define FAST_UNROLL 4           // 16-byte loads in flight per lane (8 was slower)
#define FAST_MIN_SLICE 4096     // fast_split gives a block at least this many logits
#define FAST_MAX_SLICES 1024

template <typename T>
struct logits16; // how 16 bytes of logits become floats

template <>
struct logits16<float> {
    static const int count = 4;
    static __device__ __forceinline__ void unpack(uint4 r, float (&v)[4])
    {
        v[0] = __uint_as_float(r.x), v[1] = __uint_as_float(r.y), v[2] = __uint_as_float(r.z), v[3] = __uint_as_float(r.w);
    }
};

template <>
struct logits16<__nv_bfloat16> {
    static const int count = 8;
    // bfloat16 is the top half of a float32: a shift (or a mask) is the whole conversion.
    static __device__ __forceinline__ void unpack(uint4 r, float (&v)[8])
    {
        const unsigned w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
        for (int i = 0; i < 4; i++)
            v[2 * i] = __uint_as_float(w[i] << 16), v[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
    }
};

template <>
struct logits16<__half> {
    static const int count = 8;
    static __device__ __forceinline__ void unpack(uint4 r, float (&v)[8])
    {
        const unsigned w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const float2 f = __half22float2(*reinterpret_cast<const __half2 *>(&w[i]));
            v[2 * i] = f.x, v[2 * i + 1] = f.y;
        }
    }
};

__device__ __forceinline__ float logit_to_float(float x) { return x; }
__device__ __forceinline__ float logit_to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float logit_to_float(__half x) { return __half2float(x); }

// Folds N elements into the statistic with one rescale of the running sum.
template <int N>
__device__ __forceinline__ online_stat online_stat_add_n(online_stat s, const float (&v)[N])
{
    float m = s.m;
#pragma unroll
    for (int j = 0; j < N; j++)
        m = fmaxf(m, v[j]);
    if (m == -INFINITY)
        return s;
    float d = s.d * __expf(s.m - m);
#pragma unroll
    for (int j = 0; j < N; j++)
        d += __expf(v[j] - m);
    return make_stat(m, d);
}

// Capacity of a warp's buffer: room for K kept plus one step's worth, and for two lists of K
// (a merge), as a power of two for the sort.
static __host__ __device__ int warp_capacity(int k, int per_lane)
{
    int need = 2 * k > k + WARP_SIZE * per_lane ? 2 * k : k + WARP_SIZE * per_lane, cap = WARP_SIZE;
    while (cap < need)
        cap *= 2;
    return cap;
}

typedef struct {
    rank_key *buf;     // this warp's slice of shared memory
    int count;         // candidates in buf (the same in every lane)
    int k, capacity;
    float threshold;   // the logit of the K-th best held; NaN until K are held
    rank_key threshold_key;
} warp_candidates;

__device__ __forceinline__ warp_candidates warp_candidates_init(rank_key *buf, int k, int capacity)
{
    warp_candidates w;
    w.buf = buf, w.count = 0, w.k = k, w.capacity = capacity;
    w.threshold = __int_as_float(0x7FFFFFFF); // NaN: "x <= NaN" is false for every x, so all pass
    w.threshold_key = 0;
    return w;
}

// Bitonic sort of buf[0..n) (n a power of two) into descending key order, by one warp.
__device__ void warp_sort_descending(rank_key *buf, int n)
{
    const unsigned lane = threadIdx.x % WARP_SIZE;
    for (int size = 2; size <= n; size *= 2)
        for (int stride = size / 2; stride > 0; stride /= 2) {
            for (int t = lane; t < n / 2; t += WARP_SIZE) {
                const int i = 2 * t - (t & (stride - 1)), j = i + stride;
                const bool descending = (i & size) == 0; // the last merge (size == n) is all descending
                const rank_key a = buf[i], b = buf[j];
                if ((a < b) == descending) // out of order for this half: swap
                    buf[i] = b, buf[j] = a;
            }
            __syncwarp();
        }
}

// Sorts the buffer, keeps the best K, and makes the K-th the threshold.
__device__ void warp_keep_best(warp_candidates &w)
{
    const unsigned lane = threadIdx.x % WARP_SIZE;
    int n = WARP_SIZE;
    while (n < w.count)
        n *= 2;
    for (int i = w.count + lane; i < n; i += WARP_SIZE)
        w.buf[i] = 0; // empty slots sort last
    __syncwarp();
    warp_sort_descending(w.buf, n);
    if (w.count >= w.k) {
        w.count = w.k;
        w.threshold_key = w.buf[w.k - 1];
        w.threshold = key_logit(w.threshold_key);
    }
}

// One step: each lane offers N logits, indices first..first+N-1 (none if !have). The candidates
// are appended where a ballot says; the buffer is cut back to K when the next step might not fit.
template <int N>
__device__ __forceinline__ void warp_offer(warp_candidates &w, const float (&v)[N], int first, bool have)
{
    bool any = false;
#pragma unroll
    for (int j = 0; j < N; j++)
        any |= have && !(v[j] <= w.threshold);
    if (!__any_sync(FULL_MASK, any))
        return; // the common case after the first steps: one compare per element
    const unsigned lanes_below = (1u << (threadIdx.x % WARP_SIZE)) - 1;
#pragma unroll
    for (int j = 0; j < N; j++) {
        const bool keep = have && !(v[j] <= w.threshold);
        const unsigned ballot = __ballot_sync(FULL_MASK, keep);
        if (keep)
            w.buf[w.count + __popc(ballot & lanes_below)] = make_key(v[j], first + j);
        w.count += __popc(ballot);
    }
    __syncwarp();
    if (w.count > w.capacity - WARP_SIZE * N || (w.threshold_key == 0 && w.count >= w.k))
        warp_keep_best(w);
}

// The merge's step: each lane offers one key (0: none). Keys compare exactly, in any order.
// Returns false when no lane had a key above the threshold.
__device__ __forceinline__ bool warp_offer_key(warp_candidates &w, rank_key key)
{
    const bool keep = key > w.threshold_key;
    const unsigned ballot = __ballot_sync(FULL_MASK, keep);
    if (!ballot)
        return false;
    if (keep)
        w.buf[w.count + __popc(ballot & ((1u << (threadIdx.x % WARP_SIZE)) - 1))] = key;
    w.count += __popc(ballot);
    __syncwarp();
    if (w.count > w.capacity - WARP_SIZE || (w.threshold_key == 0 && w.count >= w.k))
        warp_keep_best(w);
    return true;
}

// The warps' best K lists, merged pairwise in log2(FAST_WARPS) rounds: warp 0 ends with the
// block's best K. Every warp must have called warp_keep_best (its list sorted, at most K long).
__device__ void block_merge(warp_candidates &w, rank_key *all_buffers, int *counts)
{
    const unsigned lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    if (lane == 0)
        counts[warp] = w.count;
    __syncthreads();
    for (int step = 1; step < FAST_WARPS; step *= 2) {
        if (warp % (2 * step) == 0) {
            const rank_key *theirs = all_buffers + (size_t)(warp + step) * w.capacity;
            const int n = counts[warp + step];
            for (int i = lane; i < n; i += WARP_SIZE)
                w.buf[w.count + i] = theirs[i];
            w.count += n;
            __syncwarp();
            warp_keep_best(w);
            if (lane == 0)
                counts[warp] = w.count;
        }
        __syncthreads();
    }
}

// Warp 0 writes the block's K best with their probabilities exp(x - m) / d.
__device__ void write_topk(const warp_candidates &w, online_stat s, size_t row, int k, int *indices, float *probs)
{
    if (threadIdx.x >= WARP_SIZE)
        return;
    for (int j = threadIdx.x; j < k; j += WARP_SIZE) {
        const rank_key key = w.buf[j];
        indices[row * k + j] = key_index(key);
        probs[row * k + j] = expf(key_logit(key) - s.m) / s.d;
    }
}

// Row = blockIdx.x / slices; this block takes slice blockIdx.x % slices of it. With slices > 1,
// each block leaves its best K (keys) and its statistic in the workspace, and the last block of
// the row (counted in rows_done, which it sets back to 0) merges them.
template <typename T>
static __global__ void __launch_bounds__(FAST_THREADS)
    fast_topk_kernel(const T *__restrict__ x, size_t cols, int k, int slices, int *__restrict__ indices,
                     float *__restrict__ probs, rank_key *slice_keys, online_stat *slice_stats, unsigned *rows_done)
{
    typedef logits16<T> vec;
    extern __shared__ rank_key buffers[]; // FAST_WARPS x capacity
    __shared__ online_stat warp_stats[WARP_SIZE];
    __shared__ int counts[FAST_WARPS];
    __shared__ bool last_block;
    const unsigned lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    const size_t row = blockIdx.x / slices;
    const int slice = blockIdx.x % slices;
    const int capacity = warp_capacity(k, vec::count);
    warp_candidates w = warp_candidates_init(buffers + (size_t)warp * capacity, k, capacity);
    online_stat s = ONLINE_IDENTITY;

    // A row of odd length starts anywhere: a head up to the first 16-byte boundary, a body of
    // 16-byte vectors split between the slices, a tail. The head goes first (slice 0, warp 0) and the
    // tail last (last slice, warp 0), so warp 0 still visits its elements in index order.
    const T *xr = x + row * cols;
    const size_t head = min(cols, (size_t)((16 - ((uintptr_t)xr & 15)) & 15) / sizeof(T));
    const size_t vectors = (cols - head) / vec::count, tail = head + vectors * vec::count;
    const uint4 *body = reinterpret_cast<const uint4 *>(xr + head);
    const size_t first = vectors * slice / slices, end = vectors * (slice + 1) / slices;

    if (slice == 0 && warp == 0) {
        const bool have = lane < head;
        const float v[1] = {have ? logit_to_float(xr[lane]) : 0.0f};
        if (have)
            s = online_stat_add(s, v[0]);
        warp_offer<1>(w, v, (int)lane, have);
    }

    // Step t of warp `warp` takes vectors first + (t * FAST_WARPS + warp) * 32 + lane: the same
    // number of steps for every warp, in index order within each.
    const size_t steps = ceil_div(end - first, (size_t)FAST_WARPS * WARP_SIZE);
    for (size_t t0 = 0; t0 < steps; t0 += FAST_UNROLL) {
        uint4 raw[FAST_UNROLL];
#pragma unroll
        for (int u = 0; u < FAST_UNROLL; u++) {
            const size_t i = first + ((t0 + u) * FAST_WARPS + warp) * WARP_SIZE + lane;
            raw[u] = i < end ? __ldcs(body + i) : make_uint4(0, 0, 0, 0); // read once: evict first
        }
#pragma unroll
        for (int u = 0; u < FAST_UNROLL; u++) {
            const size_t i = first + ((t0 + u) * FAST_WARPS + warp) * WARP_SIZE + lane;
            float v[vec::count];
            vec::unpack(raw[u], v);
            if (i < end)
                s = online_stat_add_n(s, v);
            warp_offer(w, v, (int)(head + i * vec::count), i < end);
        }
    }

    if (slice == slices - 1 && warp == 0) {
        const bool have = tail + lane < cols;
        const float v[1] = {have ? logit_to_float(xr[tail + lane]) : 0.0f};
        if (have)
            s = online_stat_add(s, v[0]);
        warp_offer<1>(w, v, (int)(tail + lane), have);
    }

    warp_keep_best(w);
    s = block_combine(s, warp_stats);
    block_merge(w, buffers, counts);
    if (slices == 1) {
        write_topk(w, s, row, k, indices, probs);
        return;
    }

    // Split: publish this slice's best K and statistic; the row's last block to arrive merges.
    rank_key *mine = slice_keys + ((size_t)row * slices + slice) * k;
    if (warp == 0)
        for (int i = lane; i < k; i += WARP_SIZE)
            mine[i] = i < w.count ? w.buf[i] : 0; // a slice shorter than K leaves empty slots
    if (threadIdx.x == 0)
        slice_stats[(size_t)row * slices + slice] = s;
    __threadfence(); // the writes above are visible GPU-wide before the count says so
    __syncthreads();
    if (threadIdx.x == 0)
        last_block = atomicAdd(&rows_done[row], 1u) == (unsigned)slices - 1;
    __syncthreads();
    if (!last_block)
        return;

    // The last block: __ldcg reads from L2, where the other blocks' writes are (L1 is not coherent).
    online_stat total = ONLINE_IDENTITY;
    for (int i = threadIdx.x; i < slices; i += FAST_THREADS) {
        const online_stat *p = slice_stats + (size_t)row * slices + i;
        total = online_stat_combine(total, make_stat(__ldcg(&p->m), __ldcg(&p->d)));
    }
    total = block_combine(total, warp_stats);

    // Each warp merges every FAST_WARPS-th slice's list. A list is sorted, so once a chunk of 32
    // has nothing above the threshold, neither has the rest of it.
    w = warp_candidates_init(w.buf, k, capacity);
    for (int sl = warp; sl < slices; sl += FAST_WARPS) {
        const rank_key *list = slice_keys + ((size_t)row * slices + sl) * k;
        for (int i = 0; i < k; i += WARP_SIZE)
            if (!warp_offer_key(w, i + lane < k ? __ldcg(list + i + lane) : 0))
                break;
    }
    warp_keep_best(w);
    block_merge(w, buffers, counts);
    write_topk(w, total, row, k, indices, probs);
    if (threadIdx.x == 0)
        rows_done[row] = 0; // the workspace is left as it was found
}

static int sm_count(void)
{
    static int sms;
    if (!sms) {
        int device;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    }
    return sms;
}

// With enough rows, a block per row fills every SM. With fewer, each row is split into slices of
// at least FAST_MIN_SLICE logits, as many as it takes to give every SM two blocks.
extern "C" int fast_slices(size_t rows, size_t cols, bool split)
{
    if (!split)
        return 1;
    const size_t most = cols / FAST_MIN_SLICE < 1 ? 1 : cols / FAST_MIN_SLICE;
    const size_t want = ceil_div(2 * (size_t)sm_count(), rows);
    return (int)(want < most ? want : most < FAST_MAX_SLICES ? most : FAST_MAX_SLICES);
}

static bool fast_auto_splits(size_t rows) { return rows < (size_t)sm_count(); }

typedef struct {
    rank_key *keys;
    online_stat *stats;
    unsigned *rows_done;
    size_t total;
} split_layout;

static split_layout split_plan(void *base, size_t rows, int slices, int k)
{
    split_layout l = {0};
    if (slices == 1)
        return l;
    char *p = (char *)base;
    l.keys = (rank_key *)p, l.total += align256(rows * slices * k * sizeof(rank_key));
    l.stats = (online_stat *)(p + l.total), l.total += align256(rows * slices * sizeof(online_stat));
    l.rows_done = (unsigned *)(p + l.total), l.total += rows * sizeof(unsigned);
    return l;
}

template <typename T>
static void launch_fast(const void *x, size_t rows, size_t cols, int k, int slices, int *indices, float *probs,
                        void *workspace)
{
    static bool shared_memory_raised;
    if (!shared_memory_raised) { // room for the largest K
        const int most = FAST_WARPS * warp_capacity(CLI_MAX_K, logits16<T>::count) * (int)sizeof(rank_key);
        CUDA_CHECK(cudaFuncSetAttribute(fast_topk_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, most));
        shared_memory_raised = true;
    }
    const split_layout l = split_plan(workspace, rows, slices, k);
    const size_t shared = FAST_WARPS * warp_capacity(k, logits16<T>::count) * sizeof(rank_key);
    fast_topk_kernel<T><<<(unsigned)(rows * slices), FAST_THREADS, shared>>>(
        (const T *)x, cols, k, slices, indices, probs, l.keys, l.stats, l.rows_done);
    CUDA_CHECK_LAUNCH("fast_topk_kernel");
}

static int fast_topk_with(bool split, const void *x, logit_dtype dtype, size_t rows, size_t cols, int k,
                          int *indices, float *probs, void *workspace)
{
    const int slices = fast_slices(rows, cols, split);
    if (dtype == DTYPE_F32)
        launch_fast<float>(x, rows, cols, k, slices, indices, probs, workspace);
    else if (dtype == DTYPE_BF16)
        launch_fast<__nv_bfloat16>(x, rows, cols, k, slices, indices, probs, workspace);
    else
        launch_fast<__half>(x, rows, cols, k, slices, indices, probs, workspace);
    return 1;
}

static int fast_row_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                         float *probs, void *workspace)
{
    return fast_topk_with(false, x, dtype, rows, cols, k, indices, probs, workspace);
}

static int fast_split_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                           float *probs, void *workspace)
{
    return fast_topk_with(true, x, dtype, rows, cols, k, indices, probs, workspace);
}

static int fast_auto_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                          float *probs, void *workspace)
{
    return fast_topk_with(fast_auto_splits(rows), x, dtype, rows, cols, k, indices, probs, workspace);
}

static size_t fast_split_workspace_bytes(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)dtype;
    return split_plan(NULL, rows, fast_slices(rows, cols, true), k).total;
}

static size_t fast_auto_workspace_bytes(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)dtype;
    return split_plan(NULL, rows, fast_slices(rows, cols, fast_auto_splits(rows)), k).total;
}

static bool fast_split_supports(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)k, (void)dtype;
    return rows * (size_t)fast_slices(rows, cols, true) <= INT32_MAX;
}

// The logits once, K pairs out (the split's lists and statistics stay in L2 and are not counted).
static double fast_bytes_per_row(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)rows;
    return (double)cols * dtype_size(dtype) + 8.0 * k;
}

extern "C" const topk_variant unfused_topk_variant = {"unfused", unfused_bytes_per_row, unfused_workspace_bytes,
                                                 unfused_topk, unfused_supports};
extern "C" const topk_variant fused_topk_variant = {"fused", fused_bytes_per_row, NULL, fused_topk, fused_supports};
extern "C" const topk_variant fast_row_topk_variant = {"fast_row", fast_bytes_per_row, NULL, fast_row_topk, NULL};
extern "C" const topk_variant fast_split_topk_variant = {"fast_split", fast_bytes_per_row, fast_split_workspace_bytes,
                                                    fast_split_topk, fast_split_supports};
extern "C" const topk_variant fast_topk_variant = {"fast", fast_bytes_per_row, fast_auto_workspace_bytes, fast_auto_topk,
                                              fast_split_supports};
