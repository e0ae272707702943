/*
 * sgl_npy.c: NumPy's .npy format for the file builtins (brief §8,
 * sgl_files.c): the header read and checked (versions 1.0, 2.0, 3.0; a
 * one-dimensional array in C order of a dtype of NPY_TYPES), a slice of the
 * data read with one pread and converted in place, and the bytes of a
 * version 1.0 file as numpy.save writes them.
 */
#define _GNU_SOURCE /* pread */

#include "sgl.h"
#include "sgl_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const npy_type NPY_TYPES[] = {
    {"<i8", 8, 'i'}, {"<i4", 4, 'i'}, {"<i2", 2, 'i'}, {"|i1", 1, 'i'}, {"<u8", 8, 'u'},
    {"<u4", 4, 'u'}, {"<u2", 2, 'u'}, {"|u1", 1, 'u'}, {"<f8", 8, 'f'}, {"<f4", 4, 'f'},
};
#define NPY_NTYPES ((int)(sizeof NPY_TYPES / sizeof NPY_TYPES[0]))
#define NPY_MAX_HEADER 65536

typedef struct {
    const char *p, *end;
} npy_lex;

static void lex_space(npy_lex *x)
{
    while (x->p < x->end && sgl_is_space((unsigned char)*x->p))
        x->p++;
}

static bool lex_char(npy_lex *x, char c)
{
    lex_space(x);
    if (x->p < x->end && *x->p == c) {
        x->p++;
        return true;
    }
    return false;
}

/* A quoted string without escapes: its bytes in [*s, *s + *n). */
static bool lex_string(npy_lex *x, const char **s, size_t *n)
{
    lex_space(x);
    if (x->p >= x->end || (*x->p != '\'' && *x->p != '"'))
        return false;
    char q = *x->p++;
    *s = x->p;
    while (x->p < x->end && *x->p != q) {
        if (*x->p == '\\' || *x->p == '\n' || *x->p == '\0')
            return false;
        x->p++;
    }
    if (x->p >= x->end)
        return false;
    *n = (size_t)(x->p - *s);
    x->p++;
    return true;
}

/* A non-negative decimal integer as Python writes it (no sign, no leading 0). */
static bool lex_int(npy_lex *x, int64_t *v)
{
    lex_space(x);
    const char *s = x->p;
    int64_t r = 0;
    while (x->p < x->end && *x->p >= '0' && *x->p <= '9') {
        int d = *x->p - '0';
        if (r > (INT64_MAX - d) / 10)
            return false;
        r = r * 10 + d;
        x->p++;
    }
    if (x->p == s || (x->p - s > 1 && *s == '0'))
        return false;
    *v = r;
    return true;
}

static bool lex_word(npy_lex *x, const char *w)
{
    lex_space(x);
    size_t n = strlen(w);
    if ((size_t)(x->end - x->p) >= n && memcmp(x->p, w, n) == 0 &&
        ((size_t)(x->end - x->p) == n || !(x->p[n] == '_' || (x->p[n] >= '0' && x->p[n] <= '9') ||
                                           ((x->p[n] | 32) >= 'a' && (x->p[n] | 32) <= 'z')))) {
        x->p += n;
        return true;
    }
    return false;
}

/* Why a .npy file is refused: a run-time error naming the file. */
_Noreturn static void npy_fail(int fd, const char *path, int line, int col, const char *why)
{
    if (fd >= 0)
        close(fd);
    QPATH(q, path);
    sgl_fail(line, col, "cannot read %s as a .npy file: %s", q, why);
}

/* Reads and checks the header; want: 'i' (read_ints), 'f' (read_floats) or
 * 0 (file_len: any dtype either takes). */
npy_info sgl_npy_header(int fd, const char *path, char want, int line, int col)
{
    unsigned char pre[12];
    int64_t got = sgl_read_full(fd, pre, sizeof pre, 0);
    if (got < 0)
        sgl_fail_read(fd, path, errno, line, col);
    if (got < 10 || memcmp(pre, "\x93NUMPY", 6) != 0)
        npy_fail(fd, path, line, col, "it does not start with NumPy's magic string \\x93NUMPY");
    int major = pre[6], minor = pre[7];
    if (!((major == 1 || major == 2 || major == 3) && minor == 0)) {
        char why[100];
        snprintf(why, sizeof why, "format version %d.%d (sglc reads 1.0, 2.0 and 3.0)", major, minor);
        npy_fail(fd, path, line, col, why);
    }
    int64_t prefix = major == 1 ? 10 : 12, hl;
    if (got < prefix)
        npy_fail(fd, path, line, col, "the file ends inside the header's length");
    if (major == 1)
        hl = pre[8] | (int64_t)pre[9] << 8;
    else
        hl = pre[8] | (int64_t)pre[9] << 8 | (int64_t)pre[10] << 16 | (int64_t)pre[11] << 24;
    if (hl > NPY_MAX_HEADER) {
        char why[100];
        snprintf(why, sizeof why, "a header of %lld bytes (at most %d are read)", (long long)hl, NPY_MAX_HEADER);
        npy_fail(fd, path, line, col, why);
    }
    char *h = sgl_alloc((size_t)hl + 1, line, col);
    int64_t hg = sgl_read_full(fd, h, (size_t)hl, prefix);
    if (hg < 0) {
        int err = errno;
        free(h);
        sgl_fail_read(fd, path, err, line, col);
    }
    if (hg < hl) {
        free(h);
        char why[160];
        snprintf(why, sizeof why, "its header says it has %lld bytes, but the file ends after %lld of them",
                 (long long)hl, (long long)hg);
        npy_fail(fd, path, line, col, why);
    }
    /* the dict: 'descr', 'fortran_order', 'shape', once each, in any order */
    npy_lex x = {h, h + hl};
    const char *descr = NULL;
    size_t descr_n = 0;
    int fortran = -1;
    int64_t dims[3], ndims = -1;
    bool tuple = false;
    const char *why = NULL;
    if (!lex_char(&x, '{'))
        why = "a damaged header (not a dict)";
    while (!why && !lex_char(&x, '}')) {
        const char *k;
        size_t kn;
        if (!lex_string(&x, &k, &kn) || !lex_char(&x, ':')) {
            why = "a damaged header (a key is not a quoted name followed by ':')";
            break;
        }
        if (kn == 5 && memcmp(k, "descr", 5) == 0 && !descr) {
            if (!lex_string(&x, &descr, &descr_n))
                why = "a damaged header ('descr' is not a string)";
        } else if (kn == 13 && memcmp(k, "fortran_order", 13) == 0 && fortran < 0) {
            fortran = lex_word(&x, "True") ? 1 : lex_word(&x, "False") ? 0 : -2;
            if (fortran == -2)
                why = "a damaged header ('fortran_order' is not True or False)";
        } else if (kn == 5 && memcmp(k, "shape", 5) == 0 && ndims < 0) {
            ndims = 0;
            if (!lex_char(&x, '('))
                why = "a damaged header ('shape' is not a tuple)";
            while (!why && !lex_char(&x, ')')) {
                int64_t d;
                if (!lex_int(&x, &d)) {
                    why = "a damaged header ('shape' holds something other than sizes)";
                    break;
                }
                if (ndims < 3)
                    dims[ndims] = d;
                ndims++;
                if (lex_char(&x, ','))
                    tuple = true;
                else if (!lex_char(&x, ')'))
                    why = "a damaged header ('shape' is not a tuple)";
                else
                    break;
            }
            if (!why && ndims == 1 && !tuple)
                why = "a damaged header ('shape' is not a tuple)";
        } else {
            why = "a damaged header (a key other than 'descr', 'fortran_order' and 'shape', or one twice)";
            break;
        }
        if (!why && !lex_char(&x, ',')) {
            if (!lex_char(&x, '}'))
                why = "a damaged header (no ',' or '}' after a value)";
            break;
        }
    }
    if (!why) {
        lex_space(&x);
        if (x.p != x.end)
            why = "a damaged header (bytes after the dict: the header's length is wrong)";
        else if (!descr || fortran < 0 || ndims < 0)
            why = "a damaged header (it lacks 'descr', 'fortran_order' or 'shape')";
    }
    if (why) {
        free(h);
        npy_fail(fd, path, line, col, why);
    }
    const npy_type *type = NULL;
    for (int i = 0; i < NPY_NTYPES; i++)
        if (strlen(NPY_TYPES[i].descr) == descr_n && memcmp(NPY_TYPES[i].descr, descr, descr_n) == 0)
            type = &NPY_TYPES[i];
    bool float_type = type && type->kind == 'f';
    if (!type || (want == 'i' && float_type) || (want == 'f' && !float_type)) {
        char d[120], msg[400];
        sgl_quote(d, sizeof d, descr, descr_n);
        snprintf(msg, sizeof msg, "dtype %s (%s takes %s)", d,
                 want == 'i' ? "read_ints" : want == 'f' ? "read_floats" : "file_len",
                 want == 'i'   ? "<i8 <i4 <i2 |i1 <u8 <u4 <u2 |u1"
                 : want == 'f' ? "<f8 <f4"
                               : "<i8 <i4 <i2 |i1 <u8 <u4 <u2 |u1 <f8 <f4");
        free(h);
        npy_fail(fd, path, line, col, msg);
    }
    free(h);
    if (fortran)
        npy_fail(fd, path, line, col, "fortran_order is True (only C order is read)");
    if (ndims != 1) {
        char msg[100];
        snprintf(msg, sizeof msg, "an array of %lld dimensions (only one-dimensional arrays are read)",
                 (long long)ndims);
        npy_fail(fd, path, line, col, msg);
    }
    npy_info info = {type, dims[0], prefix + hl};
    struct stat st;
    if (fstat(fd, &st) != 0)
        sgl_fail_read(fd, path, errno, line, col);
    if (info.n > (INT64_MAX - info.off) / type->size || (int64_t)st.st_size < info.off + info.n * type->size) {
        char msg[200];
        snprintf(msg, sizeof msg, "the file has %lld bytes, fewer than the %lld + %lld x %d its header says",
                 (long long)st.st_size, (long long)info.off, (long long)info.n, type->size);
        npy_fail(fd, path, line, col, msg);
    }
    return info;
}

static uint64_t load_le(const unsigned char *p, int size)
{
    uint64_t v = 0;
    for (int i = size - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Elements a .. b-1 of the checked file: one pread of their bytes into the
 * tail of the result's buffer, then converted forward in place. */
sgl_vec sgl_npy_read(int fd, const char *path, const npy_info *info, int64_t a, int64_t b, bool floats,
                        int line, int col)
{
    const sgl_type vt = {.kind = SGL_T_VEC, .elem = floats ? &sgl_t_float : &sgl_t_int};
    int64_t n = b - a;
    sgl_vec r = sgl_vec_new_uninit(&vt, n, line, col);
    if (n == 0)
        return r;
    int sz = info->type->size;
    unsigned char *d = r.data, *src = d + n * (8 - sz);
    int64_t got = sgl_read_full(fd, src, (size_t)(n * sz), info->off + a * sz);
    if (got != n * sz) {
        int err = errno;
        sgl_vec_free(&vt, &r);
        if (got < 0)
            sgl_fail_read(fd, path, err, line, col);
        npy_fail(fd, path, line, col, "the file is shorter than its header says (it shrank while read?)");
    }
    char kind = info->type->kind;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (sz == 8 && kind != 'u')
        return r; /* <i8, <f8: the bytes are the values */
#endif
    for (int64_t i = 0; i < n; i++) {
        uint64_t u = load_le(src + i * sz, sz);
        int64_t v;
        double f;
        if (kind == 'f') {
            if (sz == 8) {
                memcpy(&f, &u, 8);
            } else {
                uint32_t u32 = (uint32_t)u;
                float f32;
                memcpy(&f32, &u32, 4);
                f = f32; /* exact */
            }
            memcpy(d + i * 8, &f, 8);
            continue;
        }
        if (kind == 'u') {
            if (u > (uint64_t)INT64_MAX) {
                sgl_vec_free(&vt, &r);
                char msg[200];
                snprintf(msg, sizeof msg, "element %lld (%llu) of this <u8 array does not fit an int",
                         (long long)(a + i), (unsigned long long)u);
                npy_fail(fd, path, line, col, msg);
            }
            v = (int64_t)u;
        } else {
            int shift = 64 - 8 * sz; /* sign-extend */
            v = (int64_t)(u << shift) >> shift;
        }
        memcpy(d + i * 8, &v, 8);
    }
    return r;
}

/* The bytes of a .npy file of v, version 1.0, as numpy.save writes them:
 * the dict with its keys sorted, room for the shape to grow to 21 digits,
 * then spaces and a newline up to a multiple of 64 bytes. */
void sgl_npy_bytes(sgl_buf *out, const sgl_vec *v, bool floats)
{
    char dict[200];
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%lld,), }",
                      floats ? "<f8" : "<i8", (long long)v->len);
    char digits[32];
    int nd = snprintf(digits, sizeof digits, "%lld", (long long)v->len);
    int hlen = dl + (21 - nd) + 1; /* growth room and the newline */
    int pad = 64 - (10 + hlen) % 64;
    hlen += pad;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 255),
                             (unsigned char)(hlen >> 8)};
    sgl_buf_put(out, pre, 10);
    sgl_buf_put(out, dict, (size_t)dl);
    for (int i = 0; i < 21 - nd + pad; i++)
        sgl_buf_put(out, " ", 1);
    sgl_buf_put(out, "\n", 1);
#if !(defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
    for (int64_t i = 0; i < v->len; i++) {
        uint64_t u;
        memcpy(&u, (const char *)v->data + 8 * i, 8);
        unsigned char le[8];
        for (int k = 0; k < 8; k++)
            le[k] = (unsigned char)(u >> (8 * k));
        sgl_buf_put(out, le, 8);
    }
#endif
}
