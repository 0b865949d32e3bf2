/* One batch past 2^31 logits: 32768 rows of 65537 (2^31 + 2^15), for the row softmaxes (stage 05's
 * online_rows; stage 04's block_per_row and thread_per_row) and the top-K kernels that take it
 * (stage 06's fast_row, fast_chunks, fast, fast_split on compute capability 9.0 and later, and
 * fused for K <= 32; unfused refuses it: CUB counts its items in an int). A kernel that kept an
 * index into the whole batch in 32 bits would wrap here, and read or write the wrong logits: the
 * check of every output, or a crash, shows it.
 *
 * It needs some 17 GB of GPU memory and 35 GB of host memory (x, y and the fp64 reference of the
 * softmax), and skips with one line where there is less. The two tests take 30 to 40 s on an H100
 * with 16 processors, side by side with the others. The host's part (drawing the logits, the
 * reference, the check) is spread over every processor, a block of rows a thread at a time: each
 * block's logits come from seed + its number, so the input is the same whatever the threads. */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>

#include "../04_warp/warp.h"
#include "../05_online/online.h"
#include "../common/check.h"
#include "../common/host_threads.h"
#include "topk_test.h"

#define BIG_ROWS ((size_t)32768)
#define BIG_COLS ((size_t)65537) /* odd: most rows start off 16-byte boundaries */
#define BLOCK_ROWS ((size_t)256)
#define BLOCKS (BIG_ROWS / BLOCK_ROWS)
#define GIB ((size_t)1 << 30)
#define HOST_SPARE (16 * GIB) /* host memory left to the tests that run beside this one */

/* Skips the test unless the GPU has `gpu_bytes` free and the host `host_bytes` and HOST_SPARE. */
static void require_memory_or_skip(size_t gpu_bytes, size_t host_bytes)
{
    size_t free_bytes, total_bytes;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const size_t host = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
    if (free_bytes < gpu_bytes)
        cr_skip_test("needs %zu GiB of GPU memory, %zu GiB free", gpu_bytes / GIB + 1, free_bytes / GIB);
    if (host < host_bytes + HOST_SPARE)
        cr_skip_test("needs %zu GiB of host memory and %zu to spare, the host has %zu GiB", host_bytes / GIB + 1,
                     HOST_SPARE / GIB, host / GIB);
}

/* ---- Blocks of rows, over every processor ------------------------------------------------------- */

typedef void (*block_fn)(void *ctx, size_t block, size_t first_row, size_t rows);

typedef struct {
    block_fn fn;
    void *ctx;
} block_job;

static void blocks_band(void *ctx, size_t begin, size_t end)
{
    const block_job *job = ctx;
    for (size_t b = begin; b < end; b++)
        job->fn(job->ctx, b, b * BLOCK_ROWS, BLOCK_ROWS);
}

/* fn on each of the BLOCKS blocks of rows, a band of them on each processor (host_threads.h). */
static void for_each_block(block_fn fn, void *ctx)
{
    block_job job = {fn, ctx};
    host_parallel_for(BLOCKS, host_cpu_count(), blocks_band, &job);
}

/* ---- The row softmax ---------------------------------------------------------------------------- */

static void draw_softmax_block(void *ctx, size_t block, size_t first_row, size_t rows)
{
    softmax_case *c = ctx;
    const size_t at = first_row * c->cols;
    fill_inputs_threads(c->x_host + at, rows, c->cols, c->input, c->seed + block, 1); /* a thread a block */
    reference_softmax(c->x_host + at, c->ref + at, rows, c->cols);
}

typedef struct {
    const softmax_case *c;
    verify_result blocks[BLOCKS];
} big_check;

static void check_softmax_block(void *ctx, size_t block, size_t first_row, size_t rows)
{
    big_check *k = ctx;
    const size_t at = first_row * k->c->cols;
    k->blocks[block] = verify_softmax(k->c->y_host + at, k->c->ref + at, rows, k->c->cols);
}

/* The blocks' checks as one check of the whole batch, as verify_softmax would give it. */
static verify_result merge_checks(const big_check *k)
{
    verify_result v = {.worst_row_sum = 1.0};
    for (size_t b = 0; b < BLOCKS; b++) {
        const verify_result *p = &k->blocks[b];
        if (p->failures && !v.failures)
            v.first_failure = b * BLOCK_ROWS * k->c->cols + p->first_failure;
        v.failures += p->failures;
        v.nonfinite += p->nonfinite;
        v.max_abs_err = fmax(v.max_abs_err, p->max_abs_err);
        v.max_rel_err = fmax(v.max_rel_err, p->max_rel_err);
        if (isnan(p->worst_row_sum) ||
            (!isnan(v.worst_row_sum) && fabs(p->worst_row_sum - 1.0) > fabs(v.worst_row_sum - 1.0)))
            v.worst_row_sum = p->worst_row_sum;
    }
    if (v.nonfinite)
        v.max_abs_err = v.max_rel_err = NAN;
    v.pass = v.failures == 0;
    return v;
}

Test(sweep, past_2_31_logits_row_softmax)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    const size_t n = BIG_ROWS * BIG_COLS;
    require_memory_or_skip(2 * n * sizeof(float) + GIB, n * (2 * sizeof(float) + sizeof(double)));

    softmax_case c = {.rows = BIG_ROWS, .cols = BIG_COLS, .n = n, .input = {DIST_UNIFORM, 0.0, 10.0}, .seed = 31};
    c.x_host = xmalloc(n * sizeof(float), "x");
    c.y_host = xmalloc(n * sizeof(float), "y");
    c.ref = xmalloc(n * sizeof(double), "the reference");
    for_each_block(draw_softmax_block, &c);
    CUDA_CHECK(cudaMalloc((void **)&c.x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&c.y, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(c.x, c.x_host, n * sizeof(float), cudaMemcpyHostToDevice));

    const softmax_variant *const variants[] = {&online_rows_variant, &block_per_row_variant,
                                               &thread_per_row_variant};
    big_check k = {.c = &c};
    for (int v = 0; v < 3; v++) {
        cr_assert(!variants[v]->supports || variants[v]->supports(c.rows, c.cols), "%s", variants[v]->name);
        void *workspace = workspace_alloc(variants[v], &c);
        gpu_poison(c.y, n * sizeof(float));
        variants[v]->run(c.x, c.y, c.rows, c.cols, workspace);
        CUDA_CHECK(cudaMemcpy(c.y_host, c.y, n * sizeof(float), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaFree(workspace));
        for_each_block(check_softmax_block, &k);
        const verify_result r = merge_checks(&k);
        EXPECT_PASS(r, "%s on 32768 x 65537 (past 2^31 logits)", variants[v]->name);
    }
    case_destroy(&c);
}

/* ---- Top-K -------------------------------------------------------------------------------------- */

static void draw_topk_block(void *ctx, size_t block, size_t first_row, size_t rows)
{
    topk_case *c = ctx;
    float *x = c->x_host + first_row * c->cols;
    const size_t out = first_row * (size_t)c->ref_k;
    fill_inputs_threads(x, rows, c->cols, c->input, c->seed + block, 1); /* a thread a block */
    reference_topk_threads(x, rows, c->cols, c->ref_k, c->ref_idx + out, c->ref_prob + out, 1);
}

/* Whether `v` takes top-k of the batch here, as the header says: expect_all_pass passes over a
 * variant that refuses, so each is checked first. */
static void expect_takes(const topk_variant *v, const topk_case *c, int k, bool takes)
{
    cr_expect_eq(topk_supports(v, c, k), takes, "%s %s 32768 x 65537 with K=%d", v->name,
                 takes ? "refused" : "took", k);
}

Test(sweep, past_2_31_logits_topk)
{
    const gpu_info gpu = open_or_skip();
    const size_t n = BIG_ROWS * BIG_COLS;
    enum { K = 1024 };
    const size_t out = BIG_ROWS * K;
    require_memory_or_skip(n * sizeof(float) + out * 8 + GIB, n * sizeof(float) + out * 20);

    /* float32 logits: x_host is what the GPU reads, with nothing to round */
    topk_case c = {.rows = BIG_ROWS, .cols = BIG_COLS, .dtype = DTYPE_F32, .input = {DIST_NORMAL, -3.0, 3.0},
                   .seed = 32, .ref_k = K};
    c.x_host = xmalloc(n * sizeof(float), "the logits");
    c.ref_idx = xmalloc(out * sizeof(int), "the reference");
    c.ref_prob = xmalloc(out * sizeof(double), "the reference");
    c.idx_host = xmalloc(out * sizeof(int), "the answer");
    c.prob_host = xmalloc(out * sizeof(float), "the answer");
    for_each_block(draw_topk_block, &c);
    CUDA_CHECK(cudaMalloc(&c.x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&c.idx, out * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&c.prob, out * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(c.x, c.x_host, n * sizeof(float), cudaMemcpyHostToDevice));

    const int ks[] = {1, 32, K};
    for (int i = 0; i < 3; i++) {
        expect_takes(&unfused_topk_variant, &c, ks[i], false);
        expect_takes(&fused_topk_variant, &c, ks[i], ks[i] <= 32);
        expect_takes(&threshold_topk_variant, &c, ks[i], ks[i] <= 64);
        expect_takes(&fast_row_topk_variant, &c, ks[i], true);
        expect_takes(&fast_chunks_topk_variant, &c, ks[i], true);
        expect_takes(&fast_split_topk_variant, &c, ks[i], gpu.cc_major >= 9);
        expect_takes(&fast_topk_variant, &c, ks[i], true);
        expect_all_pass(&c, ks[i], "32768 x 65537 (past 2^31 logits)");
    }
    topk_case_destroy(&c);
}
