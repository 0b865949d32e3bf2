/* The command line: each stage declares its flags once, in tables of cli_flag, and the parser,
 * --help and the tests read those tables. The shared tables (cli_shared_flags, cli_size_flags,
 * cli_shape_flags) fill a cli_options; a stage's own table fills a struct of its own. Parsing never
 * exits by itself, so tests can call it; cli_parse_or_exit() is what a stage's main() uses. */
#ifndef COMMON_CLI_H
#define COMMON_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "inputs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CLI_MAX_SIZES 32

/* The largest shapes, checked where the counts are parsed:
 *  - rows: at most CLI_MAX_ROWS = 2^31 - 1. The block-per-row variants of stages 04 and later launch
 *    a block per row, and a grid holds at most 2^31 - 1 blocks (online_rows's two blocks a row serve
 *    only rows of over 28K elements, which the element bound keeps below 2^25).
 *  - elements, n or rows x cols: at most CLI_MAX_ELEMENTS = 256 x (2^31 - 1). Stages 02 to 05 launch
 *    a block per 256 elements for one softmax over n. That is 2.2 TB of float32, more than any GPU
 *    holds: no shape a GPU could take is refused, and one it cannot hold is refused by the memory
 *    checks, which say how much it needs. Every byte count of such a shape fits a size_t many times. */
#define CLI_MAX_ROWS ((size_t)INT32_MAX)
#define CLI_MAX_ELEMENTS ((size_t)256 * INT32_MAX)

/* The shared flags' values. */
typedef struct {
    size_t sizes[CLI_MAX_SIZES]; /* from --n or --sizes, each at most CLI_MAX_ELEMENTS; n_sizes == 0
                                    means "the stage's default" */
    int n_sizes;
    size_t rows, cols;           /* from --rows and --cols, given together, within cli_shape_fits(); 0
                                    when not given */
    input_spec input;            /* --dist and --range */
    bool range_given;            /* --range was on the command line */
    bool dist_given, seed_given; /* --dist, --seed were */
    int iters, warmup;           /* timed runs (median over iters) and untimed runs before them */
    uint64_t seed;
    const char *csv_path;        /* NULL: no CSV */
    const char *variant;         /* --variant: run only this one; NULL: all of the stage's */
} cli_options;

typedef struct cli_flag cli_flag;

/* Reads `value` into the flag's field of `values` (the struct its table fills); 0, or -1 to refuse
 * it, where `note` may get a few words that the message adds after the value. */
typedef int cli_parser(const cli_flag *flag, const char *value, void *values, char *note, size_t note_len);

struct cli_flag {
    const char *name;     /* "--iters"; NULL ends a table */
    const char *metavar;  /* "N" in --help; NULL: the flag takes no value and sets the bool `field` */
    const char *help;     /* --help's text; each '\n' starts an indented line */
    cli_parser *parse;    /* NULL with metavar NULL */
    size_t field;         /* offsetof its value in `values` */
    size_t given;         /* offsetof a bool set when the flag is given, or CLI_UNTRACKED */
    unsigned long long lo, hi; /* the bounds of a number */
    const char *expects;  /* a refusal's "NAME: expected <expects>, got 'VALUE'": a printf format given
                             lo and hi (it may use neither, the first or both) */
};
#define CLI_UNTRACKED SIZE_MAX

/* The address of a flag's value in `values`. */
void *cli_field(const cli_flag *flag, void *values);

/* One table of flags and the struct it fills. */
typedef struct {
    const cli_flag *flags;
    void *values;
} cli_table;

/* The shared tables, each filling a cli_options: every stage's flags (--range, --dist, --iters,
 * --warmup, --seed, --csv, --variant), one softmax over n (--n, --sizes), and rows (--rows, --cols). */
extern const cli_flag cli_shared_flags[], cli_size_flags[], cli_shape_flags[];

/* Parsers for a table: a whole number from lo to hi into an int (cli_int) or a uint64_t (cli_u64);
 * a count as cli_parse_count() reads it, at most hi, into a size_t (cli_count); a file name, not
 * empty (cli_file); any text (cli_text). */
cli_parser cli_int, cli_u64, cli_count, cli_file, cli_text;

typedef enum { CLI_OK, CLI_HELP, CLI_ERROR } cli_status;

/* The shared flags' defaults. */
void cli_defaults(cli_options *opts);

/* Parses argv[1..argc-1] by tables[0..n_tables-1] into their values (which start from their
 * defaults). "--flag value" and "--flag=value" both work; --help or -h as an argument of its own
 * (not as a flag's value) gives CLI_HELP. On
 * CLI_ERROR, err holds one printable line that says what is wrong; what it quotes of the command line
 * is escaped (quote_arg() in check.h). */
cli_status cli_parse(int argc, char **argv, const cli_table *tables, int n_tables, char *err, size_t err_len);

/* The checks across the shared flags once they are parsed: --rows with --cols, the numbers that
 * --dist and --range draw within `largest` (the largest value of the type they are stored in,
 * `type`; NULL: nothing is drawn), the shape within cli_shape_fits(), and --n/--sizes or
 * --rows/--cols, not both. CLI_OK, or CLI_ERROR with err set. */
cli_status cli_check(const cli_options *opts, double largest, const char *type, char *err, size_t err_len);

/* A stage's own flags: their table, what the stage's inputs are drawn as (the largest value of their
 * type and its name, or NULL where nothing is drawn), and its refusals across its flags and the
 * shared ones (0, or -1 with one line in err), made before a --variant or an output is judged. */
typedef struct {
    cli_table table;
    const char *(*drawn_as)(const void *values, double *largest);
    int (*check)(const cli_options *opts, const void *values, char *err, size_t err_len);
} cli_own_flags;

/* Parses a count from 1 to max such as "1000", "10K", "1M", "1e7" (K, M, G are powers of ten), digits
 * first. 0 on success. */
int cli_parse_count(const char *text, size_t max, size_t *out);

/* A finite number that `text` starts with, in *out, and where it ends in *end; no leading space.
 * 0, or -1. */
int cli_parse_number(const char *text, char **end, double *out);

/* Whether rows x cols is within CLI_MAX_ROWS and CLI_MAX_ELEMENTS. */
bool cli_shape_fits(size_t rows, size_t cols);

/* --help: `about`, then every flag of the tables with its help, then --help itself. */
void cli_print_help(FILE *out, const char *about, const cli_table *tables, int n_tables);

/* What a stage's main() calls: --help prints cli_print_help and exits 0, an error prints one line and
 * exits 2. */
void cli_parse_or_exit(int argc, char **argv, const cli_table *tables, int n_tables, const char *about);

#ifdef __cplusplus
}
#endif
#endif
