/* The random sweep (test_sweep.c): for each stage, cases drawn from a seed, each run by every
 * variant of the stage that handles it and checked against the fp64 reference, outputs poisoned
 * first. sweep.c says how a case is drawn.
 *
 * The environment sets a run:
 *   SWEEP_SEED=S     the seed (default 2026, so that `make test` is the same run every time)
 *   SWEEP_CASES=C    cases a stage (default 1000)
 *   SWEEP_CASE=I     case I alone, as the full run draws it: each case has a random stream of its
 *                    own, from the seed, the stage and its index
 *   SWEEP_VERBOSE=1  each case printed before it runs (to find the case behind a crash)
 * A stage prints "sweep: stage N, seed S, C cases" before its first case, and a failure names the
 * case, so `SWEEP_SEED=S SWEEP_CASE=I tests/build/run_tests --filter sweep/stage0N` runs it again.
 * Each stage's 1000 cases take 10 to 70 s on an H100, the six side by side (stage 04 the longest:
 * thread_per_row walks a row of 2^24 in one thread). */
#ifndef TESTS_SWEEP_H
#define TESTS_SWEEP_H

#include <stdbool.h>

#include "../common/bench.h"

/* The sweep of a softmax stage. */
typedef struct {
    int stage;
    const softmax_variant *const *variants;
    int n_variants;
    const input_spec *inputs; /* the ranges logits are drawn from, one a case */
    int n_inputs;
    bool matrices; /* half the cases have several rows; otherwise every case is one softmax over n */
} softmax_sweep;

void sweep_softmax(const softmax_sweep *s);

/* The sweep of stage 06: every top-K variant, every dtype; inputs as above (those beyond fp16's
 * range are not drawn for fp16). */
void sweep_topk(const input_spec *inputs, int n_inputs);

#endif
