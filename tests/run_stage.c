#define _POSIX_C_SOURCE 200809L
#include "run_stage.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void repo_root(char *buf, size_t len)
{
    const ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    cr_assert_gt(n, 0);
    buf[n] = '\0';
    for (int up = 0; up < 3; up++)
        *strrchr(buf, '/') = '\0';
}

/* The file at path into buf, then the file removed. */
static void slurp(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    const size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
    remove(path);
}

outcome run_stage(const char *stage, const char *args)
{
    char root[4096], cmd[8192];
    outcome o;
    repo_root(root, sizeof root);
    snprintf(cmd, sizeof cmd, "'%s/%s/run' %s >/tmp/stage-out.%d 2>/tmp/stage-err.%d", root, stage,
             args, (int)getpid(), (int)getpid());
    const int raw = system(cmd);
    cr_assert(WIFEXITED(raw), "%s did not exit normally", cmd);
    o.status = WEXITSTATUS(raw);
    char path[64];
    snprintf(path, sizeof path, "/tmp/stage-out.%d", (int)getpid());
    slurp(path, o.out, sizeof o.out);
    snprintf(path, sizeof path, "/tmp/stage-err.%d", (int)getpid());
    slurp(path, o.err, sizeof o.err);
    o.err_lines = 0;
    for (const char *p = o.err; *p; p++)
        o.err_lines += *p == '\n';
    return o;
}
