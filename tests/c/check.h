/* check.h — the assertion of the C unit tests: counts, and names the failure with its rank. */
#ifndef TEST_CHECK_H
#define TEST_CHECK_H

#include <stdio.h>

static int passed, failed, check_rank;

#define CHECK(cond, what)                                                                  \
    do {                                                                                   \
        if (cond)                                                                          \
            passed++;                                                                      \
        else {                                                                             \
            failed++;                                                                      \
            fprintf(stderr, "FAIL rank %d: %s (%s:%d)\n", check_rank, what, __FILE__, __LINE__); \
        }                                                                                  \
    } while (0)

#endif
