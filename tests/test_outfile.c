/* Outputs that appear whole or not at all (common/outfile.h): a commit replaces the file (the one a
 * link points to, with the old file's permissions), and an abandon, a failed commit, an exit without
 * a commit or a signal leave the old file as it was and no temporary beside it; a path that is not a
 * regular file is refused, and so is one the rename could not replace (chattr +a or +i on the file
 * or its directory). Each test works in a directory of its own, and runs in a process of its
 * own, as Criterion runs every test: a process opens at most OUTFILE_MAX outputs. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/check.h"
#include "../common/outfile.h"
#include "file_attributes.h"

static char dir[64], path[96], path2[96];

/* A fresh directory holding out.csv with `old` in it. */
static void setup_old_file(const char *old)
{
    snprintf(dir, sizeof dir, "/tmp/outfile-test-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/out.csv", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(old, f);
    fclose(f);
}

static void expect_contents(const char *want)
{
    char got[256] = "";
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s is gone", path);
    got[fread(got, 1, sizeof got - 1, f)] = '\0';
    fclose(f);
    cr_expect_str_eq(got, want);
}

/* How many files the directory holds besides out.csv: its temporaries. */
static int temporaries(void)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    for (const struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "out.csv");
    closedir(d);
    return n;
}

static void remove_dir(void)
{
    remove(path);
    rmdir(dir);
}

Test(outfile, commit_replaces_the_file_and_leaves_no_temporary)
{
    setup_old_file("old\n");
    FILE *out = outfile_open(path);
    cr_assert_not_null(out, "%s", strerror(errno));
    cr_expect_eq(temporaries(), 1, "the temporary is made at once, beside the file");
    fputs("new\n", out);
    expect_contents("old\n");
    cr_assert_eq(outfile_commit(&out, 1), 0, "%s", strerror(errno));
    expect_contents("new\n");
    cr_expect_eq(temporaries(), 0);

    /* The permissions fopen(path, "w") would give a new file, not mkstemp's 0600. */
    const mode_t mask = umask(0);
    umask(mask);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0666 & ~mask, "mode %o", (unsigned)(st.st_mode & 0777));
    remove_dir();
}

/* The file that is there keeps its permissions: a private CSV stays private. */
Test(outfile, commit_keeps_the_files_permissions)
{
    setup_old_file("old\n");
    cr_assert_eq(chmod(path, 0600), 0);
    FILE *out = outfile_open(path);
    cr_assert_not_null(out, "%s", strerror(errno));
    fputs("new\n", out);
    cr_assert_eq(outfile_commit(&out, 1), 0, "%s", strerror(errno));
    expect_contents("new\n");
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0600, "mode %o", (unsigned)(st.st_mode & 0777));
    remove_dir();
}

/* A link stays a link: the file it points to is replaced, and the temporary is made beside that
 * file. */
Test(outfile, commit_through_a_link_replaces_the_file_it_points_to)
{
    setup_old_file("old\n");
    char sub[80], link[96];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(link, sizeof link, "%s/link.csv", sub);
    cr_assert_eq(mkdir(sub, 0700), 0);
    cr_assert_eq(symlink("../out.csv", link), 0);
    FILE *out = outfile_open(link);
    cr_assert_not_null(out, "%s", strerror(errno));
    cr_expect_eq(temporaries(), 2, "the subdirectory and the temporary beside out.csv");
    fputs("new\n", out);
    cr_assert_eq(outfile_commit(&out, 1), 0, "%s", strerror(errno));
    expect_contents("new\n");
    struct stat st;
    cr_assert_eq(lstat(link, &st), 0);
    cr_expect(S_ISLNK(st.st_mode), "the link was replaced");
    cr_expect_eq(temporaries(), 1, "only the subdirectory is left");
    remove(link);
    rmdir(sub);
    remove_dir();
}

Test(outfile, abandon_leaves_the_old_file_and_no_temporary)
{
    setup_old_file("old\n");
    FILE *out = outfile_open(path);
    cr_assert_not_null(out);
    fputs("half of it", out);
    outfile_abandon(out);
    expect_contents("old\n");
    cr_expect_eq(temporaries(), 0);
    remove_dir();
}

Test(outfile, a_path_that_cannot_be_written_is_found_at_open)
{
    cr_expect_null(outfile_open("/nonexistent-dir/out.csv"));
    cr_expect_eq(errno, ENOENT);
}

/* out.csv holding "old", its directory and it given these modes, and an open of it in a child
 * process, as a user other than root (nobody's uid and gid, 65534) where the test runs as root, who
 * may write any file: the open must fail with `want`, and leave the file as it was and no temporary. */
static void expect_refused_as_a_plain_user(mode_t dir_mode, mode_t file_mode, int want)
{
    setup_old_file("old\n");
    cr_assert_eq(chmod(dir, dir_mode), 0);
    cr_assert_eq(chmod(path, file_mode), 0);
    fflush(NULL);
    const pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(97);
        errno = 0;
        FILE *out = outfile_open(path);
        if (out || errno != want) {
            fprintf(stderr, "outfile_open: %s, errno %d (want %d)\n", out ? "opened" : "refused", errno, want);
            _exit(1);
        }
        _exit(0);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's status %#x", status);
    expect_contents("old\n");
    cr_expect_eq(temporaries(), 0);
    remove_dir();
}

/* A read-only file is kept, as a shell's ">" would keep it: refused at open, not replaced by the
 * rename (which needs only the directory's permission). */
Test(outfile, a_file_this_user_may_not_write_is_refused_at_open)
{
    expect_refused_as_a_plain_user(0777, 0444, EACCES);
}

/* In a directory with the sticky bit (as /tmp), only a file's owner, the directory's or root may
 * rename over it: another user's file, writable or not, is refused at open, not at the commit after
 * the run. */
Test(outfile, another_users_file_in_a_sticky_directory_is_refused_at_open)
{
    if (geteuid() != 0)
        cr_skip_test("needs root, to make a file of another user than the one who runs the check");
    expect_refused_as_a_plain_user(01777, 0666, EPERM);
}

/* Renaming over a directory, a device, a pipe or a link to nothing would replace it: each is
 * refused at open, and a pipe without waiting for a reader. */
Test(outfile, a_path_that_is_not_a_regular_file_is_refused)
{
    setup_old_file("");
    cr_expect_null(outfile_open(dir));
    cr_expect_eq(errno, EISDIR);
    cr_expect_null(outfile_open("/dev/null"));
    cr_expect_eq(errno, EINVAL);
    snprintf(path2, sizeof path2, "%s/fifo", dir);
    cr_assert_eq(mkfifo(path2, 0600), 0);
    cr_expect_null(outfile_open(path2));
    cr_expect_eq(errno, EINVAL);
    remove(path2);
    cr_assert_eq(symlink("nothing-here", path2), 0);
    cr_expect_null(outfile_open(path2));
    cr_expect_eq(errno, EINVAL);
    remove(path2);
    cr_expect_eq(temporaries(), 0);
    remove_dir();
}

Test(outfile, open_or_exit_refuses_a_device_with_exit_2, .exit_code = 2, .init = cr_redirect_stderr)
{
    outfile_open_or_exit("/dev/null", "CSV file");
}

/* The path made a directory after the open: the rename fails, the commit says so, and removes the
 * temporary. */
Test(outfile, a_failed_commit_removes_the_temporary)
{
    setup_old_file("old\n");
    FILE *out = outfile_open(path);
    cr_assert_not_null(out);
    fputs("new\n", out);
    remove(path);
    cr_assert_eq(mkdir(path, 0700), 0);
    cr_expect_eq(outfile_commit(&out, 1), -1);
    cr_expect_eq(errno, EISDIR);
    cr_expect_eq(temporaries(), 0);
    rmdir(path);
    rmdir(dir);
}

/* Two outputs committed together, the second of which cannot be flushed (its descriptor closed
 * under it): neither file is replaced, and neither temporary is left. */
Test(outfile, a_set_whose_second_output_fails_leaves_both_files)
{
    setup_old_file("old\n");
    snprintf(path2, sizeof path2, "%s/out2.csv", dir);
    FILE *out[2] = {outfile_open(path), outfile_open(path2)};
    cr_assert(out[0] && out[1], "%s", strerror(errno));
    fputs("new\n", out[0]);
    fputs("new\n", out[1]);
    close(fileno(out[1]));
    cr_expect_eq(outfile_commit(out, 2), -1);
    cr_expect_eq(errno, EBADF);
    expect_contents("old\n");
    cr_expect_eq(access(path2, F_OK), -1, "out2.csv was made");
    cr_expect_eq(temporaries(), 0);
    remove_dir();
}

/* Two outputs committed together, passed in another order than they were opened: both replaced. */
Test(outfile, a_set_is_committed_whole)
{
    setup_old_file("old\n");
    snprintf(path2, sizeof path2, "%s/out2.csv", dir);
    FILE *out[2] = {outfile_open_or_exit(path2, "CSV file"), outfile_open_or_exit(path, "CSV file")};
    fputs("new\n", out[0]);
    fputs("new\n", out[1]);
    outfile_commit_or_exit(out, 2, "CSV file");
    expect_contents("new\n");
    struct stat st;
    cr_expect(stat(path2, &st) == 0 && st.st_size == 4, "out2.csv was not written");
    remove(path2);
    cr_expect_eq(temporaries(), 0);
    remove_dir();
}

/* A child opens the output, writes part of it and then ends as `how` says; the parent finds the old
 * file as it was and no temporary. Returns the child's wait status. */
static int end_child(void (*how)(void))
{
    setup_old_file("old\n");
    fflush(NULL);
    const pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        /* A program of its own: the signals as a fresh process has them. */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGRTMIN, SIG_DFL);
        FILE *out = outfile_open(path);
        if (!out)
            _exit(99);
        fputs("half of it", out);
        fflush(out);
        how();
        _exit(98);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    expect_contents("old\n");
    cr_expect_eq(temporaries(), 0);
    remove_dir();
    return status;
}

static void by_exit(void) { exit(3); }
static void by_die(void) { die(1, "a failure the test asked for"); }
static void by_sigterm(void) { raise(SIGTERM); }
static void by_sigint(void) { raise(SIGINT); }
static void by_sigrtmin(void) { raise(SIGRTMIN); }
static void by_opening_too_many(void)
{
    for (int i = 0; i < OUTFILE_MAX; i++)
        outfile_open(path);
}

Test(outfile, exit_without_commit_removes_the_temporary)
{
    const int status = end_child(by_exit);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 3, "status %#x", status);
}

Test(outfile, die_removes_the_temporary, .init = cr_redirect_stderr)
{
    const int status = end_child(by_die);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %#x", status);
}

/* One output more than the table holds is a bug: one line, exit 1. */
Test(outfile, an_output_past_the_table_ends_the_program_with_exit_1, .init = cr_redirect_stderr)
{
    const int status = end_child(by_opening_too_many);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %#x", status);
}

/* The program still ends by the signal, as its parent expects. */
Test(outfile, a_signal_removes_the_temporary_and_still_ends_the_program)
{
    int status = end_child(by_sigterm);
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status %#x", status);
    status = end_child(by_sigint);
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT, "status %#x", status);
    status = end_child(by_sigrtmin); /* a real-time signal, which ends a program by default too */
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGRTMIN, "status %#x", status);
}

/* What the programs call: a path the user can fix is exit 2, with one line that names it. */
Test(outfile, open_or_exit_refuses_a_missing_directory_with_exit_2, .exit_code = 2, .init = cr_redirect_stderr)
{
    outfile_open_or_exit("/nonexistent-dir/out.csv", "CSV file");
}

/* A name as long as a file's may be (255 bytes here) leaves no room for ".XXXXXX": its temporary
 * takes a shorter name in the same directory, and the file is still written. */
Test(outfile, a_file_with_the_longest_name_is_written)
{
    setup_old_file("old\n");
    char longest[512];
    const int prefix = snprintf(longest, sizeof longest, "%s/", dir);
    memset(longest + prefix, 'n', 255);
    longest[prefix + 255] = '\0';
    FILE *out = outfile_open(longest);
    cr_assert_not_null(out, "%s", strerror(errno));
    fputs("new\n", out);
    cr_assert_eq(outfile_commit(&out, 1), 0, "%s", strerror(errno));
    FILE *f = fopen(longest, "r");
    cr_assert_not_null(f);
    char got[16] = "";
    got[fread(got, 1, sizeof got - 1, f)] = '\0';
    fclose(f);
    cr_expect_str_eq(got, "new\n");
    remove(longest);
    cr_expect_eq(temporaries(), 0);
    remove_dir();
}

Test(outfile, commit_or_exit_puts_the_file_in_place)
{
    setup_old_file("old\n");
    FILE *out = outfile_open_or_exit(path, "CSV file");
    fputs("new\n", out);
    outfile_commit_or_exit(&out, 1, "CSV file");
    expect_contents("new\n");
    cr_expect_eq(temporaries(), 0);
    remove_dir();
}

/* The teardown of the tests that set attributes, run however the test ended: the attributes
 * cleared, so that the directory and whatever is in it can be removed. */
static void clear_attributes_and_remove_dir(void)
{
    if (!*dir)
        return;
    set_attributes(dir, FS_APPEND_FL | FS_IMMUTABLE_FL, false);
    DIR *d = opendir(dir);
    for (const struct dirent *e; d && (e = readdir(d)) != NULL;) {
        char p[sizeof dir + 256 + 1];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            set_attributes(p, FS_APPEND_FL | FS_IMMUTABLE_FL, false);
            remove(p);
        }
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* Sets `flags` on p, or skips the test saying why it cannot be done here, first removing the
 * directory: Criterion runs no .fini after a skip. */
static void set_attributes_or_skip(const char *p, int flags)
{
    const int e = set_attributes(p, flags, true);
    if (!e)
        return;
    clear_attributes_and_remove_dir();
    cr_skip_test("cannot set chattr %s on %s: %s (it takes root and a file system that keeps the attribute)",
                 flags == FS_APPEND_FL ? "+a" : "+i", p, strerror(e));
}

/* outfile_open_or_exit(p, "CSV file") in a child process: its wait status, and what it wrote on
 * stderr in msg. A child whose open succeeds exits 0, its temporary removed at exit. */
static int open_or_exit_in_a_child(const char *p, char *msg, size_t len)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    fflush(NULL);
    const pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        outfile_open_or_exit(p, "CSV file");
        exit(0);
    }
    close(fds[1]);
    size_t n = 0;
    for (ssize_t got; n + 1 < len && (got = read(fds[0], msg + n, len - 1 - n)) > 0;)
        n += (size_t)got;
    msg[n] = '\0';
    close(fds[0]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return status;
}

/* An open of `p` refused for its attributes: NULL and EPERM, no temporary made, and from
 * outfile_open_or_exit one line "cannot write CSV file '<p>': <why>" and exit 2. */
static void expect_refused_for_attributes(const char *p, const char *why)
{
    errno = 0;
    FILE *out = outfile_open(p);
    cr_expect_null(out, "%s was opened", p);
    if (out)
        outfile_abandon(out);
    cr_expect_eq(errno, EPERM, "%s: %s", p, strerror(errno));
    cr_expect_eq(temporaries(), 0, "%s: a temporary is left", p);
    char msg[512], want[512];
    const int status = open_or_exit_in_a_child(p, msg, sizeof msg);
    snprintf(want, sizeof want, "run: cannot write CSV file '%s': %s\n", p, why);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 2, "%s: status %#x", p, status);
    cr_expect_str_eq(msg, want);
    cr_expect_eq(temporaries(), 0, "%s: a temporary is left", p);
}

/* An append-only or immutable file (chattr +a, +i) cannot be replaced by the rename at the end:
 * refused at open, before the run, not after it at the commit; the file is left as it was. */
Test(outfile, an_append_only_or_immutable_file_is_refused_at_open, .fini = clear_attributes_and_remove_dir)
{
    static const struct {
        int flag;
        const char *why;
    } cases[] = {{FS_APPEND_FL, "it is append-only (chattr +a): the finished file cannot replace it"},
                 {FS_IMMUTABLE_FL, "it is immutable (chattr +i): the finished file cannot replace it"}};
    setup_old_file("old\n");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        set_attributes_or_skip(path, cases[i].flag);
        expect_refused_for_attributes(path, cases[i].why);
        cr_assert_eq(set_attributes(path, cases[i].flag, false), 0);
        expect_contents("old\n");
    }
    FILE *out = outfile_open(path); /* the attribute cleared, the file is written again */
    cr_assert_not_null(out, "%s", strerror(errno));
    fputs("new\n", out);
    cr_assert_eq(outfile_commit(&out, 1), 0, "%s", strerror(errno));
    expect_contents("new\n");
}

/* In an append-only directory a temporary can be made but neither renamed into place nor removed;
 * in an immutable one none can be made. Either is refused at open, for a file that is there and for
 * a new one, and nothing is left behind. */
Test(outfile, a_file_in_an_append_only_or_immutable_directory_is_refused_at_open,
     .fini = clear_attributes_and_remove_dir)
{
    static const struct {
        int flag;
        const char *why;
    } cases[] = {
        {FS_APPEND_FL, "its directory is append-only (chattr +a): the finished file cannot be renamed into place"},
        {FS_IMMUTABLE_FL, "its directory is immutable (chattr +i): no file can be made there"}};
    setup_old_file("old\n");
    snprintf(path2, sizeof path2, "%s/new.csv", dir);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        set_attributes_or_skip(dir, cases[i].flag);
        expect_refused_for_attributes(path, cases[i].why);
        expect_refused_for_attributes(path2, cases[i].why);
        cr_assert_eq(set_attributes(dir, cases[i].flag, false), 0);
        expect_contents("old\n");
        cr_expect_eq(access(path2, F_OK), -1, "new.csv was made");
    }
}
