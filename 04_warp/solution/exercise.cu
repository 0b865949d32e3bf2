// Stage 04's exercise: a half-warp per row, for rows of at most 16 columns.
//
// warp_per_row gives each row a whole warp. On a row of 16 columns, lanes 16-31 load nothing and
// only bring -inf to the shuffles: half the warp idles. Here each half-warp owns a row instead:
// lanes 0-15 row 2w, lanes 16-31 row 2w + 1 of warp w, lane l of a half holding column l. A warp
// then loads two rows, 128 contiguous bytes at 16 columns, and reduces both at once.
//
// The worked solution: half_warp_reduce runs the butterfly over offsets 8, 4, 2, 1 with width 16
// (the scaffold is ../exercise.cu). The answers to README.md's questions:
//
// Why the scaffold fails. Its butterfly (offsets 16 ... 1, width 32) combines all 32 lanes, so the
// two rows A and B of a warp get one max M = max(max A, max B) and one sum S_A + S_B, each S taken
// relative to M. The shared max alone would be harmless: a softmax is the same whatever constant is
// subtracted, while exp(x - M) does not underflow the other row (on [-1000, 1000] two rows' maxima
// often lie more than 104 apart, and then every term of the lower row is 0). The shared sum is not:
// every output of A is exp(a - M) / (S_A + S_B) where it should be exp(a - M) / S_A, short by
// S_B / (S_A + S_B) of its value, and every output of B short by S_A / (S_A + S_B). Let A be the row
// with the higher max: S_A >= 1 (its max gives exp(M - M) = 1) and S_B <= 16 (16 terms of at most
// 1), so B's outputs are short by at least 1 / 17, about 6 %: some 600 times the 1e-4 the check
// allows. On [0, 10] the two sums are alike and every output is about half what it should be. Every
// warp of two rows fails, so every shape with 2 rows or more. `--rows 1` passes: the other half
// holds no row, and its -inf lanes add exp(-inf - M) = 0 to the sum. A test of one row alone cannot
// catch this bug.
//
// Which offsets. A half has 16 lanes, so log2(16) = 4 rounds: 8, 4, 2, 1. lane ^ offset for an
// offset below 16 leaves bit 4 of the lane alone, so it stays in the lane's half: with these
// offsets the halves never meet, whatever the width. Width 16 says so and makes it hold for every
// shuffle: __shfl_sync(FULL_MASK, v, 0, 16) reads lane 0 of the caller's half, not of the warp.
// Width 16 alone does not fix the old offsets: with width 16 a lane that XORs into a later segment
// gets its own value back, one into an earlier segment gets that segment's value. At offset 16,
// lanes 0-15 would add their sum to itself (twice the sum: every output halved) and lanes 16-31
// would still take row A's values (the rows mixed again). The offsets are the fix.
//
// Why the mask is still FULL_MASK. The mask names the lanes that execute the call, which must all
// reach it; the width decides which lanes a lane reads. Every one of the 32 lanes reaches both
// reductions (nothing returns early, no branch goes around them), so the mask names all 32.
//
// The half-warp whose row is past the end. In warp_per_row `row >= rows` is the same for all 32
// lanes and the whole warp may leave. Here, when rows is odd, the last row's warp holds that row in
// lanes 0-15 and nothing in lanes 16-31. That half must stay: it loads nothing (-inf), takes part in
// both shuffles, and writes nothing. Lanes that returned would be named in FULL_MASK without
// reaching the call, and a lane that read them (as every lane of the scaffold's butterfly does)
// would get an undefined value. Staying costs nothing worth counting: only the last block holds rows
// past the end, at most 15 half-warps of the whole grid. Such a half gets m = -inf and a NaN sum
// (exp(-inf - (-inf)) = exp(NaN)), and in this butterfly neither crosses into the other half.
//
// The timing, predicted (measure it: README.md, Exercise). Both variants move 8 bytes an element,
// 2,000,000 x 16 x 8 = 256 MB, 0.060 ms at the 4240 GB/s copy ceiling of EXPERIMENTS.md's H200. Too
// little of it is in flight: warp_per_row gives a warp 16 columns, 64 bytes to load, and at most 64
// warps an SM (2048 threads) have 64 x 64 = 4 KB in flight; the half-warp variant loads 128 bytes a
// warp, 8 KB an SM, twice as much. Where the time is the latency of those loads, twice the bytes
// in flight is twice the bandwidth. Expect warp_per_row at about half of what it reaches at 32
// columns (46.8 % of the ceiling in the stage's sweep, where a warp also loads 128 bytes): some
// 23 %, 0.26 ms; and the exercise at about that 47 %, 0.13 ms: close to 2x faster. The check: the
// exercise at 2M x 16 should time like `./run --rows 1M --cols 32 --variant warp_per_row` (same
// elements, same 128 bytes a warp). Neither nears the ceiling: that takes more bytes per warp
// still, several rows a warp and 16-byte loads, as stage 05's warp per row does.
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
