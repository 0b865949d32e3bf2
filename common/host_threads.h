/* Work on the host split over every CPU core: the fp64 reference and the random logits of a large
 * case (8192 rows of 128256) take seconds on one core and a fraction of one on sixteen.
 *
 * The work is a range [0, n) of independent items (rows, elements): each thread takes one
 * contiguous band and nothing is shared, so the answer does not depend on the number of threads. */
#ifndef COMMON_HOST_THREADS_H
#define COMMON_HOST_THREADS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Items [begin, end) of the range, on one thread. */
typedef void (*host_band_fn)(void *ctx, size_t begin, size_t end);

/* The CPU cores online (at least 1). */
int host_cpu_count(void);

/* work() over [0, n) in at most `threads` contiguous bands of equal size (fewer when n is smaller),
 * each on its own thread; returns when every band is done. threads = 1: on the calling thread. Dies
 * with one line if a thread cannot be started. */
void host_parallel_for(size_t n, int threads, host_band_fn work, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
