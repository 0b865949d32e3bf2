#include "topk_reference.h"

#include <math.h>
#include <stdlib.h>

#include "../../common/host_threads.h"
#include "../../common/verify.h"

typedef struct {
    float x;
    int i;
} ranked;

/* a ranks before b: a larger logit, or an equal one at a lower index. */
static bool ranks_before(ranked a, ranked b) { return a.x > b.x || (a.x == b.x && a.i < b.i); }

static int by_rank(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    return ranks_before(*a, *b) ? -1 : ranks_before(*b, *a) ? 1 : 0;
}

/* heap[0] is the worst of the k kept so far; each parent ranks after its children. */
static void sift_down(ranked *heap, int n, int at)
{
    for (;;) {
        int worst = at;
        const int l = 2 * at + 1, r = l + 1;
        if (l < n && ranks_before(heap[worst], heap[l]))
            worst = l;
        if (r < n && ranks_before(heap[worst], heap[r]))
            worst = r;
        if (worst == at)
            return;
        const ranked t = heap[at];
        heap[at] = heap[worst];
        heap[worst] = t;
        at = worst;
    }
}

typedef struct {
    const float *x;
    size_t cols;
    int k;
    int *idx;
    double *prob;
} reference_job;

/* Rows [begin, end) of the reference, each on its own: a band's answer is the same on any thread. */
static void reference_band(void *ctx, size_t begin, size_t end)
{
    const reference_job *job = ctx;
    const float *x = job->x;
    const size_t cols = job->cols;
    const int k = job->k;
    int *idx = job->idx;
    double *prob = job->prob;
    ranked *heap = malloc((size_t)k * sizeof *heap);
    for (size_t r = begin; r < end; r++) {
        const float *row = x + r * cols;
        double m = -INFINITY;
        for (size_t c = 0; c < cols; c++)
            m = fmax(m, row[c]);
        double d = 0.0;
        for (size_t c = 0; c < cols; c++)
            d += exp(row[c] - m);

        /* The k best so far in a heap with the worst on top: most elements lose to it at once. */
        int n = 0;
        for (size_t c = 0; c < cols; c++) {
            const ranked e = {row[c], (int)c};
            if (n < k) {
                heap[n++] = e;
                for (int at = n - 1; at > 0 && ranks_before(heap[(at - 1) / 2], heap[at]); at = (at - 1) / 2) {
                    const ranked t = heap[at];
                    heap[at] = heap[(at - 1) / 2];
                    heap[(at - 1) / 2] = t;
                }
            } else if (ranks_before(e, heap[0])) {
                heap[0] = e;
                sift_down(heap, n, 0);
            }
        }
        qsort(heap, (size_t)n, sizeof *heap, by_rank);
        for (int j = 0; j < k; j++) {
            idx[r * (size_t)k + j] = heap[j].i;
            prob[r * (size_t)k + j] = exp(heap[j].x - m) / d;
        }
    }
    free(heap);
}

void reference_topk_threads(const float *x, size_t rows, size_t cols, int k, int *idx, double *prob, int threads)
{
    reference_job job = {x, cols, k, idx, prob};
    host_parallel_for(rows, threads, reference_band, &job);
}

void reference_topk(const float *x, size_t rows, size_t cols, int k, int *idx, double *prob)
{
    reference_topk_threads(x, rows, cols, k, idx, prob, host_cpu_count());
}

topk_check verify_topk(const int *idx, const float *prob, int k, const int *ref_idx,
                       const double *ref_prob, int ref_k, size_t rows)
{
    topk_check v = {0};
    bool first = true;
    for (size_t r = 0; r < rows; r++)
        for (int j = 0; j < k; j++) {
            const size_t at = r * (size_t)k + j, ref_at = r * (size_t)ref_k + j;
            const bool index_ok = idx[at] == ref_idx[ref_at];
            const bool prob_ok = verify_element(prob[at], ref_prob[ref_at], &v.max_abs_err, &v.max_rel_err, &v.nonfinite);
            v.index_errors += !index_ok;
            v.prob_failures += !prob_ok;
            if ((!index_ok || !prob_ok) && first) {
                v.first_bad_row = r;
                first = false;
            }
        }
    if (v.nonfinite)
        v.max_abs_err = v.max_rel_err = NAN;
    v.pass = v.index_errors == 0 && v.prob_failures == 0;
    return v;
}
