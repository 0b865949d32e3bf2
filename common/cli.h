/* The command line every stage shares. Parsing never exits by itself, so tests can call it;
 * cli_parse_or_exit() is what a stage's main() uses. */
#ifndef COMMON_CLI_H
#define COMMON_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "inputs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CLI_MAX_SIZES 32

/* The largest shapes, checked where the counts are parsed (and by stage 06 for a .npy file's shape):
 *  - rows: at most CLI_MAX_ROWS = 2^31 - 1. Stages 04 to 06 launch a block per row (block_per_row,
 *    online_rows, stage 06's unfused), and a grid holds at most 2^31 - 1 blocks. (online_rows's two
 *    blocks a row serve only rows of over 28K elements, which the element bound keeps below 2^25.)
 *  - elements, n or rows x cols: at most CLI_MAX_ELEMENTS = 256 x (2^31 - 1). Stages 02 to 05 launch
 *    a block per 256 elements for one softmax over n. That is 2.2 TB of float32, more than any GPU
 *    holds: no shape a GPU could take is refused, and one it cannot hold is refused by the memory
 *    checks, which say how much it needs. Every byte count of such a shape fits a size_t many times.
 * Stage 06 also takes rows of at most 2^31 - 1 logits (V): its kernels index a row with an int. */
#define CLI_MAX_ROWS ((size_t)INT32_MAX)
#define CLI_MAX_ELEMENTS ((size_t)256 * INT32_MAX)

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
    /* Stage 06 (top-K) only; stage_start() refuses them elsewhere. */
    int k;                       /* --k: how many of the largest probabilities; 0 when not given */
    logit_dtype dtype;           /* --dtype: the logits' type (default float32) */
    bool dtype_given;
    const char *input_path;      /* --input: logits from a .npy file; NULL: random logits */
    const char *output_prefix;   /* --output: write PREFIX_indices.npy and PREFIX_probs.npy */
    const char *k_path;          /* --k FILE.npy: a K a row (int32); k is then 0 */
    /* Stage 06's draw of one token a row (--sample), and how (common/sample.h). */
    bool sample;
    bool sampling_given;         /* --temperature, --top-p or --min-p was on the command line */
    float temperature, top_p, min_p; /* default 1, 1, 0 */
    const char *temperature_path, *top_p_path; /* or a value a row from a .npy file (float32) */
} cli_options;

typedef enum { CLI_OK, CLI_HELP, CLI_ERROR } cli_status;

void cli_defaults(cli_options *opts);

/* Parses argv[1..argc-1] into opts (which starts from cli_defaults). On CLI_ERROR, err holds one
 * printable line that says what is wrong; what it quotes of the command line is escaped
 * (quote_arg() in check.h). */
cli_status cli_parse(int argc, char **argv, cli_options *opts, char *err, size_t err_len);

/* Parses a count from 1 to max such as "1000", "10K", "1M", "1e7" (K, M, G are powers of ten), digits
 * first. 0 on success. */
int cli_parse_count(const char *text, size_t max, size_t *out);

/* Whether rows x cols is within CLI_MAX_ROWS and CLI_MAX_ELEMENTS. */
bool cli_shape_fits(size_t rows, size_t cols);

/* What a stage's main() calls: --help prints usage and exits 0, an error prints one line and
 * exits 2. `about` is the stage's own first lines of --help. */
void cli_parse_or_exit(int argc, char **argv, cli_options *opts, const char *about);

#ifdef __cplusplus
}
#endif
#endif
