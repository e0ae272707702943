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
 * child (its failure, output and gathered values).
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
        if (!ptr || !len) sgl_internal_error("out of memory (message list)");
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
                if (!r) sgl_internal_error("out of memory (requests)");
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
        if (!m) sgl_internal_error("out of memory (messages)");
        for (int i = n->msgs_cap; i < nk; i++) m[i] = (sgl_buf){0};
        n->msgs = m;
        n->msgs_cap = nk;
    }
    sgl_buf *msgs = n->msgs; /* their storage is reused from one superstep to the next */
    oob_list *oobs = calloc((size_t)nk, sizeof *oobs);
    if (!oobs) sgl_internal_error("out of memory (messages)");
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
            if (!r) sgl_internal_error("out of memory (requests)");
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
    if (!buf) sgl_internal_error("out of memory (message)");
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
static void mpi_pack_result(sgl_buf *b, const sgl_site *s, const sgl_child_result *r,
                            void **out, oob_list *l)
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

static const char *mpi_unpack_result(const char *p, const sgl_site *s, sgl_child_result *r,
                                     sgl_arg *args, int i, MPI_Comm comm)
{
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
    return p;
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
    for (int j = 0; j < s->nops; j++) r->seg_end[j] = 0;
    abandoned_children = true;
}
/* ---- end of cancellation */

static void mpi_superstep(sgl_node *n, sgl_key k, const sgl_site *s, sgl_arg *args,
                          sgl_child_result *res, sgl_step_rec *rec)
{
    int nk = n->nchildren;
    mpi_send_commands(n, s, k, args);
    if (rec) sgl_trace_span(n->track, "send", s, rec->t0, sgl_wtime());
    {
        void *in[SGL_MAX_OPS], *out[SGL_MAX_OPS];
        sgl_vec tmp[SGL_MAX_OPS];
        sgl_local_inputs(s, args, 0, in, out, tmp);
        sgl_child_run(n->kids, s, k, in, out, &res[0]);
    }
    /* the reports of children 1..nk-1, in child order; each result's
     * output points into its report (freed by sgl_superstep) */
    double t_wait = rec ? sgl_wtime() : 0;
    int upto = surely_first(s, &res[0]) ? 1 : nk;
    for (int i = 1; i < upto; i++) {
        int count = 0;
        char *report = mpi_recv_any(n->comm_down, i, TAG_REPORT, &count);
        free(res[i].storage); /* left by a superstep that raised */
        res[i].storage = report;
        mpi_unpack_result(report, s, &res[i], args, i, n->comm_down);
        if (surely_first(s, &res[i])) upto = i + 1;
    }
    for (int i = upto; i < nk; i++) abandon(s, &res[i]);
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
    int64_t cmd[3] = {CMD_EXIT, status, 0};
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
    for (;;) {
        int count = 0;
        char *msg = mpi_recv_any(c->comm_up, 0, TAG_CMD, &count);
        const char *p = msg;
        int64_t site = get_i64(&p), depth = get_i64(&p), uid = get_i64(&p);
        if (site == CMD_EXIT) {
            free(msg);
            sgl_tree_shutdown(c, (int)depth);
            return;
        }
        if (site < 0 || site >= sgl_prog->nsites) sgl_internal_error("bad command from the master");
        const sgl_site *s = sgl_prog->sites[site];
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
        sgl_child_result r;
        sgl_child_run(c, s, mk, in, out, &r);
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
        sgl_files_free(&r.files); /* io */
        c->out.len = 0;
        sgl_buf_free(&b);
    }
}

/* ------------------------------------------------------------------ */
/* Processes                                                            */

void sgl_mpi_init(int *argc, char ***argv, int *nprocs, int *rank)
{
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
