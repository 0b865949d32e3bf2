// fast/lane_counts.cuh — counting across a warp: a running sum over the lanes, and the two
// steps of a radix select's round. All 32 lanes call these together.
// Read next: select.cuh.
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

// Adds, to the counter of `digit`, the lanes with that digit and `in`, in one atomic.
__device__ __forceinline__ void warp_count_digit(unsigned *counter, bool in, unsigned digit)
{
    const unsigned peers = __match_any_sync(FULL_MASK, in ? digit : DIGIT_BINS); // DIGIT_BINS matches no digit
    if (in && threadIdx.x % WARP_SIZE == __ffs(peers) - 1)
        atomicAdd(counter, __popc(peers));
}

struct digit_pick {
    unsigned digit; // the rank-th key's digit
    unsigned above; // keys with larger digits
    unsigned in;    // keys with this digit
};

// counts[-i] counts digit 255 - 8L - i, for lane L. Finds the digit where the count from the top
// reaches `rank` (1 <= rank <= total), equal in every lane.
__device__ __forceinline__ digit_pick warp_pick_digit(const unsigned *counts, unsigned rank)
{
    unsigned mine = 0;
#pragma unroll
    for (int i = 0; i < DIGITS_A_LANE; i++)
        mine += counts[-i];
    const unsigned through = warp_inclusive_sum(mine); // keys in this lane's digits and above
    const int holder = __ffs(__ballot_sync(FULL_MASK, through >= rank)) - 1; // the first lane to reach rank
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
