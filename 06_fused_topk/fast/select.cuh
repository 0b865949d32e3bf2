// fast/select.cuh — the K best of a warp's candidates by radix select, without sorting them.
//
// What it does: past K = SELECT_ABOVE_K (candidates.cuh) the warp does not keep its best K sorted
// (every merge would then run log2(K) compare-exchange layers over all K of them); it lets the
// candidates pile up, unsorted, and when the buffer is nearly full keeps only the best K
// (warp_select_best). The K-th best key is found a digit at a time, from the top 8 bits of the
// 64-bit keys down, with `rank`, the K-th's rank among the keys that agree with the digits found so
// far, starting at K:
//   1. a histogram of the digit, over the keys that agree with the digits found so far;
//   2. from the top bin down, the bin where the count reaches `rank`: that is the K-th key's digit;
//      the keys in the bins above it all rank before it, and `rank` falls by their number;
//   3. stop when that bin holds one key: `rank` is at least 1 and at most the bin's count, so the
//      one key is the K-th. Keys are distinct (no two have the same index), so by the last digit
//      the bin does hold one.
// The digits found make `prefix` (the K-th's top bits) and `mask` (which bits those are). A key
// whose masked bits are above the prefix ranks before the K-th at some digit already found: the
// warp keeps, in place, those and the K-th itself, the keys with (key & mask) >= prefix: exactly K.
// It puts the K-th at position K-1, so buf[K-1] is the K-th best after a select as after a sorted
// merge, and the threshold is its logit. The kept keys are sorted once, at the row's end.
// A step reads each key once. For float32 logits the K-th is usually alone in its bin after 3 or 4
// steps; 16-bit logits, widened, leave 16 bits of every key's logit the same, and their ties at
// the K-th's logit take the select on into the index's digits: 7 or 8 steps.
// Invariants: after warp_select_best, buf[0..K) holds the K best of the keys it was given, buf[K-1]
// the K-th of them; `hist` is all zeros between selects (the warp's buffer starts so, and each step
// clears the bins it read).
// Assumes: rank_key.cuh; distinct keys, more than K of them (the caller tests it); all 32 lanes
// call these together; `hist` is SELECT_BINS counters of the warp's own shared memory.
// Read next: offer.cuh, how a chunk of logits is tested against the threshold and appended.
#ifndef FAST_SELECT_CUH
#define FAST_SELECT_CUH

#include "../../04_warp/warp_reduce.cuh"
#include "rank_key.cuh"

#define SELECT_DIGIT_BITS 8
#define SELECT_BINS (1 << SELECT_DIGIT_BITS)
#define SELECT_BINS_A_LANE (SELECT_BINS / WARP_SIZE)

// Counts, into hist, digit `shift` of the keys of buf[0..n) that agree with `prefix` where `mask`
// is set. The lanes with the same digit add their count once: their leader, found by
// __match_any_sync, does one atomic add (most keys share the top digits, so lanes adding one each
// would all wait on the same counter).
__device__ __forceinline__ void warp_histogram(const rank_key *buf, int n, rank_key prefix, rank_key mask, int shift,
                                               unsigned *hist)
{
    const int lane = threadIdx.x % WARP_SIZE;
    for (int i0 = 0; i0 < n; i0 += WARP_SIZE) {
        const int i = i0 + lane;
        const rank_key key = i < n ? buf[i] : 0;
        const bool in = i < n && (key & mask) == prefix;
        const unsigned digit = in ? (unsigned)(key >> shift) & (SELECT_BINS - 1) : SELECT_BINS; // SELECT_BINS: none
        const unsigned peers = __match_any_sync(FULL_MASK, digit);
        if (in && lane == __ffs(peers) - 1)
            atomicAdd(&hist[digit], __popc(peers));
    }
}

// The bin in which, counting from the top bin down, the count reaches `rank` (the rank-th largest
// key of the histogram's is in it), in every lane; `above`: the keys in the bins above it; `in`:
// the keys in it. Lane L holds bins 255 - 8L down to 248 - 8L, and clears them for the next digit.
__device__ __forceinline__ unsigned warp_find_bin(unsigned *hist, unsigned rank, unsigned &above, unsigned &in)
{
    const int lane = threadIdx.x % WARP_SIZE, top = SELECT_BINS - 1 - SELECT_BINS_A_LANE * lane;
    unsigned mine = 0;
#pragma unroll
    for (int j = 0; j < SELECT_BINS_A_LANE; j++)
        mine += hist[top - j];
    unsigned through = mine; // the counts of this lane's bins and of every bin above them
#pragma unroll
    for (int offset = 1; offset < WARP_SIZE; offset *= 2) {
        const unsigned before = __shfl_up_sync(FULL_MASK, through, offset);
        if (lane >= offset)
            through += before;
    }
    const int holder = __ffs(__ballot_sync(FULL_MASK, through >= rank)) - 1; // the lane whose bins reach it
    unsigned bin = 0, running = through - mine, here = 0; // running: the keys in the bins above bin j
    if (lane == holder)
        for (int j = 0;; j++) {
            here = hist[top - j];
            if (running + here >= rank) {
                bin = top - j;
                break;
            }
            running += here;
        }
    bin = __shfl_sync(FULL_MASK, bin, holder);
    above = __shfl_sync(FULL_MASK, running, holder);
    in = __shfl_sync(FULL_MASK, here, holder);
#pragma unroll
    for (int j = 0; j < SELECT_BINS_A_LANE; j++)
        hist[top - j] = 0;
    __syncwarp(); // every bin is clear before the next digit's adds
    return bin;
}

// Keeps the best k of buf[0..n) (n > k) in buf[0..k), the k-th at buf[k - 1], and returns it.
__device__ __forceinline__ rank_key warp_select_best(rank_key *buf, int n, int k, unsigned *hist)
{
    const int lane = threadIdx.x % WARP_SIZE;
    __syncwarp(); // every lane's appends are in
    rank_key prefix = 0, mask = 0;
    unsigned rank = (unsigned)k;
    for (int shift = 64 - SELECT_DIGIT_BITS;; shift -= SELECT_DIGIT_BITS) {
        warp_histogram(buf, n, prefix, mask, shift, hist);
        __syncwarp();
        unsigned above, in;
        const unsigned bin = warp_find_bin(hist, rank, above, in);
        prefix |= (rank_key)bin << shift, mask |= (rank_key)(SELECT_BINS - 1) << shift;
        rank -= above;
        if (in == 1 || shift == 0)
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
