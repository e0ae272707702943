/*
 * sgl_mpi_poll.c: how a failure stops the MPI processes that have gone
 * past it (docs/execution.md, "How errors and cancellation travel through
 * the tree"), for the MPI transport (sgl_mpi.c).  Compiled to nothing
 * without SGL_USE_MPI.
 *
 * A master runs its child 0 in its own process while the remote children
 * run theirs; if a remote child fails in op j, child 0 must stop before
 * op j + 1 (sgl_cancel_after's rule), or a child 0 that loops for ever
 * there keeps the job alive.  So the master posts the receives of the
 * reports before it runs child 0 and registers them here (`watch`: one
 * entry per master of this process that is running its child 0, the
 * outermost first).  A ticker thread sets SGL_CANCEL_POLL in the flags of
 * the nodes below the outermost one every POLL_NS; the generated code's
 * check then calls sgl_check_slow, which calls sgl_mpi_poll: on the main
 * thread (the only one that calls MPI: MPI_THREAD_FUNNELED) it tests the
 * posted receives, reads the head of every report that has arrived and,
 * for a failure, cancels what comes after it in the sequential order
 * (sgl_cancel_after on that master: its child 0 and the nodes below it
 * in this process).  A report that arrived is received the usual way
 * later (sgl_msg_recv_rest), in child order.  The check itself stays one
 * load; a poll costs one MPI_Test per remote child and level.
 *
 * The remote children are stopped the same way, by message: a failure
 * that a master learns of (while child 0 runs, or while it waits for the
 * reports in child order, testing the later ones too) sends every remote
 * child still running a stop message (TAG_STOP: the superstep's number
 * and the op from which it must stop, sgl_cancel_after's rule), and
 * again with a lower op when an earlier failure turns up.  A served node
 * keeps a receive of it posted (`served` below) and, while it runs a
 * command, is poked by the ticker like a child 0: its poll tests that
 * receive and cancels itself (sgl_cancel_from); a message for an earlier
 * superstep (sent as that one ended) is dropped.  After a failure no
 * superstep of that master follows, so the messages are few.  Only the
 * main thread polls, so in a process that polls, a thread-level
 * superstep started on it joins its threads polling (sgl_local.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "sgl_internal.h"
#include "sgl_mpi_msg.h"

#ifdef SGL_USE_MPI

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define POLL_NS 5000000L /* 5 ms */

typedef struct watched {
    sgl_node *n;
    struct sgl_mpi_state *st;
    int upto; /* children 1 .. upto - 1 have posted receives */
} watched;
static watched watch[SGL_MAX_LEVELS + 1];
static int nwatch;

/* The node this process serves (sgl_mpi_serve): the commands it has
 * received, its posted receive of a stop message, and whether it is
 * running a command. */
static struct {
    sgl_node *c;
    int64_t nsteps;
    MPI_Request req;
    int64_t msg[2];
    bool running;
} served;

static _Atomic(sgl_node *) poll_target; /* the outermost watched master's child 0 */

/* The ticker thread: started by the first superstep that runs a child 0
 * or by a served node, stopped and joined before MPI_Finalize (so that no
 * thread of ours runs while MPI tears down).  It sleeps on a condition
 * variable so that the stop wakes it at once. */
static struct {
    bool started, stopping;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} tick = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void poke(sgl_node *c)
{
    atomic_fetch_or_explicit(&c->head.cancelled, SGL_CANCEL_POLL, memory_order_relaxed);
    for (int k = 0; k < c->nlocal; k++) poke(&c->kids[k]);
}

/* Pokes the target every POLL_NS, from the first superstep that runs a
 * child 0 on; an idle tick costs a few microseconds of one thread. */
static void *ticker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&tick.mu);
    while (!tick.stopping) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += POLL_NS;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        int rc = 0;
        while (!tick.stopping && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&tick.cv, &tick.mu, &ts);
        if (tick.stopping) break;
        sgl_node *t = atomic_load_explicit(&poll_target, memory_order_acquire);
        if (t) poke(t);
    }
    pthread_mutex_unlock(&tick.mu);
    return NULL;
}

static void ticker_arm(sgl_node *target)
{
    if (!tick.started) {
        tick.started = true;
        /* no asynchronous signal is delivered to the ticker: a handler
         * (MPI's, the program's host's) runs on a thread of theirs */
        sigset_t all, old;
        pthread_condattr_t ca;
        sigfillset(&all);
        if (pthread_condattr_init(&ca) != 0 ||
            pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
            pthread_cond_init(&tick.cv, &ca) != 0 ||
            pthread_sigmask(SIG_SETMASK, &all, &old) != 0)
            sgl_internal_error("cannot start the cancellation ticker thread");
        pthread_condattr_destroy(&ca);
        int rc = pthread_create(&tick.th, NULL, ticker, NULL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc != 0) sgl_internal_error("cannot start the cancellation ticker thread");
    }
    atomic_store_explicit(&poll_target, target, memory_order_release);
}

void sgl_mpi_ticker_stop(void)
{
    if (!tick.started) return;
    atomic_store_explicit(&poll_target, NULL, memory_order_release);
    pthread_mutex_lock(&tick.mu);
    tick.stopping = true;
    pthread_cond_signal(&tick.cv);
    pthread_mutex_unlock(&tick.mu);
    if (pthread_join(tick.th, NULL) != 0) sgl_internal_error("cannot join the cancellation ticker thread");
    pthread_cond_destroy(&tick.cv);
    tick.started = tick.stopping = false;
}

/* The failure in a report's head (mpi_pack_result's layout: length,
 * failed op, compute time, message length): its op, or -1 if the report
 * says no failure, or only a cancellation (no message). */
static int report_failure(const char *p)
{
    int64_t failed_op, mlen;
    memcpy(&failed_op, p + sizeof(int64_t), sizeof failed_op); /* after the length */
    memcpy(&mlen, p + 2 * sizeof(int64_t) + sizeof(double), sizeof mlen); /* after compute */
    return failed_op >= 0 && mlen > 0 ? (int)failed_op : -1;
}

void sgl_mpi_send_stops(sgl_node *n, struct sgl_mpi_state *st, int op, int k, int upto)
{
    for (int i = 1; i < upto; i++) {
        if (i == k || st->arrived[i]) continue;
        int limit = i > k ? op : op + 1;
        if (limit >= st->stop_sent[i]) continue;
        if (st->stop_sent[i] != INT_MAX) MPI_CHECK(MPI_Wait(&st->stop_req[i], MPI_STATUS_IGNORE));
        st->stop_sent[i] = limit;
        st->stop_msg[i][0] = st->nsteps;
        st->stop_msg[i][1] = limit;
        MPI_CHECK(MPI_Isend(st->stop_msg[i], (int)sizeof st->stop_msg[i], MPI_BYTE, i, TAG_STOP,
                            n->comm_down, &st->stop_req[i]));
    }
}

/* Child k's report has arrived: mark it, and stop what its failure stops. */
static void arrived(sgl_node *n, struct sgl_mpi_state *st, int k, int upto)
{
    st->arrived[k] = 1;
    int op = report_failure(st->kid[k].in);
    if (op < 0) return;
    sgl_cancel_after(n, op, k);
    sgl_mpi_send_stops(n, st, op, k, upto);
}

/* Test watched entry w's receives; cancel after the failures found. */
static void poll_entry(watched *w)
{
    struct sgl_mpi_state *st = w->st;
    for (int i = 1; i < w->upto; i++) {
        if (st->arrived[i]) continue;
        int done = 0;
        MPI_CHECK(MPI_Test(&st->report[i], &done, MPI_STATUS_IGNORE));
        if (done) arrived(w->n, st, i, w->upto);
    }
}

/* The served node's stop messages: post the receive of the next one. */
static void served_post(void)
{
    MPI_CHECK(MPI_Irecv(served.msg, (int)sizeof served.msg, MPI_BYTE, 0, TAG_STOP,
                        served.c->comm_up, &served.req));
}

/* The stop messages that have arrived for the served node's command. */
static void poll_served(void)
{
    for (;;) {
        int done = 0;
        MPI_CHECK(MPI_Test(&served.req, &done, MPI_STATUS_IGNORE));
        if (!done) return;
        int64_t step = served.msg[0], limit = served.msg[1];
        served_post();
        if (step == served.nsteps && limit >= 0 && limit < INT_MAX)
            sgl_cancel_from(served.c, (int)limit);
    }
}

bool sgl_mpi_polling(void) { return sgl_mpi_main_thread && (nwatch > 0 || served.c); }

void sgl_mpi_poll(void)
{
    if (!sgl_mpi_main_thread) return;
    if (served.running) poll_served();
    for (int k = 0; k < nwatch; k++) poll_entry(&watch[k]);
}

bool sgl_mpi_wait_report(sgl_node *n, struct sgl_mpi_state *st, int i, int upto)
{
    bool polling = nwatch > 0 || served.running;
    while (!st->arrived[i]) {
        int idx = MPI_UNDEFINED, done = 1;
        if (polling)
            MPI_CHECK(MPI_Testany(upto - i, &st->report[i], &idx, &done, MPI_STATUS_IGNORE));
        else if (upto - i == 1) { /* the last: MPI_Wait is a little cheaper */
            MPI_CHECK(MPI_Wait(&st->report[i], MPI_STATUS_IGNORE));
            idx = 0;
        } else
            MPI_CHECK(MPI_Waitany(upto - i, &st->report[i], &idx, MPI_STATUS_IGNORE));
        if (done && idx != MPI_UNDEFINED) arrived(n, st, i + idx, upto);
        if (polling && !st->arrived[i]) {
            sgl_mpi_poll();
            if (sgl_cancelled(n)) return false;
        }
    }
    return true;
}

void sgl_mpi_drop_reports(struct sgl_mpi_state *st, int i0, int upto)
{
    for (int i = i0; i < upto; i++) {
        if (st->arrived[i]) continue;
        MPI_CHECK(MPI_Cancel(&st->report[i]));
        MPI_CHECK(MPI_Request_free(&st->report[i]));
        st->arrived[i] = 1;
    }
}

void sgl_mpi_watch_begin(sgl_node *n, struct sgl_mpi_state *st, int nk)
{
    if (nwatch > SGL_MAX_LEVELS) sgl_internal_error("MPI masters nested too deep");
    watch[nwatch++] = (watched){n, st, nk};
    if (nwatch == 1 && !served.running) ticker_arm(n->kids); /* else the served node is poked */
}

void sgl_mpi_watch_end(void)
{
    if (--nwatch == 0 && !served.running)
        atomic_store_explicit(&poll_target, NULL, memory_order_relaxed);
}

void sgl_mpi_served_start(sgl_node *c)
{
    served.c = c;
    served_post();
    ticker_arm(c); /* poked from now on: its commands poll for stop messages */
}

void sgl_mpi_served_step(bool running)
{
    if (running) served.nsteps++;
    served.running = running;
}

void sgl_mpi_served_end(void)
{
    atomic_store_explicit(&poll_target, NULL, memory_order_release); /* no command runs now */
    MPI_CHECK(MPI_Cancel(&served.req));
    MPI_CHECK(MPI_Wait(&served.req, MPI_STATUS_IGNORE));
}

#endif /* SGL_USE_MPI */
