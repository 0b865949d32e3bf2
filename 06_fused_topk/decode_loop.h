/* A server's decode loop, measured: after every forward step the sampler takes the top K of one
 * row of logits, so the top-K runs as a batch of one, over and over, each time on logits the GPU
 * has just written and never read.
 *
 * Here N such steps run back to back, token t on row t of a case of N fresh rows (so no step finds
 * its logits in the L2, which is flushed before each replay as well), all N launches captured in one
 * CUDA graph and replayed: what is left between two steps is the GPU's own gap between two kernels,
 * not the host's launch path. Each launch is fast as it takes a batch of one (fused_topk.h,
 * fast_launch_one_row), and where the GPU has it (compute capability 9.0) a programmatic dependent
 * launch of the one before, which lets the next step's blocks be placed while this one ends
 * (fast/dependent_launch.cuh). The time per token is the replay's median over N.
 *
 * A server's LM head writes the logits just before the sampler reads them, so they may still be in
 * the L2: the loop from the L2 has every token read row 0, which after the first stays there. */
#ifndef DECODE_LOOP_H
#define DECODE_LOOP_H

#include <stdbool.h>

#include "fused_topk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tokens of the default run's loop: 512 rows of 128256 float32 logits are 263 MB, several
 * times the L2 of the GPUs the course measures. */
#define DECODE_TOKENS 512

/* Where each token's logits come from: its own fresh row (DRAM), or row 0, read by every token (L2). */
typedef enum { DECODE_FROM_DRAM, DECODE_FROM_L2 } decode_source;

/* A case of `tokens` rows for the loop `from`: fresh rows (DRAM), or every row a copy of row 0, so
 * that row t's reference is the answer of token t, which reads row 0 (L2). */
topk_case decode_case_create(size_t tokens, size_t cols, logit_dtype dtype, input_spec input, uint64_t seed, int k,
                             decode_source from);

typedef struct {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
} decode_graph;

/* The c->rows steps, token t reading row t (DRAM) or row 0 (L2, on a case from decode_case_create)
 * and writing its top-k (k <= c->ref_k) at row t of c's outputs, captured in one graph;
 * `dependent`: each launch a programmatic dependent launch of the one before (only where
 * fast_pdl_available). */
decode_graph decode_graph_create(topk_case *c, int k, bool dependent, decode_source from);
void decode_graph_destroy(decode_graph *g);
/* One replay, enqueued on the default stream. */
void decode_graph_replay(const decode_graph *g);
/* Poisons c's outputs, replays once, and verifies every token's answer against the reference. */
topk_check decode_graph_check(topk_case *c, int k, const decode_graph *g);

/* One line where fast runs the loop without programmatic dependent launch here (it needs compute
 * capability 9.0 and a build for sm_90); nothing where it has it. */
void decode_loop_say_launches(void);

/* The loop, K = 50, over DECODE_TOKENS float32 rows of V = cols from `input`, its logits `from` DRAM
 * or the L2: fast_no_pdl (the graph with plain launches, the baseline) and fast (with programmatic
 * dependent launch; where the GPU has none, only fast, with plain launches), each verified and then
 * timed, rows of experiment decode_loop (DRAM) or decode_loop_l2 (L2) in the table and the CSV.
 * Returns the number of rows that failed. */
int decode_loop_experiment(const bench_settings *s, size_t cols, input_spec input, uint64_t seed,
                           decode_source from);

#ifdef __cplusplus
}
#endif
#endif
