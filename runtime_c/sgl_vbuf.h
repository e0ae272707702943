/*
 * sgl_vbuf.h: what sgl_value.c shares with sgl_views.c and sgl_blocks.c
 * (internal): the elements of a buffer, element addresses, the few buffer
 * operations the views need, and the memory blocks.  Range handles are described in sgl.h.
 */
#ifndef SGL_VBUF_H
#define SGL_VBUF_H

#include "sgl.h"

/* The elements of buffer b (a buffer, not a range handle). */
static inline char *vbuf_data(sgl_vbuf *b)
{
    return (char *)(b + 1);
}

/* Address of element i of v (unchecked). */
static inline char *elem_ptr(const sgl_vec *v, size_t esz, int64_t i)
{
    return (char *)v->data + (size_t)i * esz;
}

/* The buffer that owns the elements b is a view of. */
static inline sgl_vbuf *vbuf_owner(sgl_vbuf *b)
{
    return b->parent ? b->parent : b;
}

void sgl_vbuf_retain(sgl_vbuf *b);
/* Drops a reference to b, whose elements have type et (sgl_value.c). */
void sgl_vbuf_release(const sgl_type *et, sgl_vbuf *b);
/* A new range handle of buffer p (one reference; it holds one of p's). */
sgl_vbuf *sgl_vbuf_handle(sgl_vbuf *p, int line, int col);
/* A vector of len elements of type et in a buffer of its own (elements
 * uninitialized unless zero). */
sgl_vec sgl_vec_alloc(const sgl_type *et, int64_t len, bool zero, int line, int col);
/* The same, uninitialized, or false (*out empty) without the memory. */
bool sgl_vec_try_alloc(const sgl_type *et, int64_t len, sgl_vec *out);
/* Copies n elements from src to dst: bytes, or shared vectors. */
void sgl_copy_elems_into(const sgl_type *et, void *dst, const void *src, int64_t n);
/* Copies n bytes from src to dst on the threads of the team of the node
 * this thread runs, when it is a master with thread children (idle: its
 * own code runs between its supersteps) and n is at least
 * SGL_TEAM_COPY_MIN: a long copy at the bandwidth of several threads (a
 * PSRS root joining its children's sorted blocks: concat), of elements
 * that own no memory.  False (nothing copied) otherwise (sgl_local.c). */
#define SGL_TEAM_COPY_MIN ((size_t)8 << 20)
bool sgl_team_copy(void *dst, const void *src, size_t n);

/* The allocation registry: in library builds (-DSGL_LIBRARY, sglc
 * --library) and in the executables of AddressSanitizer builds
 * (-DSGL_WITH_REGISTRY, added by sglc --sanitize and make sanitize), so
 * that LeakSanitizer sees a failing program free everything; an ordinary
 * executable that fails leaves its memory to the operating system at
 * exit and pays nothing per buffer (docs/execution.md).
 *
 * Every buffer and range handle has a link in front of its header (its
 * memory block starts SGL_VBUF_PREFIX bytes before it).  One allocated
 * during a library call, or at any time in an executable, is registered
 * (sgl_lib_track): put on its thread's list, and taken off when it is
 * freed (sgl_lib_untrack, by whichever thread frees it).  When a library
 * call fails, what is still registered once the frames and parameters are
 * released is garbage (the temporaries of generated code and of the
 * runtime, which no frame holds): the error boundary frees it
 * (sgl_library.c).  When a call succeeds, what is left (its results, the
 * children's frames) is forgotten by the registry and lives on.  An
 * executable that failed frees whatever is still registered once its tree
 * is shut down, just before it exits (sgl_registry_free_all). */
#if defined(SGL_LIBRARY) || defined(SGL_WITH_REGISTRY)
#define SGL_REGISTRY 1
#endif
#ifdef SGL_REGISTRY
typedef struct sgl_lib_link {
    struct sgl_lib_link *prev, *next;
    void *reg;          /* the list it is on; NULL: not registered */
    const sgl_type *et; /* the element type (of the parent, for a handle) */
} sgl_lib_link;
#define SGL_VBUF_PREFIX sizeof(sgl_lib_link)
static inline sgl_lib_link *vbuf_link(sgl_vbuf *b)
{
    return (sgl_lib_link *)b - 1;
}
static inline sgl_vbuf *link_vbuf(sgl_lib_link *l)
{
    return (sgl_vbuf *)(l + 1);
}
/* Register b (elements of type et) if a library call runs (sgl_library.c). */
void sgl_lib_track(sgl_vbuf *b, const sgl_type *et);
/* Take b off its list, if it is on one. */
void sgl_lib_untrack(sgl_vbuf *b);
#else
#define SGL_VBUF_PREFIX ((size_t)0)
#endif

/* A header for len elements of the caller's memory (sgl_library.c), with
 * refs references and nothing else; registered like any buffer. */
sgl_vbuf *sgl_vbuf_header(const sgl_type *et, int64_t len, int64_t refs);
/* Frees b's memory block alone: no reference it holds is dropped, nothing
 * is unregistered (the registry's sweep, sgl_library.c). */
void sgl_vbuf_discard(sgl_vbuf *b);

/* Blocks of at least this many bytes are mapped, their pages populated
 * at once (on huge pages where the kernel gives them) and kept for reuse
 * once freed (sgl_blocks.c). */
#define SGL_BLOCK_MAP_MIN ((size_t)16 << 20)
/* A buffer's memory block of `all` bytes (zeroed if zero), or NULL; *kind
 * is what sgl_block_free needs to know (sgl_vbuf.mapped): buffers of
 * SGL_BLOCK_MAP_MIN bytes or more are mapped, those of 4 to 16 MiB too
 * when a kept mapped block holds them, small ones come from a per-thread
 * cache (sgl_small.c). */
void *sgl_block_alloc(size_t all, bool zero, int64_t *kind);
/* The per-thread cache of blocks of at most SGL_SMALL_MAX bytes, in size
 * classes of 64, 128 and 256 bytes (sgl_small.c; not in builds with the
 * registry): a class's block, taken from the cache or malloc'd, and one
 * given back (cached, or freed when the cache is full). */
#define SGL_SMALL_MAX ((size_t)256)
int sgl_small_class(size_t all);
void *sgl_small_get(int cls);
void sgl_small_put(int cls, void *blk);
void sgl_block_free(void *blk, int64_t kind);
/* A mapped block (kind > 0) grown to at least `all` bytes in place or
 * moved with its pages (mremap: nothing copied, only the new pages
 * populated), its new kind in *newkind; NULL (blk unchanged) for any
 * other block or where that fails. */
void *sgl_block_grow(void *blk, int64_t kind, size_t all, int64_t *newkind);
/* For the runtime's tests: the CPU time over which a watched 2 MiB step
 * of huge pages marks the process slow (sgl_pages.c), and not slow yet. */
void sgl_block_huge_limit(int64_t ns);
/* The pages of a mapped block blk .. blk + all (sgl_pages.c, for
 * sgl_blocks.c): advised for huge pages (or not, as the mode and the watch
 * say); p .. p + len of it, new pages, populated (false where the kernel
 * refused MADV_POPULATE_WRITE); whether it was ever refused (mappings
 * then populate with MAP_POPULATE). */
void sgl_pages_advise(void *blk, size_t all);
bool sgl_pages_populate(char *blk, size_t all, char *p, size_t len);
bool sgl_pages_refused(void);

/* A superstep on threads begins (hold) and ends (release), on its
 * master: a big buffer freed meanwhile is queued for the background
 * unmapper, which is woken only by the last release (sgl_blocks.c). */
void sgl_unmap_hold(void);
void sgl_unmap_release(void);
/* Whether the unmapper is moved off its waker's CPU when woken (on
 * unless turned off: an MPI run's other ranks may have those CPUs). */
void sgl_unmap_spread(bool on);

/* The end of an executable after a run-time error, its tree shut down
 * (no thread runs SGL code): frees every buffer still registered, the
 * ones a longjmp left behind in the C temporaries and frames it skipped
 * (sgl_library.c).  Nothing in a library build or without the registry. */
void sgl_registry_free_all(void);
/* A library call: register from now on (on), or no longer (off); nothing
 * in an executable, which registers throughout (sgl_registry.c). */
void sgl_registry_track(bool on);
/* After a successful library call: forget what is registered (it lives
 * on). */
void sgl_registry_forget(void);
/* After a failed library call whose frames and parameters are released:
 * frees what is still registered; returns how many buffers it freed. */
int64_t sgl_registry_sweep(void);

#endif /* SGL_VBUF_H */
