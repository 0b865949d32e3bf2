// Stage 05: the online softmax, with the statistic (m, d) of online_stat.cuh.
// One softmax over n (`online`) takes two kernels: online_stats_kernel folds x into (m, d) and the
// last block to finish combines the blocks' statistics; normalize_kernel writes y = exp(x - m) / d.
// x is read twice and y written once, 12 bytes per element. A softmax per row (`online_rows`) runs
// a kernel of row_kernels.cuh, which online_rows_softmax picks by row length (README.md's table).
// Read next: online_stats_kernel and normalize_kernel below, then row_kernels.cuh.
#include <stdint.h>

#include "../04_warp/warp.h"
#include "../04_warp/warp_reduce.cuh"
#include "../common/check.h"
#include "../common/gpu.h"
#include "online.h"
#include "online_stat.cuh"

#define THREADS 256
#define BLOCKS_PER_SM 8  // 2048 threads: sm_80/90 full
#define UNROLL 4         // 16-byte loads in flight per thread

__device__ __forceinline__ float4 softmax4(float4 v, float m, float inv_d)
{
    return make_float4(__expf(v.x - m) * inv_d, __expf(v.y - m) * inv_d, __expf(v.z - m) * inv_d,
                       __expf(v.w - m) * inv_d);
}

#include "row_kernels.cuh"

// ---- One softmax over n -------------------------------------------------------------------------

// Each thread folds the float4s i, i + stride, ... of x, then at most one of the last n % 4
// elements. The block combines its threads; the last block to finish combines every block's
// statistic into *total and sets *blocks_done back to 0 for the next launch.
static __global__ void online_stats_kernel(const float *__restrict__ x, size_t n, online_stat *block_stats,
                                           unsigned *blocks_done, online_stat *total)
{
    __shared__ online_stat warp_stats[WARP_SIZE];
    __shared__ bool is_last;
    const float4 *x4 = (const float4 *)x;
    const size_t n4 = n / 4, stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

    online_stat s = ONLINE_IDENTITY;
    for (; i + (UNROLL - 1) * stride < n4; i += UNROLL * stride) {
        float4 v[UNROLL]; // all UNROLL loads are issued before the first is used
#pragma unroll
        for (int k = 0; k < UNROLL; k++)
            v[k] = x4[i + k * stride];
#pragma unroll
        for (int k = 0; k < UNROLL; k++)
            s = online_stat_add4(s, v[k]);
    }
    for (; i < n4; i += stride)
        s = online_stat_add4(s, x4[i]);
    for (size_t j = 4 * n4 + (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < n; j += stride)
        s = online_stat_add(s, x[j]); // the last n % 4 elements
    s = block_combine(s, warp_stats);

    // Stage 03's pattern: each block publishes its statistic, fences, then takes a ticket; the
    // block that takes the last ticket combines them all.
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

// Index i of the grid-stride loop is float4 number last - i. For n < 4, n4 is 0 and last wraps
// around, but no i is below n4, so it is never used. The walk starts at the end of x, which the
// statistics pass read last and which is partly still in L2. y is stored evict-first (__stcs), so
// that it does not push that part of x out before it is read.
static __global__ void normalize_kernel(const float *__restrict__ x, float *__restrict__ y, size_t n,
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

// The grid of both 1-D kernels: one float4 per thread at most, a full GPU at most.
static int online_grid(size_t n) { return gpu_grid_size(n / 4 + 1, THREADS, BLOCKS_PER_SM); }

static size_t online_workspace_bytes(size_t rows, size_t n)
{
    (void)rows;
    return (size_t)online_grid(n) * sizeof(online_stat) + sizeof(online_stat) + sizeof(unsigned);
}

static void require_16_byte_alignment(const void *p, const char *what)
{
    if ((uintptr_t)p % 16)
        die(1, "online: %s must be 16-byte aligned (cudaMalloc's are)", what);
}

static int online_softmax(const float *x, float *y, size_t rows, size_t n, void *workspace)
{
    (void)rows; // 1: one softmax over n elements
    require_16_byte_alignment(x, "x");
    require_16_byte_alignment(y, "y");
    const int grid = online_grid(n);
    online_stat *total = (online_stat *)workspace, *block_stats = total + 1;
    unsigned *blocks_done = (unsigned *)(block_stats + grid);

    online_stats_kernel<<<grid, THREADS>>>(x, n, block_stats, blocks_done, total);
    CUDA_CHECK_LAUNCH("online_stats_kernel");
    normalize_kernel<<<grid, THREADS>>>(x, y, n, total);
    CUDA_CHECK_LAUNCH("normalize_kernel");
    return 2;
}

// ---- A softmax per row: how the kernels of row_kernels.cuh are picked and launched -------------

// Allows `kernel` the most dynamic shared memory a block may have (the opt-in limit less the
// kernel's own static shared memory) and returns that amount.
static size_t allow_all_shared_memory(const void *kernel)
{
    int optin = 0;
    cudaFuncAttributes attr;
    CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    const size_t bytes = (size_t)optin - attr.sharedSizeBytes;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    return bytes;
}

// The shared-memory budget of the row kernels, read once from the device.
static struct {
    size_t block_cache;  // largest row cache of one block_row_kernel<true>
    size_t two_per_sm;   // largest cache that still lets two blocks share an SM
    size_t cluster_half; // largest half-row cache of cluster_row_kernel, two of them per SM
    bool clusters;       // compute capability 9.0 or newer
} budget;

static void read_budget(void)
{
    if (budget.block_cache)
        return;
    int per_sm = 0, major = 0;
    cudaFuncAttributes block_attr, cluster_attr;
    CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    CUDA_CHECK(cudaFuncGetAttributes(&block_attr, block_row_kernel<true>));
    CUDA_CHECK(cudaFuncGetAttributes(&cluster_attr, cluster_row_kernel));
    const size_t reserved = 1024; // the runtime keeps 1 KB of shared memory per block
    budget.block_cache = allow_all_shared_memory((const void *)block_row_kernel<true>);
    budget.two_per_sm = (size_t)per_sm / 2 - reserved - block_attr.sharedSizeBytes;
    budget.clusters = major >= 9;
    if (budget.clusters) {
        allow_all_shared_memory((const void *)cluster_row_kernel);
        budget.cluster_half = (size_t)per_sm / 2 - reserved - cluster_attr.sharedSizeBytes;
    }
}

// warp_row4_kernel's blocks: 128 threads, 4 warps (any multiple of 32 works: the kernel reads its
// warps a block from blockDim). Rows a warp: four up to 64 columns, where one row leaves half a
// warp's lanes or more without a float4; one at 65 to 128; two at 129 to 256, each lane holding
// two float4s a row; one beyond.
#define WARP_ROW_THREADS 128

static int warp_rows_softmax(const float *x, float *y, size_t rows, size_t cols, void *workspace)
{
    const bool aligned = cols % 4 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0;
    if (!aligned)
        return warp_per_row_variant.run(x, y, rows, cols, workspace); // stage 04's scalar loads
    const size_t warps_per_block = WARP_ROW_THREADS / WARP_SIZE;
#define LAUNCH_WARP_ROWS(K4, R)                                                                        \
    warp_row4_kernel<K4, R><<<(unsigned)((rows + warps_per_block * R - 1) / (warps_per_block * R)),         \
                              WARP_ROW_THREADS>>>(x, y, rows, cols)
    if (cols <= 64)
        LAUNCH_WARP_ROWS(1, 4);
    else if (cols <= 128)
        LAUNCH_WARP_ROWS(1, 1);
    else if (cols <= 256)
        LAUNCH_WARP_ROWS(2, 2);
    else if (cols <= 512)
        LAUNCH_WARP_ROWS(4, 1);
    else
        LAUNCH_WARP_ROWS(8, 1);
#undef LAUNCH_WARP_ROWS
    CUDA_CHECK_LAUNCH("warp_row4_kernel");
    return 1;
}

// Up to 1024 columns a warp takes one to four rows. Longer rows go to a cluster of two blocks of
// 512, half a row each, when a whole-row cache would leave room for only one block an SM and a
// half fits in half an SM (compute capability 9.0, x and y aligned alike); otherwise to one block
// that caches the row while it fits, and past that to one block that reads x twice.
static int online_rows_softmax(const float *x, float *y, size_t rows, size_t cols, void *workspace)
{
    if (warp_per_row_variant.supports(rows, cols)) // rows short enough for registers (stage 04)
        return warp_rows_softmax(x, y, rows, cols, workspace);
    read_budget();
    const size_t cache_bytes = (cols + 3) * sizeof(float), half_bytes = (cols / 8 + 1) * sizeof(float4);
    const bool aligned_alike = (uintptr_t)x % 16 == (uintptr_t)y % 16;
    if (cache_bytes > budget.two_per_sm && budget.clusters && half_bytes <= budget.cluster_half && aligned_alike) {
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3((unsigned)(2 * rows));
        config.blockDim = dim3(512);
        config.dynamicSmemBytes = half_bytes;
        cudaLaunchAttribute cluster;
        cluster.id = cudaLaunchAttributeClusterDimension;
        cluster.val.clusterDim.x = 2;
        cluster.val.clusterDim.y = 1;
        cluster.val.clusterDim.z = 1;
        config.attrs = &cluster;
        config.numAttrs = 1;
        CUDA_CHECK(cudaLaunchKernelEx(&config, cluster_row_kernel, x, y, cols));
        CUDA_CHECK_LAUNCH("cluster_row_kernel");
    } else if (cache_bytes <= budget.block_cache) {
        block_row_kernel<true><<<(unsigned)rows, cols >= 16384 ? 1024 : 256, cache_bytes>>>(x, y, cols);
        CUDA_CHECK_LAUNCH("block_row_kernel<cached>");
    } else {
        block_row_kernel<false><<<(unsigned)rows, 1024>>>(x, y, cols);
        CUDA_CHECK_LAUNCH("block_row_kernel<uncached>");
    }
    return 1;
}

extern "C" const softmax_variant online_variant = {"online", 12.0, online_workspace_bytes, online_softmax,
                                                   single_row_only};
extern "C" const softmax_variant online_rows_variant = {"online_rows", 8.0, NULL, online_rows_softmax, NULL};
