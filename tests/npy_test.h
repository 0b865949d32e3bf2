/* What the tests that need a .npy file on disk share, defined in test_npy.c. */
#ifndef TESTS_NPY_TEST_H
#define TESTS_NPY_TEST_H

#include <stddef.h>

/* An array saved to path as np.save saves it (npy_write), each step asserted. */
void save_npy(const char *path, const char *descr, size_t elem_size, const size_t *shape, int ndim, const void *data);

#endif
