// fast/first_threshold.cuh — the warp's first threshold, from a sample spread over the row.
//
// What it does: before the warp has merged anything its threshold is NaN, and every logit would be
// a candidate. Instead the warp first loads a sample (8 vectors a lane from the middles of 8 equal
// parts of the row; 16 or 4 for some large K, below), sorts the lanes' largest sampled logits with
// the network of warp_sort.cuh, and takes a threshold from them: for K <= 32 the K-th largest of the
// 32 lanes' largest, which at least K logits reach (they are K different logits); for larger K a
// guess of lower rank, which nearly always lets K logits through and far fewer others (the caller
// checks that K did, and ranks the row again if not).
// Assumes: candidates.cuh (the threshold lives in warp_candidates), logits16.cuh, and the sample's
// layout constants of fast.h (the tests build rows that fool the guess from them).
// Read next: warp_row.cuh, a warp's whole pass over one row.
#ifndef FAST_FIRST_THRESHOLD_CUH
#define FAST_FIRST_THRESHOLD_CUH

#include "candidates.cuh"
#include "fast.h"
#include "logits16.cuh"

// Before a warp has merged anything, its threshold is NaN and every logit is a candidate. A sample
// of the row gives a better start: each lane's R largest sampled logits (R = 1 for a certain
// threshold, 2 for a guess) are distinct elements, so at least `rank` logits of the row are >= the
// rank-th largest of the 32 R. The lanes sort their 32 R keys (the same network as the new
// candidates), and the threshold becomes the float just below the rank-th, so that
// "x > threshold" keeps x >= it.
template <int R, bool Selects>
__device__ __forceinline__ void warp_threshold_from_lanes(warp_candidates<Selects> &w, const float (&best)[R], int rank)
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
// of them would say too little about the rest. For K <= 32 the K-th largest of the 32 lanes'
// largest sampled logits is a certain threshold: at least K logits reach it. For K > 32 the warp
// may guess instead (`guess`): a row's top K are spread over the row, so the sample of n of its V
// logits holds about lambda = K n / V of them, and the guess is the rank-th largest of the lanes'
// two largest sampled logits (at most the sample's rank-th largest), with
// rank = lambda + 4 sqrt(lambda) + 4: four standard deviations of a Poisson count above its mean
// (the + 4 for small lambda, where that tail is longer than the normal's). Why it works: while the
// sample holds fewer than `rank` of the row's top K, its rank-th largest is not one of them, so it
// lies at or below the row's K-th largest, and all K reach the guess, which is at most it. The
// sample holds `rank` of them less often than once in 10 000 rows in random order: their number in
// the sample is close to Poisson(lambda), whose chance of reaching rank is at most 2.4e-5 for
// lambda up to 200 (summed term by term; beyond, it tends to the normal's 3.2e-5 past 4 sigma).
// So at least K logits of the row nearly always reach the guess; the kernel checks that they did.
// At K = 50 and V = 50257 (float32) the guess is the 10th of the sample, which some 500 logits of
// the row reach, against some 2 500 for the sample's 50th.
__device__ __forceinline__ int sample_rank(int k, size_t cols, int sampled, bool guess)
{
    const float lambda = (float)k * (float)sampled / (float)cols;
    const int rank = (int)ceilf(lambda + 4.0f * sqrtf(lambda) + 4.0f);
    return guess && rank < k ? rank : k;
}

// Sample vectors first .. first + G - 1 of `vectors` a lane, loaded together.
template <typename T, int G>
__device__ __forceinline__ void load_sample(uint4 (&raw)[G], const row_parts<T> &p, unsigned warp_rows, int first,
                                            int vectors)
{
    const int lane = threadIdx.x % WARP_SIZE;
#pragma unroll
    for (int i = 0; i < G; i++)
        raw[i] = __ldcg(p.body + FAST_SAMPLED_WARP_ROW(first + i, vectors, warp_rows) * WARP_SIZE + lane);
}

// The two largest logits of a lane's `vectors` sampled vectors into best, G loads in flight at a time.
template <typename T, int G>
__device__ __forceinline__ void largest_two_sampled(const row_parts<T> &p, unsigned warp_rows, int vectors,
                                                    float (&best)[2])
{
    for (int first = 0; first < vectors; first += G) {
        uint4 raw[G];
        load_sample(raw, p, warp_rows, first, vectors);
        largest_two<T, G>(raw, best);
    }
}

// Sets the warp's first threshold from the sample. Not for a row of fewer than
// FAST_SAMPLE_VECTORS x 32 vectors (the sample's vectors would not be distinct), nor where the rank
// is past the keys that the lanes hold: 64 for a guess, 32 for a certain threshold (the lanes'
// maxima alone, which keeps the kernel for K <= 32 small). A guess ranks the lanes' two largest
// even when its rank is 32 or less: where a lane holds two of the sample's largest, its maximum
// alone would put the rank-th lower.
// For K >= FAST_WIDE_SAMPLE_K a guess samples FAST_WIDE_SAMPLE_LOGITS logits, 16 float32 vectors
// a lane (16-bit logits have that many in 8), where the rank stays within the 64 keys: the guess
// is then closer to the K-th, and fewer logits pass it. The second 8 vectors cost one more DRAM
// round trip at the row's start, which smaller K do not win back. Where even the 8 vectors' rank
// would pass the 64 keys (a large K in a short row: 16-bit logits at K = 1024 and V = 50257, rank
// 72), the guess takes half of them, FAST_NARROW_SAMPLE_VECTORS, whose rank is lower (44 there):
// without it such a warp starts with no threshold, and every logit is a candidate until K have
// come. Only the warps that select (K > SELECT_ABOVE_K, candidates.cuh) take it: the code it adds
// to every other kernel cost fp16's kernel for K > 32 registers and time at K = 50.
// The sampled vectors are read again when the warp offers them. Loaded with L2's normal eviction
// priority, not the evict-first of the scan's loads, they are still in L2 then, and DRAM reads
// them once.
template <typename T, bool Selects>
__device__ __forceinline__ void warp_sample_threshold(warp_candidates<Selects> &w, const row_parts<T> &p, size_t cols,
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
    if (Selects && guess && rank > 2 * WARP_SIZE) {
        vectors = FAST_NARROW_SAMPLE_VECTORS;
        rank = sample_rank(w.k, cols, vectors * WARP_SIZE * vec::count, true);
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
        if (Selects && vectors == FAST_NARROW_SAMPLE_VECTORS)
            largest_two_sampled<T, FAST_NARROW_SAMPLE_VECTORS>(p, warp_rows, vectors, best);
        else
            largest_two_sampled<T, FAST_SAMPLE_VECTORS>(p, warp_rows, vectors, best);
        warp_threshold_from_lanes(w, best, rank);
    }
}

#endif
