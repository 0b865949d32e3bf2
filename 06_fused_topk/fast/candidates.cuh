// fast/candidates.cuh — a warp's candidate buffer in shared memory, and the threshold it sets.
//
// What it does: a warp keeps the best K candidates it has seen (K rounded up to a power of two,
// `kept`) sorted at the front of its buffer, and appends new ones behind them. When enough new ones
// have piled up it sorts only those and merges the two sorted lists (warp_keep_best); the K-th
// best is then the warp's threshold: a later logit is a candidate only if it is above it.
//
//   buf: [ kept, sorted, best first | new candidates, unsorted ...      | free ]
//          0                   kept                              fill     capacity
//
// The merge: with A the kept list and B the new ones, both sorted descending, max(A[i], B[kept-1-i])
// over i is the best `kept` of both, in an order that falls then rises (a bitonic sequence), which
// one stage of compare-exchange layers (warp_sort.cuh) puts in order: log2(kept) layers, or 6 over
// 64 keys where the merge runs in registers.
//
// Invariants: buf[0..kept) is sorted, descending; fill is the same in every lane; fill never passes
// capacity; the threshold only rises. It starts as NaN ("x <= NaN" is false for every x, so every
// logit passes) until the sample (sample.cuh) or the first merge sets it.
// Assumes: warp_sort.cuh; all 32 lanes call these together.
// Read next: offer.cuh, how a chunk of logits is tested against the threshold and appended.
#ifndef FAST_CANDIDATES_CUH
#define FAST_CANDIDATES_CUH

#include "warp_sort.cuh"

// The warp keeps its best `kept` candidates (K rounded up to a power of two) sorted at the front of
// its buffer and appends new ones after them. Once enough new ones have piled up, it sorts only
// those and merges the two lists (warp_keep_best). Sooner means more, smaller sorts; later, a
// threshold that lags, so more logits pass it and more chunks stop to append.
static __host__ __device__ int warp_kept(int k)
{
    int kept = 1;
    while (kept < k)
        kept *= 2;
    return kept;
}

// How many new candidates pile up before the warp merges them: kept/2, but at least 32 and at most
// 112, or 96 past K = 256. With the offer that crosses the mark, that is nearly always at most 128
// new ones, the batch that sorts in registers. Past K = 256 a chunk brings more candidates at once,
// and the lower cap keeps the crossing offer within those 128 more often. The two caps may be set
// from the command line, e.g. make NVCC_EXTRA="-DMERGE_AFTER_AT_MOST=512" (README.md, Exercise).
#define MERGE_AFTER_AT_LEAST 32
#ifndef MERGE_AFTER_AT_MOST
#define MERGE_AFTER_AT_MOST 112
#endif
#ifndef MERGE_AFTER_AT_MOST_PAST_256
#define MERGE_AFTER_AT_MOST_PAST_256 96
#endif
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

// Two sorted lists of 64 keys held two a lane (key r of a lane at position lane + 32r), both
// descending: max(A[i], B[63 - i]) over i is the best 64 of both, in an order that falls then rises,
// and one bitonic stage sorts it. A becomes that best 64; nothing goes through shared memory.
__device__ __forceinline__ void warp_merge_sorted_in_registers(rank_key (&a)[2], const rank_key (&b)[2])
{
    const int lane = threadIdx.x % WARP_SIZE;
    rank_key best[2]; // B[63 - i], i = lane + 32r, is B's key in register 1 - r of lane 31 - lane
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const rank_key facing = __shfl_sync(FULL_MASK, b[1 - r], WARP_SIZE - 1 - lane);
        best[r] = a[r] > facing ? a[r] : facing;
    }
    warp_bitonic_stage_in_registers(best, 2 * WARP_SIZE);
    a[0] = best[0], a[1] = best[1];
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
    rank_key best[2];
#pragma unroll
    for (int r = 0; r < 2; r++)
        best[r] = lane + r * WARP_SIZE < kept ? buf[lane + r * WARP_SIZE] : 0;
    const rank_key fresh_best[2] = {e[0], e[1]};
    warp_merge_sorted_in_registers(best, fresh_best);
#pragma unroll
    for (int r = 0; r < 2; r++)
        if (lane + r * WARP_SIZE < kept)
            buf[lane + r * WARP_SIZE] = best[r];
    const rank_key kth = __shfl_sync(FULL_MASK, k <= WARP_SIZE ? best[0] : best[1], (k - 1) % WARP_SIZE);
    __syncwarp(); // the lanes have read the new ones before the next appends overwrite them
    return kth != 0 ? key_logit(kth) : threshold;
}

// Sorts the new candidates, merges them into the kept list (the merge above), and returns the new
// threshold (the K-th).
// One copy of it (__noinline__), called from every place that offers candidates: inlined at each,
// it would multiply the kernel's code past what the instruction cache holds. Its arguments go by
// value: a reference to the warp_candidates would put them in local memory, and the loop over the
// logits would then read the threshold from there.
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

#endif
