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
//   fast_row     a warp per row again, now with 16-byte loads, 4 in flight per lane; one threshold
//                per warp (its K-th best, first guessed from a sample of the row) and a candidate
//                buffer in shared memory whose best K stay sorted, the new ones merged in batches.
//   fast_split   a row over a thread block cluster (16 blocks, sm_90) for a batch of one: the
//                blocks agree on a bound (the K-th largest of their groups' maxima) through
//                distributed shared memory, and only the logits at or above it are ranked.
//   fast         fast_row when there are at least as many rows as SMs, fast_split otherwise.
//
// Run:   make stage6 && ./run
//        ./run --rows 8192 --cols 50257 --k 10 --dtype bf16 --variant fast
//        ./run --input logits.npy --output answer --k 50
//
// Measured on an H200 (plots/data/06_fused_topk.csv; EXPERIMENTS.md, Experiment 6): 8192 x 50257
//   float32, K = 10: unfused 22.6 ms, torch.topk(torch.softmax(x)) 6.23 ms, fused 2.52 ms (8.96x
//   over unfused), fast 0.387 ms (58.4x, 96.8 % of the read ceiling; 16.1x faster than torch).
//   K = 1: 0.380 ms (98.3 %). K = 50: 0.406 ms (92.2 %, goal 90 %). K = 256: 0.521 ms (71.8 %, goal
//   70 %). K = 1024: 1.78 ms (21.0 %). bf16, K = 10: 0.216 ms (86.6 %, goal 85 %); K = 50: 0.258 ms
//   (72.5 %, not met). fp16, K = 50: 0.281 ms (66.6 %). A batch of one, K = 50: 9.2 to 11.4 us
//   (goal 8 us, not met).
//   README.md lists each step of the way and what limits it now; JOURNAL.md has the measurements.
#include <cooperative_groups.h>
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
// logit's ordered bits above the complement of the index gives a key whose unsigned order is
// exactly that rank, so every comparison is one 64-bit compare. Key 0 ranks below every real
// candidate (the key of -inf is 0x007FFFFF...): it marks an empty slot.
typedef unsigned long long rank_key;

// A float's bits made to sort as unsigned integers: every bit of a negative one flipped, only the
// sign bit of a positive one.
__device__ __forceinline__ unsigned ordered_bits(float x)
{
    const unsigned u = __float_as_uint(x);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ __forceinline__ float from_ordered_bits(unsigned ordered)
{
    return __uint_as_float((ordered & 0x80000000u) ? (ordered & 0x7FFFFFFFu) : ~ordered);
}

__device__ __forceinline__ rank_key make_key(float x, int index)
{
    return (rank_key)ordered_bits(x) << 32 | (unsigned)~index;
}

__device__ __forceinline__ float key_logit(rank_key key) { return from_ordered_bits((unsigned)(key >> 32)); }

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

static bool unfused_fits(size_t rows, size_t cols)
{
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

// ---- fast_row: a warp per row, candidates in shared memory ---------------------------------------
// What fused leaves on the table, fixed one by one:
//   - 4-byte loads, one in flight per lane: here 16 bytes per load (4 float32 or 8 bf16/fp16 logits)
//     and FAST_UNROLL loads issued before any is used;
//   - every element compared with the lane's own K-th best, which stays low for long (a lane has
//     seen few elements), and an insertion that costs K selects per hit: here the 32 lanes share
//     one threshold, the K-th best the warp has seen, and one candidate buffer in shared memory, so
//     once the threshold has risen a chunk of FAST_UNROLL vectors a lane costs one compare of
//     their largest and one vote, beside the exps that the statistic needs anyway (one FMA and one
//     ex2 a logit); a chunk that has candidates appends them all at once, each lane to slots
//     that a few ballots give it (warp_append);
//   - K in registers, so K is small and fixed at compile time: here K is a runtime number up to
//     1024 (the buffer is sized for it at launch).
// It keeps fused's warp per row. A warp that sees the whole row raises its threshold once; the
// first version of this kernel gave a row 4 warps, each raising its own threshold from nothing
// before a merge of 4 lists, and it was 1.7x slower at K = 10 (README.md).
//
// The warp's buffer holds its best K so far, sorted, then the new candidates. When enough new ones
// have piled up the warp sorts them (up to 128 of them in registers) and merges them into the best
// K (warp_keep_best), and the K-th becomes the threshold. A warp offers its elements in index
// order, and merges only between offers, so an element equal to the threshold comes after every
// element that set it and ranks after it: `x > threshold` is exactly the test for "might be in the
// top K". The first threshold comes before any merge, from a sample of the row: for K <= 32 the
// sample's K-th largest, which at least K logits reach; for larger K a guess, lower in rank, that
// lets through a few hundred logits where the K-th best seen so far would let through thousands
// (warp_sample_threshold).

#define FAST_WARPS 4 // warps in a block, each with its own row
#define FAST_THREADS (FAST_WARPS * WARP_SIZE)
// 16-byte loads in flight per lane (8 for 16-bit logits: fewer warps, 1.5x slower). They share one
// rescale test and one vote: 16 float32 or 32 16-bit logits a lane (32 16-bit logits in two halves,
// each with its own test and vote, were 1.07x slower).
#define FAST_UNROLL 4

template <int N>
__device__ __forceinline__ float largest(const float (&v)[N])
{
    float m = v[0];
#pragma unroll
    for (int j = 1; j < N; j++)
        m = fmaxf(m, v[j]);
    return m;
}

template <typename T>
struct logits16; // how 16 bytes of logits become floats, and the largest of G such vectors

template <>
struct logits16<float> {
    static const int count = 4;
    static const unsigned negative_infinity = 0xFF800000u; // a 32-bit word of -inf logits
    static const bool compares_packed = false; // the offer compares floats (warp_offer_chunk)
    static __device__ __forceinline__ void unpack(uint4 r, float (&v)[4])
    {
        v[0] = __uint_as_float(r.x), v[1] = __uint_as_float(r.y), v[2] = __uint_as_float(r.z), v[3] = __uint_as_float(r.w);
    }
    template <int G>
    static __device__ __forceinline__ float largest(const uint4 *r)
    {
        float m = -INFINITY;
#pragma unroll
        for (int g = 0; g < G; g++) {
            float v[4];
            unpack(r[g], v);
            m = fmaxf(m, ::largest(v));
        }
        return m;
    }
};

// A 16-bit logit widens to float exactly and in order, so the largest of G vectors is taken two at
// a time in the packed format T2 (one instruction for two logits), and only the last two are widened.
template <typename T2, int G>
__device__ __forceinline__ float largest_of_pairs(const uint4 *r)
{
    T2 m = *reinterpret_cast<const T2 *>(&r[0].x);
#pragma unroll
    for (int g = 0; g < G; g++) {
        const unsigned w[4] = {r[g].x, r[g].y, r[g].z, r[g].w};
#pragma unroll
        for (int i = g == 0; i < 4; i++)
            m = __hmax2(m, *reinterpret_cast<const T2 *>(&w[i]));
    }
    return fmaxf(__low2float(m), __high2float(m));
}

template <>
struct logits16<__nv_bfloat16> {
    static const int count = 8;
    static const unsigned negative_infinity = 0xFF80FF80u;
    // Its widening is a shift, and the packed compare of fp16 below made ptxas spill 92 to 128 bytes:
    // bf16 K = 50 0.373 ms against 0.258, K = 10 0.356 against 0.216 (JOURNAL.md).
    static const bool compares_packed = false;
    // bfloat16 is the top half of a float32: a shift (or a mask) is the whole conversion.
    static __device__ __forceinline__ void unpack(uint4 r, float (&v)[8])
    {
        const unsigned w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
        for (int i = 0; i < 4; i++)
            v[2 * i] = __uint_as_float(w[i] << 16), v[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
    }
    template <int G>
    static __device__ __forceinline__ float largest(const uint4 *r) { return largest_of_pairs<__nv_bfloat162, G>(r); }
};

template <>
struct logits16<__half> {
    static const int count = 8;
    static const unsigned negative_infinity = 0xFC00FC00u;
    // fp16 widens by a conversion. The offer compares the packed halves with the threshold instead
    // (one `set` for two logits, one `lop3` puts both bits in the mask) and widens only the
    // candidates, so the 32 floats of the fold need not live until the offer: K = 50 went from
    // 0.323 to 0.282 ms, K = 256 from 0.562 to 0.507 (JOURNAL.md).
    static const bool compares_packed = true;
    // Bit 4g + i of the mask is the low logit of word i of vector g (logit 2i), bit 16 + 4g + i
    // the high one. A 16-bit x is above a float t exactly when it is above t rounded down to 16
    // bits; a NaN threshold stays NaN, and the unordered compare lets everything through, as
    // "!(x <= NaN)" does.
    template <int G>
    static __device__ __forceinline__ unsigned above(const uint4 *r, float threshold)
    {
        const __half2 t = __half2half2(__float2half_rd(threshold));
        unsigned mask = 0;
#pragma unroll
        for (int g = 0; g < G; g++) {
            const unsigned w[4] = {r[g].x, r[g].y, r[g].z, r[g].w};
#pragma unroll
            for (int i = 0; i < 4; i++)
                mask |= __hgtu2_mask(*reinterpret_cast<const __half2 *>(&w[i]), t) & (0x00010001u << (4 * g + i));
        }
        return mask;
    }
    static __device__ __forceinline__ float one(uint4 r, int j)
    {
        const unsigned w[4] = {r.x, r.y, r.z, r.w};
        const __half2 h = *reinterpret_cast<const __half2 *>(&w[j / 2]);
        return j % 2 ? __high2float(h) : __low2float(h);
    }
    static __device__ __forceinline__ void unpack(uint4 r, float (&v)[8])
    {
        const unsigned w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const float2 f = __half22float2(*reinterpret_cast<const __half2 *>(&w[i]));
            v[2 * i] = f.x, v[2 * i + 1] = f.y;
        }
    }
    template <int G>
    static __device__ __forceinline__ float largest(const uint4 *r) { return largest_of_pairs<__half2, G>(r); }
};

__device__ __forceinline__ float logit_to_float(float x) { return x; }
__device__ __forceinline__ float logit_to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float logit_to_float(__half x) { return __half2float(x); }

// A row of odd length starts anywhere: a head up to the first 16-byte boundary (fewer than one
// vector of logits), a body of 16-byte vectors, a tail (fewer than one vector).
template <typename T>
struct row_parts {
    const T *logits;
    int head, vectors, tail; // tail: the index of the tail's first logit
    const uint4 *body;
};

template <typename T>
__device__ __forceinline__ row_parts<T> split_row(const T *xr, size_t cols)
{
    row_parts<T> p;
    p.logits = xr;
    p.head = (int)min(cols, (size_t)((16 - ((uintptr_t)xr & 15)) & 15) / sizeof(T));
    p.vectors = (int)((cols - p.head) / logits16<T>::count);
    p.tail = p.head + p.vectors * logits16<T>::count;
    p.body = reinterpret_cast<const uint4 *>(xr + p.head);
    return p;
}

// Slice `slice` of `slices` of the row's body starts at this vector (slice == slices: the end).
// `slices` is a power of two (a cluster of 16 or 8 blocks), so the division is a shift: a 64-bit
// division is a subroutine of some hundred instructions, and this is on the way to the first load.
template <typename T>
__device__ __forceinline__ int slice_start(const row_parts<T> &p, int slice, int slices)
{
    return (int)((unsigned long long)p.vectors * slice >> (__ffs(slices) - 1));
}

// e^x as the special function unit computes it: one ex2.approx of x log2(e), with subnormal results
// flushed to 0 (which a sum of probabilities never notices). expf and __expf add range fix-ups
// around it that cost 3 more instructions per logit, and the loop below runs one per logit. The
// unit does 16 a cycle an SM; taking one exp in 8 from a polynomial on the FMA pipe instead, to
// give it less to do, was no faster for float32 at K = 10 and slower everywhere else (JOURNAL.md).
#define LOG2_E 1.44269504f

__device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ float fast_exp(float x) { return fast_exp2(x * LOG2_E); }

// exp(x - m) is 2^(x log2(e) - m log2(e)): one fused multiply-add and one ex2 a logit, with
// m log2(e) computed once. Its rounding shifts every term of the lane by the same factor
// 2^(rounding), within 3e-6 of 1 while |m| < 64; beyond that (logits of huge magnitude) the factor
// grows with m, so there x - m is formed first, exactly when x is near m, at one more instruction.
// The choice is made once for all U x N terms, hence the template.
template <bool FMA>
__device__ __forceinline__ float exp_minus(float x, float m, float m_log2e)
{
    return FMA ? fast_exp2(fmaf(x, LOG2_E, -m_log2e)) : fast_exp(x - m);
}

// sum[u] = the sum of exp(v[u][j] - m) over j: one chain of adds for each of the U vectors, not
// one for all of them.
template <bool FMA, int U, int N>
__device__ __forceinline__ void sum_exps(float (&sum)[U], const float (&v)[U][N], float m)
{
    const float m_log2e = m * LOG2_E;
#pragma unroll
    for (int u = 0; u < U; u++) {
        sum[u] = exp_minus<FMA>(v[u][0], m, m_log2e);
#pragma unroll
        for (int j = 1; j < N; j++)
            sum[u] += exp_minus<FMA>(v[u][j], m, m_log2e);
    }
}

// Folds U x N logits, whose largest is vmax, into the statistic. The sum is rescaled only when the
// maximum moves, which after a row's first chunks is rare.
template <int U, int N>
__device__ __forceinline__ online_stat online_stat_add_n(online_stat s, const float (&v)[U][N], float vmax)
{
    if (vmax > s.m) {
        s.d *= fast_exp(s.m - vmax); // from -inf: exp(-inf) = 0, and d is 0 anyway
        s.m = vmax;
    }
    if (s.m == -INFINITY)
        return s; // nothing but -inf so far: nothing to add
    float sum[U];
    if (fabsf(s.m) < 64.0f)
        sum_exps<true>(sum, v, s.m);
    else
        sum_exps<false>(sum, v, s.m);
#pragma unroll
    for (int u = 0; u < U; u++)
        s.d += sum[u];
    return s;
}

// G vectors of logits unpacked and folded into the statistic: one rescale test for all of them.
// Returns their largest logit.
template <typename T, int G>
__device__ __forceinline__ float fold_group(online_stat &s, const uint4 *raw)
{
    float v[G][logits16<T>::count];
#pragma unroll
    for (int u = 0; u < G; u++)
        logits16<T>::unpack(raw[u], v[u]);
    const float most = logits16<T>::template largest<G>(raw);
    s = online_stat_add_n(s, v, most);
    return most;
}

// The warp keeps its best `kept` candidates (K rounded up to a power of two) sorted at the front of
// its buffer and appends new ones after them. Once enough new ones have piled up, it sorts only
// those and merges the two lists (warp_keep_best). Sooner means more, smaller sorts; later, a
// threshold that lags, so more steps append (JOURNAL.md has what the alternatives measured).
static __host__ __device__ int warp_kept(int k)
{
    int kept = 1;
    while (kept < k)
        kept *= 2;
    return kept;
}

// How many new candidates pile up before the warp merges them: kept/2, but at least 32 and at most
// 112, or 96 past K = 256. With the offer that crosses the mark, that is nearly always at most 128
// new ones, the batch that sorts in registers. Since appending and merging became cheaper
// (JOURNAL.md), 48 at the bottom is 10 % slower for bf16 at K = 50 and 24 no faster than 32; at the
// top, 96 instead of kept/2 took K = 256 from 0.677 to 0.570 ms and K = 1024 from 2.64 to 1.80
// (64: 0.621 and 2.24). 112 takes K = 256 from 0.528 to 0.518 ms, side by side, but K = 1024 from
// 1.80 to 1.88: there a chunk brings some 15 candidates, and a simulation puts a quarter of the
// merges past 128 new ones, sorted in shared memory (JOURNAL.md).
#define MERGE_AFTER_AT_LEAST 32
#define MERGE_AFTER_AT_MOST 112
#define MERGE_AFTER_AT_MOST_PAST_256 96
static __host__ __device__ int warp_merge_after(int kept)
{
    const int half = kept / 2, most = kept > 256 ? MERGE_AFTER_AT_MOST_PAST_256 : MERGE_AFTER_AT_MOST;
    return half < MERGE_AFTER_AT_LEAST ? MERGE_AFTER_AT_LEAST : half > most ? most : half;
}

static __host__ __device__ int warp_new_at_most(int k, int per_lane)
{
    int most = 1;
    while (most < warp_merge_after(warp_kept(k)) + WARP_SIZE * per_lane) // the step that crosses it fits
        most *= 2;
    return most;
}

// A warp's shared memory: the kept list, then room for the new ones (rounded up for their sort).
static __host__ __device__ int warp_capacity(int k, int per_lane) { return warp_kept(k) + warp_new_at_most(k, per_lane); }

typedef struct {
    rank_key *buf;   // buf[0..kept) sorted, then the new ones
    int fill;        // kept + the new candidates appended so far, the same in every lane
    int k, kept, flush_at, capacity; // capacity: the buffer's slots, kept ones included
    float threshold; // a logit must be above it to be a candidate; NaN (all pass) until there is one
} warp_candidates;

// The kept list starts as `kept` empty slots (key 0 ranks below every real candidate).
__device__ __forceinline__ warp_candidates warp_candidates_init(rank_key *buf, int k, int capacity)
{
    warp_candidates w;
    w.buf = buf, w.k = k, w.kept = warp_kept(k), w.fill = w.kept;
    w.flush_at = w.kept + warp_merge_after(w.kept), w.capacity = capacity;
    w.threshold = __int_as_float(0x7FFFFFFF); // NaN: "x <= NaN" is false for every x, so all pass
    for (int i = threadIdx.x % WARP_SIZE; i < w.kept; i += WARP_SIZE)
        w.buf[i] = 0;
    __syncwarp();
    return w;
}

// One compare-exchange layer of a bitonic network over buf[0..n): pairs (i, i + stride), put in
// descending order where `descending`, ascending elsewhere. Thread `self` of a team of `team`
// threads takes every team-th pair; the caller waits for the team before the next layer.
__device__ __forceinline__ void bitonic_layer(rank_key *buf, int n, int size, int stride, int self, int team)
{
    for (int t = self; t < n / 2; t += team) {
        const int i = 2 * t - (t & (stride - 1)), j = i + stride;
        const bool descending = (i & size) == 0; // size == n: all descending
        const rank_key a = buf[i], b = buf[j];
        if ((a < b) == descending) // out of order for this half: swap
            buf[i] = b, buf[j] = a;
    }
}

__device__ __forceinline__ void warp_bitonic_layer(rank_key *buf, int n, int size, int stride)
{
    bitonic_layer(buf, n, size, stride, threadIdx.x % WARP_SIZE, WARP_SIZE);
    __syncwarp();
}

// R x 32 keys held in registers, key r of each lane at position lane + 32r: the layers of a bitonic
// network (strides size/2 down to 1) that put each bitonic run of `size` keys in order, descending
// where (position & size) == 0 and ascending elsewhere (so all descending when size is R x 32).
// Pairs within a lane (stride 32 and up) swap in place; the others through shuffles. No
// shared-memory round trip and no __syncwarp per layer.
template <int R>
__device__ __forceinline__ void warp_bitonic_stage_in_registers(rank_key (&e)[R], int size)
{
    const int lane = threadIdx.x % WARP_SIZE;
#pragma unroll
    for (int stride = size / 2; stride > 0; stride /= 2) {
        rank_key before[R];
#pragma unroll
        for (int r = 0; r < R; r++)
            before[r] = e[r];
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int at = lane + r * WARP_SIZE;
            const rank_key other = stride < WARP_SIZE ? __shfl_xor_sync(FULL_MASK, before[r], stride)
                                                      : before[r ^ (stride / WARP_SIZE)];
            const bool larger = ((at & stride) == 0) == ((at & size) == 0); // this position keeps the larger
            e[r] = (before[r] > other) == larger ? before[r] : other;
        }
    }
}

// A bitonic sort of R x 32 keys held in registers into descending order: one stage a run length.
template <int R>
__device__ __forceinline__ void warp_sort_in_registers(rank_key (&e)[R])
{
#pragma unroll
    for (int size = 2; size <= R * WARP_SIZE; size *= 2)
        warp_bitonic_stage_in_registers(e, size);
}

// R x 32 keys of buf sorted into descending order in registers, R a lane.
template <int R>
__device__ __forceinline__ void warp_sort_through_registers(rank_key *buf)
{
    const int lane = threadIdx.x % WARP_SIZE;
    rank_key e[R];
#pragma unroll
    for (int r = 0; r < R; r++)
        e[r] = buf[lane + r * WARP_SIZE];
    warp_sort_in_registers(e);
#pragma unroll
    for (int r = 0; r < R; r++)
        buf[lane + r * WARP_SIZE] = e[r];
    __syncwarp();
}

// Bitonic sort of buf[0..n) (n a power of two, at least 64) into descending key order, by one
// warp, for the merges that do not fit in registers (K > 64, or more than 128 new ones). Up to
// 128 keys are sorted in registers, two or four a lane.
__device__ void warp_sort_descending(rank_key *buf, int n)
{
    if (n == 2 * WARP_SIZE)
        return warp_sort_through_registers<2>(buf);
    if (n == 4 * WARP_SIZE)
        return warp_sort_through_registers<4>(buf);
    for (int size = 2; size <= n; size *= 2)
        for (int stride = size / 2; stride > 0; stride /= 2)
            warp_bitonic_layer(buf, n, size, stride);
}

// For K <= 64 and at most 128 new ones (nearly every merge) both lists stay in registers: the new
// ones R = 2 or 4 keys a lane, sorted; of them only the best 64 (registers 0 and 1) can enter the
// kept list, which is padded to 64 by empty keys. The merge then costs no shared-memory layer and
// no __syncwarp.
template <int R>
__device__ __forceinline__ float warp_merge_in_registers(rank_key *buf, const rank_key *b, int fresh, int k, int kept,
                                                         float threshold)
{
    const int lane = threadIdx.x % WARP_SIZE;
    rank_key e[R];
#pragma unroll
    for (int r = 0; r < R; r++)
        e[r] = lane + r * WARP_SIZE < fresh ? b[lane + r * WARP_SIZE] : 0;
    warp_sort_in_registers(e);
    rank_key best[2]; // position i = lane + 32r: max(A[i], B[63 - i]), B's key in register 1 - r of lane 31 - lane
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const int i = lane + r * WARP_SIZE;
        const rank_key a = i < kept ? buf[i] : 0, facing = __shfl_sync(FULL_MASK, e[1 - r], WARP_SIZE - 1 - lane);
        best[r] = a > facing ? a : facing;
    }
    warp_bitonic_stage_in_registers(best, 2 * WARP_SIZE);
#pragma unroll
    for (int r = 0; r < 2; r++)
        if (lane + r * WARP_SIZE < kept)
            buf[lane + r * WARP_SIZE] = best[r];
    const rank_key kth = __shfl_sync(FULL_MASK, k <= WARP_SIZE ? best[0] : best[1], (k - 1) % WARP_SIZE);
    __syncwarp(); // the lanes have read the new ones before the next appends overwrite them
    return kth != 0 ? key_logit(kth) : threshold;
}

// Sorts the new candidates, merges them into the kept list, and returns the new threshold (the
// K-th). Two descending lists A (kept) and B: max(A[i], B[kept-1-i]) over i is the best `kept` of
// both, falling then rising (a bitonic sequence), which log2(kept) layers put in order.
// One copy of it, called from every place that offers candidates: inlined at each of them, it made
// the kernel some 15 000 instructions, and warps stalled on instruction fetches (JOURNAL.md). Its
// arguments go by value: an earlier try passed the warp_candidates by reference, which puts them
// in local memory, and every chunk of the loop over the logits paid for reading the threshold there.
__device__ __noinline__ float warp_merge_fresh(rank_key *buf, int fill, int k, int kept, float threshold)
{
    const int lane = threadIdx.x % WARP_SIZE, fresh = fill - kept;
    if (fresh == 0)
        return threshold;
    rank_key *b = buf + kept;
    __syncwarp(); // every lane's appends are in
    if (kept <= 2 * WARP_SIZE && fresh <= 2 * WARP_SIZE)
        return warp_merge_in_registers<2>(buf, b, fresh, k, kept, threshold);
    if (kept <= 2 * WARP_SIZE && fresh <= 4 * WARP_SIZE)
        return warp_merge_in_registers<4>(buf, b, fresh, k, kept, threshold);
    int n = 2 * WARP_SIZE; // the buffer has room for 64 new ones
    while (n < fresh)
        n *= 2;
    for (int i = fresh + lane; i < n; i += WARP_SIZE)
        b[i] = 0; // empty slots sort last
    __syncwarp();
    warp_sort_descending(b, n);
    for (int i = lane; i < kept; i += WARP_SIZE) {
        const int j = kept - 1 - i;
        if (j < n && b[j] > buf[i])
            buf[i] = b[j];
    }
    __syncwarp();
    for (int stride = kept / 2; stride > 0; stride /= 2)
        warp_bitonic_layer(buf, kept, kept, stride);
    return buf[k - 1] != 0 ? key_logit(buf[k - 1]) : threshold;
}

__device__ __forceinline__ void warp_keep_best(warp_candidates &w)
{
    w.threshold = warp_merge_fresh(w.buf, w.fill, w.k, w.kept, w.threshold);
    w.fill = w.kept;
}

// Before a warp has merged anything, its threshold is NaN and every logit is a candidate. A sample
// of the row gives a better start: each lane's R largest sampled logits (R = 1 for a certain
// threshold, 2 for a guess) are distinct elements, so at least `rank` logits of the row are >= the
// rank-th largest of the 32 R. The lanes sort their 32 R keys (the same network as the new
// candidates), and the threshold becomes the float just below the rank-th, so that
// "x > threshold" keeps x >= it.
template <int R>
__device__ __forceinline__ void warp_threshold_from_lanes(warp_candidates &w, const float (&best)[R], int rank)
{
    const int lane = threadIdx.x % WARP_SIZE;
    rank_key e[R];
#pragma unroll
    for (int r = 0; r < R; r++)
        e[r] = make_key(best[r], lane + r * WARP_SIZE);
    warp_sort_in_registers(e);
    rank_key at = e[0]; // the rank-th key sits in register (rank - 1) / 32 of lane (rank - 1) % 32
#pragma unroll
    for (int r = 1; r < R; r++)
        if ((rank - 1) / WARP_SIZE == r)
            at = e[r];
    const float kth = key_logit(__shfl_sync(FULL_MASK, at, (rank - 1) % WARP_SIZE));
    if (kth > -INFINITY) // else every logit may be in the top K, -inf ones too: no threshold yet
        w.threshold = nextafterf(kth, -INFINITY);
}

// G vectors into a lane's two largest so far, best[0] >= best[1]: b is the largest of what a did
// not take.
template <typename T, int G>
__device__ __forceinline__ void largest_two(const uint4 *r, float (&best)[2])
{
    float a = best[0], b = best[1];
#pragma unroll
    for (int g = 0; g < G; g++) {
        float v[logits16<T>::count];
        logits16<T>::unpack(r[g], v);
#pragma unroll
        for (int j = 0; j < logits16<T>::count; j++)
            b = fmaxf(b, fminf(a, v[j])), a = fmaxf(a, v[j]);
    }
    best[0] = a, best[1] = b;
}

// The first threshold comes from a sample of FAST_SAMPLE_VECTORS vectors a lane (1 024 float32 or
// 2 048 16-bit logits), from the middles of as many equal parts of the row, not from its start: in
// a vocabulary the first ids are the most frequent tokens, often the most probable, and a sample
// of them would say too little about the rest. The sample's K-th largest is a certain threshold:
// at least K logits reach it. For K > 32 the warp may guess instead (`guess`): a row's top K are
// spread over the row, so the sample of n of its V logits holds about lambda = K n / V of them, and
// the guess is the sample's rank-th largest with rank = lambda + 4 sqrt(lambda) + 4. The sample
// holds that many of the row's top K less often than once in 10 000 rows in random order, so at
// least K logits of the row nearly always reach the guess; the kernel checks that they did. At
// K = 50 and V = 50257 (float32) the guess is the 10th of the sample, which some 500 logits of the
// row reach, against some 2 500 for the sample's 50th; a simulation of the algorithm put the
// candidates at about 200 a row with the guess and 400 with a first threshold from the first
// chunk (JOURNAL.md).
__device__ __forceinline__ int sample_rank(int k, size_t cols, int sampled, bool guess)
{
    const float lambda = (float)k * (float)sampled / (float)cols;
    const int rank = (int)ceilf(lambda + 4.0f * sqrtf(lambda) + 4.0f);
    return guess && rank < k ? rank : k;
}

// Sample vectors first .. first + FAST_SAMPLE_VECTORS - 1 of `vectors` a lane, loaded together.
template <typename T>
__device__ __forceinline__ void load_sample(uint4 (&raw)[FAST_SAMPLE_VECTORS], const row_parts<T> &p,
                                            unsigned warp_rows, int first, int vectors)
{
    const int lane = threadIdx.x % WARP_SIZE;
#pragma unroll
    for (int i = 0; i < FAST_SAMPLE_VECTORS; i++)
        raw[i] = __ldcg(p.body + FAST_SAMPLED_WARP_ROW(first + i, vectors, warp_rows) * WARP_SIZE + lane);
}

// Sets the warp's first threshold from the sample. Not for a row of fewer than
// FAST_SAMPLE_VECTORS x 32 vectors (the sample's vectors would not be distinct), nor where the rank
// is past the keys that the lanes hold: 64 for a guess, 32 for a certain threshold (the lanes'
// maxima alone; holding two a lane made ptxas spill in the kernel for K <= 32). A guess ranks the
// lanes' two largest even when its rank is 32 or less: where a lane holds two of the sample's
// largest, its maximum alone would put the rank-th lower (K = 256: 0.544 ms against 0.569).
// For K >= FAST_WIDE_SAMPLE_K a guess samples FAST_WIDE_SAMPLE_LOGITS logits, 16 float32 vectors
// a lane (16-bit logits have that many in 8), where the rank stays within the 64 keys: the guess
// is closer to the K-th, and at K = 256 the row's candidates are some 9 % fewer (a simulation) and
// the kernel 0.528 ms against 0.543, side by side. The second 8 vectors cost a DRAM round trip
// more at the row's start, which K = 50 does not win back (0.401 against 0.398), and 16 in flight
// would take 64 registers.
// The sampled vectors are read again when the warp offers them. Loaded with L2's normal eviction
// priority, not the evict-first of the scan's loads, they are still in L2 then, and DRAM reads
// them once: K = 10 0.386 ms against 0.394, bf16 K = 10 0.216 against 0.221 (JOURNAL.md). A sample of
// 4 vectors a lane for 16-bit logits was no faster.
template <typename T>
__device__ __forceinline__ void warp_sample_threshold(warp_candidates &w, const row_parts<T> &p, size_t cols,
                                                      bool guess)
{
    typedef logits16<T> vec;
    const unsigned warp_rows = (unsigned)p.vectors / WARP_SIZE;
    const int wide = FAST_WIDE_SAMPLE_LOGITS / (WARP_SIZE * vec::count); // vectors a lane
    int vectors = FAST_SAMPLE_VECTORS, rank = sample_rank(w.k, cols, vectors * WARP_SIZE * vec::count, guess);
    if (guess && w.k >= FAST_WIDE_SAMPLE_K && wide > vectors && warp_rows >= (unsigned)wide) {
        const int wide_rank = sample_rank(w.k, cols, FAST_WIDE_SAMPLE_LOGITS, true);
        if (wide_rank <= 2 * WARP_SIZE)
            vectors = wide, rank = wide_rank;
    }
    if (warp_rows < FAST_SAMPLE_VECTORS || rank > (guess ? 2 : 1) * WARP_SIZE)
        return;
    if (!guess) {
        uint4 raw[FAST_SAMPLE_VECTORS];
        load_sample(raw, p, warp_rows, 0, FAST_SAMPLE_VECTORS);
        const float best[1] = {vec::template largest<FAST_SAMPLE_VECTORS>(raw)};
        warp_threshold_from_lanes(w, best, rank);
    } else {
        float best[2] = {-INFINITY, -INFINITY};
        for (int first = 0; first < vectors; first += FAST_SAMPLE_VECTORS) { // 8 loads in flight at a time
            uint4 raw[FAST_SAMPLE_VECTORS];
            load_sample(raw, p, warp_rows, first, vectors);
            largest_two<T, FAST_SAMPLE_VECTORS>(raw, best);
        }
        warp_threshold_from_lanes(w, best, rank);
    }
}

// The most logits a lane appends at once.
#define OFFER_AT_ONCE 16

// Bits enough to hold a count from 0 to m.
static __host__ __device__ constexpr int bits_to_count(int m) { return m < 2 ? 1 : 1 + bits_to_count(m / 2); }

// A lane's candidates among U vectors of N floats, as a mask: bit N u + j for logit j of vector u,
// set where it is above the threshold.
template <int U, int N>
__device__ __forceinline__ unsigned above_in_order(const float (&v)[U][N], float threshold)
{
    unsigned above = 0;
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
        for (int j = 0; j < N; j++)
            above |= (unsigned)!(v[u][j] <= threshold) << (N * u + j);
    return above;
}

// Where a mask has logit j of vector u: above_in_order's bit, or for packed vectors
// (logits16<T>::above, N = 8) the low logit of each pair in the low half and the high one in the
// high half.
template <int N, bool Packed>
static __host__ __device__ constexpr int candidate_bit(int u, int j)
{
    return Packed ? 16 * (j % 2) + N / 2 * u + j / 2 : N * u + j;
}

// Logit j of vector u: from floats, or widened from a packed vector.
template <typename T, int U, int N>
__device__ __forceinline__ float logit_at(const float (&v)[U][N], int u, int j) { return v[u][j]; }
template <typename T, int U>
__device__ __forceinline__ float logit_at(const uint4 (&raw)[U], int u, int j) { return logits16<T>::one(raw[u], j); }

// Appends the logits whose bits are set in `above` to the new candidates (logit j of vector u at
// index first + 32 N u + j), if they fit in the buffer; returns whether they did. Each lane counts
// its own; one ballot a bit of those counts gives every lane the sum over the lanes before it
// (where its own go) and the warp's total (its new fill), with no atomic add and no read of shared
// memory. Usually no lane has more than one, and one ballot does. The stores skip the vectors in
// which no lane has one.
template <typename T, bool Packed, int U, int N, typename Logits>
__device__ __forceinline__ bool warp_append(warp_candidates &w, const Logits &v, unsigned above, int first)
{
    static_assert(U * N <= OFFER_AT_ONCE, "at most OFFER_AT_ONCE logits a lane");
    if (!__any_sync(FULL_MASK, above != 0))
        return true; // nothing to append
    const int n = __popc(above);
    const unsigned lanes_before = (1u << threadIdx.x % WARP_SIZE) - 1;
    const unsigned ones = __ballot_sync(FULL_MASK, n & 1);
    int before = __popc(ones & lanes_before), total = __popc(ones);
    if (__any_sync(FULL_MASK, n > 1)) {
#pragma unroll
        for (int b = 1; b < bits_to_count(U * N); b++) {
            const unsigned plane = __ballot_sync(FULL_MASK, n >> b & 1);
            before += __popc(plane & lanes_before) << b;
            total += __popc(plane) << b;
        }
    }
    if (w.fill + total > w.capacity)
        return false;
    int slot = w.fill + before;
#pragma unroll
    for (int u = 0; u < U; u++) {
        unsigned vector_bits = 0;
#pragma unroll
        for (int j = 0; j < N; j++)
            vector_bits |= 1u << candidate_bit<N, Packed>(u, j);
        if (above & vector_bits) // skipped by the whole warp where no lane has one
#pragma unroll
            for (int j = 0; j < N; j++)
                if (above >> candidate_bit<N, Packed>(u, j) & 1)
                    w.buf[slot++] = make_key(logit_at<T>(v, u, j), first + u * WARP_SIZE * N + j);
    }
    w.fill += total;
    return true;
}

// Each lane offers N logits, indices first..first+N-1 (none if !have). The warp merges the new
// candidates into the kept list once enough have piled up. One vector a lane always fits: before
// it the buffer is below the merge mark, and it has room for 32 N more past it.
template <int N>
__device__ __forceinline__ void warp_offer(warp_candidates &w, const float (&v)[1][N], int first, bool have)
{
    unsigned above = above_in_order(v, w.threshold);
    if (!have) // a statement: as a conditional in the call, float32 spilled 4 bytes (JOURNAL.md)
        above = 0;
    warp_append<float, false, 1, N>(w, v, above, first); // fits, as above
    if (w.fill >= w.flush_at)
        warp_keep_best(w);
}

// A chunk of U vectors a lane, as loaded, offered OFFER_AT_ONCE logits a lane at a time (all four
// float32 vectors, two 16-bit ones: 32 logits held across the ballots made ptxas spill): one count,
// one set of ballots and one merge test for each. Only when they do not fit (no threshold yet, or a
// near-full buffer and many candidates) do they go a vector at a time, with merges between.
template <typename T, int U>
__device__ __forceinline__ void warp_offer_chunk(warp_candidates &w, const uint4 (&raw)[U], int first)
{
    typedef logits16<T> vec;
    constexpr int N = vec::count, G = OFFER_AT_ONCE / N < U ? OFFER_AT_ONCE / N : U; // vectors offered at once
#pragma unroll
    for (int g = 0; g < U; g += G) {
        uint4 part[G];
#pragma unroll
        for (int u = 0; u < G; u++)
            part[u] = raw[g + u];
        const int at = first + g * WARP_SIZE * N;
        bool fit;
        if constexpr (vec::compares_packed) {
            fit = warp_append<T, true, G, N>(w, part, vec::template above<G>(part, w.threshold), at);
        } else {
            float f[G][N];
#pragma unroll
            for (int u = 0; u < G; u++)
                vec::unpack(part[u], f[u]);
            fit = warp_append<T, false, G, N>(w, f, above_in_order(f, w.threshold), at);
        }
        if (fit) {
            if (w.fill >= w.flush_at)
                warp_keep_best(w);
            continue;
        }
#pragma unroll
        for (int u = 0; u < G; u++) {
            float one[1][N];
            vec::unpack(part[u], one[0]);
            warp_offer(w, one, at + u * WARP_SIZE * N, true);
        }
    }
}

// One step of a lane's N logits (none if !have): into the statistic, then offered.
template <int N>
__device__ __forceinline__ void warp_step(warp_candidates &w, online_stat &s, const float (&v)[1][N], int first, bool have)
{
    if (have)
        s = online_stat_add_n(s, v, largest(v[0]));
    warp_offer(w, v, first, have);
}

// One warp offers a whole row, in index order: head, body, tail. Read once, so the loads ask L2
// to evict the lines first. The body goes a chunk at a time, FAST_UNROLL vectors a lane, all
// loaded before any is used; a chunk of whole vectors needs no bounds test, and costs one rescale
// test and one vote. What is left of the body goes a vector a lane.
// Within a chunk the vectors are offered one after another, and vector u + 1 of every lane comes
// after vector u of every lane in the row: the warp still offers the row in index order.
// The first threshold comes from a sample of the row (warp_sample_threshold); with `guess`, the
// caller must check that K logits reached it.
template <typename T>
__device__ void warp_offer_row(warp_candidates &w, online_stat &s, const T *xr, size_t cols, bool guess)
{
    typedef logits16<T> vec;
    const int lane = threadIdx.x % WARP_SIZE, chunk = FAST_UNROLL * WARP_SIZE;
    const row_parts<T> p = split_row(xr, cols);
    warp_sample_threshold(w, p, cols, guess);
    {
        const bool have = lane < p.head;
        const float v[1][1] = {{have ? logit_to_float(xr[lane]) : 0.0f}};
        warp_step(w, s, v, lane, have);
    }
    const uint4 *at = p.body + lane;
    int i0 = 0;
    for (; i0 + chunk <= p.vectors; i0 += chunk, at += chunk) {
        uint4 raw[FAST_UNROLL];
#pragma unroll
        for (int u = 0; u < FAST_UNROLL; u++)
            raw[u] = __ldcs(at + u * WARP_SIZE);
        const float most = fold_group<T, FAST_UNROLL>(s, raw);
        if (__any_sync(FULL_MASK, !(most <= w.threshold)))
            warp_offer_chunk<T>(w, raw, p.head + (i0 + lane) * vec::count);
    }
    for (int i = i0 + lane; i - lane < p.vectors; i += WARP_SIZE) {
        const bool have = i < p.vectors;
        float v[1][vec::count];
        vec::unpack(have ? __ldcs(p.body + i) : make_uint4(0, 0, 0, 0), v[0]);
        warp_step(w, s, v, p.head + i * vec::count, have);
    }
    {
        const bool have = p.tail + lane < (int)cols;
        const float v[1][1] = {{have ? logit_to_float(xr[p.tail + lane]) : 0.0f}};
        warp_step(w, s, v, p.tail + lane, have);
    }
}

// The candidate `key` as the answer's entry `place`, with its probability exp(x - m) / d.
__device__ __forceinline__ void write_entry(rank_key key, int place, online_stat s, size_t row, int k, int *indices,
                                            float *probs)
{
    indices[row * k + place] = key_index(key);
    probs[row * k + place] = expf(key_logit(key) - s.m) / s.d;
}

// The K best of a sorted list.
__device__ void write_topk(const rank_key *sorted, online_stat s, size_t row, int k, int *indices, float *probs)
{
    for (int j = threadIdx.x % WARP_SIZE; j < k; j += WARP_SIZE)
        write_entry(sorted[j], j, s, row, k, indices, probs);
}

// The best K of a row into buf[0..K), sorted, with a certain first threshold: for the rare row in
// which fewer than K logits reached fast_row's guess, and for fast_split's row with too many logits
// at its bound. buf has fast_row's room for K (warp_capacity). A call, so that this second copy of
// the row's loop costs the first no registers.
template <typename T>
__device__ __noinline__ void warp_rank_row_again(rank_key *buf, int k, const T *xr, size_t cols)
{
    __syncwarp(); // no lane clears buf while another still reads it (fast_row's test of buf[k - 1])
    warp_candidates w = warp_candidates_init(buf, k, warp_capacity(k, logits16<T>::count));
    online_stat unused = ONLINE_IDENTITY; // the caller has the statistic
    warp_offer_row(w, unused, xr, cols, false);
    warp_keep_best(w);
}

// The loads in flight come from the warps: 8 blocks of 4 warps an SM need at most 64 registers a
// thread. 7 blocks (72 registers) were 1.15x slower; 9 (56 registers) no faster for float32 and 3 %
// slower for bf16; 10 or 12 spill and were slower (JOURNAL.md; measured before the merge became a
// call). At 64 the kernel spills a few bytes (`-Xptxas -v`, stores): none for float32 and fp16 with
// K <= 32, 16 bf16; with a guess 8 float32, 52 bf16 and 48 fp16.
// With Guess (K > GUESS_ABOVE_K) the first threshold is a guess, and a row in which fewer than K
// logits reached it is ranked again. That call costs registers even where it is not taken, and bf16
// at K = 10, where a guess saves nothing, took 0.2219 ms with it against 0.2202 without, side by side.
#define GUESS_ABOVE_K 32
template <typename T, bool Guess>
static __global__ void __launch_bounds__(FAST_THREADS, 8)
    fast_row_kernel(const T *__restrict__ x, size_t rows, size_t cols, int k, int *__restrict__ indices,
                    float *__restrict__ probs)
{
    extern __shared__ rank_key buffers[]; // FAST_WARPS x capacity
    const int warp = threadIdx.x / WARP_SIZE;
    const size_t row = (size_t)blockIdx.x * FAST_WARPS + warp;
    if (row >= rows)
        return; // the whole warp: no block-wide barrier follows
    const int capacity = warp_capacity(k, logits16<T>::count);
    warp_candidates w = warp_candidates_init(buffers + warp * capacity, k, capacity);
    online_stat s = ONLINE_IDENTITY;
    const T *xr = x + row * cols;
    warp_offer_row(w, s, xr, cols, Guess);
    warp_keep_best(w);
    if (Guess && w.buf[k - 1] == 0) // fewer than K logits reached the guess
        warp_rank_row_again(w.buf, k, xr, cols);
    write_topk(w.buf, warp_combine(s), row, k, indices, probs);
}

// ---- fast_split: one row over a cluster of blocks, for a batch of one ----------------------------
// What fast_row leaves on the table: a batch of one row is one warp on one SM, 1/500 of the GPU.
// The first split gave the row 512 warps all over the GPU in a cooperative launch: each published
// its slice's maximum, the grid waited at a barrier, every warp then found the bound on its own,
// a bit at a time (32 rounds of shuffles), and the row's last warp sorted the candidates. It took
// 29 to 33 us where reading the row takes about 1 (README.md): the time went into the barrier,
// the serial bound and the lone last warp, not into memory.
// Here a row gets one thread block cluster (sm_90): 16 blocks of 256 threads on 16 SMs, which
// wait for each other at a hardware barrier and read and write each other's shared memory. (The
// whole GPU again, 128 blocks that agree through a shared sample and global memory with no
// barrier, was 3-5 us slower than this: each exchange is a round trip to L2. README.md.)
//   1. Each thread folds its logits (a 262144-float row is 16 vectors a thread, all loaded at once)
//      into (m, d) and its maximum. Each group of lanes writes its maximum to its block's shared
//      memory.
//   2. Past a cluster barrier, every block reads all the groups' maxima from the blocks that hold
//      them and finds their K-th largest to 24 bits: for K <= 64 (at most 256 groups, one a
//      thread) a bit at a time, one counting barrier a bit (block_kth_by_bisection), else 8 bits
//      at a time (block_kth_largest).
//      The groups are distinct elements, so at least K logits reach it: it is a lower bound of the
//      row's K-th largest, and a tight one, since there are at least 4K groups and few logits
//      outside the top K reach it.
//   3. Each thread compares its logits (still in registers) with the bound and appends those at or
//      above it to the list in the first block's shared memory (an atomic add on its count, across
//      the cluster).
//   4. cluster.sync(). The first block ranks the candidates (a team of lanes counts the ones above
//      each) and writes the best K.
// If the candidates overflow the list (a row full of ties), its first warp scans the whole row as
// fast_row does: slower, and still exact.

#define SPLIT_THREADS 256    // a block: 8 warps (fewer warps, cheaper barriers and per-warp work)
#define SPLIT_UNROLL 16      // 16-byte loads in flight per thread: a 262144-float row at once
#define SPLIT_MAX_BLOCKS 16  // blocks in a cluster where the GPU allows it (else 8)
#define SPLIT_MAX_HELD 16    // group maxima a thread holds for the bound: 16 x 256 groups of one lane at most

// The candidate list: room for 4K candidates and at least 4096 (ties at the bound: 262144 bf16
// logits from [0, 10] have some 800 at the 50th largest value), and for fast_row's buffer.
static int split_list(int k)
{
    int cap = 4096;
    while (cap < 4 * k || cap < warp_capacity(k, logits16<__half>::count))
        cap *= 2;
    return cap;
}

// Lanes in a group whose maximum goes into the bound: a warp, or fewer where that leaves under 4K.
static int split_group_lanes(int blocks, int k)
{
    int lanes = WARP_SIZE;
    while (lanes > 1 && blocks * (SPLIT_THREADS / lanes) < 4 * k)
        lanes /= 2;
    return lanes;
}

// Count d sits at d + d / 32: the 32 lanes reading digits 8 apart then hit 32 different banks.
#define SKEWED_COUNTS (256 + 8)
__device__ __forceinline__ int skewed(unsigned digit) { return (int)(digit + digit / 32); }

// A lower bound of the K-th largest of n numbers held by the block, number t + j x SPLIT_THREADS
// in held[j] of thread t, as ordered bits: a radix select, 8 bits at a time from the top, for the
// top 24 bits. Round r counts in counts[r] (zeros on entry), of the numbers that match the bits
// chosen so far, how many have each value of the next 8 bits; then each warp walks the 256 counts
// down from the top until K is reached (each finds the same digit, so one barrier a round is all
// it takes). The last 8 bits are left at 0, a value at most 2^-15 of itself below the K-th: a few
// more logits reach it, for one round less.
#define KTH_ROUNDS 3

__device__ unsigned block_kth_largest(const unsigned (&held)[SPLIT_MAX_HELD], int n, int k,
                                      unsigned (*counts)[SKEWED_COUNTS])
{
    const int lane = threadIdx.x % WARP_SIZE;
    unsigned prefix = 0, wanted = k; // the answer is the wanted-th largest of those matching prefix
    for (int round = 0; round < KTH_ROUNDS; round++) {
        const int shift = 24 - 8 * round;
        const unsigned decided = round == 0 ? 0u : ~0u << (shift + 8); // the bits chosen so far
        // The numbers are close (maxima of one row): most of a warp's share one digit, and 32
        // atomic adds on one counter would queue. The lanes with equal digits add once, together.
#pragma unroll
        for (int j = 0; j < SPLIT_MAX_HELD && j * SPLIT_THREADS < n; j++) {
            const bool in = (int)threadIdx.x + j * SPLIT_THREADS < n && (held[j] & decided) == prefix;
            const unsigned digit = held[j] >> shift & 255;
            const unsigned same = __match_any_sync(FULL_MASK, in ? digit : 256u);
            if (in && lane == __ffs(same) - 1)
                atomicAdd(&counts[round][skewed(digit)], __popc(same));
        }
        __syncthreads();
        unsigned c[8], mine = 0; // lane L has the digits 255 - 8L down to 248 - 8L
#pragma unroll
        for (int i = 0; i < 8; i++)
            c[i] = counts[round][skewed(255 - 8 * lane - i)], mine += c[i];
        unsigned through = mine; // numbers whose digit is this lane's smallest or larger
#pragma unroll
        for (int offset = 1; offset < WARP_SIZE; offset *= 2) {
            const unsigned before = __shfl_up_sync(FULL_MASK, through, offset);
            if (lane >= offset)
                through += before;
        }
        unsigned above = through - mine, digit = 0, still_wanted = 0;
        bool found = false;
#pragma unroll
        for (int i = 0; i < 8; i++)
            if (!found && above < wanted && above + c[i] >= wanted)
                digit = 255 - 8 * lane - i, still_wanted = wanted - above, found = true;
            else
                above += c[i];
        const int holder = __ffs(__ballot_sync(FULL_MASK, found)) - 1;
        prefix |= __shfl_sync(FULL_MASK, digit, holder) << shift;
        wanted = __shfl_sync(FULL_MASK, still_wanted, holder);
    }
    return prefix;
}

// The same lower bound for group maxima held one a thread (K <= 64; `mine`, where `has`), with no
// table of counts: its bits from the top, each a question to the block (is the K-th largest at
// least this?) that one barrier answers, for __syncthreads_count adds up the threads whose maximum
// reaches the trial value. The bits on which all the maxima agree are the K-th largest's too, and
// one barrier first finds them (each warp's AND and OR of its maxima, then the block's). A row's
// group maxima are close: those of the benchmark's rows share their sign, exponent and first bits
// of mantissa, which leaves 7 to 11 questions of 24. The lowest 8 bits stay 0, as in the radix
// select. (Warp reductions are sm_80's; only the sm_90 kernel calls this.)
#if __CUDA_ARCH__ >= 900
__device__ unsigned block_kth_by_bisection(unsigned mine, bool has, int k,
                                           unsigned (*agree)[SPLIT_THREADS / WARP_SIZE])
{
    const int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    const unsigned all = __reduce_and_sync(FULL_MASK, has ? mine : ~0u);
    const unsigned any = __reduce_or_sync(FULL_MASK, has ? mine : 0u);
    if (lane == 0)
        agree[0][warp] = all, agree[1][warp] = any;
    __syncthreads();
    unsigned ones = ~0u, seen = 0; // the bits set in every maximum, in some
#pragma unroll
    for (int w = 0; w < SPLIT_THREADS / WARP_SIZE; w++)
        ones &= agree[0][w], seen |= agree[1][w];
    const unsigned differ = ones ^ seen;
    const int top = differ ? 31 - __clz(differ) : -1; // the highest bit on which they differ
    unsigned kth = top == 31 ? 0u : ones & ~0u << (top + 1);
    for (int bit = top; bit >= 8; bit--) {
        const unsigned trial = kth | 1u << bit;
        if (__syncthreads_count(has && mine >= trial) >= k)
            kth = trial;
    }
    return kth & ~255u;
}
#endif

// Appends v[j] (index first + j) to the list in the first block if it reaches the bound. Slots
// past the capacity are counted, not written: the first block then knows the list overflowed.
template <int N>
__device__ __forceinline__ void append_at_least(const float (&v)[N], int first, float bound, rank_key *list,
                                                unsigned *count, unsigned capacity)
{
    unsigned n = 0;
#pragma unroll
    for (int j = 0; j < N; j++)
        n += v[j] >= bound;
    if (n == 0)
        return;
    unsigned at = atomicAdd(count, n);
#pragma unroll
    for (int j = 0; j < N; j++)
        if (v[j] >= bound) {
            if (at < capacity)
                list[at] = make_key(v[j], first + j);
            at++;
        }
}

// A thread's tile of its block's slice, vectors i0, i0 + SPLIT_THREADS, ..., all loads issued at
// once. Past the slice's end they read as -inf logits, which change neither a statistic nor a
// maximum, so the tile needs no bounds tests after this.
template <typename T>
__device__ __forceinline__ void load_tile(uint4 (&raw)[SPLIT_UNROLL], const row_parts<T> &p, int i0, int end)
{
    const unsigned ninf = logits16<T>::negative_infinity;
#pragma unroll
    for (int u = 0; u < SPLIT_UNROLL; u++) {
        const int i = i0 + u * SPLIT_THREADS;
        raw[u] = i < end ? p.body[i] : make_uint4(ninf, ninf, ninf, ninf);
    }
}

// The row's statistic from the blocks' (one a lane), in every thread. The butterfly leaves the
// lanes' totals a rounding apart (each adds the pair in its own order), and any thread may write
// any place of the answer: every one uses lane 0's.
__device__ __forceinline__ online_stat cluster_statistic(const online_stat *block_stats, int blocks)
{
    const int lane = threadIdx.x % WARP_SIZE;
    const online_stat s = warp_combine(lane < blocks ? block_stats[lane] : ONLINE_IDENTITY);
    return make_stat(__shfl_sync(FULL_MASK, s.m, 0), __shfl_sync(FULL_MASK, s.d, 0));
}

// Keys a lane reads at once when it counts a candidate's place: at K = 50, 15 reads one after
// another took 1 000 cycles, two batches of 8 take 480 (JOURNAL.md).
#define PLACE_BATCH 8

// Clusters are sm_90's: built for an older GPU, the kernel is empty, and split_available() (which
// reads the version the kernel was built for) keeps it from being launched.
template <typename T>
static __global__ void __launch_bounds__(SPLIT_THREADS, 1)
    fast_split_kernel(const T *__restrict__ x, size_t cols, int k, int group_lanes, unsigned capacity,
                      int *__restrict__ indices, float *__restrict__ probs)
{
#if __CUDA_ARCH__ >= 900
    typedef logits16<T> vec;
    extern __shared__ rank_key area[]; // in the first block: the count, then the candidate list
    __shared__ unsigned maxima[SPLIT_THREADS]; // this block's group maxima, as ordered bits
    __shared__ online_stat warp_stats[SPLIT_THREADS / WARP_SIZE], block_stats[SPLIT_MAX_BLOCKS];
    __shared__ unsigned counts[KTH_ROUNDS][SKEWED_COUNTS]; // block_kth_largest's, a round each
    __shared__ unsigned agree[2][SPLIT_THREADS / WARP_SIZE]; // block_kth_by_bisection's, a warp each
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    const int blocks = (int)cluster.num_blocks(), rank = (int)cluster.block_rank();
    const int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE, t = threadIdx.x;
    const size_t row = blockIdx.x / blocks;
    const T *xr = x + row * cols;
    const row_parts<T> p = split_row(xr, cols);
    const int first = slice_start(p, rank, blocks), end = slice_start(p, rank + 1, blocks);
    const bool head = rank == 0 && t < p.head, tail = rank == blocks - 1 && p.tail + t < (int)cols;
    const int edge = head ? t : p.tail + t; // the index of this thread's head or tail logit

    // 1. This thread's logits (its vectors of the block's slice; the head in the first block, the
    //    tail in the last) into its statistic and maximum; each group's maximum into its block's
    //    shared memory. A row of up to SPLIT_UNROLL vectors a thread stays in registers for step
    //    3; a longer one is read again there, a tile at a time. The first tile's loads go out
    //    before anything else.
    uint4 raw[SPLIT_UNROLL];
    load_tile(raw, p, first + t, end);
    const float edge_logit = head || tail ? logit_to_float(p.logits[edge]) : -INFINITY;
    unsigned *count = reinterpret_cast<unsigned *>(area);
    if (rank == 0 && t == 0)
        *count = 0;
    for (int i = t; i < KTH_ROUNDS * SKEWED_COUNTS; i += SPLIT_THREADS)
        counts[i / SKEWED_COUNTS][i % SKEWED_COUNTS] = 0;

    online_stat s = ONLINE_IDENTITY;
    float most = -INFINITY;
    if (head || tail) {
        most = edge_logit;
        s = online_stat_add(s, most);
    }
    // Every FAST_UNROLL vectors cost one rescale test, as a chunk of fast_row does.
    const int group = FAST_UNROLL;
    const bool one_tile = end - first <= SPLIT_THREADS * SPLIT_UNROLL;
    for (int i0 = first + t; i0 < end; i0 += SPLIT_THREADS * SPLIT_UNROLL) {
        if (i0 != first + t)
            load_tile(raw, p, i0, end);
#pragma unroll
        for (int g = 0; g < SPLIT_UNROLL; g += group) {
            if (i0 + g * SPLIT_THREADS >= end)
                break; // the rest of the tile lies past the slice: -inf, nothing to fold
            most = fmaxf(most, fold_group<T, group>(s, raw + g));
        }
    }
    for (int offset = 1; offset < group_lanes; offset *= 2)
        most = fmaxf(most, __shfl_xor_sync(FULL_MASK, most, offset));
    const int per_block = SPLIT_THREADS / group_lanes, groups = blocks * per_block;
    if (lane % group_lanes == 0)
        maxima[t / group_lanes] = ordered_bits(most);
    cluster.barrier_arrive(); // this block's maxima are written; its statistic meanwhile
    s = warp_combine(s);
    if (lane == 0)
        warp_stats[warp] = s;
    cluster.barrier_wait(); // every block's maxima are written (and every block has started)

    // 2. The bound: the K-th largest of all the cluster's group maxima, found by every block.
    //    Each thread reads groups t, t + 256, ... from the blocks that hold them: per_block
    //    divides 256, so all of them sit at the same slot, every 256 / per_block blocks.
    unsigned held[SPLIT_MAX_HELD];
    const int slot = t % per_block, from = t / per_block, step = SPLIT_THREADS / per_block;
#pragma unroll
    for (int j = 0; j < SPLIT_MAX_HELD; j++)
        held[j] = t + j * SPLIT_THREADS < groups ? *cluster.map_shared_rank(&maxima[slot], from + j * step) : 0u;
    const unsigned kth = groups <= SPLIT_THREADS ? block_kth_by_bisection(held[0], t < groups, k, agree)
                                                 : block_kth_largest(held, groups, k, counts);
    // Below -inf's ordered bits lie only NaNs: a K-th largest of -inf leaves no bound.
    const float bound = kth < ordered_bits(-INFINITY) ? -INFINITY : from_ordered_bits(kth);
    if (warp == 0) { // the block's statistic, to the first block (warp_stats is complete: barriers since)
        const online_stat b = warp_combine(lane < SPLIT_THREADS / WARP_SIZE ? warp_stats[lane] : ONLINE_IDENTITY);
        if (lane == 0)
            *cluster.map_shared_rank(&block_stats[rank], 0) = b;
    }

    // 3. The logits >= bound, appended to the first block's list.
    rank_key *list = cluster.map_shared_rank(area + 1, 0);
    unsigned *list_count = cluster.map_shared_rank(count, 0);
    if (head || tail) {
        const float v[1] = {edge_logit};
        append_at_least(v, edge, bound, list, list_count, capacity);
    }
    for (int i0 = first + t; i0 < end; i0 += SPLIT_THREADS * SPLIT_UNROLL) {
        if (!one_tile)
            load_tile(raw, p, i0, end);
#pragma unroll
        for (int g = 0; g < SPLIT_UNROLL; g += group) {
            if (i0 + g * SPLIT_THREADS >= end)
                break; // past the slice: -inf padding, as in step 1
            if (!(vec::template largest<group>(raw + g) >= bound))
                continue; // the usual case: one compare for the group
#pragma unroll
            for (int u = g; u < g + group; u++) {
                const int i = i0 + u * SPLIT_THREADS;
                if (i < end) { // a -inf past the end reaches a bound of -inf
                    float v[vec::count];
                    vec::unpack(raw[u], v);
                    append_at_least(v, p.head + i * vec::count, bound, list, list_count, capacity);
                }
            }
        }
    }
    cluster.sync(); // the candidates and every block's statistic are in the first block

    if (rank != 0)
        return;

    // 4. The first block: the best K of the candidates, and the row's statistic. Keys are
    //    unique, so a candidate's place in the answer is how many candidates beat it: with no
    //    more candidates than threads (the usual case, some K + 10), a team of lanes counts for
    //    each and writes it if it is among the K, with no sort at all. More, the block sorts them.
    const int n = (int)*count;
    rank_key *mine = area + 1;
    if (n <= SPLIT_THREADS) {
        int team = WARP_SIZE; // lanes that share the count for one candidate: as many as fit
        while (team > 1 && team * n > SPLIT_THREADS)
            team /= 2;
        const int c = t / team;
        const rank_key key = c < n ? mine[c] : 0;
        int place = 0;
        for (int j0 = t % team; j0 < n && c < n; j0 += PLACE_BATCH * team) {
            rank_key other[PLACE_BATCH]; // read together: one wait for the batch, not one a key
#pragma unroll
            for (int u = 0; u < PLACE_BATCH; u++) {
                const int j = j0 + u * team;
                other[u] = j < n ? mine[j] : 0; // 0 is below every key
            }
#pragma unroll
            for (int u = 0; u < PLACE_BATCH; u++)
                place += other[u] > key;
        }
        for (int offset = team / 2; offset > 0; offset /= 2)
            place += __shfl_xor_sync(FULL_MASK, place, offset);
        const online_stat total = cluster_statistic(block_stats, blocks);
        if (c < n && t % team == 0 && place < k)
            write_entry(key, place, total, row, k, indices, probs);
        return;
    }
    if (n <= (int)capacity) {
        int padded = 2 * SPLIT_THREADS;
        while (padded < n)
            padded *= 2;
        for (int i = n + t; i < padded; i += SPLIT_THREADS)
            mine[i] = 0; // empty slots sort last
        __syncthreads();
        for (int size = 2; size <= padded; size *= 2)
            for (int stride = size / 2; stride > 0; stride /= 2) {
                bitonic_layer(mine, padded, size, stride, t, SPLIT_THREADS);
                __syncthreads();
            }
    } else if (warp == 0) { // too many logits reach the bound: the whole row, as fast_row does it
        warp_rank_row_again(mine, k, xr, cols);
    }
    const online_stat total = cluster_statistic(block_stats, blocks);
    if (warp == 0)
        write_topk(mine, total, row, k, indices, probs);
#endif
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

static size_t split_shared_bytes(int k) { return (1 + (size_t)split_list(k)) * sizeof(rank_key); }

static cudaLaunchConfig_t split_config(size_t rows, int blocks, int k, cudaLaunchAttribute *cluster)
{
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)(rows * blocks)), config.blockDim = dim3(SPLIT_THREADS);
    config.dynamicSmemBytes = split_shared_bytes(k);
    cluster->id = cudaLaunchAttributeClusterDimension;
    cluster->val.clusterDim.x = blocks, cluster->val.clusterDim.y = 1, cluster->val.clusterDim.z = 1;
    config.attrs = cluster, config.numAttrs = 1;
    return config;
}

// A cluster launch needs the GPU to have them (sm_90) and the kernel to be built for it.
template <typename T>
static bool split_available(void)
{
    static int available = -1;
    if (available < 0) {
        int device, clusters;
        cudaFuncAttributes built;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device));
        CUDA_CHECK(cudaFuncGetAttributes(&built, fast_split_kernel<T>));
        available = clusters && built.binaryVersion >= 90;
    }
    return available;
}

// 16 blocks a cluster where the GPU allows it (H100 and H200 do, as a size beyond the portable 8).
template <typename T>
static int split_blocks(void)
{
    static int blocks;
    if (!blocks) {
        CUDA_CHECK(cudaFuncSetAttribute(fast_split_kernel<T>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        CUDA_CHECK(cudaFuncSetAttribute(fast_split_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)split_shared_bytes(FAST_MAX_K)));
        cudaLaunchAttribute cluster;
        const cudaLaunchConfig_t config = split_config(1, SPLIT_MAX_BLOCKS, FAST_MAX_K, &cluster);
        int fit = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveClusters(&fit, fast_split_kernel<T>, &config));
        blocks = fit > 0 ? SPLIT_MAX_BLOCKS : SPLIT_MAX_BLOCKS / 2;
    }
    return blocks;
}

template <typename T, bool Guess>
static void launch_fast_row_kernel(const void *x, size_t rows, size_t cols, int k, int *indices, float *probs)
{
    static bool shared_memory_raised;
    if (!shared_memory_raised) { // room for the largest K
        const int most = FAST_WARPS * warp_capacity(FAST_MAX_K, logits16<T>::count) * (int)sizeof(rank_key);
        CUDA_CHECK(cudaFuncSetAttribute(fast_row_kernel<T, Guess>, cudaFuncAttributeMaxDynamicSharedMemorySize, most));
        shared_memory_raised = true;
    }
    const size_t shared = FAST_WARPS * warp_capacity(k, logits16<T>::count) * sizeof(rank_key);
    fast_row_kernel<T, Guess><<<(unsigned)ceil_div(rows, FAST_WARPS), FAST_THREADS, shared>>>(
        (const T *)x, rows, cols, k, indices, probs);
    CUDA_CHECK_LAUNCH("fast_row_kernel");
}

template <typename T>
static void launch_fast_row(const void *x, size_t rows, size_t cols, int k, int *indices, float *probs)
{
    if (k > GUESS_ABOVE_K)
        launch_fast_row_kernel<T, true>(x, rows, cols, k, indices, probs);
    else
        launch_fast_row_kernel<T, false>(x, rows, cols, k, indices, probs);
}

// A cluster of blocks per row.
template <typename T>
static void launch_fast_split(const void *x, size_t rows, size_t cols, int k, int *indices, float *probs)
{
    const int blocks = split_blocks<T>();
    cudaLaunchAttribute cluster;
    const cudaLaunchConfig_t config = split_config(rows, blocks, k, &cluster);
    CUDA_CHECK(cudaLaunchKernelEx(&config, fast_split_kernel<T>, (const T *)x, cols, k, split_group_lanes(blocks, k),
                                  (unsigned)split_list(k), indices, probs));
    CUDA_CHECK_LAUNCH("fast_split_kernel");
}

template <typename T>
static void launch_fast(bool split, const void *x, size_t rows, size_t cols, int k, int *indices, float *probs)
{
    if (split)
        launch_fast_split<T>(x, rows, cols, k, indices, probs);
    else
        launch_fast_row<T>(x, rows, cols, k, indices, probs);
}

static bool split_available_for(logit_dtype dtype)
{
    return dtype == DTYPE_F32    ? split_available<float>()
           : dtype == DTYPE_BF16 ? split_available<__nv_bfloat16>()
                                 : split_available<__half>();
}

// With at least as many rows as SMs, a warp per row fills the GPU as well as anything.
extern "C" bool fast_takes_split(size_t rows, logit_dtype dtype)
{
    return rows < (size_t)sm_count() && split_available_for(dtype);
}

static int fast_topk_with(bool split, const void *x, logit_dtype dtype, size_t rows, size_t cols, int k,
                          int *indices, float *probs)
{
    if (dtype == DTYPE_F32)
        launch_fast<float>(split, x, rows, cols, k, indices, probs);
    else if (dtype == DTYPE_BF16)
        launch_fast<__nv_bfloat16>(split, x, rows, cols, k, indices, probs);
    else
        launch_fast<__half>(split, x, rows, cols, k, indices, probs);
    return 1;
}

static int fast_row_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                         float *probs, void *workspace)
{
    (void)workspace;
    return fast_topk_with(false, x, dtype, rows, cols, k, indices, probs);
}

static int fast_split_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                           float *probs, void *workspace)
{
    (void)workspace;
    return fast_topk_with(true, x, dtype, rows, cols, k, indices, probs);
}

static int fast_auto_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                          float *probs, void *workspace)
{
    (void)workspace;
    return fast_topk_with(fast_takes_split(rows, dtype), x, dtype, rows, cols, k, indices, probs);
}

// A grid of rows x 16 blocks that fits gridDim.x.
static bool fast_split_fits(size_t rows, size_t cols)
{
    (void)cols;
    return rows <= INT32_MAX / SPLIT_MAX_BLOCKS;
}

// A GPU with clusters, and the kernel built for one (the three dtypes' kernels are built alike).
static bool fast_split_runs_here(void) { return split_available<float>(); }

// The logits once, K pairs out (the split's candidates and statistics stay in shared memory).
static double fast_bytes_per_row(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)rows;
    return (double)cols * dtype_size(dtype) + 8.0 * k;
}

extern "C" const topk_variant unfused_topk_variant = {"unfused",   unfused_bytes_per_row, unfused_workspace_bytes,
                                                     unfused_topk, TOPK_ANY_K, true, unfused_fits, NULL};
extern "C" const topk_variant fused_topk_variant = {"fused", fused_bytes_per_row, NULL, fused_topk, FUSED_MAX_K, false,
                                                   NULL, NULL};
extern "C" const topk_variant fast_row_topk_variant = {"fast_row", fast_bytes_per_row, NULL, fast_row_topk, FAST_MAX_K,
                                                      true, NULL, NULL};
extern "C" const topk_variant fast_split_topk_variant = {"fast_split", fast_bytes_per_row, NULL, fast_split_topk,
                                                        FAST_MAX_K, true, fast_split_fits, fast_split_runs_here};
extern "C" const topk_variant fast_topk_variant = {"fast", fast_bytes_per_row, NULL, fast_auto_topk, FAST_MAX_K, true,
                                                  NULL, NULL};
