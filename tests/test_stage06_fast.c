/* Stage 06's fast kernels on the GPU, on the paths that random rows seldom reach: rows that fool
 * fast_row's guessed first threshold (fast/first_threshold.cuh), so the warp must rank the row
 * again; the same answer bit for bit on every run, though fast_split's candidates reach their list
 * in whatever order the atomics give, and whichever of fast_chunks' warps finishes a row last; a
 * batch of one for every vocabulary of the benchmark, and fast's choice of kernel (fast/fast.cu);
 * fast_chunks' rows cut into chunks (fast/fast_chunks.cuh), with ties and -inf across the chunks'
 * borders; rows sorted ascending, whose largest logits come last. */
#include <string.h>

#include "topk_test.h"

/* Rows that fool fast_row's guessed first threshold: in the logits it samples (`sampled` vectors a
 * lane), each lane gets `per_lane` large ones, 32 x per_lane in all, fewer than K, and the rest of
 * the row is small. The guess (a large logit) is then reached by fewer than K logits, and the warp
 * must rank the row again without one. Rows of 50257 start off 16-byte boundaries, so the sample
 * sits at a different offset in each. */
static void fool_the_guess(topk_case *c, int per_lane, int sampled)
{
    const size_t per_vector = 16 / dtype_size(c->dtype);
    for (size_t r = 0; r < c->rows; r++) {
        const size_t misaligned = r * c->cols % per_vector;
        const size_t head = misaligned ? per_vector - misaligned : 0;
        const size_t warp_rows = (c->cols - head) / per_vector / 32;
        for (size_t lane = 0; lane < 32; lane++)
            for (int j = 0; j < per_lane; j++) {
                const size_t i = (lane + 4 * (size_t)j) % (size_t)sampled;
                const size_t vector = FAST_SAMPLED_WARP_ROW(i, (size_t)sampled, warp_rows) * 32 + lane;
                c->x_host[r * c->cols + head + vector * per_vector] = 20.0f + (float)(lane + 32 * j) / 8.0f;
            }
    }
    topk_case_refresh(c);
}

Test(stage06_fast, rows_that_fool_the_guess)
{
    open_or_skip();
    const struct {
        logit_dtype dtype;
        int k, per_lane, sampled; // sampled: vectors a lane in the guess's sample (fast/fast.h)
    } cases[] = {{DTYPE_F32, 50, 1, FAST_SAMPLE_VECTORS},
                 {DTYPE_BF16, 50, 1, FAST_SAMPLE_VECTORS},
                 {DTYPE_F16, 256, 1, FAST_SAMPLE_VECTORS},
                 {DTYPE_F32, 256, 1, FAST_WIDE_SAMPLE_LOGITS / (32 * 4)},
                 {DTYPE_F32, 1024, 2, FAST_SAMPLE_VECTORS},
                 {DTYPE_BF16, 1024, 2, FAST_NARROW_SAMPLE_VECTORS}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        topk_case c = topk_case_create(3, 50257, cases[i].dtype, (input_spec){DIST_NORMAL, -3.0, 3.0},
                                       991 + (uint64_t)i, cases[i].k);
        fool_the_guess(&c, cases[i].per_lane, cases[i].sampled);
        expect_all_pass(&c, cases[i].k, "the guess fooled");
        topk_case_destroy(&c);
    }
}

/* Rows sorted ascending (host/row_order.h): every chunk beats the threshold the chunks before it set,
 * and 16-bit rows hold runs of equal logits, so ties fall across every border. Each kernel of fast
 * (the row counts reach fast_split, fast_chunks and fast_row) and every other variant. fast_split's
 * first list overflows and is made again (fast/list_again.cuh), at 600000 columns from more than one
 * tile a block. */
Test(stage06_fast, rows_sorted_ascending)
{
    open_or_skip();
    const struct {
        size_t rows, cols;
        logit_dtype dtype;
        int k;
    } cases[] = {{1, 262144, DTYPE_F32, 1024}, {1, 50257, DTYPE_BF16, 50}, {2, 600000, DTYPE_F32, 50},
                 {64, 128256, DTYPE_F32, 50},
                 {256, 50257, DTYPE_BF16, 10}, {600, 50257, DTYPE_F32, 256}, {600, 4000, DTYPE_F16, 64}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int d = 0; d < 2; d++) {
            const input_spec input = d ? (input_spec){DIST_NORMAL, -3.0, 3.0} : (input_spec){DIST_UNIFORM, 0.0, 10.0};
            topk_case c = topk_case_create_ordered(cases[i].rows, cases[i].cols, cases[i].dtype, input,
                                                   1201 + (uint64_t)(2 * i + d), cases[i].k, ORDER_ASCENDING);
            expect_all_pass(&c, cases[i].k, "sorted ascending");
            topk_case_destroy(&c);
        }
}

/* The same input, run many times: identical bits every time. The split's candidates reach their list
 * in whatever order the atomics hand out slots; the sort after it must make that invisible. Only
 * fast_split may be passed over, on a GPU below compute capability 9.0, which cannot run it. */
Test(stage06_fast, bitwise_identical_across_runs)
{
    const gpu_info gpu = open_or_skip();
    const topk_variant *const checked[] = {&fused_topk_variant, &fast_row_topk_variant, &fast_split_topk_variant,
                                           &fast_chunks_topk_variant};
    enum { K = 32 };
    topk_case c = topk_case_create(7, 262144, DTYPE_F32, (input_spec){DIST_NORMAL, -3.0, 3.0}, 971, K);
    const size_t out = c.rows * K;
    int *first_idx = malloc(out * sizeof(int));
    float *first_prob = malloc(out * sizeof(float));
    for (int v = 0; v < 4; v++) {
        const bool here = topk_supports(checked[v], &c, K);
        cr_expect(here || (checked[v] == &fast_split_topk_variant && gpu.cc_major < 9), "%s refused 7 x 262144, K=%d",
                  checked[v]->name, K);
        if (!here)
            continue;
        void *workspace = topk_workspace_alloc(checked[v], &c, K);
        for (int run = 0; run < 20; run++) {
            int launches;
            const topk_check r = topk_case_check(&c, checked[v], K, workspace, &launches);
            cr_expect(r.pass, "%s run %d", checked[v]->name, run);
            if (run == 0) {
                memcpy(first_idx, c.idx_host, out * sizeof(int));
                memcpy(first_prob, c.prob_host, out * sizeof(float));
            } else {
                cr_expect_arr_eq(c.idx_host, first_idx, out * sizeof(int), "%s run %d", checked[v]->name, run);
                cr_expect_arr_eq(c.prob_host, first_prob, out * sizeof(float), "%s run %d", checked[v]->name, run);
            }
        }
        CUDA_CHECK(cudaFree(workspace));
    }
    free(first_idx);
    free(first_prob);
    topk_case_destroy(&c);
}

/* A batch of one for every vocabulary of the benchmark, and fast picks the split for it and a few
 * rows (up to 32 of float32, 16 of 16-bit logits, on sm_90; fast_chunks elsewhere), fast_chunks for
 * a few hundred rows up to K = 256, fast_row for a full grid or a larger K. */
Test(stage06_fast, batch_of_one)
{
    const gpu_info gpu = open_or_skip();
    const size_t vocabularies[] = {50257, 128256, 262144};
    for (int i = 0; i < 3; i++) {
        topk_case c = topk_case_create(1, vocabularies[i], DTYPE_F32, (input_spec){DIST_UNIFORM, 0.0, 10.0},
                                       981 + (uint64_t)i, 1024);
        expect_all_pass(&c, 50, "batch 1");
        expect_all_pass(&c, 1024, "batch 1");
        cr_expect_eq(fast_picks(1, vocabularies[i], 50, DTYPE_F32),
                     gpu.cc_major < 9 ? &fast_chunks_topk_variant : &fast_split_topk_variant,
                     "fast's kernel for a batch of one");
        topk_case_destroy(&c);
    }
    cr_expect_eq(fast_picks(2, 128256, 50, DTYPE_BF16),
                 gpu.cc_major < 9 ? &fast_chunks_topk_variant : &fast_split_topk_variant, "fast's kernel for 2 rows");
    cr_expect_eq(fast_picks(32, 128256, 50, DTYPE_F32),
                 gpu.cc_major < 9 ? &fast_chunks_topk_variant : &fast_split_topk_variant, "fast's kernel for 32 rows");
    cr_expect_eq(fast_picks(32, 128256, 50, DTYPE_BF16), &fast_chunks_topk_variant,
                 "fast's kernel for 32 rows of bf16");
    cr_expect_eq(fast_picks(256, 128256, 50, DTYPE_BF16), &fast_chunks_topk_variant, "fast's kernel for 256 rows");
    cr_expect_eq(fast_picks(256, 128256, 1024, DTYPE_F32), &fast_row_topk_variant, "fast's kernel for 256 rows, K = 1024");
    cr_expect_eq(fast_picks(65536, 128256, 50, DTYPE_F32), &fast_row_topk_variant, "fast's kernel for 65536 rows");
}

/* ---- fast_chunks: a row cut into chunks of whole multiples of CHUNK_GRANULE logits ------------- */

/* As fast_chunks_kernel cuts a row (fast/fast_chunks.cuh): chunks are whole multiples of this many
 * logits, the last one what is left, so every multiple of it may be a chunk's border. */
#define GRANULE 1024

/* A few rows of every dtype at lengths cut into several chunks (a chunk is at least 16 KB: 4
 * granules of float32, 8 of 16-bit logits), the last one ragged (none is a multiple of GRANULE),
 * from K = 1 to the largest; fast_chunks by name, fast choosing it. */
Test(stage06_fast, chunks_of_every_length)
{
    open_or_skip();
    const size_t lengths[] = {16 * GRANULE + 1, 50257, 128256 + 7};
    const int ks[] = {1, 10, 50, 64, 256, 300, FAST_MAX_K};
    for (int d = DTYPE_F32; d <= DTYPE_F16; d++)
        for (int i = 0; i < 3; i++) {
            topk_case c = topk_case_create(5, lengths[i], (logit_dtype)d, (input_spec){DIST_NORMAL, -3.0, 3.0},
                                           1001 + (uint64_t)(10 * d + i), FAST_MAX_K);
            for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
                expect_variant_passes(&fast_chunks_topk_variant, &c, ks[j], "in chunks");
                expect_variant_passes(&fast_topk_variant, &c, ks[j], "in chunks");
            }
            topk_case_destroy(&c);
        }
}

/* Equal logits in different chunks: the row's largest value sits on both sides of every possible
 * border (the logits at multiples of GRANULE and just before them), in rows of every dtype; the
 * answer is the lowest of those indices, whichever chunk finishes last. Then rows whose few finite
 * logits are all in the last chunk: every other chunk offers only -inf, and those fill the answer
 * in index order from the first chunk. */
Test(stage06_fast, chunks_ties_and_minus_infinity_across_borders)
{
    open_or_skip();
    const size_t rows = 4, cols = 50257;
    for (int d = DTYPE_F32; d <= DTYPE_F16; d++) {
        topk_case c = topk_case_create(rows, cols, (logit_dtype)d, (input_spec){DIST_UNIFORM, -2.0, 2.0},
                                       1011 + (uint64_t)d, FAST_MAX_K);
        for (size_t r = 0; r < rows; r++)
            for (size_t i = GRANULE - 1; i < cols; i += GRANULE) {
                c.x_host[r * cols + i] = 8.0f;
                if (i + 1 < cols)
                    c.x_host[r * cols + i + 1] = 8.0f;
            }
        topk_case_refresh(&c);
        for (int k = 1; k <= FAST_MAX_K; k *= 4)
            expect_variant_passes(&fast_chunks_topk_variant, &c, k, "ties across borders");
        for (size_t i = 0; i < rows * cols; i++)
            if (i % cols < cols - 10)
                c.x_host[i] = -INFINITY;
        topk_case_refresh(&c);
        for (int k = 1; k <= FAST_MAX_K; k *= 4)
            expect_variant_passes(&fast_chunks_topk_variant, &c, k, "finite only in the last chunk");
        topk_case_destroy(&c);
    }
}

/* Launches back to back on one workspace: each must find the rows' tickets at zero, so each must
 * leave them so (the tickets are the workspace's first bytes, fast/chunk_merge.cuh). */
Test(stage06_fast, chunks_back_to_back)
{
    open_or_skip();
    enum { K = 50, ROWS = 3 };
    const topk_variant *v = &fast_chunks_topk_variant;
    topk_case c = topk_case_create(ROWS, 128256, DTYPE_BF16, (input_spec){DIST_UNIFORM, 0.0, 10.0}, 1021, K);
    void *workspace = topk_workspace_alloc(v, &c, K);
    cr_assert(workspace, "fast_chunks cuts 3 rows of 128256 into chunks, with a workspace");
    for (int run = 0; run < 3; run++) {
        v->run(c.x, c.dtype, c.rows, c.cols, K, c.idx, c.prob, workspace);
        int launches;
        const topk_check r = topk_case_check(&c, v, K, workspace, &launches);
        cr_expect(r.pass, "launch %d after another: %zu index errors, %zu probability failures", 2 * run + 2,
                  r.index_errors, r.prob_failures);
        unsigned tickets[ROWS];
        CUDA_CHECK(cudaMemcpy(tickets, workspace, sizeof tickets, cudaMemcpyDeviceToHost));
        for (int row = 0; row < ROWS; row++)
            cr_expect_eq(tickets[row], 0u, "row %d's ticket after launch %d", row, 2 * run + 2);
    }
    CUDA_CHECK(cudaFree(workspace));
    topk_case_destroy(&c);
}

/* ---- fast on the caller's stream: captured in a CUDA graph ------------------------------------- */

/* Captures fast (fast_topk_on_stream) of the case on a non-blocking stream into a graph, in the
 * capture mode that refuses any use of the legacy stream, then replays it twice on poisoned
 * outputs: each replay must give the reference's answer, the second bit for bit the first. A
 * kernel launched off the stream would be missing from the graph, and leave the poison. */
static void expect_graph_passes(topk_case *c, int k)
{
    const char *kernel = fast_picks(c->rows, c->cols, k, c->dtype)->name;
    void *workspace = topk_workspace_alloc(&fast_topk_variant, c, k);
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const int launches = fast_topk_on_stream(c->x, c->dtype, c->rows, c->cols, k, c->idx, c->prob, workspace, stream);
    CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    size_t nodes = 0;
    CUDA_CHECK(cudaGraphGetNodes(graph, NULL, &nodes));
    cr_expect_eq(nodes, (size_t)launches, "%s, %s %zu x %zu: %zu graph nodes for %d launches", kernel,
                 dtype_name(c->dtype), c->rows, c->cols, nodes, launches);
    const size_t out = c->rows * (size_t)k;
    int *first_idx = malloc(out * sizeof(int));
    float *first_prob = malloc(out * sizeof(float));
    for (int replay = 0; replay < 2; replay++) {
        topk_case_poison(c, k);
        CUDA_CHECK(cudaDeviceSynchronize()); /* the poison, on the legacy stream, before the replay */
        CUDA_CHECK(cudaGraphLaunch(exec, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        const topk_check r = topk_case_verify(c, k);
        cr_expect(r.pass, "%s, %s %zu x %zu K=%d, replay %d: %zu index errors, %zu probability failures (first bad row %zu)",
                  kernel, dtype_name(c->dtype), c->rows, c->cols, k, replay, r.index_errors, r.prob_failures,
                  r.first_bad_row);
        if (replay == 0) {
            memcpy(first_idx, c->idx_host, out * sizeof(int));
            memcpy(first_prob, c->prob_host, out * sizeof(float));
        } else {
            cr_expect_arr_eq(c->idx_host, first_idx, out * sizeof(int), "%s, %zu rows: replays differ", kernel, c->rows);
            cr_expect_arr_eq(c->prob_host, first_prob, out * sizeof(float), "%s, %zu rows: replays differ", kernel,
                             c->rows);
        }
    }
    free(first_idx);
    free(first_prob);
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(workspace));
}

/* Row counts that take each of fast's kernels (fast/fast.cu): one row fast_split (on sm_90), 33 to
 * 1055 fast_chunks (below 8 rows an SM, 1056 on 132 SMs), 8 rows an SM fast_row; each the prefix of
 * one case of the most rows. */
Test(stage06_fast, graph_capture_on_a_stream)
{
    const gpu_info gpu = open_or_skip();
    enum { K = 50 };
    const size_t full_grid = 8 * (size_t)gpu.sms;
    const size_t counts[] = {1, 33, 100, 1055, full_grid};
    const size_t most = full_grid > 1055 ? full_grid : 1055;
    const size_t vocabularies[] = {128256, 50257};
    const logit_dtype dtypes[] = {DTYPE_F32, DTYPE_BF16};
    bool took_split = false, took_chunks = false, took_row = false;
    for (int d = 0; d < 2; d++)
        for (int v = 0; v < 2; v++) {
            topk_case c = topk_case_create(most, vocabularies[v], dtypes[d], (input_spec){DIST_NORMAL, -3.0, 3.0},
                                           1031 + (uint64_t)(2 * d + v), K);
            for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
                topk_case prefix = topk_case_prefix(&c, counts[i]);
                const topk_variant *picked = fast_picks(prefix.rows, prefix.cols, K, prefix.dtype);
                took_split |= picked == &fast_split_topk_variant;
                took_chunks |= picked == &fast_chunks_topk_variant;
                took_row |= picked == &fast_row_topk_variant;
                expect_graph_passes(&prefix, K);
            }
            topk_case_destroy(&c);
        }
    cr_expect(took_split || gpu.cc_major < 9, "fast_split taken for a batch of one");
    cr_expect(took_chunks && took_row, "fast_chunks and fast_row taken");
}
