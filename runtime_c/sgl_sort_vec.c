/*
 * sgl_sort_vec.c: the quicksorts of CPUs with AVX-512 (chosen at run
 * time; the radix sorts of sgl_sort.c and sgl_sort_float.c elsewhere):
 * - of doubles, eight to a vector: the long float sort;
 * - of int64s, eight to a vector: the int keys that the radix sort splits
 *   badly (sgl_sort.c, `skewed`, `wide`, and `uncounted` where the sample
 *   already shows them so);
 * - of uint32s, sixteen to a vector: the ints whose keys differ in at
 *   most 32 bits (sgl_sort_vec_packed_i64), those bits packed into the
 *   output's buffer (or the input's, in place), sorted there and unpacked
 *   from the last (an int lies where two packed keys did, read before).
 *   The packing compares each key with the first outside the 32 bits
 *   before it writes any of a step of 16: at the first that differs it
 *   stops, and, in place, unpacks the keys it wrote back where they were.
 * Equal ints are the same value, so no one can tell an int sort is not
 * stable.  The code is written once, in sgl_sort_vec_body.h, included
 * for each type.
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
 *   elements below the pivot to the left and the others to the right:
 *   eight to a vector, with one permutation (a table of one per mask of
 *   the compare) and two full stores, whose lanes past the part land in
 *   room not yet written (the U vectors held keep U vectors of room at
 *   each end); sixteen, with two compresses in registers, a full store
 *   at the left and a masked one at the right.  The last few elements
 *   (less than a vector) are written with compress stores, exactly, then
 *   the vectors held, as the others.
 * - Parts of at most SMALL elements (16 vectors) are sorted in registers
 *   (the greatest value padding the last vector), as the rows of a
 *   matrix: each column sorted by a network of whole vectors, then the
 *   blocks of 2, 4, .., all lanes merged (x86-simd-sort's networks; the
 *   body's flipNV), of as many vectors as the part needs (rounded up to
 *   even past 8), with no work on the whole vectors of padding up to the
 *   next power of 2.
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
#define SMALL_OF(lanes) (16 * (lanes)) /* elements: 16 vectors, registers enough */
#define SMALL SMALL_OF(L)
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

#define AHEAD (SGL_SORT_AHEAD * 8) /* bytes */

/* The quicksort, once for doubles, int64s and uint32s (the same code on
 * other instructions: for ints, no NaN; -0.0 and 0.0 do not arise). */
#define CAT_(x, s) x##_##s
#define CAT(x, s) CAT_(x, s)
#define FN(name) CAT(name, SUFFIX)

#define SUFFIX f64
#define T double
#define V __m512d
#define L 8
#define M __mmask8
#define WITH_INTO
#define T_MAX INFINITY
#define V_IDX_XOR(k) _mm512_xor_si512(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi64(k))
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

#define SUFFIX i64
#define T int64_t
#define V __m512i
#define L 8
#define M __mmask8
#define WITH_INTO
#define MINMAX_CX
#define T_MAX INT64_MAX
#define V_IDX_XOR(k) _mm512_xor_si512(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi64(k))
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

/* The packed keys of sgl_sort_vec_u32_in_place: unsigned, 16 to a vector,
 * sorted in place only. */
#define SUFFIX u32
#define T uint32_t
#define V __m512i
#define L 16
#define M __mmask16
#define MINMAX_CX
#define T_MAX UINT32_MAX
#define V_IDX_XOR(k)                                                                              \
    _mm512_xor_si512(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),      \
                     _mm512_set1_epi32(k))
#define V_LOADU(p) _mm512_loadu_si512(p)
#define V_STOREU(p, v) _mm512_storeu_si512(p, v)
#define V_MASK_LOADU(s, m, p) _mm512_mask_loadu_epi32(s, m, p)
#define V_MASKZ_LOADU(m, p) _mm512_maskz_loadu_epi32(m, p)
#define V_MASK_STOREU(p, m, v) _mm512_mask_storeu_epi32(p, m, v)
#define V_COMPRESS(p, m, v) _mm512_mask_compressstoreu_epi32(p, m, v)
#define V_MASKZ_COMPRESS(m, v) _mm512_maskz_compress_epi32(m, v)
#define V_SET1(x) _mm512_set1_epi32((int)(x))
#define V_PERM(ix, v) _mm512_permutexvar_epi32(ix, v)
#define V_MIN(a, b) _mm512_min_epu32(a, b)
#define V_MAX(a, b) _mm512_max_epu32(a, b)
#define V_BLEND(m, a, b) _mm512_mask_blend_epi32(m, a, b)
#define V_LT(a, b) _mm512_cmplt_epu32_mask(a, b)
#define V_GT(a, b) _mm512_cmpgt_epu32_mask(a, b)
#define V_GE(a, b) _mm512_cmpge_epu32_mask(a, b)
#define V_NAN(v) ((__mmask16)0)
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
    if (n < 2 * SMALL_OF(8) || !sgl_sort_vec_available())
        return 0;
    return sort_into_f64(src, dst, n, depth);
}

int sgl_sort_vec_i64_depth(const int64_t *src, int64_t *dst, int64_t n, int depth)
{
    if (n < 2 * SMALL_OF(8) || !sgl_sort_vec_available())
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
        __builtin_prefetch(sgl_ahead(a + i, AHEAD));
        __builtin_prefetch(sgl_ahead(a + i, AHEAD + 64));
        __builtin_prefetch(sgl_ahead(a + i, AHEAD + 128));
        __builtin_prefetch(sgl_ahead(a + i, AHEAD + 192));
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
        __mmask8 m = lanes_f64(n - i, 0);
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
    if (n < 2 * SMALL_OF(8) || !sgl_sort_vec_available())
        return 0;
    if (unsortable_in_place_f64(a, n))
        return -1;
    quicksort_f64(a, n, depth_of(n));
    return 1;
}

/* The scalar tails of pack_u32 and unpack_u32 read and write ints and
 * packed keys in one buffer: through types that may alias (the vectors'
 * loads and stores may already). */
typedef int64_t alias_i64 __attribute__((may_alias));
typedef uint32_t alias_u32 __attribute__((may_alias));

/* The keys of src[0..n) from bit lo, 32 of them, into p: 16 ints a step,
 * each step first checked to agree with ref outside those bits.  The
 * count packed: n, or the first of a step that does not agree (a multiple
 * of 16).  p may be src's buffer: p[i] lies in the bytes of src[i / 2],
 * read before. */
AVX512 static int64_t pack_u32(const int64_t *src, uint32_t *p, int64_t n, int lo, uint64_t ref)
{
    const __m512i sign = _mm512_set1_epi64((int64_t)((uint64_t)1 << 63));
    const uint64_t out = ~((uint64_t)0xFFFFFFFF << lo);
    const __m512i vref = _mm512_set1_epi64((int64_t)ref), vout = _mm512_set1_epi64((int64_t)out);
    const __m128i sh = _mm_cvtsi32_si128(lo);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __builtin_prefetch(sgl_ahead(src + i, AHEAD));
        __builtin_prefetch(sgl_ahead(src + i, AHEAD + 64));
        __m512i x = _mm512_xor_si512(_mm512_loadu_si512(src + i), sign);
        __m512i y = _mm512_xor_si512(_mm512_loadu_si512(src + i + 8), sign);
        if (_mm512_test_epi64_mask(_mm512_xor_si512(x, vref), vout) |
            _mm512_test_epi64_mask(_mm512_xor_si512(y, vref), vout))
            return i;
        __m256i px = _mm512_cvtepi64_epi32(_mm512_srl_epi64(x, sh));
        __m256i py = _mm512_cvtepi64_epi32(_mm512_srl_epi64(y, sh));
        _mm512_storeu_si512(p + i, _mm512_inserti64x4(_mm512_castsi256_si512(px), py, 1));
    }
    const alias_i64 *s = src;
    alias_u32 *q = p;
    for (int64_t j = i; j < n; j++)
        if ((sgl_sort_key_int((uint64_t)s[j]) ^ ref) & out)
            return i;
    for (; i < n; i++)
        q[i] = (uint32_t)(sgl_sort_key_int((uint64_t)s[i]) >> lo);
    return n;
}

/* The ints of the keys fixed | p[i] << lo into dst[0..n), from the last
 * (fixed and p[i] << lo share no bit: the int is their XOR with the sign
 * bit, which either may hold): dst may be p's buffer (dst[i] lies in the
 * bytes of p[2 i] and p[2 i + 1], read before). */
AVX512 static void unpack_u32(const uint32_t *p, int64_t *dst, int64_t n, int lo, uint64_t fixed)
{
    const __m512i hb = _mm512_set1_epi64((int64_t)sgl_sort_key_int(fixed));
    const __m128i sh = _mm_cvtsi32_si128(lo);
    const alias_u32 *q = p;
    alias_i64 *d = dst;
    int64_t i = n;
    for (; i % 16; i--)
        d[i - 1] = (int64_t)sgl_sort_key_int(fixed | (uint64_t)q[i - 1] << lo);
    for (; i > 0; i -= 16) {
        __builtin_prefetch(sgl_ahead(p + i, -AHEAD));
        __m512i v = _mm512_loadu_si512(p + i - 16);
        __m512i x = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(v));
        __m512i y = _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(v, 1));
        _mm512_storeu_si512(dst + i - 16, _mm512_xor_si512(_mm512_sll_epi64(x, sh), hb));
        _mm512_storeu_si512(dst + i - 8, _mm512_xor_si512(_mm512_sll_epi64(y, sh), hb));
    }
}

int sgl_sort_vec_packed_i64(const int64_t *src, int64_t *dst, int64_t n, int lo)
{
    if (n < 2 * SMALL_OF(16) || !sgl_sort_vec_available())
        return 0;
    uint64_t ref = sgl_sort_key_int((uint64_t)src[0]);
    uint64_t fixed = ref & ~((uint64_t)0xFFFFFFFF << lo);
    uint32_t *p = (uint32_t *)(void *)dst;
    int64_t k = pack_u32(src, p, n, lo, ref);
    if (k < n) {
        /* in place: p[0..k) lie in src[0..k/2), whose keys they hold whole */
        if (src == dst)
            unpack_u32(p, dst, k / 2, lo, fixed);
        return -1;
    }
    quicksort_u32(p, n, depth_of(n));
    unpack_u32(p, dst, n, lo, fixed);
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

int sgl_sort_vec_packed_i64(const int64_t *src, int64_t *dst, int64_t n, int lo)
{
    (void)src;
    (void)dst;
    (void)n;
    (void)lo;
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
