/* NumPy's .npy files, the ones np.save writes and np.load reads: a magic string, a version, a
 * Python dict literal giving the element type ('descr'), the memory order and the shape, padded to
 * a multiple of 64 bytes, then the raw elements. Stage 06 reads logits from one and writes its
 * top-K indices and probabilities to two, so anyone can run it on their own logits and check the
 * answer with numpy. */
#ifndef COMMON_NPY_H
#define COMMON_NPY_H

#include <stddef.h>

#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NPY_MAX_DIMS 3

typedef struct {
    logit_dtype dtype;
    int ndim;                   /* 2 ([R,V]) or 3 ([B,T,V]) */
    size_t shape[NPY_MAX_DIMS];
    size_t rows, cols;          /* cols: the last dimension (V); rows: the product of the others */
    void *data;                 /* rows x cols elements of dtype, row-major */
} npy_logits;

/* Reads logits: '<f4' (float32), '<f2' (fp16), or '<V2' (bf16: numpy has no bfloat16 of its own, and
 * ml_dtypes' bfloat16, the one JAX and others use, is saved as 2-byte raw elements). Returns 0, or
 * -1 with one line in err saying what is wrong with the file (without its name). */
int npy_read_logits(const char *path, npy_logits *out, char *err, size_t err_len);
void npy_logits_free(npy_logits *a);

/* Writes an array of `ndim` dimensions whose elements are `descr` ('<i4' or '<f4', elem_size bytes
 * each). Returns 0, or -1 with one line in err. */
int npy_write(const char *path, const char *descr, size_t elem_size, const size_t *shape, int ndim,
              const void *data, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif
#endif
