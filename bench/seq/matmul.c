/* bench/seq/matmul.c: sequential C = A B, n x n ints row-major (default
 * n = 400), the i-k-j loops on flat arrays. */
#include <string.h>

#include "../common.h"

int main(int argc, char **argv)
{
    int64_t n = arg_n(argc, argv, 400);
    int64_t *a = rand_ints(n * n, 0, 100, 21);
    int64_t *b = rand_ints(n * n, 0, 100, 22);
    int64_t *c = xmalloc((size_t)(n * n) * sizeof *c);
    double t0 = now_s();
    memset(c, 0, (size_t)(n * n) * sizeof *c);
    for (int64_t i = 0; i < n; i++) {
        int64_t *ci = c + i * n;
        for (int64_t k = 0; k < n; k++) {
            int64_t aik = a[i * n + k];
            const int64_t *bk = b + k * n;
            for (int64_t j = 0; j < n; j++) ci[j] += aik * bk[j];
        }
    }
    double t1 = now_s();
    printf("result %lld\ntime %.9f\n", (long long)checksum(c, n * n), t1 - t0);
    free(a);
    free(b);
    free(c);
    return 0;
}
