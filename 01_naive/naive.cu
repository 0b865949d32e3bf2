// Stage 01: softmax as the formula reads, exp(x_i) / sum_j exp(x_j), with no max subtracted.
// Read naive_softmax, at the end, first: it launches sum_exp_kernel, then normalize_kernel.
#include "../common/check.h"
#include "../common/gpu.h"
#include "naive.h"

#define THREADS 256      // a power of two, for the tree reduction
#define BLOCKS_PER_SM 8  // 2048 threads, an SM's most on sm_80/90 (sm_75 holds 1024, sm_86/89 1536)

static __global__ void sum_exp_kernel(const float *x, size_t n, float *total)
{
    __shared__ float partial[THREADS];

    // Grid-stride loop: the grid's thread t adds exp(x) over elements t, t + stride, ...
    float sum = 0.0f;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        sum += expf(x[i]); // expf(x) is +inf once x > 88.72
    partial[threadIdx.x] = sum;
    __syncthreads();

    // Tree reduction: after each step's barrier, partial[0 .. active) sum to the block's total,
    // so after the last step partial[0] holds it.
    for (unsigned active = THREADS / 2; active > 0; active /= 2) {
        if (threadIdx.x < active)
            partial[threadIdx.x] += partial[threadIdx.x + active];
        __syncthreads();
    }

    // Each block makes one atomic add. The blocks add in any order, so the sum's last bits
    // may vary.
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
    (void)rows; // 1: one softmax over n elements
    float *total = (float *)workspace;
    const int grid = gpu_grid_size(n, THREADS, BLOCKS_PER_SM);

    CUDA_CHECK(cudaMemsetAsync(total, 0, sizeof(float), 0)); // the atomics add onto zero
    sum_exp_kernel<<<grid, THREADS>>>(x, n, total);
    CUDA_CHECK_LAUNCH("sum_exp_kernel");
    normalize_kernel<<<grid, THREADS>>>(x, n, total, y);
    CUDA_CHECK_LAUNCH("normalize_kernel");
    return 2; // launches made
}

// Name, bytes an element (two reads, one write), scratch, run, shapes.
extern "C" const softmax_variant naive_variant = {"naive", 12.0, naive_workspace_bytes, naive_softmax,
                                                  single_row_only};
