/* --output's files: PREFIX_indices.npy and PREFIX_probs.npy, and with --sample PREFIX_tokens.npy,
 * PREFIX_token_probs.npy and PREFIX_token_logprobs.npy. Opened before the GPU, so that a path that
 * cannot be written is refused at once (outfile.h); written only when the answer passed, then put in
 * place together. */
#ifndef TOPK_OUTPUTS_H
#define TOPK_OUTPUTS_H

#include <stdbool.h>
#include <stdio.h>

#include "../../common/cli.h"
#include "draw_run.h"
#include "topk_flags.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TOPK_OUTPUT_FILES 5

typedef struct {
    const char *prefix;               /* --output's PREFIX; NULL: no files */
    int n;                            /* 2, or 5 with --sample */
    FILE *files[TOPK_OUTPUT_FILES];   /* indices, probs, tokens, token_probs, token_logprobs */
} topk_outputs;

/* Refuses a file the run would write (--csv, --output's) that is one it reads (--input, or a .npy of
 * one value a row) or another one it writes: the rename at the end would replace it. */
void topk_outputs_refuse_overwriting(const cli_options *o, const topk_options *t);

/* Opens --output's temporaries (none without --output); a path that cannot be written: one line,
 * exit 2. */
topk_outputs topk_outputs_open(const topk_options *t);

/* Writes the case's top k (k a row; the files' shape is shape[0..ndim-1] with K last) and, with
 * `drawn`, its tokens (one a row: the shape without K), then puts every file in place and says so,
 * naming `writer`. A failed write: one line, exit 1. */
void topk_outputs_write(topk_outputs *out, const topk_case *c, const size_t *shape, int ndim,
                        const draw_run *drawn, const char *writer);

/* Leaves every file as it was, and says so: `what` failed verification. */
void topk_outputs_abandon(topk_outputs *out, const char *what);

#ifdef __cplusplus
}
#endif
#endif
