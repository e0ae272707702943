/* bench/loops/spmv.c: CSR sparse matrix-vector product as a C programmer
 * writes it (the same input, loops and result line as spmv.sgl). */
#include "../common.h"

int main(int argc, char **argv)
{
    int64_t n = arg_n(argc, argv, 200000);
    int64_t reps = argc > 2 ? strtoll(argv[2], NULL, 10) : 10;
    int64_t *cnt = rand_ints(n, 0, 32, 41);
    int64_t *rp = xmalloc((size_t)(n + 1) * sizeof *rp);
    rp[0] = 0;
    for (int64_t r = 0; r < n; r++) rp[r + 1] = rp[r] + cnt[r];
    int64_t nnz = rp[n];
    int64_t *col = rand_ints(nnz, 0, n, 42);
    double *val = rand_floats(nnz, 43);
    double *x = rand_floats(n, 44);
    double *y = xmalloc((size_t)n * sizeof *y);
    for (int64_t r = 0; r < n; r++) y[r] = 0.0;
    double t0 = now_s();
    for (int64_t rep = 0; rep < reps; rep++) {
        for (int64_t r = 0; r < n; r++) {
            double s = 0.0;
            for (int64_t p = rp[r]; p < rp[r + 1]; p++) s += val[p] * x[col[p]];
            y[r] = s;
        }
    }
    double t1 = now_s();
    double s = 0.0;
    for (int64_t r = 0; r < n; r++) s += y[r];
    printf("result %.17g\ntime %.9f\n", s, t1 - t0);
    free(cnt); free(rp); free(col); free(val); free(x); free(y);
    return 0;
}
