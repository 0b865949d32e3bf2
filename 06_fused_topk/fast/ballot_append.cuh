// fast/ballot_append.cuh — a chunk's logits tested against the threshold, and the survivors
// appended at slots that ballots give each lane.
// Invariant: a row is offered in index order and merged only between offers, so "x > threshold"
// is exactly the test for "might be in the top K".
// Read next: first_threshold.cuh.
#ifndef FAST_BALLOT_APPEND_CUH
#define FAST_BALLOT_APPEND_CUH

#include "candidates.cuh"
#include "logits16.cuh"

// The most logits a lane appends at once: as floats, or packed two a word.
#define OFFER_AT_ONCE 16
#define OFFER_PACKED_AT_ONCE 32

// Bits that hold a count up to m.
static __host__ __device__ constexpr int bits_to_count(int m) { return m < 2 ? 1 : 1 + bits_to_count(m / 2); }

// Bit N u + j is set where logit j of vector u is above the threshold.
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

// a[e] by a tree of choices on e's bits, so that a[] stays in registers.
template <int E>
__device__ __forceinline__ unsigned element_at(const unsigned *a, int e)
{
    static_assert(E > 0 && (E & (E - 1)) == 0, "a power of two");
    if constexpr (E == 1)
        return a[0];
    else
        return (e & (E / 2)) ? element_at<E / 2>(a + E / 2, e) : element_at<E / 2>(a, e);
}

// The key of mask bit `bit`: logit j of vector u has index first + 32 N u + j. The first form
// reads floats, the second widens packed logits (bits as logits16<T>::above).
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

// Appends the logits set in `above`, if they fit; returns whether they did. One ballot a bit of
// the lanes' counts gives each lane the count of the lanes before it (its first slot) and the
// warp's total.
template <typename T, int U, int N, typename Logits, bool Selects>
__device__ __forceinline__ bool warp_append(warp_candidates<Selects> &w, const Logits &v, unsigned above, int first)
{
    static_assert(U * N <= OFFER_PACKED_AT_ONCE, "a mask bit a logit");
    if (!__any_sync(FULL_MASK, above != 0))
        return true; // no lane has a candidate
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
    // The lane's own, lowest bit first; their order does not matter.
    int slot = w.fill + before;
    for (unsigned left = above; left != 0; left &= left - 1)
        w.buf[slot++] = candidate_key<T, U, N>(v, __ffs(left) - 1, first);
    w.fill += total;
    return true;
}

// Each lane offers one vector, indices from first (none if !have), then merges past the mark. One
// vector always fits: the buffer has room for 32 N past the mark.
template <int N, bool Selects>
__device__ __forceinline__ void warp_offer(warp_candidates<Selects> &w, const float (&v)[1][N], int first, bool have)
{
    unsigned above = above_in_order(v, w.threshold);
    if (!have) // a lane past the row's end offers nothing
        above = 0;
    warp_append<float, 1, N>(w, v, above, first); // one vector always fits
    if (w.fill >= w.flush_at)
        warp_keep_best(w);
}

// A chunk of U vectors a lane, offered G vectors at once; where they do not fit, a vector at a
// time with merges between.
template <typename T, int U, bool Selects>
__device__ __forceinline__ void warp_offer_chunk(warp_candidates<Selects> &w, const uint4 (&raw)[U], int first)
{
    typedef logits16<T> vec;
    constexpr int N = vec::count, at_once = vec::compares_packed ? OFFER_PACKED_AT_ONCE : OFFER_AT_ONCE;
    constexpr int G = at_once / N < U ? at_once / N : U; // vectors at once
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
