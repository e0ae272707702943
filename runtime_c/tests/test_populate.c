/*
 * test_populate.c: big blocks on a kernel that refuses MADV_POPULATE_WRITE
 * (before Linux 5.14): this program's own madvise, which the runtime's
 * calls reach, refuses that advice with EINVAL as such a kernel does.  The
 * first big block asks once, is told no, and still holds zeroed, writable
 * memory (its pages fault in); the later ones are mapped with MAP_POPULATE
 * and never ask again; a block grown past its pages does not ask either.
 * Without the huge-page advice (a step of huge pages would be written,
 * not asked for: test_pages.c has that).
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

#include "../sgl_vbuf.h"
#include "check.h"

#define MB ((size_t)1 << 20)

static int asked; /* MADV_POPULATE_WRITE refused so far */

int madvise(void *addr, size_t len, int advice)
{
#ifdef MADV_POPULATE_WRITE
    if (advice == MADV_POPULATE_WRITE) {
        asked++;
        errno = EINVAL;
        return -1;
    }
#endif
    int (*real)(void *, size_t, int) = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "madvise");
    return real ? real(addr, len, advice) : 0;
}

/* n bytes at p are zero, then hold what is written */
static bool usable(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i += 4096)
        if (p[i] != 0) return false;
    memset(p, 7, n);
    return p[0] == 7 && p[n - 1] == 7;
}

int main(void)
{
#ifdef MADV_POPULATE_WRITE
    /* no huge-page advice: a whole 2 MiB step of huge pages is populated
     * by writing to it, without asking (sgl_pages.c) */
    setenv("SGL_MADVISE_HUGEPAGE", "0", 1);
    int64_t k1, k2, k3;
    unsigned char *a = sgl_block_alloc(24 * MB, true, &k1);
    CHECK(a != NULL && k1 > 0 && asked == 1);
    CHECK(a && usable(a, 24 * MB));
    unsigned char *b = sgl_block_alloc(40 * MB, true, &k2); /* longer than a: not a kept one */
    CHECK(b != NULL && k2 > 0 && asked == 1);
    CHECK(b && usable(b, 40 * MB));
    unsigned char *c = sgl_block_grow(b, k2, 72 * MB, &k3);
    CHECK(c != NULL && asked == 1 && c[40 * MB - 1] == 7);
    if (c) {
        memset(c + 40 * MB, 9, 32 * MB);
        CHECK(c[72 * MB - 1] == 9);
        sgl_block_free(c, k3);
    }
    if (a) sgl_block_free(a, k1);
#else
    CHECK(asked == 0); /* headers without the advice: MAP_POPULATE only */
#endif
    printf("%d passed, %d failed\n", n_passed, n_failed);
    return n_failed ? 1 : 0;
}
