/*
 * sgl_local.c: the local transport (sgl_internal.h): the children of a
 * master are nodes of this process.  A superstep runs them one after the
 * other, op by op (the seq target: seq_superstep), or, with SGL_USE_OMP,
 * on the master's team of threads (sgl_team.c), one thread per child;
 * thread levels nest (a child's own team).  Inputs are
 * handed over in shared memory: a scatter's element is moved (an owned,
 * unshared source) or copied, a bcast's value is copied for each child.
 */
#include "sgl_internal.h"
#include "sgl_team.h"
#include "sgl_vbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SGL_USE_OMP
#include <omp.h>
#endif

/* What a child needs of the master's argument for op j: a scatter's
 * elements or a gather's places (base, each `size` bytes), where a
 * bcast's value is (base); owned: a scatter's elements may be moved.  The
 * master of a thread level on a team (run_children; not a library's
 * OpenMP levels) plans once for all its children before they start, so
 * that a member's first reads are of one struct instead of a chain of the
 * master's lines (args, the vector, its data), each a miss from another
 * core. */
typedef struct op_plan {
    char *base;
    size_t size;
    bool owned;
} op_plan;

static op_plan plan_of(const sgl_site *s, const sgl_arg *args, int j)
{
    const sgl_op *op = &s->ops[j];
    op_plan p = {NULL, 0, args[j].owned};
    if (op->kind == SGL_OP_SCATTER) {
        p.base = ((sgl_vec *)args[j].src)->data;
        p.size = sgl_sizeof(op->type);
    } else if (op->kind == SGL_OP_BCAST) {
        p.base = args[j].src;
    } else if (op->kind == SGL_OP_GATHER) {
        p.base = ((sgl_vec *)args[j].dst)->data;
        p.size = sgl_sizeof(op->type);
    }
    return p;
}

/* Child i's input (or output place) for op j of site s, planned as p. */
static void local_input(const sgl_site *s, const op_plan *p, int i, int j, void **in, void **out,
                        sgl_slot *tmp)
{
    const sgl_op *op = &s->ops[j];
    in[j] = out[j] = NULL;
    if (op->kind == SGL_OP_SCATTER) {
        char *elem = p->base + (size_t)i * p->size;
        if (p->owned) {
            in[j] = elem;
        } else {
            in[j] = sgl_op_place(s, j, &tmp[j]);
            sgl_value_copy(op->type, in[j], elem);
        }
    } else if (op->kind == SGL_OP_BCAST) {
        in[j] = sgl_op_place(s, j, &tmp[j]);
        sgl_value_copy(op->type, in[j], p->base);
    } else if (op->kind == SGL_OP_GATHER) {
        out[j] = p->base + (size_t)i * p->size;
    }
}

void sgl_local_inputs(const sgl_site *s, sgl_arg *args, int i, void **in, void **out,
                      sgl_slot *tmp)
{
    for (int j = 0; j < s->nops; j++) {
        op_plan p = plan_of(s, args, j);
        local_input(s, &p, i, j, in, out, tmp);
    }
}

/* Op j's input was placed by sgl_slot_place (a copy), not the owned
 * source's element itself. */
static bool placed(const sgl_op *op, const sgl_arg *arg)
{
    return op->kind == SGL_OP_BCAST || (op->kind == SGL_OP_SCATTER && !arg->owned);
}

void sgl_local_inputs_free(const sgl_site *s, const sgl_arg *args, void **in, sgl_slot *tmp)
{
    for (int j = 0; j < s->nops; j++)
        if (placed(&s->ops[j], &args[j])) sgl_slot_release(&tmp[j], in[j]);
}

#ifndef SGL_USE_OMP
/* The seq target runs a superstep of several ops op by op, child by child:
 * the sequential order itself (brief §1), so that a child's failure in op
 * j stops every later op of the earlier children too, before it runs
 * (sgl_cancel_after's cancel_at, checked as each op begins). */
static void seq_superstep(sgl_node *n, sgl_key k, const sgl_site *s, sgl_arg *args,
                          sgl_child_result *res)
{
    int nk = n->nchildren;
    for (int i = 0; i < nk; i++) sgl_child_begin(&n->kids[i], &res[i]);
    for (int j = 0; j < s->nops; j++) {
        for (int i = 0; i < nk; i++) {
            void *in[SGL_MAX_OPS], *out[SGL_MAX_OPS];
            sgl_slot tmp[SGL_MAX_OPS];
            bool runs = res[i].failed_op < 0;
            op_plan p = plan_of(s, args, j);
            if (runs) local_input(s, &p, i, j, in, out, tmp);
            sgl_child_ops(&n->kids[i], s, k, in, out, &res[i], j, j + 1);
            if (runs && placed(&s->ops[j], &args[j])) sgl_slot_release(&tmp[j], in[j]);
        }
    }
    for (int i = 0; i < nk; i++) sgl_child_end(&n->kids[i], s, &res[i]);
}
#endif

bool sgl_local_serial;

/* Runs child i of the superstep, its inputs and output places from plan
 * (one per op of s). */
static void planned_child(sgl_node *n, sgl_key k, const sgl_site *s, const sgl_arg *args,
                          const op_plan *plan, sgl_child_result *res, int i)
{
    void *in[SGL_MAX_OPS], *out[SGL_MAX_OPS];
    sgl_slot tmp[SGL_MAX_OPS];
    for (int j = 0; j < s->nops; j++) local_input(s, &plan[j], i, j, in, out, tmp);
    sgl_child_run(&n->kids[i], s, k, in, out, &res[i]);
    sgl_local_inputs_done(s, args, in, tmp);
}

static void local_child(sgl_node *n, sgl_key k, const sgl_site *s, sgl_arg *args,
                        sgl_child_result *res, int i)
{
    op_plan plan[SGL_MAX_OPS];
    for (int j = 0; j < s->nops; j++) plan[j] = plan_of(s, args, j);
    planned_child(n, k, s, args, plan, res, i);
}

#if defined(SGL_USE_OMP) && defined(SGL_LIBRARY)
/* A library's thread levels run in an OpenMP parallel region, one thread
 * per child: a host may load many copies of a library (sglc.load) and
 * never end them, and the copies share libgomp's pool of idle threads,
 * where each copy's teams would keep threads of their own for ever. */
static void run_children(sgl_node *n, sgl_key k, const sgl_site *s, sgl_arg *args,
                         sgl_child_result *res)
{
#pragma omp parallel for schedule(static, 1) num_threads(n->nchildren)
    for (int i = 0; i < n->nchildren; i++) local_child(n, k, s, args, res, i);
}

static void start_children(sgl_node *n)
{
#pragma omp parallel for schedule(static, 1) num_threads(n->nchildren)
    for (int i = 0; i < n->nchildren; i++) sgl_tree_start(&n->kids[i]);
}
#elif defined(SGL_USE_OMP)
/* A superstep of a thread level runs on the master's team (sgl_team.h):
 * child i on member i's thread, child 0 on the master's own.  In an MPI
 * process whose main thread must keep polling for remote failures and
 * stop messages (sgl_mpi_polling), the main thread, once its own child
 * is done, polls every POLL_MS while it waits for the others, so that a
 * thread child that loops for ever past a remote failure can be stopped
 * (docs/execution.md, cancellation). */
#define POLL_MS 5

typedef struct step_ctx {
    sgl_node *n;
    sgl_key k;
    const sgl_site *s;
    sgl_arg *args;
    sgl_child_result *res;
    op_plan plan[SGL_MAX_OPS]; /* the first s->nops */
} step_ctx;

static void step_member(void *ctx, int i)
{
    step_ctx *c = ctx;
    planned_child(c->n, c->k, c->s, c->args, c->plan, c->res, i);
}

static void run_children(sgl_node *n, sgl_key k, const sgl_site *s, sgl_arg *args,
                         sgl_child_result *res)
{
    _Alignas(128) step_ctx c; /* (only the first s->nops plans are written and read) */
    c.n = n;
    c.k = k;
    c.s = s;
    c.args = args;
    c.res = res;
    for (int j = 0; j < s->nops; j++) c.plan[j] = plan_of(s, args, j);
    sgl_team_run(n->team, step_member, &c, sgl_mpi_polling() ? sgl_mpi_poll : NULL, POLL_MS);
}

static void start_member(void *ctx, int i)
{
    sgl_tree_start(&((sgl_node *)ctx)->kids[i]);
}

static void start_children(sgl_node *n)
{
    n->team = sgl_team_new(n->nchildren, sgl_team_stacksize());
    if (!n->team) {
        char what[200];
        snprintf(what, sizeof what, "cannot start the %d threads of a thread level (%s)",
                 n->nchildren - 1, strerror(errno));
        sgl_internal_error(what);
    }
    sgl_team_run(n->team, start_member, n, NULL, 0);
}

/* sgl_team_copy (sgl_vbuf.h): member i copies the i-th of the team's
 * equal shares (cut at 64-byte lines).  No poll while the caller waits:
 * the copy takes milliseconds and cannot fail. */
typedef struct copy_ctx {
    char *dst;
    const char *src;
    size_t n;
    int parts;
} copy_ctx;

static size_t copy_cut(const copy_ctx *c, int i)
{
    return i == c->parts ? c->n : (c->n / (size_t)c->parts * (size_t)i) & ~(size_t)63;
}

static void copy_member(void *ctx, int i)
{
    copy_ctx *c = ctx;
    size_t a = copy_cut(c, i), b = copy_cut(c, i + 1);
    memcpy(c->dst + a, c->src + a, b - a);
}

bool sgl_team_copy(void *dst, const void *src, size_t n)
{
    sgl_node *me = sgl_cur;
    if (n < SGL_TEAM_COPY_MIN || !me || !me->team || sgl_local_serial)
        return false;
    copy_ctx c = {dst, src, n, me->nchildren};
    sgl_team_run(me->team, copy_member, &c, NULL, 0);
    return true;
}
#endif

#if !defined(SGL_USE_OMP) || defined(SGL_LIBRARY)
bool sgl_team_copy(void *dst, const void *src, size_t n)
{
    (void)dst;
    (void)src;
    (void)n;
    return false; /* no team: children run in an OpenMP region, or one by one */
}
#endif

static void local_superstep(sgl_node *n, sgl_key k, const sgl_site *s, sgl_arg *args,
                            sgl_child_result *res, sgl_step_rec *rec)
{
    (void)rec; /* the local transport adds no timeline spans of its own */
    int nk = n->nchildren;
    sgl_alloc_gathers(n, s, args);
#ifndef SGL_USE_OMP
    if (s->nops > 1 && nk > 1) {
        seq_superstep(n, k, s, args, res);
        sgl_release_sources(s, args);
        return;
    }
#else
    if (nk > 1 && !sgl_local_serial) {
        /* every core may run a child: the big buffers the children free
         * are unmapped after the join (sgl_blocks.c) */
        sgl_unmap_hold();
        run_children(n, k, s, args, res);
        sgl_unmap_release();
        sgl_release_sources(s, args);
        return;
    }
#endif
    /* one child after the other on this thread: one child, the seq target,
     * or sgl_local_serial (each child runs all the superstep's ops, one of
     * the orders the threads could have run them in) */
    for (int i = 0; i < nk; i++) local_child(n, k, s, args, res, i);
    sgl_release_sources(s, args);
}

/* Start the threads of n's thread levels now (nested teams included,
 * each child started on its own thread), so that the first superstep does
 * not pay for creating them. */
static void local_start(sgl_node *n)
{
    int nk = n->nchildren;
#ifdef SGL_USE_OMP
    if (nk > 1 && !sgl_local_serial) {
        start_children(n);
        return;
    }
#endif
    for (int i = 0; i < nk; i++) sgl_tree_start(&n->kids[i]);
}

/* Local children need no message to stop, and every node below them is
 * local too (thread levels are below process levels): stop the threads
 * of n's team and of the teams below (none in a library). */
static void local_shutdown(sgl_node *n, int status)
{
    for (int i = 0; i < n->nlocal; i++) sgl_tree_shutdown(&n->kids[i], status);
    sgl_team_free(n->team); /* (NULL: none) */
    n->team = NULL;
}

const sgl_transport sgl_transport_local = {
    .start = local_start,
    .superstep = local_superstep,
    .shutdown = local_shutdown,
};

void sgl_local_build(sgl_node *n)
{
    if (n->nchildren == 0) return;
    n->via = &sgl_transport_local;
    n->kids = sgl_lines_calloc((size_t)n->nchildren, sizeof *n->kids);
    if (!n->kids) sgl_internal_error("out of memory (tree)");
    n->nlocal = n->nchildren;
    int64_t first = n->shape->first[n->id];
    for (int i = 0; i < n->nchildren; i++) {
        sgl_node_init(&n->kids[i], n->path, n->shape, n->depth + 1, first + i, i);
        n->kids[i].parent = n;
        sgl_local_build(&n->kids[i]);
    }
}

int sgl_local_default_threads(void)
{
#ifdef SGL_USE_OMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

void sgl_local_configure(int levels)
{
#ifdef SGL_USE_OMP
    omp_set_dynamic(0);
    omp_set_max_active_levels(levels > 0 ? levels : 1);
#else
    (void)levels;
#endif
}
