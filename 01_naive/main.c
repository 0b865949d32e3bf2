/* Stage 01's program: Experiment 1 (overflow), then the naive kernel's timing from 1K to 100M.
 * All plumbing (flags, inputs, reference, verification, timing, tables, CSV) is common/. */
#include <stdio.h>

#include "../common/stage.h"
#include "naive.h"

static const char about[] =
    "01_naive: softmax = exp(x) / sum(exp(x)), with no max subtraction.\n"
    "With no --n or --sizes: Experiment 1 (where float32 overflows, n = 1000), then timing over\n"
    "1K, 10K, 100K, 1M, 10M, 100M on --range/--dist. With --n or --sizes: timing of those sizes.\n"
    "Every row is verified against an fp64 CPU reference before it is timed. Variants: naive.\n"
    "Exercise: --variant exercise runs exercise.cu, yours to complete (README.md, Exercise);\n"
    "./run_solution --variant exercise runs the worked solution, solution/exercise.cu.";

static void overflow_experiment(const stage_context *st, const softmax_variant *const *variants, int n_variants)
{
    const size_t n = 1000;
    const input_spec ranges[] = {{DIST_UNIFORM, 0.0, 10.0}, {DIST_UNIFORM, 500.0, 1000.0}};

    printf("Experiment 1: overflow. n = %zu, uniform inputs.\n", n);
    stage_accuracy(st, "overflow", variants, n_variants, (softmax_shape){1, n}, ranges, 2, st->opts.seed);
    printf("Why [500,1000] fails: float32 exp(x) is +inf for x > 88.72 (FLT_MAX = 3.4e38 = e^88.72),\n"
           "so the sum is inf and every output is inf/inf = NaN.\n\n");

    printf("Where it breaks: inputs uniform in [h-10, h] for h = 80 ... 100.\n");
    input_spec sweep[21];
    for (int h = 80; h <= 100; h++)
        sweep[h - 80] = (input_spec){DIST_UNIFORM, h - 10.0, (double)h};
    stage_accuracy(st, "overflow_sweep", variants, n_variants, (softmax_shape){1, n}, sweep, 21,
                   st->opts.seed + 180);
    printf("Past h ~ 84 the sum of 1000 finite exps exceeds FLT_MAX: every output becomes\n"
           "finite/inf = 0 (sum 0, no NaN: a silent wrong answer). Past h = 88.72 single exps\n"
           "overflow too and those outputs are NaN.\n\n");
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {1000, 10000, 100000, 1000000, 10000000, 100000000};
    static const softmax_variant *const variants[] = {&naive_variant, &naive_exercise_variant};
    stage_context st;
    stage_start(&st, argc, argv, about, variants, 2, STAGE_SOFTMAX_1D, RELATIVE_NONE);

    if (stage_default_run(&st))
        overflow_experiment(&st, variants, 2);
    const int failed = stage_timing_1d(&st, variants, 2, sizes, 6);
    printf("GB/s counts the 8 bytes per element any softmax must move (read x, write y); this kernel\n"
           "moves 12 (it reads x twice), so once x no longer fits in L2 it cannot pass ~2/3 of the ceiling.\n");
    return stage_end(&st, failed);
}
