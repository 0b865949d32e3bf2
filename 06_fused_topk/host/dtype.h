/* The types logits come in: float32, and the two 16-bit floats models emit (bfloat16: float32's
 * exponent with 8 bits of mantissa; fp16: 5 exponent bits, 11 of mantissa). The host converts with
 * round-to-nearest-even, as the GPU's conversions do, so a logit means the same number on both. */
#ifndef TOPK_DTYPE_H
#define TOPK_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DTYPE_F32, DTYPE_BF16, DTYPE_F16 } logit_dtype;

const char *dtype_name(logit_dtype dtype);       /* "float32", "bf16", "fp16" */
int dtype_from_name(const char *name, logit_dtype *dtype); /* 0, or -1 for an unknown name */
size_t dtype_size(logit_dtype dtype);            /* bytes per element */
double dtype_largest(logit_dtype dtype);         /* the largest finite value */

uint16_t float_to_bf16(float f);
float bf16_to_float(uint16_t h);
uint16_t float_to_fp16(float f);
float fp16_to_float(uint16_t h);

/* Stores n floats as `dtype` in dst (n x dtype_size bytes), and writes back into x the values the
 * stored ones stand for, so x is exactly what the GPU will read. */
void encode_logits(float *x, void *dst, size_t n, logit_dtype dtype);

/* The inverse: n stored values of `dtype` as floats. */
void decode_logits(const void *src, float *x, size_t n, logit_dtype dtype);

/* The index of the first of n stored values of `dtype` that decodes to NaN or +inf (a logit no
 * softmax is defined for: common/reference.h), or n when there is none; -inf (a masked logit) is
 * fine. */
size_t first_nan_or_inf(const void *src, size_t n, logit_dtype dtype);

#ifdef __cplusplus
}
#endif
#endif
