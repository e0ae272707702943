/*
 * sgl_sort_vec.c: the long float sort on CPUs with AVX-512 (chosen at
 * run time; sgl_sort_float.c's radix sort elsewhere): a quicksort of the
 * doubles themselves, eight to a vector.
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
 *   before it has sorted anything (the stable sort's to do).
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
 *   3 below.  A part
 *   whose elements below the pivot are none (the pivot is its least) is
 *   split at <= instead, and the elements equal to the pivot are done; a
 *   recursion deeper than 2 log2(n) finishes its part by heapsort.
 *
 * bench/README.md ("The sort") has the figures.
 */
#include "sgl_sort.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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

/* One stage of a bitonic network inside a vector: each lane takes the
 * min or (where takemax) the max of itself and the lane perm gives (of
 * two equal, each takes the other's bits: -0.0 and 0.0 swap, none is
 * lost). */
AVX512 static inline __m512d stage(__m512d a, __m512i perm, __mmask8 takemax)
{
    __m512d b = _mm512_permutexvar_pd(perm, a);
    return _mm512_mask_blend_pd(takemax, _mm512_min_pd(a, b), _mm512_max_pd(a, b));
}

/* flipNV: sorts the 8 NV doubles of v[0..NV) (NV from 1 to 16), in
 * registers once the loops are unrolled: the bitonic sort of P vectors
 * (the power of 2 from NV up) in which every block is sorted ascending
 * and two blocks are merged by comparing each element of the first with
 * its mirror in the second (the last with the first), then by
 * half-cleaners at distances m/4 .. 1 vectors (a merged block of m
 * vectors), then 4, 2, 1 lanes.  The P - NV vectors past v's would hold
 * +inf, the greatest, at the end: a compare-exchange never moves them
 * (its min is at the lower index, and `<` is strict), so the network
 * leaves out every one that reads them: a part of 80 floats costs 10
 * vectors' work, not 16's (the lanes of padding in v's last vector, and
 * small_sort's vector of padding for an odd count past 8, are sorted as
 * the others).  Inside a vector each stage is a permutation (lane l against
 * l^1, l^2, l^4, or its mirror in a block of 4 or 8) and a min and a max;
 * between vectors a compare and two blends (the mirror: the second
 * vector's lanes reversed before and after). */
#define REV(x) _mm512_permutexvar_pd(rev, x)
#define FLIP(NV)                                                                                  \
    NETWORK static inline __attribute__((always_inline)) void flip##NV(__m512d *v)                \
    {                                                                                             \
        const __m512i p1 = _mm512_set_epi64(6, 7, 4, 5, 2, 3, 0, 1);                              \
        const __m512i p2 = _mm512_set_epi64(5, 4, 7, 6, 1, 0, 3, 2);                              \
        const __m512i p4 = _mm512_set_epi64(3, 2, 1, 0, 7, 6, 5, 4);                              \
        const __m512i m3 = _mm512_set_epi64(4, 5, 6, 7, 0, 1, 2, 3);                              \
        const __m512i rev = _mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7);                             \
        enum { P = NV <= 1 ? 1 : NV <= 2 ? 2 : NV <= 4 ? 4 : NV <= 8 ? 8 : 16 };                  \
        /* each vector sorted: blocks of 2; of 4 (mirror, l^1); of 8 (mirror, l^2, l^1) */        \
        _Pragma("GCC unroll 16") for (int a = 0; a < NV; a++)                                     \
        {                                                                                         \
            v[a] = stage(v[a], p1, 0xAA);                                                         \
            v[a] = stage(v[a], m3, 0xCC);                                                         \
            v[a] = stage(v[a], p1, 0xAA);                                                         \
            v[a] = stage(v[a], rev, 0xF0);                                                        \
            v[a] = stage(v[a], p2, 0xCC);                                                         \
            v[a] = stage(v[a], p1, 0xAA);                                                         \
        }                                                                                         \
        _Pragma("GCC unroll 8") for (int m = 2; m <= P; m <<= 1) /* vectors a block */            \
        {                                                                                         \
            _Pragma("GCC unroll 16") for (int a = 0; a < NV; a++)                                 \
            {                                                                                     \
                int i = a % m, b = a - i + m - 1 - i;                                             \
                if (i >= m / 2 || b >= NV)                                                        \
                    continue;                                                                     \
                __m512d rb = REV(v[b]);                                                           \
                __mmask8 sw = _mm512_cmp_pd_mask(rb, v[a], _CMP_LT_OQ);                           \
                __m512d lo = _mm512_mask_blend_pd(sw, v[a], rb);                                  \
                __m512d hi = _mm512_mask_blend_pd(sw, rb, v[a]);                                  \
                v[a] = lo;                                                                        \
                v[b] = REV(hi);                                                                   \
            }                                                                                     \
            _Pragma("GCC unroll 8") for (int d = m / 4; d >= 1; d >>= 1)                          \
            {                                                                                     \
                _Pragma("GCC unroll 16") for (int a = 0; a < NV; a++)                             \
                {                                                                                 \
                    int b = a + d;                                                                \
                    if ((a & d) || b >= NV)                                                       \
                        continue;                                                                 \
                    __mmask8 sw = _mm512_cmp_pd_mask(v[b], v[a], _CMP_LT_OQ);                     \
                    __m512d lo = _mm512_mask_blend_pd(sw, v[a], v[b]);                            \
                    __m512d hi = _mm512_mask_blend_pd(sw, v[b], v[a]);                            \
                    v[a] = lo;                                                                    \
                    v[b] = hi;                                                                    \
                }                                                                                 \
            }                                                                                     \
            /* the half-cleaners inside each vector: l^4, l^2, l^1 */                             \
            _Pragma("GCC unroll 16") for (int a = 0; a < NV; a++)                                 \
            {                                                                                     \
                v[a] = stage(v[a], p4, 0xF0);                                                     \
                v[a] = stage(v[a], p2, 0xCC);                                                     \
                v[a] = stage(v[a], p1, 0xAA);                                                     \
            }                                                                                     \
        }                                                                                         \
    }
/* up to 8 vectors each count; past 8, every other (small_sort rounds up) */
FLIP(1)
FLIP(2)
FLIP(3)
FLIP(4)
FLIP(5)
FLIP(6)
FLIP(7)
FLIP(8)
FLIP(10)
FLIP(12)
FLIP(14)
FLIP(16)
#undef REV

/* The lanes of vector i of a[0..n) that hold elements. */
static inline __mmask8 lanes(int64_t n, int i)
{
    int64_t r = n - 8 * (int64_t)i;
    return r >= 8 ? 0xFF : r <= 0 ? 0 : (__mmask8)((1u << r) - 1);
}

#define SMALL_SORT(NV)                                                                            \
    do {                                                                                          \
        __m512d v[NV];                                                                            \
        _Pragma("GCC unroll 16") for (int i = 0; i < NV; i++) v[i] =                              \
            _mm512_mask_loadu_pd(inf, lanes(n, i), a + 8 * i);                                    \
        flip##NV(v);                                                                              \
        _Pragma("GCC unroll 16") for (int i = 0; i < NV; i++)                                     \
            _mm512_mask_storeu_pd(a + 8 * i, lanes(n, i), v[i]);                                  \
    } while (0)

/* Sorts a[0..n), n <= SMALL: the network of the fewest vectors that hold
 * n (of 10, 12, 14 or 16 past 8: 12 networks, not 16, of code). */
NETWORK static void small_sort(double *a, int64_t n)
{
    const __m512d inf = _mm512_set1_pd(INFINITY);
    switch ((n + 7) / 8) {
#define CASE(NV)                                                                                  \
    case NV:                                                                                      \
        SMALL_SORT(NV);                                                                           \
        break;
        CASE(1)
        CASE(2)
        CASE(3)
        CASE(4)
        CASE(5)
        CASE(6)
        CASE(7)
        CASE(8)
    case 9:
        CASE(10)
    case 11:
        CASE(12)
    case 13:
        CASE(14)
    case 15:
        CASE(16)
#undef CASE
    }
}

/* Writes v's lanes in m (cnt of them) to a: those above the pivot (of
 * le's compare) down from *wr, the others up from *wl, exactly. */
#define PUT_EXACT(v, m, cnt)                                                                      \
    do {                                                                                          \
        __mmask8 hi_ = above(v, vp, le) & (m), lo_ = (__mmask8)(~hi_ & (m));                      \
        int nh_ = __builtin_popcount(hi_);                                                        \
        _mm512_mask_compressstoreu_pd(a + wl, lo_, v);                                            \
        wl += (cnt)-nh_;                                                                          \
        wr -= nh_;                                                                                \
        _mm512_mask_compressstoreu_pd(a + wr, hi_, v);                                            \
    } while (0)
/* The same for a whole vector, where there are 8 places of room at both
 * ends (or exactly 8 in all: the two stores are then one, the same lanes
 * at the same place): one permutation puts the lanes below the pivot
 * first, those above last, and the vector is stored whole at both ends. */
#define PUT(v)                                                                                    \
    do {                                                                                          \
        __mmask8 hi_ = above(v, vp, le);                                                          \
        __m512i ix_ = _mm512_cvtepu8_epi64(_mm_cvtsi64_si128((long long)part_perm[hi_]));         \
        __m512d pv_ = _mm512_permutexvar_pd(ix_, v);                                              \
        int nh_ = __builtin_popcount(hi_);                                                        \
        _mm512_storeu_pd(a + wl, pv_);                                                            \
        _mm512_storeu_pd(a + wr - 8, pv_);                                                        \
        wl += 8 - nh_;                                                                            \
        wr -= nh_;                                                                                \
    } while (0)

/* The lanes of v above the pivot: > p where le, else >= p. */
AVX512 static inline __mmask8 above(__m512d v, __m512d vp, bool le)
{
    return le ? _mm512_cmp_pd_mask(v, vp, _CMP_GT_OQ) : _mm512_cmp_pd_mask(v, vp, _CMP_GE_OQ);
}

/* The address k elements from p, which may lie outside p's array (for a
 * prefetch, which never faults: computed as an integer, not by pointer
 * arithmetic past the array). */
static inline const void *ahead(const double *p, int64_t k)
{
    return (const void *)((uintptr_t)p + (uintptr_t)(k * (int64_t)sizeof *p));
}

/* Partitions a[0..n) (n > 16 U) around p: those below p (le: not above
 * it) first; their count.  The ends' U vectors each are read first, so
 * that the elements read and not yet written leave 16 U places of room:
 * reading U vectors from the end with less room leaves at least 8 U at
 * both ends. */
AVX512 static inline __attribute__((always_inline)) int64_t partition(double *a, int64_t n,
                                                                      double p, bool le)
{
    __m512d vp = _mm512_set1_pd(p), lv[U], rv[U];
    for (int u = 0; u < U; u++) {
        lv[u] = _mm512_loadu_pd(a + 8 * u);
        rv[u] = _mm512_loadu_pd(a + n - 8 * U + 8 * u);
    }
    int64_t l = 8 * U, r = n - 8 * U, wl = 0, wr = n;
    while (r - l >= 8 * U) {
        const double *from;
        if (l - wl <= wr - r) {
            from = a + l;
            l += 8 * U;
            if (n >= PREFETCH_MIN)
                _Pragma("GCC unroll 8") for (int u = 0; u < U; u++)
                    __builtin_prefetch(ahead(from, SGL_SORT_AHEAD + 8 * u));
        } else {
            r -= 8 * U;
            from = a + r;
            if (n >= PREFETCH_MIN)
                _Pragma("GCC unroll 8") for (int u = 0; u < U; u++)
                    __builtin_prefetch(ahead(from, 8 * u - SGL_SORT_AHEAD));
        }
        __m512d v[U];
        _Pragma("GCC unroll 8") for (int u = 0; u < U; u++) v[u] = _mm512_loadu_pd(from + 8 * u);
        _Pragma("GCC unroll 8") for (int u = 0; u < U; u++) PUT(v[u]);
    }
    while (r - l >= 8) {
        __m512d v;
        if (l - wl <= wr - r) {
            v = _mm512_loadu_pd(a + l);
            l += 8;
        } else {
            r -= 8;
            v = _mm512_loadu_pd(a + r);
        }
        PUT(v);
    }
    if (r > l) {
        __mmask8 m = (__mmask8)((1u << (r - l)) - 1);
        __m512d v = _mm512_maskz_loadu_pd(m, a + l);
        PUT_EXACT(v, m, (int)(r - l));
    }
    /* Every element not held is written: the room left is 8 places for
     * each vector held, so PUT's two whole stores land in it, apart while
     * two vectors or more are left (16 places or more), the same 8
     * places, with the same lanes, for the last. */
    for (int u = 0; u < U; u++) {
        PUT(lv[u]);
        PUT(rv[u]);
    }
    return wl;
}

AVX512 static int64_t partition_lt(double *a, int64_t n, double p)
{
    return partition(a, n, p, false);
}

AVX512 static int64_t partition_le(double *a, int64_t n, double p)
{
    return partition(a, n, p, true);
}

/* A pivot of a[0..n): an element, the median of 9 spread over a (of 3
 * under 8,192; of 64 from 65,536 on, where a pivot far from the median
 * costs a pass more over more elements). */
AVX512 static double pivot(const double *a, int64_t n)
{
    if (n >= 65536) {
        _Alignas(64) double s[64];
        for (int i = 0; i < 64; i++)
            s[i] = a[(n - 1) / 63 * i];
        small_sort(s, 64);
        return s[32];
    }
    if (n < 8192) {
        double x = a[0], y = a[n / 2], z = a[n - 1], t;
        if (x > y) {
            t = x;
            x = y;
            y = t;
        }
        if (y > z)
            y = z;
        return x > y ? x : y;
    }
    double s[9];
    for (int i = 0; i < 9; i++)
        s[i] = a[(n - 1) / 8 * i];
    for (int i = 1; i < 9; i++) {
        double x = s[i];
        int j = i;
        for (; j > 0 && s[j - 1] > x; j--)
            s[j] = s[j - 1];
        s[j] = x;
    }
    return s[4];
}

static void sift(double *a, int64_t i, int64_t n)
{
    double x = a[i];
    for (int64_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && a[c + 1] > a[c])
            c++;
        if (!(a[c] > x))
            break;
        a[i] = a[c];
    }
    a[i] = x;
}

/* The depth limit's sort: O(n log n) whatever the pivots. */
static void heapsort(double *a, int64_t n)
{
    for (int64_t i = n / 2; i-- > 0;)
        sift(a, i, n);
    for (int64_t e = n - 1; e > 0; e--) {
        double t = a[0];
        a[0] = a[e];
        a[e] = t;
        sift(a, 0, e);
    }
}

/* Sorts a[0..n), at most depth partitions deep: the smaller part by
 * recursion, the larger in the loop. */
AVX512 static void quicksort(double *a, int64_t n, int depth)
{
    while (n > SMALL) {
        if (depth-- <= 0) {
            heapsort(a, n);
            return;
        }
        double p = pivot(a, n);
        int64_t m = partition_lt(a, n, p);
        if (m == 0) { /* p is the least: those equal to it are in place */
            m = partition_le(a, n, p);
            a += m;
            n -= m;
            continue;
        }
        if (m < n - m) {
            quicksort(a, m, depth);
            a += m;
            n -= m;
        } else {
            quicksort(a + m, n - m, depth);
            n = m;
        }
    }
    if (n > 1)
        small_sort(a, n);
}

/* src[0..n) partitioned into dst around p (below p first, the others
 * down from the end): their count, or -1 where an element is a NaN. */
AVX512 static int64_t partition_into(const double *src, double *dst, int64_t n, double p)
{
    __m512d vp = _mm512_set1_pd(p);
    int64_t wl = 0, wr = n, i = 0;
    __mmask8 nan = 0;
    const bool le = false;
    double *a = dst; /* (PUT's names) */
    for (; i + 8 <= n && wr - wl >= 16; i += 8) { /* room for PUT's whole stores */
        __m512d v = _mm512_loadu_pd(src + i);
        nan |= _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q);
        PUT(v);
    }
    for (; i < n; i += 8) {
        __mmask8 m = lanes(n - i, 0);
        __m512d v = _mm512_maskz_loadu_pd(m, src + i);
        nan |= _mm512_mask_cmp_pd_mask(m, v, v, _CMP_UNORD_Q);
        __mmask8 hi = _mm512_mask_cmp_pd_mask(m, v, vp, _CMP_GE_OQ), lo = (__mmask8)(m & ~hi);
        _mm512_mask_compressstoreu_pd(dst + wl, lo, v);
        wl += __builtin_popcount(lo);
        wr -= __builtin_popcount(hi);
        _mm512_mask_compressstoreu_pd(dst + wr, hi, v);
    }
    return nan ? -1 : wl;
}

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
    double p = pivot(src, n);
    int64_t m = partition_into(src, dst, n, p);
    if (m < 0)
        return -1;
    if (m == 0) {
        m = partition_le(dst, n, p);
        quicksort(dst + m, n - m, depth);
    } else {
        quicksort(dst, m, depth);
        quicksort(dst + m, n - m, depth);
    }
    return 1;
}

#else /* no AVX-512 code: sgl_sort_float.c's radix sort */

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
#endif

int sgl_sort_vec_f64(const double *src, double *dst, int64_t n)
{
    int depth = 0;
    for (int64_t k = n; k > 1; k >>= 1)
        depth += 2;
    return sgl_sort_vec_f64_depth(src, dst, n, depth);
}
