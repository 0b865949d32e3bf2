// fast/fast_chunks.cuh — fast_chunks: a row cut into chunks, a warp per chunk.
//
// What fast_row and fast_split leave on the table between a batch of one and a full grid: a warp
// of fast_row keeps only a few loads in flight, so it reads its row at a small fraction of what an
// SM can take, and with a few hundred rows the GPU has too few warps to fill its memory system;
// fast_split gives a row 16 whole SMs and a cluster's fixed costs, and few such clusters run at once.
// Here each row is cut into W chunks of whole CHUNK_GRANULE logits (the last chunk takes what is
// left), W chosen so that the grid is half a wave of resident warps (chunk_plan), and each
// chunk gets a warp that makes fast_row's pass over it (warp_row.cuh: the sample, the threshold,
// the candidates, the statistic), sampling within its chunk. It leaves its (m, d) and its best K in
// a workspace, and the last warp of the row to finish merges them (chunk_merge.cuh) and writes the
// answer as fast_row does. With W = 1 there is nothing to merge: the launch is fast_row's.
// The cost over fast_row: W lists of K keys written and read back, and the last warp's merge, on
// the row's way to its answer; what it buys is W times the loads in flight for the row.
// Assumes: K <= FAST_MAX_K and K <= cols; cols <= FAST_ROW_MAX_COLS (fast.cu); a workspace of
// chunk_workspace_bytes, zeroed before the first launch.
// Read next: cluster_kth.cuh and fast_split.cuh, for a batch of one.
#ifndef FAST_FAST_CHUNKS_CUH
#define FAST_FAST_CHUNKS_CUH

#include "../../common/check.h"
#include "chunk_merge.cuh"
#include "fast.h"
#include "fast_row.cuh"
#include "per_device.cuh"

// A chunk is a whole number of CHUNK_GRANULE logits, so that every chunk but the last holds at
// least FAST_MAX_K of them. It is at least CHUNK_LOGITS_PER_K x K logits long: its list of K keys
// is written and read back (2 x 8 bytes a key), which for a chunk that short adds at most a quarter
// to its float32 logits' bytes, half to 16-bit ones'. And it is at least CHUNK_SHORTEST_BYTES long
// (4 granules of float32, 8 of 16-bit logits): a chunk's fixed costs (its sample, its sort, its
// list, its ticket) do not shrink with it, and a chunk of fewer than FAST_SAMPLE_VECTORS x 32 whole
// vectors takes no sample (first_threshold.cuh) and starts with every logit a candidate, as 2
// granules of 16-bit logits do where the chunk starts off a 16-byte boundary (255 whole vectors).
// 16 KB is a measured choice; make NVCC_EXTRA="-DCHUNK_SHORTEST_BYTES=N" builds with another.
#define CHUNK_GRANULE 1024
#define CHUNK_LOGITS_PER_K 16
#ifndef CHUNK_SHORTEST_BYTES
#define CHUNK_SHORTEST_BYTES 16384
#endif

// A row's cut: `chunks` chunks of `length` logits, the last one what is left.
typedef struct {
    int chunks, length;
} chunk_cut;

// The grid fills 1 / CHUNK_WAVE_PART of a wave of resident warps: half a wave leaves each warp a
// chunk twice as long, and so half as many lists to merge, as a full wave would, for half the
// loads in flight. Half is a measured choice; make NVCC_EXTRA="-DCHUNK_WAVE_PART=N" builds with
// another.
#ifndef CHUNK_WAVE_PART
#define CHUNK_WAVE_PART 2
#endif

// W for rows x cols of logit_bytes logits at top-k when the GPU holds `resident` warps of the
// kernel at once: as many chunks as keep rows x W within that share of a wave (a second wave begun
// by a few warps would leave most SMs idle while they finish), as long as every chunk but the last
// (which takes what is left, however short) stays at least as long as the bounds above. 1 where the
// rows alone fill it.
static chunk_cut chunk_plan(size_t rows, size_t cols, int k, size_t logit_bytes, size_t resident)
{
    const size_t granules = (cols + CHUNK_GRANULE - 1) / CHUNK_GRANULE;
    const size_t granule_bytes = CHUNK_GRANULE * logit_bytes;
    const size_t by_k = ((size_t)CHUNK_LOGITS_PER_K * k + CHUNK_GRANULE - 1) / CHUNK_GRANULE; // in granules
    const size_t by_bytes = (CHUNK_SHORTEST_BYTES + granule_bytes - 1) / granule_bytes;
    const size_t shortest = by_k > by_bytes ? by_k : by_bytes;
    const size_t wanted = resident / ((size_t)CHUNK_WAVE_PART * rows);
    size_t chunks = granules / shortest;
    if (chunks > wanted)
        chunks = wanted;
    if (chunks < 1)
        chunks = 1;
    const size_t length = (granules + chunks - 1) / chunks * CHUNK_GRANULE;
    const chunk_cut cut = {(int)((cols + length - 1) / length), (int)length};
    return cut;
}

// The merge point of a cut's chunks. A warp merges its new candidates into its kept ones after
// kept / 2 of them, capped (warp_merge_after, candidates.cuh); with the default caps, the cap
// matters only where kept is 256, K = 129 to 256. The chunks of a cut shorter than
// CHUNK_SOON_MERGE_BELOW logits (the cut's length, which a last, shorter chunk shares) cap it at
// CHUNK_MERGE_AFTER_AT_MOST, in their passes and in the row's merge of their lists; longer cuts
// keep fast_row's MERGE_AFTER_AT_MOST. Sooner means more, smaller merges. Both values are measured
// choices, and each may be set from the command line like MERGE_AFTER_AT_MOST, e.g.
// make NVCC_EXTRA="-DCHUNK_MERGE_AFTER_AT_MOST=96". The result never passes MERGE_AFTER_AT_MOST:
// warp_capacity makes room for no later merge.
#ifndef CHUNK_SOON_MERGE_BELOW
#define CHUNK_SOON_MERGE_BELOW 32768
#endif
#ifndef CHUNK_MERGE_AFTER_AT_MOST
#define CHUNK_MERGE_AFTER_AT_MOST 80
#endif

__device__ __forceinline__ int chunk_merge_at_most(chunk_cut cut)
{
    return cut.length < CHUNK_SOON_MERGE_BELOW ? min(CHUNK_MERGE_AFTER_AT_MOST, MERGE_AFTER_AT_MOST)
                                               : MERGE_AFTER_AT_MOST;
}

// Warp g of the grid takes chunk g % W of row g / W: neighbouring warps, neighbouring chunks.
__device__ __forceinline__ unsigned chunk_warp(void) { return blockIdx.x * FAST_WARPS + threadIdx.x / WARP_SIZE; }

// After a chunk's pass, its best K sorted in buf: what the chunk leaves, and for the row's last
// chunk the merge and the answer, in this warp's buffer: the warp's own list is already in the
// workspace (chunk_leave_and_count wrote it), so the merge may reuse the buffer. A separate call,
// not inlined, compiled once for the three dtypes, so that its registers do not add to those of
// the pass's loop, where the loads in flight live.
__device__ __noinline__ void chunk_finish(chunk_workspace ws, rank_key *buf, int k, int capacity, int merge_at_most,
                                          chunk_cut cut, online_stat s, int *indices, float *probs)
{
    const unsigned g = chunk_warp(), row = g / cut.chunks;
    const int first = (int)(g % cut.chunks) * cut.length;
    if (!chunk_leave_and_count(ws, row, g, cut.chunks, buf, k, first, s))
        return;
    const size_t row_slots = (size_t)row * cut.chunks;
    merge_chunk_lists(buf, k, capacity, merge_at_most, ws.lists + row_slots * k, cut.chunks);
    write_topk(buf, combine_chunk_stats(ws.stats + row_slots, cut.chunks), row, k, indices, probs);
}

// Each warp makes fast_row's pass over its chunk, with its own part of the block's dynamic shared
// memory; no block-wide barrier follows: a warp past the last chunk, or one whose row is not done,
// leaves. With Guess, as in fast_row, the first threshold is a guess from the chunk's sample, and
// a chunk in which fewer than K logits (all of them, in a last chunk shorter than K) reached it is
// ranked again.
template <typename T, bool Guess>
static __global__ void __launch_bounds__(FAST_THREADS, 8)
    fast_chunks_kernel(const T *__restrict__ x, unsigned rows, size_t cols, int k, chunk_cut cut,
                       chunk_workspace ws, int *__restrict__ indices, float *__restrict__ probs)
{
    extern __shared__ rank_key buffers[]; // FAST_WARPS x capacity
    const unsigned g = chunk_warp();
    if (g >= rows * (unsigned)cut.chunks)
        return; // the whole warp: no block-wide barrier follows
    const unsigned row = g / cut.chunks;
    const int first = (int)(g % cut.chunks) * cut.length, n = min(cut.length, (int)cols - first);
    const int capacity = warp_capacity(k, logits16<T>::count, false), merge_at_most = chunk_merge_at_most(cut);
    warp_candidates<false> w =
        warp_candidates_init<false>(buffers + threadIdx.x / WARP_SIZE * capacity, k, capacity, merge_at_most);
    online_stat s = ONLINE_IDENTITY;
    const T *xc = x + row * cols + first;
    warp_offer_row(w, s, xc, n, Guess);
    warp_sort_best(w);
    if (Guess && w.buf[min(k, n) - 1] == 0) // fewer than K (or n) logits reached the guess
        warp_rank_row_again(w.buf, k, xc, n);
    chunk_finish(ws, w.buf, k, capacity, merge_at_most, cut, warp_combine(s), indices, probs);
}

// The workspace a launch with this cut needs: none where W is 1.
static size_t chunk_workspace_bytes(size_t rows, int k, chunk_cut cut)
{
    chunk_workspace unused;
    return cut.chunks == 1 ? 0 : chunk_workspace_plan(NULL, rows, cut.chunks, k, &unused);
}

static size_t chunk_shared_bytes(int k, int per_lane)
{
    return FAST_WARPS * warp_capacity(k, per_lane, false) * sizeof(rank_key);
}

// The kernel for top-k of T logits, allowed the shared memory of the largest K (once).
template <typename T, bool Guess>
static const void *chunks_kernel_ready(void)
{
    static bool shared_memory_raised[FAST_MAX_DEVICES];
    const int device = fast_device();
    if (!shared_memory_raised[device]) {
        const int most = (int)chunk_shared_bytes(FAST_MAX_K, logits16<T>::count);
        CUDA_CHECK(cudaFuncSetAttribute(fast_chunks_kernel<T, Guess>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        most));
        shared_memory_raised[device] = true;
    }
    return (const void *)fast_chunks_kernel<T, Guess>;
}

// The warps of the kernel for top-k of T logits that `sms` SMs hold at once: the blocks an SM holds
// (its registers and the candidates' shared memory decide) times FAST_WARPS times the SMs. The
// last K's answer is kept per device: a run of launches at one K asks the runtime once.
template <typename T>
static size_t chunk_resident_warps(int k, int sms)
{
    static struct {
        int k, blocks; // k = 0: none
    } last[FAST_MAX_DEVICES];
    const int device = fast_device();
    if (k != last[device].k) {
        const void *kernel = k > GUESS_ABOVE_K ? chunks_kernel_ready<T, true>() : chunks_kernel_ready<T, false>();
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&last[device].blocks, kernel, FAST_THREADS,
                                                                 chunk_shared_bytes(k, logits16<T>::count)));
        last[device].k = k;
    }
    const int blocks = last[device].blocks;
    return (size_t)(blocks > 0 ? blocks : 1) * FAST_WARPS * (size_t)sms;
}

template <typename T, bool Guess>
static void launch_fast_chunks_kernel(const void *x, size_t rows, size_t cols, int k, chunk_cut cut,
                                      const chunk_workspace &ws, int *indices, float *probs, cudaStream_t stream)
{
    chunks_kernel_ready<T, Guess>();
    const size_t shared = chunk_shared_bytes(k, logits16<T>::count);
    const size_t warps = rows * (size_t)cut.chunks;
    const unsigned blocks = (unsigned)((warps + FAST_WARPS - 1) / FAST_WARPS);
    fast_chunks_kernel<T, Guess><<<blocks, FAST_THREADS, shared, stream>>>((const T *)x, (unsigned)rows, cols, k, cut,
                                                                             ws, indices, probs);
    CUDA_CHECK_LAUNCH("fast_chunks_kernel");
}

// Rows cut as `cut` says (W = 1: fast_row's launch), into a workspace of chunk_workspace_bytes for
// the same cut, on `stream`; W > 1 only while rows x W is within a grid's warps (chunk_plan), so
// the warp's number fits 32 bits.
template <typename T>
static void launch_fast_chunks(const void *x, size_t rows, size_t cols, int k, chunk_cut cut, void *workspace,
                               int *indices, float *probs, cudaStream_t stream)
{
    if (cut.chunks == 1)
        return launch_fast_row<T>(x, rows, cols, k, indices, probs, stream, false, NULL);
    chunk_workspace ws;
    chunk_workspace_plan(workspace, rows, cut.chunks, k, &ws);
    if (k > GUESS_ABOVE_K)
        launch_fast_chunks_kernel<T, true>(x, rows, cols, k, cut, ws, indices, probs, stream);
    else
        launch_fast_chunks_kernel<T, false>(x, rows, cols, k, cut, ws, indices, probs, stream);
}

#endif
