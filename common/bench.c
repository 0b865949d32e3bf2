#include "bench.h"

#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "gpu.h"
#include "reference.h"

bool single_row_only(size_t rows, size_t cols)
{
    (void)cols;
    return rows == 1;
}

softmax_case case_create(softmax_shape shape, input_spec input, uint64_t seed)
{
    char what[128], dims[64];
    format_shape(shape.rows, shape.cols, dims, sizeof dims);
    snprintf(what, sizeof what, "a softmax of %s (input and output)", dims);
    /* The shape is within cli_shape_fits() (bench.h), so the 16 bytes an element the host holds (x,
     * y and the reference) fit a size_t many times over, and so does every byte count below. */
    const size_t n = shape.rows * shape.cols;
    gpu_require_memory(2 * n * sizeof(float), what);

    softmax_case c = {.rows = shape.rows, .cols = shape.cols, .n = n, .input = input, .seed = seed};
    c.x_host = xmalloc(n * sizeof(float), what);
    c.y_host = xmalloc(n * sizeof(float), what);
    c.ref = xmalloc(n * sizeof(double), what);
    fill_inputs(c.x_host, c.rows, c.cols, input, seed);
    reference_softmax(c.x_host, c.ref, c.rows, c.cols);

    CUDA_CHECK(cudaMalloc((void **)&c.x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&c.y, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(c.x, c.x_host, n * sizeof(float), cudaMemcpyHostToDevice));
    return c;
}

void case_destroy(softmax_case *c)
{
    CUDA_CHECK(cudaFree(c->x));
    CUDA_CHECK(cudaFree(c->y));
    free(c->x_host);
    free(c->y_host);
    free(c->ref);
}

void *workspace_alloc(const softmax_variant *variant, const softmax_case *c)
{
    return gpu_alloc_zeroed(variant->workspace_bytes ? variant->workspace_bytes(c->rows, c->cols) : 0,
                            "the variant's workspace");
}

verify_result case_check(softmax_case *c, const softmax_variant *variant, void *workspace, int *launches)
{
    gpu_poison(c->y, c->n * sizeof(float));
    *launches = variant->run(c->x, c->y, c->rows, c->cols, workspace);
    CUDA_CHECK(cudaMemcpy(c->y_host, c->y, c->n * sizeof(float), cudaMemcpyDeviceToHost));
    return verify_softmax(c->y_host, c->ref, c->rows, c->cols);
}

void bench_time(const bench_settings *s, gpu_work_fn work, void *ctx, double bytes, measurement *baseline,
                measurement *m)
{
    m->timed = true;
    m->time = gpu_time(work, ctx, s->warmup, s->iters);
    m->gbps = bytes / (m->time.median_ms * 1e-3) / 1e9;
    m->ceiling_gbps = s->ceiling_gbps;
    m->pct_of_ceiling = 100.0 * m->gbps / s->ceiling_gbps;
    if (baseline->variant) {
        m->baseline = baseline->variant;
        m->baseline_ms = baseline->time.median_ms;
    } else {
        *baseline = *m;
    }
}

static void accuracy_header(void)
{
    printf("%12s  %-22s %-13s %12s %11s %10s %6s\n", "n", "input", "variant", "sum(out)", "non-finite",
           "max rel err", "check");
}

static void accuracy_row(const result_row *row)
{
    char n[64], input[64];
    format_shape(row->rows, row->cols, n, sizeof n);
    snprintf(input, sizeof input, "%s [%g,%g]", dist_name(row->input.dist), row->input.lo, row->input.hi);
    printf("%12s  %-22s %-13s %12.6g %11zu %10.2e %6s\n", n, input, row->measured.variant,
           unsigned_nan(row->check.worst_row_sum), row->check.nonfinite, unsigned_nan(row->check.max_rel_err),
           verdict(row->check.pass));
}

static const timing_layout softmax_layout = {.shape_heading = "n", .gbps_width = 8, .pct_heading = "% ceil",
                                             .relative_width = 9};

void softmax_timing_header(relative_mode relative)
{
    char before[32], after[64];
    snprintf(before, sizeof before, "  %-13s", "variant");
    snprintf(after, sizeof after, " %7s %8s %10s %6s", "B/elem", "launches", "max rel err", "check");
    report_timing_header(&softmax_layout, relative, before, after);
}

void softmax_timing_row(const result_row *row, relative_mode relative)
{
    char n[64], before[64], after[64];
    format_shape(row->rows, row->cols, n, sizeof n);
    snprintf(before, sizeof before, "  %-13s", row->measured.variant);
    snprintf(after, sizeof after, " %7.0f %8d %10.2e %6s", row->bytes_per_elem, row->launches,
             unsigned_nan(row->check.max_rel_err), verdict(row->check.pass));
    report_timing_row(&softmax_layout, relative, n, before, &row->measured, after);
}

void softmax_csv_row(FILE *csv, const result_row *row)
{
    char before[256], after[128];
    snprintf(before, sizeof before, "%s,%s,%zu,%zu,%s,%.17g,%.17g,%llu,", row->experiment, row->measured.variant,
             row->rows, row->cols, dist_name(row->input.dist), row->input.lo, row->input.hi,
             (unsigned long long)row->seed);
    snprintf(after, sizeof after, "%g,%d,%.3e,%.3e,%.9g,%zu,%s,", row->bytes_per_elem, row->launches,
             unsigned_nan(row->check.max_abs_err), unsigned_nan(row->check.max_rel_err),
             unsigned_nan(row->check.worst_row_sum), row->check.nonfinite, verdict(row->check.pass));
    report_csv_row(csv, before, &row->measured, after);
}

typedef struct {
    const softmax_variant *variant;
    softmax_case *c;
    void *workspace;
} variant_job;

static void run_variant(void *ctx)
{
    const variant_job *job = ctx;
    job->variant->run(job->c->x, job->c->y, job->c->rows, job->c->cols, job->workspace);
}

static bool supports(const softmax_variant *v, const softmax_case *c)
{
    return !v->supports || v->supports(c->rows, c->cols);
}

result_row bench_variant(const bench_settings *s, softmax_case *c, const softmax_variant *variant,
                         const char *experiment, measurement *baseline)
{
    variant_job job = {.variant = variant, .c = c, .workspace = workspace_alloc(variant, c)};
    result_row row = {.experiment = experiment, .rows = c->rows, .cols = c->cols, .input = c->input,
                      .seed = c->seed, .bytes_per_elem = variant->bytes_per_elem,
                      .measured = {.variant = variant->name}};
    row.check = case_check(c, variant, job.workspace, &row.launches);

    /* Then benchmark. Any softmax must read x once and write y once: 8 bytes per element. That is
     * the byte count behind GB/s, so every variant is measured against the same ideal, and a
     * copy (which moves exactly those bytes) is the ceiling no variant can honestly beat. */
    if (baseline) {
        bench_time(s, run_variant, &job, 2.0 * sizeof(float) * (double)c->n, baseline, &row.measured);
        softmax_timing_row(&row, s->relative);
    } else {
        accuracy_row(&row);
    }
    if (s->csv)
        softmax_csv_row(s->csv, &row);
    CUDA_CHECK(cudaFree(job.workspace));
    return row;
}

void bench_accuracy(const bench_settings *s, const char *experiment,
                    const softmax_variant *const *variants, int n_variants, softmax_shape shape,
                    const input_spec *inputs, int n_inputs, uint64_t seed)
{
    accuracy_header();
    for (int k = 0; k < n_inputs; k++) {
        softmax_case c = case_create(shape, inputs[k], seed + (uint64_t)k);
        for (int v = 0; v < n_variants; v++)
            if (supports(variants[v], &c))
                bench_variant(s, &c, variants[v], experiment, NULL);
        case_destroy(&c);
    }
}

int bench_timing(const bench_settings *s, const char *experiment,
                 const softmax_variant *const *variants, int n_variants, const softmax_shape *shapes,
                 int n_shapes, input_spec input, uint64_t seed)
{
    int failed = 0;
    softmax_timing_header(s->relative);
    for (int i = 0; i < n_shapes; i++) {
        softmax_case c = case_create(shapes[i], input, seed + (uint64_t)i);
        measurement baseline = {0}; /* none yet: the first row becomes it */
        for (int v = 0; v < n_variants; v++)
            if (supports(variants[v], &c)) {
                const result_row row = bench_variant(s, &c, variants[v], experiment, &baseline);
                failed += !row.check.pass && !variants[v]->library;
            }
        case_destroy(&c);
    }
    return failed;
}
