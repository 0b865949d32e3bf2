// fast/fast_exp.cuh — stage 05's (m, d) folded a chunk at a time, one ex2 a logit.
// Read next: warp_sort.cuh.
#ifndef FAST_FAST_EXP_CUH
#define FAST_FAST_EXP_CUH

#include "../../05_online/online_stat.cuh"
#include "logits16.cuh"

// e^x is one ex2.approx of x log2(e); subnormal results are flushed to 0.
#define LOG2_E 1.44269504f

__device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ float fast_exp(float x) { return fast_exp2(x * LOG2_E); }

// exp(x - m) as one FMA and one ex2 (FMA true), or with x - m formed first.
template <bool FMA>
__device__ __forceinline__ float exp_minus(float x, float m, float m_log2e)
{
    return FMA ? fast_exp2(fmaf(x, LOG2_E, -m_log2e)) : fast_exp(x - m);
}

// sum[u] is the sum of exp(v[u][j] - m), one chain of adds a vector.
template <bool FMA, int U, int N>
__device__ __forceinline__ void sum_exps(float (&sum)[U], const float (&v)[U][N], float m)
{
    const float m_log2e = m * LOG2_E;
#pragma unroll
    for (int u = 0; u < U; u++) {
        sum[u] = exp_minus<FMA>(v[u][0], m, m_log2e);
#pragma unroll
        for (int j = 1; j < N; j++)
            sum[u] += exp_minus<FMA>(v[u][j], m, m_log2e);
    }
}

// Folds U x N logits, whose largest is vmax; d is rescaled only when m moves. The FMA form is
// used while |m| < 64.
template <int U, int N>
__device__ __forceinline__ online_stat online_stat_add_n(online_stat s, const float (&v)[U][N], float vmax)
{
    if (vmax > s.m) {
        s.d *= fast_exp(s.m - vmax); // from -inf, d is 0
        s.m = vmax;
    }
    if (s.m == -INFINITY)
        return s; // only -inf so far
    float sum[U];
    if (fabsf(s.m) < 64.0f)
        sum_exps<true>(sum, v, s.m);
    else
        sum_exps<false>(sum, v, s.m);
#pragma unroll
    for (int u = 0; u < U; u++)
        s.d += sum[u];
    return s;
}

// Folds G vectors into s (Probs alone) and returns their largest logit.
template <typename T, int G, bool Probs = true>
__device__ __forceinline__ float fold_chunk(online_stat &s, const uint4 *raw)
{
    float v[G][logits16<T>::count];
    if (Probs)
#pragma unroll
        for (int u = 0; u < G; u++)
            logits16<T>::unpack(raw[u], v[u]);
    const float most = logits16<T>::template largest<G>(raw);
    if (Probs)
        s = online_stat_add_n(s, v, most);
    return most;
}


// The warp's statistic, lane 0's copy in every lane, so equal logits get equal probabilities.
__device__ __forceinline__ online_stat warp_statistic(online_stat s)
{
    s = warp_combine(s);
    return make_stat(__shfl_sync(FULL_MASK, s.m, 0), __shfl_sync(FULL_MASK, s.d, 0));
}

#endif
