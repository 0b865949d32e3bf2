/* Stage 03's program: seed 004's Experiment 3, multi-pass (stage 02, measured in this run) against
 * the two versions of the fused three-kernel softmax, the seed's and the one that scales. */
#include <stdio.h>

#include "../02_multipass/multipass.h"
#include "../common/bench.h"
#include "../common/check.h"
#include "../common/cli.h"
#include "../common/gpu.h"
#include "fused3kernel.h"

static const char about[] =
    "03_fused3kernel: per-block max and sum in one read, a rescaled merge, a normalize: 3 launches.\n"
    "Variants: multipass (stage 02, the baseline), fused_seed (the merge in one block, as seed 004\n"
    "wrote it), fused (the merge spread over many blocks).\n"
    "With no --n or --sizes: all variants on [0,10], [500,1000], [-1000,1000] and outliers\n"
    "(n = 100K), then timing at 100K, 1M, 10M, 100M with the speedup over multipass.\n"
    "Every row is verified against an fp64 CPU reference before it is timed.";

int main(int argc, char **argv)
{
    static const size_t seed_sizes[] = {100000, 1000000, 10000000, 100000000};
    static const softmax_variant *const variants[] = {&multipass_variant, &fused_seed_variant, &fused_variant};
    static const input_spec ranges[] = {{DIST_UNIFORM, 0.0, 10.0},
                                        {DIST_UNIFORM, 500.0, 1000.0},
                                        {DIST_UNIFORM, -1000.0, 1000.0},
                                        {DIST_OUTLIERS, 0.0, 10.0}};
    cli_options opts;
    cli_parse_or_exit(argc, argv, &opts, about);
    const softmax_variant *chosen[3];
    const int n_chosen = select_variants(opts.variant, variants, 3, chosen);

    gpu_info gpu;
    gpu_open(&gpu);
    const double ceiling = gpu_copy_ceiling_gbps();
    report_device(&gpu, "device-to-device copy", ceiling);
    FILE *csv = opts.csv_path
                    ? report_csv_open(opts.csv_path, &gpu, "device-to-device copy", ceiling, argc, argv)
                    : NULL;
    const bench_settings s = {.warmup = opts.warmup, .iters = opts.iters, .ceiling_gbps = ceiling,
                              .csv = csv, .relative = RELATIVE_SPEEDUP};

    const size_t *sizes = opts.sizes;
    int n_sizes = opts.n_sizes;
    if (n_sizes == 0) {
        printf("Correctness: n = 100K (391 blocks of statistics to merge).\n");
        bench_accuracy(&s, "stability", chosen, n_chosen, 100000, ranges, 4, opts.seed);
        printf("\n");
        sizes = seed_sizes;
        n_sizes = (int)(sizeof seed_sizes / sizeof seed_sizes[0]);
    }

    printf("Timing: %s [%g,%g], median of %d runs after %d warm-up, L2 flushed before each.\n",
           dist_name(opts.input.dist), opts.input.lo, opts.input.hi, opts.iters, opts.warmup);
    const int failed = bench_timing(&s, "timing", chosen, n_chosen, sizes, n_sizes, opts.input, opts.seed + 1000);
    printf("speedup: multipass time / this time at the same size. Both fused versions move 12 bytes\n"
           "per element (multipass 16) in 3 launches; fused_seed merges n/256 block statistics in a\n"
           "single block, which is why it falls behind as n grows.\n");

    if (csv)
        report_csv_close(csv, opts.csv_path);
    if (failed)
        die(1, "%d timing row(s) failed verification against the fp64 reference", failed);
    return 0;
}
