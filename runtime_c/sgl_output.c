/*
 * sgl_output.c: ordered output and run-time errors.
 *
 * Output.  print appends to the node's buffer.  After a superstep the
 * master appends its children's output, op by op and child by child, to
 * its own (sgl_merge_results); the root writes its buffer to stdout.  So
 * the program prints what its sequential depth-first execution prints
 * (brief §1, §8).
 *
 * Errors.  sgl_fail() formats the message and longjmps to the boundary of
 * the node's current action; the master re-raises the first failure in
 * sequential order, and the root prints it and stops every process
 * (brief §9).  Errors of the runtime itself (out of memory in the tree, a
 * failed MPI call) stop the program at once (sgl_internal_error).
 */
#define _POSIX_C_SOURCE 200809L
#include "sgl_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Errors                                                               */

_Noreturn void sgl_internal_error(const char *what)
{
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

void sgl_flush_root(sgl_node *n)
{
    if (n->is_root && n->out.len > 0) {
        fwrite(n->out.data, 1, n->out.len, stdout);
        n->out.len = 0;
    }
}

void sgl_print_end(sgl_node *n)
{
    sgl_buf_put(&n->out, "\n", 1);
    if (n->is_root && n->out.len >= 1 << 16) sgl_flush_root(n);
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
                }
                sgl_flush_root(n);
                sgl_raise(n, msg);
            }
        }
    }
    if (n->is_root) sgl_flush_root(n);
}
