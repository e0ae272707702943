/* bench/hand/reduce.c: hybrid MPI + OpenMP sum of n ints (default 5e7).
 * Root scatters blocks (MPI_Scatterv, in place on the root), every process
 * sums its block with an OpenMP reduction, MPI_Reduce to the root. */
#include "hybrid.h"

int main(int argc, char **argv)
{
    hybrid_init(&argc, &argv);
    int64_t n = arg_n(argc, argv, 50000000);
    int64_t *v = g_rank == 0 ? rand_ints(n, 0, 1000, 42) : NULL;
    int *counts = xmalloc(g_size * sizeof(int)), *displs = xmalloc(g_size * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();

    block_counts(n, g_size, 1, counts, displs);
    int64_t m = counts[g_rank];
    int64_t *mine = g_rank == 0 ? v : xmalloc((size_t)m * sizeof *mine);
    MPI_Scatterv(v, counts, displs, MPI_INT64_T, g_rank == 0 ? MPI_IN_PLACE : mine, (int)m,
                 MPI_INT64_T, 0, MPI_COMM_WORLD);
    int64_t s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (int64_t i = 0; i < m; i++) s += mine[i];
    int64_t total = 0;
    MPI_Reduce(&s, &total, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);

    double t1 = MPI_Wtime();
    report(total, t1 - t0);
    if (g_rank != 0) free(mine);
    free(v);
    free(counts);
    free(displs);
    MPI_Finalize();
    return 0;
}
