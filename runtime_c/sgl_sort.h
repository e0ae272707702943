/*
 * sgl_sort.h: the typed sorts behind the builtin sort (internal; sgl_sort.c).
 *
 * No comparator is called per comparison: 64-bit integers are compared
 * with `<` inline, and floats are sorted as integer keys that order them
 * as the builtin does (see sgl_sort.c).  Every sort here works in place:
 * no buffer beyond a few KiB of stack, but for the merge of a few runs
 * (1/SGL_SORT_MERGE_BUF_DIV of the input).  Neither sort is stable, and
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
/* From SGL_SORT_RADIX_MIN elements on, inputs of at most this many
 * ascending runs are merged in place, not sorted ... */
#define SGL_SORT_MAX_RUNS 16
/* ... with a buffer of at most 1/SGL_SORT_MERGE_BUF_DIV of their length. */
#define SGL_SORT_MERGE_BUF_DIV 16

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

/* Splits a[0..n) (n >= 1) into its maximal ascending runs: returns their
 * number r <= maxruns, with run i at [bounds[i], bounds[i+1]) (bounds has
 * room for maxruns + 1), or 0 when there are more than maxruns (then it
 * has read a only up to the maxruns-th descent). */
int sgl_sort_runs_i64(const int64_t *a, int64_t n, int64_t *bounds, int maxruns);

/* Merges the nruns ascending runs of a[0..n) (as sgl_sort_runs_i64 gives
 * them; bounds is overwritten) in place, with buf (nbuf >= 0 elements) as
 * scratch: any nbuf works, a longer buf takes fewer rotations. */
void sgl_merge_runs_i64(int64_t *a, int64_t n, int64_t *bounds, int nruns, int64_t *buf,
                        int64_t nbuf);

/* Sorts a[0..n) ascending in place: from SGL_SORT_RADIX_MIN elements on,
 * an input of at most SGL_SORT_MAX_RUNS runs by merging them and any other
 * by the radix sort; else the introsort. */
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
