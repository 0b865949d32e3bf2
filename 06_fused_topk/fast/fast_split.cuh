// fast/fast_split.cuh — fast_split: one row over a cluster of 16 blocks (sm_90), which agree on
// a bound below the row's K-th largest and append the logits that reach it to the first block.
// A list that overflows is made again by the first block (list_again.cuh); where ties at the K-th
// overflow it again, the first warp ranks the whole row, as fast_row does.
// Assumes K <= FAST_MAX_K and cols <= INT32_MAX - SPLIT_THREADS.
// Read next: draw.cuh.
#ifndef FAST_FAST_SPLIT_CUH
#define FAST_FAST_SPLIT_CUH

#include <cooperative_groups.h>

#include "../../common/check.h"
#include "cluster_kth.cuh"
#include "dependent_launch.cuh"
#include "list_again.cuh"
#include "draw.cuh"
#include "../host/dtype.h"
#include "fast.h"
#include "per_device.cuh"
#include "warp_row.cuh"

#define SPLIT_UNROLL 16      // 16-byte loads in flight a thread

// The list holds at least 4096 and 4K candidates, and fast_row's buffer.
static int split_list(int k)
{
    int cap = 4096;
    while (cap < 4 * k || cap < warp_capacity(k, logits16<__half>::count, false))
        cap *= 2;
    return cap;
}

// Lanes a group: a warp, or fewer to keep 4K groups.
static int split_group_lanes(int blocks, int k)
{
    int lanes = WARP_SIZE;
    while (lanes > 1 && blocks * (SPLIT_THREADS / lanes) < 4 * k)
        lanes /= 2;
    return lanes;
}

// Appends the v[j] that reach the bound. Slots past capacity are counted, not written.
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

// A thread's tile of vectors i0, i0 + SPLIT_THREADS, ..., loaded at once; past `end`, -inf.
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

// The row's (m, d) from the blocks', equal in every thread.
__device__ __forceinline__ online_stat cluster_statistic(const online_stat *block_stats, int blocks)
{
    const int lane = threadIdx.x % WARP_SIZE;
    return warp_statistic(lane < blocks ? block_stats[lane] : ONLINE_IDENTITY);
}

// Keys a lane reads at once to count a place.
#define PLACE_BATCH 8

// Empty below sm_90. Draw: the first warp also draws the token. !Probs: logits out.
template <typename T, bool Draw, bool Probs = true>
static __global__ void __launch_bounds__(SPLIT_THREADS, 2)
    fast_split_kernel(const T *__restrict__ x, size_t cols, int k, int group_lanes, unsigned capacity,
                      int *__restrict__ indices, float *__restrict__ probs, const draw_request draw)
{
#if __CUDA_ARCH__ >= 900
    typedef logits16<T> vec;
    extern __shared__ rank_key area[]; // the first block's count, then its list
    __shared__ unsigned maxima[SPLIT_THREADS]; // the block's group maxima, as ordered bits
    __shared__ online_stat warp_stats[SPLIT_THREADS / WARP_SIZE], block_stats[SPLIT_MAX_BLOCKS];
    __shared__ unsigned counts[KTH_ROUNDS][SKEWED_COUNTS]; // counts, a round each
    __shared__ unsigned agree[2][SPLIT_THREADS / WARP_SIZE]; // AND and OR, a warp each
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    const int blocks = (int)cluster.num_blocks(), rank = (int)cluster.block_rank();
    const int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE, t = threadIdx.x;
    const size_t row = blockIdx.x / blocks;
    const T *xr = x + row * cols;
    const row_parts<T> p = split_row(xr, cols);
    const int first = slice_start(p, rank, blocks), end = slice_start(p, rank + 1, blocks);
    const bool head = rank == 0 && t < p.head, tail = rank == blocks - 1 && p.tail + t < (int)cols;
    const int edge = head ? t : p.tail + t; // the index of the edge logit

    // 1. Each thread folds its logits into (m, d) and its maximum; each group's maximum goes to
    //    its block's shared memory. A single tile stays in registers for step 3.
    wait_for_launch_ahead(); // before any global access
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
        if (Probs)
            s = online_stat_add(s, most);
    }
    const int chunk = FAST_UNROLL;
    const bool one_tile = end - first <= SPLIT_THREADS * SPLIT_UNROLL;
    for (int i0 = first + t; i0 < end; i0 += SPLIT_THREADS * SPLIT_UNROLL) {
        if (i0 != first + t)
            load_tile(raw, p, i0, end);
#pragma unroll
        for (int g = 0; g < SPLIT_UNROLL; g += chunk) {
            if (i0 + g * SPLIT_THREADS >= end)
                break; // the rest lies past the slice
            most = fmaxf(most, fold_chunk<T, chunk, Probs>(s, raw + g));
        }
    }
    for (int offset = 1; offset < group_lanes; offset *= 2)
        most = fmaxf(most, __shfl_xor_sync(FULL_MASK, most, offset));
    const int per_block = SPLIT_THREADS / group_lanes, groups = blocks * per_block;
    if (lane % group_lanes == 0)
        maxima[t / group_lanes] = ordered_bits(most);
    cluster.barrier_arrive(); // this block's maxima are written
    s = warp_combine(s);
    if (lane == 0)
        warp_stats[warp] = s;
    cluster.barrier_wait(); // every block's maxima are written

    // 2. Every block finds the K-th largest of all the group maxima. Thread t reads groups
    //    t, t + 256, ..., which sit at one slot of every step-th block.
    unsigned held[SPLIT_MAX_HELD];
    const int slot = t % per_block, from = t / per_block, step = SPLIT_THREADS / per_block;
#pragma unroll
    for (int j = 0; j < SPLIT_MAX_HELD; j++)
        held[j] = t + j * SPLIT_THREADS < groups ? *cluster.map_shared_rank(&maxima[slot], from + j * step) : 0u;
    unsigned top = 0; // the largest held
#pragma unroll
    for (int j = 0; j < SPLIT_MAX_HELD; j++)
        top = max(top, held[j]);
    const unsigned kth = groups <= SPLIT_THREADS ? block_kth_by_bisection(held[0], t < groups, k, agree)
                                                 : block_kth_largest(held, groups, k, counts);
    // Below -inf's ordered bits lie only NaNs.
    const float bound = kth < ordered_bits(-INFINITY) ? -INFINITY : from_ordered_bits(kth);
    if (warp == 0) { // the block's statistic goes to block 0
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
                break; // the rest lies past the slice
            if (!(vec::template largest<chunk>(raw + g) >= bound))
                continue; // no logit of the chunk reaches it
#pragma unroll
            for (int u = g; u < g + chunk; u++) {
                const int i = i0 + u * SPLIT_THREADS;
                if (i < end) { // padding past the end is skipped
                    float v[vec::count];
                    vec::unpack(raw[u], v);
                    append_at_least(v, p.head + i * vec::count, bound, list, list_count, capacity);
                }
            }
        }
    }
    cluster.sync(); // candidates and statistics are in block 0

    if (rank != 0)
        return;

    // 4. The first block ranks the candidates. Keys are unique, so a candidate's place is how
    //    many beat it: up to SPLIT_THREADS candidates, a team of lanes counts for each; more,
    //    the block sorts them.
    rank_key *mine = area + 1;
    int n = (int)*count;
    if (n > (int)capacity) // bits from the bound's to the row's maximum
        n = list_again(p, cols, k, ordered_bits(bound), block_largest(top, agree[0]), mine, count, capacity);
    if (n <= SPLIT_THREADS) {
        int team = WARP_SIZE; // lanes counting for one candidate
        while (team > 1 && team * n > SPLIT_THREADS)
            team /= 2;
        const int c = t / team;
        const rank_key key = c < n ? mine[c] : 0;
        int place = 0;
        for (int j0 = t % team; j0 < n && c < n; j0 += PLACE_BATCH * team) {
            rank_key other[PLACE_BATCH]; // read together
#pragma unroll
            for (int u = 0; u < PLACE_BATCH; u++) {
                const int j = j0 + u * team;
                other[u] = j < n ? mine[j] : 0; // below every key
            }
#pragma unroll
            for (int u = 0; u < PLACE_BATCH; u++)
                place += other[u] > key;
        }
        for (int offset = team / 2; offset > 0; offset /= 2)
            place += __shfl_xor_sync(FULL_MASK, place, offset);
        const online_stat total = cluster_statistic(block_stats, blocks);
        // Slots from SPLIT_THREADS on are free: the winners go there in order, for the draw.
        rank_key *sorted = mine + SPLIT_THREADS;
        if (c < n && t % team == 0 && place < k) {
            write_entry<Probs>(key, place, total, row, k, indices, probs);
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
            mine[i] = 0; // empties sort last
        __syncthreads();
        block_sort_by_runs(mine, padded, SPLIT_THREADS);
    } else if (warp == 0) { // the list overflowed: rank the whole row
        warp_rank_row_again(mine, k, xr, cols);
    }
    const online_stat total = cluster_statistic(block_stats, blocks);
    if (warp == 0) {
        write_topk<Probs>(mine, total, row, k, indices, probs);
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

template <typename T>
static bool split_available(void)
{
    static int available[FAST_MAX_DEVICES]; // 0 unasked, 1 no, 2 yes
    const int device = fast_device();
    if (!available[device]) {
        int clusters;
        cudaFuncAttributes built;
        CUDA_CHECK(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device));
        CUDA_CHECK(cudaFuncGetAttributes(&built, fast_split_kernel<T, false>)); // both kernels are built alike
        available[device] = clusters && built.binaryVersion >= 90 ? 2 : 1;
    }
    return available[device] == 2;
}

// SPLIT_MAX_BLOCKS a cluster where the GPU allows it, else 8.
template <typename T, bool Draw, bool Probs>
static int split_blocks(void)
{
    static int blocks[FAST_MAX_DEVICES]; // 0: not asked
    const int device = fast_device();
    if (!blocks[device]) {
        CUDA_CHECK(cudaFuncSetAttribute(fast_split_kernel<T, Draw, Probs>,
                                        cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        CUDA_CHECK(cudaFuncSetAttribute(fast_split_kernel<T, Draw, Probs>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)split_shared_bytes(FAST_MAX_K)));
        cudaLaunchAttribute cluster;
        const cudaLaunchConfig_t config = split_config(1, SPLIT_MAX_BLOCKS, FAST_MAX_K, &cluster);
        int fit = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveClusters(&fit, fast_split_kernel<T, Draw, Probs>, &config));
        blocks[device] = fit > 0 ? SPLIT_MAX_BLOCKS : SPLIT_MAX_BLOCKS / 2;
    }
    return blocks[device];
}

// Launches a cluster a row.
template <typename T, bool Draw, bool Probs>
static void launch_fast_split_kernel(const void *x, size_t rows, size_t cols, int k, int *indices, float *probs,
                                     cudaStream_t stream, bool dependent, const draw_request &draw)
{
    const int blocks = split_blocks<T, Draw, Probs>();
    cudaLaunchAttribute attributes[2];
    cudaLaunchConfig_t config = split_config(rows, blocks, k, &attributes[0]);
    config.stream = stream;
    config.numAttrs += dependent_launch_attribute(&attributes[1], dependent);
    CUDA_CHECK(cudaLaunchKernelEx(&config, fast_split_kernel<T, Draw, Probs>, (const T *)x, cols, k,
                                  split_group_lanes(blocks, k), (unsigned)split_list(k), indices, probs, draw));
    CUDA_CHECK_LAUNCH("fast_split_kernel");
}

// draw: NULL for the top-K alone. !Probs: logits out, no draw.
template <typename T, bool Probs = true>
static void launch_fast_split(const void *x, size_t rows, size_t cols, int k, int *indices, float *probs,
                              cudaStream_t stream, bool dependent, const draw_request *draw)
{
    const draw_request none = {};
    if (!Probs)
        launch_fast_split_kernel<T, false, false>(x, rows, cols, k, indices, probs, stream, dependent, none);
    else if (draw)
        launch_fast_split_kernel<T, true, true>(x, rows, cols, k, indices, probs, stream, dependent, *draw);
    else
        launch_fast_split_kernel<T, false, true>(x, rows, cols, k, indices, probs, stream, dependent, none);
}

// Whether this GPU has clusters and the kernel was built for them.
static bool fast_split_available(logit_dtype dtype)
{
    return dtype == DTYPE_F32    ? split_available<float>()
           : dtype == DTYPE_BF16 ? split_available<__nv_bfloat16>()
                                 : split_available<__half>();
}

#endif
