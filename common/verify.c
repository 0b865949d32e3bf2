#include "verify.h"

#include <math.h>

bool verify_element(double out, double ref, double *max_abs_err, double *max_rel_err, size_t *nonfinite)
{
    if (!isfinite(out)) {
        ++*nonfinite;
        return false;
    }
    const double abs_err = fabs(out - ref);
    *max_abs_err = fmax(*max_abs_err, abs_err);
    if (fabs(ref) >= VERIFY_ATOL)
        *max_rel_err = fmax(*max_rel_err, abs_err / fabs(ref));
    return abs_err <= VERIFY_RTOL * fabs(ref) + VERIFY_ATOL;
}

verify_result verify_softmax(const float *out, const double *ref, size_t rows, size_t cols)
{
    verify_result v = {.worst_row_sum = 1.0};
    for (size_t r = 0; r < rows; r++) {
        double row_sum = 0.0;
        for (size_t c = 0; c < cols; c++) {
            const size_t i = r * cols + c;
            row_sum += out[i];
            const bool ok = verify_element(out[i], ref[i], &v.max_abs_err, &v.max_rel_err, &v.nonfinite);
            if (!ok && v.failures++ == 0)
                v.first_failure = i;
        }
        /* A NaN row sum is the worst there is, and once recorded it stays. */
        if (isnan(row_sum) ||
            (!isnan(v.worst_row_sum) && fabs(row_sum - 1.0) > fabs(v.worst_row_sum - 1.0)))
            v.worst_row_sum = row_sum;
    }
    /* A NaN or Inf output has no finite error: say so rather than report the finite ones' error. */
    if (v.nonfinite)
        v.max_abs_err = v.max_rel_err = NAN;
    v.pass = v.failures == 0;
    return v;
}
