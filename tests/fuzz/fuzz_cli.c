/* libFuzzer target for the shared command line: every input, split into arguments on NUL bytes,
 * goes to cli_parse, which must not crash, must keep cli.h's bounds when it accepts and must refuse
 * in one printable line (oracle.h). Built and run by `make fuzz`, which starts from corpus_cli/. */
#include <stdio.h>
#include <stdlib.h>

#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    cli_status st;
    char err[512];
    const char *broken = cli_run(data, n, &st, err, sizeof err);
    if (broken) {
        fprintf(stderr, "fuzz_cli: %s (returned %d)\n", broken, (int)st);
        abort();
    }
    return 0;
}
