/* Stage 04's softmax variants, callable without the stage's main() (the tests link them). */
#ifndef WARP_H
#define WARP_H

#include "../common/bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One softmax over the whole array: stage 03's fused algorithm with shuffle reductions. */
extern const softmax_variant fused_warp_variant;

/* A softmax per row, three ways of mapping rows to threads. */
extern const softmax_variant thread_per_row_variant; /* each thread a row                      */
extern const softmax_variant warp_per_row_variant;   /* each warp a row, in registers (<= 1024) */
extern const softmax_variant block_per_row_variant;  /* each block of 256 threads a row         */

/* The exercise (EXERCISE_VARIANT): each half-warp a row, for rows of at most 16 columns. ./run links
 * the scaffold, exercise.cu; ./run_solution and the tests, solution/exercise.cu. */
extern const softmax_variant warp_exercise_variant;

#ifdef __cplusplus
}
#endif
#endif
