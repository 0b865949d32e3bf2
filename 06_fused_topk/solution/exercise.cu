// Stage 06's exercise: K = 1 in one pass, the token a greedy decoder picks.
//
// For each row: the index of its largest logit, ties to the lower index as the reference ranks
// them, and that token's probability. The winner's logit is the row's max m, so its probability is
// exp(m - m) / d = 1 / d, with d = sum_j exp(x_j - m): stage 05's online statistic (m, d) holds
// the whole answer once it also carries the index of its max. No candidates, no threshold.
//
// A warp per row. Lane l folds the logits l, l + 32, l + 64, ... into its own (m, d, at), where at
// is the index of the first of them equal to m. Five rounds of shuffles then combine the 32 lanes'
// statistics, and lane 0 writes the row's answer.
//
// The worked solution: argmax_combine takes (m, d) from stage 05's online_stat_combine and the
// index from the side with the larger m, the lower index on a tie (the scaffold is ../exercise.cu).
// The answers to README.md's questions are in README.md beside this file.
#include <stdint.h>

#include "../../05_online/online_stat.cuh"
#include "../../common/check.h"
#include "../fast/logits16.cuh"
#include "../fused_topk.h"

#define ROWS_PER_BLOCK 4   // a warp per row: blocks of 128 threads
#define CHUNK 8            // logits a lane loads before it folds them: 8 loads in flight
#define NO_INDEX INT32_MAX // at while m is -inf (no logit above -inf yet): after every real index

// The online statistic of stage 05 with the index of its max.
typedef struct {
    online_stat s; // m: the max of the logits folded in; d: the sum of exp(x - m) over them
    int at;        // the lowest index among them whose logit is m (NO_INDEX while m is -inf)
} argmax_stat;

// The statistic of two disjoint sets of logits taken together, from the statistic of each.
__device__ __forceinline__ argmax_stat argmax_combine(argmax_stat a, argmax_stat b)
{
    const bool b_wins = b.s.m > a.s.m || (b.s.m == a.s.m && b.at < a.at);
    argmax_stat r;
    r.s = online_stat_combine(a.s, b.s); // stage 05's (m, d), the -inf case included
    r.at = b_wins ? b.at : a.at;
    return r;
}

// Folds CHUNK logits in, at indices first, first + 32, ...: after every index this lane folded
// before, so only a strictly larger logit moves `at`, and among equal ones the first stays.
__device__ __forceinline__ void argmax_add_chunk(argmax_stat &s, const float (&v)[CHUNK], size_t first)
{
    float m = s.s.m;
#pragma unroll
    for (int j = 0; j < CHUNK; j++)
        if (v[j] > m)
            m = v[j], s.at = (int)(first + j * WARP_SIZE);
#pragma unroll
    for (int j = 0; j < CHUNK; j += 4)
        s.s = online_stat_add4(s.s, make_float4(v[j], v[j + 1], v[j + 2], v[j + 3]));
}

// One logit in, the same way: the row's tail, after its chunks.
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

    // Every load of the warp reads 32 neighbouring logits (coalesced); the CHUNK loads of a lane
    // are independent, so all are in flight before the first is folded.
    argmax_stat s = {ONLINE_IDENTITY, NO_INDEX};
    size_t c = lane;
    for (; c + (CHUNK - 1) * WARP_SIZE < cols; c += CHUNK * WARP_SIZE) {
        float v[CHUNK];
#pragma unroll
        for (int j = 0; j < CHUNK; j++)
            v[j] = logit_to_float(xr[c + j * WARP_SIZE]);
        argmax_add_chunk(s, v, c);
    }
    for (; c < cols; c += WARP_SIZE)
        argmax_add(s, logit_to_float(xr[c]), c);

    // Each round combines a lane's statistic with that of the lane `offset` away; after five, every
    // lane holds the statistic of all 32 slices.
#pragma unroll
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) {
        argmax_stat other;
        other.s = make_stat(__shfl_xor_sync(FULL_MASK, s.s.m, offset), __shfl_xor_sync(FULL_MASK, s.s.d, offset));
        other.at = __shfl_xor_sync(FULL_MASK, s.at, offset);
        s = argmax_combine(s, other);
    }
    // The winner's logit is m: exp(m - m) / d = 1 / d. (A row of nothing but -inf has d = 0 and no
    // softmax; ../host/topk_reference.h.)
    if (lane == 0) {
        indices[row] = s.at;
        probs[row] = 1.0f / s.s.d;
    }
}

// Reads the logits once; writes one index and one probability.
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

// K = 1 only; float32, bf16 and fp16; every shape stage 06 takes (fewer than 2^31 logits a row).
extern "C" const topk_variant fused_topk_exercise_variant = {EXERCISE_VARIANT, argmax_bytes_per_row, NULL, argmax_topk,
                                                            1, true, NULL, NULL};
