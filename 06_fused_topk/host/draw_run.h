/* Stage 06's draw of one token a row (--sample, and the default run's `sample` rows): fast's top-K
 * with the draw fused in (fast/draw.cuh), checked against the fp64 reference (draw_reference.h) on
 * every row, and only then timed; and FlashInfer's sampler beside it, checked by the draw's rule. */
#ifndef TOPK_DRAW_RUN_H
#define TOPK_DRAW_RUN_H

#include "../fused_topk.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    bool split;                /* fast_split draws, else fast_row */
    draw_params host;          /* as asked, per-row arrays in host memory (the caller's) */
    draw_request device;       /* the same with the arrays copied to the device, and the outputs */
    drawn_token *ref;          /* the reference's draw of each row */
    int *tokens;               /* the last checked run's, on the host */
    float *token_probs, *token_logprobs;
} draw_run;

/* The draw of top-k of the case's rows (k <= the case's ref_k) as `host` asks, by fast_split where
 * split, else fast_row; the reference's draws are computed here. */
draw_run draw_run_create(const topk_case *c, int k, draw_params host, bool split);
void draw_run_destroy(draw_run *s);

/* Poisons every output, runs the top-K with the draw once, copies the answer back (the top-K to the
 * case's idx_host/prob_host, the draw to the run's) and checks both. *topk gets the top-K's check. */
draw_check draw_run_check(draw_run *s, topk_case *c, int k, topk_check *topk);

/* Checks, then times the top-K with the draw; prints the row (its variant `name`) and appends it to
 * the CSV as `experiment`, compared with *baseline (bench_time says how). Returns whether it passed. */
bool draw_bench(const bench_settings *b, topk_case *c, int k, draw_run *s, const char *name,
                const char *experiment, measurement *baseline);

/* FlashInfer's sampler (flashinfer_draw) on the same case and settings as s: a token a row, checked
 * by the draw's rule (verify_draw_by_rule) against the reference's draws with each row's logits tied
 * with the K-th kept too (FlashInfer breaks no ties), then timed and printed as the row
 * `flashinfer`; or one line saying why it is left out (then it passes). */
bool flashinfer_draw_bench(const bench_settings *b, topk_case *c, int k, const draw_run *s,
                           const char *experiment, measurement *baseline);
/* Its check alone: poisons the outputs, draws once, returns verify_draw_by_rule's verdict. */
draw_check flashinfer_draw_verify(const topk_case *c, int k, const draw_run *s);

#ifdef __cplusplus
}
#endif
#endif
