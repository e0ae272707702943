/*
 * sortutil.h: sorting helpers of the hand-written and sequential sort
 * programs: a typed introsort of int64 (the strong baseline: comparisons
 * inline, no comparator call), on blocks (one per thread), then parallel
 * rounds of two-way merges.
 */
#ifndef BENCH_SORTUTIL_H
#define BENCH_SORTUTIL_H

#include <stdbool.h>
#include <string.h>

#include "common.h"

/* ---- introsort: quicksort (median of three, of nine on long ranges),
 * runs equal to an enclosing pivot swept aside in one pass, heapsort past
 * 2 log2 n levels, insertion sort below 24 elements. */

static inline void isort_swap(int64_t *x, int64_t *y)
{
    int64_t t = *x;
    *x = *y;
    *y = t;
}

static inline void isort_insertion(int64_t *a, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        int64_t x = a[i], j = i;
        for (; j > 0 && x < a[j - 1]; j--) a[j] = a[j - 1];
        a[j] = x;
    }
}

static inline void isort_sift(int64_t *a, int64_t i, int64_t n)
{
    int64_t x = a[i];
    for (int64_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && a[c] < a[c + 1]) c++;
        if (!(x < a[c])) break;
        a[i] = a[c];
    }
    a[i] = x;
}

static inline void isort_heap(int64_t *a, int64_t n)
{
    for (int64_t i = n / 2; i-- > 0;) isort_sift(a, i, n);
    for (int64_t e = n - 1; e > 0; e--) {
        isort_swap(&a[0], &a[e]);
        isort_sift(a, 0, e);
    }
}

static inline void isort_order3(int64_t *a, int64_t i, int64_t j, int64_t k)
{
    if (a[j] < a[i]) isort_swap(&a[i], &a[j]);
    if (a[k] < a[j]) {
        isort_swap(&a[j], &a[k]);
        if (a[j] < a[i]) isort_swap(&a[i], &a[j]);
    }
}

static void isort_rec(int64_t *a, int64_t n, int depth, bool leftmost)
{
    while (n > 24) {
        if (depth-- == 0) {
            isort_heap(a, n);
            return;
        }
        int64_t h = n / 2;
        isort_order3(a, 0, h, n - 1);
        if (n > 128) {
            isort_order3(a, 1, h - 1, n - 2);
            isort_order3(a, 2, h + 1, n - 3);
            isort_order3(a, h - 1, h, h + 1);
        }
        isort_swap(&a[0], &a[h]);
        int64_t p = a[0], i = 0, j = n;
        if (!leftmost && !(a[-1] < p)) {
            /* p equals the enclosing pivot: sweep the elements equal to it */
            for (;;) {
                do i++; while (i < n && !(p < a[i]));
                do j--; while (p < a[j]);
                if (i >= j) break;
                isort_swap(&a[i], &a[j]);
            }
            a += j + 1;
            n -= j + 1;
            continue;
        }
        do i++; while (i < n && a[i] < p);
        do j--; while (j > 0 && !(a[j] < p));
        while (i < j) {
            isort_swap(&a[i], &a[j]);
            do i++; while (a[i] < p);
            do j--; while (!(a[j] < p));
        }
        isort_swap(&a[0], &a[j]);
        if (j < n - j - 1) {
            isort_rec(a, j, depth, leftmost);
            a += j + 1;
            n -= j + 1;
            leftmost = false;
        } else {
            isort_rec(a + j + 1, n - j - 1, depth, false);
            n = j;
        }
    }
    isort_insertion(a, n);
}

/* Sorts a[0..n) ascending. */
static inline void introsort_i64(int64_t *a, int64_t n)
{
    int depth = 0;
    for (int64_t m = n; m > 1; m >>= 1) depth += 2;
    if (n > 1) isort_rec(a, n, depth, true);
}

static inline void merge2(const int64_t *x, int64_t nx, const int64_t *y, int64_t ny, int64_t *out)
{
    int64_t i = 0, j = 0, k = 0;
    while (i < nx && j < ny) out[k++] = y[j] < x[i] ? y[j++] : x[i++];
    if (i < nx) memcpy(out + k, x + i, (size_t)(nx - i) * sizeof *x);
    if (j < ny) memcpy(out + k, y + j, (size_t)(ny - j) * sizeof *y);
}

/* a holds nruns sorted runs, run r at [b[r], b[r+1]). Merges them in
 * rounds of pairs (each round in parallel); returns a or tmp, whichever
 * holds the result. b is overwritten. */
static inline int64_t *merge_runs(int64_t *a, int64_t *tmp, int64_t *b, int nruns)
{
    while (nruns > 1) {
        int npairs = nruns / 2;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
        for (int p = 0; p < npairs; p++)
            merge2(a + b[2 * p], b[2 * p + 1] - b[2 * p], a + b[2 * p + 1],
                   b[2 * p + 2] - b[2 * p + 1], tmp + b[2 * p]);
        if (nruns % 2)
            memcpy(tmp + b[nruns - 1], a + b[nruns - 1],
                   (size_t)(b[nruns] - b[nruns - 1]) * sizeof *a);
        int k = 0;
        for (int r = 0; r < nruns; r += 2) b[k++] = b[r];
        b[k] = b[nruns];
        nruns = k;
        int64_t *t = a;
        a = tmp;
        tmp = t;
    }
    return a;
}

/* Sort a[0..m) with nt blocks sorted by introsort (in parallel), then merged.
 * Returns a or tmp (m elements), whichever holds the result. */
static inline int64_t *block_sort(int64_t *a, int64_t *tmp, int64_t m, int nt)
{
    int64_t *b = xmalloc((size_t)(nt + 1) * sizeof *b);
    for (int t = 0; t <= nt; t++) b[t] = m * t / nt;
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(nt)
#endif
    for (int t = 0; t < nt; t++) introsort_i64(a + b[t], b[t + 1] - b[t]);
    int64_t *r = merge_runs(a, tmp, b, nt);
    free(b);
    return r;
}

#endif
