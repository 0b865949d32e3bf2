/* The seeded input generators: in range, reproducible, and each distribution as documented. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../common/inputs.h"

enum { N = 100000 };
static float a[N], b[N];

Test(inputs, uniform_covers_its_range_and_nothing_else)
{
    fill_inputs(a, 1, N, (input_spec){DIST_UNIFORM, 500.0, 1000.0}, 1);
    float lo = INFINITY, hi = -INFINITY;
    double mean = 0.0;
    for (int i = 0; i < N; i++) {
        lo = fminf(lo, a[i]);
        hi = fmaxf(hi, a[i]);
        mean += a[i] / (double)N;
    }
    cr_expect_geq(lo, 500.0f);
    cr_expect_leq(hi, 1000.0f);
    cr_expect_lt(lo, 501.0f);
    cr_expect_gt(hi, 999.0f);
    cr_expect_float_eq(mean, 750.0, 3.0);
}

Test(inputs, same_seed_same_numbers_other_seed_other_numbers)
{
    const input_spec spec = {DIST_NORMAL, 0.0, 10.0};
    fill_inputs(a, 1, N, spec, 5);
    fill_inputs(b, 1, N, spec, 5);
    cr_expect_eq(memcmp(a, b, sizeof a), 0);
    fill_inputs(b, 1, N, spec, 6);
    cr_expect_neq(memcmp(a, b, sizeof a), 0);
}

Test(inputs, normal_has_the_documented_mean_and_spread)
{
    fill_inputs(a, 1, N, (input_spec){DIST_NORMAL, -6.0, 6.0}, 3);
    double mean = 0.0, var = 0.0;
    for (int i = 0; i < N; i++)
        mean += a[i] / (double)N;
    for (int i = 0; i < N; i++)
        var += (a[i] - mean) * (a[i] - mean) / (double)N;
    cr_expect_float_eq(mean, 0.0, 0.02);
    cr_expect_float_eq(sqrt(var), 2.0, 0.02); /* (hi - lo) / 6 */
}

Test(inputs, outliers_put_a_few_large_logits_in_every_row)
{
    enum { ROWS = 10, COLS = N / ROWS };
    fill_inputs(a, ROWS, COLS, (input_spec){DIST_OUTLIERS, 0.0, 10.0}, 9);
    for (int r = 0; r < ROWS; r++) {
        int big = 0;
        for (int c = 0; c < COLS; c++) {
            const float v = a[r * COLS + c];
            cr_assert(v == 20.0f || (v >= 0.0f && v <= 10.0f), "a[%d][%d] = %g", r, c, v);
            big += v == 20.0f;
        }
        cr_expect(big >= 1 && big <= COLS / 1024 + 1, "row %d has %d outliers", r, big);
    }
}

/* zipf: each row falls with log(1 + column) from hi to lo under noise of sd (hi - lo) / 10, and one
 * logit in each stretch of about 1024 columns sits hi - lo (10 sds) above the trend. */
Test(inputs, zipf_falls_over_the_row_with_a_raised_logit_a_stretch)
{
    enum { ROWS = 2, COLS = N / ROWS, BAND = 500 };
    const input_spec spec = {DIST_ZIPF, 0.0, 10.0};
    fill_inputs(a, ROWS, COLS, spec, 13);
    const size_t stretches = COLS / 1024 + 1, stretch = COLS / stretches; /* the last few columns: none */
    for (int r = 0; r < ROWS; r++) {
        const float *row = a + r * COLS;
        double head = 0.0, tail = 0.0;
        for (int c = 0; c < BAND; c++) {
            head += row[c] / (double)BAND;
            tail += row[COLS - BAND + c] / (double)BAND;
        }
        /* The trend: 10 at column 0, 10 (1 - log(1 + c) / log(COLS)) after; the last columns near 0. */
        cr_expect_gt(head, 5.0, "row %d: the first columns average %g", r, head);
        cr_expect_float_eq(tail, 0.0, 0.3, "row %d: the last columns average %g", r, tail);
        for (size_t k = 0; k < stretches; k++) {
            int raised = 0;
            for (size_t c = k * stretch; c < (k + 1) * stretch; c++) {
                const double trend = 10.0 - 10.0 * log1p((double)c) / log((double)COLS);
                raised += row[c] - trend > 5.0; /* halfway: 5 sds from either side */
            }
            cr_expect_eq(raised, 1, "row %d, stretch %zu: %d raised logits", r, k, raised);
        }
    }
    for (int i = 0; i < N; i++)
        cr_assert(fabs(a[i]) <= input_largest_magnitude(spec), "a[%d] = %g", i, a[i]);
}

Test(inputs, dist_names_round_trip)
{
    const input_dist all[] = {DIST_UNIFORM, DIST_NORMAL, DIST_OUTLIERS, DIST_ZIPF};
    for (int i = 0; i < 4; i++) {
        input_dist d;
        cr_expect_eq(dist_from_name(dist_name(all[i]), &d), 0);
        cr_expect_eq(d, all[i]);
    }
    input_dist d;
    cr_expect_eq(dist_from_name("zeros", &d), -1);
}

/* Split over threads, a band of elements each, the generator gives the single thread's numbers bit
 * for bit, for every distribution (two draws an element for the normal and zipf ones; the outliers
 * and zipf's raises after the element draws). */
Test(inputs, threads_give_the_single_thread_numbers)
{
    enum { ROWS = 25, COLS = 4000 }; /* ROWS x COLS == N */
    const input_spec specs[] = {{DIST_UNIFORM, -2.0, 3.0}, {DIST_NORMAL, -6.0, 6.0}, {DIST_OUTLIERS, 0.0, 10.0},
                                {DIST_ZIPF, 0.0, 10.0}};
    const int counts[] = {2, 3, 16, 97};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        fill_inputs_threads(a, ROWS, COLS, specs[s], 77, 1);
        for (size_t t = 0; t < sizeof counts / sizeof counts[0]; t++) {
            memset(b, 0, sizeof b);
            fill_inputs_threads(b, ROWS, COLS, specs[s], 77, counts[t]);
            cr_expect_arr_eq(a, b, sizeof a, "%s on %d threads", dist_name(specs[s].dist), counts[t]);
        }
    }
}
