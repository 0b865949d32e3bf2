// fast/fast.cu — the variants fast_row, fast_split and fast, and how fast picks between them.
//
// What it does: fast_row gives a row one warp, so with fewer rows than SMs some SMs get no work
// at all; fast_split spreads a row over a cluster of 16 SMs instead. fast takes fast_split below
// one row an SM, on a GPU with clusters, and fast_row otherwise: a simple rule, measured at the
// two ends (a batch of one, 8192 rows), not at the rows in between.
// The two kernels are compiled here, together, in one translation unit: they share the device
// functions of warp_row.cuh, which are then compiled once, with every caller in view.
// Assumes: the open GPU is the one the kernels run on (the SM count is read once).
// Read next: the stage's README, "What to look at in the numbers".
#include <stdint.h>

#include "../../common/check.h"
#include "../fused_topk.h"
#include "fast.h"
#include "fast_row.cuh"
#include "fast_split.cuh"

static int sm_count(void)
{
    static int sms;
    if (!sms) {
        int device;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    }
    return sms;
}

// Below one row an SM, a row over a cluster; else a warp a row.
extern "C" bool fast_takes_split(size_t rows, logit_dtype dtype)
{
    return rows < (size_t)sm_count() && fast_split_available(dtype);
}

// One kernel's launch for the logits' type; draw: NULL for the top-K alone.
template <typename T>
static void launch_fast(bool split, const void *x, size_t rows, size_t cols, int k, int *indices, float *probs,
                        const sample_request *draw)
{
    if (split)
        launch_fast_split<T>(x, rows, cols, k, indices, probs, draw);
    else
        launch_fast_row<T>(x, rows, cols, k, indices, probs, draw);
}

static int fast_topk_with(bool split, const void *x, logit_dtype dtype, size_t rows, size_t cols, int k,
                          int *indices, float *probs, const sample_request *draw)
{
    if (dtype == DTYPE_F32)
        launch_fast<float>(split, x, rows, cols, k, indices, probs, draw);
    else if (dtype == DTYPE_BF16)
        launch_fast<__nv_bfloat16>(split, x, rows, cols, k, indices, probs, draw);
    else
        launch_fast<__half>(split, x, rows, cols, k, indices, probs, draw);
    return 1;
}

extern "C" void fast_topk_sample(bool split, const void *x, logit_dtype dtype, size_t rows, size_t cols, int k,
                                 int *indices, float *probs, const sample_request *draw)
{
    fast_topk_with(split, x, dtype, rows, cols, k, indices, probs, draw);
}

static int fast_row_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                         float *probs, void *workspace)
{
    (void)workspace;
    return fast_topk_with(false, x, dtype, rows, cols, k, indices, probs, NULL);
}

static int fast_split_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                           float *probs, void *workspace)
{
    (void)workspace;
    return fast_topk_with(true, x, dtype, rows, cols, k, indices, probs, NULL);
}

static int fast_auto_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                          float *probs, void *workspace)
{
    (void)workspace;
    return fast_topk_with(fast_takes_split(rows, dtype), x, dtype, rows, cols, k, indices, probs, NULL);
}

// A lane of fast_row adds up its share of the row (a 32nd) in float32, a chunk after another: past
// this many logits a row, the rounding of those sums can pass the 1e-4 tolerance (the random sweep
// of the tests finds it at some 12 million). fast may take fast_row, so it has the same limit.
#define FAST_ROW_MAX_COLS (1 << 21)

static bool fast_row_fits(size_t rows, size_t cols)
{
    (void)rows;
    return cols <= FAST_ROW_MAX_COLS;
}

// A grid of rows x 16 blocks that fits gridDim.x.
static bool fast_split_fits(size_t rows, size_t cols)
{
    (void)cols;
    return rows <= INT32_MAX / SPLIT_MAX_BLOCKS;
}

// The three dtypes' kernels are built alike: one answers for all.
static const char *fast_split_why_not_here(void)
{
    return fast_split_available(DTYPE_F32)
               ? NULL
               : "needs thread block clusters (compute capability 9.0, and a build for sm_90)";
}

// The logits once, K pairs out (the split's candidates and statistics stay in shared memory).
static double fast_bytes_per_row(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)rows;
    return (double)cols * dtype_size(dtype) + 8.0 * k;
}

extern "C" const topk_variant fast_row_topk_variant = {"fast_row", fast_bytes_per_row, NULL, fast_row_topk, FAST_MAX_K, true,
                                            fast_row_fits, NULL};
extern "C" const topk_variant fast_split_topk_variant = {"fast_split", fast_bytes_per_row, NULL, fast_split_topk, FAST_MAX_K, true,
                                              fast_split_fits, fast_split_why_not_here};
extern "C" const topk_variant fast_topk_variant = {"fast", fast_bytes_per_row, NULL, fast_auto_topk, FAST_MAX_K, true,
                                                  fast_row_fits, NULL};
