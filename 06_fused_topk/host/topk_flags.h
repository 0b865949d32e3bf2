/* Stage 06's own flags, declared once in topk_flags (read by the parser, --help and the tests), and
 * the checks across them and the shared flags that need no file and no GPU. */
#ifndef TOPK_FLAGS_H
#define TOPK_FLAGS_H

#include <stdbool.h>
#include <stddef.h>

#include "../../common/cli.h"
#include "dtype.h"
#include "row_order.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int k;                  /* --k: how many of the largest probabilities; 0 when not given */
    const char *k_path;     /* --k FILE.npy: a K a row (int32); k is then 0 */
    logit_dtype dtype;      /* --dtype: the logits' type (default float32) */
    bool dtype_given;
    row_order order;        /* --order: each random row as drawn (index) or sorted ascending */
    bool order_given;
    const char *experiment; /* --experiment: a named experiment in place of the default run; NULL: none */
    const char *input_path;    /* --input: logits from a .npy file; NULL: random logits */
    const char *output_prefix; /* --output: write PREFIX_indices.npy and PREFIX_probs.npy */
    /* --sample: a token a row drawn from the top K, and how (draw_reference.h). */
    bool sample;
    bool sampling_given;    /* --temperature, --top-p or --min-p was on the command line */
    float temperature, top_p, min_p;           /* default 1, 1, 0 */
    const char *temperature_path, *top_p_path; /* or a value a row from a .npy file (float32) */
} topk_options;

/* The one named experiment (--experiment). */
#define TOPK_SERVING "serving"

extern const cli_flag topk_flags[];

void topk_options_defaults(topk_options *t);

/* Stage 06's flags for stage_parse(): topk_flags into `t`, the logits drawn as --dtype (nothing drawn
 * with --input), and the refusals of what the shared flags and stage 06's cannot mean together (with
 * --input, a shape, --range, --dist or, without --sample, --seed; a row past 2^31 - 1 logits). */
cli_own_flags topk_own_flags(topk_options *t);

#ifdef __cplusplus
}
#endif
#endif
