/* sgl_blocks.c: the memory blocks of vector buffers (sgl_vbuf.h): big
 * ones mapped, kept for reuse once freed, then unmapped by a background
 * thread, small ones from a per-thread cache (sgl_small.c), the others
 * malloc'd.  A block's kind (sgl_vbuf's `mapped`) says which: the bytes
 * mapped (> 0), malloc'd (0), or a small block of class -1 - kind (< 0). */
#define _GNU_SOURCE /* MAP_ANONYMOUS, MAP_POPULATE; sched_getcpu, sched_setaffinity */
#include "sgl_vbuf.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* Buffers of at least MAP_MIN bytes are mapped, then populated
 * (sgl_pages.c). */
#define MAP_MIN SGL_BLOCK_MAP_MIN

/* Unmapping a big buffer costs a fifth to a quarter of mapping it (the
 * kernel frees every page; 400 MB on the 2-core VM under load: 0.26-0.37 s
 * against 1.2-1.4 s), and the last reference often drops at the end of a
 * computation (reduce's hsum frees its input as it returns).  One
 * background thread unmaps such buffers instead, in UNMAP_CHUNK chunks:
 * - It is started with the first big mapping, not where a buffer is
 *   freed, so that no computation pays for creating a thread.
 * - It runs at nice 10, so that it takes a core only when the program's
 *   threads leave one free.  A thread created at nice 0 where the last
 *   reference dropped started next to the threads that finish the
 *   computation and, with as many threads as cores (reduce at 1x2 on 2
 *   cores), could take the core of one of them: in sched traces on the
 *   loaded 2-core VM it ran 3 ms (median of 9) inside the timed call.  Not
 *   nice 19: the process exits once the chunk in progress is unmapped, and
 *   a thread at nice 19 gets little of a loaded core (reduce's process
 *   exited 0.14 s later, median of 8, with 32 MiB chunks).
 * - Nice 10 does not keep it off a busy core (Linux 6.18's EEVDF on the
 *   2-core VM: it preempted its waker within 0.05 ms, for 3-6 ms), so
 *   its waker moves it off its own CPU first (unmap_avoid_me), in a
 *   process that is the only one of its run: with several MPI ranks the
 *   other CPUs are likely another rank's, and the move made matvec at
 *   2x1 (2 ranks of 1 thread) bimodal, 77 or 105-128 ms (median of 9:
 *   85 -> 105 ms).
 * - Not woken during a superstep on threads (sgl_unmap_hold, in
 *   sgl_local.c), where every core runs a child or the team's barrier:
 *   matvec at 1x2 ended 3-6 ms late in half the runs, its last child
 *   waking it on freeing the rows' 128 MB.  The master's last
 *   sgl_unmap_release after the join wakes it instead.
 * - The next big mapping (unmap_wait) unmaps the chunks still queued
 *   itself, at its own priority, and waits only for the chunk in
 *   progress, so that the peak memory stays what it was.
 * At most UNMAP_QUEUE_MAX buffers wait; more are unmapped by the caller. */
#define UNMAP_CHUNK ((size_t)8 << 20)
#define UNMAP_QUEUE_MAX 8

/* Freed big buffers are kept for reuse first, as jemalloc's decay does:
 * at most KEEP_MAX of them, for at most KEEP_NS (CLOCK_MONOTONIC), by
 * the process (any thread).  A big allocation takes one (kept_take)
 * instead of mapping and populating new pages: an iterative program that
 * frees and allocates vectors of the same length every iteration maps
 * them once, and the PSRS sort's children copy their buckets into the
 * pages of the vector they were scattered from.  Where none is kept, or
 * one must grow by more than an eighth, every other kept buffer is
 * unmapped first (before the new pages are populated), so that the peak
 * memory of a program whose vectors grow stays what it was; one freed
 * while KEEP_MAX are kept sends the oldest to be unmapped.  The
 * background thread unmaps those kept longer than KEEP_NS, after the
 * superstep on threads that runs then, if any.  Kept buffers are not
 * inherited by a fork (MADV_DONTFORK: the parent's reuse would
 * otherwise copy every page written).  Without the thread, or under
 * AddressSanitizer (where a use of a freed vector must fault, as it does
 * once the vector is unmapped), nothing is kept. */
#define KEEP_MAX 4
#define KEEP_NS ((int64_t)1000000000)
#if defined(__SANITIZE_ADDRESS__)
#define SGL_BLOCKS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SGL_BLOCKS_ASAN 1
#endif
#endif
#ifdef SGL_BLOCKS_ASAN
#define KEEP_ON false
#else
#define KEEP_ON true
#endif

static pthread_mutex_t unmap_mu = PTHREAD_MUTEX_INITIALIZER;
/* broadcast when a buffer is queued and when a chunk is done */
static pthread_cond_t unmap_cv = PTHREAD_COND_INITIALIZER;
/* under unmap_mu: the queue (a ring of the parts not yet taken), the
 * chunks being unmapped now, and whether the thread runs */
static struct {
    char *p;
    size_t len;
} unmap_q[UNMAP_QUEUE_MAX];
static int unmap_head, unmap_count, unmap_busy;
static bool unmap_started, unmap_tried;
/* a buffer was queued or kept during a hold, the thread not woken (set
 * under unmap_mu by the children of the superstep, read after their join) */
static _Atomic bool unmap_pending;
/* under unmap_mu: the releases that woke the thread */
static unsigned unmap_released;
/* supersteps on threads running (sgl_unmap_hold) */
static _Atomic int unmap_holds;
#if defined(__linux__) && defined(CPU_SET)
/* under unmap_mu: the thread's id and the CPUs it started with */
static pid_t unmap_tid;
static cpu_set_t unmap_cpus;
static bool unmap_cpus_known;
#endif
static _Atomic bool unmap_no_spread; /* sgl_unmap_spread(false) */
/* under unmap_mu: the kept buffers, and when each was freed */
static struct {
    char *p;
    size_t len;
    int64_t at;
} kept[KEEP_MAX];
static int nkept;

/* n rounded up to a whole number of pages */
static size_t page_up(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (n + page - 1) / page * page;
}

/* CLOCK_MONOTONIC in ns: the clock of unmap_cv's timed waits
 * (unmap_start) */
static int64_t clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Takes the next chunk of the oldest queued buffer (under unmap_mu). */
static bool unmap_take(char **p, size_t *len)
{
    if (unmap_count == 0)
        return false;
    size_t n = unmap_q[unmap_head].len < UNMAP_CHUNK ? unmap_q[unmap_head].len : UNMAP_CHUNK;
    *p = unmap_q[unmap_head].p;
    *len = n;
    unmap_q[unmap_head].p += n;
    unmap_q[unmap_head].len -= n;
    if (unmap_q[unmap_head].len == 0) {
        unmap_head = (unmap_head + 1) % UNMAP_QUEUE_MAX;
        unmap_count--;
    }
    unmap_busy++;
    return true;
}

static void unmap_chunk(char *p, size_t len);

/* Queues p for the background thread (under unmap_mu, which it may
 * release meanwhile), or unmaps it there, the lock released, when the
 * queue is full or there is no thread. */
static void unmap_enqueue(char *p, size_t len)
{
    if (!unmap_started || unmap_count >= UNMAP_QUEUE_MAX) {
        unmap_busy++;
        unmap_chunk(p, len);
        return;
    }
    int tail = (unmap_head + unmap_count) % UNMAP_QUEUE_MAX;
    unmap_q[tail].p = p;
    unmap_q[tail].len = len;
    unmap_count++;
}

/* Drops kept[i] from the kept buffers (under unmap_mu). */
static void kept_remove(int i)
{
    memmove(&kept[i], &kept[i + 1], (size_t)(nkept - i - 1) * sizeof kept[0]);
    nkept--;
}

/* The kept buffer freed first (under unmap_mu, nkept > 0). */
static int kept_oldest(void)
{
    int o = 0;
    for (int i = 1; i < nkept; i++)
        if (kept[i].at < kept[o].at)
            o = i;
    return o;
}

/* Takes kept[i] out and queues it to be unmapped (under unmap_mu). */
static void kept_evict(int i)
{
    char *p = kept[i].p;
    size_t len = kept[i].len;
    kept_remove(i);
    unmap_enqueue(p, len);
}

/* Adds p to the kept buffers, freed at `at` (under unmap_mu). */
static void kept_add(char *p, size_t len, int64_t at)
{
    while (nkept >= KEEP_MAX) /* (unmap_enqueue may release the lock) */
        kept_evict(kept_oldest());
    kept[nkept].p = p;
    kept[nkept].len = len;
    kept[nkept].at = at;
    nkept++;
}

/* Unmaps a chunk taken by unmap_take (called and returning under unmap_mu). */
static void unmap_chunk(char *p, size_t len)
{
    pthread_mutex_unlock(&unmap_mu);
    munmap(p, len);
    pthread_mutex_lock(&unmap_mu);
    unmap_busy--;
    pthread_cond_broadcast(&unmap_cv);
}

/* Before waking the thread (under unmap_mu): any CPU it started with but
 * the caller's (best effort: not with one CPU, nor off Linux). */
static void unmap_avoid_me(void)
{
#if defined(__linux__) && defined(CPU_SET)
    if (!unmap_cpus_known || unmap_tid == 0 || CPU_COUNT(&unmap_cpus) < 2 ||
        atomic_load_explicit(&unmap_no_spread, memory_order_relaxed))
        return;
    int me = sched_getcpu();
    if (me < 0 || me >= CPU_SETSIZE || !CPU_ISSET(me, &unmap_cpus))
        return;
    cpu_set_t others = unmap_cpus;
    CPU_CLR(me, &others);
    (void)sched_setaffinity(unmap_tid, sizeof others, &others);
#endif
}

void sgl_unmap_spread(bool on)
{
    atomic_store_explicit(&unmap_no_spread, !on, memory_order_relaxed);
}

void sgl_unmap_after_fork(void)
{
    /* (the child's atfork handler, and the library's: twice is harmless)
     * the background thread is gone, maybe in the middle of a chunk (left
     * mapped): fresh state; queued buffers are unmapped by the callers,
     * and a thread starts at the next big mapping; the kept ones were not
     * inherited (MADV_DONTFORK; unmapped here where that failed) */
    pthread_mutex_init(&unmap_mu, NULL);
    pthread_cond_init(&unmap_cv, NULL);
    unmap_busy = 0;
    unmap_started = unmap_tried = false;
    atomic_store(&unmap_pending, false);
    for (int i = 0; i < nkept; i++) /* this process's copies */
        munmap(kept[i].p, kept[i].len);
    nkept = 0;
    atomic_store(&unmap_holds, 0);
#if defined(__linux__) && defined(CPU_SET)
    unmap_cpus_known = false;
#endif
}

void sgl_unmap_hold(void)
{
    atomic_fetch_add(&unmap_holds, 1);
}

void sgl_unmap_release(void)
{
    /* the common case takes no lock: nothing was queued */
    if (atomic_fetch_sub(&unmap_holds, 1) != 1 || !atomic_load(&unmap_pending))
        return;
    pthread_mutex_lock(&unmap_mu);
    bool wake = atomic_exchange(&unmap_pending, false);
    if (wake) {
        unmap_avoid_me();
        unmap_released++;
    }
    pthread_mutex_unlock(&unmap_mu);
    if (wake)
        pthread_cond_broadcast(&unmap_cv);
}

static void *unmap_thread(void *arg)
{
    (void)arg;
    /* Linux: PRIO_PROCESS with 0 is the calling thread (its nice value is
     * per thread); best effort, nice 0 where refused */
    (void)setpriority(PRIO_PROCESS, 0, 10);
    pthread_mutex_lock(&unmap_mu);
#if defined(__linux__) && defined(CPU_SET)
    unmap_tid = (pid_t)syscall(SYS_gettid);
    unmap_cpus_known = sched_getaffinity(0, sizeof unmap_cpus, &unmap_cpus) == 0;
#endif
    bool released = false; /* woken by a release: the work is done now */
    for (;;) {
        /* work: a queued buffer, or a kept one freed KEEP_NS ago */
        bool work = unmap_count > 0;
        int64_t due = 0;
        if (!work && nkept > 0) {
            due = kept[kept_oldest()].at + KEEP_NS;
            work = clock_ns() >= due;
        }
        if (!work) {
            if (nkept == 0) {
                pthread_cond_wait(&unmap_cv, &unmap_mu);
            } else {
                struct timespec ts = {(time_t)(due / 1000000000), (long)(due % 1000000000)};
                (void)pthread_cond_timedwait(&unmap_cv, &unmap_mu, &ts);
            }
            continue;
        }
        /* not started during a superstep on threads: its last release
         * wakes it (unmap_pending stored before holds is read again; the
         * release reads it after its decrement: one of the two sees the
         * other), and the work is done then, even if the next superstep
         * has begun (as the queue always was) */
        if (!released && atomic_load(&unmap_holds) > 0) {
            atomic_store(&unmap_pending, true);
            if (atomic_load(&unmap_holds) > 0) {
                unsigned r = unmap_released;
                pthread_cond_wait(&unmap_cv, &unmap_mu);
                released = unmap_released != r;
                continue;
            }
        }
        released = false;
        char *p;
        size_t len;
        if (unmap_take(&p, &len))
            unmap_chunk(p, len);
        else
            kept_evict(kept_oldest());
    }
    return NULL;
}

static void unmap_prepare_fork(void)
{
    pthread_mutex_lock(&unmap_mu); /* the child gets a whole state */
}

static void unmap_parent_fork(void)
{
    pthread_mutex_unlock(&unmap_mu);
}

/* Starts the background thread once (under unmap_mu); without it, the
 * callers unmap. */
static void unmap_start(void)
{
    if (unmap_tried)
        return;
    unmap_tried = true;
    static bool atfork; /* registered once, for this process and its children */
    if (!atfork)
        atfork = pthread_atfork(unmap_prepare_fork, unmap_parent_fork, sgl_unmap_after_fork) == 0;
    /* nothing waits on unmap_cv before the thread starts */
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) == 0) {
        if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0)
            (void)pthread_cond_init(&unmap_cv, &ca);
        pthread_condattr_destroy(&ca);
    }
    pthread_attr_t attr;
    pthread_t t;
    if (pthread_attr_init(&attr) != 0)
        return;
    unmap_started = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
                    pthread_attr_setstacksize(&attr, (size_t)1 << 18) == 0 &&
                    pthread_create(&t, &attr, unmap_thread, NULL) == 0;
    pthread_attr_destroy(&attr);
}

/* After work was queued or the first buffer kept (under unmap_mu):
 * whether to wake the thread after the unlock; during a superstep on
 * threads the last release wakes it instead (the same pairing as in the
 * thread). */
static bool unmap_wake_now(bool unmapping)
{
    if (atomic_load(&unmap_holds) > 0) {
        atomic_store(&unmap_pending, true);
        if (atomic_load(&unmap_holds) > 0 || !atomic_exchange(&unmap_pending, false))
            return false;
    }
    if (unmapping)
        unmap_avoid_me();
    return true;
}

/* Unmaps the queued buffers on this thread, and waits for the chunk in
 * progress on the background thread (under unmap_mu). */
static void unmap_drain(void)
{
    for (;;) {
        char *p;
        size_t len;
        if (unmap_take(&p, &len))
            unmap_chunk(p, len);
        else if (unmap_busy > 0)
            pthread_cond_wait(&unmap_cv, &unmap_mu);
        else
            break;
    }
}

/* A kept buffer for `all` bytes (its length in *len), or NULL: the
 * smallest that holds them, else the longest, grown with mremap: its
 * pages stay and only the new ones are populated (PSRS's buckets differ
 * by a few elements; the root's concatenation of its children's results
 * is their sum).  One that would waste more than a quarter is split: the
 * rest is kept as another buffer when it is a big one (a vector freed
 * after its children's parts were copied gives each child's next vector
 * its pages), else unmapped.  Growing by more than an eighth sends the
 * other kept buffers to be unmapped, as a miss does: a program whose
 * vectors grow keeps its peak memory. */
static void *kept_take(size_t all, size_t *len, bool grow)
{
    if (all > SIZE_MAX / 2)
        return NULL;
    size_t want = page_up(all);
    pthread_mutex_lock(&unmap_mu);
    int best = -1;
    for (int i = 0; i < nkept; i++) {
        size_t l = kept[i].len, b = best < 0 ? 0 : kept[best].len;
        if (best < 0 || (l >= all ? b < all || l < b : b < all && l > b))
            best = i;
    }
    if (best >= 0 && !grow && kept[best].len < all)
        best = -1; /* none holds them, and growing one is not wanted */
    if (best < 0) {
        pthread_mutex_unlock(&unmap_mu);
        return NULL;
    }
    char *p = kept[best].p, *drop = NULL;
    size_t have = kept[best].len, had = page_up(have), dropped = 0;
    int64_t at = kept[best].at;
    kept_remove(best);
    if (have >= all && have - all > have / 4) { /* split */
        if (had - want >= MAP_MIN) {
            kept_add(p + want, had - want, at);
        } else {
            drop = p + want;
            dropped = had - want;
        }
        have = had = want;
    } else if (have < all - all / 8) { /* grown a lot: the others unmapped first */
        while (nkept > 0)
            kept_evict(0);
        unmap_drain();
    }
    pthread_mutex_unlock(&unmap_mu);
    if (drop)
        munmap(drop, dropped);
#ifdef MADV_DOFORK
    (void)madvise(p, had, MADV_DOFORK);
#endif
    if (have >= all) {
        *len = have;
        return p;
    }
    int64_t grown;
    void *q = sgl_block_grow(p, (int64_t)had, all, &grown);
    if (q) {
        *len = (size_t)grown;
        return q;
    }
    munmap(p, had);
    return NULL;
}

/* A block of TAKE_MIN bytes or more (below MAP_MIN) takes a kept buffer
 * that holds it, if any, instead of malloc's fresh pages (a vector of
 * 0.5-2·10^6 numbers: a PSRS child's block at 2·10^6 ints on 2 threads),
 * kept in turn when freed; one that grows by FILL_MIN or more takes kept
 * pages (kept_fill). */
#define TAKE_MIN ((size_t)4 << 20)
#define FILL_MIN ((size_t)2 << 20)

/* Whether mremap's MREMAP_FIXED moves a range of several mappings (Linux
 * 6.17 on; before, it unmaps the destination, then fails), which a block
 * filled once is (two mappings the kernel does not merge): kept_fill runs
 * on those kernels only. */
static bool moves_mappings(void)
{
    static _Atomic int known; /* 0: not yet; 1: yes; -1: no */
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (k == 0) {
        struct utsname u;
        int major = 0, minor = 0;
        k = uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
                    (major > 6 || (major == 6 && minor >= 17))
                ? 1
                : -1;
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k > 0;
}

/* Moves kept buffers' pages to dst .. dst + n (page-aligned: the untouched
 * new part of a block mremap grew), as far as they go: populated memory
 * instead of new pages (PSRS's root grows its first child's result by the
 * second's length while the children's sorted blocks, freed, are kept).
 * Returns the bytes filled from dst on (holding old bytes).  A longer kept
 * buffer is split, its rest kept if big, else unmapped; one that fails to
 * move stays kept (dst's range, if the failure took it, mapped anew). */
static size_t kept_fill(char *dst, size_t n)
{
    size_t done = 0;
#if defined(MREMAP_FIXED) && defined(MREMAP_MAYMOVE)
    if (!moves_mappings())
        return 0;
    char *drop = NULL;
    size_t dropped = 0;
    pthread_mutex_lock(&unmap_mu);
    for (int tries = 0; done < n && nkept > 0 && tries < KEEP_MAX; tries++) {
        size_t rest = n - done;
        int best = 0; /* the shortest that covers the rest, else the longest */
        for (int i = 1; i < nkept; i++) {
            size_t l = page_up(kept[i].len), b = page_up(kept[best].len);
            if (l >= rest ? b < rest || l < b : b < rest && l > b)
                best = i;
        }
        char *p = kept[best].p;
        size_t had = page_up(kept[best].len), m = had < rest ? had : rest;
        int64_t at = kept[best].at;
        if (mremap(p, m, m, MREMAP_MAYMOVE | MREMAP_FIXED, dst + done) == MAP_FAILED) {
            /* dst's range must still be mapped: checked, else mapped again */
            if (madvise(dst + done, rest, MADV_NORMAL) != 0) {
#ifdef MAP_FIXED_NOREPLACE
                void *q = mmap(dst + done, rest, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
                if (q != (void *)(dst + done))
#endif
                {
                    fputs("sgl: internal error: a growing buffer lost part of its mapping\n",
                          stderr);
                    abort();
                }
            }
            break;
        }
#ifdef MADV_DOFORK
        /* kept buffers are not inherited by a fork; this block is (before
         * the unlock: a fork's handler takes the lock) */
        (void)madvise(dst + done, m, MADV_DOFORK);
#endif
        kept_remove(best);
        done += m;
        if (had - m >= MAP_MIN) { /* (only the last one can be longer than needed) */
            kept_add(p + m, had - m, at);
        } else if (had > m) {
            drop = p + m;
            dropped = had - m;
        }
    }
    pthread_mutex_unlock(&unmap_mu);
    if (drop)
        munmap(drop, dropped);
#else
    (void)dst;
    (void)n;
#endif
    return done;
}

__attribute__((noinline)) static void unmap_block(char *p, size_t len)
{
#ifdef MADV_DONTFORK
    if (KEEP_ON)
        (void)madvise(p, len, MADV_DONTFORK);
#endif
    pthread_mutex_lock(&unmap_mu);
    if (!unmap_started) { /* nothing is kept nor queued without the thread */
        pthread_mutex_unlock(&unmap_mu);
        munmap(p, len);
        return;
    }
    bool first = nkept == 0;
    if (KEEP_ON)
        kept_add(p, len, clock_ns());
    else
        unmap_enqueue(p, len);
    /* the thread is woken to unmap, or to time the first kept buffer */
    bool wake = (unmap_count > 0 || (KEEP_ON && first)) && unmap_wake_now(unmap_count > 0);
    pthread_mutex_unlock(&unmap_mu);
    if (wake) /* after the unlock, or it wakes to block on the mutex */
        pthread_cond_broadcast(&unmap_cv);
}

/* Before a big mapping: the buffers freed before it are unmapped (the
 * queued chunks by this thread, the one in progress by the background
 * thread), and the background thread runs. */
static void unmap_wait(void)
{
    pthread_mutex_lock(&unmap_mu);
    unmap_start();
    while (nkept > 0) /* none fits: unmapped first */
        kept_evict(0);
    unmap_drain();
    pthread_mutex_unlock(&unmap_mu);
}

__attribute__((noinline)) static void *map_block(size_t all)
{
    unmap_wait();
#ifdef MAP_POPULATE
    bool advise = !sgl_pages_refused();
    void *p = mmap(NULL, all, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (advise ? 0 : MAP_POPULATE), -1, 0);
    if (p != MAP_FAILED) sgl_pages_advise(p, all);
    if (p != MAP_FAILED && advise) (void)sgl_pages_populate(p, all, p, all);
    return p == MAP_FAILED ? NULL : p;
#else
    (void)all;
    return NULL;
#endif
}

void *sgl_block_alloc(size_t all, bool zero, int64_t *kind)
{
    if (all >= TAKE_MIN) {
        /* a kept block: one that holds it, or (a big one) the longest grown;
         * else a big one is mapped, a smaller one malloc'd below */
        size_t len;
        void *p = kept_take(all, &len, all >= MAP_MIN);
        if (p) {
            if (zero)
                memset(p, 0, all);
            *kind = (int64_t)len;
            return p;
        }
    }
    if (all >= MAP_MIN) {
        void *p = map_block(all); /* mapped memory is zeroed */
        if (p) {
            *kind = (int64_t)all;
            return p;
        }
    }
#ifndef SGL_REGISTRY
    if (all <= SGL_SMALL_MAX) {
        int cls = sgl_small_class(all);
        void *p = sgl_small_get(cls);
        if (p && zero)
            memset(p, 0, all);
        *kind = -1 - cls;
        return p;
    }
#endif
    *kind = 0;
    return zero ? calloc(1, all) : malloc(all);
}

void *sgl_block_grow(void *blk, int64_t kind, size_t all, int64_t *newkind)
{
#ifdef MREMAP_MAYMOVE
    if (kind <= 0 || all > SIZE_MAX / 2)
        return NULL;
    size_t had = page_up((size_t)kind), want = page_up(all);
    if (want <= had) {
        *newkind = kind;
        return blk;
    }
    char *q = mremap(blk, had, want, MREMAP_MAYMOVE);
    if (q == MAP_FAILED)
        return NULL;
    /* the new part: kept buffers' pages first, then new pages */
    size_t filled = want - had >= FILL_MIN ? kept_fill(q + had, want - had) : 0;
    if (filled < want - had && !sgl_pages_refused()) { /* else the new pages fault in */
        sgl_pages_advise(q, want);
        (void)sgl_pages_populate(q, want, q + had + filled, want - had - filled);
    }
    *newkind = (int64_t)want;
    return q;
#else
    (void)blk;
    (void)kind;
    (void)all;
    (void)newkind;
    return NULL;
#endif
}

void sgl_block_free(void *blk, int64_t kind)
{
    if (kind > 0)
        unmap_block(blk, (size_t)kind);
#ifndef SGL_REGISTRY
    else if (kind < 0)
        sgl_small_put((int)(-1 - kind), blk);
#endif
    else
        free(blk);
}
