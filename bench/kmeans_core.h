/*
 * kmeans_core.h: the k-means step shared by bench/hand/kmeans.c and
 * bench/seq/kmeans.c, written as a C programmer writes it: for each point
 * the nearest centroid by squared distance (ties to the lower one), then
 * per centroid the sums of x and y and the count, and the total squared
 * distance; st has 3k + 1 entries, as in bench/sgl/kmeans.sgl.
 */
#ifndef BENCH_KMEANS_CORE_H
#define BENCH_KMEANS_CORE_H

#include <stdint.h>

static inline void kmeans_assign(const int64_t *restrict px, const int64_t *restrict py, int64_t n,
                                 const int64_t *restrict cx, const int64_t *restrict cy, int k,
                                 int64_t *restrict st)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t x = px[i], y = py[i];
        int best = 0;
        int64_t bd = (x - cx[0]) * (x - cx[0]) + (y - cy[0]) * (y - cy[0]);
        for (int c = 1; c < k; c++) {
            int64_t d = (x - cx[c]) * (x - cx[c]) + (y - cy[c]) * (y - cy[c]);
            if (d < bd) {
                bd = d;
                best = c;
            }
        }
        st[best] += x;
        st[k + best] += y;
        st[2 * k + best] += 1;
        st[3 * k] += bd;
    }
}

/* New centroids from the statistics (C99 division, as SGL's). */
static inline void kmeans_update(const int64_t *st, int k, int64_t *cx, int64_t *cy)
{
    for (int c = 0; c < k; c++) {
        int64_t count = st[2 * k + c];
        if (count > 0) {
            cx[c] = st[c] / count;
            cy[c] = st[k + c] / count;
        }
    }
}

#endif
