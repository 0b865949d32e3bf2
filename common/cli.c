#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

void cli_defaults(cli_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->input = (input_spec){.dist = DIST_UNIFORM, .lo = 0.0, .hi = 10.0};
    opts->iters = 100;
    opts->warmup = 10;
    opts->seed = 2026;
}

static cli_status fail(char *err, size_t err_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static cli_status fail(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return CLI_ERROR;
}

void *cli_field(const cli_flag *flag, void *values) { return (char *)values + flag->field; }

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

/* One too small for a double (1e-400) is taken as strtod rounds it, to 0 or a subnormal; one too
 * large is refused. */
int cli_parse_number(const char *text, char **end, double *out)
{
    if (isspace((unsigned char)*text))
        return -1;
    errno = 0;
    *out = strtod(text, end);
    const bool underflow = errno == ERANGE && fabs(*out) <= DBL_MIN;
    return (errno && !underflow) || *end == text || !isfinite(*out) ? -1 : 0;
}

/* A whole number from flag->lo to flag->hi, digits only. */
static int bounded(const cli_flag *flag, const char *value, unsigned long long *out)
{
    const char *end = whole_number(value, flag->hi, out);
    return !end || *end != '\0' || *out < flag->lo ? -1 : 0;
}

int cli_int(const cli_flag *flag, const char *value, void *values, char *note, size_t note_len)
{
    (void)note, (void)note_len;
    unsigned long long v;
    if (bounded(flag, value, &v))
        return -1;
    *(int *)cli_field(flag, values) = (int)v;
    return 0;
}

int cli_u64(const cli_flag *flag, const char *value, void *values, char *note, size_t note_len)
{
    (void)note, (void)note_len;
    unsigned long long v;
    if (bounded(flag, value, &v))
        return -1;
    *(uint64_t *)cli_field(flag, values) = v;
    return 0;
}

int cli_count(const cli_flag *flag, const char *value, void *values, char *note, size_t note_len)
{
    (void)note, (void)note_len;
    return cli_parse_count(value, flag->hi, (size_t *)cli_field(flag, values));
}

int cli_file(const cli_flag *flag, const char *value, void *values, char *note, size_t note_len)
{
    (void)note, (void)note_len;
    if (*value == '\0')
        return -1;
    *(const char **)cli_field(flag, values) = value;
    return 0;
}

int cli_text(const cli_flag *flag, const char *value, void *values, char *note, size_t note_len)
{
    (void)note, (void)note_len;
    *(const char **)cli_field(flag, values) = value;
    return 0;
}

/* --n: one size, as --sizes keeps them. */
static int one_size(const cli_flag *flag, const char *value, void *values, char *note, size_t note_len)
{
    (void)note, (void)note_len;
    cli_options *o = values;
    o->n_sizes = 1;
    return cli_parse_count(value, flag->hi, &o->sizes[0]);
}

/* --sizes: each item as --n takes it, in a copy of the value cut at its commas. */
static int size_list(const cli_flag *flag, const char *value, void *values, char *note, size_t note_len)
{
    (void)note, (void)note_len;
    cli_options *o = values;
    o->n_sizes = 0;
    char *copy = strdup(value);
    if (!copy)
        die(1, "out of host memory for --sizes");
    int rc = 0;
    for (char *item = copy;;) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = '\0';
        if (o->n_sizes == CLI_MAX_SIZES || *item == '\0' || cli_parse_count(item, flag->hi, &o->sizes[o->n_sizes++])) {
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

/* --range LO:HI, finite LO < HI. */
static int range(const cli_flag *flag, const char *value, void *values, char *note, size_t note_len)
{
    (void)flag, (void)note, (void)note_len;
    input_spec *in = &((cli_options *)values)->input;
    char *end;
    double lo, hi;
    if (cli_parse_number(value, &end, &lo) || *end != ':' || cli_parse_number(end + 1, &end, &hi) || *end != '\0' ||
        !(lo < hi))
        return -1;
    in->lo = lo;
    in->hi = hi;
    return 0;
}

static int dist(const cli_flag *flag, const char *value, void *values, char *note, size_t note_len)
{
    (void)flag, (void)note, (void)note_len;
    return dist_from_name(value, &((cli_options *)values)->input.dist);
}

#define SHARED(member) offsetof(cli_options, member)
#define COUNTS(hi) 1, (hi)

const cli_flag cli_size_flags[] = {
    {"--n", "N", "one size (counts like 1000, 10K, 1M, 1e8; at most 256 x (2^31 - 1))", one_size, 0, CLI_UNTRACKED,
     COUNTS(CLI_MAX_ELEMENTS), "a count from %llu to %llu, like 1000, 10K or 1e6"},
    {"--sizes", "A,B,...", "several sizes, each verified and timed", size_list, 0, CLI_UNTRACKED,
     COUNTS(CLI_MAX_ELEMENTS), "up to 32 counts from %llu to %llu separated by commas, like 1K,1M,1e8"},
    {NULL},
};

const cli_flag cli_shape_flags[] = {
    {"--rows", "R", "R rows (at most 2^31 - 1, R x C at most 256 x (2^31 - 1))", cli_count, SHARED(rows),
     CLI_UNTRACKED, COUNTS(CLI_MAX_ROWS), "a count from %llu to %llu, like 8192 or 4K"},
    {"--cols", "C", "C elements a row", cli_count, SHARED(cols), CLI_UNTRACKED, COUNTS(CLI_MAX_ELEMENTS),
     "a count from %llu to %llu, like 8192 or 4K"},
    {NULL},
};

const cli_flag cli_shared_flags[] = {
    {"--range", "LO:HI", "input range (default 0:10)", range, 0, SHARED(range_given), 0, 0,
     "LO:HI with finite LO < HI, like 500:1000"},
    {"--dist", "D", "uniform | normal | outliers | zipf (default uniform)", dist, 0, SHARED(dist_given), 0, 0,
     "uniform, normal, outliers or zipf"},
    {"--iters", "N", "timed runs; the table shows their median (default 100)", cli_int, SHARED(iters),
     CLI_UNTRACKED, 1, 100000, "a whole number from %llu to %llu"},
    {"--warmup", "N", "untimed runs first, N at a time until 100 ms (default 10)", cli_int, SHARED(warmup),
     CLI_UNTRACKED, 0, 100000, "a whole number from %llu to %llu"},
    {"--seed", "S", "input seed (default 2026)", cli_u64, SHARED(seed), SHARED(seed_given), 0, UINT64_MAX,
     "a whole number from %llu to %llu"},
    {"--csv", "FILE", "also write the rows to FILE as CSV", cli_file, SHARED(csv_path), CLI_UNTRACKED, 0, 0, NULL},
    {"--variant", "NAME", "run only this variant (the stage's variants are listed above)", cli_text,
     SHARED(variant), CLI_UNTRACKED, 0, 0, NULL},
    {NULL},
};

/* The flag of the tables that `name` names, and the table it is in; NULL when none does. */
static const cli_flag *find(const cli_table *tables, int n_tables, const char *name, const cli_table **table)
{
    for (int t = 0; t < n_tables; t++)
        for (const cli_flag *f = tables[t].flags; f->name; f++)
            if (strcmp(f->name, name) == 0) {
                *table = &tables[t];
                return f;
            }
    return NULL;
}

static bool is_help(const char *arg) { return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0; }

cli_status cli_parse(int argc, char **argv, const cli_table *tables, int n_tables, char *err, size_t err_len)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (is_help(arg))
            return CLI_HELP;
        if (strncmp(arg, "--", 2) != 0)
            return fail(err, err_len, "unexpected argument '%s' (flags start with --)", quote_arg(arg).text);

        /* Accept both "--flag value" and "--flag=value". */
        char name[64];
        const char *eq = strchr(arg, '=');
        if (eq && (size_t)(eq - arg) >= sizeof name)
            return fail(err, err_len, "unknown flag '%s'", quote_arg(arg).text);
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - arg) : (int)sizeof name - 1, arg);
        if (strcmp(name, "--help") == 0)
            return fail(err, err_len, "--help takes no value");
        const cli_table *table;
        const cli_flag *flag = find(tables, n_tables, name, &table);
        if (!flag)
            return fail(err, err_len, "unknown flag '%s'", quote_arg(eq ? name : arg).text);
        if (flag->given != CLI_UNTRACKED)
            *(bool *)((char *)table->values + flag->given) = true;
        if (!flag->metavar) {
            if (eq)
                return fail(err, err_len, "%s takes no value", name);
            *(bool *)cli_field(flag, table->values) = true;
            continue;
        }
        const char *value = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
        if (!value)
            return fail(err, err_len, "%s needs a value", name);
        const quoted shown = quote_arg(value); /* the value as a message quotes it */
        if (flag->parse == cli_file && !eq && (strncmp(value, "--", 2) == 0 || is_help(value)))
            return fail(err, err_len, "%s needs a file name, got the flag '%s' (a file named so: ./%s)", name,
                        shown.text, shown.text);
        char note[64] = "";
        if (flag->parse(flag, value, table->values, note, sizeof note) == 0)
            continue;
        if (!flag->expects)
            return fail(err, err_len, "%s needs a file name", name);
        char expects[160];
        snprintf(expects, sizeof expects, flag->expects, flag->lo, flag->hi);
        return fail(err, err_len, "%s: expected %s, got '%s'%s", name, expects, shown.text, note);
    }
    return CLI_OK;
}

cli_status cli_check(const cli_options *o, double largest, const char *type, char *err, size_t err_len)
{
    if ((o->rows == 0) != (o->cols == 0))
        return fail(err, err_len, "--rows and --cols go together");
    if (type && input_largest_magnitude(o->input) > largest)
        return fail(err, err_len, "--range %.9g:%.9g: --dist %s would draw numbers past %s's largest, %.9g",
                    o->input.lo, o->input.hi, dist_name(o->input.dist), type, largest);
    if (o->rows && !cli_shape_fits(o->rows, o->cols))
        return fail(err, err_len, "--rows x --cols: %zu x %zu is more than %zu elements (a block per 256 of them, "
                    "at most 2^31 - 1 blocks)", o->rows, o->cols, CLI_MAX_ELEMENTS);
    if (o->rows && o->n_sizes)
        return fail(err, err_len, "give either --n/--sizes (one softmax over n) or --rows/--cols (one per row), "
                    "not both");
    return CLI_OK;
}

void cli_print_help(FILE *out, const char *about, const cli_table *tables, int n_tables)
{
    fprintf(out, "%s\nFlags:\n", about);
    for (int t = 0; t < n_tables; t++)
        for (const cli_flag *f = tables[t].flags; f->name; f++) {
            char left[40];
            snprintf(left, sizeof left, "%s%s%s", f->name, f->metavar ? " " : "", f->metavar ? f->metavar : "");
            fprintf(out, "  %-17s", left);
            for (const char *line = f->help;;) {
                const char *nl = strchr(line, '\n');
                fprintf(out, "%.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
                if (!nl)
                    break;
                line = nl + 1;
                fprintf(out, "%19s", "");
            }
        }
    fprintf(out, "  %-17sthis text\n", "--help");
}

/* Opens /dev/null on whichever of file descriptors 0, 1 and 2 is closed: a file the program opens
 * later would otherwise take its number, and what it prints would land in that file. */
static void keep_standard_streams_open(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF && open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd)
            die(1, "file descriptor %d is closed, and /dev/null cannot take its place", fd);
}

void cli_parse_or_exit(int argc, char **argv, const cli_table *tables, int n_tables, const char *about)
{
    char err[512];
    set_program_name(argv[0]);
    keep_standard_streams_open();
    switch (cli_parse(argc, argv, tables, n_tables, err, sizeof err)) {
    case CLI_OK:
        return;
    case CLI_ERROR:
        die(EXIT_USAGE, "%s (see --help)", err);
    case CLI_HELP:
        cli_print_help(stdout, about, tables, n_tables);
        if (fflush(stdout) != 0 || ferror(stdout))
            die(1, "--help: writing to standard output failed");
        exit(0);
    }
}
