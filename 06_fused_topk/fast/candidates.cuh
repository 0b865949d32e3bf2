// fast/candidates.cuh — a warp's candidate buffer in shared memory, and the threshold it sets.
//
//   buf: [ kept: best first | new ones, unsorted | free ]
//          0            kept                fill   capacity
//
// New ones are appended until fill reaches flush_at; then they are sorted and merged into the
// kept list. Invariants: buf[0..kept) is sorted, descending; after a merge buf[K-1] is the K-th best, and
// the threshold is its logit; fill is equal in every lane and never passes capacity; the
// threshold only rises. Past SELECT_ABOVE_K nothing is sorted until the end (select.cuh).
// Read next: ballot_append.cuh.
#ifndef FAST_CANDIDATES_CUH
#define FAST_CANDIDATES_CUH

#include "select.cuh"
#include "warp_sort.cuh"

// kept: K rounded up to a power of two.
static __host__ __device__ int warp_kept(int k)
{
    int kept = 1;
    while (kept < k)
        kept *= 2;
    return kept;
}

// The new ones that pile up before a merge: kept/2, at least 32, at most `at_most` (never past
// MERGE_AFTER_AT_MOST), or MERGE_AFTER_AT_MOST_PAST_256 past K = 256. Both caps may be set with
// NVCC_EXTRA="-D...".
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
    while (most < warp_merge_after(warp_kept(k)) + WARP_SIZE * per_lane) // the crossing offer fits
        most *= 2;
    return most;
}

// Past K = SELECT_ABOVE_K the warp selects, once SELECT_AFTER candidates pile up beyond K.
#ifndef SELECT_ABOVE_K
#define SELECT_ABOVE_K 512
#endif
#ifndef SELECT_AFTER
#define SELECT_AFTER 512
#endif
#define SELECT_HISTOGRAM_KEYS (DIGIT_BINS * (int)sizeof(unsigned) / (int)sizeof(rank_key))

static __host__ __device__ bool warp_selects(int k) { return k > SELECT_ABOVE_K; }

// A warp's shared memory, in keys, for `per_lane` logits a vector: the kept list and room for the
// new ones; where the warp selects, room for K, SELECT_AFTER and one offer, then the histogram.
// Never less than the sorted buffer, which warp_rank_row_again uses.
static __host__ __device__ int warp_capacity(int k, int per_lane, bool selects)
{
    const int sorted = warp_kept(k) + warp_new_at_most(k, per_lane);
    if (!selects)
        return sorted;
    const int room = k + SELECT_AFTER + WARP_SIZE * per_lane;
    const int selected = (room > warp_kept(k) ? room : warp_kept(k)) + SELECT_HISTOGRAM_KEYS;
    return selected > sorted ? selected : sorted;
}

// Selects: all candidates unsorted, the best K chosen by a select.
template <bool Selects>
struct warp_candidates {
    rank_key *buf;   // the buffer drawn above
    int fill;        // keys in buf, equal in every lane
    int k, kept, flush_at, capacity; // capacity: slots, kept included
    float threshold; // NaN lets every logit pass
};

// The kept list starts as empty keys; where the warp selects, the histogram starts at zero.
template <bool Selects>
__device__ __forceinline__ warp_candidates<Selects> warp_candidates_init(rank_key *buf, int k, int capacity,
                                                                          int merge_at_most = MERGE_AFTER_AT_MOST)
{
    const int lane = threadIdx.x % WARP_SIZE;
    warp_candidates<Selects> w;
    w.buf = buf, w.k = k, w.kept = warp_kept(k);
    w.threshold = __int_as_float(0x7FFFFFFF); // NaN: every logit passes
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

// A and B: 64 keys each, descending, two a lane. max(A[i], B[63 - i]) is the best 64 of both, as
// a bitonic sequence; one bitonic stage sorts it into A.
__device__ __forceinline__ void warp_merge_sorted_in_registers(rank_key (&a)[2], const rank_key (&b)[2])
{
    const int lane = threadIdx.x % WARP_SIZE;
    rank_key best[2]; // B[63 - i] faces A[i]
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const rank_key facing = __shfl_sync(FULL_MASK, b[1 - r], WARP_SIZE - 1 - lane);
        best[r] = a[r] > facing ? a[r] : facing;
    }
    warp_bitonic_layers_in_registers(best, WARP_SIZE, 2 * WARP_SIZE, 0);
    a[0] = best[0], a[1] = best[1];
}

// K <= 64 and at most R x 32 new ones: the new ones sorted in registers, and their best 64
// merged into the kept list, padded to 64 by empty keys.
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
    __syncwarp(); // the new ones are read before later appends
    return kth != 0 ? key_logit(kth) : threshold;
}

// Sorts the new ones, merges them into the kept list and returns the new threshold. Not inlined;
// its arguments go by value.
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
    int n = 2 * WARP_SIZE; // the buffer has room for 64
    while (n < fresh)
        n *= 2;
    for (int i = fresh + lane; i < n; i += WARP_SIZE)
        b[i] = 0; // empties sort last
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

// Where the warp selects: keeps the best K of buf[0..fill) and returns the K-th's logit.
__device__ __noinline__ float warp_select_fresh(rank_key *buf, int fill, int k, int capacity)
{
    return key_logit(warp_select_best(buf, fill, k, (unsigned *)(buf + capacity)));
}

// Leaves the best K in buf[0..K) and the threshold at the K-th's logit.
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

// Sorts the `fill` selected keys, empty keys behind them.
__device__ __noinline__ void warp_sort_selected(rank_key *buf, int fill, int kept)
{
    for (int i = fill + threadIdx.x % WARP_SIZE; i < kept; i += WARP_SIZE)
        buf[i] = 0;
    __syncwarp();
    warp_sort_by_runs(buf, kept);
}

// At the end: the best K sorted into buf[0..K), empty keys behind them.
template <bool Selects>
__device__ __forceinline__ void warp_sort_best(warp_candidates<Selects> &w)
{
    warp_keep_best(w);
    if constexpr (Selects)
        warp_sort_selected(w.buf, w.fill, w.kept);
}

#endif
