/* Error handling shared by every stage.
 *
 * Two kinds of failure end a program here:
 *  - a CUDA call or launch that fails: CUDA_CHECK / CUDA_CHECK_LAUNCH print file:line, the call and
 *    CUDA's own error string, then exit 1;
 *  - bad input from the user or the machine (unknown flag, no GPU, too little memory): die() prints
 *    one line and exits with the code it is given (2 for usage errors, 1 for everything else).
 */
#ifndef COMMON_CHECK_H
#define COMMON_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EXIT_USAGE 2

/* Every CUDA runtime call goes through this. */
#define CUDA_CHECK(call) cuda_check((call), #call, __FILE__, __LINE__)

/* After every kernel launch: catches bad launch configurations at once. Faults inside the kernel
 * surface at the next checked call that waits for the GPU (a copy, an event synchronize). */
#define CUDA_CHECK_LAUNCH(kernel_name) cuda_check(cudaGetLastError(), "launch of " kernel_name, __FILE__, __LINE__)

void cuda_check(cudaError_t err, const char *what, const char *file, int line);

/* Name used as the prefix of every message ("run: ..."); set once from argv[0], escaped as
 * quote_arg() escapes it so that a message stays one line. */
void set_program_name(const char *argv0);
const char *program_name(void);

/* One line "<program>: <message>" on stderr, then exit(code). */
void die(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* Whether a failed system call's errno is the machine's fault, so that the program exits 1 rather
 * than 2: it ran out of memory, file descriptors, disk space or quota (ENOMEM, EMFILE, ENFILE,
 * ENOSPC, EDQUOT), or a device failed (EIO). Every other errno of a file operation is about the
 * path the user gave, the user's to fix: it is missing (ENOENT, ENOTDIR), not allowed (EACCES,
 * EPERM, EROFS: a read-only file system is the user's choice of path), too long (ENAMETOOLONG),
 * a loop of links (ELOOP), a directory (EISDIR). */
bool errno_is_machines_fault(int e);

/* malloc that dies with a clear message instead of returning NULL. */
void *xmalloc(size_t bytes, const char *what);

/* a x b in *product, or false when it does not fit a size_t: how every size computed from a shape
 * is checked before anything is allocated. */
bool size_mul(size_t a, size_t b, size_t *product);

/* A byte count for a message, as it is: "512 bytes", "1.5 KiB", ..., "16.0 EiB". */
void format_bytes(size_t bytes, char *buf, size_t len);

/* The most bytes a message quotes of one string. */
#define QUOTE_MAX_BYTES 256

/* Bytes from outside the program (a flag's value, a file's name, a file's own bytes) as printable
 * ASCII, so that a message quoting them stays one line whatever they hold: a byte outside ' '..'~'
 * becomes \xNN, a backslash \\, and "..." marks bytes left out. Returned by value: its text lives
 * until the end of the caller's statement. */
typedef struct {
    char text[4 * QUOTE_MAX_BYTES + 4];
} quoted;

/* The first `most` (at most QUOTE_MAX_BYTES) of the n bytes at s. */
quoted quote_bytes(const void *s, size_t n, size_t most);

/* A string the user gave: a flag's value, a file's name, an argument of the command line. */
quoted quote_arg(const char *s);

#ifdef __cplusplus
}
#endif
#endif
