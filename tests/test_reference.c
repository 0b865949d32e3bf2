/* The fp64 reference against values worked out by hand. */
#include <criterion/criterion.h>
#include <math.h>

#include "../common/inputs.h"
#include "../common/reference.h"

Test(reference, matches_hand_computed_values)
{
    /* exp(0) : exp(ln 2) : exp(ln 3) = 1 : 2 : 3, so softmax = 1/6, 2/6, 3/6. */
    const float x[3] = {0.0f, (float)log(2.0), (float)log(3.0)};
    double y[3];
    reference_softmax(x, y, 1, 3);
    /* x was rounded to float, so compare with exp of the rounded values. */
    const double w[3] = {1.0, exp((double)x[1]), exp((double)x[2])};
    const double sum = w[0] + w[1] + w[2];
    for (int i = 0; i < 3; i++)
        cr_expect_float_eq(y[i], w[i] / sum, 1e-15, "y[%d] = %.17g", i, y[i]);
    cr_expect_float_eq(y[0], 1.0 / 6.0, 1e-7);
    cr_expect_float_eq(y[2], 0.5, 1e-7);
}

Test(reference, does_not_overflow_on_huge_logits)
{
    const float x[2] = {1000.0f, 1000.0f};
    double y[2];
    reference_softmax(x, y, 1, 2);
    cr_expect_eq(y[0], 0.5);
    cr_expect_eq(y[1], 0.5);
}

Test(reference, masked_entries_get_zero)
{
    const float x[3] = {-INFINITY, 0.0f, 0.0f};
    double y[3];
    reference_softmax(x, y, 1, 3);
    cr_expect_eq(y[0], 0.0);
    cr_expect_eq(y[1], 0.5);
    cr_expect_eq(y[2], 0.5);
}

Test(reference, rows_are_independent)
{
    const float x[4] = {0.0f, 0.0f, 0.0f, (float)log(3.0)};
    double y[4];
    reference_softmax(x, y, 2, 2);
    cr_expect_eq(y[0], 0.5);
    cr_expect_eq(y[1], 0.5);
    cr_expect_float_eq(y[2], 0.25, 1e-7);
    cr_expect_float_eq(y[3], 0.75, 1e-7);
}

Test(reference, sums_to_one_on_random_rows)
{
    enum { N = 10000 };
    static float x[N];
    static double y[N];
    fill_inputs(x, 1, N, (input_spec){DIST_NORMAL, -1000.0, 1000.0}, 7);
    reference_softmax(x, y, 1, N);
    double sum = 0.0;
    for (int i = 0; i < N; i++) {
        cr_assert(y[i] >= 0.0 && y[i] <= 1.0, "y[%d] = %g", i, y[i]);
        sum += y[i];
    }
    cr_expect_float_eq(sum, 1.0, 1e-12);
}
