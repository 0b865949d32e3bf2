// fast/draw.cuh — one token a row, drawn by the warp that holds the row's K winners.
//
// What it does: at the end of fast_row, and of both of fast_split's ways to its answer (for at most
// SPLIT_THREADS candidates, a team of lanes counts each one's place; past that, the candidates are
// sorted, or the row is ranked again if they overflowed the list), one warp
// has the row's best K as keys in shared memory, sorted best first. A draw needs nothing else:
// softmax(x / T) restricted to the K is w_i / sum w, with w_i = exp((x_i - x_0) / T), and the cuts
// of top-p and min-p are prefixes of the ranked K. So there is no sort, no second read of the row
// and no other kernel: the warp walks the K a tile of 32 at a time (a lane a winner), scans the
// weights (an inclusive sum across the lanes, lane_counts.cuh, plus the tiles before), and votes.
//   1. all K: their total, and how many weigh at least M (min-p: w_0 = 1 is the largest);
//   2. from the front: the first place where the cumulative weight reaches P x total (top-p) or the
//      min-p count ends, whichever comes first: the kept tokens and their total;
//   3. from the front: the first kept token whose cumulative weight exceeds u x kept total, u from
//      Philox keyed by (seed, row) (host/philox.h): the same u in whatever launch draws the row.
// Each pass scans the same weights in the same order, so the sums are the same bits every time.
// The fp64 reference is host/draw_reference.c, which says what the kernel's float sums can change.
// Invariants: every lane calls warp_draw with the same arguments; sorted[0..K) are the row's
// winners, best first; a row's K (its own, from the per-row array) is at most the K the winners were
// selected for. At T > 0 a row of -inf (x_0 = -inf) has NaN weights: nothing is kept, and lane 0
// writes the first winner's index with a NaN probability and log-probability, as
// host/draw_reference.c expects.
// Read next: dependent_launch.cuh, the decode loop's launches. The draw is called at the ends of
// fast_row.cuh and fast_split.cuh.
#ifndef FAST_DRAW_CUH
#define FAST_DRAW_CUH

#include "../host/philox.h"
#include "../fused_topk.h"
#include "rank_key.cuh"
#include "lane_counts.cuh"

// One tile of the ranked winners: this lane's weight (0 past the row's K) and cumulative weight.
struct weight_tile {
    float w, cum;
};

__device__ __forceinline__ weight_tile weigh_tile(const rank_key *sorted, int k, int j, float x0, float t,
                                                  float before)
{
    const float w = j < k ? expf((key_logit(sorted[j]) - x0) / t) : 0.0f;
    return {w, before + warp_inclusive_sum(w)};
}

// The token of row `row` from its sorted winners; lane 0 writes it, its probability and its
// log-probability.
__device__ __noinline__ void warp_draw(const rank_key *sorted, int k_selected, size_t row, const draw_request draw)
{
    const draw_params &p = draw.params;
    const int lane = threadIdx.x % WARP_SIZE;
    const int k = p.ks ? p.ks[row] : k_selected;
    const float t = p.temperatures ? p.temperatures[row] : p.temperature;
    const float top_p = p.top_ps ? p.top_ps[row] : p.top_p;
    const float x0 = key_logit(sorted[0]);
    int drawn = 0;
    float prob = 1.0f, logprob = 0.0f;
    if (t > 0.0f) { // T = 0: greedy, the first winner
        // 1. The total, and the min-p count.
        float total = 0.0f;
        int by_min_p = 0;
        for (int tile = 0; tile < k; tile += WARP_SIZE) {
            const weight_tile s = weigh_tile(sorted, k, tile + lane, x0, t, total);
            by_min_p += __popc(__ballot_sync(FULL_MASK, tile + lane < k && s.w >= p.min_p));
            total = __shfl_sync(FULL_MASK, s.cum, WARP_SIZE - 1);
        }
        // 2. The kept prefix: it ends at the first place whose cumulative weight reaches P x total,
        //    or at the last token of the min-p count (w_0 = 1 >= M, so there is one).
        const float reach = top_p < 1.0f ? top_p * total : INFINITY;
        int kept = 0;
        float kept_total = 0.0f, before = 0.0f;
        for (int tile = 0; !kept && tile < k; tile += WARP_SIZE) { // none in a row of -inf: NaN out
            const int j = tile + lane;
            const weight_tile s = weigh_tile(sorted, k, j, x0, t, before);
            const unsigned ends = __ballot_sync(FULL_MASK, j < k && (j == by_min_p - 1 || s.cum >= reach));
            if (ends) {
                const int first = __ffs(ends) - 1;
                kept = tile + first + 1;
                kept_total = __shfl_sync(FULL_MASK, s.cum, first);
            }
            before = __shfl_sync(FULL_MASK, s.cum, WARP_SIZE - 1);
        }
        // 3. The draw: the first kept token with weight (above 0 after exp's underflow) whose
        //    cumulative weight exceeds u x kept total. Rounding may leave none (u x kept total
        //    rounded up to it): then the last kept token with weight.
        const float target = (float)philox_uniform(p.seed, row) * kept_total;
        drawn = -1;
        int last_weighed = 0;
        before = 0.0f;
        for (int tile = 0; tile < kept && drawn < 0; tile += WARP_SIZE) {
            const int j = tile + lane;
            const weight_tile s = weigh_tile(sorted, kept, j, x0, t, before);
            const unsigned past = __ballot_sync(FULL_MASK, s.w > 0.0f && s.cum > target);
            const unsigned weighed = __ballot_sync(FULL_MASK, s.w > 0.0f);
            if (weighed)
                last_weighed = tile + 31 - __clz(weighed);
            if (past)
                drawn = tile + __ffs(past) - 1;
            before = __shfl_sync(FULL_MASK, s.cum, WARP_SIZE - 1);
        }
        if (drawn < 0)
            drawn = last_weighed;
        const float scaled = (key_logit(sorted[drawn]) - x0) / t;
        prob = expf(scaled) / kept_total;
        logprob = scaled - logf(kept_total);
    }
    if (lane == 0) {
        draw.tokens[row] = key_index(sorted[drawn]);
        draw.token_probs[row] = prob;
        draw.token_logprobs[row] = logprob;
    }
}

#endif
