/*
 * sgl_mpi_msg.h: the message layer of the MPI transport (internal; used by
 * sgl_mpi.c, defined in sgl_mpi_msg.c).  Only with SGL_USE_MPI.
 */
#ifndef SGL_MPI_MSG_H
#define SGL_MPI_MSG_H

#include "sgl_internal.h"

#ifdef SGL_USE_MPI

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
 * the same messages.  A sender whose message is several blocks apart in
 * memory sends it as several MPI messages (the long blocks from where they
 * lie, the short ones packed, at most 4 MiB at a time); the receiver takes
 * a message's bytes with as many receives as they arrive in. */
enum { TAG_CMD = 11, TAG_REPORT = 12, TAG_DATA = 13, TAG_OUT = 14 };
#define FIRST ((size_t)4096)
#define OOB_MIN ((size_t)8 << 10)
#define OOB_CHUNK ((size_t)1 << 30)

typedef struct req_list {
    MPI_Request *r;
    int n, cap;
} req_list;

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

/* n as an MPI count (an internal error past INT_MAX); realloc or an internal error. */
int sgl_mpi_count(size_t n);
void *sgl_mpi_realloc(void *p, size_t n);
/* A new request slot of l; wait for all of l's requests and empty it. */
MPI_Request *sgl_req_new(req_list *l);
void sgl_req_wait(req_list *l);
/* Send (reqs non-NULL) or receive the pieces of l (sgl_mpi_msg.c). */
void sgl_pieces_transfer(const sgl_pieces *l, int peer, MPI_Comm comm, req_list *reqs);
/* Post the sends of p's string and pieces; receive a string: its first
 * FIRST bytes (posted early, or blocking), then the rest. */
void sgl_msg_isend(mpi_peer *p, int dest, int tag, MPI_Comm comm, req_list *reqs);
void sgl_msg_recv_post(mpi_peer *p, int src, int tag, MPI_Comm comm, MPI_Request *req);
void sgl_msg_recv(mpi_peer *p, int src, int tag, MPI_Comm comm);
void sgl_msg_recv_rest(mpi_peer *p, int src, MPI_Comm comm);

#endif /* SGL_USE_MPI */
#endif /* SGL_MPI_MSG_H */
