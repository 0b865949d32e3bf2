/* Top-K of a softmax, row by row, in fp64 on the CPU: the answer every top-K kernel is checked
 * against.
 *
 * The K largest probabilities of a row are those of its K largest logits, because exp and the
 * division by the row's sum both keep order. So the reference ranks logits, not probabilities: the
 * order is exact, with no rounding to decide it. Ties (equal logits) go to the lower index, which
 * makes the answer unique; each probability is exp(x - m) / sum exp(x - m) in double.
 *
 * NaN and +inf logits have no top-K: their row has no softmax (exp(+inf - +inf) is NaN), and a
 * NaN has no place in the order. Stage 06 refuses a file that holds one before the GPU is touched,
 * naming the first (npy_find_nan_or_inf in npy.h), and its random logits are finite, so no kernel
 * sees them.
 * -inf logits (masked) are allowed and rank last, ties to the lower index like any other, with
 * probability 0. */
#ifndef TOPK_REFERENCE_H
#define TOPK_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* For each of `rows` rows of `cols` logits: the k (<= cols) best indices, best first, in
 * idx[r * k ...], and their probabilities in prob[r * k ...]. A row that is all -inf has no
 * softmax: its probabilities are NaN, which no kernel output can match. */
void reference_topk(const float *x, size_t rows, size_t cols, int k, int *idx, double *prob);
/* The same on `threads` threads (reference_topk: one a CPU core, host_threads.h), a band of rows
 * each: rows are independent, so the answer is the same bit for bit on any count. */
void reference_topk_threads(const float *x, size_t rows, size_t cols, int k, int *idx, double *prob, int threads);

/* A kernel's answer against the reference. The indices must be exactly the reference's. Each
 * probability must be finite and within VERIFY_RTOL x |ref| + VERIFY_ATOL (verify.h says why these).
 * The output is poisoned before every run (indices -1, probabilities NaN), so an entry the kernel
 * never wrote fails. */
typedef struct {
    size_t index_errors;  /* entries whose index is not the reference's                  */
    size_t prob_failures; /* probabilities outside the tolerance, non-finite ones included */
    size_t nonfinite;
    double max_abs_err, max_rel_err; /* over the finite probabilities; NaN if any is not  */
    size_t first_bad_row;
    bool pass;
} topk_check;

/* idx, prob: rows x k, the kernel's. ref_idx, ref_prob: rows x ref_k with ref_k >= k: the top-k
 * of a row is the first k of its top-ref_k, so one reference serves every smaller k. */
topk_check verify_topk(const int *idx, const float *prob, int k, const int *ref_idx,
                       const double *ref_prob, int ref_k, size_t rows);

#ifdef __cplusplus
}
#endif
#endif
