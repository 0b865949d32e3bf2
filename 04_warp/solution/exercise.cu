// Stage 04's exercise: a half-warp per row, for rows of at most 16 columns.
//
// warp_per_row gives each row a whole warp. On a row of 16 columns, lanes 16-31 load nothing and
// only bring -inf to the shuffles: half the warp idles. Here each half-warp owns a row instead:
// lanes 0-15 row 2w, lanes 16-31 row 2w + 1 of warp w, lane l of a half holding column l. A warp
// then loads two rows, 128 contiguous bytes at 16 columns, and reduces both at once.
//
// The worked solution: half_warp_reduce runs the butterfly over offsets 8, 4, 2, 1 with width 16
// (the scaffold is ../exercise.cu). The answers to README.md's questions are in README.md beside
// this file.
#include "../../common/check.h"
#include "../warp.h"
#include "../warp_reduce.cuh"

#define THREADS 256
#define HALF_WARP (WARP_SIZE / 2)             // lanes a row has, so the most columns it may have
#define ROWS_PER_BLOCK (THREADS / HALF_WARP)

// Every lane of the warp calls this with FULL_MASK; each half-warp gets its own row's result. The
// offsets 8, 4, 2, 1 keep lane ^ offset in the lane's half, and width 16 says so to the hardware.
static __device__ __forceinline__ float half_warp_reduce(float value, reduce_op op)
{
#pragma unroll
    for (int offset = HALF_WARP / 2; offset > 0; offset /= 2)
        value = reduce_combine(value, __shfl_xor_sync(FULL_MASK, value, offset, HALF_WARP), op);
    return value;
}

// No lane leaves early: all 32 must reach the FULL_MASK shuffles, and the warp of the last row
// can hold it in one half and no row in the other. A lane past its row's end, or in a half whose
// row is past the end, holds -inf, the identity of max, and writes nothing. In a real row, -inf
// adds exp(-inf - m) = 0 to the sum; a half with no row gets m = -inf and a NaN sum, which it
// never writes.
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
