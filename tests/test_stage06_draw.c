/* Stage 06's draw of one token a row (06_fused_topk/host/draw_reference.h, 06_fused_topk/fast/draw.cuh).
 * On the CPU (run everywhere): Philox4x32-10 against the published known answers, and the fp64
 * reference draw on rows worked out by hand: T -> 0 is the argmax, P = 1 is plain top-K sampling,
 * all the mass on one token, the cuts of top-p and min-p, ties, masked logits, per-row parameters,
 * the verification's rule for a draw near a boundary, the rule for another sampler's tokens, and a
 * chi-square test of the reference's draws against the exact distribution.
 * On the GPU (each skips without one): every token the reference's on random rows, through fast_row
 * and fast_split, float32 and bf16; the same chi-square test of the kernel's draws; the edge cases;
 * per-row arrays; the same tokens whichever kernel draws a row; rows full of ties; FlashInfer's
 * sampler by the draw's rule. */
#include <stdlib.h>
#include <string.h>

#include "../06_fused_topk/host/draw_run.h"
#include "../06_fused_topk/host/philox.h"
#include "../06_fused_topk/host/draw_reference.h"
#include "topk_test.h"

/* ---- Philox ---- */

/* The three philox4x32 10 lines of Random123's kat_vectors: counter, key, expected output. */
Test(draw_reference, philox_known_answers)
{
    static const struct {
        uint32_t counter[4], key[2], out[4];
    } kat[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
        {{~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}, {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
        {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
         {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    };
    for (size_t i = 0; i < sizeof kat / sizeof kat[0]; i++) {
        philox4x32 c;
        memcpy(c.v, kat[i].counter, sizeof c.v);
        const philox4x32 out = philox4x32_10(c, kat[i].key[0], kat[i].key[1]);
        for (int w = 0; w < 4; w++)
            cr_expect_eq(out.v[w], kat[i].out[w], "vector %zu word %d: %08x, expected %08x", i, w, out.v[w],
                         kat[i].out[w]);
    }
}

/* u is a multiple of 2^-24 in [0, 1), the same for the same (seed, row), and uniform: a chi-square
 * test over 16 bins of 65536 rows (15 degrees of freedom; 37.70 is the 0.999 quantile). */
Test(draw_reference, philox_uniform_is_24_bits_and_uniform)
{
    enum { BINS = 16, N = 65536 };
    size_t count[BINS] = {0};
    for (uint64_t r = 0; r < N; r++) {
        const double u = philox_uniform(2026, r);
        cr_assert(u >= 0.0 && u < 1.0 && u * 16777216.0 == floor(u * 16777216.0), "row %llu: u = %.17g",
                  (unsigned long long)r, u);
        count[(int)(u * BINS)]++;
    }
    cr_expect_eq(philox_uniform(2026, 12345), philox_uniform(2026, 12345));
    cr_expect_neq(philox_uniform(2026, 12345), philox_uniform(2027, 12345));
    cr_expect_neq(philox_uniform(2026, 12345), philox_uniform(2026, 12346));
    double chi2 = 0.0;
    for (int b = 0; b < BINS; b++)
        chi2 += pow((double)count[b] - N / BINS, 2) / (N / BINS);
    cr_expect_lt(chi2, 37.70, "chi-square of u over 16 bins: %.2f", chi2);
}

/* ---- The reference on rows worked out by hand ---- */

/* The draw of one row of n logits with top-k. */
static drawn_token draw_one(const float *x, int n, int k, float t, float p, float m, uint64_t seed, uint64_t row)
{
    int ranked[64];
    double prob[64];
    reference_topk(x, 1, (size_t)n, k, ranked, prob);
    return reference_draw_row(x, ranked, k, t, p, m, seed, row);
}

Test(draw_reference, temperature_zero_and_near_zero_is_the_argmax)
{
    const float x[6] = {0.5f, 2.0f, 1.9f, -1.0f, 1.99f, 0.0f};
    for (uint64_t r = 0; r < 200; r++) {
        const drawn_token greedy = draw_one(x, 6, 6, 0.0f, 1.0f, 0.0f, 7, r);
        cr_expect(greedy.token == 1 && greedy.prob == 1.0 && greedy.logprob == 0.0, "T = 0, row %llu: token %d",
                  (unsigned long long)r, greedy.token);
        const drawn_token cold = draw_one(x, 6, 6, 1e-4f, 1.0f, 0.0f, 7, r);
        cr_expect(cold.token == 1 && fabs(cold.prob - 1.0) < 1e-12, "T = 1e-4, row %llu: token %d, p %.17g",
                  (unsigned long long)r, cold.token, cold.prob);
    }
}

/* P = 1 and M = 0: all K kept, and the token is where u falls among the K softmax probabilities. */
Test(draw_reference, top_p_one_is_plain_top_k_sampling)
{
    const float x[8] = {1.0f, 3.0f, 0.5f, 2.5f, -2.0f, 2.0f, 0.0f, 1.5f};
    const int k = 5;
    int ranked[8];
    double prob[8];
    reference_topk(x, 1, 8, k, ranked, prob);
    const float t = 1.3f;
    double w[5], total = 0.0;
    for (int i = 0; i < k; i++)
        total += w[i] = exp(((double)x[ranked[i]] - x[ranked[0]]) / t);
    for (uint64_t r = 0; r < 500; r++) {
        const drawn_token d = reference_draw_row(x, ranked, k, t, 1.0f, 0.0f, 99, r);
        const double at = philox_uniform(99, r) * total;
        double cum = 0.0;
        int want = 0;
        while (cum + w[want] <= at)
            cum += w[want++];
        cr_expect_eq(d.kept, k);
        cr_expect_eq(d.token, ranked[want], "row %llu: token %d, expected %d", (unsigned long long)r, d.token,
                     ranked[want]);
        cr_expect(fabs(d.prob - w[want] / total) < 1e-12 && fabs(d.logprob - log(w[want] / total)) < 1e-12,
                  "row %llu: p %.17g, log p %.17g", (unsigned long long)r, d.prob, d.logprob);
    }
}

Test(draw_reference, all_the_mass_on_one_token)
{
    float x[100];
    for (int i = 0; i < 100; i++)
        x[i] = -1000.0f;
    x[37] = 5.0f;
    for (uint64_t r = 0; r < 100; r++) {
        const drawn_token d = draw_one(x, 100, 50, 1.0f, 0.9f, 0.0f, 3, r);
        cr_expect(d.token == 37 && d.prob == 1.0 && d.logprob == 0.0 && d.kept == 1, "row %llu: token %d",
                  (unsigned long long)r, d.token);
    }
}

/* Weights 1, 1/2, 1/5, 1/20 at T = 1 (logits log w): total 1.75. */
Test(draw_reference, top_p_and_min_p_cut_the_prefix)
{
    const float x[4] = {logf(0.05f), logf(1.0f), logf(0.2f), logf(0.5f)}; /* ranked 1, 3, 2, 0 */
    static const struct {
        float p, m;
        int kept;
    } cuts[] = {
        {1.0f, 0.0f, 4},  {0.5f, 0.0f, 1},  /* 0.875: reached by the first weight */
        {0.8f, 0.0f, 2},  /* 1.4: by 1.5, the first two */
        {0.99f, 0.0f, 4}, /* 1.7325: past 1.7, all four */
        {1.0f, 0.3f, 2},  {0.8f, 0.1f, 2},  {1.0f, 0.6f, 1},
    };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        for (uint64_t r = 0; r < 50; r++) {
            const drawn_token d = draw_one(x, 4, 4, 1.0f, cuts[i].p, cuts[i].m, 11, r);
            cr_expect_eq(d.kept, cuts[i].kept, "P %g M %g: kept %d, expected %d", cuts[i].p, cuts[i].m, d.kept,
                         cuts[i].kept);
            static const int order[4] = {1, 3, 2, 0};
            bool among = false;
            for (int j = 0; j < cuts[i].kept; j++)
                among |= d.token == order[j];
            cr_expect(among, "P %g M %g row %llu: token %d outside the kept", cuts[i].p, cuts[i].m,
                      (unsigned long long)r, d.token);
        }
    }
    /* A weight at M (0.2, as far as logf and exp round): a boundary the reference reports. */
    const drawn_token at_m = draw_one(x, 4, 4, 1.0f, 1.0f, 0.2f, 11, 0);
    cr_expect_lt(at_m.margin, DRAW_MARGIN, "a weight at M: margin %.3g", at_m.margin);
}

/* Equal logits: the top-K is the first K indices, each drawn with probability 1/K, the token where
 * u falls: index floor(u K). */
Test(draw_reference, ties_draw_uniformly_among_the_lowest_indices)
{
    float x[40];
    for (int i = 0; i < 40; i++)
        x[i] = 0.25f;
    for (uint64_t r = 0; r < 1000; r++) {
        const drawn_token d = draw_one(x, 40, 8, 0.7f, 1.0f, 0.0f, 5, r);
        const int want = (int)(philox_uniform(5, r) * 8);
        cr_expect(d.token == want || d.margin < DRAW_MARGIN, "row %llu: token %d, expected %d",
                  (unsigned long long)r, d.token, want);
        cr_expect(fabs(d.prob - 0.125) < 1e-15);
    }
}

/* -inf logits have weight 0: never drawn, even where K takes them in (fewer finite logits than K). */
Test(draw_reference, masked_logits_are_never_drawn)
{
    float x[30];
    for (int i = 0; i < 30; i++)
        x[i] = i % 7 == 3 ? (float)i / 10.0f : -INFINITY;
    for (uint64_t r = 0; r < 2000; r++) {
        const drawn_token d = draw_one(x, 30, 20, 2.0f, 1.0f, 0.0f, 13, r);
        cr_expect(isfinite(x[d.token]) && isfinite(d.logprob) && d.prob > 0.0, "row %llu: token %d",
                  (unsigned long long)r, d.token);
    }
    /* Every logit masked: no softmax, no distribution; NaN, which no kernel output passes. */
    for (int i = 0; i < 30; i++)
        x[i] = -INFINITY;
    const drawn_token none = draw_one(x, 30, 20, 1.0f, 1.0f, 0.0f, 13, 0);
    cr_expect(isnan(none.prob) && isnan(none.logprob), "an all -inf row: p %g", none.prob);
}

/* reference_draw with per-row T, P and K gives each row what a call with that row's values does. */
Test(draw_reference, per_row_parameters)
{
    enum { ROWS = 6, COLS = 50, K = 12 };
    float x[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++)
        x[i] = (float)((i * 2654435761u >> 9) % 1000) / 100.0f;
    int ranked[ROWS * K];
    double prob[ROWS * K];
    reference_topk(x, ROWS, COLS, K, ranked, prob);
    const float t[ROWS] = {0.0f, 0.5f, 1.0f, 2.0f, 0.8f, 1e-3f};
    const float p[ROWS] = {1.0f, 0.3f, 0.9f, 1.0f, 0.95f, 0.5f};
    const int ks[ROWS] = {1, 12, 5, 7, 12, 3};
    const draw_params params = {.min_p = 0.05f, .seed = 21, .temperatures = t, .top_ps = p, .ks = ks};
    drawn_token d[ROWS];
    reference_draw(x, ROWS, COLS, ranked, K, K, &params, d);
    for (int r = 0; r < ROWS; r++) {
        const drawn_token one = reference_draw_row(x + r * COLS, ranked + r * K, ks[r], t[r], p[r], 0.05f, 21,
                                                   (uint64_t)r);
        cr_expect(d[r].token == one.token && d[r].kept <= ks[r], "row %d: token %d, expected %d", r, d[r].token,
                  one.token);
    }
}

/* The verification: the reference's token passes; a neighbour passes only within the margin, and
 * is counted; a token outside the kept tokens, or a NaN, never passes. */
Test(draw_reference, verification_accepts_a_neighbour_only_near_a_boundary)
{
    const int ranked[4] = {2, 0, 3, 1};
    drawn_token ref = {.token = 0, .prob = 0.3, .logprob = log(0.3), .margin = 0.1, .kept = 2};
    int token = 0;
    float p = 0.3f, lp = logf(0.3f);
    cr_expect(verify_draw(&token, &p, &lp, &ref, ranked, 4, 1).pass);
    token = 2;
    cr_expect_not(verify_draw(&token, &p, &lp, &ref, ranked, 4, 1).pass, "a neighbour far from a boundary");
    ref.margin = 1e-7;
    const draw_check near = verify_draw(&token, &p, &lp, &ref, ranked, 4, 1);
    cr_expect(near.pass && near.near_boundary == 1, "a neighbour within the margin");
    token = 1; /* beyond the kept tokens and the next one */
    cr_expect_not(verify_draw(&token, &p, &lp, &ref, ranked, 4, 1).pass, "a token past the kept ones");
    token = 0;
    p = NAN;
    cr_expect_not(verify_draw(&token, &p, &lp, &ref, ranked, 4, 1).pass, "a NaN probability");
    p = 0.3f;
    lp = NAN;
    cr_expect_not(verify_draw(&token, &p, &lp, &ref, ranked, 4, 1).pass, "a NaN log-probability");
}

/* The kept distribution's rank: four equal logits, nothing cut, are ranks 0 to 3 equally. */
Test(draw_reference, kept_rank_mean_and_variance)
{
    const float x[4] = {1.0f, 1.0f, 1.0f, 1.0f};
    const drawn_token d = draw_one(x, 4, 4, 1.0f, 1.0f, 0.0f, 5, 0);
    cr_expect(fabs(d.rank_mean - 1.5) < 1e-12 && fabs(d.rank_var - 1.25) < 1e-12, "mean %g, variance %g",
              d.rank_mean, d.rank_var);
}

/* The rule for another sampler's tokens, on 2048 rows of 64 logits, K = 20, T = 0.8, top-p 0.9:
 * draws from other random numbers pass; the best token every time fails the rank test (and passes
 * it on one row, where it cannot be told from a draw); a token past the kept ones, or one marked
 * invalid, fails; the next token after the kept ones passes only within the cut's margin. */
Test(draw_reference, rule_check_takes_other_draws_and_refuses_greedy)
{
    enum { ROWS = 2048, COLS = 64, K = 20 };
    float *x = malloc(sizeof(float) * ROWS * COLS);
    int *ranked = malloc(sizeof(int) * ROWS * K), *tokens = malloc(sizeof(int) * ROWS);
    double *prob = malloc(sizeof(double) * ROWS * K);
    drawn_token *ref = malloc(sizeof(drawn_token) * ROWS), *other = malloc(sizeof(drawn_token) * ROWS);
    bool *valid = malloc(sizeof(bool) * ROWS);
    for (int i = 0; i < ROWS * COLS; i++)
        x[i] = (float)((i * 2654435761u >> 7) % 4096) / 1024.0f;
    reference_topk(x, ROWS, COLS, K, ranked, prob);
    const draw_params mine = {.temperature = 0.8f, .top_p = 0.9f, .seed = 1}, theirs = {.temperature = 0.8f,
                                                                                         .top_p = 0.9f, .seed = 2};
    reference_draw(x, ROWS, COLS, ranked, K, K, &mine, ref);
    reference_draw(x, ROWS, COLS, ranked, K, K, &theirs, other);
    for (int r = 0; r < ROWS; r++)
        tokens[r] = other[r].token, valid[r] = true;
    const draw_check fair = verify_draw_by_rule(tokens, valid, ref, ranked, K, ROWS);
    cr_expect(fair.pass && fair.token_errors == 0, "other draws: %zu errors, rank z %.2f", fair.token_errors,
              fair.rank_z);
    for (int r = 0; r < ROWS; r++)
        tokens[r] = ranked[r * K];
    const draw_check greedy = verify_draw_by_rule(tokens, valid, ref, ranked, K, ROWS);
    cr_expect(!greedy.pass && greedy.token_errors == 0 && greedy.rank_bound < DRAW_RANK_P,
              "greedy: rank z %.2f, bound %.2g", greedy.rank_z, greedy.rank_bound);
    cr_expect(fair.rank_bound > 1e-3, "other draws: bound %.2g", fair.rank_bound);
    cr_expect(verify_draw_by_rule(tokens, valid, ref, ranked, K, 1).pass, "greedy on one row");
    tokens[0] = ranked[ref[0].kept + 1 < K ? ref[0].kept + 1 : K - 1];
    cr_expect_not(verify_draw_by_rule(tokens, valid, ref, ranked, K, 1).pass, "a token past the kept ones");
    tokens[0] = ranked[0];
    valid[0] = false;
    cr_expect_not(verify_draw_by_rule(tokens, valid, ref, ranked, K, 1).pass, "a row marked invalid");
    valid[0] = true;
    cr_assert(ref[0].kept < K, "row 0 keeps fewer than K");
    tokens[0] = ranked[ref[0].kept];
    ref[0].cut_margin = 0.1;
    cr_expect_not(verify_draw_by_rule(tokens, valid, ref, ranked, K, 1).pass, "the next token, far from the cut");
    ref[0].cut_margin = 1e-7;
    const draw_check near = verify_draw_by_rule(tokens, valid, ref, ranked, K, 1);
    cr_expect(near.pass && near.near_boundary == 1, "the next token, within the cut's margin");
    free(x), free(ranked), free(tokens), free(prob), free(ref), free(other), free(valid);
}

/* ---- A chi-square test of draws against the exact distribution ---- */

/* 16 logits, the top 8 the logs of 10, 8, 6, 4, 3, 2, 1, 1, the rest of 0.1; K = 8. Two settings,
 * each far from every boundary:
 *   T = 0.5, P = 0.9:  weights w^2 = 100, 64, 36, 16, 9, ... total 231; 0.9 x 231 = 207.9 is first
 *                      reached at 216: 4 kept (3 degrees of freedom);
 *   T = 1, M = 0.25:   w / 10 >= 0.25 keeps 10, 8, 6, 4, 3: 5 kept (4 degrees of freedom).
 * p < 1e-3 fails: the 0.999 quantiles of chi-square are 16.27 (3) and 18.47 (4). Fixed seeds make
 * the test deterministic; a correct draw fails it for one choice of seeds in a thousand. */
#define CHI_COLS 16
#define CHI_K 8
typedef struct {
    float t, p, m;
    int kept;
    double quantile;
} chi_setting;
static const chi_setting chi_settings[] = {{0.5f, 0.9f, 0.0f, 4, 16.27}, {1.0f, 1.0f, 0.25f, 5, 18.47}};

static void chi_row(float *x)
{
    static const float w[CHI_K] = {10, 8, 6, 4, 3, 2, 1, 1};
    for (int i = 0; i < CHI_COLS; i++) /* the winners at scattered places: 3i mod 16 */
        x[3 * i % CHI_COLS] = i < CHI_K ? logf(w[i]) : logf(0.1f);
}

/* The chi-square statistic of `count` (kept entries, by rank) against the exact probabilities of
 * the setting, from the row's float logits in double. */
static double chi_square(const float *x, const chi_setting *s, const size_t *count, size_t n)
{
    double w[CHI_K], total = 0.0;
    for (int i = 0; i < s->kept; i++)
        total += w[i] = exp(((double)x[3 * i % CHI_COLS] - x[0]) / s->t);
    double chi2 = 0.0;
    for (int i = 0; i < s->kept; i++) {
        const double expected = (double)n * w[i] / total;
        chi2 += pow((double)count[i] - expected, 2) / expected;
    }
    return chi2;
}

/* The rank of `token` in chi_row's order, or -1 outside the top K. */
static int chi_rank(int token)
{
    for (int i = 0; i < CHI_K; i++)
        if (3 * i % CHI_COLS == token)
            return i;
    return -1;
}

Test(draw_reference, reference_draws_follow_the_distribution)
{
    float x[CHI_COLS];
    chi_row(x);
    int ranked[CHI_K];
    double prob[CHI_K];
    reference_topk(x, 1, CHI_COLS, CHI_K, ranked, prob);
    for (size_t s = 0; s < sizeof chi_settings / sizeof chi_settings[0]; s++) {
        const chi_setting *cs = &chi_settings[s];
        size_t count[CHI_K] = {0}, n = 0;
        for (uint64_t seed = 1; seed <= 8; seed++)
            for (uint64_t r = 0; r < 4096; r++, n++) {
                const int rank = chi_rank(reference_draw_row(x, ranked, CHI_K, cs->t, cs->p, cs->m, seed, r).token);
                cr_assert(rank >= 0 && rank < cs->kept, "setting %zu: a token outside the kept ones", s);
                count[rank]++;
            }
        const double chi2 = chi_square(x, cs, count, n);
        cr_expect_lt(chi2, cs->quantile, "setting %zu: chi-square %.2f over %zu draws", s, chi2, n);
    }
}

/* ---- The GPU ---- */

/* Draws top-k of the case with `how` by fast_split (split) or fast_row, and expects the top-K and
 * every token to pass; near-boundary rows at most one in a thousand, plus one. */
static void expect_draws_pass(topk_case *c, int k, draw_params how, bool split, const char *what)
{
    draw_run s = draw_run_create(c, k, how, split);
    topk_check topk;
    const draw_check d = draw_run_check(&s, c, k, &topk);
    cr_expect(topk.pass, "%s: the top-K: %zu index errors", what, topk.index_errors);
    cr_expect(d.pass, "%s (%s, %s %zu x %zu, K=%d): %zu token errors, %zu probability failures, first bad row %zu",
              what, split ? "fast_split" : "fast_row", dtype_name(c->dtype), c->rows, c->cols, k, d.token_errors,
              d.prob_failures, d.first_bad_row);
    cr_expect_leq(d.near_boundary, c->rows / 1000 + 1, "%s: %zu rows near a boundary", what, d.near_boundary);
    draw_run_destroy(&s);
}

/* Whether fast_split can run here (clusters, sm_90). */
static bool split_here(void) { return fast_split_topk_variant.why_not_here() == NULL; }

static const draw_params settings[] = {
    {.temperature = 0.8f, .top_p = 0.9f, .seed = 1},
    {.temperature = 1.0f, .top_p = 1.0f, .seed = 2},
    {.temperature = 1.5f, .top_p = 0.95f, .min_p = 0.01f, .seed = 3},
    {.temperature = 0.0f, .top_p = 1.0f, .seed = 4},
    {.temperature = 0.3f, .top_p = 0.5f, .min_p = 0.2f, .seed = 5},
};
#define N_SETTINGS (sizeof settings / sizeof settings[0])

Test(stage06_draw, every_token_is_the_references)
{
    open_or_skip();
    static const struct {
        size_t rows, cols;
        logit_dtype dtype;
        bool split;
    } shapes[] = {{256, 50257, DTYPE_F32, false}, {256, 32000, DTYPE_BF16, false}, {3, 128256, DTYPE_F32, true},
                  {2, 50257, DTYPE_BF16, true}};
    static const int ks[] = {1, 10, 50, 256, 1024};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        if (shapes[i].split && !split_here())
            continue;
        topk_case c = topk_case_create(shapes[i].rows, shapes[i].cols, shapes[i].dtype,
                                       (input_spec){DIST_NORMAL, -3.0, 3.0}, 1201 + i, 1024);
        for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++)
            for (size_t s = 0; s < N_SETTINGS; s++)
                expect_draws_pass(&c, ks[k], settings[s], shapes[i].split, "random rows");
        topk_case_destroy(&c);
    }
}

Test(stage06_draw, gpu_draws_follow_the_distribution)
{
    open_or_skip();
    enum { ROWS = 4096 };
    topk_case c = topk_case_create(ROWS, CHI_COLS, DTYPE_F32, (input_spec){DIST_UNIFORM, 0.0, 1.0}, 1, CHI_K);
    for (size_t r = 0; r < ROWS; r++)
        chi_row(c.x_host + r * CHI_COLS);
    topk_case_refresh(&c);
    for (size_t s = 0; s < sizeof chi_settings / sizeof chi_settings[0]; s++) {
        const chi_setting *cs = &chi_settings[s];
        size_t count[CHI_K] = {0}, n = 0;
        for (uint64_t seed = 101; seed <= 108; seed++) {
            const draw_params how = {.temperature = cs->t, .top_p = cs->p, .min_p = cs->m, .seed = seed};
            draw_run run = draw_run_create(&c, CHI_K, how, false);
            topk_check topk;
            const draw_check d = draw_run_check(&run, &c, CHI_K, &topk);
            cr_expect(d.pass && topk.pass, "setting %zu seed %llu: %zu token errors", s, (unsigned long long)seed,
                      d.token_errors);
            for (size_t r = 0; r < ROWS; r++, n++) {
                const int rank = chi_rank(run.tokens[r]);
                cr_assert(rank >= 0 && rank < cs->kept, "setting %zu: token %d outside the kept ones", s,
                          run.tokens[r]);
                count[rank]++;
            }
            draw_run_destroy(&run);
        }
        const double chi2 = chi_square(c.x_host, cs, count, n);
        cr_expect_lt(chi2, cs->quantile, "setting %zu: chi-square %.2f over %zu draws", s, chi2, n);
    }
    topk_case_destroy(&c);
}

/* All the mass on one token, masked logits (fewer finite ones than K), tiny temperatures. */
Test(stage06_draw, edge_cases)
{
    open_or_skip();
    const size_t rows = 40, cols = 5000;
    topk_case c = topk_case_create(rows, cols, DTYPE_F32, (input_spec){DIST_NORMAL, -3.0, 3.0}, 1301, 64);
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < cols; i++) {
            float *x = &c.x_host[r * cols + i];
            if (r % 3 == 0) /* one token far above the rest */
                *x = i == 17 * r % cols ? 40.0f : *x;
            else if (r % 3 == 1 && (i * 7 + r) % 331 != 0) /* some 15 finite logits, the rest masked */
                *x = -INFINITY;
        }
    topk_case_refresh(&c);
    const draw_params cases[] = {{.temperature = 1.0f, .top_p = 1.0f, .seed = 8},
                                   {.temperature = 1e-3f, .top_p = 1.0f, .seed = 9},
                                   {.temperature = 100.0f, .top_p = 0.99f, .min_p = 0.5f, .seed = 10}};
    for (int split = 0; split < 2; split++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            if (!split || split_here())
                expect_draws_pass(&c, 64, cases[i], split, "edge cases");
    topk_case_destroy(&c);
}

/* Per-row T (zeros among them), P and K. */
Test(stage06_draw, per_row_parameters)
{
    open_or_skip();
    const size_t rows = 300, cols = 50257;
    topk_case c = topk_case_create(rows, cols, DTYPE_F32, (input_spec){DIST_NORMAL, -3.0, 3.0}, 1401, 256);
    float *t = malloc(rows * sizeof *t), *p = malloc(rows * sizeof *p);
    int *ks = malloc(rows * sizeof *ks);
    for (size_t r = 0; r < rows; r++) {
        t[r] = r % 10 == 0 ? 0.0f : 0.2f + (float)(r % 17) / 8.0f;
        p[r] = r % 4 == 0 ? 1.0f : 0.3f + (float)(r % 13) / 20.0f;
        ks[r] = 1 + (int)(r * 37 % 256);
    }
    const draw_params how = {.min_p = 0.001f, .seed = 77, .temperatures = t, .top_ps = p, .ks = ks};
    expect_draws_pass(&c, 256, how, false, "per-row T, P, K");
    if (split_here())
        expect_draws_pass(&c, 256, how, true, "per-row T, P, K");
    free(t);
    free(p);
    free(ks);
    topk_case_destroy(&c);
}

/* A row's token depends on (seed, row) alone: fast_row and fast_split give the same tokens. */
Test(stage06_draw, the_same_tokens_from_either_kernel)
{
    open_or_skip();
    if (!split_here())
        cr_skip_test("fast_split needs thread block clusters (compute capability 9.0)");
    topk_case c = topk_case_create(64, 50257, DTYPE_F32, (input_spec){DIST_NORMAL, -3.0, 3.0}, 1501, 50);
    for (size_t s = 0; s < N_SETTINGS; s++) {
        draw_run by_row = draw_run_create(&c, 50, settings[s], false);
        draw_run by_split = draw_run_create(&c, 50, settings[s], true);
        topk_check topk;
        draw_run_check(&by_row, &c, 50, &topk);
        draw_run_check(&by_split, &c, 50, &topk);
        cr_expect_arr_eq(by_row.tokens, by_split.tokens, c.rows * sizeof(int), "setting %zu", s);
        draw_run_destroy(&by_row);
        draw_run_destroy(&by_split);
    }
    topk_case_destroy(&c);
}

/* Rows of equal logits (the winners are the first K indices) and of four values. */
Test(stage06_draw, rows_full_of_ties)
{
    open_or_skip();
    const size_t cols = 50257;
    topk_case c = topk_case_create(256, cols, DTYPE_F32, (input_spec){DIST_UNIFORM, 0.0, 1.0}, 1601, 1024);
    for (int pattern = 0; pattern < 2; pattern++) {
        for (size_t i = 0; i < c.rows * cols; i++)
            c.x_host[i] = pattern == 0 ? 0.5f : (float)((i * 2654435761u >> 7) % 4);
        topk_case_refresh(&c);
        for (int k = 1; k <= 1024; k *= 4)
            for (size_t s = 0; s < N_SETTINGS; s++) {
                expect_draws_pass(&c, k, settings[s], false, pattern ? "values in {0,1,2,3}" : "all equal");
                if (split_here())
                    expect_draws_pass(&c, k, settings[s], true, pattern ? "values in {0,1,2,3}" : "all equal");
            }
    }
    topk_case_destroy(&c);
}

/* FlashInfer's sampler, both of its paths (the masked one at V = 50257, the sorted one at 128256),
 * checked by the draw's rule (verify_draw_by_rule); skips where it was built without its headers. */
Test(stage06_draw, flashinfer_sampler_follows_the_rule)
{
    open_or_skip();
    const draw_params some = {.temperature = 1.0f, .top_p = 1.0f};
    const char *why = flashinfer_draw_why_not(DTYPE_F32, &some);
    if (why)
        cr_skip_test("flashinfer's sampler %s", why);
    static const size_t vocabularies[] = {50257, 128256};
    for (size_t v = 0; v < 2; v++) {
        topk_case c = topk_case_create(512, vocabularies[v], DTYPE_F32, (input_spec){DIST_NORMAL, -3.0, 3.0},
                                       1301 + v, 256);
        static const int ks[] = {1, 50, 256};
        /* T > 0 and no min-p: FlashInfer's call has neither greedy nor min-p. */
        static const draw_params its[] = {{.temperature = 0.8f, .top_p = 0.9f, .seed = 1},
                                          {.temperature = 1.0f, .top_p = 1.0f, .seed = 2},
                                          {.temperature = 1.5f, .top_p = 0.95f, .seed = 3}};
        for (size_t k = 0; k < 3; k++)
            for (size_t i = 0; i < 3; i++) {
                draw_run s = draw_run_create(&c, ks[k], its[i], false);
                const draw_check d = flashinfer_draw_verify(&c, ks[k], &s);
                cr_expect(d.pass, "V = %zu, K = %d, setting %zu: %zu token errors (first row %zu), rank z %.2f",
                          vocabularies[v], ks[k], i, d.token_errors, d.first_bad_row, d.rank_z);
                draw_run_destroy(&s);
            }
        topk_case_destroy(&c);
    }
}
