// synccheck on a convergent cluster kernel, many waves against one.
// Build: nvcc -O3 -arch=sm_90 -o waves synccheck_cluster_waves.cu
// Run: compute-sanitizer --tool synccheck ./waves ROWS COLS BLOCKS
// A cluster of BLOCKS blocks a row; BLOCKS = 1 is the control.
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>

#define THREADS 256
#define FULL 0xffffffffu

__global__ void __launch_bounds__(THREADS, 1) row_max(const float *x, int cols, float *out)
{
    __shared__ float warp_max[THREADS / 32];
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    const int blocks = (int)cluster.num_blocks(), rank = (int)cluster.block_rank();
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const size_t row = blockIdx.x / blocks;
    const int per = (cols + blocks - 1) / blocks, end = min(cols, (rank + 1) * per);
    float most = -INFINITY;
    for (int i = rank * per + t; i < end; i += THREADS)
        most = fmaxf(most, x[row * cols + i]);
    for (int o = 1; o < 32; o *= 2)
        most = fmaxf(most, __shfl_xor_sync(FULL, most, o));
    if (lane == 0)
        warp_max[warp] = most;
    cluster.sync();
    __syncthreads(); // every warp is whole here
    for (int w = 0; w < THREADS / 32; w++)
        most = fmaxf(most, warp_max[w]);
    if (t == 0)
        out[blockIdx.x] = most;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s ROWS COLS BLOCKS\n", argv[0]);
        return 2;
    }
    const int rows = atoi(argv[1]), cols = atoi(argv[2]), blocks = atoi(argv[3]);
    float *x, *out;
    cudaMalloc(&x, sizeof(float) * rows * cols);
    cudaMemset(x, 0, sizeof(float) * rows * cols);
    cudaMalloc(&out, sizeof(float) * rows * blocks);
    cudaFuncSetAttribute(row_max, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(rows * blocks), config.blockDim = dim3(THREADS);
    cudaLaunchAttribute cluster;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = blocks, cluster.val.clusterDim.y = 1, cluster.val.clusterDim.z = 1;
    config.attrs = &cluster, config.numAttrs = 1;
    int fit = 0;
    cudaOccupancyMaxActiveClusters(&fit, row_max, &config);
    const cudaError_t launched = cudaLaunchKernelEx(&config, row_max, (const float *)x, cols, out);
    const cudaError_t ran = cudaDeviceSynchronize();
    printf("%d rows x %d, clusters of %d: %d clusters at once, %.1f waves; %s, %s\n", rows, cols, blocks, fit,
           fit ? (double)rows / fit : 0.0, cudaGetErrorString(launched), cudaGetErrorString(ran));
    return launched != cudaSuccess || ran != cudaSuccess;
}
