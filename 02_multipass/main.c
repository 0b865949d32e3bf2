/* Stage 02's program: the stable softmax passes where stage 01 overflowed, and what the extra pass
 * costs: seed 004's Experiment 2, naive (stage 01, measured in this run) vs multi-pass. */
#include <stdio.h>

#include "../01_naive/naive.h"
#include "../common/bench.h"
#include "../common/check.h"
#include "../common/cli.h"
#include "../common/gpu.h"
#include "multipass.h"

static const char about[] =
    "02_multipass: stable softmax in three phases (max, sum of exp(x - max), normalize), each\n"
    "reduction repeated level by level. Variants: naive (stage 01, the baseline), multipass.\n"
    "With no --n or --sizes: both variants on [0,10], [500,1000] and [-1000,1000] (n = 1000), then\n"
    "timing over 1K ... 100M on --range/--dist with the overhead of multipass over naive.\n"
    "Every row is verified against an fp64 CPU reference before it is timed.";

int main(int argc, char **argv)
{
    static const size_t seed_sizes[] = {1000, 10000, 100000, 1000000, 10000000, 100000000};
    static const softmax_variant *const variants[] = {&naive_variant, &multipass_variant};
    static const input_spec ranges[] = {{DIST_UNIFORM, 0.0, 10.0},
                                        {DIST_UNIFORM, 500.0, 1000.0},
                                        {DIST_UNIFORM, -1000.0, 1000.0}};
    cli_options opts;
    cli_parse_or_exit(argc, argv, &opts, about);
    const softmax_variant *chosen[2];
    const int n_chosen = select_variants(opts.variant, variants, 2, chosen);

    gpu_info gpu;
    gpu_open(&gpu);
    const double ceiling = gpu_copy_ceiling_gbps();
    report_device(&gpu, "device-to-device copy", ceiling);
    FILE *csv = opts.csv_path
                    ? report_csv_open(opts.csv_path, &gpu, "device-to-device copy", ceiling, argc, argv)
                    : NULL;
    const bench_settings s = {.warmup = opts.warmup, .iters = opts.iters, .ceiling_gbps = ceiling,
                              .csv = csv, .relative = RELATIVE_OVERHEAD};

    const size_t *sizes = opts.sizes;
    int n_sizes = opts.n_sizes;
    if (n_sizes == 0) {
        printf("Stability: n = 1000, uniform inputs.\n");
        bench_accuracy(&s, "stability", chosen, n_chosen, 1000, ranges, 3, opts.seed);
        printf("Subtracting the max keeps every exp() in (0, 1]: no input range can overflow it.\n\n");
        sizes = seed_sizes;
        n_sizes = (int)(sizeof seed_sizes / sizeof seed_sizes[0]);
    }

    printf("Timing: %s [%g,%g], median of %d runs after %d warm-up, L2 flushed before each.\n",
           dist_name(opts.input.dist), opts.input.lo, opts.input.hi, opts.iters, opts.warmup);
    const int failed = bench_timing(&s, "timing", chosen, n_chosen, sizes, n_sizes, opts.input, opts.seed + 1000);
    printf("overhead: extra time over naive at the same size. multipass moves 16 bytes per element\n"
           "(x read three times, y written once) where naive moves 12, and launches one kernel per\n"
           "reduction level.\n");

    if (csv)
        report_csv_close(csv, opts.csv_path);
    if (failed)
        die(1, "%d timing row(s) failed verification against the fp64 reference", failed);
    return 0;
}
