/* Validate, then benchmark: the loop every stage runs for each shape.
 *
 * A softmax here works on a rows x cols matrix, one softmax per row; a 1-D softmax over n
 * elements is the shape 1 x n. A case is one fresh input of a shape on the host and the GPU, with
 * its fp64 reference. For each variant the output is poisoned, the variant runs once, its output is
 * checked element by element against the reference, and only then (if asked) is it timed. */
#ifndef COMMON_BENCH_H
#define COMMON_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gpu.h"
#include "inputs.h"
#include "report.h"
#include "verify.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most variants a stage has. */
#define STAGE_MAX_VARIANTS 12

/* Every stage's exercise is a variant of this name, built from the stage's exercise.cu (the scaffold
 * the student completes) into ./run and from solution/exercise.cu into ./run_solution. */
#define EXERCISE_VARIANT "exercise"

typedef struct {
    size_t rows, cols;
} softmax_shape;

/* One way of computing y = softmax(x) on the GPU, row by row. */
typedef struct {
    const char *name;
    double bytes_per_elem; /* DRAM bytes per element its algorithm moves */
    /* Zeroed device scratch it needs at this shape (NULL: none): fewer bytes than the case's 16 an
     * element, so its size fits a size_t as case_create's do. */
    size_t (*workspace_bytes)(size_t rows, size_t cols);
    /* Enqueues the softmax on the default stream, checking every launch; returns the number of
     * kernel launches it made. */
    int (*run)(const float *x, float *y, size_t rows, size_t cols, void *workspace);
    /* The shapes it handles (NULL: all), and (`handles`) which, in words, for the error when
     * --variant asks it for another (NULL: all, or single_row_only, which the stage checks). */
    bool (*supports)(size_t rows, size_t cols);
    const char *handles;
    /* A library measured for comparison: its rows are verified and shown like any other,
     * but a FAIL of the library's is not a failure of the run. */
    bool library;
} softmax_variant;

/* `supports` of the 1-D variants: one softmax over the whole array, so one row. */
bool single_row_only(size_t rows, size_t cols);

typedef struct {
    size_t rows, cols, n; /* n = rows x cols */
    input_spec input;
    uint64_t seed;
    float *x_host, *y_host;
    double *ref;          /* fp64 reference softmax of x_host, row by row */
    float *x, *y;         /* device copies */
} softmax_case;

/* Everything a run shares, whatever its tables: timing settings, the ceiling rows are compared with,
 * the CSV (or NULL), and how timing rows are compared with the first variant timed on the same
 * input. */
typedef struct {
    int warmup, iters;
    double ceiling_gbps;
    FILE *csv;
    relative_mode relative;
} bench_settings;

/* Times `work` as the settings say (gpu_time), counting `bytes` a run for GB/s, into m, whose
 * variant is set. *baseline is the first row timed on the same input, which m is compared with;
 * while it has no variant (zeroed, before the first row), m becomes it. */
void bench_time(const bench_settings *s, gpu_work_fn work, void *ctx, double bytes, measurement *baseline,
                measurement *m);

/* One softmax row of a table and the CSV. */
typedef struct {
    const char *experiment; /* the CSV tag: "overflow", "timing", ... */
    size_t rows, cols;      /* a 1-D softmax over n elements is 1 x n */
    input_spec input;
    uint64_t seed;
    verify_result check;
    int launches;           /* kernel launches per softmax */
    double bytes_per_elem;  /* DRAM bytes per element the variant's algorithm moves */
    measurement measured;   /* GB/s: 8 bytes per element (x read once, y written once) / time */
} result_row;

/* Timing rows: size, variant, the timing, bytes/elem, launches, error, and (unless RELATIVE_NONE)
 * the comparison with the baseline. */
void softmax_timing_header(relative_mode relative);
void softmax_timing_row(const result_row *row, relative_mode relative);

/* The columns softmax_csv_row() writes. */
#define SOFTMAX_CSV_COLUMNS                                                                         \
    "experiment,variant,rows,cols,dist,lo,hi,seed,median_ms,min_ms,max_ms,gbps,pct_ceiling,"       \
    "ceiling_gbps,bytes_per_elem,launches,max_abs_err,max_rel_err,row_sum,nonfinite,result,"       \
    "baseline,baseline_ms"
void softmax_csv_row(FILE *csv, const result_row *row);

/* Draws x from `input` with `seed` (row by row), computes the reference, uploads x. The shape is
 * within cli_shape_fits() (cli.h), as every stage's and test's is. Dies with one line if the GPU or
 * the host lacks the memory. */
softmax_case case_create(softmax_shape shape, input_spec input, uint64_t seed);
void case_destroy(softmax_case *c);

/* Device scratch for `variant` at the case's shape, zero-filled (NULL when it needs none); release
 * with cudaFree. A variant may rely on the zeros, and must leave what it relies on zero again. */
void *workspace_alloc(const softmax_variant *variant, const softmax_case *c);

/* Poisons the output, runs `variant` once with the given workspace, and verifies every element
 * against the fp64 reference. Sets *launches to the number of kernel launches it made. */
verify_result case_check(softmax_case *c, const softmax_variant *variant, void *workspace, int *launches);

/* Runs `variant` once on the case and verifies it (case_check). With a baseline it then times it
 * (bench_time, which says what *baseline is); with none (NULL) it is a correctness row, not timed.
 * Prints the row in the matching table layout, appends it to the CSV, and returns it. */
result_row bench_variant(const bench_settings *s, softmax_case *c, const softmax_variant *variant,
                         const char *experiment, measurement *baseline);

/* Correctness table: every variant on every input spec at one shape (input k drawn with seed + k). */
void bench_accuracy(const bench_settings *s, const char *experiment,
                    const softmax_variant *const *variants, int n_variants, softmax_shape shape,
                    const input_spec *inputs, int n_inputs, uint64_t seed);

/* Timing table: for each shape one fresh input (shape i drawn with seed + i); every variant that
 * supports the shape is verified and then timed, and the first one that runs is the baseline of the
 * others. Returns the number of rows of the course's own variants that failed verification. */
int bench_timing(const bench_settings *s, const char *experiment,
                 const softmax_variant *const *variants, int n_variants, const softmax_shape *shapes,
                 int n_shapes, input_spec input, uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
