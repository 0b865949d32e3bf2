#include "stage.h"

#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "outfile.h"

/* Whether the variant that --variant names can run the shapes that --rows/--cols or --n ask for: one
 * that cannot would be left out of every table, and the run would time nothing. A 1-D variant
 * (single_row_only) computes one softmax over --n, the others a softmax per row. */
static void check_variant_shapes(const stage_context *st, const softmax_variant *v)
{
    const cli_options *o = &st->opts;
    const bool one_d = v->supports == single_row_only;
    if (o->rows && one_d)
        die(EXIT_USAGE, "--variant %s computes one softmax over the whole array: give --n, not --rows/--cols", v->name);
    if (o->rows && v->supports && !v->supports(o->rows, o->cols))
        die(EXIT_USAGE, "--variant %s handles %s, not %zu x %zu", v->name, v->handles, o->rows, o->cols);
    if (o->n_sizes && !one_d && !v->library)
        die(EXIT_USAGE, "--variant %s computes a softmax per row: give --rows and --cols, not --n", v->name);
    for (int i = 0; i < o->n_sizes; i++)
        if (v->supports && !v->supports(1, o->sizes[i]))
            die(EXIT_USAGE, "--variant %s handles %s, not n = %zu", v->name, v->handles, o->sizes[i]);
}

void stage_start(stage_context *st, int argc, char **argv, const char *about,
                 const softmax_variant *const *variants, int n_variants, stage_kind kind,
                 relative_mode relative)
{
    if (n_variants > STAGE_MAX_VARIANTS)
        die(1, "a stage may have at most %d variants", STAGE_MAX_VARIANTS);
    const char *names[STAGE_MAX_VARIANTS] = {0};
    for (int v = 0; v < n_variants; v++)
        names[v] = variants[v]->name;
    stage_parse(st, argc, argv, about, names, n_variants, kind, NULL);
    for (int v = 0; v < n_variants; v++)
        if (st->opts.variant && strcmp(st->opts.variant, variants[v]->name) == 0)
            check_variant_shapes(st, variants[v]);
    stage_open(st, argc, argv, relative, SOFTMAX_CSV_COLUMNS);
}

/* Whether --variant names one of names[0..n_names-1]; dies with the list when it does not. */
static void check_variant(const char *variant, const char *const *names, int n_names)
{
    char list[256] = "";
    for (int v = 0; v < n_names; v++) {
        if (strcmp(variant, names[v]) == 0)
            return;
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", v ? ", " : "", names[v]);
    }
    die(EXIT_USAGE, "unknown variant '%s' (this stage has: %s)", quote_arg(variant).text, list);
}

void stage_parse(stage_context *st, int argc, char **argv, const char *about, const char *const *names,
                 int n_names, stage_kind kind, const cli_own_flags *own)
{
    cli_options *o = &st->opts;
    cli_defaults(o);
    cli_table tables[4];
    int n_tables = 0;
    if (kind != STAGE_READS_ROWS)
        tables[n_tables++] = (cli_table){cli_size_flags, o};
    if (kind != STAGE_SOFTMAX_1D)
        tables[n_tables++] = (cli_table){cli_shape_flags, o};
    tables[n_tables++] = (cli_table){cli_shared_flags, o};
    if (own)
        tables[n_tables++] = own->table;
    cli_parse_or_exit(argc, argv, tables, n_tables, about);
    st->kind = kind;
    double largest = FLT_MAX;
    const char *type = own ? own->drawn_as(own->table.values, &largest) : "float32";
    char err[512];
    if (cli_check(o, largest, type, err, sizeof err) != CLI_OK)
        die(EXIT_USAGE, "%s (see --help)", err);
    if (own && own->check(o, own->table.values, err, sizeof err))
        die(EXIT_USAGE, "%s", err);
    if (o->variant)
        check_variant(o->variant, names, n_names);
    st->bench = (bench_settings){.csv = o->csv_path ? outfile_open_or_exit(o->csv_path, "CSV file") : NULL};
}

void stage_open(stage_context *st, int argc, char **argv, relative_mode relative, const char *columns)
{
    const bool reads = st->kind == STAGE_READS_ROWS;
    const char *ceiling_name = reads ? "read (16-byte loads), fastest run" : "copy (cudaMemcpy or 16 KB tiles), fastest run";
    gpu_open(&st->gpu);
    const double ceiling = reads ? gpu_read_ceiling_gbps() : gpu_copy_ceiling_gbps();
    report_device(&st->gpu, ceiling_name, ceiling);
    if (st->bench.csv)
        report_csv_header(st->bench.csv, &st->gpu, ceiling_name, ceiling, argc, argv, columns);
    st->bench.warmup = st->opts.warmup;
    st->bench.iters = st->opts.iters;
    st->bench.ceiling_gbps = ceiling;
    st->bench.relative = relative;
}

bool stage_chosen(const stage_context *st, const char *name)
{
    if (!st->opts.variant)
        return strcmp(name, EXERCISE_VARIANT) != 0;
    return strcmp(st->opts.variant, name) == 0;
}

bool stage_default_run(const stage_context *st) { return st->opts.n_sizes == 0 && st->opts.rows == 0; }

/* The variants of list[0..n-1] that --variant chose, in list order; returns how many. */
static int pick(const stage_context *st, const softmax_variant *const *list, int n,
                const softmax_variant **picked)
{
    int count = 0;
    for (int v = 0; v < n; v++)
        if (stage_chosen(st, list[v]->name))
            picked[count++] = list[v];
    return count;
}

void stage_accuracy(const stage_context *st, const char *experiment, const softmax_variant *const *list,
                    int n_list, softmax_shape shape, const input_spec *inputs, int n_inputs, uint64_t seed)
{
    const softmax_variant *picked[STAGE_MAX_VARIANTS];
    const int n_picked = pick(st, list, n_list, picked);
    bench_accuracy(&st->bench, experiment, picked, n_picked, shape, inputs, n_inputs, seed);
}

static int timing(const stage_context *st, const char *experiment, const char *what,
                  const softmax_variant *const *list, int n_list, const softmax_shape *shapes, int n_shapes)
{
    const softmax_variant *picked[STAGE_MAX_VARIANTS];
    const int n_picked = pick(st, list, n_list, picked);
    if (n_picked == 0)
        return 0;
    const cli_options *o = &st->opts;
    printf("Timing, %s: %s [%g,%g], %s, L2 flushed before each.\n", what, dist_name(o->input.dist),
           o->input.lo, o->input.hi, gpu_timing_method(o->warmup, o->iters));
    const int failed = bench_timing(&st->bench, experiment, picked, n_picked, shapes, n_shapes,
                                    o->input, o->seed + 1000);
    printf("\n");
    return failed;
}

int stage_timing_1d(const stage_context *st, const softmax_variant *const *list, int n_list,
                    const size_t *default_sizes, int n_default)
{
    const cli_options *o = &st->opts;
    if (o->rows)
        return 0;
    const size_t *sizes = o->n_sizes ? o->sizes : default_sizes;
    const int n_sizes = o->n_sizes ? o->n_sizes : n_default;
    softmax_shape shapes[CLI_MAX_SIZES];
    for (int i = 0; i < n_sizes; i++)
        shapes[i] = (softmax_shape){1, sizes[i]};
    return timing(st, "timing", "one softmax over n elements", list, n_list, shapes, n_sizes);
}

int stage_timing_rows(const stage_context *st, const char *experiment,
                      const softmax_variant *const *list, int n_list,
                      const softmax_shape *default_shapes, int n_default)
{
    const cli_options *o = &st->opts;
    if (o->n_sizes)
        return 0;
    if (o->rows) {
        const softmax_shape asked = {o->rows, o->cols};
        return timing(st, experiment, "a softmax per row", list, n_list, &asked, 1);
    }
    return timing(st, experiment, "a softmax per row", list, n_list, default_shapes, n_default);
}

int stage_end(stage_context *st, int failed)
{
    if (st->opts.csv_path)
        outfile_commit_or_exit(&st->bench.csv, 1, "CSV file");
    if (failed)
        die(1, "%d timing row(s) failed verification against the fp64 reference%s", failed,
            st->opts.csv_path ? "; the CSV keeps them, marked FAIL" : "");
    return 0;
}
