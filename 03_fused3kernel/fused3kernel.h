/* Stage 03's softmax variants, callable without the stage's main() (the tests link them). */
#ifndef FUSED3KERNEL_H
#define FUSED3KERNEL_H

#include <stddef.h>

#include "../common/bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Both: per-block statistics, one merge, one normalize (3 launches); they differ in the merge.
 * single_block_merge: the merge is one block of 256 threads striding over every block's statistics
 *                     (the design of claim C4 in EXPERIMENTS.md).
 * fused:              the merge is spread over many blocks, and the last of them to finish merges
 *                     theirs. */
extern const softmax_variant single_block_merge_variant;
extern const softmax_variant fused_variant;

/* The exercise (EXERCISE_VARIANT): the same three kernels, the merge in one block, folding the pairs
 * with a combine of two, both written by the student. ./run links the scaffold, exercise.cu;
 * ./run_solution and the tests, solution/exercise.cu. */
extern const softmax_variant fused3kernel_exercise_variant;

#ifdef __cplusplus
}
#endif
#endif
