/*
 * sgl_sort.c: the builtin sort of [int] and [float], typed (no comparator
 * call per comparison) and stable (brief §8).
 *
 * The order: ints by `<`; floats by `<`, with -0.0 and 0.0 equal, every
 * NaN equal to every other and after all the other values; elements that
 * compare equal keep their input order (`sort([0.0, -0.0])` is
 * `[0.0, -0.0]`, and NaNs keep their payloads' order).
 *
 * Keys: every element is sorted by an unsigned 64-bit key whose order is
 * the builtin's: an int's bits with the sign bit flipped; a float's bits
 * with every bit flipped when the sign is set, else the sign bit set
 * (IEEE 754's totalOrder as unsigned integers), after -0.0 is mapped to
 * 0.0, and every NaN to the one key above +inf's.  Two elements have the
 * same key exactly when the order says they are equal; the sorts move the
 * elements themselves and compute the key when they need it, so the
 * key's map need not be invertible.
 *
 * Long inputs (SGL_SORT_RADIX_MIN elements or more): an LSD radix sort,
 * stable by construction, between the output and one scratch buffer of
 * the same length (ping-pong).  One read pass ORs and ANDs the keys: the
 * bits on which all keys agree are never looked at, and the span from
 * the lowest to the highest bit that differs is cut into the fewest
 * digits of at most SGL_SORT_DIGIT_MAX bits (8 below SGL_SORT_WIDE_MIN
 * elements), of equal widths: keys below 10^9 (30 bits) take three
 * 10-bit passes, full 64-bit keys six.  One more read pass counts every
 * digit at once; a digit whose count is one bucket is skipped; then one
 * scatter pass per digit.  The first pass reads the source (so sorting a
 * copy copies nothing extra) and the buffers alternate so that the last
 * pass writes the output.
 *
 * From SGL_SORT_HYBRID_MIN elements on, one MSD pass on the top digit
 * first, then LSD passes in the cache (HYBRID_SORT, below); ints whose
 * bits that differ below that digit fit in 32 are split as those bits
 * alone, 4 bytes an element (sgl_sort_packed.c).  Floats with no NaN (and,
 * under SGL_SORT_HYBRID_MIN, not both -0.0 and 0.0) are sorted as ints of
 * their order instead, by a split planned from a sample and two digits
 * in the cache (sgl_sort_float.c); the others by the stable sorts here.
 * Ints that differ only in the top digit's bits, or skewed or wide ones,
 * are sorted at once after its count (int_special: written as counted;
 * the AVX-512 quicksort of sgl_sort_vec.c, unstable, which no one can
 * tell), or, skewed ones the sample shows, before any count.
 *
 * An int input of at most SGL_SORT_MAX_RUNS ascending runs (the
 * concatenation of sorted blocks that PSRS sorts at each level) is
 * merged instead (sgl_merge.c), in rounds of pairwise (stable) merges
 * between the same two buffers: ceil(log2(runs)) sequential passes; a
 * float input of two runs, into another buffer, by one merge.
 *
 * Short inputs: ints by an introsort in place (unstable, and no program
 * can tell: equal ints are the same bits); floats by a stable insertion
 * sort on their keys.
 *
 * The builtin itself, which vector is sorted where, is in
 * sgl_sort_builtin.c.  Scratch buffers and results come from the
 * runtime's block allocator (big ones mapped populated, or a freed one
 * reused).
 */
#include "sgl_sort.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sgl.h"
#include "sgl_vbuf.h"

/* ------------------------------------------------------------------ */
/* Keys                                                                */

#define key_float sgl_sort_key_float /* sgl_sort.h */

uint64_t sgl_sort_key_f64(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return key_float(b);
}

/* ------------------------------------------------------------------ */
/* Scratch                                                             */

/* Scratch: `elems` elements and `counts` counts, from the block
 * allocator (NULL fields when it has no memory). */
typedef struct {
    uint64_t *tmp;
    int64_t *cnt;
    int64_t kind;
} scratch;

static bool scratch_get(scratch *s, int64_t elems, int64_t counts)
{
    size_t bytes = (size_t)(elems + counts) * 8;
    void *p = sgl_block_alloc(bytes, false, &s->kind);
    if (!p)
        return false;
    s->tmp = p;
    s->cnt = (int64_t *)p + elems;
    return true;
}

static void scratch_put(scratch *s)
{
    sgl_block_free(s->tmp, s->kind);
}

/* A stable insertion sort of the doubles (as bits) a[0..n) by their keys. */
static void insertion_sort_float(uint64_t *a, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        uint64_t x = a[i], kx = key_float(x);
        int64_t j = i;
        for (; j > 0 && kx < key_float(a[j - 1]); j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

/* ------------------------------------------------------------------ */
/* LSD radix sort                                                      */

typedef sgl_sort_span span;

static span span_of(uint64_t diff)
{
    if (diff == 0)
        return (span){1, 0};
    return (span){__builtin_ctzll(diff), 63 - __builtin_clzll(diff)};
}

/* LSD_CORE(NAME, KEY): sorts src[0..n) into dst (dst may be src) by the
 * bits sp.lo..sp.hi of KEY (the other bits being equal in all keys), cut
 * into the fewest digits of at most sgl_sort_digit_max(n) bits of equal widths,
 * with tmp (n elements) as scratch and cnt (2 << SGL_SORT_DIGIT_MAX
 * entries) for the counts.  A first pass counts digit 0; every scatter
 * pass counts the next digit as it moves the elements; the first one
 * prefetches pf[0..min(n, pfn)) (the next bucket of a split: about as
 * long), a line every 8 elements.  The MAKE_LSD
 * sort first finds the bits that differ (one read pass). */
#define MAKE_LSD(CORE, NAME, KEY)                                                               \
    static void CORE(const uint64_t *src, uint64_t *dst, uint64_t *tmp, int64_t n, int64_t *cnt, \
                     span sp, const uint64_t *pf, int64_t pfn)                                  \
    {                                                                                           \
        if (sp.lo > sp.hi) {                                                                    \
            if (dst != src)                                                                     \
                memcpy(dst, src, (size_t)n * sizeof *dst);                                      \
            return;                                                                             \
        }                                                                                       \
        int bits = sp.hi - sp.lo + 1, maxw = sgl_sort_digit_max(n);                                      \
        int count = (bits + maxw - 1) / maxw;                                                   \
        int width = (bits + count - 1) / count;                                                 \
        size_t nb = (size_t)1 << width;                                                         \
        uint64_t mask = nb - 1;                                                                 \
        int64_t *cur = cnt, *next = cnt + nb;                                                   \
        memset(cur, 0, nb * sizeof *cur);                                                       \
        for (int64_t i = 0; i < n; i++)                                                         \
            cur[(KEY(src[i]) >> sp.lo) & mask]++;                                               \
        const uint64_t *from = src;                                                             \
        for (int p = 0; p < count; p++) {                                                       \
            sgl_sort_offsets(cur, nb);                                                          \
            uint64_t *to = sgl_pass_dest(src, dst, tmp, count, p);                              \
            int shift = sp.lo + p * width;                                                      \
            if (p + 1 < count) {                                                                \
                memset(next, 0, nb * sizeof *next);                                             \
                for (int64_t i = 0; i < n; i++) {                                               \
                    if (p == 0 && (i & 7) == 0 && i < pfn)                                      \
                        __builtin_prefetch(pf + i);                                             \
                    uint64_t x = from[i], k = KEY(x) >> shift;                                  \
                    to[cur[k & mask]++] = x;                                                    \
                    next[(k >> width) & mask]++;                                                \
                }                                                                               \
            } else {                                                                            \
                for (int64_t i = 0; i < n; i++) {                                               \
                    if (p == 0 && (i & 7) == 0 && i < pfn)                                      \
                        __builtin_prefetch(pf + i);                                             \
                    uint64_t x = from[i];                                                       \
                    to[cur[(KEY(x) >> shift) & mask]++] = x;                                    \
                }                                                                               \
            }                                                                                   \
            int64_t *t = cur;                                                                   \
            cur = next;                                                                         \
            next = t;                                                                           \
            from = to;                                                                          \
        }                                                                                       \
        if (from != dst)                                                                        \
            memcpy(dst, from, (size_t)n * sizeof *dst);                                         \
    }                                                                                           \
    static void NAME(const uint64_t *src, uint64_t *dst, uint64_t *tmp, int64_t n, int64_t *cnt) \
    {                                                                                           \
        uint64_t any = 0, all = ~(uint64_t)0;                                                   \
        for (int64_t i = 0; i < n; i++) {                                                       \
            uint64_t k = KEY(src[i]);                                                           \
            any |= k;                                                                           \
            all &= k;                                                                           \
        }                                                                                       \
        CORE(src, dst, tmp, n, cnt, span_of(any ^ all), NULL, 0);                               \
    }

MAKE_LSD(lsd_int, radix_int, sgl_sort_key_int)
MAKE_LSD(lsd_float, radix_float, key_float)

void sgl_radix_sort_i64(const int64_t *src, int64_t *dst, int64_t *tmp, int64_t n, int64_t *cnt)
{
    radix_int((const uint64_t *)src, (uint64_t *)dst, (uint64_t *)tmp, n, cnt);
}

void sgl_radix_sort_f64(const double *src, double *dst, double *tmp, int64_t n, int64_t *cnt)
{
    radix_float((const uint64_t *)(const void *)src, (uint64_t *)(void *)dst,
                (uint64_t *)(void *)tmp, n, cnt);
}

/* ------------------------------------------------------------------ */
/* Long inputs: one MSD pass, then LSD in the cache                    */

/* The top digit of the hybrid sort for the span sp: its lowest bit. */
static int top_shift(span sp, int64_t n)
{
    /* as many bits as leave buckets of about SGL_SORT_BUCKET elements on
     * spread-out keys, at least 1 and at most SGL_SORT_TOP_BITS */
    int w = 1;
    while (w < SGL_SORT_TOP_BITS && (n >> (w + 1)) >= SGL_SORT_BUCKET)
        w++;
    int bits = sp.hi - sp.lo + 1;
    return sp.hi + 1 - (bits < w ? bits : w);
}

/* A split of n elements by one digit (sgl_sort.h). */
typedef sgl_sort_split split;

static void split_put(split *sl)
{
    sgl_block_free(sl->meta, sl->meta_kind);
}

/* The length of the bucket after bucket b of the split sl (0 after the
 * last): the LSD sort of bucket b prefetches it. */
#define NEXT_LEN(sl, b) ((sl).start[(b) + 2 <= (sl).nb ? (b) + 2 : (b) + 1] - (sl).start[(b) + 1])

#define ID(x) (x)
#define NO_PACK(src, dst, n, sl, tmp, cnt) false
#define NO_SPECIAL(src, dst, n, sl) false

/* Keys that the radix sort splits badly (the bits below the top digit
 * still to sort in a bucket out of the L2 cache: 8 SGL_SORT_CACHE_MAX
 * elements): each such bucket costs another split through memory, and
 * keys of a few huge values and many small ones (Zipf's) call for one
 * level after another. */
static bool skewed(const sgl_sort_split *sl)
{
    return sl->sp.lo <= sl->sp.hi && sl->shift > sl->sp.lo &&
           sl->longest > 8 * SGL_SORT_CACHE_MAX;
}

/* The int sort of src into dst (or in place: src == dst) where the first
 * count of the top digit shows a better way than the radix sort's: true
 * where it sorted them.
 * - The digit holds every bit in which the ints differ (at most 2^10
 *   values: two values, small counts): each bucket is one value, which
 *   is written as many times as it was counted, in order (equal ints
 *   are the same value), instead of moving the elements there.
 * - Keys of at most 32 bits that the packed quicksort suits or that are
 *   skewed (exact where sgl_sort_packed_quick_i64's sample was not): it
 *   sorts them (sgl_sort_vec_packed_i64, from sp.lo) on AVX-512.
 * - Other skewed keys, and wide ones, of more than 32 bits below the
 *   digit in the input and in the sample (not packed: an 8-byte scatter,
 *   then two LSD digits and an insertion pass per bucket, or more, cost
 *   more than the quicksort; where only a few elements set the low bits,
 *   the buckets' passes are few): the int64 quicksort, on AVX-512. */
static bool int_special(const uint64_t *src, uint64_t *dst, int64_t n, const sgl_sort_split *sl)
{
    if (sl->uncounted) /* skewed by the sample (hybrid_int_count): the quicksort is there */
        return sgl_sort_vec_i64((const int64_t *)src, (int64_t *)dst, n) == 1;
    if (sl->sp.lo <= sl->sp.hi && sl->shift == sl->sp.lo) {
        uint64_t fixed = sl->all & ~sgl_sort_span_bits(sl->sp);
        for (size_t b = 0; b < sl->nb; b++) {
            uint64_t x = sgl_sort_key_int(fixed | (uint64_t)b << sl->shift);
            for (int64_t i = sl->start[b]; i < sl->start[b + 1]; i++)
                dst[i] = x;
        }
        return true;
    }
    int w = sl->sp.hi - sl->sp.lo + 1;
    if (sl->sp.lo <= sl->sp.hi && w <= 32 && (sgl_sort_packed_quick_suits(w, n) || skewed(sl)))
        return sgl_sort_vec_packed_i64((const int64_t *)src, (int64_t *)dst, n, sl->sp.lo) == 1;
    return (skewed(sl) || sl->wide) &&
           sgl_sort_vec_i64((const int64_t *)src, (int64_t *)dst, n) == 1;
}
#define SPECIAL_INT(src, dst, n, sl) int_special(src, dst, n, sl)

/* HYBRID_SORT(NAME, KEY, CORE, SMALL, SMALL_N, PACK, SPECIAL, QUICK) defines NAME(src,
 * dst, n): sorts src[0..n) into dst (not src) by KEY, stably.  The
 * highest SGL_SORT_TOP_BITS bits that differ are one digit, counted, then
 * scattered from src to dst in one pass; that leaves buckets of about
 * n / 2^SGL_SORT_TOP_BITS elements on spread-out keys, each then sorted
 * where it lies, in the cache: by SMALL below SMALL_N elements, by the
 * LSD radix sort CORE on the bits below the digit up to
 * SGL_SORT_CACHE_MAX elements.  A longer bucket (skewed keys: floats of
 * one exponent, a few outliers) is split again by its own top digit,
 * into a scratch buffer and back, recursively.  The first read pass of a
 * split finds the bits that differ and, at once, counts the top digit
 * that a sample of 256 elements predicts (another count pass only when
 * the prediction was wrong; with QUICK, 1 where int_special's quicksort
 * takes skewed keys, none where the sample shows them skewed:
 * NAME##_count's `quick`).  After the first count, SPECIAL
 * (int_special, or NO_SPECIAL) then PACK (sgl_sort.h's
 * sgl_sort_packed_i64, or NO_PACK) may sort the whole input instead.
 * False (dst unspecified) without memory. */
#define ANY_ALL(k) (any |= (k), all &= (k))
#define NOTHING(k) ((void)(k))
#define HYBRID_SORT(NAME, KEY, CORE, SMALL, SMALL_N, PACK, SPECIAL, QUICK)                      \
    /* The bits in which the keys of 256 elements of from[0..n), evenly                         \
     * spaced, differ; *sall: the bits all of them set. */                                      \
    static span NAME##_sample(const uint64_t *from, int64_t n, uint64_t *sall)                  \
    {                                                                                           \
        uint64_t any = 0, all = ~(uint64_t)0;                                                   \
        int64_t step = n / 256 > 0 ? n / 256 : 1;                                               \
        for (int64_t j = 0; j < n; j += step) {                                                 \
            uint64_t k = KEY(from[j]);                                                          \
            any |= k;                                                                           \
            all &= k;                                                                           \
        }                                                                                       \
        *sall = all;                                                                            \
        return span_of(any ^ all);                                                              \
    }                                                                                           \
    /* Counts the top digit of from[0..n) into sl (sp empty: all equal).  quick:                \
     * where the quicksort will sort skewed keys (int_special), keys that the                   \
     * sample itself shows skewed (a bucket of its digit of more than                           \
     * 8 SGL_SORT_CACHE_MAX elements, as it estimates: ints of both signs                       \
     * near zero, Zipf's mostly small ones) are not counted at all                              \
     * (sl->uncounted). */                                                                      \
    static bool NAME##_count(const uint64_t *from, int64_t n, split *sl, bool quick)            \
    {                                                                                           \
        sl->uncounted = sl->wide = false;                                                       \
        quick = quick && n >= SGL_SORT_HYBRID_MIN && sgl_sort_vec_available();                  \
        uint64_t sall;                                                                          \
        int64_t step = n / 256 > 0 ? n / 256 : 1;                                               \
        span guess = NAME##_sample(from, n, &sall);                                             \
        int gshift = guess.lo > guess.hi ? 0 : top_shift(guess, n);                             \
        int gw = guess.lo > guess.hi ? 1 : guess.hi - gshift + 1;                               \
        size_t nb = (size_t)1 << SGL_SORT_TOP_BITS;                                             \
        /* 2 nb + 1 counts, 3 nb for SGL_SORT_COUNT's, then 8 nb + 8 for                        \
         * WC_SCATTER's lines */                                                                \
        bool wc = SGL_SORT_WC && n >= SGL_SORT_WC_MIN;                                          \
        size_t bytes = ((5 * nb + 1) + (wc ? 8 * nb + 8 : 0)) * sizeof(int64_t);                \
        if (!(sl->meta = sgl_block_alloc(bytes, false, &sl->meta_kind)))                        \
            return false;                                                                       \
        int64_t *top = sl->meta, *start = top + nb, *more = start + nb + 1;                     \
        sl->lines = wc ? (uint64_t(*)[8])(void *)(((uintptr_t)(more + 3 * nb) + 63) &           \
                                                   ~(uintptr_t)63)                              \
                       : NULL;                                                                  \
        nb = (size_t)1 << gw;                                                                   \
        memset(top, 0, nb * sizeof *top);                                                       \
        if (quick && guess.lo <= guess.hi && guess.lo < gshift) { /* the sample's counts */     \
            int64_t most = 0;                                                                   \
            for (int64_t j = 0; j < n; j += step) {                                             \
                int64_t *c = &top[(KEY(from[j]) >> gshift) & (nb - 1)];                         \
                most = ++*c > most ? *c : most;                                                 \
            }                                                                                   \
            if (most * step > 8 * SGL_SORT_CACHE_MAX) {                                         \
                sl->sp = guess;                                                                 \
                sl->all = sall;                                                                 \
                sl->shift = gshift;                                                             \
                sl->longest = most * step;                                                      \
                sl->uncounted = true;                                                           \
                return true;                                                                    \
            }                                                                                   \
            memset(top, 0, nb * sizeof *top);                                                   \
        }                                                                                       \
        uint64_t any = 0, all = ~(uint64_t)0;                                                   \
        SGL_SORT_COUNT(KEY, from, n, gshift, nb, top, more, ANY_ALL);                           \
        span sp = span_of(any ^ all);                                                           \
        sl->sp = sp;                                                                            \
        sl->all = all;                                                                          \
        if (sp.lo > sp.hi)                                                                      \
            return true;                                                                        \
        int shift = top_shift(sp, n), w = sp.hi - shift + 1;                                    \
        if (shift != gshift || w != gw) {                                                       \
            /* not the digit counted: count it */                                               \
            nb = (size_t)1 << w;                                                                \
            memset(top, 0, nb * sizeof *top);                                                   \
            SGL_SORT_COUNT(KEY, from, n, shift, nb, top, more, NOTHING);                        \
        }                                                                                       \
        int64_t sum = 0, longest = 0;                                                           \
        for (size_t b = 0; b < nb; b++) {                                                       \
            int64_t c = top[b];                                                                 \
            longest = c > longest ? c : longest;                                                \
            start[b] = sum;                                                                     \
            top[b] = sum;                                                                       \
            sum += c;                                                                           \
        }                                                                                       \
        start[nb] = n;                                                                          \
        sl->shift = shift;                                                                      \
        sl->nb = nb;                                                                            \
        sl->pos = top;                                                                          \
        sl->start = start;                                                                      \
        sl->longest = longest;                                                                  \
        /* not a few elements' low bits: the sample's too */                                    \
        sl->wide = shift - sp.lo > 32 && gshift - guess.lo > 32;                                \
        return true;                                                                            \
    }                                                                                           \
    /* Scatters from[0..n) into to by the digit counted in sl. */                               \
    static void NAME##_scatter(const uint64_t *from, uint64_t *to, int64_t n, split *sl)        \
    {                                                                                           \
        SGL_SORT_SCATTER(uint64_t, 8, ID, SGL_SORT_DIGIT, KEY, from, to, n, *sl);               \
    }                                                                                           \
    /* Splits from[0..n) into to by its top digit (sp empty: all equal,                         \
     * nothing moved). */                                                                       \
    static bool NAME##_split(const uint64_t *from, uint64_t *to, int64_t n, split *sl)          \
    {                                                                                           \
        if (!NAME##_count(from, n, sl, false))                                                  \
            return false;                                                                       \
        if (sl->sp.lo <= sl->sp.hi)                                                             \
            NAME##_scatter(from, to, n, sl);                                                    \
        return true;                                                                            \
    }                                                                                           \
    static bool NAME##_in(uint64_t *x, uint64_t *y, int64_t n, scratch *c);                     \
    /* Sorts from into to, with aux (n elements, may be from) as scratch                        \
     * for the long buckets; c: scratch for the buckets sorted in cache. */                     \
    static bool NAME##_to(const uint64_t *from, uint64_t *to, uint64_t *aux, int64_t n,         \
                          scratch *c)                                                           \
    {                                                                                           \
        split sl;                                                                               \
        if (!NAME##_split(from, to, n, &sl))                                                    \
            return false;                                                                       \
        bool ok = true;                                                                         \
        if (sl.sp.lo > sl.sp.hi)                                                                \
            memcpy(to, from, (size_t)n * sizeof *to);                                           \
        else if (sl.shift > sl.sp.lo) {                                                         \
            span low = {sl.sp.lo, sl.shift - 1};                                                \
            for (size_t b = 0; ok && b < sl.nb; b++) {                                          \
                int64_t o = sl.start[b], m = sl.start[b + 1] - o;                               \
                if (m < SMALL_N)                                                                \
                    SMALL(to + o, m);                                                           \
                else if (m <= SGL_SORT_CACHE_MAX)                                               \
                    CORE(to + o, to + o, c->tmp, m, c->cnt, low, to + o + m,                    \
                         NEXT_LEN(sl, b));                                                      \
                else                                                                            \
                    ok = NAME##_in(to + o, aux + o, m, c);                                      \
            }                                                                                   \
        }                                                                                       \
        split_put(&sl);                                                                         \
        return ok;                                                                              \
    }                                                                                           \
    /* Sorts x in place, with y (n elements) as scratch. */                                     \
    static bool NAME##_in(uint64_t *x, uint64_t *y, int64_t n, scratch *c)                      \
    {                                                                                           \
        split sl;                                                                               \
        if (!NAME##_split(x, y, n, &sl))                                                        \
            return false;                                                                       \
        bool ok = true;                                                                         \
        if (sl.sp.lo <= sl.sp.hi) {                                                             \
            span low = {sl.sp.lo, sl.shift - 1};                                                \
            for (size_t b = 0; ok && b < sl.nb; b++) {                                          \
                int64_t o = sl.start[b], m = sl.start[b + 1] - o;                               \
                if (m < SMALL_N || sl.shift == sl.sp.lo) {                                      \
                    memcpy(x + o, y + o, (size_t)m * sizeof *x);                                \
                    if (sl.shift > sl.sp.lo)                                                    \
                        SMALL(x + o, m);                                                        \
                } else if (m <= SGL_SORT_CACHE_MAX)                                             \
                    CORE(y + o, x + o, c->tmp, m, c->cnt, low, y + o + m, NEXT_LEN(sl, b));     \
                else                                                                            \
                    ok = NAME##_to(y + o, x + o, y + o, m, c);                                  \
            }                                                                                   \
        }                                                                                       \
        split_put(&sl);                                                                         \
        return ok;                                                                              \
    }                                                                                           \
    /* Sorts src into dst (not src) after src's top digit was counted                          \
     * into sl (NAME##_count); c: the buckets' scratch. */                                      \
    static bool NAME##_counted(const uint64_t *src, uint64_t *dst, int64_t n, split *slp,       \
                               scratch *cp)                                                     \
    {                                                                                           \
        split sl = *slp;                                                                        \
        scratch c = *cp, aux = {NULL, NULL, 0};                                                 \
        bool ok = !sl.uncounted; /* never: int_special sorts what is left uncounted */          \
        if (!ok)                                                                                \
            ;                                                                                   \
        else if (sl.sp.lo > sl.sp.hi)                                                           \
            memcpy(dst, src, (size_t)n * sizeof *dst);                                          \
        else if (PACK(src, dst, n, &sl, c.tmp, c.cnt))                                          \
            ;                                                                                   \
        else if ((NAME##_scatter(src, dst, n, &sl), sl.shift > sl.sp.lo)) {                     \
            span low = {sl.sp.lo, sl.shift - 1};                                                \
            if (sl.longest > SGL_SORT_CACHE_MAX)                                                \
                ok = scratch_get(&aux, sl.longest, 0);                                          \
            for (size_t b = 0; ok && b < sl.nb; b++) {                                          \
                int64_t o = sl.start[b], m = sl.start[b + 1] - o;                               \
                if (m < SMALL_N)                                                                \
                    SMALL(dst + o, m);                                                          \
                else if (m <= SGL_SORT_CACHE_MAX)                                               \
                    CORE(dst + o, dst + o, c.tmp, m, c.cnt, low, dst + o + m,                   \
                         NEXT_LEN(sl, b));                                                      \
                else                                                                            \
                    ok = NAME##_in(dst + o, aux.tmp, m, &c);                                    \
            }                                                                                   \
            if (aux.tmp)                                                                        \
                scratch_put(&aux);                                                              \
        }                                                                                       \
        return ok;                                                                              \
    }                                                                                           \
    static bool NAME(const uint64_t *src, uint64_t *dst, int64_t n)                             \
    {                                                                                           \
        split sl;                                                                               \
        scratch c;                                                                              \
        if (!scratch_get(&c, SGL_SORT_CACHE_MAX, 2 << SGL_SORT_DIGIT_MAX))                      \
            return false;                                                                       \
        if (!NAME##_count(src, n, &sl, QUICK)) {                                                \
            scratch_put(&c);                                                                    \
            return false;                                                                       \
        }                                                                                       \
        bool ok = SPECIAL(src, dst, n, &sl) || NAME##_counted(src, dst, n, &sl, &c);            \
        split_put(&sl);                                                                         \
        scratch_put(&c);                                                                        \
        return ok;                                                                              \
    }

/* An insertion sort of the ints a[0..n) (n >= 1), which a sort by their
 * top digits left nearly in order (the ones that agree on those digits:
 * in a bucket of a few thousand spread-out ints, a handful); false (a a
 * permutation of itself) once it has moved more than n / 8 + 64 of them,
 * the caller then sorting by all the digits. */
static bool fix_up_int(int64_t *a, int64_t n)
{
    int64_t budget = n / 8 + 64, prev = a[0];
    for (int64_t i = 1; i < n; i++) {
        int64_t x = a[i];
        if (x >= prev) {
            prev = x;
            continue;
        }
        int64_t j = i;
        do {
            a[j] = a[j - 1];
            j--;
        } while (j > 0 && a[j - 1] > x);
        a[j] = x;
        budget -= i - j;
        if (budget < 0)
            return false;
    }
    return true;
}

/* Whether a bucket of n ints whose keys differ in the bits `diff` is
 * sorted by its two top digits, from bit `top` up, and fix_up_int: only
 * where the bits that differ among those can make 2n values or more
 * (ints packed as two fields, floats of few mantissa bits: the pass
 * would give up, after two digits for nothing). */
static bool two_digits(uint64_t diff, int top, int64_t n)
{
    return ((int64_t)1 << __builtin_popcountll(diff >> top)) >= 2 * n;
}

/* The LSD sort of a bucket of ints (lsd_int's arguments): where the bits
 * that differ in the bucket make more than two digits (random 64-bit
 * ints: 54 bits below the split's) and enough values in the top two
 * (two_digits), the top two digits only, then an insertion pass
 * for the ints that agree on them (fix_up_int; equal ints are the
 * same value, so the sort need not be stable), or all the digits where
 * that pass gives up. */
static void lsd_int_bucket(const uint64_t *src, uint64_t *dst, uint64_t *tmp, int64_t n,
                           int64_t *cnt, span sp, const uint64_t *pf, int64_t pfn)
{
    int maxw = sgl_sort_digit_max(n);
    if (sp.hi - sp.lo + 1 > 2 * maxw) {
        /* the bucket's own bits that differ, not the split's */
        uint64_t any = 0, all = ~(uint64_t)0;
        for (int64_t i = 0; i < n; i++) {
            uint64_t k = sgl_sort_key_int(src[i]);
            any |= k;
            all &= k;
        }
        sp = span_of(any ^ all);
        int top = sp.hi + 1 - 2 * maxw;
        if (sp.hi - sp.lo + 1 > 2 * maxw && two_digits(any ^ all, top, n)) {
            lsd_int(src, dst, tmp, n, cnt, (span){top, sp.hi}, pf, pfn);
            if (fix_up_int((int64_t *)dst, n))
                return;
            src = dst;
            pfn = 0;
        }
    }
    lsd_int(src, dst, tmp, n, cnt, sp, pf, pfn);
}

static void small_int(uint64_t *a, int64_t n)
{
    sgl_introsort_i64((int64_t *)a, n);
}

void sgl_sort_bucket_i64(int64_t *a, int64_t *tmp, int64_t n, int64_t *cnt, const int64_t *pf,
                         int64_t pfn)
{
    if (n < SGL_SORT_RADIX_MIN)
        small_int((uint64_t *)a, n);
    else
        lsd_int_bucket((uint64_t *)a, (uint64_t *)a, (uint64_t *)tmp, n, cnt, (span){0, 63},
                       (const uint64_t *)pf, pfn);
}

#define PACK_INT(src, dst, n, sl, tmp, cnt)                                                     \
    sgl_sort_packed_i64((const int64_t *)(src), (int64_t *)(dst), n, sl, tmp, cnt, NULL)

HYBRID_SORT(hybrid_int, sgl_sort_key_int, lsd_int_bucket, small_int, SGL_SORT_RADIX_MIN,
            PACK_INT, SPECIAL_INT, 1)
HYBRID_SORT(hybrid_float, key_float, lsd_float, insertion_sort_float, SGL_SORT_FLOAT_SMALL,
            NO_PACK, NO_SPECIAL, 0)

sgl_sort_span sgl_sort_sample_i64(const uint64_t *from, int64_t n, uint64_t *sall)
{
    return hybrid_int_sample(from, n, sall);
}

/* sgl_sort.h.  Only where the buffer aside is a mapped block
 * (SGL_BLOCK_MAP_MIN: populated at once, on huge pages, and kept once
 * freed, so that a vector allocated next grows it): a smaller one is
 * malloc'd, its pages fault in one by one and are not kept, and the
 * in-place sort of 2.5*10^6 ints (PSRS's children at 1x2, whose merges
 * then need new pages instead of the input's) made the bench's sort 15%
 * slower (bench/README.md, "The sort in place"). */
static bool int_in_place(uint64_t *a, int64_t n, uint64_t *(*fresh)(void *), void *arg,
                         bool *moved)
{
    split sl;
    scratch c;
    *moved = false;
    if (!scratch_get(&c, SGL_SORT_CACHE_MAX, 2 << SGL_SORT_DIGIT_MAX))
        return false;
    if (!hybrid_int_count(a, n, &sl, true)) {
        scratch_put(&c);
        return false;
    }
    bool ok = true;
    int64_t kind;
    uint32_t *aside = NULL;
    uint64_t *to;
    if (sl.sp.lo > sl.sp.hi || int_special(a, a, n, &sl)) {
        /* all equal: in order; or sorted in place by int_special */
    } else if (sgl_sort_packs(&sl) && (size_t)n * sizeof *aside >= SGL_BLOCK_MAP_MIN &&
               (aside = sgl_block_alloc((size_t)n * sizeof *aside, false, &kind))) {
        ok = sgl_sort_packed_i64((const int64_t *)a, (int64_t *)a, n, &sl, c.tmp, c.cnt, aside);
        sgl_block_free(aside, kind);
    } else if (fresh && (to = fresh(arg))) {
        ok = hybrid_int_counted(a, to, n, &sl, &c);
        *moved = true;
    } else {
        scratch s;
        if (!scratch_get(&s, n, 0)) {
            ok = false;
        } else {
            memcpy(s.tmp, a, (size_t)n * sizeof *a);
            ok = hybrid_int_counted(s.tmp, a, n, &sl, &c);
            if (!ok) /* a as it was */
                memcpy(a, s.tmp, (size_t)n * sizeof *a);
            scratch_put(&s);
        }
    }
    split_put(&sl);
    scratch_put(&c);
    return ok;
}

bool sgl_sort_int_in_place(uint64_t *a, int64_t n, uint64_t *(*fresh)(void *), void *arg,
                           bool *moved)
{
    *moved = false;
    return sgl_sort_packed_quick_i64(a, a, n) || int_in_place(a, n, fresh, arg, moved);
}

/* ------------------------------------------------------------------ */
/* Sorting between buffers                                             */

/* A long float sort from src into dst (not src): without NaNs by
 * sgl_sort_float.c, else (or without its memory) by the stable hybrid
 * sort. */
static bool sort_float(const uint64_t *src, uint64_t *dst, int64_t n)
{
    return sgl_sort_float_f64((const double *)(const void *)src, (double *)(void *)dst, n) ||
           hybrid_float(src, dst, n);
}

int sgl_sort_count_runs(bool is_float, const uint64_t *a, int64_t n, int64_t *bounds)
{
    int runs = is_float ? sgl_sort_runs_f64(a, n, bounds, 2) /* only two are merged */
                        : sgl_sort_runs_i64((const int64_t *)a, n, bounds, SGL_SORT_MAX_RUNS);
    return runs == 0 && sgl_sort_descending(is_float, a, n) ? SGL_SORT_DESCENDING : runs;
}

bool sgl_sort_into(bool is_float, const uint64_t *src, uint64_t *dst, int64_t n, int runs,
                   int64_t *bounds)
{
    if (n < (is_float ? SGL_SORT_FLOAT_SMALL : SGL_SORT_RADIX_MIN)) {
        if (dst != src)
            memcpy(dst, src, (size_t)n * sizeof *dst);
        if (is_float)
            insertion_sort_float(dst, n);
        else
            sgl_introsort_i64((int64_t *)dst, n);
        return true;
    }
    int64_t own[SGL_SORT_MAX_RUNS + 1];
    if (runs == -1) {
        bounds = own;
        runs = is_float ? 0 : sgl_sort_count_runs(false, src, n, bounds);
    }
    if (runs == SGL_SORT_DESCENDING) {
        sgl_sort_reverse(src, dst, n);
        return true;
    }
    if (is_float && (runs != 2 || src == dst))
        runs = 0; /* 1 (in order) is the caller's to act on; 2 merged into dst */
    if (runs == 1) {
        if (dst != src)
            memcpy(dst, src, (size_t)n * sizeof *dst);
        return true;
    }
    if (runs == 0 && !is_float && sgl_sort_packed_quick_i64(src, dst, n))
        return true;
    if (n >= SGL_SORT_HYBRID_MIN && runs == 0 && src != dst)
        return is_float ? sort_float(src, dst, n) : hybrid_int(src, dst, n);
    if (runs == 2 && is_float) {
        sgl_merge2_f64(src, bounds[1], src + bounds[1], n - bounds[1], dst);
        return true;
    }
    if (runs == 2 && src != dst) { /* one merge, straight into dst */
        sgl_merge2_i64((const int64_t *)src, bounds[1], (const int64_t *)src + bounds[1],
                       n - bounds[1], (int64_t *)dst);
        return true;
    }
    if (runs == 2) /* in place (merge2_in_place) */
        return sgl_merge2_in_place_i64((int64_t *)dst, bounds[1], n - bounds[1]);
    bool moved;
    if (n >= SGL_SORT_HYBRID_MIN && runs == 0 && !is_float)
        return int_in_place(dst, n, NULL, NULL, &moved);
    scratch s;
    if (!scratch_get(&s, n, runs > 0 ? 0 : 2 << SGL_SORT_DIGIT_MAX))
        return false;
    if (runs > 0)
        sgl_merge_runs_i64((const int64_t *)src, (int64_t *)dst, (int64_t *)s.tmp, n, bounds,
                           runs);
    else if (n >= SGL_SORT_HYBRID_MIN) {
        /* floats in place (src is dst): by the quicksort where it may
         * (sgl_sort_vec_f64_in_place), else the first pass from a copy
         * (the scratch), into place */
        if (sgl_sort_vec_f64_in_place((double *)(void *)dst, n) == 1) {
            scratch_put(&s);
            return true;
        }
        memcpy(s.tmp, src, (size_t)n * sizeof *dst);
        bool ok = sort_float(s.tmp, dst, n);
        if (!ok) /* dst as it was */
            memcpy(dst, s.tmp, (size_t)n * sizeof *dst);
        scratch_put(&s);
        return ok;
    } else if (is_float) {
        if (!sgl_sort_float_short((const double *)(const void *)src, (double *)(void *)dst,
                                  s.tmp, n, s.cnt))
            radix_float(src, dst, s.tmp, n, s.cnt);
    } else
        radix_int(src, dst, s.tmp, n, s.cnt);
    scratch_put(&s);
    return true;
}

void sgl_sort_i64(int64_t *a, int64_t n)
{
    if (!sgl_sort_into(false, (uint64_t *)a, (uint64_t *)a, n, -1, NULL))
        sgl_introsort_i64(a, n); /* no memory: unstable, as no one can tell */
}

bool sgl_sort_f64(double *a, int64_t n)
{
    /* on failure a is unchanged: the scratch is taken before the first write */
    return sgl_sort_into(true, (uint64_t *)(void *)a, (uint64_t *)(void *)a, n, -1, NULL);
}

bool sgl_sorted_i64(const int64_t *a, int64_t n)
{
    /* stops at the first descent: cheap on any other input */
    return n < 2 || sgl_first_descent_i64(a, 1, n) == n;
}

bool sgl_sorted_f64(const double *a, int64_t n)
{
    return n < 2 || sgl_first_descent_f64(a, 1, n) == n;
}
