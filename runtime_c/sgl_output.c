/*
 * sgl_output.c: ordered output and run-time errors.
 *
 * Output.  print appends to the node's buffer.  After a superstep the
 * master appends its children's output, op by op and child by child, to
 * its own (sgl_merge_results); the root writes its buffer to stdout.  So
 * the program prints what its sequential depth-first execution prints
 * (brief §1, §8).
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

/* ------------------------------------------------------------------ */
/* Errors                                                               */

_Noreturn void sgl_internal_error(const char *what)
{
    sgl_lib_internal_error(what); /* a library never stops its host process */
    fflush(stdout);
    fprintf(stderr, "%s: runtime error: %s\n", sgl_prog ? sgl_prog->file : "sgl", what);
    sgl_mpi_abort();
    exit(1);
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
    const char *file = sgl_prog ? sgl_prog->file : "sgl";
    const char *path = n ? n->path : "?";
    if (line > 0)
        snprintf(msg, sizeof msg, "%s:%d:%d: runtime error: %s (node %s)", file, line, col, what, path);
    else
        snprintf(msg, sizeof msg, "%s: runtime error: %s (node %s)", file, what, path);
    if (!n) sgl_internal_error(msg);
    sgl_raise(n, sgl_strdup(msg));
}

/* ------------------------------------------------------------------ */
/* Output                                                               */

sgl_buf *sgl_out(sgl_node *n) { return &n->out; }

/* Set once a write to standard output has failed: the failure is reported
 * (once), and nothing more is written. */
static bool stdout_failed;

/* A write to a pipe whose reader is gone must come back as EPIPE, a
 * run-time error like any other failed write, not kill the process with
 * SIGPIPE (which mpirun would report as a crash). */
static void ignore_sigpipe(void)
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
    ignore_sigpipe();
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
    if (n->is_root && n->out.len >= 1 << 16) {
        char *msg = root_write(n, line, col);
        if (msg) sgl_raise(n, msg);
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

void sgl_files_add(sgl_fileset *f, const char *path, bool wrote)
{
    int i = files_find(f, path);
    if (i >= 0) {
        if (wrote) f->wrote[i] = 1;
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
    f->wrote[f->n] = wrote ? 1 : 0;
    f->n++;
}

void sgl_files_note(sgl_node *n, const char *path, bool wrote)
{
    /* the root has no siblings: its own files are never checked */
    if (n && n->depth > 0) sgl_files_add(&n->files, path, wrote);
}

/* Called by the file builtins (sgl_misc.c) on the node that runs them. */
void sgl_files_note_cur(const char *path, bool wrote);
void sgl_files_note_cur(const char *path, bool wrote) { sgl_files_note(sgl_cur, path, wrote); }

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
 * subtrees used one path that one of them wrote: a run-time error at the
 * superstep's pardo (its first op if it has none), on the master. */
static void files_check(sgl_node *n, const sgl_site *s, sgl_child_result *res, int nkids)
{
    for (int i = 0; i < nkids; i++) {
        const sgl_fileset *a = &res[i].files;
        for (int j = i + 1; j < nkids && a->n > 0; j++) {
            const sgl_fileset *b = &res[j].files;
            for (int k = 0; k < a->n; k++) {
                int m = files_find(b, a->path[k]);
                if (m < 0 || !(a->wrote[k] || b->wrote[m])) continue;
                const sgl_op *op = &s->ops[0];
                for (int q = 0; q < s->nops; q++)
                    if (s->ops[q].kind == SGL_OP_PARDO) {
                        op = &s->ops[q];
                        break;
                    }
                char what[2048];
                snprintf(what, sizeof what,
                         "children %s.%d and %s.%d of this pardo share the file '%.300s', which %s "
                         "(children run at once: they must not share a file that one of them writes)",
                         n->path, i, n->path, j, a->path[k],
                         a->wrote[k] && b->wrote[m] ? "both write"
                         : a->wrote[k]              ? "the first writes"
                                                    : "the second writes");
                for (int q = 0; q < nkids; q++) sgl_files_free(&res[q].files);
                sgl_fail(op->line, op->col, "%s", what);
            }
        }
    }
}

/* After the check: the children's files become the master's (a master
 * below the root is itself a child of a superstep). */
static void files_merge(sgl_node *n, sgl_child_result *res, int nkids)
{
    for (int i = 0; i < nkids; i++) {
        sgl_fileset *f = &res[i].files;
        for (int k = 0; k < f->n; k++) sgl_files_note(n, f->path[k], f->wrote[k]);
        sgl_files_free(f);
    }
}

void sgl_merge_results(sgl_node *n, const sgl_site *s, sgl_child_result *res, int nkids)
{
    for (int j = 0; j < s->nops; j++) {
        for (int i = 0; i < nkids; i++) {
            sgl_child_result *r = &res[i];
            size_t start = j ? r->seg_end[j - 1] : 0;
            if (r->seg_end[j] > start) sgl_buf_put(&n->out, r->out + start, r->seg_end[j] - start);
            if (r->failed_op == j) {
                char *msg = r->msg;
                r->msg = NULL;
                for (int k = 0; k < nkids; k++) {
                    free(res[k].msg);
                    res[k].msg = NULL;
                    sgl_files_free(&res[k].files);
                }
                /* the output printed before the failure comes first: if
                 * writing it fails, that failure is the first error */
                char *werr = root_write(n, 0, 0);
                if (werr) {
                    free(msg);
                    msg = werr;
                }
                sgl_raise(n, msg);
            }
        }
    }
    if (n->is_root) sgl_flush_root(n);
    files_check(n, s, res, nkids);
    files_merge(n, res, nkids);
}
