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
 * (fast/dependent_launch.cuh). The time per token is the replay's median over N. */
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

typedef struct {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
} decode_graph;

/* The c->rows steps over the case's rows, token t writing its top-k (k <= c->ref_k) at row t of c's
 * outputs, captured in one graph; `dependent`: each launch a programmatic dependent launch of the
 * one before (only where fast_pdl_available). */
decode_graph decode_graph_create(topk_case *c, int k, bool dependent);
void decode_graph_destroy(decode_graph *g);
/* One replay, enqueued on the default stream. */
void decode_graph_replay(const decode_graph *g);
/* Poisons c's outputs, replays once, and verifies every token's answer against the reference. */
topk_check decode_graph_check(topk_case *c, int k, const decode_graph *g);

/* The default run's loop, K = 50, for V = 50257 and 128256 (float32): fast_no_pdl (the graph with
 * plain launches, the baseline) and fast (with programmatic dependent launch; where the GPU has none,
 * only fast, with plain launches, and a line that says so), each verified and then timed, rows of
 * experiment decode_loop in the table and the CSV. Returns the number of rows that failed. */
int decode_loop_experiment(const bench_settings *s, input_spec input, uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
