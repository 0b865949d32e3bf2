// fast/logits16.cuh — logits as the fast kernels load them: 16 bytes at a time.
//
// What it does: a 16-byte load holds 4 float32 or 8 bf16/fp16 logits (the 16 in logits16 is the
// load's bytes, not the logits' bits). logits16<T> says how such a vector becomes floats, how to
// take the largest of several vectors cheaply (two 16-bit logits per instruction) and, for fp16,
// which of a vector's logits are above a threshold while they are still packed; split_row cuts a
// row into a scalar head, a body of aligned vectors and a scalar tail, since a row of odd length
// can start anywhere.
// Assumes: T is float, __nv_bfloat16 or __half; a row has fewer than 2^31 logits.
// Read next: fast_exp.cuh, how the vectors are folded into the online statistic.
#ifndef FAST_LOGITS16_CUH
#define FAST_LOGITS16_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

template <int N>
__device__ __forceinline__ float largest(const float (&v)[N])
{
    float m = v[0];
#pragma unroll
    for (int j = 1; j < N; j++)
        m = fmaxf(m, v[j]);
    return m;
}

template <typename T>
struct logits16; // how 16 bytes of logits become floats, and the largest of G such vectors

template <>
struct logits16<float> {
    static const int count = 4;
    static const unsigned negative_infinity = 0xFF800000u; // a 32-bit word of -inf logits
    static const bool compares_packed = false; // the offer compares floats (warp_offer_chunk)
    static __device__ __forceinline__ void unpack(uint4 r, float (&v)[4])
    {
        v[0] = __uint_as_float(r.x), v[1] = __uint_as_float(r.y), v[2] = __uint_as_float(r.z), v[3] = __uint_as_float(r.w);
    }
    template <int G>
    static __device__ __forceinline__ float largest(const uint4 *r)
    {
        float m = -INFINITY;
#pragma unroll
        for (int g = 0; g < G; g++) {
            float v[4];
            unpack(r[g], v);
            m = fmaxf(m, ::largest(v));
        }
        return m;
    }
};

// A 16-bit logit widens to float exactly and in order, so the largest of G vectors is taken two at
// a time in the packed format T2 (one instruction for two logits), and only the last two are widened.
template <typename T2, int G>
__device__ __forceinline__ float largest_of_pairs(const uint4 *r)
{
    T2 m = *reinterpret_cast<const T2 *>(&r[0].x);
#pragma unroll
    for (int g = 0; g < G; g++) {
        const unsigned w[4] = {r[g].x, r[g].y, r[g].z, r[g].w};
#pragma unroll
        for (int i = g == 0; i < 4; i++)
            m = __hmax2(m, *reinterpret_cast<const T2 *>(&w[i]));
    }
    return fmaxf(__low2float(m), __high2float(m));
}

template <>
struct logits16<__nv_bfloat16> {
    static const int count = 8;
    static const unsigned negative_infinity = 0xFF80FF80u;
    // Its widening is a shift, so the offer compares floats as for float32: a packed compare would
    // save bf16 little and needs registers that its kernel does not have to spare.
    static const bool compares_packed = false;
    // bfloat16 is the top half of a float32: a shift (or a mask) is the whole conversion.
    static __device__ __forceinline__ void unpack(uint4 r, float (&v)[8])
    {
        const unsigned w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
        for (int i = 0; i < 4; i++)
            v[2 * i] = __uint_as_float(w[i] << 16), v[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
    }
    template <int G>
    static __device__ __forceinline__ float largest(const uint4 *r) { return largest_of_pairs<__nv_bfloat162, G>(r); }
};

template <>
struct logits16<__half> {
    static const int count = 8;
    static const unsigned negative_infinity = 0xFC00FC00u;
    // fp16 widens by a conversion. The offer compares the packed halves with the threshold instead
    // (one `set` for two logits, one `lop3` puts both bits in the mask) and widens only the
    // candidates, so the 32 floats of the fold need not live until the offer.
    static const bool compares_packed = true;
    // Bit 4u + i of the mask is the low logit of word i of vector u (logit 2i, at the lower
    // address), bit 16 + 4u + i the high one (logit 2i + 1). A 16-bit x is above a float t exactly
    // when it is above t rounded down to 16 bits, rd(t): rd(t) is the largest 16-bit value <= t, so
    // none lies in (rd(t), t]. A NaN threshold (the warp's start, candidates.cuh) stays NaN, and the
    // unordered compare lets everything through, as "!(x <= NaN)" does.
    template <int G>
    static __device__ __forceinline__ unsigned above(const uint4 *r, float threshold)
    {
        const __half2 t = __half2half2(__float2half_rd(threshold));
        unsigned mask = 0;
#pragma unroll
        for (int u = 0; u < G; u++) {
            const unsigned w[4] = {r[u].x, r[u].y, r[u].z, r[u].w};
#pragma unroll
            for (int i = 0; i < 4; i++)
                mask |= __hgtu2_mask(*reinterpret_cast<const __half2 *>(&w[i]), t) & (0x00010001u << (4 * u + i));
        }
        return mask;
    }
    // One logit of a 32-bit word of two: the high one (at the higher address) if `high`, else the low.
    static __device__ __forceinline__ float of_word(unsigned word, int high)
    {
        return __half2float(__ushort_as_half((unsigned short)(high ? word >> 16 : word)));
    }
    static __device__ __forceinline__ void unpack(uint4 r, float (&v)[8])
    {
        const unsigned w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const float2 f = __half22float2(*reinterpret_cast<const __half2 *>(&w[i]));
            v[2 * i] = f.x, v[2 * i + 1] = f.y;
        }
    }
    template <int G>
    static __device__ __forceinline__ float largest(const uint4 *r) { return largest_of_pairs<__half2, G>(r); }
};

__device__ __forceinline__ float logit_to_float(float x) { return x; }
__device__ __forceinline__ float logit_to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float logit_to_float(__half x) { return __half2float(x); }

// A row of odd length starts anywhere: a head up to the first 16-byte boundary (fewer than one
// vector of logits), a body of 16-byte vectors, a tail (fewer than one vector).
template <typename T>
struct row_parts {
    const T *logits;
    int head, vectors, tail; // tail: the index of the tail's first logit
    const uint4 *body;
};

template <typename T>
__device__ __forceinline__ row_parts<T> split_row(const T *xr, size_t cols)
{
    row_parts<T> p;
    p.logits = xr;
    p.head = (int)min(cols, (size_t)((16 - ((uintptr_t)xr & 15)) & 15) / sizeof(T));
    p.vectors = (int)((cols - p.head) / logits16<T>::count);
    p.tail = p.head + p.vectors * logits16<T>::count;
    p.body = reinterpret_cast<const uint4 *>(xr + p.head);
    return p;
}

// Slice `slice` of `slices` of the row's body starts at this vector (slice == slices: the end).
// `slices` is a power of two (a cluster of 16 or 8 blocks), so the division is a shift: a 64-bit
// division is a subroutine of some hundred instructions, and this is on the way to the first load.
template <typename T>
__device__ __forceinline__ int slice_start(const row_parts<T> &p, int slice, int slices)
{
    return (int)((unsigned long long)p.vectors * slice >> (__ffs(slices) - 1));
}


#endif
