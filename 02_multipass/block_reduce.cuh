// A block-wide reduction through a shared-memory tree.
//
// Every thread brings one value and gets back the block's max or sum. Each step combines pairs
// `active` apart and halves `active`; a barrier after each step lets the next read finished
// values. blockDim.x is a power of two.
#ifndef BLOCK_REDUCE_CUH
#define BLOCK_REDUCE_CUH

enum reduce_op { REDUCE_MAX, REDUCE_SUM };

// op is constant at each call site: the branch folds away.
__device__ __forceinline__ float reduce_combine(float a, float b, reduce_op op)
{
    return op == REDUCE_MAX ? fmaxf(a, b) : a + b;
}

// `shared` has blockDim.x floats. Identities: -inf for max, 0 for sum.
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
    // Past this barrier all threads have read shared[0]: `shared` may be reused.
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
