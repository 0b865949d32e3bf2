/* The stage programs themselves, run as a user would: bad input gets one line and a non-zero exit,
 * with no GPU the program says so in one line, and a run that fails leaves its outputs' files as
 * they were. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../04_warp/warp.h"
#include "../common/gpu.h"
#include "../06_fused_topk/host/npy.h"
#include "../06_fused_topk/host/topk_reference.h"
#include "fuzz/oracle.h"
#include "file_attributes.h"
#include "npy_test.h"
#include "run_stage.h"

static const char *const stages[] = {"01_naive", "02_multipass", "03_fused3kernel", "04_warp", "05_online",
                                     "06_fused_topk"};

/* A bad command line: exit 2, nothing on stdout, one printable line on stderr that starts with
 * `message`. */
static void expect_usage_error(const char *stage, const char *args, const char *message)
{
    const outcome o = run_stage(stage, args);
    cr_expect_eq(o.status, 2, "%s %s: exit %d", stage, args, o.status);
    char line[sizeof o.err]; /* stderr up to its first newline */
    snprintf(line, sizeof line, "%.*s", (int)strcspn(o.err, "\n"), o.err);
    cr_expect(o.err_lines == 1 && strlen(line) + 1 == strlen(o.err) && one_printable_line(line), "%s %s: %s", stage,
              args, o.err);
    cr_expect(strncmp(o.err, message, strlen(message)) == 0, "%s %s: %s", stage, args, o.err);
    cr_expect_str_empty(o.out);
}

/* Each bad command line, for every stage: exit 2, nothing on stdout, one line on stderr naming
 * what is wrong. What it quotes of the command line is escaped, a newline or a terminal's escape
 * sequence included, so that it stays one printable line. */
Test(programs, bad_input_is_one_line_and_exit_2)
{
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"--bogus", "run: unknown flag '--bogus' (see --help)\n"},
        {"--range 1000:500", "run: --range: expected LO:HI"},
        {"--variant nope", "run: unknown variant 'nope' (this stage has: "},
        {"--seed -1", "run: --seed: expected a whole number from 0 to 18446744073709551615, got '-1'"},
        {"--seed ' -1'", "run: --seed: expected a whole number from 0 to 18446744073709551615, got ' -1'"},
        {"--dist '\x1b[2Jnormal'",
         "run: --dist: expected uniform, normal, outliers or zipf, got '\\x1b[2Jnormal' (see --help)\n"},
        {"'--bo\ngus=3'", "run: unknown flag '--bo\\x0agus' (see --help)\n"},
        {"--variant 'x\ny'", "run: unknown variant 'x\\x0ay' (this stage has: "},
    };
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++)
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
            expect_usage_error(stages[i], cases[k].args, cases[k].message);
    /* --n is a flag of the softmax stages, 01 to 05. */
    for (size_t i = 0; i + 1 < sizeof stages / sizeof stages[0]; i++) {
        expect_usage_error(stages[i], "--n 0", "run: --n: expected a count from 1 to");
        expect_usage_error(stages[i], "--n '1\n2'", "run: --n: expected a count from 1 to 549755813632, like 1000, "
                                                     "10K or 1e6, got '1\\x0a2' (see --help)\n");
    }
}

/* -h as a file's name, and --help with a value, are refused like "--csv --help" and "--sample=1",
 * and no file named after -h is made; a program name with a newline in it stays one line. */
Test(programs, help_is_no_value_and_the_name_stays_one_line)
{
    char root[4096];
    repo_root(root, sizeof root);
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
        expect_usage_error(stages[i], "--csv -h",
                           "run: --csv needs a file name, got the flag '-h' (a file named so: ./-h) (see --help)\n");
        expect_usage_error(stages[i], "--help=1", "run: --help takes no value (see --help)\n");
        DIR *d = opendir("."); /* where the stage ran, and --csv's temporary would be */
        cr_assert_not_null(d);
        for (struct dirent *e; (e = readdir(d));)
            cr_expect(strncmp(e->d_name, "-h", 2) != 0, "%s: left %s behind", stages[i], e->d_name);
        closedir(d);
    }
    expect_usage_error("06_fused_topk", "--output -h --rows 4 --cols 100",
                       "run: --output needs a file name, got the flag '-h'");
    char program[4200];
    snprintf(program, sizeof program, "%s/01_naive/run", root);
    int err_pipe[2];
    cr_assert_eq(pipe(err_pipe), 0);
    const pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) { /* argv[0] "ru\nn": what a shell's exec -a would give */
        dup2(err_pipe[1], 2);
        execv(program, (char *const[]){"ru\nn", "--bogus", NULL});
        _exit(127);
    }
    close(err_pipe[1]);
    char out[512] = "";
    size_t got = 0;
    for (ssize_t n; got < sizeof out - 1 && (n = read(err_pipe[0], out + got, sizeof out - 1 - got)) > 0;)
        got += (size_t)n; /* die() writes its line in pieces */
    out[got] = '\0';
    close(err_pipe[0]);
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 2);
    cr_expect_str_eq(out, "ru\\x0an: unknown flag '--bogus' (see --help)\n");
}

/* Shapes past the bounds of cli.h, and shapes the --variant asked for cannot run (it would be left
 * out, and the run would time nothing), refused before anything is allocated and before the GPU is
 * opened: with no GPU the message is this one too, not "no CUDA device". */
Test(programs, shapes_that_cannot_run_are_one_line_and_exit_2)
{
    static const struct {
        const char *stage, *args, *message;
    } cases[] = {
        {"06_fused_topk", "--rows 16 --cols 1152921504606846976 --k 10",
         "run: --cols: expected a count from 1 to 549755813632, like 8192 or 4K, got '1152921504606846976'"},
        {"06_fused_topk", "--rows 4 --cols 4611686018427387904 --dist outliers", "run: --cols: expected a count from 1"},
        {"05_online", "--rows 4 --cols 4611686018427387904 --dist outliers", "run: --cols: expected a count from 1"},
        {"01_naive", "--n 4611686018427387904",
         "run: --n: expected a count from 1 to 549755813632, like 1000, 10K or 1e6, got '4611686018427387904'"},
        {"02_multipass", "--sizes 1K,549755813633", "run: --sizes: expected up to 32 counts from 1 to 549755813632"},
        {"04_warp", "--rows 2147483648 --cols 1", "run: --rows: expected a count from 1 to 2147483647"},
        {"04_warp", "--rows 1048576 --cols 1048576",
         "run: --rows x --cols: 1048576 x 1048576 is more than 549755813632 elements (a block per 256 of them, at "
         "most 2^31 - 1 blocks) (see --help)\n"},
        {"06_fused_topk", "--rows 1 --cols 2147483648",
         "run: --cols 2147483648: a row holds at most 2147483647 logits (V), which the kernels index with an int\n"},
        /* Without --variant every variant runs that can: refused only where none can. */
        {"06_fused_topk", "--rows 2 --cols 2000000000 --k 3000",
         "run: no variant takes 2 x 2000000000 at K = 3000: unfused cannot take 2 x 2000000000 logits; library "
         "handles K up to 1024, not 3000; cub_topk handles K up to 1024, not 3000; flashinfer handles K up to "
         "2048, not 3000; fused handles K up to 32, not 3000; threshold handles K up to 64, not 3000; fast_row "
         "handles K up to 1024, not 3000; fast_chunks handles K up to 1024, not 3000; fast_split handles K up "
         "to 1024, not 3000; fast handles K up to 1024, not 3000; fast_logits handles K up to 1024, not 3000\n"},
        /* The default run draws bf16 and fp16 logits from --range as well as float32. */
        {"06_fused_topk", "--range 0:100000",
         "run: --range 0:100000: the default run draws fp16 logits too, and --dist uniform would draw numbers past "
         "fp16's largest, 65504 (with --rows and --cols it draws --dtype's alone, float32 by default)\n"},
        {"04_warp", "--variant warp_per_row --rows 2 --cols 2000",
         "run: --variant warp_per_row handles rows of at most 1024 columns, not 2 x 2000\n"},
        {"04_warp", "--variant fused_warp --rows 4 --cols 8",
         "run: --variant fused_warp computes one softmax over the whole array: give --n, not --rows/--cols\n"},
        {"05_online", "--variant online_rows --n 1M",
         "run: --variant online_rows computes a softmax per row: give --rows and --cols, not --n\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_usage_error(cases[i].stage, cases[i].args, cases[i].message);
}

/* A stage takes only the flags it declares: the one-softmax stages have no --rows, stage 06 has no
 * --n, and only stage 06 has its own. */
Test(programs, stages_take_only_their_flags)
{
    static const struct {
        const char *stage, *flag;
    } foreign[] = {{"01_naive", "--rows 8 --cols 100"}, {"02_multipass", "--rows 8 --cols 100"},
                   {"03_fused3kernel", "--cols 100"},   {"05_online", "--k 5"},
                   {"01_naive", "--input x.npy --n 5"}, {"05_online", "--sample"},
                   {"06_fused_topk", "--n 100"},         {"06_fused_topk", "--sizes 1K,2K"}};
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
        char message[80];
        snprintf(message, sizeof message, "run: unknown flag '%.*s' (see --help)\n",
                 (int)strcspn(foreign[i].flag, " "), foreign[i].flag);
        expect_usage_error(foreign[i].stage, foreign[i].flag, message);
    }
}

/* --help lists the shared flags, the stage's own and nothing else. */
Test(programs, help_exits_0_and_lists_the_flags)
{
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
        const outcome o = run_stage(stages[i], "--help");
        cr_expect_eq(o.status, 0);
        cr_expect(strstr(o.out, "--range LO:HI") != NULL && strstr(o.out, "--csv FILE") != NULL);
        const bool topk = strcmp(stages[i], "06_fused_topk") == 0, rows = strcmp(stages[i], "04_warp") >= 0;
        cr_expect_eq(strstr(o.out, "  --k K") != NULL, topk, "%s", stages[i]);
        cr_expect_eq(strstr(o.out, "  --sample") != NULL, topk, "%s", stages[i]);
        cr_expect_eq(strstr(o.out, "  --n N") != NULL, !topk, "%s", stages[i]);
        cr_expect_eq(strstr(o.out, "  --rows R") != NULL, rows, "%s", stages[i]);
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


/* The limit warp_per_row's `handles` names is the one its `supports` draws: the last length it
 * takes, and the first it does not. */
Test(programs, warp_per_row_handles_what_its_message_says)
{
    const softmax_variant *v = &warp_per_row_variant;
    size_t most = 0;
    cr_assert_eq(sscanf(v->handles, "rows of at most %zu columns", &most), 1, "%s", v->handles);
    cr_expect(v->supports(3, most) && !v->supports(3, most + 1), "%s", v->handles);
}

/* Stage 06's own flags, and the variants' limits, checked before the GPU is touched. */
Test(programs, topk_bad_input_is_one_line_and_exit_2)
{
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"--k 0", "run: --k: expected a whole number from 1 to 2147483647 or a .npy file of one a row, got '0'"},
        {"--k 2147483648", "run: --k: expected a whole number from 1 to 2147483647 or a .npy file of one a row, got "
                           "'2147483648'"},
        {"--rows 4 --cols 5 --k 6", "run: --k 6: a row has only 5 logits (V)\n"},
        {"--rows 4 --cols 5", "run: a row has only 5 logits (V), fewer than the default K of 10: give --k\n"},
        {"--k 5", "run: --k, --dtype and --order go with --rows/--cols"},
        {"--order ascending", "run: --k, --dtype and --order go with --rows/--cols"},
        {"--experiment serving --k 5", "run: --k, --dtype and --order go with --rows/--cols"},
        {"--rows 4 --cols 100 --order sorted", "run: --order: expected index or ascending, got 'sorted'"},
        {"--input x.npy --order ascending", "run: --order: the logits come from --input\n"},
        {"--experiment nope", "run: --experiment: expected serving, got 'nope'"},
        {"--experiment serving --rows 4 --cols 100", "run: --experiment: it sets its own shapes"},
        {"--experiment serving --input x.npy", "run: --experiment: it sets its own shapes"},
        {"--dtype fp8", "run: --dtype: expected float32, bf16 or fp16, got 'fp8'"},
        {"--output out", "run: --output needs --input or --rows/--cols"},
        {"--input /nonexistent/logits.npy", "run: --input /nonexistent/logits.npy: cannot read it: No such file"},
        {"--input '/nonexistent/a\nb.npy'", "run: --input /nonexistent/a\\x0ab.npy: cannot read it: No such file"},
        {"--input x.npy --rows 2 --cols 3", "run: --input: the shape comes from the file"},
        {"--input x.npy --range 0:1e39", "run: --range: the logits come from --input\n"},
        /* The flags' own refusals come before a --variant's and an output file's. */
        {"--variant nope --input f.npy --dist normal", "run: --dist: the logits come from --input\n"},
        {"--csv /nonexistent/x.csv --input f.npy --range 0:1", "run: --range: the logits come from --input\n"},
        {"--variant nope --rows 1 --cols 3e9", "run: --cols 3000000000: a row holds at most 2147483647 logits"},
        {"--rows 2 --cols 3e11 --range 0:1e6 --dtype fp16", "run: --range 0:1000000: --dist uniform would draw "
                                                             "numbers past fp16's largest"},
        {"--rows 4 --cols 100 --k 33 --variant fused", "run: --variant fused handles K up to 32, not 33\n"},
        {"--rows 4 --cols 2000 --k 1025 --variant fast", "run: --variant fast handles K up to 1024, not 1025\n"},
        {"--rows 4 --cols 100 --dtype bf16 --variant fused", "run: --variant fused takes float32 logits only, not bf16\n"},
        {"--rows 100000 --cols 50257 --variant unfused", "run: --variant unfused cannot take 100000 x 50257 logits\n"},
        {"--rows 4 --cols 2000 --k 1025 --output out", "run: --output: fast handles K up to 1024, not 1025\n"},
        {"--rows 4 --cols 2000 --k 1025 --sample", "run: --sample: the draw runs in fast, which handles K up to 1024, "
                                                   "not 1025\n"},
        {"--rows 4 --cols 100 --csv --sample", "run: --csv needs a file name, got the flag '--sample'"},
        {"--rows 4 --cols 100 --range 0:1e39", "run: --range 0:1e+39: --dist uniform would draw numbers past float32's "
                                                "largest"},
        {"--rows 4 --cols 100 --dtype fp16 --range 0:100000", "run: --range 0:100000: --dist uniform would draw numbers "
                                                               "past fp16's largest, 65504 (see --help)\n"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        expect_usage_error("06_fused_topk", cases[k].args, cases[k].message);
}

/* --sample and its flags: values out of range (NaN among them), flags without --sample, a variant
 * the draw is not fused into, and per-row .npy files of the wrong type, length or values; each one
 * line and exit 2, before the GPU is touched. */
Test(programs, sample_bad_input_is_one_line_and_exit_2)
{
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"--rows 4 --cols 100 --sample --temperature -1", "run: --temperature: expected a finite number >= 0"},
        {"--rows 4 --cols 100 --sample --temperature nan", "run: --temperature: expected a finite number >= 0"},
        {"--rows 4 --cols 100 --sample --temperature inf", "run: --temperature: expected a finite number >= 0"},
        {"--rows 4 --cols 100 --sample --top-p 0", "run: --top-p: expected a number in (0, 1]"},
        {"--rows 4 --cols 100 --sample --top-p 1.01", "run: --top-p: expected a number in (0, 1]"},
        {"--rows 4 --cols 100 --sample --top-p nan", "run: --top-p: expected a number in (0, 1]"},
        {"--rows 4 --cols 100 --sample --min-p 1", "run: --min-p: expected a number in [0, 1)"},
        {"--rows 4 --cols 100 --sample --min-p -0.1", "run: --min-p: expected a number in [0, 1)"},
        {"--rows 4 --cols 100 --sample --min-p x.npy", "run: --min-p: expected a number in [0, 1)"},
        {"--rows 4 --cols 100 --top-p 0.9", "run: --temperature, --top-p and --min-p go with --sample\n"},
        {"--sample", "run: --sample needs --input or --rows/--cols"},
        {"--rows 4 --cols 100 --sample --variant unfused",
         "run: --sample: the draw is fused into fast, fast_row and fast_split, not unfused\n"},
        {"--rows 4 --cols 100 --k /tmp/k.npy", "run: --k /tmp/k.npy: a K a row goes with --sample"},
        {"--rows 4 --cols 100 --sample --temperature /nonexistent/t.npy",
         "run: --temperature /nonexistent/t.npy: cannot read it: No such file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_usage_error("06_fused_topk", cases[i].args, cases[i].message);

    char t_path[64], k_path[64], args[256];
    snprintf(t_path, sizeof t_path, "/tmp/temperatures-%d.npy", (int)getpid());
    snprintf(k_path, sizeof k_path, "/tmp/ks-%d.npy", (int)getpid());
    static const size_t four[1] = {4}, three[1] = {3};
    static const float t_bad[4] = {1.0f, 0.5f, -1.0f, 2.0f}, t_ok[4] = {1.0f, 0.5f, 0.0f, 2.0f};
    static const int k_bad[4] = {1, 5, 101, 2}, k_zero[4] = {1, 0, 3, 2};
    static const struct {
        const char *flag;
        const float *t;
        const int *k;
        const size_t *shape;
        const char *message; /* after "run: <flag> <path>: " */
    } files[] = {
        {"--temperature", t_bad, NULL, four, "row 2's -1 is not a finite number >= 0\n"},
        {"--temperature", t_ok, NULL, three, "it has 3 values and the logits 4 rows: give one a row\n"},
        {"--top-p", t_ok, NULL, four, "row 2's 0 is not in (0, 1]\n"},
        {"--temperature", NULL, k_bad, four, "its element type '<i4' is not '<f4' (float32)\n"},
        {"--k", NULL, k_bad, four, "row 2's K of 101 is not from 1 to the row's 100 logits\n"},
        {"--k", NULL, k_zero, four, "row 1's K of 0 is not from 1 to the row's 100 logits\n"},
        {"--k", t_ok, NULL, four, "its element type '<f4' is not '<i4' (int32)\n"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        const char *path = files[i].k ? k_path : t_path;
        save_npy(path, files[i].k ? "<i4" : "<f4", 4, files[i].shape, 1, files[i].k ? (const void *)files[i].k
                                                                                     : (const void *)files[i].t);
        snprintf(args, sizeof args, "--rows 4 --cols 100 --sample %s %s", files[i].flag, path);
        char message[256];
        snprintf(message, sizeof message, "run: %s %s: %s", files[i].flag, path, files[i].message);
        expect_usage_error("06_fused_topk", args, message);
        remove(path);
    }
}

/* The logits of the .npy round trips below, saved at `path` as numpy saves them: [B,T,V] =
 * [2,3,ROUND_TRIP_V], ties among them. */
enum { ROUND_TRIP_ROWS = 6, ROUND_TRIP_V = 1001 };
static const float *save_round_trip_logits(const char *path)
{
    static float logits[ROUND_TRIP_ROWS * ROUND_TRIP_V];
    for (int i = 0; i < ROUND_TRIP_ROWS * ROUND_TRIP_V; i++)
        logits[i] = (float)((i * 7919) % 1013) / 101.0f;
    const size_t shape[3] = {2, 3, ROUND_TRIP_V};
    save_npy(path, "<f4", 4, shape, 3, logits);
    return logits;
}

/* Reads the .npy file `path` that the program wrote, and removes it: its header must begin with
 * `header` and `bytes` of data must follow it, which go to `data`. */
static void read_answer(const char *path, const char *header, void *data, size_t bytes)
{
    unsigned char file[128 + 4096];
    cr_assert(bytes <= 4096, "%s: a test reads at most 4096 bytes", path);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s was not written", path);
    const size_t n = fread(file, 1, sizeof file, f);
    fclose(f);
    remove(path);
    const size_t start = 10 + (size_t)(file[8] | file[9] << 8); /* where the header says the data starts */
    cr_assert_eq(n, start + bytes, "%s: %zu bytes", path, n);
    cr_expect_eq(memcmp(file + 10, header, strlen(header)), 0, "%s header", path);
    memcpy(data, file + start, bytes);
}

/* --sample --output on the GPU: the three token files, one value a row in the logits' [B,T], each
 * token among the row's top K, its probability in (0, 1] and its log-probability its log. */
Test(programs, sample_output_files)
{
    char reason[256];
    if (!gpu_available(reason, sizeof reason))
        cr_skip_test("no CUDA device: %s", reason);
    enum { ROWS = ROUND_TRIP_ROWS, V = ROUND_TRIP_V, K = 7 };
    char in[64], prefix[64], path[96], args[256];
    snprintf(in, sizeof in, "/tmp/sample-logits-%d.npy", (int)getpid());
    snprintf(prefix, sizeof prefix, "/tmp/sample-answer-%d", (int)getpid());
    const float *logits = save_round_trip_logits(in);
    snprintf(args, sizeof args, "--input %s --output %s --k %d --sample --temperature 0.7 --top-p 0.9 --iters 2 "
             "--warmup 1", in, prefix, K);
    const outcome o = run_stage("06_fused_topk", args);
    cr_assert_eq(o.status, 0, "%s", o.err);
    int ref_idx[ROWS * K];
    double ref_prob[ROWS * K];
    reference_topk(logits, ROWS, V, K, ref_idx, ref_prob);
    int tokens[ROWS];
    float probs[ROWS], logprobs[ROWS];
    const char *ints = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }";
    const char *floats = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    snprintf(path, sizeof path, "%s_tokens.npy", prefix);
    read_answer(path, ints, tokens, sizeof tokens);
    snprintf(path, sizeof path, "%s_token_probs.npy", prefix);
    read_answer(path, floats, probs, sizeof probs);
    snprintf(path, sizeof path, "%s_token_logprobs.npy", prefix);
    read_answer(path, floats, logprobs, sizeof logprobs);
    static const char *const top_k[] = {"indices", "probs"};
    for (int which = 0; which < 2; which++) {
        snprintf(path, sizeof path, "%s_%s.npy", prefix, top_k[which]);
        cr_expect_eq(remove(path), 0, "%s was not written", path);
    }
    for (int r = 0; r < ROWS; r++) {
        bool among = false;
        for (int j = 0; j < K; j++)
            among |= ref_idx[r * K + j] == tokens[r];
        cr_expect(among, "row %d: token %d is not among the top %d", r, tokens[r], K);
        cr_expect(probs[r] > 0.0f && probs[r] <= 1.0f, "row %d: p %g", r, probs[r]);
        cr_expect(fabsf(logf(probs[r]) - logprobs[r]) < 1e-4f, "row %d: log p %g vs p %g", r, logprobs[r], probs[r]);
    }
    remove(in);
}

/* With no --variant, the variants that cannot take the case are left out of the table, in one line
 * that says why. */
Test(programs, topk_left_out_variants_are_named)
{
    char reason[256];
    if (!gpu_available(reason, sizeof reason))
        cr_skip_test("no CUDA device: %s", reason);
    const outcome o = run_stage("06_fused_topk", "--rows 4 --cols 100 --k 33 --iters 2 --warmup 1");
    cr_assert_eq(o.status, 0, "%s", o.err);
    cr_expect(strstr(o.out, "\nfused left out: it handles K up to 32, not 33") != NULL, "%s", o.out);
    cr_expect(strstr(o.out, " fused ") == NULL, "fused has a row: %s", o.out);
}

/* A file that is not what it claims, handed to the program: one line, exit 2. */
Test(programs, topk_malformed_npy_is_one_line_and_exit_2)
{
    char path[64], args[128];
    snprintf(path, sizeof path, "/tmp/malformed-%d.npy", (int)getpid());
    static const unsigned char truncated[] = "\x93NUMPY\x01\x00\x44\x00{'descr': '<f4', 'fortran_order': False, "
                                             "'shape': (8, 1000), }     \n\x00\x00";
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fwrite(truncated, 1, sizeof truncated - 1, f);
    fclose(f);
    snprintf(args, sizeof args, "--input %s", path);
    expect_usage_error("06_fused_topk", args, "run: --input /tmp/malformed-");
    const outcome o = run_stage("06_fused_topk", args);
    cr_expect(strstr(o.err, "its shape needs 32000 bytes of data, the file has 2") != NULL, "%s", o.err);

    const float logits[6] = {0};
    const size_t shape[2] = {2, 3};
    save_npy(path, "<f4", 4, shape, 2, logits);
    snprintf(args, sizeof args, "--input %s --dtype bf16 --k 2", path);
    expect_usage_error("06_fused_topk", args, "run: --dtype bf16: the file's logits are float32\n");
    remove(path);
}

/* --input and --output on the GPU: logits saved as numpy saves them, [B,T,V] = [2,3,1001]; the
 * answer read back from the .npy files the program wrote must be the fp64 reference's, in shape
 * [2,3,K]. */
Test(programs, topk_npy_round_trip)
{
    char reason[256];
    if (!gpu_available(reason, sizeof reason))
        cr_skip_test("no CUDA device: %s", reason);
    enum { ROWS = ROUND_TRIP_ROWS, V = ROUND_TRIP_V, K = 7 };
    char in[64], prefix[64], path[96], args[256];
    snprintf(in, sizeof in, "/tmp/logits-%d.npy", (int)getpid());
    snprintf(prefix, sizeof prefix, "/tmp/answer-%d", (int)getpid());
    const float *logits = save_round_trip_logits(in);
    snprintf(args, sizeof args, "--input %s --output %s --k %d --iters 2 --warmup 1", in, prefix, K);
    const outcome o = run_stage("06_fused_topk", args);
    cr_assert_eq(o.status, 0, "%s", o.err);

    int ref_idx[ROWS * K];
    double ref_prob[ROWS * K];
    reference_topk(logits, ROWS, V, K, ref_idx, ref_prob);
    int idx[ROWS * K];
    float prob[ROWS * K];
    snprintf(path, sizeof path, "%s_indices.npy", prefix);
    read_answer(path, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3, 7), }", idx, sizeof idx);
    snprintf(path, sizeof path, "%s_probs.npy", prefix);
    read_answer(path, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 7), }", prob, sizeof prob);
    for (int i = 0; i < ROWS * K; i++) {
        cr_expect_eq(idx[i], ref_idx[i], "entry %d", i);
        cr_expect(fabs(prob[i] - ref_prob[i]) <= 1e-4 * ref_prob[i], "entry %d: %g vs %g", i, prob[i], ref_prob[i]);
    }
    remove(in);
}

/* A directory of its own for a test's files, each holding "old <name>\n". */
typedef struct {
    char dir[64];
    const char *names[3];
    int n;
} old_files;

static old_files make_old_files(const char *const *names, int n)
{
    old_files f = {.n = n};
    snprintf(f.dir, sizeof f.dir, "/tmp/programs-test-XXXXXX");
    cr_assert_not_null(mkdtemp(f.dir));
    for (int i = 0; i < n; i++) {
        char path[128];
        f.names[i] = names[i];
        snprintf(path, sizeof path, "%s/%s", f.dir, names[i]);
        FILE *out = fopen(path, "w");
        cr_assert_not_null(out);
        fprintf(out, "old %s\n", names[i]);
        fclose(out);
    }
    return f;
}

/* Each file still holds its old bytes, and nothing else is in the directory (no temporary); then
 * the directory is removed. */
static void expect_old_files_and_remove(const old_files *f, const char *what)
{
    DIR *d = opendir(f->dir);
    cr_assert_not_null(d);
    int entries = 0;
    for (const struct dirent *e; (e = readdir(d)) != NULL;)
        entries += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    cr_expect_eq(entries, f->n, "%s: %d files where there were %d: a temporary is left", what, entries, f->n);
    for (int i = 0; i < f->n; i++) {
        char path[128], got[64] = "", want[64];
        snprintf(path, sizeof path, "%s/%s", f->dir, f->names[i]);
        snprintf(want, sizeof want, "old %s\n", f->names[i]);
        FILE *in = fopen(path, "r");
        cr_assert_not_null(in, "%s: %s is gone", what, path);
        got[fread(got, 1, sizeof got - 1, in)] = '\0';
        fclose(in);
        cr_expect_str_eq(got, want, "%s: %s was changed", what, path);
        remove(path);
    }
    rmdir(f->dir);
}

/* An output that cannot be written is refused before the GPU is opened: with no GPU this message
 * comes, not "no CUDA device". */
/* A file the run would write that is one it reads or another it writes is refused, and left as it
 * was; so are --dist and --seed with --input, which would be silently ignored. */
Test(programs, topk_outputs_that_would_replace_inputs_are_refused)
{
    char input[64], csv_like_output[64], args[256], message[320];
    snprintf(input, sizeof input, "/tmp/replace-%d_probs.npy", (int)getpid());
    snprintf(csv_like_output, sizeof csv_like_output, "/tmp/replace-out-%d_indices.npy", (int)getpid());
    static float logits[2 * 20];
    const size_t shape[2] = {2, 20};
    save_npy(input, "<f4", 4, shape, 2, logits);
    struct stat before, after;
    cr_assert_eq(stat(input, &before), 0);

    snprintf(args, sizeof args, "--input %s --k 5 --csv %s", input, input);
    snprintf(message, sizeof message, "run: --csv would replace --input's file %s\n", input);
    expect_usage_error("06_fused_topk", args, message);
    snprintf(args, sizeof args, "--input %s --k 5 --output /tmp/replace-%d", input, (int)getpid());
    snprintf(message, sizeof message, "run: --output would replace --input's file %s\n", input);
    expect_usage_error("06_fused_topk", args, message);
    snprintf(args, sizeof args, "--rows 4 --cols 100 --csv %s --output /tmp/replace-out-%d", csv_like_output,
             (int)getpid());
    snprintf(message, sizeof message, "run: --csv %s is also --output's file\n", csv_like_output);
    expect_usage_error("06_fused_topk", args, message);
    snprintf(args, sizeof args, "--input %s --k 5 --dist normal", input);
    expect_usage_error("06_fused_topk", args, "run: --dist: the logits come from --input\n");
    snprintf(args, sizeof args, "--input %s --k 5 --seed 7", input);
    expect_usage_error("06_fused_topk", args, "run: --seed: the logits come from --input (with --sample, --seed keys "
                       "the draw)\n");

    /* Two --output files made one by a link: the second's rename would replace the first's answer. */
    char linked[64], target[80];
    snprintf(linked, sizeof linked, "/tmp/replace-linked-%d_probs.npy", (int)getpid());
    snprintf(target, sizeof target, "/tmp/replace-linked-%d_indices.npy", (int)getpid());
    save_npy(target, "<f4", 4, shape, 2, logits);
    cr_assert_eq(symlink(target, linked), 0);
    snprintf(args, sizeof args, "--rows 4 --cols 100 --output /tmp/replace-linked-%d", (int)getpid());
    snprintf(message, sizeof message, "run: --output: %s and %s are the same file\n", target, linked);
    expect_usage_error("06_fused_topk", args, message);
    remove(linked);
    remove(target);

    cr_assert_eq(stat(input, &after), 0);
    cr_expect(after.st_ino == before.st_ino && after.st_size == before.st_size, "%s was replaced", input);
    cr_expect_neq(access(csv_like_output, F_OK), 0, "%s was written", csv_like_output);
    remove(input);
}

Test(programs, outputs_that_cannot_be_written_are_refused_before_the_gpu)
{
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++)
        expect_usage_error(stages[i], "--csv /nonexistent-dir/out.csv",
                           "run: cannot write CSV file '/nonexistent-dir/out.csv': No such file or directory\n");
    expect_usage_error("06_fused_topk", "--rows 4 --cols 100 --output /nonexistent-dir/answer",
                       "run: cannot write --output file '/nonexistent-dir/answer_indices.npy': No such file or "
                       "directory\n");
    expect_usage_error("01_naive", "--csv /tmp", "run: cannot write CSV file '/tmp': Is a directory\n");
    /* The file run_stage sends the program's standard output to (run_stage.c). */
    char args[96], message[192];
    snprintf(args, sizeof args, "--csv /tmp/stage-out.%d", (int)getpid());
    snprintf(message, sizeof message, "run: cannot write CSV file '/tmp/stage-out.%d': it is the file this program's "
             "output goes to\n", (int)getpid());
    expect_usage_error("01_naive", args, message);
}

/* A run that fails once its outputs are open leaves the files it would have replaced as they were,
 * and no temporary beside them. These runs fail on every machine: with no GPU at gpu_open(), with
 * one at the memory check (they need terabytes). */
Test(programs, a_failed_run_leaves_its_outputs_as_they_were)
{
    static const char *const csv_only[] = {"results.csv"};
    old_files f = make_old_files(csv_only, 1);
    char args[256];
    snprintf(args, sizeof args, "--n 549755813632 --csv %s/results.csv", f.dir);
    outcome o = run_stage("01_naive", args);
    cr_expect_eq(o.status, 1, "%s", o.err);
    cr_expect_eq(o.err_lines, 1, "%s", o.err);
    expect_old_files_and_remove(&f, "01_naive");

    static const char *const all_three[] = {"results.csv", "answer_indices.npy", "answer_probs.npy"};
    f = make_old_files(all_three, 3);
    snprintf(args, sizeof args, "--rows 2147483647 --cols 256 --csv %s/results.csv --output %s/answer", f.dir, f.dir);
    o = run_stage("06_fused_topk", args);
    cr_expect_eq(o.status, 1, "%s", o.err);
    cr_expect_eq(o.err_lines, 1, "%s", o.err);
    expect_old_files_and_remove(&f, "06_fused_topk");
}

/* Rows that fail verification are kept in the CSV, which replaces the old one, and the run exits 1
 * saying so. */
Test(programs, a_run_with_failed_rows_keeps_them_in_its_csv)
{
    char reason[256];
    if (!gpu_available(reason, sizeof reason))
        cr_skip_test("no CUDA device: %s", reason);
    static const char *const csv_only[] = {"results.csv"};
    old_files f = make_old_files(csv_only, 1);
    char args[256], path[128], csv[8192] = "";
    snprintf(args, sizeof args, "--n 1000 --range 500:1000 --iters 2 --warmup 0 --csv %s/results.csv", f.dir);
    const outcome o = run_stage("01_naive", args);
    cr_expect_eq(o.status, 1, "%s", o.err);
    cr_expect_str_eq(o.err, "run: 1 timing row(s) failed verification against the fp64 reference; the CSV keeps "
                            "them, marked FAIL\n");
    snprintf(path, sizeof path, "%s/results.csv", f.dir);
    FILE *in = fopen(path, "r");
    cr_assert_not_null(in);
    csv[fread(csv, 1, sizeof csv - 1, in)] = '\0';
    fclose(in);
    cr_expect(strstr(csv, "# gpu: ") == csv && strstr(csv, ",FAIL,") != NULL, "%s", csv);
    /* The header names the code: a commit line, and the stage's sources hash by make plots' rule. */
    char root[4096], command[4300], hash[64] = "", want[96];
    repo_root(root, sizeof root);
    snprintf(command, sizeof command, "sh '%s/plots/make_plots.sh' --sources 01_naive", root);
    FILE *p = popen(command, "r");
    cr_assert_not_null(p);
    cr_expect_not_null(fgets(hash, sizeof hash, p));
    cr_expect_eq(pclose(p), 0);
    snprintf(want, sizeof want, "\n# sources: %s", hash);
    cr_expect(strstr(csv, "\n# code: ") != NULL, "%s", csv);
    cr_expect(strstr(csv, want) != NULL, "want %s: %s", want, csv);
    remove(path);
    cr_expect_eq(rmdir(f.dir), 0, "a temporary is left in %s", f.dir);
}

/* At path, the header np.save writes for a vector of n elements of descr, then its n x 4 bytes of
 * data as a hole: a sparse file, as long as the header says, that takes no disk. */
static void save_sparse_vector(const char *path, const char *descr, size_t n)
{
    char dict[128];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu,), }", descr, n);
    while ((10 + len + 1) % 64)
        dict[len++] = ' ';
    dict[len++] = '\n';
    const unsigned char preamble[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)len,
                                        (unsigned char)(len >> 8)};
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fwrite(preamble, 1, sizeof preamble, f), sizeof preamble);
    cr_assert_eq(fwrite(dict, 1, (size_t)len, f), (size_t)len);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(truncate(path, (off_t)(sizeof preamble + (size_t)len + n * 4)), 0);
}

/* A per-row file whose header claims 500,000,000 values (2 GB) for a run of 4 rows: refused from
 * the header, for each of the three flags, before its data is read or room made for it: the
 * programs run with their address space capped at 1 GiB, where room for the data would be "out of
 * host memory", exit 1. */
Test(programs, a_per_row_file_of_another_length_is_refused_from_its_header)
{
    static const struct {
        const char *flag, *descr;
    } files[] = {{"--temperature", "<f4"}, {"--top-p", "<f4"}, {"--k", "<i4"}};
    char path[64], args[256], message[256];
    snprintf(path, sizeof path, "/tmp/per-row-2gb-%d.npy", (int)getpid());
    struct rlimit old;
    cr_assert_eq(getrlimit(RLIMIT_AS, &old), 0);
    const struct rlimit cap = {.rlim_cur = (rlim_t)1 << 30, .rlim_max = old.rlim_max};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        save_sparse_vector(path, files[i].descr, 500000000);
        snprintf(args, sizeof args, "--rows 4 --cols 100 --sample %s %s", files[i].flag, path);
        snprintf(message, sizeof message, "run: %s %s: it has 500000000 values and the logits 4 rows: give one a row\n",
                 files[i].flag, path);
        cr_assert_eq(setrlimit(RLIMIT_AS, &cap), 0);
        expect_usage_error("06_fused_topk", args, message);
        setrlimit(RLIMIT_AS, &old);
    }
    remove(path);
}

/* The files of the append-only test, for its teardown. */
static old_files append_only;

/* The teardown: append-only cleared from the directory and its files, however the test ended, so
 * that they can be removed; then they are. */
static void clear_append_only_and_remove(void)
{
    if (!*append_only.dir)
        return;
    set_attributes(append_only.dir, FS_APPEND_FL, false);
    DIR *d = opendir(append_only.dir);
    for (const struct dirent *e; d && (e = readdir(d)) != NULL;) {
        char path[sizeof append_only.dir + 256 + 1];
        snprintf(path, sizeof path, "%s/%s", append_only.dir, e->d_name);
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            set_attributes(path, FS_APPEND_FL, false);
            remove(path);
        }
    }
    if (d)
        closedir(d);
    rmdir(append_only.dir);
}

/* An output the rename at the end cannot put in place, an append-only file or a file in an
 * append-only directory (chattr +a), is refused at open, before the GPU: with no GPU this message
 * comes, not "no CUDA device"; the files are left as they were and no temporary beside them. */
Test(programs, append_only_outputs_are_refused_before_the_gpu, .fini = clear_append_only_and_remove)
{
    static const char *const csv_only[] = {"results.csv"};
    append_only = make_old_files(csv_only, 1);
    char csv[96], args[256], message[512];
    snprintf(csv, sizeof csv, "%s/results.csv", append_only.dir);
    const int e = set_attributes(csv, FS_APPEND_FL, true);
    if (e) {
        clear_append_only_and_remove(); /* Criterion runs no .fini after a skip */
        cr_skip_test("cannot set chattr +a on %s: %s (it takes root and a file system that keeps the attribute)", csv,
                     strerror(e));
    }
    snprintf(args, sizeof args, "--csv %s", csv);
    snprintf(message, sizeof message, "run: cannot write CSV file '%s': it is append-only (chattr +a): the finished "
             "file cannot replace it\n", csv);
    expect_usage_error("01_naive", args, message);
    cr_assert_eq(set_attributes(csv, FS_APPEND_FL, false), 0);

    cr_assert_eq(set_attributes(append_only.dir, FS_APPEND_FL, true), 0);
    snprintf(message, sizeof message, "run: cannot write CSV file '%s': its directory is append-only (chattr +a): the "
             "finished file cannot be renamed into place\n", csv);
    expect_usage_error("01_naive", args, message);
    snprintf(args, sizeof args, "--rows 4 --cols 100 --output %s/answer", append_only.dir);
    snprintf(message, sizeof message, "run: cannot write --output file '%s/answer_indices.npy': its directory is "
             "append-only (chattr +a): the finished file cannot be renamed into place\n", append_only.dir);
    expect_usage_error("06_fused_topk", args, message);
    cr_assert_eq(set_attributes(append_only.dir, FS_APPEND_FL, false), 0);
    expect_old_files_and_remove(&append_only, "append-only");
}
