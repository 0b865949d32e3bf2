// fast/warp_sort.cuh — bitonic sorting networks run by one warp (or a block), on rank keys.
//
// What it does: a bitonic network sorts n keys (n a power of two) in log2(n) stages of
// compare-exchange layers, the same pairs whatever the data, so 32 lanes can share the work with
// no branches that depend on values. Up to 128 keys stay in registers (two or four a lane), and
// pairs in different lanes swap through shuffles; larger sorts go through shared memory, one layer
// at a time with a __syncwarp between layers. The one large sort of a row, the K a select kept
// (select.cuh), goes by runs of 128: each run sorted in registers, then each stage that merges
// runs through shared memory only for its strides of 128 and up (team_sort_by_runs, for a warp). A
// block sorts the same way, every warp taking runs of 128 and a __syncthreads where a warp has a
// __syncwarp (fast_split's candidates, past the few a team of lanes can place by counting).
// Assumes: rank_key.cuh; all 32 lanes of the warp call these together (all the block's threads,
// for the block's sort).
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

// R x 32 keys held in registers, key r of each lane at position base + lane + 32r (base a multiple
// of R x 32): the layers with strides `from` down to 1 of the bitonic stage that puts each bitonic
// run of `size` keys in order, descending where (position & size) == 0 and ascending elsewhere (so
// all descending when size is R x 32 and base 0). Pairs within a lane (stride 32 and up) swap in
// place; the others through shuffles. No shared-memory round trip and no __syncwarp per layer.
// `from` must be below R x 32 (pairs within the R x 32 keys) and known when this is compiled (the
// loop is unrolled, so e[] stays in registers).
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
            const bool larger = ((at & stride) == 0) == ((at & size) == 0); // this position keeps the larger
            e[r] = (before[r] > other) == larger ? before[r] : other;
        }
    }
}

// A bitonic sort of R x 32 keys held in registers, one stage a run length, into descending order;
// at a `base` that is an odd multiple of R x 32, into ascending order (the direction the next
// stage wants of that run).
template <int R>
__device__ __forceinline__ void warp_sort_in_registers(rank_key (&e)[R], int base = 0)
{
#pragma unroll
    for (int size = 2; size <= R * WARP_SIZE; size *= 2)
        warp_bitonic_layers_in_registers(e, size / 2, size, base);
}

// A run of R x 32 keys, buf[base..base + R x 32), into registers, R a lane (key r of a lane at
// position base + lane + 32r), and back.
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

// R x 32 keys of buf sorted into descending order in registers, R a lane.
template <int R>
__device__ __forceinline__ void warp_sort_through_registers(rank_key *buf)
{
    rank_key e[R];
    warp_load_run(buf, 0, e);
    warp_sort_in_registers(e);
    warp_store_run(buf, 0, e);
    __syncwarp();
}

// Bitonic sort of buf[0..n) (n a power of two, at least 64) into descending key order, by one
// warp, for the merges that do not fit in registers (K > 64, or more than 128 new ones). Up to
// 128 keys are sorted in registers, two or four a lane; past that every layer goes through shared
// memory. The kernels that merge often run at their 64 registers a thread, and this is the form
// that costs them none (warp_sort_by_runs does, around every call).
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

// Threads that share a sort: one warp (BLOCK false: its lanes, a __syncwarp between layers) or a
// block's threads, whole warps (a __syncthreads). `self` is this thread's place in the team.
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

// Bitonic sort of buf[0..n) (n a power of two, at least 128) into descending key order by a team of
// `threads` threads (32 for a warp). Each warp of the team sorts runs of 128 in registers, four keys
// a lane, each in the direction the next stage wants. Each stage that merges runs then takes its
// layers of stride 128 and up through shared memory, one layer at a time with the team waiting
// after each, and its strides 64 down to 1, which pair keys only within a run of 128, in registers,
// a run a warp: of the 55 layers that sort 1 024 keys, 6 go through shared memory; of the 66 that
// sort 2 048, 10.
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
    for (int size = 8 * WARP_SIZE; size <= n; size *= 2) { // runs of 256 first: two runs of 128 merged
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

// The warp's sort, once a row (the select's K at the end, select.cuh).
__device__ void warp_sort_by_runs(rank_key *buf, int n) { team_sort_by_runs<false>(buf, n, WARP_SIZE); }

// The block's sort (fast_split's candidates). A call, so that the registers of its runs cost the
// kernel that calls it none.
__device__ __noinline__ void block_sort_by_runs(rank_key *buf, int n, int threads)
{
    team_sort_by_runs<true>(buf, n, threads);
}

#endif
