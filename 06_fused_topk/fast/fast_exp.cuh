// fast/fast_exp.cuh — the online statistic (m, d) of stage 05, folded a chunk of logits at a time.
//
// What it does: exp as the special function unit computes it (one ex2.approx), exp(x - m) as one
// fused multiply-add and one ex2, and online_stat_add_n, which folds a chunk of U vectors into
// (m, d) with one rescale test for the whole chunk instead of one per logit.
// Assumes: stage 05's online_stat (05_online/online_stat.cuh) and logits16.cuh.
// Read next: warp_sort.cuh, the bitonic networks that keep the candidates in order.
#ifndef FAST_FAST_EXP_CUH
#define FAST_FAST_EXP_CUH

#include "../../05_online/online_stat.cuh"
#include "logits16.cuh"

// e^x as the special function unit (SFU, the SM's unit for exp2, reciprocals and the like) computes
// it: one ex2.approx of x log2(e), with subnormal results flushed to 0 (which a sum of probabilities
// never notices). __expf adds range fix-ups around it that cost 3 more instructions per logit (expf,
// within an ulp or two, more still), and the loop below runs one per logit. The unit does 16 a
// cycle an SM (an eighth of the SM's 128 FP32 lanes; the CUDA C Programming Guide's table of
// arithmetic instruction throughputs).
#define LOG2_E 1.44269504f

__device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ float fast_exp(float x) { return fast_exp2(x * LOG2_E); }

// exp(x - m) is 2^(x log2(e) - m log2(e)): one fused multiply-add and one ex2 a logit, with
// m log2(e) computed once. Its rounding shifts every term of the lane by the same factor
// 2^(rounding), within 3e-6 of 1 while |m| < 64; beyond that (logits of huge magnitude) the factor
// grows with m, so there x - m is formed first, exactly when x is near m, at one more instruction.
// The choice is made once for all U x N terms, hence the template.
template <bool FMA>
__device__ __forceinline__ float exp_minus(float x, float m, float m_log2e)
{
    return FMA ? fast_exp2(fmaf(x, LOG2_E, -m_log2e)) : fast_exp(x - m);
}

// sum[u] = the sum of exp(v[u][j] - m) over j: one chain of adds for each of the U vectors, not
// one for all of them.
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

// Folds U x N logits, whose largest is vmax, into the statistic. The sum is rescaled only when the
// maximum moves, which after a row's first chunks is rare.
template <int U, int N>
__device__ __forceinline__ online_stat online_stat_add_n(online_stat s, const float (&v)[U][N], float vmax)
{
    if (vmax > s.m) {
        s.d *= fast_exp(s.m - vmax); // from -inf: exp(-inf) = 0, and d is 0 anyway
        s.m = vmax;
    }
    if (s.m == -INFINITY)
        return s; // nothing but -inf so far: nothing to add
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

// G vectors of logits unpacked and folded into the statistic: one rescale test for all of them.
// Returns their largest logit.
template <typename T, int G>
__device__ __forceinline__ float fold_chunk(online_stat &s, const uint4 *raw)
{
    float v[G][logits16<T>::count];
#pragma unroll
    for (int u = 0; u < G; u++)
        logits16<T>::unpack(raw[u], v[u]);
    const float most = logits16<T>::template largest<G>(raw);
    s = online_stat_add_n(s, v, most);
    return most;
}


// The warp's statistic in every lane: lane 0's. warp_combine's butterfly leaves the lanes' totals a
// rounding apart (the two lanes of a pair combine the same two statistics in opposite orders, and
// the multiply-add of a combine rounds each order its own way); the lanes write the entries of one
// row, and with one (m, d) equal logits get equal probabilities.
__device__ __forceinline__ online_stat warp_statistic(online_stat s)
{
    s = warp_combine(s);
    return make_stat(__shfl_sync(FULL_MASK, s.m, 0), __shfl_sync(FULL_MASK, s.d, 0));
}

#endif
