// The harness's own kernels. A pure read of a large buffer measures the read ceiling and, run over
// a buffer twice the size of L2, flushes the cache between timed runs: reading (rather than
// cudaMemset) leaves the L2 full of clean lines, so the next timed kernel does not pay for writing
// back the flush buffer. A tiled copy is one of the two copies the copy ceiling takes the best of.
#include "check.h"
#include "gpu.h"

#define SWEEP_UNROLL 4

__global__ void read_sweep_kernel(const float4 *buf, size_t n, float *sink)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    // SWEEP_UNROLL independent 16-byte loads in flight per thread before the first add.
    for (; i + (SWEEP_UNROLL - 1) * stride < n; i += SWEEP_UNROLL * stride) {
        float4 v[SWEEP_UNROLL];
#pragma unroll
        for (int k = 0; k < SWEEP_UNROLL; k++)
            v[k] = buf[i + k * stride];
#pragma unroll
        for (int k = 0; k < SWEEP_UNROLL; k++)
            acc += v[k].x + v[k].y + v[k].z + v[k].w;
    }
    for (; i < n; i += stride) {
        const float4 v = buf[i];
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == -1.0f) // the buffers read here hold zeros, so this never happens
        *sink = acc;
}

extern "C" void launch_read_sweep(const void *buf, size_t n_float4, float *sink, int grid, int threads)
{
    read_sweep_kernel<<<grid, threads>>>((const float4 *)buf, n_float4, sink);
    CUDA_CHECK_LAUNCH("read_sweep_kernel");
}

#define TILE_THREADS 256
#define TILE_FLOAT4 4 // per thread: a tile is 256 x 4 float4 = 16 KB

// Block b copies tile b: every thread loads its TILE_FLOAT4 float4 (coalesced, a warp's loads
// 512 contiguous bytes each), then stores them, so each block's reads are all in flight before its
// writes, as in a row kernel that holds its row.
__global__ void tile_copy_kernel(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n)
{
    const size_t first = (size_t)blockIdx.x * TILE_THREADS * TILE_FLOAT4 + threadIdx.x;
    float4 v[TILE_FLOAT4];
#pragma unroll
    for (int k = 0; k < TILE_FLOAT4; k++)
        if (first + k * TILE_THREADS < n)
            v[k] = src[first + k * TILE_THREADS];
#pragma unroll
    for (int k = 0; k < TILE_FLOAT4; k++)
        if (first + k * TILE_THREADS < n)
            dst[first + k * TILE_THREADS] = v[k];
}

extern "C" void launch_tile_copy(const void *src, void *dst, size_t n_float4)
{
    const size_t per_block = (size_t)TILE_THREADS * TILE_FLOAT4;
    tile_copy_kernel<<<(unsigned)((n_float4 + per_block - 1) / per_block), TILE_THREADS>>>((const float4 *)src,
                                                                                           (float4 *)dst, n_float4);
    CUDA_CHECK_LAUNCH("tile_copy_kernel");
}
