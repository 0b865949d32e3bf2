// fast/cluster_kth.cuh — a block finds the K-th largest of the numbers it holds, to 24 bits,
// equal in every block. The lowest 8 bits are left 0, so the result is a lower bound. All
// SPLIT_THREADS threads call; the counts are zero on entry.
// Read next: list_again.cuh.
#ifndef FAST_CLUSTER_KTH_CUH
#define FAST_CLUSTER_KTH_CUH

#include "../../04_warp/warp_reduce.cuh"
#include "lane_counts.cuh"

#define SPLIT_THREADS 256   // threads in fast_split's block
#define SPLIT_MAX_HELD 16   // the most numbers a thread holds

// Count d sits at d + d / 32, so lanes reading digits 8 apart hit different banks.
#define SKEWED_COUNTS (256 + 8)
__device__ __forceinline__ int skewed(unsigned digit) { return (int)(digit + digit / 32); }

// The K-th largest's top 24 bits, by a radix select of three rounds; number t + 256 j sits in
// held[j] of thread t. Every warp picks the same digit, so a round needs one barrier.
#define KTH_ROUNDS 3

__device__ unsigned block_kth_largest(const unsigned (&held)[SPLIT_MAX_HELD], int n, int k,
                                      unsigned (*counts)[SKEWED_COUNTS])
{
    const int lane = threadIdx.x % WARP_SIZE;
    unsigned prefix = 0, wanted = k; // the wanted-th of those matching prefix
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
        // A lane's 8 skewed counters are adjacent.
        const digit_pick pick = warp_pick_digit(&counts[round][skewed(DIGIT_BINS - 1 - DIGITS_A_LANE * lane)], wanted);
        prefix |= pick.digit << shift;
        wanted -= pick.above;
    }
    return prefix;
}

// The same bound for one number a thread: the shared bits first, then each lower bit one
// __syncthreads_count question, "do K reach this trial value?".
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
    unsigned ones = ~0u, seen = 0; // bits set in every maximum, in some
#pragma unroll
    for (int w = 0; w < SPLIT_THREADS / WARP_SIZE; w++)
        ones &= agree[0][w], seen |= agree[1][w];
    const unsigned differ = ones ^ seen;
    const int top = differ ? 31 - __clz(differ) : -1; // top differing bit
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
