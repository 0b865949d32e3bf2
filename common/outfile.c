#define _XOPEN_SOURCE 700 /* realpath */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h> /* FS_IOC_GETFLAGS, FS_APPEND_FL, FS_IMMUTABLE_FL */
#ifndef NAME_MAX
#define NAME_MAX 255 /* the longest name of a file, where limits.h leaves it to pathconf */
#endif
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

/* The outputs, in a table that the signal handler reads while the program may go on: a signal sent
 * to the process lands on any thread that does not block it, CUDA's included. An entry moves only
 * forward, FREE -> BUSY -> LIVE -> (BUSY ->) DONE, except that a BUSY entry whose temporary could
 * not be made goes back to FREE. What makes the handler safe on any thread:
 *  - the names live in the table and are never freed, and an entry's names are written only while
 *    it is BUSY on its way to LIVE: the handler, which reads a temporary's name only in a LIVE
 *    entry, never reads one that is changing;
 *  - an entry is BUSY only inside outfile_open and outfile_commit, with the handled signals blocked
 *    on this thread, so the handler never runs in the middle of it here; on another thread it
 *    waits until the entry is no longer BUSY;
 *  - the handler sets `ending` before it reads the table, and outfile_open reads `ending` after it
 *    marks its entry BUSY (both sequentially consistent): either the handler sees the entry BUSY
 *    and waits for its temporary to be made, or outfile_open sees `ending` and makes none.
 * So every temporary that exists when the handler ends the program was LIVE when the handler looked,
 * and the handler removed it. The handler reads the states and `ending` through lock-free atomics,
 * which a signal handler may use, and a LIVE entry's name, which nothing writes any more. */
enum { FREE, BUSY, LIVE, DONE };
_Static_assert(ATOMIC_INT_LOCK_FREE == 2 && ATOMIC_BOOL_LOCK_FREE == 2, "the signal handler needs lock-free atomics");

typedef struct {
    _Atomic int state;
    FILE *stream;
    char path[PATH_MAX];                    /* as the caller gave it, for messages */
    char target[PATH_MAX];                  /* the file it names, links followed: what the rename replaces */
    char temp[PATH_MAX + sizeof ".XXXXXX"]; /* temp_name's */
} entry;

static entry entries[OUTFILE_MAX];
static _Atomic bool ending;

/* Every signal that ends a program by default and is sent to it (the real-time ones too, which
 * install_cleanup adds: SIGRTMIN is not a constant); not SIGKILL, which cannot be caught, nor the
 * faults a bug raises on the faulting thread (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS):
 * those cannot be blocked while an entry is BUSY, and a handler that waited for that entry on the
 * thread that holds it would wait for ever. */
static const int handled[] = {SIGHUP,  SIGINT,    SIGQUIT, SIGABRT, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM,
                              SIGTERM, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGPOLL,
#ifdef SIGPWR
                              SIGPWR,
#endif
#ifdef SIGSTKFLT
                              SIGSTKFLT,
#endif
};
static sigset_t handled_set;

/* The signal handler's work, and the cleanup at exit, which runs on the thread that uses the table
 * and so never finds an entry BUSY. */
static void remove_temporaries(void)
{
    atomic_store(&ending, true);
    for (int i = 0; i < OUTFILE_MAX; i++) {
        int state;
        while ((state = atomic_load(&entries[i].state)) == BUSY)
            ;
        if (state == LIVE)
            unlink(entries[i].temp);
    }
}

/* SA_RESETHAND has put the default action back, so the signal raised again ends the program as it
 * would have without this handler (and its exit status says so). unlink and raise are
 * async-signal-safe. */
static void on_signal(int sig)
{
    remove_temporaries();
    raise(sig);
}

/* Once: the cleanup at exit, and on the signals that end a program by default; a signal the program
 * ignores (nohup's SIGHUP) or handles itself is left as it is. */
static void install_cleanup(void)
{
    static bool installed;
    if (installed)
        return;
    installed = true;
    atexit(remove_temporaries);
    struct sigaction action = {.sa_handler = on_signal, .sa_flags = SA_RESETHAND};
    sigemptyset(&action.sa_mask);
    sigemptyset(&handled_set);
    const int n_listed = (int)(sizeof handled / sizeof handled[0]), n_realtime = SIGRTMAX - SIGRTMIN + 1;
    for (int i = 0; i < n_listed + n_realtime; i++) {
        const int sig = i < n_listed ? handled[i] : SIGRTMIN + (i - n_listed);
        sigaddset(&handled_set, sig);
        struct sigaction old;
        if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
            sigaction(sig, &action, NULL);
    }
}

/* Into dir (PATH_MAX bytes): the directory part of path, up to `slash`, its last '/' ("/" for a
 * file at the root). path is shorter than PATH_MAX. */
static void directory_of(const char *path, const char *slash, char *dir)
{
    const size_t len = slash == path ? 1 : (size_t)(slash - path);
    memcpy(dir, path, len);
    dir[len] = '\0';
}

/* The file `path` names once symbolic links are followed, into target (PATH_MAX bytes), and the
 * permission bits its replacement gets: an existing regular file's own, or 0666 less the umask for
 * a new one. 0, or -1 with errno set: EISDIR for a directory, EINVAL for anything else there that
 * is not a regular file. */
static int resolve(const char *path, char *target, mode_t *mode)
{
    if (strlen(path) >= PATH_MAX) {
        errno = ENAMETOOLONG;
        return -1;
    }
    struct stat st;
    if (stat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode)) {
            errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
            return -1;
        }
        *mode = st.st_mode & 0777;
        return realpath(path, target) ? 0 : -1;
    }
    if (errno != ENOENT)
        return -1;
    if (lstat(path, &st) == 0) { /* a link to nothing */
        errno = EINVAL;
        return -1;
    }
    /* A new file: the real path of its directory, then its name. */
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    char dir[PATH_MAX] = ".";
    if (slash)
        directory_of(path, slash, dir);
    if (!realpath(dir, target))
        return -1;
    const size_t len = strlen(target);
    if (snprintf(target + len, PATH_MAX - len, "%s%s", len > 1 ? "/" : "", name) >= (int)(PATH_MAX - len)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    /* The umask is read by setting it and back, which is safe while no other thread makes files: the
     * programs open their outputs before CUDA starts its threads. */
    const mode_t mask = umask(0);
    umask(mask);
    *mode = 0666 & ~mask;
    return 0;
}

/* The temporary of target (an absolute path): target with ".XXXXXX" after it, or, where that name
 * would be longer than a file's name may be, ".outfile-XXXXXX" in the same directory. */
static void temp_name(char *temp, size_t len, const char *target)
{
    const char *slash = strrchr(target, '/');
    if (strlen(slash + 1) + strlen(".XXXXXX") <= NAME_MAX)
        snprintf(temp, len, "%s.XXXXXX", target);
    else
        snprintf(temp, len, "%.*s/.outfile-XXXXXX", (int)(slash - target), target);
}

/* 0 where the rename at the end may replace what target (an absolute path) names, or -1 with errno
 * set, found now rather than after the run: a file there that this user may not write (EACCES; a
 * read-only file is kept, as a shell's ">" would keep it), or one of another user's in a directory
 * with the sticky bit (/tmp's), which only its owner, the directory's or root may replace (EPERM). */
static int may_replace(const char *target)
{
    struct stat st, parent;
    if (stat(target, &st) != 0)
        return 0; /* a new file */
    if (faccessat(AT_FDCWD, target, W_OK, AT_EACCESS) != 0)
        return -1;
    char dir[PATH_MAX];
    directory_of(target, strrchr(target, '/'), dir);
    const uid_t me = geteuid();
    if (stat(dir, &parent) == 0 && (parent.st_mode & S_ISVTX) && me != 0 && st.st_uid != me && parent.st_uid != me) {
        errno = EPERM;
        return -1;
    }
    return 0;
}

/* The attribute flags of path (FS_IOC_GETFLAGS), or 0 where they cannot be read: a file system
 * without them (ENOTTY, EOPNOTSUPP, EINVAL), no file there yet, or one this user may not open. */
static int attributes(const char *path, int open_flags)
{
    /* O_NONBLOCK: should a pipe have taken the file's place, the open does not wait for a writer. */
    const int fd = open(path, open_flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int flags;
    if (ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0)
        flags = 0;
    close(fd);
    return flags;
}

/* Why the rename at the end could not put target (an absolute path) in place, as the attributes
 * (chattr) of the file and of its directory tell, with errno EPERM; NULL where they allow it. An
 * append-only or immutable file cannot be replaced; in an append-only directory a temporary can be
 * made but neither renamed nor removed, so it would be left there; in an immutable one none can be
 * made. */
static const char *attribute_refusal(const char *target)
{
    char dir[PATH_MAX];
    directory_of(target, strrchr(target, '/'), dir);
    const int file = attributes(target, O_RDONLY), in_dir = attributes(dir, O_RDONLY | O_DIRECTORY);
    const char *why = NULL;
    if (file & FS_IMMUTABLE_FL)
        why = "it is immutable (chattr +i): the finished file cannot replace it";
    else if (file & FS_APPEND_FL)
        why = "it is append-only (chattr +a): the finished file cannot replace it";
    else if (in_dir & FS_IMMUTABLE_FL)
        why = "its directory is immutable (chattr +i): no file can be made there";
    else if (in_dir & FS_APPEND_FL)
        why = "its directory is append-only (chattr +a): the finished file cannot be renamed into place";
    if (why)
        errno = EPERM;
    return why;
}

/* outfile_open, with *why the reason for a refusal that errno alone does not tell (else NULL). */
static FILE *open_output(const char *path, const char **why)
{
    char target[PATH_MAX];
    mode_t mode;
    *why = NULL;
    if (resolve(path, target, &mode) != 0 || (*why = attribute_refusal(target)) != NULL || may_replace(target) != 0)
        return NULL;
    entry *e = entries;
    while (e < entries + OUTFILE_MAX && atomic_load(&e->state) != FREE)
        e++;
    if (e == entries + OUTFILE_MAX)
        die(1, "outfile: a program opens at most %d outputs", OUTFILE_MAX);
    install_cleanup();

    sigset_t old_mask;
    pthread_sigmask(SIG_BLOCK, &handled_set, &old_mask);
    atomic_store(&e->state, BUSY);
    if (atomic_load(&ending)) {
        /* A handler on another thread is removing the temporaries and will end the program. */
        atomic_store(&e->state, FREE);
        for (;;)
            pause();
    }
    strcpy(e->path, path);
    strcpy(e->target, target);
    temp_name(e->temp, sizeof e->temp, target);
    const int fd = mkstemp(e->temp);
    const int made_errno = errno;
    atomic_store(&e->state, fd < 0 ? FREE : LIVE);
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    if (fd < 0) {
        errno = made_errno;
        return NULL;
    }

    /* mkstemp makes the file 0600. */
    e->stream = fchmod(fd, mode) == 0 ? fdopen(fd, "w") : NULL;
    if (!e->stream) {
        const int failed_errno = errno;
        close(fd);
        unlink(e->temp);
        atomic_store(&e->state, DONE);
        errno = failed_errno;
        return NULL;
    }
    return e->stream;
}

FILE *outfile_open(const char *path)
{
    const char *why;
    return open_output(path, &why);
}

static entry *entry_of(FILE *out)
{
    for (int i = 0; i < OUTFILE_MAX; i++)
        if (atomic_load(&entries[i].state) == LIVE && entries[i].stream == out)
            return &entries[i];
    die(1, "outfile: a stream outfile_open did not open, or one already committed or abandoned");
}

/* Flushes the stream, fsyncs its file and closes it: 0, or the errno of what failed. A write that
 * failed earlier left the stream's error flag set. */
static int finish_writing(FILE *stream)
{
    errno = 0;
    int e = 0;
    if (fflush(stream) != 0 || ferror(stream) || fsync(fileno(stream)) != 0)
        e = errno ? errno : EIO;
    if (fclose(stream) != 0 && !e)
        e = errno;
    return e;
}

/* outfile_commit: 0, or the errno of what failed with *failed its entry. The set is taken in table
 * order, the order the outputs were opened. All of its entries are marked BUSY before the first
 * rename, and the renames stop at the first that fails; the handler reads the table in the same
 * order and waits at a BUSY entry. So it can have found LIVE, and removed the temporary of, only
 * the set's first few entries, and all of those but the last it found were gone before the first
 * rename: either the first rename fails and none is made, or the handler waits for all of them. */
static int commit(FILE *const *outs, int n, entry **failed)
{
    bool in_set[OUTFILE_MAX] = {false};
    for (int i = 0; i < n; i++)
        in_set[entry_of(outs[i]) - entries] = true;

    int e = 0;
    for (int i = 0; i < OUTFILE_MAX; i++) {
        const int finished = in_set[i] ? finish_writing(entries[i].stream) : 0;
        if (finished && !e) {
            e = finished;
            *failed = &entries[i];
        }
    }
    if (e) {
        for (int i = 0; i < OUTFILE_MAX; i++)
            if (in_set[i]) {
                unlink(entries[i].temp);
                atomic_store(&entries[i].state, DONE);
            }
        return e;
    }

    sigset_t old_mask;
    pthread_sigmask(SIG_BLOCK, &handled_set, &old_mask);
    for (int i = 0; i < OUTFILE_MAX; i++)
        if (in_set[i])
            atomic_store(&entries[i].state, BUSY);
    for (int i = 0; i < OUTFILE_MAX; i++)
        if (in_set[i]) {
            if (!e && rename(entries[i].temp, entries[i].target) != 0) {
                e = errno;
                *failed = &entries[i];
            }
            if (e)
                unlink(entries[i].temp);
            atomic_store(&entries[i].state, DONE);
        }
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    return e;
}

int outfile_commit(FILE *const *outs, int n)
{
    entry *failed;
    const int e = commit(outs, n, &failed);
    errno = e;
    return e ? -1 : 0;
}

void outfile_abandon(FILE *out)
{
    entry *e = entry_of(out);
    fclose(out);
    unlink(e->temp);
    atomic_store(&e->state, DONE);
}

static bool same_inode(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Whether path names the file that descriptor fd writes to. */
static bool is_open_as(const char *path, int fd)
{
    struct stat sp, sf;
    return stat(path, &sp) == 0 && fstat(fd, &sf) == 0 && same_inode(&sp, &sf);
}

FILE *outfile_open_or_exit(const char *path, const char *what)
{
    if (is_open_as(path, STDOUT_FILENO) || is_open_as(path, STDERR_FILENO))
        die(EXIT_USAGE, "cannot write %s '%s': it is the file this program's output goes to", what,
            quote_arg(path).text);
    const char *why;
    FILE *out = open_output(path, &why);
    if (!out) {
        const int e = errno;
        die(errno_is_machines_fault(e) ? 1 : EXIT_USAGE, "cannot write %s '%s': %s", what, quote_arg(path).text,
            why ? why : e == EINVAL ? "not a regular file" : strerror(e));
    }
    return out;
}

void outfile_commit_or_exit(FILE *const *outs, int n, const char *what)
{
    entry *failed;
    const int e = commit(outs, n, &failed);
    if (e)
        die(1, "writing %s '%s' failed: %s", what, quote_arg(failed->path).text, strerror(e));
}

bool outfile_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return same_inode(&sa, &sb);
    char ta[PATH_MAX], tb[PATH_MAX]; /* a new file: where it would be, links followed */
    mode_t mode;
    if (resolve(a, ta, &mode) == 0 && resolve(b, tb, &mode) == 0)
        return strcmp(ta, tb) == 0;
    return strcmp(a, b) == 0;
}
