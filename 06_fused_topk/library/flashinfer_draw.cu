// flashinfer_draw — FlashInfer's sampler from its wheel's headers: the two paths of
// top_k_top_p_sampling_from_logits (top_k_first), float32, a token a row.
//   sorted:  rows >= 65536 long, K <= 256: TopKDispatch sorted, OnlineSoftmax over the K,
//            TopPSamplingFromProb over the K, then a gather of the index.
//   masked:  otherwise: RadixTopKMaskLogitsMultiCTA, OnlineSoftmax and TopPSamplingFromProb
//            over the whole row.
// Temperature goes into OnlineSoftmax. Built where library/flashinfer.mk finds the headers.
// Read next: ../README.md, "The libraries beside fast".
#include <stdint.h>

#include "../../common/check.h"
#include "../fused_topk.h"

#define FLASHINFER_STATE_BYTES (1 << 20) // row states; softmax partials

#ifdef HAVE_FLASHINFER
#include <flashinfer/sampling.cuh>
#include <flashinfer/topk.cuh>

// The sampler's path for the shape.
static bool sorted_path(size_t cols, int k) { return cols >= 65536 && k <= 256 && (size_t)k < cols; }

static __global__ void gather_kernel(const int *indices, const int *local, int k, size_t rows, int *tokens)
{
    for (size_t r = blockIdx.x * (size_t)blockDim.x + threadIdx.x; r < rows; r += (size_t)gridDim.x * blockDim.x)
        tokens[r] = indices[r * k + local[r]];
}

// Workspace: row states | softmax partials | path buffers.
struct draw_space {
    flashinfer::sampling::RadixRowState *states;
    void *partials;
    float *values, *probs;
    int *indices, *local;
};

static draw_space carve(void *workspace, size_t rows, size_t cols, int k)
{
    char *at = (char *)workspace;
    draw_space s;
    s.states = (flashinfer::sampling::RadixRowState *)at;
    s.partials = at + FLASHINFER_STATE_BYTES;
    at += 2 * FLASHINFER_STATE_BYTES;
    const size_t n = sorted_path(cols, k) ? rows * k : rows * cols;
    s.values = (float *)at;
    s.probs = s.values + n;
    s.indices = (int *)(s.probs + n);
    s.local = s.indices + rows * k;
    return s;
}

extern "C" int flashinfer_draw(const float *x, size_t rows, size_t cols, int k, float temperature, float top_p,
                               uint64_t seed, int *tokens, bool *valid, void *workspace)
{
    using namespace flashinfer::sampling;
    int device, major;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    const bool pdl = major >= 9;
    const draw_space s = carve(workspace, rows, cols, k);
    float *logits = const_cast<float *>(x);
    const uint32_t r = (uint32_t)rows, kk = (uint32_t)k, d = (uint32_t)cols;
    if (sorted_path(cols, k)) {
        CUDA_CHECK((TopKDispatch<float, int>(logits, s.indices, s.values, r, kk, d, s.states, true, true)));
        CUDA_CHECK(OnlineSoftmax<float>(s.values, s.probs, r, kk, nullptr, temperature, s.partials,
                                        FLASHINFER_STATE_BYTES, pdl));
        CUDA_CHECK((TopPSamplingFromProb<float, int>(s.probs, s.local, valid, nullptr, nullptr, r, top_p, kk, true,
                                                     nullptr, seed, nullptr, 0)));
        gather_kernel<<<gpu_grid_size(rows, 256, 1), 256>>>(s.indices, s.local, k, rows, tokens);
        CUDA_CHECK_LAUNCH("gather_kernel");
        return 4;
    }
    CUDA_CHECK((RadixTopKMaskLogitsMultiCTA<float, int>(logits, s.values, nullptr, r, kk, d, s.states)));
    CUDA_CHECK(OnlineSoftmax<float>(s.values, s.probs, r, d, nullptr, temperature, s.partials,
                                    FLASHINFER_STATE_BYTES, pdl));
    CUDA_CHECK((TopPSamplingFromProb<float, int>(s.probs, tokens, valid, nullptr, nullptr, r, top_p, d, true,
                                                 nullptr, seed, nullptr, 0)));
    return 3;
}

extern "C" const char *flashinfer_draw_why_not(logit_dtype dtype, const draw_params *how)
{
    if (dtype != DTYPE_F32)
        return "takes float32 logits here";
    if (how->temperatures || how->top_ps || how->ks)
        return "takes one T, top-p and K for every row";
    return how->temperature > 0.0f && how->min_p == 0.0f ? NULL : "takes T > 0 and no min-p";
}

extern "C" size_t flashinfer_draw_workspace_bytes(size_t rows, size_t cols, int k)
{
    const size_t n = sorted_path(cols, k) ? rows * k : rows * cols;
    return 2 * (size_t)FLASHINFER_STATE_BYTES + 2 * n * sizeof(float) + 2 * rows * k * sizeof(int);
}

// A floor in row passes: sorted 1; masked: mask 3, softmax 2, draw 2.
extern "C" double flashinfer_draw_bytes_per_row(size_t cols, int k)
{
    return sorted_path(cols, k) ? cols * 4.0 + k * 24.0 : cols * 4.0 * 7;
}
#else
extern "C" int flashinfer_draw(const float *x, size_t rows, size_t cols, int k, float temperature, float top_p,
                               uint64_t seed, int *tokens, bool *valid, void *workspace)
{
    (void)x, (void)rows, (void)cols, (void)k, (void)temperature, (void)top_p, (void)seed, (void)tokens,
        (void)valid, (void)workspace;
    die(1, "flashinfer: built without its headers");
}

extern "C" const char *flashinfer_draw_why_not(logit_dtype dtype, const draw_params *how)
{
    (void)dtype, (void)how;
    return "needs FlashInfer's headers at build time: " FLASHINFER_STATUS;
}

extern "C" size_t flashinfer_draw_workspace_bytes(size_t rows, size_t cols, int k)
{
    (void)rows, (void)cols, (void)k;
    return 0;
}

extern "C" double flashinfer_draw_bytes_per_row(size_t cols, int k)
{
    (void)cols, (void)k;
    return 0.0;
}
#endif
