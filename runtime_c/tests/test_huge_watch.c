/*
 * test_huge_watch.c: the huge-page watch of sgl_pages.c across threads.
 * Two threads map big blocks at once.  This program's own clock_gettime,
 * which the runtime's calls reach, makes thread A's CPU clock run 20 ms
 * ahead at each reading from its third on, once B is populating too (so
 * the step of A's that spans it is slow, as a VM host's faults would make
 * it), and holds thread B asleep at its third reading, inside its second
 * step, until A has its block (so has marked the process slow); A waits
 * at its third reading for B to be there.
 * B's own steps were fast, but the rest of its block must still be
 * populated with 4 KiB pages: both blocks end advised MADV_NOHUGEPAGE
 * ("nh"), and so is a block mapped after.  Where the kernel has no
 * transparent huge pages the blocks are only checked to be usable.  (The
 * clock, not madvise: a whole 2 MiB step of huge pages is populated by
 * writing to it.)
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
static _Thread_local int reads;   /* this thread's readings of its CPU clock */
static _Atomic int a_done;        /* thread A has its block */
static _Atomic int b_asleep;      /* thread B is at its third reading (asleep) */
static _Atomic int b_waited_ok;   /* B woke after that */

int clock_gettime(clockid_t id, struct timespec *ts)
{
    int (*real)(clockid_t, struct timespec *) =
        (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    int r = real ? real(id, ts) : -1;
    if (r != 0 || id != CLOCK_THREAD_CPUTIME_ID || who == 0) return r;
    reads++;
    /* B must be asleep in its second step before A is slow: were A slow
     * sooner, B would see it at its first step's end and read no more */
    if (who == 1 && reads == 3)
        for (int w = 0; w < 10000 && !atomic_load(&b_asleep); w++)
            usleep(1000);
    if (who == 1 && reads >= 3) { /* 20 ms more CPU time at each reading */
        int64_t ns = ts->tv_nsec + (int64_t)(reads - 2) * 20000000;
        ts->tv_sec += ns / 1000000000;
        ts->tv_nsec = ns % 1000000000;
    } else if (who == 2 && reads == 3) { /* B sleeps (no CPU time) until A is done */
        atomic_store(&b_asleep, 1);
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
