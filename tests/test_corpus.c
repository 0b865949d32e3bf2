/* The fuzzers' regression corpora, tests/fuzz/corpus_npy and corpus_cli, replayed on every
 * `make test`, with or without clang: each file through the fuzz target's own run and checks
 * (fuzz/oracle.h), and its name says its outcome: accept-... is read or parsed, refuse-... is
 * refused as a usage error (NPY_BAD_FILE, CLI_ERROR). A new input the fuzzer finds joins the
 * corpus under such a name. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/oracle.h"

typedef void (*replay_fn)(const char *name, const uint8_t *bytes, size_t n, bool accept);

static void replay_corpus(const char *corpus, replay_fn replay)
{
    char dir_path[4096];
    snprintf(dir_path, sizeof dir_path, "%s/%s", FUZZ_DIR, corpus);
    DIR *dir = opendir(dir_path);
    cr_assert_not_null(dir, "%s: %s", dir_path, strerror(errno));
    int files = 0;
    for (const struct dirent *e; (e = readdir(dir)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        const bool accept = strncmp(e->d_name, "accept-", 7) == 0;
        cr_assert(accept || strncmp(e->d_name, "refuse-", 7) == 0,
                  "%s/%s: a corpus file's name starts with accept- or refuse-", corpus, e->d_name);
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir_path, e->d_name);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s: %s", path, strerror(errno));
        static uint8_t bytes[1 << 16];
        const size_t n = fread(bytes, 1, sizeof bytes, f);
        cr_assert(feof(f), "%s: longer than %zu bytes", path, sizeof bytes);
        fclose(f);
        replay(e->d_name, bytes, n, accept);
        files++;
    }
    closedir(dir);
    cr_assert_gt(files, 0, "%s holds no inputs", dir_path);
}

static void replay_npy(const char *name, const uint8_t *bytes, size_t n, bool accept)
{
    npy_logits a;
    int rc;
    char err[700];
    const char *broken = npy_run(bytes, n, &a, &rc, err, sizeof err);
    cr_expect_null(broken, "%s: %s", name, broken);
    cr_expect_eq(rc, accept ? 0 : NPY_BAD_FILE, "%s: returned %d (%s)", name, rc, err);
    npy_logits_free(&a);
}

static void replay_cli(const char *name, const uint8_t *bytes, size_t n, bool accept)
{
    cli_status st;
    char err[512];
    const char *broken = cli_run(bytes, n, &st, err, sizeof err);
    cr_expect_null(broken, "%s: %s", name, broken);
    cr_expect_eq(st, accept ? CLI_OK : CLI_ERROR, "%s: returned %d (%s)", name, (int)st, err);
}

Test(corpus, npy_inputs) { replay_corpus("corpus_npy", replay_npy); }

Test(corpus, command_lines) { replay_corpus("corpus_cli", replay_cli); }
