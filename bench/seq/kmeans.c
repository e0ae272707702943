/* kmeans, sequential C: the same step as bench/hand/kmeans.c on one core. */
#include "../common.h"
#include "../kmeans_core.h"

#define K 8
#define ITERATIONS 10

int main(int argc, char **argv)
{
    int64_t n = arg_n(argc, argv, 2000000);
    int64_t *xs = rand_ints(n, 0, 100000, 1), *ys = rand_ints(n, 0, 100000, 2);
    int64_t c[2 * K + 1];
    for (int i = 0; i < K; i++) {
        c[i] = xs[i];
        c[K + i] = ys[i];
    }
    int64_t cost = 0;
    double t0 = now_s();
    for (int it = 0; it < ITERATIONS; it++) {
        int64_t st[3 * K + 1] = {0};
        kmeans_assign(xs, ys, n, c, c + K, K, st);
        kmeans_update(st, K, c, c + K);
        cost = st[3 * K];
    }
    double t1 = now_s();
    c[2 * K] = cost;
    printf("result %lld\ntime %.9f\n", (long long)checksum(c, 2 * K + 1), t1 - t0);
    free(xs);
    free(ys);
    return 0;
}
