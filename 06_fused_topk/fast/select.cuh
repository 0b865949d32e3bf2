// fast/select.cuh — the K best of a warp's candidates by radix select, without sorting them.
//
// What it does: past K = SELECT_ABOVE_K (candidates.cuh) the warp does not keep its best K sorted
// (every merge would then run log2(K) compare-exchange layers over all K of them); it lets the
// candidates pile up, unsorted, and when the buffer is nearly full keeps only the best K
// (warp_select_best). The K-th best key is found a digit at a time, from the top 8 bits of the
// 64-bit keys down, with `rank`, the K-th's rank among the keys that agree with the digits found so
// far, starting at K. A first pass finds the bits on which the keys differ (where their AND and
// their OR disagree): a digit that all the keys share is the K-th's too, and takes no step. For
// each other digit:
//   1. a histogram of the digit, over the keys that agree with the digits found so far
//      (warp_count_digit, lane_counts.cuh);
//   2. from the top bin down, the bin where the count reaches `rank` (warp_pick_digit): that is the
//      K-th key's digit; the keys in the bins above it all rank before it, and `rank` falls by
//      their number;
//   3. stop when that bin holds one key: `rank` is at least 1 and at most the bin's count, so the
//      one key is the K-th. Keys are distinct (no two have the same index), so by the last digit
//      on which they differ the bin does hold one.
// The digits found make `prefix` (the K-th's top bits) and `mask` (which bits those are). A key
// whose masked bits are above the prefix ranks before the K-th at some digit already found: the
// warp keeps, in place, those and the K-th itself, the keys with (key & mask) >= prefix: exactly K.
// It puts the K-th at position K-1, so buf[K-1] is the K-th best after a select as after a sorted
// merge, and the threshold is its logit. The kept keys are sorted once, at the row's end.
// An example with keys of two decimal digits, K = 3: keys 71 75 52 58 79 31. First digit: bins
// 7 {71 75 79}, 5 {52 58}, 3 {31}; from the top, bin 7 reaches rank 3 with nothing above it, so the
// K-th starts with 7 and rank stays 3. Second digit, of 71 75 79: bins 9, 5, 1 hold one key each;
// from the top the count reaches 3 at bin 1, with 2 keys above: rank becomes 1 and the bin holds
// one key, so the K-th is 71. Kept: the keys whose first two digits are at least 71: 71 75 79.
// A step reads each key once. The candidates are a row's largest logits, close together: they
// share their top digit (sign and exponent). A widened bf16 logit leaves its low 16 bits zero, an
// fp16 one its low 13, and the indices of a row shorter than 2^24 share their top digit too. A
// float32 select then takes 2 or 3 steps; a 16-bit one, whose ties at the K-th's logit go on into
// the index's digits, 2 or 3 for bf16 and 3 or 4 for fp16 (without the skipping, 3 or 4, and 7 or 8
// for both).
// The bins are plain, not skewed as cluster_kth.cuh's are, so a lane's 8 bins fall in banks that 7
// other lanes' bins share: the skew's 32 bytes more a warp would leave room for 3 blocks an SM, not
// 4, at K = 1024 (warp_capacity, candidates.cuh).
// Invariants: after warp_select_best, buf[0..K) holds the K best of the keys it was given, buf[K-1]
// the K-th of them; `hist` is all zeros between selects (the warp's buffer starts so, and each step
// clears the bins it read).
// Assumes: rank_key.cuh and lane_counts.cuh; distinct keys, more than K of them (the caller tests
// it); all 32 lanes call these together; `hist` is DIGIT_BINS counters of the warp's own shared
// memory.
// Read next: ballot_append.cuh, how a chunk of logits is tested against the threshold and appended.
#ifndef FAST_SELECT_CUH
#define FAST_SELECT_CUH

#include "rank_key.cuh"
#include "lane_counts.cuh"

// Counts, into hist (DIGIT_BINS counters), digit `shift` of the keys of buf[0..n) that agree with
// `prefix` where `mask` is set.
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

// The digit of the rank-th largest key counted in hist (warp_pick_digit); each lane then clears the
// bins it read, for the next digit.
__device__ __forceinline__ digit_pick warp_find_digit(unsigned *hist, unsigned rank)
{
    unsigned *mine = hist + DIGIT_BINS - 1 - DIGITS_A_LANE * (threadIdx.x % WARP_SIZE);
    const digit_pick pick = warp_pick_digit(mine, rank);
#pragma unroll
    for (int i = 0; i < DIGITS_A_LANE; i++)
        mine[-i] = 0;
    __syncwarp(); // every bin is clear before the next digit's adds
    return pick;
}

// The bits on which the keys of buf[0..n) differ, in every lane: where a bit is the same in all of
// them, their AND and their OR agree there.
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
    rank_key mask = ~differ, prefix = buf[0] & mask; // the bits all the keys share are the k-th's
    unsigned rank = (unsigned)k;
    for (int shift = 64 - DIGIT_BITS; shift >= 0; shift -= DIGIT_BITS) {
        if ((differ >> shift & (DIGIT_BINS - 1)) == 0)
            continue; // a digit all the keys share: no step
        warp_histogram(buf, n, prefix, mask, shift, hist);
        __syncwarp();
        const digit_pick bin = warp_find_digit(hist, rank);
        prefix |= (rank_key)bin.digit << shift, mask |= (rank_key)(DIGIT_BINS - 1) << shift;
        rank -= bin.above;
        if (bin.in == 1)
            break; // the bin holds the k-th alone
    }
    // Kept: the keys above the bin's digits, and the bin's one key, the k-th (k in all). Each round
    // writes at or before the positions it read, so the warp compacts buf in place: a lane may
    // write where another lane of the same round read, but every lane's load feeds the ballot,
    // which no lane passes before all have loaded.
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
    const int holder = __ffs(__ballot_sync(FULL_MASK, kth_at >= 0)) - 1; // the lane that kept the k-th
    kth_at = __shfl_sync(FULL_MASK, kth_at, holder);
    kth = __shfl_sync(FULL_MASK, kth, holder);
    __syncwarp(); // the compacted keys are in before lane 0 moves the k-th
    if (lane == 0)
        buf[kth_at] = buf[k - 1], buf[k - 1] = kth;
    __syncwarp();
    return kth;
}

#endif
