/* Stage 06's program: top-K of a softmax over rows of logits, unfused against fused against fast,
 * on the logits a language model emits for a batch of 64 sequences of 128 tokens (a row of 50257
 * per token, GPT-2's vocabulary), a sweep of K, 16-bit logits and a batch of one; or on your own
 * logits (--input) with the answer written as .npy (--output). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../common/outfile.h"
#include "../common/stage.h"
#include "decode_loop.h"
#include "fused_topk.h"

static const char about[] =
    "06_fused_topk: the K most probable tokens of softmax(logits), row by row, without writing the\n"
    "softmax. Logits are [B,T,V]: --rows is B x T, --cols is V.\n"
    "Variants: unfused (softmax, sort, take K: the baseline), fused (a warp per row, K <= 32, float32),\n"
    "fast_row (a warp per row), fast_chunks (a row in chunks, a warp each), fast_split (a row over a\n"
    "cluster of blocks), fast (picks one of the three).\n"
    "With no --rows or --input: B=64, T=128, V=50257 with K=10 and 50, a sweep of K, bf16 and fp16\n"
    "logits, a batch of one for V = 50257, 128256, 262144 (K=50), and a server's shapes: fast on\n"
    "batches of 1 to 8192 rows (V = 50257, 128256; float32, bf16; K=50) and a decode loop of 512\n"
    "batches of one in a CUDA graph (V = 50257, 128256; K=50).\n"
    "Every row is verified against an fp64 CPU top-K before it is timed.\n"
    "Exercise: --variant exercise runs exercise.cu, yours to complete (README.md, Exercise);\n"
    "./run_solution --variant exercise runs the worked solution, solution/exercise.cu.";

#define N_VARIANTS 7
static const topk_variant *const all[N_VARIANTS] = {&unfused_topk_variant, &fused_topk_variant, &fast_row_topk_variant,
                                                    &fast_chunks_topk_variant, &fast_split_topk_variant,
                                                    &fast_topk_variant, &fused_topk_exercise_variant};

/* The variant --variant named, or NULL when it was not given. */
static const topk_variant *named_variant(const stage_context *st)
{
    for (int v = 0; st->opts.variant && v < N_VARIANTS; v++)
        if (stage_chosen(st, all[v]->name))
            return all[v];
    return NULL;
}

/* The variant whose answer --output writes: the one --variant named, or fast. */
static const topk_variant *output_writer(const stage_context *st)
{
    const topk_variant *named = named_variant(st);
    return named ? named : &fast_topk_variant;
}

/* The chosen variants of `list`, each verified and timed on the case with top-k where it can run. */
static int experiment(const stage_context *st, topk_case *c, const topk_variant *const *list, int n, int k,
                      const char *name)
{
    const topk_variant *picked[N_VARIANTS];
    int count = 0;
    for (int v = 0; v < n; v++)
        if (stage_chosen(st, list[v]->name))
            picked[count++] = list[v];
    return topk_bench_all(&st->bench, c, picked, count, k, name);
}

static void title(const stage_context *st, const char *what)
{
    printf("%s\n(%s, L2 flushed before each; GB/s: the logits' bytes, read once; speedup over the first "
           "row)\n",
           what, gpu_timing_method(st->opts.warmup, st->opts.iters));
    topk_timing_header(st->bench.relative);
}

static int default_run(const stage_context *st)
{
    const input_spec input = st->opts.input;
    const uint64_t seed = st->opts.seed + 1000;
    /* The exercise (K = 1 only) runs in the K sweep when --variant names it. */
    static const topk_variant *const headline[] = {&unfused_topk_variant, &fused_topk_variant,
                                                   &fast_topk_variant, &fused_topk_exercise_variant};
    static const topk_variant *const sixteen[] = {&unfused_topk_variant, &fast_topk_variant};
    static const topk_variant *const batch1[] = {&unfused_topk_variant, &fast_row_topk_variant, &fast_split_topk_variant,
                                                 &fast_topk_variant};
    static const int sweep[] = {1, 10, 50, 256, 1024};
    static const size_t vocabularies[] = {50257, 128256, 262144};
    int failed = 0;

    /* One case, its reference 1024 deep, serves the workload and the whole K sweep. */
    topk_case c = topk_case_create(8192, 50257, DTYPE_F32, input, seed, 1024);
    title(st, "The workload of claims C7–C10: B=64, T=128, V=50257 float32 logits (GPT-2's vocabulary).");
    failed += experiment(st, &c, headline, 4, 10, "workload");
    failed += experiment(st, &c, headline, 4, 50, "workload");
    printf("\n");
    title(st, "K from 1 to 1024, same logits.");
    for (int i = 0; i < 5; i++)
        failed += experiment(st, &c, headline, 4, sweep[i], "k_sweep");
    topk_case_destroy(&c);
    printf("\n");

    title(st, "16-bit logits: the same shape in bf16 and fp16 (half the bytes).");
    for (int d = DTYPE_BF16; d <= DTYPE_F16; d++) {
        c = topk_case_create(8192, 50257, (logit_dtype)d, input, seed + 1 + d, 50);
        failed += experiment(st, &c, sixteen, 2, 10, "dtype");
        failed += experiment(st, &c, sixteen, 2, 50, "dtype");
        topk_case_destroy(&c);
    }
    printf("\n");

    title(st, "A batch of one (B x T = 1), K = 50: latency.");
    for (int i = 0; i < 3; i++) {
        c = topk_case_create(1, vocabularies[i], DTYPE_F32, input, seed + 10 + i, 50);
        failed += experiment(st, &c, batch1, 4, 50, "batch1");
        topk_case_destroy(&c);
    }
    printf("\n");

    /* The first R rows of one 8192-row case for every R: its reference is computed once (on every
     * CPU core), and each batch's is the first R rows of it. */
    static const topk_variant *const served[] = {&fast_topk_variant};
    static const size_t batches[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 8192};
    title(st, "A server's batches: the first 1 to 8192 rows of one case, K = 50.");
    for (int v = 0; v < 2; v++)
        for (int d = DTYPE_F32; d <= DTYPE_BF16; d++) {
            c = topk_case_create(8192, vocabularies[v], (logit_dtype)d, input, seed + 20 + 2 * v + d, 50);
            for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++) {
                topk_case batch = topk_case_prefix(&c, batches[b]);
                failed += experiment(st, &batch, served, 1, 50, "batch_sweep");
            }
            topk_case_destroy(&c);
        }
    printf("\n");

    if (stage_chosen(st, fast_topk_variant.name)) {
        char what[200];
        snprintf(what, sizeof what, "A decode loop: %d batches of one back to back, each on its own fresh row, "
                 "captured in one CUDA graph, K = 50 (the time is the whole replay's).", DECODE_TOKENS);
        title(st, what);
        failed += decode_loop_experiment(&st->bench, input, seed + 30);
    }
    printf("\nKB/row: the bytes each variant's algorithm moves per row (unfused: a lower bound, the sort"
           " reads and writes its pairs once per pass).\n");
    return failed;
}

/* Refuses, before the GPU is opened, top-k of rows x cols logits of dtype where the variant named by
 * --variant or the one --output writes cannot take it by its stated limits. */
static void refuse_past_limits(const stage_context *st, size_t rows, size_t cols, logit_dtype dtype, int k)
{
    const topk_variant *named = named_variant(st);
    char why[128];
    if (named && topk_refusal(named, rows, cols, k, dtype, why, sizeof why))
        die(EXIT_USAGE, "--variant %s %s", named->name, why);
    const topk_variant *writer = output_writer(st);
    if (st->opts.output_prefix && topk_refusal(writer, rows, cols, k, dtype, why, sizeof why))
        die(EXIT_USAGE, "--output: %s %s", writer->name, why);
}

/* One line naming the chosen variants that cannot take the case on this GPU, and why; nothing when all
 * can. */
static void say_left_out(const stage_context *st, const topk_case *c, int k)
{
    char line[1024] = "", why[128];
    for (int v = 0; v < N_VARIANTS; v++) {
        if (!stage_chosen(st, all[v]->name))
            continue;
        const char *reason = topk_refusal(all[v], c->rows, c->cols, k, c->dtype, why, sizeof why);
        if (!reason && all[v]->why_not_here)
            reason = all[v]->why_not_here();
        if (reason)
            snprintf(line + strlen(line), sizeof line - strlen(line), "%s%s left out: it %s", *line ? "; " : "",
                     all[v]->name, reason);
    }
    if (*line)
        printf("%s.\n", line);
}

/* --output's two files, opened before the GPU so that a path that cannot be written is refused at
 * once (outfile.h); NULL without --output. */
typedef struct {
    FILE *indices, *probs;
} output_files;

static FILE *open_output(const char *prefix, const char *name)
{
    const size_t len = strlen(prefix) + strlen(name) + sizeof "_.npy";
    char *path = xmalloc(len, "an output file's name");
    snprintf(path, len, "%s_%s.npy", prefix, name);
    FILE *out = outfile_open_or_exit(path, "--output file");
    free(path);
    return out;
}

/* --rows/--cols or --input: one case, every chosen variant that can take it, and --output from fast
 * (or --variant's), written only when every row and the answer passed; otherwise both files are left
 * as they were. Each file is replaced atomically, and the two renames follow one another once both
 * files are complete on the disk (outfile_commit): a signal ends the program before both or after
 * both, but a crash between them leaves a new _indices.npy beside the old _probs.npy. Returns the
 * number of rows that failed; *failed_answer is the name of the variant whose answer for --output
 * failed, or NULL. */
static int custom_run(const stage_context *st, topk_case *c, int k, const npy_logits *file, const output_files *out,
                      const char **failed_answer)
{
    *failed_answer = NULL;
    if (!st->opts.variant)
        say_left_out(st, c, k);
    title(st, file ? "Your logits." : "Random logits.");
    int failed = experiment(st, c, all, N_VARIANTS, k, file ? "input" : "custom");
    if (!st->opts.output_prefix)
        return failed;

    const topk_variant *writer = output_writer(st);
    void *workspace = topk_workspace_alloc(writer, c, k);
    int launches;
    const topk_check check = topk_case_check(c, writer, k, workspace, &launches);
    CUDA_CHECK(cudaFree(workspace));

    size_t shape[NPY_MAX_DIMS] = {c->rows, (size_t)k};
    int ndim = 2;
    if (file) {
        ndim = file->ndim;
        memcpy(shape, file->shape, sizeof shape);
        shape[ndim - 1] = (size_t)k;
    }
    const quoted prefix = quote_arg(st->opts.output_prefix);
    if (failed || !check.pass) {
        outfile_abandon(out->indices);
        outfile_abandon(out->probs);
        const char *what = check.pass ? "the rows above" : failed ? "the rows above and the answer" : "the answer";
        printf("\n%s_indices.npy and %s_probs.npy are left as they were: %s failed verification against the fp64 "
               "reference.\n", prefix.text, prefix.text, what);
        *failed_answer = check.pass ? NULL : writer->name;
        return failed;
    }
    char err[600];
    if (npy_write(out->indices, "<i4", sizeof(int), shape, ndim, c->idx_host, err, sizeof err) ||
        npy_write(out->probs, "<f4", sizeof(float), shape, ndim, c->prob_host, err, sizeof err))
        die(1, "--output: %s", err);
    FILE *const files[] = {out->indices, out->probs};
    outfile_commit_or_exit(files, 2, "--output file");
    printf("\nWrote %s_indices.npy and %s_probs.npy (%s's answer, PASS against the fp64 reference).\n", prefix.text,
           prefix.text, writer->name);
    return failed;
}

int main(int argc, char **argv)
{
    const char *names[N_VARIANTS];
    for (int v = 0; v < N_VARIANTS; v++)
        names[v] = all[v]->name;
    stage_context st;
    stage_parse(&st, argc, argv, about, names, N_VARIANTS, STAGE_TOPK);
    const cli_options *o = &st.opts;
    if (o->range_given && o->input_path)
        die(EXIT_USAGE, "--range: the logits come from --input");

    /* Everything the user can get wrong is refused before the GPU is touched. */
    npy_logits file;
    char err[700];
    if (o->input_path) {
        const quoted path = quote_arg(o->input_path);
        const int read = npy_read_logits(o->input_path, &file, err, sizeof err);
        if (read)
            die(read == NPY_HOST_FAILED ? 1 : EXIT_USAGE, "--input %s: %s", path.text, err);
        if (!cli_shape_fits(file.rows, file.cols))
            die(EXIT_USAGE, "--input %s: its %zu rows of %zu logits are more than the kernels take (at most %zu rows, "
                "%zu logits in all)", path.text, file.rows, file.cols, CLI_MAX_ROWS, CLI_MAX_ELEMENTS);
        if (o->dtype_given && o->dtype != file.dtype)
            die(EXIT_USAGE, "--dtype %s: the file's logits are %s", dtype_name(o->dtype), dtype_name(file.dtype));
        char where[80];
        const char *what = npy_find_nan_or_inf(&file, where, sizeof where);
        if (what)
            die(EXIT_USAGE, "--input %s: logit %s is %s: top-K of a softmax with a NaN (or +inf) logit is not "
                "defined; mask with -inf instead", path.text, where, what);
    }
    const size_t rows = o->input_path ? file.rows : o->rows, cols = o->input_path ? file.cols : o->cols;
    const logit_dtype dtype = o->input_path ? file.dtype : o->dtype;
    const int k = o->k ? o->k : 10;
    if (o->k && cols && (size_t)o->k > cols)
        die(EXIT_USAGE, "--k %d: a row has only %zu logits (V)", o->k, cols);
    if (!o->k && cols && cols < 10)
        die(EXIT_USAGE, "a row has only %zu logits (V), fewer than the default K of 10: give --k", cols);
    if (o->output_prefix && !cols)
        die(EXIT_USAGE, "--output needs --input or --rows/--cols");
    if (!cols && (o->k || o->dtype_given))
        die(EXIT_USAGE, "--k and --dtype go with --rows/--cols (the default run sets its own)");
    if (cols)
        refuse_past_limits(&st, rows, cols, dtype, k);
    output_files out = {NULL, NULL};
    if (o->output_prefix) {
        out.indices = open_output(o->output_prefix, "indices");
        out.probs = open_output(o->output_prefix, "probs");
    }

    stage_open(&st, argc, argv, RELATIVE_SPEEDUP);
    const topk_variant *named = named_variant(&st);
    const char *why_not = named && named->why_not_here ? named->why_not_here() : NULL;
    if (why_not)
        die(EXIT_USAGE, "--variant %s cannot run here: it %s", named->name, why_not);

    int failed;
    const char *failed_answer = NULL;
    if (cols) {
        topk_case c = o->input_path ? topk_case_from_npy(&file, k)
                                    : topk_case_create(rows, cols, dtype, o->input, o->seed, k);
        if (o->input_path)
            npy_logits_free(&file); /* the case holds the logits now; the file's shape is still needed */
        failed = custom_run(&st, &c, k, o->input_path ? &file : NULL, &out, &failed_answer);
        topk_case_destroy(&c);
    } else {
        failed = default_run(&st);
    }
    stage_end(&st, failed);
    if (failed_answer)
        die(1, "the answer of %s for --output failed verification against the fp64 reference; the files were not "
            "written", failed_answer);
    return 0;
}
