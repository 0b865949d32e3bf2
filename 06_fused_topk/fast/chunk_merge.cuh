// fast/chunk_merge.cuh — a row cut into chunks: each chunk's warp leaves its part, the last merges.
//
// What it does: fast_chunks (fast_chunks.cuh, next) cuts each row into W chunks of consecutive
// logits and gives each chunk its own warp, which makes fast_row's pass over it. A warp
// leaves its chunk's statistic (m, d) and its chunk's best K, sorted, as rank keys of the row (the
// index counted from the row's start, not the chunk's) in a workspace in global memory, then takes
// a ticket: the row's count of finished chunks, one atomic add. The warp that takes the row's last
// ticket merges the W lists and the W statistics and writes the row's answer; the others leave.
//
//   workspace: [ tickets: one a row | statistics: W a row | lists: W x K keys a row ]
//
// The ticket, a release and an acquire: every lane fences its stores (__threadfence) before lane 0
// adds to the ticket, so a warp that sees the count has the stores that came before it; the lane
// that takes the last ticket fences again before the warp reads, so no read of a list is served
// from before the ticket. That lane sets the ticket back to 0: the workspace comes zeroed, and each
// launch leaves it so for the next.
//
// The merge: the row's best K are among the union of the chunks' best K, and each chunk's list is
// sorted. Two ways, by K, as candidates.cuh merges in registers or in shared memory:
// - K <= 64: the last warp holds its kept list in registers, two keys a lane, and merges each list
//   into it whole: with A the kept list and B a list, max(A[i], B[63 - i]) over i is the best 64 of
//   both, in an order that falls then rises, and one bitonic stage sorts it (candidates.cuh's merge,
//   without the sort of B). A list whose first key does not rank above the kept K-th, the bar, is
//   passed over: none of its keys could enter.
// - K > 64: a stage over the whole kept list is long, and most of a list's keys fall below the bar,
//   so the last warp keeps candidates as a chunk's warp does (best K sorted in front, new ones
//   appended behind, merged in batches) and offers the lists' keys that rank above the bar: first
//   32 keys of every list, then the rest of each list whose 32nd key still passes, a batch of 32 at
//   a time, until a batch ends below the bar (the rest of that list ranks lower still).
// Keys are unique (a key holds its index), so either way the test "key > bar" is exact whatever
// order the keys come in, ties at equal logits included; the scan, which compares logits, needs the
// row in index order for that (ballot_append.cuh).
// Invariants: the bar only rises; it is the same in every lane, as is the candidates' fill.
// Assumes: candidates.cuh; all 32 lanes call these together.
// Read next: fast_chunks.cuh, the kernel, and how many chunks a row gets.
#ifndef FAST_CHUNK_MERGE_CUH
#define FAST_CHUNK_MERGE_CUH

#include "../../05_online/online_stat.cuh"
#include "candidates.cuh"
#include "fast_exp.cuh"

// Where a launch's workspace keeps what the chunks leave: per row a ticket, `chunks` statistics and
// `chunks` lists of K keys, chunk c of row r at r x chunks + c.
typedef struct {
    unsigned *tickets;
    online_stat *stats;
    rank_key *lists;
} chunk_workspace;

static size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

// The workspace's layout from its base (NULL: only the size); returns its bytes.
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

// A key of the chunk that starts at `first` (its index counted from the chunk's start) as a key of
// the row. Key 0, an empty slot, stays empty.
__device__ __forceinline__ rank_key key_in_row(rank_key key, int first)
{
    return key ? make_key(key_logit(key), key_index(key) + first) : 0;
}

// Leaves chunk `slot`'s sorted best K (in buf, indices from the chunk's `first`) and its statistic
// in the workspace, then takes the row's ticket. True in every lane of the warp that took the
// last: it may now read what every chunk of the row left.
__device__ bool chunk_leave_and_count(const chunk_workspace &ws, size_t row, size_t slot, int chunks,
                                      const rank_key *buf, int k, int first, online_stat s)
{
    const int lane = threadIdx.x % WARP_SIZE;
    rank_key *list = ws.lists + slot * k;
    for (int i = lane; i < k; i += WARP_SIZE)
        list[i] = key_in_row(buf[i], first);
    if (lane == 0)
        ws.stats[slot] = s;
    __threadfence(); // this lane's stores are seen on the whole GPU before the ticket that follows
    __syncwarp();    // every lane's, before lane 0 takes it
    unsigned taken = 0;
    if (lane == 0) {
        taken = atomicAdd(&ws.tickets[row], 1u);
        if (taken == (unsigned)chunks - 1) {
            __threadfence();     // the acquire: the reads below come after every chunk's stores
            ws.tickets[row] = 0; // every chunk has counted: zero again for the next launch
        }
    }
    taken = __shfl_sync(FULL_MASK, taken, 0);
    __syncwarp(); // lane 0's fence comes before the other lanes' reads
    return taken == (unsigned)chunks - 1;
}

// Lists loaded together: their 64 first keys (K <= 64) or 32 (K > 64) in flight at once, two loads
// or one a lane and list. Every read of what the chunks left is __ldcg: a load from L2, which
// bypasses a possibly stale L1 line, as stage 03 does.
#define MERGE_LISTS_AT_ONCE 8

// K <= 64: the kept list in registers, two keys a lane (position lane + 32r), padded by empty keys;
// each list's K keys padded likewise, merged whole where its first key passes the bar.
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
            if (first > bar) // the same in every lane
                warp_merge_sorted_in_registers(kept, list[u]);
        }
    }
#pragma unroll
    for (int r = 0; r < 2; r++)
        buf[lane + r * WARP_SIZE] = kept[r];
    __syncwarp();
}

// K > 64: one key a lane (0: none) offered against the bar: ballots give the keys that pass their
// slots, and past the merge mark the warp merges them; the bar becomes the K-th kept key. One key a
// lane always fits: the buffer is below the mark before, and has room for 32 per_lane more past it.
__device__ __forceinline__ void offer_key(warp_candidates<false> &w, rank_key &bar, rank_key key)
{
    const bool passes = key > bar; // key 0 never passes
    const unsigned ballot = __ballot_sync(FULL_MASK, passes);
    if (!ballot)
        return;
    if (passes)
        w.buf[w.fill + __popc(ballot & ((1u << threadIdx.x % WARP_SIZE) - 1))] = key;
    w.fill += __popc(ballot);
    if (w.fill >= w.flush_at) {
        warp_keep_best(w); // ends with a __syncwarp: every lane reads the merged list
        bar = w.buf[w.k - 1] > bar ? w.buf[w.k - 1] : bar;
    }
}

// K > 64: the lists' keys offered to candidates kept in buf (warp_capacity(k, ...) keys), as the
// header says: the first 32 of 8 lists at a time, then the rest of each list whose 32nd key still
// passes the bar, a batch of 32 at a time, until a batch ends below the bar. The new keys are
// merged into the kept ones after at most `merge_at_most` of them (warp_merge_after's cap).
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
                    break; // the batch's last key is below the bar: so is the rest of the list
            }
        }
    }
    warp_sort_best(w);
}

// The row's best K of its `chunks` lists (`lists`, K keys each) into buf[0..K), sorted; buf holds
// `capacity` keys (warp_capacity: at least 64, and room for the candidates of K > 64). For K > 64,
// `merge_at_most` is the merge's cap (chunk_merge_at_most, fast_chunks.cuh).
__device__ void merge_chunk_lists(rank_key *buf, int k, int capacity, int merge_at_most, const rank_key *lists,
                                  int chunks)
{
    if (k <= 2 * WARP_SIZE)
        merge_lists_in_registers(buf, k, lists, chunks);
    else
        merge_lists_by_offers(buf, k, capacity, merge_at_most, lists, chunks);
}

// The row's statistic from its chunks', in every lane: lane 0's (warp_statistic, fast_exp.cuh).
__device__ online_stat combine_chunk_stats(const online_stat *stats, int chunks)
{
    online_stat s = ONLINE_IDENTITY;
    for (int j = threadIdx.x % WARP_SIZE; j < chunks; j += WARP_SIZE)
        s = online_stat_combine(s, make_stat(__ldcg(&stats[j].m), __ldcg(&stats[j].d)));
    return warp_statistic(s);
}

#endif
