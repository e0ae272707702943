/* bench/loops/nbody.c: the force loop of an n-body step as a C programmer
 * writes it (the same input, loops and result line as nbody.sgl). */
#include "../common.h"
#include <math.h>

int main(int argc, char **argv)
{
    int64_t n = arg_n(argc, argv, 3000);
    int64_t reps = argc > 2 ? strtoll(argv[2], NULL, 10) : 1;
    double *x = rand_floats(n, 51), *y = rand_floats(n, 52);
    double *z = rand_floats(n, 53), *m = rand_floats(n, 54);
    double *a = xmalloc((size_t)(3 * n) * sizeof *a);
    double t0 = now_s();
    for (int64_t rep = 0; rep < reps; rep++)
    for (int64_t i = 0; i < n; i++) {
        double xi = x[i], yi = y[i], zi = z[i];
        double ax = 0.0, ay = 0.0, az = 0.0;
        for (int64_t j = 0; j < n; j++) {
            double dx = x[j] - xi, dy = y[j] - yi, dz = z[j] - zi;
            double r2 = dx * dx + dy * dy + dz * dz + 0.01;
            double s = m[j] / (r2 * sqrt(r2));
            ax += s * dx;
            ay += s * dy;
            az += s * dz;
        }
        a[3 * i] = ax;
        a[3 * i + 1] = ay;
        a[3 * i + 2] = az;
    }
    double t1 = now_s();
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += a[3 * i] + 2.0 * a[3 * i + 1] + 3.0 * a[3 * i + 2];
    printf("result %.17g\ntime %.9f\n", s, t1 - t0);
    free(x); free(y); free(z); free(m); free(a);
    return 0;
}
