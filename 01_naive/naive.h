/* Stage 01's softmax, callable without the stage's main() (the tests and stage 02 link it). */
#ifndef NAIVE_H
#define NAIVE_H

#include <stddef.h>

#include "../common/bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* y = exp(x) / sum(exp(x)) with no max subtraction. workspace: naive_workspace_bytes(n) bytes
 * of device memory (the running sum). Returns the number of kernel launches (2). */
size_t naive_workspace_bytes(size_t n);
int naive_softmax(const float *x, float *y, size_t n, void *workspace);

extern const softmax_variant naive_variant;

#ifdef __cplusplus
}
#endif
#endif
