/* What a run prints: an aligned table on stdout, and optionally the same rows as CSV whose header
 * names the GPU, the CUDA versions, the date and the code, so every number can be traced to its run.
 *
 * The timing columns, the comparison with the baseline and their CSV fields are the same in every
 * table and are written here; each kind of table (softmax in bench.h, a stage's own in its folder)
 * formats its own columns and hands them to report_timing_row() and report_csv_row(). */
#ifndef COMMON_REPORT_H
#define COMMON_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a timing row is compared with the first variant timed on the same input (the baseline). */
typedef enum {
    RELATIVE_NONE,
    RELATIVE_OVERHEAD, /* extra time over the baseline: +45% means 1.45x its time */
    RELATIVE_SPEEDUP,  /* baseline time / this time: 2.00x means twice as fast    */
} relative_mode;

/* What every table row has, of any kind: the variant, and when it was timed, how fast it ran
 * against the ceiling and against the baseline. */
typedef struct {
    const char *variant;
    bool timed;            /* the fields below are set only when timed */
    gpu_timing time;
    double gbps;           /* the bytes any kernel of the kind must move, over the median time */
    double pct_of_ceiling; /* gbps / ceiling_gbps x 100 */
    double ceiling_gbps;
    const char *baseline;  /* the variant this row is compared with (NULL: none) */
    double baseline_ms;    /* its median on the same input */
} measurement;

/* How one kind of timing table lays out the columns every timing table has. */
typedef struct {
    const char *shape_heading; /* the first column: the shape, as format_shape() writes it */
    int gbps_width;            /* the GB/s column */
    const char *pct_heading;   /* the % of the ceiling column: "% ceil", "% read" */
    int relative_width;        /* the last column: the comparison with the baseline */
} timing_layout;

/* "1000" -> "1K", 100000000 -> "100M", 4097 -> "4097". */
void format_count(size_t n, char *buf, size_t len);

/* The size column: "1M" for one softmax over 1M elements, "8192x50257" for rows. */
void format_shape(size_t rows, size_t cols, char *buf, size_t len);

void report_device(const gpu_info *gpu, const char *ceiling_name, double ceiling_gbps);

/* NaN as "nan" whatever its sign bit (x86 makes inf/inf a negative NaN), for printing. */
double unsigned_nan(double v);

/* A check's result as the tables and CSVs write it: "PASS" or "FAIL". */
const char *verdict(bool pass);

/* A timing table's headings: the shape, the kind's own headings `before` the timing, median, min
 * and max ms, GB/s, % of the ceiling, its own headings `after`, and the comparison with the
 * baseline (none for RELATIVE_NONE). `before` and `after` are formatted by the kind, each of their
 * columns opening with a space. */
void report_timing_header(const timing_layout *layout, relative_mode relative, const char *before,
                          const char *after);

/* A timed row in the same layout: `shape`, `before`, the measurement, `after`, and the comparison
 * ("base" for a row with no baseline). A row above the ceiling also gets a warning on stderr: the
 * timing or the byte count is wrong. */
void report_timing_row(const timing_layout *layout, relative_mode relative, const char *shape,
                       const char *before, const measurement *m, const char *after);

/* The CSV's header: '#' lines naming GPU, CUDA runtime and driver, date, the code (`git describe`
 * at build time, or make's CODE=...; "unknown" without either), the hash of the stage's sources
 * ("none" outside a stage's build), ceiling and the command line (each argument escaped as
 * quote_arg() does, so that it stays one line), then the line of column names. */
void report_csv_header(FILE *csv, const gpu_info *gpu, const char *ceiling_name, double ceiling_gbps, int argc,
                       char **argv, const char *columns);

/* A CSV line: the kind's own fields `before` and `after` (each field ending in a comma) around
 * median_ms,min_ms,max_ms,gbps,pct_ceiling,ceiling_gbps (empty when not timed), then baseline and
 * baseline_ms (empty when none). */
void report_csv_row(FILE *csv, const char *before, const measurement *m, const char *after);

#ifdef __cplusplus
}
#endif
#endif
