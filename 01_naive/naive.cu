// Stage 01 — the naive softmax, and why it overflows.
//
// What it computes: softmax(x)_i = exp(x_i) / sum_j exp(x_j), exactly as the formula is written,
// in two kernels:
//   1. sum_exp_kernel: every thread adds up exp(x) over its elements (a grid-stride loop), the
//      block combines its threads' partial sums with a tree reduction in shared memory, and one
//      thread per block adds the block's total to a single float in global memory (atomicAdd).
//   2. normalize_kernel: every thread writes y_i = exp(x_i) / sum.
//
// Why it is broken: float32 cannot hold exp(x) for x > 88.72 (FLT_MAX = 3.4e38 = e^88.72).
//   - Inputs in [500, 1000]: every exp(x) is +inf, the sum is +inf, every y_i = inf/inf = NaN.
//   - Worse, inputs whose largest value is only ~84 already break it *silently*: each exp(x) is
//     finite but their sum is not, so every y_i = finite/inf = 0. No NaN, no error, all wrong.
// The mathematical fix (subtract the max first: exp(x - max) <= 1) is stage 02.
//
// What it costs: x is read twice (once per kernel) and y written once: 12 bytes per element,
// where an ideal softmax moves 8 (read once, write once).
//
// Run:   make stage1 && ./run          (Experiment 1, then timing over 1K..100M)
//        ./run --n 1M --range 500:1000 (any size and input range)
//
// The numbers, measured: EXPERIMENTS.md, Experiments 1 and 2 (data: plots/data/h200/01_naive.csv).
#include "../common/check.h"
#include "../common/gpu.h"
#include "naive.h"

#define THREADS 256      // threads per block; a power of two, for the tree reduction
#define BLOCKS_PER_SM 8  // 2048 threads: a full SM on sm_80 and sm_90 (fewer fit on sm_75, sm_86, sm_89)

static __global__ void sum_exp_kernel(const float *x, size_t n, float *total)
{
    __shared__ float partial[THREADS];

    // Each thread accumulates exp(x) over elements tid, tid + stride, ... (a grid-stride loop,
    // so the grid can stay small whatever n is, and only a few thousand atomics happen below).
    float sum = 0.0f;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        sum += expf(x[i]); // overflows to +inf once x > 88.72
    partial[threadIdx.x] = sum;
    __syncthreads();

    // Tree reduction: halve the number of active threads each step until partial[0] holds the
    // block's total. The barrier after each step makes the step's writes visible to the next.
    for (unsigned active = THREADS / 2; active > 0; active /= 2) {
        if (threadIdx.x < active)
            partial[threadIdx.x] += partial[threadIdx.x + active];
        __syncthreads();
    }

    // One atomic per block combines the blocks. Float addition is not associative, so the last
    // bits of the sum depend on the order the blocks arrive in; the tolerance allows for that.
    if (threadIdx.x == 0)
        atomicAdd(total, partial[0]);
}

static __global__ void normalize_kernel(const float *x, size_t n, const float *total, float *y)
{
    const float sum = *total;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = expf(x[i]) / sum; // inf / inf = NaN; finite / inf = 0
}

static size_t naive_workspace_bytes(size_t rows, size_t n)
{
    (void)rows, (void)n;
    return sizeof(float);
}

static int naive_softmax(const float *x, float *y, size_t rows, size_t n, void *workspace)
{
    (void)rows; // 1: a single softmax over n elements
    float *total = (float *)workspace;
    const int grid = gpu_grid_size(n, THREADS, BLOCKS_PER_SM);

    CUDA_CHECK(cudaMemsetAsync(total, 0, sizeof(float), 0)); // the atomics add onto zero
    sum_exp_kernel<<<grid, THREADS>>>(x, n, total);
    CUDA_CHECK_LAUNCH("sum_exp_kernel");
    normalize_kernel<<<grid, THREADS>>>(x, n, total, y);
    CUDA_CHECK_LAUNCH("normalize_kernel");
    return 2;
}

extern "C" const softmax_variant naive_variant = {"naive", 12.0, naive_workspace_bytes, naive_softmax,
                                                  single_row_only};
