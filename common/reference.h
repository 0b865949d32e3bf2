/* The fp64 CPU softmax every kernel is checked against. */
#ifndef COMMON_REFERENCE_H
#define COMMON_REFERENCE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r), in double, row by row.
 * Subtracting the row max keeps every exp() <= 1, so nothing overflows even in double, however
 * large the finite logits; -inf entries (masked logits) among numbers get probability 0.
 *
 * The rule for NaN and infinity, the same here and in every kernel of stages 01-05 (for a 1-D
 * softmax, "row" means the whole array): a row that holds a NaN or a +inf, or nothing but -inf,
 * has no softmax, and every output of that row is NaN. It is what IEEE arithmetic gives for the
 * formula above, and what PyTorch's softmax gives: max() passes over a NaN but exp(NaN - max) is
 * NaN; a +inf is the max and exp(+inf - +inf) is NaN; a row of -inf has max -inf and
 * exp(-inf - -inf) is NaN; and a NaN term makes the sum, and so every quotient, NaN. The other rows
 * are unaffected. Two exceptions, both outside the course's own algorithm: stage 01's naive kernel
 * has no max to subtract, so a +inf overflows its sum like any logit above 88.72 (that stage's
 * lesson), giving inf/inf = NaN at the +inf and finite/inf = 0 elsewhere; and a library measured
 * beside the kernels does what it does. Verification (verify.h) passes no NaN, so such a row never
 * passes it: the inputs the stages draw are always finite, a stage that reads a file refuses NaN and
 * +inf in it, and tests/test_nan.c checks the rule on the kernels. */
void reference_softmax(const float *x, double *y, size_t rows, size_t cols);

#ifdef __cplusplus
}
#endif
#endif
