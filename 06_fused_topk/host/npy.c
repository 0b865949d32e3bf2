/* The .npy reader is a small parser for the one Python literal the format puts in its header:
 *
 *   header     = [ \t]* '{' ( entry ( ',' entry )* ','? )? '}' space* '\n'   (the newline ends it)
 *   entry      = string ':' value        (between any two tokens: space*, as Python allows)
 *   value      = string | 'True' | 'False' | tuple
 *   tuple      = '(' ')' | '(' dimension ',' ')' | '(' dimension ( ',' dimension )+ ','? ')'
 *   dimension  = decimal digits as Python writes them (no leading zero), with an 'L' after them in
 *                versions 1.0 and 2.0 (Python 2 wrote its long integers so, and numpy still reads them)
 *   string     = "'" ... "'" or '"' ... '"', on one line, without a backslash
 *   space      = ' ' | '\t' | '\f' | '\r' | '\n'
 *
 * The keys are exactly 'descr' (a string), 'fortran_order' (True or False) and 'shape' (a tuple),
 * each once, in any order. What numpy also reads but numpy itself never writes (comments, escapes
 * in strings, hexadecimal or signed dimensions, strings written in pieces) is refused, each with a
 * message naming the text it could not read and where it stands in the file. */
#define _POSIX_C_SOURCE 200809L
#include "npy.h"
#include "../../common/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/check.h"

static const char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* The magic string, the version and a 4-byte header length: the most a header's preamble takes. */
#define NPY_MAX_PREAMBLE 12

/* At most this many of the file's bytes are quoted in a message. */
#define QUOTE_BYTES 24

static int report(int rc, char *err, size_t err_len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int report(int rc, char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return rc;
}

/* ndim sizes or indices between the two characters of `brackets`: a shape as numpy prints it,
 * "(2, 3, 4)", or a place in it, "[1, 2, 3]". */
typedef struct {
    char text[NPY_MAX_DIMS * 22 + 3];
} shape_text;

static shape_text print_dims(const size_t *dims, int ndim, const char *brackets)
{
    shape_text s = {{brackets[0]}};
    for (int d = 0; d < ndim; d++)
        sprintf(s.text + strlen(s.text), "%zu%s", dims[d], d + 1 < ndim ? ", " : "");
    s.text[strlen(s.text)] = brackets[1];
    return s;
}

static shape_text print_shape(const npy_logits *a) { return print_dims(a->shape, a->ndim, "()"); }

enum { KEY_DESCR, KEY_FORTRAN_ORDER, KEY_SHAPE, N_KEYS };
static const char *const key_names[N_KEYS] = {"descr", "fortran_order", "shape"};

/* The header dict as it is read. A key is judged as it is read (an unknown or duplicate one is
 * refused there), and so is its value's syntax (a string, True or False, a tuple of dimensions);
 * what the values mean (the element type, the order, the number of dimensions) is judged only once
 * the whole dict is read and no key is missing (check_values). */
typedef struct {
    const unsigned char *file;     /* the file's first byte: a message's "byte N" counts from it */
    const unsigned char *at, *end; /* the part of the dict not read yet */
    int version;                   /* the format's major version, 1, 2 or 3 */
    char *err;
    size_t err_len;
    bool seen[N_KEYS];
    const unsigned char *descr;    /* the element type's text, without its quotes */
    size_t descr_len;
    bool fortran_order;
    int ndim;                      /* may pass NPY_MAX_DIMS: the dimensions past it are counted, not kept */
    size_t shape[NPY_MAX_DIMS];
} dict_parser;

static int refuse(const dict_parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(const dict_parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, p->err_len, fmt, ap);
    va_end(ap);
    return NPY_BAD_FILE;
}

static bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\r' || c == '\n'; }

/* How many bytes from `at` a message quotes: up to the header's end, less the padding there. */
static size_t rest(const dict_parser *p, const unsigned char *at)
{
    const unsigned char *end = p->end;
    while (end > at && is_space(end[-1]))
        end--;
    return (size_t)(end - at);
}

/* The header holds something else at `at` than `what`. */
static int expected(const dict_parser *p, const unsigned char *at, const char *what)
{
    if (rest(p, at) == 0)
        return refuse(p, "its header ends at byte %zu where %s should be", (size_t)(at - p->file), what);
    return refuse(p, "its header has '%s' at byte %zu where %s should be",
                  quote_bytes(at, rest(p, at), QUOTE_BYTES).text, (size_t)(at - p->file), what);
}

/* A byte that would continue a Python name or number: True1 or 2x is not True or 2. */
static bool is_name_byte(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c >= 0x80;
}

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static void skip_space(dict_parser *p)
{
    while (p->at < p->end && is_space(*p->at))
        p->at++;
}

/* Consumes c when it is next. */
static bool take(dict_parser *p, char c)
{
    if (p->at == p->end || *p->at != (unsigned char)c)
        return false;
    p->at++;
    return true;
}

/* Consumes the name `word` when it is next, whole. */
static bool take_word(dict_parser *p, const char *word)
{
    const size_t n = strlen(word);
    if ((size_t)(p->end - p->at) < n || memcmp(p->at, word, n) != 0 || (p->at + n < p->end && is_name_byte(p->at[n])))
        return false;
    p->at += n;
    return true;
}

/* A quoted string: its text (between the quotes) in *text and *len. `what` names it for a message. */
static int parse_string(dict_parser *p, const char *what, const unsigned char **text, size_t *len)
{
    const unsigned char *open = p->at;
    if (!take(p, '\'') && !take(p, '"'))
        return expected(p, open, what);
    for (; p->at < p->end && *p->at != *open; p->at++)
        if (*p->at == '\n' || *p->at == '\r' || *p->at == '\\')
            break;
    if (p->at == p->end || *p->at != *open)
        return refuse(p, "its header has the string '%s' at byte %zu, %s",
                      quote_bytes(open, rest(p, open), QUOTE_BYTES).text, (size_t)(open - p->file),
                      p->at < p->end && *p->at == '\\' ? "with a backslash escape, which this reader does not decode"
                                                       : "not closed on its line");
    *text = open + 1;
    *len = (size_t)(p->at - *text);
    p->at++;
    return 0;
}

static int parse_dimension(dict_parser *p, size_t *d)
{
    const unsigned char *start = p->at;
    *d = 0;
    for (; p->at < p->end && is_digit(*p->at); p->at++) {
        const unsigned digit = (unsigned)(*p->at - '0');
        if (*d > (SIZE_MAX - digit) / 10)
            return refuse(p, "its shape has a dimension at byte %zu larger than %zu", (size_t)(start - p->file),
                          (size_t)SIZE_MAX);
        *d = *d * 10 + digit;
    }
    if (p->version <= 2 && p->at > start && p->at < p->end && *p->at == 'L')
        p->at++;
    /* Python reads neither 07 (a leading zero) nor 7x (a number run into a name). */
    if (p->at == start || (*start == '0' && *d != 0) || (p->at < p->end && is_name_byte(*p->at)))
        return expected(p, start, "a dimension in decimal digits");
    return 0;
}

static int parse_shape(dict_parser *p)
{
    if (!take(p, '('))
        return expected(p, p->at, "a tuple such as (8, 50257)");
    p->ndim = 0;
    skip_space(p);
    while (!take(p, ')')) {
        size_t d;
        if (parse_dimension(p, &d))
            return NPY_BAD_FILE;
        if (p->ndim < NPY_MAX_DIMS)
            p->shape[p->ndim] = d;
        p->ndim++;
        skip_space(p);
        if (take(p, ','))
            skip_space(p);
        else if (p->ndim == 1 || p->at == p->end || *p->at != ')')
            return expected(p, p->at, p->ndim == 1 ? "',' (one dimension is written (V,))" : "',' or ')'");
    }
    return 0;
}

static int parse_value(dict_parser *p, int key)
{
    switch (key) {
    case KEY_DESCR:
        return parse_string(p, "a quoted element type such as '<f4'", &p->descr, &p->descr_len);
    case KEY_FORTRAN_ORDER:
        if (take_word(p, "True"))
            p->fortran_order = true;
        else if (take_word(p, "False"))
            p->fortran_order = false;
        else
            return expected(p, p->at, "True or False");
        return 0;
    default:
        return parse_shape(p);
    }
}

static int parse_dict(dict_parser *p)
{
    while (p->at < p->end && (*p->at == ' ' || *p->at == '\t')) /* as ast.literal_eval strips them */
        p->at++;
    if (!take(p, '{'))
        return expected(p, p->at, "'{'");
    for (;;) {
        skip_space(p);
        if (take(p, '}'))
            break;
        const unsigned char *name;
        size_t len;
        const unsigned char *key_at = p->at;
        if (parse_string(p, "a quoted key such as 'shape'", &name, &len))
            return NPY_BAD_FILE;
        int key = 0;
        while (key < N_KEYS && !(strlen(key_names[key]) == len && memcmp(key_names[key], name, len) == 0))
            key++;
        if (key == N_KEYS)
            return refuse(p, "its header has the key '%s' at byte %zu; numpy's format has only 'descr', "
                             "'fortran_order' and 'shape'",
                          quote_bytes(name, len, QUOTE_BYTES).text, (size_t)(key_at - p->file));
        if (p->seen[key])
            return refuse(p, "its header has '%s' twice (again at byte %zu)", key_names[key], (size_t)(key_at - p->file));
        p->seen[key] = true;
        skip_space(p);
        if (!take(p, ':'))
            return expected(p, p->at, "':'");
        skip_space(p);
        if (parse_value(p, key))
            return NPY_BAD_FILE;
        skip_space(p);
        if (!take(p, ',') && (p->at == p->end || *p->at != '}'))
            return expected(p, p->at, "',' or '}'");
    }
    skip_space(p);
    if (p->at != p->end)
        return expected(p, p->at, "the padding (spaces and a newline)");
    if (p->end[-1] != '\n')
        return refuse(p, "its header does not end with a newline, as the format requires");
    for (int key = 0; key < N_KEYS; key++)
        if (!p->seen[key])
            return refuse(p, "its header has no '%s'", key_names[key]);
    return 0;
}

/* What a vector must be: its element type ('<f4' or '<i4') and its length, one value a row. */
typedef struct {
    const char *descr;
    size_t n;
} vector_spec;

/* The values of a vector, judged: the one element type asked for (4 bytes), one dimension, the
 * length asked for (judged here, so that a header claiming gigabytes is refused before they are read). */
static int check_vector(const dict_parser *p, const vector_spec *vector, npy_logits *out, size_t *data_bytes)
{
    const char *descr = vector->descr;
    if (!(strlen(descr) == p->descr_len && memcmp(descr, p->descr, p->descr_len) == 0))
        return refuse(p, "its element type '%s' is not '%s' (%s)", quote_bytes(p->descr, p->descr_len, QUOTE_BYTES).text,
                      descr, strcmp(descr, "<i4") == 0 ? "int32" : "float32");
    if (p->ndim != 1)
        return refuse(p, "its shape has %d dimension(s); expected one value a row, [R]", p->ndim);
    if (p->shape[0] == 0)
        return refuse(p, "it is empty: expected one value a row");
    if (p->shape[0] != vector->n)
        return refuse(p, "it has %zu values and the logits %zu rows: give one a row", p->shape[0], vector->n);
    out->ndim = 1;
    out->rows = 1;
    out->cols = out->shape[0] = p->shape[0];
    if (!size_mul(out->cols, 4, data_bytes))
        return refuse(p, "its length %zu needs more than %zu bytes (SIZE_MAX)", out->cols, (size_t)SIZE_MAX);
    return 0;
}

/* The values, judged: the logits' type, their order and their shape, which must fit the kernels
 * (a row's index is an int, and cli_shape_fits) and whose byte count must fit a size_t. */
static int check_values(const dict_parser *p, const vector_spec *vector, npy_logits *out, size_t *data_bytes)
{
    if (vector)
        return check_vector(p, vector, out, data_bytes);
    static const struct {
        const char *descr;
        logit_dtype dtype;
    } types[] = {{"<f4", DTYPE_F32}, {"<f2", DTYPE_F16}, {"<V2", DTYPE_BF16}, {"|V2", DTYPE_BF16}};
    size_t t = 0;
    while (t < sizeof types / sizeof types[0] &&
           !(strlen(types[t].descr) == p->descr_len && memcmp(types[t].descr, p->descr, p->descr_len) == 0))
        t++;
    if (t == sizeof types / sizeof types[0])
        return refuse(p, "its element type '%s' is not float32 ('<f4'), float16 ('<f2') or bfloat16 ('<V2')",
                      quote_bytes(p->descr, p->descr_len, QUOTE_BYTES).text);
    out->dtype = types[t].dtype;
    if (p->fortran_order)
        return refuse(p, "Fortran order is not supported: save np.ascontiguousarray(x) instead");
    if (p->ndim < 2 || p->ndim > NPY_MAX_DIMS)
        return refuse(p, "its shape has %d dimension(s); expected [B,T,V] or [R,V]", p->ndim);
    out->ndim = p->ndim;
    memcpy(out->shape, p->shape, sizeof out->shape);
    out->cols = out->shape[out->ndim - 1];
    out->rows = 1;
    bool fits = true;
    for (int d = 0; d < out->ndim; d++) {
        if (out->shape[d] == 0)
            return refuse(p, "its shape %s has a dimension of length 0: there are no logits", print_shape(out).text);
        if (d < out->ndim - 1)
            fits = fits && size_mul(out->rows, out->shape[d], &out->rows);
    }
    if (out->cols > INT32_MAX)
        return refuse(p, "its rows have %zu logits (V), more than the kernels' limit of 2^31 - 1", out->cols);
    size_t elements;
    if (!fits || !size_mul(out->rows, out->cols, &elements) || !size_mul(elements, dtype_size(out->dtype), data_bytes))
        return refuse(p, "its shape %s needs more than %zu bytes (SIZE_MAX)", print_shape(out).text,
                      (size_t)SIZE_MAX);
    if (!cli_shape_fits(out->rows, out->cols)) /* judged here, before its data is read */
        return refuse(p, "its %zu rows of %zu logits are more than the kernels take (at most %zu rows, %zu logits in "
                      "all)", out->rows, out->cols, CLI_MAX_ROWS, CLI_MAX_ELEMENTS);
    return 0;
}

/* Reads the preamble and the header from the first n bytes of a file: out gets everything but
 * the data, *data_offset where the data starts and *data_bytes how long the shape says it is. */
static int parse_head(const unsigned char *file, size_t n, const vector_spec *vector, npy_logits *out,
                      size_t *data_offset, size_t *data_bytes, char *err, size_t err_len)
{
    if (n < sizeof magic || memcmp(file, magic, sizeof magic) != 0)
        return report(NPY_BAD_FILE, err, err_len, "it does not start like a .npy file");
    if (n < 8)
        return report(NPY_BAD_FILE, err, err_len, "its header is cut short");
    const int major = file[6], minor = file[7];
    if (major < 1 || major > 3 || minor != 0)
        return report(NPY_BAD_FILE, err, err_len, "its format version %d.%d is not one numpy reads (1.0, 2.0 or 3.0)",
                      major, minor);
    /* The header's length: 2 bytes in version 1.0, 4 in 2.0 and 3.0, little-endian. */
    const size_t length_bytes = major == 1 ? 2 : 4, start = 8 + length_bytes;
    if (n < start)
        return report(NPY_BAD_FILE, err, err_len, "its header is cut short");
    size_t header_len = 0;
    for (size_t i = 0; i < length_bytes; i++)
        header_len |= (size_t)file[8 + i] << (8 * i);
    if (header_len > NPY_MAX_HEADER)
        return report(NPY_BAD_FILE, err, err_len, "its header is %zu bytes, more than numpy reads (%d)", header_len,
                      NPY_MAX_HEADER);
    if (n - start < header_len)
        return report(NPY_BAD_FILE, err, err_len, "its header is cut short: %zu of its %zu bytes", n - start,
                      header_len);
    dict_parser p = {.file = file, .at = file + start, .end = file + start + header_len, .version = major,
                     .err = err, .err_len = err_len};
    const int rc = parse_dict(&p);
    if (rc)
        return rc;
    *data_offset = start + header_len;
    return check_values(&p, vector, out, data_bytes);
}

/* The header from `head` (the file's first head_n bytes), and the file's length against it. */
static int prepare(const unsigned char *head, size_t head_n, size_t file_size, const vector_spec *vector,
                   npy_logits *out, size_t *data_offset, size_t *data_bytes, char *err, size_t err_len)
{
    const int rc = parse_head(head, head_n, vector, out, data_offset, data_bytes, err, err_len);
    if (rc)
        return rc;
    if (file_size - *data_offset != *data_bytes)
        return report(NPY_BAD_FILE, err, err_len, "its shape needs %zu bytes of data, the file has %zu", *data_bytes,
                      file_size - *data_offset);
    return 0;
}

/* Room in out->data for the data_bytes of data its header promises. */
static int allocate(npy_logits *out, size_t data_bytes, char *err, size_t err_len)
{
    out->data = malloc(data_bytes);
    if (!out->data)
        return report(NPY_HOST_FAILED, err, err_len, "out of host memory for its %zu bytes of data", data_bytes);
    return 0;
}

int npy_parse_logits(const void *bytes, size_t n, npy_logits *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    size_t offset, data_bytes;
    int rc = prepare(bytes, n < NPY_MAX_PREAMBLE + NPY_MAX_HEADER ? n : NPY_MAX_PREAMBLE + NPY_MAX_HEADER, n, NULL,
                     out, &offset, &data_bytes, err, err_len);
    if (rc == 0)
        rc = allocate(out, data_bytes, err, err_len);
    if (rc == 0)
        memcpy(out->data, (const unsigned char *)bytes + offset, data_bytes);
    return rc;
}

/* The file is not the one whose length was read: a writer truncated, extended or rewrote it. The
 * user's to fix (stop the writer, or read a copy), not the machine's fault. */
static int changed(char *err, size_t err_len)
{
    return report(NPY_BAD_FILE, err, err_len, "the file changed while it was being read");
}

/* A read that returned less than asked: the machine's error, or the end of a file before the length
 * its fstat gave. */
static int read_failed(FILE *f, char *err, size_t err_len)
{
    if (ferror(f))
        return report(NPY_HOST_FAILED, err, err_len, "reading it failed: %s", strerror(errno));
    return changed(err, err_len);
}

/* The file's length and the time of its last write, in *size and *mtime_ns: what a writer moves. */
static int look(FILE *f, struct stat *st, long long *size, long long *mtime_ns, char *err, size_t err_len)
{
    if (fstat(fileno(f), st) != 0)
        return report(NPY_HOST_FAILED, err, err_len, "its size cannot be read: %s", strerror(errno));
    *size = (long long)st->st_size;
    *mtime_ns = (long long)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
    return 0;
}

/* The header of the open file->stream, judged; where its data starts and how long it is in *file. */
static int read_head(npy_file *file, const vector_spec *vector, npy_logits *out, char *err, size_t err_len)
{
    struct stat st;
    int rc = look(file->stream, &st, &file->size, &file->mtime_ns, err, err_len);
    if (rc)
        return rc;
    if (!S_ISREG(st.st_mode))
        return report(NPY_BAD_FILE, err, err_len, "it is not a regular file (a directory or a pipe?)");
    const size_t size = (size_t)st.st_size;
    unsigned char head[NPY_MAX_PREAMBLE + NPY_MAX_HEADER];
    const size_t head_n = size < sizeof head ? size : sizeof head;
    if (fread(head, 1, head_n, file->stream) != head_n)
        return read_failed(file->stream, err, err_len);
    return prepare(head, head_n, size, vector, out, &file->data_offset, &file->data_bytes, err, err_len);
}

/* npy_open_logits for logits (vector NULL) or for a vector of that type and length. */
static int open_file(const char *path, const vector_spec *vector, npy_file *file, npy_logits *out, char *err,
                     size_t err_len)
{
    memset(out, 0, sizeof *out);
    *file = (npy_file){NULL};
    /* O_NONBLOCK: a pipe opens at once, to be refused by read_head, where a plain open would wait
     * for a writer; it changes nothing in how a regular file is read. */
    const int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        const int e = errno;
        return report(errno_is_machines_fault(e) ? NPY_HOST_FAILED : NPY_BAD_FILE, err, err_len, "cannot read it: %s",
                      strerror(e));
    }
    file->stream = fdopen(fd, "rb");
    if (!file->stream) {
        const int e = errno;
        close(fd);
        return report(NPY_HOST_FAILED, err, err_len, "cannot read it: %s", strerror(e));
    }
    const int rc = read_head(file, vector, out, err, err_len);
    if (rc)
        npy_close(file);
    return rc;
}

int npy_open_logits(const char *path, npy_file *file, npy_logits *out, char *err, size_t err_len)
{
    return open_file(path, NULL, file, out, err, err_len);
}

/* npy_read_data, but for freeing out->data on failure. */
static int read_data(npy_file *file, npy_logits *out, char *err, size_t err_len)
{
    int rc = allocate(out, file->data_bytes, err, err_len);
    if (rc)
        return rc;
    if (fseek(file->stream, (long)file->data_offset, SEEK_SET) != 0)
        return report(NPY_HOST_FAILED, err, err_len, "reading it failed: %s", strerror(errno));
    if (fread(out->data, 1, file->data_bytes, file->stream) != file->data_bytes)
        return read_failed(file->stream, err, err_len);
    /* Read to its length: a file since extended or rewritten in place is told by its length and
     * its time of last write, which fstat gives again. */
    struct stat st;
    npy_file now = *file;
    rc = look(file->stream, &st, &now.size, &now.mtime_ns, err, err_len);
    if (rc)
        return rc;
    return now.size != file->size || now.mtime_ns != file->mtime_ns ? changed(err, err_len) : 0;
}

int npy_read_data(npy_file *file, npy_logits *out, char *err, size_t err_len)
{
    const int rc = read_data(file, out, err, err_len);
    if (rc)
        npy_logits_free(out);
    return rc;
}

void npy_close(npy_file *file)
{
    if (file->stream)
        fclose(file->stream);
    file->stream = NULL;
}

/* A file of logits (vector NULL) or a vector, read whole. */
static int read_whole(const char *path, const vector_spec *vector, npy_logits *out, char *err, size_t err_len)
{
    npy_file file;
    int rc = open_file(path, vector, &file, out, err, err_len);
    if (rc)
        return rc;
    rc = npy_read_data(&file, out, err, err_len);
    npy_close(&file);
    return rc;
}

int npy_read_logits(const char *path, npy_logits *out, char *err, size_t err_len)
{
    return read_whole(path, NULL, out, err, err_len);
}

int npy_read_vector(const char *path, const char *descr, size_t n, npy_vector *out, char *err, size_t err_len)
{
    const vector_spec vector = {descr, n};
    npy_logits whole;
    const int rc = read_whole(path, &vector, &whole, err, err_len);
    *out = (npy_vector){.n = rc ? 0 : whole.cols, .data = whole.data};
    return rc;
}

/* Into `where`, "[i, j, ...]": the place of element `at` of a's first `ndim` dimensions, counted
 * row-major (the last index varies fastest). */
static void write_place(const npy_logits *a, size_t at, int ndim, char *where, size_t where_len)
{
    size_t place[NPY_MAX_DIMS], rest = at;
    for (int d = ndim - 1; d >= 0; d--) {
        place[d] = rest % a->shape[d];
        rest /= a->shape[d];
    }
    snprintf(where, where_len, "%s", print_dims(place, ndim, "[]").text);
}

const char *npy_find_nan_or_inf(const npy_logits *a, char *where, size_t where_len)
{
    const size_t n = a->rows * a->cols, at = first_nan_or_inf(a->data, n, a->dtype);
    if (at == n)
        return NULL;
    write_place(a, at, a->ndim, where, where_len);
    float x;
    decode_logits((const unsigned char *)a->data + at * dtype_size(a->dtype), &x, 1, a->dtype);
    return isnan(x) ? "NaN" : "+inf";
}

bool npy_find_masked_row(const npy_logits *a, char *where, size_t where_len)
{
    enum { CHUNK = 256 }; /* a row decoded a chunk at a time: most rows end at their first chunk */
    const size_t size = dtype_size(a->dtype);
    for (size_t r = 0; r < a->rows; r++) {
        bool number = false;
        for (size_t first = 0; first < a->cols && !number; first += CHUNK) {
            float x[CHUNK];
            const size_t count = a->cols - first < CHUNK ? a->cols - first : CHUNK;
            decode_logits((const unsigned char *)a->data + (r * a->cols + first) * size, x, count, a->dtype);
            for (size_t i = 0; i < count && !number; i++)
                number = x[i] > -INFINITY;
        }
        if (number)
            continue;
        write_place(a, r, a->ndim - 1, where, where_len); /* every dimension but the last */
        return true;
    }
    return false;
}

void npy_logits_free(npy_logits *a)
{
    free(a->data);
    a->data = NULL;
}

int npy_write(FILE *f, const char *descr, size_t elem_size, const size_t *shape, int ndim, const void *data,
              char *err, size_t err_len)
{
    if (ndim < 1 || ndim > NPY_MAX_DIMS)
        return report(-1, err, err_len, "an array of %d dimensions: this writer takes 1 to %d", ndim, NPY_MAX_DIMS);
    /* dims holds NPY_MAX_DIMS sizes of up to 20 digits, each with ", " after it. */
    char dict[256], dims[NPY_MAX_DIMS * 22 + 1] = "";
    size_t count = 1, bytes;
    bool fits = true;
    for (int d = 0; d < ndim; d++) {
        snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%zu,%s", shape[d], d + 1 < ndim ? " " : "");
        fits = fits && size_mul(count, shape[d], &count);
    }
    if (ndim > 1)
        dims[strlen(dims) - 1] = '\0'; /* numpy writes (2, 3) but (5,) */
    if (!fits || !size_mul(count, elem_size, &bytes))
        return report(-1, err, err_len, "an array of shape (%s) needs more than %zu bytes (SIZE_MAX)", dims,
                      (size_t)SIZE_MAX);
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, dims);
    /* The padding below adds at most 63 spaces and the newline. */
    if (len < 0 || len > (int)sizeof dict - 64)
        return report(-1, err, err_len, "an element type of %zu characters makes the header of an array of shape (%s) "
                      "longer than %zu bytes", strlen(descr), dims, sizeof dict - 64);
    /* Pad with spaces and end with a newline so the data starts on a 64-byte boundary. */
    const int total = (10 + len + 1 + 63) / 64 * 64;
    while (10 + len + 1 < total)
        dict[len++] = ' ';
    dict[len++] = '\n';
    const unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(len & 0xFF),
                                   (unsigned char)(len >> 8)};
    fwrite(pre, 1, sizeof pre, f);
    fwrite(dict, 1, (size_t)len, f);
    fwrite(data, 1, bytes, f);
    return 0;
}
