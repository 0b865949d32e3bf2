// fast/logits16.cuh — a 16-byte vector of logits (4 float32 or 8 bf16/fp16) widened to floats,
// and a row cut into a head, a body of such vectors and a tail.
// Read next: fast_exp.cuh.
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
struct logits16; // how a vector unpacks, and the largest of G vectors

template <>
struct logits16<float> {
    static const int count = 4;
    static const unsigned negative_infinity = 0xFF800000u; // a word of -inf logits
    static const bool compares_packed = false; // offers compare floats
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

// The largest of G vectors of 16-bit logits, two at a time in the packed format T2; only the
// final pair is widened.
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
    static const bool compares_packed = false;
    // A bfloat16 is the top half of a float32, so a shift or a mask widens it.
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
    // Offers compare the packed halves with the threshold and widen only the survivors.
    static const bool compares_packed = true;
    // Bit 4u + i of the mask is the low logit of word i of vector u, bit 16 + 4u + i the high one.
    // A 16-bit x is above t exactly when it is above t rounded down to 16 bits. A NaN threshold
    // stays NaN, and the unordered compare then passes every logit.
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
    // The high or the low logit of a word of two.
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

// A head up to the row's first 16-byte boundary, a body of vectors, a tail shorter than a vector.
template <typename T>
struct row_parts {
    const T *logits;
    int head, vectors, tail; // tail: its first index
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

// The first vector of slice `slice` of `slices` of the body; `slices` is a power of two, so the
// division is a shift.
template <typename T>
__device__ __forceinline__ int slice_start(const row_parts<T> &p, int slice, int slices)
{
    return (int)((unsigned long long)p.vectors * slice >> (__ffs(slices) - 1));
}


#endif
