/* Stage 02's softmax, callable without the stage's main() (the tests and stage 03 link it). */
#ifndef MULTIPASS_H
#define MULTIPASS_H

#include <stddef.h>

#include "../common/bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* y = exp(x - max) / sum(exp(x - max)) in three phases; workspace: multipass_workspace_bytes(n).
 * Returns the number of kernel launches, which grows with n (one per reduction level). */
size_t multipass_workspace_bytes(size_t n);
int multipass_softmax(const float *x, float *y, size_t n, void *workspace);

extern const softmax_variant multipass_variant;

#ifdef __cplusplus
}
#endif
#endif
