/* The fp64 CPU softmax every kernel is checked against. */
#ifndef COMMON_REFERENCE_H
#define COMMON_REFERENCE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r), in double, row by row.
 * Subtracting the row max keeps every exp() <= 1, so nothing overflows even in double;
 * -inf entries (masked logits) get probability 0. A row that is all -inf has no softmax:
 * its outputs are NaN, which no kernel output can match. */
void reference_softmax(const float *x, double *y, size_t rows, size_t cols);

#ifdef __cplusplus
}
#endif
#endif
