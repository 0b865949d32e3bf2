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
// Past K = SELECT_ABOVE_K those layers over the whole kept list would cost more than anything else
// the warp does, so there (fast_row's kernel for large K, warp_candidates<true>) the buffer is not
// kept sorted: the candidates pile up unsorted, and when SELECT_AFTER more than K have (the merge
// mark, flush_at), the warp keeps the best K by a radix select (select.cuh); it sorts them once, at
// the end (warp_sort_best, by runs of 128 in registers). The select's histogram lives behind the
// buffer:
//
//   buf: [ candidates, unsorted ...              | free ]  [ histogram ]
//          0                               fill     capacity
//
// Invariants: where the warp keeps them sorted, buf[0..kept) is sorted, descending; after every
// merge or select buf[K-1] is the K-th best; fill is the same in every lane; fill never passes
// capacity; the threshold only rises. It starts as NaN ("x <= NaN" is false for every x, so every
// logit passes) until the sample (first_threshold.cuh) or the first merge sets it.
// Assumes: warp_sort.cuh and select.cuh; all 32 lanes call these together.
// Read next: lane_counts.cuh and select.cuh, the select; then ballot_append.cuh, how a chunk of
// logits is tested against the threshold and appended.
#ifndef FAST_CANDIDATES_CUH
#define FAST_CANDIDATES_CUH

#include "select.cuh"
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
// `at_most` (MERGE_AFTER_AT_MOST, 112, for a warp's row; fast_chunks.cuh passes a smaller cap for
// the chunks of a short cut), or MERGE_AFTER_AT_MOST_PAST_256, 96, past K = 256. With the offer that
// crosses the mark, that is nearly always at most 128 new ones, the batch that sorts in registers.
// Past K = 256 a chunk brings more candidates at once, and the lower cap keeps the crossing offer
// within those 128 more often. `at_most` may not pass MERGE_AFTER_AT_MOST: warp_capacity makes
// room for that cap's merges. The two caps may be set from the command line, e.g.
// make NVCC_EXTRA="-DMERGE_AFTER_AT_MOST=512" (README.md, Exercise).
#define MERGE_AFTER_AT_LEAST 32
#ifndef MERGE_AFTER_AT_MOST
#define MERGE_AFTER_AT_MOST 112
#endif
#ifndef MERGE_AFTER_AT_MOST_PAST_256
#define MERGE_AFTER_AT_MOST_PAST_256 96
#endif
static __host__ __device__ int warp_merge_after(int kept, int at_most = MERGE_AFTER_AT_MOST)
{
    const int half = kept / 2, most = kept > 256 ? MERGE_AFTER_AT_MOST_PAST_256 : at_most;
    return half < MERGE_AFTER_AT_LEAST ? MERGE_AFTER_AT_LEAST : half > most ? most : half;
}

static __host__ __device__ int warp_new_at_most(int k, int per_lane)
{
    int most = 1;
    while (most < warp_merge_after(warp_kept(k)) + WARP_SIZE * per_lane) // the step that crosses it fits
        most *= 2;
    return most;
}

// Past K = SELECT_ABOVE_K, fast_row's warp selects instead of merging (select.cuh), once
// SELECT_AFTER candidates have piled up beyond K. Both may be set from the command line, as the
// merge points above.
#ifndef SELECT_ABOVE_K
#define SELECT_ABOVE_K 512
#endif
#ifndef SELECT_AFTER
#define SELECT_AFTER 512
#endif
#define SELECT_HISTOGRAM_KEYS (DIGIT_BINS * (int)sizeof(unsigned) / (int)sizeof(rank_key))

static __host__ __device__ bool warp_selects(int k) { return k > SELECT_ABOVE_K; }

// A warp's shared memory, in keys, for logits that come `per_lane` to a 16-byte vector
// (logits16<T>::count): the kept list, then room for the new ones (rounded up for their sort); or,
// where the warp selects, room for K, SELECT_AFTER more and the step that crosses that mark (at
// least `kept`, for the sort at the end), then the histogram; and never less than the sorted
// buffer, which a row ranked again (warp_rank_row_again, warp_row.cuh) uses.
static __host__ __device__ int warp_capacity(int k, int per_lane, bool selects)
{
    const int sorted = warp_kept(k) + warp_new_at_most(k, per_lane);
    if (!selects)
        return sorted;
    const int room = k + SELECT_AFTER + WARP_SIZE * per_lane;
    const int selected = (room > warp_kept(k) ? room : warp_kept(k)) + SELECT_HISTOGRAM_KEYS;
    return selected > sorted ? selected : sorted;
}

// Selects: the candidates are kept unsorted, and the best K chosen by a select (select.cuh).
template <bool Selects>
struct warp_candidates {
    rank_key *buf;   // buf[0..kept) sorted, then the new ones; or, where the warp selects, all unsorted
    int fill;        // the keys in buf (the kept slots included), the same in every lane
    int k, kept, flush_at, capacity; // capacity: the candidates' slots, kept ones included
    float threshold; // a logit must be above it to be a candidate; NaN (all pass) until there is one
};

// The kept list starts as `kept` empty slots (key 0 ranks below every real candidate); where the
// warp selects there is no kept list yet, and the histogram starts at zero. `capacity`: the warp's
// shared memory, warp_capacity keys. `merge_at_most`: warp_merge_after's cap, at most
// MERGE_AFTER_AT_MOST, the cap warp_capacity makes room for.
template <bool Selects>
__device__ __forceinline__ warp_candidates<Selects> warp_candidates_init(rank_key *buf, int k, int capacity,
                                                                          int merge_at_most = MERGE_AFTER_AT_MOST)
{
    const int lane = threadIdx.x % WARP_SIZE;
    warp_candidates<Selects> w;
    w.buf = buf, w.k = k, w.kept = warp_kept(k);
    w.threshold = __int_as_float(0x7FFFFFFF); // NaN: "x <= NaN" is false for every x, so all pass
    if constexpr (Selects) {
        w.fill = 0, w.flush_at = k + SELECT_AFTER, w.capacity = capacity - SELECT_HISTOGRAM_KEYS;
        for (int i = lane; i < DIGIT_BINS; i += WARP_SIZE)
            ((unsigned *)(buf + w.capacity))[i] = 0;
    } else {
        w.fill = w.kept, w.flush_at = w.kept + warp_merge_after(w.kept, merge_at_most), w.capacity = capacity;
        for (int i = lane; i < w.kept; i += WARP_SIZE)
            w.buf[i] = 0;
    }
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
    warp_bitonic_layers_in_registers(best, WARP_SIZE, 2 * WARP_SIZE, 0);
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

// Where the warp selects: keeps the best K of buf[0..fill) and returns the new threshold, the K-th's
// logit. A call, for the reasons warp_merge_fresh is one.
__device__ __noinline__ float warp_select_fresh(rank_key *buf, int fill, int k, int capacity)
{
    return key_logit(warp_select_best(buf, fill, k, (unsigned *)(buf + capacity)));
}

// The best K so far into buf[0..K) (sorted, where the warp keeps them sorted), buf[K-1] the K-th,
// the threshold its logit; the new candidates' room is free again.
template <bool Selects>
__device__ __forceinline__ void warp_keep_best(warp_candidates<Selects> &w)
{
    if constexpr (Selects) {
        if (w.fill > w.k)
            w.threshold = warp_select_fresh(w.buf, w.fill, w.k, w.capacity), w.fill = w.k;
    } else {
        w.threshold = warp_merge_fresh(w.buf, w.fill, w.k, w.kept, w.threshold);
        w.fill = w.kept;
    }
}

// Where the warp selects: its `fill` best keys (at most `kept`) sorted, empty keys behind them.
__device__ __noinline__ void warp_sort_selected(rank_key *buf, int fill, int kept)
{
    for (int i = fill + threadIdx.x % WARP_SIZE; i < kept; i += WARP_SIZE)
        buf[i] = 0;
    __syncwarp();
    warp_sort_by_runs(buf, kept);
}

// At the end of the warp's logits: its best K (fewer, if fewer came) sorted into buf[0..K), empty
// keys behind them up to `kept`.
template <bool Selects>
__device__ __forceinline__ void warp_sort_best(warp_candidates<Selects> &w)
{
    warp_keep_best(w);
    if constexpr (Selects)
        warp_sort_selected(w.buf, w.fill, w.kept);
}

#endif
