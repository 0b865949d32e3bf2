// fast/warp_sort.cuh — bitonic sorts of rank keys by a warp (or a block), in registers up to 128.
// All lanes of the warp (or threads of the block) call these together.
// Read next: candidates.cuh.
#ifndef FAST_WARP_SORT_CUH
#define FAST_WARP_SORT_CUH

#include "../../04_warp/warp_reduce.cuh"
#include "rank_key.cuh"

// One layer over buf[0..n): pairs (i, i + stride), descending where (i & size) is 0. Thread
// `self` takes every team-th pair; the caller waits before the next layer.
__device__ __forceinline__ void bitonic_layer(rank_key *buf, int n, int size, int stride, int self, int team)
{
    for (int t = self; t < n / 2; t += team) {
        const int i = 2 * t - (t & (stride - 1)), j = i + stride;
        const bool descending = (i & size) == 0; // size n: all descending
        const rank_key a = buf[i], b = buf[j];
        if ((a < b) == descending) // out of order: swap
            buf[i] = b, buf[j] = a;
    }
}

__device__ __forceinline__ void warp_bitonic_layer(rank_key *buf, int n, int size, int stride)
{
    bitonic_layer(buf, n, size, stride, threadIdx.x % WARP_SIZE, WARP_SIZE);
    __syncwarp();
}

// Key r of a lane sits at position base + lane + 32r. Runs the layers of strides `from` down to
// 1 of the stage of run length `size`, descending where (position & size) is 0. Strides below 32
// pair lanes through shuffles; larger strides pair a lane's own keys. `from` is below R x 32.
template <int R>
__device__ __forceinline__ void warp_bitonic_layers_in_registers(rank_key (&e)[R], int from, int size, int base)
{
    const int lane = threadIdx.x % WARP_SIZE;
#pragma unroll
    for (int stride = from; stride > 0; stride /= 2) {
        rank_key before[R];
#pragma unroll
        for (int r = 0; r < R; r++)
            before[r] = e[r];
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int at = base + lane + r * WARP_SIZE;
            const rank_key other = stride < WARP_SIZE ? __shfl_xor_sync(FULL_MASK, before[r], stride)
                                                      : before[r ^ (stride / WARP_SIZE)];
            const bool larger = ((at & stride) == 0) == ((at & size) == 0); // keeps the larger
            e[r] = (before[r] > other) == larger ? before[r] : other;
        }
    }
}

// Sorts R x 32 keys in registers: descending, or ascending at an odd multiple `base` of R x 32.
template <int R>
__device__ __forceinline__ void warp_sort_in_registers(rank_key (&e)[R], int base = 0)
{
#pragma unroll
    for (int size = 2; size <= R * WARP_SIZE; size *= 2)
        warp_bitonic_layers_in_registers(e, size / 2, size, base);
}

// Moves the run buf[base..base + R x 32) into registers, and back.
template <int R>
__device__ __forceinline__ void warp_load_run(const rank_key *buf, int base, rank_key (&e)[R])
{
#pragma unroll
    for (int r = 0; r < R; r++)
        e[r] = buf[base + threadIdx.x % WARP_SIZE + r * WARP_SIZE];
}

template <int R>
__device__ __forceinline__ void warp_store_run(rank_key *buf, int base, const rank_key (&e)[R])
{
#pragma unroll
    for (int r = 0; r < R; r++)
        buf[base + threadIdx.x % WARP_SIZE + r * WARP_SIZE] = e[r];
}

template <int R>
__device__ __forceinline__ void warp_sort_through_registers(rank_key *buf)
{
    rank_key e[R];
    warp_load_run(buf, 0, e);
    warp_sort_in_registers(e);
    warp_store_run(buf, 0, e);
    __syncwarp();
}

// Sorts buf[0..n) descending, n a power of two of at least 64. Up to 128 keys go through
// registers; past that every layer goes through shared memory.
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

// A team is one warp, or with BLOCK the whole block.
template <bool BLOCK>
__device__ __forceinline__ int team_self() { return BLOCK ? threadIdx.x : threadIdx.x % WARP_SIZE; }
template <bool BLOCK>
__device__ __forceinline__ void team_wait()
{
    if (BLOCK)
        __syncthreads();
    else
        __syncwarp();
}

// Sorts buf[0..n) descending, n a power of two of at least 128. Each warp sorts runs of 128 in
// registers; each later stage takes strides of 128 and up through shared memory, the rest in
// registers.
template <bool BLOCK>
__device__ __forceinline__ void team_sort_by_runs(rank_key *buf, int n, int threads)
{
    const int self = team_self<BLOCK>(), step = threads / WARP_SIZE * 4 * WARP_SIZE;
    const int first = BLOCK ? threadIdx.x / WARP_SIZE * 4 * WARP_SIZE : 0; // this warp's first run
    for (int base = first; base < n; base += step) {
        rank_key e[4];
        warp_load_run(buf, base, e);
        warp_sort_in_registers(e, base);
        warp_store_run(buf, base, e);
    }
    team_wait<BLOCK>();
    for (int size = 8 * WARP_SIZE; size <= n; size *= 2) { // first merges runs of 128 into 256
        for (int stride = size / 2; stride >= 4 * WARP_SIZE; stride /= 2) {
            bitonic_layer(buf, n, size, stride, self, threads);
            team_wait<BLOCK>();
        }
        for (int base = first; base < n; base += step) {
            rank_key e[4];
            warp_load_run(buf, base, e);
            warp_bitonic_layers_in_registers(e, 2 * WARP_SIZE, size, base);
            warp_store_run(buf, base, e);
        }
        team_wait<BLOCK>();
    }
}

// The warp's sort of the select's K.
__device__ void warp_sort_by_runs(rank_key *buf, int n) { team_sort_by_runs<false>(buf, n, WARP_SIZE); }

// The block's sort; a call, not inlined.
__device__ __noinline__ void block_sort_by_runs(rank_key *buf, int n, int threads)
{
    team_sort_by_runs<true>(buf, n, threads);
}

#endif
