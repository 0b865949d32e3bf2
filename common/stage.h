/* The frame of every stage's main(): flags, variants, GPU, ceiling, CSV at the start; the timing
 * table of the sizes asked for; the CSV closed and the exit status at the end. A stage's main()
 * is then its own experiment between stage_start() and stage_end(). */
#ifndef COMMON_STAGE_H
#define COMMON_STAGE_H

#include "bench.h"
#include "cli.h"
#include "gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STAGE_MAX_VARIANTS 8

typedef struct {
    cli_options opts;
    gpu_info gpu;
    bench_settings bench;
    const softmax_variant *variants[STAGE_MAX_VARIANTS]; /* those --variant chose */
    int n_variants;
} stage_context;

/* Parses the flags (`about` opens --help), picks the variants, opens the GPU, measures the copy
 * ceiling, prints the device and opens the CSV. Every failure is one line and a non-zero exit. */
void stage_start(stage_context *st, int argc, char **argv, const char *about,
                 const softmax_variant *const *variants, int n_variants, relative_mode relative);

/* True when the user named no sizes: the stage runs its default experiment. */
bool stage_default_run(const stage_context *st);

/* The timing table: the sizes from --n/--sizes, or `default_sizes`, on --range/--dist, every
 * variant verified and then timed. Returns the number of rows that failed verification. */
int stage_timing(const stage_context *st, const size_t *default_sizes, int n_default);

/* Closes the CSV; if any timed row failed verification, says so in one line and exits 1. */
int stage_end(stage_context *st, int failed);

#ifdef __cplusplus
}
#endif
#endif
