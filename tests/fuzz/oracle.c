#include "oracle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../06_fused_topk/host/draw_reference.h"
#include "../../06_fused_topk/host/topk_flags.h"

bool one_printable_line(const char *s)
{
    for (const char *c = s; *c; c++)
        if (*c < ' ' || *c > '~')
            return false;
    return *s != '\0';
}

static const char *npy_broken(const uint8_t *data, size_t n, int rc, const npy_logits *a, const char *err)
{
    if (rc == NPY_BAD_FILE || rc == NPY_HOST_FAILED) {
        if (a->data)
            return "a failed read left data behind";
        return one_printable_line(err) ? NULL : "the error is not one printable line";
    }
    if (rc != 0)
        return "npy_parse_logits returned something other than 0, NPY_BAD_FILE or NPY_HOST_FAILED";
    if (a->ndim < 2 || a->ndim > NPY_MAX_DIMS || a->cols != a->shape[a->ndim - 1] || a->cols > INT32_MAX)
        return "the shape is not [R,V] or [B,T,V] with V < 2^31";
    if (!cli_shape_fits(a->rows, a->cols))
        return "the shape is past the kernels' limits (cli_shape_fits)";
    size_t rows = 1;
    for (int d = 0; d < a->ndim - 1; d++)
        rows *= a->shape[d];
    const size_t size = dtype_size(a->dtype), bytes = a->rows * a->cols * size;
    if (rows != a->rows || a->rows == 0 || a->cols == 0 || bytes / size / a->cols != a->rows)
        return "rows is not the product of the leading dimensions, or rows x V x size overflows";
    if (bytes > n || memcmp(a->data, data + (n - bytes), bytes) != 0)
        return "the data is not the input's last rows x V x size bytes";
    return NULL;
}

const char *npy_run(const uint8_t *data, size_t n, npy_logits *a, int *rc, char *err, size_t err_len)
{
    *err = '\0';
    *rc = npy_parse_logits(data, n, a, err, err_len);
    return npy_broken(data, n, *rc, a, err);
}

/* The command line in one block for free(): argv (at most n + 1 arguments after "run", and the
 * NULL after the last), then the bytes as strings. */
static char **split_args(const uint8_t *data, size_t n, int *argc)
{
    char **argv = malloc((n + 3) * sizeof *argv + n + 1);
    char *text = (char *)(argv + n + 3);
    memcpy(text, data, n);
    text[n] = '\0';
    *argc = 0;
    argv[(*argc)++] = "run";
    for (size_t start = 0, i = 0; i <= n; i++)
        if (i == n ? i > start : text[i] == '\0') {
            text[i] = '\0';
            argv[(*argc)++] = text + start;
            start = i + 1;
        }
    argv[*argc] = NULL;
    return argv;
}

static const char *cli_broken(cli_status st, const cli_options *o, const topk_options *t, const char *err)
{
    if (st == CLI_HELP)
        return NULL;
    if (st == CLI_ERROR)
        return one_printable_line(err) ? NULL : "the error is not one printable line";
    if (st != CLI_OK)
        return "cli_parse returned something other than CLI_OK, CLI_HELP or CLI_ERROR";
    if (o->n_sizes < 0 || o->n_sizes > CLI_MAX_SIZES)
        return "n_sizes is outside 0..CLI_MAX_SIZES";
    for (int i = 0; i < o->n_sizes; i++)
        if (o->sizes[i] == 0 || o->sizes[i] > CLI_MAX_ELEMENTS)
            return "a size is 0 or more than CLI_MAX_ELEMENTS";
    if ((o->rows == 0) != (o->cols == 0))
        return "--rows without --cols, or --cols without --rows";
    if (o->rows && !cli_shape_fits(o->rows, o->cols))
        return "--rows x --cols is past CLI_MAX_ROWS or CLI_MAX_ELEMENTS";
    if (o->rows && o->n_sizes)
        return "--n/--sizes and --rows/--cols together";
    if (!isfinite(o->input.lo) || !isfinite(o->input.hi) || !(o->input.lo < o->input.hi))
        return "the range is not finite LO < HI";
    if (!t->input_path && input_largest_magnitude(o->input) > dtype_largest(t->dtype))
        return "the range and distribution would draw numbers past the dtype's largest";
    if (o->input.dist != DIST_UNIFORM && o->input.dist != DIST_NORMAL && o->input.dist != DIST_OUTLIERS &&
        o->input.dist != DIST_ZIPF)
        return "an unknown distribution";
    if (o->iters < 1 || o->warmup < 0)
        return "iters below 1 or warmup below 0";
    if (t->k < 0)
        return "k is negative (0 is not given)";
    if (t->dtype != DTYPE_F32 && t->dtype != DTYPE_BF16 && t->dtype != DTYPE_F16)
        return "an unknown dtype";
    if ((o->csv_path && !*o->csv_path) || (t->input_path && !*t->input_path) ||
        (t->output_prefix && !*t->output_prefix))
        return "an empty file name";
    if (t->k && t->k_path)
        return "--k both a number and a file";
    if (!draw_temperature_ok(t->temperature) || !draw_top_p_ok(t->top_p) || !draw_min_p_ok(t->min_p))
        return "a sampling parameter outside its range";
    return NULL;
}

const char *cli_run(const uint8_t *data, size_t n, cli_status *st, char *err, size_t err_len)
{
    int argc;
    char **argv = split_args(data, n, &argc);
    cli_options o;
    topk_options t;
    cli_defaults(&o);
    topk_options_defaults(&t);
    *err = '\0';
    const cli_table tables[] = {{cli_size_flags, &o}, {cli_shape_flags, &o}, {cli_shared_flags, &o},
                                {topk_flags, &t}};
    *st = cli_parse(argc, argv, tables, 4, err, err_len);
    const cli_own_flags own = topk_own_flags(&t); /* then stage 06's checks, as its stage_parse() makes them */
    double largest = 0;
    const char *type = own.drawn_as(&t, &largest);
    if (*st == CLI_OK)
        *st = cli_check(&o, largest, type, err, err_len);
    if (*st == CLI_OK && own.check(&o, &t, err, err_len))
        *st = CLI_ERROR;
    const char *broken = cli_broken(*st, &o, &t, err);
    free(argv);
    return broken;
}
