/*
 * check.h: the checks of the runtime's C unit tests (test_values.c,
 * test_ser.c): CHECK(cond) counts a pass or prints the failed condition
 * and its line; each test's main prints the counts and exits 1 on any
 * failure.
 */
#ifndef SGL_TEST_CHECK_H
#define SGL_TEST_CHECK_H

#include <stdbool.h>
#include <stdio.h>

static int n_passed, n_failed;

static void check(bool ok, const char *what, int line)
{
    if (ok) {
        n_passed++;
    } else {
        n_failed++;
        printf("FAIL line %d: %s\n", line, what);
    }
}

#define CHECK(cond) check((cond), #cond, __LINE__)

#endif /* SGL_TEST_CHECK_H */
