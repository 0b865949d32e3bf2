/* What a run prints: an aligned table on stdout, and optionally the same rows as CSV whose header
 * names the GPU, the CUDA versions and the date, so every number can be traced to its run. */
#ifndef COMMON_REPORT_H
#define COMMON_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gpu.h"
#include "inputs.h"
#include "verify.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a timing row is compared with the first variant timed at the same size (the baseline). */
typedef enum {
    RELATIVE_NONE,
    RELATIVE_OVERHEAD, /* extra time over the baseline: +45% means 1.45x its time */
    RELATIVE_SPEEDUP,  /* baseline time / this time: 2.00x means twice as fast    */
} relative_mode;

typedef struct {
    const char *experiment; /* the CSV tag: "overflow", "timing", ... */
    const char *variant;
    size_t rows, cols;      /* a 1-D softmax over n elements is 1 x n */
    input_spec input;
    uint64_t seed;
    verify_result check;
    int launches;           /* kernel launches per softmax */
    double bytes_per_elem;  /* DRAM bytes per element the variant's algorithm moves */
    bool timed;             /* the fields below are set only when timed */
    gpu_timing time;
    double gbps;            /* effective: 8 bytes per element (x read once, y written once) / time */
    double pct_of_ceiling;  /* gbps / ceiling_gbps x 100 */
    double ceiling_gbps;
    const char *baseline;   /* the variant this row is compared with (NULL: none)   */
    double baseline_ms;     /* its median at the same size                          */
} result_row;

/* "1000" -> "1K", 100000000 -> "100M", 4097 -> "4097". */
void format_count(size_t n, char *buf, size_t len);

/* The size column: "1M" for one softmax over 1M elements, "8192x50257" for rows. */
void format_shape(size_t rows, size_t cols, char *buf, size_t len);

void report_device(const gpu_info *gpu, const char *ceiling_name, double ceiling_gbps);

/* Correctness rows: size, input, sum of outputs, non-finite count, error, PASS/FAIL. */
void report_accuracy_header(void);
void report_accuracy_row(const result_row *row);

/* Timing rows: size, variant, median/min/max ms, GB/s, % of ceiling, bytes/elem, launches, error,
 * and (unless RELATIVE_NONE) the comparison with the baseline. */
void report_timing_header(relative_mode relative);
void report_timing_row(const result_row *row, relative_mode relative);

/* The columns report_csv_row() writes. */
#define SOFTMAX_CSV_COLUMNS                                                                         \
    "experiment,variant,rows,cols,dist,lo,hi,seed,median_ms,min_ms,max_ms,gbps,pct_ceiling,"       \
    "ceiling_gbps,bytes_per_elem,launches,max_abs_err,max_rel_err,row_sum,nonfinite,result,"       \
    "baseline,baseline_ms"

/* Opens FILE for writing and writes the header: '#' lines naming GPU, CUDA runtime and driver,
 * date, ceiling and the command line, then the line of column names. Cannot open: one line, exit 2. */
FILE *report_csv_open(const char *path, const gpu_info *gpu, const char *ceiling_name,
                      double ceiling_gbps, int argc, char **argv, const char *columns);

/* NaN as "nan" whatever its sign bit (x86 makes inf/inf a negative NaN), for printing. */
double unsigned_nan(double v);
void report_csv_row(FILE *csv, const result_row *row);
/* Closes the file; a failed write or close is one line and exit 1. */
void report_csv_close(FILE *csv, const char *path);

#ifdef __cplusplus
}
#endif
#endif
