/*
 * sgl_mpi_msg.c: the message layer of the MPI transport (sgl_mpi_msg.h):
 * a command or a report as one byte string and its pieces, sent and
 * received with checked MPI calls.  Compiled to nothing without
 * SGL_USE_MPI.
 */
#define _POSIX_C_SOURCE 200809L
#include "sgl_mpi_msg.h"

#ifdef SGL_USE_MPI

#include <stdlib.h>
#include <string.h>

/* MPI counts are ints: a byte string longer than that travels in
 * messages of at most OOB_CHUNK bytes, in order (MPI keeps the order of
 * messages of one sender, tag and communicator). */
void sgl_mpi_bcast_bytes(void *p, size_t n, MPI_Comm comm)
{
    do {
        size_t take = n < OOB_CHUNK ? n : OOB_CHUNK;
        MPI_CHECK(MPI_Bcast(p, (int)take, MPI_BYTE, 0, comm));
        p = (char *)p + take;
        n -= take;
    } while (n > 0);
}

void *sgl_mpi_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) sgl_internal_error("out of memory (messages)");
    return q;
}

MPI_Request *sgl_req_new(req_list *l)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->r = sgl_mpi_realloc(l->r, (size_t)l->cap * sizeof *l->r);
    }
    return &l->r[l->n++];
}

void sgl_req_wait(req_list *l)
{
    if (l->n) MPI_CHECK(MPI_Waitall(l->n, l->r, MPI_STATUSES_IGNORE));
    l->n = 0;
}

/* A message of several blocks (rows that do not lie next to each other)
 * is sent as several MPI messages, in order: each block of DIRECT_MIN
 * bytes or more straight from where it lies, the smaller ones between
 * them packed into a staging buffer of at most STAGE_MAX bytes (MPI moves
 * a non-contiguous datatype fragment by fragment, far slower than
 * contiguous blocks).  The receiver takes a message's bytes with as many
 * receives as it takes (each for all that is left, MPI_Get_count saying
 * how much came), so it needs no knowledge of the sender's layout, and no
 * copy of the whole message is ever made on the sending side. */
#define DIRECT_MIN ((size_t)64 << 10)
#define STAGE_MAX ((size_t)4 << 20)

static void stage_flush(char *stage, size_t *staged, int peer, MPI_Comm comm)
{
    if (*staged == 0) return;
    /* blocking: the staging buffer is reused; the receiver takes its
     * messages in order */
    MPI_CHECK(MPI_Send(stage, (int)*staged, MPI_BYTE, peer, TAG_DATA, comm));
    *staged = 0;
}

/* Send the `size` bytes of blocks k0 (from offset off0) on, as above. */
static void send_blocks(const sgl_pieces *l, int64_t k0, size_t off0, size_t size, int peer,
                        MPI_Comm comm, req_list *reqs)
{
    if (size == 0) {
        /* the receiver takes at least one message */
        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_DATA, comm));
        return;
    }
    char *stage = NULL;
    size_t staged = 0, at = 0;
    for (int64_t q = k0, o = (int64_t)off0; at < size; q++, o = 0) {
        size_t take = l->len[q] - (size_t)o < size - at ? l->len[q] - (size_t)o : size - at;
        char *src = l->ptr[q] + o;
        at += take;
        if (take == 0) continue;
        if (take >= DIRECT_MIN) {
            stage_flush(stage, &staged, peer, comm);
            MPI_CHECK(MPI_Isend(src, (int)take, MPI_BYTE, peer, TAG_DATA, comm, sgl_req_new(reqs)));
            continue;
        }
        if (!stage) {
            size_t cap = size < STAGE_MAX ? size : STAGE_MAX;
            stage = malloc(cap);
            if (!stage) sgl_internal_error("out of memory (message)");
        }
        if (staged + take > STAGE_MAX) stage_flush(stage, &staged, peer, comm);
        memcpy(stage + staged, src, take);
        staged += take;
    }
    stage_flush(stage, &staged, peer, comm);
    free(stage);
}

/* Receive `size` bytes into p, from one message or several (send_blocks). */
static void recv_bytes(char *p, size_t size, int peer, MPI_Comm comm)
{
    size_t at = 0;
    do {
        MPI_Status st;
        MPI_CHECK(MPI_Recv(p + at, (int)(size - at), MPI_BYTE, peer, TAG_DATA, comm, &st));
        int got = 0;
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &got));
        if (got < 0 || (size_t)got > size - at) sgl_internal_error("bad message");
        at += (size_t)got;
        if (got == 0 && at < size) sgl_internal_error("bad message");
    } while (at < size);
}

/* Send (reqs non-NULL: post the sends) or receive the pieces of l: one
 * message per value (pieces of one message id) and OOB_CHUNK bytes.  A
 * message of one block travels from or into that block; one of several
 * blocks is sent block by block (send_blocks) and received into a
 * staging buffer that is then unpacked. */
void sgl_pieces_transfer(const sgl_pieces *l, int peer, MPI_Comm comm, req_list *reqs)
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
        if (reqs) {
            if (nb == 1)
                MPI_CHECK(MPI_Isend(l->ptr[k0] + off0, (int)size, MPI_BYTE, peer, TAG_DATA, comm,
                                    sgl_req_new(reqs)));
            else
                send_blocks(l, k0, off0, size, peer, comm, reqs);
            continue;
        }
        if (nb == 1) {
            recv_bytes(l->ptr[k0] + off0, size, peer, comm);
            continue;
        }
        char *stage = malloc(size ? size : 1);
        if (!stage) sgl_internal_error("out of memory (message)");
        recv_bytes(stage, size, peer, comm);
        size_t at = 0;
        for (int64_t q = k0, o = (int64_t)off0; at < size; q++, o = 0) {
            size_t take = l->len[q] - (size_t)o < size - at ? l->len[q] - (size_t)o : size - at;
            memcpy(l->ptr[q] + o, stage + at, take);
            at += take;
        }
        free(stage);
    }
}

/* A message longer than FIRST bytes or with pieces: posted sends. */
__attribute__((noinline)) static void isend_parts(mpi_peer *p, int dest, int tag, MPI_Comm comm,
                                                  req_list *reqs)
{
    size_t first = p->out.len < FIRST ? p->out.len : FIRST;
    MPI_CHECK(MPI_Isend(p->out.data, (int)first, MPI_BYTE, dest, tag, comm, sgl_req_new(reqs)));
    for (size_t at = FIRST; at < p->out.len; at += OOB_CHUNK) {
        size_t take = p->out.len - at < OOB_CHUNK ? p->out.len - at : OOB_CHUNK;
        MPI_CHECK(MPI_Isend(p->out.data + at, (int)take, MPI_BYTE, dest, TAG_DATA, comm,
                            sgl_req_new(reqs)));
    }
    sgl_pieces_transfer(&p->oob, dest, comm, reqs);
}

/* Post the sends of p's string and pieces to `dest` with `tag`. */
void sgl_msg_isend(mpi_peer *p, int dest, int tag, MPI_Comm comm, req_list *reqs)
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
    isend_parts(p, dest, tag, comm, reqs);
}

/* Receive a string from `src` with `tag` into p->in (the pieces are
 * received later, by sgl_pieces_transfer(..., NULL), once p->oob lists them):
 * its first FIRST bytes (sgl_msg_recv_post: a receive posted early; its
 * request completed before sgl_msg_recv_rest), then the rest. */
void sgl_msg_recv_post(mpi_peer *p, int src, int tag, MPI_Comm comm, MPI_Request *req)
{
    if (p->in_cap < FIRST) {
        p->in = sgl_mpi_realloc(p->in, FIRST);
        p->in_cap = FIRST;
    }
    MPI_CHECK(MPI_Irecv(p->in, (int)FIRST, MPI_BYTE, src, tag, comm, req));
}

void sgl_msg_recv(mpi_peer *p, int src, int tag, MPI_Comm comm)
{
    if (p->in_cap < FIRST) {
        p->in = sgl_mpi_realloc(p->in, FIRST);
        p->in_cap = FIRST;
    }
    MPI_CHECK(MPI_Recv(p->in, (int)FIRST, MPI_BYTE, src, tag, comm, MPI_STATUS_IGNORE));
    sgl_msg_recv_rest(p, src, comm);
}

void sgl_msg_recv_rest(mpi_peer *p, int src, MPI_Comm comm)
{
    int64_t len;
    memcpy(&len, p->in, sizeof len);
    if (len < (int64_t)sizeof len) sgl_internal_error("bad message");
    if ((size_t)len > FIRST) {
        if ((size_t)len > p->in_cap) {
            p->in = sgl_mpi_realloc(p->in, (size_t)len);
            p->in_cap = (size_t)len;
        }
        for (size_t at = FIRST; at < (size_t)len; at += OOB_CHUNK) {
            size_t take = (size_t)len - at < OOB_CHUNK ? (size_t)len - at : OOB_CHUNK;
            MPI_CHECK(MPI_Recv(p->in + at, (int)take, MPI_BYTE, src, TAG_DATA, comm,
                               MPI_STATUS_IGNORE));
        }
    }
}

#endif /* SGL_USE_MPI */
