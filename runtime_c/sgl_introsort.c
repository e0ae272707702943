/*
 * sgl_introsort.c: the introsort of int64 behind the builtin sort's short
 * int inputs (sgl_sort.c; declared in sgl_sort.h): quicksort with a median
 * of three or nine, elements equal to an enclosing pivot swept aside in
 * one pass, heapsort past 2 log2 n levels, insertion sort below
 * SGL_SORT_SMALL.  In place and not stable (equal ints are the same value).
 */
#include <stdbool.h>
#include <stdint.h>

#include "sgl_sort.h"

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
