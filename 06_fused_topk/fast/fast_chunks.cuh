// fast/fast_chunks.cuh — fast_chunks: each row cut into W chunks, a warp a chunk making
// fast_row's pass over it; the row's last warp merges (chunk_merge.cuh). W = 1 is fast_row.
// Assumes a workspace of chunk_workspace_bytes, zeroed before the first launch.
// Read next: cluster_kth.cuh.
#ifndef FAST_FAST_CHUNKS_CUH
#define FAST_FAST_CHUNKS_CUH

#include "../../common/check.h"
#include "chunk_merge.cuh"
#include "fast.h"
#include "fast_row.cuh"
#include "per_device.cuh"

// A chunk is whole granules, at least CHUNK_LOGITS_PER_K x K logits and CHUNK_SHORTEST_BYTES
// long, except a row's last.
#define CHUNK_GRANULE 1024
#define CHUNK_LOGITS_PER_K 16
#ifndef CHUNK_SHORTEST_BYTES
#define CHUNK_SHORTEST_BYTES 16384
#endif

// W chunks of `length` logits; the last takes the rest.
typedef struct {
    int chunks, length;
} chunk_cut;

// The grid fills 1 / CHUNK_WAVE_PART of a wave of resident warps.
#ifndef CHUNK_WAVE_PART
#define CHUNK_WAVE_PART 2
#endif

// W: as many chunks as keep rows x W within that share of `resident` warps, each chunk within
// the bounds above; at least 1.
static chunk_cut chunk_plan(size_t rows, size_t cols, int k, size_t logit_bytes, size_t resident)
{
    const size_t granules = (cols + CHUNK_GRANULE - 1) / CHUNK_GRANULE;
    const size_t granule_bytes = CHUNK_GRANULE * logit_bytes;
    const size_t by_k = ((size_t)CHUNK_LOGITS_PER_K * k + CHUNK_GRANULE - 1) / CHUNK_GRANULE; // granules
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

// A cut shorter than CHUNK_SOON_MERGE_BELOW caps the merge point at CHUNK_MERGE_AFTER_AT_MOST,
// never past MERGE_AFTER_AT_MOST.
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

// Warp g of the grid takes chunk g % W of row g / W.
__device__ __forceinline__ unsigned chunk_warp(void) { return blockIdx.x * FAST_WARPS + threadIdx.x / WARP_SIZE; }

// Leaves the chunk's part; the row's last warp merges in its own buffer and writes the answer.
// Not inlined. !Probs: logits out.
template <bool Probs = true>
__device__ __noinline__ void chunk_finish(chunk_workspace ws, rank_key *buf, int k, int capacity, int merge_at_most,
                                          chunk_cut cut, online_stat s, int *indices, float *probs)
{
    const unsigned g = chunk_warp(), row = g / cut.chunks;
    const int first = (int)(g % cut.chunks) * cut.length;
    if (!chunk_leave_and_count(ws, row, g, cut.chunks, buf, k, first, s))
        return;
    const size_t row_slots = (size_t)row * cut.chunks;
    merge_chunk_lists(buf, k, capacity, merge_at_most, ws.lists + row_slots * k, cut.chunks);
    write_topk<Probs>(buf, combine_chunk_stats(ws.stats + row_slots, cut.chunks), row, k, indices, probs);
}

// A warp a chunk, as fast_row_kernel; no block-wide barrier.
template <typename T, bool Guess, bool Probs = true>
static __global__ void __launch_bounds__(FAST_THREADS, 8)
    fast_chunks_kernel(const T *__restrict__ x, unsigned rows, size_t cols, int k, chunk_cut cut,
                       chunk_workspace ws, int *__restrict__ indices, float *__restrict__ probs)
{
    extern __shared__ rank_key buffers[]; // each warp owns a part
    const unsigned g = chunk_warp();
    if (g >= rows * (unsigned)cut.chunks)
        return; // the whole warp leaves
    const unsigned row = g / cut.chunks;
    const int first = (int)(g % cut.chunks) * cut.length, n = min(cut.length, (int)cols - first);
    const int capacity = warp_capacity(k, logits16<T>::count, false), merge_at_most = chunk_merge_at_most(cut);
    warp_candidates<false> w =
        warp_candidates_init<false>(buffers + threadIdx.x / WARP_SIZE * capacity, k, capacity, merge_at_most);
    online_stat s = ONLINE_IDENTITY;
    const T *xc = x + row * cols + first;
    warp_offer_row<T, false, Probs>(w, s, xc, n, Guess);
    warp_sort_best(w);
    if (Guess && w.buf[min(k, n) - 1] == 0) // fewer than K reached the guess
        warp_rank_row_again(w.buf, k, xc, n);
    chunk_finish<Probs>(ws, w.buf, k, capacity, merge_at_most, cut, warp_combine(s), indices, probs);
}

// The workspace a cut needs: none for W = 1.
static size_t chunk_workspace_bytes(size_t rows, int k, chunk_cut cut)
{
    chunk_workspace unused;
    return cut.chunks == 1 ? 0 : chunk_workspace_plan(NULL, rows, cut.chunks, k, &unused);
}

static size_t chunk_shared_bytes(int k, int per_lane)
{
    return FAST_WARPS * warp_capacity(k, per_lane, false) * sizeof(rank_key);
}

// The kernel, allowed FAST_MAX_K's shared memory once.
template <typename T, bool Guess, bool Probs = true>
static const void *chunks_kernel_ready(void)
{
    static bool shared_memory_raised[FAST_MAX_DEVICES];
    const int device = fast_device();
    if (!shared_memory_raised[device]) {
        const int most = (int)chunk_shared_bytes(FAST_MAX_K, logits16<T>::count);
        CUDA_CHECK(cudaFuncSetAttribute(fast_chunks_kernel<T, Guess, Probs>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, most));
        shared_memory_raised[device] = true;
    }
    return (const void *)fast_chunks_kernel<T, Guess, Probs>;
}

// The kernel's warps that `sms` SMs hold at once; the last K's answer is cached per device.
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

template <typename T, bool Guess, bool Probs>
static void launch_fast_chunks_kernel(const void *x, size_t rows, size_t cols, int k, chunk_cut cut,
                                      const chunk_workspace &ws, int *indices, float *probs, cudaStream_t stream)
{
    chunks_kernel_ready<T, Guess, Probs>();
    const size_t shared = chunk_shared_bytes(k, logits16<T>::count);
    const size_t warps = rows * (size_t)cut.chunks;
    const unsigned blocks = (unsigned)((warps + FAST_WARPS - 1) / FAST_WARPS);
    fast_chunks_kernel<T, Guess, Probs><<<blocks, FAST_THREADS, shared, stream>>>((const T *)x, (unsigned)rows, cols,
                                                                                    k, cut, ws, indices, probs);
    CUDA_CHECK_LAUNCH("fast_chunks_kernel");
}

// Launches rows cut as `cut` says; W = 1 launches fast_row. !Probs: logits out.
template <typename T, bool Probs = true>
static void launch_fast_chunks(const void *x, size_t rows, size_t cols, int k, chunk_cut cut, void *workspace,
                               int *indices, float *probs, cudaStream_t stream)
{
    if (cut.chunks == 1)
        return launch_fast_row<T, Probs>(x, rows, cols, k, indices, probs, stream, false, NULL);
    chunk_workspace ws;
    chunk_workspace_plan(workspace, rows, cut.chunks, k, &ws);
    if (k > GUESS_ABOVE_K)
        launch_fast_chunks_kernel<T, true, Probs>(x, rows, cols, k, cut, ws, indices, probs, stream);
    else
        launch_fast_chunks_kernel<T, false, Probs>(x, rows, cols, k, cut, ws, indices, probs, stream);
}

#endif
