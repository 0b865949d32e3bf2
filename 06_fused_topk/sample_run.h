/* Stage 06's draw of one token a row (--sample, and the default run's `sample` rows): fast's top-K
 * with the draw fused in (fast/draw.cuh), checked against the fp64 reference (common/sample.h) on
 * every row, and only then timed. */
#ifndef SAMPLE_RUN_H
#define SAMPLE_RUN_H

#include "fused_topk.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    bool split;                /* fast_split draws, else fast_row */
    sample_params host;        /* as asked, per-row arrays in host memory (the caller's) */
    sample_request device;     /* the same with the arrays copied to the device, and the outputs */
    sample_draw *ref;          /* the reference's draw of each row */
    int *tokens;               /* the last checked run's, on the host */
    float *token_probs, *token_logprobs;
} sample_run;

/* The draw of top-k of the case's rows (k <= the case's ref_k) as `host` asks, by fast_split where
 * split, else fast_row; the reference's draws are computed here. */
sample_run sample_run_create(const topk_case *c, int k, sample_params host, bool split);
void sample_run_destroy(sample_run *s);

/* Poisons every output, runs the top-K with the draw once, copies the answer back (the top-K to the
 * case's idx_host/prob_host, the draw to the run's) and checks both. *topk gets the top-K's check. */
sample_check sample_run_check(sample_run *s, topk_case *c, int k, topk_check *topk);

/* Checks, then times the top-K with the draw; prints the row (its variant `name`) and appends it to
 * the CSV as `experiment`. Returns whether it passed. */
bool sample_bench(const bench_settings *b, topk_case *c, int k, sample_run *s, const char *name,
                  const char *experiment);

#ifdef __cplusplus
}
#endif
#endif
