/* The random sweep: a test a stage, each some 1000 cases drawn from a seed and checked by every
 * variant of the stage that handles them (sweep.h says how to run it longer, or run a case again;
 * sweep.c how cases are drawn). `make stress` runs it longer, from a fresh seed. */
#include "../01_naive/naive.h"
#include "../02_multipass/multipass.h"
#include "../03_fused3kernel/fused3kernel.h"
#include "../04_warp/warp.h"
#include "../05_online/online.h"
#include "../05_online/cudnn_softmax.h"
#include "gpu_test.h"
#include "sweep.h"

/* Where the naive softmax is defined: every exp(x), and their sum over 2^24 logits, finite and
 * normal in float32 (the largest logit is 15, an outlier; the smallest -80, above -87 where exp
 * leaves the normal floats). No huge magnitudes: stage 01 overflows on them by design, as
 * test_stage01.c checks. */
static const input_spec naive_inputs[] = {{DIST_UNIFORM, 0.0, 10.0},    {DIST_UNIFORM, -10.0, 10.0},
                                          {DIST_NORMAL, -3.0, 3.0},     {DIST_OUTLIERS, -5.0, 5.0},
                                          {DIST_UNIFORM, -80.0, -60.0}};

/* Every stable softmax: small logits, [500, 1000] (where exp overflows), [-1000, 1000], and
 * magnitudes of 1e30. */
static const input_spec stable_inputs[] = {
    {DIST_UNIFORM, 0.0, 10.0},      {DIST_NORMAL, -3.0, 3.0},        {DIST_OUTLIERS, -5.0, 5.0},
    {DIST_UNIFORM, 500.0, 1000.0},  {DIST_UNIFORM, -1000.0, 1000.0}, {DIST_NORMAL, -1000.0, 1000.0},
    {DIST_OUTLIERS, 500.0, 1000.0}, {DIST_UNIFORM, -1e30, 1e30},     {DIST_NORMAL, -1e30, 1e30}};

#define COUNT(a) ((int)(sizeof a / sizeof a[0]))

static void sweep_stable(int stage, const softmax_variant *const *variants, int n_variants, bool matrices)
{
    sweep_softmax(&(softmax_sweep){stage, variants, n_variants, stable_inputs, COUNT(stable_inputs), matrices});
}

Test(sweep, stage01)
{
    static const softmax_variant *const variants[] = {&naive_variant};
    sweep_softmax(&(softmax_sweep){1, variants, COUNT(variants), naive_inputs, COUNT(naive_inputs), false});
}

Test(sweep, stage02)
{
    static const softmax_variant *const variants[] = {&multipass_variant};
    sweep_stable(2, variants, COUNT(variants), false);
}

Test(sweep, stage03)
{
    static const softmax_variant *const variants[] = {&single_block_merge_variant, &fused_variant};
    sweep_stable(3, variants, COUNT(variants), false);
}

Test(sweep, stage04)
{
    static const softmax_variant *const variants[] = {&fused_warp_variant, &thread_per_row_variant,
                                                      &warp_per_row_variant, &block_per_row_variant};
    sweep_stable(4, variants, COUNT(variants), true);
}

/* cuDNN too when the build has it: its runs are shown apart, and do not count. */
Test(sweep, stage05)
{
    static const softmax_variant *const variants[] = {&online_variant, &online_rows_variant,
#ifdef HAVE_CUDNN
                                                      &cudnn_variant
#endif
    };
    sweep_stable(5, variants, COUNT(variants), true);
}

Test(sweep, stage06)
{
    sweep_topk(stable_inputs, COUNT(stable_inputs));
}
