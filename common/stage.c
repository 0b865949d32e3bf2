#include "stage.h"

#include <stdio.h>

#include "check.h"

void stage_start(stage_context *st, int argc, char **argv, const char *about,
                 const softmax_variant *const *variants, int n_variants, relative_mode relative)
{
    cli_parse_or_exit(argc, argv, &st->opts, about);
    if (n_variants > STAGE_MAX_VARIANTS)
        die(1, "a stage may have at most %d variants", STAGE_MAX_VARIANTS);
    st->n_variants = select_variants(st->opts.variant, variants, n_variants, st->variants);

    gpu_open(&st->gpu);
    const double ceiling = gpu_copy_ceiling_gbps();
    report_device(&st->gpu, "device-to-device copy", ceiling);
    st->bench = (bench_settings){
        .warmup = st->opts.warmup,
        .iters = st->opts.iters,
        .ceiling_gbps = ceiling,
        .csv = st->opts.csv_path ? report_csv_open(st->opts.csv_path, &st->gpu, "device-to-device copy",
                                                   ceiling, argc, argv)
                                 : NULL,
        .relative = relative,
    };
}

bool stage_default_run(const stage_context *st) { return st->opts.n_sizes == 0; }

int stage_timing(const stage_context *st, const size_t *default_sizes, int n_default)
{
    const cli_options *o = &st->opts;
    printf("Timing: %s [%g,%g], median of %d runs after %d warm-up, L2 flushed before each.\n",
           dist_name(o->input.dist), o->input.lo, o->input.hi, o->iters, o->warmup);
    return bench_timing(&st->bench, "timing", st->variants, st->n_variants,
                        o->n_sizes ? o->sizes : default_sizes, o->n_sizes ? o->n_sizes : n_default,
                        o->input, o->seed + 1000);
}

int stage_end(stage_context *st, int failed)
{
    if (st->bench.csv)
        report_csv_close(st->bench.csv, st->opts.csv_path);
    if (failed)
        die(1, "%d timing row(s) failed verification against the fp64 reference", failed);
    return 0;
}
