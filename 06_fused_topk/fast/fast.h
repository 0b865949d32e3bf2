/* fast/fast.h — the limits of the fast kernels, and the constants the tests build rows from.
 * The files and their reading order: README.md in this folder. */
#ifndef FAST_FAST_H
#define FAST_FAST_H

#include <stdbool.h>
#include <stddef.h>

#include "../host/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest K of fast_row, fast_chunks, fast_split and fast: their shared memory is sized for it. */
#define FAST_MAX_K 1024

/* Blocks in fast_split's cluster where the GPU allows it (else 8): its grid has that many a row. */
#define SPLIT_MAX_BLOCKS 16

/* Where fast_row's sample of a row comes from (first_threshold.cuh). The row's body, from its
 * first 16-byte boundary on, is n "warp-rows" of 32 vectors, one a lane. The sample is `vectors`
 * of them, FAST_SAMPLED_WARP_ROW(i, vectors, n) for i < vectors: FAST_SAMPLE_VECTORS, or for a
 * guess at K >= FAST_WIDE_SAMPLE_K as many as hold FAST_WIDE_SAMPLE_LOGITS logits where the
 * guess's rank stays within the 64 keys the lanes hold, or FAST_NARROW_SAMPLE_VECTORS where even
 * FAST_SAMPLE_VECTORS would take the rank past them. The tests build rows that fool the guess
 * from these. */
#define FAST_SAMPLE_VECTORS 8
#define FAST_NARROW_SAMPLE_VECTORS 4
#define FAST_WIDE_SAMPLE_K 128
#define FAST_WIDE_SAMPLE_LOGITS 2048
#define FAST_SAMPLED_WARP_ROW(i, vectors, n) ((2 * (i) + 1) * (n) / (2 * (vectors)))

#ifdef __cplusplus
}
#endif
#endif
