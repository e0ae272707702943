/*
 * hybrid.h: MPI helpers of the hand-written hybrid programs: start-up and
 * the block distribution that SGL's split uses (the first n % p blocks
 * have one element more).
 */
#ifndef BENCH_HYBRID_H
#define BENCH_HYBRID_H

#include <mpi.h>
#include <omp.h>

#include "../common.h"

static int g_rank, g_size;

static inline void hybrid_init(int *argc, char ***argv)
{
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    /* the OpenMP team starts here, not inside the timed region (as the
     * sglc executables start theirs before main) */
#pragma omp parallel
    {
        (void)omp_get_thread_num();
    }
}

/* counts[i], displs[i] of n items over p blocks, each item `unit` elements. */
static inline void block_counts(int64_t n, int p, int64_t unit, int *counts, int *displs)
{
    int64_t base = n / p, extra = n % p, pos = 0;
    for (int i = 0; i < p; i++) {
        int64_t c = base + (i < extra ? 1 : 0);
        counts[i] = (int)(c * unit);
        displs[i] = (int)(pos * unit);
        pos += c;
    }
}

static inline void report(int64_t result, double seconds)
{
    if (g_rank == 0) {
        printf("result %lld\ntime %.9f\n", (long long)result, seconds);
        fflush(stdout);
    }
}

#endif
