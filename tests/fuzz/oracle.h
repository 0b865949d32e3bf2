/* One input, run and judged: what the fuzz targets do with every input, and what the Criterion
 * tests do with their corpora (tests/test_corpus.c) and with the .npy cases of tests/test_npy.c,
 * so that a fuzzer and `make test` judge an input the same way. Each returns NULL when the
 * outcome keeps its contract, else what it breaks. */
#ifndef TESTS_FUZZ_ORACLE_H
#define TESTS_FUZZ_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../common/cli.h"
#include "../../06_fused_topk/host/npy.h"

/* s is one line of printable ASCII (' ' to '~'), not empty. */
bool one_printable_line(const char *s);

/* npy_parse_logits on the n bytes as a whole file, into *a (the caller frees it) with *rc what it
 * returned and err its message. Its contract: 0 with logits npy.h allows, whose bytes are the
 * input's last ones; or NPY_BAD_FILE or NPY_HOST_FAILED with no data and one printable line. */
const char *npy_run(const uint8_t *data, size_t n, npy_logits *a, int *rc, char *err, size_t err_len);

/* cli_parse with every flag of every stage's tables, then the checks stage 06 makes (cli_check and
 * its own), on the command line the bytes spell: "run", then one argument per piece of the bytes,
 * each piece ended by a NUL byte (or by the end, when bytes are left), so that an argument may hold
 * any other byte, a newline or an escape included. *st is what it returned and err its
 * message. Its contract: CLI_OK with options inside the bounds cli.h gives, CLI_HELP, or CLI_ERROR
 * with one printable line in err. */
const char *cli_run(const uint8_t *data, size_t n, cli_status *st, char *err, size_t err_len);

#endif
