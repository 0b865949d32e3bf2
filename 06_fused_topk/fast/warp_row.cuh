// fast/warp_row.cuh — one warp's pass over one row: the statistic, the threshold, the candidates.
//
// What it does: a warp reads its row once, in index order (a scalar head, the body a chunk of
// FAST_UNROLL 16-byte vectors a lane at a time, a scalar tail), folds every logit into the online
// statistic (fast_exp.cuh), and offers the chunks whose largest logit is above the threshold
// (ballot_append.cuh), starting from the sampled threshold (first_threshold.cuh). At the end the
// kept list holds the row's best K, sorted, and write_topk turns them into the answer with the
// row's (m, d).
// Assumes: the row has fewer than 2^31 - 256 logits; all 32 lanes of the warp take part.
// Read next: fast_row.cuh, the kernel that gives each row a warp.
#ifndef FAST_WARP_ROW_CUH
#define FAST_WARP_ROW_CUH

#include "fast_exp.cuh"
#include "ballot_append.cuh"
#include "first_threshold.cuh"

// 16-byte loads in flight per lane, all issued before the first is used. They share one rescale
// test and one vote: 16 float32 or 32 16-bit logits a lane.
#define FAST_UNROLL 4

// One step of a lane's N logits (none if !have): into the statistic, then offered.
template <int N, bool Selects>
__device__ __forceinline__ void warp_step(warp_candidates<Selects> &w, online_stat &s, const float (&v)[1][N], int first,
                                          bool have)
{
    if (have)
        s = online_stat_add_n(s, v, largest(v[0]));
    warp_offer(w, v, first, have);
}

// One warp offers a whole row, in index order: head, body, tail. Read once, so the loads ask L2
// to evict the lines first. The body goes a chunk at a time, FAST_UNROLL vectors a lane, all
// loaded before any is used; a chunk of whole vectors needs no bounds test, and costs one rescale
// test and one vote. What is left of the body goes a vector a lane.
// Within a chunk the vectors are offered a group at a time (ballot_append.cuh), each group against
// one threshold, and vector u + 1 of every lane comes after vector u of every lane in the row: the
// warp still offers the row in index order.
// The first threshold comes from a sample of the row (warp_sample_threshold); with `guess`, the
// caller must check that K logits reached it.
template <typename T, bool Selects>
__device__ void warp_offer_row(warp_candidates<Selects> &w, online_stat &s, const T *xr, size_t cols, bool guess)
{
    typedef logits16<T> vec;
    const int lane = threadIdx.x % WARP_SIZE, chunk = FAST_UNROLL * WARP_SIZE;
    const row_parts<T> p = split_row(xr, cols);
    warp_sample_threshold(w, p, cols, guess);
    {
        const bool have = lane < p.head;
        const float v[1][1] = {{have ? logit_to_float(xr[lane]) : 0.0f}};
        warp_step(w, s, v, lane, have);
    }
    const uint4 *at = p.body + lane;
    int i0 = 0;
    for (; i0 + chunk <= p.vectors; i0 += chunk, at += chunk) {
        uint4 raw[FAST_UNROLL];
#pragma unroll
        for (int u = 0; u < FAST_UNROLL; u++)
            raw[u] = __ldcs(at + u * WARP_SIZE);
        const float most = fold_chunk<T, FAST_UNROLL>(s, raw);
        if (__any_sync(FULL_MASK, !(most <= w.threshold)))
            warp_offer_chunk<T>(w, raw, p.head + (i0 + lane) * vec::count);
    }
    for (int i = i0 + lane; i - lane < p.vectors; i += WARP_SIZE) {
        const bool have = i < p.vectors;
        float v[1][vec::count];
        vec::unpack(have ? __ldcs(p.body + i) : make_uint4(0, 0, 0, 0), v[0]);
        warp_step(w, s, v, p.head + i * vec::count, have);
    }
    {
        const bool have = p.tail + lane < (int)cols;
        const float v[1][1] = {{have ? logit_to_float(xr[p.tail + lane]) : 0.0f}};
        warp_step(w, s, v, p.tail + lane, have);
    }
}

// The candidate `key` as the answer's entry `place`, with its probability exp(x - m) / d.
__device__ __forceinline__ void write_entry(rank_key key, int place, online_stat s, size_t row, int k, int *indices,
                                            float *probs)
{
    indices[row * k + place] = key_index(key);
    probs[row * k + place] = expf(key_logit(key) - s.m) / s.d;
}

// The K best of a sorted list.
__device__ void write_topk(const rank_key *sorted, online_stat s, size_t row, int k, int *indices, float *probs)
{
    for (int j = threadIdx.x % WARP_SIZE; j < k; j += WARP_SIZE)
        write_entry(sorted[j], j, s, row, k, indices, probs);
}

// The best K of a row into buf[0..K), sorted, with a certain first threshold: for the rare row in
// which fewer than K logits reached fast_row's guess, and for fast_split's row with too many logits
// at its bound. buf has fast_row's room for K (warp_capacity). A call, so that this second copy of
// the row's loop costs the first no registers.
template <typename T>
__device__ __noinline__ void warp_rank_row_again(rank_key *buf, int k, const T *xr, size_t cols)
{
    __syncwarp(); // no lane clears buf while another still reads it (fast_row's test of buf[k - 1])
    warp_candidates<false> w = warp_candidates_init<false>(buf, k, warp_capacity(k, logits16<T>::count, false));
    online_stat unused = ONLINE_IDENTITY; // the caller has the statistic
    warp_offer_row(w, unused, xr, cols, false);
    warp_sort_best(w);
}

#endif
