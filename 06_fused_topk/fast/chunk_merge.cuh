// fast/chunk_merge.cuh — a row cut into chunks: each chunk's warp leaves its (m, d) and its best
// K, and the warp that takes the row's last ticket merges them.
//
//   workspace: [ tickets: one a row | statistics: W a row | lists: W x K keys a row ]
//
// Invariants: keys are unique, so "key > bar" is exact in any order; the bar only rises and is
// equal in every lane; the tickets are zero between launches.
// Read next: fast_chunks.cuh.
#ifndef FAST_CHUNK_MERGE_CUH
#define FAST_CHUNK_MERGE_CUH

#include "../../05_online/online_stat.cuh"
#include "candidates.cuh"
#include "fast_exp.cuh"

// Chunk c of row r is slot r x chunks + c.
typedef struct {
    unsigned *tickets;
    online_stat *stats;
    rank_key *lists;
} chunk_workspace;

static size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

// Lays out the workspace from `base` (NULL: size only); returns its bytes.
static size_t chunk_workspace_plan(void *base, size_t rows, int chunks, int k, chunk_workspace *ws)
{
    char *p = (char *)base;
    const size_t slots = rows * (size_t)chunks;
    size_t at = 0;
    ws->tickets = (unsigned *)(p + at), at += align256(rows * sizeof(unsigned));
    ws->stats = (online_stat *)(p + at), at += align256(slots * sizeof(online_stat));
    ws->lists = (rank_key *)(p + at), at += slots * (size_t)k * sizeof(rank_key);
    return at;
}

// A chunk's key as a key of the row; key 0 stays empty.
__device__ __forceinline__ rank_key key_in_row(rank_key key, int first)
{
    return key ? make_key(key_logit(key), key_index(key) + first) : 0;
}

// Leaves the chunk's best K and (m, d), then takes a ticket. Every lane fences before lane 0's
// atomic (a release), and the last ticket's lane fences again (an acquire). True for the last.
__device__ bool chunk_leave_and_count(const chunk_workspace &ws, size_t row, size_t slot, int chunks,
                                      const rank_key *buf, int k, int first, online_stat s)
{
    const int lane = threadIdx.x % WARP_SIZE;
    rank_key *list = ws.lists + slot * k;
    for (int i = lane; i < k; i += WARP_SIZE)
        list[i] = key_in_row(buf[i], first);
    if (lane == 0)
        ws.stats[slot] = s;
    __threadfence(); // release: stores before the ticket
    __syncwarp();    // every lane has fenced
    unsigned taken = 0;
    if (lane == 0) {
        taken = atomicAdd(&ws.tickets[row], 1u);
        if (taken == (unsigned)chunks - 1) {
            __threadfence();     // acquire: reads after the ticket
            ws.tickets[row] = 0; // zero for the next launch
        }
    }
    taken = __shfl_sync(FULL_MASK, taken, 0);
    __syncwarp(); // lane 0's fence precedes reads
    return taken == (unsigned)chunks - 1;
}

// Lists loaded together. Every read of the workspace is __ldcg, from L2.
#define MERGE_LISTS_AT_ONCE 8

// K <= 64: the kept list in registers, two keys a lane. A list whose first key passes the bar,
// the kept K-th, is merged whole.
__device__ void merge_lists_in_registers(rank_key *buf, int k, const rank_key *lists, int chunks)
{
    const int lane = threadIdx.x % WARP_SIZE;
    rank_key kept[2] = {0, 0};
    for (int j0 = 0; j0 < chunks; j0 += MERGE_LISTS_AT_ONCE) {
        rank_key list[MERGE_LISTS_AT_ONCE][2];
#pragma unroll
        for (int u = 0; u < MERGE_LISTS_AT_ONCE; u++)
#pragma unroll
            for (int r = 0; r < 2; r++) {
                const int i = lane + r * WARP_SIZE;
                list[u][r] = j0 + u < chunks && i < k ? __ldcg(lists + (size_t)(j0 + u) * k + i) : 0;
            }
#pragma unroll
        for (int u = 0; u < MERGE_LISTS_AT_ONCE; u++) {
            const rank_key first = __shfl_sync(FULL_MASK, list[u][0], 0);
            const rank_key bar = __shfl_sync(FULL_MASK, k <= WARP_SIZE ? kept[0] : kept[1], (k - 1) % WARP_SIZE);
            if (first > bar) // equal in all lanes
                warp_merge_sorted_in_registers(kept, list[u]);
        }
    }
#pragma unroll
    for (int r = 0; r < 2; r++)
        buf[lane + r * WARP_SIZE] = kept[r];
    __syncwarp();
}

// K > 64: offers one key a lane against the bar; ballots give the slots, and past the mark the
// warp merges and raises the bar. One key a lane always fits.
__device__ __forceinline__ void offer_key(warp_candidates<false> &w, rank_key &bar, rank_key key)
{
    const bool passes = key > bar; // key 0 never does
    const unsigned ballot = __ballot_sync(FULL_MASK, passes);
    if (!ballot)
        return;
    if (passes)
        w.buf[w.fill + __popc(ballot & ((1u << threadIdx.x % WARP_SIZE) - 1))] = key;
    w.fill += __popc(ballot);
    if (w.fill >= w.flush_at) {
        warp_keep_best(w); // ends with __syncwarp
        bar = w.buf[w.k - 1] > bar ? w.buf[w.k - 1] : bar;
    }
}

// K > 64: offers the first 32 keys of every list, then the rest of each list whose 32nd key
// passes the bar, 32 at a time, until a batch ends below it.
__device__ void merge_lists_by_offers(rank_key *buf, int k, int capacity, int merge_at_most, const rank_key *lists,
                                      int chunks)
{
    const int lane = threadIdx.x % WARP_SIZE;
    warp_candidates<false> w = warp_candidates_init<false>(buf, k, capacity, merge_at_most);
    rank_key bar = 0;
    for (int j0 = 0; j0 < chunks; j0 += MERGE_LISTS_AT_ONCE) {
        rank_key head[MERGE_LISTS_AT_ONCE];
#pragma unroll
        for (int u = 0; u < MERGE_LISTS_AT_ONCE; u++)
            head[u] = j0 + u < chunks ? __ldcg(lists + (size_t)(j0 + u) * k + lane) : 0;
#pragma unroll
        for (int u = 0; u < MERGE_LISTS_AT_ONCE; u++)
            offer_key(w, bar, head[u]);
    }
    for (int j0 = 0; j0 < chunks; j0 += WARP_SIZE) {
        const int j = j0 + lane;
        unsigned longer = __ballot_sync(FULL_MASK, j < chunks && __ldcg(lists + (size_t)j * k + WARP_SIZE - 1) > bar);
        while (longer) {
            const rank_key *list = lists + (size_t)(j0 + __ffs(longer) - 1) * k;
            longer &= longer - 1;
            for (int i0 = WARP_SIZE; i0 < k; i0 += WARP_SIZE) {
                const rank_key key = i0 + lane < k ? __ldcg(list + i0 + lane) : 0;
                offer_key(w, bar, key);
                if (!(__shfl_sync(FULL_MASK, key, WARP_SIZE - 1) > bar))
                    break; // the rest ranks lower
            }
        }
    }
    warp_sort_best(w);
}

// The row's best K of its lists into buf[0..K), sorted.
__device__ void merge_chunk_lists(rank_key *buf, int k, int capacity, int merge_at_most, const rank_key *lists,
                                  int chunks)
{
    if (k <= 2 * WARP_SIZE)
        merge_lists_in_registers(buf, k, lists, chunks);
    else
        merge_lists_by_offers(buf, k, capacity, merge_at_most, lists, chunks);
}

// The row's (m, d) from its chunks', equal in every lane.
__device__ online_stat combine_chunk_stats(const online_stat *stats, int chunks)
{
    online_stat s = ONLINE_IDENTITY;
    for (int j = threadIdx.x % WARP_SIZE; j < chunks; j += WARP_SIZE)
        s = online_stat_combine(s, make_stat(__ldcg(&stats[j].m), __ldcg(&stats[j].d)));
    return warp_statistic(s);
}

#endif
