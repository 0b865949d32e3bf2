// fast/lane_counts.cuh — counting across a warp: a running sum over the lanes, and the two steps of
// a radix select's round.
//
// What it does: two radix selects (select.cuh, a warp's over its candidates; cluster_kth.cuh, a
// block's over its group maxima) find a K-th largest key 8 bits, a digit, at a time, and the draw
// (draw.cuh) adds up weights; all three count across the lanes with these:
//   - warp_inclusive_sum: lane i gets v_0 + ... + v_i, in log2(32) = 5 shuffle steps;
//   - warp_count_digit: a digit's counter goes up by the number of lanes that have that digit, in
//     one atomic add by the first of them: __match_any_sync tells each lane which lanes share its
//     digit. The keys of one row are close and share their top digits; 32 lanes adding one each
//     would all queue on the same counter;
//   - warp_pick_digit: of DIGIT_BINS counts in shared memory, lane L answering for those of digits
//     255 - 8L down to 248 - 8L (the caller hands each lane a pointer to the first of its 8), the
//     digit where the count from the top reaches `rank` (the rank-th largest key is among those
//     with that digit), with how many keys have a larger digit and how many that one. Each lane
//     adds up its 8 counts, a running sum over the lanes gives every lane the keys in its digits
//     and above them, and the first lane whose sum reaches `rank` walks its own 8 again.
// Assumes: all 32 lanes call these together; `rank` is at least 1 and at most the counts' total.
// Read next: select.cuh, the warp's radix select.
#ifndef FAST_LANE_COUNTS_CUH
#define FAST_LANE_COUNTS_CUH

#include "../../04_warp/warp_reduce.cuh"

#define DIGIT_BITS 8
#define DIGIT_BINS (1 << DIGIT_BITS)
#define DIGITS_A_LANE (DIGIT_BINS / WARP_SIZE)

// Lane i gets v_0 + ... + v_i of the lanes' values.
template <typename V>
__device__ __forceinline__ V warp_inclusive_sum(V v)
{
    const int lane = threadIdx.x % WARP_SIZE;
#pragma unroll
    for (int offset = 1; offset < WARP_SIZE; offset *= 2) {
        const V below = __shfl_up_sync(FULL_MASK, v, offset);
        if (lane >= offset)
            v += below;
    }
    return v;
}

// Where `in`: counts this lane's `digit` into *counter, the counter of that digit (the caller's
// layout), once for all the lanes with the same digit.
__device__ __forceinline__ void warp_count_digit(unsigned *counter, bool in, unsigned digit)
{
    const unsigned peers = __match_any_sync(FULL_MASK, in ? digit : DIGIT_BINS); // DIGIT_BINS: none
    if (in && threadIdx.x % WARP_SIZE == __ffs(peers) - 1)
        atomicAdd(counter, __popc(peers));
}

struct digit_pick {
    unsigned digit; // the digit of the rank-th largest key
    unsigned above; // the keys with a larger digit
    unsigned in;    // the keys with this digit
};

// counts[-i]: the keys with digit 255 - 8L - i, L this lane (each lane's 8 counters lie next to one
// another, the larger digits first). The same answer in every lane.
__device__ __forceinline__ digit_pick warp_pick_digit(const unsigned *counts, unsigned rank)
{
    unsigned mine = 0;
#pragma unroll
    for (int i = 0; i < DIGITS_A_LANE; i++)
        mine += counts[-i];
    const unsigned through = warp_inclusive_sum(mine); // the keys in this lane's digits and above
    const int holder = __ffs(__ballot_sync(FULL_MASK, through >= rank)) - 1; // the first to reach it
    digit_pick p = {0, through - mine, 0};
    if ((int)(threadIdx.x % WARP_SIZE) == holder)
        for (int i = 0;; i++) {
            p.in = counts[-i];
            if (p.above + p.in >= rank) {
                p.digit = DIGIT_BINS - 1 - DIGITS_A_LANE * holder - i;
                break;
            }
            p.above += p.in;
        }
    return {__shfl_sync(FULL_MASK, p.digit, holder), __shfl_sync(FULL_MASK, p.above, holder),
            __shfl_sync(FULL_MASK, p.in, holder)};
}

#endif
