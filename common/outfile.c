#define _POSIX_C_SOURCE 200809L
#include "outfile.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

/* The open outputs. The signal handler reads `live` and, where it is set, `temp`: `live` is set
 * only after `temp` is written and cleared before `temp` is freed, with a fence between, so the
 * handler never reads a temporary's name that is not there. */
typedef struct {
    FILE *stream;
    char *path, *temp; /* one allocation: the path, then the temporary's name */
    volatile sig_atomic_t live;
} slot;

static slot slots[OUTFILE_MAX];

static void remove_temporaries(void)
{
    for (int i = 0; i < OUTFILE_MAX; i++)
        if (slots[i].live)
            unlink(slots[i].temp);
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
    static const int signals[] = {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM};
    struct sigaction action = {.sa_handler = on_signal, .sa_flags = SA_RESETHAND};
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction old;
        if (sigaction(signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
            sigaction(signals[i], &action, NULL);
    }
}

static slot *slot_of(FILE *out)
{
    for (int i = 0; i < OUTFILE_MAX; i++)
        if (slots[i].stream == out)
            return &slots[i];
    die(1, "outfile: a stream outfile_open did not open");
}

static void release(slot *s)
{
    s->live = 0;
    atomic_signal_fence(memory_order_seq_cst);
    free(s->path);
    *s = (slot){0};
}

FILE *outfile_open(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        errno = EISDIR;
        return NULL;
    }
    slot *s = slots;
    while (s < slots + OUTFILE_MAX && s->path)
        s++;
    if (s == slots + OUTFILE_MAX) {
        errno = EMFILE;
        return NULL;
    }
    install_cleanup();
    const size_t len = strlen(path);
    s->path = xmalloc(2 * len + sizeof ".XXXXXX" + 1, "an output file's name");
    s->temp = s->path + len + 1;
    memcpy(s->path, path, len + 1);
    memcpy(s->temp, path, len);
    memcpy(s->temp + len, ".XXXXXX", sizeof ".XXXXXX");
    const int fd = mkstemp(s->temp);
    if (fd < 0) {
        const int e = errno;
        free(s->path);
        *s = (slot){0};
        errno = e;
        return NULL;
    }
    atomic_signal_fence(memory_order_seq_cst);
    s->live = 1;
    /* mkstemp makes the file 0600; an output gets what fopen would give it, 0666 less the umask. */
    const mode_t mask = umask(0);
    umask(mask);
    s->stream = fchmod(fd, 0666 & ~mask) == 0 ? fdopen(fd, "w") : NULL;
    if (!s->stream) {
        const int e = errno;
        close(fd);
        unlink(s->temp);
        release(s);
        errno = e;
        return NULL;
    }
    return s->stream;
}

/* Flushes, closes and renames the slot's stream; on failure removes its temporary. Returns 0 or the
 * errno of what failed; the slot stays taken, for the caller's message. */
static int finish(slot *s)
{
    /* The data is on the disk before the rename makes it the file: a crash cannot leave the path
     * holding a file cut short. A write that failed earlier left the stream's error flag set. */
    errno = 0;
    int e = 0;
    if (fflush(s->stream) != 0 || ferror(s->stream) || fsync(fileno(s->stream)) != 0)
        e = errno ? errno : EIO;
    if (fclose(s->stream) != 0 && !e)
        e = errno;
    if (!e && rename(s->temp, s->path) != 0)
        e = errno;
    if (e) {
        unlink(s->temp);
        s->live = 0;
    }
    return e;
}

int outfile_commit(FILE *out)
{
    slot *s = slot_of(out);
    const int e = finish(s);
    release(s);
    errno = e;
    return e ? -1 : 0;
}

void outfile_abandon(FILE *out)
{
    slot *s = slot_of(out);
    fclose(out);
    unlink(s->temp);
    release(s);
}

FILE *outfile_open_or_exit(const char *path, const char *what)
{
    FILE *out = outfile_open(path);
    if (!out) {
        const int e = errno;
        die(errno_is_machines_fault(e) ? 1 : EXIT_USAGE, "cannot write %s '%s': %s", what, path, strerror(e));
    }
    return out;
}

void outfile_commit_or_exit(FILE *out, const char *what)
{
    slot *s = slot_of(out);
    const int e = finish(s);
    if (e)
        die(1, "writing %s '%s' failed: %s", what, s->path, strerror(e));
    release(s);
}
