// Stage 02's exercise: multipass with a fold. Each thread combines up to FOLD elements in a
// register before the block's tree, on FOLD times fewer blocks. Your part: the fold, between the
// TODO lines. The worked solution is solution/exercise.cu.
#include "../common/check.h"
#include "block_reduce.cuh"
#include "multipass.h"

#define THREADS 256 // a power of two, for the tree
#define FOLD 8      // elements a thread folds before the tree

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// Each block takes THREADS * FOLD values.
static size_t fold_blocks(size_t count) { return ceil_div(count, (size_t)THREADS * FOLD); }

// Each block reduces the values its threads own, in[i] or (apply_exp) exp(in[i] - *max), to
// out[blockIdx.x]. Every thread starts from the identity and reaches the tree's barriers.
template <reduce_op op, bool apply_exp>
static __global__ void fold_reduce_kernel(const float *in, size_t count, const float *max, float *out)
{
    __shared__ float shared[THREADS];
    const float shift = apply_exp ? *max : 0.0f;
    const float identity = op == REDUCE_MAX ? -INFINITY : 0.0f;
    const size_t first = (size_t)blockIdx.x * THREADS + threadIdx.x;

    // TODO: fold every value this thread owns, not only the first: i = first + k * stride for
    // k < FOLD and i < count, where stride = (size_t)gridDim.x * THREADS:
    // v = reduce_combine(v, value, op).
    float v = identity;
    if (first < count)
        v = apply_exp ? expf(in[first] - shift) : in[first];
    // TODO end.

    const float r = block_reduce(v, op, shared);
    if (threadIdx.x == 0)
        out[blockIdx.x] = r;
}

// multipass.cu's normalize.
static __global__ void normalize_kernel(const float *x, size_t n, const float *max, const float *sum, float *y)
{
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    if (i < n)
        y[i] = expf(x[i] - *max) / *sum;
}

typedef void (*level_kernel)(const float *, size_t, const float *, float *);

// Runs first_level, then later_levels on the partials, until one value is left in *result; levels
// write alternately to `a` and `b`. Returns the number of launches.
static int reduce_levels(level_kernel first_level, level_kernel later_levels, const float *in, size_t count,
                         const float *max, float *result, float *a, float *b)
{
    int launches = 0;
    level_kernel kernel = first_level;
    do {
        const size_t blocks = fold_blocks(count);
        float *out = blocks == 1 ? result : (launches % 2 == 0 ? a : b);
        kernel<<<(unsigned)blocks, THREADS>>>(in, count, max, out);
        CUDA_CHECK_LAUNCH("fold_reduce_kernel");
        in = out;
        count = blocks;
        kernel = later_levels;
        launches++;
    } while (count > 1);
    return launches;
}

// Workspace: the max, the sum, two levels' partials.
static size_t fold_workspace_bytes(size_t rows, size_t n)
{
    (void)rows;
    return (2 + fold_blocks(n) + fold_blocks(fold_blocks(n))) * sizeof(float);
}

static int fold_softmax(const float *x, float *y, size_t rows, size_t n, void *workspace)
{
    (void)rows;
    float *max = (float *)workspace, *sum = max + 1;
    float *level_a = max + 2, *level_b = level_a + fold_blocks(n);
    int launches = 0;

    // Phase 1: the max. Phase 2: the sum; only its first level applies exp.
    launches += reduce_levels(fold_reduce_kernel<REDUCE_MAX, false>, fold_reduce_kernel<REDUCE_MAX, false>, x, n,
                              NULL, max, level_a, level_b);
    launches += reduce_levels(fold_reduce_kernel<REDUCE_SUM, true>, fold_reduce_kernel<REDUCE_SUM, false>, x, n,
                              max, sum, level_a, level_b);

    // Phase 3: normalize.
    normalize_kernel<<<(unsigned)ceil_div(n, THREADS), THREADS>>>(x, n, max, sum, y);
    CUDA_CHECK_LAUNCH("normalize_kernel");
    return launches + 1;
}

extern "C" const softmax_variant multipass_exercise_variant = {EXERCISE_VARIANT, 16.0, fold_workspace_bytes,
                                                               fold_softmax, single_row_only};
