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
enum { TAG_CMD = 11, TAG_REPORT = 12, TAG_DATA = 13, TAG_OUT = 14, TAG_STOP = 15 }; /* TAG_STOP: sgl_mpi_poll.c */
#define FIRST ((size_t)4096)
#define OOB_MIN ((size_t)8 << 10)
/* The longest MPI message (MPI counts are ints); -DSGL_OOB_CHUNK=4096 in
 * CFLAGS makes long values travel in many messages (tests/test_mpi_chunks.py). */
#ifdef SGL_OOB_CHUNK
#define OOB_CHUNK ((size_t)(SGL_OOB_CHUNK))
#else
#define OOB_CHUNK ((size_t)1 << 30)
#endif

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

/* A node's transport state: as a master, one peer per child (and the
 * requests of a superstep); as a served node, `up` for its master. */
struct sgl_mpi_state {
    mpi_peer *kid;
    int nkid;
    mpi_peer up;
    req_list reqs;
    struct joined_part *jp; /* per child and op: a contiguous gather's parts */
    size_t njp;
    MPI_Request *report;    /* per child: the posted receive of its report */
    unsigned char *arrived; /* per child: that receive has completed */
    int *stop_sent;         /* per child: the stop limit sent this superstep (INT_MAX: none) */
    MPI_Request *stop_req;  /* per child: that stop message's send */
    int64_t (*stop_msg)[2]; /* per child: that message (superstep number, limit) */
    int nreport;            /* their length */
    int64_t nsteps;         /* the supersteps commanded so far */
    char *out_chunk; /* SGL_OUT_CHUNK bytes: output on its way to or from a file */
};

/* ---- stopping the processes past a failure (sgl_mpi_poll.c) ---- */
/* Master n runs its child 0 with the receives of children 1 .. nk - 1's
 * reports posted: watch them (polled from sgl_check_slow) until _end. */
void sgl_mpi_watch_begin(sgl_node *n, struct sgl_mpi_state *st, int nk);
void sgl_mpi_watch_end(void);
/* Child k of n failed in op `op`: tell the remote children 1 .. upto - 1
 * still running to stop after that point (sgl_cancel_after's rule). */
void sgl_mpi_send_stops(sgl_node *n, struct sgl_mpi_state *st, int op, int k, int upto);
/* Child i's report has arrived, or wait for it; the later ones (up to
 * upto) are tested meanwhile, and so are the masters outside and the
 * master above when there are any, which may cancel n: then false. */
bool sgl_mpi_wait_report(sgl_node *n, struct sgl_mpi_state *st, int i, int upto);
/* Drop the receives still posted for children i0 .. upto - 1. */
void sgl_mpi_drop_reports(struct sgl_mpi_state *st, int i0, int upto);
/* The node c this process serves: listen for its master's stop messages
 * (_start), while it runs a command (_step(true) .. _step(false)), until
 * it is told to exit (_end). */
void sgl_mpi_served_start(sgl_node *c);
void sgl_mpi_served_step(bool running);
void sgl_mpi_served_end(void);
/* Stop and join the thread that pokes the watched nodes (before
 * MPI_Finalize: nothing of ours runs while MPI tears down). */
void sgl_mpi_ticker_stop(void);

/* MPI_Bcast of n bytes from rank 0 of comm, in messages of at most
 * OOB_CHUNK bytes (MPI counts are ints); realloc or an internal error. */
void sgl_mpi_bcast_bytes(void *p, size_t n, MPI_Comm comm);
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
