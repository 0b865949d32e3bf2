// fast/split_slice.cuh — a block's slice of fast_split's row, a tile at a time: its logits that
// reach a bound appended to a list, or counted by digit for a radix select over the cluster.
// Read next: fast_split.cuh.
#ifndef FAST_SPLIT_SLICE_CUH
#define FAST_SPLIT_SLICE_CUH

#include <cooperative_groups.h>

#include "cluster_kth.cuh"
#include "logits16.cuh"
#include "rank_key.cuh"

#define SPLIT_UNROLL 16 // 16-byte loads in flight a thread

// A K-th's ordered bits as a bound. Below -inf's bits lie only NaNs.
__device__ __forceinline__ float bound_of(unsigned kth)
{
    return kth < ordered_bits(-INFINITY) ? -INFINITY : from_ordered_bits(kth);
}

// A thread's tile of vectors i0, i0 + SPLIT_THREADS, ..., loaded at once; past `end`, -inf.
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

// A block's vectors [first, end), plus one edge logit a thread.
template <typename T>
struct slice {
    row_parts<T> p;
    int first, end;
    bool one_tile; // raw keeps the only tile
    bool has_edge;
    int edge; // the edge logit's index
    float edge_logit;
};

// Appends the v[j] that reach the bound. Slots past capacity are counted, not written. Returns
// whether the count passed capacity.
template <int N>
__device__ __forceinline__ bool append_at_least(const float (&v)[N], int first, float bound, rank_key *list,
                                                unsigned *count, unsigned capacity)
{
    unsigned n = 0;
#pragma unroll
    for (int j = 0; j < N; j++)
        n += v[j] >= bound;
    if (n == 0)
        return false;
    unsigned at = atomicAdd(count, n);
#pragma unroll
    for (int j = 0; j < N; j++)
        if (v[j] >= bound) {
            if (at < capacity)
                list[at] = make_key(v[j], first + j);
            at++;
        }
    return at > capacity;
}

// Appends the slice's logits >= bound, until the count passes capacity.
template <typename T, int Chunk>
__device__ void append_slice(uint4 (&raw)[SPLIT_UNROLL], const slice<T> &s, float bound, rank_key *list,
                             unsigned *count, unsigned capacity)
{
    typedef logits16<T> vec;
    bool past = false; // capacity
    if (s.has_edge) {
        const float v[1] = {s.edge_logit};
        past = append_at_least(v, s.edge, bound, list, count, capacity);
    }
    for (int i0 = s.first + (int)threadIdx.x; i0 < s.end; i0 += SPLIT_THREADS * SPLIT_UNROLL) {
        if (!s.one_tile)
            load_tile(raw, s.p, i0, s.end);
#pragma unroll
        for (int g = 0; g < SPLIT_UNROLL; g += Chunk) {
            if (i0 + g * SPLIT_THREADS >= s.end)
                break; // the rest lies past the slice
            if (!(vec::template largest<Chunk>(raw + g) >= bound))
                continue; // none reaches it
#pragma unroll
            for (int u = g; u < g + Chunk; u++) {
                const int i = i0 + u * SPLIT_THREADS;
                if (i < s.end && !past) { // padding skipped
                    float v[vec::count];
                    vec::unpack(raw[u], v);
                    past = append_at_least(v, s.p.head + i * vec::count, bound, list, count, capacity);
                }
            }
        }
    }
}

// Counts one logit's digit at `shift` if it reaches the bound and matches the prefix above.
__device__ __forceinline__ void count_digit_of(float v, bool valid, float bound, unsigned prefix, int shift,
                                               unsigned *counts)
{
    const unsigned bits = ordered_bits(v), decided = shift == 24 ? 0u : ~0u << (shift + 8);
    const bool in = valid && v >= bound && (bits & decided) == prefix;
    const unsigned digit = bits >> shift & (DIGIT_BINS - 1);
    if (__any_sync(FULL_MASK, in))
        warp_count_digit(&counts[skewed(digit)], in, digit);
}

// Counts the slice's logits >= bound by digit. Every thread of the block calls.
template <typename T>
__device__ void count_slice_digits(uint4 (&raw)[SPLIT_UNROLL], const slice<T> &s, float bound, unsigned prefix,
                                   int shift, unsigned *counts)
{
    typedef logits16<T> vec;
    count_digit_of(s.edge_logit, s.has_edge, bound, prefix, shift, counts);
    for (int base = s.first; base < s.end; base += SPLIT_THREADS * SPLIT_UNROLL) { // block-uniform
        const int i0 = base + (int)threadIdx.x;
        if (!s.one_tile)
            load_tile(raw, s.p, i0, s.end);
#pragma unroll
        for (int u = 0; u < SPLIT_UNROLL; u++) {
            float v[vec::count];
            vec::unpack(raw[u], v);
#pragma unroll
            for (int j = 0; j < vec::count; j++)
                count_digit_of(v[j], i0 + u * SPLIT_THREADS < s.end, bound, prefix, shift, counts);
        }
    }
}

// The K-th largest of the cluster's logits >= bound, to 24 bits, equal in every block: three
// rounds, each counting every block's digits and summing them. Needs K such logits.
#if __CUDA_ARCH__ >= 900
template <typename T>
__device__ unsigned slices_kth_largest(uint4 (&raw)[SPLIT_UNROLL], const slice<T> &s, float bound, int k,
                                       unsigned (*counts)[SKEWED_COUNTS], unsigned (*sums)[SKEWED_COUNTS])
{
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    const int lane = threadIdx.x % WARP_SIZE, blocks = (int)cluster.num_blocks();
    for (int i = threadIdx.x; i < KTH_ROUNDS * SKEWED_COUNTS; i += SPLIT_THREADS)
        counts[i / SKEWED_COUNTS][i % SKEWED_COUNTS] = 0;
    __syncthreads();
    unsigned prefix = 0, wanted = k;
    for (int round = 0; round < KTH_ROUNDS; round++) {
        const int shift = 24 - 8 * round;
        count_slice_digits(raw, s, bound, prefix, shift, counts[round]);
        cluster.sync(); // every block's counts are in
        for (int d = threadIdx.x; d < DIGIT_BINS; d += SPLIT_THREADS) {
            unsigned total = 0;
            for (int b = 0; b < blocks; b++)
                total += cluster.map_shared_rank(counts[round], b)[skewed(d)];
            sums[round][skewed(d)] = total;
        }
        __syncthreads();
        const digit_pick pick = warp_pick_digit(&sums[round][skewed(DIGIT_BINS - 1 - DIGITS_A_LANE * lane)], wanted);
        prefix |= pick.digit << shift;
        wanted -= pick.above;
    }
    return prefix;
}
#endif

#endif
