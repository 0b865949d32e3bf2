// Stage 04's exercise: a half-warp per row, for rows of at most 16 columns.
//
// warp_per_row gives each row a whole warp. On a row of 16 columns, lanes 16-31 load nothing and
// only bring -inf to the shuffles: half the warp idles. Here each half-warp owns a row instead:
// lanes 0-15 row 2w, lanes 16-31 row 2w + 1 of warp w, lane l of a half holding column l. A warp
// then loads two rows, 128 contiguous bytes at 16 columns, and reduces both at once.
//
// Your part: half_warp_reduce, marked TODO below, is still warp_reduce's butterfly (offsets 16, 8,
// 4, 2, 1 across all 32 lanes), so each warp combines its two rows into one max and one sum.
// Make each half reduce its own row: which offsets does it need, and what `width` (the fourth
// argument of __shfl_xor_sync)? Then run, from 04_warp/:
//     make && ./run --rows 2M --cols 16 --variant exercise   (FAIL now; PASS when done)
//     ./run --rows 2M --cols 16 --variant warp_per_row       (and compare: README.md, Exercise)
// The worked solution is solution/exercise.cu; `./run_solution --variant exercise ...` runs it.
#include "../common/check.h"
#include "warp.h"
#include "warp_reduce.cuh"

#define THREADS 256
#define HALF_WARP (WARP_SIZE / 2)             // lanes a row has, so the most columns it may have
#define ROWS_PER_BLOCK (THREADS / HALF_WARP)

// ---- TODO: your part --------------------------------------------------------------------------
// Every lane of the warp calls this with FULL_MASK; each half-warp must get its own row's result.
static __device__ __forceinline__ float half_warp_reduce(float value, reduce_op op)
{
#pragma unroll
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) // TODO: the offsets of one half's butterfly
        value = reduce_combine(value, __shfl_xor_sync(FULL_MASK, value, offset), op); // TODO: width
    return value;
}
// ---- end of your part -------------------------------------------------------------------------

// Every lane of the warp reaches both reductions (README.md, Exercise, step 4, asks why). A lane
// past its row's end holds -inf, the identity of max, which adds exp(-inf - m) = 0 to the sum, and
// writes nothing.
static __global__ void half_warp_per_row_kernel(const float *x, float *y, size_t rows, size_t cols)
{
    const size_t row = (size_t)blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / HALF_WARP;
    const size_t col = threadIdx.x % HALF_WARP;
    const bool mine = row < rows && col < cols;
    const float v = mine ? x[row * cols + col] : -INFINITY;
    const float m = half_warp_reduce(v, REDUCE_MAX);
    const float e = expf(v - m);
    const float s = half_warp_reduce(e, REDUCE_SUM);
    if (mine)
        y[row * cols + col] = e / s;
}

static bool half_warp_row_fits(size_t rows, size_t cols)
{
    (void)rows;
    return cols <= HALF_WARP;
}

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

static int half_warp_per_row_softmax(const float *x, float *y, size_t rows, size_t cols, void *workspace)
{
    (void)workspace;
    half_warp_per_row_kernel<<<(unsigned)ceil_div(rows, ROWS_PER_BLOCK), THREADS>>>(x, y, rows, cols);
    CUDA_CHECK_LAUNCH("half_warp_per_row_kernel");
    return 1;
}

// One read of x and one write of y: 8 bytes per element.
extern "C" const softmax_variant warp_exercise_variant = {
    EXERCISE_VARIANT, 8.0, NULL, half_warp_per_row_softmax, half_warp_row_fits, "rows of at most 16 columns"};
