/*
 * test_sort.c: unit tests of the typed sorts (runtime_c/sgl_sort.c) and the
 * builtin sort, linked with the value half of the runtime and stub_tree.c.
 *
 * Every result is compared, bit for bit, with a reference computed here
 * independently: a stable merge sort by a comparison function that states
 * the builtin's order (ints by `<`; floats by `<`, -0.0 before 0.0, NaNs
 * last in their original order).  Inputs: sorted, reversed, all equal,
 * few distinct values, organ pipe, sawtooth, random (small and full range,
 * with INT64_MIN/MAX, and floats with -0.0, 0.0, NaNs of several payloads
 * and the infinities), at lengths around every threshold of the sorts.
 *
 * Prints each failure, then "N passed, M failed"; exits nonzero when M > 0.
 */
#define _POSIX_C_SOURCE 200809L

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sgl.h"
#include "../sgl_sort.h"
#include "stub_tree.h"

static int n_passed, n_failed;

static void check(bool ok, const char *what, const char *pattern, int64_t n, int line)
{
    if (ok) {
        n_passed++;
    } else {
        n_failed++;
        printf("FAIL line %d: %s (input %s, n = %lld)\n", line, what, pattern, (long long)n);
    }
}

#define CHECK(cond, pattern, n) check((cond), #cond, (pattern), (n), __LINE__)

static const sgl_type T_IV = {SGL_T_VEC, &sgl_t_int};
static const sgl_type T_FV = {SGL_T_VEC, &sgl_t_float};

static uint64_t rng_state;

static uint64_t next_u64(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        perror("malloc");
        exit(2);
    }
    return p;
}

/* ---------------------------------------------------------------- reference */

/* The builtin's order on floats, as a comparison: ascending by `<`, -0.0
 * before 0.0, NaNs after everything else (ties between NaNs are left to
 * the stable merge, which keeps their original order). */
static int cmp_float(const void *pa, const void *pb)
{
    double x = *(const double *)pa, y = *(const double *)pb;
    int nx = isnan(x) ? 1 : 0, ny = isnan(y) ? 1 : 0;
    if (nx || ny)
        return nx - ny;
    if (x < y)
        return -1;
    if (y < x)
        return 1;
    return (signbit(x) ? 0 : 1) - (signbit(y) ? 0 : 1);
}

static int cmp_int(const void *pa, const void *pb)
{
    int64_t x = *(const int64_t *)pa, y = *(const int64_t *)pb;
    return (x > y) - (x < y);
}

/* A stable top-down merge sort of n 8-byte elements by cmp. */
static void ref_sort(void *base, int64_t n, int (*cmp)(const void *, const void *))
{
    if (n < 2)
        return;
    uint64_t *a = base;
    int64_t h = n / 2;
    ref_sort(a, h, cmp);
    ref_sort(a + h, n - h, cmp);
    uint64_t *t = xmalloc((size_t)n * sizeof *t);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        t[k++] = cmp(&a[j], &a[i]) < 0 ? a[j++] : a[i++];
    while (i < h)
        t[k++] = a[i++];
    while (j < n)
        t[k++] = a[j++];
    memcpy(a, t, (size_t)n * sizeof *t);
    free(t);
}

/* ---------------------------------------------------------------- inputs */

enum { SORTED, REVERSED, EQUAL, FEW, PIPE, SAW, RANDOM_SMALL, RANDOM_FULL, EXTREMES, NPATTERNS };
static const char *PATTERN[NPATTERNS] = {"sorted", "reversed", "all equal", "few distinct",
                                         "organ pipe", "sawtooth", "random small", "random full",
                                         "random with INT64_MIN/MAX"};

static void make_ints(int64_t *a, int64_t n, int pattern)
{
    for (int64_t i = 0; i < n; i++) {
        switch (pattern) {
        case SORTED: a[i] = i * 3 - n; break;
        case REVERSED: a[i] = n - i; break;
        case EQUAL: a[i] = -7; break;
        case FEW: a[i] = (int64_t)(next_u64() % 3) - 1; break;
        case PIPE: a[i] = i < n / 2 ? i : n - i; break;
        case SAW: a[i] = i % 37; break;
        case RANDOM_SMALL: a[i] = (int64_t)(next_u64() % 1000000000); break;
        case RANDOM_FULL: a[i] = (int64_t)next_u64(); break;
        default: {
            uint64_t r = next_u64();
            a[i] = r % 5 == 0 ? INT64_MIN : r % 5 == 1 ? INT64_MAX : (int64_t)(r >> 1) - (1LL << 61);
        }
        }
    }
}

/* A NaN with payload p (so that the NaNs' order can be checked). */
static double nan_with(uint64_t p, bool negative)
{
    uint64_t b = 0x7ff8000000000000ULL | (p & 0xffffffffffffULL) | (negative ? 1ULL << 63 : 0);
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static void make_floats(double *a, int64_t n, int pattern)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = next_u64();
        double u = (double)(r >> 11) * 0x1p-53;
        switch (pattern) {
        case SORTED: a[i] = (double)i * 0.5 - 3.0; break;
        case REVERSED: a[i] = (double)(n - i) * 0.25; break;
        case EQUAL: a[i] = i % 2 ? 0.0 : -0.0; break; /* equal by `<`, different bits */
        case FEW: a[i] = r % 3 == 0 ? -1.5 : r % 3 == 1 ? 0.0 : 2.0; break;
        case PIPE: a[i] = i < n / 2 ? (double)i : (double)(n - i); break;
        case SAW: a[i] = (double)(i % 37) - 18.0; break;
        case RANDOM_SMALL: a[i] = (u - 0.5) * 10.0; break;
        case RANDOM_FULL: { /* any bit pattern: subnormals, NaNs, infinities */
            double x;
            memcpy(&x, &r, sizeof x);
            a[i] = x;
            break;
        }
        default: {
            static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, 1e-310, -1e-310,
                                             DBL_MAX, -DBL_MAX};
            unsigned k = (unsigned)(r % 12);
            a[i] = k < 8 ? special[k] : k < 10 ? nan_with(r >> 8, k == 9) : (u - 0.5) * 1e6;
        }
        }
    }
}

static const int64_t SIZES[] = {0, 1, 2, 3, 16, 17, 23, 24, 25, 100, 129, 1000, 1023, 1024,
                                1025, 5000, 100000};

/* ---------------------------------------------------------------- tests */

static void test_ints(void)
{
    for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; s++) {
        int64_t n = SIZES[s];
        for (int p = 0; p < NPATTERNS; p++) {
            const char *pat = PATTERN[p];
            int64_t *in = xmalloc((size_t)n * sizeof *in), *want = xmalloc((size_t)n * 8);
            int64_t *got = xmalloc((size_t)n * 8), *tmp = xmalloc((size_t)n * 8);
            make_ints(in, n, p);
            memcpy(want, in, (size_t)n * 8);
            ref_sort(want, n, cmp_int);
            size_t bytes = (size_t)n * 8;

            memcpy(got, in, bytes);
            sgl_introsort_i64(got, n);
            CHECK(memcmp(got, want, bytes) == 0, pat, n);
            for (int depth = 0; depth < 4; depth++) { /* heapsort at every level */
                memcpy(got, in, bytes);
                sgl_introsort_depth_i64(got, n, depth);
                CHECK(memcmp(got, want, bytes) == 0, pat, n);
            }

            int64_t *copy = xmalloc(bytes);
            memcpy(copy, in, bytes);
            sgl_radix_sort_i64(in, got, tmp, n); /* out of place: in unchanged */
            CHECK(memcmp(got, want, bytes) == 0, pat, n);
            CHECK(memcmp(in, copy, bytes) == 0, pat, n);
            sgl_radix_sort_i64(copy, copy, tmp, n); /* in place */
            CHECK(memcmp(copy, want, bytes) == 0, pat, n);

            sgl_vec v = sgl_vec_new_uninit(&T_IV, n, 1, 1);
            if (n > 0)
                memcpy(v.data, in, bytes);
            sgl_vec r = sgl_sort(&T_IV, &v, 1, 1);
            CHECK(r.len == n && (n == 0 || memcmp(r.data, want, bytes) == 0), pat, n);
            CHECK(n == 0 || memcmp(v.data, in, bytes) == 0, pat, n); /* the argument unchanged */
            sgl_vec_free(&T_IV, &r);
            sgl_vec_free(&T_IV, &v);
            free(copy);
            free(in);
            free(want);
            free(got);
            free(tmp);
        }
    }
}

static void test_floats(void)
{
    for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; s++) {
        int64_t n = SIZES[s];
        for (int p = 0; p < NPATTERNS; p++) {
            const char *pat = PATTERN[p];
            size_t bytes = (size_t)n * 8;
            double *in = xmalloc(bytes), *want = xmalloc(bytes), *got = xmalloc(bytes);
            int64_t *tmp = xmalloc(bytes);
            make_floats(in, n, p);
            memcpy(want, in, bytes);
            ref_sort(want, n, cmp_float);

            sgl_sort_f64(in, got, tmp, n); /* radix (from SGL_SORT_RADIX_MIN non-NaNs on) */
            CHECK(memcmp(got, want, bytes) == 0, pat, n);
            memset(got, 0, bytes);
            sgl_sort_f64(in, got, NULL, n); /* introsort */
            CHECK(memcmp(got, want, bytes) == 0, pat, n);

            sgl_vec v = sgl_vec_new_uninit(&T_FV, n, 1, 1);
            if (n > 0)
                memcpy(v.data, in, bytes);
            sgl_vec r = sgl_sort(&T_FV, &v, 1, 1);
            CHECK(r.len == n && (n == 0 || memcmp(r.data, want, bytes) == 0), pat, n);
            CHECK(n == 0 || memcmp(v.data, in, bytes) == 0, pat, n);
            sgl_vec_free(&T_FV, &r);
            sgl_vec_free(&T_FV, &v);
            free(in);
            free(want);
            free(got);
            free(tmp);
        }
    }
}

/* The order itself, on a few values written out. */
static void test_float_order(void)
{
    double in[] = {1.0, NAN, -0.0, 0.0, -INFINITY, -0.0, INFINITY, -1.0, 0.0, NAN};
    double out[10];
    sgl_sort_f64(in, out, NULL, 10);
    CHECK(out[0] == -INFINITY && out[1] == -1.0, "written out", 10);
    CHECK(signbit(out[2]) && signbit(out[3]) && out[2] == 0.0 && out[3] == 0.0, "written out", 10);
    CHECK(!signbit(out[4]) && !signbit(out[5]) && out[4] == 0.0 && out[5] == 0.0, "written out",
          10);
    CHECK(out[6] == 1.0 && out[7] == INFINITY && isnan(out[8]) && isnan(out[9]), "written out",
          10);
    /* the builtin at INT64_MIN / INT64_MAX and below the radix threshold */
    int64_t a[] = {INT64_MAX, 0, INT64_MIN, -1, INT64_MAX, INT64_MIN, 1};
    sgl_introsort_i64(a, 7);
    CHECK(a[0] == INT64_MIN && a[1] == INT64_MIN && a[2] == -1 && a[3] == 0 && a[4] == 1 &&
              a[5] == INT64_MAX && a[6] == INT64_MAX,
          "written out", 7);
}

static sgl_vec fvec_of(const double *x, int64_t n)
{
    sgl_vec v = sgl_vec_new_uninit(&T_FV, n, 1, 1);
    if (n > 0)
        memcpy(v.data, x, (size_t)n * sizeof *x);
    return v;
}

/* Short float inputs written out, through the builtin (the check for an
 * input already in order, which it copies, among them). */
static void test_float_cases(void)
{
    static const struct {
        double x[4];
        int64_t n;
    } cases[] = {
        {{-0.0, 0.0, 1.0, NAN}, 4}, {{0.0, -0.0}, 2},   {{NAN, 1.0}, 2},
        {{-INFINITY, INFINITY, NAN, NAN}, 4},           {{1.0, 1.0, 1.0}, 3},
        {{2.0, 1.0}, 2},            {{NAN}, 1},         {{0}, 0},
        {{-NAN, -INFINITY}, 2},     {{1.0, NAN, 0.5}, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t n = cases[i].n;
        double want[4];
        memcpy(want, cases[i].x, sizeof want);
        ref_sort(want, n, cmp_float);
        sgl_vec v = fvec_of(cases[i].x, n);
        sgl_vec r = sgl_sort(&T_FV, &v, 1, 1);
        CHECK(r.len == n && (n == 0 || memcmp(r.data, want, (size_t)n * 8) == 0),
              "written-out cases", (int64_t)i);
        sgl_vec_free(&T_FV, &r);
        sgl_vec_free(&T_FV, &v);
    }
}

/* Runs: how inputs are split into ascending runs, and the merge of them. */
static void test_runs(void)
{
    int64_t a[] = {1, 2, 2, 0, 5, 4, 4, 9};
    int64_t b[5];
    CHECK(sgl_sort_runs_i64(a, 8, b, 4) == 3 && b[0] == 0 && b[1] == 3 && b[2] == 5 && b[3] == 8,
          "runs of a", 8);
    CHECK(sgl_sort_runs_i64(a, 8, b, 3) == 3, "runs of a", 8);
    CHECK(sgl_sort_runs_i64(a, 8, b, 2) == 0, "runs of a", 8);
    CHECK(sgl_sort_runs_i64(a, 3, b, 1) == 1 && b[1] == 3, "runs of a", 3);
    CHECK(sgl_sort_runs_i64(a, 1, b, 1) == 1 && b[0] == 0 && b[1] == 1, "runs of a", 1);
    /* k sorted blocks of random values, k around SGL_SORT_MAX_RUNS, through
     * every entry point */
    static const int ks[] = {2, 3, 7, SGL_SORT_MAX_RUNS - 1, SGL_SORT_MAX_RUNS,
                             SGL_SORT_MAX_RUNS + 1, 40};
    static const int64_t ns[] = {50, 1000, 30011};
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
        for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
            int64_t n = ns[ni];
            size_t bytes = (size_t)n * 8;
            int64_t *in = xmalloc(bytes), *want = xmalloc(bytes), *got = xmalloc(bytes);
            int64_t *tmp = xmalloc(bytes);
            for (int64_t i = 0; i < n; i++)
                in[i] = (int64_t)(next_u64() % 1000) - 500;
            for (int k = 0; k < ks[ki]; k++) { /* block k sorted on its own */
                int64_t lo = n * k / ks[ki], hi = n * (k + 1) / ks[ki];
                ref_sort(in + lo, hi - lo, cmp_int);
            }
            memcpy(want, in, bytes);
            ref_sort(want, n, cmp_int);
            sgl_sort_keys_i64(in, got, tmp, n);
            CHECK(memcmp(got, want, bytes) == 0, "sorted blocks, out of place", n);
            sgl_sort_keys_i64(in, got, NULL, n);
            CHECK(memcmp(got, want, bytes) == 0, "sorted blocks, no scratch", n);
            memcpy(got, in, bytes);
            sgl_sort_keys_i64(got, got, tmp, n);
            CHECK(memcmp(got, want, bytes) == 0, "sorted blocks, in place", n);
            sgl_vec v = sgl_vec_new_uninit(&T_IV, n, 1, 1);
            memcpy(v.data, in, bytes);
            sgl_vec r = sgl_sort(&T_IV, &v, 1, 1);
            CHECK(memcmp(r.data, want, bytes) == 0, "sorted blocks, builtin", n);
            sgl_vec_free(&T_IV, &r);
            sgl_vec_free(&T_IV, &v);
            double *fin = xmalloc(bytes), *fwant = xmalloc(bytes), *fgot = xmalloc(bytes);
            for (int64_t i = 0; i < n; i++)
                fin[i] = (double)in[i] * 0.5;
            memcpy(fwant, fin, bytes);
            ref_sort(fwant, n, cmp_float);
            sgl_sort_f64(fin, fgot, tmp, n);
            CHECK(memcmp(fgot, fwant, bytes) == 0, "sorted float blocks", n);
            free(fin);
            free(fwant);
            free(fgot);
            free(in);
            free(want);
            free(got);
            free(tmp);
        }
}

int main(void)
{
    rng_state = 2024;
    test_float_order();
    test_float_cases();
    test_runs();
    test_ints();
    test_floats();
    printf("%d passed, %d failed\n", n_passed, n_failed);
    fflush(stdout);
    return n_failed == 0 ? 0 : 1;
}
