#include "draw_reference.h"

#include <math.h>
#include <stdlib.h>

#include "philox.h"
#include "../../common/verify.h"

bool draw_temperature_ok(double t) { return t >= 0.0 && isfinite(t); }
bool draw_top_p_ok(double p) { return p > 0.0 && p <= 1.0; }
bool draw_min_p_ok(double m) { return m >= 0.0 && m < 1.0; }

/* The relative distance of `at` to `boundary`, folded into *margin. */
static void near(double at, double boundary, double total, double *margin)
{
    const double d = fabs(at - boundary) / total;
    if (d < *margin)
        *margin = d;
}

drawn_token reference_draw_row(const float *logits, const int *ranked, int k, float temperature, float top_p,
                               float min_p, uint64_t seed, uint64_t row)
{
    const double x0 = logits[ranked[0]];
    if (temperature == 0.0f)
        return (drawn_token){.token = ranked[0], .prob = 1.0, .logprob = 0.0, .margin = INFINITY, .kept = 1,
                             .cut_margin = INFINITY};
    if (!(x0 > -INFINITY)) /* every logit masked: no softmax, so no distribution to draw from */
        return (drawn_token){.token = ranked[0], .prob = NAN, .logprob = NAN, .margin = INFINITY, .kept = 1,
                             .cut_margin = INFINITY};
    const double t = temperature;
    double *cum = malloc((size_t)k * sizeof *cum);
    double total = 0.0, margin = INFINITY;
    int by_min_p = 0;
    for (int i = 0; i < k; i++) {
        const double w = exp((logits[ranked[i]] - x0) / t);
        total += w;
        cum[i] = total;
        by_min_p += w >= min_p;
        if (min_p > 0.0f)
            near(w, min_p, 1.0, &margin);
    }
    /* The smallest prefix whose weight reaches P x total: one more than the prefixes short of it. */
    int by_top_p = k;
    if (top_p < 1.0f) {
        const double target = top_p * total;
        by_top_p = 1;
        for (int i = 0; i < k - 1 && cum[i] < target; i++)
            by_top_p++;
        for (int i = 0; i < k; i++)
            near(cum[i], target, total, &margin);
    }
    const int kept = by_top_p < by_min_p ? by_top_p : by_min_p;
    const double kept_total = cum[kept - 1], cut_margin = margin;
    const double target = philox_uniform(seed, row) * kept_total;
    int drawn = 0;
    while (drawn < kept - 1 && cum[drawn] <= target)
        drawn++;
    double rank_sum = 0.0, rank_square_sum = 0.0;
    for (int i = 0; i < kept; i++) {
        near(cum[i], target, kept_total, &margin);
        const double p = (cum[i] - (i ? cum[i - 1] : 0.0)) / kept_total;
        rank_sum += i * p;
        rank_square_sum += (double)i * i * p;
    }
    const double scaled = (logits[ranked[drawn]] - x0) / t;
    const drawn_token d = {.token = ranked[drawn], .prob = exp(scaled) / kept_total,
                           .logprob = scaled - log(kept_total), .margin = margin, .kept = kept,
                           .cut_margin = cut_margin, .rank_mean = rank_sum,
                           .rank_var = fmax(0.0, rank_square_sum - rank_sum * rank_sum)};
    free(cum);
    return d;
}

void reference_draw(const float *x, size_t rows, size_t cols, const int *ranked, int ref_k, int k,
                    const draw_params *p, drawn_token *out)
{
    for (size_t r = 0; r < rows; r++)
        out[r] = reference_draw_row(x + r * cols, ranked + r * (size_t)ref_k, p->ks ? p->ks[r] : k,
                                    p->temperatures ? p->temperatures[r] : p->temperature,
                                    p->top_ps ? p->top_ps[r] : p->top_p, p->min_p, p->seed, r);
}

draw_check verify_draw(const int *tokens, const float *probs, const float *logprobs, const drawn_token *ref,
                       const int *ranked, int ref_k, size_t rows)
{
    draw_check v = {0};
    bool first = true;
    for (size_t r = 0; r < rows; r++) {
        bool ok = true;
        if (tokens[r] != ref[r].token) {
            bool neighbour = false;
            const int reach = ref[r].kept < ref_k ? ref[r].kept + 1 : ref_k;
            for (int j = 0; j < reach; j++)
                neighbour |= ranked[r * (size_t)ref_k + j] == tokens[r];
            if (neighbour && ref[r].margin < DRAW_MARGIN)
                v.near_boundary++;
            else
                v.token_errors++, ok = false;
        } else {
            const bool prob_ok = verify_element(probs[r], ref[r].prob, &v.max_abs_err, &v.max_rel_err, &v.nonfinite);
            const double tolerance = 1e-4 * fmax(1.0, fabs(ref[r].logprob));
            const bool logprob_ok = isfinite(logprobs[r]) && fabs(logprobs[r] - ref[r].logprob) <= tolerance;
            v.nonfinite += !isfinite(logprobs[r]);
            if (!prob_ok || !logprob_ok)
                v.prob_failures++, ok = false;
        }
        if (!ok && first) {
            v.first_bad_row = r;
            first = false;
        }
    }
    if (v.nonfinite)
        v.max_abs_err = v.max_rel_err = NAN;
    v.pass = v.token_errors == 0 && v.prob_failures == 0;
    return v;
}

int draw_rank_of(int token, const int *ranked, int ref_k)
{
    for (int i = 0; i < ref_k; i++)
        if (ranked[i] == token)
            return i;
    return -1;
}

draw_check verify_draw_by_rule(const int *tokens, const bool *valid, const drawn_token *ref, const int *ranked,
                               int ref_k, size_t rows)
{
    draw_check v = {0};
    bool first = true;
    double rank_sum = 0.0, expected = 0.0, variance = 0.0, reach = 0.0;
    for (size_t r = 0; r < rows; r++) {
        const int rank = draw_rank_of(tokens[r], ranked + r * (size_t)ref_k, ref_k);
        bool ok = valid[r] && rank >= 0 && rank <= ref[r].kept && !isnan(ref[r].prob);
        if (ok && rank == ref[r].kept) {
            ok = ref[r].cut_margin < DRAW_MARGIN;
            v.near_boundary += ok;
        }
        if (!ok) {
            v.token_errors++;
            if (first)
                v.first_bad_row = r, first = false;
            continue;
        }
        rank_sum += rank;
        expected += ref[r].rank_mean;
        variance += ref[r].rank_var;
        reach = fmax(reach, fmax(ref[r].rank_mean, ref[r].kept - ref[r].rank_mean));
    }
    /* Bernstein: P(|S - E| >= t) <= 2 exp(-t^2 / (2 (V + reach t / 3))) for independent ranks. */
    const double t = fabs(rank_sum - expected);
    v.rank_z = variance > 0.0 ? (rank_sum - expected) / sqrt(variance) : 0.0;
    v.rank_bound = t > 0.0 ? fmin(1.0, 2.0 * exp(-t * t / (2.0 * (variance + reach * t / 3.0)))) : 1.0;
    v.pass = v.token_errors == 0 && v.rank_bound >= DRAW_RANK_P;
    return v;
}
