/* bench/loops/nbody_structs.c: the force loop of an n-body step over an
 * array of structs, as a C programmer writes it (the same input, loops and
 * result line as nbody_structs.sgl and nbody.c). */
#include "../common.h"
#include <math.h>

typedef struct body { double x, y, z, m; } body;

int main(int argc, char **argv)
{
    int64_t n = arg_n(argc, argv, 3000);
    int64_t reps = argc > 2 ? strtoll(argv[2], NULL, 10) : 1;
    double *x = rand_floats(n, 51), *y = rand_floats(n, 52);
    double *z = rand_floats(n, 53), *m = rand_floats(n, 54);
    body *b = xmalloc((size_t)n * sizeof *b);
    for (int64_t i = 0; i < n; i++) b[i] = (body){x[i], y[i], z[i], m[i]};
    double *a = xmalloc((size_t)(3 * n) * sizeof *a);
    double t0 = now_s();
    for (int64_t rep = 0; rep < reps; rep++)
    for (int64_t i = 0; i < n; i++) {
        double xi = b[i].x, yi = b[i].y, zi = b[i].z;
        double ax = 0.0, ay = 0.0, az = 0.0;
        for (int64_t j = 0; j < n; j++) {
            double dx = b[j].x - xi, dy = b[j].y - yi, dz = b[j].z - zi;
            double r2 = dx * dx + dy * dy + dz * dz + 0.01;
            double s = b[j].m / (r2 * sqrt(r2));
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
    free(x); free(y); free(z); free(m); free(b); free(a);
    return 0;
}
