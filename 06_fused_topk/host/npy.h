/* NumPy's .npy files, the ones np.save writes and np.load reads: a magic string, a version, a
 * Python dict literal giving the element type ('descr'), the memory order and the shape, padded to
 * a multiple of 64 bytes, then the raw elements. Stage 06 reads logits from one and writes its
 * top-K indices and probabilities to two, so anyone can run it on their own logits and check the
 * answer with numpy. */
#ifndef TOPK_NPY_H
#define TOPK_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NPY_MAX_DIMS 3

/* numpy's own limit on the dict's length (np.load's max_header_size); a longer one is refused. */
#define NPY_MAX_HEADER 10000

/* What a failed read returns: the file's fault (the user fixes the file or the path: a usage error,
 * exit 2), or the machine's (host memory ran out, opening failed for the machine's reasons,
 * errno_is_machines_fault, or reading failed part way: exit 1). */
#define NPY_BAD_FILE (-1)
#define NPY_HOST_FAILED (-2)

typedef struct {
    logit_dtype dtype;
    int ndim;                   /* 2 ([R,V]) or 3 ([B,T,V]) */
    size_t shape[NPY_MAX_DIMS]; /* each at least 1; shape[ndim - 1] (V) at most 2^31 - 1 */
    size_t rows, cols;          /* cols: the last dimension (V); rows: the product of the others */
    void *data;                 /* rows x cols elements of dtype, row-major */
} npy_logits;

/* Reads logits: '<f4' (float32), '<f2' (fp16), or '<V2' or '|V2' (bf16: numpy has no bfloat16 of
 * its own; ml_dtypes' bfloat16, the one JAX and others use, is saved as '<V2', and numpy's 2-byte
 * void as '|V2'). Format versions 1.0, 2.0 and 3.0; the header is the dict numpy writes, parsed
 * as a Python literal (see npy.c for the grammar), with exactly the keys 'descr', 'fortran_order'
 * (False) and 'shape' (2 or 3 dimensions), and the file holds exactly the bytes its shape needs.
 * Returns 0, or NPY_BAD_FILE or NPY_HOST_FAILED with one printable line in err saying what is
 * wrong (without the file's name; what it quotes from the file is escaped and cut short). On
 * failure out->data is NULL. A file that a writer changes while it is read (made shorter, longer,
 * or rewritten in place, as its length and its time of last write tell) is NPY_BAD_FILE: "the file
 * changed while it was being read". */
int npy_read_logits(const char *path, npy_logits *out, char *err, size_t err_len);

/* npy_read_logits in two steps on one open file: a program judges what the header tells before it
 * reads gigabytes, and then reads the data of the file it judged, any change meanwhile told. */
typedef struct {
    FILE *stream;
    size_t data_offset, data_bytes; /* where the data starts, and how long its header says it is */
    long long size, mtime_ns;       /* the file's length and time of last write when its header was read */
} npy_file;

/* Opens path and judges its header as npy_read_logits does, its data left unread (out->data stays
 * NULL), with the same return values: on 0 the file is open in *file for npy_read_data.
 * npy_close(file) follows either way (after a failure it has nothing to close). */
int npy_open_logits(const char *path, npy_file *file, npy_logits *out, char *err, size_t err_len);

/* Reads the data of the file npy_open_logits opened into out->data, as npy_read_logits does: a file
 * that ends before its data does, or whose length or time of last write is no longer the one its
 * header was read with, is NPY_BAD_FILE, "the file changed while it was being read". On failure
 * out->data is NULL. */
int npy_read_data(npy_file *file, npy_logits *out, char *err, size_t err_len);

void npy_close(npy_file *file);

/* A vector of 4-byte elements, one a row: stage 06's per-row draw parameters. */
typedef struct {
    size_t n;   /* at least 1 */
    void *data; /* n elements, to be freed with free() */
} npy_vector;

/* Reads a one-dimensional array of exactly n elements whose type is exactly `descr`, '<f4' (float32)
 * or '<i4' (int32), as npy_read_logits reads logits, with the same return values. Another length is
 * refused from the header, before any data is read: "it has N values and the logits n rows: give one
 * a row". */
int npy_read_vector(const char *path, const char *descr, size_t n, npy_vector *out, char *err, size_t err_len);

/* The same for a whole file already in memory: n bytes at `bytes`. out->data is a copy. */
int npy_parse_logits(const void *bytes, size_t n, npy_logits *out, char *err, size_t err_len);

/* The first logit of `a` that is NaN or +inf (first_nan_or_inf in dtype.h): writes its place in the
 * file's own shape into `where`, "[b, t, v]" for a 3-D file and "[r, v]" for a 2-D one, and returns
 * "NaN" or "+inf"; returns NULL, leaving `where` alone, when every logit is a number or -inf. */
const char *npy_find_nan_or_inf(const npy_logits *a, char *where, size_t where_len);

/* Whether `a` has a row (its logits along the last dimension) of nothing but -inf, which has no
 * softmax: writes the first such row's place into `where`, "[b, t]" for a 3-D file and "[r]" for a
 * 2-D one. Every logit is a number or -inf (npy_find_nan_or_inf found none). */
bool npy_find_masked_row(const npy_logits *a, char *where, size_t where_len);

void npy_logits_free(npy_logits *a);

/* Writes an array of `ndim` dimensions whose elements are `descr` ('<i4' or '<f4', elem_size bytes
 * each) to f, as np.save does. Returns 0, or -1 with one line in err, writing nothing, when ndim is
 * not 1 to NPY_MAX_DIMS, when the header's dict, descr and shape written out, would be longer
 * than this writer's 192 bytes, or when the array's size does not fit a size_t. A write that fails
 * sets the stream's error flag, for whoever closes it to check (outfile_commit does). */
int npy_write(FILE *f, const char *descr, size_t elem_size, const size_t *shape, int ndim, const void *data,
              char *err, size_t err_len);

#ifdef __cplusplus
}
#endif
#endif
