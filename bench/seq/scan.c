/* bench/seq/scan.c: sequential inclusive prefix sums of n ints (default
 * 2e7), in place. */
#include "../common.h"

int main(int argc, char **argv)
{
    int64_t n = arg_n(argc, argv, 20000000);
    int64_t *v = rand_ints(n, 0, 1000, 7);
    double t0 = now_s();
    for (int64_t i = 1; i < n; i++) v[i] += v[i - 1];
    double t1 = now_s();
    printf("result %lld\ntime %.9f\n", (long long)checksum(v, n), t1 - t0);
    free(v);
    return 0;
}
