/* The frame of every stage's main(): flags, variants, GPU, ceiling, CSV at the start; the timing
 * tables of the shapes asked for; the CSV closed and the exit status at the end. A stage's main()
 * is then its own experiments between stage_start() and stage_end(). */
#ifndef COMMON_STAGE_H
#define COMMON_STAGE_H

#include "bench.h"
#include "cli.h"
#include "gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    cli_options opts;
    gpu_info gpu;
    bench_settings bench;
    const softmax_variant *variants[STAGE_MAX_VARIANTS]; /* those --variant chose */
    int n_variants;
} stage_context;

/* Parses the flags (`about` opens --help), picks the variants, opens the GPU, measures the copy
 * ceiling, prints the device and opens the CSV. A stage without row variants (rows_ok false)
 * refuses --rows. Every failure is one line and a non-zero exit. */
void stage_start(stage_context *st, int argc, char **argv, const char *about,
                 const softmax_variant *const *variants, int n_variants, bool rows_ok,
                 relative_mode relative);

/* The start every stage shares, softmax or top-K: opens the GPU, measures the ceiling (the copy
 * ceiling, or with `read_ceiling` the read ceiling), prints the device, and opens the CSV of
 * --csv with the given column names (or sets *csv to NULL). Returns the ceiling in GB/s. */
double stage_open_device(const cli_options *opts, gpu_info *gpu, bool read_ceiling, int argc,
                         char **argv, const char *csv_columns, FILE **csv);

/* Closes the CSV (if any); if any timed row failed verification, says so in one line and exits 1. */
void stage_finish(FILE *csv, const char *csv_path, int failed);

/* True when the user named no sizes and no shape: the stage runs its default experiments. */
bool stage_default_run(const stage_context *st);

/* The variants of `list` that --variant chose, in list order; returns how many. */
int stage_pick(const stage_context *st, const softmax_variant *const *list, int n_list,
               const softmax_variant **picked);

/* One softmax over n elements: times the chosen variants of `list` at the sizes of --n/--sizes, or
 * at default_sizes on a default run; does nothing when --rows/--cols were given. Returns the number
 * of rows that failed verification. */
int stage_timing_1d(const stage_context *st, const softmax_variant *const *list, int n_list,
                    const size_t *default_sizes, int n_default);

/* Softmax of every row: times the chosen variants of `list` at the shape of --rows/--cols, or at
 * default_shapes on a default run; does nothing when --n/--sizes were given. */
int stage_timing_rows(const stage_context *st, const char *experiment,
                      const softmax_variant *const *list, int n_list,
                      const softmax_shape *default_shapes, int n_default);

/* Closes the CSV; if any timed row failed verification, says so in one line and exits 1. */
int stage_end(stage_context *st, int failed);

#ifdef __cplusplus
}
#endif
#endif
