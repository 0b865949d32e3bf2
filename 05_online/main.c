/* Stage 05's program: the online softmax against every earlier stage and cuDNN, one softmax over n
 * and a softmax per row, with the bytes each moves side by side. */
#include <stdio.h>

#include "../02_multipass/multipass.h"
#include "../03_fused3kernel/fused3kernel.h"
#include "../04_warp/warp.h"
#include "cudnn_softmax.h"
#include "../common/stage.h"
#include "online.h"

static const char about[] =
    "05_online: the online (max, sum) statistic: max and sum in one read.\n"
    "Variants: cudnn (cudnnSoftmaxForward, when found at build time; the baseline), multipass (02),\n"
    "fused (03), fused_warp (04), online; for rows block_per_row (04) and online_rows.\n"
    "With no --n, --sizes or --rows: correctness of the row variants, one softmax over 1M, 10M, 100M,\n"
    "then rows 131072 x 128, 4096 x 4096 and 8192 x 50257, with the speedup over cuDNN.\n"
    "Every row is verified against an fp64 CPU reference before it is timed.\n"
    "Exercise: --variant exercise runs exercise.cu, yours to complete (README.md, Exercise);\n"
    "./run_solution --variant exercise runs the worked solution, solution/exercise.cu.";

#ifdef HAVE_CUDNN
#define CUDNN_FIRST &cudnn_variant,
#define WITH_CUDNN 1
#else
#define CUDNN_FIRST
#define WITH_CUDNN 0
#endif

int main(int argc, char **argv)
{
    static const size_t sizes[] = {1000000, 10000000, 100000000};
    static const softmax_shape shapes[] = {{131072, 128}, {4096, 4096}, {8192, 50257}};
    static const softmax_variant *const one_d[] = {CUDNN_FIRST & multipass_variant, &fused_variant,
                                                   &fused_warp_variant, &online_variant, &online_exercise_variant};
    static const softmax_variant *const row_variants[] = {CUDNN_FIRST & block_per_row_variant,
                                                          &online_rows_variant};
    static const softmax_variant *const all[] = {CUDNN_FIRST & multipass_variant, &fused_variant,
                                                 &fused_warp_variant, &online_variant, &block_per_row_variant,
                                                 &online_rows_variant, &online_exercise_variant};
    static const input_spec ranges[] = {{DIST_UNIFORM, 0.0, 10.0},
                                        {DIST_UNIFORM, 500.0, 1000.0},
                                        {DIST_UNIFORM, -1000.0, 1000.0},
                                        {DIST_OUTLIERS, 0.0, 10.0}};
    const int n_one_d = 5 + WITH_CUDNN, n_rows = 2 + WITH_CUDNN;
    stage_context st;
    stage_start(&st, argc, argv, about, all, 7 + WITH_CUDNN, STAGE_SOFTMAX_ROWS, RELATIVE_SPEEDUP);
    if (!WITH_CUDNN)
        printf("cuDNN was not found at build time (make CUDNN_HOME=...): its rows are left out.\n\n");

    if (stage_default_run(&st)) {
        printf("Correctness of the row variants: 7 rows of 50257 (rows not 16-byte aligned).\n");
        stage_accuracy(&st, "rows_correctness", row_variants, n_rows, (softmax_shape){7, 50257}, ranges, 4,
                       st.opts.seed);
        printf("\n");
    }
    int failed = stage_timing_1d(&st, one_d, n_one_d, sizes, 3);
    failed += stage_timing_rows(&st, "rows", row_variants, n_rows, shapes, 3);
    printf("speedup: over the first variant at the same shape (cuDNN when it was built in).\n"
           "B/elem: multipass reads x three times (16), fused, fused_warp and online twice (12);\n"
           "online_rows reads each row once and keeps it on chip (8).\n");
    return stage_end(&st, failed);
}
