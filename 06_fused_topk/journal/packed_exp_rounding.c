/* T62 (06_fused_topk/JOURNAL.md): what packed 16-bit exps (PTX ex2.approx.ftz.bf16x2, ex2.approx.f16x2)
 * would do to the statistic's sum d = sum_i exp(x_i - m) of a row of 16-bit logits, with the sum kept
 * in float32 as the issue proposes. The kernel forms each exponent as one float32 FMA,
 * x log2(e) - m log2(e) (fast_exp.cuh); a packed ex2 takes that exponent in the 16-bit type and
 * returns its result in it. This models those two roundings alone (to nearest even), not the
 * instruction's own approximation, which comes on top: a lower bound of the error. A probability
 * p_i = exp(x_i - m) / d carries d's relative error, and the check allows 1e-4 (common/verify.h).
 * Build and run: cc -O2 -o rounding 06_packed_exp_rounding.c -lm && ./rounding
 * Its output on the machine that wrote the journal's entry is 06_packed_exp_rounding.txt. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* x rounded to bf16: 8 significant bits, float32's range. */
static float to_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    u += 0x7FFFu + (u >> 16 & 1u);
    u &= 0xFFFF0000u;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* x rounded to fp16: 11 significant bits; below 2^-14 the subnormals' fixed step of 2^-24. */
static float to_fp16(float x)
{
    if (x == 0.0f)
        return x;
    int e;
    frexpf(fabsf(x), &e); /* |x| = f 2^e, f in [0.5, 1) */
    const int lowest = e - 11 < -24 ? -24 : e - 11;
    const float step = ldexpf(1.0f, lowest);
    return copysignf(nearbyintf(fabsf(x) / step) * step, x);
}

static uint64_t state = 88172645463325252ull;
static double uniform01(void) /* xorshift64, in [0, 1) */
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (double)(state >> 11) * (1.0 / 9007199254740992.0);
}

static double draw(int dist)
{
    if (dist == 0)
        return 10.0 * uniform01();
    const double sigma = dist == 1 ? 1.0 : 3.0;
    return sigma * sqrt(-2.0 * log(1.0 - uniform01())) * cos(6.283185307179586 * uniform01());
}

int main(void)
{
    enum { V = 50257, ROWS = 200 };
    static float x[V];
    static const char *const dists[] = {"uniform [0,10)", "normal(0,1)", "normal(0,3)"};
    static const char *const types[] = {"bf16", "fp16"};
    for (int dist = 0; dist < 3; dist++)
        for (int type = 0; type < 2; type++) {
            float (*const round16)(float) = type == 0 ? to_bf16 : to_fp16;
            double mean = 0.0, worst = 0.0;
            for (int r = 0; r < ROWS; r++) {
                float m = -INFINITY;
                for (int i = 0; i < V; i++) {
                    x[i] = round16((float)draw(dist));
                    m = x[i] > m ? x[i] : m;
                }
                const float m_log2e = m * 1.44269504f;
                double exact = 0.0;
                float packed = 0.0f;
                for (int i = 0; i < V; i++) {
                    exact += exp((double)x[i] - (double)m);
                    packed += round16(exp2f(round16(fmaf(x[i], 1.44269504f, -m_log2e))));
                }
                const double rel = fabs((double)packed - exact) / exact;
                mean += rel / ROWS;
                worst = rel > worst ? rel : worst;
            }
            printf("%-15s %s logits, %s exps: d's relative error, mean %.2e, worst of %d rows %.2e\n", dists[dist],
                   types[type], types[type], mean, ROWS, worst);
        }
    return 0;
}
