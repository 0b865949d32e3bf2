/* The frame of every stage's main(): flags, variants, CSV, GPU, ceiling at the start; the timing
 * tables of the shapes asked for; the CSV put in place and the exit status at the end. A stage's main()
 * is then its own experiments between stage_start() and stage_end(). A stage with flags of its own
 * starts in the two halves of stage_start(), stage_parse() and stage_open(), and between them refuses
 * what its variants cannot take, before the GPU is opened. */
#ifndef COMMON_STAGE_H
#define COMMON_STAGE_H

#include "bench.h"
#include "cli.h"
#include "gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a stage computes: the shared flags it takes and the ceiling its rows are compared with (the
 * copy ceiling for a softmax, which reads and writes; the read ceiling for a stage that only reads). */
typedef enum {
    STAGE_SOFTMAX_1D,   /* one softmax over n elements (--n, --sizes) */
    STAGE_SOFTMAX_ROWS, /* that, and a softmax per row (--rows/--cols) */
    STAGE_READS_ROWS,   /* rows it only reads (--rows/--cols) */
} stage_kind;

typedef struct {
    cli_options opts;
    stage_kind kind;
    gpu_info gpu;
    bench_settings bench;
} stage_context;

/* A softmax stage's start: stage_parse() with its variants' names and no flags of its own, then
 * stage_open() with the softmax CSV's columns. */
void stage_start(stage_context *st, int argc, char **argv, const char *about,
                 const softmax_variant *const *variants, int n_variants, stage_kind kind,
                 relative_mode relative);

/* The first half of the start: parses the kind's shared flags and the stage's own (`own`, or NULL;
 * `about` opens --help), checks them (cli_check, against what `own` says the inputs are drawn as,
 * float32 without it; then own's check), refuses a --variant not among names[0..n_names-1], and
 * opens --csv's temporary beside the file (outfile.h), which finds a path that cannot be written.
 * Each failure is one line and exit 2. The GPU is not touched, so a stage can refuse more of the
 * command line before stage_open(). */
void stage_parse(stage_context *st, int argc, char **argv, const char *about, const char *const *names,
                 int n_names, stage_kind kind, const cli_own_flags *own);

/* The second half: opens the GPU, measures the kind's ceiling, prints the device, and writes the
 * CSV's header with `columns`; timing rows are compared with their baseline as `relative` says. */
void stage_open(stage_context *st, int argc, char **argv, relative_mode relative, const char *columns);

/* Whether --variant chose the variant of this name: when --variant was not given, every one but the
 * exercise (EXERCISE_VARIANT), which runs only when named: its scaffold fails until it is done. */
bool stage_chosen(const stage_context *st, const char *name);

/* True when the user named no sizes and no shape: the stage runs its default experiments. */
bool stage_default_run(const stage_context *st);

/* Correctness table of the chosen variants of `list` (bench_accuracy). */
void stage_accuracy(const stage_context *st, const char *experiment, const softmax_variant *const *list,
                    int n_list, softmax_shape shape, const input_spec *inputs, int n_inputs, uint64_t seed);

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

/* Puts the CSV in place of --csv's file (a failed write: one line, exit 1), failed rows and all; then,
 * if any timed row failed verification, says so in one line and exits 1. A run that ends before this
 * leaves --csv's file as it was. */
int stage_end(stage_context *st, int failed);

#ifdef __cplusplus
}
#endif
#endif
