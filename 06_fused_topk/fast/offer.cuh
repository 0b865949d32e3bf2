// fast/offer.cuh — a warp offers its logits to the candidate buffer, a chunk at a time.
//
// What it does: each lane tests its logits against the warp's threshold and makes a mask of those
// above it; if no lane has any (the usual case once the threshold has risen), the chunk costs that
// one vote. Otherwise every lane learns from a few ballots where its own candidates go, with no
// atomic add and no read of shared memory, and stores them (warp_append); when the new ones reach
// the merge mark, the warp merges them (warp_keep_best in candidates.cuh).
// Invariant: the warp offers a row in index order and merges only between offers, so a logit equal
// to the threshold comes after every logit that set it and ranks after it: "x > threshold" is
// exactly the test for "might be in the top K".
// Assumes: candidates.cuh and logits16.cuh; all 32 lanes call these together.
// Read next: sample.cuh, where the first threshold comes from.
#ifndef FAST_OFFER_CUH
#define FAST_OFFER_CUH

#include "candidates.cuh"
#include "logits16.cuh"

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
template <typename T, bool Packed, int U, int N, typename Logits, bool Selects>
__device__ __forceinline__ bool warp_append(warp_candidates<Selects> &w, const Logits &v, unsigned above, int first)
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
template <int N, bool Selects>
__device__ __forceinline__ void warp_offer(warp_candidates<Selects> &w, const float (&v)[1][N], int first, bool have)
{
    unsigned above = above_in_order(v, w.threshold);
    if (!have) // a lane past the row's end offers nothing
        above = 0;
    warp_append<float, false, 1, N>(w, v, above, first); // fits, as above
    if (w.fill >= w.flush_at)
        warp_keep_best(w);
}

// A chunk of U vectors a lane, as loaded, offered OFFER_AT_ONCE logits a lane at a time (all four
// float32 vectors, two 16-bit ones; the logits held across the ballots take registers): one count,
// one set of ballots and one merge test for each. Only when they do not fit (no threshold yet, or a
// near-full buffer and many candidates) do they go a vector at a time, with merges between.
template <typename T, int U, bool Selects>
__device__ __forceinline__ void warp_offer_chunk(warp_candidates<Selects> &w, const uint4 (&raw)[U], int first)
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

#endif
