/* A stage program run from the tests as a user runs it, defined in run_stage.c. */
#ifndef TESTS_RUN_STAGE_H
#define TESTS_RUN_STAGE_H

#include <stddef.h>

typedef struct {
    int status;                /* the exit status */
    char out[8192], err[8192]; /* what it wrote on stdout and stderr, the first 8191 bytes of each */
    int err_lines;             /* the newlines on stderr */
} outcome;

/* The repository root into buf: this test binary is <root>/tests/build/<name>. */
void repo_root(char *buf, size_t len);

/* <root>/<stage>/run with `args`, words as a shell reads them; asserts that it exited (no signal). */
outcome run_stage(const char *stage, const char *args);

#endif
