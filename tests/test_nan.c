/* The rule for NaN and infinity (common/reference.h): in the fp64 reference, in verification, and
 * on the GPU in every softmax kernel of stages 01-05, on rows with a NaN, a +inf or nothing but -inf
 * planted among ordinary ones. Stage 06's refusal of such logits is test_topk_nonfinite.c's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../01_naive/naive.h"
#include "../02_multipass/multipass.h"
#include "../03_fused3kernel/fused3kernel.h"
#include "../04_warp/warp.h"
#include "../05_online/online.h"
#include "gpu_test.h"

/* ---- The reference and verification -------------------------------------------------------- */

enum { C = 4 };

/* A row of each kind, and (rule_y) the softmax the rule gives it. */
static const float rule_x[][C] = {
    {0.0f, 1.0f, 2.0f, 3.0f},                          /* ordinary                            */
    {0.0f, NAN, 2.0f, 3.0f},                           /* a NaN                               */
    {0.0f, 1.0f, INFINITY, 3.0f},                      /* a +inf                              */
    {-INFINITY, -INFINITY, -INFINITY, -INFINITY},      /* nothing but -inf                    */
    {-INFINITY, NAN, -INFINITY, -INFINITY},            /* a NaN amid -inf: the max is -inf    */
    {INFINITY, INFINITY, -INFINITY, 0.0f},             /* two +inf                            */
    {-INFINITY, 0.0f, -INFINITY, 0.0f},                /* -inf among numbers: 0 there         */
    {3e38f, -3e38f, 3e38f, -INFINITY},                 /* huge but finite: no overflow        */
};
enum { RULE_ROWS = sizeof rule_x / sizeof rule_x[0] };
/* The softmax of rows 1, 2, ...: row 0's is checked against the row on its own. */
static const double rule_y[RULE_ROWS - 1][C] = {
    {NAN, NAN, NAN, NAN}, {NAN, NAN, NAN, NAN}, {NAN, NAN, NAN, NAN}, {NAN, NAN, NAN, NAN},
    {NAN, NAN, NAN, NAN}, {0.0, 0.5, 0.0, 0.5}, {0.5, 0.0, 0.5, 0.0},
};

Test(nan_rule, reference_gives_a_row_without_a_softmax_nan_throughout)
{
    double y[RULE_ROWS * C], alone[C];
    reference_softmax(&rule_x[0][0], y, RULE_ROWS, C);
    /* Row 0 is the ordinary one: exactly what it gets on its own, so no other row leaked into it. */
    reference_softmax(rule_x[0], alone, 1, C);
    for (int c = 0; c < C; c++)
        cr_expect_eq(y[c], alone[c], "row 0, column %d", c);
    cr_expect_float_eq(alone[0] + alone[1] + alone[2] + alone[3], 1.0, 1e-15);
    for (int r = 1; r < RULE_ROWS; r++)
        for (int c = 0; c < C; c++) {
            if (isnan(rule_y[r - 1][c]))
                cr_expect(isnan(y[r * C + c]), "row %d, column %d: %g, not NaN", r, c, y[r * C + c]);
            else
                cr_expect_eq(y[r * C + c], rule_y[r - 1][c], "row %d, column %d: %g", r, c, y[r * C + c]);
        }
}

/* An output that is right by the rule, NaN where the reference is, still fails: NaN never passes,
 * so a row without a softmax cannot pass, written or not (verify.h says why). The rows around it
 * are judged as ever. */
Test(nan_rule, verification_passes_no_nan_even_where_the_reference_is_nan)
{
    double ref[3 * C];
    float out[3 * C];
    const float x[3 * C] = {0.0f, 1.0f, 2.0f, 3.0f, 0.0f, NAN, 2.0f, 3.0f, 3.0f, 2.0f, 1.0f, 0.0f};
    reference_softmax(x, ref, 3, C);
    for (int i = 0; i < 3 * C; i++)
        out[i] = (float)ref[i];
    verify_result v = verify_softmax(out, ref, 3, C);
    cr_expect_not(v.pass);
    cr_expect_eq(v.failures, C, "only the NaN row fails: %zu failures", v.failures);
    cr_expect_eq(v.nonfinite, C);
    cr_expect_eq(v.first_failure, C);
    cr_expect(verify_softmax(out, ref, 1, C).pass, "the row before it alone passes");
    cr_expect(verify_softmax(out + 2 * C, ref + 2 * C, 1, C).pass, "the row after it alone passes");

    for (int c = 0; c < C; c++)
        out[C + c] = 0.25f; /* a number where the reference is NaN fails too */
    v = verify_softmax(out, ref, 3, C);
    cr_expect_eq(v.failures, C);
    cr_expect_eq(v.nonfinite, 0);
}

/* ---- Every softmax kernel of stages 01-05 on the GPU --------------------------------------- */

/* What a row is made into. The three places of a NaN or +inf reach a row's first elements (a
 * scalar head before the first 16-byte boundary, in stage 05), its middle and its last (the
 * tail). NAN_AMID_MINUS_INF puts the NaN where every partial max (of a thread, a float4, a block)
 * is -inf, where the kernels' cases for -inf must not drop it. */
typedef enum {
    ORDINARY,
    NAN_FIRST,
    NAN_MIDDLE,
    NAN_LAST,
    INF_FIRST,
    INF_MIDDLE,
    INF_LAST,
    ALL_MINUS_INF,
    NAN_AMID_MINUS_INF, /* the first half -inf, a NaN in the middle of it */
    MASKED_HALF,        /* the first half -inf: a softmax all the same, 0 there */
    N_KINDS
} row_kind;

static const char *const kind_names[N_KINDS] = {
    "ordinary", "NaN first", "NaN in the middle", "NaN last", "+inf first", "+inf in the middle",
    "+inf last", "all -inf", "NaN amid -inf", "first half -inf"};

static bool has_no_softmax(row_kind k) { return k != ORDINARY && k != MASKED_HALF; }
static bool has_plus_inf(row_kind k) { return k == INF_FIRST || k == INF_MIDDLE || k == INF_LAST; }

static void plant(float *x, size_t cols, row_kind kind)
{
    const size_t half = cols / 2, place[3] = {0, half, cols - 1}; /* first, middle, last */
    if (kind >= NAN_FIRST && kind <= NAN_LAST)
        x[place[kind - NAN_FIRST]] = NAN;
    else if (has_plus_inf(kind))
        x[place[kind - INF_FIRST]] = INFINITY;
    else if (kind != ORDINARY) {
        for (size_t i = 0; i < (kind == ALL_MINUS_INF ? cols : half); i++)
            x[i] = -INFINITY;
        if (kind == NAN_AMID_MINUS_INF)
            x[half / 2] = NAN;
    }
}

/* The output is poisoned with bytes 0x42 (0x42424242 is the float 48.6, no probability), not NaN:
 * an element the kernel never wrote cannot pass for the NaN the rule asks for, nor pass
 * verification. Then the variant runs once and its output is copied back. */
static void run_poisoned_with_a_number(const softmax_variant *variant, softmax_case *c)
{
    void *workspace = workspace_alloc(variant, c);
    cr_assert_eq(cudaMemset(c->y, 0x42, c->n * sizeof(float)), cudaSuccess);
    variant->run(c->x, c->y, c->rows, c->cols, workspace);
    cr_assert_eq(cudaMemcpy(c->y_host, c->y, c->n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    cudaFree(workspace);
}

/* Row r of the output, of the given kind, by the rule: all NaN where the row has no softmax, and
 * verified against the reference where it has one. Stage 01's naive kernel overflows on a +inf as
 * on any logit above 88.72 (reference.h): NaN at the +inf, 0 elsewhere. */
static void expect_rule(const softmax_variant *variant, const softmax_case *c, size_t r, row_kind kind)
{
    const float *x = c->x_host + r * c->cols, *y = c->y_host + r * c->cols;
    const double *ref = c->ref + r * c->cols;
    const char *name = kind_names[kind];
    cr_assert_eq(isnan(ref[0]) != 0, has_no_softmax(kind), "the reference of a row '%s'", name);
    if (!has_no_softmax(kind)) {
        const verify_result v = verify_softmax(y, ref, 1, c->cols);
        EXPECT_PASS(v, "%s, %zu x %zu, row %zu (%s)", variant->name, c->rows, c->cols, r, name);
        return;
    }
    const bool overflows = variant == &naive_variant && has_plus_inf(kind);
    for (size_t i = 0; i < c->cols; i++) {
        const bool right = overflows && x[i] != INFINITY ? y[i] == 0.0f : isnan(y[i]);
        if (!right) {
            cr_expect(right, "%s, %zu x %zu, row %zu (%s): y[%zu] = %g, expected %s", variant->name, c->rows,
                      c->cols, r, name, i, y[i], overflows && x[i] != INFINITY ? "0" : "NaN");
            return;
        }
    }
}

/* The 1-D variants: one softmax over the whole array, made each kind in turn. Sizes: one element,
 * one float4 and a tail (5), a few blocks (1000), and 2^20 + 3 (many blocks, a tail of 3). Logits
 * in [0, 10], where even the naive kernel's ordinary answers are right. */
static void expect_rule_1d(const softmax_variant *variant, size_t n)
{
    softmax_case c = case_create((softmax_shape){1, n}, (input_spec){DIST_UNIFORM, 0.0, 10.0}, 1300 + n);
    float *drawn = malloc(n * sizeof(float));
    cr_assert_not_null(drawn);
    memcpy(drawn, c.x_host, n * sizeof(float));
    for (int k = 0; k < N_KINDS; k++) {
        memcpy(c.x_host, drawn, n * sizeof(float));
        plant(c.x_host, n, (row_kind)k);
        case_refresh(&c);
        run_poisoned_with_a_number(variant, &c);
        expect_rule(variant, &c, 0, (row_kind)k);
    }
    free(drawn);
    case_destroy(&c);
}
static const size_t sizes_1d[] = {1, 5, 1000, ((size_t)1 << 20) + 3};

/* The row variants: row r of kind r % N_KINDS (so ordinary rows sit beside the others, in the same
 * warp where a warp takes several rows), with logits in [-1000, 1000]. The lengths reach every
 * path: a warp per row (33, 1001: not 16-byte aligned; 128: stage 05 puts 4 rows in a warp; 1000,
 * 1024), a block per row (1025), stage 05's cached block (5003, 16385: 1024 threads), its cluster
 * of two blocks on compute capability 9.0 (50257), and its uncached block (70000). */
static void expect_rule_rows(const softmax_variant *variant, size_t cols)
{
    const size_t rows = N_KINDS + 1;
    if (variant->supports && !variant->supports(rows, cols))
        return; /* warp_per_row holds at most 1024 columns in registers */
    softmax_case c = case_create((softmax_shape){rows, cols}, (input_spec){DIST_UNIFORM, -1000.0, 1000.0}, 1400 + cols);
    for (size_t r = 0; r < rows; r++)
        plant(c.x_host + r * cols, cols, (row_kind)(r % N_KINDS));
    case_refresh(&c);
    run_poisoned_with_a_number(variant, &c);
    for (size_t r = 0; r < rows; r++)
        expect_rule(variant, &c, r, (row_kind)(r % N_KINDS));
    case_destroy(&c);
}
static const size_t lengths[] = {1, 33, 128, 1000, 1001, 1024, 1025, 5003, 16385, 50257, 70000};

/* Every softmax variant of stages 01-05; cuDNN is left out (reference.h). */
static const softmax_variant *const variants[] = {
    &naive_variant,          &multipass_variant,    &single_block_merge_variant, &fused_variant,
    &fused_warp_variant,     &online_variant,       &thread_per_row_variant,     &warp_per_row_variant,
    &block_per_row_variant,  &online_rows_variant};
enum {
    N_VARIANTS = sizeof variants / sizeof variants[0],
    N_SIZES_1D = sizeof sizes_1d / sizeof sizes_1d[0],
    N_LENGTHS = sizeof lengths / sizeof lengths[0]
};

static bool one_d(const softmax_variant *v) { return v->supports == single_row_only; }

/* Criterion's parameters are indices and sizes, not pointers: it may run a test in a fresh process. */
typedef struct {
    int variant;
    size_t size; /* n for a 1-D variant, cols for a row variant */
} kernel_params;

ParameterizedTestParameters(nan_rule, every_kernel)
{
    static kernel_params params[N_VARIANTS * (N_SIZES_1D > N_LENGTHS ? N_SIZES_1D : N_LENGTHS)];
    size_t count = 0;
    for (int v = 0; v < N_VARIANTS; v++)
        for (size_t s = 0; s < (one_d(variants[v]) ? N_SIZES_1D : N_LENGTHS); s++)
            params[count++] = (kernel_params){v, one_d(variants[v]) ? sizes_1d[s] : lengths[s]};
    return cr_make_param_array(kernel_params, params, count);
}

ParameterizedTest(kernel_params *p, nan_rule, every_kernel)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    if (one_d(variants[p->variant]))
        expect_rule_1d(variants[p->variant], p->size);
    else
        expect_rule_rows(variants[p->variant], p->size);
}
