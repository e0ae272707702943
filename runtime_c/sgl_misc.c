/*
 * sgl_misc.c: the SGL builtins that touch the world outside the values.
 *
 * SplitMix64 random data (brief §8), the program's arguments (arg_int,
 * arg_float) and wtime.  The file builtins are in sgl_files.c.
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
    sgl_vec r = sgl_vec_new(&(sgl_type){.kind = SGL_T_VEC, .elem = &sgl_t_int}, n, line, col);
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
    sgl_vec r = sgl_vec_new(&(sgl_type){.kind = SGL_T_VEC, .elem = &sgl_t_float}, n, line, col);
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
bool sgl_parse_int(const char *s, sgl_int *out)
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
bool sgl_parse_float(const char *s, sgl_float *out)
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

/* An argument quoted for a message (sgl_quote: no control bytes). */
static const char *quote_arg(const char *a)
{
    static _Thread_local char q[512];
    return sgl_quote(q, sizeof q, a, strlen(a));
}

sgl_int sgl_arg_int(sgl_int i, sgl_int dflt, int line, int col)
{
    if (i < 0 || i >= n_args)
        return dflt;
    sgl_int v;
    if (!sgl_parse_int(args[i], &v))
        sgl_fail(line, col, "bad argument %lld: %s is not an int", (long long)i, quote_arg(args[i]));
    return v;
}

sgl_float sgl_arg_float(sgl_int i, sgl_float dflt, int line, int col)
{
    if (i < 0 || i >= n_args)
        return dflt;
    sgl_float v;
    if (!sgl_parse_float(args[i], &v))
        sgl_fail(line, col, "bad argument %lld: %s is not a float", (long long)i, quote_arg(args[i]));
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
