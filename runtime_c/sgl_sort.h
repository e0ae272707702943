/*
 * sgl_sort.h: the typed sorts behind the builtin sort (internal; sgl_sort.c).
 *
 * No comparator is called per comparison: 64-bit integers are compared
 * with `<` inline, and floats are sorted as integer keys that order them
 * as the builtin does (see sgl_sort.c).  Every sort here works in place,
 * with no buffer beyond a few KiB of stack.  Neither sort is stable, and
 * neither needs to be: the order they sort by is total on the values that
 * can be told apart, so equal keys are equal bit patterns.
 */
#ifndef SGL_SORT_H
#define SGL_SORT_H

#include <stdbool.h>
#include <stdint.h>

/* Below this length the introsort uses insertion sort. */
#define SGL_SORT_SMALL 24
/* From this length on, ints are sorted by the in-place MSD radix sort, and
 * so is every bucket of it that is at least this long; shorter inputs and
 * buckets by introsort. */
#define SGL_SORT_RADIX_MIN 256

/* Sorts a[0..n) ascending in place: introsort (quicksort with a median of
 * three or of nine, equal keys swept aside in one pass, heapsort past
 * 2 log2 n levels, insertion sort below SGL_SORT_SMALL). */
void sgl_introsort_i64(int64_t *a, int64_t n);

/* The same with a given limit of partitioning levels before heapsort takes
 * over (0: heapsort of the whole range); for the tests. */
void sgl_introsort_depth_i64(int64_t *a, int64_t n, int depth);

/* Sorts a[0..n) ascending in place by MSD radix sort on 8-bit digits
 * (American flag sort), from the most significant digit on which the keys
 * differ, skipping the digits on which a bucket's keys agree, with buckets
 * shorter than SGL_SORT_RADIX_MIN sorted by introsort.  Any n. */
void sgl_radix_sort_i64(int64_t *a, int64_t n);

/* Sorts a[0..n) ascending in place: the radix sort from SGL_SORT_RADIX_MIN
 * elements on, else the introsort. */
void sgl_sort_i64(int64_t *a, int64_t n);

/* Sorts the n doubles of a in place in the builtin's order: ascending by
 * `<`, -0.0 before 0.0, and every NaN after all the other values, the NaNs
 * in their original order (as sgl_sort_i64 on integer keys). */
void sgl_sort_f64(double *a, int64_t n);

/* True when a[0..n) is already in the order sgl_sort_i64 / sgl_sort_f64
 * give (they stop at the first element out of order). */
bool sgl_sorted_i64(const int64_t *a, int64_t n);
bool sgl_sorted_f64(const double *a, int64_t n);

#endif
