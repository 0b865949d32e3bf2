#include "check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prog = "run";

void set_program_name(const char *argv0)
{
    const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
    prog = slash ? slash + 1 : (argv0 ? argv0 : "run");
}

const char *program_name(void) { return prog; }

void die(int code, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(code);
}

void cuda_check(cudaError_t err, const char *what, const char *file, int line)
{
    if (err == cudaSuccess)
        return;
    die(1, "%s:%d: CUDA error in %s: %s (%s)", file, line, what, cudaGetErrorString(err),
        cudaGetErrorName(err));
}

void *xmalloc(size_t bytes, const char *what)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        die(1, "out of host memory: %zu MiB for %s", bytes >> 20, what);
    return p;
}
