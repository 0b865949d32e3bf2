// fast/list_again.cuh — fast_split's overflowed list, made again by the first block alone: the
// logits between the bound and the row's maximum, counted into LIST_AGAIN_BINS bins a pass,
// until the bins from the K-th largest's up fit the list; then those logits, appended.
// Read next: fast_split.cuh.
#ifndef FAST_LIST_AGAIN_CUH
#define FAST_LIST_AGAIN_CUH

#include "cluster_kth.cuh"
#include "lane_counts.cuh"
#include "logits16.cuh"
#include "rank_key.cuh"

#define LIST_AGAIN_BINS 4096 // counts held in the list's place
#define LIST_AGAIN_LOADS 8   // 16-byte loads in flight a thread

// Bits [lo, hi] of the ordered bits, cut into bins of 2^shift values.
struct bit_range {
    unsigned lo, hi;
    int shift;
};

__device__ __forceinline__ bit_range bit_range_of(unsigned lo, unsigned hi)
{
    int shift = 0;
    while ((hi - lo) >> shift >= LIST_AGAIN_BINS)
        shift++;
    return {lo, hi, shift};
}

// One logit: counted into its bin (Append false) or appended (Append true), if in the range.
// Every lane calls.
template <bool Append>
__device__ __forceinline__ void list_again_one(float v, int index, bool valid, bit_range r, unsigned *bins,
                                               rank_key *list, unsigned *count, unsigned capacity)
{
    const unsigned bits = ordered_bits(v);
    const bool in = valid && v == v && bits >= r.lo && bits <= r.hi; // NaNs excluded
    if (Append) {
        if (in) {
            const unsigned at = atomicAdd(count, 1u);
            if (at < capacity)
                list[at] = make_key(v, index);
        }
        return;
    }
    if (!__any_sync(FULL_MASK, in))
        return;
    const unsigned bin = (bits - r.lo) >> r.shift;
    const unsigned peers = __match_any_sync(FULL_MASK, in ? bin : ~0u);
    if (in && threadIdx.x % WARP_SIZE == __ffs(peers) - 1)
        atomicAdd(&bins[bin], __popc(peers));
}

// The row's logits in the range, each passed to list_again_one. The block's threads all call.
template <typename T, bool Append>
__device__ void list_again_pass(const row_parts<T> &p, size_t cols, bit_range r, unsigned *bins, rank_key *list,
                                unsigned *count, unsigned capacity)
{
    typedef logits16<T> vec;
    const int t = threadIdx.x;
    const unsigned ninf = vec::negative_infinity;
    const bool head = t < p.head, tail = p.tail + t < (int)cols;
    list_again_one<Append>(head ? logit_to_float(p.logits[t]) : 0.0f, t, head, r, bins, list, count, capacity);
    list_again_one<Append>(tail ? logit_to_float(p.logits[p.tail + t]) : 0.0f, p.tail + t, tail, r, bins, list,
                           count, capacity);
    for (int base = 0; base < p.vectors; base += SPLIT_THREADS * LIST_AGAIN_LOADS) { // block-uniform
        uint4 raw[LIST_AGAIN_LOADS];
#pragma unroll
        for (int u = 0; u < LIST_AGAIN_LOADS; u++) {
            const int i = base + t + u * SPLIT_THREADS;
            raw[u] = i < p.vectors ? __ldcg(p.body + i) : make_uint4(ninf, ninf, ninf, ninf);
        }
#pragma unroll
        for (int u = 0; u < LIST_AGAIN_LOADS; u++) {
            const int i = base + t + u * SPLIT_THREADS;
            float v[vec::count];
            vec::unpack(raw[u], v);
#pragma unroll
            for (int j = 0; j < vec::count; j++)
                list_again_one<Append>(v[j], p.head + i * vec::count + j, i < p.vectors, r, bins, list, count,
                                       capacity);
        }
    }
}

// The largest of the block's v, in every thread.
#if __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned block_largest(unsigned v, unsigned *warp_max)
{
    const int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    v = __reduce_max_sync(FULL_MASK, v);
    if (lane == 0)
        warp_max[warp] = v;
    __syncthreads();
    for (int w = 0; w < SPLIT_THREADS / WARP_SIZE; w++)
        v = max(v, warp_max[w]);
    return v;
}
#endif

// The bin where the count from the top reaches `wanted`, and the count above it; `pick` is
// shared. Thread t sums bins 4095 - 16 t down to 4080 - 16 t.
__device__ digit_pick pick_bin(const unsigned *bins, unsigned wanted, digit_pick *pick, unsigned *warp_sums)
{
    const int t = threadIdx.x, lane = t % WARP_SIZE, warp = t / WARP_SIZE;
    const int per = LIST_AGAIN_BINS / SPLIT_THREADS, top = LIST_AGAIN_BINS - 1 - per * t;
    unsigned mine = 0;
    for (int i = 0; i < per; i++)
        mine += bins[top - i];
    unsigned through = warp_inclusive_sum(mine);
    if (lane == WARP_SIZE - 1)
        warp_sums[warp] = through;
    __syncthreads();
    for (int w = 0; w < warp; w++)
        through += warp_sums[w];
    if (through >= wanted && through - mine < wanted) { // one thread
        unsigned above = through - mine;
        for (int i = 0;; i++) {
            const unsigned in = bins[top - i];
            if (above + in >= wanted) {
                *pick = {(unsigned)(top - i), above, in};
                break;
            }
            above += in;
        }
    }
    __syncthreads();
    return *pick;
}

// Makes the list again; returns its count, or one past capacity if ties at the K-th fill it.
// `lowest`, `highest`: the ordered bits of the bound and the row's maximum.
template <typename T>
__device__ __noinline__ int list_again(const row_parts<T> p, size_t cols, int k, unsigned lowest, unsigned highest,
                          rank_key *list, unsigned *count, unsigned capacity)
{
    __shared__ digit_pick pick;
    __shared__ unsigned warp_sums[SPLIT_THREADS / WARP_SIZE];
    unsigned *bins = reinterpret_cast<unsigned *>(list); // the list's place, while it is counted
    bit_range r = bit_range_of(lowest, highest);
    unsigned wanted = k, above = 0; // above: logits past r.hi
    for (;;) {
        for (int i = threadIdx.x; i < LIST_AGAIN_BINS; i += SPLIT_THREADS)
            bins[i] = 0;
        __syncthreads();
        list_again_pass<T, false>(p, cols, r, bins, list, count, capacity);
        __syncthreads();
        const digit_pick b = pick_bin(bins, wanted, &pick, warp_sums);
        const unsigned lo = r.lo + (b.digit << r.shift);
        above += b.above, wanted -= b.above;
        if (above + b.in <= capacity) { // the K-th's bin and those above it fit
            r = {lo, highest, 0};
            break;
        }
        if (r.shift == 0) // one value: ties
            return (int)capacity + 1;
        r = bit_range_of(lo, r.hi - lo < (1u << r.shift) ? r.hi : lo + ((1u << r.shift) - 1));
    }
    if (threadIdx.x == 0)
        *count = 0;
    __syncthreads();
    list_again_pass<T, true>(p, cols, r, bins, list, count, capacity);
    __syncthreads();
    return (int)*count;
}

#endif
