/* bench/seq/sort.c: sequential sort of n ints (default 5e6) with the typed
 * introsort of sortutil.h. */
#include "../sortutil.h"

int main(int argc, char **argv)
{
    int64_t n = arg_n(argc, argv, 5000000);
    int64_t *v = rand_ints(n, 0, 1000000000, 2024);
    double t0 = now_s();
    introsort_i64(v, n);
    double t1 = now_s();
    printf("result %lld\ntime %.9f\n", (long long)checksum(v, n), t1 - t0);
    free(v);
    return 0;
}
