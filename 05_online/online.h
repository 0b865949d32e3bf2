/* Stage 05's softmax variants, callable without the stage's main() (the tests link them). */
#ifndef ONLINE_H
#define ONLINE_H

#include "../common/bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One softmax over the whole array: the online statistics in one read, then normalize. */
extern const softmax_variant online_variant;

/* A softmax per row: rows of up to 1024 go to stage 04's warp per row (in registers); longer rows
 * get a block each, the row cached in shared memory between statistics and normalize. */
extern const softmax_variant online_rows_variant;

/* The exercise (EXERCISE_VARIANT): online's softmax over n with each element folded on its own
 * (online_stat_add) instead of four at a time. ./run links the scaffold, exercise.cu; ./run_solution
 * and the tests, solution/exercise.cu. */
extern const softmax_variant online_exercise_variant;

#ifdef __cplusplus
}
#endif
#endif
