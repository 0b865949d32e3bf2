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
// The answers to README.md's questions:
//
// Step 2, the scaffold. Its combine returns a, so after the shuffles every lane still holds its own
// slice's statistic. Lane 0 writes at0, the first max of the logits 0, 32, 64, ..., and 1 / d0,
// with d0 the sum over those 1571 logits of a row of 50257. The row's max lies in lane 0's slice in
// 1 row in 32: idx err about 8192 x 31/32 = 7936. And d0 is about d / 32 (the 32 slices are
// alike), so 1 / d0 is some 32 times the true 1 / d in every row: a relative error of about 31.
// The table prints the worst row; the slices' sums spread by some 5 %, so expect 35 to 40, far
// past the 1e-4 allowed. No row escapes: on [0, 10] every logit weighs at least e^-10 = 4.5e-5 of
// the max, and the other 31 slices hold 31/32 of d. Only a row whose other logits are negligible
// beside its max, with the max in lane 0's slice, could pass (a row of one logit does: there is
// nothing to combine).
//
// Step 4, ties. bf16 keeps 8 significant bits: logits in [8, 16) are 1/16 apart, and every draw in
// [10 - 1/32, 10) rounds to 10, so a row of 50257 from [0, 10] holds about 50257 x (1/32) / 10 = 157
// copies of its max. The first of them is the answer. A combine that keeps a on a tie leaves lane 0
// with its own first copy, and lane 0's slice almost always holds some of the 157 (5 on average).
// That is right only when the row's first copy falls in lane 0's slice, 1 row in 32, so nearly
// every bf16 row fails.
// float32 logits near 10 are 2^-20 = 9.5e-7 apart and the top two of a row some 10 / 50257 = 2e-4:
// they are closer than 2^-20 in 1 row in 210, and round to the same float in half of those, so
// some 20 of 8192 rows hold their max twice, and a wrong tie rule misses about half of them. Ten
// rows of 8192 is still FAIL; on a few rows it would likely pass unseen. A rule for ties is tested
// only by data that has them.
//
// Step 5, the time. All three read the 8192 x 50257 x 4 B = 1.65 GB of logits once and write 8 B a
// row, so none can beat 1.65 GB over the read ceiling printed at the top of the run (0.374 ms at
// EXPERIMENTS.md's 4403.5 GB/s on an H200, where fast took 0.380 ms, 98.3 %, and fused 0.623 ms,
// 60.1 %). What decides how close each gets is the bytes a lane keeps in flight. Keeping up the
// read speed of an SM (4.4 TB/s / 132 = 33 B/ns) over a latency of some 500-800 ns takes some
// 16-27 KB in flight an SM. The 8192 rows are some 62 warps an SM, all resident at once (ptxas -v:
// 27 registers a thread here, 31 in fused; 64 warps fit an SM up to 32). fused's loop loads one
// 4-byte logit and folds it before the next (its PTX has one load in the loop): 62 x 32 x 4 B =
// 8 KB an SM, a half to a third of the 16-27 KB, so the model predicts some 30-50 % of the ceiling.
// fused's measured 60 % beats that, most likely because so few loads in flight leave the memory
// lightly loaded, its latency shorter than under a full load. This kernel loads CHUNK = 8 logits a
// lane before it folds them: 32 B a lane, 62 KB an SM; fast loads 4 vectors of 16 B, 64 B a lane.
// Both have enough, so predict the exercise near fast, both within some 5-10 % of the ceiling. The
// work should not limit it, though it comes nearer than a first count suggests. As nvcc 13 compiles
// it for sm_90 (`make sass STAGE=6` from the repository root), the loop takes 141 instructions for
// its 8 logits a lane, 17.6 a logit: stage 05's online_stat_add4 fold, 12.75 an element in its own
// loop (each __expf five instructions, 5 of them per 4 logits), and the rest, some 5, mostly the
// compare and select of at and its index. 412M x 17.6 / 32 = 227M warp instructions, 0.22 ms for
// 132 SMs issuing 4 a cycle at 1.98 GHz: some 60 % of the memory's 0.374 ms. Still memory-bound,
// with less to spare. At K = 1 fast's threshold is the best logit so far, and its test costs about
// what `v > m` costs here, so there is no time for the exercise to win: what it saves is code (no
// buffer, no ballots, no merges). To check the prediction: the % read column of the three runs;
// under Nsight Compute, DRAM throughput and the warps' stalls on long scoreboard (waiting for
// loads). With --dtype bf16 the floor halves but the instructions a logit do not (145 for 8 logits,
// 0.22 ms, above the 0.19 ms floor), and each load brings half the bytes: expect less than 2x
// float32's speed.
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
    // softmax; common/topk.h.)
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
