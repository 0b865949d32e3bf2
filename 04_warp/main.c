/* Stage 04's program: the same fused softmax with a shared-memory tree (stage 03) and with warp
 * shuffles, then three ways to map rows to threads, swept over the row length. */
#include <stdio.h>

#include "../03_fused3kernel/fused3kernel.h"
#include "../common/stage.h"
#include "warp.h"

static const char about[] =
    "04_warp: reductions with warp shuffles, and a softmax per row.\n"
    "Variants: fused (stage 03, shared-memory tree), fused_warp (the same with shuffles), and for\n"
    "rows thread_per_row, warp_per_row (rows of up to 1024), block_per_row.\n"
    "With no --n, --sizes or --rows: the 1-D comparison at 1M, 10M, 100M (speedup over fused),\n"
    "then the rows mappings at cols = 32 ... 16384 with rows x cols = 2^25 (speedup over\n"
    "thread_per_row). --n/--sizes run only the first, --rows R --cols C only the second.\n"
    "Every row is verified against an fp64 CPU reference before it is timed.\n"
    "Exercise: --variant exercise runs exercise.cu, yours to complete (README.md, Exercise);\n"
    "./run_solution --variant exercise runs the worked solution, solution/exercise.cu.";

#define SWEEP_ELEMENTS ((size_t)1 << 25) /* 128 MiB of input: twice the L2 */

int main(int argc, char **argv)
{
    static const size_t sizes[] = {1000000, 10000000, 100000000};
    static const softmax_variant *const one_d[] = {&fused_variant, &fused_warp_variant};
    /* The exercise runs only when --variant names it. It takes rows of at most 16 columns, none of
     * the sweep's or the correctness table's: it comes last in row_variants, which those use the
     * first three of, and a default run checks it at a shape of its own. */
    static const softmax_variant *const row_variants[] = {&thread_per_row_variant, &warp_per_row_variant,
                                                          &block_per_row_variant, &warp_exercise_variant};
    static const softmax_variant *const exercise[] = {&warp_exercise_variant};
    static const softmax_variant *const all[] = {&fused_variant,          &fused_warp_variant,
                                                 &thread_per_row_variant, &warp_per_row_variant,
                                                 &block_per_row_variant,  &warp_exercise_variant};
    static const input_spec ranges[] = {{DIST_UNIFORM, 0.0, 10.0},
                                        {DIST_UNIFORM, 500.0, 1000.0},
                                        {DIST_UNIFORM, -1000.0, 1000.0},
                                        {DIST_OUTLIERS, 0.0, 10.0}};
    stage_context st;
    stage_start(&st, argc, argv, about, all, 6, STAGE_SOFTMAX_ROWS, RELATIVE_SPEEDUP);

    if (stage_default_run(&st) && stage_chosen(&st, EXERCISE_VARIANT)) {
        printf("Correctness of the exercise, a half-warp per row: 1001 rows of 13 (the last warp holds\n"
               "one row, 3 lanes of every half hold no column).\n");
        stage_accuracy(&st, "exercise_correctness", exercise, 1, (softmax_shape){1001, 13}, ranges, 4,
                       st.opts.seed);
        printf("\n");
    } else if (stage_default_run(&st)) {
        printf("Correctness of the row mappings: 1000 rows of 1025 (rows not 16-byte aligned).\n");
        stage_accuracy(&st, "rows_correctness", row_variants, 3, (softmax_shape){1000, 1025}, ranges, 4,
                       st.opts.seed);
        printf("\n");
    }
    int failed = stage_timing_1d(&st, one_d, 2, sizes, 3);

    softmax_shape sweep[10];
    for (int k = 0; k < 10; k++)
        sweep[k] = (softmax_shape){SWEEP_ELEMENTS >> (5 + k), (size_t)32 << k};
    failed += stage_timing_rows(&st, "rows_sweep", row_variants, st.opts.rows ? 4 : 3, sweep, 10);
    printf("speedup: over the first variant at the same shape (fused for one softmax over n,\n"
           "thread_per_row for rows). fused and fused_warp run the same algorithm and move the same\n"
           "bytes; only the reduction differs.\n");
    return stage_end(&st, failed);
}
