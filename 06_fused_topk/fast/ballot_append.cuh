// fast/ballot_append.cuh — a warp offers its logits to the candidate buffer, a chunk at a time.
//
// What it does: each lane tests its logits against the warp's threshold and makes a mask of those
// above it. A chunk in which no lane has any (the usual case once the threshold has risen) costs
// one vote, which the caller takes on the chunk's largest logit before it offers (warp_row.cuh).
// Otherwise every lane learns from a few ballots where its own candidates go, with no
// atomic add and no read of shared memory, and stores them (warp_append); when the new ones reach
// the merge mark, the warp merges them (warp_keep_best in candidates.cuh).
// Invariant: the warp offers a row in index order and merges only between offers, so a logit equal
// to the threshold comes after every logit that set it and ranks after it: "x > threshold" is
// exactly the test for "might be in the top K".
// Assumes: candidates.cuh and logits16.cuh; all 32 lanes call these together.
// Read next: first_threshold.cuh, where the first threshold comes from.
#ifndef FAST_BALLOT_APPEND_CUH
#define FAST_BALLOT_APPEND_CUH

#include "candidates.cuh"
#include "logits16.cuh"

// The most logits a lane appends at once: 16 as floats (16-bit ones widened first), which stay
// live across the ballots and take registers; or 32 still packed two to a word, where the compare
// is packed (logits16<T>::compares_packed), widened only as each candidate is stored: all
// FAST_UNROLL = 4 16-byte vectors of a chunk (warp_row.cuh), a mask bit each.
#define OFFER_AT_ONCE 16
#define OFFER_PACKED_AT_ONCE 32

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

// Element e of a[0..E), E a power of two, held in registers: a tree of E - 1 choices on e's bits,
// top bit first, which nvcc makes selects or branches (an array indexed by a number known only at
// run time would live in local memory).
template <int E>
__device__ __forceinline__ unsigned element_at(const unsigned *a, int e)
{
    static_assert(E > 0 && (E & (E - 1)) == 0, "a power of two");
    if constexpr (E == 1)
        return a[0];
    else
        return (e & (E / 2)) ? element_at<E / 2>(a + E / 2, e) : element_at<E / 2>(a, e);
}

// The candidate of mask bit `bit` as a key, its index first + 32 N u + j for logit j of vector u:
// from U x N floats, bit N u + j (above_in_order); or widened from U packed vectors, whose 32-bit
// words are numbered 4u + i, bit 4u + i their low logit (logit 2i of vector u) and bit 16 + 4u + i
// the high one (logit 2i + 1; logits16<T>::above). The words are copied into an array that, once
// unrolled, only constants index, so it stays in registers. T: for the packed overload's widening
// (both overloads share one call).
template <typename T, int U, int N>
__device__ __forceinline__ rank_key candidate_key(const float (&v)[U][N], int bit, int first)
{
    unsigned words[U * N];
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
        for (int j = 0; j < N; j++)
            words[N * u + j] = __float_as_uint(v[u][j]);
    const int u = bit / N, j = bit % N;
    return make_key(__uint_as_float(element_at<U * N>(words, bit)), first + u * WARP_SIZE * N + j);
}
template <typename T, int U, int N>
__device__ __forceinline__ rank_key candidate_key(const uint4 (&raw)[U], int bit, int first)
{
    unsigned words[4 * U];
#pragma unroll
    for (int u = 0; u < U; u++)
        words[4 * u] = raw[u].x, words[4 * u + 1] = raw[u].y, words[4 * u + 2] = raw[u].z, words[4 * u + 3] = raw[u].w;
    const int word = bit % 16, high = bit / 16, u = word / 4, j = 2 * (word % 4) + high;
    return make_key(logits16<T>::of_word(element_at<4 * U>(words, word), high), first + u * WARP_SIZE * N + j);
}

// Appends the logits whose bits are set in `above` to the new candidates (logit j of vector u at
// index first + 32 N u + j; which bit is which logit: candidate_key), if they fit in the buffer;
// returns whether they did. Each lane counts its own; one ballot a bit of those counts gives every
// lane the sum over the lanes before it (where its own go) and the warp's total (its new fill),
// with no atomic add and no read of shared memory. Usually no lane has more than one, and one
// ballot does. Then each lane stores its own, one a step: the warp takes as many steps as its lane
// with the most, however many logits a lane offers.
template <typename T, int U, int N, typename Logits, bool Selects>
__device__ __forceinline__ bool warp_append(warp_candidates<Selects> &w, const Logits &v, unsigned above, int first)
{
    static_assert(U * N <= OFFER_PACKED_AT_ONCE, "a mask bit a logit");
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
    // The lane's own, lowest bit first (left &= left - 1 clears that bit). Their order in the buffer
    // does not matter: new candidates are sorted, or selected, by their keys before anything reads
    // them in order.
    int slot = w.fill + before;
    for (unsigned left = above; left != 0; left &= left - 1)
        w.buf[slot++] = candidate_key<T, U, N>(v, __ffs(left) - 1, first);
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
    warp_append<float, 1, N>(w, v, above, first); // fits, as above
    if (w.fill >= w.flush_at)
        warp_keep_best(w);
}

// A chunk of U vectors a lane, as loaded, offered as many logits a lane at a time as the limits
// above let (all four float32 vectors, two bf16 ones, all four fp16 ones): one count, one set of
// ballots and one merge test for each. Only when they do not fit (no threshold yet, or a
// near-full buffer and many candidates) do they go a vector at a time, with merges between.
template <typename T, int U, bool Selects>
__device__ __forceinline__ void warp_offer_chunk(warp_candidates<Selects> &w, const uint4 (&raw)[U], int first)
{
    typedef logits16<T> vec;
    constexpr int N = vec::count, at_once = vec::compares_packed ? OFFER_PACKED_AT_ONCE : OFFER_AT_ONCE;
    constexpr int G = at_once / N < U ? at_once / N : U; // vectors offered at once
#pragma unroll
    for (int g = 0; g < U; g += G) {
        uint4 part[G];
#pragma unroll
        for (int u = 0; u < G; u++)
            part[u] = raw[g + u];
        const int at = first + g * WARP_SIZE * N;
        bool fit;
        if constexpr (vec::compares_packed) {
            fit = warp_append<T, G, N>(w, part, vec::template above<G>(part, w.threshold), at);
        } else {
            float f[G][N];
#pragma unroll
            for (int u = 0; u < G; u++)
                vec::unpack(part[u], f[u]);
            fit = warp_append<T, G, N>(w, f, above_in_order(f, w.threshold), at);
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
