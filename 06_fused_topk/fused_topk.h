/* Stage 06's top-K variants, callable without the stage's main() (the tests link them). */
#ifndef FUSED_TOPK_H
#define FUSED_TOPK_H

#include "../common/topk_bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Softmax of every row written out (stage 05), a full sort of each row (CUB), the first K kept. */
extern const topk_variant unfused_topk_variant;
/* One warp per row, each lane a sorted register array of K candidates (K <= 32, float32). */
extern const topk_variant fused_topk_variant;
/* One warp per row, 16-byte loads, a threshold, candidates in shared memory. */
extern const topk_variant fast_row_topk_variant;
/* A row over a cluster of 16 blocks (sm_90) that agree on a bound first; the first block selects. */
extern const topk_variant fast_split_topk_variant;
/* fast_row when there are enough rows to fill the GPU, fast_split otherwise. */
extern const topk_variant fast_topk_variant;

/* fast_row guesses each row's first threshold from a sample: `vectors` 16-byte vectors a lane,
 * from the warp-rows (32 vectors each) FAST_SAMPLED_WARP_ROW(i, vectors, n), i < vectors, of the n
 * in the row's body (from its first 16-byte boundary on). `vectors` is FAST_SAMPLE_VECTORS, or for
 * K >= FAST_WIDE_SAMPLE_K as many as hold FAST_WIDE_SAMPLE_LOGITS logits (16 float32 vectors) where
 * the guess's rank stays within the 64 keys the lanes hold (K = 256 at V = 50257, not K = 1024).
 * Here so that a test can build rows that fool the guess. */
#define FAST_SAMPLE_VECTORS 8
#define FAST_WIDE_SAMPLE_K 128
#define FAST_WIDE_SAMPLE_LOGITS 2048
#define FAST_SAMPLED_WARP_ROW(i, vectors, n) ((2 * (i) + 1) * (n) / (2 * (vectors)))

/* The largest K of fast_row, fast_split and fast: shared memory is sized for it. */
#define FAST_MAX_K 1024

/* Whether fast takes fast_split for this many rows: fewer rows than SMs, on a GPU with clusters. */
bool fast_takes_split(size_t rows, logit_dtype dtype);

#ifdef __cplusplus
}
#endif
#endif
