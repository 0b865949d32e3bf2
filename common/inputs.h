/* Seeded input generators. Every check draws fresh inputs from a seed, so a run is reproducible
 * and a different seed is a different test. Never zeros: zeros hide unwritten outputs. */
#ifndef COMMON_INPUTS_H
#define COMMON_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DIST_UNIFORM,  /* uniform in [lo, hi]                                                   */
    DIST_NORMAL,   /* normal with mean (lo+hi)/2 and standard deviation (hi-lo)/6            */
    DIST_OUTLIERS, /* uniform in [lo, hi], plus one logit in 1024 (at least one per row) set
                      to hi + (hi-lo), so a few entries carry most of the probability         */
    DIST_ZIPF,     /* a vocabulary in frequency order, as a language model's logits: column c
                      at hi - (hi-lo) log(1+c) / log(cols), plus normal noise of sd (hi-lo)/10,
                      and one logit in each stretch of about 1024 columns raised by hi-lo    */
} input_dist;

typedef struct {
    input_dist dist;
    double lo, hi;
} input_spec;

const char *dist_name(input_dist dist);
/* Returns 0 and sets *dist when name is "uniform", "normal", "outliers" or "zipf"; -1 otherwise. */
int dist_from_name(const char *name, input_dist *dist);

/* Fills rows x cols logits (row-major). The same seed gives the same numbers on every machine. */
void fill_inputs(float *x, size_t rows, size_t cols, input_spec spec, uint64_t seed);

/* The largest magnitude fill_inputs can draw from spec (before rounding to float32): past the
 * largest value of the type the inputs are stored in, some would come out infinite. */
double input_largest_magnitude(input_spec spec);
/* The same on `threads` threads (fill_inputs: one a CPU core, host_threads.h): the same numbers on
 * any count. */
void fill_inputs_threads(float *x, size_t rows, size_t cols, input_spec spec, uint64_t seed, int threads);

#ifdef __cplusplus
}
#endif
#endif
