// flashinfer — FlashInfer's top-K from the headers its wheel ships (flashinfer/topk.cuh):
// TopKDispatch with ties to the lower index, which runs its FilteredTopK kernel, then its
// deterministic pass over the indices. The logits alone, unsorted (logits_only), as float32.
// Built where library/flashinfer.mk finds the headers; without them, a stub that says why.
// Read next: ../README.md, "The libraries beside fast".
#include <stdint.h>

#include "../../common/check.h"
#include "../fused_topk.h"

#define FLASHINFER_ROW_STATES (1 << 20) // as its top_k passes; FilteredTopK leaves it unused

#ifdef HAVE_FLASHINFER
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <flashinfer/math.cuh>
#include <flashinfer/topk.cuh>

template <typename T>
static __global__ void widen_kernel(const T *__restrict__ from, float *__restrict__ to, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        to[i] = (float)from[i];
}

template <typename T>
static int flashinfer_run(const T *x, size_t rows, size_t cols, int k, int *indices, float *probs, void *workspace)
{
    using namespace flashinfer::sampling;
    char *scratch = (char *)workspace;
    T *values = sizeof(T) == sizeof(float) ? (T *)probs : (T *)(scratch + FLASHINFER_ROW_STATES);
    const cudaError_t ran = TopKDispatch<T, int>(const_cast<T *>(x), indices, values, (uint32_t)rows, (uint32_t)k,
                                                 (uint32_t)cols, (RadixRowState *)scratch, false, true,
                                                 TopKTieBreak::Small);
    CUDA_CHECK(ran);
    if (sizeof(T) == sizeof(float))
        return 1;
    widen_kernel<<<gpu_grid_size(rows * k, 256, 4), 256>>>(values, probs, rows * k);
    CUDA_CHECK_LAUNCH("widen_kernel");
    return 2;
}

static int flashinfer_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                           float *probs, void *workspace)
{
    return dtype == DTYPE_F32 ? flashinfer_run((const float *)x, rows, cols, k, indices, probs, workspace)
           : dtype == DTYPE_BF16
               ? flashinfer_run((const __nv_bfloat16 *)x, rows, cols, k, indices, probs, workspace)
               : flashinfer_run((const __half *)x, rows, cols, k, indices, probs, workspace);
}

// FilteredTopK needs about 140 KB of shared memory a block.
static const char *flashinfer_why_not_here(void)
{
    return flashinfer::sampling::CanImplementFilteredTopK() ? NULL
                                                            : "needs 128 KB of shared memory a block (FilteredTopK)";
}
#else
static int flashinfer_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                           float *probs, void *workspace)
{
    (void)x, (void)dtype, (void)rows, (void)cols, (void)k, (void)indices, (void)probs, (void)workspace;
    die(1, "flashinfer: built without its headers");
}

static const char *flashinfer_why_not_here(void) { return "needs FlashInfer's headers at build time: " FLASHINFER_STATUS; }
#endif

// The row states, and 16-bit values before they are widened.
static size_t flashinfer_workspace_bytes(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)cols;
    return FLASHINFER_ROW_STATES + (dtype == DTYPE_F32 ? 0 : rows * k * dtype_size(dtype));
}

// The logits read once, K pairs written; 16-bit values then widened.
static double flashinfer_bytes_per_row(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)rows;
    const double pairs = k * (dtype_size(dtype) + 4.0);
    return (double)cols * dtype_size(dtype) + pairs + (dtype == DTYPE_F32 ? 0.0 : pairs);
}

// It places row r's outputs at r x K in 32 bits; K is at most 2048 and cols.
static bool flashinfer_fits(size_t rows, size_t cols)
{
    const size_t most_k = cols < 2048 ? cols : 2048;
    return cols <= INT32_MAX && rows <= UINT32_MAX / most_k;
}

extern "C" const topk_variant flashinfer_topk_variant = {"flashinfer", flashinfer_bytes_per_row,
                                                        flashinfer_workspace_bytes, flashinfer_topk, 2048, true,
                                                        flashinfer_fits, flashinfer_why_not_here, true};
