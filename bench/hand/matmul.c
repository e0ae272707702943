/* bench/hand/matmul.c: hybrid MPI + OpenMP C = A B, n x n ints row-major
 * (default n = 400), the i-k-j loops on flat arrays. Rows of A scattered
 * (Scatterv, in place on the root), B broadcast, OpenMP loop over the rows,
 * the rows of C gathered (Gatherv, in place). */
#include <string.h>

#include "hybrid.h"

int main(int argc, char **argv)
{
    hybrid_init(&argc, &argv);
    int64_t n = arg_n(argc, argv, 400);
    int64_t *a = NULL, *b = NULL, *c = NULL;
    if (g_rank == 0) {
        a = rand_ints(n * n, 0, 100, 21);
        b = rand_ints(n * n, 0, 100, 22);
        c = xmalloc((size_t)(n * n) * sizeof *c);
    } else {
        b = xmalloc((size_t)(n * n) * sizeof *b);
    }
    int *counts = xmalloc(g_size * sizeof(int)), *displs = xmalloc(g_size * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();

    block_counts(n, g_size, n, counts, displs);
    int64_t rows = counts[g_rank] / n;
    int64_t *mya = g_rank == 0 ? a : xmalloc((size_t)(rows * n) * sizeof *mya);
    int64_t *myc = g_rank == 0 ? c : xmalloc((size_t)(rows * n) * sizeof *myc);
    MPI_Scatterv(a, counts, displs, MPI_INT64_T, g_rank == 0 ? MPI_IN_PLACE : mya,
                 (int)(rows * n), MPI_INT64_T, 0, MPI_COMM_WORLD);
    MPI_Bcast(b, (int)(n * n), MPI_INT64_T, 0, MPI_COMM_WORLD);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < rows; i++) {
        int64_t *ci = myc + i * n;
        memset(ci, 0, (size_t)n * sizeof *ci);
        for (int64_t k = 0; k < n; k++) {
            int64_t aik = mya[i * n + k];
            const int64_t *bk = b + k * n;
            for (int64_t j = 0; j < n; j++) ci[j] += aik * bk[j];
        }
    }
    MPI_Gatherv(g_rank == 0 ? MPI_IN_PLACE : myc, (int)(rows * n), MPI_INT64_T, c, counts,
                displs, MPI_INT64_T, 0, MPI_COMM_WORLD);

    double t1 = MPI_Wtime();
    report(g_rank == 0 ? checksum(c, n * n) : 0, t1 - t0);
    if (g_rank != 0) {
        free(mya);
        free(myc);
    }
    free(a);
    free(b);
    free(c);
    free(counts);
    free(displs);
    MPI_Finalize();
    return 0;
}
