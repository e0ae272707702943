/* bench/hand/scan.c: hybrid MPI + OpenMP inclusive prefix sums of n ints
 * (default 2e7). Scatterv (in place on the root); every thread scans its
 * block; thread totals are scanned; MPI_Exscan gives each process its
 * offset; a second pass adds the offsets; Gatherv (in place) to the root. */
#include "hybrid.h"

int main(int argc, char **argv)
{
    hybrid_init(&argc, &argv);
    int64_t n = arg_n(argc, argv, 20000000);
    int64_t *v = g_rank == 0 ? rand_ints(n, 0, 1000, 7) : NULL;
    int *counts = xmalloc(g_size * sizeof(int)), *displs = xmalloc(g_size * sizeof(int));
    int maxt = omp_get_max_threads();
    int64_t *tsum = xmalloc((size_t)(maxt + 1) * sizeof *tsum);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();

    block_counts(n, g_size, 1, counts, displs);
    int64_t m = counts[g_rank];
    int64_t *mine = g_rank == 0 ? v : xmalloc((size_t)m * sizeof *mine);
    MPI_Scatterv(v, counts, displs, MPI_INT64_T, g_rank == 0 ? MPI_IN_PLACE : mine, (int)m,
                 MPI_INT64_T, 0, MPI_COMM_WORLD);
    int64_t off = 0;
#pragma omp parallel
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int64_t lo = m * t / nt, hi = m * (t + 1) / nt, acc = 0;
        for (int64_t i = lo; i < hi; i++) {
            acc += mine[i];
            mine[i] = acc;
        }
        tsum[t + 1] = acc;
#pragma omp barrier
#pragma omp master
        {
            tsum[0] = 0;
            for (int k = 1; k <= nt; k++) tsum[k] += tsum[k - 1];
            int64_t total = tsum[nt], ex = 0;
            MPI_Exscan(&total, &ex, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
            off = g_rank == 0 ? 0 : ex;
        }
#pragma omp barrier
        int64_t add = off + tsum[t];
        if (add != 0)
            for (int64_t i = lo; i < hi; i++) mine[i] += add;
    }
    MPI_Gatherv(g_rank == 0 ? MPI_IN_PLACE : mine, (int)m, MPI_INT64_T, v, counts, displs,
                MPI_INT64_T, 0, MPI_COMM_WORLD);

    double t1 = MPI_Wtime();
    report(g_rank == 0 ? checksum(v, n) : 0, t1 - t0);
    if (g_rank != 0) free(mine);
    free(v);
    free(tsum);
    free(counts);
    free(displs);
    MPI_Finalize();
    return 0;
}
