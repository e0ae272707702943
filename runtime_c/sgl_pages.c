/* sgl_pages.c: the pages of the mapped blocks of sgl_blocks.c: advised
 * for transparent huge pages and populated at once, 2 MiB at a time,
 * watched.
 *
 * A big block is populated at once (a fault per 4 KiB costs several
 * times more) by MADV_POPULATE_WRITE, or, a whole aligned 2 MiB that the
 * kernel gives a huge page, by writing to it (populate_huge_step); by
 * MAP_POPULATE without the advice (headers, or Linux < 5.14): advised
 * after, never watched (docs/execution.md, "Freeing"). */
#define _GNU_SOURCE /* MADV_POPULATE_WRITE, MADV_HUGEPAGE */
#include "sgl_vbuf.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifdef MADV_POPULATE_WRITE
static _Atomic bool advice_refused; /* populate's false: MAP_POPULATE from then on */
static bool populate(void *p, size_t len)
{
    if (madvise(p, len, MADV_POPULATE_WRITE) == 0 || errno != EINVAL) return true;
    atomic_store(&advice_refused, true);
    return false; /* these pages fault in when written */
}
#else
#define advice_refused true
#define populate(p, len) ((void)(p), (void)(len), false)
#endif

bool sgl_pages_refused(void)
{
    return advice_refused;
}

/* Transparent huge pages.  A mapping is advised for them (MADV_HUGEPAGE)
 * before it is populated, as NumPy advises its arrays of 4 MB and more:
 * where the system gives them on advice only (THP `madvise`, many
 * distributions' default), 2 MiB pages instead of 4 KiB ones (reduce's
 * sum of 400 MB, median of 25: 14.9 -> 13.2 ms).  But a huge page can
 * cost far more to populate than 512 small ones: a VM whose host took
 * back the guest's free memory (free page reporting hands back whole
 * 2 MiB blocks, the ones huge pages are made of) faults each one in on
 * the host, 5.5-5.9 ms per 2 MiB on the 2-core VM where 4 KiB pages take
 * 0.45-0.9 ms and host-backed huge ones 0.25-0.37 (a received 200 MB
 * vector: 0.44 s instead of 0.11); direct compaction stalls so too.  So
 * the populating is watched: 2 MiB-aligned steps, each timed in the
 * thread's CPU time (which counts the host's faults and not the time
 * other threads had the core); the first step over HUGE_SLOW_NS marks the
 * process slow, the whole block is advised MADV_NOHUGEPAGE (one mapping
 * still: mremap can grow it; the huge pages it has stay) and the rest
 * populated with small pages, as is every block mapped or grown after.
 * SGL_MADVISE_HUGEPAGE=0: no advice; =1: huge pages, never watched
 * (docs/execution.md, "Freeing"). */
enum { HUGE_OFF, HUGE_ON, HUGE_WATCH };
#define HUGE_STEP ((uintptr_t)2 << 20)
static _Atomic int64_t huge_slow_ns = 2000000; /* a 4 KiB populate's cost of 2 MiB, x2-4 */
static _Atomic bool huge_slow;                 /* watched: a step was over it */

static int huge_mode(void)
{
    static _Atomic int mode = -1; /* -1: not yet read */
    int v = atomic_load_explicit(&mode, memory_order_relaxed);
    if (v < 0) {
        const char *e = getenv("SGL_MADVISE_HUGEPAGE");
        v = e && strcmp(e, "0") == 0 ? HUGE_OFF : e && strcmp(e, "1") == 0 ? HUGE_ON : HUGE_WATCH;
        atomic_store_explicit(&mode, v, memory_order_relaxed);
    }
    return v;
}

void sgl_block_huge_limit(int64_t ns)
{
    atomic_store(&huge_slow_ns, ns);
    atomic_store(&huge_slow, false);
}

/* The advice for a whole block, as the mode and the watch say. */
void sgl_pages_advise(void *p, size_t len)
{
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
    int m = huge_mode();
    if (m != HUGE_OFF)
        (void)madvise(p, len, m == HUGE_WATCH && atomic_load(&huge_slow) ? MADV_NOHUGEPAGE
                                                                          : MADV_HUGEPAGE);
#else
    (void)p;
    (void)len;
#endif
}

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Populates the 2 MiB step p (aligned, all of it in the block, its pages
 * new) of a block advised for huge pages: by writing a zero to its first
 * byte, which faults in a huge page where the kernel has one to give;
 * else (its last page is not resident: the kernel gave a small page, or
 * gives none) by the advice, as other steps are.  With per-VMA locks
 * (Linux 6.4 on) that write takes the mapping's own lock where
 * MADV_POPULATE_WRITE holds the address space's lock for reading all the
 * time it populates: another thread's mmap waited behind it (rwsem
 * readers take the lock from a waiting writer until it has waited 4 ms),
 * the other child of a PSRS on threads 2-3 ms for its sorted block.  False
 * where the kernel refused the advice. */
static bool populate_huge_step(char *p)
{
    *(volatile char *)p = 0;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char in = 0;
    if (page > 0 && page < HUGE_STEP && mincore(p + HUGE_STEP - page, page, &in) == 0 && (in & 1))
        return true; /* one huge page */
    return populate(p, HUGE_STEP); /* the page written is there already */
}

/* Populates p .. p + len of the block blk .. blk + all (advised by
 * sgl_pages_advise, its pages there new), 2 MiB at a time while huge
 * pages are advised, watched as above; false where the kernel refused. */
bool sgl_pages_populate(char *blk, size_t all, char *p, size_t len)
{
    char *end = p + len;
    int mode = huge_mode();
    while (p < end && (mode == HUGE_ON || (mode == HUGE_WATCH && !atomic_load(&huge_slow)))) {
        char *next = (char *)(((uintptr_t)p + HUGE_STEP) & ~(HUGE_STEP - 1));
        if (next > end) next = end;
        int64_t t0 = thread_cpu_ns();
        bool whole = ((uintptr_t)p & (HUGE_STEP - 1)) == 0 && next - p == (ptrdiff_t)HUGE_STEP;
        if (!(whole ? populate_huge_step(p) : populate(p, (size_t)(next - p)))) return false;
        p = next;
        if (mode == HUGE_WATCH && thread_cpu_ns() - t0 > atomic_load(&huge_slow_ns))
            atomic_store(&huge_slow, true);
    }
    if (mode == HUGE_WATCH && atomic_load(&huge_slow)) /* this step, or another thread's */
        sgl_pages_advise(blk, all);
    return p == end || populate(p, (size_t)(end - p));
}

