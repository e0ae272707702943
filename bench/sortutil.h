/*
 * sortutil.h: sorting helpers of the hand-written and sequential sort
 * programs: qsort on blocks (one per thread), then parallel rounds of
 * two-way merges.
 */
#ifndef BENCH_SORTUTIL_H
#define BENCH_SORTUTIL_H

#include <string.h>

#include "common.h"

static void merge2(const int64_t *x, int64_t nx, const int64_t *y, int64_t ny, int64_t *out)
{
    int64_t i = 0, j = 0, k = 0;
    while (i < nx && j < ny) out[k++] = y[j] < x[i] ? y[j++] : x[i++];
    if (i < nx) memcpy(out + k, x + i, (size_t)(nx - i) * sizeof *x);
    if (j < ny) memcpy(out + k, y + j, (size_t)(ny - j) * sizeof *y);
}

/* a holds nruns sorted runs, run r at [b[r], b[r+1]). Merges them in
 * rounds of pairs (each round in parallel); returns a or tmp, whichever
 * holds the result. b is overwritten. */
static int64_t *merge_runs(int64_t *a, int64_t *tmp, int64_t *b, int nruns)
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

/* Sort a[0..m) with nt blocks sorted by qsort (in parallel), then merged.
 * Returns a or tmp (m elements), whichever holds the result. */
static int64_t *block_sort(int64_t *a, int64_t *tmp, int64_t m, int nt)
{
    int64_t *b = xmalloc((size_t)(nt + 1) * sizeof *b);
    for (int t = 0; t <= nt; t++) b[t] = m * t / nt;
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(nt)
#endif
    for (int t = 0; t < nt; t++) qsort(a + b[t], (size_t)(b[t + 1] - b[t]), sizeof *a, cmp_i64);
    int64_t *r = merge_runs(a, tmp, b, nt);
    free(b);
    return r;
}

#endif
