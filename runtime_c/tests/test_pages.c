/*
 * test_pages.c: which 2 MiB steps of a big block ask the kernel to
 * populate them (MADV_POPULATE_WRITE, sgl_pages.c).  This program's own
 * madvise, which the runtime's calls reach, counts the asks.
 * 1. Huge pages as the kernel gives them: a whole aligned step that got a
 *    huge page is populated by writing to it and does not ask, every
 *    other step (the partial ones at the block's ends, a whole one the
 *    kernel gave small pages) asks once, so the asks are the steps less
 *    the block's huge pages (AnonHugePages of its mapping).
 * 2. The kernel's huge pages refused (this madvise turns MADV_HUGEPAGE
 *    into MADV_NOHUGEPAGE): every step asks, once.
 * 3. The advice refused as well (EINVAL, as before Linux 5.14): the first
 *    step asks, is told no, and the block still holds zeroed, writable
 *    memory; the next block does not ask (MAP_POPULATE).
 * Every page of the first two blocks is resident.  The huge-page watch
 * is off (its limit 10 s), so that a slow step cannot change the count.
 * Prints the counts, exits 1 on any failure.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../sgl_vbuf.h"
#include "check.h"

#define MB ((size_t)1 << 20)
#define STEP ((uintptr_t)2 << 20)

#ifdef MADV_POPULATE_WRITE
static int asks;          /* MADV_POPULATE_WRITE calls */
static bool no_huge;      /* MADV_HUGEPAGE becomes MADV_NOHUGEPAGE */
static bool refuse;       /* MADV_POPULATE_WRITE fails with EINVAL */

int madvise(void *addr, size_t len, int advice)
{
    if (advice == MADV_POPULATE_WRITE) {
        asks++;
        if (refuse) {
            errno = EINVAL;
            return -1;
        }
    }
    if (advice == MADV_HUGEPAGE && no_huge)
        advice = MADV_NOHUGEPAGE;
    int (*real)(void *, size_t, int) = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "madvise");
    return real ? real(addr, len, advice) : 0;
}

/* The 2 MiB steps of p .. p + n: the aligned pieces, partial at the ends. */
static int steps_of(const unsigned char *p, size_t n)
{
    int k = 0;
    for (uintptr_t a = (uintptr_t)p, end = a + n; a < end; k++)
        a = ((a + STEP) & ~(STEP - 1)) < end ? (a + STEP) & ~(STEP - 1) : end;
    return k;
}

/* The huge pages of the mapping that holds p (AnonHugePages), or -1. */
static long huge_pages(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return -1;
    char line[512];
    int in = 0;
    long kb = -1;
    while (kb < 0 && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            break;
    }
    fclose(f);
    return kb < 0 ? -1 : kb / 2048;
}

/* How many of the pages of p .. p + n are resident, or -1. */
static long resident(const unsigned char *p, size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = (n + page - 1) / page;
    unsigned char *vec = malloc(pages);
    long in = 0;
    if (!vec || mincore((void *)p, pages * page, vec) != 0) in = -1;
    for (size_t i = 0; in >= 0 && i < pages; i++)
        in += vec[i] & 1;
    free(vec);
    return in;
}

/* n bytes at p are zero, then hold what is written */
static bool usable(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i += 4096)
        if (p[i] != 0) return false;
    memset(p, 7, n);
    return p[0] == 7 && p[n - 1] == 7;
}
#endif

int main(void)
{
#ifdef MADV_POPULATE_WRITE
    if (!populate_advice()) {
        CHECK(true);
        printf("MADV_POPULATE_WRITE refused: nothing to count\n");
        printf("%d passed, %d failed\n", n_passed, n_failed);
        return 0;
    }
    unsetenv("SGL_MADVISE_HUGEPAGE");
    sgl_block_huge_limit(10000000000); /* never slow */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t len = 24 * MB + 5 * 4096; /* partial steps at both ends, wherever it lands */

    int64_t k1, k2, k3, k4;
    asks = 0; /* populate_advice's */
    unsigned char *a = sgl_block_alloc(len, false, &k1);
    long hp = a ? huge_pages(a) : -1;
    CHECK(a != NULL && k1 > 0 && hp >= 0);
    if (a && hp >= 0) {
        CHECK(asks == steps_of(a, len) - hp);
        CHECK(resident(a, len) == (long)((len + page - 1) / page));
        printf("1. %d steps, %ld huge pages, %d asks\n", steps_of(a, len), hp, asks);
    }

    no_huge = true;
    asks = 0;
    unsigned char *b = sgl_block_alloc(len, false, &k2); /* a is still held: a new mapping */
    CHECK(b != NULL && k2 > 0 && b != a);
    if (b) {
        CHECK(asks == steps_of(b, len));
        CHECK(huge_pages(b) == 0);
        CHECK(resident(b, len) == (long)((len + page - 1) / page));
        printf("2. %d steps, %d asks\n", steps_of(b, len), asks);
    }

    refuse = true;
    asks = 0;
    unsigned char *c = sgl_block_alloc(len, true, &k3);
    CHECK(c != NULL && k3 > 0 && asks == 1 && usable(c, len));
    unsigned char *d = sgl_block_alloc(len, true, &k4);
    CHECK(d != NULL && k4 > 0 && asks == 1 && usable(d, len));
    printf("3. %d asks\n", asks);
    unsigned char *all[] = {a, b, c, d};
    int64_t kinds[] = {k1, k2, k3, k4};
    for (int i = 0; i < 4; i++)
        if (all[i]) sgl_block_free(all[i], kinds[i]);
#else
    CHECK(true); /* headers without the advice: MAP_POPULATE, nothing to count */
#endif
    printf("%d passed, %d failed\n", n_passed, n_failed);
    return n_failed ? 1 : 0;
}
