// The online softmax statistic: for the elements folded in so far, m is their max and
// d = sum exp(x - m). The combine is associative with identity (-inf, 0). A NaN or +inf element
// makes d NaN, and every later fold and combine keeps it NaN (common/reference.h's rule).
// Read next: online.cu, online_stats_kernel.
#ifndef ONLINE_STAT_CUH
#define ONLINE_STAT_CUH

#include "../04_warp/warp_reduce.cuh"

typedef struct {
    float m; // max of the elements folded in so far
    float d; // sum of exp(x - m) over them
} online_stat;

__device__ __forceinline__ online_stat make_stat(float m, float d)
{
    online_stat s;
    s.m = m;
    s.d = d;
    return s;
}

#define ONLINE_IDENTITY make_stat(-INFINITY, 0.0f)

// The sum d where the new max m is -inf: each input to fmaxf was -inf or NaN (fmaxf drops a
// NaN). `maxima` adds the inputs' maxima, `sums` their d, which may be 1 (online_stat_add folds
// -inf in as (-inf, 1)). No exp is taken (exp(-inf - -inf) is NaN):
//   inputs          maxima   d
//   all -inf        -inf     sums * 0: 0, or NaN if a d was NaN
//   any is NaN      NaN      NaN
__device__ __forceinline__ float sum_while_empty(float maxima, float sums)
{
    return maxima == -INFINITY ? sums * 0.0f : maxima;
}

__device__ __forceinline__ online_stat online_stat_combine(online_stat a, online_stat b)
{
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY)
        return make_stat(m, sum_while_empty(a.m + b.m, a.d + b.d));
    return make_stat(m, a.d * __expf(a.m - m) + b.d * __expf(b.m - m));
}

// Folds four elements in, with one rescale of the running sum for all four.
__device__ __forceinline__ online_stat online_stat_add4(online_stat s, float4 v)
{
    const float m = fmaxf(fmaxf(s.m, fmaxf(v.x, v.y)), fmaxf(v.z, v.w));
    if (m == -INFINITY)
        return make_stat(m, sum_while_empty(s.m + (v.x + v.y) + (v.z + v.w), s.d));
    return make_stat(m, s.d * __expf(s.m - m) + __expf(v.x - m) + __expf(v.y - m) + __expf(v.z - m) +
                            __expf(v.w - m));
}

__device__ __forceinline__ online_stat online_stat_add(online_stat s, float v)
{
    return online_stat_combine(s, make_stat(v, 1.0f));
}

__device__ __forceinline__ online_stat warp_combine(online_stat s)
{
#pragma unroll
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) {
        s = online_stat_combine(s, make_stat(__shfl_xor_sync(FULL_MASK, s.m, offset),
                                             __shfl_xor_sync(FULL_MASK, s.d, offset)));
    }
    return s;
}

// As stage 04's block_reduce_by_warps, for the pair: every thread returns the block's statistic.
__device__ __forceinline__ online_stat block_combine(online_stat s, online_stat *warp_stats)
{
    const unsigned lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    s = warp_combine(s);
    if (lane == 0)
        warp_stats[warp] = s;
    __syncthreads();
    s = warp_combine(lane < blockDim.x / WARP_SIZE ? warp_stats[lane] : ONLINE_IDENTITY);
    __syncthreads();
    return s;
}

#endif
