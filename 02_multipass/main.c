/* Stage 02's program: the stable softmax passes where stage 01 overflowed, and what the extra pass
 * costs: Experiment 2 (claims C2 and C3 in EXPERIMENTS.md), naive (stage 01, measured in this run)
 * vs multi-pass. */
#include <stdio.h>

#include "../01_naive/naive.h"
#include "../common/stage.h"
#include "multipass.h"

static const char about[] =
    "02_multipass: stable softmax in three phases (max, sum of exp(x - max), normalize), each\n"
    "reduction repeated level by level. Variants: naive (stage 01, the baseline), multipass.\n"
    "With no --n or --sizes: both variants on [0,10], [500,1000] and [-1000,1000] (n = 1000), then\n"
    "timing over 1K ... 100M on --range/--dist with the overhead of multipass over naive.\n"
    "Every row is verified against an fp64 CPU reference before it is timed.\n"
    "Exercise: --variant exercise runs exercise.cu, yours to complete (README.md, Exercise);\n"
    "./run_solution --variant exercise runs the worked solution, solution/exercise.cu.";

int main(int argc, char **argv)
{
    static const size_t sizes[] = {1000, 10000, 100000, 1000000, 10000000, 100000000};
    static const softmax_variant *const variants[] = {&naive_variant, &multipass_variant, &multipass_exercise_variant};
    static const input_spec ranges[] = {{DIST_UNIFORM, 0.0, 10.0},
                                        {DIST_UNIFORM, 500.0, 1000.0},
                                        {DIST_UNIFORM, -1000.0, 1000.0}};
    stage_context st;
    stage_start(&st, argc, argv, about, variants, 3, STAGE_SOFTMAX_1D, RELATIVE_OVERHEAD);

    if (stage_default_run(&st)) {
        printf("Stability: n = 1000, uniform inputs.\n");
        stage_accuracy(&st, "stability", variants, 3, (softmax_shape){1, 1000}, ranges, 3, st.opts.seed);
        printf("Subtracting the max keeps every exp() in (0, 1]: no input range can overflow it.\n\n");
    }
    const int failed = stage_timing_1d(&st, variants, 3, sizes, 6);
    printf("overhead: extra time over naive at the same size. multipass moves 16 bytes per element\n"
           "(x read three times, y written once) where naive moves 12, and launches one kernel per\n"
           "reduction level.\n");
    return stage_end(&st, failed);
}
