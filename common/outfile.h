/* Output files that appear whole or not at all. An output is written to a temporary file beside it,
 * "PATH.XXXXXX" in the same directory (so on the same file system), and renamed over PATH only when
 * it is complete and flushed to the disk: a run that fails, dies or is interrupted leaves PATH as it
 * was. The temporaries not yet renamed are removed when the program exits (die() included) and when
 * SIGHUP, SIGINT, SIGQUIT, SIGPIPE or SIGTERM ends it.
 *
 * Creating the temporary is also the check that PATH can be written at all, so a program opens its
 * outputs before the long work, and finds a missing directory at once. */
#ifndef COMMON_OUTFILE_H
#define COMMON_OUTFILE_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most outputs open at once. */
#define OUTFILE_MAX 8

/* A stream to the temporary of `path`, which gets the permissions fopen(path, "w") would give it; or
 * NULL with errno set when it cannot be made (ENOENT, EACCES, ...: the user's to fix; EISDIR when
 * path is a directory; EMFILE past OUTFILE_MAX). */
FILE *outfile_open(const char *path);

/* Flushes and closes the stream and renames its temporary over its path. 0, or -1 with errno set
 * when a write, the flush or the rename failed: the temporary is then removed and the path left as
 * it was. The stream is gone either way. */
int outfile_commit(FILE *out);

/* Closes the stream and removes its temporary: the path stays as it was. */
void outfile_abandon(FILE *out);

/* What a program calls: outfile_open, or one line "cannot write <what> '<path>': <reason>" and exit 1
 * when the machine failed (errno_is_machines_fault: a full disk, too many open files), else exit 2:
 * the path is the user's to fix (a missing directory, no permission, a directory). */
FILE *outfile_open_or_exit(const char *path, const char *what);

/* outfile_commit, or one line "writing <what> '<path>' failed: <reason>" and exit 1. */
void outfile_commit_or_exit(FILE *out, const char *what);

#ifdef __cplusplus
}
#endif
#endif
