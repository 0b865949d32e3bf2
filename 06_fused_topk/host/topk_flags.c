#include "topk_flags.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "draw_reference.h"

void topk_options_defaults(topk_options *t)
{
    memset(t, 0, sizeof *t);
    t->temperature = 1.0f;
    t->top_p = 1.0f;
}

/* Whether a flag's value names a .npy file rather than a number. */
static bool names_npy(const char *value)
{
    const size_t len = strlen(value);
    return len > 4 && strcmp(value + len - 4, ".npy") == 0;
}

/* --k: a whole number from 1 to INT_MAX, or a .npy file of one a row; the last one given counts. */
static int parse_k(const cli_flag *flag, const char *value, void *values, char *note, size_t note_len)
{
    topk_options *t = values;
    if (names_npy(value)) {
        t->k_path = value;
        t->k = 0;
        return 0;
    }
    if (cli_int(flag, value, values, note, note_len))
        return -1;
    t->k_path = NULL;
    return 0;
}

/* For a refusal's note: what `value`, a number that float32 holds only rounded, becomes there
 * (" (1 in float32)" for 0.99999999); nothing for anything else. */
static void float32_note(const char *value, char *note, size_t note_len)
{
    char *end;
    double v;
    if (cli_parse_number(value, &end, &v) == 0 && *end == '\0' && (double)(float)v != v)
        snprintf(note, note_len, " (%.9g in float32)", (double)(float)v);
}

/* A number that `ok` accepts as the float it becomes, into the float `field`. */
static int sampling_number(const cli_flag *flag, const char *value, void *values, bool (*ok)(double), char *note,
                           size_t note_len)
{
    char *end;
    double v;
    if (cli_parse_number(value, &end, &v) || *end != '\0' || !ok((float)v)) {
        float32_note(value, note, note_len);
        return -1;
    }
    *(float *)cli_field(flag, values) = (float)v;
    return 0;
}

/* --temperature and --top-p: a number, or a .npy file of one a row; the last one given counts. */
static int sampling_number_or_file(const cli_flag *flag, const char *value, void *values, bool (*ok)(double),
                                   const char **path, char *note, size_t note_len)
{
    if (names_npy(value)) {
        *path = value;
        return 0;
    }
    if (sampling_number(flag, value, values, ok, note, note_len))
        return -1;
    *path = NULL;
    return 0;
}

static int parse_temperature(const cli_flag *flag, const char *value, void *values, char *note, size_t note_len)
{
    return sampling_number_or_file(flag, value, values, draw_temperature_ok, &((topk_options *)values)->temperature_path,
                                   note, note_len);
}

static int parse_top_p(const cli_flag *flag, const char *value, void *values, char *note, size_t note_len)
{
    return sampling_number_or_file(flag, value, values, draw_top_p_ok, &((topk_options *)values)->top_p_path, note,
                                   note_len);
}

static int parse_min_p(const cli_flag *flag, const char *value, void *values, char *note, size_t note_len)
{
    return sampling_number(flag, value, values, draw_min_p_ok, note, note_len);
}

static int parse_dtype(const cli_flag *flag, const char *value, void *values, char *note, size_t note_len)
{
    (void)note, (void)note_len;
    return dtype_from_name(value, (logit_dtype *)cli_field(flag, values));
}

static int parse_order(const cli_flag *flag, const char *value, void *values, char *note, size_t note_len)
{
    (void)note, (void)note_len;
    return row_order_from_name(value, (row_order *)cli_field(flag, values));
}

static int parse_experiment(const cli_flag *flag, const char *value, void *values, char *note, size_t note_len)
{
    (void)note, (void)note_len;
    if (strcmp(value, TOPK_SERVING) != 0)
        return -1;
    *(const char **)cli_field(flag, values) = value;
    return 0;
}

#define OWN(member) offsetof(topk_options, member)

const cli_flag topk_flags[] = {
    {"--k", "K", "how many of the largest probabilities per row (each variant states the largest K\n"
     "it handles); with --sample also a .npy file of one int32 a row, the top-K then as\ndeep as its largest",
     parse_k, OWN(k), CLI_UNTRACKED, 1, INT_MAX, "a whole number from %llu to %llu or a .npy file of one a row"},
    {"--dtype", "T", "float32 | bf16 | fp16 logits (default float32)", parse_dtype, OWN(dtype), OWN(dtype_given), 0,
     0, "float32, bf16 or fp16"},
    {"--order", "O", "index | ascending: each row of random logits as drawn (default) or sorted\n"
     "ascending, its largest logits last", parse_order, OWN(order), OWN(order_given), 0, 0, "index or ascending"},
    {"--experiment", "E", "a named experiment in place of the default run: " TOPK_SERVING " (a server's\n"
     "shapes on uniform and normal logits, in index order and sorted ascending, and the\n"
     "decode loop with its logits in DRAM and in the L2)", parse_experiment, OWN(experiment), CLI_UNTRACKED, 0, 0,
     TOPK_SERVING},
    {"--input", "FILE", "logits from a .npy file, shape [B,T,V] or [R,V]", cli_file, OWN(input_path), CLI_UNTRACKED,
     0, 0, NULL},
    {"--output", "PREFIX", "write PREFIX_indices.npy and PREFIX_probs.npy (with --sample, also\n"
     "PREFIX_tokens.npy, PREFIX_token_probs.npy, PREFIX_token_logprobs.npy)", cli_file, OWN(output_prefix),
     CLI_UNTRACKED, 0, 0, NULL},
    {"--sample", NULL, "also draw one token a row from its top K, fused into fast (--seed S keys the\n"
     "draw: a row's token depends on S and the row alone)", NULL, OWN(sample), CLI_UNTRACKED, 0, 0, NULL},
    {"--temperature", "T", "--sample: softmax(x / T) over the K (default 1; 0: the most probable\n"
     "token); or a .npy file of one float32 a row", parse_temperature, OWN(temperature), OWN(sampling_given), 0, 0,
     "a finite number >= 0 (0: the most probable token) or a .npy file of one a row"},
    {"--top-p", "P", "--sample: keep the smallest prefix of the K whose probability reaches P,\n"
     "in (0, 1] (default 1: all K); or a .npy file, float32", parse_top_p, OWN(top_p), OWN(sampling_given), 0, 0,
     "a number in (0, 1] (1: keep all K) or a .npy file of one a row"},
    {"--min-p", "M", "--sample: keep the tokens at least M x the most probable one's probability,\n"
     "in [0, 1) (default 0)", parse_min_p, OWN(min_p), OWN(sampling_given), 0, 0,
     "a number in [0, 1) (0: no cut)"},
    {NULL},
};

static const char *drawn_as(const void *values, double *largest)
{
    const topk_options *t = values;
    if (t->input_path)
        return NULL;
    *largest = dtype_largest(t->dtype);
    return dtype_name(t->dtype);
}

static int check(const cli_options *o, const void *values, char *err, size_t err_len)
{
    const topk_options *t = values;
    const char *why = NULL;
    char line[160];
    if (t->input_path && o->rows) {
        why = "--input: the shape comes from the file; leave out --rows/--cols";
    } else if (t->input_path && o->range_given) {
        why = "--range: the logits come from --input";
    } else if (t->input_path && o->dist_given) {
        why = "--dist: the logits come from --input";
    } else if (t->input_path && t->order_given) {
        why = "--order: the logits come from --input";
    } else if (t->experiment && (o->rows || t->input_path)) {
        why = "--experiment: it sets its own shapes; leave out --rows/--cols and --input";
    } else if (t->input_path && o->seed_given && !t->sample) {
        why = "--seed: the logits come from --input (with --sample, --seed keys the draw)";
    } else if (o->cols > INT32_MAX) {
        snprintf(line, sizeof line, "--cols %zu: a row holds at most 2147483647 logits (V), which the kernels "
                 "index with an int", o->cols);
        why = line;
    }
    if (why)
        snprintf(err, err_len, "%s", why);
    return why ? -1 : 0;
}

cli_own_flags topk_own_flags(topk_options *t)
{
    return (cli_own_flags){{topk_flags, t}, drawn_as, check};
}
