// fast/warp_sort.cuh — bitonic sorting networks run by one warp (or a block), on rank keys.
//
// What it does: a bitonic network sorts n keys (n a power of two) in log2(n) stages of
// compare-exchange layers, the same pairs whatever the data, so 32 lanes can share the work with
// no branches that depend on values. Up to 128 keys stay in registers (two or four a lane), and
// pairs in different lanes swap through shuffles; larger sorts go through shared memory, one layer
// at a time with a __syncwarp between layers.
// Assumes: rank_key.cuh; all 32 lanes of the warp call these together.
// Read next: candidates.cuh, the warp's candidate buffer, which these networks keep sorted.
#ifndef FAST_WARP_SORT_CUH
#define FAST_WARP_SORT_CUH

#include "../../04_warp/warp_reduce.cuh"
#include "rank_key.cuh"

// One compare-exchange layer of a bitonic network over buf[0..n): pairs (i, i + stride), put in
// descending order where `descending`, ascending elsewhere. Thread `self` of a team of `team`
// threads takes every team-th pair; the caller waits for the team before the next layer.
__device__ __forceinline__ void bitonic_layer(rank_key *buf, int n, int size, int stride, int self, int team)
{
    for (int t = self; t < n / 2; t += team) {
        const int i = 2 * t - (t & (stride - 1)), j = i + stride;
        const bool descending = (i & size) == 0; // size == n: all descending
        const rank_key a = buf[i], b = buf[j];
        if ((a < b) == descending) // out of order for this half: swap
            buf[i] = b, buf[j] = a;
    }
}

__device__ __forceinline__ void warp_bitonic_layer(rank_key *buf, int n, int size, int stride)
{
    bitonic_layer(buf, n, size, stride, threadIdx.x % WARP_SIZE, WARP_SIZE);
    __syncwarp();
}

// R x 32 keys held in registers, key r of each lane at position lane + 32r: the layers of a bitonic
// network (strides size/2 down to 1) that put each bitonic run of `size` keys in order, descending
// where (position & size) == 0 and ascending elsewhere (so all descending when size is R x 32).
// Pairs within a lane (stride 32 and up) swap in place; the others through shuffles. No
// shared-memory round trip and no __syncwarp per layer.
template <int R>
__device__ __forceinline__ void warp_bitonic_stage_in_registers(rank_key (&e)[R], int size)
{
    const int lane = threadIdx.x % WARP_SIZE;
#pragma unroll
    for (int stride = size / 2; stride > 0; stride /= 2) {
        rank_key before[R];
#pragma unroll
        for (int r = 0; r < R; r++)
            before[r] = e[r];
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int at = lane + r * WARP_SIZE;
            const rank_key other = stride < WARP_SIZE ? __shfl_xor_sync(FULL_MASK, before[r], stride)
                                                      : before[r ^ (stride / WARP_SIZE)];
            const bool larger = ((at & stride) == 0) == ((at & size) == 0); // this position keeps the larger
            e[r] = (before[r] > other) == larger ? before[r] : other;
        }
    }
}

// A bitonic sort of R x 32 keys held in registers into descending order: one stage a run length.
template <int R>
__device__ __forceinline__ void warp_sort_in_registers(rank_key (&e)[R])
{
#pragma unroll
    for (int size = 2; size <= R * WARP_SIZE; size *= 2)
        warp_bitonic_stage_in_registers(e, size);
}

// R x 32 keys of buf sorted into descending order in registers, R a lane.
template <int R>
__device__ __forceinline__ void warp_sort_through_registers(rank_key *buf)
{
    const int lane = threadIdx.x % WARP_SIZE;
    rank_key e[R];
#pragma unroll
    for (int r = 0; r < R; r++)
        e[r] = buf[lane + r * WARP_SIZE];
    warp_sort_in_registers(e);
#pragma unroll
    for (int r = 0; r < R; r++)
        buf[lane + r * WARP_SIZE] = e[r];
    __syncwarp();
}

// Bitonic sort of buf[0..n) (n a power of two, at least 64) into descending key order, by one
// warp, for the merges that do not fit in registers (K > 64, or more than 128 new ones). Up to
// 128 keys are sorted in registers, two or four a lane.
__device__ void warp_sort_descending(rank_key *buf, int n)
{
    if (n == 2 * WARP_SIZE)
        return warp_sort_through_registers<2>(buf);
    if (n == 4 * WARP_SIZE)
        return warp_sort_through_registers<4>(buf);
    for (int size = 2; size <= n; size *= 2)
        for (int stride = size / 2; stride > 0; stride /= 2)
            warp_bitonic_layer(buf, n, size, stride);
}

#endif
