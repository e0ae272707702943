/*
 * common.h: shared helpers of the hand-written (bench/hand) and sequential
 * (bench/seq) benchmark programs: the SGL brief's SplitMix64 rand_ints
 * (§8), argument parsing, a wall clock and the checksum every side prints.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t splitmix64_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* rand_ints(n, lo, hi, seed) into a fresh array: lo + draw_i % (hi - lo). */
static inline int64_t *rand_ints(int64_t n, int64_t lo, int64_t hi, int64_t seed)
{
    int64_t *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v) { perror("malloc"); exit(1); }
    uint64_t s = (uint64_t)seed, span = (uint64_t)(hi - lo);
    for (int64_t i = 0; i < n; i++) v[i] = lo + (int64_t)(splitmix64_next(&s) % span);
    return v;
}

static inline int64_t arg_n(int argc, char **argv, int64_t dflt)
{
    return argc > 1 ? strtoll(argv[1], NULL, 10) : dflt;
}

/* The checksum printed for vector results (same as in bench/sgl):
 * h = h * 31 + v[i], wrapping around in 64 bits. */
static inline int64_t checksum(const int64_t *v, int64_t n)
{
    uint64_t h = 0;
    for (int64_t i = 0; i < n; i++) h = h * 31u + (uint64_t)v[i];
    return (int64_t)h;
}

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) { perror("malloc"); exit(1); }
    return p;
}

/* rand_floats(n, seed) into a fresh array: the brief's (draw >> 11) * 2^-53. */
static inline double *rand_floats(int64_t n, int64_t seed)
{
    double *v = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    uint64_t s = (uint64_t)seed;
    for (int64_t i = 0; i < n; i++) v[i] = (double)(splitmix64_next(&s) >> 11) * 0x1p-53;
    return v;
}

#endif
