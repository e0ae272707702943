/*
 * sgl_files.c: the file builtins (brief §8): read_ints, read_floats (whole
 * or a slice a .. b-1), file_len, write_ints, write_floats.
 *
 * The format follows the path's ending: ".npy" is NumPy's array format
 * (versions 1.0, 2.0, 3.0; one-dimensional, C order, the dtypes of NPY_TYPES
 * below), anything else text: words separated by ASCII white space (space,
 * \t \n \v \f \r; every other byte, NUL included, is part of a word).
 *
 * A slice of a .npy file reads only its own bytes: the header, then one
 * pread at the slice's offset.  A slice of a text file scans the words from
 * the start of the file (64 KiB at a time) and converts only those of the
 * slice; it stops after word b-1.
 *
 * SGL_DEBUG_FILE_IO=1 in the environment: each read builtin writes one line
 * to standard error with the bytes its thread and its process read during
 * the call (rchar of /proc/thread-self/io and /proc/self/io), for the tests
 * that check that a slice reads only its bytes (tests/test_files.py).
 */
#define _GNU_SOURCE /* realpath, pread */

#include "sgl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Quoting and path identity                                            */

char *sgl_quote(char *out, size_t cap, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    if (cap < 16) {
        if (cap)
            out[0] = '\0';
        return out;
    }
    out[o++] = '\'';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (o + 4 + 5 >= cap) { /* room for one escape, "...'" and the NUL */
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        if (c == '\'' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c >= 0x20 && c < 0x7f) {
            out[o++] = (char)c;
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o++] = '\'';
    out[o] = '\0';
    return out;
}

char *sgl_file_identity(const char *path)
{
    char *r = realpath(path, NULL);
    if (r)
        return r;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    char *rd = dir ? realpath(dir, NULL) : NULL;
    free(dir);
    char *out = NULL;
    if (rd) {
        size_t ld = strlen(rd), lb = strlen(base);
        out = malloc(ld + lb + 2);
        if (out) {
            memcpy(out, rd, ld);
            size_t o = ld;
            if (ld == 0 || rd[ld - 1] != '/')
                out[o++] = '/';
            memcpy(out + o, base, lb + 1);
        }
        free(rd);
    }
    if (!out)
        out = strdup(path);
    if (!out) {
        fputs("sgl: out of memory (file identity)\n", stderr);
        abort();
    }
    return out;
}

/* Brief §8's file-sharing rule: the tree half of the runtime records the
 * path on the node that runs the builtin (sgl_output.c).  A weak reference,
 * so that the value half links alone (runtime_c/tests). */
__attribute__((weak)) void sgl_files_note_cur(const char *path, bool wrote);

static void note_file(const char *path, bool wrote)
{
    if (sgl_files_note_cur)
        sgl_files_note_cur(path, wrote);
}

#define QPATH(q, path) char q[1100]; sgl_quote(q, sizeof q, path, strlen(path))

/* ------------------------------------------------------------------ */
/* Opening, reading, the debug counter                                  */

static int open_read(const char *path, int line, int col)
{
    note_file(path, false);
    int fd;
    do
        fd = open(path, O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        int err = errno;
        QPATH(q, path);
        sgl_fail(line, col, "cannot open %s: %s", q, strerror(err));
    }
    return fd;
}

/* Reads up to n bytes at off (pread, or read at the current position when
 * off < 0) until n or the end of the file; the count read, -1 on an error. */
static int64_t read_full(int fd, void *buf, size_t n, int64_t off)
{
    size_t got = 0;
    while (got < n) {
        size_t want = n - got < ((size_t)1 << 30) ? n - got : (size_t)1 << 30;
        ssize_t r = off < 0 ? read(fd, (char *)buf + got, want)
                            : pread(fd, (char *)buf + got, want, (off_t)(off + (int64_t)got));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (int64_t)got;
}

_Noreturn static void fail_read(int fd, const char *path, int err, int line, int col)
{
    close(fd);
    QPATH(q, path);
    sgl_fail(line, col, "cannot read %s: %s", q, strerror(err));
}

static int64_t rchar_of(const char *proc)
{
    int fd = open(proc, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[512];
    int64_t n = read_full(fd, buf, sizeof buf - 1, -1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    const char *p = strstr(buf, "rchar:");
    return p ? strtoll(p + 6, NULL, 10) : -1;
}

typedef struct {
    bool on;
    int64_t thread, process;
} io_probe;

static io_probe io_start(void)
{
    const char *e = getenv("SGL_DEBUG_FILE_IO");
    io_probe p = {e && *e && strcmp(e, "0") != 0, 0, 0};
    if (p.on) {
        p.thread = rchar_of("/proc/thread-self/io");
        p.process = rchar_of("/proc/self/io");
    }
    return p;
}

static void io_end(const io_probe *p, const char *what, const char *path, int64_t a, int64_t b)
{
    if (!p->on)
        return;
    int64_t t = rchar_of("/proc/thread-self/io"), pr = rchar_of("/proc/self/io");
    QPATH(q, path);
    fprintf(stderr, "sgl-debug-file-io: %s %s %lld %lld thread_rchar=%lld process_rchar=%lld\n", what, q,
            (long long)a, (long long)b, (long long)(t - p->thread), (long long)(pr - p->process));
}

static bool is_npy(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && strcmp(path + n - 4, ".npy") == 0;
}

_Noreturn static void fail_range(const char *what, const char *path, sgl_int a, sgl_int b, int64_t len,
                                 int line, int col)
{
    QPATH(q, path);
    sgl_fail(line, col, "%s(%s, %lld, %lld): the slice %lld .. %lld is out of range for a file of %lld numbers",
             what, q, (long long)a, (long long)b, (long long)a, (long long)b, (long long)len);
}

/* ------------------------------------------------------------------ */
/* Text files                                                           */

static bool is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

typedef struct {
    const char *path;
    bool floats;
    sgl_vec out;
    char *word; /* the word being collected (NUL-terminated when complete) */
    size_t len, cap;
    bool bad;   /* it holds a byte no number has (NUL): only its start kept */
    char *chunk; /* text_scan's buffer, freed on an error */
    int line, col;
} text_words;

#define KEEP_BAD 64 /* bytes of a bad word kept for the message */

static void word_put(text_words *t, const char *p, size_t n)
{
    if (t->bad) {
        size_t keep = t->len < KEEP_BAD ? KEEP_BAD - t->len : 0;
        n = n < keep ? n : keep;
    } else if (memchr(p, '\0', n)) {
        t->bad = true;
    }
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 64;
        while (cap < t->len + n + 1)
            cap *= 2;
        t->word = sgl_realloc(t->word, cap, t->line, t->col);
        t->cap = cap;
    }
    memcpy(t->word + t->len, p, n);
    t->len += n;
}

static void word_end(text_words *t, int fd)
{
    union {
        sgl_int i;
        sgl_float f;
    } x;
    const sgl_type vt = {SGL_T_VEC, t->floats ? &sgl_t_float : &sgl_t_int};
    bool ok = false;
    if (!t->bad) {
        t->word[t->len] = '\0';
        ok = t->floats ? sgl_parse_float(t->word, &x.f) : sgl_parse_int(t->word, &x.i);
    }
    if (!ok) {
        char w[100];
        sgl_quote(w, sizeof w, t->word, t->len);
        QPATH(q, t->path);
        free(t->word);
        free(t->chunk);
        sgl_vec_free(&vt, &t->out);
        close(fd);
        sgl_fail(t->line, t->col, "%s in %s is not %s", w, q, t->floats ? "a float" : "an int");
    }
    sgl_vec_push_move(&vt, &t->out, &x, t->line, t->col);
    t->len = 0;
}

/* Scans the words of a text file: converts words a .. b-1 into *out (when
 * out is not NULL; b < 0: to the end) and stops after word b-1; returns the
 * number of words seen. */
static int64_t text_scan(const char *path, int fd, int64_t a, int64_t b, bool floats, sgl_vec *out, int line,
                         int col)
{
    enum { CHUNK = 1 << 16 };
    char *buf = sgl_alloc(CHUNK, line, col);
    text_words t = {.path = path, .floats = floats, .chunk = buf, .line = line, .col = col};
    int64_t w = 0; /* words begun so far */
    bool in_word = false, collect = false;
    while (b < 0 || w < b || in_word) {
        int64_t n = read_full(fd, buf, CHUNK, -1);
        if (n < 0) {
            int err = errno;
            free(buf);
            free(t.word);
            sgl_vec_free(&(sgl_type){SGL_T_VEC, floats ? &sgl_t_float : &sgl_t_int}, &t.out);
            fail_read(fd, path, err, line, col);
        }
        if (n == 0)
            break;
        const unsigned char *p = (const unsigned char *)buf, *end = p + n;
        while (p < end) {
            if (!in_word) {
                while (p < end && is_space(*p))
                    p++;
                if (p == end)
                    break;
                if (b >= 0 && w >= b)
                    goto done;
                in_word = true;
                collect = out && w >= a;
                t.bad = false;
                w++;
            }
            const unsigned char *s = p;
            while (p < end && !is_space(*p))
                p++;
            if (collect)
                word_put(&t, (const char *)s, (size_t)(p - s));
            if (p < end) { /* the word ends here */
                in_word = false;
                if (collect)
                    word_end(&t, fd);
            }
        }
    }
    if (in_word && collect)
        word_end(&t, fd);
done:
    free(buf);
    free(t.word);
    if (out)
        *out = t.out;
    return w;
}

/* ------------------------------------------------------------------ */
/* .npy files                                                           */

typedef struct {
    const char *descr;
    int size;
    char kind; /* 'i' signed, 'u' unsigned, 'f' float */
} npy_type;

static const npy_type NPY_TYPES[] = {
    {"<i8", 8, 'i'}, {"<i4", 4, 'i'}, {"<i2", 2, 'i'}, {"|i1", 1, 'i'}, {"<u8", 8, 'u'},
    {"<u4", 4, 'u'}, {"<u2", 2, 'u'}, {"|u1", 1, 'u'}, {"<f8", 8, 'f'}, {"<f4", 4, 'f'},
};
#define NPY_NTYPES ((int)(sizeof NPY_TYPES / sizeof NPY_TYPES[0]))
#define NPY_MAX_HEADER 65536

typedef struct {
    const npy_type *type;
    int64_t n;   /* elements */
    int64_t off; /* where the data start */
} npy_info;

typedef struct {
    const char *p, *end;
} npy_lex;

static void lex_space(npy_lex *x)
{
    while (x->p < x->end && is_space((unsigned char)*x->p))
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
static npy_info npy_header(int fd, const char *path, char want, int line, int col)
{
    unsigned char pre[12];
    int64_t got = read_full(fd, pre, sizeof pre, 0);
    if (got < 0)
        fail_read(fd, path, errno, line, col);
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
    int64_t hg = read_full(fd, h, (size_t)hl, prefix);
    if (hg < 0) {
        int err = errno;
        free(h);
        fail_read(fd, path, err, line, col);
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
        fail_read(fd, path, errno, line, col);
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
static sgl_vec npy_read(int fd, const char *path, const npy_info *info, int64_t a, int64_t b, bool floats,
                        int line, int col)
{
    const sgl_type vt = {SGL_T_VEC, floats ? &sgl_t_float : &sgl_t_int};
    int64_t n = b - a;
    sgl_vec r = sgl_vec_new_uninit(&vt, n, line, col);
    if (n == 0)
        return r;
    int sz = info->type->size;
    unsigned char *d = r.data, *src = d + n * (8 - sz);
    int64_t got = read_full(fd, src, (size_t)(n * sz), info->off + a * sz);
    if (got != n * sz) {
        int err = errno;
        sgl_vec_free(&vt, &r);
        if (got < 0)
            fail_read(fd, path, err, line, col);
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

/* ------------------------------------------------------------------ */
/* The builtins                                                         */

/* read_ints/read_floats of path, whole (a = 0, b = -1) or a .. b-1. */
static sgl_vec read_numbers(const char *path, int64_t a, int64_t b, bool floats, int line, int col)
{
    const char *what = floats ? "read_floats" : "read_ints";
    io_probe probe = io_start();
    int fd = open_read(path, line, col);
    sgl_vec r;
    if (is_npy(path)) {
        npy_info info = npy_header(fd, path, floats ? 'f' : 'i', line, col);
        if (b < 0)
            b = info.n;
        if (a < 0 || a > b || b > info.n) {
            close(fd);
            fail_range(what, path, a, b, info.n, line, col);
        }
        r = npy_read(fd, path, &info, a, b, floats, line, col);
    } else if (a < 0 || (b >= 0 && a > b)) {
        int64_t len = text_scan(path, fd, 0, -1, floats, NULL, line, col);
        close(fd);
        fail_range(what, path, a, b, len, line, col);
    } else {
        int64_t seen = text_scan(path, fd, a, b, floats, &r, line, col);
        if (b >= 0 && seen < b) {
            close(fd);
            sgl_vec_free(&(sgl_type){SGL_T_VEC, floats ? &sgl_t_float : &sgl_t_int}, &r);
            fail_range(what, path, a, b, seen, line, col);
        }
    }
    close(fd);
    io_end(&probe, what, path, a, b);
    return r;
}

sgl_vec sgl_read_ints(const char *path, int line, int col)
{
    return read_numbers(path, 0, -1, false, line, col);
}

sgl_vec sgl_read_floats(const char *path, int line, int col)
{
    return read_numbers(path, 0, -1, true, line, col);
}

/* A slice a .. b-1 (b >= 0 here; a negative b fails as out of range). */
static sgl_vec read_slice(const char *path, sgl_int a, sgl_int b, bool floats, int line, int col)
{
    if (b < 0) { /* not "to the end": the range check below reports it */
        int fd = open_read(path, line, col);
        int64_t len = is_npy(path) ? npy_header(fd, path, floats ? 'f' : 'i', line, col).n
                                   : text_scan(path, fd, 0, -1, floats, NULL, line, col);
        close(fd);
        fail_range(floats ? "read_floats" : "read_ints", path, a, b, len, line, col);
    }
    return read_numbers(path, a, b, floats, line, col);
}

sgl_vec sgl_read_ints_slice(const char *path, sgl_int a, sgl_int b, int line, int col)
{
    return read_slice(path, a, b, false, line, col);
}

sgl_vec sgl_read_floats_slice(const char *path, sgl_int a, sgl_int b, int line, int col)
{
    return read_slice(path, a, b, true, line, col);
}

sgl_int sgl_file_len(const char *path, int line, int col)
{
    io_probe probe = io_start();
    int fd = open_read(path, line, col);
    int64_t n = is_npy(path) ? npy_header(fd, path, 0, line, col).n
                             : text_scan(path, fd, 0, -1, false, NULL, line, col);
    close(fd);
    io_end(&probe, "file_len", path, 0, n);
    return n;
}

/* Writes all n bytes at p to fd; false on an error (errno set). */
static bool write_full(int fd, const void *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n < ((size_t)1 << 30) ? n : (size_t)1 << 30);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        p = (const char *)p + w;
        n -= (size_t)w;
    }
    return true;
}

/* The bytes of a .npy file of v, version 1.0, as numpy.save writes them:
 * the dict with its keys sorted, room for the shape to grow to 21 digits,
 * then spaces and a newline up to a multiple of 64 bytes. */
static void npy_bytes(sgl_buf *out, const sgl_vec *v, bool floats)
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

/* Writes the numbers of v to path: .npy, or text one number a line. */
static void write_numbers(const char *path, const sgl_vec *v, bool floats, int line, int col)
{
    note_file(path, true); /* brief §8's file-sharing rule */
    sgl_buf b = {NULL, 0, 0};
    const void *data = NULL; /* written after b */
    size_t data_len = 0;
    if (is_npy(path)) {
        npy_bytes(&b, v, floats);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        data = v->data;
        data_len = (size_t)v->len * 8;
#endif
    } else {
        for (int64_t i = 0; i < v->len; i++) {
            if (floats)
                sgl_fmt_float(&b, ((const sgl_float *)v->data)[i]);
            else
                sgl_fmt_int(&b, ((const sgl_int *)v->data)[i]);
            sgl_buf_put(&b, "\n", 1);
        }
    }
    int fd;
    do
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        int err = errno;
        sgl_buf_free(&b);
        QPATH(q, path);
        sgl_fail(line, col, "cannot open %s: %s", q, strerror(err));
    }
    int err = 0;
    if (!write_full(fd, b.data, b.len) || (data_len && !write_full(fd, data, data_len)))
        err = errno;
    if (close(fd) != 0 && !err && errno != EINTR)
        err = errno;
    sgl_buf_free(&b);
    if (err) {
        QPATH(q, path);
        sgl_fail(line, col, "cannot write %s: %s", q, strerror(err));
    }
}

void sgl_write_ints(const char *path, const sgl_vec *v, int line, int col)
{
    write_numbers(path, v, false, line, col);
}

void sgl_write_floats(const char *path, const sgl_vec *v, int line, int col)
{
    write_numbers(path, v, true, line, col);
}
