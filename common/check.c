#include "check.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static quoted prog = {"run"};

void set_program_name(const char *argv0)
{
    const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
    prog = quote_arg(slash ? slash + 1 : (argv0 ? argv0 : "run"));
}

const char *program_name(void) { return prog.text; }

void die(int code, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog.text);
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

bool errno_is_machines_fault(int e)
{
    return e == ENOMEM || e == EMFILE || e == ENFILE || e == ENOSPC || e == EDQUOT || e == EIO;
}

void *xmalloc(size_t bytes, const char *what)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        char size[32];
        format_bytes(bytes, size, sizeof size);
        die(1, "out of host memory: %s for %s", size, what);
    }
    return p;
}

bool size_mul(size_t a, size_t b, size_t *product)
{
    if (b != 0 && a > SIZE_MAX / b)
        return false;
    *product = a * b;
    return true;
}

void format_bytes(size_t bytes, char *buf, size_t len)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, len, "%zu bytes", bytes);
        return;
    }
    double v = (double)bytes / 1024;
    int u = 0;
    while (v >= 1024 && u < 5)
        v /= 1024, u++;
    snprintf(buf, len, "%.1f %s", v, units[u]);
}

quoted quote_bytes(const void *s, size_t n, size_t most)
{
    const unsigned char *bytes = s;
    quoted q;
    size_t len = 0;
    for (size_t i = 0; i < n && i < most; i++) {
        if (bytes[i] == '\\')
            len += (size_t)sprintf(q.text + len, "\\\\");
        else if (bytes[i] < ' ' || bytes[i] > '~')
            len += (size_t)sprintf(q.text + len, "\\x%02x", bytes[i]);
        else
            q.text[len++] = (char)bytes[i];
    }
    strcpy(q.text + len, n > most ? "..." : "");
    return q;
}

quoted quote_arg(const char *s) { return quote_bytes(s, strlen(s), QUOTE_MAX_BYTES); }
