/* Validate, then benchmark, for top-K of a softmax (stage 06): the top-K counterpart of bench.h.
 *
 * A case is R rows of V logits (of one dtype) on the host and the GPU with its fp64 reference to a
 * depth ref_k; a run with any k <= ref_k is checked against the first k of it (topk_reference.h). For each
 * variant the outputs are poisoned, the variant runs once and is verified, and only then timed.
 * GB/s counts the bytes of the logits, read once: the least any top-K must move. Rows are timed by
 * bench_time() and printed through report.c, as the softmax rows are. */
#ifndef TOPK_BENCH_H
#define TOPK_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../../common/bench.h"
#include "dtype.h"
#include "../../common/gpu.h"
#include "npy.h"
#include "row_order.h"
#include "topk_reference.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One way of computing the top-K of every row's softmax on the GPU. */
typedef struct {
    const char *name;
    /* DRAM bytes its algorithm moves per row, for the table */
    double (*bytes_per_row)(size_t rows, size_t cols, int k, logit_dtype dtype);
    /* Zeroed device scratch it needs (NULL: none), asked only where `fits` holds, which keeps its
     * size within a size_t; it must leave what it relies on zero again. */
    size_t (*workspace_bytes)(size_t rows, size_t cols, int k, logit_dtype dtype);
    /* Enqueues the top-K on the default stream, writing rows x k indices and probabilities, best
     * first; checks every launch; returns the number of kernel launches (a library call such as
     * CUB's sort counted as one, whatever it launches inside). */
    int (*run)(const void *x, logit_dtype dtype, size_t rows, size_t cols, int k, int *indices,
               float *probs, void *workspace);
    /* Its limits, stated so that a command line can be checked before the GPU is touched: */
    int max_k;        /* the largest K it handles (K <= cols always) */
    bool sixteen_bit; /* it takes bf16 and fp16 logits, not only float32 */
    /* The shapes it handles (NULL: all), decided on the host alone. */
    bool (*fits)(size_t rows, size_t cols);
    /* Why the open GPU cannot run it, as a phrase ("needs ..."), or NULL when it can (the callback
     * NULL: every GPU the course supports runs it). */
    const char *(*why_not_here)(void);
    /* Top-K alone, as a library gives it: each row's K indices in any order, and their logits
     * (float32) where the probabilities go. Checked by sorting them (larger logit first, then the
     * lower index): the indices against the reference's, each logit against the input's. */
    bool logits_only;
} topk_variant;

/* Every K up to cols: the max_k of a variant with no limit of its own. */
#define TOPK_ANY_K 0x7fffffff

/* The columns topk_csv_row() writes. */
#define TOPK_CSV_COLUMNS                                                                           \
    "experiment,variant,dtype,rows,cols,k,dist,lo,hi,seed,median_ms,min_ms,max_ms,gbps,"            \
    "pct_ceiling,ceiling_gbps,bytes_per_row,launches,index_errors,max_abs_err,max_rel_err,"         \
    "nonfinite,result,baseline,baseline_ms"

typedef struct {
    size_t rows, cols;
    logit_dtype dtype;
    bool from_file;      /* logits from --input (input and seed then mean nothing) */
    input_spec input;
    uint64_t seed;
    row_order order;     /* each row as drawn, or sorted ascending */
    int ref_k;           /* the depth of the reference: any k up to it can be checked */
    float *x_host;       /* the logits as floats: exactly the values of x's dtype */
    int *ref_idx;        /* rows x ref_k */
    double *ref_prob;
    void *x;             /* the logits on the device, in their dtype */
    int *idx;            /* device outputs, room for rows x ref_k */
    float *prob;
    int *idx_host;       /* the last checked run's outputs, rows x k */
    float *prob_host;
} topk_case;

/* Random logits drawn from `input` with `seed`, rounded to dtype; reference to depth ref_k (<= cols).
 * rows x cols is within cli_shape_fits() (cli.h), as every stage's and test's is. Dies with one
 * line if the GPU or the host lacks the memory. */
topk_case topk_case_create(size_t rows, size_t cols, logit_dtype dtype, input_spec input, uint64_t seed, int ref_k);
/* The same with each row then put in `order` (row_order.h). */
topk_case topk_case_create_ordered(size_t rows, size_t cols, logit_dtype dtype, input_spec input, uint64_t seed,
                                   int ref_k, row_order order);
/* The logits of a .npy file (npy.h), whose shape stage 06 checks with cli_shape_fits() first. */
topk_case topk_case_from_npy(const npy_logits *a, int ref_k);
/* After a test edits x_host: rounds it to the dtype again, recomputes the reference, uploads x. */
void topk_case_refresh(topk_case *c);
void topk_case_destroy(topk_case *c);
/* The first `rows` rows of c (at most c->rows) as a case of their own, sharing c's arrays: row r's
 * logits, reference and outputs sit at the same place in both. The uniform and normal generators
 * draw element i from the seed and i alone, so the CSV's seed with the prefix's shape rebuilds its
 * logits (not the outliers', placed after every row is drawn). It lives as long as c and is never
 * destroyed itself. */
topk_case topk_case_prefix(const topk_case *c, size_t rows);

void *topk_workspace_alloc(const topk_variant *v, const topk_case *c, int k);

/* Why `v` cannot take top-k of rows x cols logits of dtype by its stated limits, decided on the
 * host alone: a phrase for "<variant> ..." such as "handles K up to 32, not 50", written to buf, or
 * NULL when it can. */
const char *topk_refusal(const topk_variant *v, size_t rows, size_t cols, int k, logit_dtype dtype, char *buf,
                         size_t len);
/* Whether `v` handles k and the case's shape and dtype (topk_refusal), on this GPU (why_not_here). */
bool topk_supports(const topk_variant *v, const topk_case *c, int k);

/* Poisons the case's top-k outputs on the GPU (gpu_poison), before a run that must write them. */
void topk_case_poison(topk_case *c, int k);
/* Copies the top-k answer a run wrote to idx_host/prob_host and verifies it. */
topk_check topk_case_verify(topk_case *c, int k);
/* Poisons the outputs, runs `v` once with top-k, copies the answer to idx_host/prob_host and
 * verifies it (a logits_only variant's, sorted first, its logits checked and replaced by the
 * reference's probabilities). *launches gets the number of kernel launches. */
topk_check topk_case_check(topk_case *c, const topk_variant *v, int k, void *workspace, int *launches);

/* One top-K row of a table and the CSV; always timed. */
typedef struct {
    const char *experiment;
    const topk_case *c;
    int k;
    topk_check check;
    int launches;
    double bytes_per_row;
    measurement measured; /* GB/s: the logits' bytes, read once / time */
} topk_row;

/* The table: shape, dtype, K, variant, the timing, KB/row, launches, index errors, error, and
 * (unless RELATIVE_NONE) the comparison with the baseline. */
void topk_timing_header(relative_mode relative);
void topk_timing_row(const topk_row *row, relative_mode relative);
void topk_csv_row(FILE *csv, const topk_row *row);

/* Verifies `v` on the case with top-k and then times it (bench_time, which says what *baseline
 * is). Prints the row, appends it to the CSV. */
topk_row topk_bench_variant(const bench_settings *s, topk_case *c, const topk_variant *v, int k,
                            const char *experiment, measurement *baseline);

/* Every variant of the list that supports the case and k, verified and timed; the first is the
 * baseline of the others. Returns how many rows failed verification. */
int topk_bench_all(const bench_settings *s, topk_case *c, const topk_variant *const *variants, int n,
                   int k, const char *experiment);

#ifdef __cplusplus
}
#endif
#endif
