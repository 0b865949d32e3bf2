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

/* The exercise (EXERCISE_VARIANT): exp(x - B) with a bound B >= max(x) known in advance. ./run links
 * the scaffold, exercise.cu; ./run_solution and the tests, solution/exercise.cu. */
extern const softmax_variant naive_exercise_variant;

#ifdef __cplusplus
}
#endif
#endif
