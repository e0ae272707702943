/* sgl_small.c: the per-thread cache of small memory blocks (sgl_vbuf.h's
 * sgl_small_get and sgl_small_put, called by sgl_blocks.c). */
#include "sgl_vbuf.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

/* Small blocks (at most SGL_SMALL_MAX bytes, a buffer's header included:
 * the vectors of a few numbers that a loop of supersteps scatters and
 * gathers every step) come from a per-thread cache of freed blocks, a list
 * per size class (64, 128, 256 bytes) of at most SMALL_KEEP blocks,
 * instead of malloc and free (each block on cache lines of its own, see
 * sgl_small_get): at the process level the master's two
 * vectors per superstep cost some 230 instructions of its critical path
 * (docs/execution.md).  Such a block's kind (sgl_blocks.c) is -1 - its
 * class.  A block freed by another thread than the one that allocated it
 * goes to the freeing thread's cache.  A thread that ends frees its cache
 * (a thread-specific key's destructor, registered with its first cached
 * block): a team's threads end with its tree (sgl_team.c), libgomp's of a
 * nested team (a library's) after each of its parallel regions.  Not in
 * builds with the registry (library and ASan builds: they see every free). */
#define SMALL_CLASSES 3
#define SMALL_LINE 64 /* a cache line; every class is a multiple of it */
_Static_assert(SGL_SMALL_MAX == (size_t)64 << (SMALL_CLASSES - 1), "the classes end at SGL_SMALL_MAX");

#ifndef SGL_REGISTRY
#define SMALL_KEEP 8
typedef struct small_block {
    struct small_block *next;
} small_block;
static _Thread_local struct {
    small_block *head[SMALL_CLASSES];
    int n[SMALL_CLASSES];
    int keyed; /* 0: not yet; 1: the key's destructor will free them; -1: no cache */
} small_cache;
static pthread_key_t small_key;
static pthread_once_t small_once = PTHREAD_ONCE_INIT;
static bool small_key_made;

static void small_flush(void *unused)
{
    (void)unused;
    for (int c = 0; c < SMALL_CLASSES; c++) {
        while (small_cache.head[c]) {
            small_block *p = small_cache.head[c];
            small_cache.head[c] = p->next;
            free(p);
        }
        small_cache.n[c] = 0;
    }
    small_cache.keyed = -1; /* a block freed after this, by another destructor, is freed */
}

static void small_make_key(void)
{
    small_key_made = pthread_key_create(&small_key, small_flush) == 0;
}

/* Whether this thread may cache blocks: its key is set (once per thread). */
static bool small_keyed(void)
{
    if (small_cache.keyed == 0) {
        (void)pthread_once(&small_once, small_make_key);
        small_cache.keyed =
            small_key_made && pthread_setspecific(small_key, &small_cache) == 0 ? 1 : -1;
    }
    return small_cache.keyed > 0;
}

int sgl_small_class(size_t all)
{
    return all <= 64 ? 0 : all <= 128 ? 1 : 2;
}

void *sgl_small_get(int cls)
{
    small_block *p = small_cache.head[cls];
    if (p) {
        small_cache.head[cls] = p->next;
        small_cache.n[cls]--;
        return p;
    }
    /* on a line of its own: a block ends up with a thread other than the
     * one that allocated it (a gathered vector freed by the master, a
     * broadcast copy by its child), so two threads' blocks are often
     * neighbours from one arena, and malloc's 16-byte alignment put their
     * ends on a shared cache line: the kmeans bench at 1x2, whose two
     * workers add into their 25-int statistics for every point, took
     * 96.9 ms against the hand code's 76.4 (bench/README.md) */
    return aligned_alloc(SMALL_LINE, (size_t)64 << cls);
}

void sgl_small_put(int cls, void *blk)
{
    if (small_cache.n[cls] >= SMALL_KEEP || !small_keyed()) {
        free(blk);
        return;
    }
    small_block *p = blk;
    p->next = small_cache.head[cls];
    small_cache.head[cls] = p;
    small_cache.n[cls]++;
}
#endif
