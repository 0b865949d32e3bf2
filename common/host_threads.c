#define _POSIX_C_SOURCE 200809L
#include "host_threads.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

int host_cpu_count(void)
{
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores < 1 ? 1 : cores > 1024 ? 1024 : (int)cores;
}

typedef struct {
    host_band_fn work;
    void *ctx;
    size_t begin, end;
} band;

static void *run_band(void *arg)
{
    const band *b = arg;
    b->work(b->ctx, b->begin, b->end);
    return NULL;
}

void host_parallel_for(size_t n, int threads, host_band_fn work, void *ctx)
{
    if (threads < 1)
        threads = 1;
    if ((size_t)threads > n)
        threads = n ? (int)n : 1;
    if (threads == 1) {
        work(ctx, 0, n);
        return;
    }
    band *bands = xmalloc((size_t)threads * sizeof *bands, "the host threads' bands");
    pthread_t *ids = xmalloc((size_t)threads * sizeof *ids, "the host threads");
    for (int t = 0; t < threads; t++) {
        /* Band t is [n t / threads, n (t + 1) / threads), computed without overflowing: n < 2^63. */
        bands[t] = (band){work, ctx, n / threads * t + n % threads * t / threads,
                          n / threads * (t + 1) + n % threads * (t + 1) / threads};
        const int err = t ? pthread_create(&ids[t], NULL, run_band, &bands[t]) : 0;
        if (err)
            die(1, "cannot start a host thread: %s", strerror(err));
    }
    run_band(&bands[0]); /* the calling thread takes the first band */
    for (int t = 1; t < threads; t++)
        pthread_join(ids[t], NULL);
    free(bands);
    free(ids);
}
