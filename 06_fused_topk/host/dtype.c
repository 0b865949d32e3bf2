#include "dtype.h"

#include <float.h>
#include <math.h>
#include <string.h>

static const char *const names[] = {"float32", "bf16", "fp16"};

const char *dtype_name(logit_dtype dtype) { return names[dtype]; }

int dtype_from_name(const char *name, logit_dtype *dtype)
{
    for (int d = 0; d < 3; d++)
        if (strcmp(name, names[d]) == 0) {
            *dtype = (logit_dtype)d;
            return 0;
        }
    return -1;
}

size_t dtype_size(logit_dtype dtype) { return dtype == DTYPE_F32 ? 4 : 2; }

double dtype_largest(logit_dtype dtype)
{
    return dtype == DTYPE_F32 ? FLT_MAX : dtype == DTYPE_F16 ? 65504.0 : 0x1.fep127; /* bf16: 0x7F7F */
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t float_to_bf16(float f)
{
    const uint32_t u = bits_of(f);
    if (isnan(f))
        return (uint16_t)(u >> 16 | 0x40); /* stays a NaN even if the low bits held its payload */
    /* Round to nearest, ties to even: add half of the dropped part, plus one if the kept part is odd. */
    return (uint16_t)((u + 0x7FFFu + (u >> 16 & 1u)) >> 16);
}

float bf16_to_float(uint16_t h) { return float_of((uint32_t)h << 16); }

uint16_t float_to_fp16(float f)
{
    const uint32_t u = bits_of(f), sign = u >> 16 & 0x8000u, a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u)
        return (uint16_t)(sign | 0x7E00u); /* NaN */
    if (a >= 0x47800000u)
        return (uint16_t)(sign | 0x7C00u); /* 65536 and above (and Inf): Inf */
    if (a < 0x38800000u) {
        /* Below fp16's smallest normal (2^-14): a multiple of 2^-24. Scaling by 2^24 is exact, and
         * lrintf rounds to nearest even; 0x400 is then the smallest normal, correctly encoded. */
        return (uint16_t)(sign | (uint32_t)lrintf(float_of(a) * 16777216.0f));
    }
    uint32_t h = ((a >> 23) - 112) << 10 | (a & 0x7FFFFFu) >> 13; /* exponent rebiased 127 -> 15 */
    const uint32_t dropped = a & 0x1FFFu;
    if (dropped > 0x1000u || (dropped == 0x1000u && (h & 1u)))
        h++; /* a carry into the exponent is right too: up to the next power of two, or to Inf */
    return (uint16_t)(sign | h);
}

float fp16_to_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = h >> 10 & 0x1Fu, m = h & 0x3FFu;
    if (e == 0)
        return float_of(sign | bits_of(ldexpf((float)m, -24))); /* zero and subnormals */
    if (e == 31)
        return float_of(sign | 0x7F800000u | m << 13); /* Inf and NaN */
    return float_of(sign | (e + 112) << 23 | m << 13);
}

void encode_logits(float *x, void *dst, size_t n, logit_dtype dtype)
{
    if (dtype == DTYPE_F32) {
        memcpy(dst, x, n * sizeof(float));
        return;
    }
    uint16_t *h = dst;
    for (size_t i = 0; i < n; i++) {
        h[i] = dtype == DTYPE_BF16 ? float_to_bf16(x[i]) : float_to_fp16(x[i]);
        x[i] = dtype == DTYPE_BF16 ? bf16_to_float(h[i]) : fp16_to_float(h[i]);
    }
}

void decode_logits(const void *src, float *x, size_t n, logit_dtype dtype)
{
    if (dtype == DTYPE_F32) {
        memcpy(x, src, n * sizeof(float));
        return;
    }
    const uint16_t *h = src;
    for (size_t i = 0; i < n; i++)
        x[i] = dtype == DTYPE_BF16 ? bf16_to_float(h[i]) : fp16_to_float(h[i]);
}

size_t first_nan_or_inf(const void *src, size_t n, logit_dtype dtype)
{
    /* Decoded a chunk at a time, so that the test is on floats whatever the dtype. */
    enum { CHUNK = 4096 };
    float x[CHUNK];
    for (size_t first = 0; first < n; first += CHUNK) {
        const size_t count = n - first < CHUNK ? n - first : CHUNK;
        decode_logits((const unsigned char *)src + first * dtype_size(dtype), x, count, dtype);
        for (size_t i = 0; i < count; i++)
            if (isnan(x[i]) || x[i] == INFINITY)
                return first + i;
    }
    return n;
}
