// Reductions in registers, with warp shuffles: used by stages 04 and 05.
//
// __shfl_xor_sync(mask, v, offset) hands each lane the v of lane (lane ^ offset), register to
// register, with no shared memory and no barrier. Five rounds (offsets 16, 8, 4, 2, 1) combine all
// 32 lanes, and because the pattern is a butterfly every lane ends with the result.
//
// The mask names the lanes that take part, and every one of them must reach the call: a lane that
// returned early, or sits in the other side of a branch, leaves the others waiting on a value that
// never comes (undefined behaviour). So code that shuffles with FULL_MASK never lets single lanes
// leave first: lanes with nothing to contribute bring the identity instead (-inf for max, 0 for
// sum). Whole warps may leave together.
//
// Before Volta, warps ran in lockstep, and reductions in shared memory declared `volatile` skipped
// the barrier inside the last warp ("warp-synchronous programming"). Since Volta the threads of a
// warp are scheduled independently and may diverge and reconverge anywhere; nothing guarantees that
// lane 3 has written its value before lane 2 reads it. That trick is a data race today: use
// __shfl_*_sync, or __syncwarp() between the steps.
#ifndef WARP_REDUCE_CUH
#define WARP_REDUCE_CUH

#include "../02_multipass/block_reduce.cuh" // reduce_op, reduce_combine

#define FULL_MASK 0xffffffffu
#define WARP_SIZE 32

__device__ __forceinline__ float reduce_identity(reduce_op op) { return op == REDUCE_MAX ? -INFINITY : 0.0f; }

// All 32 lanes must call it; all get the result.
__device__ __forceinline__ float warp_reduce(float value, reduce_op op)
{
#pragma unroll
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
        value = reduce_combine(value, __shfl_xor_sync(FULL_MASK, value, offset), op);
    return value;
}

__device__ __forceinline__ float warp_max(float value) { return warp_reduce(value, REDUCE_MAX); }
__device__ __forceinline__ float warp_sum(float value) { return warp_reduce(value, REDUCE_SUM); }

// Block-wide, in two shuffle rounds: each warp reduces its 32 values; lane 0 of every warp leaves
// its result in `warp_results` (32 floats of shared memory); then every warp reduces those (at
// most 32) values itself, so all threads get the result without a second broadcast. Two barriers
// in all, against log2(blockDim.x) + 2 for the shared-memory tree. blockDim.x: a multiple of 32.
__device__ __forceinline__ float block_reduce_by_warps(float value, reduce_op op, float *warp_results)
{
    const unsigned lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    value = warp_reduce(value, op);
    if (lane == 0)
        warp_results[warp] = value;
    __syncthreads();
    value = warp_reduce(lane < blockDim.x / WARP_SIZE ? warp_results[lane] : reduce_identity(op), op);
    __syncthreads(); // everyone has read warp_results before a next reduction may write it
    return value;
}

__device__ __forceinline__ float block_max_by_warps(float value, float *warp_results)
{
    return block_reduce_by_warps(value, REDUCE_MAX, warp_results);
}

__device__ __forceinline__ float block_sum_by_warps(float value, float *warp_results)
{
    return block_reduce_by_warps(value, REDUCE_SUM, warp_results);
}

#endif
