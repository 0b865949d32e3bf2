#include "topk_outputs.h"

#include <stdlib.h>
#include <string.h>

#include "../../common/check.h"
#include "../../common/outfile.h"
#include "npy.h"

/* The files' names, PREFIX_<name>.npy, in topk_outputs' order. */
static const char *const output_names[TOPK_OUTPUT_FILES] = {"indices", "probs", "tokens", "token_probs",
                                                            "token_logprobs"};

static int output_count(bool draw) { return draw ? TOPK_OUTPUT_FILES : 2; }

/* --output's file `name`: PREFIX_name.npy, to be freed. */
static char *output_path(const char *prefix, const char *name)
{
    const size_t len = strlen(prefix) + strlen(name) + sizeof "_.npy";
    char *path = xmalloc(len, "an output file's name");
    snprintf(path, len, "%s_%s.npy", prefix, name);
    return path;
}

void topk_outputs_refuse_overwriting(const cli_options *o, const topk_options *t)
{
    const struct {
        const char *flag, *path;
    } reads[] = {{"--input", t->input_path}, {"--k", t->k_path}, {"--temperature", t->temperature_path},
                 {"--top-p", t->top_p_path}};
    /* What the run writes: --csv's file first, then --output's. */
    const char *written[1 + TOPK_OUTPUT_FILES];
    char *outputs[TOPK_OUTPUT_FILES];
    const int n_outputs = t->output_prefix ? output_count(t->sample) : 0;
    int n_written = 0;
    if (o->csv_path)
        written[n_written++] = o->csv_path;
    for (int f = 0; f < n_outputs; f++)
        written[n_written++] = outputs[f] = output_path(t->output_prefix, output_names[f]);
    for (int w = 0; w < n_written; w++) {
        const bool csv = o->csv_path && w == 0;
        for (size_t r = 0; r < sizeof reads / sizeof reads[0]; r++)
            if (reads[r].path && outfile_same_file(written[w], reads[r].path))
                die(EXIT_USAGE, "%s would replace %s's file %s", csv ? "--csv" : "--output", reads[r].flag,
                    quote_arg(reads[r].path).text);
        for (int before = 0; before < w; before++) {
            if (!outfile_same_file(written[w], written[before]))
                continue;
            if (o->csv_path && before == 0)
                die(EXIT_USAGE, "--csv %s is also --output's file", quote_arg(o->csv_path).text);
            die(EXIT_USAGE, "--output: %s and %s are the same file", quote_arg(written[before]).text,
                quote_arg(written[w]).text);
        }
    }
    for (int f = 0; f < n_outputs; f++)
        free(outputs[f]);
}

topk_outputs topk_outputs_open(const topk_options *t)
{
    topk_outputs out = {.prefix = t->output_prefix, .n = t->output_prefix ? output_count(t->sample) : 0};
    for (int f = 0; f < out.n; f++) {
        char *path = output_path(out.prefix, output_names[f]);
        out.files[f] = outfile_open_or_exit(path, "--output file");
        free(path);
    }
    return out;
}

void topk_outputs_write(topk_outputs *out, const topk_case *c, const size_t *shape, int ndim,
                        const draw_run *drawn, const char *writer)
{
    char err[600];
    if (npy_write(out->files[0], "<i4", sizeof(int), shape, ndim, c->idx_host, err, sizeof err) ||
        npy_write(out->files[1], "<f4", sizeof(float), shape, ndim, c->prob_host, err, sizeof err))
        die(1, "--output: %s", err);
    if (drawn) { /* one per row: the logits' shape without K */
        const size_t rows_only[1] = {c->rows};
        const size_t *row_shape = ndim == 3 ? shape : rows_only;
        const int row_ndim = ndim == 3 ? 2 : 1;
        if (npy_write(out->files[2], "<i4", sizeof(int), row_shape, row_ndim, drawn->tokens, err, sizeof err) ||
            npy_write(out->files[3], "<f4", sizeof(float), row_shape, row_ndim, drawn->token_probs, err, sizeof err) ||
            npy_write(out->files[4], "<f4", sizeof(float), row_shape, row_ndim, drawn->token_logprobs, err,
                      sizeof err))
            die(1, "--output: %s", err);
    }
    outfile_commit_or_exit(out->files, out->n, "--output file");
    const quoted prefix = quote_arg(out->prefix);
    if (drawn)
        printf("\nWrote %s_indices.npy, _probs.npy, _tokens.npy, _token_probs.npy and _token_logprobs.npy (%s's "
               "answer, PASS against the fp64 reference).\n", prefix.text, writer);
    else
        printf("\nWrote %s_indices.npy and %s_probs.npy (%s's answer, PASS against the fp64 reference).\n",
               prefix.text, prefix.text, writer);
}

void topk_outputs_abandon(topk_outputs *out, const char *what)
{
    for (int f = 0; f < out->n; f++)
        outfile_abandon(out->files[f]);
    const quoted prefix = quote_arg(out->prefix);
    if (out->n > 2)
        printf("\nThe --output files are left as they were: %s failed verification against the fp64 reference.\n",
               what);
    else
        printf("\n%s_indices.npy and %s_probs.npy are left as they were: %s failed verification against the fp64 "
               "reference.\n", prefix.text, prefix.text, what);
}
