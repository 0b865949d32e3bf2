// Block-wide reductions through a tree in shared memory, used by stages 02 and 03.
//
// Every thread brings one value; the block's max (or sum) comes back to every thread. Step k adds
// (or maxes) pairs blockDim.x / 2^k apart, halving the active threads, with a barrier after each
// step so that the next step reads finished values: log2(blockDim.x) steps and barriers, and a
// shared-memory store and load per step. blockDim.x must be a power of two.
//
// Stage 04 replaces the tree with warp shuffles, which need no shared memory and fewer barriers.
#ifndef BLOCK_REDUCE_CUH
#define BLOCK_REDUCE_CUH

enum reduce_op { REDUCE_MAX, REDUCE_SUM };

// The op is a compile-time constant at every call site, so the branch folds away.
__device__ __forceinline__ float reduce_combine(float a, float b, reduce_op op)
{
    return op == REDUCE_MAX ? fmaxf(a, b) : a + b;
}

// `shared` has blockDim.x floats. Identities: -inf for max (fmaxf(-inf, v) = v), 0 for sum.
__device__ __forceinline__ float block_reduce(float value, reduce_op op, float *shared)
{
    const unsigned tid = threadIdx.x;
    shared[tid] = value;
    __syncthreads();
    for (unsigned active = blockDim.x / 2; active > 0; active /= 2) {
        if (tid < active)
            shared[tid] = reduce_combine(shared[tid], shared[tid + active], op);
        __syncthreads();
    }
    const float result = shared[0];
    // Every thread must have read shared[0] before any thread writes `shared` again, e.g. in a
    // second reduction that reuses the same array right after this one returns.
    __syncthreads();
    return result;
}

__device__ __forceinline__ float block_reduce_max(float value, float *shared)
{
    return block_reduce(value, REDUCE_MAX, shared);
}

__device__ __forceinline__ float block_reduce_sum(float value, float *shared)
{
    return block_reduce(value, REDUCE_SUM, shared);
}

#endif
