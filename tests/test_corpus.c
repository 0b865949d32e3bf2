/* The fuzzers' regression corpora, tests/fuzz/corpus_npy and corpus_cli, replayed on every
 * `make test`, with or without clang: each file through the fuzz target's own run and checks
 * (fuzz/oracle.h), and its name says its outcome: accept-... is read or parsed, refuse-... is
 * refused as a usage error (NPY_BAD_FILE, CLI_ERROR) with the message its corpus's table below
 * gives it, so that it is refused by the check it stands for and not by another. A new input the
 * fuzzer finds joins the corpus under such a name, and a refused one joins the table too. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/oracle.h"

/* A refuse- file of a corpus and what its message must hold. */
typedef struct {
    const char *file, *message;
} refusal;

static const refusal npy_refusals[] = {
    {"refuse-data-too-long", "its shape needs 24 bytes of data, the file has 25"},
    {"refuse-descr-with-backslash-escape", "at byte 20, with a backslash escape, which this reader does not decode"},
    {"refuse-descr-with-newline", "its header has the string ''<f\\x0a4', 'fortran_order':...' at byte 20, not "
                                  "closed on its line"},
    {"refuse-descr-with-terminal-escape", "its element type '\\x1b[2J\\x1b[31m<f4' is not float32"},
    {"refuse-duplicate-key", "its header has 'descr' twice (again at byte 27)"},
    {"refuse-fortran-order", "Fortran order is not supported"},
    {"refuse-overflowing-shape", "its shape (68689669285, 1091126539866, 16) needs more than 18446744073709551615 "
                                 "bytes (SIZE_MAX)"},
    {"refuse-python2-long-in-version-3", "its header has '2L, 3L), }' at byte 63 where a dimension in decimal digits "
                                         "should be"},
    {"refuse-row-past-int-max", "its rows have 2147483648 logits (V), more than the kernels' limit of 2^31 - 1"},
    {"refuse-truncated-data", "its shape needs 24 bytes of data, the file has 23"},
    {"refuse-truncated-header", "its header is cut short: 40 of its 118 bytes"},
    {"refuse-unknown-key", "its header has the key 'x' at byte 68"},
    {"refuse-zero-dimension", "its shape (0, 3) has a dimension of length 0"},
};

static const refusal cli_refusals[] = {
    {"refuse-cols-past-a-row-index", "--cols: expected a count from 1 to 549755813632, like 8192 or 4K, got "
                                     "'1152921504606846976'"},
    {"refuse-dist-with-terminal-escape", "--dist: expected uniform, normal, outliers or zipf, got '\\x1b[2Jnormal'"},
    {"refuse-elements-past-a-grid", "--rows x --cols: 2 x 274877906944 is more than 549755813632 elements"},
    {"refuse-empty-csv-name", "--csv needs a file name"},
    {"refuse-flag-without-value", "--k needs a value"},
    {"refuse-k-zero", "--k: expected a whole number from 1 to 2147483647 or a .npy file of one a row, got '0'"},
    {"refuse-n-2-to-the-62", "--n: expected a count from 1 to 549755813632, like 1000, 10K or 1e6, got "
                             "'4611686018427387904'"},
    {"refuse-n-exponent-past-size-max", "--n: expected a count from 1 to 549755813632, like 1000, 10K or 1e6, got "
                                        "'2e19'"},
    {"refuse-n-past-size-max", "--n: expected a count from 1 to 549755813632, like 1000, 10K or 1e6, got "
                               "'18446744073709551616'"},
    {"refuse-n-with-newline", "--n: expected a count from 1 to 549755813632, like 1000, 10K or 1e6, got '1\\x0a2'"},
    {"refuse-range-not-finite", "--range: expected LO:HI with finite LO < HI, like 500:1000, got '0:inf'"},
    {"refuse-rows-past-a-grid", "--rows: expected a count from 1 to 2147483647, like 8192 or 4K, got '2147483648'"},
    {"refuse-rows-without-cols", "--rows and --cols go together"},
    {"refuse-seed-minus-one", "--seed: expected a whole number from 0 to 18446744073709551615, got '-1'"},
    {"refuse-seed-space-minus-one", "--seed: expected a whole number from 0 to 18446744073709551615, got ' -1'"},
    {"refuse-unknown-flag-with-newline", "unknown flag '--bo\\x0agus'"},
    {"refuse-unknown-flag-with-nul", "unknown flag '--bogus'"},
};

/* message: NULL for an accept- file, else what the refusal's message must hold. */
typedef void (*replay_fn)(const char *name, const uint8_t *bytes, size_t n, const char *message);

/* The message `refusals` gives the file `name`, or NULL when it has none. */
static const char *refusal_message(const refusal *refusals, size_t n_refusals, const char *name)
{
    for (size_t i = 0; i < n_refusals; i++)
        if (strcmp(refusals[i].file, name) == 0)
            return refusals[i].message;
    return NULL;
}

/* Every file of the corpus through `replay`; each refuse- file has its message in `refusals`, and
 * each message there has its file. */
static void replay_corpus(const char *corpus, replay_fn replay, const refusal *refusals, size_t n_refusals)
{
    char dir_path[4096];
    snprintf(dir_path, sizeof dir_path, "%s/%s", FUZZ_DIR, corpus);
    DIR *dir = opendir(dir_path);
    cr_assert_not_null(dir, "%s: %s", dir_path, strerror(errno));
    size_t files = 0, refused = 0;
    for (const struct dirent *e; (e = readdir(dir)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        const bool accept = strncmp(e->d_name, "accept-", 7) == 0;
        cr_assert(accept || strncmp(e->d_name, "refuse-", 7) == 0,
                  "%s/%s: a corpus file's name starts with accept- or refuse-", corpus, e->d_name);
        const char *message = accept ? NULL : refusal_message(refusals, n_refusals, e->d_name);
        cr_assert(accept || message, "%s/%s: give it its message in tests/test_corpus.c", corpus, e->d_name);
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir_path, e->d_name);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s: %s", path, strerror(errno));
        static uint8_t bytes[1 << 16];
        const size_t n = fread(bytes, 1, sizeof bytes, f);
        cr_assert(feof(f), "%s: longer than %zu bytes", path, sizeof bytes);
        fclose(f);
        replay(e->d_name, bytes, n, message);
        files++;
        refused += !accept;
    }
    closedir(dir);
    cr_assert_gt(files, 0, "%s holds no inputs", dir_path);
    cr_expect_eq(refused, n_refusals, "%s: %zu refuse- files, %zu messages in tests/test_corpus.c", corpus, refused,
                 n_refusals);
}

static void replay_npy(const char *name, const uint8_t *bytes, size_t n, const char *message)
{
    npy_logits a;
    int rc;
    char err[700];
    const char *broken = npy_run(bytes, n, &a, &rc, err, sizeof err);
    cr_expect_null(broken, "%s: %s", name, broken);
    cr_expect_eq(rc, message ? NPY_BAD_FILE : 0, "%s: returned %d (%s)", name, rc, err);
    cr_expect(!message || strstr(err, message) != NULL, "%s: the message '%s' lacks '%s'", name, err, message);
    npy_logits_free(&a);
}

static void replay_cli(const char *name, const uint8_t *bytes, size_t n, const char *message)
{
    cli_status st;
    char err[512];
    const char *broken = cli_run(bytes, n, &st, err, sizeof err);
    cr_expect_null(broken, "%s: %s", name, broken);
    cr_expect_eq(st, message ? CLI_ERROR : CLI_OK, "%s: returned %d (%s)", name, (int)st, err);
    cr_expect(!message || strstr(err, message) != NULL, "%s: the message '%s' lacks '%s'", name, err, message);
}

Test(corpus, npy_inputs)
{
    replay_corpus("corpus_npy", replay_npy, npy_refusals, sizeof npy_refusals / sizeof npy_refusals[0]);
}

Test(corpus, command_lines)
{
    replay_corpus("corpus_cli", replay_cli, cli_refusals, sizeof cli_refusals / sizeof cli_refusals[0]);
}
