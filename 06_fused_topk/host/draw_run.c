#include "draw_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../common/check.h"

/* A device copy of n 4-byte values, or NULL for none. */
static void *to_device(const void *host, size_t n)
{
    if (!host)
        return NULL;
    void *device;
    CUDA_CHECK(cudaMalloc(&device, n * 4));
    CUDA_CHECK(cudaMemcpy(device, host, n * 4, cudaMemcpyHostToDevice));
    return device;
}

draw_run draw_run_create(const topk_case *c, int k, draw_params host, bool split)
{
    draw_run s = {.split = split, .host = host, .device.params = host};
    s.device.params.temperatures = to_device(host.temperatures, c->rows);
    s.device.params.top_ps = to_device(host.top_ps, c->rows);
    s.device.params.ks = to_device(host.ks, c->rows);
    CUDA_CHECK(cudaMalloc((void **)&s.device.tokens, c->rows * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&s.device.token_probs, c->rows * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&s.device.token_logprobs, c->rows * sizeof(float)));
    s.ref = xmalloc(c->rows * sizeof *s.ref, "the reference's draws");
    s.tokens = xmalloc(c->rows * sizeof(int), "the drawn tokens");
    s.token_probs = xmalloc(c->rows * sizeof(float), "the drawn tokens' probabilities");
    s.token_logprobs = xmalloc(c->rows * sizeof(float), "the drawn tokens' log-probabilities");
    reference_draw(c->x_host, c->rows, c->cols, c->ref_idx, c->ref_k, k, &host, s.ref);
    return s;
}

void draw_run_destroy(draw_run *s)
{
    CUDA_CHECK(cudaFree((void *)s->device.params.temperatures));
    CUDA_CHECK(cudaFree((void *)s->device.params.top_ps));
    CUDA_CHECK(cudaFree((void *)s->device.params.ks));
    CUDA_CHECK(cudaFree(s->device.tokens));
    CUDA_CHECK(cudaFree(s->device.token_probs));
    CUDA_CHECK(cudaFree(s->device.token_logprobs));
    free(s->ref);
    free(s->tokens);
    free(s->token_probs);
    free(s->token_logprobs);
}

static void run_draw(draw_run *s, topk_case *c, int k)
{
    fast_topk_draw(s->split, c->x, c->dtype, c->rows, c->cols, k, c->idx, c->prob, &s->device, 0);
}

draw_check draw_run_check(draw_run *s, topk_case *c, int k, topk_check *topk)
{
    topk_case_poison(c, k);
    gpu_poison(s->device.tokens, c->rows * sizeof(int));
    gpu_poison(s->device.token_probs, c->rows * sizeof(float));
    gpu_poison(s->device.token_logprobs, c->rows * sizeof(float));
    run_draw(s, c, k);
    *topk = topk_case_verify(c, k);
    CUDA_CHECK(cudaMemcpy(s->tokens, s->device.tokens, c->rows * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(s->token_probs, s->device.token_probs, c->rows * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(s->token_logprobs, s->device.token_logprobs, c->rows * sizeof(float),
                          cudaMemcpyDeviceToHost));
    return verify_draw(s->tokens, s->token_probs, s->token_logprobs, s->ref, c->ref_idx, c->ref_k, c->rows);
}

typedef struct {
    draw_run *s;
    topk_case *c;
    int k;
} draw_job;

static void run_job(void *ctx)
{
    const draw_job *job = ctx;
    run_draw(job->s, job->c, job->k);
}

/* The larger error, NaN if either is (a non-finite output). */
static double worse(double a, double b) { return isnan(a) || isnan(b) ? NAN : fmax(a, b); }

bool draw_bench(const bench_settings *b, topk_case *c, int k, draw_run *s, const char *name,
                const char *experiment, measurement *baseline)
{
    topk_check topk;
    const draw_check drawn = draw_run_check(s, c, k, &topk);
    /* The table's and the CSV's columns are the top-K's: its index errors count the wrong tokens
     * too, its error is the worse of the two, and it passes when both do. */
    topk_row row = {.experiment = experiment, .c = c, .k = k, .launches = 1,
                    .bytes_per_row = (double)c->cols * dtype_size(c->dtype) + 8.0 * k + 12.0,
                    .measured = {.variant = name}};
    row.check = topk;
    row.check.index_errors += drawn.token_errors;
    row.check.prob_failures += drawn.prob_failures;
    row.check.nonfinite += drawn.nonfinite;
    row.check.max_abs_err = worse(row.check.max_abs_err, drawn.max_abs_err);
    row.check.max_rel_err = worse(row.check.max_rel_err, drawn.max_rel_err);
    row.check.pass = topk.pass && drawn.pass;
    draw_job job = {s, c, k};
    bench_time(b, run_job, &job, (double)c->rows * (double)c->cols * (double)dtype_size(c->dtype), baseline,
               &row.measured);
    topk_timing_row(&row, b->relative);
    if (drawn.near_boundary)
        printf("  (%zu of %zu rows drew a neighbour of the reference's token, within %.0e of a boundary)\n",
               drawn.near_boundary, c->rows, DRAW_MARGIN);
    if (b->csv)
        topk_csv_row(b->csv, &row);
    return row.check.pass;
}

typedef struct {
    const topk_case *c;
    int k;
    const draw_params *how;
    int *tokens;
    bool *valid;
    void *workspace;
    int launches;
    drawn_token *rule; /* the reference's draws with each row's ties kept (library_draw_create) */
} library_draw_job;

static void run_library_draw(void *ctx)
{
    library_draw_job *job = ctx;
    const topk_case *c = job->c;
    job->launches = flashinfer_draw(c->x, c->rows, c->cols, job->k, job->how->temperature, job->how->top_p,
                                    job->how->seed, job->tokens, job->valid, job->workspace);
}

/* FlashInfer breaks no ties: a row may keep every logit tied with its K-th, and its top-p takes
 * every token tied with the last one the cut keeps. So the rule's K for a row is K plus the logits
 * after the K-th that tie with it (as deep as the reference goes), and its kept ones run on over
 * the logits tied with the last kept. `how` holds one setting for every row (flashinfer_draw_why_not). */
static drawn_token *draws_with_ties_kept(const topk_case *c, int k, const draw_params *how)
{
    drawn_token *rule = xmalloc(c->rows * sizeof *rule, "the reference's draws with ties kept");
    for (size_t r = 0; r < c->rows; r++) {
        const int *ranked = c->ref_idx + r * (size_t)c->ref_k;
        const float *x = c->x_host + r * c->cols;
        int tied_k = k;
        while (tied_k < c->ref_k && x[ranked[tied_k]] == x[ranked[k - 1]])
            tied_k++;
        rule[r] = reference_draw_row(x, ranked, tied_k, how->temperature, how->top_p, how->min_p, how->seed, r);
        const float last = x[ranked[rule[r].kept - 1]];
        while (rule[r].kept < tied_k && x[ranked[rule[r].kept]] == last)
            rule[r].kept++;
    }
    return rule;
}

static library_draw_job library_draw_create(const topk_case *c, int k, const draw_run *s)
{
    library_draw_job job = {.c = c, .k = k, .how = &s->host, .rule = draws_with_ties_kept(c, k, &s->host)};
    const size_t bytes = flashinfer_draw_workspace_bytes(c->rows, c->cols, k);
    CUDA_CHECK(cudaMalloc(&job.workspace, bytes));
    CUDA_CHECK(cudaMemset(job.workspace, 0, bytes));
    CUDA_CHECK(cudaMalloc((void **)&job.tokens, c->rows * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&job.valid, c->rows * sizeof(bool)));
    return job;
}

static void library_draw_destroy(library_draw_job *job)
{
    CUDA_CHECK(cudaFree(job->workspace));
    CUDA_CHECK(cudaFree(job->tokens));
    CUDA_CHECK(cudaFree(job->valid));
    free(job->rule);
}

/* Poisons the outputs, draws once, checks the tokens by the draw's rule. */
static draw_check library_draw_check(library_draw_job *job)
{
    const topk_case *c = job->c;
    gpu_poison(job->tokens, c->rows * sizeof(int));
    gpu_poison(job->valid, c->rows * sizeof(bool));
    run_library_draw(job);
    int *tokens = xmalloc(c->rows * sizeof(int), "the library's tokens");
    unsigned char *flags = xmalloc(c->rows, "the library's valid flags");
    bool *valid = xmalloc(c->rows * sizeof(bool), "the library's valid flags");
    CUDA_CHECK(cudaMemcpy(tokens, job->tokens, c->rows * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(flags, job->valid, c->rows * sizeof(bool), cudaMemcpyDeviceToHost));
    for (size_t r = 0; r < c->rows; r++)
        valid[r] = flags[r] == 1; /* a poisoned byte is neither 0 nor 1 */
    const draw_check drawn = verify_draw_by_rule(tokens, valid, job->rule, c->ref_idx, c->ref_k, c->rows);
    if (drawn.token_errors) {
        const size_t r = drawn.first_bad_row;
        const int rank = draw_rank_of(tokens[r], c->ref_idx + r * (size_t)c->ref_k, c->ref_k);
        printf("  (first bad row %zu: token %d, %s, at rank %d; the rule keeps ranks 0 to %d)\n", r, tokens[r],
               valid[r] ? "valid" : "not valid", rank, job->rule[r].kept - 1);
    }
    free(tokens);
    free(flags);
    free(valid);
    return drawn;
}

draw_check flashinfer_draw_verify(const topk_case *c, int k, const draw_run *s)
{
    library_draw_job job = library_draw_create(c, k, s);
    const draw_check drawn = library_draw_check(&job);
    library_draw_destroy(&job);
    return drawn;
}

bool flashinfer_draw_bench(const bench_settings *b, topk_case *c, int k, const draw_run *s,
                           const char *experiment, measurement *baseline)
{
    const char *why = flashinfer_draw_why_not(c->dtype, &s->host);
    if (why) {
        printf("  flashinfer's sampler left out: it %s.\n", why);
        return true;
    }
    library_draw_job job = library_draw_create(c, k, s);
    const draw_check drawn = library_draw_check(&job);
    /* Tokens only: the error columns stay 0, the index errors count the tokens outside the rule. */
    topk_row row = {.experiment = experiment, .c = c, .k = k, .launches = job.launches,
                    .bytes_per_row = flashinfer_draw_bytes_per_row(c->cols, k),
                    .check = {.index_errors = drawn.token_errors, .first_bad_row = drawn.first_bad_row,
                              .pass = drawn.pass},
                    .measured = {.variant = flashinfer_topk_variant.name}};
    bench_time(b, run_library_draw, &job, (double)c->rows * (double)c->cols * (double)dtype_size(c->dtype),
               baseline, &row.measured);
    topk_timing_row(&row, b->relative);
    if (drawn.near_boundary)
        printf("  (%zu of %zu rows drew the token after the kept ones, within %.0e of the cut)\n",
               drawn.near_boundary, c->rows, DRAW_MARGIN);
    if (drawn.rank_bound < DRAW_RANK_P)
        printf("  (its tokens' summed rank lies %.1f standard deviations from the kept distributions': "
               "a chance under %.0e)\n", drawn.rank_z, DRAW_RANK_P);
    if (b->csv)
        topk_csv_row(b->csv, &row);
    library_draw_destroy(&job);
    return row.check.pass;
}
