// fast/warp_row.cuh — one warp's pass over one row: the statistic, the threshold, the candidates.
// Assumes a row of fewer than 2^31 - 256 logits.
// Read next: fast_row.cuh.
#ifndef FAST_WARP_ROW_CUH
#define FAST_WARP_ROW_CUH

#include "fast_exp.cuh"
#include "ballot_append.cuh"
#include "first_threshold.cuh"

// A chunk: the 16-byte loads a lane issues before it uses the first.
#define FAST_UNROLL 4

// Folds a lane's N logits (none if !have or !Probs), then offers them.
template <int N, bool Selects, bool Probs = true>
__device__ __forceinline__ void warp_step(warp_candidates<Selects> &w, online_stat &s, const float (&v)[1][N], int first,
                                          bool have)
{
    if (Probs && have)
        s = online_stat_add_n(s, v, largest(v[0]));
    warp_offer(w, v, first, have);
}

// Offers a whole row in index order: head, body a chunk at a time, body's rest, tail. A chunk
// is offered only if the vote finds a logit above the threshold. With `guess` the caller checks
// that K logits reached the first threshold. Probs: fold (m, d) too.
template <typename T, bool Selects, bool Probs = true>
__device__ void warp_offer_row(warp_candidates<Selects> &w, online_stat &s, const T *xr, size_t cols, bool guess)
{
    typedef logits16<T> vec;
    const int lane = threadIdx.x % WARP_SIZE, chunk = FAST_UNROLL * WARP_SIZE;
    const row_parts<T> p = split_row(xr, cols);
    warp_sample_threshold(w, p, cols, guess);
    {
        const bool have = lane < p.head;
        const float v[1][1] = {{have ? logit_to_float(xr[lane]) : 0.0f}};
        warp_step<1, Selects, Probs>(w, s, v, lane, have);
    }
    const uint4 *at = p.body + lane;
    int i0 = 0;
    for (; i0 + chunk <= p.vectors; i0 += chunk, at += chunk) {
        uint4 raw[FAST_UNROLL];
#pragma unroll
        for (int u = 0; u < FAST_UNROLL; u++)
            raw[u] = __ldcs(at + u * WARP_SIZE);
        const float most = fold_chunk<T, FAST_UNROLL, Probs>(s, raw);
        if (__any_sync(FULL_MASK, !(most <= w.threshold)))
            warp_offer_chunk<T>(w, raw, p.head + (i0 + lane) * vec::count);
    }
    for (int i = i0 + lane; i - lane < p.vectors; i += WARP_SIZE) {
        const bool have = i < p.vectors;
        float v[1][vec::count];
        vec::unpack(have ? __ldcs(p.body + i) : make_uint4(0, 0, 0, 0), v[0]);
        warp_step<vec::count, Selects, Probs>(w, s, v, p.head + i * vec::count, have);
    }
    {
        const bool have = p.tail + lane < (int)cols;
        const float v[1][1] = {{have ? logit_to_float(xr[p.tail + lane]) : 0.0f}};
        warp_step<1, Selects, Probs>(w, s, v, p.tail + lane, have);
    }
}

// Writes `key` as entry `place`, with probability exp(x - m) / d, or (!Probs) its logit.
template <bool Probs = true>
__device__ __forceinline__ void write_entry(rank_key key, int place, online_stat s, size_t row, int k, int *indices,
                                            float *probs)
{
    indices[row * k + place] = key_index(key);
    probs[row * k + place] = Probs ? expf(key_logit(key) - s.m) / s.d : key_logit(key);
}

template <bool Probs = true>
__device__ void write_topk(const rank_key *sorted, online_stat s, size_t row, int k, int *indices, float *probs)
{
    for (int j = threadIdx.x % WARP_SIZE; j < k; j += WARP_SIZE)
        write_entry<Probs>(sorted[j], j, s, row, k, indices, probs);
}

// Ranks the row again with a certain first threshold: its best K into buf[0..K), sorted. Not
// inlined.
template <typename T>
__device__ __noinline__ void warp_rank_row_again(rank_key *buf, int k, const T *xr, size_t cols)
{
    __syncwarp(); // every lane is done reading buf
    warp_candidates<false> w = warp_candidates_init<false>(buf, k, warp_capacity(k, logits16<T>::count, false));
    online_stat unused = ONLINE_IDENTITY; // the caller has the statistic
    warp_offer_row(w, unused, xr, cols, false);
    warp_sort_best(w);
}

#endif
