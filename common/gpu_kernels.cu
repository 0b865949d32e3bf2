// The one kernel the harness needs: a pure read of a large buffer. It measures the read ceiling
// and, run over a buffer twice the size of L2, flushes the cache between timed runs. Reading
// (rather than cudaMemset) leaves the L2 full of clean lines, so the next timed kernel does not
// pay for writing back the flush buffer.
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
