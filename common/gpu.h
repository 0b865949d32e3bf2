/* The GPU side of the harness: which device, how much memory, how long things take, and how fast
 * the memory can go at all (the ceilings every table row is compared with). */
#ifndef COMMON_GPU_H
#define COMMON_GPU_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    char name[256];
    int cc_major, cc_minor;
    int sms;
    size_t l2_bytes;
    size_t global_mem_bytes;
    double dram_theoretical_gbps; /* 2 (double data rate) x memory clock x bus width */
    int runtime_version, driver_version; /* as CUDA encodes them: 13000 is 13.0 */
} gpu_info;

/* Picks device 0 and fills info. No usable GPU: one line "no CUDA device found: ..." and exit 1.
 * Also allocates, once, the buffer that gpu_time() reads to flush the L2 cache. */
void gpu_open(gpu_info *info);

/* True when a CUDA device is usable; on false, reason says why (for tests that skip). */
int gpu_available(char *reason, size_t reason_len);

/* Dies with one line if the device has less than `bytes` free. */
void gpu_require_memory(size_t bytes, const char *what);

/* Device memory of `bytes` set to zero, or NULL when bytes is 0; dies with one line naming `what`
 * if the GPU lacks the memory. Release with cudaFree. */
void *gpu_alloc_zeroed(size_t bytes, const char *what);

/* Sets every byte to 0xFF: as float32 every element is then NaN, so an element the kernel does
 * not write can never pass verification. */
void gpu_poison(void *device_ptr, size_t bytes);

/* A grid of at most blocks_per_sm blocks on every SM, fewer when n is small: the size used by
 * grid-stride loops. */
int gpu_grid_size(size_t n, int threads_per_block, int blocks_per_sm);

typedef struct {
    double median_ms, min_ms, max_ms;
} gpu_timing;

/* Enqueues one run of the thing being timed on the default stream. */
typedef void (*gpu_work_fn)(void *ctx);

/* Times `work` with CUDA events: untimed runs, `warmup` at a time until they have taken at least
 * 100 ms (none if warmup is 0), then `iters` timed ones. The L2 cache is flushed before every run
 * (outside the timed region), so no run finds its input in cache. */
gpu_timing gpu_time(gpu_work_fn work, void *ctx, int warmup, int iters);

/* How gpu_time() times, in words for a table's title: "median of 100 runs after a warm-up of ...". */
const char *gpu_timing_method(int warmup, int iters);

/* Median, min and max of ms[0..n-1] (sorts ms in place). */
gpu_timing timing_summary(double *ms, int n);

/* Ceilings measured in this run, in GB/s (1 GB = 1e9 bytes), each timed as gpu_time() times a row
 * but from its fastest run, not its median: a ceiling is the fastest the memory was seen to go,
 * which a row's median, with the same timing noise, stays under:
 *  - copy: bytes read + bytes written by the fastest of two copies (cudaMemcpy device-to-device, and
 *    a kernel in which each block copies one 16 KB tile) at three sizes, from the L2's size to a
 *    buffer many times it. Why sizes near the L2: the stop event fires once the last stores reach
 *    the L2, which still holds the end of the output, so every kernel that writes some tens of MB
 *    is timed a few microseconds short of its DRAM traffic, a copy of the same size included;
 *  - read: a kernel that only reads a buffer many times the L2 with 16-byte loads, bytes read. */
double gpu_copy_ceiling_gbps(void);
double gpu_read_ceiling_gbps(void);

/* Defined in gpu_kernels.cu: sums a buffer of float4 with 16-byte loads, writing nothing unless the
 * sum is exactly `never` (so the compiler must keep every load). */
void launch_read_sweep(const void *buf, size_t n_float4, float *sink, int grid, int threads);

/* Defined in gpu_kernels.cu: copies n_float4 float4 from src to dst, a block per 16 KB tile, each
 * thread issuing all its loads before its stores. */
void launch_tile_copy(const void *src, void *dst, size_t n_float4);

#ifdef __cplusplus
}
#endif
#endif
