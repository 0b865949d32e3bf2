// fast/fast_split.cuh — fast_split: one row over a cluster of blocks, for a batch of one.
//
// What fast_row leaves on the table: a batch of one row is one warp on one SM, and the other SMs
// idle.
// Here a row gets a thread block cluster (sm_90): 16 blocks of SPLIT_THREADS threads on 16 SMs,
// which wait for each other at a hardware barrier and read and write each other's shared memory
// (distributed shared memory, cluster.map_shared_rank).
//   1. Each thread folds its logits (a 262144-float row is 16 vectors a thread, all loaded at once)
//      into (m, d) and its maximum. Each group of lanes writes its maximum to its block's shared
//      memory.
//   2. Past a cluster barrier, every block reads all the groups' maxima from the blocks that hold
//      them and finds their K-th largest to 24 bits (cluster_kth.cuh). The groups are distinct
//      logits, so at least K logits reach it: it is a lower bound of the row's K-th largest, and a
//      tight one, since there are at least 4K groups (2K in a cluster of 8, past K = 512) and few
//      logits outside the top K reach it.
//   3. Each thread compares its logits (still in registers) with the bound and appends those at or
//      above it to the list in the first block's shared memory (an atomic add on its count, across
//      the cluster).
//   4. cluster.sync(). The first block ranks the candidates (a team of lanes counts the ones above
//      each) and writes the best K. With Draw, its first warp then draws the row's token from them
//      (draw.cuh), sorted: where the team counted, each writer also puts its candidate at its place
//      in a free part of the list.
// If the candidates overflow the list (a row full of ties), its first warp scans the whole row as
// fast_row does (warp_rank_row_again): slower, and still exact.
// Assumes: an sm_90 GPU (built for an older one, the kernel is empty and fast_split_available()
// says no); K <= FAST_MAX_K; rows x 16 blocks within gridDim.x; cols <= INT32_MAX - SPLIT_THREADS.
// Read next: draw.cuh, a token drawn from the winners.
#ifndef FAST_FAST_SPLIT_CUH
#define FAST_FAST_SPLIT_CUH

#include <cooperative_groups.h>

#include "../../common/check.h"
#include "cluster_kth.cuh"
#include "dependent_launch.cuh"
#include "draw.cuh"
#include "../host/dtype.h"
#include "fast.h"
#include "per_device.cuh"
#include "warp_row.cuh"

#define SPLIT_UNROLL 16      // 16-byte loads in flight per thread: a 262144-float row at once

// The candidate list: room for 4K candidates and at least 4096 (ties at the bound: 262144 bf16
// logits from [0, 10] have some 800 at the 50th largest value), and for fast_row's buffer.
static int split_list(int k)
{
    int cap = 4096;
    while (cap < 4 * k || cap < warp_capacity(k, logits16<__half>::count, false))
        cap *= 2;
    return cap;
}

// Lanes in a group whose maximum goes into the bound: a warp, or fewer where that leaves under 4K.
static int split_group_lanes(int blocks, int k)
{
    int lanes = WARP_SIZE;
    while (lanes > 1 && blocks * (SPLIT_THREADS / lanes) < 4 * k)
        lanes /= 2;
    return lanes;
}

// Appends v[j] (index first + j) to the list in the first block if it reaches the bound. Slots
// past the capacity are counted, not written: the first block then knows the list overflowed.
template <int N>
__device__ __forceinline__ void append_at_least(const float (&v)[N], int first, float bound, rank_key *list,
                                                unsigned *count, unsigned capacity)
{
    unsigned n = 0;
#pragma unroll
    for (int j = 0; j < N; j++)
        n += v[j] >= bound;
    if (n == 0)
        return;
    unsigned at = atomicAdd(count, n);
#pragma unroll
    for (int j = 0; j < N; j++)
        if (v[j] >= bound) {
            if (at < capacity)
                list[at] = make_key(v[j], first + j);
            at++;
        }
}

// A thread's tile of its block's slice, vectors i0, i0 + SPLIT_THREADS, ..., all loads issued at
// once. Past the slice's end they read as -inf logits, which change neither a statistic nor a
// maximum, so the tile needs no bounds tests after this.
template <typename T>
__device__ __forceinline__ void load_tile(uint4 (&raw)[SPLIT_UNROLL], const row_parts<T> &p, int i0, int end)
{
    const unsigned ninf = logits16<T>::negative_infinity;
#pragma unroll
    for (int u = 0; u < SPLIT_UNROLL; u++) {
        const int i = i0 + u * SPLIT_THREADS;
        raw[u] = i < end ? p.body[i] : make_uint4(ninf, ninf, ninf, ninf);
    }
}

// The row's statistic from the blocks' (one a lane), in every thread: any thread may write any
// place of the answer, and every one uses its warp's lane 0's (warp_statistic, fast_exp.cuh), which
// is the same in every warp.
__device__ __forceinline__ online_stat cluster_statistic(const online_stat *block_stats, int blocks)
{
    const int lane = threadIdx.x % WARP_SIZE;
    return warp_statistic(lane < blocks ? block_stats[lane] : ONLINE_IDENTITY);
}

// Keys a lane reads at once when it counts a candidate's place: one wait for the batch, not one a
// key.
#define PLACE_BATCH 8

// Clusters are sm_90's: built for an older GPU, the kernel is empty, and split_available() (which
// reads the version the kernel was built for) keeps it from being launched.
// With Draw the first block's first warp also draws the row's token; without it `draw` is not read.
template <typename T, bool Draw>
static __global__ void __launch_bounds__(SPLIT_THREADS, 1)
    fast_split_kernel(const T *__restrict__ x, size_t cols, int k, int group_lanes, unsigned capacity,
                      int *__restrict__ indices, float *__restrict__ probs, const draw_request draw)
{
#if __CUDA_ARCH__ >= 900
    typedef logits16<T> vec;
    extern __shared__ rank_key area[]; // in the first block: the count, then the candidate list
    __shared__ unsigned maxima[SPLIT_THREADS]; // this block's group maxima, as ordered bits
    __shared__ online_stat warp_stats[SPLIT_THREADS / WARP_SIZE], block_stats[SPLIT_MAX_BLOCKS];
    __shared__ unsigned counts[KTH_ROUNDS][SKEWED_COUNTS]; // block_kth_largest's, a round each
    __shared__ unsigned agree[2][SPLIT_THREADS / WARP_SIZE]; // block_kth_by_bisection's, a warp each
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    const int blocks = (int)cluster.num_blocks(), rank = (int)cluster.block_rank();
    const int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE, t = threadIdx.x;
    const size_t row = blockIdx.x / blocks;
    const T *xr = x + row * cols;
    const row_parts<T> p = split_row(xr, cols);
    const int first = slice_start(p, rank, blocks), end = slice_start(p, rank + 1, blocks);
    const bool head = rank == 0 && t < p.head, tail = rank == blocks - 1 && p.tail + t < (int)cols;
    const int edge = head ? t : p.tail + t; // the index of this thread's head or tail logit

    // 1. This thread's logits (its vectors of the block's slice; the head in the first block, the
    //    tail in the last) into its statistic and maximum; each group's maximum into its block's
    //    shared memory. A row of up to SPLIT_UNROLL vectors a thread stays in registers for step
    //    3; a longer one is read again there, a tile at a time. The first tile's loads go out
    //    before anything else.
    wait_for_launch_ahead(); // before the first global access (dependent_launch.cuh)
    uint4 raw[SPLIT_UNROLL];
    load_tile(raw, p, first + t, end);
    const float edge_logit = head || tail ? logit_to_float(p.logits[edge]) : -INFINITY;
    unsigned *count = reinterpret_cast<unsigned *>(area);
    if (rank == 0 && t == 0)
        *count = 0;
    for (int i = t; i < KTH_ROUNDS * SKEWED_COUNTS; i += SPLIT_THREADS)
        counts[i / SKEWED_COUNTS][i % SKEWED_COUNTS] = 0;

    online_stat s = ONLINE_IDENTITY;
    float most = -INFINITY;
    if (head || tail) {
        most = edge_logit;
        s = online_stat_add(s, most);
    }
    // Every FAST_UNROLL vectors cost one rescale test, as a chunk of fast_row does.
    const int chunk = FAST_UNROLL;
    const bool one_tile = end - first <= SPLIT_THREADS * SPLIT_UNROLL;
    for (int i0 = first + t; i0 < end; i0 += SPLIT_THREADS * SPLIT_UNROLL) {
        if (i0 != first + t)
            load_tile(raw, p, i0, end);
#pragma unroll
        for (int g = 0; g < SPLIT_UNROLL; g += chunk) {
            if (i0 + g * SPLIT_THREADS >= end)
                break; // the rest of the tile lies past the slice: -inf, nothing to fold
            most = fmaxf(most, fold_chunk<T, chunk>(s, raw + g));
        }
    }
    for (int offset = 1; offset < group_lanes; offset *= 2)
        most = fmaxf(most, __shfl_xor_sync(FULL_MASK, most, offset));
    const int per_block = SPLIT_THREADS / group_lanes, groups = blocks * per_block;
    if (lane % group_lanes == 0)
        maxima[t / group_lanes] = ordered_bits(most);
    cluster.barrier_arrive(); // this block's maxima are written; its statistic meanwhile
    s = warp_combine(s);
    if (lane == 0)
        warp_stats[warp] = s;
    cluster.barrier_wait(); // every block's maxima are written (and every block has started)

    // 2. The bound: the K-th largest of all the cluster's group maxima, found by every block.
    //    Each thread reads groups t, t + 256, ... from the blocks that hold them: per_block
    //    divides 256, so all of them sit at the same slot, every 256 / per_block blocks.
    unsigned held[SPLIT_MAX_HELD];
    const int slot = t % per_block, from = t / per_block, step = SPLIT_THREADS / per_block;
#pragma unroll
    for (int j = 0; j < SPLIT_MAX_HELD; j++)
        held[j] = t + j * SPLIT_THREADS < groups ? *cluster.map_shared_rank(&maxima[slot], from + j * step) : 0u;
    const unsigned kth = groups <= SPLIT_THREADS ? block_kth_by_bisection(held[0], t < groups, k, agree)
                                                 : block_kth_largest(held, groups, k, counts);
    // Below -inf's ordered bits lie only NaNs: a K-th largest of -inf leaves no bound.
    const float bound = kth < ordered_bits(-INFINITY) ? -INFINITY : from_ordered_bits(kth);
    if (warp == 0) { // the block's statistic, to the first block (warp_stats is complete: barriers since)
        const online_stat b = warp_combine(lane < SPLIT_THREADS / WARP_SIZE ? warp_stats[lane] : ONLINE_IDENTITY);
        if (lane == 0)
            *cluster.map_shared_rank(&block_stats[rank], 0) = b;
    }

    // 3. The logits >= bound, appended to the first block's list.
    rank_key *list = cluster.map_shared_rank(area + 1, 0);
    unsigned *list_count = cluster.map_shared_rank(count, 0);
    if (head || tail) {
        const float v[1] = {edge_logit};
        append_at_least(v, edge, bound, list, list_count, capacity);
    }
    for (int i0 = first + t; i0 < end; i0 += SPLIT_THREADS * SPLIT_UNROLL) {
        if (!one_tile)
            load_tile(raw, p, i0, end);
#pragma unroll
        for (int g = 0; g < SPLIT_UNROLL; g += chunk) {
            if (i0 + g * SPLIT_THREADS >= end)
                break; // past the slice: -inf padding, as in step 1
            if (!(vec::template largest<chunk>(raw + g) >= bound))
                continue; // the usual case: one compare for the chunk
#pragma unroll
            for (int u = g; u < g + chunk; u++) {
                const int i = i0 + u * SPLIT_THREADS;
                if (i < end) { // a -inf past the end reaches a bound of -inf
                    float v[vec::count];
                    vec::unpack(raw[u], v);
                    append_at_least(v, p.head + i * vec::count, bound, list, list_count, capacity);
                }
            }
        }
    }
    cluster.sync(); // the candidates and every block's statistic are in the first block

    if (rank != 0)
        return;

    // 4. The first block: the best K of the candidates, and the row's statistic. Keys are
    //    unique, so a candidate's place in the answer is how many candidates beat it: with no
    //    more candidates than threads (float32 rows at K = 50 have some K + 10), a team of lanes
    //    counts for each and writes it if it is among the K, with no sort at all. More than 256 (a
    //    larger K, or a bf16 row with more logits equal to its K-th, as rows of 128256 from [0, 10)
    //    have at K = 50), the block sorts them (by runs of 128 in registers, warp_sort.cuh).
    const int n = (int)*count;
    rank_key *mine = area + 1;
    if (n <= SPLIT_THREADS) {
        int team = WARP_SIZE; // lanes that share the count for one candidate: as many as fit
        while (team > 1 && team * n > SPLIT_THREADS)
            team /= 2;
        const int c = t / team;
        const rank_key key = c < n ? mine[c] : 0;
        int place = 0;
        for (int j0 = t % team; j0 < n && c < n; j0 += PLACE_BATCH * team) {
            rank_key other[PLACE_BATCH]; // read together: one wait for the batch, not one a key
#pragma unroll
            for (int u = 0; u < PLACE_BATCH; u++) {
                const int j = j0 + u * team;
                other[u] = j < n ? mine[j] : 0; // 0 is below every key
            }
#pragma unroll
            for (int u = 0; u < PLACE_BATCH; u++)
                place += other[u] > key;
        }
        for (int offset = team / 2; offset > 0; offset /= 2)
            place += __shfl_xor_sync(FULL_MASK, place, offset);
        const online_stat total = cluster_statistic(block_stats, blocks);
        // With n <= SPLIT_THREADS candidates, slots from SPLIT_THREADS on are free (the list holds
        // 4096 >= SPLIT_THREADS + FAST_MAX_K): the winners go there in order, for the draw.
        rank_key *sorted = mine + SPLIT_THREADS;
        if (c < n && t % team == 0 && place < k) {
            write_entry(key, place, total, row, k, indices, probs);
            if (Draw)
                sorted[place] = key;
        }
        if (Draw) {
            __syncthreads(); // every winner is at its place
            if (warp == 0)
                warp_draw(sorted, k, row, draw);
        }
        return;
    }
    if (n <= (int)capacity) {
        int padded = 2 * SPLIT_THREADS;
        while (padded < n)
            padded *= 2;
        for (int i = n + t; i < padded; i += SPLIT_THREADS)
            mine[i] = 0; // empty slots sort last
        __syncthreads();
        block_sort_by_runs(mine, padded, SPLIT_THREADS);
    } else if (warp == 0) { // too many logits reach the bound: the whole row, as fast_row does it
        warp_rank_row_again(mine, k, xr, cols);
    }
    const online_stat total = cluster_statistic(block_stats, blocks);
    if (warp == 0) {
        write_topk(mine, total, row, k, indices, probs);
        if (Draw)
            warp_draw(mine, k, row, draw);
    }
#endif
}

static size_t split_shared_bytes(int k) { return (1 + (size_t)split_list(k)) * sizeof(rank_key); }

static cudaLaunchConfig_t split_config(size_t rows, int blocks, int k, cudaLaunchAttribute *cluster)
{
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)(rows * blocks)), config.blockDim = dim3(SPLIT_THREADS);
    config.dynamicSmemBytes = split_shared_bytes(k);
    cluster->id = cudaLaunchAttributeClusterDimension;
    cluster->val.clusterDim.x = blocks, cluster->val.clusterDim.y = 1, cluster->val.clusterDim.z = 1;
    config.attrs = cluster, config.numAttrs = 1;
    return config;
}

// A cluster launch needs the GPU to have them (sm_90) and the kernel to be built for it.
template <typename T>
static bool split_available(void)
{
    static int available[FAST_MAX_DEVICES]; // 0: not asked, 1: no, 2: yes
    const int device = fast_device();
    if (!available[device]) {
        int clusters;
        cudaFuncAttributes built;
        CUDA_CHECK(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device));
        CUDA_CHECK(cudaFuncGetAttributes(&built, fast_split_kernel<T, false>)); // both are built alike
        available[device] = clusters && built.binaryVersion >= 90 ? 2 : 1;
    }
    return available[device] == 2;
}

// 16 blocks a cluster where the GPU allows it (H100 and H200 do, as a size beyond the portable 8).
template <typename T, bool Draw>
static int split_blocks(void)
{
    static int blocks[FAST_MAX_DEVICES]; // 0: not asked
    const int device = fast_device();
    if (!blocks[device]) {
        CUDA_CHECK(cudaFuncSetAttribute(fast_split_kernel<T, Draw>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        CUDA_CHECK(cudaFuncSetAttribute(fast_split_kernel<T, Draw>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)split_shared_bytes(FAST_MAX_K)));
        cudaLaunchAttribute cluster;
        const cudaLaunchConfig_t config = split_config(1, SPLIT_MAX_BLOCKS, FAST_MAX_K, &cluster);
        int fit = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveClusters(&fit, fast_split_kernel<T, Draw>, &config));
        blocks[device] = fit > 0 ? SPLIT_MAX_BLOCKS : SPLIT_MAX_BLOCKS / 2;
    }
    return blocks[device];
}

// A cluster of blocks per row, on `stream`; `dependent`: a programmatic dependent launch.
template <typename T, bool Draw>
static void launch_fast_split_kernel(const void *x, size_t rows, size_t cols, int k, int *indices, float *probs,
                                     cudaStream_t stream, bool dependent, const draw_request &draw)
{
    const int blocks = split_blocks<T, Draw>();
    cudaLaunchAttribute attributes[2];
    cudaLaunchConfig_t config = split_config(rows, blocks, k, &attributes[0]);
    config.stream = stream;
    config.numAttrs += dependent_launch_attribute(&attributes[1], dependent);
    CUDA_CHECK(cudaLaunchKernelEx(&config, fast_split_kernel<T, Draw>, (const T *)x, cols, k,
                                  split_group_lanes(blocks, k), (unsigned)split_list(k), indices, probs, draw));
    CUDA_CHECK_LAUNCH("fast_split_kernel");
}

// draw: NULL for the top-K alone.
template <typename T>
static void launch_fast_split(const void *x, size_t rows, size_t cols, int k, int *indices, float *probs,
                              cudaStream_t stream, bool dependent, const draw_request *draw)
{
    const draw_request none = {};
    if (draw)
        launch_fast_split_kernel<T, true>(x, rows, cols, k, indices, probs, stream, dependent, *draw);
    else
        launch_fast_split_kernel<T, false>(x, rows, cols, k, indices, probs, stream, dependent, none);
}

// Whether this GPU has clusters and the kernel was built for them.
static bool fast_split_available(logit_dtype dtype)
{
    return dtype == DTYPE_F32    ? split_available<float>()
           : dtype == DTYPE_BF16 ? split_available<__nv_bfloat16>()
                                 : split_available<__half>();
}

#endif
