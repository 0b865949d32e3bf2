// fast/rank_key.cuh — a candidate as one 64-bit key: a larger key ranks first.
// Read next: logits16.cuh.
#ifndef FAST_RANK_KEY_CUH
#define FAST_RANK_KEY_CUH

// High half: the logit's ordered bits. Low half: the complemented index, so ties favour lower
// indices. Key 0 ranks below every real key and marks an empty slot.
typedef unsigned long long rank_key;

// Flips a negative float's bits, a positive one's sign.
__device__ __forceinline__ unsigned ordered_bits(float x)
{
    const unsigned u = __float_as_uint(x);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ __forceinline__ float from_ordered_bits(unsigned ordered)
{
    return __uint_as_float((ordered & 0x80000000u) ? (ordered & 0x7FFFFFFFu) : ~ordered);
}

__device__ __forceinline__ rank_key make_key(float x, int index)
{
    return (rank_key)ordered_bits(x) << 32 | (unsigned)~index;
}

__device__ __forceinline__ float key_logit(rank_key key) { return from_ordered_bits((unsigned)(key >> 32)); }

__device__ __forceinline__ int key_index(rank_key key) { return (int)~(unsigned)key; }

#endif
