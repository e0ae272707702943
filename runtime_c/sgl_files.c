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
 * The .npy format itself is in sgl_npy.c.
 *
 * SGL_DEBUG_FILE_IO=1 in the environment: each read builtin writes one line
 * to standard error with the bytes its thread and its process read during
 * the call (rchar of /proc/thread-self/io and /proc/self/io), for the tests
 * that check that a slice reads only its bytes (tests/test_files.py).
 */
#define _GNU_SOURCE /* realpath, pread */

#include "sgl.h"
#include "sgl_files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
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

__attribute__((weak)) void sgl_files_done_cur(void);

/* Whether the node this thread runs was stopped (a failure before it in
 * the sequential order, brief §9), after polling for a remote one: the
 * tree half of the runtime, weak as above (NULL: never). */
__attribute__((weak)) bool sgl_files_stopped(void);

static void note_file(const char *path, bool wrote)
{
    if (sgl_files_note_cur)
        sgl_files_note_cur(path, wrote);
}

/* The builtin that noted a file returns without an error. */
static void note_done(void)
{
    if (sgl_files_done_cur)
        sgl_files_done_cur();
}


/* ------------------------------------------------------------------ */
/* Opening, reading, the debug counter                                  */

/* A read that waits (a FIFO with no writer yet or nothing written, a
 * terminal, a socket) polls every WAIT_MS for the node's being stopped,
 * so that a child blocked in it ends as soon as an earlier one fails
 * (brief §9: nothing hangs) instead of when the data come. */
#define WAIT_MS 20

/* Waits until the non-blocking fd has data or its end; false (errno
 * ECANCELED) when the node was stopped meanwhile. */
static bool wait_readable(int fd)
{
    for (;;) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int r = poll(&pf, 1, WAIT_MS);
        if (r > 0 || (r < 0 && errno != EINTR))
            return true; /* the read says what there is */
        if (sgl_files_stopped && sgl_files_stopped()) {
            errno = ECANCELED;
            return false;
        }
    }
}

static int open_read(const char *path, int line, int col)
{
    note_file(path, false);
    int fd;
    /* non-blocking, so that opening a FIFO does not wait for its writer
     * here (wait_readable does); blocking again for the files that never
     * make a read wait */
    do
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    while (fd < 0 && errno == EINTR);
    struct stat st;
    int err = errno;
    if (fd >= 0 && fstat(fd, &st) == 0) {
        int fl = fcntl(fd, F_GETFL);
        if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISSOCK(st.st_mode) && fl >= 0)
            (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        else if (S_ISFIFO(st.st_mode) && !wait_readable(fd)) { /* a writer, data or the end */
            err = errno;
            close(fd);
            fd = -1;
        }
    }
    if (fd < 0) {
        QPATH(q, path);
        sgl_fail(line, col, "cannot open %s: %s", q, strerror(err));
    }
    return fd;
}

/* Reads up to n bytes at off (pread, or read at the current position when
 * off < 0) until n or the end of the file; the count read, -1 on an error
 * (ECANCELED: the node was stopped while the read waited). */
int64_t sgl_read_full(int fd, void *buf, size_t n, int64_t off)
{
    size_t got = 0;
    while (got < n) {
        size_t want = n - got < ((size_t)1 << 30) ? n - got : (size_t)1 << 30;
        ssize_t r = off < 0 ? read(fd, (char *)buf + got, want)
                            : pread(fd, (char *)buf + got, want, (off_t)(off + (int64_t)got));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait_readable(fd))
                continue;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (int64_t)got;
}

_Noreturn void sgl_fail_read(int fd, const char *path, int err, int line, int col)
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
    int64_t n = sgl_read_full(fd, buf, sizeof buf - 1, -1);
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
    const sgl_type vt = {.kind = SGL_T_VEC, .elem = t->floats ? &sgl_t_float : &sgl_t_int};
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
        int64_t n = sgl_read_full(fd, buf, CHUNK, -1);
        if (n < 0) {
            int err = errno;
            free(buf);
            free(t.word);
            sgl_vec_free(&(sgl_type){.kind = SGL_T_VEC, .elem = floats ? &sgl_t_float : &sgl_t_int}, &t.out);
            sgl_fail_read(fd, path, err, line, col);
        }
        if (n == 0)
            break;
        const unsigned char *p = (const unsigned char *)buf, *end = p + n;
        while (p < end) {
            if (!in_word) {
                while (p < end && sgl_is_space(*p))
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
            while (p < end && !sgl_is_space(*p))
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
/* The builtins                                                         */

/* read_ints/read_floats of path, whole (a = 0, b = -1) or a .. b-1. */
static sgl_vec read_numbers(const char *path, int64_t a, int64_t b, bool floats, int line, int col)
{
    const char *what = floats ? "read_floats" : "read_ints";
    io_probe probe = io_start();
    int fd = open_read(path, line, col);
    sgl_vec r;
    if (is_npy(path)) {
        npy_info info = sgl_npy_header(fd, path, floats ? 'f' : 'i', line, col);
        if (b < 0)
            b = info.n;
        if (a < 0 || a > b || b > info.n) {
            close(fd);
            fail_range(what, path, a, b, info.n, line, col);
        }
        r = sgl_npy_read(fd, path, &info, a, b, floats, line, col);
    } else if (a < 0 || (b >= 0 && a > b)) {
        int64_t len = text_scan(path, fd, 0, -1, floats, NULL, line, col);
        close(fd);
        fail_range(what, path, a, b, len, line, col);
    } else {
        int64_t seen = text_scan(path, fd, a, b, floats, &r, line, col);
        if (b >= 0 && seen < b) {
            close(fd);
            sgl_vec_free(&(sgl_type){.kind = SGL_T_VEC, .elem = floats ? &sgl_t_float : &sgl_t_int}, &r);
            fail_range(what, path, a, b, seen, line, col);
        }
    }
    close(fd);
    io_end(&probe, what, path, a, b);
    note_done();
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
        int64_t len = is_npy(path) ? sgl_npy_header(fd, path, floats ? 'f' : 'i', line, col).n
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
    int64_t n = is_npy(path) ? sgl_npy_header(fd, path, 0, line, col).n
                             : text_scan(path, fd, 0, -1, false, NULL, line, col);
    close(fd);
    io_end(&probe, "file_len", path, 0, n);
    note_done();
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

/* Writes the numbers of v to path: .npy, or text one number a line. */
static void write_numbers(const char *path, const sgl_vec *v, bool floats, int line, int col)
{
    note_file(path, true); /* brief §8's file-sharing rule */
    sgl_buf b = {.line = line, .col = col}; /* out of memory: this write's error */
    const void *data = NULL; /* written after b */
    size_t data_len = 0;
    if (is_npy(path)) {
        sgl_npy_bytes(&b, v, floats);
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
    note_done();
}

void sgl_write_ints(const char *path, const sgl_vec *v, int line, int col)
{
    write_numbers(path, v, false, line, col);
}

void sgl_write_floats(const char *path, const sgl_vec *v, int line, int col)
{
    write_numbers(path, v, true, line, col);
}
