/*
 * check.h: the checks of the runtime's C unit tests (test_values.c,
 * test_ser.c): CHECK(cond) counts a pass or prints the failed condition
 * and its line; each test's main prints the counts and exits 1 on any
 * failure; vm_flag reads a mapping's flags, populate_advice asks the
 * kernel whether it populates on advice.
 */
#ifndef SGL_TEST_CHECK_H
#define SGL_TEST_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

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

/* Whether the VmFlags of the mapping that holds p (/proc/self/smaps) have
 * the two-letter flag: 1 or 0, -1 if they could not be read. */
static inline int vm_flag(const void *p, const char *flag)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return -1;
    char line[512];
    int in = 0, found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        else if (in && strncmp(line, "VmFlags:", 8) == 0) {
            found = 0;
            for (char *t = strtok(line + 8, " \n"); t; t = strtok(NULL, " \n"))
                if (strcmp(t, flag) == 0) found = 1;
        }
    }
    fclose(f);
    return found;
}

/* Whether the kernel populates on MADV_POPULATE_WRITE (Linux 5.14 on):
 * before, the runtime maps big blocks with MAP_POPULATE, not watched. */
static inline bool populate_advice(void)
{
#ifdef MADV_POPULATE_WRITE
    size_t len = (size_t)1 << 16;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    bool ok = madvise(p, len, MADV_POPULATE_WRITE) == 0;
    munmap(p, len);
    return ok;
#else
    return false;
#endif
}

#endif /* SGL_TEST_CHECK_H */
