/* bench/hand/sort.c: hybrid MPI + OpenMP PSRS of n ints (default 5e6).
 * Scatterv (in place on the root); every process sorts its block (a typed
 * introsort, sortutil.h, on one block per thread, then merges); regular samples gathered on the
 * root, pivots broadcast; buckets exchanged directly with MPI_Alltoallv;
 * the received runs merged; Gatherv of the sorted parts to the root. */
#include "../sortutil.h"
#include "hybrid.h"

static int64_t upper_bound(const int64_t *a, int64_t lo, int64_t hi, int64_t x)
{
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] <= x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int main(int argc, char **argv)
{
    hybrid_init(&argc, &argv);
    int64_t n = arg_n(argc, argv, 5000000);
    int64_t *v = g_rank == 0 ? rand_ints(n, 0, 1000000000, 2024) : NULL;
    int p = g_size, nt = omp_get_max_threads();
    int *counts = xmalloc(p * sizeof(int)), *displs = xmalloc(p * sizeof(int));
    int *scounts = xmalloc(p * sizeof(int)), *sdispls = xmalloc(p * sizeof(int));
    int *rcounts = xmalloc(p * sizeof(int)), *rdispls = xmalloc(p * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();

    block_counts(n, p, 1, counts, displs);
    int64_t m = counts[g_rank];
    int64_t *mine = g_rank == 0 ? v : xmalloc((size_t)m * sizeof *mine);
    MPI_Scatterv(v, counts, displs, MPI_INT64_T, g_rank == 0 ? MPI_IN_PLACE : mine, (int)m,
                 MPI_INT64_T, 0, MPI_COMM_WORLD);
    int64_t *tmp = xmalloc((size_t)m * sizeof *tmp);
    int64_t *sorted = block_sort(mine, tmp, m, nt);

    if (p == 1) {
        if (sorted != v) memcpy(v, sorted, (size_t)n * sizeof *v);
    } else {
        /* regular samples and pivots */
        int64_t smp[p], piv[p];
        int ns = m > 0 ? p : 0, npiv = 0;
        for (int k = 0; k < ns; k++) smp[k] = sorted[k * m / p];
        int64_t *pool = NULL;
        if (g_rank == 0) pool = xmalloc((size_t)p * p * sizeof *pool);
        MPI_Gather(&ns, 1, MPI_INT, rcounts, 1, MPI_INT, 0, MPI_COMM_WORLD);
        int npool = 0;
        if (g_rank == 0)
            for (int i = 0; i < p; i++) {
                rdispls[i] = npool;
                npool += rcounts[i];
            }
        MPI_Gatherv(smp, ns, MPI_INT64_T, pool, rcounts, rdispls, MPI_INT64_T, 0, MPI_COMM_WORLD);
        if (g_rank == 0) {
            introsort_i64(pool, npool);
            if (npool > 0)
                for (int j = 1; j < p; j++) piv[npiv++] = pool[(int64_t)j * npool / p];
        }
        MPI_Bcast(&npiv, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Bcast(piv, npiv, MPI_INT64_T, 0, MPI_COMM_WORLD);
        free(pool);
        /* buckets: j holds (piv[j-1], piv[j]] */
        int64_t start = 0;
        for (int j = 0; j < p; j++) {
            int64_t stop = j < npiv ? upper_bound(sorted, start, m, piv[j]) : (j == npiv ? m : start);
            sdispls[j] = (int)start;
            scounts[j] = (int)(stop - start);
            start = stop;
        }
        MPI_Alltoall(scounts, 1, MPI_INT, rcounts, 1, MPI_INT, MPI_COMM_WORLD);
        int64_t got = 0;
        for (int i = 0; i < p; i++) {
            rdispls[i] = (int)got;
            got += rcounts[i];
        }
        int64_t *recv = xmalloc((size_t)got * sizeof *recv);
        int64_t *rtmp = xmalloc((size_t)got * sizeof *rtmp);
        MPI_Alltoallv(sorted, scounts, sdispls, MPI_INT64_T, recv, rcounts, rdispls, MPI_INT64_T,
                      MPI_COMM_WORLD);
        int64_t b[p + 1];
        for (int i = 0; i < p; i++) b[i] = rdispls[i];
        b[p] = got;
        int64_t *res = merge_runs(recv, rtmp, b, p);
        /* gather the sorted parts on the root */
        int cnt = (int)got;
        MPI_Gather(&cnt, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (g_rank == 0) {
            int pos = 0;
            for (int i = 0; i < p; i++) {
                displs[i] = pos;
                pos += counts[i];
            }
        }
        MPI_Gatherv(res, cnt, MPI_INT64_T, v, counts, displs, MPI_INT64_T, 0, MPI_COMM_WORLD);
        free(recv);
        free(rtmp);
    }

    double t1 = MPI_Wtime();
    report(g_rank == 0 ? checksum(v, n) : 0, t1 - t0);
    free(tmp);
    if (g_rank != 0) free(mine);
    free(v);
    free(counts);
    free(displs);
    free(scounts);
    free(sdispls);
    free(rcounts);
    free(rdispls);
    MPI_Finalize();
    return 0;
}
