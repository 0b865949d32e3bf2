#include "topk_bench.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/check.h"
#include "../../common/report.h"

/* Allocates the host and device arrays of a case whose shape, dtype and ref_k are set; x_host is
 * then filled by the caller, and topk_case_refresh rounds, references and uploads it. */
static void case_alloc(topk_case *c)
{
    char what[128], dims[64];
    format_shape(c->rows, c->cols, dims, sizeof dims);
    snprintf(what, sizeof what, "a top-%d of %s %s logits", c->ref_k, dims, dtype_name(c->dtype));
    /* ref_k <= cols, so there are at most n outputs. The host holds an element's logit as a float
     * and in its dtype, and an output's reference index and probability and the last run's index
     * and probability: 28 bytes an element, which fit a size_t many times over for a shape within
     * cli_shape_fits() (topk_bench.h), and so does every byte count here. */
    const size_t n = c->rows * c->cols;
    const size_t out = c->rows * (size_t)c->ref_k;
    gpu_require_memory(n * dtype_size(c->dtype) + out * (sizeof(int) + sizeof(float)), what);
    c->x_host = xmalloc(n * sizeof(float), what);
    c->ref_idx = xmalloc(out * sizeof(int), what);
    c->ref_prob = xmalloc(out * sizeof(double), what);
    c->idx_host = xmalloc(out * sizeof(int), what);
    c->prob_host = xmalloc(out * sizeof(float), what);
    CUDA_CHECK(cudaMalloc(&c->x, n * dtype_size(c->dtype)));
    CUDA_CHECK(cudaMalloc((void **)&c->idx, out * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&c->prob, out * sizeof(float)));
}

void topk_case_refresh(topk_case *c)
{
    const size_t n = c->rows * c->cols;
    void *encoded = xmalloc(n * dtype_size(c->dtype), "the logits in their dtype");
    encode_logits(c->x_host, encoded, n, c->dtype);
    reference_topk(c->x_host, c->rows, c->cols, c->ref_k, c->ref_idx, c->ref_prob);
    CUDA_CHECK(cudaMemcpy(c->x, encoded, n * dtype_size(c->dtype), cudaMemcpyHostToDevice));
    free(encoded);
}

topk_case topk_case_create(size_t rows, size_t cols, logit_dtype dtype, input_spec input, uint64_t seed, int ref_k)
{
    return topk_case_create_ordered(rows, cols, dtype, input, seed, ref_k, ORDER_INDEX);
}

topk_case topk_case_create_ordered(size_t rows, size_t cols, logit_dtype dtype, input_spec input, uint64_t seed,
                                   int ref_k, row_order order)
{
    topk_case c = {.rows = rows, .cols = cols, .dtype = dtype, .input = input, .seed = seed, .order = order,
                   .ref_k = ref_k};
    case_alloc(&c);
    fill_inputs(c.x_host, rows, cols, input, seed);
    order_rows(c.x_host, rows, cols, order);
    topk_case_refresh(&c);
    return c;
}

topk_case topk_case_from_npy(const npy_logits *a, int ref_k)
{
    topk_case c = {.rows = a->rows, .cols = a->cols, .dtype = a->dtype, .from_file = true, .ref_k = ref_k};
    case_alloc(&c);
    decode_logits(a->data, c.x_host, c.rows * c.cols, c.dtype);
    topk_case_refresh(&c);
    return c;
}

void topk_case_destroy(topk_case *c)
{
    CUDA_CHECK(cudaFree(c->x));
    CUDA_CHECK(cudaFree(c->idx));
    CUDA_CHECK(cudaFree(c->prob));
    free(c->x_host);
    free(c->ref_idx);
    free(c->ref_prob);
    free(c->idx_host);
    free(c->prob_host);
}

topk_case topk_case_prefix(const topk_case *c, size_t rows)
{
    topk_case prefix = *c;
    prefix.rows = rows < c->rows ? rows : c->rows;
    return prefix;
}

const char *topk_refusal(const topk_variant *v, size_t rows, size_t cols, int k, logit_dtype dtype, char *buf,
                         size_t len)
{
    if (k > v->max_k)
        snprintf(buf, len, "handles K up to %d, not %d", v->max_k, k);
    else if (dtype != DTYPE_F32 && !v->sixteen_bit)
        snprintf(buf, len, "takes float32 logits only, not %s", dtype_name(dtype));
    else if (v->fits && !v->fits(rows, cols))
        snprintf(buf, len, "cannot take %zu x %zu logits", rows, cols);
    else
        return NULL;
    return buf;
}

bool topk_supports(const topk_variant *v, const topk_case *c, int k)
{
    char why[128];
    return !topk_refusal(v, c->rows, c->cols, k, c->dtype, why, sizeof why) && (!v->why_not_here || !v->why_not_here());
}

void *topk_workspace_alloc(const topk_variant *v, const topk_case *c, int k)
{
    return gpu_alloc_zeroed(v->workspace_bytes ? v->workspace_bytes(c->rows, c->cols, k, c->dtype) : 0,
                            "the variant's workspace");
}

void topk_case_poison(topk_case *c, int k)
{
    const size_t out = c->rows * (size_t)k;
    gpu_poison(c->idx, out * sizeof(int)); /* every index -1 */
    gpu_poison(c->prob, out * sizeof(float));
}

topk_check topk_case_verify(topk_case *c, int k)
{
    const size_t out = c->rows * (size_t)k;
    CUDA_CHECK(cudaMemcpy(c->idx_host, c->idx, out * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(c->prob_host, c->prob, out * sizeof(float), cudaMemcpyDeviceToHost));
    return verify_topk(c->idx_host, c->prob_host, k, c->ref_idx, c->ref_prob, c->ref_k, c->rows);
}

typedef struct {
    int index;
    float logit;
} index_logit;

/* Larger logit first, then the lower index; NaN (an unwritten logit) last. */
static int by_logit_then_index(const void *a, const void *b)
{
    const index_logit *p = a, *q = b;
    if (p->logit != q->logit) {
        if (isnan(p->logit) || isnan(q->logit))
            return isnan(p->logit) - isnan(q->logit);
        return p->logit > q->logit ? -1 : 1;
    }
    return (p->index > q->index) - (p->index < q->index);
}

/* A logits_only answer in idx_host/prob_host, as verify_topk reads one: each row sorted, and each
 * logit, where it is the input's at its index, replaced by the reference's probability of that
 * rank (NaN where it is not, or the index is out of the row, so the row fails). */
static void logits_to_answer(topk_case *c, int k)
{
    index_logit *row = xmalloc((size_t)k * sizeof *row, "a row of top-K pairs");
    for (size_t r = 0; r < c->rows; r++) {
        int *idx = c->idx_host + r * k;
        float *val = c->prob_host + r * k;
        for (int i = 0; i < k; i++)
            row[i] = (index_logit){idx[i], val[i]};
        qsort(row, (size_t)k, sizeof *row, by_logit_then_index);
        for (int i = 0; i < k; i++) {
            const int j = row[i].index;
            const bool own = j >= 0 && (size_t)j < c->cols && row[i].logit == c->x_host[r * c->cols + j];
            idx[i] = j;
            val[i] = own ? (float)c->ref_prob[r * c->ref_k + i] : NAN;
        }
    }
    free(row);
}

topk_check topk_case_check(topk_case *c, const topk_variant *v, int k, void *workspace, int *launches)
{
    topk_case_poison(c, k);
    *launches = v->run(c->x, c->dtype, c->rows, c->cols, k, c->idx, c->prob, workspace);
    if (!v->logits_only)
        return topk_case_verify(c, k);
    const size_t out = c->rows * (size_t)k;
    CUDA_CHECK(cudaMemcpy(c->idx_host, c->idx, out * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(c->prob_host, c->prob, out * sizeof(float), cudaMemcpyDeviceToHost));
    logits_to_answer(c, k);
    return verify_topk(c->idx_host, c->prob_host, k, c->ref_idx, c->ref_prob, c->ref_k, c->rows);
}

typedef struct {
    const topk_variant *v;
    topk_case *c;
    int k;
    void *workspace;
} topk_job;

static void run_job(void *ctx)
{
    const topk_job *job = ctx;
    job->v->run(job->c->x, job->c->dtype, job->c->rows, job->c->cols, job->k, job->c->idx, job->c->prob,
                job->workspace);
}

static const timing_layout topk_layout = {.shape_heading = "rows x V", .gbps_width = 7, .pct_heading = "% read",
                                          .relative_width = 8};

void topk_timing_header(relative_mode relative)
{
    char before[64], after[64];
    snprintf(before, sizeof before, " %-7s %5s  %-11s", "dtype", "K", "variant");
    snprintf(after, sizeof after, " %9s %8s %7s %11s %6s", "KB/row", "launches", "idx err", "max rel err", "check");
    report_timing_header(&topk_layout, relative, before, after);
}

void topk_timing_row(const topk_row *row, relative_mode relative)
{
    char shape[64], before[64], after[96];
    format_shape(row->c->rows, row->c->cols, shape, sizeof shape);
    snprintf(before, sizeof before, " %-7s %5d  %-11s", dtype_name(row->c->dtype), row->k, row->measured.variant);
    snprintf(after, sizeof after, " %9.1f %8d %7zu %11.2e %6s", row->bytes_per_row / 1e3, row->launches,
             row->check.index_errors, unsigned_nan(row->check.max_rel_err), verdict(row->check.pass));
    report_timing_row(&topk_layout, relative, shape, before, &row->measured, after);
}

void topk_csv_row(FILE *csv, const topk_row *row)
{
    const topk_case *c = row->c;
    char before[256], after[128];
    const int at = snprintf(before, sizeof before, "%s,%s,%s,%zu,%zu,%d,", row->experiment, row->measured.variant,
                            dtype_name(c->dtype), c->rows, c->cols, row->k);
    if (c->from_file)
        snprintf(before + at, sizeof before - at, "file,,,,");
    else
        snprintf(before + at, sizeof before - at, "%s,%.17g,%.17g,%llu,", dist_name(c->input.dist), c->input.lo,
                 c->input.hi, (unsigned long long)c->seed);
    snprintf(after, sizeof after, "%.0f,%d,%zu,%.3e,%.3e,%zu,%s,", row->bytes_per_row, row->launches,
             row->check.index_errors, unsigned_nan(row->check.max_abs_err), unsigned_nan(row->check.max_rel_err),
             row->check.nonfinite, verdict(row->check.pass));
    report_csv_row(csv, before, &row->measured, after);
}

topk_row topk_bench_variant(const bench_settings *s, topk_case *c, const topk_variant *v, int k,
                            const char *experiment, measurement *baseline)
{
    topk_job job = {.v = v, .c = c, .k = k, .workspace = topk_workspace_alloc(v, c, k)};
    topk_row row = {.experiment = experiment, .c = c, .k = k,
                    .bytes_per_row = v->bytes_per_row(c->rows, c->cols, k, c->dtype),
                    .measured = {.variant = v->name}};
    row.check = topk_case_check(c, v, k, job.workspace, &row.launches);
    bench_time(s, run_job, &job, (double)c->rows * (double)c->cols * (double)dtype_size(c->dtype), baseline,
               &row.measured);
    topk_timing_row(&row, s->relative);
    if (s->csv)
        topk_csv_row(s->csv, &row);
    CUDA_CHECK(cudaFree(job.workspace));
    return row;
}

int topk_bench_all(const bench_settings *s, topk_case *c, const topk_variant *const *variants, int n,
                   int k, const char *experiment)
{
    int failed = 0;
    measurement baseline = {0}; /* none yet: the first row becomes it */
    for (int i = 0; i < n; i++)
        if (topk_supports(variants[i], c, k))
            failed += !topk_bench_variant(s, c, variants[i], k, experiment, &baseline).check.pass;
    return failed;
}
