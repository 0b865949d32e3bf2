/* The tests' switch for a file's attributes, defined in file_attributes.c. */
#ifndef TESTS_FILE_ATTRIBUTES_H
#define TESTS_FILE_ATTRIBUTES_H

#include <stdbool.h>

/* Sets or clears `flags` (FS_APPEND_FL, FS_IMMUTABLE_FL: chattr's +a and +i) among p's attributes:
 * 0, or the errno of what failed (EPERM without root, ENOTTY or EOPNOTSUPP where the file system
 * has no such attributes). */
int set_attributes(const char *p, int flags, bool on);

#endif
