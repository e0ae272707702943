/*
 * test_sort.c: unit tests of the typed sorts (runtime_c/sgl_sort.c) and the
 * builtin sort, linked with the value half of the runtime and stub_tree.c.
 *
 * Every result is compared, bit for bit, with a reference computed here
 * independently: a stable merge sort by a comparison function that states
 * the builtin's order (ints by `<`; floats by `<`, -0.0 and 0.0 equal,
 * NaNs all equal and last), so that equal elements keep their input order
 * (observable on floats: the signs of zeros, the payloads of NaNs).  Inputs: sorted, reversed, all equal,
 * few distinct values, organ pipe, sawtooth, sorted blocks, keys that
 * differ only in a high and the lowest digit, random (small and full
 * range, with INT64_MIN/MAX, and floats with -0.0, 0.0, NaNs of several
 * payloads and the infinities), at lengths around every threshold of the
 * sorts.  The builtin is run in both forms: sgl_sort (the argument
 * unchanged) and sgl_sort_take on a unique vector (sorted in place, in its
 * own buffer), on a shared one (the other owner unchanged) and on views
 * (a block of a split, a slice) whose parent must not change.
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
#include "../sgl_vbuf.h"
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

/* Under AddressSanitizer test_packed's cases of 4 million elements (where
 * the packed sort's bits aside are a mapped block, memory the sanitizer
 * does not watch) are left out: about a third of the sanitized run's
 * time.  test_runtime_c.py runs them unsanitized, glibc checking its heap. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifdef SANITIZED
#define BIG_CASES 0
#else
#define BIG_CASES 1
#endif

#define CHECK(cond, pattern, n) check((cond), #cond, (pattern), (n), __LINE__)

static const sgl_type T_IV = {.kind = SGL_T_VEC, .elem = &sgl_t_int};
static const sgl_type T_FV = {.kind = SGL_T_VEC, .elem = &sgl_t_float};

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

/* The builtin's order on floats, as a comparison: ascending by `<`
 * (-0.0 and 0.0 equal), NaNs after everything else and equal to each
 * other (ties are left to the stable merge, which keeps their order). */
static int cmp_float(const void *pa, const void *pb)
{
    double x = *(const double *)pa, y = *(const double *)pb;
    int nx = isnan(x) ? 1 : 0, ny = isnan(y) ? 1 : 0;
    if (nx || ny)
        return nx - ny;
    return (x > y) - (x < y);
}

static int cmp_int(const void *pa, const void *pb)
{
    int64_t x = *(const int64_t *)pa, y = *(const int64_t *)pb;
    return (x > y) - (x < y);
}

/* A stable top-down merge sort of n 8-byte elements by CMP, t scratch of
 * n elements; runs of up to 16 by insertion.  One per comparison, where
 * the compiler can inline it. */
#define REF_MERGE_SORT(NAME, CMP)                                                                  \
    static void NAME(uint64_t *a, uint64_t *t, int64_t n)                                          \
    {                                                                                              \
        if (n <= 16) {                                                                             \
            for (int64_t i = 1; i < n; i++) {                                                      \
                uint64_t x = a[i];                                                                 \
                int64_t j = i;                                                                     \
                for (; j > 0 && CMP(&x, &a[j - 1]) < 0; j--)                                       \
                    a[j] = a[j - 1];                                                               \
                a[j] = x;                                                                          \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        int64_t h = n / 2;                                                                         \
        NAME(a, t, h);                                                                             \
        NAME(a + h, t, n - h);                                                                     \
        int64_t i = 0, j = h, k = 0;                                                               \
        while (i < h && j < n) { /* without a branch on the data */                                \
            uint64_t x = a[i], y = a[j];                                                           \
            int lt = CMP(&y, &x) < 0;                                                              \
            t[k++] = lt ? y : x;                                                                   \
            j += lt;                                                                               \
            i += !lt;                                                                              \
        }                                                                                          \
        while (i < h)                                                                              \
            t[k++] = a[i++];                                                                       \
        while (j < n)                                                                              \
            t[k++] = a[j++];                                                                       \
        memcpy(a, t, (size_t)n * sizeof *t);                                                       \
    }
REF_MERGE_SORT(ref_sort_int, cmp_int)
REF_MERGE_SORT(ref_sort_float, cmp_float)

/* cmp: cmp_int or cmp_float */
static void ref_sort(void *base, int64_t n, int (*cmp)(const void *, const void *))
{
    uint64_t *t = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *t);
    if (cmp == cmp_int)
        ref_sort_int(base, t, n);
    else if (cmp == cmp_float)
        ref_sort_float(base, t, n);
    else
        abort();
    free(t);
}

/* ---------------------------------------------------------------- inputs */

enum {
    SORTED, REVERSED, EQUAL, FEW, PIPE, SAW, BLOCKS, DIGITS, RANDOM_SMALL, RANDOM_FULL, EXTREMES,
    OUTLIER, NPATTERNS
};
static const char *PATTERN[NPATTERNS] = {
    "sorted", "reversed", "all equal", "few distinct", "organ pipe", "sawtooth",
    "3 sorted blocks", "high and lowest digit", "random small", "random full",
    "random with INT64_MIN/MAX", "one outlier"};

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
        case BLOCKS: a[i] = (i * 3 % n) - 5; break; /* 0, 3, 6, ... then 1, 4, ... then 2, ... */
        case DIGITS: { /* equal on the digits between: skipped in each bucket */
            uint64_t r = next_u64();
            a[i] = (int64_t)((r % 3) << 40 | (r >> 8 & 0xff)) - (1LL << 40);
            break;
        }
        case RANDOM_SMALL: a[i] = (int64_t)(next_u64() % 1000000000); break;
        case RANDOM_FULL: a[i] = (int64_t)next_u64(); break;
        case OUTLIER: /* one far value where the sorts' samples do not look: all the others in
                       * one bucket of the top digit */
            a[i] = i == 1 ? (int64_t)1 << 50 : (int64_t)(next_u64() % 1000) - 500;
            break;
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
        case BLOCKS: a[i] = (double)(i * 3 % n) * 0.5 - 1.0; break;
        case DIGITS: a[i] = r % 4 == 0 ? nan_with(i, r % 8 == 0) : (double)(r % 5) - 2.0; break;
        case RANDOM_SMALL: a[i] = (u - 0.5) * 10.0; break;
        case OUTLIER:
            a[i] = i == 1 ? 1e300 : r % 7 == 0 ? -0.0 : r % 7 == 1 ? 0.0 : (double)(r % 100) - 50.0;
            break;
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

static const int64_t SIZES[] = {0,    1,    2,     3,     16,    17,     23,    24,
                                25,   47,   48,    49,    100,   129,    255,   256,
                                257,  511,  512,   1000,  1023,  1024,   1025,  2047,
                                2048, 2049, 5000,  65535, 65536, 65537, 100000, 300000};

/* ---------------------------------------------------------------- tests */

static sgl_vec vec_of(const sgl_type *vt, const void *x, int64_t n)
{
    sgl_vec v = sgl_vec_new_uninit(vt, n, 1, 1);
    if (n > 0)
        memcpy(v.data, x, (size_t)n * 8);
    return v;
}

static bool same(const sgl_vec *r, const void *want, int64_t n)
{
    return r->len == n && (n == 0 || memcmp(r->data, want, (size_t)n * 8) == 0);
}

/* Whether the long int sort packs an input (sgl_sort_packs): PACKS_UNKNOWN
 * where the test does not say; PACKS_NO, more than 32 bits differ below
 * the top digit, but not in the sorts' sample (a radix sort, into a new
 * vector); neither (sgl_sort.c, int_special): WIDE, more than 32 bits
 * differ below the top digit, in the sample too, and SKEWED, its first
 * split leaves a bucket of more than 8 SGL_SORT_CACHE_MAX still to sort
 * (both: the quicksort, in place, where the CPU has AVX-512); FILLS, the
 * ints differ only in the bits of the top digit (each bucket's value
 * written in place). */
enum { WIDE, PACKS_YES, PACKS_UNKNOWN, SKEWED, FILLS, PACKS_NO };

/* Whether the taken float input in[0..n) (not in order, not reversed) is
 * sorted in place (sgl_sort_vec_f64_in_place): from SGL_SORT_HYBRID_MIN
 * elements on, on AVX-512, without a NaN and with zeros of one sign. */
static bool float_in_place(const void *in, int64_t n)
{
    const uint64_t *b = in;
    bool nan = false, neg0 = false, pos0 = false;
    for (int64_t i = 0; i < n; i++) {
        nan |= (b[i] << 1) > (0x7ff0000000000000ULL << 1);
        neg0 |= b[i] == 1ULL << 63;
        pos0 |= b[i] == 0;
    }
    return n >= SGL_SORT_HYBRID_MIN && sgl_sort_vec_available() && !nan && !(neg0 && pos0);
}

/* Whether the int sort of in[0..n) takes the packed quicksort
 * (sgl_sort_packed.c, sgl_sort_packed_quick_i64; sorts in place): on AVX-512, from
 * SGL_SORT_PACKED_QUICK_MIN ints on, where 256 of them evenly spaced
 * differ in more bits than the top digit's and at most 32 (from
 * SGL_SORT_PACKED_QUICK_SPARSE ints on, in at least log2(n) bits, or
 * at most log2(n) - 9), and every key
 * agrees with the first's outside the 32 bits from the sample's highest
 * down. */
static bool quick_packs(const int64_t *in, int64_t n)
{
    if (n < SGL_SORT_PACKED_QUICK_MIN || !sgl_sort_vec_available())
        return false;
    uint64_t any = 0, all = ~(uint64_t)0;
    for (int64_t j = 0, step = n / 256 > 0 ? n / 256 : 1; j < n; j += step) {
        any |= sgl_sort_key_int((uint64_t)in[j]);
        all &= sgl_sort_key_int((uint64_t)in[j]);
    }
    uint64_t d = any ^ all;
    if (d == 0)
        return false;
    int hi = 63 - __builtin_clzll(d), w = hi - __builtin_ctzll(d) + 1;
    if (!sgl_sort_packed_quick_suits(w, n))
        return false;
    int lo = hi > 31 ? hi - 31 : 0;
    uint64_t out = ~((uint64_t)0xFFFFFFFF << lo), ref = sgl_sort_key_int((uint64_t)in[0]);
    for (int64_t i = 0; i < n; i++)
        if ((sgl_sort_key_int((uint64_t)in[i]) ^ ref) & out)
            return false;
    return true;
}

/* The builtin in both forms on in[0..n), whose order is want; packs: of
 * an int input. */
static void check_builtin_packs(const sgl_type *vt, const void *in, const void *want, int64_t n,
                                const char *pat, int packs)
{
    size_t bytes = (size_t)n * 8;
    bool in_order = n == 0 || memcmp(in, want, bytes) == 0;

    /* borrowed: the argument unchanged; an input in order is shared */
    sgl_vec v = vec_of(vt, in, n);
    sgl_vec r = sgl_sort(vt, &v, 1, 1);
    CHECK(same(&r, want, n), pat, n);
    CHECK(same(&v, in, n), pat, n);
    CHECK(!in_order || r.buf == v.buf, pat, n);
    CHECK(in_order || r.buf != v.buf, pat, n);
    sgl_vec_free(vt, &r);

    /* taken, unique: sorted in place in its own buffer, the argument left
     * empty; from SGL_SORT_HYBRID_MIN on (the sort's buffer as long as the
     * input) into a new one (two float runs: merged into it), but two int
     * runs (merged in place), an input
     * in reverse order (reversed in place) and ints of more runs than are
     * merged that the packed sort sorts (a buffer aside of half the
     * bytes, when that is a mapped block) */
    void *data = v.data;
    int64_t b3[3], bm[SGL_SORT_MAX_RUNS + 1];
    bool radix_int = vt->elem->kind == SGL_T_INT && n >= SGL_SORT_HYBRID_MIN &&
                     sgl_sort_runs_i64(in, n, bm, SGL_SORT_MAX_RUNS) == 0;
    bool reversed = n > 0 && sgl_sort_descending(vt->elem->kind == SGL_T_FLOAT, in, n) &&
                    (vt->elem->kind != SGL_T_INT || sgl_sort_runs_i64(in, n, bm, SGL_SORT_MAX_RUNS) == 0);
    bool in_place = n < SGL_SORT_HYBRID_MIN || reversed ||
                    (vt->elem->kind == SGL_T_FLOAT && !in_order && float_in_place(in, n) &&
                     sgl_sort_runs_f64(in, n, b3, 2) != 2) ||
                    (vt->elem->kind == SGL_T_INT && sgl_sort_runs_i64(in, n, b3, 2) == 2) ||
                    (radix_int && packs == PACKS_YES &&
                     (size_t)n * sizeof(uint32_t) >= SGL_BLOCK_MAP_MIN) ||
                    (radix_int && (packs == SKEWED || packs == WIDE) && sgl_sort_vec_available()) ||
                    (radix_int && packs == FILLS) || (radix_int && quick_packs(in, n));
    bool known = !radix_int || packs != PACKS_UNKNOWN || reversed;
    r = sgl_sort_take(vt, &v, 1, 1);
    CHECK(same(&r, want, n), pat, n);
    CHECK(v.data == NULL && v.len == 0 && v.buf == NULL, pat, n);
    CHECK(n == 0 || in_order || !known || r.data == data || !in_place, pat, n);
    CHECK(n == 0 || in_order || !known || r.data != data || in_place, pat, n);
    sgl_vec_free(vt, &r);

    /* taken, shared: the other owner keeps the input */
    v = vec_of(vt, in, n);
    sgl_vec keep = sgl_vec_copy(vt, &v);
    r = sgl_sort_take(vt, &v, 1, 1);
    CHECK(same(&r, want, n), pat, n);
    CHECK(same(&keep, in, n), pat, n);
    CHECK(in_order || r.buf != keep.buf, pat, n);
    sgl_vec_free(vt, &r);
    sgl_vec_free(vt, &keep);
}

static void check_builtin(const sgl_type *vt, const void *in, const void *want, int64_t n,
                          const char *pat)
{
    check_builtin_packs(vt, in, want, n, pat, PACKS_UNKNOWN);
}

/* Views taken: a block of a split of a dead vector is sorted in place and
 * its neighbours keep their elements; a slice of a vector still held is
 * copied, and the parent keeps its elements. */
static void check_views(const sgl_type *vt, const void *in, const void *want_first, int64_t n,
                        int64_t h, const char *pat)
{
    size_t esz = 8;
    sgl_vec v = vec_of(vt, in, n);
    sgl_vec blocks = sgl_split_take(vt, &v, 2, 1, 1); /* v dead: range handles */
    sgl_vec *b = blocks.data;
    CHECK(b[0].len == h && b[1].len == n - h, pat, n);
    void *data = b[0].data;
    sgl_vec b0 = b[0];
    b[0] = (sgl_vec){NULL, 0, NULL};
    sgl_vec r = sgl_sort_take(vt, &b0, 1, 1);
    CHECK(same(&r, want_first, h), pat, n);
    CHECK(h == 0 || h >= SGL_SORT_HYBRID_MIN || r.data == data, pat, n); /* in place */
    CHECK(same(&b[1], (const char *)in + h * esz, n - h), pat, n);
    sgl_vec_free(vt, &r);
    /* a block also kept elsewhere is copied */
    sgl_vec keep = sgl_vec_copy(vt, &b[1]);
    sgl_vec b1 = b[1];
    b[1] = (sgl_vec){NULL, 0, NULL};
    r = sgl_sort_take(vt, &b1, 1, 1);
    CHECK(r.len == n - h, pat, n);
    CHECK(same(&keep, (const char *)in + h * esz, n - h), pat, n);
    sgl_vec_free(vt, &r);
    sgl_vec_free(vt, &keep);
    sgl_vec_free(&(sgl_type){.kind = SGL_T_VEC, .elem = vt}, &blocks);

    v = vec_of(vt, in, n);
    sgl_vec s = sgl_slice(vt, &v, 0, h, 1, 1); /* the parent still held */
    r = sgl_sort_take(vt, &s, 1, 1);
    CHECK(same(&r, want_first, h), pat, n);
    CHECK(same(&v, in, n), pat, n);
    sgl_vec_free(vt, &r);
    sgl_vec_free(vt, &v);
}

static void test_ints(void)
{
    for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; s++) {
        int64_t n = SIZES[s];
        for (int p = 0; p < NPATTERNS; p++) {
            const char *pat = PATTERN[p];
            size_t bytes = (size_t)n * 8;
            int64_t *in = xmalloc(bytes), *want = xmalloc(bytes), *got = xmalloc(bytes);
            make_ints(in, n, p);
            memcpy(want, in, bytes);
            ref_sort(want, n, cmp_int);

            memcpy(got, in, bytes);
            sgl_introsort_i64(got, n);
            CHECK(memcmp(got, want, bytes) == 0, pat, n);
            for (int depth = 0; depth < 4; depth++) { /* heapsort at every level */
                memcpy(got, in, bytes);
                sgl_introsort_depth_i64(got, n, depth);
                CHECK(memcmp(got, want, bytes) == 0, pat, n);
            }
            int64_t *tmp = xmalloc(bytes), *cnt = xmalloc(sizeof(int64_t) << (SGL_SORT_DIGIT_MAX + 1));
            memset(got, 0, bytes);
            sgl_radix_sort_i64(in, got, tmp, n, cnt); /* at any length, out of place */
            CHECK(memcmp(got, want, bytes) == 0, pat, n);
            memcpy(got, in, bytes);
            sgl_radix_sort_i64(got, got, tmp, n, cnt); /* in place */
            CHECK(memcmp(got, want, bytes) == 0, pat, n);
            free(tmp);
            free(cnt);
            memcpy(got, in, bytes);
            sgl_sort_i64(got, n);
            CHECK(memcmp(got, want, bytes) == 0, pat, n);
            CHECK(sgl_sorted_i64(want, n), pat, n);
            CHECK(sgl_sorted_i64(in, n) == (memcmp(in, want, bytes) == 0), pat, n);

            check_builtin(&T_IV, in, want, n, pat);
            int64_t h = n - n / 2; /* split puts the odd element in block 0 */
            memcpy(got, in, (size_t)h * 8);
            ref_sort(got, h, cmp_int);
            check_views(&T_IV, in, got, n, h, pat);
            free(in);
            free(want);
            free(got);
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
            make_floats(in, n, p);
            memcpy(want, in, bytes);
            ref_sort(want, n, cmp_float);

            memcpy(got, in, bytes);
            CHECK(sgl_sort_f64(got, n), pat, n);
            CHECK(memcmp(got, want, bytes) == 0, pat, n);
            double *tmp = xmalloc(bytes);
            int64_t *cnt = xmalloc(sizeof(int64_t) << (SGL_SORT_DIGIT_MAX + 1));
            memset(got, 0, bytes);
            sgl_radix_sort_f64(in, got, tmp, n, cnt); /* at any length, out of place */
            CHECK(memcmp(got, want, bytes) == 0, pat, n);
            memcpy(got, in, bytes);
            sgl_radix_sort_f64(got, got, tmp, n, cnt); /* in place */
            CHECK(memcmp(got, want, bytes) == 0, pat, n);
            free(tmp);
            free(cnt);
            CHECK(sgl_sorted_f64(want, n), pat, n);
            CHECK(sgl_sorted_f64(in, n) == (memcmp(in, want, bytes) == 0), pat, n);

            check_builtin(&T_FV, in, want, n, pat);
            int64_t h = n - n / 2; /* split puts the odd element in block 0 */
            memcpy(got, in, (size_t)h * 8);
            ref_sort(got, h, cmp_float);
            check_views(&T_FV, in, got, n, h, pat);
            free(in);
            free(want);
            free(got);
        }
    }
}

/* The order itself, on a few values written out. */
static void test_float_order(void)
{
    double out[] = {1.0, NAN, -0.0, 0.0, -INFINITY, -0.0, INFINITY, -1.0, 0.0, NAN};
    CHECK(sgl_sort_f64(out, 10), "written out", 10);
    CHECK(out[0] == -INFINITY && out[1] == -1.0, "written out", 10);
    /* the zeros equal, in their input order: -0.0, 0.0, -0.0, 0.0 */
    CHECK(out[2] == 0.0 && out[3] == 0.0 && out[4] == 0.0 && out[5] == 0.0, "written out", 10);
    CHECK(signbit(out[2]) && !signbit(out[3]) && signbit(out[4]) && !signbit(out[5]),
          "written out", 10);
    CHECK(out[6] == 1.0 && out[7] == INFINITY && isnan(out[8]) && isnan(out[9]), "written out",
          10);
    double z[] = {0.0, -0.0};
    CHECK(sgl_sort_f64(z, 2) && !signbit(z[0]) && signbit(z[1]), "[0.0, -0.0]", 2);
    /* the keys: one per class of equal values, in order */
    CHECK(sgl_sort_key_f64(-0.0) == sgl_sort_key_f64(0.0), "keys", 0);
    CHECK(sgl_sort_key_f64(nan_with(5, true)) == sgl_sort_key_f64(nan_with(9, false)), "keys", 0);
    CHECK(sgl_sort_key_f64(INFINITY) < sgl_sort_key_f64(NAN), "keys", 0);
    CHECK(sgl_sort_key_f64(-INFINITY) < sgl_sort_key_f64(-DBL_MAX), "keys", 0);
    CHECK(sgl_sort_key_f64(-4.9e-324) < sgl_sort_key_f64(0.0), "keys", 0);
    CHECK(sgl_sort_key_f64(0.0) < sgl_sort_key_f64(4.9e-324), "keys", 0);
    /* NaNs keep their order: payloads 1, 2, 3 (the second negative) */
    double nans[] = {nan_with(1, false), 2.0, nan_with(2, true), -1.0, nan_with(3, false), 0.5};
    CHECK(sgl_sort_f64(nans, 6), "NaNs in order", 6);
    uint64_t b[3];
    memcpy(b, nans + 3, sizeof b);
    CHECK(nans[0] == -1.0 && nans[1] == 0.5 && nans[2] == 2.0, "NaNs in order", 6);
    CHECK((b[0] & 0xff) == 1 && (b[1] & 0xff) == 2 && b[1] >> 63 && (b[2] & 0xff) == 3,
          "NaNs in order", 6);
    /* at INT64_MIN / INT64_MAX, below and above the radix threshold */
    int64_t a[] = {INT64_MAX, 0, INT64_MIN, -1, INT64_MAX, INT64_MIN, 1};
    sgl_sort_i64(a, 7);
    CHECK(a[0] == INT64_MIN && a[1] == INT64_MIN && a[2] == -1 && a[3] == 0 && a[4] == 1 &&
              a[5] == INT64_MAX && a[6] == INT64_MAX,
          "written out", 7);
    int64_t big[SGL_SORT_RADIX_MIN];
    for (int i = 0; i < SGL_SORT_RADIX_MIN; i++)
        big[i] = i % 3 == 0 ? INT64_MAX - i : i % 3 == 1 ? INT64_MIN + i : -i;
    sgl_sort_i64(big, SGL_SORT_RADIX_MIN);
    CHECK(sgl_sorted_i64(big, SGL_SORT_RADIX_MIN) && big[0] == INT64_MIN + 1 &&
              big[SGL_SORT_RADIX_MIN - 1] == INT64_MAX,
          "written out", SGL_SORT_RADIX_MIN);
}

/* How inputs are split into ascending runs. */
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
}

/* The first descent at or after i, element by element (the model). */
static int64_t naive_descent(const int64_t *a, int64_t i, int64_t n)
{
    for (; i < n; i++)
        if (a[i] < a[i - 1])
            return i;
    return n;
}

/* sgl_first_descent_i64 (vectorised in blocks) and its plain form
 * against the model: one descent at every place of inputs of every
 * length up to 6 blocks and more, around the blocks' edges, from several
 * starts, in three patterns: ties (not descents) going from negative to
 * positive, a drop from positive to negative then ascending again (an
 * unsigned compare would miss it), and from near INT64_MAX to INT64_MIN. */
static void test_descents(void)
{
    enum { N = 200 };
    int64_t a[N], b[N + 1];
    for (int pat = 0; pat < 3; pat++) {
        for (int64_t n = 1; n <= N; n++) {
            for (int64_t d = 0; d < n; d++) { /* d = 0: no descent */
                for (int64_t k = 0; k < n; k++) {
                    bool after = d > 0 && k >= d;
                    a[k] = pat == 0   ? k / 3 * 5 - 100
                           : pat == 1 ? (after ? k - 1000 : k)
                                      : (after ? INT64_MIN + k : INT64_MAX - (n - k));
                }
                if (pat == 0 && d > 0)
                    a[d] = a[d - 1] - 1;
                for (int64_t i = 1; i <= n; i = i < 4 ? i + 1 : i + 7) {
                    int64_t want = naive_descent(a, i, n);
                    CHECK(sgl_first_descent_i64(a, i, n) == want, "first descent", n);
                    CHECK(sgl_first_descent_plain_i64(a, i, n) == want, "plain descent", n);
                }
                CHECK(sgl_sorted_i64(a, n) == (naive_descent(a, 1, n) == n), "sorted", n);
            }
        }
    }
    /* several descents: the runs as the model finds them */
    for (int t = 0; t < 200; t++) {
        int64_t n = 1 + (int64_t)(next_u64() % N);
        for (int64_t k = 0; k < n; k++)
            a[k] = (int64_t)(next_u64() % 1000);
        for (int64_t k = 1; k < n; k++)
            if (next_u64() % 16 != 0 && a[k] < a[k - 1])
                a[k] = a[k - 1] + (int64_t)(next_u64() % 3); /* mostly ascending */
        int want = 1;
        for (int64_t k = naive_descent(a, 1, n); k < n; k = naive_descent(a, k + 1, n))
            want++;
        int got = sgl_sort_runs_i64(a, n, b, N);
        CHECK(got == want && b[0] == 0 && b[got] == n, "runs", n);
        for (int r = 1; got == want && r < got; r++)
            CHECK(a[b[r]] < a[b[r] - 1] && naive_descent(a, b[r - 1] + 1, n) == b[r], "run bound", n);
    }
}

/* Short float inputs written out, through the builtin (the check for an
 * input already in order, which it shares, among them). */
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
        check_builtin(&T_FV, cases[i].x, want, n, "written-out cases");
    }
}

/* k sorted blocks of random values (a concatenation of gathered blocks, as
 * in PSRS), k around 16, through every entry point. */
static void test_blocks(void)
{
    static const int ks[] = {2, 3, 7, 15, 16, 17, 40};
    static const int64_t ns[] = {50, 257, 1000, 30011};
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
        for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
            int64_t n = ns[ni];
            size_t bytes = (size_t)n * 8;
            int64_t *in = xmalloc(bytes), *want = xmalloc(bytes), *got = xmalloc(bytes);
            for (int64_t i = 0; i < n; i++)
                in[i] = (int64_t)(next_u64() % 1000) - 500;
            for (int k = 0; k < ks[ki]; k++) { /* block k sorted on its own */
                int64_t lo = n * k / ks[ki], hi = n * (k + 1) / ks[ki];
                ref_sort(in + lo, hi - lo, cmp_int);
            }
            memcpy(want, in, bytes);
            ref_sort(want, n, cmp_int);
            memcpy(got, in, bytes);
            sgl_sort_i64(got, n);
            CHECK(memcmp(got, want, bytes) == 0, "sorted blocks", n);
            int64_t bounds[41];
            int runs = sgl_sort_runs_i64(in, n, bounds, 40);
            CHECK(runs >= 1 && runs <= ks[ki] && bounds[0] == 0 && bounds[runs] == n,
                  "runs of sorted blocks", n);
            /* the merge, out of place and in place */
            int64_t *tmp = xmalloc(bytes);
            memcpy(got, in, bytes);
            runs = sgl_sort_runs_i64(got, n, bounds, 40);
            sgl_merge_runs_i64(got, got, tmp, n, bounds, runs);
            CHECK(memcmp(got, want, bytes) == 0, "sorted blocks merged in place", n);
            memset(got, 0, bytes);
            runs = sgl_sort_runs_i64(in, n, bounds, 40);
            sgl_merge_runs_i64(in, got, tmp, n, bounds, runs);
            CHECK(memcmp(got, want, bytes) == 0, "sorted blocks merged", n);
            free(tmp);
            check_builtin(&T_IV, in, want, n, "sorted blocks");
            double *fin = xmalloc(bytes), *fwant = xmalloc(bytes);
            for (int64_t i = 0; i < n; i++)
                fin[i] = (double)in[i] * 0.5;
            memcpy(fwant, fin, bytes);
            ref_sort(fwant, n, cmp_float);
            check_builtin(&T_FV, fin, fwant, n, "sorted float blocks");
            free(fin);
            free(fwant);
            free(in);
            free(want);
            free(got);
        }
}

/* Two sorted runs of every proportion (one element against the rest
 * included), with ties across them, one run wholly below the other, or
 * the two interleaved (the merge runs from both ends at once: every way
 * its front or back can run out first), through every entry point, and
 * the merge of sgl_merge_runs_i64 out of place and in place. */
static void test_two_runs(void)
{
    static const int64_t ns[] = {2, 3, 7, 300, 4001};
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
        for (int64_t cut = 1; cut < ns[ni]; cut += cut < 9 || cut > ns[ni] - 9 ? 1 : ns[ni] / 8)
            for (int pattern = 0; pattern < 5; pattern++) {
                int64_t n = ns[ni], n1 = cut;
                size_t bytes = (size_t)n * 8;
                int64_t *in = xmalloc(bytes), *want = xmalloc(bytes), *got = xmalloc(bytes);
                for (int64_t i = 0; i < n; i++) {
                    bool first = i < n1;
                    switch (pattern) {
                    case 0: in[i] = (int64_t)(next_u64() % 50); break;  /* ties */
                    case 1: in[i] = first ? 1000 + i : i; break;        /* second below */
                    case 2: in[i] = first ? 2 * i : 2 * (i - n1) + 1; break; /* interleaved */
                    case 3: in[i] = first ? (int64_t)(next_u64() % 8) : 4; break; /* one value */
                    default: /* the first inside the second's range */
                        in[i] = first ? n + (int64_t)(next_u64() % 9) : (int64_t)(next_u64() % (3 * n));
                    }
                }
                ref_sort(in, n1, cmp_int);
                ref_sort(in + n1, n - n1, cmp_int);
                memcpy(want, in, bytes);
                ref_sort(want, n, cmp_int);
                memcpy(got, in, bytes);
                sgl_sort_i64(got, n);
                CHECK(memcmp(got, want, bytes) == 0, "two runs", n);
                check_builtin(&T_IV, in, want, n, "two runs");
                int64_t bounds[3] = {0, n1, n}, *tmp = xmalloc(bytes);
                sgl_merge_runs_i64(in, got, tmp, n, bounds, 2);
                CHECK(memcmp(got, want, bytes) == 0, "two runs merged", n);
                free(tmp);
                free(in);
                free(want);
                free(got);
            }
}

/* sgl_merge2_checked_i64: two ascending runs of every shape merge as the
 * reference does (true); one descent anywhere in either run (at each end,
 * at the checked chunks' edges, at random, at every index), or runs in no
 * order at all (whose merge's two ends cross), answer false, in bounds
 * (out exactly nx + ny long: AddressSanitizer's build). */
static void test_merge_checked(void)
{
    static const int64_t ns[] = {1, 2, 5, 511, 1030, 5000, 20001};
    const int64_t nns = (int64_t)(sizeof ns / sizeof ns[0]);
    for (int64_t a = 0; a < nns; a++)
        for (int64_t b = 0; b < nns; b++)
            for (int pattern = 0; pattern < 4; pattern++) {
                int64_t nx = ns[a], ny = ns[b], n = nx + ny;
                int64_t *x = xmalloc((size_t)nx * 8), *y = xmalloc((size_t)ny * 8);
                int64_t *want = xmalloc((size_t)n * 8), *out = xmalloc((size_t)n * 8);
                for (int64_t i = 0; i < n; i++) {
                    int64_t v;
                    switch (pattern) {
                    case 0: v = (int64_t)(next_u64() % 40); break;               /* ties */
                    case 1: v = (int64_t)(next_u64() % 1000000000); break;        /* spread */
                    case 2: v = i < nx ? 3 * n + i : i; break;                     /* y first */
                    default: v = i < nx ? (int64_t)(next_u64() % 5) + n : (int64_t)(next_u64() % (2 * n));
                    }
                    if (i < nx)
                        x[i] = v;
                    else
                        y[i - nx] = v;
                }
                ref_sort(x, nx, cmp_int);
                ref_sort(y, ny, cmp_int);
                memcpy(want, x, (size_t)nx * 8);
                memcpy(want + nx, y, (size_t)ny * 8);
                ref_sort(want, n, cmp_int);
                bool ok = sgl_merge2_checked_i64(x, nx, y, ny, out);
                CHECK(ok && memcmp(out, want, (size_t)n * 8) == 0, "checked merge, in order", n);
                /* one descent: at p of x (run 0) or y (run 1) */
                for (int run = 0; run < 2; run++) {
                    int64_t *r = run ? y : x, m = run ? ny : nx;
                    int64_t at[] = {0, 1, m / 2, 510, 511, 512, 1023, 1024, m - 2,
                                    m > 2 ? (int64_t)(next_u64() % (uint64_t)(m - 1)) : 0};
                    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
                        int64_t q = at[k];
                        if (q < 0 || q + 1 >= m)
                            continue;
                        int64_t was = r[q];
                        r[q] = r[q + 1] + 1; /* r[q] > r[q + 1] */
                        CHECK(!sgl_merge2_checked_i64(x, nx, y, ny, out), "checked merge, a descent",
                              n);
                        r[q] = was;
                    }
                }
                free(x);
                free(y);
                free(want);
                free(out);
            }
    /* a descent at every index of either run: interleaved runs (every
     * chunk's seams, front and back, and the finish between them) and
     * one run inside the other (the ends meet elsewhere) */
    for (int shape = 0; shape < 2; shape++) {
        int64_t m = 2600, *x = xmalloc((size_t)m * 8), *y = xmalloc((size_t)m * 8);
        int64_t *out = xmalloc((size_t)m * 16);
        for (int64_t i = 0; i < m; i++) {
            x[i] = shape == 0 ? 2 * i : m + i;
            y[i] = shape == 0 ? 2 * i + 1 : 3 * i;
        }
        int64_t missed = 0;
        for (int run = 0; run < 2; run++) {
            int64_t *r = run ? y : x;
            for (int64_t q = 0; q + 1 < m; q++) {
                int64_t was = r[q];
                r[q] = r[q + 1] + 1;
                missed += sgl_merge2_checked_i64(x, m, y, m, out);
                r[q] = was;
            }
        }
        CHECK(missed == 0, "checked merge, a descent at every index", 2 * m);
        CHECK(sgl_merge2_checked_i64(x, m, y, m, out), "checked merge, restored", 2 * m);
        free(x);
        free(y);
        free(out);
    }
    /* in no order: the ends cross */
    for (int64_t k = 0; k < nns; k++) {
        int64_t m = ns[k];
        if (m < 3)
            continue;
        int64_t *x = xmalloc((size_t)m * 8), *y = xmalloc((size_t)m * 8), *out = xmalloc((size_t)m * 16);
        for (int64_t i = 0; i < m; i++) {
            x[i] = (int64_t)(next_u64() % 1000);
            y[i] = (int64_t)(next_u64() % 1000);
        }
        CHECK(!sgl_merge2_checked_i64(x, m, y, m, out), "checked merge, no order", 2 * m);
        for (int64_t i = 0; i < m; i++) { /* descending runs */
            x[i] = 2 * (m - i);
            y[i] = 2 * (m - i) + 1;
        }
        CHECK(!sgl_merge2_checked_i64(x, m, y, m, out), "checked merge, descending", 2 * m);
        free(x);
        free(y);
        free(out);
    }
}

/* The float merges against the stable reference, checked and not: two
 * ascending runs of special values (zeros of both signs, NaNs of many
 * payloads at each run's end, infinities) merge bit for bit as the
 * reference does; a descent anywhere (a value out of place, a NaN among
 * the values) makes the checked merge answer false.  And
 * sort(concat(vv)) of two long float runs (sgl_sort_concat, the merge from
 * where they lie), also of runs that are not in order after all. */
static void test_merge_f64(void)
{
    static const int64_t ns[] = {1, 2, 5, 511, 1030, 20001};
    const int64_t nns = (int64_t)(sizeof ns / sizeof ns[0]);
    for (int64_t a = 0; a < nns; a++)
        for (int64_t b = 0; b < nns; b++)
            for (int few = 0; few < 2; few++) {
                int64_t nx = ns[a], ny = ns[b], n = nx + ny;
                double *x = xmalloc((size_t)nx * 8), *y = xmalloc((size_t)ny * 8);
                double *want = xmalloc((size_t)n * 8), *out = xmalloc((size_t)n * 8);
                make_floats(x, nx, few ? FEW : NPATTERNS);
                make_floats(y, ny, few ? EQUAL : NPATTERNS);
                ref_sort(x, nx, cmp_float);
                ref_sort(y, ny, cmp_float);
                memcpy(want, x, (size_t)nx * 8);
                memcpy(want + nx, y, (size_t)ny * 8);
                ref_sort(want, n, cmp_float);
                const uint64_t *bx = (const uint64_t *)(const void *)x;
                const uint64_t *by = (const uint64_t *)(const void *)y;
                uint64_t *bo = (uint64_t *)(void *)out;
                sgl_merge2_f64(bx, nx, by, ny, bo);
                CHECK(memcmp(out, want, (size_t)n * 8) == 0, "float merge", n);
                memset(out, 0, (size_t)n * 8);
                bool ok = sgl_merge2_checked_f64(bx, nx, by, ny, bo);
                CHECK(ok && memcmp(out, want, (size_t)n * 8) == 0, "checked float merge", n);
                for (int run = 0; run < 2; run++) {
                    double *r = run ? y : x;
                    int64_t m = run ? ny : nx;
                    int64_t at[] = {0, m / 2, 511, 1023, m - 2,
                                    m > 2 ? (int64_t)(next_u64() % (uint64_t)(m - 1)) : 0};
                    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
                        int64_t q = at[k];
                        if (q < 0 || q + 1 >= m || isnan(r[q + 1]))
                            continue;
                        double was = r[q];
                        r[q] = isnan(r[q]) ? r[q + 1] : r[q + 1] + 1.0; /* r[q] > r[q + 1] */
                        if (!(r[q] > r[q + 1]))
                            r[q] = nan_with(q, false); /* a NaN among the values */
                        CHECK(!sgl_merge2_checked_f64(bx, nx, by, ny, bo),
                              "checked float merge, a descent", n);
                        r[q] = was;
                    }
                }
                free(x);
                free(y);
                free(want);
                free(out);
            }
    static const sgl_type T_FVV = {.kind = SGL_T_VEC, .elem = &T_FV};
    for (int broken = 0; broken < 3; broken++) {
        int64_t nx = 40001, ny = 30000, n = nx + ny;
        double *in = xmalloc((size_t)n * 8), *want = xmalloc((size_t)n * 8);
        make_floats(in, n, NPATTERNS);
        ref_sort(in, nx, cmp_float);
        ref_sort(in + nx, ny, cmp_float);
        if (broken == 1) /* a NaN among the first run's values */
            in[nx / 2] = nan_with(7, true);
        if (broken == 2) { /* a value out of place in the second run (past its first 256) */
            double t = in[nx + ny / 2];
            in[nx + ny / 2] = in[nx + 300];
            in[nx + 300] = t;
        }
        memcpy(want, in, (size_t)n * 8);
        ref_sort(want, n, cmp_float);
        for (int take = 0; take < 2; take++) {
            sgl_vec vv = {NULL, 0, NULL};
            sgl_vec px = vec_of(&T_FV, in, nx), py = vec_of(&T_FV, in + nx, ny);
            sgl_vec_push_move(&T_FVV, &vv, &px, 1, 1);
            sgl_vec_push_move(&T_FVV, &vv, &py, 1, 1);
            sgl_vec r = take ? sgl_sort_concat_take(&T_FVV, &vv, 1, 1)
                             : sgl_sort_concat(&T_FVV, &vv, 1, 1);
            CHECK(same(&r, want, n), broken ? "sort(concat) of floats, not runs" : "sort(concat) of floats", n);
            CHECK(take ? vv.len == 0
                       : (vv.len == 2 && same(&((sgl_vec *)vv.data)[0], in, nx) &&
                          same(&((sgl_vec *)vv.data)[1], in + nx, ny)),
                  "sort(concat) of floats, the parts", n);
            sgl_vec_free(&T_FV, &r);
            sgl_vec_free(&T_FVV, &vv);
        }
        free(in);
        free(want);
    }
}

/* Splits long enough for the write-combining scatter (SGL_SORT_WC_MIN),
 * into outputs at every offset in a 64-byte line (the lines' partial ends),
 * with buckets of every size (few distinct: most buckets empty; outlier:
 * one bucket split again), ints and floats, against the reference. */
static void test_write_combining(void)
{
    static const int PATS[] = {RANDOM_SMALL, RANDOM_FULL, FEW, DIGITS, OUTLIER, EXTREMES};
    {
        int64_t n = SGL_SORT_WC_MIN + 4099;
        size_t bytes = (size_t)n * 8;
        for (size_t k = 0; k < sizeof PATS / sizeof PATS[0]; k++) {
            int p = PATS[k];
            for (int fl = 0; fl < 2; fl++) {
                uint64_t *in = xmalloc(bytes), *want = xmalloc(bytes), *buf = xmalloc(bytes + 128);
                if (fl)
                    make_floats((double *)(void *)in, n, p);
                else
                    make_ints((int64_t *)(void *)in, n, p);
                memcpy(want, in, bytes);
                ref_sort(want, n, fl ? cmp_float : cmp_int);
                for (int off = 0; off < 8; off += fl ? 5 : 1) {
                    uint64_t *got = (uint64_t *)(((uintptr_t)buf + 63) & ~(uintptr_t)63) + off;
                    memcpy(got, in, bytes);
                    if (fl)
                        CHECK(sgl_sort_f64((double *)(void *)got, n), PATTERN[p], n);
                    else
                        sgl_sort_i64((int64_t *)(void *)got, n);
                    CHECK(memcmp(got, want, bytes) == 0, PATTERN[p], n + off * 1000000000LL);
                }
                free(in);
                free(want);
                free(buf);
            }
        }
    }
}

/* sgl_sort_i64 and the builtin on the ints in[0..n), against the
 * reference; packs: whether the packed sort sorts them. */
static void check_int_sort(const int64_t *in, int64_t n, const char *what, int packs)
{
    size_t bytes = (size_t)n * 8;
    int64_t *want = xmalloc(bytes), *got = xmalloc(bytes);
    memcpy(want, in, bytes);
    ref_sort(want, n, cmp_int);
    memcpy(got, in, bytes);
    sgl_sort_i64(got, n);
    CHECK(memcmp(got, want, bytes) == 0, what, n);
    check_builtin_packs(&T_IV, in, want, n, what, packs);
    free(want);
    free(got);
}

/* The packed int sort (sgl_sort_packed.c): keys whose bits below the
 * top digit fit in 32, sorted from their low bits alone, each int rebuilt
 * from its bucket and the bits every key shares: negative ints, bits
 * shared below the ones that differ, exactly 32 bits below the digit, one
 * LSD pass (whose bucket's ints overlap its packed bits), buckets short
 * enough for the introsort, with and without the write-combined split;
 * and 33 bits below the digit, or one outlier far above the others,
 * which must not be packed. */
static void test_packed(void)
{
    static const char *const KIND[] = {
        "below 10^9", "in [-10^9, 0)", "x * 4096 + 7", "below 2^12 (one pass)",
        "32 bits under the digit", "short buckets",
        "33 bits under the digit (not packed)", "below 10^6 and one 2^45 (not packed)"};
    /* the last: sorted in place by sgl_sort_take, its packed bits aside
     * in a mapped block (the first four kinds only) */
    static const int64_t NS[] = {SGL_SORT_HYBRID_MIN + 17, SGL_SORT_WC_MIN + 4099,
                                 (int64_t)(SGL_BLOCK_MAP_MIN / 4) + 4099};
    for (size_t s = 0; s < sizeof NS / sizeof NS[0] - !BIG_CASES; s++) {
        int64_t n = NS[s];
        size_t bytes = (size_t)n * 8;
        /* the top digit's width (docs/language.md: at most 10 bits, as many
         * as leave buckets of about 2048 elements): 5, 8 and 10 bits here */
        int w = 1;
        while (w < 10 && (n >> (w + 1)) >= 2048)
            w++;
        for (int k = 0; k < (s < 2 ? 8 : 4); k++) {
            int64_t *in = xmalloc(bytes);
            for (int64_t i = 0; i < n; i++) {
                uint64_t r = next_u64();
                switch (k) {
                case 0: in[i] = (int64_t)(r % 1000000000); break;
                case 1: in[i] = -1 - (int64_t)(r % 1000000000); break;
                case 2: in[i] = (int64_t)(r % 1000000) * 4096 + 7; break;
                case 3: in[i] = (int64_t)(r % 4096); break;
                case 4: in[i] = (int64_t)(r >> (32 - w)); break;
                case 6: in[i] = (int64_t)(r >> (31 - w)); break;
                case 7: in[i] = i == 1 ? (int64_t)1 << 45 : (int64_t)(r % 1000000); break;
                default: { /* the odd values of the top digit 16 times rarer */
                    uint64_t t = r % ((uint64_t)1 << w);
                    if ((t & 1) && (r >> 10) % 16 != 0)
                        t--;
                    in[i] = (int64_t)(t << (30 - w) | (r >> 32) % ((uint64_t)1 << (30 - w)));
                }
                }
            }
            check_int_sort(in, n, KIND[k],
                           k < 6                                        ? PACKS_YES
                           : k == 7 && n - 1 > 8 * SGL_SORT_CACHE_MAX ? SKEWED
                           : k == 7                                     ? PACKS_NO
                                                                        : WIDE);
            free(in);
        }
    }
    /* either side of the length whose packed bits make a mapped block:
     * a new vector below, in place from there on */
    for (int64_t n = (int64_t)(SGL_BLOCK_MAP_MIN / 4) - 1;
         BIG_CASES && n <= (int64_t)(SGL_BLOCK_MAP_MIN / 4); n++) {
        int64_t *in = xmalloc((size_t)n * 8);
        for (int64_t i = 0; i < n; i++)
            in[i] = (int64_t)(next_u64() % 1000000000);
        check_int_sort(in, n, "below 10^9, at the buffer aside's threshold", PACKS_YES);
        free(in);
    }
    /* from SGL_SORT_PACKED_QUICK_SPARSE ints on, keys of 16 bits (each
     * value about 32 times): the packed radix sort (a new vector), not the
     * packed quicksort (sgl_sort_packed_quick_suits), nor int_special's */
    if (BIG_CASES) {
        int64_t n = SGL_SORT_PACKED_QUICK_SPARSE + 5;
        int64_t *in = xmalloc((size_t)n * 8);
        for (int64_t i = 0; i < n; i++)
            in[i] = (int64_t)(next_u64() % 65536);
        check_int_sort(in, n, "below 2^16, from the quicksort's sparse threshold", PACKS_YES);
        free(in);
    }
}

/* A block of a split of a dead vector, long enough to be sorted in place
 * (its packed bits a mapped block), is sorted in place where it is most
 * of the buffer (the one block of a split into one), or, where the
 * packed quicksort sorts it (on AVX-512: quick_packs), where the other
 * block of a split into two is still alive (it keeps the buffer anyway);
 * a block of a split into two whose other block was freed first gets a
 * new vector (a view sorted in place keeps the whole buffer alive), and
 * so does one whose packing fails (an int above 2^32 that the sample
 * misses: the block as it was, then sorted into a new vector).  The other
 * block keeps its elements, in their order, and each result is in order
 * with the same sum and xor as its block. */
static void test_block_in_place(void)
{
    int64_t h = (int64_t)(SGL_BLOCK_MAP_MIN / 4) + 3, n = 2 * h;
    static const char *const WHAT[] = {"a block of one, sorted in place",
                                       "a block of two, the other alive",
                                       "a block of two, the other freed first",
                                       "a block of two, the other alive, an int the sample misses"};
    for (int k = 0; k < 4; k++) {
        int parts = k == 0 ? 1 : 2;
        bool freed = k == 2;
        int64_t m = parts == 1 ? h : n; /* the vector split */
        sgl_vec v = sgl_vec_new_uninit(&T_IV, m, 1, 1);
        int64_t *x = v.data;
        uint64_t sum = 0, xr = 0;
        for (int64_t i = 0; i < m; i++)
            x[i] = (int64_t)(next_u64() % 1000000000);
        if (k == 3)
            x[1] = (int64_t)1 << 40;
        for (int64_t i = 0; i < h; i++) {
            sum += (uint64_t)x[i];
            xr ^= (uint64_t)x[i];
        }
        int64_t *rest = xmalloc((size_t)(m - h + 1) * 8);
        memcpy(rest, x + h, (size_t)(m - h) * 8);
        sgl_vec blocks = sgl_split_take(&T_IV, &v, parts, 1, 1);
        sgl_vec *b = blocks.data;
        CHECK(b[0].len == h, WHAT[k], m);
        void *data = b[0].data;
        sgl_vec b0 = b[0];
        b[0] = (sgl_vec){NULL, 0, NULL};
        bool quick = quick_packs(b0.data, h);
        CHECK(k != 3 || !quick, WHAT[k], m);
        if (freed)
            sgl_vec_free(&T_IV, &b[1]);
        sgl_vec r = sgl_sort_take(&T_IV, &b0, 1, 1);
        const int64_t *y = r.data;
        bool ok = r.len == h;
        uint64_t rs = 0, rx = 0;
        for (int64_t i = 0; ok && i < h; i++) {
            ok = i == 0 || y[i - 1] <= y[i];
            rs += (uint64_t)y[i];
            rx ^= (uint64_t)y[i];
        }
        CHECK(ok && rs == sum && rx == xr, WHAT[k], m);
        CHECK(parts == 1 || (quick && !freed) ? r.data == data : r.data != data, WHAT[k], m);
        if (parts == 2 && !freed)
            CHECK(b[1].len == n - h && memcmp(b[1].data, rest, (size_t)(n - h) * 8) == 0,
                  WHAT[k], m);
        free(rest);
        sgl_vec_free(&T_IV, &r);
        sgl_vec_free(&(sgl_type){.kind = SGL_T_VEC, .elem = &T_IV}, &blocks);
    }
}

/* Buckets of ints that differ in more than two digits below the split
 * (and more than 32 bits: not packed): random 64-bit ints, sorted by
 * their top two digits and an insertion pass; few values in a bucket's
 * top two digits (not tried: all the digits); both signs; four patterns
 * of all the bits of those digits (tried, the insertion pass gives up:
 * all the digits). */
static void test_int_top_digits(void)
{
    static const char *const KIND[] = {"random 64-bit", "few values under the top digits",
                                       "both signs, 50 bits", "4 patterns under the top digits"};
    static const int64_t NS[] = {SGL_SORT_HYBRID_MIN + 17, 300007};
    for (size_t s = 0; s < sizeof NS / sizeof NS[0]; s++) {
        int64_t n = NS[s];
        size_t bytes = (size_t)n * 8;
        for (int k = 0; k < 4; k++) {
            static const uint64_t PAT[] = {0, 0xffffff, 0x555555, 0xaaaaaa};
            int64_t *in = xmalloc(bytes);
            for (int64_t i = 0; i < n; i++) {
                uint64_t r = next_u64();
                in[i] = k == 0   ? (int64_t)r
                        : k == 1 ? (int64_t)((r % 1024) << 41 | (r >> 10 & 1) << 40 |
                                             (r >> 12 & 0xfffff))
                        : k == 2 ? (int64_t)(r >> 14) - ((int64_t)1 << 49)
                                 : (int64_t)((r % 1024) << 44 | PAT[r >> 10 & 3] << 20 |
                                             (r >> 12 & 0xfffff));
            }
            check_int_sort(in, n, KIND[k], WIDE);
            free(in);
        }
    }
}

/* How many of a[0..n) are -0.0. */
static int64_t minus_zeros(const double *a, int64_t n)
{
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++)
        c += a[i] == 0.0 && signbit(a[i]);
    return c;
}

/* a and b hold equal floats, place by place (-0.0 and 0.0 equal; no NaN). */
static bool same_floats(const double *a, const double *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!(a[i] == b[i]))
            return false;
    return true;
}

/* The float sort without NaNs (sgl_sort_float.c), short (one bucket;
 * not with both zeros) and long (split by a planned table): floats in
 * [0, 1) (a sample's plan, half of them under one exponent), of both
 * signs, all negative, few distinct, exponents from subnormal to huge,
 * infinities; -0.0 and 0.0 both (put back in input order), -0.0 alone;
 * NaNs of either sign (the stable sort's, found by the count); keys that
 * cluster below a bucket's top two digits (the LSD sort of all their
 * bits after the insertion pass gives up); one bucket longer than the
 * cache's (sorted as ints); a negative float or a tiny one where the
 * sample does not look (counted again); all equal. */
static void test_float_fast(void)
{
    static const char *const KIND[] = {
        "[0, 1)", "(-5e5, 5e5)", "-u*u*1e3", "integers below 1000", "2^(+-1000) exponents",
        "with infinities", "-0.0 and 0.0 among others", "-0.0 without 0.0", "one NaN",
        "a negative NaN", "clustered below the top digits", "9 in 10 equal",
        "[0, 1) and one negative", "[0.5, 1) and one tiny", "all equal",
        "one -0.0 among 20 zeros, the greatest", "zeros of both signs only"};
    enum { NKIND = sizeof KIND / sizeof KIND[0] };
    static const int64_t NS[] = {300, SGL_SORT_CACHE_MAX, SGL_SORT_HYBRID_MIN + 17,
                                 SGL_SORT_WC_MIN + 4099};
    for (size_t s = 0; s < sizeof NS / sizeof NS[0]; s++) {
        int64_t n = NS[s];
        size_t bytes = (size_t)n * 8;
        for (int k = 0; k < NKIND; k++) {
            if (n >= SGL_SORT_WC_MIN && k != 0 && k != 1 && k != 6 && k != 8 && k != 12)
                continue; /* the write-combined split: a few kinds (the time of the tests) */
            double *in = xmalloc(bytes), *want = xmalloc(bytes), *got = xmalloc(bytes);
            for (int64_t i = 0; i < n; i++) {
                uint64_t r = next_u64(), b;
                double u = (double)(r >> 11) * 0x1p-53;
                switch (k) {
                case 0: in[i] = u; break;
                case 1: in[i] = (u - 0.5) * 1e6; break;
                case 2: in[i] = -u * u * 1e3; break;
                case 3: in[i] = (double)(r % 1000); break;
                case 4: in[i] = ldexp(u + 0.5, (int)(r % 2000) - 1000) * (r & 1 ? -1 : 1); break;
                case 5: in[i] = r % 10 == 0 ? (r & 1 ? INFINITY : -INFINITY) : u - 0.5; break;
                case 6: in[i] = r % 5 == 0 ? (r & 8 ? -0.0 : 0.0) : u - 0.5; break;
                case 7: in[i] = r % 5 == 0 ? -0.0 : u - 0.5; break;
                case 8: in[i] = i == n - 3 ? nan_with(5, false) : u; break;
                case 9: in[i] = i == n / 2 ? nan_with(9, true) : u - 0.5; break;
                case 10: /* in [1, 2): 8 random top bits, 4 patterns of bits 20..43 */
                    b = 0x3ff0000000000000ULL | (r >> 56) << 44 |
                        (uint64_t[]){0, 0xffffff, 0x555555, 0xaaaaaa}[r >> 10 & 3] << 20 |
                        (r >> 12 & 0xfffff);
                    memcpy(&in[i], &b, sizeof b);
                    break;
                case 11: in[i] = r % 10 ? 1.5 : u; break;
                case 12: in[i] = i == n - 2 ? -1.0 : u; break;
                case 13: in[i] = i == 7 ? 1e-300 : 0.5 + u / 2; break;
                case 14: in[i] = 2.75; break;
                case 15: in[i] = i == 0 ? -0.0 : i < 20 ? 0.0 : -1.0; break;
                default: in[i] = r % 3 ? 0.0 : -0.0; break;
                }
            }
            memcpy(want, in, bytes);
            ref_sort(want, n, cmp_float);
            memcpy(got, in, bytes);
            CHECK(sgl_sort_f64(got, n), KIND[k], n);
            CHECK(memcmp(got, want, bytes) == 0, KIND[k], n);
            memset(got, 0, bytes);
            if (n >= SGL_SORT_HYBRID_MIN) {
                bool fast = sgl_sort_float_f64(in, got, n);
                CHECK(fast == (k != 8 && k != 9), KIND[k], n);
                CHECK(!fast || memcmp(got, want, bytes) == 0, KIND[k], n);
                memset(got, 0, bytes); /* the radix sort, whatever the CPU */
                fast = sgl_sort_float_radix_f64(in, got, n);
                CHECK(fast == (k != 8 && k != 9), KIND[k], n);
                CHECK(!fast || memcmp(got, want, bytes) == 0, KIND[k], n);
                memset(got, 0, bytes); /* AVX-512's, where the CPU has it */
                int vec = sgl_sort_vec_f64(in, got, n), nan = k == 8 || k == 9;
                CHECK(vec == (!sgl_sort_vec_available() ? 0 : nan ? -1 : 1), KIND[k], n);
                CHECK(vec <= 0 || same_floats(got, want, n), KIND[k], n);
                CHECK(vec <= 0 || minus_zeros(got, n) == minus_zeros(in, n), KIND[k], n);
            } else { /* one bucket; not with NaNs, nor with both zeros */
                uint64_t *tmp = xmalloc(bytes);
                int64_t *cnt = xmalloc(sizeof(int64_t) << (SGL_SORT_DIGIT_MAX + 1));
                bool fast = sgl_sort_float_short(in, got, tmp, n, cnt);
                CHECK(fast == (k != 6 && k != 8 && k != 9 && k != 15 && k != 16), KIND[k], n);
                CHECK(!fast || memcmp(got, want, bytes) == 0, KIND[k], n);
                memcpy(got, in, bytes);
                fast = sgl_sort_float_short(got, got, tmp, n, cnt); /* in place */
                CHECK(memcmp(got, fast ? want : in, bytes) == 0, KIND[k], n);
                free(tmp);
                free(cnt);
            }
            check_builtin(&T_FV, in, want, n, KIND[k]);
            free(in);
            free(want);
            free(got);
        }
    }
}

/* Inputs in reverse order, reversed (sgl_sort_descending, whose answer
 * is checked first), against the reference: ints that never ascend, ties
 * among them; floats that always descend; and inputs a reversal would
 * get wrong, sorted otherwise: floats that descend but for two equal
 * (zeros of both signs, whose input order stays), or end in a NaN, and
 * ints that ascend once, at the end; and ints that never ascend in few
 * enough runs to be merged. */
static void test_descending(void)
{
    static const char *const KIND[] = {"ints never ascending, ties", "floats descending",
                                       "floats descending, -0.0 after 0.0",
                                       "floats descending, a NaN last", "ints ascending at the end",
                                       "ints never ascending, 8 runs (merged)"};
    static const int64_t NS[] = {255, 256, 257, 1001, 65536, 300001};
    for (size_t s = 0; s < sizeof NS / sizeof NS[0]; s++) {
        int64_t n = NS[s];
        uint64_t *in = xmalloc((size_t)n * 8), *want = xmalloc((size_t)n * 8);
        for (int k = 0; k < 6; k++) {
            bool fl = k >= 1 && k <= 3;
            for (int64_t i = 0; i < n; i++) {
                double d = (double)(n / 2 - i) * 0.5;
                if (k == 2 && i == n / 2 + 1)
                    d = -0.0; /* after the 0.0 at n / 2 */
                if (k == 3 && i == n - 1)
                    d = NAN;
                int64_t x = k == 0   ? (n - i) / 3 - 100
                            : k == 5 ? (n - 1 - i) / ((n + 7) / 8)
                            : i == n - 1 ? n
                                         : n - i;
                if (fl)
                    memcpy(&in[i], &d, 8);
                else
                    in[i] = (uint64_t)x;
            }
            CHECK(sgl_sort_descending(fl, in, n) == (k <= 1 || k == 5), KIND[k], n);
            memcpy(want, in, (size_t)n * 8);
            ref_sort(want, n, fl ? cmp_float : cmp_int);
            check_builtin(fl ? &T_FV : &T_IV, in, want, n, KIND[k]);
        }
        for (int64_t m = n - 1; m <= n; m++) { /* in place, odd and even lengths */
            for (int64_t i = 0; i < m; i++)
                in[i] = (uint64_t)i;
            sgl_sort_reverse(in, in, m);
            bool ok = true;
            for (int64_t i = 0; i < m; i++)
                ok &= in[i] == (uint64_t)(m - 1 - i);
            CHECK(ok, "reversed in place", m);
        }
        free(in);
        free(want);
    }
}

/* Keys of few values for the partitions of a duplicate pivot (the
 * quicksort's pivot sample holds it twice), from r: 99% one value and 1%
 * below it (the partition at <= finds an element below), or above it
 * (none below: done), two values of 45% and one of 10% (below then at
 * the pivot), 10% one value below 90% of another (the side at the pivot
 * all equal to it: done). */
static const char *const DUP_KIND[] = {"repeated, a few below", "repeated, a few above",
                                       "two repeated, a third rarer",
                                       "one rarer below a repeated"};
enum { NDUP = sizeof DUP_KIND / sizeof DUP_KIND[0] };

static int64_t dup_value(int k, uint64_t r)
{
    switch (k) {
    case 0: return r % 100 ? 5 : 0;
    case 1: return r % 100 ? 5 : 9;
    case 2: return r % 10 == 0 ? 3 : 1 + (int64_t)((r >> 8) % 2);
    default: return r % 10 ? 7 : 1;
    }
}

/* The AVX-512 quicksort (sgl_sort_vec.c) on its own, where the CPU has
 * it (else it declines): lengths about its network's (128) and its
 * partitions' (a partition holds 64 elements of each end), patterns that
 * make bad pivots (few values, the pivot the least, sorted, reversed,
 * organ pipe, all equal), a -0.0 among 0.0s at either end (the output a
 * permutation: as many -0.0s), the depth limit's heapsort (depth 0, 1,
 * 3), and the input left as it was; under 256 elements it declines, and
 * it finds a NaN anywhere. */
static void test_float_vec(void)
{
    static const int64_t NS[] = {255, 256, 257, 300, 383, 384, 1000, 4099, 8191, 8192, 20000, 140001};
    static const char *const KIND[] = {"random",     "few values", "least repeated",
                                       "sorted",     "reversed",   "organ pipe",
                                       "all equal",  "zeros and ones",
                                       "one -0.0 among 20 zeros, the greatest",
                                       "one -0.0 among 20 zeros, the least",
                                       "zeros of both signs only",
                                       /* the partitions of duplicate pivots: then
                                        * DUP_KIND's */
                                       "zeros of both signs, a few below"};
    enum { NBASE = sizeof KIND / sizeof KIND[0], NKIND = NBASE + NDUP };
    bool on = sgl_sort_vec_available();
    for (size_t s = 0; s < sizeof NS / sizeof NS[0]; s++) {
        int64_t n = NS[s];
        size_t bytes = (size_t)n * 8;
        double *in = xmalloc(bytes), *keep = xmalloc(bytes), *want = xmalloc(bytes),
               *got = xmalloc(bytes);
        for (int k = 0; k < NKIND; k++) {
            for (int64_t i = 0; i < n; i++) {
                uint64_t r = next_u64();
                double u = (double)(r >> 11) * 0x1p-53;
                in[i] = k == 0   ? (u - 0.5) * 1e3
                        : k == 1 ? (double)(r % 3)
                        : k == 2 ? (r % 4 ? -7.0 : u)
                        : k == 3 ? (double)i
                        : k == 4 ? (double)(n - i)
                        : k == 5 ? (double)(i < n / 2 ? i : n - i)
                        : k == 6 ? 4.0
                        : k == 7 ? (r % 2 ? 1.0 : r % 4 ? 0.0 : -0.0)
                        : k == 10 ? (r % 3 ? 0.0 : -0.0)
                        : k >= NBASE ? (double)dup_value(k - NBASE, r)
                        : k == 11 ? (r % 100 ? ((r >> 9) % 2 ? -0.0 : 0.0) : -1.0)
                        : i == 0 ? -0.0
                        : i < 20 ? 0.0
                                 : (k == 8 ? -1.0 : 1.0);
            }
            const char *what = k < NBASE ? KIND[k] : DUP_KIND[k - NBASE];
            memcpy(keep, in, bytes);
            memcpy(want, in, bytes);
            ref_sort(want, n, cmp_float);
            for (int depth = -1; depth <= 3; depth++) {
                if (depth == 2 || (n > 20000 && depth >= 0))
                    continue; /* the longest (its partitions prefetch): the default depth */
                memset(got, 0, bytes);
                int done = depth < 0 ? sgl_sort_vec_f64(in, got, n)
                                     : sgl_sort_vec_f64_depth(in, got, n, depth);
                CHECK(done == (on && n >= 256), what, n);
                CHECK(done <= 0 || same_floats(got, want, n), what, n);
                CHECK(done <= 0 || minus_zeros(got, n) == minus_zeros(in, n), what, n);
                CHECK(memcmp(in, keep, bytes) == 0, what, n);
            }
        }
        /* a NaN, first, last or in the middle: declined */
        for (int64_t at = 0; at < n; at += n / 2 - 1) {
            for (int64_t i = 0; i < n; i++)
                in[i] = (double)(next_u64() % 1000);
            in[at] = nan_with((uint64_t)at, at % 2 == 0);
            CHECK(sgl_sort_vec_f64(in, got, n) == (on && n >= 256 ? -1 : 0), "a NaN", n);
        }
        free(in);
        free(keep);
        free(want);
        free(got);
    }
}

/* sgl_sort_vec_i64 on in[0..n) (AVX-512; declines without it): into
 * another buffer (the input left as it was) and in place, at the default
 * depth and (up to 20,000 elements) with heapsort from depth 0, 1 and 3. */
static void check_int_vec(int64_t *in, int64_t n, const char *what)
{
    size_t bytes = (size_t)n * 8;
    bool on = sgl_sort_vec_available();
    int64_t *keep = xmalloc(bytes), *want = xmalloc(bytes), *got = xmalloc(bytes);
    memcpy(keep, in, bytes);
    memcpy(want, in, bytes);
    ref_sort(want, n, cmp_int);
    for (int depth = -1; depth <= 3; depth++) {
        if (depth == 2 || (n > 20000 && depth >= 0))
            continue;
        memset(got, 0, bytes);
        int done = depth < 0 ? sgl_sort_vec_i64(in, got, n) : sgl_sort_vec_i64_depth(in, got, n, depth);
        CHECK(done == (on && n >= 256), what, n);
        CHECK(!done || memcmp(got, want, bytes) == 0, what, n);
        CHECK(memcmp(in, keep, bytes) == 0, what, n);
        memcpy(got, in, bytes); /* in place */
        done = depth < 0 ? sgl_sort_vec_i64(got, got, n) : sgl_sort_vec_i64_depth(got, got, n, depth);
        CHECK(done == (on && n >= 256), what, n);
        CHECK(memcmp(got, done ? want : in, bytes) == 0, what, n);
    }
    free(keep);
    free(want);
    free(got);
}

/* The float quicksort in place (sgl_sort_vec_f64_in_place): a NaN, or
 * -0.0 and 0.0 both, anywhere (in the main blocks of 32, in the last
 * partial block, at either end) leave a as it was (-1); zeros of one sign
 * are sorted (1); under 256 elements nothing is done (0).  And the
 * builtin on a block of a split of a dead float vector: half its buffer,
 * so into a new vector, not in place. */
static void test_float_in_place(void)
{
    static const int64_t NS[] = {255, 256, 259, 287, 65536, 65567, 100031};
    for (size_t s = 0; s < sizeof NS / sizeof NS[0]; s++) {
        int64_t n = NS[s];
        size_t bytes = (size_t)n * 8;
        double *in = xmalloc(bytes), *want = xmalloc(bytes), *got = xmalloc(bytes);
        int64_t tail = n % 32 ? n - n % 32 : n - 32; /* the first of the last block */
        for (int k = 0; k < 9; k++) {
            for (int64_t i = 0; i < n; i++) /* no zero, no NaN */
                in[i] = (double)(next_u64() % 1000 + 1) * (next_u64() & 1 ? 1.0 : -0.5);
            int64_t at[][2] = {{-1, -1}, {tail, n - 1}, {0, n - 1}, {1, 40}, {-1, tail},
                               {-1, 0}, {-1, n - 1}, {5, 3}, {n - 2, n - 1}};
            const char *what[] = {"random", "both zeros in the last block",
                                  "both zeros at the ends", "both zeros in the first blocks",
                                  "a NaN in the last block", "a NaN first", "a NaN last",
                                  "zeros of one sign", "both zeros next to each other"};
            if (k == 7) { /* -0.0 at 5 and at 3 */
                in[5] = -0.0;
                in[3] = -0.0;
            } else if (at[k][0] >= 0) {
                in[at[k][0]] = -0.0;
                in[at[k][1]] = 0.0;
            } else if (at[k][1] >= 0) {
                in[at[k][1]] = nan_with((uint64_t)k, true);
            }
            memcpy(want, in, bytes);
            ref_sort(want, n, cmp_float);
            memcpy(got, in, bytes);
            int r = sgl_sort_vec_f64_in_place(got, n);
            bool can = k == 0 || k == 7;
            int expect = n < 256 || !sgl_sort_vec_available() ? 0 : can ? 1 : -1;
            CHECK(r == expect, what[k], n);
            CHECK(memcmp(got, r == 1 ? want : in, bytes) == 0, what[k], n);
        }
        free(in);
        free(want);
        free(got);
    }
    /* a block of a split of floats: in place by the quicksort while the
     * other block is alive (it keeps the buffer anyway), else (the other
     * freed first, or a NaN in the block) into a new vector; the other
     * block untouched */
    static const char *const BLOCK[] = {"a float block, the other alive",
                                        "a float block, the other freed first",
                                        "a float block, the other alive, a NaN in it"};
    for (int k = 0; k < 3; k++) {
        int64_t h = SGL_SORT_HYBRID_MIN + 5, n = 2 * h;
        sgl_vec v = sgl_vec_new_uninit(&T_FV, n, 1, 1);
        double *x = v.data;
        for (int64_t i = 0; i < n; i++)
            x[i] = (double)(next_u64() >> 11) * 0x1p-53;
        if (k == 2)
            x[7] = nan_with(3, false);
        double *rest = xmalloc((size_t)h * 8);
        memcpy(rest, x + h, (size_t)h * 8);
        sgl_vec blocks = sgl_split_take(&T_FV, &v, 2, 1, 1);
        sgl_vec *b = blocks.data, b0 = b[0];
        void *data = b0.data;
        b[0] = (sgl_vec){NULL, 0, NULL};
        if (k == 1)
            sgl_vec_free(&T_FV, &b[1]);
        sgl_vec r = sgl_sort_take(&T_FV, &b0, 1, 1);
        const double *y = r.data;
        bool ok = r.len == h;
        for (int64_t i = 1; ok && i < h - (k == 2); i++)
            ok = y[i - 1] <= y[i];
        CHECK(ok && (k != 2 || isnan(y[h - 1])), BLOCK[k], n);
        bool in_place = k == 0 && sgl_sort_vec_available();
        CHECK(in_place ? r.data == data : r.data != data, BLOCK[k], n);
        if (k != 1)
            CHECK(memcmp(b[1].data, rest, (size_t)h * 8) == 0, BLOCK[k], n);
        free(rest);
        sgl_vec_free(&T_FV, &r);
        sgl_vec_free(&(sgl_type){.kind = SGL_T_VEC, .elem = &T_FV}, &blocks);
    }
}

/* Floats of two ascending runs in the builtin's order (PSRS's
 * concatenated buckets): counted by sgl_sort_runs_f64 against a count by
 * the reference comparison, merged (sgl_sort_into, and the builtin's
 * copy and take) stably: zeros of both signs, NaNs of many payloads,
 * infinities and duplicates in both runs, whose bits must come out in
 * the reference's order; runs of one element, and three runs (sorted as
 * any). */
static void test_float_two_runs(void)
{
    static const int64_t NS[] = {SGL_SORT_FLOAT_SMALL, 1000, SGL_SORT_HYBRID_MIN + 3, 300001};
    static const char *const KIND[] = {"two runs, halves", "two runs, the second of one",
                                       "two runs, the first of one", "three runs",
                                       "two runs of few values"};
    for (size_t s = 0; s < sizeof NS / sizeof NS[0]; s++) {
        int64_t n = NS[s];
        size_t bytes = (size_t)n * 8;
        double *in = xmalloc(bytes), *want = xmalloc(bytes), *got = xmalloc(bytes);
        for (int k = 0; k < 5; k++) {
            make_floats(in, n, k == 4 ? FEW : NPATTERNS); /* the default: special values */
            int64_t cut[2] = {k == 1 ? n - 1 : k == 2 ? 1 : n / 2 + 1, n};
            if (k == 3) {
                cut[0] = n / 3;
                cut[1] = 2 * n / 3;
            }
            ref_sort(in, cut[0], cmp_float);
            ref_sort(in + cut[0], cut[1] - cut[0], cmp_float);
            if (cut[1] < n)
                ref_sort(in + cut[1], n - cut[1], cmp_float);
            memcpy(want, in, bytes);
            ref_sort(want, n, cmp_float);
            int runs_ref = 1;
            for (int64_t i = 1; i < n; i++)
                runs_ref += cmp_float(&in[i], &in[i - 1]) < 0;
            int64_t bounds[4];
            int runs = sgl_sort_runs_f64((const uint64_t *)(const void *)in, n, bounds, 3);
            CHECK(runs == runs_ref, KIND[k], n);
            CHECK(sgl_sort_runs_f64((const uint64_t *)(const void *)in, n, bounds, 2) ==
                      (runs_ref <= 2 ? runs_ref : 0), KIND[k], n);
            CHECK(runs_ref != 2 || (bounds[0] == 0 && bounds[2] == n &&
                                    cmp_float(&in[bounds[1]], &in[bounds[1] - 1]) < 0),
                  KIND[k], n);
            int cr = sgl_sort_count_runs(true, (const uint64_t *)(const void *)in, n, bounds);
            CHECK(cr == (runs_ref <= 2 ? runs_ref : 0) || cr == SGL_SORT_DESCENDING, KIND[k], n);
            memset(got, 0, bytes);
            CHECK(sgl_sort_into(true, (const uint64_t *)(const void *)in, (uint64_t *)(void *)got,
                                n, cr, bounds), KIND[k], n);
            CHECK(memcmp(got, want, bytes) == 0, KIND[k], n);
            memcpy(got, in, bytes); /* in place: sorted as any */
            CHECK(sgl_sort_into(true, (const uint64_t *)(void *)got, (uint64_t *)(void *)got, n,
                                cr, bounds), KIND[k], n);
            CHECK(memcmp(got, want, bytes) == 0, KIND[k], n);
            if (k != 3) { /* its runs must ascend */
                sgl_merge2_f64((const uint64_t *)(const void *)in, cut[0],
                               (const uint64_t *)(const void *)in + cut[0], n - cut[0],
                               (uint64_t *)(void *)got);
                CHECK(memcmp(got, want, bytes) == 0, KIND[k], n);
            }
            check_builtin(&T_FV, in, want, n, KIND[k]);
        }
        free(in);
        free(want);
        free(got);
    }
}

/* The packed quicksort (sgl_sort_vec_packed_i64), into a buffer and in
 * place, on ints whose keys differ in at most 32 bits: from bit 0, above
 * bit 0 (the low bits fixed), negative, of few values (duplicates), all
 * 32 bits; and the same with one int that differs outside those bits,
 * anywhere (the first, in the first or last step of 16, in the tail):
 * -1, the input as it was (in place: unpacked back), and the int sort
 * (sgl_sort_i64, whose sample misses it) then sorts them all the same.
 * Under 512 ints nothing is done (0). */
static void test_packed_quick(void)
{
    static const int64_t NS[] = {511, 512, 513, 527, 1000, 4099, 65553, 140001};
    static const char *const KIND[] = {"below 10^9", "x << 20 | 5 (bits 20..49)",
                                       "in [-10^9, 0)", "below 5000 (duplicates)",
                                       "all 32 bits", "in [-1000, 1000] << 32 (bits 32..63)",
                                       "below 2^20 << 40 (bits 40..63)"};
    static const int LO[] = {0, 18, 0, 0, 0, 32, 40};
    for (size_t s = 0; s < sizeof NS / sizeof NS[0]; s++) {
        int64_t n = NS[s];
        size_t bytes = (size_t)n * 8;
        int64_t *in = xmalloc(bytes), *want = xmalloc(bytes), *got = xmalloc(bytes);
        int64_t at[] = {-1, 0, 1, 15, 16, n / 2, n - n % 16 - 1, n - 1};
        for (int k = 0; k < 7; k++) {
            for (size_t a = 0; a < sizeof at / sizeof at[0]; a++) {
                for (int64_t i = 0; i < n; i++) {
                    uint64_t r = next_u64();
                    in[i] = k == 0   ? (int64_t)(r % 1000000000)
                            : k == 1 ? (int64_t)((r % ((uint64_t)1 << 30)) << 20 | 5)
                            : k == 2 ? -1 - (int64_t)(r % 1000000000)
                            : k == 3 ? (int64_t)(r % 5000)
                            : k == 4 ? (int64_t)(r >> 32)
                            : k == 5 ? (int64_t)((r % 2001) - 1000) * ((int64_t)1 << 32)
                                     : (int64_t)((r % ((uint64_t)1 << 20)) << 40) - INT64_MAX;
                }
                bool fits = at[a] < 0;
                if (!fits) /* a bit outside the 32 from LO[k] */
                    in[at[a]] ^= LO[k] >= 32 ? 1 : (int64_t)1 << 52;
                char what[96];
                snprintf(what, sizeof what, "%s%s", KIND[k],
                         fits ? "" : ", one int differs above the 32 bits");
                memcpy(want, in, bytes);
                ref_sort(want, n, cmp_int);
                int expect = n < 512 || !sgl_sort_vec_available() ? 0 : fits ? 1 : -1;
                memset(got, 0, bytes);
                int r = sgl_sort_vec_packed_i64(in, got, n, LO[k]);
                CHECK(r == expect, what, n);
                CHECK(r != 1 || memcmp(got, want, bytes) == 0, what, n);
                memcpy(got, in, bytes); /* in place */
                r = sgl_sort_vec_packed_i64(got, got, n, LO[k]);
                CHECK(r == expect, what, n);
                CHECK(memcmp(got, r == 1 ? want : in, bytes) == 0, what, n);
                memcpy(got, in, bytes); /* the int sort, whatever it takes */
                sgl_sort_i64(got, n);
                CHECK(memcmp(got, want, bytes) == 0, what, n);
            }
        }
        free(in);
        free(want);
        free(got);
    }
    /* keys of 10 bits in the sample, 15 once counted (every 390th int,
     * which no sample holds, sets bit 54): int_special's packed sort, from
     * bit 40, into a buffer and in place */
    int64_t n = 100000;
    size_t bytes = (size_t)n * 8;
    int64_t *in = xmalloc(bytes), *want = xmalloc(bytes), *got = xmalloc(bytes);
    for (int64_t i = 0; i < n; i++)
        in[i] = i % 390 == 7 ? (int64_t)1 << 54 : (int64_t)(next_u64() % 1024) << 40;
    memcpy(want, in, bytes);
    ref_sort(want, n, cmp_int);
    CHECK(sgl_sort_into(false, (const uint64_t *)in, (uint64_t *)got, n, -1, NULL) &&
              memcmp(got, want, bytes) == 0,
          "10 bits from bit 40, and bit 54 unsampled", n);
    memcpy(got, in, bytes);
    sgl_sort_i64(got, n);
    CHECK(memcmp(got, want, bytes) == 0, "10 bits from bit 40, and bit 54 unsampled, in place",
          n);
    free(in);
    free(want);
    free(got);
}

/* Every int pattern, and keys of few values whose pivots' samples hold
 * the pivot twice (DUP_KIND), through check_int_vec. */
static void test_int_vec(void)
{
    static const int64_t NS[] = {255, 256, 257, 300, 383, 1000, 4099, 8192, 20000, 140001};
    for (size_t s = 0; s < sizeof NS / sizeof NS[0]; s++) {
        int64_t n = NS[s];
        int64_t *in = xmalloc((size_t)n * 8);
        for (int p = 0; p < NPATTERNS; p++) {
            make_ints(in, n, p);
            check_int_vec(in, n, PATTERN[p]);
        }
        for (int k = 0; k < NDUP; k++) {
            for (int64_t i = 0; i < n; i++)
                in[i] = dup_value(k, next_u64());
            check_int_vec(in, n, DUP_KIND[k]);
        }
        free(in);
    }
    /* the builtin on skewed keys (Zipf-like: many small, a few up to
     * 2^50; the radix sort would split the first bucket again and again):
     * the quicksort where the CPU has AVX-512, in place when taken */
    int64_t n = 8 * SGL_SORT_CACHE_MAX + 40000;
    int64_t *in = xmalloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) {
        double u = (double)((next_u64() >> 11) + 1) * 0x1p-53;
        double x = floor(1.0 / (u * u));
        in[i] = x < 0x1p50 ? (int64_t)x : (int64_t)1 << 50;
    }
    check_int_sort(in, n, "Zipf-like", SKEWED);
    /* ints that differ only in the bits of the top digit (5 bits at
     * least from SGL_SORT_HYBRID_MIN elements on, docs/language.md): the
     * buckets' values written as counted */
    static const char *const FEW[] = {"0 and 1", "1024 + r % 32", "-1 - r % 32", "r % 32 << 40"};
    for (int k = 0; k < 4; k++) {
        for (int64_t i = 0; i < SGL_SORT_HYBRID_MIN + 17; i++) {
            uint64_t r = next_u64() % 32;
            in[i] = k == 0 ? (int64_t)(r & 1)
                    : k == 1 ? 1024 + (int64_t)r
                    : k == 2 ? -1 - (int64_t)r
                             : (int64_t)(r << 40);
        }
        check_int_sort(in, SGL_SORT_HYBRID_MIN + 17, FEW[k], FILLS);
    }
    free(in);
}

int main(void)
{
    rng_state = 2024;
    test_float_order();
    test_float_cases();
    test_runs();
    test_descents();
    test_blocks();
    test_two_runs();
    test_merge_checked();
    test_merge_f64();
    test_write_combining();
    test_packed();
    test_block_in_place();
    test_int_top_digits();
    test_float_fast();
    test_float_vec();
    test_float_in_place();
    test_float_two_runs();
    test_packed_quick();
    test_int_vec();
    test_descending();
    test_ints();
    test_floats();
    printf("%d passed, %d failed\n", n_passed, n_failed);
    fflush(stdout);
    return n_failed == 0 ? 0 : 1;
}
