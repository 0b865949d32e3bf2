// fast/draw.cuh — one token a row, drawn by the warp that holds the row's K winners sorted, in
// three scans of the weights w_i = exp((x_i - x_0) / T): the total, the kept prefix, the draw.
// Invariants: every lane passes the same arguments; each scan sums the same weights in the same
// order, so the sums agree bit for bit. The uniform u comes from Philox keyed by (seed, row), so
// every launch draws a row alike. A row of -inf yields the first winner with NaN probabilities.
// Read next: dependent_launch.cuh.
#ifndef FAST_DRAW_CUH
#define FAST_DRAW_CUH

#include "../host/philox.h"
#include "../fused_topk.h"
#include "rank_key.cuh"
#include "lane_counts.cuh"

// A lane's weight (0 past K) and cumulative weight.
struct weight_tile {
    float w, cum;
};

__device__ __forceinline__ weight_tile weigh_tile(const rank_key *sorted, int k, int j, float x0, float t,
                                                  float before)
{
    const float w = j < k ? expf((key_logit(sorted[j]) - x0) / t) : 0.0f;
    return {w, before + warp_inclusive_sum(w)};
}

// Lane 0 writes the token, its probability and log-probability.
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
    if (t > 0.0f) { // T = 0: greedy
        // 1. The total, and the min-p count.
        float total = 0.0f;
        int by_min_p = 0;
        for (int tile = 0; tile < k; tile += WARP_SIZE) {
            const weight_tile s = weigh_tile(sorted, k, tile + lane, x0, t, total);
            by_min_p += __popc(__ballot_sync(FULL_MASK, tile + lane < k && s.w >= p.min_p));
            total = __shfl_sync(FULL_MASK, s.cum, WARP_SIZE - 1);
        }
        // 2. The kept prefix ends where the sum reaches P x total, or where min-p ends.
        const float reach = top_p < 1.0f ? top_p * total : INFINITY;
        int kept = 0;
        float kept_total = 0.0f, before = 0.0f;
        for (int tile = 0; !kept && tile < k; tile += WARP_SIZE) { // -inf rows keep none
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
        // 3. The first weighed kept token whose sum exceeds u x kept total; else the last one.
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
