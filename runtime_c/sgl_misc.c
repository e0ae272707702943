/*
 * sgl_misc.c: the SGL builtins that touch the world outside the values.
 *
 * SplitMix64 random data (brief §8), the program's arguments (arg_int,
 * arg_float), wtime, and the file builtins read_ints/read_floats/
 * write_ints/write_floats.
 */
#define _POSIX_C_SOURCE 200809L

#include "sgl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------ */
/* Random data                                                         */

uint64_t sgl_splitmix64_next(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

sgl_vec sgl_rand_ints(sgl_int n, sgl_int lo, sgl_int hi, sgl_int seed, int line, int col)
{
    if (n < 0)
        sgl_fail(line, col, "rand_ints with a negative count %lld", (long long)n);
    if (hi <= lo)
        sgl_fail(line, col, "rand_ints with hi (%lld) <= lo (%lld)", (long long)hi,
                 (long long)lo);
    sgl_vec r = sgl_vec_new(&(sgl_type){SGL_T_VEC, &sgl_t_int}, n, line, col);
    sgl_int *d = r.data;
    uint64_t s = (uint64_t)seed;
    uint64_t span = (uint64_t)hi - (uint64_t)lo; /* in 1 .. 2^64-1 */
    for (int64_t i = 0; i < n; i++)
        d[i] = sgl_add(lo, (sgl_int)(sgl_splitmix64_next(&s) % span));
    return r;
}

sgl_vec sgl_rand_floats(sgl_int n, sgl_int seed, int line, int col)
{
    if (n < 0)
        sgl_fail(line, col, "rand_floats with a negative count %lld", (long long)n);
    sgl_vec r = sgl_vec_new(&(sgl_type){SGL_T_VEC, &sgl_t_float}, n, line, col);
    sgl_float *d = r.data;
    uint64_t s = (uint64_t)seed;
    for (int64_t i = 0; i < n; i++)
        d[i] = (double)(sgl_splitmix64_next(&s) >> 11) * 0x1p-53;
    return r;
}

/* ------------------------------------------------------------------ */
/* Program arguments                                                   */

static int n_args;
static char **args;

void sgl_set_args(int argc, char **argv)
{
    n_args = argc > 0 ? argc : 0;
    args = argv;
}

/* The whole of s as an int; false when it is not one. */
static bool parse_int(const char *s, sgl_int *out)
{
    if (*s == '\0' || (*s != '-' && *s != '+' && (*s < '0' || *s > '9')))
        return false; /* strtoll would skip white space */
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0' || errno == ERANGE)
        return false;
    *out = (sgl_int)v;
    return true;
}

/* The whole of s as a float; false when it is not one.  Overflow reads as
 * an infinity and underflow as a subnormal or zero, as in Python. */
static bool parse_float(const char *s, sgl_float *out)
{
    if (*s == '\0' || *s == ' ' || (*s >= '\t' && *s <= '\r'))
        return false;
    char *end;
    double v = strtod(s, &end);
    if (*end != '\0')
        return false;
    *out = v;
    return true;
}

sgl_int sgl_arg_int(sgl_int i, sgl_int dflt, int line, int col)
{
    if (i < 0 || i >= n_args)
        return dflt;
    sgl_int v;
    if (!parse_int(args[i], &v))
        sgl_fail(line, col, "bad argument %lld: '%s' is not an int", (long long)i, args[i]);
    return v;
}

sgl_float sgl_arg_float(sgl_int i, sgl_float dflt, int line, int col)
{
    if (i < 0 || i >= n_args)
        return dflt;
    sgl_float v;
    if (!parse_float(args[i], &v))
        sgl_fail(line, col, "bad argument %lld: '%s' is not a float", (long long)i, args[i]);
    return v;
}

sgl_vec sgl_arg_str(sgl_int i, const sgl_vec *dflt, int line, int col)
{
    if (i < 0 || i >= n_args)
        return sgl_vec_copy(&sgl_t_str, dflt);
    return sgl_str_from(args[i], strlen(args[i]), line, col);
}

sgl_float sgl_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ */
/* Files                                                               */

/* Brief §8's file-sharing rule: the tree half of the runtime records the
 * path on the node that runs the builtin (sgl_output.c).  A weak reference,
 * so that the value half links alone (runtime_c/tests). */
__attribute__((weak)) void sgl_files_note_cur(const char *path, bool wrote);

static void note_file(const char *path, bool wrote)
{
    if (sgl_files_note_cur)
        sgl_files_note_cur(path, wrote);
}

/* The whole content of the file at path, NUL-terminated (caller frees). */
static char *read_file(const char *path, int line, int col)
{
    note_file(path, false); /* brief §8's file-sharing rule */
    FILE *f = fopen(path, "rb");
    if (!f)
        sgl_fail(line, col, "cannot open '%s': %s", path, strerror(errno));
    size_t len = 0, cap = 1 << 16;
    char *buf = sgl_alloc(cap, line, col);
    for (;;) {
        len += fread(buf + len, 1, cap - 1 - len, f);
        if (len < cap - 1)
            break;
        cap *= 2;
        buf = sgl_realloc(buf, cap, line, col);
    }
    int err = ferror(f) ? errno : 0;
    fclose(f);
    if (err) {
        free(buf);
        sgl_fail(line, col, "cannot read '%s': %s", path, strerror(err));
    }
    buf[len] = '\0';
    return buf;
}

static bool is_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Reads the white-space-separated numbers of a file, as ints or floats. */
static sgl_vec read_numbers(const char *path, bool floats, int line, int col)
{
    const sgl_type vt = {SGL_T_VEC, floats ? &sgl_t_float : &sgl_t_int};
    char *text = read_file(path, line, col);
    sgl_vec r = {NULL, 0, 0};
    char *p = text;
    for (;;) {
        while (is_space(*p))
            p++;
        if (*p == '\0')
            break;
        char *tok = p;
        while (*p != '\0' && !is_space(*p))
            p++;
        char saved = *p;
        *p = '\0';
        union {
            sgl_int i;
            sgl_float f;
        } x;
        bool ok = floats ? parse_float(tok, &x.f) : parse_int(tok, &x.i);
        if (!ok) {
            char shown[64];
            snprintf(shown, sizeof shown, "%.40s%s", tok, strlen(tok) > 40 ? "..." : "");
            free(text);
            sgl_vec_free(&vt, &r);
            sgl_fail(line, col, "'%s' in '%s' is not %s", shown, path,
                     floats ? "a float" : "an int");
        }
        sgl_vec_push_move(&vt, &r, &x, line, col);
        *p = saved;
    }
    free(text);
    return r;
}

sgl_vec sgl_read_ints(const char *path, int line, int col)
{
    return read_numbers(path, false, line, col);
}

sgl_vec sgl_read_floats(const char *path, int line, int col)
{
    return read_numbers(path, true, line, col);
}

/* Writes the numbers of v to path, one a line. */
static void write_numbers(const char *path, const sgl_vec *v, bool floats, int line, int col)
{
    note_file(path, true); /* brief §8's file-sharing rule */
    sgl_buf b = {NULL, 0, 0};
    for (int64_t i = 0; i < v->len; i++) {
        if (floats)
            sgl_fmt_float(&b, ((const sgl_float *)v->data)[i]);
        else
            sgl_fmt_int(&b, ((const sgl_int *)v->data)[i]);
        sgl_buf_put(&b, "\n", 1);
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        int err = errno;
        sgl_buf_free(&b);
        sgl_fail(line, col, "cannot open '%s': %s", path, strerror(err));
    }
    size_t written = b.len ? fwrite(b.data, 1, b.len, f) : 0;
    int err = written < b.len ? errno : 0;
    if (fclose(f) != 0 && !err)
        err = errno;
    sgl_buf_free(&b);
    if (err)
        sgl_fail(line, col, "cannot write '%s': %s", path, strerror(err));
}

void sgl_write_ints(const char *path, const sgl_vec *v, int line, int col)
{
    write_numbers(path, v, false, line, col);
}

void sgl_write_floats(const char *path, const sgl_vec *v, int line, int col)
{
    write_numbers(path, v, true, line, col);
}
