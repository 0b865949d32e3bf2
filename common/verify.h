/* Compares a kernel's float output with the fp64 reference, element by element.
 *
 * An element passes when it is finite and |out - ref| <= VERIFY_RTOL * |ref| + VERIFY_ATOL.
 *  - VERIFY_RTOL = 1e-4: a float32 softmax is limited by its sum, accumulated over up to 10^8
 *    terms, each rounded at ~6e-8; the error stays far below 1e-4 in practice, while a kernel
 *    that drops or double-counts even one block of a 1000-block grid is off by ~1e-3.
 *  - VERIFY_ATOL = 1e-30: stable kernels compute exp(x - max), which below ~1e-38 enters float32's
 *    subnormal range and may flush to zero; no use of a probability tells such values apart.
 * NaN and Inf never pass. Outputs are poisoned (all bits set: NaN) before each run, so an element
 * that the kernel never wrote fails too.
 *
 * Not even where the reference is NaN, in a row that has no softmax (a NaN or +inf logit, or only
 * -inf: reference.h): its right output, all NaN, cannot be told from an unwritten one, so a pass
 * there would prove nothing. Such rows never come up in a stage's run (its inputs are finite, and
 * a stage that reads a file refuses NaN and +inf in it), so every check there keeps "NaN never passes" whole.
 * tests/test_nan.c checks the rule on them instead: it poisons the output with a number that is no
 * probability, then wants every element of such a row NaN, and the other rows to pass here. */
#ifndef COMMON_VERIFY_H
#define COMMON_VERIFY_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VERIFY_RTOL 1e-4
#define VERIFY_ATOL 1e-30

typedef struct {
    double max_abs_err;   /* over all outputs; NaN if any output is NaN or Inf           */
    double max_rel_err;   /* over outputs whose reference is at least VERIFY_ATOL; ditto */
    double worst_row_sum; /* the row sum of outputs farthest from 1 (NaN if any is NaN)  */
    size_t nonfinite;     /* NaN or Inf outputs, unwritten ones included                 */
    size_t failures;      /* elements outside the tolerance (non-finite ones included)   */
    size_t first_failure; /* index of the first failing element, if any                  */
    bool pass;
} verify_result;

/* The check of one output against its reference, as described above: returns whether it passes,
 * and folds it into the running maxima (finite outputs) or the non-finite count. */
bool verify_element(double out, double ref, double *max_abs_err, double *max_rel_err, size_t *nonfinite);

verify_result verify_softmax(const float *out, const double *ref, size_t rows, size_t cols);

#ifdef __cplusplus
}
#endif
#endif
