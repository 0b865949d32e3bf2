/* Stage 06's top-K variants, callable without the stage's main() (the tests link them). */
#ifndef FUSED_TOPK_H
#define FUSED_TOPK_H

#include <cuda_runtime_api.h>

#include "host/draw_reference.h"
#include "host/topk_bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Softmax of every row written out (stage 05), a full sort of each row (CUB), the first K kept. */
extern const topk_variant unfused_topk_variant;
/* The baseline a user would assemble from libraries: CUB's DeviceBatchedTopK of the logits (ties to
 * the lower index), stage 05's (m, d) of each row, the K pairs sorted and their probabilities
 * (library/library_topk.cu; built where CCCL 3.6 is found, library/cccl.mk). */
extern const topk_variant library_topk_variant;
/* Its first step alone: DeviceBatchedTopK's K logits of each row, unsorted (logits_only). */
extern const topk_variant cub_topk_variant;
/* FlashInfer's top-K (its FilteredTopK kernel, ties to the lower index), logits_only too
 * (library/flashinfer_topk.cu; built where FlashInfer's headers are found, library/flashinfer.mk). */
extern const topk_variant flashinfer_topk_variant;
/* One warp per row, each lane a sorted register array of KMAX >= K candidates (K <= 32, float32). */
extern const topk_variant fused_topk_variant;
/* One warp per row and one threshold for the warp: a vote a chunk, survivors appended by ballot
 * to a buffer in shared memory, merged into the best K (K <= 64, float32). */
extern const topk_variant threshold_topk_variant;
/* One warp per row, 16-byte loads, a threshold, candidates in shared memory. */
extern const topk_variant fast_row_topk_variant;
/* A row cut into chunks, a warp each; the last warp of a row to finish merges the chunks' lists. */
extern const topk_variant fast_chunks_topk_variant;
/* A row over a cluster of 16 blocks (sm_90) that agree on a bound first; the first block selects. */
extern const topk_variant fast_split_topk_variant;
/* fast_split for a batch of one, fast_chunks for a batch too small to fill the GPU, fast_row above. */
extern const topk_variant fast_topk_variant;
/* fast without its softmax: the same kernels, the K logits written sorted (logits_only), what the
 * top-K-alone libraries compute. */
extern const topk_variant fast_logits_topk_variant;
/* The exercise (EXERCISE_VARIANT): K = 1, the argmax carried in the online statistic, a warp per row.
 * ./run links the scaffold, exercise.cu; ./run_solution and the tests, solution/exercise.cu. */
extern const topk_variant fused_topk_exercise_variant;

/* The kernel fast runs for top-k of rows x cols logits of dtype on the open GPU: fast_split,
 * fast_chunks or fast_row (fast/fast.cu says by what rule). */
const topk_variant *fast_picks(size_t rows, size_t cols, int k, logit_dtype dtype);
/* fast_topk_variant's run, every launch on `stream` (so it can be captured in a CUDA graph). */
int fast_topk_on_stream(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices, float *probs,
                        void *workspace, cudaStream_t stream);

/* Whether the fast kernels can be launched as programmatic dependent launches here (compute
 * capability 9.0 and a build for sm_90; fast/dependent_launch.cuh). */
bool fast_pdl_available(logit_dtype dtype);
/* One row's top-K as fast takes a batch of one, enqueued on `stream` (checked); `dependent`: as a
 * programmatic dependent launch, which the kernel waits out before it touches global memory (only
 * where fast_pdl_available). A decode loop's step (decode_loop.h). */
void fast_launch_one_row(const void *x, logit_dtype dtype, size_t cols, int k, int *indices, float *probs,
                         cudaStream_t stream, bool dependent);

/* A token a row drawn from the top K (host/draw_reference.h says how), fused into fast_row and
 * fast_split (fast/draw.cuh). Everything here is device memory: the per-row arrays of params, and
 * rows of each output. */
typedef struct {
    draw_params params;
    int *tokens;
    float *token_probs, *token_logprobs;
} draw_request;

/* The top-K of the rows and the draw, in one launch on `stream`, checked: fast_split's kernel where
 * split, else fast_row's (fast_chunks has no draw). */
void fast_topk_draw(bool split, const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                    float *probs, const draw_request *draw, cudaStream_t stream);

/* Whether fast takes fast_split for this many rows (fast_picks). */
bool fast_takes_split(size_t rows, logit_dtype dtype);

/* FlashInfer's sampler, top_k_top_p_sampling_from_logits with top_k_first, on float32 logits
 * (library/flashinfer_draw.cu; built where FlashInfer's headers are found): a token a row from the
 * top k at temperature T > 0 and top-p P, from its own random numbers (seed), enqueued on the default
 * stream and checked. valid[r] says whether row r's draw succeeded. The workspace is zeroed device
 * memory of flashinfer_draw_workspace_bytes. Returns its launches, a library call counted as one. */
int flashinfer_draw(const float *x, size_t rows, size_t cols, int k, float temperature, float top_p, uint64_t seed,
                    int *tokens, bool *valid, void *workspace);
/* Why it cannot draw from logits of dtype as `how` asks, as a phrase ("needs ..."), or NULL when it
 * can: scalar settings only, T > 0, no min-p, float32. */
const char *flashinfer_draw_why_not(logit_dtype dtype, const draw_params *how);
size_t flashinfer_draw_workspace_bytes(size_t rows, size_t cols, int k);
/* A floor on the DRAM bytes its path moves a row (the masked path passes over the row 7 times). */
double flashinfer_draw_bytes_per_row(size_t cols, int k);

#ifdef __cplusplus
}
#endif
#endif
