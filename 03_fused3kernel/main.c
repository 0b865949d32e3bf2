/* Stage 03's program: Experiment 3, multi-pass (stage 02, measured in this run) against the two
 * versions of the fused three-kernel softmax, the merge in one block and the merge that scales;
 * and stage 01's naive softmax, unstable but the time a stable one is judged against (claim C13). */
#include <stdio.h>

#include "../01_naive/naive.h"
#include "../02_multipass/multipass.h"
#include "../common/stage.h"
#include "fused3kernel.h"

static const char about[] =
    "03_fused3kernel: per-block max and sum in one read, a rescaled merge, a normalize: 3 launches.\n"
    "Variants: multipass (stage 02, the baseline), single_block_merge (the merge in one block of 256\n"
    "threads), fused (the merge spread over many blocks); naive (stage 01, timed only: it overflows).\n"
    "With no --n or --sizes: the stable variants on [0,10], [500,1000], [-1000,1000] and outliers\n"
    "(n = 100K), then timing at 100K, 1M, 10M, 100M with the speedup over multipass.\n"
    "Every row is verified against an fp64 CPU reference before it is timed.\n"
    "Exercise: --variant exercise runs exercise.cu, yours to complete (README.md, Exercise);\n"
    "./run_solution --variant exercise runs the worked solution, solution/exercise.cu.";

int main(int argc, char **argv)
{
    static const size_t sizes[] = {100000, 1000000, 10000000, 100000000};
    static const softmax_variant *const stable[] = {&multipass_variant, &single_block_merge_variant, &fused_variant,
                                                    &fused3kernel_exercise_variant};
    static const softmax_variant *const timed[] = {&multipass_variant, &single_block_merge_variant, &fused_variant,
                                                   &naive_variant, &fused3kernel_exercise_variant};
    static const input_spec ranges[] = {{DIST_UNIFORM, 0.0, 10.0},
                                        {DIST_UNIFORM, 500.0, 1000.0},
                                        {DIST_UNIFORM, -1000.0, 1000.0},
                                        {DIST_OUTLIERS, 0.0, 10.0}};
    stage_context st;
    stage_start(&st, argc, argv, about, timed, 5, STAGE_SOFTMAX_1D, RELATIVE_SPEEDUP);

    if (stage_default_run(&st)) {
        printf("Correctness: n = 100K (391 blocks of statistics to merge).\n");
        stage_accuracy(&st, "stability", stable, 4, (softmax_shape){1, 100000}, ranges, 4, st.opts.seed);
        printf("\n");
    }
    const int failed = stage_timing_1d(&st, timed, 5, sizes, 4);
    printf("speedup: multipass time / this time at the same size. Both fused versions move 12 bytes\n"
           "per element (multipass 16) in 3 launches; single_block_merge merges n/256 block statistics\n"
           "in one block, which is why it falls behind as n grows. naive (12 bytes, 2 launches) is the\n"
           "unstable softmax of stage 01, timed on [0,10], where it is right.\n");
    return stage_end(&st, failed);
}
