// Stage 02's exercise: multipass's reductions, with each thread folding FOLD = 8 elements in
// registers before the block's tree.
//
// multipass.cu gives every thread one element, so every element pays for a shared-memory store and
// its share of the tree, and 10^8 elements take 4 levels per reduction. Here the grid of every
// reduction level is FOLD times smaller, ceil(count / (THREADS * FOLD)) blocks, and thread t of
// block b owns the elements b * THREADS + t, then every THREADS * gridDim.x after it: at most FOLD
// of them. It combines those in a register first; only then does the block's tree (block_reduce.cuh)
// run, once per THREADS * FOLD elements instead of once per THREADS.
//
// The worked solution: the fold, a loop over k < FOLD in fold_reduce_kernel (the scaffold is
// ../exercise.cu). The answers to the README's questions, as predictions to check on your GPU:
//
// Tree steps per element. block_reduce's tree takes 8 steps (log2 256), each with a barrier, in
// which the active threads load two values from shared memory and store one. multipass runs it once
// per 256 elements: 8/256 = 1/32 of a step an element, plus a shared-memory store and about one
// combine through shared memory (255 for 256 elements). Here it runs once per 2048 elements: 1/256 of
// a step, 1/8 of a store and of a combine an element, 8 times less. In instructions, as nvcc 13
// compiles them for sm_90 (`make sass STAGE=2` from the repository root shows your build's):
// max_reduce_kernel issues about 110 per thread, 80 of them the tree's (ten a step, which every
// thread goes through, active or not), for one element; this kernel's max about 200 for eight, 25 an
// element, over 4 times fewer.
//
// Levels. Each level divides the count by 2048, rounding up, instead of 256: 10^8 -> 48829 -> 24 -> 1,
// 3 levels a reduction instead of 4 (390625 -> 1526 -> 6 -> 1), so 2 * 3 + 1 = 7 launches instead of
// 9. One level covers up to 2048 values, two 2048^2 = 4194304, three 8.6e9. At 1M: 489 -> 1, 5
// launches against 7; at 10M both take 3 levels (4883 -> 3 -> 1 here), 7 launches. The launches
// saved are of tiny kernels, microseconds each: they are not where the time goes.
//
// Speed. The README's profile of multipass at 10^8 (H200) has the max's first level at 464 us for
// 400 MB, its shared-memory pipe at 80 % and DRAM at 18 %. If the tree stayed the limit, 8 times
// less shared-memory work (4 times fewer instructions) would make that level 4 to 8 times faster:
// 58 to 116 us. DRAM sets a floor: 400 MB at that run's copy speed, 4245 GB/s, take 94 us. So
// predict the first level of each reduction at about 0.1 ms, some 4 times faster, with DRAM now its
// busiest unit. The whole softmax: multipass's 1.27 ms (EXPERIMENTS.md) is roughly 0.46 ms for the
// max's first level and 0.32 ms for the normalize (the profile), which leaves 0.49 ms, nearly all
// of it the sum's first level, a tree like the max's. The split is approximate: the 1.27 ms is the
// median of timed runs, the other two are Nsight Compute's kernel durations, measured one launch at
// a time under --clock-control none. Here about 0.11 + 0.11 + 0.32 + 0.02 for the small levels =
// 0.56 ms: 2.3 times faster, 34 % of the ceiling (0.189 ms / 0.56 ms). The normalize, unchanged, is
// now more than half the time, and 16 bytes an element cap this algorithm at 50 % of the ceiling
// (the ceiling counts 8). Measure with ./run --variant exercise --n 100M beside
// ./run --variant multipass --n 100M: median ms, % ceil and launches (7 against 9). From the
// repository root, make profile STAGE=2 PROFILE_ARGS_2="--n 100M --variant exercise" shows each
// kernel; the first fold_reduce_kernel should have DRAM, not L1/shared memory, as its top line.
//
// Why a loop over k < FOLD. The loop for (i = first; i < count; i += stride) reads the same values
// and passes too, but nvcc 13 for sm_90 keeps it a loop: a load, the combine that waits for it, the
// next load, so each thread has one 4-byte load in flight. That is what holds the normalize kernel
// to half of DRAM (800 MB in 318 us, 2.5 TB/s), and should hold such a fold the same way: its first
// level nearer 0.16 ms (400 MB at 2.5 TB/s) than 0.1, the softmax nearer 0.65 ms. A constant trip
// count lets the compiler unroll the loop and issue the loads together: in `make sass STAGE=2`
// (nvcc 13, sm_90) the fold is seven LDG in a row, the eighth before them, then the FMNMX (or FADD)
// that use them, where the other loop, once you write it in exercise.cu, has one LDG and the FMNMX
// that waits for it.
//
// Why the max's identity must still be -inf. Every thread starts its fold from the identity and
// combines into it the values it owns, fewer than FOLD of them or none at the end of the array; then
// every thread brings what it holds to the tree, since all of them must reach its barriers. So the
// identity must change nothing it meets: fmaxf(-inf, v) = v for every v, as 0 + v = v for the sum.
// In multipass only threads past the end brought it; here every thread starts from it. Were it 0,
// the max would be max(0, max(x)): right whenever some x >= 0, which is why [0, 10] cannot show it,
// but 0 on --range -1000:-900. Then every exp(x - 0) <= e^-900 underflows to 0, the sum is 0 and
// every output 0/0 = NaN.
#include "../../common/check.h"
#include "../block_reduce.cuh"
#include "../multipass.h"

#define THREADS 256 // a power of two, for the tree
#define FOLD 8      // elements each thread combines before the tree

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// Blocks of a reduction level over `count` values: THREADS * FOLD values a block.
static size_t fold_blocks(size_t count) { return ceil_div(count, (size_t)THREADS * FOLD); }

// One reduction level: each block reduces the values its threads own to out[blockIdx.x]. A value is
// in[i] itself, or, in the first level of the sum (apply_exp), exp(in[i] - *max). A thread starts
// from the identity (-inf for max, 0 for sum), so one that owns fewer than FOLD values, or none,
// changes nothing; every thread reaches block_reduce, whose barriers need them all.
template <reduce_op op, bool apply_exp>
static __global__ void fold_reduce_kernel(const float *in, size_t count, const float *max, float *out)
{
    __shared__ float shared[THREADS];
    const float shift = apply_exp ? *max : 0.0f;
    const float identity = op == REDUCE_MAX ? -INFINITY : 0.0f;
    const size_t first = (size_t)blockIdx.x * THREADS + threadIdx.x;

    // The fold: the values at first + k * stride for k < FOLD, those below count, in a register.
    // A constant trip count: the compiler unrolls the loop and issues the loads together, not one
    // per trip.
    const size_t stride = (size_t)gridDim.x * THREADS;
    float v = identity;
    for (int k = 0; k < FOLD; k++) {
        const size_t i = first + k * stride;
        if (i < count)
            v = reduce_combine(v, apply_exp ? expf(in[i] - shift) : in[i], op);
    }

    const float r = block_reduce(v, op, shared);
    if (threadIdx.x == 0)
        out[blockIdx.x] = r;
}

// multipass.cu's normalize: one element per thread.
static __global__ void normalize_kernel(const float *x, size_t n, const float *max, const float *sum, float *y)
{
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    if (i < n)
        y[i] = expf(x[i] - *max) / *sum;
}

typedef void (*level_kernel)(const float *, size_t, const float *, float *);

// Runs `first_level` on `count` values, then `later_levels` on its partials, level after level until
// one value is left, written to *result. Level outputs alternate between `a` and `b` (each level's
// input stays intact while it is read). Returns the number of launches.
static int reduce_levels(level_kernel first_level, level_kernel later_levels, const float *in, size_t count,
                         const float *max, float *result, float *a, float *b)
{
    int launches = 0;
    level_kernel kernel = first_level;
    do {
        const size_t blocks = fold_blocks(count);
        float *out = blocks == 1 ? result : (launches % 2 == 0 ? a : b);
        kernel<<<(unsigned)blocks, THREADS>>>(in, count, max, out);
        CUDA_CHECK_LAUNCH("fold_reduce_kernel");
        in = out;
        count = blocks;
        kernel = later_levels;
        launches++;
    } while (count > 1);
    return launches;
}

// Workspace: the max, the sum, then the two level buffers: the first level's partials and the
// second's, which later levels reuse in turn.
static size_t fold_workspace_bytes(size_t rows, size_t n)
{
    (void)rows;
    return (2 + fold_blocks(n) + fold_blocks(fold_blocks(n))) * sizeof(float);
}

static int fold_softmax(const float *x, float *y, size_t rows, size_t n, void *workspace)
{
    (void)rows; // 1: a single softmax over n elements
    float *max = (float *)workspace, *sum = max + 1;
    float *level_a = max + 2, *level_b = level_a + fold_blocks(n);
    int launches = 0;

    // Phase 1: the max. Phase 2: the sum of exp(x - max); its first level applies exp, the rest add.
    launches += reduce_levels(fold_reduce_kernel<REDUCE_MAX, false>, fold_reduce_kernel<REDUCE_MAX, false>, x, n,
                              NULL, max, level_a, level_b);
    launches += reduce_levels(fold_reduce_kernel<REDUCE_SUM, true>, fold_reduce_kernel<REDUCE_SUM, false>, x, n,
                              max, sum, level_a, level_b);

    // Phase 3: normalize.
    normalize_kernel<<<(unsigned)ceil_div(n, THREADS), THREADS>>>(x, n, max, sum, y);
    CUDA_CHECK_LAUNCH("normalize_kernel");
    return launches + 1;
}

extern "C" const softmax_variant multipass_exercise_variant = {EXERCISE_VARIANT, 16.0, fold_workspace_bytes,
                                                               fold_softmax, single_row_only};
