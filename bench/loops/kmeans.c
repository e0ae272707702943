/* bench/loops/kmeans.c: k-means assignment as a C programmer writes it
 * (the same input, loops and result line as kmeans.sgl; arguments n, reps,
 * k, so that the compiler cannot specialise on k). */
#include "../common.h"

int main(int argc, char **argv)
{
    int64_t n = arg_n(argc, argv, 2000000);
    int64_t reps = argc > 2 ? strtoll(argv[2], NULL, 10) : 1;
    int64_t k = argc > 3 ? strtoll(argv[3], NULL, 10) : 8;
    int64_t *xs = rand_ints(n, 0, 100000, 31);
    int64_t *ys = rand_ints(n, 0, 100000, 32);
    int64_t *cx = xmalloc((size_t)k * sizeof *cx), *cy = xmalloc((size_t)k * sizeof *cy);
    for (int64_t c = 0; c < k; c++) { cx[c] = xs[c]; cy[c] = ys[c]; }
    double t0 = now_s();
    int64_t *r = calloc((size_t)(3 * k), sizeof *r);
    if (!r) { perror("calloc"); return 1; }
    int64_t *sx = r, *sy = r + k, *cnt = r + 2 * k;
    for (int64_t rep = 0; rep < reps; rep++) {
        for (int64_t i = 0; i < n; i++) {
            int64_t x = xs[i], y = ys[i];
            int64_t best = 0;
            int64_t bd = (x - cx[0]) * (x - cx[0]) + (y - cy[0]) * (y - cy[0]);
            for (int64_t c = 1; c < k; c++) {
                int64_t d = (x - cx[c]) * (x - cx[c]) + (y - cy[c]) * (y - cy[c]);
                if (d < bd) { bd = d; best = c; }
            }
            sx[best] += x;
            sy[best] += y;
            cnt[best] += 1;
        }
    }
    double t1 = now_s();
    printf("result %lld\ntime %.9f\n", (long long)checksum(r, 3 * k), t1 - t0);
    free(xs); free(ys); free(cx); free(cy); free(r);
    return 0;
}
