// The online softmax statistic (stage 05): for the elements folded in so far, m is their max and
// d = sum exp(x - m). Stage 05's kernels fold and combine it; stage 06 keeps it beside the top K.
// A NaN or +inf element makes d NaN, and NaN stays in d through every later fold and combine (NaN
// times anything, 0 included, is NaN): such a row has no softmax, and all its outputs come out NaN
// (common/reference.h).
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

// While the max is -inf, each side holds nothing but -inf (d = 0) or a NaN, in d or in m itself (a
// lone NaN element is make_stat(NaN, 1), and fmaxf passes over it). Rescaling against m would give
// -inf - -inf = NaN for every -inf, so that case rescales against 0: a side of -inf weighs
// exp(-inf) = 0, and a NaN stays NaN.
__device__ __forceinline__ online_stat online_stat_combine(online_stat a, online_stat b)
{
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY)
        return make_stat(m, a.d * __expf(a.m) + b.d * __expf(b.m));
    return make_stat(m, a.d * __expf(a.m - m) + b.d * __expf(b.m - m));
}

// Folds four elements in: one rescale of the running sum per four, not per element. While the max
// is -inf, exp(x) itself is each element's term: 0 for a -inf, NaN for a NaN.
__device__ __forceinline__ online_stat online_stat_add4(online_stat s, float4 v)
{
    const float m = fmaxf(fmaxf(s.m, fmaxf(v.x, v.y)), fmaxf(v.z, v.w));
    if (m == -INFINITY)
        return make_stat(m, s.d + __expf(v.x) + __expf(v.y) + __expf(v.z) + __expf(v.w));
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

// As block_reduce_by_warps (stage 04), for the pair: every thread gets the block's statistic.
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
