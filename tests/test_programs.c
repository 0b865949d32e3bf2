/* The stage programs themselves, run as a user would: bad input gets one line and a non-zero exit,
 * and with no GPU the program says so in one line. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/gpu.h"

typedef struct {
    int status;
    char out[8192], err[8192];
    int err_lines;
} outcome;

/* The repository root: this binary is <root>/tests/build/<name>. */
static void repo_root(char *buf, size_t len)
{
    const ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    cr_assert_gt(n, 0);
    buf[n] = '\0';
    for (int up = 0; up < 3; up++)
        *strrchr(buf, '/') = '\0';
}

static void slurp(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    const size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
    remove(path);
}

static outcome run_stage(const char *stage, const char *args)
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

static const char *const stages[] = {"01_naive", "02_multipass", "03_fused3kernel", "04_warp", "05_online"};

/* Each bad command line, for every stage: exit 2, nothing on stdout, one line on stderr naming
 * what is wrong. */
Test(programs, bad_input_is_one_line_and_exit_2)
{
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"--bogus", "run: unknown flag '--bogus' (see --help)\n"},
        {"--range 1000:500", "run: --range: expected LO:HI"},
        {"--n 0", "run: --n: expected a positive count"},
        {"--variant nope", "run: unknown variant 'nope' (this stage has: "},
    };
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++)
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            const outcome o = run_stage(stages[i], cases[k].args);
            cr_expect_eq(o.status, 2, "%s %s: exit %d", stages[i], cases[k].args, o.status);
            cr_expect_eq(o.err_lines, 1, "%s %s: %s", stages[i], cases[k].args, o.err);
            cr_expect(strncmp(o.err, cases[k].message, strlen(cases[k].message)) == 0, "%s %s: %s",
                      stages[i], cases[k].args, o.err);
            cr_expect_str_empty(o.out);
        }
}

Test(programs, one_softmax_stages_refuse_rows)
{
    static const char *const one_d_stages[] = {"01_naive", "02_multipass", "03_fused3kernel"};
    for (size_t i = 0; i < sizeof one_d_stages / sizeof one_d_stages[0]; i++) {
        const outcome o = run_stage(one_d_stages[i], "--rows 8 --cols 100");
        cr_expect_eq(o.status, 2, "%s: exit %d", one_d_stages[i], o.status);
        cr_expect_str_eq(o.err, "run: --rows/--cols: this stage computes one softmax over the whole array; use --n\n");
    }
}

Test(programs, help_exits_0_and_lists_the_flags)
{
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
        const outcome o = run_stage(stages[i], "--help");
        cr_expect_eq(o.status, 0);
        cr_expect(strstr(o.out, "--range LO:HI") != NULL && strstr(o.out, "--csv FILE") != NULL);
        cr_expect_str_empty(o.err);
    }
}

Test(programs, no_gpu_is_one_line_and_nonzero_exit)
{
    char reason[256];
    if (gpu_available(reason, sizeof reason))
        cr_skip_test("a GPU is present, so the no-GPU message cannot be seen here");
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
        const outcome o = run_stage(stages[i], "");
        cr_expect_eq(o.status, 1);
        cr_expect_eq(o.err_lines, 1, "%s", o.err);
        cr_expect_eq(strncmp(o.err, "run: no CUDA device found: ", 27), 0, "%s", o.err);
        cr_expect_str_empty(o.out);
    }
}
