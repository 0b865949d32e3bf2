#include "inputs.h"

#include <math.h>
#include <string.h>

#include "host_threads.h"

static const char *const names[] = {[DIST_UNIFORM] = "uniform", [DIST_NORMAL] = "normal",
                                    [DIST_OUTLIERS] = "outliers", [DIST_ZIPF] = "zipf"};

const char *dist_name(input_dist dist) { return names[dist]; }

int dist_from_name(const char *name, input_dist *dist)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0) {
            *dist = (input_dist)i;
            return 0;
        }
    return -1;
}

/* splitmix64: tiny, fast, and good enough to feed a benchmark; its state is one integer. */
static uint64_t next_u64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 random bits. */
static double next_unit(uint64_t *state) { return (double)(next_u64(state) >> 11) * 0x1p-53; }

/* Box-Muller: one standard normal number per call (the second one is dropped for simplicity). */
static double next_normal(uint64_t *state)
{
    const double two_pi = 6.283185307179586;
    double u1 = 1.0 - next_unit(state); /* in (0, 1], so log(u1) is finite */
    double u2 = next_unit(state);
    return sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
}

typedef struct {
    float *x;
    size_t cols;
    input_spec spec;
    uint64_t seed;
} fill_job;

/* The generator's draws an element: the normal and zipf ones take two (Box-Muller). */
static uint64_t draws_an_element(input_dist dist) { return dist == DIST_NORMAL || dist == DIST_ZIPF ? 2 : 1; }

/* Zipf's trend: column c of a row of cols falls from hi at c = 0 to lo at the last, with log(1 + c). */
static double zipf_trend(input_spec spec, size_t c, size_t cols)
{
    return cols < 2 ? spec.hi : spec.hi - (spec.hi - spec.lo) * log1p((double)c) / log((double)cols);
}

/* Elements [begin, end): element i draws from the state its predecessors leave, seed + i x draws x
 * the generator's step (splitmix64 adds one step a draw), so a band starts there and its numbers are
 * the ones a single pass over the whole array gives. */
static void fill_band(void *ctx, size_t begin, size_t end)
{
    const fill_job *job = ctx;
    const input_spec spec = job->spec;
    uint64_t state = job->seed + (uint64_t)begin * draws_an_element(spec.dist) * 0x9E3779B97F4A7C15ull;
    const double width = spec.hi - spec.lo;
    for (size_t i = begin; i < end; i++) {
        if (spec.dist == DIST_NORMAL)
            job->x[i] = (float)(0.5 * (spec.lo + spec.hi) + width / 6.0 * next_normal(&state));
        else if (spec.dist == DIST_ZIPF)
            job->x[i] = (float)(zipf_trend(spec, i % job->cols, job->cols) + width / 10.0 * next_normal(&state));
        else
            job->x[i] = (float)(spec.lo + width * next_unit(&state));
    }
}

void fill_inputs_threads(float *x, size_t rows, size_t cols, input_spec spec, uint64_t seed, int threads)
{
    const size_t n = rows * cols;
    fill_job job = {x, cols, spec, seed};
    host_parallel_for(n, threads, fill_band, &job);
    if (spec.dist == DIST_OUTLIERS || spec.dist == DIST_ZIPF) {
        /* Where the draws above left the generator. */
        uint64_t state = seed + (uint64_t)n * draws_an_element(spec.dist) * 0x9E3779B97F4A7C15ull;
        const double width = spec.hi - spec.lo;
        const size_t per_row = cols / 1024 + 1, stretch = cols / per_row;
        for (size_t r = 0; r < rows; r++)
            for (size_t k = 0; k < per_row; k++) {
                const uint64_t draw = next_u64(&state);
                if (spec.dist == DIST_OUTLIERS)
                    x[r * cols + draw % cols] = (float)(spec.hi + width);
                else /* one raise in each stretch of the row, so none twice */
                    x[r * cols + k * stretch + draw % stretch] += (float)width;
            }
    }
}

void fill_inputs(float *x, size_t rows, size_t cols, input_spec spec, uint64_t seed)
{
    fill_inputs_threads(x, rows, cols, spec, seed, host_cpu_count());
}

/* Box-Muller's largest number: sqrt(-2 log u1) with u1 at its smallest, 2^-53. */
#define NORMAL_LARGEST 8.58

double input_largest_magnitude(input_spec spec)
{
    const double width = spec.hi - spec.lo, ends = fmax(fabs(spec.lo), fabs(spec.hi));
    switch (spec.dist) {
    case DIST_NORMAL:
        return fabs(0.5 * (spec.lo + spec.hi)) + width / 6.0 * NORMAL_LARGEST;
    case DIST_OUTLIERS:
        return fmax(ends, fabs(spec.hi + width));
    case DIST_ZIPF: /* the trend's ends, the noise's largest, one raise */
        return ends + width / 10.0 * NORMAL_LARGEST + width;
    default:
        return ends;
    }
}
