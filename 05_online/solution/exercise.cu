// Stage 05's exercise: the online statistic folded one element at a time.
//
// The online variant (online.cu) folds 16 bytes of x at a time with online_stat_add4, which
// rescales the running sum once per four elements:
//     m' = max(m, x0, x1, x2, x3),   d' = d * exp(m - m') + exp(x0 - m') + ... + exp(x3 - m')
// This file is the same softmax over n, in the same two launches: a statistics kernel (each thread
// folds its elements, the block combines its threads, the last block to finish combines the
// blocks), then the normalize. Only the fold differs: fold_each, below, folds the four elements one
// by one with online_stat_add, which rescales the sum at every element.
//
// The worked solution: fold_each calls online_stat_add four times (the scaffold is ../exercise.cu).
// Build and run it with `make && ./run_solution --n 100M --variant exercise`.
//
// How many more exp per element. online_stat_add4 takes five __expf for four elements: one rescales
// the running sum, one weighs each element. That is 1.25 per element. online_stat_add is
// online_stat_combine(s, (x, 1)), which takes two: one rescales s.d to the new max, one weighs x.
// One of the two is exp(0) = 1, but which one depends on the data, so both are computed: 2 per
// element, 0.75 more, 1.6 times as many in the statistics pass. The normalize takes one per element
// in both, so the whole softmax goes from 2.25 to 3 per element, 1.33 times. The compiled code
// agrees (nvcc 13, sm_90, `cuobjdump -sass build/05_online/solution/exercise.o`): the unrolled loop
// of the statistics kernel, 16 elements per trip, has 32 MUFU.EX2 among 283 instructions (17.7 per
// element); online_stats_kernel's has 20 among 204 (12.75). Each __expf is five instructions there:
// a multiply by log2(e), the MUFU.EX2, and a compare and two predicated multiplies that keep results
// below float's smallest normal number, 2^-126, from being flushed to 0.
//
// Memory or arithmetic? The statistics pass reads 4 bytes per element and writes nothing: 400 MB at
// n = 100M. On the H200 of the top-level README (132 SMs at up to 1.98 GHz, its highest SM clock,
// near which Nsight Compute's reports find it; a read ceiling of 4404 GB/s, stage 06's, against a
// copy's 4232), that takes 400 MB / 4404 GB/s = 91 us. To keep up, each SM must fold
// 4404e9 / 4 / 132 / 1.98e9 = 4.21 elements per clock:
//   - exps: 4.21 x 2 = 8.4 MUFU.EX2 per clock, of the 16 an SM completes per clock: 53 %
//     (online_stat_add4: 4.21 x 1.25 = 5.3, 33 %);
//   - instructions: 4.21 x 17.7 = 75 per clock, of the 128 an SM issues per clock (4 schedulers,
//     one warp instruction of 32 threads each): 58 % (online_stat_add4: 4.21 x 12.75 = 54, 42 %).
// Said as times: the exps alone would take 200M / (132 x 16 x 1.98e9 per s) = 48 us, issuing the
// instructions 100M x 17.7 / (132 x 128 x 1.98e9 per s) = 53 us, both under the 91 us of the bytes
// (online: 30 and 38 us). So both statistics passes should be limited by memory, the per-element one
// with less to spare. Predictions, to be measured (README, Exercise):
//   - ./run --n 100M with --variant exercise and with --variant online: the same median time and %
//     of the ceiling, within the run-to-run spread of a few percent. The extra exps do not show in
//     the time, only in how busy the SM is.
//   - The statistics pass alone (the normalize launch commented out; the row fails, but is timed):
//     about the same time with fold_each and with online_stat_add4, close to the 91 us of the
//     bytes on an H200 (400 MB over your read ceiling elsewhere) divided by the fraction of that
//     ceiling it reaches. Under Nsight Compute, the same Duration for both, DRAM Throughput high,
//     Compute (SM) Throughput below it and higher for exercise than for online.
//     If the per-element pass takes a good part of 1.6 times as long instead, the arithmetic is
//     what limits it.
// The margin depends on the GPU: the exps an SM needs per clock are 2 x read bytes per second / 4 /
// SMs / clock, against 16. The H200 has more bytes per clock per SM than most GPUs of compute
// capability 7.5 to 9.0: 4.8 TB/s / (132 SMs x 1.98 GHz) = 18 bytes, against 13 on an H100 SXM
// (3.35 TB/s, the same SMs and clock). So on most others the margin is wider.
//
// Knowing which side holds the max, one exp per element is enough: if x > m, d' = d * exp(m - x) + 1,
// else d' = d + exp(x - m). That is fewer than online_stat_add4's 1.25, at the price of a select on
// every element; online_stat_add computes both terms because it is the general combine.
#include <stdint.h>

#include "../../common/check.h"
#include "../../common/gpu.h"
#include "../online.h"
#include "../online_stat.cuh"

#define THREADS 256
#define BLOCKS_PER_SM 8 // 8 x 256 threads: a full SM
#define UNROLL 4        // 16-byte loads in flight per thread

// ---- The exercise's part -----------------------------------------------------------------------
// Returns the statistic of s's elements and the four of v: v.x, v.y, v.z, v.w folded in that order,
// each with online_stat_add. An element of -inf must leave s as it is (the tail below pads with it).
static __device__ __forceinline__ online_stat fold_each(online_stat s, float4 v)
{
    s = online_stat_add(s, v.x);
    s = online_stat_add(s, v.y);
    s = online_stat_add(s, v.z);
    return online_stat_add(s, v.w);
}
// ---- End of the exercise's part ----------------------------------------------------------------

// online.cu's online_stats_kernel with fold_each in place of online_stat_add4. Each thread folds
// the float4s i, i + stride, ... (UNROLL loads issued before the first is folded), then the last
// n % 4 elements, one per thread, each padded with three -inf to a float4: -inf never raises the max
// and adds exp(-inf) = 0 to the sum. The block combines its threads' statistics; the last block to
// finish (blocks_done, after a __threadfence) combines every block's into *total and resets
// blocks_done to 0 for the next launch.
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

// online.cu's normalize_kernel: y = exp(x - m) / d. Index i of the grid-stride loop is float4
// number n4 - 1 - i: the walk starts at the end of x, which the statistics pass read last (still
// partly in L2), and y is stored evict-first (__stcs) so that it does not push that part out.
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

// The total, then a statistic per block, then the counter of blocks done (zeroed, as bench.h's
// workspaces are, and left at 0 by every launch).
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
