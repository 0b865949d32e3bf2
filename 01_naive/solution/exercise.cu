// Stage 01's exercise: the naive softmax with a bound B >= max(x) known in advance.
//
// softmax(x)_i = exp(x_i - B) / sum_j exp(x_j - B) for any constant B: the factor exp(-B) cancels.
// With B = 1000, the top of `--range 500:1000`, every exp(x - B) is at most 1 and cannot overflow.
//
// The worked solution: exp(x - BOUND) in both kernels (the scaffold is ../exercise.cu).
//
// It passes on [500, 1000], though not because every term is large. exp(x - 1000) rounds to 0 in
// float32 for x below about 896 (the smallest float32 above zero is 1.4e-45 = e^-103.3, and a
// result below half of it rounds to 0): about 79 % of inputs uniform on [500, 1000], 792 of the
// 1000 in Experiment 1 and 815 in step 2's. No term reaches 1 unless some x is exactly 1000. The sum
// comes from the few x nearest the max: about 2 on average for 1000 inputs, 3.2 in Experiment 1,
// 0.82 in step 2. It passes because max(x) lies close to B (999.98 and 999.06 here), so the largest
// terms are normal floats and the sum is neither 0 nor inf; and because every output that
// underflowed to 0, or lost precision as a subnormal, is a true probability below 1e-37, far under
// the check's absolute tolerance, VERIFY_ATOL = 1e-30 (common/verify.h). A bound can underflow, and
// here most terms do.
//
// On [0, 10] it fails, every output NaN: exp(x - 1000) <= e^-990, far below 1.4e-45, so every term
// rounds to 0, the sum is 0 and every output is 0/0.
//
// What B must satisfy. The largest term, exp(max - B), must not underflow: B - max below about 104,
// and below about 87 for that term to stay a normal float with its full precision. The sum, at most
// n * exp(max - B), must not overflow: max - B below 88.72 - ln n, about 81.8 at n = 1000. Any B in
// that window gives the softmax; B = 1000 on [0, 10] is 990 above the max. But every step B takes
// above the max costs the small terms: an x below B - 104 gives 0, whatever its probability. The
// true max is the simple choice that always works: the largest term is exp(0) = 1 exactly, the sum
// lies between 1 and n, and a term loses precision only where its probability is below
// e^-87.3 = 1.2e-38. That max is what stage 02 computes, with a pass of its own.
#include "../../common/check.h"
#include "../../common/gpu.h"
#include "../naive.h"

#define THREADS 256
#define BLOCKS_PER_SM 8
#define BOUND 1000.0f // a bound on max(x) that the caller promises: the top of --range 500:1000

// naive.cu's sum_exp_kernel, with the bound: the sum of exp(x - BOUND) over the whole array.
static __global__ void bounded_sum_exp_kernel(const float *x, size_t n, float *total)
{
    __shared__ float partial[THREADS];
    float sum = 0.0f;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        sum += expf(x[i] - BOUND);
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned active = THREADS / 2; active > 0; active /= 2) {
        if (threadIdx.x < active)
            partial[threadIdx.x] += partial[threadIdx.x + active];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        atomicAdd(total, partial[0]);
}

static __global__ void bounded_normalize_kernel(const float *x, size_t n, const float *total, float *y)
{
    const float sum = *total;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = expf(x[i] - BOUND) / sum;
}

static size_t bounded_workspace_bytes(size_t rows, size_t n)
{
    (void)rows, (void)n;
    return sizeof(float);
}

static int bounded_softmax(const float *x, float *y, size_t rows, size_t n, void *workspace)
{
    (void)rows;
    float *total = (float *)workspace;
    const int grid = gpu_grid_size(n, THREADS, BLOCKS_PER_SM);
    CUDA_CHECK(cudaMemsetAsync(total, 0, sizeof(float), 0));
    bounded_sum_exp_kernel<<<grid, THREADS>>>(x, n, total);
    CUDA_CHECK_LAUNCH("bounded_sum_exp_kernel");
    bounded_normalize_kernel<<<grid, THREADS>>>(x, n, total, y);
    CUDA_CHECK_LAUNCH("bounded_normalize_kernel");
    return 2;
}

extern "C" const softmax_variant naive_exercise_variant = {EXERCISE_VARIANT, 12.0, bounded_workspace_bytes,
                                                           bounded_softmax, single_row_only};
