// The row kernels of online_rows: a warp with one, two or four rows in registers, a cluster of two
// blocks that each cache half a row, and a block per row that caches its row in shared memory or
// reads it twice. online.cu includes this file, after it defines UNROLL and softmax4, and
// online_rows_softmax there picks a kernel by row length.
// Read split_row, warp_row4_kernel, block_row_kernel (the last kernel here), cluster_row_kernel
// (just above it), then online.cu's online_rows_softmax.
#ifndef ROW_KERNELS_CUH
#define ROW_KERNELS_CUH

#include <cooperative_groups.h>
#include <cuda_pipeline.h>
#include <stdint.h>

#include "../04_warp/warp_reduce.cuh"
#include "online_stat.cuh"

namespace cg = cooperative_groups;

// A row seen as a scalar head (up to the first 16-byte boundary), `body` float4s, and a tail.
typedef struct {
    unsigned head;
    size_t body, tail_start;
} row_split;

__device__ __forceinline__ row_split split_row(const float *row, size_t cols)
{
    row_split r;
    const size_t to_boundary = ((16 - (uintptr_t)row % 16) % 16) / sizeof(float);
    r.head = (unsigned)(to_boundary < cols ? to_boundary : cols);
    r.body = (cols - r.head) / 4;
    r.tail_start = r.head + 4 * r.body;
    return r;
}

// Rows of up to 1024 columns, cols a multiple of 4, 16-byte aligned: a warp takes R rows, lane l
// holding float4s l, l+32, ... of each (K4 per row; K4 and R are compile-time constants, so the
// values stay in registers). All R x K4 loads are issued before the first is used, and the R rows'
// reductions are independent, so with R > 1 a warp has more bytes in flight. A block of
// blockDim.x threads (a multiple of 32) takes blockDim.x / 32 x R consecutive rows; the launch
// sizes the grid with the same numbers. The max and the sum are two shuffle reductions, since the
// whole row is already in registers.
template <int K4, int R>
static __global__ void warp_row4_kernel(const float *__restrict__ x, float *__restrict__ y, size_t rows, size_t cols)
{
    const size_t first_row = ((size_t)blockIdx.x * (blockDim.x / WARP_SIZE) + threadIdx.x / WARP_SIZE) * R;
    const unsigned lane = threadIdx.x % WARP_SIZE;
    if (first_row >= rows)
        return; // the same for all 32 lanes: the whole warp leaves
    const size_t cols4 = cols / 4;
    float4 v[R][K4];
#pragma unroll
    for (int r = 0; r < R; r++) {
        const float4 *x4 = (const float4 *)(x + (first_row + r) * cols);
#pragma unroll
        for (int k = 0; k < K4; k++) {
            const size_t q = lane + (size_t)k * WARP_SIZE;
            v[r][k] = first_row + r < rows && q < cols4 ? x4[q] : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
        }
    }
#pragma unroll
    for (int r = 0; r < R; r++) {
        float m = -INFINITY;
#pragma unroll
        for (int k = 0; k < K4; k++)
            m = fmaxf(m, fmaxf(fmaxf(v[r][k].x, v[r][k].y), fmaxf(v[r][k].z, v[r][k].w)));
        m = warp_max(m);
        float d = 0.0f;
#pragma unroll
        for (int k = 0; k < K4; k++) {
            v[r][k] = make_float4(__expf(v[r][k].x - m), __expf(v[r][k].y - m), __expf(v[r][k].z - m),
                                  __expf(v[r][k].w - m));
            d += (v[r][k].x + v[r][k].y) + (v[r][k].z + v[r][k].w);
        }
        const float inv_d = 1.0f / warp_sum(d);
        if (first_row + r >= rows)
            continue; // uniform across the warp, and after the last shuffle of this row
        float4 *y4 = (float4 *)(y + (first_row + r) * cols);
#pragma unroll
        for (int k = 0; k < K4; k++) {
            const size_t q = lane + (size_t)k * WARP_SIZE;
            if (q < cols4)
                y4[q] = make_float4(v[r][k].x * inv_d, v[r][k].y * inv_d, v[r][k].z * inv_d, v[r][k].w * inv_d);
        }
    }
}

// A cluster of two blocks per row (compute capability 9.0): rank 0 caches the first half of the
// row's float4 body in its shared memory, rank 1 the second. Each folds its half, then reads its
// partner's statistic through distributed shared memory (cluster.map_shared_rank), so both
// normalize with the row's (m, d). x and y must be aligned alike (the host checks).
static __global__ void cluster_row_kernel(const float *__restrict__ x, float *__restrict__ y, size_t cols)
{
#if __CUDA_ARCH__ >= 900
    extern __shared__ float4 half4[];
    __shared__ online_stat warp_stats[WARP_SIZE];
    __shared__ online_stat block_stat;
    cg::cluster_group cluster = cg::this_cluster();
    const unsigned rank = cluster.block_rank(), tid = threadIdx.x, step = blockDim.x;
    const float *xr = x + (size_t)(blockIdx.x / 2) * cols;
    float *yr = y + (size_t)(blockIdx.x / 2) * cols;
    const row_split in = split_row(xr, cols);
    const size_t half = (in.body + 1) / 2, first = rank * half, count = rank == 0 ? half : in.body - half;
    const float4 *x4 = (const float4 *)(xr + in.head) + first;
    float4 *y4 = (float4 *)(yr + in.head) + first;

    for (size_t k = tid; k < count; k += step)
        __pipeline_memcpy_async(&half4[k], &x4[k], sizeof(float4));
    __pipeline_commit();
    // The scalar head belongs to rank 0, the tail to rank 1: at most 3 elements each.
    const size_t lo = rank == 0 ? 0 : in.tail_start, hi = rank == 0 ? in.head : cols;
    online_stat s = ONLINE_IDENTITY;
    for (size_t c = lo + tid; c < hi; c += step)
        s = online_stat_add(s, xr[c]);
    __pipeline_wait_prior(0);
    __syncthreads();
    for (size_t k = tid; k < count; k += step)
        s = online_stat_add4(s, half4[k]);
    s = block_combine(s, warp_stats);
    if (tid == 0)
        block_stat = s;
    cluster.sync(); // both halves' statistics are written
    s = online_stat_combine(s, *cluster.map_shared_rank(&block_stat, rank ^ 1));
    cluster.sync(); // both have read: neither block may leave while its partner reads its memory

    const float inv_d = 1.0f / s.d;
    for (size_t c = lo + tid; c < hi; c += step)
        yr[c] = __expf(xr[c] - s.m) * inv_d;
    for (size_t k = tid; k < count; k += step)
        __stcs(&y4[k], softmax4(half4[k], s.m, inv_d));
#endif
}

// One block per row. CACHED: the row is copied into shared memory first (cp.async, all at once)
// and read from there twice; otherwise the statistics fold it from registers and the normalize
// reads x again.
template <bool CACHED>
static __global__ void block_row_kernel(const float *__restrict__ x, float *__restrict__ y, size_t cols)
{
    extern __shared__ float4 cache4[]; // (cols + 3) floats when CACHED, else unused
    __shared__ online_stat warp_stats[WARP_SIZE];
    const float *xr = x + (size_t)blockIdx.x * cols;
    float *yr = y + (size_t)blockIdx.x * cols;
    const unsigned tid = threadIdx.x, step = blockDim.x;

    // Element c of the row lives at cache[c]; the shift makes cache + head 16-byte aligned.
    const row_split in = split_row(xr, cols);
    float *cache = (float *)cache4 + (4 - in.head) % 4;
    const float4 *x4 = (const float4 *)(xr + in.head);
    float4 *c4 = (float4 *)(cache + in.head);

    online_stat s = ONLINE_IDENTITY;
    if (CACHED) {
        for (size_t k = tid; k < in.body; k += step)
            __pipeline_memcpy_async(&c4[k], &x4[k], sizeof(float4));
        __pipeline_commit();
        for (size_t c = tid; c < in.head; c += step)
            cache[c] = xr[c];
        for (size_t c = in.tail_start + tid; c < cols; c += step)
            cache[c] = xr[c];
        __pipeline_wait_prior(0);
        __syncthreads(); // the whole row is in shared memory, whoever copied each part
        for (size_t k = tid; k < in.body; k += step)
            s = online_stat_add4(s, c4[k]);
    } else {
        size_t k = tid;
        for (; k + (UNROLL - 1) * step < in.body; k += UNROLL * step) {
            float4 v[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; u++)
                v[u] = x4[k + u * step];
#pragma unroll
            for (int u = 0; u < UNROLL; u++)
                s = online_stat_add4(s, v[u]);
        }
        for (; k < in.body; k += step)
            s = online_stat_add4(s, x4[k]);
    }
    const float *src = CACHED ? cache : xr;
    for (size_t c = tid; c < in.head; c += step)
        s = online_stat_add(s, src[c]);
    for (size_t c = in.tail_start + tid; c < cols; c += step)
        s = online_stat_add(s, src[c]);
    s = block_combine(s, warp_stats);
    const float m = s.m, inv_d = 1.0f / s.d;

    // Write y 16 bytes at a time. When y's rows are aligned like x's (always, for matrices from
    // cudaMalloc), the cache is read 16 bytes at a time too; otherwise value by value.
    const row_split out = split_row(yr, cols);
    float4 *y4 = (float4 *)(yr + out.head);
    for (size_t c = tid; c < out.head; c += step)
        yr[c] = __expf(src[c] - m) * inv_d;
    if (CACHED && out.head == in.head) {
        for (size_t q = tid; q < out.body; q += step)
            __stcs(&y4[q], softmax4(c4[q], m, inv_d));
    } else {
        for (size_t q = tid; q < out.body; q += step) {
            const float *v = src + out.head + 4 * q;
            __stcs(&y4[q], softmax4(make_float4(v[0], v[1], v[2], v[3]), m, inv_d));
        }
    }
    for (size_t c = out.tail_start + tid; c < cols; c += step)
        yr[c] = __expf(src[c] - m) * inv_d;
}

#endif
