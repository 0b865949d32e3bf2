// Stage 04: the fused softmax with shuffle reductions, and three ways to map rows to threads.
//
// fused_warp is stage 03's fused (block statistics, many-block merge, normalize), line for line,
// with block_reduce_max/sum replaced by block_max/sum_by_warps (warp_reduce.cuh): the same kernels
// and the same 12 bytes per element.
//
// The rows of a rows x cols matrix, each its own softmax:
//   thread_per_row: thread r owns row r and walks it three times (max, sum, normalize); the lanes
//                   of a warp read addresses `cols` apart.
//   warp_per_row:   warp r owns row r and holds it in registers, lane l columns l, l + 32, ...
//                   (K of them, a template constant); one read, one write, shuffles only. Rows of
//                   at most 1024 columns.
//   block_per_row:  block r (256 threads) owns row r and walks it three times, thread t columns
//                   t, t + 256, ... (none when t >= cols); it reduces across the block.
//
// Read next: main.c, what the program runs; then exercise.cu, a half-warp per row.
#include "../common/check.h"
#include "../common/gpu.h"
#include "warp.h"
#include "warp_reduce.cuh"

#define THREADS 256
#define MERGE_BLOCKS_PER_SM 4

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// ---- 1-D: stage 03's fused softmax with shuffle reductions ------------------------------------

static __global__ void block_stats_kernel(const float *x, size_t n, float *block_max, float *block_sum)
{
    __shared__ float warp_results[WARP_SIZE];
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    const float v = i < n ? x[i] : -INFINITY;
    const float m = block_max_by_warps(v, warp_results);
    const float s = block_sum_by_warps(v == -INFINITY ? 0.0f : expf(v - m), warp_results);
    if (threadIdx.x == 0) {
        block_max[blockIdx.x] = m;
        block_sum[blockIdx.x] = s;
    }
}

static __device__ void merge_stats(const float *stat_max, const float *stat_sum, size_t first, size_t count,
                            size_t stride, float *warp_results, float *merged_max, float *merged_sum)
{
    float m = -INFINITY;
    for (size_t i = first; i < count; i += stride)
        m = fmaxf(m, __ldcg(&stat_max[i]));
    const float global_max = block_max_by_warps(m, warp_results);
    float s = 0.0f;
    for (size_t i = first; i < count; i += stride) {
        const float si = __ldcg(&stat_sum[i]);
        if (si != 0.0f) // as in stage 03: skips blocks of -inf only, keeps a NaN sum
            s += si * expf(__ldcg(&stat_max[i]) - global_max);
    }
    *merged_max = global_max;
    *merged_sum = block_sum_by_warps(s, warp_results);
}

static __global__ void merge_many_blocks_kernel(const float *block_max, const float *block_sum,
                                                size_t count, float *group_max, float *group_sum,
                                                unsigned *blocks_done, float *stats)
{
    __shared__ float warp_results[WARP_SIZE];
    __shared__ bool is_last;
    float m, s;
    merge_stats(block_max, block_sum, (size_t)blockIdx.x * THREADS + threadIdx.x, count,
                (size_t)gridDim.x * THREADS, warp_results, &m, &s);
    if (threadIdx.x == 0) {
        group_max[blockIdx.x] = m;
        group_sum[blockIdx.x] = s;
        __threadfence();
        is_last = atomicAdd(blocks_done, 1u) == gridDim.x - 1;
        if (is_last)
            __threadfence(); // the reader's side: the pairs fenced before the tickets it saw
    }
    __syncthreads();
    if (!is_last)
        return;
    merge_stats(group_max, group_sum, threadIdx.x, gridDim.x, THREADS, warp_results, &m, &s);
    if (threadIdx.x == 0) {
        stats[0] = m;
        stats[1] = s;
        *blocks_done = 0;
    }
}

static __global__ void normalize_kernel(const float *x, size_t n, const float *stats, float *y)
{
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    if (i < n)
        y[i] = expf(x[i] - stats[0]) / stats[1];
}

static size_t merge_grid(size_t blocks) { return (size_t)gpu_grid_size(blocks, THREADS, MERGE_BLOCKS_PER_SM); }

static size_t fused_warp_workspace_bytes(size_t rows, size_t n)
{
    (void)rows;
    const size_t blocks = ceil_div(n, THREADS);
    return (2 + 2 * blocks + 2 * merge_grid(blocks)) * sizeof(float) + sizeof(unsigned);
}

static int fused_warp_softmax(const float *x, float *y, size_t rows, size_t n, void *workspace)
{
    (void)rows; // 1: one softmax over n elements
    const size_t blocks = ceil_div(n, THREADS), groups = merge_grid(blocks);
    float *stats = (float *)workspace, *block_max = stats + 2, *block_sum = block_max + blocks;
    float *group_max = block_sum + blocks, *group_sum = group_max + groups;
    unsigned *blocks_done = (unsigned *)(group_sum + groups);

    block_stats_kernel<<<(unsigned)blocks, THREADS>>>(x, n, block_max, block_sum);
    CUDA_CHECK_LAUNCH("block_stats_kernel");
    merge_many_blocks_kernel<<<(unsigned)groups, THREADS>>>(block_max, block_sum, blocks, group_max,
                                                            group_sum, blocks_done, stats);
    CUDA_CHECK_LAUNCH("merge_many_blocks_kernel");
    normalize_kernel<<<(unsigned)blocks, THREADS>>>(x, n, stats, y);
    CUDA_CHECK_LAUNCH("normalize_kernel");
    return 3;
}

// ---- Rows: three mappings -----------------------------------------------------------------------

// A running sum in float32 with Kahan's compensation, for the long chains of thread_per_row (a row
// per thread) and block_per_row (cols/THREADS terms per thread); README.md, Rows, says why. c holds
// what the last add of s rounded away, and the next add puts it back, so the error stays near one
// rounding however long the chain. The shuffle reductions' chains are short and need none.
typedef struct {
    float s, c;
} kahan_sum;

__device__ __forceinline__ void kahan_add(kahan_sum &k, float v)
{
    const float y = v - k.c, t = k.s + y;
    k.c = (t - k.s) - y;
    k.s = t;
}

static __global__ void thread_per_row_kernel(const float *x, float *y, size_t rows, size_t cols)
{
    const size_t row = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows)
        return; // no shuffle or barrier follows: a single thread may leave
    const float *xr = x + row * cols;
    float *yr = y + row * cols;
    float m = -INFINITY;
    for (size_t c = 0; c < cols; c++)
        m = fmaxf(m, xr[c]);
    kahan_sum s = {0.0f, 0.0f};
    for (size_t c = 0; c < cols; c++)
        kahan_add(s, expf(xr[c] - m)); // a masked (-inf) entry adds exp(-inf) = 0
    for (size_t c = 0; c < cols; c++)
        yr[c] = expf(xr[c] - m) / s.s;
}

// K values per lane, K a compile-time constant: the loops unroll and v[] stays in registers.
template <int K>
static __global__ void warp_per_row_kernel(const float *x, float *y, size_t rows, size_t cols)
{
    const size_t row = (size_t)blockIdx.x * (THREADS / WARP_SIZE) + threadIdx.x / WARP_SIZE;
    const unsigned lane = threadIdx.x % WARP_SIZE;
    if (row >= rows)
        return; // `row` is the same for all 32 lanes, so the whole warp leaves together
    const float *xr = x + row * cols;
    float *yr = y + row * cols;

    // Lanes past the end of the row hold -inf, the identity of max, and so contribute
    // exp(-inf - m) = 0 to the sum: no lane leaves before the full-mask shuffles below.
    float v[K], m = -INFINITY;
#pragma unroll
    for (int k = 0; k < K; k++) {
        const size_t c = lane + (size_t)k * WARP_SIZE;
        v[k] = c < cols ? xr[c] : -INFINITY;
        m = fmaxf(m, v[k]);
    }
    m = warp_max(m);
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < K; k++) {
        v[k] = expf(v[k] - m);
        s += v[k];
    }
    s = warp_sum(s);
#pragma unroll
    for (int k = 0; k < K; k++) {
        const size_t c = lane + (size_t)k * WARP_SIZE;
        if (c < cols)
            yr[c] = v[k] / s;
    }
}

static __global__ void block_per_row_kernel(const float *x, float *y, size_t cols)
{
    __shared__ float warp_results[WARP_SIZE];
    const float *xr = x + (size_t)blockIdx.x * cols;
    float *yr = y + (size_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (size_t c = threadIdx.x; c < cols; c += THREADS)
        m = fmaxf(m, xr[c]);
    m = block_max_by_warps(m, warp_results);
    kahan_sum part = {0.0f, 0.0f};
    for (size_t c = threadIdx.x; c < cols; c += THREADS)
        kahan_add(part, expf(xr[c] - m));
    const float s = block_sum_by_warps(part.s, warp_results);
    for (size_t c = threadIdx.x; c < cols; c += THREADS)
        yr[c] = expf(xr[c] - m) / s;
}

#define WARP_ROW_MAX_COLS (32 * WARP_SIZE)

static bool warp_row_fits(size_t rows, size_t cols)
{
    (void)rows;
    return cols <= WARP_ROW_MAX_COLS;
}

static int thread_per_row_softmax(const float *x, float *y, size_t rows, size_t cols, void *workspace)
{
    (void)workspace;
    thread_per_row_kernel<<<(unsigned)ceil_div(rows, THREADS), THREADS>>>(x, y, rows, cols);
    CUDA_CHECK_LAUNCH("thread_per_row_kernel");
    return 1;
}

static int warp_per_row_softmax(const float *x, float *y, size_t rows, size_t cols, void *workspace)
{
    (void)workspace;
    const unsigned blocks = (unsigned)ceil_div(rows, THREADS / WARP_SIZE);
    // The smallest K (a power of two) with 32 K >= cols.
    if (cols <= 32)
        warp_per_row_kernel<1><<<blocks, THREADS>>>(x, y, rows, cols);
    else if (cols <= 64)
        warp_per_row_kernel<2><<<blocks, THREADS>>>(x, y, rows, cols);
    else if (cols <= 128)
        warp_per_row_kernel<4><<<blocks, THREADS>>>(x, y, rows, cols);
    else if (cols <= 256)
        warp_per_row_kernel<8><<<blocks, THREADS>>>(x, y, rows, cols);
    else if (cols <= 512)
        warp_per_row_kernel<16><<<blocks, THREADS>>>(x, y, rows, cols);
    else
        warp_per_row_kernel<32><<<blocks, THREADS>>>(x, y, rows, cols);
    CUDA_CHECK_LAUNCH("warp_per_row_kernel");
    return 1;
}

static int block_per_row_softmax(const float *x, float *y, size_t rows, size_t cols, void *workspace)
{
    (void)workspace;
    block_per_row_kernel<<<(unsigned)rows, THREADS>>>(x, y, cols);
    CUDA_CHECK_LAUNCH("block_per_row_kernel");
    return 1;
}

extern "C" const softmax_variant fused_warp_variant = {"fused_warp", 12.0, fused_warp_workspace_bytes,
                                                       fused_warp_softmax, single_row_only};
// Bytes per element as the kernels request them from global memory: thread and block per row read
// the row three times (the second and third reads usually come from L1 or L2, not DRAM).
extern "C" const softmax_variant thread_per_row_variant = {"thread_per_row", 16.0, NULL,
                                                           thread_per_row_softmax, NULL};
extern "C" const softmax_variant warp_per_row_variant = {"warp_per_row", 8.0, NULL, warp_per_row_softmax,
                                                         warp_row_fits, "rows of at most 1024 columns"};
extern "C" const softmax_variant block_per_row_variant = {"block_per_row", 16.0, NULL,
                                                          block_per_row_softmax, NULL};
