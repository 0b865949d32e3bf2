/* libFuzzer target for the .npy reader: every input is a whole file handed to npy_parse_logits,
 * the parser npy_read_logits uses, and the outcome must keep npy.h's contract (oracle.h). Built
 * and run by `make fuzz`, which starts from corpus_npy/. */
#include <stdio.h>
#include <stdlib.h>

#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    npy_logits a;
    int rc;
    char err[700];
    const char *broken = npy_run(data, n, &a, &rc, err, sizeof err);
    if (broken) {
        fprintf(stderr, "fuzz_npy: %s (returned %d)\n", broken, rc);
        abort();
    }
    npy_logits_free(&a);
    return 0;
}
