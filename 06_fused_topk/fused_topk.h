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
/* A row over many warps (slices) that agree on a bound first; the row's last warp selects. */
extern const topk_variant fast_split_topk_variant;
/* fast_row when there are enough rows to fill the GPU, fast_split otherwise. */
extern const topk_variant fast_topk_variant;

/* How many blocks fast_split (and fast) give each row of this shape: 1 means no split. */
int fast_slices(size_t rows, size_t cols, bool split);

#ifdef __cplusplus
}
#endif
#endif
