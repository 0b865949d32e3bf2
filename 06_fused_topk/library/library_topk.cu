// library — the baseline a user would assemble from libraries:
//   1. CUB's DeviceBatchedTopK: each row's K largest logits with their indices, unsorted,
//      equal logits to the lower index;
//   2. stage 05's statistic (m, d) of every row, a block a row;
//   3. the K pairs sorted (CUB's BlockRadixSort), each probability exp(x - m) / d.
// cub_topk is step 1 alone: top-K, not the softmax's.
// Built with CCCL 3.6 or newer (library/cccl.mk finds it); without it, a stub that says why.
// Read next: ../README.md, "The libraries beside fast".
#include <stdint.h>

#include "../../common/check.h"
#include "../fused_topk.h"

#define LIBRARY_MAX_K 1024
#define LIBRARY_MAX_COLS (1 << 21) // DeviceBatchedTopK's longest segment

#ifdef HAVE_BATCHED_TOPK
#define CUB_DISABLE_TOPK_UNSUPPORTED_ARCH_ASSERT
#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_batched_topk.cuh>
#include <cuda/__execution/determinism.h>
#include <cuda/__execution/output_ordering.h>
#include <cuda/__execution/require.h>
#include <cuda/__execution/tie_break.h>
#include <cuda/argument>
#include <cuda/iterator>
#include <cuda/std/__execution/env.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../../05_online/online_stat.cuh"

#define STATS_THREADS 256

__device__ __forceinline__ float widen(float v) { return v; }
__device__ __forceinline__ float widen(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float widen(__half v) { return __half2float(v); }

template <typename T>
static __global__ void __launch_bounds__(STATS_THREADS)
    row_stats_kernel(const T *__restrict__ x, size_t cols, online_stat *__restrict__ stats)
{
    __shared__ online_stat warp_stats[STATS_THREADS / WARP_SIZE];
    const T *xr = x + blockIdx.x * cols;
    online_stat s = ONLINE_IDENTITY;
    for (size_t i = threadIdx.x; i < cols; i += STATS_THREADS)
        s = online_stat_add(s, widen(xr[i]));
    s = block_combine(s, warp_stats);
    if (threadIdx.x == 0)
        stats[blockIdx.x] = s;
}

// Sort key: the logit's order bits above, the index flipped below, so descending order puts
// larger logits first and, among bitwise-equal ones, the lower index. 0 is below every pair.
__device__ __forceinline__ uint64_t pair_key(float v, int index)
{
    const unsigned bits = __float_as_uint(v);
    const unsigned ordered = bits & 0x80000000u ? ~bits : bits | 0x80000000u;
    return (uint64_t)ordered << 32 | (0xffffffffu - (unsigned)index);
}

// A block a row: THREADS x ITEMS >= k pairs, padded with key 0.
template <typename T, int THREADS, int ITEMS>
static __global__ void __launch_bounds__(THREADS)
    sort_pairs_kernel(const T *__restrict__ top_logits, const int *__restrict__ top_indices,
                      const online_stat *__restrict__ stats, int k, int *__restrict__ indices,
                      float *__restrict__ probs)
{
    typedef cub::BlockRadixSort<uint64_t, THREADS, ITEMS> sorter;
    __shared__ typename sorter::TempStorage scratch;
    const size_t row = blockIdx.x;
    uint64_t keys[ITEMS];
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        const int i = threadIdx.x * ITEMS + j;
        keys[j] = i < k ? pair_key(widen(top_logits[row * k + i]), top_indices[row * k + i]) : 0;
    }
    sorter(scratch).SortDescending(keys);
    const online_stat s = stats[row];
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        const int i = threadIdx.x * ITEMS + j; // rank
        if (i < k) {
            const unsigned ordered = (unsigned)(keys[j] >> 32);
            const float v = __uint_as_float(ordered & 0x80000000u ? ordered & 0x7fffffffu : ~ordered);
            indices[row * k + i] = (int)(0xffffffffu - (unsigned)keys[j]);
            probs[row * k + i] = expf(v - s.m) / s.d;
        }
    }
}

template <typename T>
struct row_start {
    const T *x;
    size_t cols;
    __host__ __device__ const T *operator()(int64_t row) const { return x + row * cols; }
};

template <typename T>
struct row_out {
    T *out;
    int k;
    __host__ __device__ T *operator()(int64_t row) const { return out + row * k; }
};

template <typename T>
struct to_float {
    __host__ __device__ float operator()(T v) const { return (float)v; }
};

// cub_topk's keys go straight to the probabilities' place, as float32.
template <typename T>
struct row_out_widened {
    float *out;
    int k;
    __host__ __device__ auto operator()(int64_t row) const
    {
        return cuda::make_transform_output_iterator(out + row * k, to_float<T>{});
    }
};

struct row_iota {
    __host__ __device__ cuda::counting_iterator<int> operator()(int64_t) const
    {
        return cuda::counting_iterator<int>(0);
    }
};

// One call of DeviceBatchedTopK::MaxPairs, keys to keys_out(row); scratch NULL: its size into
// *bytes.
template <typename T, typename KeysOut>
static cudaError_t batched_top_k(void *scratch, size_t *bytes, const T *x, size_t rows, size_t cols, int k,
                                 KeysOut keys_out, int *top_indices)
{
    namespace exec = cuda::execution;
    const cudaStream_t default_stream = 0;
    const auto env = cuda::std::execution::env{
        exec::require(exec::determinism::gpu_to_gpu, exec::tie_break::prefer_smaller_index,
                      exec::output_ordering::unsorted),
        cuda::stream_ref{default_stream}};
    const cuda::counting_iterator<int64_t> first(0);
    return cub::DeviceBatchedTopK::MaxPairs(
        scratch, *bytes, cuda::make_transform_iterator(first, row_start<T>{x, cols}),
        cuda::make_transform_iterator(first, keys_out), cuda::make_transform_iterator(first, row_iota{}),
        cuda::make_transform_iterator(first, row_out<int>{top_indices, k}),
        cuda::args::immediate{(int32_t)cols, cuda::args::bounds<int32_t{1}, int32_t{LIBRARY_MAX_COLS}>()},
        cuda::args::immediate{(int32_t)k, cuda::args::bounds<int32_t{1}, int32_t{LIBRARY_MAX_K}>()},
        cuda::args::immediate{(int64_t)rows}, env);
}

// The scratch MaxPairs asks for, kept for the last shape asked (a server sizes it once).
template <typename T, typename KeysOut>
static size_t batched_scratch_bytes(size_t rows, size_t cols, int k)
{
    static size_t last_rows, last_cols, bytes;
    static int last_k;
    if (rows != last_rows || cols != last_cols || k != last_k) {
        CUDA_CHECK(batched_top_k(NULL, &bytes, (const T *)NULL, rows, cols, k, KeysOut{NULL, k}, NULL));
        last_rows = rows, last_cols = cols, last_k = k;
    }
    return bytes;
}

// The workspace's arrays, each on a 256-byte boundary.
typedef struct {
    void *top_logits, *cub_scratch;
    int *top_indices;
    online_stat *stats;
    size_t cub_bytes, total;
} library_layout;

static size_t align256(size_t b) { return (b + 255) / 256 * 256; }

template <typename T>
static library_layout library_plan(void *base, size_t rows, size_t cols, int k)
{
    library_layout l = {0};
    char *p = (char *)base;
    l.top_logits = p, l.total += align256(rows * k * sizeof(T));
    l.top_indices = (int *)(p + l.total), l.total += align256(rows * k * sizeof(int));
    l.stats = (online_stat *)(p + l.total), l.total += align256(rows * sizeof(online_stat));
    l.cub_bytes = batched_scratch_bytes<T, row_out<T>>(rows, cols, k);
    l.cub_scratch = p + l.total, l.total += l.cub_bytes;
    return l;
}

template <typename T, int THREADS, int ITEMS>
static void sort_pairs(const library_layout &l, size_t rows, int k, int *indices, float *probs)
{
    sort_pairs_kernel<T, THREADS, ITEMS><<<(unsigned)rows, THREADS>>>((const T *)l.top_logits, l.top_indices,
                                                                        l.stats, k, indices, probs);
    CUDA_CHECK_LAUNCH("sort_pairs_kernel");
}

template <typename T>
static int library_run(const T *x, size_t rows, size_t cols, int k, int *indices, float *probs, void *workspace)
{
    const library_layout l = library_plan<T>(workspace, rows, cols, k);
    size_t bytes = l.cub_bytes;
    CUDA_CHECK(batched_top_k(l.cub_scratch, &bytes, x, rows, cols, k, row_out<T>{(T *)l.top_logits, k},
                             l.top_indices));
    row_stats_kernel<T><<<(unsigned)rows, STATS_THREADS>>>(x, cols, l.stats);
    CUDA_CHECK_LAUNCH("row_stats_kernel");
    if (k <= 32)
        sort_pairs<T, 32, 1>(l, rows, k, indices, probs);
    else if (k <= 128)
        sort_pairs<T, 64, 2>(l, rows, k, indices, probs);
    else if (k <= 512)
        sort_pairs<T, 128, 4>(l, rows, k, indices, probs);
    else
        sort_pairs<T, 256, 4>(l, rows, k, indices, probs);
    return 3;
}

static size_t library_workspace_bytes(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    return dtype == DTYPE_F32    ? library_plan<float>(NULL, rows, cols, k).total
           : dtype == DTYPE_BF16 ? library_plan<__nv_bfloat16>(NULL, rows, cols, k).total
                                 : library_plan<__half>(NULL, rows, cols, k).total;
}

static int library_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                        float *probs, void *workspace)
{
    return dtype == DTYPE_F32    ? library_run((const float *)x, rows, cols, k, indices, probs, workspace)
           : dtype == DTYPE_BF16 ? library_run((const __nv_bfloat16 *)x, rows, cols, k, indices, probs, workspace)
                                 : library_run((const __half *)x, rows, cols, k, indices, probs, workspace);
}

// ---- cub_topk: DeviceBatchedTopK alone, the logits as float32 ----
template <typename T>
static int cub_topk_run(const T *x, size_t rows, size_t cols, int k, int *indices, float *probs, void *workspace)
{
    size_t bytes = batched_scratch_bytes<T, row_out_widened<T>>(rows, cols, k);
    CUDA_CHECK(batched_top_k(workspace, &bytes, x, rows, cols, k, row_out_widened<T>{probs, k}, indices));
    return 1;
}

static size_t cub_topk_workspace_bytes(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    return dtype == DTYPE_F32    ? batched_scratch_bytes<float, row_out_widened<float>>(rows, cols, k)
           : dtype == DTYPE_BF16 ? batched_scratch_bytes<__nv_bfloat16, row_out_widened<__nv_bfloat16>>(rows, cols, k)
                                 : batched_scratch_bytes<__half, row_out_widened<__half>>(rows, cols, k);
}

static int cub_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices, float *probs,
                    void *workspace)
{
    return dtype == DTYPE_F32    ? cub_topk_run((const float *)x, rows, cols, k, indices, probs, workspace)
           : dtype == DTYPE_BF16 ? cub_topk_run((const __nv_bfloat16 *)x, rows, cols, k, indices, probs, workspace)
                                 : cub_topk_run((const __half *)x, rows, cols, k, indices, probs, workspace);
}

// Ties to the lower index take CUB's cluster backend: sm_90 code (PTX 9.0 or newer) on the GPU.
static const char *library_why_not_here(void)
{
    static int here; // 0 unasked, 1 no, 2 yes
    if (!here) {
        int device, major;
        cudaFuncAttributes built;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
        CUDA_CHECK(cudaFuncGetAttributes(&built, row_stats_kernel<float>));
        here = major >= 9 && built.ptxVersion >= 90 ? 2 : 1;
    }
    return here == 2 ? NULL : "needs compute capability 9.0 or newer and a build for sm_90 (CUB's cluster backend)";
}
#else
static size_t library_workspace_bytes(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)rows, (void)cols, (void)k, (void)dtype;
    return 0;
}

static int library_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                        float *probs, void *workspace)
{
    (void)x, (void)dtype, (void)rows, (void)cols, (void)k, (void)indices, (void)probs, (void)workspace;
    die(1, "built without CCCL 3.6");
}

#define cub_topk_workspace_bytes library_workspace_bytes
#define cub_topk library_topk

static const char *library_why_not_here(void) { return "needs CCCL 3.6 at build time: " CCCL_STATUS; }
#endif

// Logits read twice (top-K, statistic); K pairs written, read, then written as index and float.
static double library_bytes_per_row(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)rows;
    return 2.0 * cols * dtype_size(dtype) + 2.0 * k * (dtype_size(dtype) + 4.0) + 8.0 * k;
}

static bool library_fits(size_t rows, size_t cols)
{
    return cols <= LIBRARY_MAX_COLS && rows <= INT32_MAX;
}

// The logits read once, K pairs written.
static double cub_topk_bytes_per_row(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)rows;
    return (double)cols * dtype_size(dtype) + 8.0 * k;
}

extern "C" const topk_variant library_topk_variant = {"library", library_bytes_per_row, library_workspace_bytes,
                                                     library_topk, LIBRARY_MAX_K, true, library_fits,
                                                     library_why_not_here};
extern "C" const topk_variant cub_topk_variant = {"cub_topk", cub_topk_bytes_per_row, cub_topk_workspace_bytes,
                                                 cub_topk, LIBRARY_MAX_K, true, library_fits, library_why_not_here,
                                                 true};
