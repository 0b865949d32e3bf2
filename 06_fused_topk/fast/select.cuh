// fast/select.cuh — past K = SELECT_ABOVE_K: the best K of unsorted candidates, by a radix
// select of the K-th key a digit (8 bits) at a time.
// Invariants: after warp_select_best, buf[0..K) holds the K best keys and buf[K-1] the K-th; `hist`
// is all zeros between selects. Keys are distinct, more than K.
// Read next: chunk_merge.cuh.
#ifndef FAST_SELECT_CUH
#define FAST_SELECT_CUH

#include "rank_key.cuh"
#include "lane_counts.cuh"

// Counts digit `shift` of the keys that match `prefix` under `mask`.
__device__ __forceinline__ void warp_histogram(const rank_key *buf, int n, rank_key prefix, rank_key mask, int shift,
                                               unsigned *hist)
{
    const int lane = threadIdx.x % WARP_SIZE;
    for (int i0 = 0; i0 < n; i0 += WARP_SIZE) {
        const int i = i0 + lane;
        const rank_key key = i < n ? buf[i] : 0;
        const bool in = i < n && (key & mask) == prefix;
        const unsigned digit = (unsigned)(key >> shift) & (DIGIT_BINS - 1);
        warp_count_digit(&hist[digit], in, digit);
    }
}

// The rank-th key's digit; each lane then clears the bins it read.
__device__ __forceinline__ digit_pick warp_find_digit(unsigned *hist, unsigned rank)
{
    unsigned *mine = hist + DIGIT_BINS - 1 - DIGITS_A_LANE * (threadIdx.x % WARP_SIZE);
    const digit_pick pick = warp_pick_digit(mine, rank);
#pragma unroll
    for (int i = 0; i < DIGITS_A_LANE; i++)
        mine[-i] = 0;
    __syncwarp(); // every bin is clear
    return pick;
}

// The bits on which the keys differ: where their AND and their OR disagree.
__device__ __forceinline__ rank_key warp_differing_bits(const rank_key *buf, int n)
{
    rank_key all = ~(rank_key)0, any = 0;
    for (int i = threadIdx.x % WARP_SIZE; i < n; i += WARP_SIZE)
        all &= buf[i], any |= buf[i];
#pragma unroll
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
        all &= __shfl_xor_sync(FULL_MASK, all, offset), any |= __shfl_xor_sync(FULL_MASK, any, offset);
    return all ^ any;
}

// Keeps the best k of buf[0..n) (n > k) in buf[0..k), the k-th at buf[k - 1], and returns it.
__device__ __forceinline__ rank_key warp_select_best(rank_key *buf, int n, int k, unsigned *hist)
{
    const int lane = threadIdx.x % WARP_SIZE;
    __syncwarp(); // every lane's appends are in
    const rank_key differ = warp_differing_bits(buf, n);
    rank_key mask = ~differ, prefix = buf[0] & mask; // shared bits are the k-th's
    unsigned rank = (unsigned)k;
    for (int shift = 64 - DIGIT_BITS; shift >= 0; shift -= DIGIT_BITS) {
        if ((differ >> shift & (DIGIT_BINS - 1)) == 0)
            continue; // every key shares this digit
        warp_histogram(buf, n, prefix, mask, shift, hist);
        __syncwarp();
        const digit_pick bin = warp_find_digit(hist, rank);
        prefix |= (rank_key)bin.digit << shift, mask |= (rank_key)(DIGIT_BINS - 1) << shift;
        rank -= bin.above;
        if (bin.in == 1)
            break; // the bin holds the k-th alone
    }
    // Keeps the keys with (key & mask) >= prefix, exactly k, compacted in place by ballots. A
    // round writes only at or before what it read.
    int kept = 0, kth_at = -1;
    rank_key kth = 0;
    for (int i0 = 0; i0 < n; i0 += WARP_SIZE) {
        const int i = i0 + lane;
        const rank_key key = i < n ? buf[i] : 0;
        const bool keep = i < n && (key & mask) >= prefix;
        const unsigned keepers = __ballot_sync(FULL_MASK, keep);
        const int at = kept + __popc(keepers & ((1u << lane) - 1));
        if (keep) {
            buf[at] = key;
            if ((key & mask) == prefix)
                kth_at = at, kth = key;
        }
        kept += __popc(keepers);
    }
    const int holder = __ffs(__ballot_sync(FULL_MASK, kth_at >= 0)) - 1; // the lane holding the k-th
    kth_at = __shfl_sync(FULL_MASK, kth_at, holder);
    kth = __shfl_sync(FULL_MASK, kth, holder);
    __syncwarp(); // compaction ends before the swap
    if (lane == 0)
        buf[kth_at] = buf[k - 1], buf[k - 1] = kth;
    __syncwarp();
    return kth;
}

#endif
