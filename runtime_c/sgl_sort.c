/*
 * sgl_sort.c: the builtin sort of [int] and [float], typed (no comparator
 * call per comparison) and in place (no scratch buffer).
 *
 * Ints: an input of at most SGL_SORT_MAX_RUNS ascending runs (such as the
 * concatenation of sorted blocks that PSRS sorts at each level) is merged
 * in place, in rounds of pairwise merges, with a buffer of at most
 * 1/SGL_SORT_MERGE_BUF_DIV of the input (a merge whose shorter run does
 * not fit is cut in two by a rotation, as inplace_merge does).  Any other:
 * an MSD radix sort on 8-bit digits in place (American flag sort:
 * count the digit, swap every element into its bucket along cycles, then
 * sort each bucket by the next digit) from SGL_SORT_RADIX_MIN elements on,
 * starting at the most significant digit on which the keys differ and
 * skipping, in each bucket, the digits on which its keys agree; buckets of
 * fewer than SGL_SORT_RADIX_MIN elements, and short inputs, are sorted by
 * an introsort.  Neither needs memory beyond a few KiB of stack.
 *
 * Floats: the order of the builtin is ascending by `<`, with -0.0 before
 * 0.0 and every NaN after all the other values (NaNs are never `<`
 * anything, so a sort by `<` alone may put them anywhere; we choose the
 * end, as most libraries do).  That order is total on the non-NaN values,
 * so they are sorted as 64-bit integer keys: a double's bits with all the
 * bits but the sign flipped when the sign is set, read as a signed integer,
 * order the doubles as IEEE 754's totalOrder does (-inf < ... < -0.0 <
 * 0.0 < ... < inf).  The NaNs are first moved to the end, in their original
 * order; the keys are made in place, sorted as ints, and turned back.
 *
 * The builtin: an input already in order is not sorted at all (the result
 * shares it); the owned form (sgl_sort_take) sorts a vector that it may
 * write in place, and copies only one that is shared.
 *
 * Stability: neither sort is stable, and no program can tell: two values
 * equal in this order have the same bits (NaNs aside, which keep their
 * order, and every NaN prints as nan and compares unequal to everything).
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
/* MSD radix sort of int64, in place (American flag sort)              */

#define SIGN_BIT ((uint64_t)1 << 63)

/* The unsigned key of x: the sign bit flipped, so that the keys of
 * negative values come first. */
static inline uint64_t ukey(int64_t x)
{
    return (uint64_t)x ^ SIGN_BIT;
}

/* Sorts a[0..n) (n >= SGL_SORT_RADIX_MIN), whose keys agree on every bit
 * above shift + 8, by the digit at `shift` and then the lower ones. */
static void flag_sort(int64_t *a, int64_t n, int shift)
{
    int64_t end[256];
    for (;;) {
        memset(end, 0, sizeof end);
        for (int64_t i = 0; i < n; i++)
            end[(ukey(a[i]) >> shift) & 0xff]++;
        if (end[(ukey(a[0]) >> shift) & 0xff] != n)
            break;
        /* all keys agree on this digit: nothing to move */
        if (shift == 0)
            return;
        shift -= 8;
    }
    /* next[b]: the first position of bucket b not yet known to hold one of
     * its elements; end[b]: where bucket b ends */
    int64_t next[256], sum = 0;
    for (int b = 0; b < 256; b++) {
        next[b] = sum;
        sum += end[b];
        end[b] = sum;
    }
    for (int b = 0; b < 256; b++) {
        while (next[b] < end[b]) {
            /* carry x along the cycle that starts at next[b]: each step
             * swaps it into the next free slot of its bucket */
            int64_t x = a[next[b]];
            unsigned d = (unsigned)(ukey(x) >> shift) & 0xff;
            while (d != (unsigned)b) {
                int64_t y = a[next[d]];
                a[next[d]++] = x;
                x = y;
                d = (unsigned)(ukey(x) >> shift) & 0xff;
            }
            a[next[b]++] = x;
        }
    }
    if (shift == 0)
        return; /* each bucket's keys agree on every digit: equal */
    int64_t start = 0;
    for (int b = 0; b < 256; b++) {
        int64_t m = end[b] - start;
        if (m >= SGL_SORT_RADIX_MIN)
            flag_sort(a + start, m, shift - 8);
        else if (m > 1)
            sgl_introsort_i64(a + start, m);
        start = end[b];
    }
}

void sgl_radix_sort_i64(int64_t *a, int64_t n)
{
    if (n < 2)
        return;
    /* the digits on which all keys agree, above the first that differs,
     * are skipped without a counting pass each */
    uint64_t any = 0, all = ~(uint64_t)0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t u = ukey(a[i]);
        any |= u;
        all &= u;
    }
    uint64_t diff = any ^ all;
    if (diff == 0)
        return; /* all equal */
    int top = 63 - __builtin_clzll(diff);
    flag_sort(a, n, top / 8 * 8);
}

/* ------------------------------------------------------------------ */
/* Inputs made of a few ascending runs: merged in place                */

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

static void reverse(int64_t *a, int64_t n)
{
    for (int64_t i = 0, j = n - 1; i < j; i++, j--)
        swap_i64(&a[i], &a[j]);
}

/* Swaps the blocks a[0..n1) and a[n1..n1+n2), through buf when one of
 * them fits in it (nbuf elements), else by three reversals. */
static void rotate(int64_t *a, int64_t n1, int64_t n2, int64_t *buf, int64_t nbuf)
{
    if (n1 == 0 || n2 == 0)
        return;
    if (n1 <= nbuf) {
        memcpy(buf, a, (size_t)n1 * sizeof *a);
        memmove(a, a + n1, (size_t)n2 * sizeof *a);
        memcpy(a + n2, buf, (size_t)n1 * sizeof *a);
    } else if (n2 <= nbuf) {
        memcpy(buf, a + n1, (size_t)n2 * sizeof *a);
        memmove(a + n2, a, (size_t)n1 * sizeof *a);
        memcpy(a, buf, (size_t)n2 * sizeof *a);
    } else {
        reverse(a, n1);
        reverse(a + n1, n2);
        reverse(a, n1 + n2);
    }
}

/* The first position of the ascending a[0..n) whose element is >= x
 * (upper: > x). */
static int64_t lower_bound(const int64_t *a, int64_t n, int64_t x, bool upper)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x || (upper && a[mid] == x))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Merges the ascending a[0..n1) and a[n1..n1+n2) in place, with buf
 * (nbuf elements) as scratch: when the shorter run fits in buf it is
 * moved there and merged back; otherwise the longer run is cut in half,
 * the other at the same value, the two middle pieces swapped, and the two
 * halves merged on their own (as libraries' inplace_merge do). */
static void merge_in_place(int64_t *a, int64_t n1, int64_t n2, int64_t *buf, int64_t nbuf)
{
    while (n1 > 0 && n2 > 0 && a[n1] < a[n1 - 1]) {
        if (n1 + n2 == 2) { /* the only case the cuts below cannot shrink */
            swap_i64(&a[0], &a[1]);
            return;
        }
        if (n1 <= nbuf && n1 <= n2) { /* forward, the first run from buf */
            memcpy(buf, a, (size_t)n1 * sizeof *a);
            int64_t i = 0, j = n1, k = 0, n = n1 + n2;
            while (i < n1 && j < n) {
                int64_t x = buf[i], y = a[j];
                bool t = y < x;
                a[k++] = t ? y : x;
                j += t;
                i += !t;
            }
            memcpy(a + k, buf + i, (size_t)(n1 - i) * sizeof *a);
            return;
        }
        if (n2 <= nbuf) { /* backward, the second run from buf */
            memcpy(buf, a + n1, (size_t)n2 * sizeof *a);
            int64_t i = n1 - 1, j = n2 - 1, k = n1 + n2 - 1;
            while (i >= 0 && j >= 0) {
                int64_t x = a[i], y = buf[j];
                bool t = y < x;
                a[k--] = t ? x : y;
                i -= t;
                j -= !t;
            }
            memcpy(a, buf, (size_t)(j + 1) * sizeof *a);
            return;
        }
        int64_t c1, c2;
        if (n1 > n2) {
            c1 = n1 / 2;
            c2 = lower_bound(a + n1, n2, a[c1], false);
        } else {
            c2 = n2 / 2;
            c1 = lower_bound(a, n1, a[n1 + c2], true);
        }
        /* a[0..c1) <= a[n1..n1+c2) < a[c1..n1) <= ... : swap the middle */
        rotate(a + c1, n1 - c1, c2, buf, nbuf);
        int64_t m = c1 + c2;
        /* the shorter half recursively, the longer one by the loop */
        if (m < n1 + n2 - m) {
            merge_in_place(a, c1, c2, buf, nbuf);
            a += m;
            n1 -= c1;
            n2 -= c2;
        } else {
            merge_in_place(a + m, n1 - c1, n2 - c2, buf, nbuf);
            n1 = c1;
            n2 = c2;
        }
    }
}

void sgl_merge_runs_i64(int64_t *a, int64_t n, int64_t *bounds, int nruns, int64_t *buf,
                        int64_t nbuf)
{
    /* rounds of pairwise merges of neighbouring runs */
    while (nruns > 1) {
        int k = 0;
        for (int r = 0; r < nruns; r += 2) {
            int64_t lo = bounds[r], mid = bounds[r + 1];
            int64_t hi = r + 1 < nruns ? bounds[r + 2] : mid;
            merge_in_place(a + lo, mid - lo, hi - mid, buf, nbuf);
            bounds[k++] = lo;
        }
        bounds[k] = n;
        nruns = k;
    }
}

/* The merge's scratch: 1/SGL_SORT_MERGE_BUF_DIV of the input, or a few
 * KiB of stack when that cannot be had (slower, never wrong). */
static void merge_runs(int64_t *a, int64_t n, int64_t *bounds, int nruns)
{
    int64_t local[512];
    int64_t nbuf = n / SGL_SORT_MERGE_BUF_DIV;
    int64_t *buf = nbuf > (int64_t)(sizeof local / sizeof *local) ? malloc((size_t)nbuf * sizeof *buf)
                                                                   : NULL;
    if (!buf) {
        buf = local;
        nbuf = (int64_t)(sizeof local / sizeof *local);
    }
    sgl_merge_runs_i64(a, n, bounds, nruns, buf, nbuf);
    if (buf != local)
        free(buf);
}

void sgl_sort_i64(int64_t *a, int64_t n)
{
    if (n < SGL_SORT_RADIX_MIN) {
        sgl_introsort_i64(a, n);
        return;
    }
    int64_t bounds[SGL_SORT_MAX_RUNS + 1];
    int runs = sgl_sort_runs_i64(a, n, bounds, SGL_SORT_MAX_RUNS);
    if (runs > 0)
        merge_runs(a, n, bounds, runs);
    else
        sgl_radix_sort_i64(a, n);
}

/* ------------------------------------------------------------------ */
/* Floats                                                              */

/* The key of a non-NaN double's bits (and back: the map is its own
 * inverse). */
static inline uint64_t float_key(uint64_t bits)
{
    return bits ^ ((0 - (bits >> 63)) >> 1);
}

void sgl_sort_f64(double *a, int64_t n)
{
    /* the NaNs to the end, from the back: each NaN goes to the next free
     * slot below those already placed, so they keep their order */
    int64_t hi = n;
    for (int64_t i = n; i-- > 0;)
        if (isnan(a[i])) {
            double t = a[--hi];
            a[hi] = a[i];
            a[i] = t;
        }
    int64_t *keys = (int64_t *)(void *)a;
    for (int64_t i = 0; i < hi; i++) {
        uint64_t b;
        memcpy(&b, &a[i], sizeof b);
        b = float_key(b);
        memcpy(&keys[i], &b, sizeof b);
    }
    sgl_sort_i64(keys, hi);
    for (int64_t i = 0; i < hi; i++) {
        uint64_t b = float_key((uint64_t)keys[i]);
        memcpy(&a[i], &b, sizeof b);
    }
}

bool sgl_sorted_i64(const int64_t *a, int64_t n)
{
    for (int64_t i = 1; i < n; i++)
        if (a[i] < a[i - 1])
            return false; /* stops at the first descent: cheap on any other input */
    return true;
}

bool sgl_sorted_f64(const double *a, int64_t n)
{
    int64_t prev = INT64_MIN;
    for (int64_t i = 0; i < n; i++) {
        int64_t k = INT64_MAX; /* a NaN counts as above every key */
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

/* ------------------------------------------------------------------ */
/* The builtin                                                         */

/* Only [int], [float] and [S] for a struct S of int, float and bool
 * fields reach here (the type checker sees to it). */

static bool in_order(const sgl_type *vt, const sgl_vec *v)
{
    if (vt->elem->kind == SGL_T_STRUCT)
        return false; /* the generated merge sort is linear on sorted input */
    return vt->elem->kind == SGL_T_FLOAT ? sgl_sorted_f64(v->data, v->len)
                                         : sgl_sorted_i64(v->data, v->len);
}

static void sort_data(const sgl_type *vt, sgl_vec *v)
{
    if (vt->elem->kind == SGL_T_STRUCT)
        vt->elem->sort(v->data, v->len); /* generated per struct (sglc) */
    else if (vt->elem->kind == SGL_T_FLOAT)
        sgl_sort_f64(v->data, v->len);
    else
        sgl_sort_i64(v->data, v->len);
}

/* A fresh vector holding v's elements in order. */
static sgl_vec sorted_copy(const sgl_type *vt, const sgl_vec *v, int line, int col)
{
    sgl_vec r = sgl_vec_new_uninit(vt, v->len, line, col);
    memcpy(r.data, v->data, (size_t)v->len * sgl_sizeof(vt->elem));
    sort_data(vt, &r);
    return r;
}

sgl_vec sgl_sort(const sgl_type *vt, const sgl_vec *v, int line, int col)
{
    if (v->len == 0 || in_order(vt, v))
        return sgl_vec_copy(vt, v); /* shares v (copy-on-write) */
    return sorted_copy(vt, v, line, col);
}

sgl_vec sgl_sort_take(const sgl_type *vt, sgl_vec *v, int line, int col)
{
    sgl_vec r = *v;
    *v = (sgl_vec){NULL, 0, NULL};
    if (r.len == 0 || in_order(vt, &r))
        return r;
    if (!sgl_vec_unique(&r)) {
        /* someone else still sees these elements: sort a copy */
        sgl_vec s = sorted_copy(vt, &r, line, col);
        sgl_vec_free(vt, &r);
        return s;
    }
    sort_data(vt, &r);
    return r;
}
