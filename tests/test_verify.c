/* Verification must pass a correct output and catch every kind of wrong one. */
#include <criterion/criterion.h>
#include <math.h>

#include "../common/inputs.h"
#include "../common/reference.h"
#include "../common/verify.h"

enum { N = 4096 };
static float x[N], out[N];
static double ref[N];

/* A correct float output: the reference rounded to float. */
static void setup(void)
{
    fill_inputs(x, 1, N, (input_spec){DIST_UNIFORM, 0.0, 10.0}, 11);
    reference_softmax(x, ref, 1, N);
    for (int i = 0; i < N; i++)
        out[i] = (float)ref[i];
}

TestSuite(verify, .init = setup);

Test(verify, passes_a_correct_output)
{
    const verify_result v = verify_softmax(out, ref, 1, N);
    cr_expect(v.pass);
    cr_expect_eq(v.failures, 0);
    cr_expect_eq(v.nonfinite, 0);
    cr_expect_lt(v.max_rel_err, 1e-7); /* float rounding only */
    cr_expect_float_eq(v.worst_row_sum, 1.0, 1e-5);
}

Test(verify, catches_a_planted_wrong_element)
{
    out[123] *= 1.001f; /* 10x the tolerance */
    const verify_result v = verify_softmax(out, ref, 1, N);
    cr_expect_not(v.pass);
    cr_expect_eq(v.failures, 1);
    cr_expect_eq(v.first_failure, 123);
    cr_expect_gt(v.max_rel_err, 5e-4);
}

Test(verify, accepts_an_error_inside_the_tolerance)
{
    out[123] = (float)(ref[123] * (1.0 + 0.5 * VERIFY_RTOL));
    cr_expect(verify_softmax(out, ref, 1, N).pass);
}

Test(verify, catches_a_planted_unwritten_element)
{
    out[N - 1] = NAN; /* what the poison leaves where the kernel never wrote */
    const verify_result v = verify_softmax(out, ref, 1, N);
    cr_expect_not(v.pass);
    cr_expect_eq(v.nonfinite, 1);
    cr_expect_eq(v.first_failure, N - 1);
    cr_expect(isnan(v.worst_row_sum));
    cr_expect(isnan(v.max_rel_err) && isnan(v.max_abs_err), "a NaN output must not report a finite error");
}

Test(verify, catches_infinity)
{
    out[0] = INFINITY;
    const verify_result v = verify_softmax(out, ref, 1, N);
    cr_expect_not(v.pass);
    cr_expect_eq(v.nonfinite, 1);
}

Test(verify, catches_all_zeros_which_are_finite)
{
    for (int i = 0; i < N; i++)
        out[i] = 0.0f;
    const verify_result v = verify_softmax(out, ref, 1, N);
    cr_expect_not(v.pass);
    cr_expect_eq(v.failures, N);
    cr_expect_eq(v.nonfinite, 0);
    cr_expect_eq(v.worst_row_sum, 0.0);
}

Test(verify, tiny_probabilities_are_checked_absolutely)
{
    const double tiny_ref[2] = {1e-35, 1.0 - 1e-35};
    const float flushed[2] = {0.0f, 1.0f};
    cr_expect(verify_softmax(flushed, tiny_ref, 1, 2).pass);
    const float wrong[2] = {1e-20f, 1.0f}; /* far above ATOL: a real error */
    cr_expect_not(verify_softmax(wrong, tiny_ref, 1, 2).pass);
}

Test(verify, a_nan_row_sum_is_not_hidden_by_a_later_row)
{
    const double r[4] = {0.5, 0.5, 0.5, 0.5};
    const float o[4] = {NAN, 0.5f, 0.5f, 0.5f};
    const verify_result v = verify_softmax(o, r, 2, 2);
    cr_expect(isnan(v.worst_row_sum));
    cr_expect_eq(v.first_failure, 0);
}

Test(verify, reports_the_row_sum_farthest_from_one)
{
    const double r[4] = {0.5, 0.5, 0.5, 0.5};
    const float o[4] = {0.5f, 0.5f, 0.25f, 0.5f};
    cr_expect_float_eq(verify_softmax(o, r, 2, 2).worst_row_sum, 0.75, 1e-12);
}
