/* Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3",
 * SC11): a counter-based generator. Its output is a pure function of a 128-bit counter and a 64-bit
 * key: ten rounds, each two 32 x 32 -> 64-bit multiplications whose high and low halves are mixed
 * with the other words and the key (a Feistel-like network), the key bumped by two Weyl constants
 * between rounds. No state is carried from one number to the next, so any thread can compute the
 * number for any counter, in any order, and get the same bits.
 *
 * Stage 06's draw keys it by the seed and counts by the row: a row's uniform depends on (seed, row)
 * alone, never on which thread, block or kernel computes it, and the fp64 reference (draw_reference.c)
 * computes the very same one. Header-only, for C11 host code and CUDA device code alike. */
#ifndef TOPK_PHILOX_H
#define TOPK_PHILOX_H

#include <stdint.h>

#ifdef __CUDACC__
#define PHILOX_HD __host__ __device__
#else
#define PHILOX_HD
#endif

typedef struct {
    uint32_t v[4];
} philox4x32;

/* The round's multipliers and the key's Weyl increments (the published constants). */
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

static inline PHILOX_HD philox4x32 philox4x32_10(philox4x32 c, uint32_t k0, uint32_t k1)
{
    for (int round = 0; round < 10; round++) {
        if (round) {
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
        }
        const uint64_t p0 = (uint64_t)PHILOX_M0 * c.v[0], p1 = (uint64_t)PHILOX_M1 * c.v[2];
        const philox4x32 next = {{(uint32_t)(p1 >> 32) ^ c.v[1] ^ k0, (uint32_t)p1,
                                  (uint32_t)(p0 >> 32) ^ c.v[3] ^ k1, (uint32_t)p0}};
        c = next;
    }
    return c;
}

/* The draw's uniform for (seed, row), in [0, 1): the top 24 bits of the first output word, times
 * 2^-24. A whole number below 2^24 times a power of two is exact in float and in double, so the GPU
 * and the CPU reference see the same u. */
static inline PHILOX_HD double philox_uniform(uint64_t seed, uint64_t row)
{
    const philox4x32 counter = {{(uint32_t)row, (uint32_t)(row >> 32), 0u, 0u}};
    const philox4x32 out = philox4x32_10(counter, (uint32_t)seed, (uint32_t)(seed >> 32));
    return (double)(out.v[0] >> 8) * (1.0 / 16777216.0);
}

#endif
