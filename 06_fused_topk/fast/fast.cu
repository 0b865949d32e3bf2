// fast/fast.cu — the variants fast_row, fast_chunks, fast_split and fast, and how fast picks
// among them; fast_logits, fast without its softmax. The kernels are compiled together, in this
// one file, on the current device.
// Read next: ../README.md, "What to look at in the numbers".
#include <stdint.h>

#include "../../common/check.h"
#include "../fused_topk.h"
#include "fast.h"
#include "fast_chunks.cuh"
#include "fast_row.cuh"
#include "fast_split.cuh"
#include "per_device.cuh"

static int sm_count(void)
{
    static int sms[FAST_MAX_DEVICES];
    const int device = fast_device();
    if (!sms[device])
        CUDA_CHECK(cudaDeviceGetAttribute(&sms[device], cudaDevAttrMultiProcessorCount, device));
    return sms[device];
}

typedef enum { KERNEL_ROW, KERNEL_CHUNKS, KERNEL_SPLIT } fast_kernel;

// fast_chunks' cut of the rows on this GPU.
template <typename T>
static chunk_cut chunks_for(size_t rows, size_t cols, int k)
{
    return chunk_plan(rows, cols, k, sizeof(T), chunk_resident_warps<T>(k, sm_count()));
}

static chunk_cut chunks_for(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    return dtype == DTYPE_F32    ? chunks_for<float>(rows, cols, k)
           : dtype == DTYPE_BF16 ? chunks_for<__nv_bfloat16>(rows, cols, k)
                                 : chunks_for<__half>(rows, cols, k);
}

// Launches one kernel for the logits' type; draw is NULL for the top-K alone. !Probs: logits out.
template <typename T, bool Probs>
static void launch_fast(fast_kernel kernel, const void *x, size_t rows, size_t cols, int k, int *indices, float *probs,
                        void *workspace, cudaStream_t stream, bool dependent, const draw_request *draw)
{
    if (kernel == KERNEL_SPLIT)
        launch_fast_split<T, Probs>(x, rows, cols, k, indices, probs, stream, dependent, draw);
    else if (kernel == KERNEL_CHUNKS)
        launch_fast_chunks<T, Probs>(x, rows, cols, k, chunks_for<T>(rows, cols, k), workspace, indices, probs, stream);
    else
        launch_fast_row<T, Probs>(x, rows, cols, k, indices, probs, stream, dependent, draw);
}

template <typename T>
static void launch_fast_for(bool logits_out, fast_kernel kernel, const void *x, size_t rows, size_t cols, int k,
                            int *indices, float *probs, void *workspace, cudaStream_t stream, bool dependent,
                            const draw_request *draw)
{
    if (logits_out)
        launch_fast<T, false>(kernel, x, rows, cols, k, indices, probs, workspace, stream, dependent, draw);
    else
        launch_fast<T, true>(kernel, x, rows, cols, k, indices, probs, workspace, stream, dependent, draw);
}

// logits_out: the K logits where the probabilities would go (fast_logits).
static int fast_topk_with(fast_kernel kernel, const void *x, logit_dtype dtype, size_t rows, size_t cols, int k,
                          int *indices, float *probs, void *workspace, cudaStream_t stream = 0, bool dependent = false,
                          const draw_request *draw = NULL, bool logits_out = false)
{
    if (dtype == DTYPE_F32)
        launch_fast_for<float>(logits_out, kernel, x, rows, cols, k, indices, probs, workspace, stream, dependent, draw);
    else if (dtype == DTYPE_BF16)
        launch_fast_for<__nv_bfloat16>(logits_out, kernel, x, rows, cols, k, indices, probs, workspace, stream,
                                       dependent, draw);
    else
        launch_fast_for<__half>(logits_out, kernel, x, rows, cols, k, indices, probs, workspace, stream, dependent,
                                draw);
    return 1;
}

// Dependent launch needs sm_90, as clusters do; the kernels are built alike, so one check serves.
extern "C" bool fast_pdl_available(logit_dtype dtype)
{
    return fast_split_available(dtype);
}

// fast takes fast_split for at most this many rows of float32, half as many of 16-bit logits.
#define FAST_SPLIT_MOST_ROWS 32

extern "C" bool fast_takes_split(size_t rows, logit_dtype dtype)
{
    const size_t most = dtype == DTYPE_F32 ? FAST_SPLIT_MOST_ROWS : FAST_SPLIT_MOST_ROWS / 2;
    return rows <= most && fast_split_available(dtype);
}

// A batch of one for a decode loop's step: fast_split where clusters exist, else fast_row, never
// fast_chunks (it has no dependent-launch wait).
extern "C" void fast_launch_one_row(const void *x, logit_dtype dtype, size_t cols, int k, int *indices, float *probs,
                                    cudaStream_t stream, bool dependent)
{
    if (dependent && !fast_pdl_available(dtype))
        die(1, "fast_launch_one_row: a dependent launch needs compute capability 9.0 and a build for sm_90");
    const fast_kernel kernel = fast_takes_split(1, dtype) ? KERNEL_SPLIT : KERNEL_ROW;
    fast_topk_with(kernel, x, dtype, 1, cols, k, indices, probs, NULL, stream, dependent);
}

// The top-K and the draw in one launch, by fast_split or fast_row.
extern "C" void fast_topk_draw(bool split, const void *x, logit_dtype dtype, size_t rows, size_t cols, int k,
                               int *indices, float *probs, const draw_request *draw, cudaStream_t stream)
{
    const fast_kernel kernel = split ? KERNEL_SPLIT : KERNEL_ROW;
    fast_topk_with(kernel, x, dtype, rows, cols, k, indices, probs, NULL, stream, false, draw);
}

static int fast_row_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                         float *probs, void *workspace)
{
    (void)workspace;
    return fast_topk_with(KERNEL_ROW, x, dtype, rows, cols, k, indices, probs, NULL);
}

static int fast_chunks_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                            float *probs, void *workspace)
{
    return fast_topk_with(KERNEL_CHUNKS, x, dtype, rows, cols, k, indices, probs, workspace);
}

static int fast_split_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                           float *probs, void *workspace)
{
    (void)workspace;
    return fast_topk_with(KERNEL_SPLIT, x, dtype, rows, cols, k, indices, probs, NULL);
}

// A lane sums a 32nd of its row in float32, and the sum's rounding grows with the row. Rows up to
// this length stay within the check's tolerance; fast shares the limit.
#define FAST_ROW_MAX_COLS (1 << 21)

static bool fast_row_fits(size_t rows, size_t cols)
{
    (void)rows;
    return cols <= FAST_ROW_MAX_COLS;
}

// The grid fits gridDim.x, and every index an int.
static bool fast_split_fits(size_t rows, size_t cols)
{
    return rows <= INT32_MAX / SPLIT_MAX_BLOCKS && cols <= INT32_MAX - SPLIT_THREADS;
}

// The three dtypes' kernels are built alike.
static const char *fast_split_why_not_here(void)
{
    return fast_split_available(DTYPE_F32)
               ? NULL
               : "needs thread block clusters (compute capability 9.0, and a build for sm_90)";
}

// Each logit is read once, and K index and probability pairs are written.
static double fast_bytes_per_row(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)rows;
    return (double)cols * dtype_size(dtype) + 8.0 * k;
}

// As fast_row, plus each chunk's K keys and statistic written and read back: a model, since the
// merge may skip a list's tail.
static double fast_chunks_bytes_per_row(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    const chunk_cut cut = chunks_for(rows, cols, k, dtype);
    const double left = cut.chunks == 1 ? 0.0 : 2.0 * cut.chunks * (8.0 * k + sizeof(online_stat));
    return fast_bytes_per_row(rows, cols, k, dtype) + left;
}

static size_t fast_chunks_workspace_bytes(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    return chunk_workspace_bytes(rows, k, chunks_for(rows, cols, k, dtype));
}

extern "C" const topk_variant fast_row_topk_variant = {"fast_row", fast_bytes_per_row, NULL, fast_row_topk, FAST_MAX_K, true,
                                            fast_row_fits, NULL};
extern "C" const topk_variant fast_chunks_topk_variant = {"fast_chunks", fast_chunks_bytes_per_row,
                                                         fast_chunks_workspace_bytes, fast_chunks_topk, FAST_MAX_K,
                                                         true, fast_row_fits, NULL};
extern "C" const topk_variant fast_split_topk_variant = {"fast_split", fast_bytes_per_row, NULL, fast_split_topk, FAST_MAX_K, true,
                                              fast_split_fits, fast_split_why_not_here};

// fast's rule: fast_split where fast_takes_split says so; fast_chunks below
// FAST_ROW_FROM_ROWS_PER_SM rows an SM for K up to FAST_CHUNKS_MOST_K; fast_row otherwise.
#define FAST_ROW_FROM_ROWS_PER_SM 8
#define FAST_CHUNKS_MOST_K 256

static fast_kernel fast_kernel_for(size_t rows, int k, logit_dtype dtype)
{
    if (fast_takes_split(rows, dtype))
        return KERNEL_SPLIT;
    if (k <= FAST_CHUNKS_MOST_K && rows < (size_t)FAST_ROW_FROM_ROWS_PER_SM * sm_count())
        return KERNEL_CHUNKS;
    return KERNEL_ROW;
}

extern "C" const topk_variant *fast_picks(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)cols;
    const fast_kernel kernel = fast_kernel_for(rows, k, dtype);
    return kernel == KERNEL_SPLIT    ? &fast_split_topk_variant
           : kernel == KERNEL_CHUNKS ? &fast_chunks_topk_variant
                                     : &fast_row_topk_variant;
}

extern "C" int fast_topk_on_stream(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                                   float *probs, void *workspace, cudaStream_t stream)
{
    return fast_topk_with(fast_kernel_for(rows, k, dtype), x, dtype, rows, cols, k, indices, probs, workspace, stream);
}

static double fast_auto_bytes_per_row(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    return fast_picks(rows, cols, k, dtype)->bytes_per_row(rows, cols, k, dtype);
}

static size_t fast_auto_workspace_bytes(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    const topk_variant *picked = fast_picks(rows, cols, k, dtype);
    return picked->workspace_bytes ? picked->workspace_bytes(rows, cols, k, dtype) : 0;
}

static int fast_auto_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                          float *probs, void *workspace)
{
    return fast_topk_on_stream(x, dtype, rows, cols, k, indices, probs, workspace, 0);
}

extern "C" const topk_variant fast_topk_variant = {"fast", fast_auto_bytes_per_row, fast_auto_workspace_bytes,
                                                  fast_auto_topk, FAST_MAX_K, true, fast_row_fits, NULL};

// fast's kernels as fast picks them, without the statistic: the K logits, sorted (logits_only).
static int fast_logits_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                            float *probs, void *workspace)
{
    return fast_topk_with(fast_kernel_for(rows, k, dtype), x, dtype, rows, cols, k, indices, probs, workspace, 0,
                          false, NULL, true);
}

extern "C" const topk_variant fast_logits_topk_variant = {"fast_logits", fast_auto_bytes_per_row,
                                                         fast_auto_workspace_bytes, fast_logits_topk, FAST_MAX_K,
                                                         true, fast_row_fits, NULL, true};
