#include "gpu.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define SWEEP_THREADS 256

static struct {
    int sms;
    void *flush_buf; /* 2x the L2 size, read before every timed run */
    size_t flush_bytes;
    float *sink; /* where read_sweep_kernel would write; it never does */
} g;

int gpu_available(char *reason, size_t reason_len)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaErrorInsufficientDriver) {
        int runtime = 0;
        cudaRuntimeGetVersion(&runtime);
        snprintf(reason, reason_len, "no NVIDIA driver is loaded, or it is older than CUDA %d.%d",
                 runtime / 1000, runtime % 1000 / 10);
        return 0;
    }
    if (err != cudaSuccess) {
        snprintf(reason, reason_len, "%s", cudaGetErrorString(err));
        return 0;
    }
    if (count == 0) {
        snprintf(reason, reason_len, "the driver reports 0 devices");
        return 0;
    }
    return 1;
}

void gpu_open(gpu_info *info)
{
    char reason[256];
    if (!gpu_available(reason, sizeof reason))
        die(1, "no CUDA device found: %s", reason);

    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "%s", prop.name);
    info->cc_major = prop.major;
    info->cc_minor = prop.minor;
    info->sms = prop.multiProcessorCount;
    info->l2_bytes = (size_t)prop.l2CacheSize;
    info->global_mem_bytes = prop.totalGlobalMem;

    int clock_khz = 0, bus_bits = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0));
    info->dram_theoretical_gbps = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
    CUDA_CHECK(cudaRuntimeGetVersion(&info->runtime_version));
    CUDA_CHECK(cudaDriverGetVersion(&info->driver_version));

    g.sms = info->sms;
    g.flush_bytes = 2 * info->l2_bytes;
    gpu_require_memory(g.flush_bytes, "the L2 flush buffer");
    CUDA_CHECK(cudaMalloc(&g.flush_buf, g.flush_bytes));
    CUDA_CHECK(cudaMemset(g.flush_buf, 0, g.flush_bytes));
    CUDA_CHECK(cudaMalloc((void **)&g.sink, sizeof(float)));
}

void gpu_require_memory(size_t bytes, const char *what)
{
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (bytes > free_bytes) {
        char need[32], have[32], total[32];
        format_bytes(bytes, need, sizeof need);
        format_bytes(free_bytes, have, sizeof have);
        format_bytes(total_bytes, total, sizeof total);
        die(1, "not enough GPU memory for %s: needs %s, %s free of %s", what, need, have, total);
    }
}

void *gpu_alloc_zeroed(size_t bytes, const char *what)
{
    void *p = NULL;
    if (bytes) {
        gpu_require_memory(bytes, what);
        CUDA_CHECK(cudaMalloc(&p, bytes));
        CUDA_CHECK(cudaMemset(p, 0, bytes));
    }
    return p;
}

void gpu_poison(void *device_ptr, size_t bytes) { CUDA_CHECK(cudaMemset(device_ptr, 0xFF, bytes)); }

int gpu_grid_size(size_t n, int threads_per_block, int blocks_per_sm)
{
    const size_t needed = (n + (size_t)threads_per_block - 1) / (size_t)threads_per_block;
    const size_t resident = (size_t)g.sms * (size_t)blocks_per_sm;
    return (int)(needed < resident ? (needed > 0 ? needed : 1) : resident);
}

static void flush_l2(void)
{
    launch_read_sweep(g.flush_buf, g.flush_bytes / 16, g.sink,
                      gpu_grid_size(g.flush_bytes / 16, SWEEP_THREADS, 2048 / SWEEP_THREADS), SWEEP_THREADS);
}

static int compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

gpu_timing timing_summary(double *ms, int n)
{
    qsort(ms, (size_t)n, sizeof *ms, compare_double);
    const double median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
    return (gpu_timing){.median_ms = median, .min_ms = ms[0], .max_ms = ms[n - 1]};
}

/* The warm-up goes on, `warmup` runs at a time, until it has taken WARMUP_MIN_MS of GPU time: a
 * kernel timed right after another variant's long run can be slow for its first tens of
 * milliseconds (EXPERIMENTS.md, "How to read the tables"). */
#define WARMUP_MIN_MS 100.0f

static void warm_up(gpu_work_fn work, void *ctx, int warmup)
{
    if (warmup == 0)
        return;
    cudaEvent_t start, now;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&now));
    CUDA_CHECK(cudaEventRecord(start, 0));
    float elapsed = 0.0f;
    while (elapsed < WARMUP_MIN_MS) {
        for (int i = 0; i < warmup; i++) {
            flush_l2();
            work(ctx);
        }
        CUDA_CHECK(cudaEventRecord(now, 0));
        CUDA_CHECK(cudaEventSynchronize(now));
        CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, now));
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(now));
}

const char *gpu_timing_method(int warmup, int iters)
{
    static char text[160];
    if (warmup == 0)
        snprintf(text, sizeof text, "median of %d runs, no warm-up", iters);
    else
        snprintf(text, sizeof text, "median of %d runs after a warm-up of at least %d runs and %.0f ms", iters,
                 warmup, WARMUP_MIN_MS);
    return text;
}

gpu_timing gpu_time(gpu_work_fn work, void *ctx, int warmup, int iters)
{
    warm_up(work, ctx, warmup);
    /* All runs are enqueued before any is waited for, so the GPU never idles waiting for the host
     * between an event and the work it brackets: the events time the GPU, not the launch path. */
    cudaEvent_t *start = xmalloc(sizeof(cudaEvent_t) * (size_t)iters, "timing events");
    cudaEvent_t *stop = xmalloc(sizeof(cudaEvent_t) * (size_t)iters, "timing events");
    double *ms = xmalloc(sizeof(double) * (size_t)iters, "timing results");
    for (int i = 0; i < iters; i++) {
        CUDA_CHECK(cudaEventCreate(&start[i]));
        CUDA_CHECK(cudaEventCreate(&stop[i]));
    }
    for (int i = 0; i < iters; i++) {
        flush_l2();
        CUDA_CHECK(cudaEventRecord(start[i], 0));
        work(ctx);
        CUDA_CHECK(cudaEventRecord(stop[i], 0));
    }
    CUDA_CHECK(cudaEventSynchronize(stop[iters - 1]));
    for (int i = 0; i < iters; i++) {
        float elapsed;
        CUDA_CHECK(cudaEventElapsedTime(&elapsed, start[i], stop[i]));
        ms[i] = elapsed;
        CUDA_CHECK(cudaEventDestroy(start[i]));
        CUDA_CHECK(cudaEventDestroy(stop[i]));
    }
    const gpu_timing t = timing_summary(ms, iters);
    free(start);
    free(stop);
    free(ms);
    return t;
}

/* The largest ceiling buffer: 512 MiB (less if memory is short, but never under 8x the L2), so the
 * cache cannot hold it and every byte comes from DRAM. */
static size_t ceiling_buffer_bytes(int buffers)
{
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    size_t bytes = (size_t)512 << 20;
    if (bytes * buffers > free_bytes / 2)
        bytes = free_bytes / 2 / buffers / 16 * 16;
    if (bytes < 4 * g.flush_bytes) {
        char have[32];
        format_bytes(free_bytes, have, sizeof have);
        die(1, "not enough GPU memory to measure the bandwidth ceiling: %s free", have);
    }
    return bytes;
}

typedef struct {
    void *src, *dst;
    size_t bytes;
    bool tiles; /* launch_tile_copy rather than cudaMemcpy */
} copy_job;

static void run_copy(void *ctx)
{
    const copy_job *job = ctx;
    if (job->tiles)
        launch_tile_copy(job->src, job->dst, job->bytes / 16);
    else
        CUDA_CHECK(cudaMemcpyAsync(job->dst, job->src, job->bytes, cudaMemcpyDeviceToDevice, 0));
}

/* The best of both copies at buffers of the L2's size, 4 times it and the largest (gpu.h says why). */
double gpu_copy_ceiling_gbps(void)
{
    const size_t most = ceiling_buffer_bytes(2);
    const size_t l2 = g.flush_bytes / 2;
    const size_t sizes[] = {l2 / 16 * 16, 4 * l2 / 16 * 16, most};
    void *src, *dst;
    CUDA_CHECK(cudaMalloc(&src, most));
    CUDA_CHECK(cudaMalloc(&dst, most));
    CUDA_CHECK(cudaMemset(src, 0, most));
    double best = 0.0;
    for (int s = 0; s < 3; s++)
        for (int tiles = 0; tiles < 2; tiles++) {
            copy_job job = {.src = src, .dst = dst, .bytes = sizes[s], .tiles = tiles};
            /* One warm-up for all six: the copies that follow find the GPU already busy. */
            const gpu_timing t = gpu_time(run_copy, &job, s == 0 && !tiles ? 3 : 0, 20);
            const double gbps = 2.0 * (double)job.bytes / (t.min_ms * 1e-3) / 1e9;
            if (gbps > best)
                best = gbps;
        }
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(dst));
    return best;
}

static void run_read(void *ctx)
{
    const copy_job *job = ctx;
    launch_read_sweep(job->src, job->bytes / 16, g.sink,
                      gpu_grid_size(job->bytes / 16, SWEEP_THREADS, 2048 / SWEEP_THREADS), SWEEP_THREADS);
}

double gpu_read_ceiling_gbps(void)
{
    copy_job job = {.bytes = ceiling_buffer_bytes(1)};
    CUDA_CHECK(cudaMalloc(&job.src, job.bytes));
    CUDA_CHECK(cudaMemset(job.src, 0, job.bytes));
    const gpu_timing t = gpu_time(run_read, &job, 3, 20);
    CUDA_CHECK(cudaFree(job.src));
    return (double)job.bytes / (t.min_ms * 1e-3) / 1e9;
}
