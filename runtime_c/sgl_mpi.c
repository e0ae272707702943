/*
 * sgl_mpi.c: the MPI transport (sgl_internal.h) and the start-up of MPI
 * processes.  Compiled to nothing without SGL_USE_MPI.
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
 * The MPI library is initialized with MPI_THREAD_FUNNELED: only a
 * process's main thread calls MPI (thread levels are below process
 * levels).  Every call is checked (MPI_CHECK).
 */
#define _POSIX_C_SOURCE 200809L
#include "sgl_internal.h"

#ifdef SGL_USE_MPI

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CMD_EXIT = -1 };

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
    if (n > INT_MAX) sgl_internal_error("message larger than 2 GiB");
    return (int)n;
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) sgl_internal_error("out of memory (messages)");
    return q;
}

/* ---- messages ----
 * A command or a report is one byte string (sgl_ser_oob's format) that
 * begins with its own length (int64), and the pieces of its large
 * vectors (sgl_internal.h).  The receiver always posts a receive of
 * FIRST bytes into a buffer it keeps (no MPI_Probe, no allocation); a
 * longer string sends its first FIRST bytes under the message's tag and
 * the rest as one TAG_DATA message.  Then come the pieces: one TAG_DATA
 * message per value (scatter element, bcast value, gathered value) and
 * OOB_CHUNK bytes, sent from and received into the vectors' own storage
 * when they are one block (a flat vector, the rows of split(v, k) or of
 * slices of one vector, the rows of a [[T]] on the receiving side), so
 * that MPI's copy is the only one; a nested vector costs one message, not
 * one per row.  Both sides know the pieces' lengths (the receiver reads
 * them in the string) and cut the values at the same places, so they cut
 * the same messages. */
enum { TAG_CMD = 11, TAG_REPORT = 12, TAG_DATA = 13, TAG_OUT = 14 };
#define FIRST ((size_t)4096)
#define OOB_MIN ((size_t)8 << 10)
#define OOB_CHUNK ((size_t)1 << 30)

typedef struct req_list {
    MPI_Request *r;
    int n, cap;
} req_list;

static MPI_Request *req_new(req_list *l)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->r = xrealloc(l->r, (size_t)l->cap * sizeof *l->r);
    }
    return &l->r[l->n++];
}

static void req_wait(req_list *l)
{
    if (l->n) MPI_CHECK(MPI_Waitall(l->n, l->r, MPI_STATUSES_IGNORE));
    l->n = 0;
}

/* One peer's buffers: the string being sent or received, and its pieces. */
typedef struct mpi_peer {
    sgl_buf out;     /* sending: the string */
    char *in;        /* receiving: the string (capacity in_cap >= FIRST) */
    size_t in_cap;
    sgl_pieces oob;  /* its pieces */
    /* a master's, receiving a child's output that follows its report
     * (sgl_mpi_recv_output): whether it does, and where it goes */
    bool out_follows;
    sgl_mpi_outbuf outbuf;
} mpi_peer;

/* A node's transport state: as a master, one peer per child (and the
 * requests of a superstep); as a served node, `up` for its master. */
struct sgl_mpi_state {
    mpi_peer *kid;
    int nkid;
    mpi_peer up;
    req_list reqs;
    struct joined_part *jp; /* per child and op: a contiguous gather's parts */
    size_t njp;
    char *out_chunk; /* SGL_OUT_CHUNK bytes: output on its way to or from a file */
};

static struct sgl_mpi_state *mpi_state(sgl_node *n)
{
    if (!n->mpi) {
        n->mpi = calloc(1, sizeof *n->mpi);
        if (!n->mpi) sgl_internal_error("out of memory (messages)");
    }
    struct sgl_mpi_state *st = n->mpi;
    if (st->nkid < n->nchildren) {
        st->kid = xrealloc(st->kid, (size_t)n->nchildren * sizeof *st->kid);
        memset(st->kid + st->nkid, 0, (size_t)(n->nchildren - st->nkid) * sizeof *st->kid);
        st->nkid = n->nchildren;
    }
    return st;
}

/* Send (reqs non-NULL: post the sends) or receive the pieces of l: one
 * message per value (pieces of one message id) and OOB_CHUNK bytes.  A
 * message of one block travels from or into that block; one of several
 * blocks (rows that do not lie next to each other) is packed into or
 * unpacked from a staging buffer, since MPI moves a non-contiguous
 * datatype fragment by fragment, far slower than one contiguous block. */
static void pieces_transfer(const sgl_pieces *l, int peer, MPI_Comm comm, req_list *reqs)
{
    int64_t k = 0;   /* current piece */
    size_t off = 0;  /* bytes of it already covered */
    while (k < l->n) {
        /* the message: from piece k at off, up to OOB_CHUNK bytes of its value */
        int64_t msg = l->msg[k], k0 = k;
        size_t off0 = off, size = 0;
        int nb = 0;
        while (k < l->n && l->msg[k] == msg && size < OOB_CHUNK) {
            size_t take = l->len[k] - off < OOB_CHUNK - size ? l->len[k] - off : OOB_CHUNK - size;
            size += take;
            nb++;
            off += take;
            if (off == l->len[k]) {
                k++;
                off = 0;
            }
        }
        if (nb == 1) {
            char *p = l->ptr[k0] + off0;
            if (reqs)
                MPI_CHECK(MPI_Isend(p, (int)size, MPI_BYTE, peer, TAG_DATA, comm, req_new(reqs)));
            else
                MPI_CHECK(MPI_Recv(p, (int)size, MPI_BYTE, peer, TAG_DATA, comm, MPI_STATUS_IGNORE));
            continue;
        }
        char *stage = malloc(size);
        if (!stage) sgl_internal_error("out of memory (message)");
        size_t at = 0;
        for (int64_t q = k0, o = (int64_t)off0; at < size; q++, o = 0) {
            size_t take = l->len[q] - (size_t)o < size - at ? l->len[q] - (size_t)o : size - at;
            if (reqs) memcpy(stage + at, l->ptr[q] + o, take);
            at += take;
        }
        if (reqs) {
            /* blocking: the receiver takes its messages in order */
            MPI_CHECK(MPI_Send(stage, (int)size, MPI_BYTE, peer, TAG_DATA, comm));
        } else {
            MPI_CHECK(MPI_Recv(stage, (int)size, MPI_BYTE, peer, TAG_DATA, comm, MPI_STATUS_IGNORE));
            at = 0;
            for (int64_t q = k0, o = (int64_t)off0; at < size; q++, o = 0) {
                size_t take = l->len[q] - (size_t)o < size - at ? l->len[q] - (size_t)o : size - at;
                memcpy(l->ptr[q] + o, stage + at, take);
                at += take;
            }
        }
        free(stage);
    }
}

/* Post the sends of p's string and pieces to `dest` with `tag`. */
static void msg_isend(mpi_peer *p, int dest, int tag, MPI_Comm comm, req_list *reqs)
{
    int64_t len = (int64_t)p->out.len;
    memcpy(p->out.data, &len, sizeof len);
    if (p->out.len <= FIRST && p->oob.bytes == 0) {
        /* one short message: sent eagerly by MPI, and the receiver is
         * waiting for it anyway (a child for its command, a master for
         * the report of a child it has sent the command) */
        MPI_CHECK(MPI_Send(p->out.data, (int)p->out.len, MPI_BYTE, dest, tag, comm));
        return;
    }
    size_t first = p->out.len < FIRST ? p->out.len : FIRST;
    MPI_CHECK(MPI_Isend(p->out.data, (int)first, MPI_BYTE, dest, tag, comm, req_new(reqs)));
    if (p->out.len > FIRST)
        MPI_CHECK(MPI_Isend(p->out.data + FIRST, to_count(p->out.len - FIRST), MPI_BYTE, dest,
                            TAG_DATA, comm, req_new(reqs)));
    pieces_transfer(&p->oob, dest, comm, reqs);
}

/* Receive a string from `src` with `tag` into p->in (the pieces are
 * received later, by pieces_transfer(..., NULL), once p->oob lists them). */
static void msg_recv(mpi_peer *p, int src, int tag, MPI_Comm comm)
{
    if (p->in_cap < FIRST) {
        p->in = xrealloc(p->in, FIRST);
        p->in_cap = FIRST;
    }
    MPI_CHECK(MPI_Recv(p->in, (int)FIRST, MPI_BYTE, src, tag, comm, MPI_STATUS_IGNORE));
    int64_t len;
    memcpy(&len, p->in, sizeof len);
    if (len < (int64_t)sizeof len) sgl_internal_error("bad message");
    if ((size_t)len > FIRST) {
        if ((size_t)len > p->in_cap) {
            p->in = xrealloc(p->in, (size_t)len);
            p->in_cap = (size_t)len;
        }
        MPI_CHECK(MPI_Recv(p->in + FIRST, to_count((size_t)len - FIRST), MPI_BYTE, src, TAG_DATA,
                           comm, MPI_STATUS_IGNORE));
    }
}
/* ---- end of messages ---- */

/* The command for child i of a superstep: site, depth, uid, then per op
 * in order: a scatter's element for child i; a bcast's value, or (for a
 * large value sent to many children) its size, the value following in an
 * MPI_Bcast. */
#define BCAST_INLINE_LIMIT ((size_t)1 << 20)

static void mpi_send_commands(sgl_node *n, struct sgl_mpi_state *st, const sgl_site *s,
                              sgl_key k, sgl_arg *args)
{
    int nk = n->nchildren;
    sgl_buf bc[SGL_MAX_OPS];
    bool separate[SGL_MAX_OPS];
    bool any_separate = false;
    for (int j = 0; j < s->nops; j++) {
        separate[j] = false;
        if (s->ops[j].kind == SGL_OP_BCAST && nk > 2) {
            size_t size = sgl_ser_size(s->ops[j].type, args[j].src);
            separate[j] = size * (size_t)(nk - 1) > BCAST_INLINE_LIMIT;
            if (separate[j]) {
                bc[j] = (sgl_buf){0};
                sgl_ser(&bc[j], s->ops[j].type, args[j].src);
                any_separate = true;
            }
        }
    }
    for (int i = 1; i < nk; i++) {
        mpi_peer *p = &st->kid[i];
        sgl_buf *b = &p->out;
        sgl_pieces_clear(&p->oob);
        int64_t head[4] = {0, s->id, k.depth, k.uid}; /* the length is filled in by msg_isend */
        b->len = 0;
        sgl_buf_put(b, head, sizeof head);
        for (int j = 0; j < s->nops; j++) {
            const sgl_op *op = &s->ops[j];
            sgl_pieces_cut(&p->oob);
            if (op->kind == SGL_OP_SCATTER) {
                const sgl_vec *v = args[j].src;
                sgl_ser_oob(b, op->type, (const char *)v->data + (size_t)i * sgl_sizeof(op->type),
                            OOB_MIN, &p->oob);
            } else if (op->kind == SGL_OP_BCAST) {
                put_i64(b, separate[j] ? (int64_t)bc[j].len : -1);
                if (!separate[j]) sgl_ser_oob(b, op->type, args[j].src, OOB_MIN, &p->oob);
            }
        }
        msg_isend(p, i, TAG_CMD, n->comm_down, &st->reqs);
    }
    if (any_separate)
        for (int j = 0; j < s->nops; j++)
            if (separate[j]) {
                MPI_CHECK(MPI_Bcast(bc[j].data, to_count(bc[j].len), MPI_BYTE, 0, n->comm_down));
                sgl_buf_free(&bc[j]);
            }
    req_wait(&st->reqs);
}

/* A child's side: decode the inputs of the ops from its command, then
 * receive its pieces and the separate bcasts (in the master's order). */
static void mpi_decode_inputs(MPI_Comm comm, const sgl_site *s, mpi_peer *up, sgl_vec *tmp,
                              void **in)
{
    const char *p = up->in + 4 * sizeof(int64_t); /* after length, site, depth, uid */
    int64_t bsize[SGL_MAX_OPS];
    bool any_separate = false;
    sgl_pieces_clear(&up->oob);
    for (int j = 0; j < s->nops; j++) {
        const sgl_op *op = &s->ops[j];
        in[j] = NULL;
        bsize[j] = -1;
        sgl_pieces_cut(&up->oob);
        if (op->kind == SGL_OP_SCATTER) {
            p = sgl_deser_oob(p, op->type, &tmp[j], &up->oob);
            in[j] = &tmp[j];
        } else if (op->kind == SGL_OP_BCAST) {
            bsize[j] = get_i64(&p);
            if (bsize[j] < 0) p = sgl_deser_oob(p, op->type, &tmp[j], &up->oob);
            else any_separate = true;
            in[j] = &tmp[j];
        }
    }
    pieces_transfer(&up->oob, 0, comm, NULL);
    if (!any_separate) return;
    for (int j = 0; j < s->nops; j++) {
        if (bsize[j] < 0) continue;
        const sgl_op *op = &s->ops[j];
        char *buf = sgl_alloc(bsize[j] ? (size_t)bsize[j] : 1, op->line, op->col);
        MPI_CHECK(MPI_Bcast(buf, to_count((size_t)bsize[j]), MPI_BYTE, 0, comm));
        sgl_deser(buf, op->type, &tmp[j]);
        free(buf);
    }
}


/* A remote child's report: failure, output segments, gathered values. */
static void mpi_pack_result(sgl_buf *b, const sgl_site *s, const sgl_child_result *r,
                            void **out, sgl_pieces *l)
{
    size_t mlen = r->msg ? strlen(r->msg) : 0;
    struct {
        int64_t len, failed_op;
        double compute;
        int64_t mlen;
    } head = {0, r->failed_op, r->compute, (int64_t)mlen}; /* len: filled in by msg_isend */
    b->len = 0;
    sgl_buf_put(b, &head, sizeof head);
    if (mlen) sgl_buf_put(b, r->msg, mlen);
    _Static_assert(sizeof r->seg_end[0] == sizeof(int64_t), "output segments travel as int64");
    sgl_buf_put(b, r->seg_end, (size_t)s->nops * sizeof r->seg_end[0]);
    /* io: the output, or 0 if it follows the report (mpi_send_output) */
    bool inl = sgl_mpi_out_inline(s, r);
    put_i64(b, inl);
    if (inl) sgl_buf_put(b, r->out, sgl_mpi_out_total(s, r));
    for (int j = 0; j < s->nops; j++) {
        if (s->ops[j].kind == SGL_OP_GATHER && (r->failed_op < 0 || r->failed_op > j)) {
            sgl_pieces_cut(l);
            sgl_ser_oob(b, s->ops[j].type, out[j], OOB_MIN, l);
        }
    }
    /* ---- io: the files the child's subtree used (count, then per path:
     * written flag, length, bytes) ---- */
    put_i64(b, r->files.n);
    for (int k = 0; k < r->files.n; k++) {
        size_t plen = strlen(r->files.path[k]);
        put_i64(b, r->files.wrote[k]);
        put_i64(b, (int64_t)plen);
        sgl_buf_put(b, r->files.path[k], plen);
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
           op->type->elem->kind != SGL_T_VEC;
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
    if (mlen) {
        r->msg = malloc((size_t)mlen + 1);
        if (!r->msg) sgl_internal_error("out of memory");
        memcpy(r->msg, p, (size_t)mlen);
        r->msg[mlen] = '\0';
        p += mlen;
    }
    for (int j = 0; j < s->nops; j++) r->seg_end[j] = (size_t)get_i64(&p);
    /* io: the output, here or after the report */
    bool inl = get_i64(&p) != 0;
    r->out = inl ? p : NULL;
    r->out_fd = -1;
    r->out_spilled = 0;
    r->out_err = 0;
    if (inl) p += sgl_mpi_out_total(s, r);
    for (int j = 0; j < s->nops; j++) {
        const sgl_op *op = &s->ops[j];
        if (op->kind != SGL_OP_GATHER) continue;
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
        p = sgl_deser_oob(p, op->type, (char *)d->data + (size_t)i * sgl_sizeof(op->type), l);
    }
    /* ---- io: the files of the child's subtree ---- */
    sgl_files_free(&r->files);
    int64_t nfiles = get_i64(&p);
    for (int64_t k = 0; k < nfiles; k++) {
        int64_t wrote = get_i64(&p), plen = get_i64(&p);
        char *path = malloc((size_t)plen + 1);
        if (!path) sgl_internal_error("out of memory");
        memcpy(path, p, (size_t)plen);
        path[plen] = '\0';
        p += plen;
        sgl_files_add(&r->files, path, wrote != 0);
        free(path);
    }
    /* ---- end io ---- */
    return !inl;
}

/* Gather op j into adjacent views of one new buffer, in child order:
 * child 0's block (in this process) is copied in, the others' are
 * copied from their reports or will be received in place (their pieces
 * are pointed into the buffer).  Children from `upto` on sent nothing. */
static void join_gather(struct sgl_mpi_state *st, const sgl_op *op, sgl_arg *a, int upto,
                        const joined_part *jp /* [child * SGL_MAX_OPS + op] */, int j)
{
    sgl_type vt = {SGL_T_VEC, op->type->elem};
    size_t esz = sgl_sizeof(op->type->elem);
    sgl_vec *blocks = ((sgl_vec *)a->dst)->data;
    int64_t len0 = blocks[0].len, total = len0;
    for (int i = 1; i < upto; i++) total += jp[(size_t)i * SGL_MAX_OPS + j].len;
    sgl_vec all = {NULL, 0, NULL};
    if (total > len0) {
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
 * in an op at or before the site's first op that runs code (a pardo or a
 * gather; scatters and bcasts only store values and cannot fail), once
 * the children before it have reported.  Those children are abandoned:
 * they may still be running, so this process ends the job with MPI_Abort
 * when it is told to stop (mpi_shutdown), after the root has printed the
 * error; nothing is waited for in between. */
static bool abandoned_children;

static bool surely_first(const sgl_site *s, const sgl_child_result *r)
{
    if (r->failed_op < 0 || !r->msg) return false;
    for (int j = 0; j < r->failed_op; j++)
        if (s->ops[j].kind == SGL_OP_PARDO || s->ops[j].kind == SGL_OP_GATHER) return false;
    return true;
}

static void abandon(const sgl_site *s, sgl_child_result *r)
{
    free(r->storage);
    r->storage = NULL;
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

static void mpi_superstep(sgl_node *n, sgl_key k, const sgl_site *s, sgl_arg *args,
                          sgl_child_result *res, sgl_step_rec *rec)
{
    int nk = n->nchildren;
    struct sgl_mpi_state *st = mpi_state(n);
    mpi_send_commands(n, st, s, k, args);
    if (rec) sgl_trace_span(n->track, "send", s, rec->t0, sgl_wtime());
    {
        void *in[SGL_MAX_OPS], *out[SGL_MAX_OPS];
        sgl_vec tmp[SGL_MAX_OPS];
        sgl_local_inputs(s, args, 0, in, out, tmp);
        sgl_child_run(n->kids, s, k, in, out, &res[0]);
    }
    joined_part *jp = NULL;
    for (int j = 0; j < s->nops; j++)
        if (joinable(&s->ops[j], &args[j])) {
            if (st->njp < (size_t)nk * SGL_MAX_OPS) {
                st->njp = (size_t)nk * SGL_MAX_OPS;
                st->jp = xrealloc(st->jp, st->njp * sizeof *st->jp);
            }
            jp = st->jp;
            break;
        }
    /* the reports of children 1..nk-1, in child order; each result's
     * output points into its report (kept until the next superstep) */
    double t_wait = rec ? sgl_wtime() : 0;
    int upto = surely_first(s, &res[0]) ? 1 : nk;
    for (int i = 1; i < upto; i++) {
        mpi_peer *p = &st->kid[i];
        msg_recv(p, i, TAG_REPORT, n->comm_down);
        free(res[i].storage); /* left by a superstep that raised */
        res[i].storage = NULL;
        sgl_pieces_clear(&p->oob);
        p->out_follows = mpi_unpack_result(p->in, s, &res[i], args, i, &p->oob,
                                           jp ? jp + (size_t)i * SGL_MAX_OPS : NULL);
        if (surely_first(s, &res[i])) upto = i + 1;
    }
    for (int i = upto; i < nk; i++) abandon(s, &res[i]);
    if (jp)
        for (int j = 0; j < s->nops; j++)
            if (joinable(&s->ops[j], &args[j])) join_gather(st, &s->ops[j], &args[j], upto, jp, j);
    /* then the large vectors of every report, in place */
    for (int i = 1; i < upto; i++) pieces_transfer(&st->kid[i].oob, i, n->comm_down, NULL);
    /* and the output that did not fit in a report (io) */
    for (int i = 1; i < upto; i++)
        if (st->kid[i].out_follows)
            sgl_mpi_recv_output(n->comm_down, i, TAG_OUT, s, &res[i], &st->kid[i].outbuf,
                                &st->out_chunk);
    if (rec) sgl_trace_span(n->track, "wait", s, t_wait, sgl_wtime());
}

/* Nothing to prepare in the child processes; child 0 is in this one. */
static void mpi_start(sgl_node *n) { sgl_tree_start(n->kids); }

/* Tell every process below n (through n and its local child 0) to stop. */
static void mpi_shutdown(sgl_node *n, int status)
{
    if (abandoned_children) {
        /* some process below may still run: stop them all (the error is
         * printed already) */
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
    for (;;) {
        msg_recv(up, 0, TAG_CMD, c->comm_up);
        const char *p = up->in + sizeof(int64_t);
        int64_t site = get_i64(&p), depth = get_i64(&p), uid = get_i64(&p);
        if (site == CMD_EXIT) {
            sgl_tree_shutdown(c, (int)depth);
            return;
        }
        if (site < 0 || site >= sgl_prog->nsites) sgl_internal_error("bad command from the master");
        const sgl_site *s = sgl_prog->sites[site];
        sgl_key mk = {depth, uid};
        void *in[SGL_MAX_OPS], *out[SGL_MAX_OPS];
        sgl_vec tmp[SGL_MAX_OPS];
        char outval[SGL_MAX_OPS][sizeof(sgl_vec)];
        mpi_decode_inputs(c->comm_up, s, up, tmp, in);
        for (int j = 0; j < s->nops; j++) {
            memset(outval[j], 0, sizeof outval[j]);
            out[j] = outval[j];
        }
        sgl_child_result r;
        sgl_child_run(c, s, mk, in, out, &r);
        sgl_pieces_clear(&up->oob);
        mpi_pack_result(&up->out, s, &r, out, &up->oob);
        msg_isend(up, 0, TAG_REPORT, c->comm_up, &st->reqs);
        sgl_mpi_send_output(c->comm_up, 0, TAG_OUT, s, &r, &st->out_chunk); /* io */
        req_wait(&st->reqs);
        for (int j = 0; j < s->nops; j++)
            if (s->ops[j].kind == SGL_OP_GATHER && (r.failed_op < 0 || r.failed_op > j))
                sgl_value_free(s->ops[j].type, out[j]);
        free(r.msg);
        sgl_files_free(&r.files); /* io */
        sgl_out_reset(c);
    }
}

/* ------------------------------------------------------------------ */
/* Processes                                                            */

/* Whether an MPI launcher (mpirun, srun, Hydra) started this process:
 * the variables it sets in every rank's environment. */
static bool under_launcher(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                                       "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_PROCID",
                                       NULL};
    for (const char *const *v = vars; *v; v++)
        if (getenv(*v)) return true;
    return false;
}

void sgl_mpi_init(int *argc, char ***argv, int *nprocs, int *rank)
{
    if (!under_launcher()) {
        /* Run directly: one process ("singleton").  Open MPI then starts
         * no helper daemon and loads only its shared-memory messaging,
         * which cuts its start-up from about 0.5 s to 0.1 s; a setting of
         * the user's own is kept (no overwrite), and other MPIs ignore
         * these variables. */
        if (setenv("OMPI_MCA_ess_singleton_isolated", "1", 0) != 0 ||
            setenv("OMPI_MCA_pml", "ob1", 0) != 0)
            sgl_internal_error("out of memory (environment)");
    }
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        sgl_internal_error("MPI_Init_thread failed");
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, nprocs));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, rank));
}

void sgl_mpi_finalize(void) { MPI_CHECK(MPI_Finalize()); }

void sgl_mpi_abort(void)
{
    int init = 0, done = 0;
    if (MPI_Initialized(&init) != MPI_SUCCESS || MPI_Finalized(&done) != MPI_SUCCESS) return;
    /* on failure exit(1) follows in sgl_internal_error */
    if (init && !done) (void)MPI_Abort(MPI_COMM_WORLD, 1);
}

void sgl_mpi_barrier(void) { MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); }

void sgl_mpi_allgather_int(int x, int *all)
{
    MPI_CHECK(MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
}

void sgl_mpi_connect(sgl_node *chain, int plevels, int j0)
{
    /* one communicator per process-level master and its children: at
     * depth l, every process that hosts a node of depth l joins the one
     * of that node's master (colour: the master's position in its depth),
     * in child order */
    const sgl_shape *sh = chain[plevels].shape;
    for (int l = 1; l <= plevels; l++) {
        bool member = l >= j0;
        int color = MPI_UNDEFINED, key = 0;
        if (member) {
            int64_t master = l - 1 >= j0 ? chain[l - 1].id : sgl_shape_parent(sh, l, chain[l].id);
            color = (int)(master - sh->off[l - 1]);
            key = chain[l].child_index;
        }
        MPI_Comm comm = MPI_COMM_NULL;
        MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, color, key, &comm));
        if (comm != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
        if (member) {
            if (l - 1 >= j0) {
                int size = 0;
                MPI_CHECK(MPI_Comm_size(comm, &size));
                if (size != chain[l - 1].nchildren)
                    sgl_internal_error("a master's communicator does not hold its children");
                chain[l - 1].comm_down = comm;
            }
            if (chain[l].child_index != 0) chain[l].comm_up = comm;
        }
    }
    for (int l = j0; l < plevels; l++) {
        chain[l].via = &sgl_transport_mpi;
        chain[l].kids = &chain[l + 1];
        chain[l].nlocal = 1;
    }
}

#endif /* SGL_USE_MPI */
