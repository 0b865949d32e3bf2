/* Stage 06's program: top-K of a softmax over rows of logits, unfused against fused, threshold and fast,
 * on uniform logits of the shape a language model emits for a batch of 64 sequences of 128 tokens
 * (a row of 50257 per token, GPT-2's vocabulary), a sweep of K, 16-bit logits, a batch of one, a token
 * drawn from each row's top K, a server's batches, normal and zipf logits, and a decode loop; or on
 * your own logits (--input) with the answer written as .npy (--output), and with --sample a token a
 * row drawn as well. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../common/stage.h"
#include "decode_loop.h"
#include "fused_topk.h"
#include "host/draw_run.h"
#include "host/topk_flags.h"
#include "host/topk_outputs.h"

static const char about[] =
    "06_fused_topk: the K most probable tokens of softmax(logits), row by row, without writing the\n"
    "softmax. Logits are [B,T,V]: --rows is B x T, --cols is V.\n"
    "Variants: unfused (softmax, sort, take K: the baseline), library (CUB's batched top-K, stage 05's\n"
    "statistic, the K sorted: what a user assembles from libraries), cub_topk and flashinfer (the\n"
    "libraries' top-K alone: logits, unsorted), fused (a warp per row, K <= 32, float32),\n"
    "threshold (a warp per row with one threshold, K <= 64, float32), fast_row (a warp per row),\n"
    "fast_chunks (a row in chunks, a warp each), fast_split (a row over a cluster of blocks), fast (picks\n"
    "one of the three), fast_logits (fast without its softmax: the K logits, as the libraries' top-K).\n"
    "With no --rows or --input: B=64, T=128, V=50257 with K=10 and 50, a sweep of K, bf16 and fp16\n"
    "logits, a batch of one for V = 50257, 128256, 262144 (K=50), a token drawn from each row's top\n"
    "50 (T = 0.8, top-p 0.9) by fast with the draw fused in, at B x T = 8192 and 1, and a server's\n"
    "shapes: fast on batches of 1 to 8192 rows (V = 50257, 128256; float32, bf16; K=50) and a decode\n"
    "loop of 512 batches of one in a CUDA graph (V = 50257, 128256; K=50).\n"
    "--experiment serving: the shapes a server meets, past the default run's, in index order and sorted.\n"
    "--sample draws a token a row from the top K (--temperature, --top-p, --min-p, --seed) with fast\n"
    "(or --variant fast_row / fast_split).\n"
    "Every row is verified against an fp64 CPU top-K (and draw) before it is timed.\n"
    "Exercise: --variant exercise runs exercise.cu, yours to complete (README.md, Exercise);\n"
    "./run_solution --variant exercise runs the worked solution, solution/exercise.cu.";

/* How many entries a static list holds. */
#define LIST_LENGTH(list) ((int)(sizeof(list) / sizeof((list)[0])))

#define N_VARIANTS 12
static const topk_variant *const all[N_VARIANTS] = {
    &unfused_topk_variant,    &library_topk_variant,     &cub_topk_variant,        &flashinfer_topk_variant,
    &fused_topk_variant,      &threshold_topk_variant,   &fast_row_topk_variant,   &fast_chunks_topk_variant,
    &fast_split_topk_variant, &fast_topk_variant,        &fast_logits_topk_variant, &fused_topk_exercise_variant};

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

/* Whether `drawer` (fast, fast_row or fast_split) draws the case's tokens with fast_split's kernel:
 * fast_split always, fast where it takes fast_split for this many rows (fast_takes_split). */
static bool draws_split(const topk_variant *drawer, const topk_case *c)
{
    return drawer == &fast_split_topk_variant || (drawer == &fast_topk_variant && fast_takes_split(c->rows, c->dtype));
}

/* The default run's draw (the `sample` rows): K = 50, T = 0.8, top-p 0.9, the workload's usual
 * sampler settings, by fast with the draw fused in, under the line `what`, then FlashInfer's sampler
 * where it is chosen too; only where fast is chosen. Returns how many failed. */
static int default_draw(const stage_context *st, topk_case *c, const char *what)
{
    if (!stage_chosen(st, fast_topk_variant.name))
        return 0;
    printf("%s\n", what);
    const draw_params how = {.temperature = 0.8f, .top_p = 0.9f, .seed = st->opts.seed};
    draw_run s = draw_run_create(c, 50, how, draws_split(&fast_topk_variant, c));
    measurement baseline = {0};
    int failed = !draw_bench(&st->bench, c, 50, &s, fast_topk_variant.name, "sample", &baseline);
    if (stage_chosen(st, flashinfer_topk_variant.name))
        failed += !flashinfer_draw_bench(&st->bench, c, 50, &s, "sample", &baseline);
    draw_run_destroy(&s);
    return failed;
}

/* One line for each chosen library variant this build or GPU lacks, and why. */
static void say_libraries_left_out(const stage_context *st)
{
    static const topk_variant *const libraries[] = {&library_topk_variant, &cub_topk_variant, &flashinfer_topk_variant};
    for (int v = 0; v < LIST_LENGTH(libraries); v++)
        if (stage_chosen(st, libraries[v]->name) && libraries[v]->why_not_here())
            printf("%s left out: it %s.\n", libraries[v]->name, libraries[v]->why_not_here());
}

/* A server's batches: the first 1 to `most` rows of a case of `most` rows, K = 50, each batch's
 * reference the first rows of the case's (computed once, on every CPU core). */
static int batch_sweep(const stage_context *st, size_t cols, logit_dtype dtype, input_spec input, uint64_t seed,
                       size_t most, const char *name)
{
    static const topk_variant *const served[] = {&library_topk_variant, &cub_topk_variant, &flashinfer_topk_variant,
                                                 &fast_topk_variant, &fast_logits_topk_variant};
    static const size_t batches[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 8192};
    int failed = 0;
    topk_case c = topk_case_create(most, cols, dtype, input, seed, 50);
    for (size_t b = 0; b < sizeof batches / sizeof batches[0] && batches[b] <= most; b++) {
        topk_case batch = topk_case_prefix(&c, batches[b]);
        failed += experiment(st, &batch, served, LIST_LENGTH(served), 50, name);
    }
    topk_case_destroy(&c);
    return failed;
}

static int default_run(const stage_context *st)
{
    const input_spec input = st->opts.input;
    const uint64_t seed = st->opts.seed + 1000;
    /* The exercise (K = 1 only) runs in the K sweep when --variant names it. */
    static const topk_variant *const headline[] = {&unfused_topk_variant, &library_topk_variant, &cub_topk_variant,
                                                   &flashinfer_topk_variant, &fused_topk_variant,
                                                   &threshold_topk_variant, &fast_topk_variant,
                                                   &fast_logits_topk_variant, &fused_topk_exercise_variant};
    static const topk_variant *const sixteen[] = {&unfused_topk_variant, &library_topk_variant, &cub_topk_variant,
                                                  &flashinfer_topk_variant, &fast_topk_variant,
                                                  &fast_logits_topk_variant};
    static const topk_variant *const batch1[] = {&unfused_topk_variant, &library_topk_variant, &cub_topk_variant,
                                                 &flashinfer_topk_variant, &fast_row_topk_variant,
                                                 &fast_split_topk_variant, &fast_topk_variant,
                                                 &fast_logits_topk_variant};
    static const int sweep[] = {1, 10, 50, 256, 1024};
    static const size_t vocabularies[] = {50257, 128256, 262144};
    int failed = 0;
    say_libraries_left_out(st);

    /* One case, its reference 1024 deep, serves the workload and the whole K sweep. */
    topk_case c = topk_case_create(8192, 50257, DTYPE_F32, input, seed, 1024);
    title(st, "The workload of claims C7–C10: B=64, T=128, V=50257 float32 logits (GPT-2's vocabulary).");
    failed += experiment(st, &c, headline, LIST_LENGTH(headline), 10, "workload");
    failed += experiment(st, &c, headline, LIST_LENGTH(headline), 50, "workload");
    printf("\n");
    title(st, "K from 1 to 1024, same logits.");
    for (int i = 0; i < LIST_LENGTH(sweep); i++)
        failed += experiment(st, &c, headline, LIST_LENGTH(headline), sweep[i], "k_sweep");
    failed += default_draw(st, &c, "\nA token a row drawn from the top 50, T = 0.8, top-p 0.9, fused into fast "
                                   "(every token checked first):");
    topk_case_destroy(&c);
    printf("\n");

    title(st, "16-bit logits: the same shape in bf16 and fp16 (half the bytes).");
    for (int d = DTYPE_BF16; d <= DTYPE_F16; d++) {
        c = topk_case_create(8192, 50257, (logit_dtype)d, input, seed + 1 + d, 50);
        failed += experiment(st, &c, sixteen, LIST_LENGTH(sixteen), 10, "dtype");
        failed += experiment(st, &c, sixteen, LIST_LENGTH(sixteen), 50, "dtype");
        topk_case_destroy(&c);
    }
    printf("\n");

    title(st, "A batch of one (B x T = 1), K = 50: latency.");
    for (int i = 0; i < LIST_LENGTH(vocabularies); i++) {
        c = topk_case_create(1, vocabularies[i], DTYPE_F32, input, seed + 10 + i, 50);
        failed += experiment(st, &c, batch1, LIST_LENGTH(batch1), 50, "batch1");
        if (vocabularies[i] == 128256)
            failed += default_draw(st, &c, "  and a token drawn from its top 50, T = 0.8, top-p 0.9, fused into fast:");
        topk_case_destroy(&c);
    }
    printf("\n");

    title(st, "A server's batches: the first 1 to 8192 rows of one case, K = 50.");
    for (int v = 0; v < 2; v++)
        for (int d = DTYPE_F32; d <= DTYPE_BF16; d++)
            failed += batch_sweep(st, vocabularies[v], (logit_dtype)d, input, seed + 20 + 2 * v + d, 8192, "batch_sweep");
    printf("\n");

    /* Normal logits (mean (lo + hi) / 2 = 0, sd (hi - lo) / 6 = 1), and logits shaped like a language
     * model's (zipf: common/inputs.h). */
    static const input_spec others[] = {{DIST_NORMAL, -3.0, 3.0}, {DIST_ZIPF, 0.0, 10.0}};
    static const topk_variant *const compared[] = {&library_topk_variant, &cub_topk_variant, &flashinfer_topk_variant,
                                                   &fast_topk_variant, &fast_logits_topk_variant};
    title(st, "Other logits, K = 50: normal (mean 0, sd 1) and a language model's (zipf), the workload, then "
              "batches of 1 to 2048 at V = 128256.");
    for (int i = 0; i < LIST_LENGTH(others); i++) {
        c = topk_case_create(8192, 50257, DTYPE_F32, others[i], seed + 40 + i, 50);
        failed += experiment(st, &c, compared, LIST_LENGTH(compared), 50, "dist");
        topk_case_destroy(&c);
        failed += batch_sweep(st, 128256, DTYPE_F32, others[i], seed + 42 + i, 2048, "dist_batch");
    }
    printf("\n");

    if (stage_chosen(st, fast_topk_variant.name)) {
        char what[200];
        snprintf(what, sizeof what, "A decode loop: %d batches of one back to back, each on its own fresh row, "
                 "captured in one CUDA graph, K = 50 (the time is the whole replay's).", DECODE_TOKENS);
        title(st, what);
        decode_loop_say_launches();
        failed += decode_loop_experiment(&st->bench, 50257, input, seed + 30, DECODE_FROM_DRAM);
        failed += decode_loop_experiment(&st->bench, 128256, input, seed + 31, DECODE_FROM_DRAM);
    }
    printf("\nKB/row: the bytes each variant's algorithm moves per row (unfused: a lower bound, the sort"
           " reads and writes its pairs once per pass).\n");
    return failed;
}

/* --experiment serving: each shape, on uniform (--dist's default) and normal logits, each row in
 * index order and sorted ascending; its rows are experiments serving and serving_ascending. Then the
 * decode loop at V = 128256, its logits in DRAM (decode_loop) and in the L2 (decode_loop_l2). */
static int serving_run(const stage_context *st)
{
    static const topk_variant *const served[] = {&cub_topk_variant, &flashinfer_topk_variant, &fast_topk_variant,
                                                 &fast_logits_topk_variant};
    /* A shape: its rows' largest batch, its Ks, and the smaller batches (its first rows) timed too. */
    static const struct {
        size_t rows, cols;
        logit_dtype dtype;
        int ks[4];
        size_t batches[8];
    } shapes[] = {
        {2048, 128256, DTYPE_F32, {50}, {1, 32, 64, 128, 256, 512, 1024}},
        {8192, 50257, DTYPE_F32, {10, 50, 256, 1024}, {0}},
        {8192, 50257, DTYPE_BF16, {10, 50}, {0}},
        {8192, 50257, DTYPE_F16, {10, 50}, {0}},
        {2048, 131072, DTYPE_F32, {1024}, {0}},
        {1, 262144, DTYPE_F32, {50, 256, 1024}, {0}},
    };
    const input_spec inputs[] = {st->opts.input, {DIST_NORMAL, -3.0, 3.0}};
    const uint64_t seed = st->opts.seed + 2000;
    int failed = 0;
    say_libraries_left_out(st);
    title(st, "A server's shapes: uniform, then normal logits (mean 0, sd 1); each row as drawn, then sorted "
              "ascending.");
    for (int s = 0; s < LIST_LENGTH(shapes); s++) {
        int deepest = 0;
        for (int j = 0; j < LIST_LENGTH(shapes[s].ks) && shapes[s].ks[j]; j++)
            deepest = shapes[s].ks[j] > deepest ? shapes[s].ks[j] : deepest;
        for (int i = 0; i < LIST_LENGTH(inputs); i++)
            for (int o = ORDER_INDEX; o <= ORDER_ASCENDING; o++) {
                topk_case c = topk_case_create_ordered(shapes[s].rows, shapes[s].cols, shapes[s].dtype, inputs[i],
                                                       seed + (uint64_t)(4 * s + 2 * i + o), deepest, (row_order)o);
                const char *name = o == ORDER_ASCENDING ? "serving_ascending" : "serving";
                for (int b = 0; b < LIST_LENGTH(shapes[s].batches) && shapes[s].batches[b]; b++) {
                    topk_case batch = topk_case_prefix(&c, shapes[s].batches[b]);
                    failed += experiment(st, &batch, served, LIST_LENGTH(served), shapes[s].ks[0], name);
                }
                for (int j = 0; j < LIST_LENGTH(shapes[s].ks) && shapes[s].ks[j]; j++)
                    failed += experiment(st, &c, served, LIST_LENGTH(served), shapes[s].ks[j], name);
                topk_case_destroy(&c);
            }
    }
    printf("\n");
    if (stage_chosen(st, fast_topk_variant.name)) {
        char what[200];
        snprintf(what, sizeof what, "A decode loop: %d batches of one of V = 128256 in one CUDA graph, K = 50, "
                 "each on its own fresh row (DRAM), then all on one row (L2).", DECODE_TOKENS);
        title(st, what);
        decode_loop_say_launches();
        for (int i = 0; i < LIST_LENGTH(inputs); i++)
            for (int from = DECODE_FROM_DRAM; from <= DECODE_FROM_L2; from++)
                failed += decode_loop_experiment(&st->bench, 128256, inputs[i], seed + 100 + (uint64_t)(2 * i + from),
                                                 (decode_source)from);
    }
    return failed;
}

/* The chosen variants that cannot take top-k of rows x cols logits of dtype by their stated limits
 * (and where `here`, those that cannot run on this GPU), each as "NAME<between>WHY", joined by "; "
 * into line; returns how many can. */
static int chosen_refusals(const stage_context *st, size_t rows, size_t cols, logit_dtype dtype, int k, bool here,
                           const char *between, char *line, size_t len)
{
    char why[128];
    int takers = 0;
    *line = '\0';
    for (int v = 0; v < N_VARIANTS; v++) {
        if (!stage_chosen(st, all[v]->name))
            continue;
        const char *reason = topk_refusal(all[v], rows, cols, k, dtype, why, sizeof why);
        if (!reason && here && all[v]->why_not_here)
            reason = all[v]->why_not_here();
        if (reason)
            snprintf(line + strlen(line), len - strlen(line), "%s%s%s%s", *line ? "; " : "", all[v]->name, between,
                     reason);
        else
            takers++;
    }
    return takers;
}

/* Refuses, before the GPU is opened, top-k of rows x cols logits of dtype where the variant named by
 * --variant (without it, every variant), the one --output writes or the one that draws (drawer, with
 * --sample) cannot take it by its stated limits. */
static void refuse_past_limits(const stage_context *st, const topk_options *t, size_t rows, size_t cols,
                               logit_dtype dtype, int k, const topk_variant *drawer)
{
    const topk_variant *named = named_variant(st);
    char why[128], line[1024];
    if (named && topk_refusal(named, rows, cols, k, dtype, why, sizeof why))
        die(EXIT_USAGE, "--variant %s %s", named->name, why);
    /* Without --variant every variant runs that can: refused only where none can. */
    if (!named && chosen_refusals(st, rows, cols, dtype, k, false, " ", line, sizeof line) == 0)
        die(EXIT_USAGE, "no variant takes %zu x %zu at K = %d: %s", rows, cols, k, line);
    const topk_variant *writer = output_writer(st);
    if (t->output_prefix && writer->logits_only)
        die(EXIT_USAGE, "--output: %s gives the top-K's logits, not their probabilities", writer->name);
    if (t->output_prefix && topk_refusal(writer, rows, cols, k, dtype, why, sizeof why))
        die(EXIT_USAGE, "--output: %s %s", writer->name, why);
    if (drawer && topk_refusal(drawer, rows, cols, k, dtype, why, sizeof why))
        die(EXIT_USAGE, "--sample: the draw runs in %s, which %s", drawer->name, why);
}

/* One line naming the chosen variants that cannot take the case on this GPU, and why; nothing when all
 * can. */
static void say_left_out(const stage_context *st, const topk_case *c, int k)
{
    char line[1024];
    chosen_refusals(st, c->rows, c->cols, c->dtype, k, true, " left out: it ", line, sizeof line);
    if (*line)
        printf("%s.\n", line);
}

/* The logits of --input, from the file whose header settle_shape() judged: read whole, unchanged
 * since, with no NaN or +inf among them and no row of nothing but -inf. */
static void read_input_logits(const char *path, npy_file *opened, npy_logits *file)
{
    char err[700];
    const int read = npy_read_data(opened, file, err, sizeof err);
    npy_close(opened);
    if (read)
        die(read == NPY_HOST_FAILED ? 1 : EXIT_USAGE, "--input %s: %s", quote_arg(path).text, err);
    char where[80];
    const char *what = npy_find_nan_or_inf(file, where, sizeof where);
    if (what)
        die(EXIT_USAGE, "--input %s: logit %s is %s: top-K of a softmax with a NaN (or +inf) logit is not defined; "
            "mask with -inf instead", quote_arg(path).text, where, what);
    if (npy_find_masked_row(file, where, sizeof where))
        die(EXIT_USAGE, "--input %s: row %s is all -inf: a row with every logit masked has no softmax, so no top K",
            quote_arg(path).text, where);
}

/* What --sample asks for: the draw's settings (per-row arrays on the host) and which kernel draws. */
typedef struct {
    draw_params params;
    const topk_variant *drawer; /* fast_row, fast_split or fast; NULL without --sample */
} draw_choice;

/* What a run on --rows/--cols or --input asks for, settled before the GPU is opened. */
typedef struct {
    size_t rows, cols; /* cols 0: the default run */
    logit_dtype dtype;
    row_order order;
    int k;             /* with a K a row (--k FILE.npy), the largest */
    npy_logits file;   /* --input's shape, and once read its logits */
    npy_file opened;   /* --input, open from its header's judgement to its data's read */
    bool from_file;
    draw_choice draw;
    topk_outputs out;
} request;

/* --temperature, --top-p or --k given as a .npy file: its values, one a row, read before the GPU. */
static void *per_row_values(const char *flag, const char *path, const char *descr, size_t rows)
{
    npy_vector v;
    char err[700];
    /* A file of another length than `rows` is refused from its header, before its data is read. */
    const int rc = npy_read_vector(path, descr, rows, &v, err, sizeof err);
    if (rc)
        die(rc == NPY_HOST_FAILED ? 1 : EXIT_USAGE, "%s %s: %s", flag, quote_arg(path).text, err);
    return v.data;
}

/* The per-row files of --sample, read and checked; the run's K is the largest of --k's. Everything
 * refused here is refused before the GPU is opened. */
static void read_per_row(const topk_options *own, size_t rows, size_t cols, draw_params *p, int *k)
{
    if (own->temperature_path) {
        float *t = per_row_values("--temperature", own->temperature_path, "<f4", rows);
        for (size_t r = 0; r < rows; r++)
            if (!draw_temperature_ok(t[r]))
                die(EXIT_USAGE, "--temperature %s: row %zu's %.9g is not a finite number >= 0",
                    quote_arg(own->temperature_path).text, r, t[r]);
        p->temperatures = t;
    }
    if (own->top_p_path) {
        float *tp = per_row_values("--top-p", own->top_p_path, "<f4", rows);
        for (size_t r = 0; r < rows; r++)
            if (!draw_top_p_ok(tp[r]))
                die(EXIT_USAGE, "--top-p %s: row %zu's %.9g is not in (0, 1]", quote_arg(own->top_p_path).text, r, tp[r]);
        p->top_ps = tp;
    }
    if (own->k_path) {
        int *ks = per_row_values("--k", own->k_path, "<i4", rows);
        *k = 1;
        for (size_t r = 0; r < rows; r++) {
            if (ks[r] < 1 || (size_t)ks[r] > cols)
                die(EXIT_USAGE, "--k %s: row %zu's K of %d is not from 1 to the row's %zu logits",
                    quote_arg(own->k_path).text, r, ks[r], cols);
            if (ks[r] > *k)
                *k = ks[r];
        }
        p->ks = ks;
    }
}

/* The kernel --sample draws with: fast, or the fast kernel --variant names. */
static const topk_variant *drawer(const stage_context *st)
{
    const topk_variant *named = named_variant(st);
    if (!named)
        return &fast_topk_variant;
    if (named != &fast_topk_variant && named != &fast_row_topk_variant && named != &fast_split_topk_variant)
        die(EXIT_USAGE, "--sample: the draw is fused into fast, fast_row and fast_split, not %s", named->name);
    return named;
}

/* The shape, type and K of the run, from --input's header or --rows/--cols, and what they refuse. */
static request settle_shape(const cli_options *o, const topk_options *t)
{
    request q = {.from_file = t->input_path != NULL};
    char err[700];
    if (q.from_file) {
        const int read = npy_open_logits(t->input_path, &q.opened, &q.file, err, sizeof err);
        if (read)
            die(read == NPY_HOST_FAILED ? 1 : EXIT_USAGE, "--input %s: %s", quote_arg(t->input_path).text, err);
        if (t->dtype_given && t->dtype != q.file.dtype)
            die(EXIT_USAGE, "--dtype %s: the file's logits are %s", dtype_name(t->dtype), dtype_name(q.file.dtype));
    }
    q.rows = q.from_file ? q.file.rows : o->rows;
    q.cols = q.from_file ? q.file.cols : o->cols;
    q.dtype = q.from_file ? q.file.dtype : t->dtype;
    q.order = t->order;
    q.k = t->k ? t->k : 10;
    if (t->k && q.cols && (size_t)t->k > q.cols)
        die(EXIT_USAGE, "--k %d: a row has only %zu logits (V)", t->k, q.cols);
    if (!t->k && !t->k_path && q.cols && q.cols < 10)
        die(EXIT_USAGE, "a row has only %zu logits (V), fewer than the default K of 10: give --k", q.cols);
    if (t->output_prefix && !q.cols)
        die(EXIT_USAGE, "--output needs --input or --rows/--cols");
    if (!q.cols && (t->k || t->k_path || t->dtype_given || t->order_given))
        die(EXIT_USAGE, "--k, --dtype and --order go with --rows/--cols (the default run and --experiment set "
            "their own)");
    if (!q.cols && input_largest_magnitude(o->input) > dtype_largest(DTYPE_F16))
        die(EXIT_USAGE, "--range %.9g:%.9g: the default run draws fp16 logits too, and --dist %s would draw numbers "
            "past fp16's largest, %.9g (with --rows and --cols it draws --dtype's alone, float32 by default)",
            o->input.lo, o->input.hi, dist_name(o->input.dist), dtype_largest(DTYPE_F16));
    return q;
}

/* Everything the user can get wrong, refused before the GPU is touched (what an --input file's header
 * tells, before its data is read); then --input's logits read and --output's files opened. */
static request settle(const stage_context *st, const topk_options *t)
{
    topk_outputs_refuse_overwriting(&st->opts, t);
    request q = settle_shape(&st->opts, t);
    if (t->sampling_given && !t->sample)
        die(EXIT_USAGE, "--temperature, --top-p and --min-p go with --sample");
    if (t->k_path && !t->sample)
        die(EXIT_USAGE, "--k %s: a K a row goes with --sample (the top-K itself has one K)", quote_arg(t->k_path).text);
    if (t->sample && !q.cols)
        die(EXIT_USAGE, "--sample needs --input or --rows/--cols (the default run draws its own)");
    q.draw.params = (draw_params){.temperature = t->temperature, .top_p = t->top_p, .min_p = t->min_p,
                                  .seed = st->opts.seed};
    if (t->sample) {
        q.draw.drawer = drawer(st);
        read_per_row(t, q.rows, q.cols, &q.draw.params, &q.k);
    }
    if (q.cols)
        refuse_past_limits(st, t, q.rows, q.cols, q.dtype, q.k, q.draw.drawer);
    if (q.from_file)
        read_input_logits(t->input_path, &q.opened, &q.file);
    q.out = topk_outputs_open(t);
    return q;
}

/* The answer --output writes, from fast (or --variant's, or the drawer's): run once more, copied to
 * the case's host arrays and checked against the reference, with the draw where there is one. */
static bool check_answer(topk_case *c, int k, const topk_variant *writer, draw_run *drawn)
{
    topk_check check;
    if (drawn) {
        const draw_check tokens = draw_run_check(drawn, c, k, &check);
        return check.pass && tokens.pass;
    }
    void *workspace = topk_workspace_alloc(writer, c, k);
    int launches;
    check = topk_case_check(c, writer, k, workspace, &launches);
    CUDA_CHECK(cudaFree(workspace));
    return check.pass;
}

/* --output's files, from the answer where it and every timed row passed, else left as they were.
 * Returns the name of the variant whose answer failed, or NULL. */
static const char *write_outputs(const stage_context *st, request *q, topk_case *c, int failed, draw_run *drawn)
{
    const topk_variant *writer = drawn ? q->draw.drawer : output_writer(st);
    const bool answer_ok = check_answer(c, q->k, writer, drawn);
    if (failed || !answer_ok) {
        topk_outputs_abandon(&q->out, answer_ok ? "the rows above" : failed ? "the rows above and the answer"
                                                                           : "the answer");
        return answer_ok ? NULL : writer->name;
    }
    size_t shape[NPY_MAX_DIMS] = {c->rows, (size_t)q->k};
    int ndim = 2;
    if (q->from_file) {
        ndim = q->file.ndim;
        memcpy(shape, q->file.shape, sizeof shape);
        shape[ndim - 1] = (size_t)q->k;
    }
    topk_outputs_write(&q->out, c, shape, ndim, drawn, writer->name);
    return NULL;
}

/* --rows/--cols or --input: one case, every chosen variant that can take it, with --sample the draw
 * (timed as experiment `sample`), then --output's files. Each file is replaced atomically, and the
 * renames follow one another once all the files are complete on the disk (outfile_commit): a signal
 * ends the program before all or after all, but a crash between two leaves new files beside old ones.
 * Returns the number of rows that failed; *failed_answer is the name of the variant whose answer for
 * --output failed, or NULL. */
static int custom_run(const stage_context *st, request *q, const char **failed_answer)
{
    topk_case c = q->from_file ? topk_case_from_npy(&q->file, q->k)
                               : topk_case_create_ordered(q->rows, q->cols, q->dtype, st->opts.input, st->opts.seed,
                                                          q->k, q->order);
    if (q->from_file)
        npy_logits_free(&q->file); /* the case holds the logits now; the file's shape is still needed */
    if (!st->opts.variant)
        say_left_out(st, &c, q->k);
    title(st, q->from_file ? "Your logits." : "Random logits.");
    const char *name = q->from_file ? "input" : q->order == ORDER_ASCENDING ? "custom_ascending" : "custom";
    int failed = experiment(st, &c, all, N_VARIANTS, q->k, name);
    draw_run drawn;
    const draw_choice *draw = q->draw.drawer ? &q->draw : NULL;
    if (draw) {
        drawn = draw_run_create(&c, q->k, draw->params, draws_split(draw->drawer, &c));
        printf("\n");
        title(st, "A token a row drawn from the top K, fused into the kernel (every token checked).");
        measurement baseline = {0};
        failed += !draw_bench(&st->bench, &c, q->k, &drawn, draw->drawer->name, "sample", &baseline);
    }
    *failed_answer = q->out.prefix ? write_outputs(st, q, &c, failed, draw ? &drawn : NULL) : NULL;
    if (draw)
        draw_run_destroy(&drawn);
    topk_case_destroy(&c);
    return failed;
}

static void parse_flags(stage_context *st, topk_options *t, int argc, char **argv)
{
    const char *names[N_VARIANTS];
    for (int v = 0; v < N_VARIANTS; v++)
        names[v] = all[v]->name;
    topk_options_defaults(t);
    const cli_own_flags own = topk_own_flags(t);
    stage_parse(st, argc, argv, about, names, N_VARIANTS, STAGE_READS_ROWS, &own);
}

int main(int argc, char **argv)
{
    stage_context st;
    topk_options t;
    parse_flags(&st, &t, argc, argv);
    request q = settle(&st, &t);

    stage_open(&st, argc, argv, RELATIVE_SPEEDUP, TOPK_CSV_COLUMNS);
    const topk_variant *named = named_variant(&st);
    const char *why_not = named && named->why_not_here ? named->why_not_here() : NULL;
    if (why_not)
        die(EXIT_USAGE, "--variant %s cannot run here: it %s", named->name, why_not);

    const char *failed_answer = NULL;
    const int failed = q.cols ? custom_run(&st, &q, &failed_answer) : t.experiment ? serving_run(&st) : default_run(&st);
    free((void *)q.draw.params.temperatures);
    free((void *)q.draw.params.top_ps);
    free((void *)q.draw.params.ks);
    stage_end(&st, failed);
    if (failed_answer)
        die(1, "the answer of %s for --output failed verification against the fp64 reference; the files were not "
            "written", failed_answer);
    return 0;
}
