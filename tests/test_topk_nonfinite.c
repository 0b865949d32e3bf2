/* Stage 06's rule for NaN and +inf logits (host/topk_reference.h): top-K of a softmax with one is not
 * defined, so a file holding one is refused before the GPU, naming the first in the file's own
 * shape; -inf logits are masked ones and pass. The scan itself, then the program. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../06_fused_topk/host/dtype.h"
#include "../common/gpu.h"
#include "../06_fused_topk/host/npy.h"
#include "npy_test.h"
#include "run_stage.h"

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

static const char refusal[] = "is not defined; mask with -inf instead";

Test(nan_rule, stage06_refuses_a_file_with_a_nan_or_plus_inf_logit)
{
    enum { V = 1001 };
    static float x[2 * 3 * V];
    static uint16_t h[4 * 100];
    char path[64], args[128], want[512];
    snprintf(path, sizeof path, "/tmp/nan-logits-%d.npy", (int)getpid());
    snprintf(args, sizeof args, "--input %s", path);

    x[(1 * 3 + 0) * V + 1000] = NAN;
    x[6 * V - 1] = INFINITY; /* later: the first one is named */
    save_npy(path, "<f4", 4, (const size_t[]){2, 3, V}, 3, x);
    snprintf(want, sizeof want, "run: --input %s: logit [1, 0, 1000] is NaN: top-K of a softmax with a NaN "
             "(or +inf) logit %s\n", path, refusal);
    outcome o = run_stage("06_fused_topk", args);
    cr_expect_eq(o.status, 2);
    cr_expect_str_eq(o.err, want);

    for (int i = 0; i < 4 * 100; i++)
        h[i] = float_to_fp16((float)(i % 9));
    h[3 * 100 + 0] = 0x7C00;
    save_npy(path, "<f2", 2, (const size_t[]){4, 100}, 2, h);
    snprintf(want, sizeof want, "run: --input %s: logit [3, 0] is +inf: top-K of a softmax with a NaN "
             "(or +inf) logit %s\n", path, refusal);
    o = run_stage("06_fused_topk", args);
    cr_expect_eq(o.status, 2);
    cr_expect_str_eq(o.err, want);
    remove(path);
}

/* A row of nothing but -inf has no softmax (its reference probabilities are NaN, which no kernel's
 * can match): stage 06 refuses the file before the GPU, naming the first such row in the file's
 * shape, where it would otherwise fail the check after the run, as if the machine were at fault. */
Test(nan_rule, stage06_refuses_a_file_with_a_row_of_only_minus_inf)
{
    enum { V = 7 };
    static float x[2 * 3 * V];
    for (int i = 0; i < 2 * 3 * V; i++)
        x[i] = (float)(i % 5);
    for (int c = 0; c < V; c++)
        x[(1 * 3 + 2) * V + c] = -INFINITY;
    x[(0 * 3 + 1) * V + 3] = -INFINITY; /* one masked logit in a row of numbers: no refusal */
    char path[64], args[128], want[512];
    snprintf(path, sizeof path, "/tmp/masked-row-%d.npy", (int)getpid());
    snprintf(args, sizeof args, "--input %s --k 3", path);
    save_npy(path, "<f4", 4, (const size_t[]){2, 3, V}, 3, x);
    snprintf(want, sizeof want, "run: --input %s: row [1, 2] is all -inf: a row with every logit masked has no "
             "softmax, so no top K\n", path);
    const outcome o = run_stage("06_fused_topk", args);
    cr_expect_eq(o.status, 2);
    cr_expect_str_eq(o.err, want);
    remove(path);

    npy_logits a = {.dtype = DTYPE_F32, .ndim = 2, .shape = {6, V}, .rows = 6, .cols = V, .data = x};
    char where[64] = "";
    cr_expect(npy_find_masked_row(&a, where, sizeof where));
    cr_expect_str_eq(where, "[5]");
    x[(1 * 3 + 2) * V + V - 1] = 2.0f; /* its last logit a number: every row has one */
    cr_expect_not(npy_find_masked_row(&a, where, sizeof where));
}

/* -inf logits are masked ones: the file passes the check, and every variant's answer passes
 * verification (with no GPU, the program stops after the check, exit 1). */
Test(nan_rule, stage06_takes_minus_inf_logits)
{
    enum { V = 1001 };
    static float x[2 * 3 * V];
    for (int i = 0; i < 2 * 3 * V; i++)
        x[i] = i % 3 ? -INFINITY : (float)(i % 11);
    char path[64], args[160];
    snprintf(path, sizeof path, "/tmp/masked-logits-%d.npy", (int)getpid());
    save_npy(path, "<f4", 4, (const size_t[]){2, 3, V}, 3, x);
    snprintf(args, sizeof args, "--input %s --k 5 --iters 2 --warmup 1", path);
    const outcome o = run_stage("06_fused_topk", args);
    cr_expect_null(strstr(o.err, refusal), "%s", o.err);
    char reason[256];
    if (gpu_available(reason, sizeof reason))
        cr_expect_eq(o.status, 0, "exit %d: %s", o.status, o.err);
    else
        cr_expect(o.status == 1 && strstr(o.err, "no CUDA device") != NULL, "exit %d: %s", o.status, o.err);
    remove(path);
}

