/*
 * sgl_output.c: ordered output and run-time errors.
 *
 * Output.  print appends to the node's buffer.  After a superstep the
 * master appends its children's output, op by op and child by child, to
 * its own (sgl_merge_results); the root writes its buffer to stdout.  So
 * the program prints what its sequential depth-first execution prints
 * (brief §1, §8).  A node other than the executable's root keeps at most
 * sgl_spill_threshold() bytes in memory: past it, the whole lines of its
 * buffer move to its spill file (sgl_internal.h), at the end of a print
 * and while the master appends; the master reads a child's spilled
 * output back in SGL_OUT_CHUNK pieces.  The file holds whole lines only,
 * so the partial line a failing node drops (sgl_raise) is always in the
 * buffer.
 *
 * Files.  The file builtins note their path on the node that runs them
 * (sgl_files_note); when a superstep ends without a failure, the master
 * checks its children's sets against each other (brief §8: two children
 * whose subtrees use one path, one of them writing it, is a run-time
 * error at the pardo) and adds them to its own set, which travels up in
 * its own report (sgl_child_result.files).
 *
 * Errors.  sgl_fail() formats the message and longjmps to the boundary of
 * the node's current action; the master re-raises the first failure in
 * sequential order, and the root prints it and stops every process
 * (brief §9).  Errors of the runtime itself (out of memory in the tree, a
 * failed MPI call) stop the program at once (sgl_internal_error); in a
 * library they fail the call instead (sgl_lib_internal_error).
 */
#define _POSIX_C_SOURCE 200809L
#include "sgl_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Errors                                                               */

/* The one line of a run-time error: what, located at line:col (line 0:
 * the program file only) on the node of the given path. */
static void error_line(char *msg, size_t size, int line, int col, const char *what,
                       const char *path)
{
    const char *file = sgl_prog ? sgl_prog->file : "sgl";
    if (line > 0)
        snprintf(msg, size, "%s:%d:%d: runtime error: %s (node %s)", file, line, col, what, path);
    else
        snprintf(msg, size, "%s: runtime error: %s (node %s)", file, what, path);
}

/* Stop the program with msg, a whole error line (what in a library). */
static _Noreturn void stop(const char *what, const char *msg)
{
    sgl_lib_internal_error(what); /* a library never stops its host process */
    fflush(stdout);
    fprintf(stderr, "%s\n", msg);
    sgl_mpi_abort();
    exit(1);
}

_Noreturn void sgl_internal_error(const char *what)
{
    char msg[1400];
    snprintf(msg, sizeof msg, "%s: runtime error: %s", sgl_prog ? sgl_prog->file : "sgl", what);
    stop(what, msg);
}

char *sgl_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (!p) sgl_internal_error("out of memory");
    memcpy(p, s, n);
    return p;
}

_Noreturn void sgl_raise(sgl_node *n, char *msg)
{
    /* Whole lines only (brief §9): a print evaluates its arguments before
     * it writes (sglc.builtins), but it can still fail while it writes
     * (out of memory); drop the partial line it leaves.  Everything before
     * it in the buffer ends with a newline. */
    while (n->out.len > 0 && n->out.data[n->out.len - 1] != '\n') n->out.len--;
    n->out.line = n->out.col = 0; /* a failed print's position goes with its line */
    n->errmsg = msg;
    if (!n->boundary) sgl_internal_error(msg);
    longjmp(*n->boundary, 1);
}

void sgl_fail(int line, int col, const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    sgl_node *n = sgl_cur;
    char msg[1400];
    error_line(msg, sizeof msg, line, col, what, n ? n->path : "?");
    if (!n) stop(what, msg); /* before the tree exists (or after it is gone) */
    sgl_raise(n, sgl_strdup(msg));
}

/* ------------------------------------------------------------------ */
/* Output                                                               */

/* n's output buffer, for the print at line:col (a failure to grow it is
 * that print's error; sgl_print_end forgets the position). */
sgl_buf *sgl_out(sgl_node *n, int line, int col)
{
    n->out.line = line;
    n->out.col = col;
    return &n->out;
}

/* ---- spill files ---- */

#define SPILL_DEFAULT ((size_t)1 << 20)

/* 0: not read yet, else the threshold + 1 (read by any thread; a race
 * only reads the environment twice) */
static _Atomic size_t spill_threshold_1;

size_t sgl_spill_threshold(void)
{
    size_t t = atomic_load_explicit(&spill_threshold_1, memory_order_relaxed);
    if (t) return t - 1;
    size_t v = SPILL_DEFAULT;
    const char *e = getenv("SGL_OUTPUT_SPILL");
    if (e && *e) {
        char *end = NULL;
        errno = 0;
        unsigned long long x = strtoull(e, &end, 10);
        size_t mult = 1;
        if (end && (*end == 'k' || *end == 'K')) mult = (size_t)1 << 10;
        else if (end && *end == 'M') mult = (size_t)1 << 20;
        else if (end && *end == 'G') mult = (size_t)1 << 30;
        if (end && mult > 1) end++;
        if (errno || end == e || *e == '-' || !end || *end || x > (SIZE_MAX - 1) / mult) {
            char msg[300];
            snprintf(msg, sizeof msg,
                     "SGL_OUTPUT_SPILL='%.100s' is not a number of bytes (a suffix k, M or G "
                     "multiplies it)",
                     e);
            sgl_internal_error(msg);
        }
        v = (size_t)x * mult;
    }
    atomic_store_explicit(&spill_threshold_1, v + 1, memory_order_relaxed);
    return v;
}

static const char *spill_dir(void)
{
    const char *d = getenv("TMPDIR");
    return d && *d ? d : "/tmp";
}

/* Make f's anonymous temporary file: 0 or an errno. */
static int spill_open(sgl_spill *f)
{
    const char *dir = spill_dir();
    size_t n = strlen(dir) + sizeof "/sgl-output-XXXXXX";
    char *path = malloc(n);
    if (!path) return ENOMEM;
    snprintf(path, n, "%s/sgl-output-XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0) {
        int e = errno;
        free(path);
        return e;
    }
    if (unlink(path) != 0) {
        int e = errno;
        close(fd);
        free(path);
        return e;
    }
    free(path);
    *f = (sgl_spill){fd, true, 0, 0};
    return 0;
}

int sgl_spill_append(sgl_spill *f, const void *p, size_t n)
{
    if (n == 0) return 0;
    if (!f->open) {
        int e = spill_open(f);
        if (e) return e;
    }
    if (f->len == 0 && f->size > 0) {
        /* a new use: give the disk space of the last one back */
        if (ftruncate(f->fd, 0) != 0) return errno;
        f->size = 0;
    }
    size_t done = 0;
    while (done < n) {
        size_t want = n - done < ((size_t)1 << 30) ? n - done : (size_t)1 << 30;
        ssize_t w = pwrite(f->fd, (const char *)p + done, want, (off_t)(f->len + done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? errno : EIO;
        done += (size_t)w;
    }
    f->len += n;
    if (f->len > f->size) f->size = f->len;
    return 0;
}

int sgl_spill_read(int fd, size_t off, void *p, size_t n)
{
    size_t done = 0;
    while (done < n) {
        size_t want = n - done < ((size_t)1 << 30) ? n - done : (size_t)1 << 30;
        ssize_t r = pread(fd, (char *)p + done, want, (off_t)(off + done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return r < 0 ? errno : EIO; /* 0: the file is shorter than it must be */
        done += (size_t)r;
    }
    return 0;
}

void sgl_spill_rewind(sgl_spill *f) { f->len = 0; }

void sgl_spill_close(sgl_spill *f)
{
    if (f->open) close(f->fd);
    *f = (sgl_spill){0};
}

void sgl_out_reset(sgl_node *n)
{
    n->out.len = 0;
    n->out_noline = 0;
    sgl_spill_rewind(&n->spill);
}

void sgl_out_free(sgl_node *n)
{
    sgl_spill_close(&n->spill);
    sgl_buf_free(&n->out);
    n->out_noline = 0;
}

void sgl_out_result(sgl_node *c, sgl_child_result *r)
{
    SGL_SET(r->out, c->out.data);
    SGL_SET(r->out_fd, c->spill.open ? c->spill.fd : -1);
    SGL_SET(r->out_spilled, c->spill.len);
    SGL_SET(r->out_err, 0);
}

/* If n's buffer has passed the threshold (n not the executable's root),
 * move its whole lines to the file.  0, or the errno of a failure (the
 * buffer is then unchanged). */
static int out_spill(sgl_node *n)
{
    size_t t = sgl_spill_threshold();
    if (n->is_root || n->out.len < t || n->out.len == 0) return 0;
    /* the last newline, looked for only in what came after the last scan,
     * so that one long line arriving piece by piece is scanned once */
    size_t k = n->out.len, seen = n->out_noline < n->out.len ? n->out_noline : 0;
    while (k > seen && n->out.data[k - 1] != '\n') k--;
    if (k == seen) {
        n->out_noline = n->out.len; /* one line, not ended yet */
        return 0;
    }
    int e = sgl_spill_append(&n->spill, n->out.data, k);
    if (e) return e;
    memmove(n->out.data, n->out.data + k, n->out.len - k);
    n->out.len -= k;
    n->out_noline = n->out.len;
    if (n->out.cap > 2 * t + ((size_t)1 << 16) && n->out.len < t) {
        /* one long line grew the buffer: give the memory back */
        char *p = malloc(t + ((size_t)1 << 16));
        if (p) {
            memcpy(p, n->out.data, n->out.len);
            free(n->out.data);
            n->out.data = p;
            n->out.cap = t + ((size_t)1 << 16);
        }
    }
    return 0;
}

/* The run-time error (owned) of output that could not be kept in, or read
 * back from, a temporary file: errno err, on node n, at line:col. */
static char *spill_error(sgl_node *n, int line, int col, bool reading, int err)
{
    char what[700], q[400];
    sgl_quote(q, sizeof q, spill_dir(), strlen(spill_dir()));
    if (reading)
        snprintf(what, sizeof what, "cannot read the output back from its temporary file in %s: %s", q,
                 strerror(err));
    else
        snprintf(what, sizeof what, "cannot keep the output in a temporary file in %s: %s", q,
                 strerror(err));
    char msg[1400];
    error_line(msg, sizeof msg, line, col, what, n->path);
    return sgl_strdup(msg);
}

int sgl_out_drain(sgl_node *n, void (*fn)(const char *p, size_t len, void *user), void *user)
{
    int err = 0;
    if (n->spill.len > 0) {
        char *buf = malloc(SGL_OUT_CHUNK);
        if (!buf) err = ENOMEM;
        size_t off = 0, have = 0;
        while (!err && off < n->spill.len) {
            size_t take = n->spill.len - off < SGL_OUT_CHUNK - have ? n->spill.len - off
                                                                    : SGL_OUT_CHUNK - have;
            err = sgl_spill_read(n->spill.fd, off, buf + have, take);
            if (err) break;
            off += take;
            have += take;
            size_t cut = have;
            while (cut > 0 && buf[cut - 1] != '\n') cut--;
            if (cut == 0) cut = have; /* a line longer than a piece */
            fn(buf, cut, user);
            memmove(buf, buf + cut, have - cut);
            have -= cut;
        }
        if (!err && have) fn(buf, have, user);
        free(buf);
    }
    if (!err && n->out.len) fn(n->out.data, n->out.len, user);
    sgl_out_reset(n);
    return err;
}
/* ---- end of spill files ---- */

/* Set once a write to standard output has failed: the failure is reported
 * (once), and nothing more is written. */
static bool stdout_failed;

/* A write to a pipe whose reader is gone must come back as EPIPE, a
 * run-time error like any other failed write, not kill the process with
 * SIGPIPE (which mpirun would report as a crash).  An executable calls
 * this at start-up (sgl_run), before anything can be written to stdout or
 * stderr: a program that fails before printing, with its stderr a broken
 * pipe, then exits with status 1 too (its message is lost), never 141. */
void sgl_ignore_sigpipe(void)
{
    static bool done;
    if (done) return;
    done = true;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    (void)sigaction(SIGPIPE, &sa, NULL);
}

/* Write the root's buffer to stdout and flush stdout.  NULL, or the
 * run-time error of a failed write (owned), located at line:col (0: no
 * position, the program file only). */
static char *root_write(sgl_node *n, int line, int col)
{
    if (!n->is_root || n->out.len == 0) return NULL;
    size_t len = n->out.len;
    n->out.len = 0;
    if (stdout_failed) return NULL;
    sgl_ignore_sigpipe();
    errno = 0;
    size_t w = fwrite(n->out.data, 1, len, stdout);
    int err = w < len ? errno : 0;
    if (!err && fflush(stdout) != 0) err = errno ? errno : EIO;
    if (w < len && !err) err = EIO;
    if (!err) return NULL;
    stdout_failed = true;
    clearerr(stdout);
    char msg[1400];
    const char *file = sgl_prog ? sgl_prog->file : "sgl";
    const char *why = err == EPIPE ? "the reader of the pipe has gone" : strerror(err);
    if (line > 0)
        snprintf(msg, sizeof msg, "%s:%d:%d: runtime error: cannot write to standard output: %s (node %s)",
                 file, line, col, why, n->path);
    else
        snprintf(msg, sizeof msg,
                 "%s: runtime error: cannot write the program's output to standard output: %s (node %s)",
                 file, why, n->path);
    return sgl_strdup(msg);
}

void sgl_flush_root(sgl_node *n)
{
    char *msg = root_write(n, 0, 0);
    if (!msg) return;
    if (n->errmsg) {
        /* an error is already being reported: it is the one that counts */
        free(msg);
        return;
    }
    sgl_raise(n, msg);
}

void sgl_print_end(sgl_node *n, int line, int col)
{
    sgl_buf_put(&n->out, "\n", 1);
    n->out.line = n->out.col = 0;
    if (n->is_root) {
        if (n->out.len >= 1 << 16) {
            char *msg = root_write(n, line, col);
            if (msg) sgl_raise(n, msg);
        }
    } else if (n->out.len >= sgl_spill_threshold()) {
        int e = out_spill(n);
        if (e) {
            /* the error is this print's: its line is not kept (sgl_raise
             * drops it once its newline is gone) */
            n->out.len--;
            sgl_raise(n, spill_error(n, line, col, false, e));
        }
    }
}

/* ------------------------------------------------------------------ */
/* Files of a superstep (brief §8)                                      */

static int files_find(const sgl_fileset *f, const char *path)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->path[i], path) == 0) return i;
    return -1;
}

void sgl_files_add(sgl_fileset *f, const char *path, int how)
{
    int i = files_find(f, path);
    if (i >= 0) {
        f->wrote[i] |= (unsigned char)how;
        return;
    }
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 4;
        char **p = realloc(f->path, (size_t)cap * sizeof *p);
        if (!p) sgl_internal_error("out of memory (file set)");
        f->path = p;
        unsigned char *w = realloc(f->wrote, (size_t)cap);
        if (!w) sgl_internal_error("out of memory (file set)");
        f->wrote = w;
        f->cap = cap;
    }
    f->path[f->n] = sgl_strdup(path);
    f->wrote[f->n] = (unsigned char)how;
    f->n++;
}

void sgl_files_note(sgl_node *n, const char *path, int how)
{
    /* the root has no siblings: its own files are never checked */
    if (n && n->depth > 0) sgl_files_add(&n->files, path, how);
}

/* The file builtin running on this thread, from its sgl_files_note_cur to
 * its sgl_files_done_cur: its node and the file's index in its set. */
static _Thread_local sgl_node *busy_node;
static _Thread_local int busy_idx;

/* Called by the file builtins (sgl_files.c) on the node that runs them,
 * before they use the file, and when they return. */
void sgl_files_note_cur(const char *path, bool wrote);
void sgl_files_note_cur(const char *path, bool wrote)
{
    /* compared as resolved (sgl_file_identity): x.txt and ./x.txt are one file */
    busy_node = NULL;
    if (!sgl_cur || sgl_cur->depth == 0) return;
    char *id = sgl_file_identity(path);
    sgl_files_note(sgl_cur, id, wrote ? SGL_FILE_WROTE : 0);
    busy_node = sgl_cur;
    busy_idx = files_find(&sgl_cur->files, id);
    free(id);
}

void sgl_files_done_cur(void);
void sgl_files_done_cur(void)
{
    busy_node = NULL;
}

/* A file builtin waiting for data (sgl_files.c's wait_readable): whether
 * this thread's node was stopped, a remote failure polled for first. */
bool sgl_files_stopped(void);
bool sgl_files_stopped(void)
{
    sgl_mpi_poll(); /* may stop this node (its own thread) */
    return sgl_cur && sgl_cancelled(sgl_cur);
}

void sgl_files_failed(sgl_node *c)
{
    if (busy_node == c && busy_idx >= 0 && busy_idx < c->files.n)
        c->files.wrote[busy_idx] |= SGL_FILE_FAILED;
    busy_node = NULL;
}

void sgl_files_clear(sgl_fileset *f)
{
    for (int i = 0; i < f->n; i++) free(f->path[i]);
    f->n = 0;
}

void sgl_files_free(sgl_fileset *f)
{
    sgl_files_clear(f);
    free(f->path);
    free(f->wrote);
    *f = (sgl_fileset){0};
}

/* The first pair of children (i, j), i < j, in lexicographic order, whose
 * subtrees used one path that one of them wrote: the run-time error at the
 * superstep's pardo (its first op if it has none), on the master, as a
 * whole message (owned); NULL if there is none. */
static char *files_conflict(sgl_node *n, const sgl_site *s, const sgl_child_result *res, int nkids)
{
    for (int i = 0; i < nkids; i++) {
        const sgl_fileset *a = &res[i].files;
        for (int j = i + 1; j < nkids && a->n > 0; j++) {
            const sgl_fileset *b = &res[j].files;
            for (int k = 0; k < a->n; k++) {
                int m = files_find(b, a->path[k]);
                bool aw = a->wrote[k] & SGL_FILE_WROTE, bw = m >= 0 && (b->wrote[m] & SGL_FILE_WROTE);
                if (m < 0 || !(aw || bw)) continue;
                const sgl_op *op = &s->ops[0];
                for (int q = 0; q < s->nops; q++)
                    if (s->ops[q].kind == SGL_OP_PARDO) {
                        op = &s->ops[q];
                        break;
                    }
                char what[2048], q[1100], msg[2600];
                sgl_quote(q, sizeof q, a->path[k], strlen(a->path[k]));
                snprintf(what, sizeof what,
                         "children %s.%d and %s.%d of this pardo share the file %s, which %s "
                         "(children run at once: they must not share a file that one of them writes)",
                         n->path, i, n->path, j, q,
                         aw && bw ? "both write"
                         : aw     ? "the first writes"
                                  : "the second writes");
                error_line(msg, sizeof msg, op->line, op->col, what, n->path);
                return sgl_strdup(msg);
            }
        }
    }
    return NULL;
}

/* Whether child i failed in a file builtin on a file that an earlier
 * sibling wrote.  Run in sequence, child i would have seen that write;
 * run at once, it may have seen the file before, during or after it, so
 * its failure may be the race's (a file not there yet, half written), not
 * the program's: the sharing error is reported instead (docs/execution.md). */
static bool follows_a_write(const sgl_child_result *res, int i)
{
    const sgl_fileset *b = &res[i].files;
    for (int p = 0; p < i; p++) {
        const sgl_fileset *a = &res[p].files;
        for (int k = 0; k < a->n; k++) {
            if (!(a->wrote[k] & SGL_FILE_WROTE)) continue;
            int m = files_find(b, a->path[k]);
            if (m >= 0 && (b->wrote[m] & SGL_FILE_FAILED)) return true;
        }
    }
    return false;
}

/* Child i failed (the master fails with its error, `own`, or with the
 * sharing error of its children that replaced it): the files of the
 * children run so far become the master's, child i's with their failure
 * marks while the error is still the file builtin's, so that a master
 * further up can tell that the failure may be the race's
 * (follows_a_write) when an earlier sibling of its own wrote the file,
 * however deep below the failing grandchild is.  A sharing error found
 * here is this pardo's, the first in the sequential order: it stays. */
static void files_pass_up(sgl_node *n, const sgl_child_result *res, int i, bool own)
{
    for (int p = 0; p <= i; p++) {
        const sgl_fileset *f = &res[p].files;
        int keep = p == i && own ? SGL_FILE_WROTE | SGL_FILE_FAILED : SGL_FILE_WROTE;
        for (int k = 0; k < f->n; k++) sgl_files_note(n, f->path[k], f->wrote[k] & keep);
    }
}

/* After the check: the children's files become the master's (a master
 * below the root is itself a child of a superstep). */
static void files_merge(sgl_node *n, sgl_child_result *res, int nkids)
{
    for (int i = 0; i < nkids; i++) {
        sgl_fileset *f = &res[i].files;
        for (int k = 0; k < f->n; k++) sgl_files_note(n, f->path[k], f->wrote[k] & SGL_FILE_WROTE);
        sgl_files_free(f);
    }
}

/* A merge's state: the first failure of the output itself (owned; then
 * nothing more is appended), the op whose output is being appended (where
 * such a failure is located), a buffer for reading spilled output. */
typedef struct merge_state {
    char *err;
    int line, col;
    char *chunk;
} merge_state;

static void merge_put(sgl_node *n, const char *p, size_t len, merge_state *m)
{
    if (m->err || len == 0) return;
    sgl_buf_put(&n->out, p, len);
    if (n->is_root) {
        if (n->out.len >= 1 << 16) m->err = root_write(n, 0, 0);
    } else if (n->out.len >= sgl_spill_threshold()) {
        int e = out_spill(n);
        if (e) m->err = spill_error(n, m->line, m->col, false, e);
    }
}

/* Append bytes a .. b of child result r's output to n's. */
static void merge_range(sgl_node *n, const sgl_child_result *r, size_t a, size_t b, merge_state *m)
{
    if (a >= b || m->err) return;
    if (r->out_err) {
        m->err = spill_error(n, m->line, m->col, false, r->out_err);
        return;
    }
    while (a < b && a < r->out_spilled) {
        size_t end = b < r->out_spilled ? b : r->out_spilled;
        size_t take = end - a < SGL_OUT_CHUNK ? end - a : SGL_OUT_CHUNK;
        if (!m->chunk) {
            m->chunk = malloc(SGL_OUT_CHUNK);
            if (!m->chunk) sgl_internal_error("out of memory (output)");
        }
        int e = sgl_spill_read(r->out_fd, a, m->chunk, take);
        if (e) {
            m->err = spill_error(n, m->line, m->col, true, e);
            return;
        }
        merge_put(n, m->chunk, take, m);
        if (m->err) return;
        a += take;
    }
    if (a < b) merge_put(n, r->out + (a - r->out_spilled), b - a, m);
}

static void results_release(sgl_child_result *res, int nkids)
{
    for (int k = 0; k < nkids; k++) {
        free(res[k].msg);
        res[k].msg = NULL;
        sgl_files_free(&res[k].files);
    }
}

void sgl_merge_results(sgl_node *n, const sgl_site *s, sgl_child_result *res, int nkids)
{
    merge_state m = {NULL, 0, 0, NULL};
    for (int j = 0; j < s->nops; j++) {
        m.line = s->ops[j].line;
        m.col = s->ops[j].col;
        for (int i = 0; i < nkids; i++) {
            sgl_child_result *r = &res[i];
            size_t start = j ? r->seg_end[j - 1] : 0;
            merge_range(n, r, start, r->seg_end[j], &m);
            if (r->failed_op == j || m.err) {
                char *msg = r->failed_op == j ? r->msg : NULL;
                if (r->failed_op == j) r->msg = NULL;
                bool own = true; /* msg is child i's own error */
                if (msg && follows_a_write(res, i)) {
                    /* the first pair among the children run so far */
                    char *c = files_conflict(n, s, res, i + 1);
                    if (c) {
                        free(msg);
                        msg = c;
                        own = false;
                    }
                }
                if (msg) files_pass_up(n, res, i, own);
                results_release(res, nkids);
                free(m.chunk);
                /* the output printed before the failure comes first: if
                 * keeping or writing it fails, that failure is the first
                 * error */
                char *werr = m.err ? m.err : root_write(n, 0, 0);
                if (werr) {
                    free(msg);
                    msg = werr;
                }
                sgl_raise(n, msg);
            }
        }
    }
    free(m.chunk);
    if (n->is_root) sgl_flush_root(n);
    char *c = files_conflict(n, s, res, nkids);
    if (c) {
        results_release(res, nkids);
        sgl_raise(n, c);
    }
    files_merge(n, res, nkids);
}
