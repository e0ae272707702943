/* bench/seq/matvec.c: sequential y = A x, A n x n ints row-major (default
 * n = 4000). */
#include "../common.h"

int main(int argc, char **argv)
{
    int64_t n = arg_n(argc, argv, 4000);
    int64_t *a = rand_ints(n * n, 0, 100, 11);
    int64_t *x = rand_ints(n, 0, 100, 12);
    int64_t *y = xmalloc((size_t)n * sizeof *y);
    double t0 = now_s();
    for (int64_t i = 0; i < n; i++) {
        const int64_t *r = a + i * n;
        int64_t s = 0;
        for (int64_t j = 0; j < n; j++) s += r[j] * x[j];
        y[i] = s;
    }
    double t1 = now_s();
    printf("result %lld\ntime %.9f\n", (long long)checksum(y, n), t1 - t0);
    free(a);
    free(x);
    free(y);
    return 0;
}
