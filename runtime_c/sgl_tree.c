/*
 * sgl_tree.c: the machine tree of an SGL program and the supersteps that
 * run on it.
 *
 * Every node of the tree that lives in this process has an sgl_node.  A
 * master reaches its children through one of two transports:
 *
 *   LOCAL  children in this process: run one after the other (seq target)
 *          or in an OpenMP parallel region (SGL_USE_OMP);
 *   MPI    children are MPI processes of a sub-communicator in which the
 *          master is rank 0; child 0 lives in the master's process and is
 *          run locally, the others wait in worker_loop() for commands.
 *
 * Frames.  Each node keeps a stack of slots indexed by activation depth.
 * A function that runs supersteps calls sgl_enter(), which gives its
 * activation a key (depth, uid).  A command from the master carries the
 * master's key; the child trims its stack to that depth and finds (or
 * makes) the frame for that key: the child's copies of the master's
 * variables, which therefore live as long as the master's activation and
 * keep their values from one superstep to the next (brief §6.2).
 *
 * Output.  print appends to the node's buffer.  After a superstep the
 * master appends its children's output, op by op and child by child, to
 * its own; the root writes its buffer to stdout.  So the program prints
 * what its sequential depth-first execution prints (brief §1, §8).
 *
 * Errors.  sgl_fail() formats the message and longjmps to the boundary of
 * the node's current action; the master re-raises the first failure in
 * sequential order, and the root prints it and stops every process
 * (brief §9).
 */
#define _POSIX_C_SOURCE 200809L
#include "sgl.h"
#include "sgl_instr.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SGL_USE_MPI
#include <mpi.h>
#endif
#ifdef SGL_USE_OMP
#include <omp.h>
#endif

#define SGL_MAX_OPS 64

enum { KIDS_NONE, KIDS_LOCAL, KIDS_MPI };

typedef struct frame_slot {
    int64_t master_uid; /* key uid of the master activation, -1 for own calls */
    int64_t own_uid;    /* this node's uid for the activation */
    void *frame;        /* this node's copies, NULL for its own calls */
    void (*free_fn)(void *frame);
} frame_slot;

struct sgl_node {
    int depth;
    int child_index;
    int nchildren;
    int64_t nworkers;
    bool is_root;
    char path[8 * SGL_MAX_LEVELS];
    sgl_buf out;

    frame_slot *slots;
    int64_t nslots;
    int64_t cur;
    int64_t next_uid;

    int kids_kind;
    bool kids_threaded;
    sgl_node *kids; /* LOCAL: nchildren nodes; MPI: the local child 0 */
#ifdef SGL_USE_MPI
    MPI_Comm comm_down; /* to the children (this node is rank 0) */
    MPI_Comm comm_up;   /* to the master, for a node run by worker_loop */
#endif
    jmp_buf *boundary;
    char *errmsg;
    sgl_track *track; /* timeline, with --sgl-trace */
    /* scratch space of this node's supersteps, kept from one to the next */
    struct child_result *res;
    int res_cap;
    sgl_buf *msgs;
    int msgs_cap;
};

/* What one child's run of a superstep produced. */
typedef struct child_result child_result;
struct child_result {
    int failed_op; /* -1: none */
    char *msg;     /* the failure's message (owned) */
    double compute; /* seconds spent running the ops */
    const char *out;
    size_t seg_end[SGL_MAX_OPS]; /* end of each op's output in out */
};

static void fatal_internal(const char *what);

/* The node's results array for a superstep with nk children (reused). */
static child_result *results_for(sgl_node *n, int nk)
{
    if (nk > n->res_cap) {
        child_result *r = realloc(n->res, (size_t)nk * sizeof *r);
        if (!r) fatal_internal("out of memory (superstep)");
        n->res = r;
        n->res_cap = nk;
    }
    return n->res;
}

static const sgl_program *g_prog;
static _Thread_local sgl_node *g_cur;
static int g_exit_status;

/* ------------------------------------------------------------------ */
/* Errors                                                               */

static void fatal_internal(const char *what)
{
    fflush(stdout);
    fprintf(stderr, "%s: runtime error: %s\n", g_prog ? g_prog->file : "sgl", what);
#ifdef SGL_USE_MPI
    int init = 0;
    MPI_Initialized(&init);
    if (init) MPI_Abort(MPI_COMM_WORLD, 1);
#endif
    exit(1);
}

#ifdef SGL_USE_MPI
#define MPI_CHECK(call)                                                      \
    do {                                                                     \
        int rc_ = (call);                                                    \
        if (rc_ != MPI_SUCCESS) {                                            \
            char s_[MPI_MAX_ERROR_STRING + 64];                              \
            int n_ = 0;                                                      \
            MPI_Error_string(rc_, s_, &n_);                                  \
            s_[n_] = '\0';                                                   \
            fatal_internal(s_);                                              \
        }                                                                    \
    } while (0)
#endif

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (!p) fatal_internal("out of memory");
    memcpy(p, s, n);
    return p;
}

static _Noreturn void raise_msg(sgl_node *n, char *msg)
{
    n->errmsg = msg;
    if (!n->boundary) fatal_internal(msg);
    longjmp(*n->boundary, 1);
}

void sgl_fail(int line, int col, const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    sgl_node *n = g_cur;
    char msg[1400];
    const char *file = g_prog ? g_prog->file : "sgl";
    const char *path = n ? n->path : "?";
    if (line > 0)
        snprintf(msg, sizeof msg, "%s:%d:%d: runtime error: %s (node %s)", file, line, col, what, path);
    else
        snprintf(msg, sizeof msg, "%s: runtime error: %s (node %s)", file, what, path);
    if (!n) fatal_internal(msg);
    raise_msg(n, dup_str(msg));
}

/* ------------------------------------------------------------------ */
/* Node queries and output                                              */

sgl_bool sgl_q_master(const sgl_node *n) { return n->nchildren > 0; }
sgl_int sgl_q_nchildren(const sgl_node *n) { return n->nchildren; }
sgl_int sgl_q_child_index(const sgl_node *n) { return n->child_index; }
sgl_int sgl_q_depth(const sgl_node *n) { return n->depth; }
sgl_int sgl_q_nworkers(const sgl_node *n) { return n->nworkers; }

sgl_vec sgl_child_speeds(sgl_node *n)
{
    /* the default speeds: the workers of each child's subtree (trees are
     * regular, so each child has nworkers / nchildren of them) */
    sgl_vec r = sgl_vec_new(&(sgl_type){SGL_T_VEC, &sgl_t_float}, n->nchildren, 0, 0);
    for (int i = 0; i < n->nchildren; i++)
        ((sgl_float *)r.data)[i] = (sgl_float)(n->nworkers / n->nchildren);
    return r;
}

sgl_buf *sgl_out(sgl_node *n) { return &n->out; }

static void flush_root(sgl_node *n)
{
    if (n->is_root && n->out.len > 0) {
        fwrite(n->out.data, 1, n->out.len, stdout);
        n->out.len = 0;
    }
}

void sgl_print_end(sgl_node *n)
{
    sgl_buf_put(&n->out, "\n", 1);
    if (n->is_root && n->out.len >= 1 << 16) flush_root(n);
}

/* ------------------------------------------------------------------ */
/* Frames                                                               */

static frame_slot *slot_at(sgl_node *n, int64_t d)
{
    if (d >= n->nslots) {
        int64_t cap = n->nslots ? n->nslots : 8;
        while (cap <= d) cap *= 2;
        frame_slot *s = realloc(n->slots, (size_t)cap * sizeof *s);
        if (!s) fatal_internal("out of memory (frame stack)");
        for (int64_t i = n->nslots; i < cap; i++)
            s[i] = (frame_slot){-1, -1, NULL, NULL};
        n->slots = s;
        n->nslots = cap;
    }
    return &n->slots[d];
}

static void slot_clear(frame_slot *s)
{
    if (s->frame) {
        s->free_fn(s->frame);
        free(s->frame);
    }
    *s = (frame_slot){-1, -1, NULL, NULL};
}

/* Drop every slot above depth d: those activations have ended. */
static void trim(sgl_node *n, int64_t d)
{
    for (int64_t i = d + 1; i < n->nslots; i++) {
        slot_clear(&n->slots[i]);
    }
}

sgl_key sgl_enter(sgl_node *n)
{
    n->cur++;
    frame_slot *s = slot_at(n, n->cur);
    slot_clear(s);
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
    frame_slot *sl = slot_at(c, mk.depth);
    if (!sl->frame || sl->master_uid != mk.uid) {
        slot_clear(sl);
        sl->frame = calloc(1, s->frame_size ? s->frame_size : 1);
        if (!sl->frame) fatal_internal("out of memory (frame)");
        sl->free_fn = s->frame_free;
        sl->master_uid = mk.uid;
        sl->own_uid = c->next_uid++;
    }
    c->cur = mk.depth;
    *ck = (sgl_key){mk.depth, sl->own_uid};
    return sl->frame;
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

/* in[j]: owned input value of a SCATTER/BCAST op (moved into the child);
 * out[j]: where a GATHER op's value goes. */
static void child_run(sgl_node *c, const sgl_site *s, sgl_key mk, void **in, void **out,
                      child_result *r)
{
    sgl_node *saved_cur = g_cur;
    jmp_buf *saved_boundary = c->boundary;
    jmp_buf jb;
    volatile int j = 0;
    g_cur = c;
    r->failed_op = -1;
    r->msg = NULL;
    c->boundary = &jb;
    double t0 = sgl_instr ? sgl_wtime() : 0;
    if (setjmp(jb) == 0) {
        sgl_key ck;
        void *frame = frame_for(c, s, mk, &ck);
        for (j = 0; j < s->nops; j++) {
            const sgl_op *op = &s->ops[j];
            switch (op->kind) {
            case SGL_OP_SCATTER:
            case SGL_OP_BCAST: op->recv(c, ck, frame, in[j]); break;
            case SGL_OP_PARDO: op->body(c, ck, frame); break;
            case SGL_OP_GATHER: op->eval(c, ck, frame, out[j]); break;
            }
            r->seg_end[j] = c->out.len;
        }
    } else {
        r->failed_op = j;
        r->msg = c->errmsg;
        c->errmsg = NULL;
        for (int k = j; k < s->nops; k++) r->seg_end[k] = c->out.len;
    }
    r->out = c->out.data;
    r->compute = 0;
    if (sgl_instr) {
        double t1 = sgl_wtime();
        r->compute = t1 - t0;
        sgl_trace_span(c->track, "compute", s, t0, t1);
    }
    c->boundary = saved_boundary;
    g_cur = saved_cur;
}

/* Append the children's output and raise the first failure, in the
 * order of the sequential execution: op by op, child by child. */
static void finish(sgl_node *n, const sgl_site *s, child_result *res, int nkids)
{
    for (int j = 0; j < s->nops; j++) {
        for (int i = 0; i < nkids; i++) {
            child_result *r = &res[i];
            size_t start = j ? r->seg_end[j - 1] : 0;
            if (r->seg_end[j] > start) sgl_buf_put(&n->out, r->out + start, r->seg_end[j] - start);
            if (r->failed_op == j) {
                char *msg = r->msg;
                r->msg = NULL;
                for (int k = 0; k < nkids; k++) free(res[k].msg);
                flush_root(n);
                raise_msg(n, msg);
            }
        }
    }
    if (n->is_root) flush_root(n);
}

static void check_args(sgl_node *n, const sgl_site *s, sgl_arg *args)
{
    if (n->nchildren == 0)
        sgl_fail(s->ops[0].line, s->ops[0].col, "%s on a worker (a node with no children)",
                 op_name(s->ops[0].kind));
    for (int j = 0; j < s->nops; j++) {
        const sgl_op *op = &s->ops[j];
        if (op->kind == SGL_OP_SCATTER) {
            const sgl_vec *v = args[j].src;
            if (v->len != n->nchildren)
                sgl_fail(op->line, op->col,
                         "scatter of a vector of length %lld to %d %s (the lengths must be equal)",
                         (long long)v->len, n->nchildren, n->nchildren == 1 ? "child" : "children");
        }
    }
}

/* Prepare child i's inputs from the master's arguments (shared memory). */
static void local_inputs(const sgl_site *s, sgl_arg *args, int i, void **in, void **out,
                         sgl_vec *tmp)
{
    for (int j = 0; j < s->nops; j++) {
        const sgl_op *op = &s->ops[j];
        in[j] = out[j] = NULL;
        if (op->kind == SGL_OP_SCATTER) {
            sgl_vec *v = args[j].src;
            char *elem = (char *)v->data + (size_t)i * sgl_sizeof(op->type);
            if (args[j].owned) {
                in[j] = elem;
            } else {
                sgl_value_copy(op->type, &tmp[j], elem);
                in[j] = &tmp[j];
            }
        } else if (op->kind == SGL_OP_BCAST) {
            sgl_value_copy(op->type, &tmp[j], args[j].src);
            in[j] = &tmp[j];
        } else if (op->kind == SGL_OP_GATHER) {
            sgl_vec *d = args[j].dst;
            out[j] = (char *)d->data + (size_t)i * sgl_sizeof(op->type);
        }
    }
}

static void alloc_gathers(sgl_node *n, const sgl_site *s, sgl_arg *args)
{
    for (int j = 0; j < s->nops; j++) {
        const sgl_op *op = &s->ops[j];
        if (op->kind == SGL_OP_GATHER) {
            sgl_type vt = {SGL_T_VEC, op->type};
            *(sgl_vec *)args[j].dst = sgl_vec_new(&vt, n->nchildren, op->line, op->col);
        }
    }
}

/* Owned scatter sources gave (some of) their elements away, leaving
 * empty vectors behind: release what is left. */
static void release_sources(const sgl_site *s, sgl_arg *args)
{
    for (int j = 0; j < s->nops; j++) {
        if (s->ops[j].kind == SGL_OP_SCATTER && args[j].owned) {
            sgl_type vt = {SGL_T_VEC, s->ops[j].type};
            sgl_vec_free(&vt, args[j].src);
        }
    }
}

/* ------------------------------------------------------------------ */
/* Instrumentation (sgl_instr.c): bytes moved, compute times, spans      */

/* Adds the bytes of the elements of v (one per child) to *total, and the
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
}

static void step_end(sgl_node *n, const sgl_site *s, sgl_arg *args, const child_result *res,
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
    sgl_trace_span(n->track, "superstep", s, rec->t0, rec->t1);
}

static void superstep_local(sgl_node *n, sgl_key k, const sgl_site *s, sgl_arg *args,
                            sgl_step_rec *rec)
{
    int nk = n->nchildren;
    child_result *res = results_for(n, nk);
#ifdef SGL_USE_OMP
#pragma omp parallel for schedule(static, 1) num_threads(nk) if (n->kids_threaded && nk > 1)
#endif
    for (int i = 0; i < nk; i++) {
        void *in[SGL_MAX_OPS], *out[SGL_MAX_OPS];
        sgl_vec tmp[SGL_MAX_OPS];
        local_inputs(s, args, i, in, out, tmp);
        child_run(&n->kids[i], s, k, in, out, &res[i]);
    }
    release_sources(s, args);
    /* finish() reads the children's output through res[i].out and may
     * raise: empty the buffers first (the bytes stay allocated) */
    for (int i = 0; i < nk; i++) {
        res[i].out = n->kids[i].out.data;
        n->kids[i].out.len = 0;
    }
    if (rec) step_end(n, s, args, res, nk, rec);
    finish(n, s, res, nk);
}

/* ------------------------------------------------------------------ */
/* MPI transport                                                        */

#ifdef SGL_USE_MPI
enum { CMD_EXIT = -1 };

static void mpi_send_exit(sgl_node *n);

static void put_i64(sgl_buf *b, int64_t x) { sgl_buf_put(b, &x, sizeof x); }
static int64_t get_i64(const char **p)
{
    int64_t x;
    memcpy(&x, *p, sizeof x);
    *p += sizeof x;
    return x;
}

static int to_count(size_t n)
{
    if (n > INT_MAX) fatal_internal("message larger than 2 GiB");
    return (int)n;
}

/* Large flat vectors travel out of band: the message holds -(len + 1)
 * where a vector's length would be, and the elements follow as separate
 * messages (tag TAG_DATA, in order), sent from and received into the
 * vectors' own storage, so they are copied only by MPI itself. */
enum { TAG_CMD = 11, TAG_REPORT = 12, TAG_DATA = 13 };
#define OOB_MIN ((size_t)8 << 10)
#define OOB_CHUNK ((size_t)1 << 30)

typedef struct oob_list {
    const char **ptr;
    size_t *len;
    int n, cap;
} oob_list;

static void oob_add(oob_list *l, const void *p, size_t n)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        const char **ptr = realloc(l->ptr, (size_t)cap * sizeof *ptr);
        size_t *len = realloc(l->len, (size_t)cap * sizeof *len);
        if (!ptr || !len) fatal_internal("out of memory (message list)");
        l->ptr = ptr;
        l->len = len;
        l->cap = cap;
    }
    l->ptr[l->n] = p;
    l->len[l->n] = n;
    l->n++;
}

static void oob_free(oob_list *l)
{
    free(l->ptr);
    free(l->len);
    *l = (oob_list){0};
}

static bool is_flat_type(const sgl_type *t) { return t->kind != SGL_T_VEC; }

static void mpi_ser(sgl_buf *b, const sgl_type *t, const void *v, oob_list *l)
{
    if (is_flat_type(t)) {
        sgl_ser(b, t, v);
        return;
    }
    const sgl_vec *x = v;
    const sgl_type *et = t->elem;
    if (is_flat_type(et)) {
        size_t bytes = (size_t)x->len * sgl_sizeof(et);
        if (bytes >= OOB_MIN) {
            int64_t mark = -x->len - 1;
            sgl_buf_put(b, &mark, sizeof mark);
            oob_add(l, x->data, bytes);
            return;
        }
        sgl_ser(b, t, v);
        return;
    }
    int64_t len = x->len;
    sgl_buf_put(b, &len, sizeof len);
    const sgl_vec *e = x->data;
    for (int64_t i = 0; i < len; i++) mpi_ser(b, et, &e[i], l);
}

/* Post the out-of-band parts (after their message). */
static void oob_isend(oob_list *l, int dest, MPI_Comm comm, MPI_Request **reqs, int *nreq,
                      int *capreq)
{
    for (int k = 0; k < l->n; k++) {
        for (size_t off = 0; off < l->len[k]; off += OOB_CHUNK) {
            size_t n = l->len[k] - off < OOB_CHUNK ? l->len[k] - off : OOB_CHUNK;
            if (*nreq == *capreq) {
                *capreq = *capreq ? 2 * *capreq : 16;
                MPI_Request *r = realloc(*reqs, (size_t)*capreq * sizeof *r);
                if (!r) fatal_internal("out of memory (requests)");
                *reqs = r;
            }
            MPI_CHECK(MPI_Isend(l->ptr[k] + off, (int)n, MPI_BYTE, dest, TAG_DATA, comm,
                                &(*reqs)[(*nreq)++]));
        }
    }
}

static const char *mpi_deser(const char *p, const sgl_type *t, void *out, MPI_Comm comm, int src)
{
    if (is_flat_type(t)) return sgl_deser(p, t, out);
    int64_t len;
    memcpy(&len, p, sizeof len);
    const sgl_type *et = t->elem;
    if (len < 0) {
        len = -len - 1;
        sgl_vec v = sgl_vec_new_uninit(t, len, 0, 0);
        size_t bytes = (size_t)len * sgl_sizeof(et);
        for (size_t off = 0; off < bytes; off += OOB_CHUNK) {
            size_t n = bytes - off < OOB_CHUNK ? bytes - off : OOB_CHUNK;
            MPI_CHECK(MPI_Recv((char *)v.data + off, (int)n, MPI_BYTE, src, TAG_DATA, comm,
                               MPI_STATUS_IGNORE));
        }
        *(sgl_vec *)out = v;
        return p + sizeof len;
    }
    if (is_flat_type(et)) return sgl_deser(p, t, out);
    p += sizeof len;
    sgl_vec v = sgl_vec_new(t, len, 0, 0);
    sgl_vec *e = v.data;
    for (int64_t i = 0; i < len; i++) p = mpi_deser(p, et, &e[i], comm, src);
    *(sgl_vec *)out = v;
    return p;
}

/* The command for child i of a superstep, one point-to-point message:
 * site, depth, uid, then per op in order: a scatter's element for child i;
 * a bcast's value, or (for a large value sent to many children) its size,
 * the value following in an MPI_Bcast.  Children learn message sizes with
 * MPI_Probe, so no round of sizes is needed. */
#define BCAST_INLINE_LIMIT ((size_t)1 << 20)

static void mpi_send_commands(sgl_node *n, const sgl_site *s, sgl_key k, sgl_arg *args)
{
    int nk = n->nchildren;
    sgl_buf bc[SGL_MAX_OPS];
    bool separate[SGL_MAX_OPS];
    for (int j = 0; j < s->nops; j++) {
        bc[j] = (sgl_buf){0};
        separate[j] = false;
        if (s->ops[j].kind == SGL_OP_BCAST && nk > 2) {
            size_t size = sgl_ser_size(s->ops[j].type, args[j].src);
            separate[j] = size * (size_t)(nk - 1) > BCAST_INLINE_LIMIT;
            if (separate[j]) sgl_ser(&bc[j], s->ops[j].type, args[j].src);
        }
    }
    if (nk > n->msgs_cap) {
        sgl_buf *m = realloc(n->msgs, (size_t)nk * sizeof *m);
        if (!m) fatal_internal("out of memory (messages)");
        for (int i = n->msgs_cap; i < nk; i++) m[i] = (sgl_buf){0};
        n->msgs = m;
        n->msgs_cap = nk;
    }
    sgl_buf *msgs = n->msgs; /* their storage is reused from one superstep to the next */
    oob_list *oobs = calloc((size_t)nk, sizeof *oobs);
    if (!oobs) fatal_internal("out of memory (messages)");
    MPI_Request *reqs = NULL;
    int nreq = 0, capreq = 0;
    for (int i = 1; i < nk; i++) {
        sgl_buf *b = &msgs[i];
        b->len = 0;
        put_i64(b, s->id);
        put_i64(b, k.depth);
        put_i64(b, k.uid);
        for (int j = 0; j < s->nops; j++) {
            const sgl_op *op = &s->ops[j];
            if (op->kind == SGL_OP_SCATTER) {
                const sgl_vec *v = args[j].src;
                mpi_ser(b, op->type, (const char *)v->data + (size_t)i * sgl_sizeof(op->type),
                        &oobs[i]);
            } else if (op->kind == SGL_OP_BCAST) {
                put_i64(b, separate[j] ? (int64_t)bc[j].len : -1);
                if (!separate[j]) mpi_ser(b, op->type, args[j].src, &oobs[i]);
            }
        }
    }
    for (int i = 1; i < nk; i++) {
        if (nreq == capreq) {
            capreq = capreq ? 2 * capreq : 16;
            MPI_Request *r = realloc(reqs, (size_t)capreq * sizeof *r);
            if (!r) fatal_internal("out of memory (requests)");
            reqs = r;
        }
        MPI_CHECK(MPI_Isend(msgs[i].data, to_count(msgs[i].len), MPI_BYTE, i, TAG_CMD,
                            n->comm_down, &reqs[nreq++]));
        oob_isend(&oobs[i], i, n->comm_down, &reqs, &nreq, &capreq);
    }
    for (int j = 0; j < s->nops; j++)
        if (separate[j])
            MPI_CHECK(MPI_Bcast(bc[j].data, to_count(bc[j].len), MPI_BYTE, 0, n->comm_down));
    if (nreq) MPI_CHECK(MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
    free(reqs);
    for (int i = 1; i < nk; i++) oob_free(&oobs[i]);
    free(oobs);
    for (int j = 0; j < s->nops; j++) sgl_buf_free(&bc[j]);
}

/* Receive one message from `source` with `tag`, whatever its size. */
static char *mpi_recv_any(MPI_Comm comm, int source, int tag, int *count)
{
    MPI_Status st;
    MPI_CHECK(MPI_Probe(source, tag, comm, &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, count));
    char *buf = malloc(*count ? (size_t)*count : 1);
    if (!buf) fatal_internal("out of memory (message)");
    MPI_CHECK(MPI_Recv(buf, *count, MPI_BYTE, source, tag, comm, MPI_STATUS_IGNORE));
    return buf;
}

/* A child's side: decode the inputs of the ops from its command. */
static void mpi_decode_inputs(MPI_Comm comm, const sgl_site *s, const char *p, sgl_vec *tmp,
                              void **in)
{
    for (int j = 0; j < s->nops; j++) {
        const sgl_op *op = &s->ops[j];
        in[j] = NULL;
        if (op->kind == SGL_OP_SCATTER) {
            p = mpi_deser(p, op->type, &tmp[j], comm, 0);
            in[j] = &tmp[j];
        } else if (op->kind == SGL_OP_BCAST) {
            int64_t size = get_i64(&p);
            if (size < 0) {
                p = mpi_deser(p, op->type, &tmp[j], comm, 0);
            } else {
                char *buf = sgl_alloc(size ? (size_t)size : 1, op->line, op->col);
                MPI_CHECK(MPI_Bcast(buf, to_count((size_t)size), MPI_BYTE, 0, comm));
                sgl_deser(buf, op->type, &tmp[j]);
                free(buf);
            }
            in[j] = &tmp[j];
        }
    }
}

/* A remote child's report: failure, output segments, gathered values. */
static void mpi_pack_result(sgl_buf *b, const sgl_site *s, const child_result *r, void **out,
                            oob_list *l)
{
    put_i64(b, r->failed_op);
    sgl_buf_put(b, &r->compute, sizeof r->compute);
    size_t mlen = r->msg ? strlen(r->msg) : 0;
    put_i64(b, (int64_t)mlen);
    if (mlen) sgl_buf_put(b, r->msg, mlen);
    for (int j = 0; j < s->nops; j++) put_i64(b, (int64_t)r->seg_end[j]);
    size_t total = s->nops ? r->seg_end[s->nops - 1] : 0;
    if (total) sgl_buf_put(b, r->out, total);
    for (int j = 0; j < s->nops; j++) {
        if (s->ops[j].kind == SGL_OP_GATHER && (r->failed_op < 0 || r->failed_op > j))
            mpi_ser(b, s->ops[j].type, out[j], l);
    }
}

static const char *mpi_unpack_result(const char *p, const sgl_site *s, child_result *r,
                                     sgl_arg *args, int i, MPI_Comm comm)
{
    r->failed_op = (int)get_i64(&p);
    memcpy(&r->compute, p, sizeof r->compute);
    p += sizeof r->compute;
    int64_t mlen = get_i64(&p);
    r->msg = NULL;
    if (mlen) {
        r->msg = malloc((size_t)mlen + 1);
        if (!r->msg) fatal_internal("out of memory");
        memcpy(r->msg, p, (size_t)mlen);
        r->msg[mlen] = '\0';
        p += mlen;
    }
    for (int j = 0; j < s->nops; j++) r->seg_end[j] = (size_t)get_i64(&p);
    r->out = p;
    p += s->nops ? r->seg_end[s->nops - 1] : 0;
    for (int j = 0; j < s->nops; j++) {
        const sgl_op *op = &s->ops[j];
        if (op->kind == SGL_OP_GATHER && (r->failed_op < 0 || r->failed_op > j)) {
            sgl_vec *d = args[j].dst;
            p = mpi_deser(p, op->type, (char *)d->data + (size_t)i * sgl_sizeof(op->type), comm,
                          i);
        }
    }
    return p;
}

static void superstep_mpi(sgl_node *n, sgl_key k, const sgl_site *s, sgl_arg *args,
                          sgl_step_rec *rec)
{
    int nk = n->nchildren;
    mpi_send_commands(n, s, k, args);
    if (rec) sgl_trace_span(n->track, "send", s, rec->t0, sgl_wtime());

    child_result *res = results_for(n, nk);
    {
        void *in[SGL_MAX_OPS], *out[SGL_MAX_OPS];
        sgl_vec tmp[SGL_MAX_OPS];
        local_inputs(s, args, 0, in, out, tmp);
        child_run(n->kids, s, k, in, out, &res[0]);
    }
    /* the reports of children 1..nk-1, in child order */
    double t_wait = rec ? sgl_wtime() : 0;
    char **reports = sgl_alloc((size_t)nk * sizeof *reports, s->line, s->col);
    for (int i = 1; i < nk; i++) {
        int count = 0;
        reports[i] = mpi_recv_any(n->comm_down, i, TAG_REPORT, &count);
        mpi_unpack_result(reports[i], s, &res[i], args, i, n->comm_down);
    }
    if (rec) sgl_trace_span(n->track, "wait", s, t_wait, sgl_wtime());
    release_sources(s, args);
    n->kids[0].out.len = 0;
    if (rec) step_end(n, s, args, res, nk, rec);
    /* finish() may raise (the program then stops): reports are freed after */
    finish(n, s, res, nk);
    for (int i = 1; i < nk; i++) free(reports[i]);
    free(reports);
}

/* A node whose master is in another process waits here for commands. */
static void worker_loop(sgl_node *c)
{
    for (;;) {
        int count = 0;
        char *msg = mpi_recv_any(c->comm_up, 0, TAG_CMD, &count);
        const char *p = msg;
        int64_t site = get_i64(&p), depth = get_i64(&p), uid = get_i64(&p);
        if (site == CMD_EXIT) {
            free(msg);
            g_exit_status = (int)depth;
            mpi_send_exit(c);
            return;
        }
        if (site < 0 || site >= g_prog->nsites) fatal_internal("bad command from the master");
        const sgl_site *s = g_prog->sites[site];
        sgl_key mk = {depth, uid};
        void *in[SGL_MAX_OPS], *out[SGL_MAX_OPS];
        sgl_vec tmp[SGL_MAX_OPS];
        char outval[SGL_MAX_OPS][sizeof(sgl_vec)];
        mpi_decode_inputs(c->comm_up, s, p, tmp, in);
        free(msg);
        for (int j = 0; j < s->nops; j++) {
            memset(outval[j], 0, sizeof outval[j]);
            out[j] = outval[j];
        }
        child_result r;
        child_run(c, s, mk, in, out, &r);
        sgl_buf b = {0};
        oob_list l = {0};
        mpi_pack_result(&b, s, &r, out, &l);
        char dummy = 0;
        MPI_Request *reqs = NULL;
        int nreq = 0, capreq = 0;
        MPI_CHECK(MPI_Send(b.data ? b.data : &dummy, to_count(b.len), MPI_BYTE, 0, TAG_REPORT,
                           c->comm_up));
        oob_isend(&l, 0, c->comm_up, &reqs, &nreq, &capreq);
        if (nreq) MPI_CHECK(MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
        free(reqs);
        oob_free(&l);
        for (int j = 0; j < s->nops; j++)
            if (s->ops[j].kind == SGL_OP_GATHER && (r.failed_op < 0 || r.failed_op > j))
                sgl_value_free(s->ops[j].type, out[j]);
        free(r.msg);
        c->out.len = 0;
        sgl_buf_free(&b);
    }
}

/* Tell every process below n (through n and its local child 0 chain) to stop. */
static void mpi_send_exit(sgl_node *n)
{
    for (sgl_node *m = n; m && m->kids_kind == KIDS_MPI; m = m->kids) {
        int64_t cmd[3] = {CMD_EXIT, g_exit_status, 0};
        for (int i = 1; i < m->nchildren; i++)
            MPI_CHECK(MPI_Send(cmd, (int)sizeof cmd, MPI_BYTE, i, TAG_CMD, m->comm_down));
    }
}
#endif

void sgl_superstep(sgl_node *n, sgl_key k, const sgl_site *s, sgl_arg *args)
{
    check_args(n, s, args);
    /* a temporary's elements may be moved to the children only if nobody
     * else shares its buffer */
    for (int j = 0; j < s->nops; j++)
        if (s->ops[j].kind == SGL_OP_SCATTER && args[j].owned)
            args[j].owned = sgl_vec_unique(args[j].src);
    sgl_step_rec rec_storage, *rec = NULL;
    if (sgl_instr) {
        rec = &rec_storage;
        step_begin(n, s, args, rec);
    }
    alloc_gathers(n, s, args);
#ifdef SGL_USE_MPI
    if (n->kids_kind == KIDS_MPI) {
        superstep_mpi(n, k, s, args, rec);
        return;
    }
#endif
    superstep_local(n, k, s, args, rec);
}

/* ------------------------------------------------------------------ */
/* Building the tree                                                    */

static void node_init(sgl_node *n, const char *parent_path, int depth, int child_index,
                      const int *shape, int nlevels)
{
    memset(n, 0, sizeof *n);
    n->depth = depth;
    n->child_index = child_index;
    n->nchildren = depth < nlevels ? shape[depth] : 0;
    n->nworkers = 1;
    for (int l = depth; l < nlevels; l++) n->nworkers *= shape[l];
    int w = parent_path ? snprintf(n->path, sizeof n->path, "%s.%d", parent_path, child_index)
                        : snprintf(n->path, sizeof n->path, "0");
    if (w < 0 || (size_t)w >= sizeof n->path) fatal_internal("machine tree too deep");
    n->cur = -1;
    n->kids_kind = KIDS_NONE;
#ifdef SGL_USE_MPI
    n->comm_down = MPI_COMM_NULL;
    n->comm_up = MPI_COMM_NULL;
#endif
}

/* Build the subtree below n entirely in this process. */
static void build_local(sgl_node *n, const int *shape, int nlevels, bool threaded)
{
    if (n->nchildren == 0) return;
    n->kids_kind = KIDS_LOCAL;
    n->kids_threaded = threaded;
    n->kids = calloc((size_t)n->nchildren, sizeof *n->kids);
    if (!n->kids) fatal_internal("out of memory (tree)");
    for (int i = 0; i < n->nchildren; i++) {
        node_init(&n->kids[i], n->path, n->depth + 1, i, shape, nlevels);
        build_local(&n->kids[i], shape, nlevels, threaded);
    }
}

/* Start the OpenMP threads of n's thread levels now (nested teams
 * included), so that the first superstep does not pay for creating them. */
static void warm_threads(sgl_node *n)
{
    if (n->kids_kind != KIDS_LOCAL || !n->kids_threaded) return;
    int nk = n->nchildren;
#ifdef SGL_USE_OMP
#pragma omp parallel for schedule(static, 1) num_threads(nk)
#endif
    for (int i = 0; i < nk; i++) warm_threads(&n->kids[i]);
}

/* Timeline tracks for n and, if local is set, its whole local subtree. */
static void make_tracks(sgl_node *n, bool local)
{
    n->track = sgl_trace_track(n->path);
    if (local && n->kids_kind == KIDS_LOCAL)
        for (int i = 0; i < n->nchildren; i++) make_tracks(&n->kids[i], true);
}

/* Parse "2x2x3" (or "0" for the one-node tree). Returns the number of
 * levels, or -1 if the text is not a shape. */
static int parse_shape(const char *text, int *shape)
{
    if (strcmp(text, "0") == 0) return 0;
    int n = 0;
    const char *p = text;
    for (;;) {
        if (*p < '0' || *p > '9') return -1;
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || v < 1 || v > 1 << 20 || n == SGL_MAX_LEVELS) return -1;
        shape[n++] = (int)v;
        p = end;
        if (*p == '\0') return n;
        if (*p != 'x' && *p != 'X') return -1;
        p++;
    }
}

static void shape_error(const char *msg, const char *text)
{
    fflush(stdout);
    fprintf(stderr, "%s: runtime error: bad machine shape '%s': %s\n", g_prog->file, text, msg);
}

/* ------------------------------------------------------------------ */
/* Entry point                                                          */

static int default_threads(void)
{
#ifdef SGL_USE_OMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

static void run_root_main(sgl_node *root)
{
    jmp_buf jb;
    root->boundary = &jb;
    g_cur = root;
    if (setjmp(jb) == 0) {
        g_prog->main(root);
        flush_root(root);
        fflush(stdout);
        g_exit_status = 0;
    } else {
        flush_root(root);
        fflush(stdout);
        fprintf(stderr, "%s\n", root->errmsg);
        fflush(stderr);
        g_exit_status = 1;
    }
    root->boundary = NULL;
}

int sgl_run(int argc, char **argv, const sgl_program *prog)
{
    g_prog = prog;
#ifdef SGL_USE_MPI
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        fatal_internal("MPI_Init_thread failed");
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int nprocs = 1, rank = 0;
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
#else
    int nprocs = 1, rank = 0;
#endif
    /* the runtime's arguments: --sgl-shape S, --sgl-shape=S */
    const char *shape_text = getenv("SGL_SHAPE");
    char **args = malloc(((size_t)argc + 1) * sizeof *args);
    if (!args) fatal_internal("out of memory");
    int nargs = 0;
    bool bad_flag = false;
    const char *bad_text = NULL;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--sgl-", 6) != 0) {
            args[nargs++] = argv[i];
        } else if (strcmp(argv[i], "--sgl-shape") == 0 && i + 1 < argc) {
            shape_text = argv[++i];
        } else if (strncmp(argv[i], "--sgl-shape=", 12) == 0) {
            shape_text = argv[i] + 12;
        } else if (sgl_instr_option(argv[i]) <= 0) {
            bad_flag = true;
            bad_text = argv[i];
        }
    }
    args[nargs] = NULL;
    sgl_set_args(nargs, args);
    if (bad_flag) {
        if (rank == 0) {
            fprintf(stderr, "%s: runtime error: unknown or malformed runtime option '%s' (known: --sgl-shape S, "
                    "--sgl-stats[=FILE.json], --sgl-trace=FILE.json, --sgl-predict=MACHINE.json)\n",
                    prog->file, bad_text);
        }
#ifdef SGL_USE_MPI
        MPI_Finalize();
#endif
        return 1;
    }

    int shape[SGL_MAX_LEVELS];
    int nlevels;
    int threads = default_threads();
    if (shape_text && *shape_text) {
        nlevels = parse_shape(shape_text, shape);
        if (nlevels < 0) {
            if (rank == 0) shape_error("expected levels like 2x2x3, or 0", shape_text);
#ifdef SGL_USE_MPI
            MPI_Finalize();
#endif
            return 1;
        }
    } else {
        nlevels = 0;
        if (nprocs > 1) shape[nlevels++] = nprocs;
        if (threads > 1) shape[nlevels++] = threads;
    }

    /* how many leading levels are processes */
    int plevels = 0;
    if (nprocs > 1) {
        long prod = 1;
        while (plevels < nlevels && prod < nprocs) prod *= shape[plevels++];
        if (prod != nprocs) {
            if (rank == 0) {
                char msg[128];
                snprintf(msg, sizeof msg,
                         "no leading levels multiply to the %d MPI processes", nprocs);
                shape_error(msg, shape_text ? shape_text : "(default)");
            }
#ifdef SGL_USE_MPI
            MPI_Finalize();
#endif
            return 1;
        }
    }
#ifdef SGL_USE_OMP
    omp_set_dynamic(0);
    omp_set_max_active_levels(nlevels - plevels > 0 ? nlevels - plevels : 1);
#endif
#ifdef SGL_USE_OMP
    bool threaded = true;
#else
    bool threaded = false;
#endif

    /* rank's digits in the mixed radix of the process levels */
    int digit[SGL_MAX_LEVELS] = {0};
    {
        int r = rank;
        for (int l = plevels - 1; l >= 0; l--) {
            digit[l] = r % shape[l];
            r /= shape[l];
        }
    }
    /* the highest node this process hosts: level j0 */
    int j0 = 0;
    for (int l = 0; l < plevels; l++)
        if (digit[l] != 0) j0 = l + 1;

    /* chain of process-level nodes hosted here: levels j0..plevels */
    sgl_node *chain = calloc((size_t)(plevels + 1), sizeof *chain);
    if (!chain) fatal_internal("out of memory (tree)");
    {
        char path[8 * SGL_MAX_LEVELS] = "0";
        for (int l = 0; l <= plevels; l++) {
            if (l > 0) {
                size_t len = strlen(path);
                snprintf(path + len, sizeof path - len, ".%d", digit[l - 1]);
            }
            if (l >= j0) {
                sgl_node *n = &chain[l];
                node_init(n, NULL, l, l ? digit[l - 1] : 0, shape, nlevels);
                snprintf(n->path, sizeof n->path, "%s", path);
            }
        }
    }
#ifdef SGL_USE_MPI
    /* one communicator per process level: a master and its children */
    for (int l = 1; l <= plevels; l++) {
        bool member = true;
        for (int m = l; m < plevels; m++)
            if (digit[m] != 0) member = false;
        int color = MPI_UNDEFINED;
        if (member) {
            color = 0;
            for (int m = 0; m < l - 1; m++) color = color * shape[m] + digit[m];
        }
        MPI_Comm comm = MPI_COMM_NULL;
        MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, color, digit[l - 1], &comm));
        if (comm != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
        if (member) {
            if (l - 1 >= j0) chain[l - 1].comm_down = comm;
            if (l >= j0 && digit[l - 1] != 0) chain[l].comm_up = comm;
        }
    }
    for (int l = j0; l < plevels; l++) {
        chain[l].kids_kind = KIDS_MPI;
        chain[l].kids = &chain[l + 1];
    }
#endif
    build_local(&chain[plevels], shape, nlevels, threaded);
    warm_threads(&chain[plevels]);
    if (sgl_instr) {
        for (int l = j0; l <= plevels; l++) make_tracks(&chain[l], l == plevels);
#ifdef SGL_USE_MPI
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
#endif
    }
    sgl_instr_start(prog, plevels, nlevels, shape_text, nprocs, rank);

    int status;
    if (j0 == 0) {
        chain[0].is_root = true;
        run_root_main(&chain[0]);
#ifdef SGL_USE_MPI
        mpi_send_exit(&chain[0]);
#endif
        status = g_exit_status;
    } else {
#ifdef SGL_USE_MPI
        worker_loop(&chain[j0]);
#endif
        status = 0;
    }
    fflush(stdout);
    sgl_instr_finish();
#ifdef SGL_USE_MPI
    MPI_Finalize();
#endif
    free(args);
    return status;
}
