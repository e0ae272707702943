/*
 * test_huge_watch.c: the huge-page watch of sgl_blocks.c across threads.
 * Two threads map big blocks at once.  This program's own madvise, which
 * the runtime's calls reach, makes thread A's second populating step slow
 * (CPU time burnt in it, as a VM host's faults would be) and holds thread
 * B inside its second step until A has its block (so has marked the
 * process slow).  B's own
 * steps were fast, but the rest of its block must still be populated with
 * 4 KiB pages: both blocks end advised MADV_NOHUGEPAGE ("nh"), and so is
 * a block mapped after.  Where the kernel has no transparent huge pages
 * the blocks are only checked to be usable.
 * Prints the counts, exits 1 on any failure.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../sgl_vbuf.h"
#include "check.h"

#define MB ((size_t)1 << 20)

#ifdef MADV_POPULATE_WRITE
static _Thread_local int who;     /* 1: thread A, 2: thread B, 0: the others */
static _Thread_local int steps;   /* this thread's MADV_POPULATE_WRITE calls */
static _Atomic int a_done;        /* thread A has its block */
static _Atomic int b_waited_ok;   /* B's second step ended after that */

static int64_t cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int madvise(void *addr, size_t len, int advice)
{
    int (*real)(void *, size_t, int) = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "madvise");
    int r = real ? real(addr, len, advice) : 0;
    if (advice != MADV_POPULATE_WRITE || who == 0) return r;
    steps++;
    if (who == 1) {
        if (steps == 2) /* a slow step: 20 ms of this thread's CPU */
            for (int64_t t0 = cpu_ns(); cpu_ns() - t0 < 20000000;) {
            }
    } else if (steps == 2) { /* B waits (asleep: no CPU time) for A */
        for (int w = 0; w < 10000 && !atomic_load(&a_done); w++)
            usleep(1000);
        atomic_store(&b_waited_ok, atomic_load(&a_done));
    }
    return r;
}

struct job {
    int who;
    unsigned char *p;
    int64_t kind;
};

static void *map_one(void *arg)
{
    struct job *j = arg;
    who = j->who;
    j->p = sgl_block_alloc(40 * MB, false, &j->kind);
    if (who == 1) atomic_store(&a_done, 1);
    return NULL;
}

#endif

int main(void)
{
#ifdef MADV_POPULATE_WRITE
    if (!populate_advice()) {
        CHECK(true);
        printf("MADV_POPULATE_WRITE refused: nothing is watched\n");
        printf("%d passed, %d failed\n", n_passed, n_failed);
        return 0;
    }
    sgl_block_huge_limit(8000000); /* 8 ms: more than a real step of B takes, even on a slow host */
    struct job b = {2, NULL, 0}, a = {1, NULL, 0};
    pthread_t tb, ta;
    CHECK(pthread_create(&tb, NULL, map_one, &b) == 0);
    CHECK(pthread_create(&ta, NULL, map_one, &a) == 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK(a.p != NULL && b.p != NULL);
    CHECK(atomic_load(&b_waited_ok) == 1);
    int64_t kc;
    unsigned char *c = sgl_block_alloc(20 * MB, false, &kc);
    CHECK(c != NULL);
    bool thp = access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0 &&
               a.p && vm_flag(a.p, "hg") >= 0;
    if (thp && a.p && b.p && c) {
        CHECK(vm_flag(a.p, "nh") == 1 && vm_flag(a.p, "hg") == 0);
        CHECK(vm_flag(b.p, "nh") == 1 && vm_flag(b.p, "hg") == 0);
        CHECK(vm_flag(b.p + 40 * MB - 1, "nh") == 1);
        CHECK(vm_flag(c, "nh") == 1 && vm_flag(c, "hg") == 0);
    }
    printf("huge pages: %s\n", thp ? "checked" : "not in this kernel");
    struct job *all[] = {&a, &b};
    for (int i = 0; i < 2; i++)
        if (all[i]->p) {
            memset(all[i]->p, 5, 40 * MB);
            CHECK(all[i]->p[0] == 5 && all[i]->p[40 * MB - 1] == 5);
            sgl_block_free(all[i]->p, all[i]->kind);
        }
    if (c) sgl_block_free(c, kc);
#else
    CHECK(true); /* headers without the advice: MAP_POPULATE, never watched */
#endif
    printf("%d passed, %d failed\n", n_passed, n_failed);
    return n_failed ? 1 : 0;
}
