#include "bench.h"

#include <stdlib.h>
#include <string.h>

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
    const size_t n = shape.rows * shape.cols;
    char what[128], dims[64];
    format_shape(shape.rows, shape.cols, dims, sizeof dims);
    snprintf(what, sizeof what, "a softmax of %s (input and output)", dims);
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
                         const char *experiment, bool timed, const result_row *baseline)
{
    variant_job job = {.variant = variant, .c = c, .workspace = workspace_alloc(variant, c)};

    result_row row = {.experiment = experiment, .variant = variant->name, .rows = c->rows,
                      .cols = c->cols, .input = c->input, .seed = c->seed,
                      .bytes_per_elem = variant->bytes_per_elem};

    row.check = case_check(c, variant, job.workspace, &row.launches);

    /* Then benchmark. Any softmax must read x once and write y once: 8 bytes per element. That is
     * the byte count behind GB/s, so every variant is measured against the same ideal, and a
     * copy (which moves exactly those bytes) is the ceiling no variant can honestly beat. */
    if (timed) {
        row.timed = true;
        row.time = gpu_time(run_variant, &job, s->warmup, s->iters);
        row.gbps = 2.0 * sizeof(float) * (double)c->n / (row.time.median_ms * 1e-3) / 1e9;
        row.ceiling_gbps = s->ceiling_gbps;
        row.pct_of_ceiling = 100.0 * row.gbps / s->ceiling_gbps;
        if (baseline) {
            row.baseline = baseline->variant;
            row.baseline_ms = baseline->time.median_ms;
        }
        report_timing_row(&row, s->relative);
    } else {
        report_accuracy_row(&row);
    }
    if (s->csv)
        report_csv_row(s->csv, &row);
    CUDA_CHECK(cudaFree(job.workspace));
    return row;
}

void bench_accuracy(const bench_settings *s, const char *experiment,
                    const softmax_variant *const *variants, int n_variants, softmax_shape shape,
                    const input_spec *inputs, int n_inputs, uint64_t seed)
{
    report_accuracy_header();
    for (int k = 0; k < n_inputs; k++) {
        softmax_case c = case_create(shape, inputs[k], seed + (uint64_t)k);
        for (int v = 0; v < n_variants; v++)
            if (supports(variants[v], &c))
                bench_variant(s, &c, variants[v], experiment, false, NULL);
        case_destroy(&c);
    }
}

int bench_timing(const bench_settings *s, const char *experiment,
                 const softmax_variant *const *variants, int n_variants, const softmax_shape *shapes,
                 int n_shapes, input_spec input, uint64_t seed)
{
    int failed = 0;
    report_timing_header(s->relative);
    for (int i = 0; i < n_shapes; i++) {
        softmax_case c = case_create(shapes[i], input, seed + (uint64_t)i);
        result_row baseline;
        bool have_baseline = false;
        for (int v = 0; v < n_variants; v++) {
            if (!supports(variants[v], &c))
                continue;
            const result_row row = bench_variant(s, &c, variants[v], experiment, true,
                                                 have_baseline ? &baseline : NULL);
            failed += !row.check.pass && !variants[v]->library;
            if (!have_baseline) {
                baseline = row;
                have_baseline = true;
            }
        }
        case_destroy(&c);
    }
    return failed;
}

int variant_index(const char *name, const char *const *names, int n)
{
    for (int v = 0; v < n; v++)
        if (strcmp(name, names[v]) == 0)
            return v;
    char list[256] = "";
    for (int v = 0; v < n; v++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", v ? ", " : "", names[v]);
    die(EXIT_USAGE, "unknown variant '%s' (this stage has: %s)", name, list);
}

int select_variants(const char *name, const softmax_variant *const *all, int n_all,
                    const softmax_variant **chosen)
{
    if (!name) {
        for (int v = 0; v < n_all; v++)
            chosen[v] = all[v];
        return n_all;
    }
    const char *names[STAGE_MAX_VARIANTS];
    for (int v = 0; v < n_all; v++)
        names[v] = all[v]->name;
    chosen[0] = all[variant_index(name, names, n_all)];
    return 1;
}
