/* The CPU side of stage 06: the fp64 top-K reference against values worked out by hand, its
 * verification catching planted mistakes, and the 16-bit conversions (.npy files: test_npy.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../06_fused_topk/host/dtype.h"
#include "../common/inputs.h"
#include "../06_fused_topk/host/topk_reference.h"

Test(topk_reference, hand_worked_row_with_ties_and_a_masked_entry)
{
    /* 3 appears twice: the lower index (1) ranks first. -inf ranks last, with probability 0. */
    const float x[5] = {1.0f, 3.0f, 3.0f, 2.0f, -INFINITY};
    int idx[5];
    double prob[5];
    reference_topk(x, 1, 5, 5, idx, prob);
    const int want[5] = {1, 2, 3, 0, 4};
    const double d = 1.0 + exp(-1.0) + exp(-2.0) + 1.0; /* sum of exp(x - 3) */
    const double want_p[5] = {1.0 / d, 1.0 / d, exp(-1.0) / d, exp(-2.0) / d, 0.0};
    for (int j = 0; j < 5; j++) {
        cr_expect_eq(idx[j], want[j], "rank %d: index %d, expected %d", j, idx[j], want[j]);
        cr_expect_float_eq(prob[j], want_p[j], 1e-15, "rank %d", j);
    }
}

Test(topk_reference, rows_are_independent_and_k_is_a_prefix)
{
    float x[2 * 6] = {0, 5, 1, 4, 2, 3, /* row 1: */ 9, 9, 9, 9, 9, 9};
    int idx3[6], idx6[12];
    double p3[6], p6[12];
    reference_topk(x, 2, 6, 3, idx3, p3);
    reference_topk(x, 2, 6, 6, idx6, p6);
    const int want[2][3] = {{1, 3, 5}, {0, 1, 2}};
    for (int r = 0; r < 2; r++)
        for (int j = 0; j < 3; j++) {
            cr_expect_eq(idx3[r * 3 + j], want[r][j]);
            cr_expect_eq(idx6[r * 6 + j], idx3[r * 3 + j], "the top 3 is the first 3 of the top 6");
        }
    cr_expect_float_eq(p6[6 + 5], 1.0 / 6.0, 1e-15, "a row of equal logits is uniform");
}

Test(topk_reference, all_masked_row_has_no_answer)
{
    const float x[3] = {-INFINITY, -INFINITY, -INFINITY};
    int idx[1];
    double prob[1];
    reference_topk(x, 1, 3, 1, idx, prob);
    cr_expect(isnan(prob[0]));
}

Test(topk_verify, catches_wrong_indices_order_and_unwritten_entries)
{
    const int ref_idx[4] = {7, 2, 9, 1};
    const double ref_p[4] = {0.4, 0.3, 0.2, 0.1};
    int idx[2] = {7, 2};
    float p[2] = {0.4f, 0.3f};
    cr_expect(verify_topk(idx, p, 2, ref_idx, ref_p, 4, 1).pass, "the first 2 of a deeper reference");

    idx[0] = 2, idx[1] = 7;
    topk_check v = verify_topk(idx, p, 2, ref_idx, ref_p, 4, 1);
    cr_expect(!v.pass && v.index_errors == 2, "swapped order");

    idx[0] = 7, idx[1] = 2, p[1] = 0.31f;
    v = verify_topk(idx, p, 2, ref_idx, ref_p, 4, 1);
    cr_expect(!v.pass && v.index_errors == 0 && v.prob_failures == 1, "a probability 3%% off");

    p[1] = NAN;
    v = verify_topk(idx, p, 2, ref_idx, ref_p, 4, 1);
    cr_expect(!v.pass && v.nonfinite == 1 && isnan(v.max_rel_err), "an unwritten (poisoned) entry");

    idx[1] = -1, p[1] = 0.3f;
    cr_expect(!verify_topk(idx, p, 2, ref_idx, ref_p, 4, 1).pass, "a poisoned index");
}

Test(dtype, bf16_rounds_to_nearest_even_and_every_value_survives_a_round_trip)
{
    cr_expect_eq(float_to_bf16(1.0f), 0x3F80);
    cr_expect_eq(float_to_bf16(1.0f + 0x1p-8f), 0x3F80, "a tie rounds to the even neighbour");
    cr_expect_eq(float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81, "past the tie rounds up");
    cr_expect_eq(float_to_bf16(-INFINITY), 0xFF80);
    cr_expect(isnan(bf16_to_float(float_to_bf16(NAN))));
    for (unsigned h = 0; h < 65536; h++) {
        const float f = bf16_to_float((uint16_t)h);
        if (!isnan(f))
            cr_assert_eq(float_to_bf16(f), h, "bf16 0x%04x", h);
    }
}

Test(dtype, fp16_rounds_overflows_and_every_value_survives_a_round_trip)
{
    cr_expect_eq(float_to_fp16(1.0f), 0x3C00);
    cr_expect_eq(float_to_fp16(-2.0f), 0xC000);
    cr_expect_eq(float_to_fp16(65504.0f), 0x7BFF, "the largest fp16");
    cr_expect_eq(float_to_fp16(65520.0f), 0x7C00, "halfway past it rounds to Inf");
    cr_expect_eq(float_to_fp16(0x1p-24f), 0x0001, "the smallest subnormal");
    cr_expect_eq(float_to_fp16(0x1p-26f), 0x0000, "below half of it: zero");
    cr_expect_eq(float_to_fp16(1.0f + 0x1p-11f), 0x3C00, "a tie rounds to even");
    for (unsigned h = 0; h < 65536; h++) {
        const float f = fp16_to_float((uint16_t)h);
        if (!isnan(f))
            cr_assert_eq(float_to_fp16(f), h, "fp16 0x%04x", h);
    }
}

Test(dtype, encode_leaves_exactly_the_stored_values)
{
    float x[3] = {0.1f, 1000.3f, -7.77f};
    uint16_t h[3];
    encode_logits(x, h, 3, DTYPE_BF16);
    for (int i = 0; i < 3; i++)
        cr_expect_eq(bf16_to_float(h[i]), x[i]);
}

/* The reference split over threads, a band of rows each, gives the single thread's answer byte for
 * byte: whatever the count, more threads than rows included, and with a masked row among them. */
Test(topk_reference, threads_give_the_single_thread_answer)
{
    enum { ROWS = 37, COLS = 3001, K = 64 };
    float *x = malloc(ROWS * COLS * sizeof(float));
    fill_inputs(x, ROWS, COLS, (input_spec){DIST_NORMAL, -4.0, 4.0}, 41);
    for (size_t c = 0; c < COLS; c++)
        x[5 * COLS + c] = -INFINITY; /* row 5 has no softmax: NaN probabilities, in every band */
    int *one_idx = malloc(ROWS * K * sizeof(int)), *idx = malloc(ROWS * K * sizeof(int));
    double *one_prob = malloc(ROWS * K * sizeof(double)), *prob = malloc(ROWS * K * sizeof(double));
    reference_topk_threads(x, ROWS, COLS, K, one_idx, one_prob, 1);
    const int counts[] = {2, 3, 7, 16, ROWS, 64};
    for (size_t t = 0; t < sizeof counts / sizeof counts[0]; t++) {
        memset(idx, 0xff, ROWS * K * sizeof(int));
        memset(prob, 0xff, ROWS * K * sizeof(double));
        reference_topk_threads(x, ROWS, COLS, K, idx, prob, counts[t]);
        cr_expect_arr_eq(idx, one_idx, ROWS * K * sizeof(int), "indices on %d threads", counts[t]);
        cr_expect_arr_eq(prob, one_prob, ROWS * K * sizeof(double), "probabilities on %d threads", counts[t]);
    }
    reference_topk(x, ROWS, COLS, K, idx, prob); /* every core of this machine */
    cr_expect_arr_eq(idx, one_idx, ROWS * K * sizeof(int));
    cr_expect_arr_eq(prob, one_prob, ROWS * K * sizeof(double));
    free(x), free(one_idx), free(idx), free(one_prob), free(prob);
}
