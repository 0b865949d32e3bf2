/* The rule for NaN and infinity (common/reference.h, common/topk.h): in the fp64 reference, in
 * verification, in stage 06's refusal of such logits (the scan, and the program itself), and on the
 * GPU in every softmax kernel of stages 01-05, on rows with a NaN, a +inf or nothing but -inf
 * planted among ordinary ones. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../01_naive/naive.h"
#include "../02_multipass/multipass.h"
#include "../03_fused3kernel/fused3kernel.h"
#include "../04_warp/warp.h"
#include "../05_online/online.h"
#include "../common/dtype.h"
#include "../common/npy.h"
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

/* ---- Stage 06's scan for NaN and +inf logits ----------------------------------------------- */

Test(nan_rule, scan_finds_the_first_nan_or_plus_inf_float32)
{
    enum { N = 10000 };
    static float x[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)(i % 17) - 8.0f;
    x[3] = x[N - 1] = -INFINITY;
    x[100] = FLT_MAX;
    cr_expect_eq(first_nan_or_inf(x, N, DTYPE_F32), N, "-inf and huge numbers are fine");
    x[9999] = NAN;
    cr_expect_eq(first_nan_or_inf(x, N, DTYPE_F32), 9999);
    x[4096] = INFINITY; /* the first of a chunk */
    cr_expect_eq(first_nan_or_inf(x, N, DTYPE_F32), 4096);
    x[4095] = -NAN;
    cr_expect_eq(first_nan_or_inf(x, N, DTYPE_F32), 4095);
    cr_expect_eq(first_nan_or_inf(x, 4095, DTYPE_F32), 4095, "n when none is among the first n");
}

/* 16-bit patterns at index 3 of five values: NaN (quiet, signalling, negative, with payloads) and
 * +inf are found; -inf and the largest finite values are not. */
Test(nan_rule, scan_reads_bf16_and_fp16_bit_patterns)
{
    static const struct {
        logit_dtype dtype;
        uint16_t bits;
        size_t found;
    } cases[] = {
        {DTYPE_BF16, 0x7FC0, 3}, {DTYPE_BF16, 0x7F81, 3}, {DTYPE_BF16, 0xFFC1, 3}, {DTYPE_BF16, 0x7F80, 3},
        {DTYPE_BF16, 0xFF80, 5}, {DTYPE_BF16, 0x7F7F, 5}, {DTYPE_BF16, 0xFF7F, 5}, {DTYPE_F16, 0x7E00, 3},
        {DTYPE_F16, 0x7C01, 3},  {DTYPE_F16, 0xFE00, 3},  {DTYPE_F16, 0x7C00, 3},  {DTYPE_F16, 0xFC00, 5},
        {DTYPE_F16, 0x7BFF, 5},  {DTYPE_F16, 0xFBFF, 5},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const bool bf16 = cases[k].dtype == DTYPE_BF16;
        uint16_t h[5];
        for (int i = 0; i < 5; i++)
            h[i] = bf16 ? float_to_bf16((float)i - 2.5f) : float_to_fp16((float)i - 2.5f);
        h[3] = cases[k].bits;
        cr_expect_eq(first_nan_or_inf(h, 5, cases[k].dtype), cases[k].found, "%s 0x%04X",
                     dtype_name(cases[k].dtype), cases[k].bits);
    }
}

/* The place of the first NaN or +inf in the file's own shape, [b, t, v] or [r, v], and which. */
Test(nan_rule, scan_names_the_place_in_the_files_shape)
{
    enum { V = 1001 };
    static float x3[2 * 3 * V];
    for (int i = 0; i < 2 * 3 * V; i++)
        x3[i] = i % 5 ? (float)(i % 7) : -INFINITY;
    npy_logits a = {.dtype = DTYPE_F32, .ndim = 3, .shape = {2, 3, V}, .rows = 6, .cols = V, .data = x3};
    char where[80] = "untouched";
    cr_expect_null(npy_find_nan_or_inf(&a, where, sizeof where), "-inf is fine");
    cr_expect_str_eq(where, "untouched");
    x3[6 * V - 1] = INFINITY;
    x3[(1 * 3 + 2) * V + 999] = NAN;
    cr_expect_str_eq(npy_find_nan_or_inf(&a, where, sizeof where), "NaN");
    cr_expect_str_eq(where, "[1, 2, 999]");
    x3[(0 * 3 + 1) * V + 5] = INFINITY;
    cr_expect_str_eq(npy_find_nan_or_inf(&a, where, sizeof where), "+inf");
    cr_expect_str_eq(where, "[0, 1, 5]");

    uint16_t h[4 * 7] = {0};
    npy_logits b = {.dtype = DTYPE_F16, .ndim = 2, .shape = {4, 7}, .rows = 4, .cols = 7, .data = h};
    h[3 * 7 + 0] = 0x7C00;
    cr_expect_str_eq(npy_find_nan_or_inf(&b, where, sizeof where), "+inf");
    cr_expect_str_eq(where, "[3, 0]");
    b.dtype = DTYPE_BF16; /* the same bits as bf16 are a number (1.6e-36) */
    cr_expect_null(npy_find_nan_or_inf(&b, where, sizeof where));
    h[2 * 7 + 6] = 0xFFC1;
    cr_expect_str_eq(npy_find_nan_or_inf(&b, where, sizeof where), "NaN");
    cr_expect_str_eq(where, "[2, 6]");
}

/* ---- Stage 06 refuses such a file before the GPU ------------------------------------------- */

/* Stage 06 with `args`: its exit status, and what it wrote on stderr in err (stdout is dropped). */
static int run_topk(const char *args, char *err, size_t len)
{
    char exe[4096], cmd[8192];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    cr_assert_gt(n, 0);
    exe[n] = '\0';
    *strstr(exe, "/tests/build/") = '\0'; /* this binary is <root>/tests/build/run_tests */
    snprintf(cmd, sizeof cmd, "'%s/06_fused_topk/run' %s 2>&1 >/dev/null", exe, args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    err[fread(err, 1, len - 1, p)] = '\0';
    const int status = pclose(p);
    cr_assert(WIFEXITED(status), "%s did not exit normally", cmd);
    return WEXITSTATUS(status);
}

static const char refusal[] = "is not defined; mask with -inf instead";

Test(nan_rule, stage06_refuses_a_file_with_a_nan_or_plus_inf_logit)
{
    enum { V = 1001 };
    static float x[2 * 3 * V];
    static uint16_t h[4 * 100];
    char path[64], args[128], err[1024], want[512];
    snprintf(path, sizeof path, "/tmp/nan-logits-%d.npy", (int)getpid());
    snprintf(args, sizeof args, "--input %s", path);

    x[(1 * 3 + 0) * V + 1000] = NAN;
    x[6 * V - 1] = INFINITY; /* later: the first one is named */
    cr_assert_eq(npy_write(path, "<f4", 4, (const size_t[]){2, 3, V}, 3, x, err, sizeof err), 0, "%s", err);
    snprintf(want, sizeof want, "run: --input %s: logit [1, 0, 1000] is NaN: top-K of a softmax with a NaN "
             "(or +inf) logit %s\n", path, refusal);
    cr_expect_eq(run_topk(args, err, sizeof err), 2);
    cr_expect_str_eq(err, want);

    for (int i = 0; i < 4 * 100; i++)
        h[i] = float_to_fp16((float)(i % 9));
    h[3 * 100 + 0] = 0x7C00;
    cr_assert_eq(npy_write(path, "<f2", 2, (const size_t[]){4, 100}, 2, h, err, sizeof err), 0, "%s", err);
    snprintf(want, sizeof want, "run: --input %s: logit [3, 0] is +inf: top-K of a softmax with a NaN "
             "(or +inf) logit %s\n", path, refusal);
    cr_expect_eq(run_topk(args, err, sizeof err), 2);
    cr_expect_str_eq(err, want);
    remove(path);
}

/* -inf logits are masked ones: the file passes the check (and with no GPU, the program then stops
 * at that, exit 1). */
Test(nan_rule, stage06_takes_minus_inf_logits)
{
    enum { V = 1001 };
    static float x[2 * 3 * V];
    for (int i = 0; i < 2 * 3 * V; i++)
        x[i] = i % 3 ? -INFINITY : (float)(i % 11);
    char path[64], args[160], err[4096];
    snprintf(path, sizeof path, "/tmp/masked-logits-%d.npy", (int)getpid());
    cr_assert_eq(npy_write(path, "<f4", 4, (const size_t[]){2, 3, V}, 3, x, err, sizeof err), 0, "%s", err);
    snprintf(args, sizeof args, "--input %s --k 5 --iters 2 --warmup 1", path);
    const int status = run_topk(args, err, sizeof err);
    cr_expect_neq(status, 2, "%s", err);
    cr_expect_null(strstr(err, refusal), "%s", err);
    char reason[256];
    if (!gpu_available(reason, sizeof reason))
        cr_expect(status == 1 && strstr(err, "no CUDA device") != NULL, "exit %d: %s", status, err);
    remove(path);
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
