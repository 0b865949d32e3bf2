// fast/first_threshold.cuh — the warp's first threshold, from a sample spread over the row:
// certain for K <= 32, a guess past it that the caller checks after the row. The sample's loads
// keep L2's normal priority, so the scan finds those vectors in L2 again.
// Read next: warp_row.cuh.
#ifndef FAST_FIRST_THRESHOLD_CUH
#define FAST_FIRST_THRESHOLD_CUH

#include "candidates.cuh"
#include "fast.h"
#include "logits16.cuh"

// The lanes' R largest sampled logits are 32 R distinct logits, so at least `rank` logits reach
// the rank-th of them. The threshold becomes the float just below it, so "x > threshold" keeps it.
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
    if (kth > -INFINITY) // a K-th of -inf sets no threshold
        w.threshold = nextafterf(kth, -INFINITY);
}

// Folds G vectors into a lane's two largest, best[0] >= best[1].
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

// The rank to take from a sample of n logits: K, or for a guess lambda + 4 sqrt(lambda) + 4, with
// lambda = K n / V the top-K logits the sample holds on average. The caller checks that K logits
// reached a guess.
__device__ __forceinline__ int sample_rank(int k, size_t cols, int sampled, bool guess)
{
    const float lambda = (float)k * (float)sampled / (float)cols;
    const int rank = (int)ceilf(lambda + 4.0f * sqrtf(lambda) + 4.0f);
    return guess && rank < k ? rank : k;
}

// Loads sample vectors first .. first + G - 1 together.
template <typename T, int G>
__device__ __forceinline__ void load_sample(uint4 (&raw)[G], const row_parts<T> &p, unsigned warp_rows, int first,
                                            int vectors)
{
    const int lane = threadIdx.x % WARP_SIZE;
#pragma unroll
    for (int i = 0; i < G; i++)
        raw[i] = __ldcg(p.body + FAST_SAMPLED_WARP_ROW(first + i, vectors, warp_rows) * WARP_SIZE + lane);
}

// A lane's two largest sampled logits, G loads at a time.
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

// Sets the first threshold from the sample (fast.h's layout). Skipped for a row shorter than the
// sample, or where the rank passes the keys the lanes hold: 32, or 64 for a guess. A wide sample
// serves K >= FAST_WIDE_SAMPLE_K, a narrow one a selecting warp whose rank would pass 64.
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
