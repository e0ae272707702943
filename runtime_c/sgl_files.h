/*
 * sgl_files.h: what sgl_files.c (the file builtins) and sgl_npy.c (the .npy
 * format) share.  Internal to the runtime.
 */
#ifndef SGL_FILES_H
#define SGL_FILES_H

#include "sgl.h"

#include <string.h>

/* char q[]: path quoted for a message (sgl_quote) */
#define QPATH(q, path)                                                                                       \
    char q[1100];                                                                                            \
    sgl_quote(q, sizeof q, path, strlen(path))

/* Text's white space (brief §8): ASCII space, \t \n \v \f \r. */
static inline bool sgl_is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Reads up to n bytes at off (pread, or read at the current position when
 * off < 0) until n or the end of the file; the count read, -1 on an error. */
int64_t sgl_read_full(int fd, void *buf, size_t n, int64_t off);
/* "cannot read PATH: strerror(err)", after closing fd. */
_Noreturn void sgl_fail_read(int fd, const char *path, int err, int line, int col);

typedef struct {
    const char *descr;
    int size;
    char kind; /* 'i' signed, 'u' unsigned, 'f' float */
} npy_type;

typedef struct {
    const npy_type *type;
    int64_t n;   /* elements */
    int64_t off; /* where the data start */
} npy_info;

/* Reads and checks the header of the .npy file open as fd; want: 'i'
 * (read_ints), 'f' (read_floats) or 0 (file_len: any dtype either takes).
 * A run-time error naming the file for anything it does not take. */
npy_info sgl_npy_header(int fd, const char *path, char want, int line, int col);
/* Elements a .. b-1 of a checked file (0 <= a <= b <= info->n). */
sgl_vec sgl_npy_read(int fd, const char *path, const npy_info *info, int64_t a, int64_t b, bool floats,
                     int line, int col);
/* Appends the header of a version 1.0 file of v (<i8 or <f8) to out, and
 * on a big-endian machine the data too (else the caller writes v's bytes). */
void sgl_npy_bytes(sgl_buf *out, const sgl_vec *v, bool floats);

#endif
