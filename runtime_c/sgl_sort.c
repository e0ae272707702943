/*
 * sgl_sort.c: the builtin sort of [int] and [float], typed (no comparator
 * call per comparison).
 *
 * Ints: an input already in order is copied, and one of at most
 * SGL_SORT_MAX_RUNS ascending runs (gathered sorted blocks, as in PSRS) is
 * merged.  Any other: LSD radix sort on 8-bit digits from
 * SGL_SORT_RADIX_MIN elements on (one counting pass for all eight digits,
 * then one scatter pass per digit on which the keys differ: four passes
 * for values below 2^32), and an introsort in place below that.
 *
 * Floats: the order of the builtin is ascending by `<`, with -0.0 before
 * 0.0 and every NaN after all the other values (NaNs are never `<`
 * anything, so a sort by `<` alone may put them anywhere; we choose the
 * end, as most libraries do).  That order is total on the non-NaN values,
 * so they are sorted as 64-bit integer keys: a double's bits with all the
 * bits but the sign flipped when the sign is set, read as a signed integer,
 * order the doubles as IEEE 754's totalOrder does (-inf < ... < -0.0 <
 * 0.0 < ... < inf).  The NaNs are set aside first, in their original
 * order.
 *
 * Stability: neither sort is stable, and no program can tell: two values
 * equal in this order have the same bits (NaNs aside, and every NaN prints
 * as nan and compares unequal to everything).
 */
#include "sgl_sort.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sgl.h"

/* ------------------------------------------------------------------ */
/* Introsort of int64                                                  */

static inline void swap_i64(int64_t *a, int64_t *b)
{
    int64_t t = *a;
    *a = *b;
    *b = t;
}

static void insertion_sort(int64_t *a, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        int64_t x = a[i];
        int64_t j = i;
        for (; j > 0 && x < a[j - 1]; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

/* Restores the max-heap property of a[0..n) below position i. */
static void sift_down(int64_t *a, int64_t i, int64_t n)
{
    int64_t x = a[i];
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && a[c] < a[c + 1])
            c++;
        if (!(x < a[c]))
            break;
        a[i] = a[c];
        i = c;
    }
    a[i] = x;
}

static void heap_sort(int64_t *a, int64_t n)
{
    for (int64_t i = n / 2; i-- > 0;)
        sift_down(a, i, n);
    for (int64_t e = n - 1; e > 0; e--) {
        swap_i64(&a[0], &a[e]);
        sift_down(a, 0, e);
    }
}

/* Orders a[i] <= a[j] <= a[k]. */
static inline void order3(int64_t *a, int64_t i, int64_t j, int64_t k)
{
    if (a[j] < a[i])
        swap_i64(&a[i], &a[j]);
    if (a[k] < a[j]) {
        swap_i64(&a[j], &a[k]);
        if (a[j] < a[i])
            swap_i64(&a[i], &a[j]);
    }
}

/* Moves a pivot, the median of three (or of nine, for long ranges) spread
 * over a[0..n), to a[0]. */
static void choose_pivot(int64_t *a, int64_t n)
{
    int64_t h = n / 2;
    if (n > 128) {
        order3(a, 0, h, n - 1);
        order3(a, 1, h - 1, n - 2);
        order3(a, 2, h + 1, n - 3);
        order3(a, h - 1, h, h + 1);
    } else {
        order3(a, 0, h, n - 1);
    }
    swap_i64(&a[0], &a[h]);
}

/* With the pivot p at a[0]: rearranges a[0..n) into  < p | p | >= p  and
 * returns the pivot's new position. */
static int64_t partition_lt(int64_t *a, int64_t n)
{
    int64_t p = a[0];
    int64_t i = 0, j = n;
    /* the first scans are guarded; afterwards each scan stops at the
     * element the last swap put behind it */
    do
        i++;
    while (i < n && a[i] < p);
    do
        j--;
    while (j > 0 && !(a[j] < p));
    while (i < j) {
        swap_i64(&a[i], &a[j]);
        do
            i++;
        while (a[i] < p);
        do
            j--;
        while (!(a[j] < p));
    }
    swap_i64(&a[0], &a[j]);
    return j;
}

/* With the pivot p at a[0] and no element of a[0..n) below p: moves the
 * elements equal to p to the front and returns how many there are. */
static int64_t partition_eq(int64_t *a, int64_t n)
{
    int64_t p = a[0];
    int64_t i = 0, j = n;
    for (;;) {
        do
            i++;
        while (i < n && !(p < a[i]));
        do
            j--;
        while (p < a[j]); /* stops at a[0] at the latest */
        if (i >= j)
            break;
        swap_i64(&a[i], &a[j]);
    }
    return j + 1;
}

/* Sorts a[0..n).  When !leftmost, a[-1] is no greater than any element of
 * a[0..n) (it is the pivot of an enclosing partition). */
static void introsort(int64_t *a, int64_t n, int depth, bool leftmost)
{
    while (n > SGL_SORT_SMALL) {
        if (depth-- == 0) {
            heap_sort(a, n);
            return;
        }
        choose_pivot(a, n);
        if (!leftmost && !(a[-1] < a[0])) {
            /* the pivot equals the enclosing one: every element equal to it
             * is in place once swept to the front (many duplicates) */
            int64_t k = partition_eq(a, n);
            a += k;
            n -= k;
            continue;
        }
        int64_t m = partition_lt(a, n);
        /* recurse into the shorter side, loop on the longer */
        if (m < n - m - 1) {
            introsort(a, m, depth, leftmost);
            a += m + 1;
            n -= m + 1;
            leftmost = false;
        } else {
            introsort(a + m + 1, n - m - 1, depth, false);
            n = m;
        }
    }
    insertion_sort(a, n);
}

void sgl_introsort_depth_i64(int64_t *a, int64_t n, int depth)
{
    if (n >= 2)
        introsort(a, n, depth, true);
}

void sgl_introsort_i64(int64_t *a, int64_t n)
{
    int depth = 0;
    for (int64_t m = n; m > 1; m >>= 1)
        depth += 2;
    sgl_introsort_depth_i64(a, n, depth);
}

/* ------------------------------------------------------------------ */
/* LSD radix sort of int64                                             */

#define SIGN_BIT ((uint64_t)1 << 63)

/* Digit d (0 = least significant) of x, with the sign bit flipped so that
 * negative keys come first. */
static inline unsigned digit(int64_t x, int d)
{
    return (unsigned)((((uint64_t)x ^ SIGN_BIT) >> (8 * d)) & 0xff);
}

void sgl_radix_sort_i64(const int64_t *src, int64_t *dst, int64_t *tmp, int64_t n)
{
    if (n <= 0)
        return;
    int64_t count[8][256];
    memset(count, 0, sizeof count);
    for (int64_t i = 0; i < n; i++) {
        uint64_t u = (uint64_t)src[i] ^ SIGN_BIT;
        for (int d = 0; d < 8; d++)
            count[d][(u >> (8 * d)) & 0xff]++;
    }
    int active[8], npass = 0;
    for (int d = 0; d < 8; d++)
        if (count[d][digit(src[0], d)] != n)
            active[npass++] = d;
    if (npass == 0) {
        if (dst != src)
            memcpy(dst, src, (size_t)n * sizeof *dst);
        return;
    }
    /* the passes alternate between dst and tmp so that the last one writes
     * dst; when src is dst, the first pass must write tmp, and an odd
     * number of passes ends in tmp instead (one copy back) */
    int64_t *out = src != dst && npass % 2 == 1 ? dst : tmp;
    const int64_t *in = src;
    for (int p = 0; p < npass; p++) {
        int d = active[p];
        int64_t pos[256], sum = 0;
        for (int b = 0; b < 256; b++) {
            pos[b] = sum;
            sum += count[d][b];
        }
        for (int64_t i = 0; i < n; i++) {
            int64_t x = in[i];
            out[pos[digit(x, d)]++] = x;
        }
        in = out;
        out = out == dst ? tmp : dst;
    }
    if (in != dst)
        memcpy(dst, in, (size_t)n * sizeof *dst);
}

/* ------------------------------------------------------------------ */
/* Inputs made of a few ascending runs                                 */

int sgl_sort_runs_i64(const int64_t *a, int64_t n, int64_t *bounds, int maxruns)
{
    int r = 0;
    bounds[0] = 0;
    for (int64_t i = 1; i < n; i++)
        if (a[i] < a[i - 1]) {
            if (++r == maxruns)
                return 0; /* stops after maxruns descents: cheap on random data */
            bounds[r] = i;
        }
    bounds[++r] = n;
    return r;
}

/* Merges the ascending x[0..nx) and y[0..ny) into out. */
static void merge2(const int64_t *x, int64_t nx, const int64_t *y, int64_t ny, int64_t *out)
{
    int64_t i = 0, j = 0, k = 0;
    while (i < nx && j < ny)
        out[k++] = y[j] < x[i] ? y[j++] : x[i++];
    if (i < nx)
        memcpy(out + k, x + i, (size_t)(nx - i) * sizeof *x);
    if (j < ny)
        memcpy(out + k, y + j, (size_t)(ny - j) * sizeof *y);
}

void sgl_merge_runs_i64(const int64_t *src, int64_t *dst, int64_t *tmp, int64_t n,
                        int64_t *bounds, int nruns)
{
    int rounds = 0;
    for (int r = nruns; r > 1; r = (r + 1) / 2)
        rounds++;
    if (rounds == 0) {
        if (src != dst)
            memcpy(dst, src, (size_t)n * sizeof *dst);
        return;
    }
    /* rounds of pairwise merges alternate between dst and tmp, as the
     * radix sort's passes do */
    int64_t *out = src != dst && rounds % 2 == 1 ? dst : tmp;
    const int64_t *in = src;
    while (nruns > 1) {
        int k = 0;
        for (int r = 0; r < nruns; r += 2) {
            int64_t lo = bounds[r], mid = bounds[r + 1];
            int64_t hi = r + 1 < nruns ? bounds[r + 2] : mid;
            merge2(in + lo, mid - lo, in + mid, hi - mid, out + lo);
            bounds[k++] = lo;
        }
        bounds[k] = n;
        nruns = k;
        in = out;
        out = out == dst ? tmp : dst;
    }
    if (in != dst)
        memcpy(dst, in, (size_t)n * sizeof *dst);
}

void sgl_sort_keys_i64(const int64_t *src, int64_t *dst, int64_t *tmp, int64_t n)
{
    if (n <= 0)
        return;
    int64_t bounds[SGL_SORT_MAX_RUNS + 1];
    int runs = sgl_sort_runs_i64(src, n, bounds, SGL_SORT_MAX_RUNS);
    if (runs == 1 || (runs > 1 && tmp)) {
        sgl_merge_runs_i64(src, dst, tmp, n, bounds, runs);
    } else if (tmp && n >= SGL_SORT_RADIX_MIN) {
        sgl_radix_sort_i64(src, dst, tmp, n);
    } else {
        if (src != dst)
            memcpy(dst, src, (size_t)n * sizeof *dst);
        sgl_introsort_i64(dst, n);
    }
}

/* ------------------------------------------------------------------ */
/* Floats                                                              */

/* The key of a non-NaN double (and back: the map is its own inverse). */
static inline uint64_t float_key(uint64_t bits)
{
    return bits ^ ((0 - (bits >> 63)) >> 1);
}

void sgl_sort_f64(const double *src, double *dst, int64_t *tmp, int64_t n)
{
    /* keys of the non-NaNs from the front of dst, NaNs from the back */
    int64_t lo = 0, hi = n;
    for (int64_t i = 0; i < n; i++) {
        double x = src[i];
        if (isnan(x)) {
            dst[--hi] = x;
        } else {
            uint64_t b;
            memcpy(&b, &x, sizeof b);
            b = float_key(b);
            memcpy(&dst[lo++], &b, sizeof b);
        }
    }
    for (int64_t i = hi, j = n - 1; i < j; i++, j--) { /* the NaNs' original order */
        double t = dst[i];
        dst[i] = dst[j];
        dst[j] = t;
    }
    int64_t *keys = (int64_t *)(void *)dst;
    sgl_sort_keys_i64(keys, keys, tmp, lo);
    for (int64_t i = 0; i < lo; i++) {
        uint64_t b = float_key((uint64_t)keys[i]);
        double x;
        memcpy(&x, &b, sizeof x);
        dst[i] = x;
    }
}

/* ------------------------------------------------------------------ */
/* The builtin                                                         */

/* True when the n doubles of a are in the builtin's order: their keys
 * ascending, a NaN counting as above every key. */
static bool floats_sorted(const double *a, int64_t n)
{
    int64_t prev = INT64_MIN;
    for (int64_t i = 0; i < n; i++) {
        int64_t k = INT64_MAX;
        if (!isnan(a[i])) {
            uint64_t b;
            memcpy(&b, &a[i], sizeof b);
            k = (int64_t)float_key(b);
        }
        if (k < prev)
            return false;
        prev = k;
    }
    return true;
}

/* Only [int] and [float] reach here (the type checker sees to it). */
sgl_vec sgl_sort(const sgl_type *vt, const sgl_vec *v, int line, int col)
{
    int64_t n = v->len;
    sgl_vec r = sgl_vec_new_uninit(vt, n, line, col);
    if (n == 0)
        return r;
    bool floats = vt->elem->kind == SGL_T_FLOAT;
    /* an input already in order is copied, without scratch (the check
     * stops at the first descent, so it costs little on any other) */
    int64_t bounds[2];
    if (floats ? floats_sorted(v->data, n) : sgl_sort_runs_i64(v->data, n, bounds, 1) == 1) {
        memcpy(r.data, v->data, (size_t)n * sizeof(sgl_int));
        return r;
    }
    int64_t *tmp = sgl_alloc((size_t)n * sizeof *tmp, line, col);
    if (floats)
        sgl_sort_f64(v->data, r.data, tmp, n);
    else
        sgl_sort_keys_i64(v->data, r.data, tmp, n);
    free(tmp);
    return r;
}
