/* Stage 01's program: Experiment 1 (overflow), then the naive kernel's timing over the seed's
 * sizes. All plumbing (flags, inputs, reference, verification, timing, tables, CSV) is common/. */
#include <stdio.h>
#include <stdlib.h>

#include "../common/bench.h"
#include "../common/check.h"
#include "../common/cli.h"
#include "../common/gpu.h"
#include "naive.h"

static const char about[] =
    "01_naive: softmax = exp(x) / sum(exp(x)), with no max subtraction.\n"
    "With no --n or --sizes: Experiment 1 (where float32 overflows, n = 1000), then timing over\n"
    "1K, 10K, 100K, 1M, 10M, 100M on --range/--dist. With --n or --sizes: timing of those sizes.\n"
    "Every row is verified against an fp64 CPU reference before it is timed. Variants: naive.";

static void overflow_experiment(const bench_settings *s, const softmax_variant *naive, uint64_t seed)
{
    const size_t n = 1000;
    const input_spec ranges[] = {{DIST_UNIFORM, 0.0, 10.0}, {DIST_UNIFORM, 500.0, 1000.0}};

    printf("Experiment 1: overflow. n = %zu, uniform inputs.\n", n);
    bench_accuracy(s, "overflow", &naive, 1, n, ranges, 2, seed);
    printf("Why [500,1000] fails: float32 exp(x) is +inf for x > 88.72 (FLT_MAX = 3.4e38 = e^88.72),\n"
           "so the sum is inf and every output is inf/inf = NaN.\n\n");

    printf("Where it breaks: inputs uniform in [h-10, h] for h = 80 ... 100.\n");
    input_spec sweep[21];
    for (int h = 80; h <= 100; h++)
        sweep[h - 80] = (input_spec){DIST_UNIFORM, h - 10.0, (double)h};
    bench_accuracy(s, "overflow_sweep", &naive, 1, n, sweep, 21, seed + 180);
    printf("Past h ~ 84 the sum of 1000 finite exps exceeds FLT_MAX: every output becomes\n"
           "finite/inf = 0 (sum 0, no NaN: a silent wrong answer). Past h = 88.72 single exps\n"
           "overflow too and those outputs are NaN.\n\n");
}

int main(int argc, char **argv)
{
    static const size_t seed_sizes[] = {1000, 10000, 100000, 1000000, 10000000, 100000000};
    static const softmax_variant *const variants[] = {&naive_variant};
    cli_options opts;
    cli_parse_or_exit(argc, argv, &opts, about);
    const softmax_variant *chosen[1];
    const int n_chosen = select_variants(opts.variant, variants, 1, chosen);

    gpu_info gpu;
    gpu_open(&gpu);
    const double ceiling = gpu_copy_ceiling_gbps();
    report_device(&gpu, "device-to-device copy", ceiling);
    FILE *csv = opts.csv_path
                    ? report_csv_open(opts.csv_path, &gpu, "device-to-device copy", ceiling, argc, argv)
                    : NULL;
    const bench_settings s = {.warmup = opts.warmup, .iters = opts.iters, .ceiling_gbps = ceiling,
                              .csv = csv, .relative = RELATIVE_NONE};

    const size_t *sizes = opts.sizes;
    int n_sizes = opts.n_sizes;
    if (n_sizes == 0) {
        overflow_experiment(&s, chosen[0], opts.seed);
        sizes = seed_sizes;
        n_sizes = (int)(sizeof seed_sizes / sizeof seed_sizes[0]);
    }

    printf("Timing: %s [%g,%g], median of %d runs after %d warm-up, L2 flushed before each.\n",
           dist_name(opts.input.dist), opts.input.lo, opts.input.hi, opts.iters, opts.warmup);
    const int failed = bench_timing(&s, "timing", chosen, n_chosen, sizes, n_sizes, opts.input, opts.seed + 1000);
    printf("GB/s counts the 8 bytes per element any softmax must move (read x, write y); this kernel\n"
           "moves 12 (it reads x twice), so once x no longer fits in L2 it cannot pass ~2/3 of the ceiling.\n");

    if (csv)
        report_csv_close(csv, opts.csv_path);
    if (failed)
        die(1, "%d timing row(s) failed verification against the fp64 reference", failed);
    return 0;
}
