#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_MAX_HEADER 65536

static const char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static int fail(char *err, size_t err_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return -1;
}

/* The value after 'key': in the header dict, or NULL. */
static const char *dict_value(const char *header, const char *key)
{
    char quoted[32];
    for (int q = 0; q < 2; q++) {
        snprintf(quoted, sizeof quoted, q ? "\"%s\"" : "'%s'", key);
        const char *at = strstr(header, quoted);
        if (at) {
            at += strlen(quoted);
            while (*at == ' ')
                at++;
            if (*at != ':')
                return NULL;
            at++;
            while (*at == ' ')
                at++;
            return at;
        }
    }
    return NULL;
}

static int parse_header(const char *h, npy_logits *out, char *err, size_t err_len)
{
    const char *descr = dict_value(h, "descr");
    if (!descr || (*descr != '\'' && *descr != '"'))
        return fail(err, err_len, "its header has no 'descr' (element type)");
    char type[16];
    size_t n = strcspn(descr + 1, "'\"");
    if (n >= sizeof type)
        return fail(err, err_len, "its element type is not float32, float16 or bfloat16");
    memcpy(type, descr + 1, n);
    type[n] = '\0';
    if (strcmp(type, "<f4") == 0)
        out->dtype = DTYPE_F32;
    else if (strcmp(type, "<f2") == 0)
        out->dtype = DTYPE_F16;
    else if (strcmp(type, "<V2") == 0 || strcmp(type, "|V2") == 0)
        out->dtype = DTYPE_BF16;
    else
        return fail(err, err_len, "its element type '%s' is not float32 ('<f4'), float16 ('<f2') or "
                                  "bfloat16 ('<V2')", type);

    const char *order = dict_value(h, "fortran_order");
    if (!order || strncmp(order, "False", 5) != 0)
        return fail(err, err_len, "it is not in C (row-major) order; save np.ascontiguousarray(x)");

    const char *shape = dict_value(h, "shape");
    if (!shape || *shape != '(')
        return fail(err, err_len, "its header has no 'shape'");
    out->ndim = 0;
    const char *p = shape + 1;
    for (;;) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == ')')
            break;
        if (*p < '0' || *p > '9' || out->ndim == NPY_MAX_DIMS)
            return fail(err, err_len, "its shape is not [B,T,V] or [R,V]");
        char *end;
        errno = 0;
        const unsigned long long d = strtoull(p, &end, 10);
        if (errno || d == 0 || d > (1ull << 40))
            return fail(err, err_len, "its shape has an empty or absurd dimension");
        out->shape[out->ndim++] = (size_t)d;
        p = end;
    }
    if (out->ndim < 2)
        return fail(err, err_len, "its shape has %d dimension(s); expected [B,T,V] or [R,V]", out->ndim);
    out->cols = out->shape[out->ndim - 1];
    out->rows = 1;
    for (int d = 0; d < out->ndim - 1; d++) {
        out->rows *= out->shape[d];
        if (out->rows > (1ull << 40) / out->cols)
            return fail(err, err_len, "its shape has more than 2^40 elements");
    }
    if (out->cols > INT32_MAX)
        return fail(err, err_len, "its rows have more than 2^31 - 1 elements");
    return 0;
}

int npy_read_logits(const char *path, npy_logits *out, char *err, size_t err_len)
{
    char what[512];
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(err, err_len, "cannot read it: %s", strerror(errno));

    unsigned char pre[12];
    char *header = NULL;
    int rc = -1;
    size_t header_len, data_offset;
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, magic, 6) != 0) {
        snprintf(what, sizeof what, "it does not start like a .npy file");
        goto bad;
    }
    if (pre[6] == 1) {
        header_len = pre[8] | (size_t)pre[9] << 8;
        data_offset = 10 + header_len;
    } else if (pre[6] == 2 || pre[6] == 3) {
        if (fread(pre + 10, 1, 2, f) != 2) {
            snprintf(what, sizeof what, "its header is cut short");
            goto bad;
        }
        header_len = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
        data_offset = 12 + header_len;
    } else {
        snprintf(what, sizeof what, "its format version %d is not one numpy writes (1, 2, 3)", pre[6]);
        goto bad;
    }
    if (header_len > NPY_MAX_HEADER) {
        snprintf(what, sizeof what, "its header claims %zu bytes", header_len);
        goto bad;
    }
    header = malloc(header_len + 1);
    if (!header || fread(header, 1, header_len, f) != header_len) {
        snprintf(what, sizeof what, "its header is cut short");
        goto bad;
    }
    header[header_len] = '\0';
    if (parse_header(header, out, what, sizeof what))
        goto bad;

    const size_t bytes = out->rows * out->cols * dtype_size(out->dtype);
    if (fseek(f, 0, SEEK_END) || ftell(f) < 0) {
        snprintf(what, sizeof what, "its size cannot be read");
        goto bad;
    }
    const size_t file_bytes = (size_t)ftell(f);
    if (file_bytes != data_offset + bytes) {
        snprintf(what, sizeof what, "its shape needs %zu bytes of data, the file has %zu", bytes,
                 file_bytes > data_offset ? file_bytes - data_offset : 0);
        goto bad;
    }
    out->data = malloc(bytes);
    if (!out->data || fseek(f, (long)data_offset, SEEK_SET) || fread(out->data, 1, bytes, f) != bytes) {
        snprintf(what, sizeof what, out->data ? "its data cannot be read" : "no host memory for its data");
        goto bad;
    }
    rc = 0;
bad:
    if (rc) {
        fail(err, err_len, "%s", what);
        free(out->data);
        out->data = NULL;
    }
    free(header);
    fclose(f);
    return rc;
}

void npy_logits_free(npy_logits *a)
{
    free(a->data);
    a->data = NULL;
}

int npy_write(const char *path, const char *descr, size_t elem_size, const size_t *shape, int ndim,
              const void *data, char *err, size_t err_len)
{
    char dict[256], dims[160] = "";
    size_t count = 1;
    for (int d = 0; d < ndim; d++) {
        snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%zu,%s", shape[d], d + 1 < ndim ? " " : "");
        count *= shape[d];
    }
    if (ndim > 1)
        dims[strlen(dims) - 1] = '\0'; /* numpy writes (2, 3) but (5,) */
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, dims);
    /* Pad with spaces and end with a newline so the data starts on a 64-byte boundary. */
    const int total = (10 + len + 1 + 63) / 64 * 64;
    while (10 + len + 1 < total)
        dict[len++] = ' ';
    dict[len++] = '\n';
    const unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(len & 0xFF),
                                   (unsigned char)(len >> 8)};

    FILE *f = fopen(path, "wb");
    if (!f)
        return fail(err, err_len, "cannot write '%s': %s", path, strerror(errno));
    const int bad = fwrite(pre, 1, 10, f) != 10 || fwrite(dict, 1, (size_t)len, f) != (size_t)len ||
                    fwrite(data, elem_size, count, f) != count;
    if (fclose(f) || bad)
        return fail(err, err_len, "writing '%s' failed", path);
    return 0;
}
