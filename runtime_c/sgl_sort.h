/*
 * sgl_sort.h: the typed sorts behind the builtin sort (internal; sgl_sort.c).
 *
 * No comparator is called per comparison: 64-bit integers are compared
 * with `<` inline, and floats are sorted as integer keys that order them
 * as the builtin does (see sgl_sort.c).  Neither sort is stable, and
 * neither needs to be: the order they sort by is total on the values that
 * can be told apart, so equal keys are equal bit patterns.
 */
#ifndef SGL_SORT_H
#define SGL_SORT_H

#include <stdint.h>

/* Below this length the sorts use insertion sort. */
#define SGL_SORT_SMALL 24
/* From this length on, ints are sorted by LSD radix sort (with a buffer of
 * n elements); below it by introsort, in place. */
#define SGL_SORT_RADIX_MIN 1024
/* Inputs of at most this many ascending runs are merged, not sorted. */
#define SGL_SORT_MAX_RUNS 16

/* Sorts a[0..n) ascending in place: introsort (quicksort with a median of
 * three or of nine, equal keys swept aside in one pass, heapsort past
 * 2 log2 n levels, insertion sort below SGL_SORT_SMALL). */
void sgl_introsort_i64(int64_t *a, int64_t n);

/* The same with a given limit of partitioning levels before heapsort takes
 * over (0: heapsort of the whole range); for the tests. */
void sgl_introsort_depth_i64(int64_t *a, int64_t n, int depth);

/* Sorts src[0..n) ascending by LSD radix sort on 8-bit digits, skipping the
 * digits on which all keys agree; the result is in dst (n elements),
 * tmp (n elements) is scratch.  src may be dst; it is not otherwise written. */
void sgl_radix_sort_i64(const int64_t *src, int64_t *dst, int64_t *tmp, int64_t n);

/* Writes the n doubles of src to dst (which must not overlap src) in the builtin's
 * order: ascending by `<`, -0.0 before 0.0, and every NaN after all the
 * other values, the NaNs in their original order.  tmp (n elements) is
 * scratch for the radix sort, or NULL to sort in place by introsort. */
void sgl_sort_f64(const double *src, double *dst, int64_t *tmp, int64_t n);

/* Splits a[0..n) (n >= 1) into its maximal ascending runs: returns their
 * number r <= maxruns, with run i at [bounds[i], bounds[i+1]) (bounds has
 * room for maxruns + 1), or 0 when there are more than maxruns (then it
 * has read a only up to the maxruns-th descent). */
int sgl_sort_runs_i64(const int64_t *a, int64_t n, int64_t *bounds, int maxruns);

/* Merges the nruns ascending runs of src (as sgl_sort_runs_i64 gives
 * them; bounds is overwritten) into dst, by rounds of pairwise merges;
 * tmp (n elements) is scratch.  src may be dst. */
void sgl_merge_runs_i64(const int64_t *src, int64_t *dst, int64_t *tmp, int64_t n,
                        int64_t *bounds, int nruns);

/* Sorts src[0..n) into dst (src may be dst): an input of at most
 * SGL_SORT_MAX_RUNS ascending runs (a concatenation of sorted vectors, as
 * gathered blocks are) by merging them, else by radix sort from
 * SGL_SORT_RADIX_MIN elements on, else by introsort.  tmp (n elements) is
 * scratch, or NULL: then only the introsort or a copy of sorted input. */
void sgl_sort_keys_i64(const int64_t *src, int64_t *dst, int64_t *tmp, int64_t n);

#endif
