/*
 * sgl_tree.c: the machine tree of an SGL program, the frames of its
 * nodes, and the part of a superstep that every transport shares.
 *
 * Every node of the tree that lives in this process has an sgl_node.  A
 * master reaches its children through a transport (sgl_internal.h): the
 * local one (sgl_local.c) or MPI (sgl_mpi.c).
 *
 * Frames.  Each node keeps a stack of slots indexed by activation depth.
 * A function that runs supersteps calls sgl_enter(), which gives its
 * activation a key (depth, uid).  A command from the master carries the
 * master's key; the child trims its stack to that depth and finds (or
 * makes) the frame for that key: the child's copies of the master's
 * variables, which therefore live as long as the master's activation and
 * keep their values from one superstep to the next (brief §6.2).
 *
 * Cancellation (brief §9, docs/execution.md).  When a child fails in op j
 * of a superstep, every sibling in this process that is past that point
 * of the sequential order (op by op, child by child) must stop: a later
 * child once it is in op j or after, an earlier one once it is in op
 * j + 1 or after (sgl_cancel_after).  A sibling past the point now gets
 * its `cancelled` flag set, with its whole subtree; the others get
 * `cancel_at`, checked when they begin their next op.  The flag is read
 * by generated code at loop iterations and calls (sgl.h); when it is
 * non-zero, sgl_check_slow polls the MPI reports of the masters of this
 * process and the stop messages of a remote master (its SGL_CANCEL_POLL
 * bit: sgl_mpi.c; sgl_cancel_from) and, if SGL_CANCEL_STOP is
 * set, longjmps to the boundary of the node's action (sgl_unwind): the child's
 * result says "cancelled" (failed_op set, msg NULL), and a master that
 * meets it in the merge unwinds in turn.  Stop bits are never cleared: after
 * a failure no superstep of that master follows.
 */
#define _GNU_SOURCE /* pthread_getattr_np */
#include "sgl_internal.h"
#include "sgl_speed.h"
#include "sgl_team.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

_Thread_local sgl_node *sgl_cur;

/* ------------------------------------------------------------------ */
/* Nodes and node queries                                               */

void sgl_node_init(sgl_node *n, const char *parent_path, const sgl_shape *sh, int depth,
                   int64_t id, int child_index)
{
    memset(n, 0, sizeof *n);
    n->depth = depth;
    n->child_index = child_index;
    n->shape = sh;
    n->id = id;
    n->nchildren = sh->nkids[id];
    n->nworkers = sh->nworkers[id];
    int w;
    if (parent_path) {
        w = snprintf(n->path, sizeof n->path, "%s.%d", parent_path, child_index);
    } else {
        /* the child indices from the root down */
        int idx[SGL_MAX_LEVELS + 1];
        int64_t a = id;
        for (int d = depth; d > 0; d--) {
            idx[d] = sgl_shape_child_index(sh, d, a);
            a = sgl_shape_parent(sh, d, a);
        }
        w = snprintf(n->path, sizeof n->path, "0");
        for (int d = 1; d <= depth && w >= 0 && (size_t)w < sizeof n->path; d++)
            w += snprintf(n->path + w, sizeof n->path - (size_t)w, ".%d", idx[d]);
    }
    if (w < 0 || (size_t)w >= sizeof n->path) sgl_internal_error("machine tree too deep");
    n->cur = -1;
    n->via = NULL;
    atomic_store(&n->head.cancelled, 0);
    atomic_store(&n->cur_op, -1);
    atomic_store(&n->cancel_at, INT_MAX);
#ifdef SGL_USE_MPI
    n->comm_down = MPI_COMM_NULL;
    n->comm_up = MPI_COMM_NULL;
#endif
    sgl_nodevars_make(n);
}

/* Node variables: one struct per node, wherever the node runs (a thread
 * of this process, or this MPI process), made with the node and kept for
 * the whole run; never a global, never thread-local (the seq target runs
 * every node on one thread). */
void sgl_nodevars_make(sgl_node *n)
{
    if (!sgl_prog || sgl_prog->nodevars_size == 0) return;
    void *nv = calloc(1, sgl_prog->nodevars_size);
    if (!nv) sgl_internal_error("out of memory (node variables)");
    sgl_prog->nodevars_init(nv);
    n->head.nodevars = nv;
}

void sgl_nodevars_free_tree(sgl_node *n)
{
    for (int i = 0; i < n->nlocal; i++) sgl_nodevars_free_tree(&n->kids[i]);
    if (n->head.nodevars) {
        sgl_prog->nodevars_free(n->head.nodevars);
        free(n->head.nodevars);
        n->head.nodevars = NULL;
    }
}

void sgl_nodevars_clear_tree(sgl_node *n)
{
    for (int i = 0; i < n->nlocal; i++) sgl_nodevars_clear_tree(&n->kids[i]);
    if (n->head.nodevars) {
        sgl_prog->nodevars_free(n->head.nodevars);
        memset(n->head.nodevars, 0, sgl_prog->nodevars_size);
    }
}

void sgl_nodevars_init_tree(sgl_node *n)
{
    for (int i = 0; i < n->nlocal; i++) sgl_nodevars_init_tree(&n->kids[i]);
    if (n->head.nodevars) sgl_prog->nodevars_init(n->head.nodevars);
}

void sgl_nodevars_reset_tree(sgl_node *n)
{
    sgl_nodevars_clear_tree(n);
    sgl_nodevars_init_tree(n);
}

void sgl_nodevars_each_tree(sgl_node *n, void (*fn)(const sgl_type *vt, sgl_vec *v))
{
    for (int i = 0; i < n->nlocal; i++) sgl_nodevars_each_tree(&n->kids[i], fn);
    if (n->head.nodevars && sgl_prog->nodevars_each) sgl_prog->nodevars_each(n->head.nodevars, fn);
}

sgl_bool sgl_q_master(const sgl_node *n) { return n->nchildren > 0; }
sgl_int sgl_q_nchildren(const sgl_node *n) { return n->nchildren; }
sgl_int sgl_q_child_index(const sgl_node *n) { return n->child_index; }
sgl_int sgl_q_depth(const sgl_node *n) { return n->depth; }
sgl_int sgl_q_nworkers(const sgl_node *n) { return n->nworkers; }

sgl_vec sgl_child_speeds(sgl_node *n)
{
    /* measured speeds (--sgl-speeds=auto, --sgl-machine: sgl_speed.c), or
     * the default: the workers of each child's subtree (the tree's
     * description knows them, local children or remote) */
    static const sgl_type vec_float = {.kind = SGL_T_VEC, .elem = &sgl_t_float};
    sgl_vec r = sgl_vec_new(&vec_float, n->nchildren, 0, 0);
    sgl_float *s = r.data;
    if (sgl_speed_children(n, s)) return r;
    for (int i = 0; i < n->nchildren; i++)
        s[i] = (sgl_float)n->shape->nworkers[n->shape->first[n->id] + i];
    return r;
}

static sgl_frame_slot *slot_at(sgl_node *n, int64_t d);

void sgl_tree_start(sgl_node *n)
{
    /* on the thread that runs n (local_start starts each child on its own
     * thread), what the first superstep would pay for otherwise: n's frame
     * stack (a thread's first allocation maps its malloc arena: glibc's
     * mmap, munmap, mprotect, sched_getaffinity, fresh pages) and the
     * thread's stack limit (pthread_getattr_np: sched_getaffinity again) */
    (void)slot_at(n, 0);
    sgl_stack_init();
    if (n->via) n->via->start(n);
}

void sgl_tree_shutdown(sgl_node *n, int status)
{
    if (n->via) n->via->shutdown(n, status);
}

void sgl_make_tracks(sgl_node *n)
{
    n->track = sgl_trace_track(n->path);
    for (int i = 0; i < n->nlocal; i++) sgl_make_tracks(&n->kids[i]);
}

/* ------------------------------------------------------------------ */
/* Frames                                                               */

static void slots_grow(sgl_node *n, int64_t d);

static inline sgl_frame_slot *slot_at(sgl_node *n, int64_t d)
{
    if (d >= n->nslots) slots_grow(n, d);
    return &n->slots[d];
}

static void slots_grow(sgl_node *n, int64_t d)
{
    int64_t cap = n->nslots ? n->nslots : 8;
    while (cap <= d) cap *= 2;
    sgl_frame_slot *s = realloc(n->slots, (size_t)cap * sizeof *s);
    if (!s) sgl_internal_error("out of memory (frame stack)");
    for (int64_t i = n->nslots; i < cap; i++)
        s[i] = (sgl_frame_slot){-1, -1, NULL, NULL};
    n->slots = s;
    n->nslots = cap;
}

static void slot_clear(sgl_frame_slot *s)
{
    if (s->frame) {
        s->free_fn(s->frame);
        free(s->frame);
    }
    *s = (sgl_frame_slot){-1, -1, NULL, NULL};
}

/* Drop every slot above depth d: those activations have ended.  Only
 * the slots below n->top can hold one (a superstep's child usually finds
 * nothing to drop). */
static void trim(sgl_node *n, int64_t d)
{
    for (int64_t i = d + 1; i < n->top; i++) slot_clear(&n->slots[i]);
    if (n->top > d + 1) n->top = d + 1;
}

/* Slot d is about to hold an activation. */
static void slot_used(sgl_node *n, int64_t d)
{
    if (n->top < d + 1) n->top = d + 1;
}

sgl_key sgl_enter(sgl_node *n)
{
    n->cur++;
    sgl_frame_slot *s = slot_at(n, n->cur);
    slot_clear(s);
    slot_used(n, n->cur);
    s->own_uid = n->next_uid++;
    return (sgl_key){n->cur, s->own_uid};
}

void sgl_leave(sgl_node *n, sgl_key k)
{
    trim(n, k.depth);
    slot_clear(slot_at(n, k.depth));
    n->cur = k.depth - 1;
}

/* The frame of node c for the master activation mk of site s. */
static void *frame_for(sgl_node *c, const sgl_site *s, sgl_key mk, sgl_key *ck)
{
    trim(c, mk.depth);
    sgl_frame_slot *sl = slot_at(c, mk.depth);
    slot_used(c, mk.depth);
    if (!sl->frame || sl->master_uid != mk.uid) {
        slot_clear(sl);
        sl->frame = calloc(1, s->frame_size ? s->frame_size : 1);
        if (!sl->frame) sgl_internal_error("out of memory (frame)");
        sl->free_fn = s->frame_free;
        sl->master_uid = mk.uid;
        sl->own_uid = c->next_uid++;
    }
    c->cur = mk.depth;
    *ck = (sgl_key){mk.depth, sl->own_uid};
    return sl->frame;
}

/* ------------------------------------------------------------------ */
/* Cancellation and the stack limit                                     */

_Thread_local const char *sgl_stack_limit;
static _Thread_local bool stack_known;

/* What is kept free below the limit: room for sgl_fail and the runtime
 * functions that generated code calls between two checks. */
#define STACK_MARGIN ((size_t)256 << 10)

void sgl_stack_init(void)
{
    if (stack_known) return;
    stack_known = true;
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return; /* no check on this thread */
    void *addr = NULL;
    size_t size = 0;
    if (pthread_attr_getstack(&a, &addr, &size) == 0 && addr && size) {
        size_t margin = size / 8 < STACK_MARGIN ? size / 8 : STACK_MARGIN;
        sgl_stack_limit = (const char *)addr + margin;
    }
    pthread_attr_destroy(&a);
}

_Noreturn void sgl_stack_fail(int line, int col) { sgl_fail(line, col, "recursion too deep"); }

/* The least stack a node's thread (and the main thread) must have: the
 * runtime's own frames, the margin below the recursion check (an eighth
 * of the stack) and the error path that reports `recursion too deep`.
 * Smaller stacks crashed (SIGSEGV) instead of reporting it. */
#define STACK_MIN ((size_t)128 << 10)


/* True if this process's stacks are big enough for the recursion check
 * to report `recursion too deep` (else a message; on every rank, so that
 * all of them stop together). */
bool sgl_stacks_fit(int rank, int nprocs)
{
    char msg[300] = "";
    struct rlimit rl;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < STACK_MIN)
        snprintf(msg, sizeof msg, "the stack limit (ulimit -s) is %llu KiB", (unsigned long long)rl.rlim_cur >> 10);
#ifdef SGL_USE_OMP
    size_t t = sgl_team_stacksize();
    if (!*msg && t && t < STACK_MIN)
        snprintf(msg, sizeof msg, "OMP_STACKSIZE=%.40s gives each thread %zu KiB of stack", getenv("OMP_STACKSIZE"),
                 t >> 10);
#endif
    if (*msg) {
        char where[40] = "";
        if (nprocs > 1) snprintf(where, sizeof where, " (rank %d)", rank);
        fprintf(stderr, "%s: runtime error: %s; a program needs at least %zu KiB%s\n", sgl_prog->file, msg,
                STACK_MIN >> 10, where);
    }
    int *all = malloc((size_t)nprocs * sizeof *all);
    if (!all) sgl_internal_error("out of memory (start)");
    sgl_mpi_allgather_int(*msg ? 0 : 1, all);
    bool ok = true;
    for (int r = 0; r < nprocs; r++)
        ok = ok && all[r];
    free(all);
    return ok;
}

_Noreturn void sgl_unwind(sgl_node *n)
{
    n->errmsg = NULL;
    if (!n->boundary) sgl_internal_error("a node was cancelled outside an action");
    longjmp(*n->boundary, 1);
}

void sgl_check_slow(sgl_node *n)
{
    if (atomic_load_explicit(&n->head.cancelled, memory_order_relaxed) & SGL_CANCEL_STOP)
        sgl_unwind(n);
    atomic_fetch_and_explicit(&n->head.cancelled, ~SGL_CANCEL_POLL, memory_order_relaxed);
    sgl_mpi_poll(); /* may cancel n (its own thread) */
    if (atomic_load_explicit(&n->head.cancelled, memory_order_relaxed) & SGL_CANCEL_STOP)
        sgl_unwind(n);
}

static void cancel_subtree(sgl_node *c)
{
    atomic_store(&c->cancel_at, 0);
    atomic_store(&c->head.cancelled, SGL_CANCEL_STOP);
    for (int k = 0; k < c->nlocal; k++) cancel_subtree(&c->kids[k]);
}

void sgl_cancel_from(sgl_node *c, int limit)
{
    int cur = atomic_load(&c->cancel_at);
    while (limit < cur && !atomic_compare_exchange_weak(&c->cancel_at, &cur, limit)) {
    }
    /* sequentially consistent with the child's store of cur_op before
     * its load of cancel_at (sgl_child_run): one of the two sees the
     * other */
    if (atomic_load(&c->cur_op) >= limit) cancel_subtree(c);
}

void sgl_cancel_after(sgl_node *n, int op, int child)
{
    for (int k = 0; k < n->nlocal; k++) {
        sgl_node *c = &n->kids[k];
        if (c->child_index == child) continue;
        sgl_cancel_from(c, c->child_index > child ? op : op + 1);
    }
}

/* ------------------------------------------------------------------ */
/* One child's run of a superstep                                       */

static const char *op_name(sgl_op_kind k)
{
    switch (k) {
    case SGL_OP_SCATTER: return "scatter";
    case SGL_OP_BCAST: return "bcast";
    case SGL_OP_PARDO: return "pardo";
    case SGL_OP_GATHER: return "gather";
    }
    return "?";
}

void sgl_child_begin(sgl_node *c, sgl_child_result *r)
{
    SGL_SET(r->failed_op, -1);
    SGL_SET(r->msg, NULL);
    SGL_SET(r->compute, 0);
    if (c->files.n) sgl_files_clear(&c->files); /* io: the files of this superstep only */
}

/* Ops j0 .. j1 - 1 of child c, which has not failed: the error boundary
 * (setjmp) in a function of its own, so that no variable of the caller
 * lives across it. */
static void child_ops_run(sgl_node *c, const sgl_site *s, sgl_key mk, void **in, void **out,
                          sgl_child_result *r, int j0, int j1)
{
    sgl_node *saved_cur = sgl_cur;
    jmp_buf *saved_boundary = c->boundary;
    jmp_buf jb;
    volatile int j = j0; /* the op running, for the failure's side below */
    sgl_cur = c;
    c->boundary = &jb;
    if (!stack_known) sgl_stack_init();
    double t0 = sgl_instr ? sgl_wtime() : 0;
    if (setjmp(jb) == 0) {
        sgl_key ck;
        void *frame = frame_for(c, s, mk, &ck);
        /* a child with a master in this process may be cancelled by a
         * sibling's thread (sgl_cancel_after: its store of cancel_at and
         * this store of cur_op are ordered, so that one of the two sees
         * the other); any other only by its own thread (sgl_mpi.c's poll) */
        bool shared = c->parent != NULL;
        for (int jj = j0; jj < j1; jj++) {
            const sgl_op *op = &s->ops[jj];
            j = jj;
            if (shared) {
                atomic_store(&c->cur_op, jj);
                if (jj >= atomic_load(&c->cancel_at)) sgl_unwind(c);
            } else {
                atomic_store_explicit(&c->cur_op, jj, memory_order_relaxed);
                if (jj >= atomic_load_explicit(&c->cancel_at, memory_order_relaxed)) sgl_unwind(c);
            }
            switch (op->kind) {
            case SGL_OP_SCATTER:
            case SGL_OP_BCAST: op->recv(c, ck, frame, in[jj]); break;
            case SGL_OP_PARDO: op->body(c, ck, frame); break;
            case SGL_OP_GATHER: op->eval(c, ck, frame, out[jj]); break;
            }
            SGL_SET(r->seg_end[jj], sgl_out_pos(c));
        }
    } else {
        r->failed_op = j;
        r->msg = c->errmsg; /* NULL: cancelled */
        sgl_files_failed(c); /* io */
        c->errmsg = NULL;
        for (int k = j; k < j1; k++) r->seg_end[k] = sgl_out_pos(c);
        if (r->msg && c->parent) sgl_cancel_after(c->parent, j, c->child_index);
    }
    atomic_store_explicit(&c->cur_op, -1,
                          c->parent ? memory_order_seq_cst : memory_order_relaxed);
    if (sgl_instr) {
        double t1 = sgl_wtime();
        r->compute += t1 - t0;
        sgl_trace_span(c->track, "compute", s, t0, t1);
    }
    c->boundary = saved_boundary;
    sgl_cur = saved_cur;
}

void sgl_child_ops(sgl_node *c, const sgl_site *s, sgl_key mk, void **in, void **out,
                   sgl_child_result *r, int j0, int j1)
{
    if (r->failed_op >= 0) { /* failed or cancelled in an earlier op: nothing more */
        for (int k = j0; k < j1; k++) r->seg_end[k] = sgl_out_pos(c);
        return;
    }
    child_ops_run(c, s, mk, in, out, r, j0, j1);
}

void sgl_child_end(sgl_node *c, const sgl_site *s, sgl_child_result *r)
{
    if (r->failed_op >= 0)
        for (int k = r->failed_op; k < s->nops; k++) r->seg_end[k] = sgl_out_pos(c);
    sgl_out_result(c, r); /* io */
    if (c->files.cap || r->files.cap) { /* io: moved (no storage on either side: nothing) */
        r->files = c->files;
        c->files = (sgl_fileset){0};
    }
}

void sgl_child_run(sgl_node *c, const sgl_site *s, sgl_key mk, void **in, void **out,
                   sgl_child_result *r)
{
    sgl_child_begin(c, r);
    sgl_child_ops(c, s, mk, in, out, r, 0, s->nops);
    sgl_child_end(c, s, r);
}

/* ------------------------------------------------------------------ */
/* The master's side of a superstep, for every transport                */

/* The node's results array for a superstep with nk children (reused). */
static sgl_child_result *results_for(sgl_node *n, int nk)
{
    if (nk > n->res_cap) {
        sgl_child_result *r = sgl_lines_calloc((size_t)nk, sizeof *r);
        if (!r) sgl_internal_error("out of memory (superstep)");
        if (n->res_cap) memcpy(r, n->res, (size_t)n->res_cap * sizeof *r);
        free(n->res);
        n->res = r;
        n->res_cap = nk;
    }
    return n->res;
}

/* Checks the site and the scatters' lengths; returns the site's masks. */
static const sgl_masks *check_args(sgl_node *n, const sgl_site *s, sgl_arg *args)
{
    if (s->nops > SGL_MAX_OPS)
        sgl_internal_error("a superstep site with a bad number of operations");
    if (n->nchildren == 0)
        sgl_fail(s->ops[0].line, s->ops[0].col, "%s on a worker (a node with no children)",
                 op_name(s->ops[0].kind));
    const sgl_masks *m = sgl_site_masks(s);
    for (uint64_t sc = m->scatter; sc;) {
        int j = sgl_mask_next(&sc);
        const sgl_op *op = &s->ops[j];
        const sgl_vec *v = args[j].src;
        if (v->len != n->nchildren)
            sgl_fail(op->line, op->col,
                     "scatter of a vector of length %lld to %d %s (the lengths must be equal)",
                     (long long)v->len, n->nchildren, n->nchildren == 1 ? "child" : "children");
    }
    return m;
}

void sgl_alloc_gathers(sgl_node *n, const sgl_site *s, sgl_arg *args)
{
    for (uint64_t g = sgl_site_masks(s)->gather; g;) {
        int j = sgl_mask_next(&g);
        const sgl_op *op = &s->ops[j];
        /* every element is stored by its child's gather before anyone
         * reads the vector (after a failure nobody does): numbers are
         * left uninitialized (malloc, not calloc), vectors zeroed */
        sgl_type vt = {.kind = SGL_T_VEC, .elem = op->type};
        *(sgl_vec *)args[j].dst = sgl_vec_new_uninit(&vt, n->nchildren, op->line, op->col);
    }
}

/* Owned scatter sources gave (some of) their elements away, leaving
 * empty vectors behind: release what is left. */
void sgl_release_sources(const sgl_site *s, sgl_arg *args)
{
    for (uint64_t sc = sgl_site_masks(s)->scatter; sc;) {
        int j = sgl_mask_next(&sc);
        if (args[j].owned) {
            sgl_type vt = {.kind = SGL_T_VEC, .elem = s->ops[j].type};
            sgl_vec_free(&vt, args[j].src);
        }
    }
}

/* Instrumentation (sgl_instr.c): bytes moved, compute times, spans.
 * Adds the bytes of the elements of v (one per child) to *total, and the
 * largest of them to *h. */
static void count_elements(const sgl_type *t, const sgl_vec *v, double *total, double *h)
{
    size_t sz = sgl_sizeof(t);
    double hmax = 0;
    for (int64_t i = 0; i < v->len; i++) {
        double b = (double)sgl_ser_size(t, (const char *)v->data + (size_t)i * sz);
        *total += b;
        if (b > hmax) hmax = b;
    }
    *h += hmax;
}

static void step_begin(sgl_node *n, const sgl_site *s, sgl_arg *args, sgl_step_rec *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->site = s;
    rec->level = n->depth;
    rec->nkids = n->nchildren;
    rec->t0 = sgl_wtime();
    for (int j = 0; j < s->nops; j++) {
        const sgl_op *op = &s->ops[j];
        if (op->kind == SGL_OP_SCATTER) {
            count_elements(op->type, args[j].src, &rec->bytes[0], &rec->h[0]);
        } else if (op->kind == SGL_OP_BCAST) {
            double b = (double)sgl_ser_size(op->type, args[j].src);
            rec->bytes[1] += b * n->nchildren;
            rec->h[1] += b;
        }
    }
    sgl_instr_children_in(n, s, args);
}

static void step_end(sgl_node *n, const sgl_site *s, sgl_arg *args, const sgl_child_result *res,
                     int nk, sgl_step_rec *rec)
{
    rec->t1 = sgl_wtime();
    for (int i = 0; i < nk; i++) {
        rec->csum += res[i].compute;
        if (res[i].compute > rec->cmax) rec->cmax = res[i].compute;
    }
    for (int j = 0; j < s->nops; j++) {
        const sgl_op *op = &s->ops[j];
        if (op->kind == SGL_OP_GATHER)
            count_elements(op->type, args[j].dst, &rec->bytes[2], &rec->h[2]);
    }
    sgl_instr_step(rec);
    sgl_instr_children_out(n, res, rec);
    sgl_trace_span(n->track, "superstep", s, rec->t0, rec->t1);
}

/* Whether the merge has something to do: a failure, output, files used
 * (or a file set's storage to release), or the root's own output to
 * write.  Most supersteps of a loop have none of these; the merge then
 * costs more than the rest of a short superstep. */
static bool merge_needed(const sgl_node *n, const sgl_site *s, const sgl_child_result *res,
                         int nk)
{
    if (n->is_root && n->out.len > 0) return true;
    int last = s->nops - 1; /* a site has an op at least */
    bool any = false;
    for (int i = 0; i < nk; i++) {
        const sgl_child_result *r = &res[i];
        any |= (r->failed_op >= 0) | (r->seg_end[last] > 0) | (r->files.cap > 0);
    }
    return any;
}

void sgl_superstep(sgl_node *n, sgl_key k, const sgl_site *s, sgl_arg *args)
{
    if (sgl_cancelled(n)) sgl_unwind(n);
    const sgl_masks *m = check_args(n, s, args);
    /* a temporary's elements may be moved to the children only if nobody
     * else shares its buffer */
    for (uint64_t sc = m->scatter; sc;) {
        int j = sgl_mask_next(&sc);
        if (args[j].owned) args[j].owned = sgl_vec_unique(args[j].src);
    }
    sgl_step_rec rec_storage, *rec = NULL;
    if (sgl_instr) {
        rec = &rec_storage;
        step_begin(n, s, args, rec);
    }
    int nk = n->nchildren;
    sgl_child_result *res = results_for(n, nk);
    n->via->superstep(n, k, s, args, res, rec); /* sgl_alloc_gathers, sgl_release_sources */
    /* the merge reads the children's output through res[i] and may
     * raise: empty the local children's output first (the bytes stay
     * readable until they print again) */
    for (int i = 0; i < n->nlocal; i++)
        if (sgl_out_pos(&n->kids[i]) > 0) sgl_out_reset(&n->kids[i]);
    if (rec) step_end(n, s, args, res, nk, rec);
    if (merge_needed(n, s, res, nk)) sgl_merge_results(n, s, res, nk);
}
