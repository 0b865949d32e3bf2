#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sample.h"

void cli_defaults(cli_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->input = (input_spec){.dist = DIST_UNIFORM, .lo = 0.0, .hi = 10.0};
    opts->iters = 100;
    opts->warmup = 10;
    opts->seed = 2026;
    opts->temperature = 1.0f;
    opts->top_p = 1.0f;
}

static cli_status fail(char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static cli_status fail(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return CLI_ERROR;
}

/* The whole number `text` starts with, in *value when it is at most max; returns where its digits
 * end, or NULL. Digits only: strtoull alone would skip leading spaces and take a sign, reading
 * ' -1' as 2^64 - 1. */
static const char *whole_number(const char *text, unsigned long long max, unsigned long long *value)
{
    if (*text < '0' || *text > '9')
        return NULL;
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(text, &end, 10);
    if (errno || v > max)
        return NULL;
    *value = v;
    return end;
}

int cli_parse_count(const char *text, size_t max, size_t *out)
{
    unsigned long long mantissa, exponent = 0;
    const char *end = whole_number(text, max, &mantissa);
    if (!end)
        return -1;
    if (*end == 'K' || *end == 'k')
        exponent = 3, end++;
    else if (*end == 'M' || *end == 'm')
        exponent = 6, end++;
    else if (*end == 'G' || *end == 'g')
        exponent = 9, end++;
    else if (*end == 'e' || *end == 'E')
        end = whole_number(end + 1, 18, &exponent);
    if (!end || *end != '\0' || mantissa == 0)
        return -1;
    for (unsigned i = 0; i < exponent; i++) {
        if (mantissa > max / 10)
            return -1;
        mantissa *= 10;
    }
    *out = (size_t)mantissa;
    return 0;
}

bool cli_shape_fits(size_t rows, size_t cols)
{
    size_t n;
    return rows <= CLI_MAX_ROWS && size_mul(rows, cols, &n) && n <= CLI_MAX_ELEMENTS;
}

/* A whole number from lo to hi (0 <= lo), digits only. */
static int parse_int(const char *text, int lo, int hi, int *out)
{
    unsigned long long v;
    const char *end = whole_number(text, (unsigned long long)hi, &v);
    if (!end || *end != '\0' || v < (unsigned long long)lo)
        return -1;
    *out = (int)v;
    return 0;
}

/* A finite number that `text` starts with, in *out, and where it ends in *end. No leading space
 * (strtod would skip it). One too small for a double (1e-400) is taken as strtod rounds it, to 0 or
 * a subnormal; one too large is refused. */
static int parse_number(const char *text, char **end, double *out)
{
    if (isspace((unsigned char)*text))
        return -1;
    errno = 0;
    *out = strtod(text, end);
    const bool underflow = errno == ERANGE && fabs(*out) <= DBL_MIN;
    return (errno && !underflow) || *end == text || !isfinite(*out) ? -1 : 0;
}

/* Whether a flag's value names a .npy file rather than a number. */
static bool names_npy(const char *value)
{
    const size_t len = strlen(value);
    return len > 4 && strcmp(value + len - 4, ".npy") == 0;
}

/* --temperature, --top-p, --min-p: a number that `ok` accepts, or (where path is not NULL) a .npy
 * file of one a row; the last one given counts. */
static int parse_sampling(const char *value, bool (*ok)(double), float *number, const char **path)
{
    if (path && names_npy(value)) {
        *path = value;
        return 0;
    }
    char *end;
    double v;
    if (parse_number(value, &end, &v) || *end != '\0' || !ok((float)v)) /* in range as the float it becomes */
        return -1;
    *number = (float)v;
    if (path)
        *path = NULL;
    return 0;
}

/* For a refusal's message: what `value`, a number that float32 holds only rounded, becomes there
 * (" (1 in float32)" for 0.99999999); "" for anything else. */
static const char *float32_note(const char *value)
{
    static char note[48];
    char *end;
    double v;
    note[0] = '\0';
    if (parse_number(value, &end, &v) == 0 && *end == '\0' && (double)(float)v != v)
        snprintf(note, sizeof note, " (%.9g in float32)", (double)(float)v);
    return note;
}

static int parse_range(const char *text, double *lo, double *hi)
{
    char *end;
    double a, b;
    if (parse_number(text, &end, &a) || *end != ':' || parse_number(end + 1, &end, &b) || *end != '\0' ||
        !(a < b))
        return -1;
    *lo = a;
    *hi = b;
    return 0;
}

/* Each item as --n takes it, in a copy of text cut at its commas. */
static int parse_sizes(const char *text, cli_options *opts)
{
    opts->n_sizes = 0;
    char *copy = strdup(text);
    if (!copy)
        die(1, "out of host memory for --sizes");
    int rc = 0;
    for (char *item = copy;; ) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = '\0';
        if (opts->n_sizes == CLI_MAX_SIZES || *item == '\0' ||
            cli_parse_count(item, CLI_MAX_ELEMENTS, &opts->sizes[opts->n_sizes++])) {
            rc = -1;
            break;
        }
        if (!comma)
            break;
        item = comma + 1;
    }
    free(copy);
    return rc;
}

cli_status cli_parse(int argc, char **argv, cli_options *opts, char *err, size_t err_len)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
            return CLI_HELP;
        if (strcmp(arg, "--sample") == 0) { /* the one flag without a value */
            opts->sample = true;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0)
            return fail(err, err_len, "unexpected argument '%s' (flags start with --)", quote_arg(arg).text);

        /* Accept both "--flag value" and "--flag=value". */
        char name[64];
        const char *value;
        const char *eq = strchr(arg, '=');
        if (eq) {
            size_t len = (size_t)(eq - arg);
            if (len >= sizeof name)
                return fail(err, err_len, "unknown flag '%s'", quote_arg(arg).text);
            memcpy(name, arg, len);
            name[len] = '\0';
            value = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", arg);
            value = i + 1 < argc ? argv[i + 1] : NULL;
        }

        if (strcmp(name, "--sample") == 0)
            return fail(err, err_len, "--sample takes no value");
        static const char *const known[] = {"--n",     "--sizes",  "--range", "--dist",
                                            "--iters", "--warmup", "--seed",  "--csv",
                                            "--variant", "--rows",  "--cols",
                                            "--k",     "--dtype",  "--input", "--output",
                                            "--temperature", "--top-p", "--min-p"};
        bool is_known = false;
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            is_known |= strcmp(name, known[k]) == 0;
        if (!is_known)
            return fail(err, err_len, "unknown flag '%s'", quote_arg(eq ? name : arg).text);
        if (!value)
            return fail(err, err_len, "%s needs a value", name);
        if (!eq)
            i++;
        const quoted shown = quote_arg(value); /* the value as a message quotes it */
        const bool names_a_file = strcmp(name, "--csv") == 0 || strcmp(name, "--input") == 0 ||
                                  strcmp(name, "--output") == 0;
        if (names_a_file && !eq && strncmp(value, "--", 2) == 0) /* "--csv --sample": the name left out */
            return fail(err, err_len, "%s needs a file name, got the flag '%s' (a file named so: ./%s)", name,
                        shown.text, shown.text);

        if (strcmp(name, "--n") == 0) {
            opts->n_sizes = 1;
            if (cli_parse_count(value, CLI_MAX_ELEMENTS, &opts->sizes[0]))
                return fail(err, err_len, "--n: expected a count from 1 to %zu, like 1000, 10K or 1e6, got '%s'",
                            CLI_MAX_ELEMENTS, shown.text);
        } else if (strcmp(name, "--sizes") == 0) {
            if (parse_sizes(value, opts))
                return fail(err, err_len, "--sizes: expected up to %d counts from 1 to %zu separated by commas, like "
                            "1K,1M,1e8, got '%s'", CLI_MAX_SIZES, CLI_MAX_ELEMENTS, shown.text);
        } else if (strcmp(name, "--range") == 0) {
            if (parse_range(value, &opts->input.lo, &opts->input.hi))
                return fail(err, err_len, "--range: expected LO:HI with finite LO < HI, like 500:1000, got '%s'",
                            shown.text);
            opts->range_given = true;
        } else if (strcmp(name, "--dist") == 0) {
            if (dist_from_name(value, &opts->input.dist))
                return fail(err, err_len, "--dist: expected uniform, normal or outliers, got '%s'", shown.text);
            opts->dist_given = true;
        } else if (strcmp(name, "--iters") == 0) {
            if (parse_int(value, 1, 100000, &opts->iters))
                return fail(err, err_len, "--iters: expected a whole number from 1 to 100000, got '%s'", shown.text);
        } else if (strcmp(name, "--warmup") == 0) {
            if (parse_int(value, 0, 100000, &opts->warmup))
                return fail(err, err_len, "--warmup: expected a whole number from 0 to 100000, got '%s'", shown.text);
        } else if (strcmp(name, "--seed") == 0) {
            unsigned long long seed;
            const char *end = whole_number(value, UINT64_MAX, &seed);
            if (!end || *end != '\0')
                return fail(err, err_len, "--seed: expected a whole number from 0 to %llu, got '%s'",
                            (unsigned long long)UINT64_MAX, shown.text);
            opts->seed = seed;
            opts->seed_given = true;
        } else if (strcmp(name, "--rows") == 0 || strcmp(name, "--cols") == 0) {
            const bool rows = strcmp(name, "--rows") == 0;
            const size_t max = rows ? CLI_MAX_ROWS : CLI_MAX_ELEMENTS;
            if (cli_parse_count(value, max, rows ? &opts->rows : &opts->cols))
                return fail(err, err_len, "%s: expected a count from 1 to %zu, like 8192 or 4K, got '%s'", name, max,
                            shown.text);
        } else if (strcmp(name, "--k") == 0) {
            if (names_npy(value))
                opts->k_path = value, opts->k = 0;
            else if (parse_int(value, 1, INT_MAX, &opts->k))
                return fail(err, err_len, "--k: expected a whole number from 1 to %d or a .npy file of one a row, got "
                            "'%s'", INT_MAX, shown.text);
            else
                opts->k_path = NULL;
        } else if (strcmp(name, "--temperature") == 0) {
            opts->sampling_given = true;
            if (parse_sampling(value, sample_temperature_ok, &opts->temperature, &opts->temperature_path))
                return fail(err, err_len, "--temperature: expected a finite number >= 0 (0: the most probable token) "
                            "or a .npy file of one a row, got '%s'%s", shown.text, float32_note(value));
        } else if (strcmp(name, "--top-p") == 0) {
            opts->sampling_given = true;
            if (parse_sampling(value, sample_top_p_ok, &opts->top_p, &opts->top_p_path))
                return fail(err, err_len, "--top-p: expected a number in (0, 1] (1: keep all K) or a .npy file of one "
                            "a row, got '%s'%s", shown.text, float32_note(value));
        } else if (strcmp(name, "--min-p") == 0) {
            opts->sampling_given = true;
            if (parse_sampling(value, sample_min_p_ok, &opts->min_p, NULL))
                return fail(err, err_len, "--min-p: expected a number in [0, 1) (0: no cut), got '%s'%s", shown.text,
                            float32_note(value));
        } else if (strcmp(name, "--dtype") == 0) {
            if (dtype_from_name(value, &opts->dtype))
                return fail(err, err_len, "--dtype: expected float32, bf16 or fp16, got '%s'", shown.text);
            opts->dtype_given = true;
        } else if (strcmp(name, "--input") == 0 || strcmp(name, "--output") == 0) {
            if (*value == '\0')
                return fail(err, err_len, "%s needs a file name", name);
            *(strcmp(name, "--input") == 0 ? &opts->input_path : &opts->output_prefix) = value;
        } else if (strcmp(name, "--variant") == 0) {
            opts->variant = value; /* the stage checks the name against its variants */
        } else { /* --csv */
            if (*value == '\0')
                return fail(err, err_len, "--csv needs a file name");
            opts->csv_path = value;
        }
    }
    if ((opts->rows == 0) != (opts->cols == 0))
        return fail(err, err_len, "--rows and --cols go together");
    /* Drawn as float32, then stored. With --input nothing is drawn: stage 06 refuses --range there,
     * and the other stages refuse --input (stage_parse), each as the first problem it names. */
    if (!opts->input_path && input_largest_magnitude(opts->input) > dtype_largest(opts->dtype))
        return fail(err, err_len, "--range %.9g:%.9g: --dist %s would draw numbers past %s's largest, %.9g",
                    opts->input.lo, opts->input.hi, dist_name(opts->input.dist), dtype_name(opts->dtype),
                    dtype_largest(opts->dtype));
    if (opts->rows && !cli_shape_fits(opts->rows, opts->cols))
        return fail(err, err_len, "--rows x --cols: %zu x %zu is more than %zu elements (a block per 256 of them, "
                    "at most 2^31 - 1 blocks)", opts->rows, opts->cols, CLI_MAX_ELEMENTS);
    if (opts->rows && opts->n_sizes)
        return fail(err, err_len, "give either --n/--sizes (one softmax over n) or --rows/--cols (one per row), not both");
    return CLI_OK;
}

/* Opens /dev/null on whichever of file descriptors 0, 1 and 2 is closed: a file the program opens
 * later would otherwise take its number, and what it prints would land in that file. */
static void keep_standard_streams_open(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF && open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd)
            die(1, "file descriptor %d is closed, and /dev/null cannot take its place", fd);
}

void cli_parse_or_exit(int argc, char **argv, cli_options *opts, const char *about)
{
    char err[512];
    set_program_name(argv[0]);
    keep_standard_streams_open();
    cli_defaults(opts);
    switch (cli_parse(argc, argv, opts, err, sizeof err)) {
    case CLI_OK:
        return;
    case CLI_ERROR:
        die(EXIT_USAGE, "%s (see --help)", err);
    case CLI_HELP:
        printf("%s\n"
               "Flags:\n"
               "  --n N            one size (counts like 1000, 10K, 1M, 1e8; at most 256 x (2^31 - 1))\n"
               "  --sizes A,B,...  several sizes, each verified and timed\n"
               "  --rows R --cols C  R softmaxes of C elements each (stages 04 and later; R at most\n"
               "                   2^31 - 1, R x C at most 256 x (2^31 - 1))\n"
               "  --range LO:HI    input range (default 0:10)\n"
               "  --dist D         uniform | normal | outliers (default uniform)\n"
               "  --iters N        timed runs; the table shows their median (default 100)\n"
               "  --warmup N       untimed runs first, N at a time until 100 ms (default 10)\n"
               "  --seed S         input seed (default 2026)\n"
               "  --csv FILE       also write the rows to FILE as CSV\n"
               "  --variant NAME   run only this variant (the stage's variants are listed above)\n"
               "  --k K            stage 06: how many of the largest probabilities per row (each variant\n"
               "                   states the largest K it handles)\n"
               "  --dtype T        stage 06: float32 | bf16 | fp16 logits (default float32)\n"
               "  --input FILE     stage 06: logits from a .npy file, shape [B,T,V] or [R,V]\n"
               "  --output PREFIX  stage 06: write PREFIX_indices.npy and PREFIX_probs.npy (with --sample, also\n"
               "                   PREFIX_tokens.npy, PREFIX_token_probs.npy, PREFIX_token_logprobs.npy)\n"
               "  --sample         stage 06: also draw one token a row from its top K, fused into fast\n"
               "  --temperature T  stage 06, --sample: softmax(x / T) over the K (default 1; 0: the most\n"
               "                   probable token); or a .npy file of one float32 a row\n"
               "  --top-p P        stage 06, --sample: keep the smallest prefix of the K whose probability\n"
               "                   reaches P, in (0, 1] (default 1: all K); or a .npy file, float32\n"
               "  --min-p M        stage 06, --sample: keep the tokens at least M x the most probable one's\n"
               "                   probability, in [0, 1) (default 0)\n"
               "                   (--seed S keys the draw: a row's token depends on S and the row alone;\n"
               "                   --k also takes a .npy file of one int32 a row, the top-K then as deep\n"
               "                   as its largest)\n"
               "  --help           this text\n",
               about);
        if (fflush(stdout) != 0 || ferror(stdout))
            die(1, "--help: writing to standard output failed");
        exit(0);
    }
}
