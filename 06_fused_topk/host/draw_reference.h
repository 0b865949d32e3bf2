/* One token drawn from each row's top K, in fp64 on the CPU: the answer stage 06's fused draw
 * (06_fused_topk/fast/draw.cuh) is checked against, token by token.
 *
 * The distribution a row's token is drawn from, from its K largest logits x_0 >= x_1 >= ... (ranked
 * as topk_reference.h ranks them: ties to the lower index):
 *   - temperature T: weights w_i = exp((x_i - x_0) / T), so w_0 = 1 (softmax(x / T) restricted to
 *     the K, before its division by the sum). T = 0 is greedy: the first winner, probability 1.
 *   - top-p P in (0, 1]: keep the smallest prefix of the ranked K whose weight reaches P x their
 *     total; P = 1 keeps all K.
 *   - min-p M in [0, 1): keep the tokens whose weight is at least M x the largest (which is 1).
 *     The weights fall along the rank, so this too is a prefix; the kept tokens are the shorter of
 *     the two prefixes.
 *   - the draw: u from Philox keyed by (seed, row) (philox.h); the token is the first kept one whose
 *     cumulative weight exceeds u x the kept total (the last kept one if rounding leaves none).
 * Its probability is w_i / kept total, and its log-probability (x_i - x_0) / T - log(kept total),
 * computed directly, not as the log of a probability that may have underflowed. A row whose logits
 * are all -inf has no softmax (topk_reference.h): its probability and log-probability are NaN, which no
 * kernel output can match.
 *
 * The kernel computes the weights and their sums in float32, the reference in double: the two can
 * disagree only where a decision lies within rounding of its boundary (u x total at a cumulative
 * weight, P x total at one, a weight at M). The reference reports how far its row is from the
 * nearest such boundary, relative to the total (`margin`); a different token is accepted only in a
 * row whose margin is below DRAW_MARGIN, and such rows are counted. */
#ifndef TOPK_DRAW_REFERENCE_H
#define TOPK_DRAW_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Why 1e-5: each weight is at most 1, and a float32 sum of nonnegative values is off by at most
 * about (the additions on a value's way into it) x 2^-24 x the total. The kernel's running sum of
 * up to 1024 weights takes 5 additions in the warp's scan and one a tile of 32, some 37 in all:
 * about 2.2e-6 of the total at worst, to which each weight's own roundings (x_i - x_0, / T, exp)
 * add. 1e-5 leaves room above that; the tests check that the rows accepted within it stay few. */
#define DRAW_MARGIN 1e-5

/* How a row's token is drawn. The per-row arrays (NULL: the scalar for every row) are host memory
 * for the reference and device memory for the kernel. A row's K is at most the run's K. */
typedef struct {
    float temperature;         /* T >= 0; 0: greedy */
    float top_p;               /* P in (0, 1]; 1: keep all K */
    float min_p;               /* M in [0, 1); 0: no cut */
    uint64_t seed;
    const float *temperatures; /* per-row T */
    const float *top_ps;       /* per-row P */
    const int *ks;             /* per-row K, each from 1 to the run's K */
} draw_params;

/* The draw of one row. */
typedef struct {
    int token;      /* the logit's index in the row */
    double prob;    /* its probability in the kept distribution */
    double logprob; /* its log-probability */
    double margin;  /* the distance of the nearest decision to its boundary, relative to the total */
    int kept;       /* how many tokens the cuts kept */
    double cut_margin;          /* the same for the cuts alone (top-p, min-p), not the draw */
    double rank_mean, rank_var; /* the kept distribution's rank (0 the best): mean, variance */
} drawn_token;

/* The values each parameter may take (NaN takes none of them). */
bool draw_temperature_ok(double t); /* finite, >= 0 */
bool draw_top_p_ok(double p);       /* (0, 1] */
bool draw_min_p_ok(double m);       /* [0, 1) */

/* The draw of row `row` from its top-k logits: logits[ranked[0..k)] ranked best first (reference_topk's
 * order), T, P, M as above. */
drawn_token reference_draw_row(const float *logits, const int *ranked, int k, float temperature, float top_p,
                               float min_p, uint64_t seed, uint64_t row);

/* Every row: ranked is rows x ref_k (reference_topk's indices, ref_k >= the run's k); the row's K
 * comes from p->ks or is k. */
void reference_draw(const float *x, size_t rows, size_t cols, const int *ranked, int ref_k, int k,
                    const draw_params *p, drawn_token *out);

/* A kernel's draws against the reference's. A token must be the reference's, except in a row whose
 * margin is below DRAW_MARGIN, where it must be among the reference's first kept + 1 ranked
 * tokens (the kept ones and the next; at most ref_k) (counted in near_boundary). Where the token is
 * the reference's, its probability must pass verify_element() and its log-probability be within
 * 1e-4 x max(1, |ref|); NaN never passes. */
typedef struct {
    size_t token_errors;   /* tokens neither the reference's nor a near-boundary neighbour */
    size_t near_boundary;  /* rows whose different token was accepted within the margin */
    size_t prob_failures;  /* probabilities or log-probabilities outside their tolerance */
    size_t nonfinite;
    double max_abs_err, max_rel_err; /* of the probabilities */
    size_t first_bad_row;
    double rank_z, rank_bound; /* verify_draw_by_rule's: see there */
    bool pass;
} draw_check;

draw_check verify_draw(const int *tokens, const float *probs, const float *logprobs, const drawn_token *ref,
                       const int *ranked, int ref_k, size_t rows);

/* Where token sits in a row's ranking (ranked, ref_k deep), or -1 if it is not there. */
int draw_rank_of(int token, const int *ranked, int ref_k);

/* Why 1e-9: Bernstein's inequality bounds how far the summed rank of independent draws from the kept
 * distributions strays from its expectation; a bound below DRAW_RANK_P, which a right sampler meets
 * less than once in 1e9 runs whatever the rows, fails the check. One that always takes the best
 * token, at the default run's 8192 rows, gets a bound under 1e-1000; a single row never fails it,
 * so a batch of one tests membership alone, and one token too few kept is within it at 8192 rows. */
#define DRAW_RANK_P 1e-9

/* A draw from other random numbers (a library's sampler), which cannot match the reference's token
 * by token, checked by the draw's rule instead: each row's token must be valid (valid[r]) and among
 * the reference's kept ones, or the next one in a row whose cuts lie within DRAW_MARGIN of their
 * boundary (counted in near_boundary). And the tokens must follow the kept distributions: the
 * bound on their summed rank's distance from its expectation (rank_bound) at least DRAW_RANK_P;
 * rank_z is that distance in standard deviations. Only token_errors, near_boundary, first_bad_row,
 * rank_z and rank_bound are set; there are no probabilities to check. */
draw_check verify_draw_by_rule(const int *tokens, const bool *valid, const drawn_token *ref, const int *ranked,
                               int ref_k, size_t rows);

#ifdef __cplusplus
}
#endif
#endif
