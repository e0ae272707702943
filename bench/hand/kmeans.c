/*
 * kmeans, hand-written MPI + OpenMP: the points are scattered once
 * (MPI_Scatterv), then every iteration broadcasts the centroids (MPI_Bcast),
 * each thread computes the statistics of its block of the process's points,
 * the threads' statistics are added, and MPI_Reduce adds the processes' on
 * the root, which updates the centroids. Timed: the iterations only.
 */
#include "hybrid.h"
#include "../kmeans_core.h"

#define K 8
#define ITERATIONS 10
#define NST (3 * K + 1)

int main(int argc, char **argv)
{
    hybrid_init(&argc, &argv);
    int64_t n = arg_n(argc, argv, 2000000);
    int64_t *xs = NULL, *ys = NULL;
    int64_t c[2 * K]; /* cx then cy */
    if (g_rank == 0) {
        xs = rand_ints(n, 0, 100000, 1);
        ys = rand_ints(n, 0, 100000, 2);
        for (int i = 0; i < K; i++) {
            c[i] = xs[i];
            c[K + i] = ys[i];
        }
    }
    int *counts = xmalloc((size_t)g_size * sizeof *counts);
    int *displs = xmalloc((size_t)g_size * sizeof *displs);
    block_counts(n, g_size, 1, counts, displs);
    int64_t nl = counts[g_rank];
    int64_t *lx = xmalloc((size_t)(nl > 0 ? nl : 1) * sizeof *lx);
    int64_t *ly = xmalloc((size_t)(nl > 0 ? nl : 1) * sizeof *ly);
    MPI_Scatterv(xs, counts, displs, MPI_INT64_T, lx, (int)nl, MPI_INT64_T, 0, MPI_COMM_WORLD);
    MPI_Scatterv(ys, counts, displs, MPI_INT64_T, ly, (int)nl, MPI_INT64_T, 0, MPI_COMM_WORLD);
    free(xs);
    free(ys);

    int64_t cost = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    for (int it = 0; it < ITERATIONS; it++) {
        MPI_Bcast(c, 2 * K, MPI_INT64_T, 0, MPI_COMM_WORLD);
        int64_t st[NST] = {0};
#pragma omp parallel
        {
            int t = omp_get_thread_num(), nt = omp_get_num_threads();
            int64_t lo = nl * t / nt, hi = nl * (t + 1) / nt;
            int64_t mine[NST] = {0};
            kmeans_assign(lx + lo, ly + lo, hi - lo, c, c + K, K, mine);
#pragma omp critical
            for (int j = 0; j < NST; j++) st[j] += mine[j];
        }
        int64_t tot[NST];
        MPI_Reduce(st, tot, NST, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
        if (g_rank == 0) {
            kmeans_update(tot, K, c, c + K);
            cost = tot[3 * K];
        }
    }
    double t1 = now_s();
    int64_t all[2 * K + 1];
    for (int i = 0; i < 2 * K; i++) all[i] = c[i];
    all[2 * K] = cost;
    report(checksum(all, 2 * K + 1), t1 - t0);
    free(lx);
    free(ly);
    free(counts);
    free(displs);
    MPI_Finalize();
    return 0;
}
