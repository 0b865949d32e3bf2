/* fast/fast.h — the limits of the fast kernels, and the constants the tests build rows from.
 *
 * The fast kernels, one idea a file, in reading order:
 *   rank_key.cuh     a candidate as one 64-bit key: one compare decides its rank
 *   logits16.cuh     16-byte loads of float32, bf16 or fp16 logits; a row's head, body and tail
 *   fast_exp.cuh     the online statistic folded a chunk at a time, with one ex2 a logit
 *   warp_sort.cuh    bitonic sorts and merges of keys by one warp (or a block), in registers where they fit
 *   candidates.cuh   a warp's candidate buffer in shared memory, and the threshold it sets
 *   lane_counts.cuh  counting across a warp: a running sum, a digit's counts, the digit of a rank
 *   select.cuh       past K = 512: the best K of unsorted candidates by a radix select
 *   ballot_append.cuh    a chunk of logits tested against the threshold and appended, by ballots
 *   first_threshold.cuh  the first threshold, from a sample spread over the row
 *   warp_row.cuh     one warp's pass over one row
 *   fast_row.cuh     the kernel: a warp per row                          (many rows)
 *   chunk_merge.cuh  a row's chunks: what each chunk's warp leaves, and the last one's merge
 *   fast_chunks.cuh  the kernel: a row cut into chunks, a warp per chunk (a few rows)
 *   cluster_kth.cuh  the K-th largest of a block's numbers, to 24 bits
 *   fast_split.cuh   the kernel: a row over a cluster of 16 blocks      (a batch of one)
 *   draw.cuh         one token drawn from the row's sorted winners
 *   dependent_launch.cuh  a kernel's wait for the launch ahead (programmatic dependent launch)
 *   per_device.cuh   the launches' host-side caches, one entry a device
 *   fast.cu          the variants, and how fast picks between the three kernels */
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

/* Where fast_row's sample of a row comes from (first_threshold.cuh explains the sample and its
 * guess; read this after it). The row's body, from its first 16-byte boundary on, is n "warp-rows" of 32
 * vectors, one a lane. The sample is `vectors` of them, FAST_SAMPLED_WARP_ROW(i, vectors, n) for
 * i < vectors: FAST_SAMPLE_VECTORS, or for a guess at K >= FAST_WIDE_SAMPLE_K as many as hold
 * FAST_WIDE_SAMPLE_LOGITS logits where the guess's rank stays within the 64 keys the lanes hold,
 * or FAST_NARROW_SAMPLE_VECTORS where even FAST_SAMPLE_VECTORS would take the rank past them.
 * Here, not in first_threshold.cuh, so that a test can build rows that fool the guess. */
#define FAST_SAMPLE_VECTORS 8
#define FAST_NARROW_SAMPLE_VECTORS 4
#define FAST_WIDE_SAMPLE_K 128
#define FAST_WIDE_SAMPLE_LOGITS 2048
#define FAST_SAMPLED_WARP_ROW(i, vectors, n) ((2 * (i) + 1) * (n) / (2 * (vectors)))

#ifdef __cplusplus
}
#endif
#endif
