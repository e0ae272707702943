/*
 * test_blocks.c: the big blocks of sgl_blocks.c, kept for reuse once
 * freed: the same pages for the next block that fits (zeroed when asked
 * for), a longer kept block split, a shorter one grown, and every kept
 * block unmapped after its time (the resident memory drops), but not
 * during a superstep on threads (sgl_unmap_hold), only after it; a vector
 * that grows a lot unmaps the other kept blocks before its new pages are
 * populated; a forked child neither inherits the kept blocks nor breaks
 * them; sgl_block_grow keeps a block's bytes and takes kept blocks' pages
 * for its new part; a block of 4-16 MiB takes a kept one; two threads allocating and freeing blocks of random lengths while
 * a third runs supersteps never get overlapping or non-zeroed blocks; a
 * mapped block is advised for huge pages (MADV_HUGEPAGE: the kernel shows
 * "hg" in its VmFlags) unless SGL_MADVISE_HUGEPAGE=0, and advised against
 * them ("nh") once populating them was slow; small blocks start a cache
 * line and fill whole ones.
 * Under AddressSanitizer nothing is kept (freed blocks are queued
 * and unmapped) and the same resident-memory checks hold.
 * Prints the counts, exits 1 on any failure.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sgl_vbuf.h"
#include "check.h"

#define MB ((size_t)1 << 20)

/* How many of the pages of p .. p + n are resident (mincore), or -1. */
static long long resident_pages(const void *p, size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)p & ~(uintptr_t)(page - 1);
    size_t pages = ((uintptr_t)p + n - lo + page - 1) / page;
    unsigned char *vec = malloc(pages);
    if (!vec || mincore((void *)lo, pages * page, vec) != 0) {
        free(vec);
        return -1;
    }
    long long in = 0;
    for (size_t i = 0; i < pages; i++)
        in += vec[i] & 1;
    free(vec);
    return in;
}

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

/* Stress: a thread allocates and frees blocks of 16-56 MiB and a few
 * bytes (some zeroed), each tagged on every third page with its own
 * number, checked before it is freed. */
static _Atomic int stress_stop, stress_bad;

static void *stress_worker(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg * 7919u + 1;
    uint64_t tag = (uint64_t)(uintptr_t)arg << 32;
    struct {
        unsigned char *p;
        size_t n;
        int64_t kind;
        uint64_t tag;
    } live[3] = {{0}};
    while (!atomic_load(&stress_stop)) {
        int j = rand_r(&seed) % 3;
        if (live[j].p) {
            for (size_t o = 0; o + 8 <= live[j].n; o += 3 * 4096) {
                uint64_t t;
                memcpy(&t, live[j].p + o, 8);
                if (t != live[j].tag) {
                    atomic_fetch_add(&stress_bad, 1);
                    break;
                }
            }
            sgl_block_free(live[j].p, live[j].kind);
            live[j].p = NULL;
            continue;
        }
        size_t n = 16 * MB + (size_t)(rand_r(&seed) % (int)(40 * MB)) + (size_t)(rand_r(&seed) % 4096);
        bool zero = rand_r(&seed) & 1;
        unsigned char *p = sgl_block_alloc(n, zero, &live[j].kind);
        if (!p || live[j].kind < (int64_t)n || (zero && !all_zero(p, n))) {
            atomic_fetch_add(&stress_bad, 1);
            if (p) sgl_block_free(p, live[j].kind);
            continue;
        }
        uint64_t t = ++tag;
        for (size_t o = 0; o + 8 <= n; o += 3 * 4096) memcpy(p + o, &t, 8);
        live[j].p = p;
        live[j].n = n;
        live[j].tag = t;
    }
    for (int j = 0; j < 3; j++)
        if (live[j].p) sgl_block_free(live[j].p, live[j].kind);
    return NULL;
}

static void *stress_supersteps(void *arg)
{
    (void)arg;
    while (!atomic_load(&stress_stop)) {
        sgl_unmap_hold();
        usleep(3000);
        sgl_unmap_release();
        usleep(500);
    }
    return NULL;
}

int main(void)
{
#if defined(__SANITIZE_ADDRESS__)
    bool keeps = false;
#else
    bool keeps = true;
#endif
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    /* a growing block takes kept pages on Linux 6.17 and later only */
    struct utsname u;
    int major = 0, minor = 0;
    bool fills = keeps && uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
                 (major > 6 || (major == 6 && minor >= 17));

    /* freed, then the same length again: the same pages, zeroed on request */
    int64_t k1, k2;
    unsigned char *a = sgl_block_alloc(20 * MB, false, &k1);
    CHECK(a != NULL && k1 >= (int64_t)(20 * MB));
    /* a new mapping, advised for huge pages where the kernel has them */
    const char *hp = getenv("SGL_MADVISE_HUGEPAGE");
    int hg = vm_flag(a, "hg"), nh = vm_flag(a, "nh");
    bool thp = access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0 && hg >= 0;
    if (thp) {
        if (hp && strcmp(hp, "0") == 0)
            CHECK(hg == 0 && nh == 0);
        else if (hp && strcmp(hp, "1") == 0)
            CHECK(hg == 1);
        else /* watched: given, or withdrawn where populating them was slow */
            CHECK(hg + nh == 1);
        printf("huge-page advice: %s\n", hg ? "given" : nh ? "given, then withdrawn" : "left out");
    }
    /* populated at once, every page, whichever way (written 2 MiB at a
     * time on huge pages, advised else, MAP_POPULATE on old kernels) */
    if (populate_advice())
        CHECK(a && resident_pages(a, 20 * MB) == (long long)((20 * MB + page - 1) / page));
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

    /* sgl_block_grow: a mapped block grows with its bytes; no other block */
    unsigned char *gr = sgl_block_alloc(20 * MB, false, &k1);
    CHECK(gr != NULL);
    memset(gr, 9, 20 * MB);
    unsigned char *gr2 = sgl_block_grow(gr, k1, 50 * MB, &k2);
    CHECK(gr2 != NULL && k2 >= (int64_t)(50 * MB) && gr2[0] == 9 && gr2[20 * MB - 1] == 9);
    if (gr2) {
        memset(gr2 + 20 * MB, 1, 30 * MB);
        sgl_block_free(gr2, k2);
    }
    int64_t ks;
    void *small = sgl_block_alloc(1000, false, &ks);
    CHECK(small != NULL && sgl_block_grow(small, ks, 5000, &k2) == NULL);
    sgl_block_free(small, ks);

    /* the watch (SGL_MADVISE_HUGEPAGE unset): a step slower than the limit
     * (here every step) advises the whole block MADV_NOHUGEPAGE, one
     * mapping still, and every block mapped after; in a child, which has
     * no kept block */
    if (!hp && thp && populate_advice()) {
        fflush(stdout);
        pid_t w = fork();
        if (w == 0) {
            sgl_block_huge_limit(0);
            int64_t kw, kv;
            unsigned char *s1 = sgl_block_alloc(20 * MB, false, &kw);
            bool ok = s1 && vm_flag(s1, "nh") == 1 && vm_flag(s1 + 20 * MB - 1, "nh") == 1 &&
                      vm_flag(s1, "hg") == 0 && all_zero(s1, 20 * MB);
            unsigned char *s2 = sgl_block_alloc(30 * MB, false, &kv);
            ok = ok && s2 && vm_flag(s2, "nh") == 1 && vm_flag(s2, "hg") == 0;
            _exit(ok ? 0 : 1);
        }
        int ws = -1;
        CHECK(w > 0 && waitpid(w, &ws, 0) == w && WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    }

    /* a forked child: its own blocks work, the parent's kept one stays */
    unsigned char *h = sgl_block_alloc(24 * MB, false, &k1);
    CHECK(h != NULL);
    memset(h, 5, 24 * MB);
    sgl_block_free(h, k1);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int64_t kc;
        unsigned char *c2 = sgl_block_alloc(24 * MB, true, &kc);
        bool ok = c2 != NULL && all_zero(c2, 24 * MB);
        if (c2) sgl_block_free(c2, kc);
        _exit(ok ? 0 : 1);
    }
    int status = -1;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
    unsigned char *h2 = sgl_block_alloc(24 * MB, false, &k2);
    CHECK(h2 != NULL);
    if (keeps) CHECK(h2 == h && h2[24 * MB - 1] == 5);
    sgl_block_free(h2, k2);

    /* growing a lot: the other kept blocks go before the new pages come */
    unsigned char *parts[3];
    int64_t kinds[3];
    for (int i = 0; i < 3; i++) {
        parts[i] = sgl_block_alloc(64 * MB, false, &kinds[i]);
        CHECK(parts[i] != NULL);
        memset(parts[i], 6, 64 * MB);
    }
    long long live = rss();
    for (int i = 0; i < 3; i++) sgl_block_free(parts[i], kinds[i]);
    unsigned char *big = sgl_block_alloc(96 * MB, false, &k1);
    CHECK(big != NULL);
    memset(big, 7, 96 * MB);
    long long grown = rss();
    CHECK(live > 0 && grown > 0 && grown < live - (long long)(64 * MB));
    sgl_block_free(big, k1);
    usleep(1500000); /* whatever is kept goes */

    /* not unmapped during a superstep on threads, even when its time is
     * up; after the superstep's release, soon */
    unsigned char *s1 = sgl_block_alloc(64 * MB, false, &k1);
    CHECK(s1 != NULL);
    memset(s1, 8, 64 * MB);
    sgl_unmap_hold();
    long long held = rss();
    sgl_block_free(s1, k1);
    usleep(1500000);
    long long during = rss();
    CHECK(held > 0 && during > held - (long long)(16 * MB));
    sgl_unmap_release();
    long long after = during;
    for (int i = 0; i < 40 && during - after < (long long)(48 * MB); i++) {
        usleep(100000);
        after = rss();
    }
    CHECK(during - after >= (long long)(48 * MB));

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

    /* nothing kept now.  A block grown by 2 MiB or more takes the pages of
     * kept blocks for its new part (populated already: the resident memory
     * does not grow), keeps its own bytes, and a forked child inherits the
     * moved pages; a kept block longer than needed is split, its rest kept
     * when it is a big one, else unmapped */
    unsigned char *x = sgl_block_alloc(20 * MB, false, &k1);
    unsigned char *y = sgl_block_alloc(24 * MB, false, &k2);
    CHECK(x != NULL && y != NULL);
    memset(x, 0x11, 20 * MB);
    memset(y, 0x22, 24 * MB);
    sgl_block_free(y, k2);
    long long r0 = rss();
    int64_t kx;
    unsigned char *x2 = sgl_block_grow(x, k1, 40 * MB, &kx);
    CHECK(x2 != NULL && kx >= (int64_t)(40 * MB) && x2[0] == 0x11 && x2[20 * MB - 1] == 0x11);
    long long r1 = rss();
    if (fills) /* y's first 20 MiB moved in, its last 4 unmapped */
        CHECK(x2[20 * MB] == 0x22 && x2[40 * MB - 1] == 0x22 && r1 <= r0);
    memset(x2 + 20 * MB, 3, 20 * MB);
    fflush(stdout);
    pid_t pid2 = fork();
    if (pid2 == 0)
        _exit(x2[20 * MB] == 3 && x2[40 * MB - 1] == 3 && x2[0] == 0x11 ? 0 : 1);
    CHECK(pid2 > 0 && waitpid(pid2, &status, 0) == pid2 && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
    /* the grown block is two mappings now: growing it again may fail
     * (mremap cannot resize across them), which leaves it as it was */
    unsigned char *x3 = sgl_block_grow(x2, kx, 44 * MB, &k3);
    if (x3) {
        x2 = x3;
        kx = k3;
        memset(x2 + 40 * MB, 3, 4 * MB);
    }
    CHECK(x2[0] == 0x11 && x2[20 * MB - 1] == 0x11 && x2[20 * MB] == 3 && x2[40 * MB - 1] == 3);
    sgl_block_free(x2, kx);
    /* kept: x2.  Its first 20 MiB for w, the rest kept (a big one); w
     * grown by 10 MiB takes half of that rest, the other half unmapped */
    unsigned char *w = sgl_block_alloc(20 * MB, false, &k1);
    CHECK(w != NULL);
    if (fills) CHECK(w == x2);
    memset(w, 0x44, 20 * MB);
    long long r2 = rss();
    unsigned char *w2 = sgl_block_grow(w, k1, 30 * MB, &k2);
    CHECK(w2 != NULL && w2[0] == 0x44 && w2[20 * MB - 1] == 0x44);
    if (fills)
        CHECK(w2[20 * MB] == 3 && w2[30 * MB - 1] == 3 && rss() <= r2);
    memset(w2 + 20 * MB, 6, 10 * MB);
    unsigned char *fresh = sgl_block_alloc(20 * MB, true, &k1);
    CHECK(fresh != NULL && all_zero(fresh, 20 * MB)); /* nothing kept: new pages */
    memset(fresh, 7, 20 * MB);
    CHECK(w2[20 * MB] == 6 && w2[30 * MB - 1] == 6 && w2[0] == 0x44);
    sgl_block_free(fresh, k1);
    sgl_block_free(w2, k2);

    /* kept: fresh's and w2's blocks.  A block of 4 to 16 MiB takes a kept
     * one that holds it (zeroed when asked for), and goes back to the kept
     * ones when freed; one of less than 4 MiB is malloc'd */
    int64_t km, km2;
    unsigned char *mid = sgl_block_alloc(10 * MB, true, &km);
    CHECK(mid != NULL && all_zero(mid, 10 * MB));
    CHECK(keeps ? km >= (int64_t)(10 * MB) : km == 0);
    memset(mid, 9, 10 * MB);
    sgl_block_free(mid, km);
    unsigned char *mid2 = sgl_block_alloc(9 * MB, false, &km2);
    CHECK(mid2 != NULL);
    if (keeps) CHECK(mid2 == mid && mid2[9 * MB - 1] == 9);
    memset(mid2, 1, 9 * MB);
    unsigned char *low = sgl_block_alloc(3 * MB, false, &k1);
    CHECK(low != NULL && k1 == 0);
    memset(low, 2, 3 * MB);
    sgl_block_free(low, k1);
    sgl_block_free(mid2, km2);

    pthread_t th[3];
    bool started = true;
    for (int i = 0; i < 3; i++)
        started &= pthread_create(&th[i], NULL, i < 2 ? stress_worker : stress_supersteps,
                                  (void *)(uintptr_t)(i + 1)) == 0;
    CHECK(started);
    sleep(2);
    atomic_store(&stress_stop, 1);
    for (int i = 0; started && i < 3; i++) pthread_join(th[i], NULL);
    CHECK(atomic_load(&stress_bad) == 0);

    /* small blocks (sgl_small.c; not in builds with the registry, whose
     * kind is then malloc's 0) start a cache line and fill whole lines,
     * new ones and cached ones: no two threads' blocks share a line */
    for (int round = 0; round < 2; round++) {
        void *blk[40];
        int64_t kind[40];
        int smalls = 0;
        for (int i = 0; i < 40; i++) {
            size_t all = 1 + (size_t)i * (SGL_SMALL_MAX - 1) / 39;
            blk[i] = sgl_block_alloc(all, false, &kind[i]);
            CHECK(blk[i] != NULL && kind[i] <= 0);
            if (kind[i] < 0) {
                smalls++;
                CHECK((uintptr_t)blk[i] % 64 == 0);
                CHECK(((size_t)64 << (-1 - kind[i])) >= all);
            }
        }
        for (int i = 0; i < 40; i++)
            sgl_block_free(blk[i], kind[i]);
        CHECK(smalls == 0 || smalls == 40);
    }

    printf("%d passed, %d failed\n", n_passed, n_failed);
    return n_failed ? 1 : 0;
}
