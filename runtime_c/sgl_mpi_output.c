/*
 * sgl_mpi_output.c: a remote child's output on its way to its master, for
 * the MPI transport (sgl_mpi.c).  Compiled to nothing without SGL_USE_MPI.
 *
 * Up to SGL_MPI_OUT_INLINE bytes (sgl_internal.h) of a child's output
 * travel in its report (when none of it was spilled to the child's file).  More follows the report
 * and its vectors as messages of at most SGL_OUT_CHUNK bytes, read from
 * the child's spill file and then its buffer (sgl_mpi_send_output).  The
 * master receives them, once it has every report's vectors (the order in
 * which the children send them), into memory up to the spill threshold,
 * or else into a temporary file of its own for that child
 * (sgl_mpi_recv_output); the merge (sgl_output.c) reads either.  So no
 * message and no buffer holds more than a bounded part of the output, and
 * its size has no limit.
 */
#define _POSIX_C_SOURCE 200809L
#include "sgl_internal.h"

#ifdef SGL_USE_MPI

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static char *out_chunk(char **chunk)
{
    if (!*chunk) {
        *chunk = malloc(SGL_OUT_CHUNK);
        if (!*chunk) sgl_internal_error("out of memory (output messages)");
    }
    return *chunk;
}

void sgl_mpi_send_output(MPI_Comm comm, int dest, int tag, const sgl_site *s,
                         const sgl_child_result *r, char **chunk)
{
    if (sgl_mpi_out_inline(s, r)) return;
    size_t total = sgl_mpi_out_total(s, r);
    for (size_t off = 0; off < total;) {
        size_t take = total - off < SGL_OUT_CHUNK ? total - off : SGL_OUT_CHUNK;
        const char *p;
        if (off < r->out_spilled) {
            if (take > r->out_spilled - off) take = r->out_spilled - off;
            int e = sgl_spill_read(r->out_fd, off, out_chunk(chunk), take);
            if (e) {
                char msg[300];
                snprintf(msg, sizeof msg, "cannot read the output back from its temporary file: %s",
                         strerror(e));
                sgl_internal_error(msg);
            }
            p = *chunk;
        } else {
            p = r->out + (off - r->out_spilled);
        }
        MPI_CHECK(MPI_Send(p, (int)take, MPI_BYTE, dest, tag, comm));
        off += take;
    }
}

void sgl_mpi_recv_output(MPI_Comm comm, int src, int tag, const sgl_site *s,
                         sgl_child_result *r, sgl_mpi_outbuf *b, char **chunk)
{
    size_t total = sgl_mpi_out_total(s, r);
    bool to_file = total > sgl_spill_threshold();
    if (!to_file && b->text_cap < total) {
        char *t = realloc(b->text, total);
        if (!t) sgl_internal_error("out of memory (output messages)");
        b->text = t;
        b->text_cap = total;
    }
    sgl_spill_rewind(&b->spool);
    r->out_err = 0;
    for (size_t got = 0; got < total;) {
        size_t want = total - got < SGL_OUT_CHUNK ? total - got : SGL_OUT_CHUNK;
        char *dst = to_file ? out_chunk(chunk) : b->text + got;
        MPI_Status status;
        MPI_CHECK(MPI_Recv(dst, (int)want, MPI_BYTE, src, tag, comm, &status));
        int count = 0;
        MPI_CHECK(MPI_Get_count(&status, MPI_BYTE, &count));
        if (count <= 0) sgl_internal_error("bad output message");
        /* a spool that cannot be written: the merge reports r->out_err
         * where this output comes; the rest is received and dropped */
        if (to_file && !r->out_err) r->out_err = sgl_spill_append(&b->spool, dst, (size_t)count);
        got += (size_t)count;
    }
    if (to_file) {
        r->out = NULL;
        r->out_fd = b->spool.open ? b->spool.fd : -1;
        r->out_spilled = total;
    } else {
        r->out = b->text;
        r->out_fd = -1;
        r->out_spilled = 0;
    }
}

#endif /* SGL_USE_MPI */
