// Stage 06's exercise: K = 1 in one pass, the token a greedy decoder picks.
//
// The winner is the row's first max m, its probability 1 / d. A warp per row: lane l folds
// logits l, l + 32, ... into (m, d, at), and shuffles combine the lanes.
//
// Your part: argmax_combine, marked TODO. As shipped it returns a, and the check fails. From
// 06_fused_topk/: make && ./run --rows 8192 --cols 50257 --k 1 --variant exercise
// README.md, Exercise, has the steps; solution/exercise.cu is the worked solution.
#include <stdint.h>

#include "../05_online/online_stat.cuh"
#include "../common/check.h"
#include "fast/logits16.cuh" // logit_to_float
#include "fused_topk.h"

#define ROWS_PER_BLOCK 4   // warps a block
#define LANE_LOADS 8       // loads in flight a lane
#define NO_INDEX INT32_MAX // at before any logit

// Stage 05's statistic with the index of its max.
typedef struct {
    online_stat s; // stage 05's (m, d)
    int at;        // the first index whose logit is m
} argmax_stat;

// The statistic of two disjoint sets, from each set's.
__device__ __forceinline__ argmax_stat argmax_combine(argmax_stat a, argmax_stat b)
{
    // TODO: s combines both sides' (m, d) as stage 05 does, with no NaN from an all -inf side;
    // at is the index of the side with the larger m, the lower index for equal m.
    (void)b;
    return a;
}

// Folds LANE_LOADS logits at first, first + 32, ...; indices rise, so only a larger logit moves at.
__device__ __forceinline__ void argmax_add_chunk(argmax_stat &s, const float (&v)[LANE_LOADS], size_t first)
{
    float m = s.s.m;
#pragma unroll
    for (int j = 0; j < LANE_LOADS; j++)
        if (v[j] > m)
            m = v[j], s.at = (int)(first + j * WARP_SIZE);
#pragma unroll
    for (int j = 0; j < LANE_LOADS; j += 4)
        s.s = online_stat_add4(s.s, make_float4(v[j], v[j + 1], v[j + 2], v[j + 3]));
}

// One logit of the row's tail, the same way.
__device__ __forceinline__ void argmax_add(argmax_stat &s, float v, size_t index)
{
    if (v > s.s.m)
        s.at = (int)index;
    s.s = online_stat_add(s.s, v);
}

template <typename T>
static __global__ void argmax_warp_kernel(const T *__restrict__ x, size_t rows, size_t cols,
                                          int *__restrict__ indices, float *__restrict__ probs)
{
    const unsigned lane = threadIdx.x % WARP_SIZE;
    const size_t row = blockIdx.x * (size_t)ROWS_PER_BLOCK + threadIdx.x / WARP_SIZE;
    if (row >= rows)
        return; // the whole warp leaves together
    const T *xr = x + row * cols;

    // A warp's load reads 32 neighbouring logits; a lane's LANE_LOADS loads are in flight together.
    argmax_stat s = {ONLINE_IDENTITY, NO_INDEX};
    size_t c = lane;
    for (; c + (LANE_LOADS - 1) * WARP_SIZE < cols; c += LANE_LOADS * WARP_SIZE) {
        float v[LANE_LOADS];
#pragma unroll
        for (int j = 0; j < LANE_LOADS; j++)
            v[j] = logit_to_float(xr[c + j * WARP_SIZE]);
        argmax_add_chunk(s, v, c);
    }
    for (; c < cols; c += WARP_SIZE)
        argmax_add(s, logit_to_float(xr[c]), c);

    // Each round combines with the lane offset away; after five, every lane holds all 32 slices.
#pragma unroll
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) {
        argmax_stat other;
        other.s = make_stat(__shfl_xor_sync(FULL_MASK, s.s.m, offset), __shfl_xor_sync(FULL_MASK, s.s.d, offset));
        other.at = __shfl_xor_sync(FULL_MASK, s.at, offset);
        s = argmax_combine(s, other);
    }
    // The winner's probability is 1 / d (an all -inf row has no softmax).
    if (lane == 0) {
        indices[row] = s.at;
        probs[row] = 1.0f / s.s.d;
    }
}

// Reads the logits once; writes 8 bytes.
static double argmax_bytes_per_row(size_t rows, size_t cols, int k, logit_dtype dtype)
{
    (void)rows, (void)k;
    return (double)cols * dtype_size(dtype) + 8.0;
}

static int argmax_topk(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
                       float *probs, void *workspace)
{
    (void)k, (void)workspace;
    const unsigned grid = (unsigned)((rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    const unsigned threads = ROWS_PER_BLOCK * WARP_SIZE;
    if (dtype == DTYPE_BF16)
        argmax_warp_kernel<<<grid, threads>>>((const __nv_bfloat16 *)x, rows, cols, indices, probs);
    else if (dtype == DTYPE_F16)
        argmax_warp_kernel<<<grid, threads>>>((const __half *)x, rows, cols, indices, probs);
    else
        argmax_warp_kernel<<<grid, threads>>>((const float *)x, rows, cols, indices, probs);
    CUDA_CHECK_LAUNCH("argmax_warp_kernel");
    return 1;
}

// K = 1 only; every dtype; rows under 2^31 logits.
extern "C" const topk_variant fused_topk_exercise_variant = {EXERCISE_VARIANT, argmax_bytes_per_row, NULL, argmax_topk,
                                                            1, true, NULL, NULL};
