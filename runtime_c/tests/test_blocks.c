/*
 * test_blocks.c: the big blocks of sgl_blocks.c, kept for reuse once
 * freed: the same pages for the next block that fits (zeroed when asked
 * for), a longer kept block split, a shorter one grown, and every kept
 * block unmapped after its time (the resident memory drops).  Under
 * AddressSanitizer nothing is kept and only the contents are checked.
 * Prints the counts, exits 1 on any failure.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sgl_vbuf.h"
#include "check.h"

#define MB ((size_t)1 << 20)

/* this process's resident memory, in bytes (VmRSS), or -1 */
static long long rss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %lld kB", &kb) == 1) break;
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

static bool all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i += 4093)
        if (p[i] != 0) return false;
    return n == 0 || p[n - 1] == 0;
}

int main(void)
{
#if defined(__SANITIZE_ADDRESS__)
    bool keeps = false;
#else
    bool keeps = true;
#endif
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    /* freed, then the same length again: the same pages, zeroed on request */
    int64_t k1, k2;
    unsigned char *a = sgl_block_alloc(20 * MB, false, &k1);
    CHECK(a != NULL && k1 >= (int64_t)(20 * MB));
    memset(a, 0xab, 20 * MB);
    sgl_block_free(a, k1);
    unsigned char *b = sgl_block_alloc(20 * MB, true, &k2);
    CHECK(b != NULL && all_zero(b, 20 * MB));
    if (keeps) CHECK(b == a);
    memset(b, 0xcd, 20 * MB);

    /* a few bytes longer: the kept block grown (its pages stay) */
    sgl_block_free(b, k2);
    size_t more = 20 * MB + 5000;
    unsigned char *c = sgl_block_alloc(more, false, &k1);
    CHECK(c != NULL && k1 >= (int64_t)more);
    if (keeps) CHECK(c[0] == 0xcd && c[20 * MB - 1] == 0xcd);
    memset(c, 1, more); /* every byte is there */
    sgl_block_free(c, k1);

    /* a block much longer than asked for: split, the rest kept for the next */
    unsigned char *d = sgl_block_alloc(40 * MB, false, &k1);
    CHECK(d != NULL);
    sgl_block_free(d, k1);
    unsigned char *e = sgl_block_alloc(18 * MB, false, &k2);
    CHECK(e != NULL && k2 >= (int64_t)(18 * MB));
    if (keeps) CHECK(e == d && (size_t)k2 == (18 * MB + page - 1) / page * page);
    int64_t k3;
    unsigned char *f = sgl_block_alloc(19 * MB, true, &k3);
    CHECK(f != NULL && k3 >= (int64_t)(19 * MB) && all_zero(f, 19 * MB));
    if (keeps) CHECK(f == d + k2);
    memset(e, 2, 18 * MB);
    memset(f, 3, 19 * MB);
    CHECK(e[18 * MB - 1] == 2 && f[0] == 3);
    sgl_block_free(e, k2);
    sgl_block_free(f, k3);

    /* kept at most about a second: the resident memory drops after it */
    unsigned char *g = sgl_block_alloc(64 * MB, false, &k1);
    CHECK(g != NULL);
    memset(g, 4, 64 * MB);
    long long before = rss();
    sgl_block_free(g, k1);
    long long dropped = -1;
    for (int i = 0; i < 40 && dropped < (long long)(48 * MB); i++) {
        usleep(100000);
        dropped = before - rss();
    }
    CHECK(before > 0 && dropped >= (long long)(48 * MB));

    printf("%d passed, %d failed\n", n_passed, n_failed);
    return n_failed ? 1 : 0;
}
