// fast/rank_key.cuh — a candidate as one 64-bit key whose unsigned order is the answer's order.
//
// What it does: packs a logit and its index so that one unsigned compare decides which of two
// candidates ranks first (larger logit, or equal logit at a lower index), and unpacks them again.
// Assumes: indices fit in 31 bits (a row of fewer than 2^31 logits).
// Read next: logits16.cuh, how 16 bytes of logits are loaded and widened.
#ifndef FAST_RANK_KEY_CUH
#define FAST_RANK_KEY_CUH

// A candidate ranks before another if its logit is larger, or equal at a lower index. Packing the
// logit's ordered bits above the complement of the index gives a key whose unsigned order is
// exactly that rank, so every comparison is one 64-bit compare. Key 0 ranks below every real
// candidate (the key of -inf is 0x007FFFFF...): it marks an empty slot.
typedef unsigned long long rank_key;

// A float's bits made to sort as unsigned integers: every bit of a negative one flipped, only the
// sign bit of a positive one.
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
