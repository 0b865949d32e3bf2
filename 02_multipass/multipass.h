/* Stage 02's softmax, callable without the stage's main() (the tests and stage 03 link it). */
#ifndef MULTIPASS_H
#define MULTIPASS_H

#include <stddef.h>

#include "../common/bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One softmax over the whole array (rows == 1, n = cols) in three phases; the number of kernel
 * launches it reports grows with n (one per reduction level). */

extern const softmax_variant multipass_variant;

/* The exercise (EXERCISE_VARIANT): multipass with each reduction's threads folding 8 elements before
 * the tree, on a grid 8 times smaller. ./run links the scaffold, exercise.cu; ./run_solution and the
 * tests, solution/exercise.cu. */
extern const softmax_variant multipass_exercise_variant;

#ifdef __cplusplus
}
#endif
#endif
