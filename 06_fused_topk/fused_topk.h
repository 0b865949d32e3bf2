/* Stage 06's top-K variants, callable without the stage's main() (the tests link them). */
#ifndef FUSED_TOPK_H
#define FUSED_TOPK_H

#include "../common/sample.h"
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
/* The exercise (EXERCISE_VARIANT): K = 1, the argmax carried in the online statistic, a warp per row.
 * ./run links the scaffold, exercise.cu; ./run_solution and the tests, solution/exercise.cu. */
extern const topk_variant fused_topk_exercise_variant;

/* A token a row drawn from the top K (common/sample.h says how), fused into fast_row and
 * fast_split (fast/draw.cuh). Everything here is device memory: the per-row arrays of params, and
 * rows of each output. */
typedef struct {
    sample_params params;
    int *tokens;
    float *token_probs, *token_logprobs;
} sample_request;

/* fast's top-K of the rows, as the variant computes it (fast_split where split, else fast_row),
 * and the draw: one launch, on the default stream, checked. */
void fast_topk_sample(bool split, const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                      float *probs, const sample_request *draw);

/* Whether fast takes fast_split for this many rows: fewer rows than SMs, on a GPU with clusters. */
bool fast_takes_split(size_t rows, logit_dtype dtype);

#ifdef __cplusplus
}
#endif
#endif
