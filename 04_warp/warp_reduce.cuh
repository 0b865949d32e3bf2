// Reductions in registers with warp shuffles; README.md draws the butterfly. Every lane that
// FULL_MASK names must reach each shuffle: a lane with nothing to contribute brings the identity
// (-inf for max, 0 for sum) and does not leave early.
#ifndef WARP_REDUCE_CUH
#define WARP_REDUCE_CUH

#include "../02_multipass/block_reduce.cuh" // reduce_op, reduce_combine

#define FULL_MASK 0xffffffffu
#define WARP_SIZE 32

__device__ __forceinline__ float reduce_identity(reduce_op op) { return op == REDUCE_MAX ? -INFINITY : 0.0f; }

// All 32 lanes call it, and every lane gets the result.
__device__ __forceinline__ float warp_reduce(float value, reduce_op op)
{
#pragma unroll
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
        value = reduce_combine(value, __shfl_xor_sync(FULL_MASK, value, offset), op);
    return value;
}

__device__ __forceinline__ float warp_max(float value) { return warp_reduce(value, REDUCE_MAX); }
__device__ __forceinline__ float warp_sum(float value) { return warp_reduce(value, REDUCE_SUM); }

// Lane 0 of warp w writes warp_results[w] (32 floats of shared memory); after the barrier, every
// warp reduces them, so every thread gets the result. blockDim.x must be a multiple of 32.
__device__ __forceinline__ float block_reduce_by_warps(float value, reduce_op op, float *warp_results)
{
    const unsigned lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    value = warp_reduce(value, op);
    if (lane == 0)
        warp_results[warp] = value;
    __syncthreads();
    value = warp_reduce(lane < blockDim.x / WARP_SIZE ? warp_results[lane] : reduce_identity(op), op);
    __syncthreads(); // all have read warp_results before the next call writes it
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
