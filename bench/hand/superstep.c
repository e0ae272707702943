/* bench/hand/superstep.c: the cost of one superstep written by hand, k
 * steps (default 10^4), each sending one int to every child, incrementing
 * it there and gathering one int back.
 *   several MPI processes: MPI_Bcast + MPI_Gather of one int per step;
 *   one process: an OpenMP parallel region per step (its end is the
 *   barrier), OMP_NUM_THREADS threads. */
#include "hybrid.h"

int main(int argc, char **argv)
{
    hybrid_init(&argc, &argv);
    int64_t k = arg_n(argc, argv, 10000);
    int64_t total = 0;
    double t0, t1;
    if (g_size > 1) {
        int64_t *xs = xmalloc((size_t)g_size * sizeof *xs);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (int64_t it = 0; it < k; it++) {
            int64_t x = it;
            MPI_Bcast(&x, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
            x += 1;
            MPI_Gather(&x, 1, MPI_INT64_T, xs, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
            if (g_rank == 0)
                for (int i = 0; i < g_size; i++) total += xs[i];
        }
        t1 = MPI_Wtime();
        free(xs);
    } else {
        int nt = omp_get_max_threads();
        int64_t *xs = xmalloc((size_t)nt * 64 * sizeof *xs); /* one cache line each */
        t0 = MPI_Wtime();
        for (int64_t it = 0; it < k; it++) {
#pragma omp parallel num_threads(nt)
            {
                int t = omp_get_thread_num();
                int64_t x = it;
                x += 1;
                xs[t * 64] = x;
            }
            for (int i = 0; i < nt; i++) total += xs[i * 64];
        }
        t1 = MPI_Wtime();
        free(xs);
    }
    report(total, t1 - t0);
    MPI_Finalize();
    return 0;
}
