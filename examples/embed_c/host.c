/*
 * host.c: a C program calling SGL functions from the shared library built
 * from vecops.sgl (see the Makefile in this folder's parent and
 * docs/embedding.md).
 */
#include <stdio.h>
#include <stdlib.h>

#include "vecops.h"

int main(void)
{
    if (vecops_init(NULL, 4) != VECOPS_OK) { /* one level of 4 threads */
        fprintf(stderr, "init: %s\n", vecops_last_error());
        return 1;
    }
    enum { N = 1000 };
    int64_t *xs = malloc(N * sizeof *xs);
    double *fs = malloc(N * sizeof *fs);
    if (!xs || !fs) return 1;
    for (int i = 0; i < N; i++) {
        xs[i] = i;
        fs[i] = 0.5 * i;
    }

    /* an argument borrows the caller's memory (owner NULL) */
    sglc_vec v = {xs, N, NULL};
    int64_t total = 0;
    if (vecops_tree_sum(&v, &total) != VECOPS_OK) return 1;
    printf("tree_sum = %lld\n", (long long)total);

    /* a result is the library's: free it with vecops_vec_free */
    sglc_vec f = {fs, N, NULL}, r = {0};
    if (vecops_scale(&f, 2.0, &r) != VECOPS_OK) return 1;
    printf("scale: len %lld, r[999] = %g\n", (long long)r.len, ((double *)r.data)[999]);
    vecops_vec_free(&r, 1);

    /* a run-time error comes back as an error code with its message */
    int64_t x = 0;
    int rc = vecops_at(&v, N + 5, &x);
    printf("at(v, %d): code %d, line %d, col %d, node %s: %s\n", N + 5, rc,
           vecops_last_error_line(), vecops_last_error_col(), vecops_last_error_node(),
           vecops_last_error_what());

    /* ...and the library still works */
    if (vecops_at(&v, 7, &x) != VECOPS_OK) return 1;
    printf("at(v, 7) = %lld\n", (long long)x);
    fflush(stdout);
    if (vecops_greet(3) != VECOPS_OK) return 1; /* prints to stdout */

    vecops_finalize();
    free(xs);
    free(fs);
    return 0;
}
