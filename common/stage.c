#include "stage.h"

#include <stdio.h>

#include "check.h"

void stage_start(stage_context *st, int argc, char **argv, const char *about,
                 const softmax_variant *const *variants, int n_variants, bool rows_ok,
                 relative_mode relative)
{
    cli_parse_or_exit(argc, argv, &st->opts, about);
    if (n_variants > STAGE_MAX_VARIANTS)
        die(1, "a stage may have at most %d variants", STAGE_MAX_VARIANTS);
    if (st->opts.k || st->opts.dtype_given || st->opts.input_path || st->opts.output_prefix)
        die(EXIT_USAGE, "--k, --dtype, --input and --output belong to stage 06 (top-K); this stage computes a softmax");
    if (st->opts.rows && !rows_ok)
        die(EXIT_USAGE, "--rows/--cols: this stage computes one softmax over the whole array; use --n");
    st->n_variants = select_variants(st->opts.variant, variants, n_variants, st->variants);

    FILE *csv;
    const double ceiling = stage_open_device(&st->opts, &st->gpu, false, argc, argv, SOFTMAX_CSV_COLUMNS, &csv);
    st->bench = (bench_settings){
        .warmup = st->opts.warmup,
        .iters = st->opts.iters,
        .ceiling_gbps = ceiling,
        .csv = csv,
        .relative = relative,
    };
}

double stage_open_device(const cli_options *opts, gpu_info *gpu, bool read_ceiling, int argc,
                         char **argv, const char *csv_columns, FILE **csv)
{
    const char *ceiling_name = read_ceiling ? "read (16-byte loads)" : "device-to-device copy";
    gpu_open(gpu);
    const double ceiling = read_ceiling ? gpu_read_ceiling_gbps() : gpu_copy_ceiling_gbps();
    report_device(gpu, ceiling_name, ceiling);
    *csv = opts->csv_path ? report_csv_open(opts->csv_path, gpu, ceiling_name, ceiling, argc, argv, csv_columns)
                          : NULL;
    return ceiling;
}

void stage_finish(FILE *csv, const char *csv_path, int failed)
{
    if (csv)
        report_csv_close(csv, csv_path);
    if (failed)
        die(1, "%d timing row(s) failed verification against the fp64 reference", failed);
}

bool stage_default_run(const stage_context *st) { return st->opts.n_sizes == 0 && st->opts.rows == 0; }

int stage_pick(const stage_context *st, const softmax_variant *const *list, int n_list,
               const softmax_variant **picked)
{
    int n = 0;
    for (int i = 0; i < n_list; i++)
        for (int v = 0; v < st->n_variants; v++)
            if (list[i] == st->variants[v])
                picked[n++] = list[i];
    return n;
}

static int timing(const stage_context *st, const char *experiment, const char *what,
                  const softmax_variant *const *list, int n_list, const softmax_shape *shapes, int n_shapes)
{
    const softmax_variant *picked[STAGE_MAX_VARIANTS];
    const int n_picked = stage_pick(st, list, n_list, picked);
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
    stage_finish(st->bench.csv, st->opts.csv_path, failed);
    return 0;
}
