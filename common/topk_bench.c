#include "topk_bench.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report.h"

/* Allocates the host and device arrays of a case whose shape, dtype and ref_k are set; x_host is
 * then filled by the caller, and case_finish rounds, references and uploads it. */
static void case_alloc(topk_case *c)
{
    const size_t n = c->rows * c->cols, out = c->rows * (size_t)c->ref_k;
    char what[128], dims[64];
    format_shape(c->rows, c->cols, dims, sizeof dims);
    snprintf(what, sizeof what, "a top-%d of %s %s logits", c->ref_k, dims, dtype_name(c->dtype));
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
    topk_case c = {.rows = rows, .cols = cols, .dtype = dtype, .input = input, .seed = seed, .ref_k = ref_k};
    case_alloc(&c);
    fill_inputs(c.x_host, rows, cols, input, seed);
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

bool topk_supports(const topk_variant *v, const topk_case *c, int k)
{
    return k <= v->max_k && (c->dtype == DTYPE_F32 || v->sixteen_bit) && (!v->fits || v->fits(c->rows, c->cols)) &&
           (!v->runs_here || v->runs_here());
}

void *topk_workspace_alloc(const topk_variant *v, const topk_case *c, int k)
{
    return gpu_alloc_zeroed(v->workspace_bytes ? v->workspace_bytes(c->rows, c->cols, k, c->dtype) : 0,
                            "the variant's workspace");
}

topk_check topk_case_check(topk_case *c, const topk_variant *v, int k, void *workspace, int *launches)
{
    const size_t out = c->rows * (size_t)k;
    gpu_poison(c->idx, out * sizeof(int)); /* every index -1 */
    gpu_poison(c->prob, out * sizeof(float));
    *launches = v->run(c->x, c->dtype, c->rows, c->cols, k, c->idx, c->prob, workspace);
    CUDA_CHECK(cudaMemcpy(c->idx_host, c->idx, out * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(c->prob_host, c->prob, out * sizeof(float), cudaMemcpyDeviceToHost));
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

void topk_table_header(bool timed)
{
    printf("%12s %-7s %5s  %-11s", "rows x V", "dtype", "K", "variant");
    if (timed)
        printf(" %10s %10s %10s %7s %7s", "median ms", "min ms", "max ms", "GB/s", "% read");
    printf(" %9s %8s %7s %11s %6s", "KB/row", "launches", "idx err", "max rel err", "check");
    if (timed)
        printf(" %8s", "speedup");
    printf("\n");
}

static void print_row(const topk_row *row)
{
    char shape[64];
    format_shape(row->c->rows, row->c->cols, shape, sizeof shape);
    printf("%12s %-7s %5d  %-11s", shape, dtype_name(row->c->dtype), row->k, row->variant);
    if (row->timed)
        printf(" %10.4f %10.4f %10.4f %7.0f %6.1f%%", row->time.median_ms, row->time.min_ms, row->time.max_ms,
               row->gbps, row->pct_of_ceiling);
    printf(" %9.1f %8d %7zu %11.2e %6s", row->bytes_per_row / 1e3, row->launches, row->check.index_errors,
           unsigned_nan(row->check.max_rel_err), row->check.pass ? "PASS" : "FAIL");
    if (row->timed && row->baseline)
        printf(" %7.2fx", row->baseline_ms / row->time.median_ms);
    else if (row->timed)
        printf(" %8s", "base");
    printf("\n");
    if (row->pct_of_ceiling > 100.0)
        fprintf(stderr, "%s: warning: %s at %s is above the measured read ceiling: the timing or the "
                        "byte count is wrong\n", program_name(), row->variant, shape);
}

static void csv_row(FILE *csv, const topk_row *row)
{
    const topk_case *c = row->c;
    fprintf(csv, "%s,%s,%s,%zu,%zu,%d,", row->experiment, row->variant, dtype_name(c->dtype), c->rows, c->cols, row->k);
    if (c->from_file)
        fprintf(csv, "file,,,,");
    else
        fprintf(csv, "%s,%.17g,%.17g,%llu,", dist_name(c->input.dist), c->input.lo, c->input.hi,
                (unsigned long long)c->seed);
    if (row->timed)
        fprintf(csv, "%.6f,%.6f,%.6f,%.1f,%.2f,%.1f,", row->time.median_ms, row->time.min_ms, row->time.max_ms,
                row->gbps, row->pct_of_ceiling, row->ceiling_gbps);
    else
        fprintf(csv, ",,,,,,");
    fprintf(csv, "%.0f,%d,%zu,%.3e,%.3e,%zu,%s,", row->bytes_per_row, row->launches, row->check.index_errors,
            unsigned_nan(row->check.max_abs_err), unsigned_nan(row->check.max_rel_err), row->check.nonfinite,
            row->check.pass ? "PASS" : "FAIL");
    if (row->baseline)
        fprintf(csv, "%s,%.6f\n", row->baseline, row->baseline_ms);
    else
        fprintf(csv, ",\n");
}

topk_row topk_bench_variant(const topk_settings *s, topk_case *c, const topk_variant *v, int k,
                            const char *experiment, bool timed, const topk_row *baseline)
{
    topk_job job = {.v = v, .c = c, .k = k, .workspace = topk_workspace_alloc(v, c, k)};
    topk_row row = {.experiment = experiment, .variant = v->name, .c = c, .k = k,
                    .bytes_per_row = v->bytes_per_row(c->rows, c->cols, k, c->dtype)};
    row.check = topk_case_check(c, v, k, job.workspace, &row.launches);
    if (timed) {
        row.timed = true;
        row.time = gpu_time(run_job, &job, s->warmup, s->iters);
        const double bytes = (double)c->rows * (double)c->cols * (double)dtype_size(c->dtype);
        row.gbps = bytes / (row.time.median_ms * 1e-3) / 1e9;
        row.ceiling_gbps = s->ceiling_gbps;
        row.pct_of_ceiling = 100.0 * row.gbps / s->ceiling_gbps;
        if (baseline) {
            row.baseline = baseline->variant;
            row.baseline_ms = baseline->time.median_ms;
        }
    }
    print_row(&row);
    if (s->csv)
        csv_row(s->csv, &row);
    CUDA_CHECK(cudaFree(job.workspace));
    return row;
}

int topk_bench_all(const topk_settings *s, topk_case *c, const topk_variant *const *variants, int n,
                   int k, const char *experiment)
{
    int failed = 0;
    topk_row baseline;
    bool have_baseline = false;
    for (int i = 0; i < n; i++) {
        if (!topk_supports(variants[i], c, k))
            continue;
        const topk_row row = topk_bench_variant(s, c, variants[i], k, experiment, true,
                                                have_baseline ? &baseline : NULL);
        failed += !row.check.pass;
        if (!have_baseline) {
            baseline = row;
            have_baseline = true;
        }
    }
    return failed;
}
