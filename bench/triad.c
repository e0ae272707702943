/* bench/triad.c: the memory bandwidth of one thread, as STREAM's triad
 * measures it: a[i] = b[i] + s * c[i] over three arrays of n doubles
 * (default 2^24: 384 MiB in all, far beyond any cache), repeated; the
 * best repetition counts 3 * 8 * n bytes (two arrays read, one written;
 * the write-allocate read of a is not counted, as in STREAM).
 * The arrays are advised for huge pages (MADV_HUGEPAGE), as sglc's big
 * vectors and NumPy's arrays are, so that the page size does not lower
 * the limit the kernels are measured against.
 * Prints "bandwidth B" (bytes per second) and "time T" (the best
 * repetition).  Usage: triad [n [reps]]. */
#define _GNU_SOURCE /* MADV_HUGEPAGE */
#include "common.h"

#include <sys/mman.h>

/* n bytes at a 2 MiB boundary, advised for huge pages where the kernel has them */
static double *huge_array(size_t n)
{
    size_t two = (size_t)2 << 20, len = (n + two - 1) / two * two;
    void *p = aligned_alloc(two, len);
    if (!p) { perror("aligned_alloc"); exit(1); }
#ifdef MADV_HUGEPAGE
    (void)madvise(p, len, MADV_HUGEPAGE);
#endif
    return p;
}

int main(int argc, char **argv)
{
    int64_t n = arg_n(argc, argv, (int64_t)1 << 24);
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    double *a = huge_array((size_t)n * sizeof *a), *b = huge_array((size_t)n * sizeof *b),
           *c = huge_array((size_t)n * sizeof *c);
    for (int64_t i = 0; i < n; i++) {
        a[i] = 0.0;
        b[i] = 1.0;
        c[i] = 2.0;
    }
    double best = 1e30, s = 3.0;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        for (int64_t i = 0; i < n; i++)
            a[i] = b[i] + s * c[i];
        double t = now_s() - t0;
        best = t < best ? t : best;
        s += a[n / 2] * 1e-9; /* the loop's result is used */
    }
    printf("bandwidth %.6e\ntime %.9f\n", 3.0 * 8.0 * (double)n / best, best);
    free(a);
    free(b);
    free(c);
    return 0;
}
