/* Stage 01's softmax, callable without the stage's main() (the tests and stage 02 link it). */
#ifndef NAIVE_H
#define NAIVE_H

#include <stddef.h>

#include "../common/bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One softmax over the whole array: its variant supports rows == 1 only, and n = cols. */

extern const softmax_variant naive_variant;

#ifdef __cplusplus
}
#endif
#endif
