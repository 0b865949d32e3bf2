// fast/cluster_kth.cuh — the K-th largest of a few thousand numbers, found by one thread block.
//
// What it does: fast_split's blocks each hold every group maximum of the row (64 to 4096 of
// them, as ordered bits, see rank_key.cuh) and must agree on their K-th largest, to 24 bits.
// Two ways, both exact to those bits and both the same in every block, so no block waits for
// another's answer:
//   - block_kth_largest: a radix select, 8 bits a round from the top; each round counts, of the
//     numbers that match the bits chosen so far, how many have each value of the next 8 bits,
//     then walks the 256 counts down until K is reached;
//   - block_kth_by_bisection (at most one number a thread): a bit at a time from the top, each
//     bit one question to the whole block that one counting barrier answers.
// Assumes: SPLIT_THREADS threads a block, all of them calling; the counts zero on entry.
// Read next: fast_split.cuh, which uses the K-th largest as the bound of its candidates.
#ifndef FAST_CLUSTER_KTH_CUH
#define FAST_CLUSTER_KTH_CUH

#include "../../04_warp/warp_reduce.cuh"
#include "lane_counts.cuh"

#define SPLIT_THREADS 256   // a block of fast_split: 8 warps (fewer warps, cheaper barriers)
#define SPLIT_MAX_HELD 16   // numbers a thread holds: 16 x 256 groups of one lane at most

// Count d sits at d + d / 32: the 32 lanes reading digits 8 apart then hit 32 different banks.
#define SKEWED_COUNTS (256 + 8)
__device__ __forceinline__ int skewed(unsigned digit) { return (int)(digit + digit / 32); }

// A lower bound of the K-th largest of n numbers held by the block, number t + j x SPLIT_THREADS
// in held[j] of thread t, as ordered bits: a radix select, 8 bits at a time from the top, for the
// top 24 bits. Round r counts in counts[r] (zeros on entry), of the numbers that match the bits
// chosen so far, how many have each value of the next 8 bits (warp_count_digit, lane_counts.cuh);
// then each warp walks the 256 counts down from the top until K is reached (warp_pick_digit; each
// warp finds the same digit, so one barrier a round is all it takes). The last 8 bits are left at
// 0, a value at most 2^-15 of itself below the K-th: a few more logits reach it, for one round
// less.
#define KTH_ROUNDS 3

__device__ unsigned block_kth_largest(const unsigned (&held)[SPLIT_MAX_HELD], int n, int k,
                                      unsigned (*counts)[SKEWED_COUNTS])
{
    const int lane = threadIdx.x % WARP_SIZE;
    unsigned prefix = 0, wanted = k; // the answer is the wanted-th largest of those matching prefix
    for (int round = 0; round < KTH_ROUNDS; round++) {
        const int shift = 24 - 8 * round;
        const unsigned decided = round == 0 ? 0u : ~0u << (shift + 8); // the bits chosen so far
#pragma unroll
        for (int j = 0; j < SPLIT_MAX_HELD && j * SPLIT_THREADS < n; j++) {
            const unsigned digit = held[j] >> shift & (DIGIT_BINS - 1);
            warp_count_digit(&counts[round][skewed(digit)],
                             (int)threadIdx.x + j * SPLIT_THREADS < n && (held[j] & decided) == prefix, digit);
        }
        __syncthreads();
        // A lane's 8 digits lie in one run of 32, so their skewed counters are next to one another.
        const digit_pick pick = warp_pick_digit(&counts[round][skewed(DIGIT_BINS - 1 - DIGITS_A_LANE * lane)], wanted);
        prefix |= pick.digit << shift;
        wanted -= pick.above;
    }
    return prefix;
}

// The same lower bound for group maxima held one a thread (K <= 64; `mine`, where `has`), with no
// table of counts: its bits from the top, each a question to the block (is the K-th largest at
// least this?) that one barrier answers, for __syncthreads_count adds up the threads whose maximum
// reaches the trial value. The bits on which all the maxima agree are the K-th largest's too, and
// one barrier first finds them (each warp's AND and OR of its maxima, then the block's). A row's
// group maxima are close: those of the benchmark's rows share their sign, exponent and first bits
// of mantissa, which leaves 7 to 11 questions of 24. The lowest 8 bits stay 0, as in the radix
// select. (Warp reductions are sm_80's; only the sm_90 kernel calls this.)
#if __CUDA_ARCH__ >= 900
__device__ unsigned block_kth_by_bisection(unsigned mine, bool has, int k,
                                           unsigned (*agree)[SPLIT_THREADS / WARP_SIZE])
{
    const int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    const unsigned all = __reduce_and_sync(FULL_MASK, has ? mine : ~0u);
    const unsigned any = __reduce_or_sync(FULL_MASK, has ? mine : 0u);
    if (lane == 0)
        agree[0][warp] = all, agree[1][warp] = any;
    __syncthreads();
    unsigned ones = ~0u, seen = 0; // the bits set in every maximum, in some
#pragma unroll
    for (int w = 0; w < SPLIT_THREADS / WARP_SIZE; w++)
        ones &= agree[0][w], seen |= agree[1][w];
    const unsigned differ = ones ^ seen;
    const int top = differ ? 31 - __clz(differ) : -1; // the highest bit on which they differ
    unsigned kth = top == 31 ? 0u : ones & ~0u << (top + 1);
    for (int bit = top; bit >= 8; bit--) {
        const unsigned trial = kth | 1u << bit;
        if (__syncthreads_count(has && mine >= trial) >= k)
            kth = trial;
    }
    return kth & ~255u;
}
#endif

#endif
