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

// The sum while the max is -inf. Everything folded in so far is then -inf or NaN (fmaxf passes over
// a NaN, so a lone NaN element, make_stat(NaN, 1), can leave the max at -inf), and exp(x - m) would
// be exp(-inf - -inf) = NaN for every -inf. Instead each -inf weighs exp(-inf) = 0 and a NaN makes
// the sum NaN. `maxima` adds up the maxima (or, in add4, the elements) met: a cheap test for any
// NaN, since -inf + -inf = -inf and a NaN makes the total NaN. `sums` adds up the running sums met;
// times 0, a finite one gives 0 and a NaN stays NaN. Such a statistic stays (-inf, 0) or (-inf,
// NaN) until a number arrives; a row of nothing but -inf gets its NaN outputs in the normalize, from
// exp(-inf - -inf). No exp here: the fold of a row of numbers never takes this case (idle lanes'
// empty statistics meet here once a block), and it must cost that fold nothing (README.md, "Where
// the goals were missed").
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

// Folds four elements in: one rescale of the running sum per four, not per element.
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
