/*
 * sgl_mpi.c: the MPI transport (sgl_internal.h) and the workers' command
 * loop.  Compiled to nothing without SGL_USE_MPI.
 *
 * The leading levels of the machine tree are MPI processes.  Each master
 * of a process level and its children share a communicator in which the
 * master is rank 0 (comm_down; the children's comm_up); child 0 lives in
 * the master's process and is run locally, the others wait in
 * sgl_mpi_serve() for commands.  A superstep sends each remote child one
 * command (its inputs), runs child 0, and receives one report per remote
 * child (its failure, output and gathered values).  Output longer than
 * 64 KiB travels after the report, in messages of SGL_OUT_CHUNK bytes
 * (sgl_mpi_output.c).
 *
 * The MPI library is initialized with MPI_THREAD_FUNNELED (sgl_mpi_proc.c,
 * the process start-up): only a process's main thread calls MPI (thread
 * levels are below process levels).  Every call is checked (MPI_CHECK).
 */
#define _POSIX_C_SOURCE 200809L
#include "sgl_internal.h"
#include "sgl_mpi_msg.h"
#include "sgl_vbuf.h"

#ifdef SGL_USE_MPI

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { CMD_EXIT = -1 };

/* ---- writing and reading a command or a report ----
 * Their fixed fields and the numbers in them are written with one inline
 * store each (put: n is a constant at every call but the variable-length
 * ones), not through sgl_buf_put and sgl_ser: a short superstep's messages
 * are almost all such fields, and its cost is the code that writes and
 * reads them. */
static void buf_grow(sgl_buf *b, size_t n)
{
    size_t cap = b->cap < 256 ? 256 : b->cap;
    while (cap - b->len < n) {
        if (cap > SIZE_MAX / 2) sgl_internal_error("message too large");
        cap *= 2;
    }
    b->data = sgl_mpi_realloc(b->data, cap);
    b->cap = cap;
}

static inline void put(sgl_buf *b, const void *p, size_t n)
{
    if (n > b->cap - b->len) buf_grow(b, n);
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static inline void put_i64(sgl_buf *b, int64_t x) { put(b, &x, sizeof x); }

static inline int64_t get_i64(const char **p)
{
    int64_t x;
    memcpy(&x, *p, sizeof x);
    *p += sizeof x;
    return x;
}

/* A value of type t in sgl_ser_oob's format (sgl_ser.c: a number as its 8
 * bytes, a bool as one byte 0 or 1); a number or a bool without a call. */
static inline void put_value(sgl_buf *b, const sgl_type *t, const void *v, sgl_pieces *l)
{
    _Static_assert(SGL_SER_INT_SIZE == sizeof(sgl_int) && SGL_SER_FLOAT_SIZE == sizeof(sgl_float) &&
                       SGL_SER_BOOL_SIZE == 1,
                   "numbers travel as they lie in memory, a bool as one byte");
    if (t->kind == SGL_T_INT || t->kind == SGL_T_FLOAT) {
        put(b, v, 8);
    } else if (t->kind == SGL_T_BOOL) {
        unsigned char c = *(const sgl_bool *)v ? 1 : 0;
        put(b, &c, 1);
    } else {
        sgl_ser_oob(b, t, v, OOB_MIN, l);
    }
}

/* Read a value written by put_value into *out (a vector: allocated, its
 * large parts added to l). */
static inline const char *get_value(const char *p, const sgl_type *t, void *out, sgl_pieces *l)
{
    if (t->kind == SGL_T_INT || t->kind == SGL_T_FLOAT) {
        memcpy(out, p, 8);
        return p + 8;
    }
    if (t->kind == SGL_T_BOOL) {
        *(sgl_bool *)out = *(const unsigned char *)p != 0;
        return p + 1;
    }
    return sgl_deser_oob(p, t, out, l);
}
/* ---- end of writing and reading */


static struct sgl_mpi_state *mpi_state(sgl_node *n)
{
    if (!n->mpi) {
        n->mpi = calloc(1, sizeof *n->mpi);
        if (!n->mpi) sgl_internal_error("out of memory (messages)");
    }
    struct sgl_mpi_state *st = n->mpi;
    if (st->nkid < n->nchildren) {
        st->kid = sgl_mpi_realloc(st->kid, (size_t)n->nchildren * sizeof *st->kid);
        memset(st->kid + st->nkid, 0, (size_t)(n->nchildren - st->nkid) * sizeof *st->kid);
        st->nkid = n->nchildren;
    }
    return st;
}


/* The command for child i of a superstep: site, depth, uid, then per op
 * in order: a scatter's element for child i; a bcast's value, or (for a
 * large value sent to many children) its size, the value following in an
 * MPI_Bcast. */
#define BCAST_INLINE_LIMIT ((size_t)1 << 20)

static void mpi_send_commands(sgl_node *n, struct sgl_mpi_state *st, const sgl_site *s,
                              sgl_key k, sgl_arg *args)
{
    int nk = n->nchildren;
    const sgl_masks *m = sgl_site_masks(s);
    uint64_t inputs = m->scatter | m->bcast;
    sgl_buf bc[SGL_MAX_OPS];
    uint64_t separate = 0; /* the bcasts sent apart */
    for (uint64_t bm = nk > 2 ? m->bcast : 0; bm;) {
        int j = sgl_mask_next(&bm);
        size_t size = sgl_ser_size(s->ops[j].type, args[j].src);
        if (size * (size_t)(nk - 1) > BCAST_INLINE_LIMIT) {
            separate |= (uint64_t)1 << j;
            bc[j] = (sgl_buf){0};
            sgl_ser(&bc[j], s->ops[j].type, args[j].src);
        }
    }
    for (int i = 1; i < nk; i++) {
        mpi_peer *p = &st->kid[i];
        sgl_buf *b = &p->out;
        sgl_pieces_clear(&p->oob);
        int64_t head[4] = {0, s->id, k.depth, k.uid}; /* the length is filled in by sgl_msg_isend */
        b->len = 0;
        put(b, head, sizeof head);
        for (uint64_t in = inputs; in;) {
            int j = sgl_mask_next(&in);
            const sgl_op *op = &s->ops[j];
            sgl_pieces_cut(&p->oob);
            if (op->kind == SGL_OP_SCATTER) {
                const sgl_vec *v = args[j].src;
                put_value(b, op->type, (const char *)v->data + (size_t)i * sgl_sizeof(op->type),
                          &p->oob);
            } else if (separate >> j & 1) {
                put_i64(b, (int64_t)bc[j].len);
            } else {
                put_i64(b, -1);
                put_value(b, op->type, args[j].src, &p->oob);
            }
        }
        sgl_msg_isend(p, i, TAG_CMD, n->comm_down, &st->reqs);
    }
    for (uint64_t sep = separate; sep;) {
        int j = sgl_mask_next(&sep);
        sgl_mpi_bcast_bytes(bc[j].data, bc[j].len, n->comm_down);
        sgl_buf_free(&bc[j]);
    }
    if (st->reqs.n) sgl_req_wait(&st->reqs);
}

/* A child's side: decode the inputs of the ops from its command, then
 * receive its pieces and the separate bcasts (in the master's order). */
static void mpi_decode_inputs(MPI_Comm comm, const sgl_site *s, mpi_peer *up, sgl_slot *tmp,
                              void **in)
{
    const char *p = up->in + 4 * sizeof(int64_t); /* after length, site, depth, uid */
    int64_t bsize[SGL_MAX_OPS];
    uint64_t separate = 0;
    const sgl_masks *m = sgl_site_masks(s);
    sgl_pieces_clear(&up->oob);
    for (uint64_t im = m->scatter | m->bcast; im;) {
        int j = sgl_mask_next(&im);
        const sgl_op *op = &s->ops[j];
        sgl_pieces_cut(&up->oob);
        in[j] = sgl_op_place(s, j, &tmp[j]);
        if (op->kind == SGL_OP_BCAST) {
            bsize[j] = get_i64(&p);
            if (bsize[j] >= 0) {
                separate |= (uint64_t)1 << j;
                continue;
            }
        }
        p = get_value(p, op->type, in[j], &up->oob);
    }
    if (up->oob.n) sgl_pieces_transfer(&up->oob, 0, comm, NULL);
    for (uint64_t sep = separate; sep;) {
        int j = sgl_mask_next(&sep);
        const sgl_op *op = &s->ops[j];
        char *buf = sgl_alloc(bsize[j] ? (size_t)bsize[j] : 1, op->line, op->col);
        sgl_mpi_bcast_bytes(buf, (size_t)bsize[j], comm);
        sgl_deser(buf, op->type, in[j]);
        free(buf);
    }
}


/* A remote child's report: failure, output segments, gathered values.
 * A plain report (no failure, no output, no file used: most supersteps of
 * a loop) says so with a message length of -1 and carries the gathered
 * values alone. */
#define PLAIN_REPORT (-1)

static bool plain_result(const sgl_site *s, const sgl_child_result *r)
{
    return r->failed_op < 0 && !r->msg && r->out_spilled == 0 && sgl_mpi_out_total(s, r) == 0 &&
           r->files.n == 0;
}

static void mpi_pack_result(sgl_buf *b, const sgl_site *s, const sgl_child_result *r,
                            void **out, sgl_pieces *l)
{
    bool plain = plain_result(s, r);
    size_t mlen = r->msg ? strlen(r->msg) : 0;
    struct {
        int64_t len, failed_op;
        double compute;
        int64_t mlen;
    } head = {0, r->failed_op, r->compute,
              plain ? PLAIN_REPORT : (int64_t)mlen}; /* len: filled in by sgl_msg_isend */
    b->len = 0;
    put(b, &head, sizeof head);
    if (!plain) {
        if (mlen) put(b, r->msg, mlen);
        _Static_assert(sizeof r->seg_end[0] == sizeof(int64_t), "output segments travel as int64");
        put(b, r->seg_end, (size_t)s->nops * sizeof r->seg_end[0]);
        /* io: the output, or 0 if it follows the report (mpi_send_output) */
        bool inl = sgl_mpi_out_inline(s, r);
        size_t olen = inl ? sgl_mpi_out_total(s, r) : 0;
        put_i64(b, inl);
        if (olen) put(b, r->out, olen);
    }
    for (uint64_t g = sgl_site_masks(s)->gather; g;) {
        int j = sgl_mask_next(&g);
        if (r->failed_op >= 0 && r->failed_op <= j) break;
        sgl_pieces_cut(l);
        put_value(b, s->ops[j].type, out[j], l);
    }
    if (plain) return;
    /* ---- io: the files the child's subtree used (count, then per path:
     * written flag, length, bytes) ---- */
    put_i64(b, r->files.n);
    for (int k = 0; k < r->files.n; k++) {
        size_t plen = strlen(r->files.path[k]);
        put_i64(b, r->files.wrote[k]);
        put_i64(b, (int64_t)plen);
        put(b, r->files.path[k], plen);
    }
    /* ---- end io ---- */
}

/* A gather into adjacent views of one buffer (sgl_arg.contiguous): the
 * children's lengths and where their elements are, until all reports are
 * in. */
struct joined_part {
    int64_t len;
    const char *inline_data; /* in the report, or NULL */
    int64_t piece;           /* else: its piece in the child's list, or -1 */
};
typedef struct joined_part joined_part;

static bool joinable(const sgl_op *op, const sgl_arg *a)
{
    return a->contiguous && op->kind == SGL_OP_GATHER && op->type->kind == SGL_T_VEC &&
           !sgl_type_owns(op->type->elem);
}

/* Returns whether the child's output follows the report (sgl_mpi_recv_output). */
static bool mpi_unpack_result(const char *p, const sgl_site *s, sgl_child_result *r,
                              sgl_arg *args, int i, sgl_pieces *l, joined_part *jp)
{
    p += sizeof(int64_t); /* the length */
    r->failed_op = (int)get_i64(&p);
    memcpy(&r->compute, p, sizeof r->compute);
    p += sizeof r->compute;
    int64_t mlen = get_i64(&p);
    r->msg = NULL;
    bool plain = mlen == PLAIN_REPORT, inl = true;
    r->out_fd = -1;
    r->out_spilled = 0;
    r->out_err = 0;
    if (plain) {
        for (int j = 0; j < s->nops; j++) r->seg_end[j] = 0;
        r->out = p;
    } else {
        if (mlen) {
            r->msg = malloc((size_t)mlen + 1);
            if (!r->msg) sgl_internal_error("out of memory");
            memcpy(r->msg, p, (size_t)mlen);
            r->msg[mlen] = '\0';
            p += mlen;
        }
        memcpy(r->seg_end, p, (size_t)s->nops * sizeof r->seg_end[0]);
        p += (size_t)s->nops * sizeof r->seg_end[0];
        /* io: the output, here or after the report */
        inl = get_i64(&p) != 0;
        r->out = inl ? p : NULL;
        if (inl) p += sgl_mpi_out_total(s, r);
    }
    for (uint64_t g = sgl_site_masks(s)->gather; g;) {
        int j = sgl_mask_next(&g);
        const sgl_op *op = &s->ops[j];
        joined_part *part = jp ? &jp[j] : NULL;
        if (part) *part = (joined_part){0, NULL, -1};
        if (r->failed_op >= 0 && r->failed_op <= j) continue;
        sgl_pieces_cut(l);
        if (part && joinable(op, &args[j])) {
            int64_t len = get_i64(&p);
            if (len < 0) {
                part->len = -len - 1;
                part->piece = l->n;
                sgl_pieces_add(l, NULL, (size_t)part->len * sgl_sizeof(op->type->elem));
            } else {
                part->len = len;
                part->inline_data = p;
                p += (size_t)len * sgl_sizeof(op->type->elem);
            }
            continue;
        }
        sgl_vec *d = args[j].dst;
        p = get_value(p, op->type, (char *)d->data + (size_t)i * sgl_sizeof(op->type), l);
    }
    /* ---- io: the files of the child's subtree (none in a plain report) ---- */
    if (r->files.cap) sgl_files_free(&r->files);
    if (plain) return false;
    int64_t nfiles = get_i64(&p);
    for (int64_t k = 0; k < nfiles; k++) {
        int64_t wrote = get_i64(&p), plen = get_i64(&p);
        char *path = malloc((size_t)plen + 1);
        if (!path) sgl_internal_error("out of memory");
        memcpy(path, p, (size_t)plen);
        path[plen] = '\0';
        p += plen;
        sgl_files_add(&r->files, path, (int)wrote);
        free(path);
    }
    /* ---- end io ---- */
    return !inl;
}

/* Is there room for total elements from block 0's start in its own
 * buffer that nothing else can see?  When block 0 holds the only
 * reference to its range handle and the handle the only one to its buffer
 * (or block 0 is its buffer's one reference), every other element of the
 * buffer is unused (the views of one buffer are disjoint, sgl.h): the
 * other children's blocks may go right after block 0, and concat joins
 * them without a copy.  Scan's blocks so come back into the vector that
 * was split and scattered, as MPI_Gatherv in place. */
static bool room_after(const sgl_vec *b0, int64_t total, size_t esz)
{
    sgl_vbuf *h = b0->buf;
    if (!h || b0->len == 0 || atomic_load_explicit(&h->refs, memory_order_acquire) != 1)
        return false;
    sgl_vbuf *o = vbuf_owner(h);
    if (o != h && atomic_load_explicit(&o->refs, memory_order_acquire) != 1) return false;
    size_t after = (size_t)(vbuf_data(o) + (size_t)o->used * esz - (char *)b0->data) / esz;
    return after >= (size_t)total;
}

/* Gather op j into adjacent views of one buffer, in child order: block
 * 0's own when there is room after it (room_after), else a new one into
 * which child 0's block (in this process) is copied; the others' are
 * copied from their reports or will be received in place (their pieces
 * are pointed into the buffer).  Children from `upto` on sent nothing. */
static void join_gather(struct sgl_mpi_state *st, const sgl_op *op, sgl_arg *a, int upto,
                        const joined_part *jp /* [child * SGL_MAX_OPS + op] */, int j)
{
    sgl_type vt = {.kind = SGL_T_VEC, .elem = op->type->elem};
    size_t esz = sgl_sizeof(op->type->elem);
    sgl_vec *blocks = ((sgl_vec *)a->dst)->data;
    int64_t len0 = blocks[0].len, total = len0;
    for (int i = 1; i < upto; i++) total += jp[(size_t)i * SGL_MAX_OPS + j].len;
    sgl_vec all = {NULL, 0, NULL};
    if (total > len0 && room_after(&blocks[0], total, esz)) {
        all = sgl_vec_copy(&vt, &blocks[0]); /* shares block 0's buffer */
    } else if (total > len0) {
        all = sgl_vec_new_uninit(&vt, total, op->line, op->col);
        if (len0) memcpy(all.data, blocks[0].data, (size_t)len0 * esz);
        sgl_vec_free(&vt, &blocks[0]);
        if (len0) {
            blocks[0] = sgl_vec_copy(&vt, &all);
            blocks[0].len = len0;
        }
    }
    int64_t off = len0;
    for (int i = 1; i < upto; i++) {
        const joined_part *part = &jp[(size_t)i * SGL_MAX_OPS + j];
        if (part->len == 0) continue;
        char *dst = (char *)all.data + (size_t)off * esz;
        if (part->inline_data)
            memcpy(dst, part->inline_data, (size_t)part->len * esz);
        else
            st->kid[i].oob.ptr[part->piece] = dst;
        blocks[i] = sgl_vec_copy(&vt, &all);
        blocks[i].data = dst;
        blocks[i].len = part->len;
        off += part->len;
    }
    sgl_vec_free(&vt, &all);
}
/* ---- cancellation (docs/execution.md): a master does not wait for the
 * reports of the children after a failure that is surely the first of
 * its superstep in the sequential order (op by op, child by child): one
 * in an op at or before the site's first op that may fail on a child (a
 * pardo, a gather, or a scatter or bcast into an indexed target, `->
 * a[c]`: the others only store values), once the children before it have
 * reported.  Those children are abandoned:
 * they may still be running, so this process ends the job with MPI_Abort
 * when it is told to stop (mpi_shutdown), after the root has printed the
 * error; nothing is waited for in between. */
static bool abandoned_children;

static bool surely_first(const sgl_site *s, const sgl_child_result *r)
{
    if (r->failed_op < 0 || !r->msg) return false;
    for (int j = 0; j < r->failed_op; j++)
        if (s->ops[j].kind == SGL_OP_PARDO || s->ops[j].kind == SGL_OP_GATHER ||
            (sgl_site_masks(s)->fails >> j & 1))
            return false;
    return true;
}

static void abandon(const sgl_site *s, sgl_child_result *r)
{
    r->failed_op = -1;
    r->msg = NULL;
    r->compute = 0;
    r->out = "";
    r->out_fd = -1;
    r->out_spilled = 0;
    r->out_err = 0;
    for (int j = 0; j < s->nops; j++) r->seg_end[j] = 0;
    abandoned_children = true;
}
/* ---- end of cancellation */


/* The remote children's elements of an owned scatter source are theirs
 * once their commands have gone (mpi_send_commands waits for the sends):
 * free them now, not after the superstep, so that they do not stay
 * alive while child 0 runs (a PSRS's routed buckets, views of the
 * blocks they came from).  Left empty for release_sources. */
static void free_sent_elements(const sgl_site *s, sgl_arg *args, int nk)
{
    for (uint64_t sc = sgl_site_masks(s)->scatter; sc;) {
        int j = sgl_mask_next(&sc);
        const sgl_op *op = &s->ops[j];
        if (!args[j].owned) continue;
        sgl_vec *v = args[j].src;
        size_t esz = sgl_sizeof(op->type);
        for (int i = 1; i < nk; i++) sgl_value_free(op->type, (char *)v->data + (size_t)i * esz);
    }
}

static void mpi_superstep(sgl_node *n, sgl_key k, const sgl_site *s, sgl_arg *args,
                          sgl_child_result *res, sgl_step_rec *rec)
{
    int nk = n->nchildren;
    struct sgl_mpi_state *st = mpi_state(n);
    if (st->nreport < nk) {
        st->report = sgl_mpi_realloc(st->report, (size_t)nk * sizeof *st->report);
        st->arrived = sgl_mpi_realloc(st->arrived, (size_t)nk);
        st->stop_sent = sgl_mpi_realloc(st->stop_sent, (size_t)nk * sizeof *st->stop_sent);
        st->stop_req = sgl_mpi_realloc(st->stop_req, (size_t)nk * sizeof *st->stop_req);
        st->stop_msg = sgl_mpi_realloc(st->stop_msg, (size_t)nk * sizeof *st->stop_msg);
        st->nreport = nk;
    }
    st->nsteps++;
    mpi_send_commands(n, st, s, k, args);
    free_sent_elements(s, args, nk);
    if (rec) sgl_trace_span(n->track, "send", s, rec->t0, sgl_wtime());
    /* What the master does for itself, it does from here on, while the
     * remote children run: the gathered vectors, child 0's inputs and run,
     * the release of the scatter sources.  Only the reports' unpacking is
     * left between the last report and the next command.  A failure
     * before the watch (out of memory for the gathered vectors or for
     * child 0's copy of a bcast) leaves the remote children running: they
     * are abandoned (cancellation, above) until the watch begins. */
    bool abandoned_before = abandoned_children;
    abandoned_children = true;
    sgl_alloc_gathers(n, s, args);
    void *in[SGL_MAX_OPS], *out[SGL_MAX_OPS];
    sgl_slot tmp[SGL_MAX_OPS];
    sgl_local_inputs(s, args, 0, in, out, tmp);
    abandoned_children = abandoned_before;
    /* the reports' receives are posted before child 0 runs, and polled
     * while it runs (sgl_mpi_poll.c); sgl_child_run
     * raises nothing */
    for (int i = 1; i < nk; i++) {
        st->arrived[i] = 0;
        st->stop_sent[i] = INT_MAX;
        sgl_msg_recv_post(&st->kid[i], i, TAG_REPORT, n->comm_down, &st->report[i]);
    }
    sgl_mpi_watch_begin(n, st, nk);
    sgl_child_run(n->kids, s, k, in, out, &res[0]);
    sgl_mpi_watch_end();
    sgl_local_inputs_done(s, args, in, tmp);
    /* a failure of child 0 stops the remote children after it */
    if (res[0].msg && res[0].failed_op >= 0) sgl_mpi_send_stops(n, st, res[0].failed_op, 0, nk);
    sgl_release_sources(s, args); /* child 0 has taken its elements too */
    joined_part *jp = NULL;
    const sgl_masks *m = sgl_site_masks(s);
    for (uint64_t g = m->gather & m->vec; g;) {
        int j = sgl_mask_next(&g);
        if (joinable(&s->ops[j], &args[j])) {
            if (st->njp < (size_t)nk * SGL_MAX_OPS) {
                st->njp = (size_t)nk * SGL_MAX_OPS;
                st->jp = sgl_mpi_realloc(st->jp, st->njp * sizeof *st->jp);
            }
            jp = st->jp;
            break;
        }
    }
    /* the reports of children 1..nk-1, in child order; each result's
     * output points into its report (kept until the next superstep) */
    double t_wait = rec ? sgl_wtime() : 0;
    int upto = surely_first(s, &res[0]) ? 1 : nk;
    bool any_oob = false, any_follows = false;
    for (int i = 1; i < upto; i++) {
        mpi_peer *p = &st->kid[i];
        if (!sgl_mpi_wait_report(n, st, i, upto)) {
            /* a master above, in this process, cancelled n: its remote
             * children may still run (abandoned, as below) */
            sgl_mpi_drop_reports(st, i, nk);
            abandoned_children = true;
            sgl_unwind(n);
        }
        sgl_msg_recv_rest(p, i, n->comm_down);
        sgl_pieces_clear(&p->oob);
        p->out_follows = mpi_unpack_result(p->in, s, &res[i], args, i, &p->oob,
                                           jp ? jp + (size_t)i * SGL_MAX_OPS : NULL);
        any_follows |= p->out_follows;
        any_oob |= p->oob.n > 0;
        if (surely_first(s, &res[i])) upto = i + 1;
    }
    sgl_mpi_drop_reports(st, upto, nk);
    for (int i = upto; i < nk; i++) abandon(s, &res[i]);
    if (jp)
        for (int j = 0; j < s->nops; j++)
            if (joinable(&s->ops[j], &args[j])) join_gather(st, &s->ops[j], &args[j], upto, jp, j);
    /* then the large vectors of every report, in place */
    for (int i = 1; any_oob && i < upto; i++)
        if (st->kid[i].oob.n) sgl_pieces_transfer(&st->kid[i].oob, i, n->comm_down, NULL);
    /* and the output that did not fit in a report (io) */
    for (int i = 1; any_follows && i < upto; i++)
        if (st->kid[i].out_follows)
            sgl_mpi_recv_output(n->comm_down, i, TAG_OUT, s, &res[i], &st->kid[i].outbuf,
                                &st->out_chunk);
    for (int i = 1; i < nk; i++) /* the stop messages sent (eager: already gone) */
        if (st->stop_sent[i] != INT_MAX) MPI_CHECK(MPI_Wait(&st->stop_req[i], MPI_STATUS_IGNORE));
    if (rec) sgl_trace_span(n->track, "wait", s, t_wait, sgl_wtime());
}

/* Nothing to prepare in the child processes; child 0 is in this one. */
static void mpi_start(sgl_node *n) { sgl_tree_start(n->kids); }

/* Tell every process below n (through n and its local child 0) to stop. */
static void mpi_shutdown(sgl_node *n, int status)
{
    if (abandoned_children || status != 0) {
        /* some process below may still run: stop them all (the error is
         * printed already).  After a failure the job always ends so, and
         * never by MPI_Finalize: a rank in MPI_Finalize while another
         * calls MPI_Abort makes Open MPI 4.1's mpirun hang in its PMIx
         * server's finalize, or crash (docs/execution.md) */
        fflush(stdout);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, status ? status : 1);
        exit(status ? status : 1);
    }
    int64_t cmd[4] = {(int64_t)sizeof cmd, CMD_EXIT, status, 0};
    for (int i = 1; i < n->nchildren; i++)
        MPI_CHECK(MPI_Send(cmd, (int)sizeof cmd, MPI_BYTE, i, TAG_CMD, n->comm_down));
    sgl_tree_shutdown(n->kids, status);
}

const sgl_transport sgl_transport_mpi = {
    .start = mpi_start,
    .superstep = mpi_superstep,
    .shutdown = mpi_shutdown,
};

void sgl_mpi_serve(sgl_node *c)
{
    struct sgl_mpi_state *st = mpi_state(c);
    mpi_peer *up = &st->up;
    sgl_mpi_served_start(c); /* the master's stop messages (sgl_mpi_poll.c) */
    for (;;) {
        sgl_msg_recv(up, 0, TAG_CMD, c->comm_up);
        const char *p = up->in + sizeof(int64_t);
        int64_t site = get_i64(&p), depth = get_i64(&p), uid = get_i64(&p);
        if (site == CMD_EXIT) {
            sgl_mpi_served_end();
            sgl_tree_shutdown(c, (int)depth);
            return;
        }
        if (site < 0 || site >= sgl_prog->nsites) sgl_internal_error("bad command from the master");
        const sgl_site *s = sgl_prog->sites[site];
        sgl_key mk = {depth, uid};
        void *in[SGL_MAX_OPS], *out[SGL_MAX_OPS];
        sgl_slot tmp[SGL_MAX_OPS];
        sgl_slot outval[SGL_MAX_OPS];
        mpi_decode_inputs(c->comm_up, s, up, tmp, in);
        const sgl_masks *m = sgl_site_masks(s);
        for (uint64_t g = m->gather; g;) {
            int j = sgl_mask_next(&g);
            out[j] = sgl_op_place(s, j, &outval[j]);
            memset(out[j], 0, sgl_sizeof(s->ops[j].type));
        }
        sgl_child_result r = {.failed_op = -1}; /* (a child's run stores what changed) */
        sgl_mpi_served_step(true); /* polled for stop messages while it runs */
        sgl_child_run(c, s, mk, in, out, &r);
        sgl_mpi_served_step(false);
        sgl_pieces_clear(&up->oob);
        mpi_pack_result(&up->out, s, &r, out, &up->oob);
        sgl_msg_isend(up, 0, TAG_REPORT, c->comm_up, &st->reqs);
        sgl_mpi_send_output(c->comm_up, 0, TAG_OUT, s, &r, &st->out_chunk); /* io */
        sgl_req_wait(&st->reqs);
        for (uint64_t g = m->gather & m->vec; g;) {
            int j = sgl_mask_next(&g);
            if (r.failed_op >= 0 && r.failed_op <= j) break;
            sgl_value_free(s->ops[j].type, out[j]);
        }
        for (uint64_t io = m->big; io;) {
            int j = sgl_mask_next(&io);
            sgl_slot_release(s->ops[j].kind == SGL_OP_GATHER ? &outval[j] : &tmp[j],
                             s->ops[j].kind == SGL_OP_GATHER ? out[j] : in[j]);
        }
        if (r.msg) free(r.msg);
        if (r.files.cap) sgl_files_free(&r.files); /* io */
        sgl_out_reset(c);
    }
}

#endif /* SGL_USE_MPI */
