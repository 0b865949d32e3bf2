#include "decode_loop.h"

#include <stdio.h>
#include <string.h>

#include "../common/check.h"

topk_case decode_case_create(size_t tokens, size_t cols, logit_dtype dtype, input_spec input, uint64_t seed, int k,
                             decode_source from)
{
    topk_case c = topk_case_create(tokens, cols, dtype, input, seed, k);
    if (from == DECODE_FROM_L2) {
        for (size_t t = 1; t < tokens; t++)
            memcpy(c.x_host + t * cols, c.x_host, cols * sizeof(float));
        topk_case_refresh(&c);
    }
    return c;
}

decode_graph decode_graph_create(topk_case *c, int k, bool dependent, decode_source from)
{
    const size_t row_bytes = c->cols * dtype_size(c->dtype);
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    /* One launch outside the capture: the kernels' one-time setup (their shared-memory limits, the
     * cluster size) makes calls that a capture does not record. Its answer is poisoned before any
     * check. */
    fast_launch_one_row(c->x, c->dtype, c->cols, k, c->idx, c->prob, stream, false);
    CUDA_CHECK(cudaStreamSynchronize(stream));

    decode_graph g;
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    /* Every launch but the first is dependent: the first has nothing before it in the graph to
     * overlap with. */
    for (size_t t = 0; t < c->rows; t++)
        fast_launch_one_row((const char *)c->x + (from == DECODE_FROM_L2 ? 0 : t) * row_bytes, c->dtype, c->cols, k,
                            c->idx + t * (size_t)k, c->prob + t * (size_t)k, stream, dependent && t > 0);
    CUDA_CHECK(cudaStreamEndCapture(stream, &g.graph));
    CUDA_CHECK(cudaGraphInstantiate(&g.exec, g.graph, 0));
    CUDA_CHECK(cudaStreamDestroy(stream));
    return g;
}

void decode_graph_destroy(decode_graph *g)
{
    CUDA_CHECK(cudaGraphExecDestroy(g->exec));
    CUDA_CHECK(cudaGraphDestroy(g->graph));
}

void decode_graph_replay(const decode_graph *g)
{
    CUDA_CHECK(cudaGraphLaunch(g->exec, 0));
}

topk_check decode_graph_check(topk_case *c, int k, const decode_graph *g)
{
    topk_case_poison(c, k);
    decode_graph_replay(g);
    return topk_case_verify(c, k);
}

static void replay(void *ctx) { decode_graph_replay(ctx); }

/* One row of the table: the loop over the case's rows with top-k, verified, then timed. */
static bool loop_row(const bench_settings *s, topk_case *c, int k, bool dependent, decode_source from,
                     const char *name, measurement *baseline)
{
    decode_graph g = decode_graph_create(c, k, dependent, from);
    topk_row row = {.experiment = from == DECODE_FROM_L2 ? "decode_loop_l2" : "decode_loop", .c = c, .k = k, .launches = (int)c->rows,
                    .bytes_per_row = fast_topk_variant.bytes_per_row(1, c->cols, k, c->dtype),
                    .measured = {.variant = name}};
    row.check = decode_graph_check(c, k, &g);
    bench_time(s, replay, &g, (double)c->rows * (double)c->cols * (double)dtype_size(c->dtype), baseline,
               &row.measured);
    topk_timing_row(&row, s->relative);
    printf("%12s  %zu tokens, one graph: %.2f µs a token (median / %zu)\n", "", c->rows,
           1000.0 * row.measured.time.median_ms / (double)c->rows, c->rows);
    if (s->csv)
        topk_csv_row(s->csv, &row);
    decode_graph_destroy(&g);
    return row.check.pass;
}

void decode_loop_say_launches(void)
{
    if (!fast_pdl_available(DTYPE_F32))
        printf("fast runs without programmatic dependent launch here: it needs compute capability 9.0 and a "
               "build for sm_90.\n");
}

int decode_loop_experiment(const bench_settings *s, size_t cols, input_spec input, uint64_t seed,
                           decode_source from)
{
    enum { K = 50 };
    const bool pdl = fast_pdl_available(DTYPE_F32);
    int failed = 0;
    topk_case c = decode_case_create(DECODE_TOKENS, cols, DTYPE_F32, input, seed, K, from);
    measurement baseline = {0}; /* none yet: the first row becomes it */
    if (pdl)
        failed += !loop_row(s, &c, K, false, from, "fast_no_pdl", &baseline);
    failed += !loop_row(s, &c, K, pdl, from, "fast", &baseline);
    topk_case_destroy(&c);
    return failed;
}
