/* Output files that appear whole or not at all. An output is written to a temporary file beside
 * its file, "FILE.XXXXXX" in the same directory (so on the same file system; ".outfile-XXXXXX" where
 * FILE's name is too long to take six more characters), and renamed over the
 * file only when it is complete and flushed to the disk: a run that fails, dies or is interrupted
 * leaves the file as it was. The temporaries not yet renamed are removed when the program exits
 * (die() included) and when a signal sent to it ends it (any whose default action ends a program,
 * but SIGKILL, which cannot be caught, and the faults of a bug: SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGTRAP, SIGSYS), on whichever thread the signal lands (CUDA starts threads of its own).
 *
 * The file is the one the path names once symbolic links are followed: a link stays as it is and
 * the file it points to is replaced. A file that is there keeps its permission bits (the new one
 * belongs to whoever runs the program); a new file gets those fopen(path, "w") would give it, 0666
 * less the umask. A path that names something other than a regular file (a directory, a device
 * such as /dev/stdout, a pipe, a link to nothing) is refused, since the rename would replace it
 * rather than write to it.
 *
 * Creating the temporary is also the check that the path can be written at all, so a program opens
 * its outputs before the long work, and finds a missing directory at once; so is the check that the
 * rename may replace the file there (not one this user may not write, nor another user's in a
 * sticky directory such as /tmp, nor a file or directory made append-only or immutable with chattr,
 * where the file system keeps those attributes). A program opens at most
 * OUTFILE_MAX outputs in its life, all from one thread. */
#ifndef COMMON_OUTFILE_H
#define COMMON_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most files a program has open at once (--csv and a stage's own outputs): the size of the
 * table of names the signal handler reads (outfile.c). */
#define OUTFILE_MAX 6

/* A stream to the temporary of `path`; or NULL with errno set when it cannot be made: EISDIR when
 * the path names a directory, EINVAL when it names something else that is not a regular file,
 * EACCES when a file is there that this user may not write, EPERM when it is another user's in a
 * sticky directory or when the file or its directory is append-only or immutable (FS_IOC_GETFLAGS;
 * not refused where the file system has no such attributes), else the errno of the call that
 * failed (ENOENT, EACCES, ENAMETOOLONG, ...). Nothing is left behind. An output past the program's
 * OUTFILE_MAX is a bug: one line, exit 1. */
FILE *outfile_open(const char *path);

/* Puts n outputs in place together: flushes each stream and fsyncs its temporary, and only when all
 * n are complete on the disk renames each over its file, one after the other in the order they were
 * opened. Each file is replaced atomically; the set is not: a signal ends the program before the
 * first rename or after the last, but a crash between two leaves the files renamed before it new
 * and the others as they were. 0, or -1 with errno set: after a failed write, flush or fsync every
 * temporary is removed and every file left as it was; after a failed rename (the file became a
 * directory meanwhile) the files renamed before it are new and the others as they were. The streams
 * are gone either way. */
int outfile_commit(FILE *const *outs, int n);

/* Closes the stream and removes its temporary: its file stays as it was. */
void outfile_abandon(FILE *out);

/* Whether paths a and b name the same file: one device and inode where both exist, else the same
 * place once links are followed (the same text where that cannot be told). A program refuses an
 * output that would replace its own input or another of its outputs. */
bool outfile_same_file(const char *a, const char *b);

/* What a program calls: outfile_open, or one line "cannot write <what> '<path>': <reason>" and exit 1
 * when the machine failed (errno_is_machines_fault: a full disk, too many open files), else exit 2:
 * the path is the user's to fix (a missing directory, no permission, not a regular file, a file or
 * directory append-only or immutable, which the reason names, or the file the program's standard
 * output or error goes to, which the rename would take from under it). */
FILE *outfile_open_or_exit(const char *path, const char *what);

/* outfile_commit, or one line "writing <what> '<path>' failed: <reason>" naming the output that
 * failed, and exit 1. */
void outfile_commit_or_exit(FILE *const *outs, int n, const char *what);

#ifdef __cplusplus
}
#endif
#endif
