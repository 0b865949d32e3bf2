// Stage 05's exercise, worked: the online statistic folded one element at a time.
//
// This is online.cu's softmax over n, in the same two launches, except that fold_each folds a
// float4 one element at a time with online_stat_add, which rescales the sum at every element;
// online_stat_add4 rescales it once per four:
//     m' = max(m, x0, x1, x2, x3),   d' = d * exp(m - m') + exp(x0 - m') + ... + exp(x3 - m')
// Here fold_each calls online_stat_add four times (the scaffold is ../exercise.cu). Run it with
// `make && ./run_solution --n 100M --variant exercise`; README.md beside this file answers the
// questions of ../README.md, Exercise, with their arithmetic.
#include <stdint.h>

#include "../../common/check.h"
#include "../../common/gpu.h"
#include "../online.h"
#include "../online_stat.cuh"

#define THREADS 256
#define BLOCKS_PER_SM 8 // 2048 threads: sm_80/90 full
#define UNROLL 4        // 16-byte loads in flight per thread

// ---- The exercise's part -----------------------------------------------------------------------
// Returns the statistic of s's elements and v's four, folded in the order v.x, v.y, v.z, v.w with
// online_stat_add. An element of -inf must leave s as it is (the tail below pads with it).
static __device__ __forceinline__ online_stat fold_each(online_stat s, float4 v)
{
    s = online_stat_add(s, v.x);
    s = online_stat_add(s, v.y);
    s = online_stat_add(s, v.z);
    return online_stat_add(s, v.w);
}
// ---- End of the exercise's part ----------------------------------------------------------------

// online.cu's online_stats_kernel with fold_each in place of online_stat_add4. The last n % 4
// elements, one a thread, are padded with three -inf to a float4: -inf never raises the max and
// adds exp(-inf) = 0 to the sum.
static __global__ void per_element_stats_kernel(const float *__restrict__ x, size_t n, online_stat *block_stats,
                                                unsigned *blocks_done, online_stat *total)
{
    __shared__ online_stat warp_stats[WARP_SIZE];
    __shared__ bool is_last;
    const float4 *x4 = (const float4 *)x;
    const size_t n4 = n / 4, stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

    online_stat s = ONLINE_IDENTITY;
    for (; i + (UNROLL - 1) * stride < n4; i += UNROLL * stride) {
        float4 v[UNROLL];
#pragma unroll
        for (int k = 0; k < UNROLL; k++)
            v[k] = x4[i + k * stride];
#pragma unroll
        for (int k = 0; k < UNROLL; k++)
            s = fold_each(s, v[k]);
    }
    for (; i < n4; i += stride)
        s = fold_each(s, x4[i]);
    for (size_t j = 4 * n4 + (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < n; j += stride)
        s = fold_each(s, make_float4(x[j], -INFINITY, -INFINITY, -INFINITY));
    s = block_combine(s, warp_stats);

    if (threadIdx.x == 0) {
        block_stats[blockIdx.x] = s;
        __threadfence();
        is_last = atomicAdd(blocks_done, 1u) == gridDim.x - 1;
        if (is_last)
            __threadfence(); // the reader's side: the statistics fenced before the tickets it saw
    }
    __syncthreads();
    if (!is_last)
        return;
    s = ONLINE_IDENTITY;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x)
        s = online_stat_combine(s, make_stat(__ldcg(&block_stats[b].m), __ldcg(&block_stats[b].d)));
    s = block_combine(s, warp_stats);
    if (threadIdx.x == 0) {
        *total = s;
        *blocks_done = 0;
    }
}

static __device__ __forceinline__ float4 softmax4(float4 v, float m, float inv_d)
{
    return make_float4(__expf(v.x - m) * inv_d, __expf(v.y - m) * inv_d, __expf(v.z - m) * inv_d,
                       __expf(v.w - m) * inv_d);
}

// online.cu's normalize_kernel: y = exp(x - m) / d, walking x from its end.
static __global__ void per_element_normalize_kernel(const float *__restrict__ x, float *__restrict__ y, size_t n,
                                                    const online_stat *total)
{
    const float m = total->m, inv_d = 1.0f / total->d;
    const float4 *x4 = (const float4 *)x;
    float4 *y4 = (float4 *)y;
    const size_t n4 = n / 4, last = n4 - 1, stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (UNROLL - 1) * stride < n4; i += UNROLL * stride) {
        float4 v[UNROLL];
#pragma unroll
        for (int k = 0; k < UNROLL; k++)
            v[k] = x4[last - (i + k * stride)];
#pragma unroll
        for (int k = 0; k < UNROLL; k++)
            __stcs(&y4[last - (i + k * stride)], softmax4(v[k], m, inv_d));
    }
    for (; i < n4; i += stride)
        __stcs(&y4[last - i], softmax4(x4[last - i], m, inv_d));
    for (size_t j = 4 * n4 + (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < n; j += stride)
        y[j] = __expf(x[j] - m) * inv_d;
}

// The grid of both kernels: one float4 per thread at most, a full GPU at most.
static int per_element_grid(size_t n) { return gpu_grid_size(n / 4 + 1, THREADS, BLOCKS_PER_SM); }

// The total, a statistic per block, then the counter of blocks done (zeroed by bench.h, and left
// at 0 by every launch).
static size_t per_element_workspace_bytes(size_t rows, size_t n)
{
    (void)rows;
    return (size_t)per_element_grid(n) * sizeof(online_stat) + sizeof(online_stat) + sizeof(unsigned);
}

static int per_element_softmax(const float *x, float *y, size_t rows, size_t n, void *workspace)
{
    (void)rows; // 1: one softmax over n elements
    if ((uintptr_t)x % 16 || (uintptr_t)y % 16)
        die(1, "exercise: x and y must be 16-byte aligned (cudaMalloc's are)");
    const int grid = per_element_grid(n);
    online_stat *total = (online_stat *)workspace, *block_stats = total + 1;
    unsigned *blocks_done = (unsigned *)(block_stats + grid);

    per_element_stats_kernel<<<grid, THREADS>>>(x, n, block_stats, blocks_done, total);
    CUDA_CHECK_LAUNCH("per_element_stats_kernel");
    per_element_normalize_kernel<<<grid, THREADS>>>(x, y, n, total);
    CUDA_CHECK_LAUNCH("per_element_normalize_kernel");
    return 2;
}

extern "C" const softmax_variant online_exercise_variant = {EXERCISE_VARIANT, 12.0, per_element_workspace_bytes,
                                                            per_element_softmax, single_row_only};
