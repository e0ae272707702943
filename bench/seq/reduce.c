/* bench/seq/reduce.c: sequential sum of n ints (default 5e7). */
#include "../common.h"

int main(int argc, char **argv)
{
    int64_t n = arg_n(argc, argv, 50000000);
    int64_t *v = rand_ints(n, 0, 1000, 42);
    double t0 = now_s();
    int64_t s = 0;
    for (int64_t i = 0; i < n; i++) s += v[i];
    double t1 = now_s();
    printf("result %lld\ntime %.9f\n", (long long)s, t1 - t0);
    free(v);
    return 0;
}
