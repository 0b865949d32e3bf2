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
    "Every row is verified against an fp64 CPU reference before it is timed.";

static void overflow_experiment(const bench_settings *s, uint64_t seed)
{
    const size_t n = 1000;
    const input_spec safe = {DIST_UNIFORM, 0.0, 10.0}, huge = {DIST_UNIFORM, 500.0, 1000.0};

    printf("Experiment 1: overflow. n = %zu, uniform inputs, naive kernel.\n", n);
    report_accuracy_header();
    for (int k = 0; k < 2; k++) {
        softmax_case c = case_create(n, k == 0 ? safe : huge, seed + (uint64_t)k);
        bench_variant(s, &c, &naive_variant, "overflow", false);
        case_destroy(&c);
    }
    printf("Why [500,1000] fails: float32 exp(x) is +inf for x > 88.72 (FLT_MAX = 3.4e38 = e^88.72),\n"
           "so the sum is inf and every output is inf/inf = NaN.\n\n");

    printf("Where it breaks: inputs uniform in [h-10, h] for h = 80 ... 100.\n");
    report_accuracy_header();
    for (int h = 80; h <= 100; h++) {
        softmax_case c = case_create(n, (input_spec){DIST_UNIFORM, h - 10.0, (double)h},
                                     seed + 100 + (uint64_t)h);
        bench_variant(s, &c, &naive_variant, "overflow_sweep", false);
        case_destroy(&c);
    }
    printf("Past h ~ 84 the sum of 1000 finite exps exceeds FLT_MAX: every output becomes\n"
           "finite/inf = 0 (sum 0, no NaN: a silent wrong answer). Past h = 88.72 single exps\n"
           "overflow too and those outputs are NaN.\n\n");
}

int main(int argc, char **argv)
{
    static const size_t seed_sizes[] = {1000, 10000, 100000, 1000000, 10000000, 100000000};
    cli_options opts;
    cli_parse_or_exit(argc, argv, &opts, about);

    gpu_info gpu;
    gpu_open(&gpu);
    const double ceiling = gpu_copy_ceiling_gbps();
    report_device(&gpu, "device-to-device copy", ceiling);
    FILE *csv = opts.csv_path
                    ? report_csv_open(opts.csv_path, &gpu, "device-to-device copy", ceiling, argc, argv)
                    : NULL;
    const bench_settings s = {.warmup = opts.warmup, .iters = opts.iters, .ceiling_gbps = ceiling, .csv = csv};

    const size_t *sizes = opts.sizes;
    int n_sizes = opts.n_sizes;
    if (n_sizes == 0) {
        overflow_experiment(&s, opts.seed);
        sizes = seed_sizes;
        n_sizes = (int)(sizeof seed_sizes / sizeof seed_sizes[0]);
    }

    printf("Timing: %s [%g,%g], median of %d runs after %d warm-up, L2 flushed before each.\n",
           dist_name(opts.input.dist), opts.input.lo, opts.input.hi, opts.iters, opts.warmup);
    report_timing_header();
    int failed = 0;
    for (int i = 0; i < n_sizes; i++) {
        softmax_case c = case_create(sizes[i], opts.input, opts.seed + 1000 + (uint64_t)i);
        failed += !bench_variant(&s, &c, &naive_variant, "timing", true).check.pass;
        case_destroy(&c);
    }
    printf("GB/s counts the 8 bytes per element any softmax must move (read x, write y); this kernel\n"
           "moves 12 (it reads x twice), so once x no longer fits in L2 it cannot pass ~2/3 of the ceiling.\n");

    if (csv)
        report_csv_close(csv, opts.csv_path);
    if (failed)
        die(1, "%d timing row(s) failed verification against the fp64 reference", failed);
    return 0;
}
