/* bench/hand/matvec.c: hybrid MPI + OpenMP y = A x, A n x n ints row-major
 * (default n = 4000). Rows scattered (Scatterv, in place on the root), x
 * broadcast, OpenMP loop over the rows, y gathered (Gatherv, in place). */
#include "hybrid.h"

int main(int argc, char **argv)
{
    hybrid_init(&argc, &argv);
    int64_t n = arg_n(argc, argv, 4000);
    int64_t *a = NULL, *x = NULL, *y = NULL;
    if (g_rank == 0) {
        a = rand_ints(n * n, 0, 100, 11);
        x = rand_ints(n, 0, 100, 12);
        y = xmalloc((size_t)n * sizeof *y);
    } else {
        x = xmalloc((size_t)n * sizeof *x);
    }
    int *counts = xmalloc(g_size * sizeof(int)), *displs = xmalloc(g_size * sizeof(int));
    int *rcounts = xmalloc(g_size * sizeof(int)), *rdispls = xmalloc(g_size * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();

    block_counts(n, g_size, n, counts, displs);
    block_counts(n, g_size, 1, rcounts, rdispls);
    int64_t rows = rcounts[g_rank];
    int64_t *mya = g_rank == 0 ? a : xmalloc((size_t)(rows * n) * sizeof *mya);
    int64_t *myy = g_rank == 0 ? y : xmalloc((size_t)rows * sizeof *myy);
    MPI_Scatterv(a, counts, displs, MPI_INT64_T, g_rank == 0 ? MPI_IN_PLACE : mya,
                 (int)(rows * n), MPI_INT64_T, 0, MPI_COMM_WORLD);
    MPI_Bcast(x, (int)n, MPI_INT64_T, 0, MPI_COMM_WORLD);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < rows; i++) {
        const int64_t *r = mya + i * n;
        int64_t s = 0;
        for (int64_t j = 0; j < n; j++) s += r[j] * x[j];
        myy[i] = s;
    }
    MPI_Gatherv(g_rank == 0 ? MPI_IN_PLACE : myy, (int)rows, MPI_INT64_T, y, rcounts, rdispls,
                MPI_INT64_T, 0, MPI_COMM_WORLD);

    double t1 = MPI_Wtime();
    report(g_rank == 0 ? checksum(y, n) : 0, t1 - t0);
    if (g_rank != 0) {
        free(mya);
        free(myy);
    }
    free(a);
    free(x);
    free(y);
    free(counts);
    free(displs);
    free(rcounts);
    free(rdispls);
    MPI_Finalize();
    return 0;
}
