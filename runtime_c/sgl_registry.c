/*
 * sgl_registry.c: the registry of live vector buffers (sgl_vbuf.h): a list
 * per thread of the buffers and range handles allocated and not yet
 * freed.  A library call that fails frees what is left on it once its
 * frames are released (sgl_library.c, docs/embedding.md); an executable
 * registers from its start and, after a run-time error, frees what is
 * left once its tree is shut down (sgl_registry_free_all, called by
 * sgl_run), so that a failed executable exits holding nothing: the
 * temporaries and frames that the error's longjmp skipped included
 * (docs/execution.md).  Built with -DSGL_LIBRARY or -DSGL_WITH_REGISTRY
 * (sanitizer builds) only.
 */
#define _POSIX_C_SOURCE 200809L
#include "sgl_vbuf.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef SGL_REGISTRY
/* One thread's list (a circular list around head), kept for the
 * process's life once made; all of them are on `regs`.  When its thread
 * ends (OpenMP makes new threads for nested teams), a list goes to
 * `spare_regs` for the next new thread, with whatever is on it. */
typedef struct lib_reg {
    atomic_flag lock; /* a spin lock: held for a few instructions, rarely contended
                         (only by a thread freeing another's buffer) */
    sgl_lib_link head;
    struct lib_reg *next, *next_spare;
} lib_reg;

/* register what is allocated: while a call runs (a library), always (an
 * executable) */
#ifdef SGL_LIBRARY
static atomic_bool lib_tracking;
#else
static atomic_bool lib_tracking = true;
#endif
static _Thread_local lib_reg *my_reg;
static pthread_mutex_t regs_lock = PTHREAD_MUTEX_INITIALIZER; /* for regs and spare_regs */
static _Atomic(lib_reg *) regs;                                /* only ever prepended to */
static lib_reg *spare_regs;

static void reg_lock(lib_reg *r)
{
    while (atomic_flag_test_and_set_explicit(&r->lock, memory_order_acquire))
        sched_yield(); /* its holder may have been preempted (more threads than cores) */
}

static void reg_unlock(lib_reg *r)
{
    atomic_flag_clear_explicit(&r->lock, memory_order_release);
}
static pthread_once_t reg_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t reg_key;
static bool reg_key_ok;

static void reg_thread_ends(void *p)
{
    lib_reg *r = p;
    pthread_mutex_lock(&regs_lock);
    r->next_spare = spare_regs;
    spare_regs = r;
    pthread_mutex_unlock(&regs_lock);
}

static void make_reg_key(void)
{
    reg_key_ok = pthread_key_create(&reg_key, reg_thread_ends) == 0;
}

static lib_reg *new_reg(void)
{
    pthread_once(&reg_key_once, make_reg_key);
    if (!reg_key_ok) return NULL; /* then this thread's buffers are not registered */
    pthread_mutex_lock(&regs_lock);
    lib_reg *r = spare_regs;
    if (r) spare_regs = r->next_spare;
    pthread_mutex_unlock(&regs_lock);
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r) return NULL;
        atomic_flag_clear(&r->lock);
        r->head.prev = r->head.next = &r->head;
        pthread_mutex_lock(&regs_lock);
        r->next = atomic_load(&regs);
        atomic_store(&regs, r);
        pthread_mutex_unlock(&regs_lock);
    }
    if (pthread_setspecific(reg_key, r) != 0) {
        reg_thread_ends(r);
        return NULL;
    }
    my_reg = r;
    return r;
}

void sgl_lib_track(sgl_vbuf *b, const sgl_type *et)
{
    sgl_lib_link *l = vbuf_link(b);
    l->et = et;
    l->reg = NULL;
    if (!atomic_load_explicit(&lib_tracking, memory_order_relaxed)) return;
    lib_reg *r = my_reg ? my_reg : new_reg();
    if (!r) return;
    reg_lock(r);
    l->prev = &r->head;
    l->next = r->head.next;
    r->head.next->prev = l;
    r->head.next = l;
    l->reg = r;
    reg_unlock(r);
}

void sgl_lib_untrack(sgl_vbuf *b)
{
    sgl_lib_link *l = vbuf_link(b);
    lib_reg *r = l->reg;
    if (!r) return;
    reg_lock(r);
    l->prev->next = l->next;
    l->next->prev = l->prev;
    reg_unlock(r);
    l->reg = NULL;
}

static bool registered(sgl_vbuf *b)
{
    return vbuf_link(b)->reg != NULL;
}

/* Every list (the tree's threads are idle between calls: the lists need
 * no lock). */
static lib_reg *all_regs(void)
{
    return atomic_load_explicit(&regs, memory_order_acquire);
}

/* After a successful call: forget what is registered (it lives on). */
void sgl_registry_forget(void)
{
    for (lib_reg *r = all_regs(); r; r = r->next) {
        for (sgl_lib_link *l = r->head.next; l != &r->head; l = l->next) l->reg = NULL;
        r->head.prev = r->head.next = &r->head;
    }
}

/* After a failed call whose frames and parameters are released: free
 * what is still registered (see the top of the file); returns how many
 * buffers it freed. */
int64_t sgl_registry_sweep(void)
{
    int64_t n = 0;
    lib_reg *first = all_regs();
    /* the references held to buffers that live on */
    for (lib_reg *r = first; r; r = r->next) {
        for (sgl_lib_link *l = r->head.next; l != &r->head; l = l->next) {
            sgl_vbuf *b = link_vbuf(l);
            if (b->parent) {
                if (!registered(b->parent)) sgl_vbuf_release(l->et, b->parent);
            } else if (sgl_type_owns(l->et)) {
                sgl_vec *e = (sgl_vec *)vbuf_data(b);
                for (int64_t i = 0; i < b->used; i++)
                    if (e[i].buf && !registered(e[i].buf)) sgl_vbuf_release(l->et->elem, e[i].buf);
            }
        }
    }
    /* then the memory */
    for (lib_reg *r = first; r; r = r->next) {
        sgl_lib_link *l = r->head.next;
        while (l != &r->head) {
            sgl_lib_link *next = l->next;
            l->reg = NULL;
            sgl_vbuf_discard(link_vbuf(l));
            n++;
            l = next;
        }
        r->head.prev = r->head.next = &r->head;
    }
    return n;
}

void sgl_registry_track(bool on)
{
#ifdef SGL_LIBRARY
    atomic_store_explicit(&lib_tracking, on, memory_order_relaxed);
#else
    (void)on; /* an executable registers from its start to its end */
#endif
}
#else
void sgl_registry_forget(void) {}
int64_t sgl_registry_sweep(void) { return 0; }
void sgl_registry_track(bool on) { (void)on; }
#endif

void sgl_registry_free_all(void)
{
#if defined(SGL_REGISTRY) && !defined(SGL_LIBRARY)
    atomic_store_explicit(&lib_tracking, false, memory_order_relaxed);
    (void)sgl_registry_sweep();
#endif
}

