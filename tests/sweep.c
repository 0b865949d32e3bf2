/* The random sweep's cases, and the loop that runs them (sweep.h).
 *
 * How a case is drawn, from its own stream of random numbers:
 *  - a length (n, a row's length, or a top-K row's V) from 1 to 2^24: log-uniform up to 2^20 in 63
 *    draws of 64 and from 2^20 to 2^24 otherwise, so that most cases are short and a stage's
 *    cases add up to 2^27 to 2^28 logits; a quarter of the lengths are moved to a prime, a quarter
 *    made odd, one in eight rounded down to a power of two. The first three cases of a stage are
 *    the ends: 1, 2^24, and the largest prime below 2^24.
 *  - rows: one, or (matrices: half the cases; top-K: all) log-uniform up to 2^20 logits in all
 *    (top-K: and up to 300 rows);
 *  - a range of the stage's list, and a seed for the logits;
 *  - ties, in a quarter of the cases: every logit rounded to one of 1, 2, 3, 4, 16 or 256 levels;
 *  - masked logits, in a quarter of the cases: a fraction from 0 to 1 of every row set to -inf,
 *    scattered or as one run, one logit a row always kept (a row of nothing but -inf has no
 *    softmax);
 *  - top-K: the dtype, and K from 1 to min(V, 1024), log-uniform, or the largest in a quarter of
 *    the cases. */
#include "sweep.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../06_fused_topk/fast/fast.h"
#include "topk_test.h"

#define DEFAULT_SEED 2026
#define DEFAULT_CASES 1000
#define LONGEST ((size_t)1 << 24)      /* the longest row, or softmax over n */
#define LONG ((size_t)1 << 20)         /* 63 lengths in 64 are at most this */
#define MATRIX_LOGITS ((size_t)1 << 20) /* a case of several rows has at most this many logits */
#define TOPK_MOST_ROWS 300
#define FORCED_CASES 3                 /* the ends of the range, one row each */
#define REPORTED_FAILURES 5            /* a variant's failures reported one by one; the rest are counted */

/* ---- Random numbers: splitmix64, a stream a case ------------------------------------------------- */

typedef struct {
    uint64_t state;
} stream;

static uint64_t next(stream *r)
{
    uint64_t z = r->state += 0x9E3779B97F4A7C15ull;
    z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ z >> 27) * 0x94D049BB133111EBull;
    return z ^ z >> 31;
}

/* Uniform in [0, 1). */
static double unit(stream *r) { return (double)(next(r) >> 11) * 0x1p-53; }

/* Uniform in [0, n), n >= 1. */
static size_t below(stream *r, size_t n) { return (size_t)(next(r) % n); }

/* In [lo, hi], 1 <= lo <= hi, every doubling as likely as any other. */
static size_t log_uniform(stream *r, size_t lo, size_t hi)
{
    const double v = exp(log((double)lo) + unit(r) * (log((double)hi + 1.0) - log((double)lo)));
    return v < (double)lo ? lo : v > (double)hi ? hi : (size_t)v;
}

/* ---- Lengths ------------------------------------------------------------------------------------ */

static bool is_prime(size_t n)
{
    if (n < 2)
        return false;
    for (size_t d = 2; d * d <= n; d++)
        if (n % d == 0)
            return false;
    return true;
}

/* The first prime from n up to `most`, else the last one below n; n itself if there is none. */
static size_t prime_near(size_t n, size_t most)
{
    for (size_t p = n; p <= most; p++)
        if (is_prime(p))
            return p;
    for (size_t p = n; p >= 2; p--)
        if (is_prime(p))
            return p;
    return n;
}

static size_t draw_length(stream *r, size_t most)
{
    const size_t long_enough = most < LONG ? most : LONG;
    const size_t n = below(r, 64) ? log_uniform(r, 1, long_enough) : log_uniform(r, long_enough, most);
    size_t power = 1;
    switch (below(r, 8)) {
    case 0:
    case 1:
        return prime_near(n, most);
    case 2:
    case 3:
        return n % 2 ? n : n < most ? n + 1 : n - 1;
    case 4:
        while (2 * power <= n)
            power *= 2;
        return power;
    default:
        return n;
    }
}

/* Case `index`'s length: the ends of the range first, then drawn. */
static size_t length_of_case(stream *r, size_t index)
{
    switch (index) {
    case 0:
        return 1;
    case 1:
        return LONGEST;
    case 2:
        return prime_near(LONGEST, LONGEST);
    default:
        return draw_length(r, LONGEST);
    }
}

/* Rows of `cols` logits: up to `most` of them within MATRIX_LOGITS, one for the forced cases. */
static size_t draw_rows(stream *r, size_t index, size_t cols, size_t most)
{
    const size_t fit = MATRIX_LOGITS / cols;
    return index < FORCED_CASES || fit < 2 ? 1 : log_uniform(r, 1, fit < most ? fit : most);
}

/* ---- Ties and masked logits --------------------------------------------------------------------- */

typedef struct {
    int levels;    /* > 0: every logit rounded to one of this many evenly spaced values */
    double masked; /* the fraction of every row set to -inf */
    bool in_a_run; /* the masked logits of a row are one run, not scattered */
} edits;

static edits draw_edits(stream *r)
{
    static const int levels[] = {1, 2, 3, 4, 16, 256};
    edits e = {0};
    if (below(r, 4) == 0)
        e.levels = levels[below(r, sizeof levels / sizeof levels[0])];
    if (below(r, 4) == 0) {
        e.masked = 1.0 - unit(r);
        e.in_a_run = below(r, 2);
    }
    return e;
}

static bool edited(edits e) { return e.levels || e.masked > 0; }

/* Rounds the logits drawn from `in` to the levels, then masks; one logit of every row stays. */
static void apply_edits(float *x, size_t rows, size_t cols, input_spec in, edits e, stream *r)
{
    if (e.levels) {
        const double step = (in.hi - in.lo) / (e.levels > 1 ? e.levels - 1 : 1);
        for (size_t i = 0; i < rows * cols; i++)
            x[i] = e.levels > 1 ? (float)(in.lo + round((x[i] - in.lo) / step) * step) : (float)in.lo;
    }
    if (e.masked == 0)
        return;
    for (size_t row = 0; row < rows; row++) {
        float *xr = x + row * cols;
        if (e.in_a_run) {
            const size_t length = (size_t)(e.masked * (double)(cols - 1)), start = below(r, cols - length + 1);
            for (size_t c = start; c < start + length; c++)
                xr[c] = -INFINITY;
        } else {
            const size_t keep = below(r, cols);
            for (size_t c = 0; c < cols; c++)
                if (c != keep && unit(r) < e.masked)
                    xr[c] = -INFINITY;
        }
    }
}

/* ", 4 levels, 30% masked in a run" */
static void describe_edits(char *buf, size_t len, edits e)
{
    int at = 0;
    buf[0] = '\0';
    if (e.levels)
        at = snprintf(buf, len, ", %d level%s", e.levels, e.levels > 1 ? "s" : "");
    if (e.masked > 0)
        snprintf(buf + at, len - (size_t)at, ", %.3g%% masked %s", 100.0 * e.masked,
                 e.in_a_run ? "in a run" : "scattered");
}

/* ---- A run of the sweep ------------------------------------------------------------------------- */

typedef struct {
    int stage;
    uint64_t seed;
    size_t first, end; /* the cases to run */
    bool verbose;
    size_t index;      /* the case running */
    char what[256];    /* its description */
    double logits;
    int n_variants;    /* and for each: */
    const char *names[STAGE_MAX_VARIANTS];
    bool library[STAGE_MAX_VARIANTS]; /* a library's failures are counted apart: not the course's */
    size_t runs[STAGE_MAX_VARIANTS], failed[STAGE_MAX_VARIANTS];
    size_t failures;   /* the course's variants' failed runs */
} sweep;

/* A whole number from the environment (digits only: strtoull would take "-1" as 2^64 - 1), or
 * `otherwise` when the variable is not set. */
static uint64_t env_number(const char *name, uint64_t otherwise)
{
    const char *text = getenv(name);
    if (!text || !*text)
        return otherwise;
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(text, &end, 10);
    cr_assert(*text >= '0' && *text <= '9' && *end == '\0' && errno == 0, "%s must be a whole number, not '%s'", name,
              text);
    return v;
}

/* Reads the environment (a bad value fails the test, GPU or not), opens the GPU (or skips) and
 * prints the line a run is replayed from. The caller then names the variants (add_variant). */
static sweep sweep_start(int stage)
{
    sweep s = {.stage = stage, .seed = env_number("SWEEP_SEED", DEFAULT_SEED)};
    s.end = env_number("SWEEP_CASES", DEFAULT_CASES);
    cr_assert(s.end > 0, "SWEEP_CASES must be 1 or more");
    s.verbose = env_number("SWEEP_VERBOSE", 0) != 0;
    const bool one_case = getenv("SWEEP_CASE") && *getenv("SWEEP_CASE");
    if (one_case) {
        s.first = env_number("SWEEP_CASE", 0);
        s.end = s.first + 1;
    }
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    if (one_case)
        fprintf(stderr, "sweep: stage %d, seed %llu, case %zu alone\n", stage, (unsigned long long)s.seed, s.first);
    else
        fprintf(stderr, "sweep: stage %d, seed %llu, %zu cases\n", stage, (unsigned long long)s.seed, s.end);
    return s;
}

static void add_variant(sweep *s, const char *name, bool library)
{
    s->names[s->n_variants] = name;
    s->library[s->n_variants++] = library;
}

/* Case `index`'s own stream: the same numbers whichever cases run before it. */
static stream case_stream(const sweep *s, size_t index)
{
    stream r = {s->seed};
    r.state = next(&r) ^ (uint64_t)s->stage << 56 ^ index;
    return r;
}

static void begin_case(sweep *s, size_t index, size_t rows, size_t cols)
{
    s->index = index;
    s->logits += (double)rows * (double)cols;
    if (s->verbose)
        fprintf(stderr, "sweep: stage %d, case %zu: %s\n", s->stage, index, s->what);
}

/* Variant v's result on the case: counted, and (the course's, up to REPORTED_FAILURES of each, so
 * that one variant's many do not hide another's) reported with all it takes to run it again. */
static void note(sweep *s, int v, bool pass, const char *result)
{
    s->runs[v]++;
    if (pass)
        return;
    s->failed[v]++;
    if (s->library[v])
        return;
    s->failures++;
    if (s->failed[v] <= REPORTED_FAILURES)
        cr_expect_fail("sweep: stage %d, case %zu (SWEEP_SEED=%llu SWEEP_CASE=%zu): %s on %s: %s", s->stage, s->index,
                       (unsigned long long)s->seed, s->index, s->names[v], s->what, result);
}

/* The runs of every variant and how many failed, in one line. */
static void sweep_finish(const sweep *s)
{
    char tally[512];
    int at = 0;
    for (int v = 0; v < s->n_variants && at < (int)sizeof tally; v++)
        at += snprintf(tally + at, sizeof tally - (size_t)at, "%s%s %zu of %zu%s", v ? ", " : "", s->names[v],
                       s->failed[v], s->runs[v], s->library[v] ? " (a library: not counted)" : "");
    fprintf(stderr, "sweep: stage %d, seed %llu: %zu cases, %.3g logits; failed runs: %s\n", s->stage,
            (unsigned long long)s->seed, s->end - s->first, s->logits, tally);
    if (s->failures)
        cr_expect_fail("sweep: stage %d, seed %llu: %zu runs failed in all (%s); the first %d of each are above",
                       s->stage, (unsigned long long)s->seed, s->failures, tally, REPORTED_FAILURES);
}

/* ---- The softmax stages ------------------------------------------------------------------------- */

void sweep_softmax(const softmax_sweep *sw)
{
    sweep s = sweep_start(sw->stage);
    for (int v = 0; v < sw->n_variants; v++)
        add_variant(&s, sw->variants[v]->name, sw->variants[v]->library);
    for (size_t i = s.first; i < s.end; i++) {
        stream r = case_stream(&s, i);
        softmax_shape shape = {1, length_of_case(&r, i)};
        if (sw->matrices && below(&r, 2))
            shape.rows = draw_rows(&r, i, shape.cols, MATRIX_LOGITS);
        const input_spec in = sw->inputs[below(&r, (size_t)sw->n_inputs)];
        const edits e = draw_edits(&r);
        const uint64_t seed = next(&r);
        char more[96];
        describe_edits(more, sizeof more, e);
        snprintf(s.what, sizeof s.what, "%zu x %zu, %s [%g,%g]%s", shape.rows, shape.cols, dist_name(in.dist), in.lo,
                 in.hi, more);
        begin_case(&s, i, shape.rows, shape.cols);

        softmax_case c = case_create(shape, in, seed);
        if (edited(e)) {
            apply_edits(c.x_host, c.rows, c.cols, in, e, &r);
            case_refresh(&c);
        }
        for (int v = 0; v < sw->n_variants; v++) {
            const softmax_variant *variant = sw->variants[v];
            if (variant->supports && !variant->supports(c.rows, c.cols))
                continue;
            const verify_result res = check_case(variant, &c, NULL);
            char result[160];
            snprintf(result, sizeof result, "%zu failures (first at %zu), max rel err %.3g, %zu non-finite",
                     res.failures, res.first_failure, res.max_rel_err, res.nonfinite);
            note(&s, v, res.pass, result);
        }
        case_destroy(&c);
    }
    sweep_finish(&s);
}

/* ---- Stage 06 ----------------------------------------------------------------------------------- */

/* Whether every logit drawn from `in` (normal ones within 6 standard deviations, outliers
 * included) is finite in the dtype: fp16 ends at 65504. */
static bool representable(input_spec in, logit_dtype dtype)
{
    const double reach = fmax(fabs(in.lo), fabs(in.hi)) + (in.dist == DIST_UNIFORM ? 0.0 : in.hi - in.lo);
    return dtype != DTYPE_F16 || reach <= 65504.0;
}

void sweep_topk(const input_spec *inputs, int n_inputs)
{
    sweep s = sweep_start(6);
    for (int v = 0; v < N_TOPK_VARIANTS; v++)
        add_variant(&s, topk_variants[v]->name, topk_is_library(topk_variants[v]));
    for (size_t i = s.first; i < s.end; i++) {
        stream r = case_stream(&s, i);
        const logit_dtype dtype = (logit_dtype)below(&r, 3);
        const size_t cols = length_of_case(&r, i), most_k = cols < FAST_MAX_K ? cols : FAST_MAX_K;
        const int k = (int)(below(&r, 4) == 0 ? most_k : log_uniform(&r, 1, most_k));
        const size_t rows = draw_rows(&r, i, cols, TOPK_MOST_ROWS);
        input_spec in;
        do
            in = inputs[below(&r, (size_t)n_inputs)];
        while (!representable(in, dtype));
        const edits e = draw_edits(&r);
        const uint64_t seed = next(&r);
        char more[96];
        describe_edits(more, sizeof more, e);
        snprintf(s.what, sizeof s.what, "%s %zu x %zu K=%d, %s [%g,%g]%s", dtype_name(dtype), rows, cols, k,
                 dist_name(in.dist), in.lo, in.hi, more);
        begin_case(&s, i, rows, cols);

        topk_case c = topk_case_create(rows, cols, dtype, in, seed, k);
        if (edited(e)) {
            apply_edits(c.x_host, rows, cols, in, e, &r);
            topk_case_refresh(&c);
        }
        for (int v = 0; v < N_TOPK_VARIANTS; v++) {
            if (!topk_supports(topk_variants[v], &c, k))
                continue;
            const topk_check res = check_topk(topk_variants[v], &c, k);
            char result[160];
            snprintf(result, sizeof result,
                     "%zu index errors, %zu probability failures (first bad row %zu), max rel err %.3g",
                     res.index_errors, res.prob_failures, res.first_bad_row, res.max_rel_err);
            note(&s, v, res.pass, result);
        }
        topk_case_destroy(&c);
    }
    sweep_finish(&s);
}
