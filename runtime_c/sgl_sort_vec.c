/*
 * sgl_sort_vec.c: the long float sort on CPUs with AVX-512 (chosen at
 * run time; sgl_sort_float.c's radix sort elsewhere): a quicksort of the
 * doubles themselves, eight to a vector; and the same quicksort of
 * int64s, for the int keys that the radix sort splits badly (sgl_sort.c,
 * `skewed`, and `uncounted` where the sample already shows them so:
 * equal ints are the same value, so no one can tell it is not stable).
 * The code is written once, in sgl_sort_vec_body.h, included for each
 * type.
 *
 * Without NaNs two floats that compare equal are the same bits but for
 * -0.0 and 0.0, so an unstable sort cannot be told from a stable one
 * once the zeros are put back in their input order (sgl_sort_float.c
 * does, from the input): the sort compares with the CPU's `<`, which
 * orders floats as the builtin does (-0.0 = 0.0), and moves whole
 * elements (a permutation: no compare-exchange gives two lanes one
 * zero's bits).
 *
 * - The first pass partitions the input into the output (the input is
 *   left as it was) and looks for NaNs: one there, and the sort gives up
 *   before it has sorted anything (the stable sort's to do).  In place
 *   (sgl_sort_vec_f64_in_place, a vector the builtin owns), a read of the
 *   input comes first, for NaNs and for zeros of both signs, whose order
 *   the input no longer holds once a partition has moved them: at the
 *   first of either it stops, and nothing is done.
 * - A partition in place holds U vectors of each end in registers, reads
 *   U more from the end with less room written, and writes each vector's
 *   elements below the pivot to the left and the others to the right with
 *   one permutation (a table of one per mask of the compare) and two
 *   full stores, whose lanes past the part land in room not yet written
 *   (the U vectors held keep 8U elements of room at each end).  The last
 *   few elements (fewer than 8) are written with compress stores,
 *   exactly, then the vectors held, as the others.
 * - Parts of at most SMALL elements are sorted by a bitonic network in
 *   registers (+inf padding the last vector), of as many vectors as the
 *   part needs (rounded up to even past 8), with no work on the whole
 *   vectors of padding up to the next power of 2.
 * - Pivots: the median of 64 elements from 65,536 on, of 9 from 8,192, of
 *   3 below.  A part whose elements below the pivot are none (the pivot is
 *   its least) is split at <= instead, and the elements equal to the
 *   pivot are done.  Where the sample holds the pivot twice (keys of few
 *   values), the partition also finds the part's greatest element (where
 *   the pivot is the sample's least: split at <= at once, its least), and
 *   a side all equal to the pivot is done after that pass (one pass more,
 *   at <, where elements below the pivot turn up that the sample missed).
 *   A recursion deeper than 2 log2(n) finishes its part by heapsort.
 *
 * bench/README.md ("The sort") has the figures.
 */
#include "sgl_sort.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* 2 log2(n) partitions deep at most */
static int depth_of(int64_t n)
{
    int depth = 0;
    for (int64_t k = n; k > 1; k >>= 1)
        depth += 2;
    return depth;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f")))
/* The networks, unrolled to straight code on constant indices of
 * vectors held in registers, and small_sort, their only caller (its
 * loads and stores masked to the part), are left out of the sanitizers'
 * checks: clang -O2 -fsanitize=address,undefined took more than 8
 * minutes to compile them (1 s without; gcc 4 s). */
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 8)
#define NETWORK __attribute__((target("avx512f"), no_sanitize("address", "undefined")))
#else
#define NETWORK AVX512
#endif
#define SMALL 128 /* elements: 16 vectors, registers enough */
#define U 8       /* vectors read at a time from one end of a partition */
/* From this many elements on (512 KiB: the levels that gained, timed in
 * bench/README.md), a partition asks for the lines it reads next,
 * SGL_SORT_AHEAD (4 KiB) ahead of the end it reads (the hardware
 * prefetchers stop at each 4 KiB page, and follow one end at a time). */
#define PREFETCH_MIN 65536

/* For each mask of 8 lanes: the lanes not in it, then those in it (a
 * byte each). */
static uint64_t part_perm[256];

static void part_perm_init(void)
{
    for (int m = 0; m < 256; m++) {
        uint64_t x = 0;
        int k = 0;
        for (int in = 0; in < 2; in++)
            for (int lane = 0; lane < 8; lane++)
                if (((m >> lane) & 1) == in)
                    x |= (uint64_t)lane << (8 * k++);
        part_perm[m] = x;
    }
}

/* What a pivot's sample says of its duplicates (dup_of) */
enum { NO_DUP, DUP_LEAST, DUP };

/* The lanes of vector i of a[0..n) that hold elements. */
static inline __mmask8 lanes(int64_t n, int i)
{
    int64_t r = n - 8 * (int64_t)i;
    return r >= 8 ? 0xFF : r <= 0 ? 0 : (__mmask8)((1u << r) - 1);
}

/* The address k elements from p, which may lie outside p's array (for a
 * prefetch, which never faults: computed as an integer, not by pointer
 * arithmetic past the array). */
static inline const void *ahead(const void *p, int64_t k)
{
    return (const void *)((uintptr_t)p + (uintptr_t)(k * 8));
}

/* The quicksort, once for doubles and once for int64s (the same code on
 * other instructions: for ints, no NaN; -0.0 and 0.0 do not arise). */
#define CAT_(x, s) x##_##s
#define CAT(x, s) CAT_(x, s)
#define FN(name) CAT(name, SUFFIX)

#define SUFFIX f64
#define T double
#define V __m512d
#define T_MAX INFINITY
#define V_LOADU(p) _mm512_loadu_pd(p)
#define V_STOREU(p, v) _mm512_storeu_pd(p, v)
#define V_MASK_LOADU(s, m, p) _mm512_mask_loadu_pd(s, m, p)
#define V_MASKZ_LOADU(m, p) _mm512_maskz_loadu_pd(m, p)
#define V_MASK_STOREU(p, m, v) _mm512_mask_storeu_pd(p, m, v)
#define V_COMPRESS(p, m, v) _mm512_mask_compressstoreu_pd(p, m, v)
#define V_SET1(x) _mm512_set1_pd(x)
#define V_PERM(ix, v) _mm512_permutexvar_pd(ix, v)
#define V_MIN(a, b) _mm512_min_pd(a, b)
#define V_MAX(a, b) _mm512_max_pd(a, b)
#define V_BLEND(m, a, b) _mm512_mask_blend_pd(m, a, b)
#define V_LT(a, b) _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ)
#define V_GT(a, b) _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ)
#define V_GE(a, b) _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ)
#define V_NAN(v) _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q)
#include "sgl_sort_vec_body.h"
#undef SUFFIX
#undef T
#undef V
#undef T_MAX
#undef V_LOADU
#undef V_STOREU
#undef V_MASK_LOADU
#undef V_MASKZ_LOADU
#undef V_MASK_STOREU
#undef V_COMPRESS
#undef V_SET1
#undef V_PERM
#undef V_MIN
#undef V_MAX
#undef V_BLEND
#undef V_LT
#undef V_GT
#undef V_GE
#undef V_NAN

#define SUFFIX i64
#define T int64_t
#define V __m512i
#define T_MAX INT64_MAX
#define V_LOADU(p) _mm512_loadu_si512(p)
#define V_STOREU(p, v) _mm512_storeu_si512(p, v)
#define V_MASK_LOADU(s, m, p) _mm512_mask_loadu_epi64(s, m, p)
#define V_MASKZ_LOADU(m, p) _mm512_maskz_loadu_epi64(m, p)
#define V_MASK_STOREU(p, m, v) _mm512_mask_storeu_epi64(p, m, v)
#define V_COMPRESS(p, m, v) _mm512_mask_compressstoreu_epi64(p, m, v)
#define V_SET1(x) _mm512_set1_epi64(x)
#define V_PERM(ix, v) _mm512_permutexvar_epi64(ix, v)
#define V_MIN(a, b) _mm512_min_epi64(a, b)
#define V_MAX(a, b) _mm512_max_epi64(a, b)
#define V_BLEND(m, a, b) _mm512_mask_blend_epi64(m, a, b)
#define V_LT(a, b) _mm512_cmplt_epi64_mask(a, b)
#define V_GT(a, b) _mm512_cmpgt_epi64_mask(a, b)
#define V_GE(a, b) _mm512_cmpge_epi64_mask(a, b)
#define V_NAN(v) ((__mmask8)0)
#include "sgl_sort_vec_body.h"

/* Whether the CPU has AVX-512F and SGL_SORT_VEC is not 0; the table made
 * where it is: once a process (threads may sort at the same time). */
static bool vec_on;
static pthread_once_t vec_once = PTHREAD_ONCE_INIT;

static void vec_init(void)
{
    const char *e = getenv("SGL_SORT_VEC");
    vec_on = !(e && strcmp(e, "0") == 0) && __builtin_cpu_supports("avx512f");
    if (vec_on)
        part_perm_init();
}

bool sgl_sort_vec_available(void)
{
    (void)pthread_once(&vec_once, vec_init);
    return vec_on;
}

int sgl_sort_vec_f64_depth(const double *src, double *dst, int64_t n, int depth)
{
    if (n < 2 * SMALL || !sgl_sort_vec_available())
        return 0;
    return sort_into_f64(src, dst, n, depth);
}

int sgl_sort_vec_i64_depth(const int64_t *src, int64_t *dst, int64_t n, int depth)
{
    if (n < 2 * SMALL || !sgl_sort_vec_available())
        return 0;
    if (src != dst)
        return sort_into_i64(src, dst, n, depth);
    quicksort_i64(dst, n, depth);
    return 1;
}

/* Whether a[0..n) holds a NaN, or both -0.0 and 0.0: 32 elements a step,
 * their masks ORed, one test a step. */
AVX512 static bool unsortable_in_place_f64(const double *a, int64_t n)
{
    const __m512i sign = _mm512_set1_epi64((int64_t)((uint64_t)1 << 63));
    const __m512d zero = _mm512_setzero_pd();
    __mmask8 neg0 = 0, pos0 = 0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __builtin_prefetch(ahead(a + i, SGL_SORT_AHEAD));
        __builtin_prefetch(ahead(a + i, SGL_SORT_AHEAD + 8));
        __builtin_prefetch(ahead(a + i, SGL_SORT_AHEAD + 16));
        __builtin_prefetch(ahead(a + i, SGL_SORT_AHEAD + 24));
        __mmask8 nan = 0;
        for (int k = 0; k < 4; k++) {
            __m512d v = _mm512_loadu_pd(a + i + 8 * k);
            __mmask8 z = _mm512_cmp_pd_mask(v, zero, _CMP_EQ_OQ);
            __mmask8 s = _mm512_test_epi64_mask(_mm512_castpd_si512(v), sign);
            nan |= _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q);
            neg0 |= (__mmask8)(z & s);
            pos0 |= (__mmask8)(z & ~s);
        }
        if (nan || (neg0 && pos0))
            return true;
    }
    for (; i < n; i += 8) {
        __mmask8 m = lanes(n - i, 0);
        __m512d v = _mm512_maskz_loadu_pd(m, a + i);
        __mmask8 z = (__mmask8)(_mm512_cmp_pd_mask(v, zero, _CMP_EQ_OQ) & m);
        __mmask8 s = _mm512_test_epi64_mask(_mm512_castpd_si512(v), sign);
        if (_mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q) & m)
            return true;
        neg0 |= (__mmask8)(z & s);
        pos0 |= (__mmask8)(z & ~s);
    }
    return neg0 && pos0;
}

int sgl_sort_vec_f64_in_place(double *a, int64_t n)
{
    if (n < 2 * SMALL || !sgl_sort_vec_available())
        return 0;
    if (unsortable_in_place_f64(a, n))
        return -1;
    quicksort_f64(a, n, depth_of(n));
    return 1;
}

#else /* no AVX-512 code: the radix sorts */

bool sgl_sort_vec_available(void)
{
    return false;
}

int sgl_sort_vec_f64_depth(const double *src, double *dst, int64_t n, int depth)
{
    (void)src;
    (void)dst;
    (void)n;
    (void)depth;
    return 0;
}

int sgl_sort_vec_i64_depth(const int64_t *src, int64_t *dst, int64_t n, int depth)
{
    (void)src;
    (void)dst;
    (void)n;
    (void)depth;
    return 0;
}

int sgl_sort_vec_f64_in_place(double *a, int64_t n)
{
    (void)a;
    (void)n;
    return 0;
}
#endif

int sgl_sort_vec_f64(const double *src, double *dst, int64_t n)
{
    return sgl_sort_vec_f64_depth(src, dst, n, depth_of(n));
}

int sgl_sort_vec_i64(const int64_t *src, int64_t *dst, int64_t n)
{
    return sgl_sort_vec_i64_depth(src, dst, n, depth_of(n));
}
