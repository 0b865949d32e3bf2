/* The build's own input: a value that is not what a variable takes is refused in one line when make
 * reads the Makefile, before any shell sees it, so that what the value would run never runs; and a
 * dry run (make -n) changes no file. make runs as a child with its arguments as argv, no shell in
 * between, and nothing here compiles: no GPU is needed, nor stages that build. The refusals are
 * dry runs (-n) too: they come when make reads the Makefile, -n or not, and a check that let a
 * value through would then print a build, not start one. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SWEEP_MOST "18446744073709551615" /* the largest SWEEP_SEED tests/sweep.c reads: 2^64 - 1 */

typedef struct {
    int status;      /* make's exit status */
    char out[16384]; /* what it wrote on stdout and stderr, together, the first 16383 bytes */
    int lines;       /* the newlines in it */
} made;

static bool is_root(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/common/build.mk", dir);
    return access(path, F_OK) == 0;
}

/* The repository root: this binary is <root>/tests/build/run_tests under make test; a runner built
 * elsewhere runs from the root. */
static const char *repo_root(void)
{
    static char root[4096];
    const ssize_t n = readlink("/proc/self/exe", root, sizeof root - 1);
    if (n > 0) {
        root[n] = '\0';
        for (int up = 0; up < 3 && strrchr(root, '/'); up++)
            *strrchr(root, '/') = '\0';
        if (is_root(root))
            return root;
    }
    cr_assert(getcwd(root, sizeof root) && is_root(root), "cannot find the repository root (run from it)");
    return root;
}

/* make `args` (NULL-terminated) in the folder `dir` of the repository (NULL: its root), with `env`
 * (NAME=value, or NULL) added to an environment that has none of the variables the Makefiles
 * check, nor a calling make's flags (make test runs this under make). */
static made run_make(const char *dir, const char *env, const char *const *args)
{
    const char *argv[16] = {"make"}; /* the rest NULL */
    size_t argc = 1;
    for (const char *const *a = args; *a; a++) {
        cr_assert_lt(argc, sizeof argv / sizeof argv[0] - 1);
        argv[argc++] = *a;
    }
    char where[4200];
    snprintf(where, sizeof where, "%s%s%s", repo_root(), dir ? "/" : "", dir ? dir : "");

    int out[2];
    cr_assert_eq(pipe(out), 0);
    const pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        static const char *const unset[] = {"MAKEFLAGS",    "MFLAGS", "MAKELEVEL",    "MAKEOVERRIDES", "GNUMAKEFLAGS",
                                            "ARCH",         "STAGE",  "STRESS_CASES", "SWEEP_SEED",    "SWEEP_CASES",
                                            "FUZZ_SECONDS", "NCU",    "CUOBJDUMP",    "NVCC_EXTRA",    "CODE"};
        for (size_t i = 0; i < sizeof unset / sizeof unset[0]; i++)
            unsetenv(unset[i]);
        if (env) {
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(env, "="), env);
            setenv(name, env + strlen(name) + 1, 1);
        }
        dup2(out[1], STDOUT_FILENO);
        dup2(out[1], STDERR_FILENO);
        close(out[0]);
        close(out[1]);
        if (chdir(where) == 0)
            execvp("make", (char *const *)argv);
        _exit(127);
    }
    close(out[1]);
    made m = {0};
    size_t len = 0;
    char discard[4096]; /* what is past m.out, read so that make does not block on a full pipe */
    for (;;) {
        const bool room = len + 1 < sizeof m.out;
        const ssize_t n =
            room ? read(out[0], m.out + len, sizeof m.out - 1 - len) : read(out[0], discard, sizeof discard);
        if (n <= 0)
            break;
        len += room ? (size_t)n : 0;
    }
    close(out[0]);
    m.out[len] = '\0';
    int raw;
    cr_assert_eq(waitpid(pid, &raw, 0), pid);
    cr_assert(WIFEXITED(raw), "make %s did not exit normally", args[0]);
    m.status = WEXITSTATUS(raw);
    for (const char *p = m.out; *p; p++)
        m.lines += *p == '\n';
    return m;
}

/* The file that the hostile values below would make if anything ran them. */
static const char *mark_path(void)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/test-make-%d", (int)getpid());
    return path;
}

/* make refused `arg`: exit 2, one line that holds `message`, and the mark not made (removed if it
 * was, for the next case). */
static void expect_refused(const char *dir, const char *env, const char *const *args, const char *arg,
                           const char *message)
{
    const made m = run_make(dir, env, args);
    cr_expect_eq(m.status, 2, "%s: exit %d: %s", arg, m.status, m.out);
    cr_expect(m.lines == 1 && m.out[strlen(m.out) - 1] == '\n', "%s: not one line: %s", arg, m.out);
    cr_expect(strstr(m.out, message) != NULL, "%s: %s", arg, m.out);
    cr_expect_neq(remove(mark_path()), 0, "%s ran the command in it", arg);
}

/* A quote, a backtick, a shell's or make's $(...), a ';' in ARCH: refused, by the top Makefile and
 * by a stage's (common/build.mk); from the command line or from the environment. */
Test(make, arch_that_would_run_something_is_refused_and_not_run)
{
    static const char *const formats[] = {"ARCH=sm_90;",
                                          "ARCH=sm_90;touch %s",
                                          "ARCH=sm_90 `touch %s`",
                                          "ARCH=sm_90 $$(touch %s)",
                                          "ARCH=sm_90 $(shell touch %s)",
                                          "ARCH=sm_90' ; touch %s; '",
                                          "ARCH=sm_90,sm_",
                                          "ARCH=",
                                          "ARCH= , "};
    const char *const message = "ARCH must name architectures like sm_90 or \"sm_80 sm_90\", got '";
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        char arg[128];
        snprintf(arg, sizeof arg, formats[i], mark_path());
        expect_refused(NULL, NULL, (const char *[]){"-n", "stage1", arg, NULL}, arg, message);
        expect_refused(NULL, arg, (const char *[]){"-n", "stage1", NULL}, arg, message);
        /* NVCC named, so that reading the stage's Makefile needs no CUDA toolkit */
        expect_refused("01_naive", NULL, (const char *[]){"-n", arg, "NVCC=/nonexistent/nvcc", NULL}, arg, message);
    }
}

/* CODE, the commit a CSV header names, the same way: one word that would run nothing, or refused. */
Test(make, code_that_would_run_something_is_refused_and_not_run)
{
    static const char *const formats[] = {"CODE=a67d67c;touch %s", "CODE=a67d67c `touch %s`",
                                          "CODE=$$(touch %s)", "CODE=$(shell touch %s)", "CODE=a' ; touch %s; '",
                                          "CODE=", "CODE=a b"};
    const char *const message = "CODE must name a commit, like CODE=a67d67c or CODE=v1.2-3-gabcdef0-dirty, got '";
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        char arg[128];
        snprintf(arg, sizeof arg, formats[i], mark_path());
        expect_refused(NULL, NULL, (const char *[]){"-n", "stage1", arg, NULL}, arg, message);
        expect_refused("01_naive", NULL, (const char *[]){"-n", arg, "NVCC=/nonexistent/nvcc", NULL}, arg, message);
    }
}

/* What a stage's report.o is compiled with: CODE as given, and the hash of the stage's sources that
 * plots/make_plots.sh --sources prints, the rule make plots checks the CSVs' '# sources:' line by. */
Test(make, code_and_sources_hash_reach_report_o)
{
    char command[4300], hash[64] = "";
    snprintf(command, sizeof command, "sh '%s/plots/make_plots.sh' --sources 01_naive", repo_root());
    FILE *p = popen(command, "r");
    cr_assert_not_null(p);
    cr_assert_not_null(fgets(hash, sizeof hash, p));
    cr_assert_eq(pclose(p), 0);
    hash[strcspn(hash, "\n")] = '\0';
    cr_assert_eq(strlen(hash), 12, "%s", hash);

    char dir[64], build[80], target[96], want[128];
    snprintf(dir, sizeof dir, "/tmp/test-make-code-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(build, sizeof build, "BUILD=%s", dir);
    snprintf(target, sizeof target, "%s/common/report.o", dir);
    const made m = run_make("01_naive", NULL,
                            (const char *[]){"-n", build, target, "CODE=abc1234-dirty", "ARCH=sm_90",
                                             "NVCC=/nonexistent/nvcc", NULL});
    cr_expect_eq(m.status, 0, "%s", m.out);
    cr_expect(strstr(m.out, "-DCOURSE_CODE='\"abc1234-dirty\"'") != NULL, "%s", m.out);
    snprintf(want, sizeof want, "-DCOURSE_SOURCES='\"%s\"'", hash);
    cr_expect(strstr(m.out, want) != NULL, "want %s: %s", want, m.out);
    cr_expect_eq(rmdir(dir), 0, "%s: make -n wrote into it", dir);
}

/* The same for a stage goal's number: `make stage1$(...)` runs nothing. The mark is a name (a goal
 * with a '/' would not match stage%), made in the root if it ran. */
Test(make, stage_goal_that_would_run_something_is_refused_and_not_run)
{
    char goal[96], mark[64];
    snprintf(mark, sizeof mark, "test-make-%d", (int)getpid());
    snprintf(goal, sizeof goal, "stage1`touch %s`", mark);
    const made m = run_make(NULL, NULL, (const char *[]){goal, NULL});
    cr_expect_eq(m.status, 2, "%s", m.out);
    cr_expect(m.lines == 1 && strstr(m.out, "no stage 1`touch") != NULL, "%s", m.out);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", repo_root(), mark);
    cr_expect_neq(remove(path), 0, "%s ran the command in it", goal);
}

/* STRESS_CASES, SWEEP_SEED and FUZZ_SECONDS that would break out of a shell's quotes, and the
 * values they always refused: one line each, nothing run. */
Test(make, numbers_that_would_run_something_are_refused_and_not_run)
{
    char hostile[128];
    snprintf(hostile, sizeof hostile, "1'; touch %s; echo '", mark_path());
    static const struct {
        const char *goal, *name, *value, *message;
    } cases[] = {
        {"stress", "STRESS_CASES", NULL, "give a whole number of cases, 1 or more"},
        {"stress", "SWEEP_SEED", NULL, "give a whole number"},
        {"fuzz", "FUZZ_SECONDS", NULL, "give a whole number of seconds, 1 or more"},
        {"stress", "STRESS_CASES", "0", "give a whole number of cases, 1 or more"},
        {"stress", "STRESS_CASES", "-1", "give a whole number of cases, 1 or more"},
        {"stress", "STRESS_CASES", "1 2", "give a whole number of cases, 1 or more"},
        {"stress", "SWEEP_SEED", "+5", "give a whole number"},
        {"fuzz", "FUZZ_SECONDS", "abc", "give a whole number of seconds, 1 or more"},
        {"fuzz", "FUZZ_SECONDS", "000", "give a whole number of seconds, 1 or more"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char arg[192], message[256];
        snprintf(arg, sizeof arg, "%s=%s", cases[i].name, cases[i].value ? cases[i].value : hostile);
        snprintf(message, sizeof message, "make %s: %s: %s.", cases[i].goal, arg, cases[i].message);
        expect_refused(NULL, NULL, (const char *[]){"-n", cases[i].goal, arg, NULL}, arg, message);
    }
}

/* A seed (or a number of cases) past what tests/sweep.c reads is refused when make reads the
 * Makefile, before the build; the largest it reads, leading zeros or not, passes. */
Test(make, sweep_numbers_past_what_sweep_reads_are_refused)
{
    static const char *const too_large[] = {"SWEEP_SEED=99999999999999999999999", "SWEEP_SEED=18446744073709551616",
                                            "SWEEP_SEED=0018446744073709551616", "STRESS_CASES=18446744073709551616"};
    for (size_t i = 0; i < sizeof too_large / sizeof too_large[0]; i++)
        expect_refused(NULL, NULL, (const char *[]){"-n", "stress", too_large[i], NULL}, too_large[i],
                       ": too large, the largest is " SWEEP_MOST ".");
    /* Passed: -n prints the sweep's command, and -o test-build keeps the build out of it. */
    static const char *const largest[] = {"SWEEP_SEED=" SWEEP_MOST, "SWEEP_SEED=000" SWEEP_MOST, "SWEEP_SEED=0",
                                          "STRESS_CASES=" SWEEP_MOST};
    for (size_t i = 0; i < sizeof largest / sizeof largest[0]; i++) {
        const made m = run_make(NULL, NULL, (const char *[]){"-n", "-o", "test-build", "stress", largest[i], NULL});
        cr_expect(m.status == 0 && strstr(m.out, "tests/build/run_tests") != NULL, "%s: exit %d: %s", largest[i],
                  m.status, m.out);
    }
}

typedef struct {
    bool exists;
    struct timespec mtime;
    char text[1024];
} file_state;

static file_state state_of(const char *path)
{
    file_state s = {0};
    struct stat st;
    s.exists = stat(path, &st) == 0;
    if (!s.exists)
        return s;
    s.mtime = st.st_mtim;
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    s.text[fread(s.text, 1, sizeof s.text - 1, f)] = '\0';
    fclose(f);
    return s;
}

static void expect_same_state(const char *path, file_state before, const char *what)
{
    const file_state after = state_of(path);
    cr_expect_eq(after.exists, before.exists, "%s: %s was %s", what, path, before.exists ? "removed" : "made");
    cr_expect(after.mtime.tv_sec == before.mtime.tv_sec && after.mtime.tv_nsec == before.mtime.tv_nsec,
              "%s: %s was written", what, path);
    cr_expect_str_eq(after.text, before.text, "%s: %s was changed", what, path);
}

/* make -n with another ARCH leaves stage 1's stamp as it was (a build after it with the old ARCH
 * rebuilds nothing on its account). */
Test(make, dry_run_leaves_the_arch_stamp)
{
    char stamp[4200];
    snprintf(stamp, sizeof stamp, "%s/01_naive/build/arch.txt", repo_root());
    const file_state before = state_of(stamp);
    const made m = run_make(NULL, NULL, (const char *[]){"-n", "stage1", "ARCH=sm_80", NULL});
    if (m.status != 0 && strstr(m.out, "nvcc not found"))
        cr_skip_test("no CUDA toolkit to read a stage's Makefile with");
    cr_expect_eq(m.status, 0, "%s", m.out);
    cr_expect(strstr(m.out, "compute_80") != NULL, "the dry run printed no build for sm_80: %s", m.out);
    expect_same_state(stamp, before, "make -n stage1 ARCH=sm_80");
}

/* The stamp's rule, on a build folder of the test's own (BUILD=...): written when missing, left
 * alone (its time too) when its text is the same, and under make -n only printed. */
Test(make, arch_stamp_is_written_only_when_it_changes)
{
    char dir[64], stamp[96], build[80];
    snprintf(dir, sizeof dir, "/tmp/test-make-build-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(build, sizeof build, "BUILD=%s", dir);
    snprintf(stamp, sizeof stamp, "%s/arch.txt", dir);
    const char *const dry[] = {"-n", build, stamp, "ARCH=sm_80", "NVCC=/nonexistent/nvcc", NULL};
    const char *const real[] = {build, stamp, "ARCH=sm_80", "NVCC=/nonexistent/nvcc", NULL};
    const char *const other[] = {"-n", build, stamp, "ARCH=sm_90", "NVCC=/nonexistent/nvcc", NULL};

    made m = run_make("01_naive", NULL, dry);
    cr_expect(m.status == 0 && strstr(m.out, "compute_80") != NULL, "%s", m.out);
    expect_same_state(stamp, (file_state){0}, "make -n, no stamp");

    m = run_make("01_naive", NULL, real);
    cr_expect_eq(m.status, 0, "%s", m.out);
    const file_state written = state_of(stamp);
    cr_assert(written.exists && strstr(written.text, "-gencode arch=compute_80,code=sm_80") != NULL, "%s",
              written.text);

    m = run_make("01_naive", NULL, real);
    cr_expect(m.status == 0 && strstr(m.out, "is up to date") != NULL, "%s", m.out);
    expect_same_state(stamp, written, "make, the same ARCH");
    m = run_make("01_naive", NULL, dry);
    cr_expect(m.status == 0 && strstr(m.out, "is up to date") != NULL, "%s", m.out);
    m = run_make("01_naive", NULL, other);
    cr_expect(m.status == 0 && strstr(m.out, "compute_90") != NULL, "%s", m.out);
    expect_same_state(stamp, written, "make -n, another ARCH");
    remove(stamp);
    cr_expect_eq(rmdir(dir), 0, "%s: more than the stamp was written", dir);
}

/* STAGE for make sass, profile and sanitize is one digit, 1 to 6: anything else is refused in one
 * line before anything builds, not handed to make -C. */
Test(make, stage_must_be_one_digit)
{
    char hostile[96];
    snprintf(hostile, sizeof hostile, "STAGE=1;touch %s", mark_path());
    const char *const stages[] = {"STAGE=1_naive 02", "STAGE=01", "STAGE=7", "STAGE=1 2", hostile};
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
        expect_refused(NULL, NULL, (const char *[]){"-n", "sass", stages[i], NULL}, stages[i],
                       "make sass needs STAGE=N, N one of 1 to 6.");
        expect_refused(NULL, NULL, (const char *[]){"-n", "profile", stages[i], NULL}, stages[i],
                       "make profile needs STAGE=N, N one of 1 to 6.");
        char message[160];
        snprintf(message, sizeof message, "make sanitize %s: give a stage, 1 to 6, or no STAGE for all.", stages[i]);
        expect_refused(NULL, NULL, (const char *[]){"-n", "sanitize", stages[i], NULL}, stages[i], message);
    }
    expect_refused(NULL, NULL, (const char *[]){"-n", "sass", NULL}, "no STAGE",
                   "make sass needs STAGE=N, N one of 1 to 6.");
}

/* make profile without Nsight Compute, and make sass without cuobjdump, say so in one line (exit 2,
 * as for a missing nvcc or libFuzzer) before they build the stage. */
Test(make, missing_tool_is_one_line_before_the_build)
{
    expect_refused(NULL, NULL, (const char *[]){"-n", "profile", "STAGE=1", "NCU=/nonexistent/ncu", NULL}, "NCU",
                   "make profile: /nonexistent/ncu not found (Nsight Compute has it: NCU=/path/to/ncu).");
    expect_refused(NULL, NULL, (const char *[]){"-n", "profile", "STAGE=1", "NCU=no-such-ncu", NULL}, "NCU on PATH",
                   "make profile: no-such-ncu not found");
    expect_refused(NULL, NULL, (const char *[]){"-n", "sass", "STAGE=1", "CUOBJDUMP=/nonexistent/cuobjdump", NULL},
                   "CUOBJDUMP",
                   "make sass: /nonexistent/cuobjdump not found (the CUDA toolkit has it: "
                   "CUOBJDUMP=/path/to/cuobjdump).");
}
