/*
 * sgl_sort_packed.c: the long int sort of sgl_sort.c when the bits that
 * differ below the top digit fit in 32 (ints in [0, 10^9): 30 bits in
 * all, 20 below the 10-bit digit of 2^21 elements and more; ints of both
 * signs differ in all 64).
 *
 * An int's key (its bits, the sign bit flipped) is determined by its
 * bucket (the top digit, bits shift..sp.hi), the bits that every key
 * shares (outside sp.lo..sp.hi), and the bits sp.lo..shift-1.  So the
 * split scatters only those low bits, 4 bytes an element, into the first
 * half of the output (write-combined as sgl_sort.c's 8-byte scatter is:
 * sixteen to a 64-byte line), and each bucket, read back from there, is
 * sorted by an LSD radix sort on 4-byte elements in the cache whose last
 * pass writes the whole ints into the bucket's place in the output.  The
 * buckets are sorted from the last to the first: bucket b's ints go to
 * bytes 8 * start[b] on, its packed bits lie at 4 * start[b], so no ints
 * are written over bits not yet read (a bucket's own bits are read by its
 * first pass, or copied aside first when the last pass is the first).
 *
 * Against the 8-byte split: half the bytes scattered to DRAM and read
 * back, twice the elements per line, buckets of half the bytes in L1
 * (bench/README.md has the figures).
 *
 * In place (src == dst, the sort of a vector no one else sees), the
 * packed bits go to a buffer aside of 4 bytes an element instead: the
 * split reads every int before the first bucket is written back, so the
 * sort needs half the input's bytes of new memory, not as many.
 */
#include "sgl_sort.h"

#include <string.h>

#define KEY sgl_sort_key_int

/* The int of the key bits hb (the bucket's and every key's) and the low
 * bits v (from bit lo). */
static inline uint64_t unpack(uint64_t hb, uint32_t v, int lo)
{
    return sgl_sort_key_int(hb | (uint64_t)v << lo);
}

/* Sorts the m packed elements x (bits wide) of one bucket into out, as
 * ints (unpack with hb, lo): the fewest digits of equal width, at most
 * SGL_SORT_DIGIT_MAX bits (8 below SGL_SORT_WIDE_MIN elements), between
 * ta and tb (m elements each), the first pass from x, the last into out;
 * the count of digit 0 asks for out's lines, the first pass for pf[0..pfn)
 * (the next bucket's packed bits); in_out: x lies in out's buffer (the
 * packed bits in the first half of the output), where a single pass
 * would write over x. */
static void lsd_packed(const uint32_t *x, uint32_t *ta, uint32_t *tb, int64_t m, int bits,
                       uint64_t hb, int lo, uint64_t *out, int64_t *cnt, const uint32_t *pf,
                       int64_t pfn, bool in_out)
{
    int maxw = sgl_sort_digit_max(m);
    int count = (bits + maxw - 1) / maxw, width = (bits + count - 1) / count;
    size_t nb = (size_t)1 << width;
    uint32_t mask = (uint32_t)nb - 1;
    int64_t *cur = cnt, *next = cnt + nb;
    memset(cur, 0, nb * sizeof *cur);
    for (int64_t i = 0; i < m; i++) {
        if ((i & 7) == 0)
            __builtin_prefetch(out + i, 1);
        cur[x[i] & mask]++;
    }
    if (count == 1 && in_out && (const char *)(x + m) > (const char *)out) {
        memcpy(ta, x, (size_t)m * sizeof *x); /* the only pass would write over x */
        x = ta;
    }
    const uint32_t *from = x;
    for (int p = 0; p < count; p++) {
        sgl_sort_offsets(cur, nb);
        int shift = p * width;
        if (p + 1 < count) {
            uint32_t *to = from == ta ? tb : ta;
            memset(next, 0, nb * sizeof *next);
            for (int64_t i = 0; i < m; i++) {
                if (p == 0 && (i & 15) == 0 && i < pfn)
                    __builtin_prefetch(pf + i);
                uint32_t v = from[i];
                to[cur[(v >> shift) & mask]++] = v;
                next[(v >> (shift + width)) & mask]++;
            }
            from = to;
        } else {
            for (int64_t i = 0; i < m; i++) {
                if (p == 0 && (i & 15) == 0 && i < pfn)
                    __builtin_prefetch(pf + i);
                uint32_t v = from[i];
                out[cur[(v >> shift) & mask]++] = unpack(hb, v, lo);
            }
        }
        int64_t *t = cur;
        cur = next;
        next = t;
    }
}

bool sgl_sort_packs(const sgl_sort_split *sl)
{
    int bits = sl->shift - sl->sp.lo;
    /* none below the digit (the 8-byte split is all), too many, or a
     * bucket longer than the cache holds */
    return sl->sp.lo <= sl->sp.hi && bits >= 1 && bits <= 32 &&
           sl->longest <= SGL_SORT_CACHE_MAX;
}

bool sgl_sort_packed_i64(const int64_t *src, int64_t *dst, int64_t n, sgl_sort_split *sl,
                         uint64_t *tmp, int64_t *cnt, uint32_t *aside)
{
    if (!sgl_sort_packs(sl))
        return false;
    int lo = sl->sp.lo, bits = sl->shift - lo;
    uint64_t lowmask = bits == 32 ? 0xffffffffu : ((uint64_t)1 << bits) - 1;
#define PACKED(x) ((uint32_t)((KEY(x) >> lo) & lowmask))
    const uint64_t *from = (const uint64_t *)(const void *)src;
    uint32_t *packed = aside ? aside : (uint32_t *)(void *)dst;
    SGL_SORT_SCATTER(uint32_t, 16, PACKED, SGL_SORT_DIGIT, KEY, from, packed, n, *sl);
#undef PACKED
    /* every key's bits outside sp.lo..sp.hi */
    uint64_t fixed = sl->all & ~sgl_sort_span_bits(sl->sp);
    uint32_t *ta = (uint32_t *)(void *)tmp, *tb = ta + SGL_SORT_CACHE_MAX;
    for (size_t b = sl->nb; b-- > 0;) {
        int64_t o = sl->start[b], m = sl->start[b + 1] - o;
        uint64_t hb = fixed | (uint64_t)b << sl->shift, *out = (uint64_t *)(void *)(dst + o);
        if (m < SGL_SORT_RADIX_MIN) {
            memcpy(ta, packed + o, (size_t)m * sizeof *ta);
            for (int64_t i = 0; i < m; i++)
                out[i] = unpack(hb, ta[i], lo);
            sgl_introsort_i64(dst + o, m);
        } else {
            int64_t before = b > 0 ? sl->start[b - 1] : o;
            lsd_packed(packed + o, ta, tb, m, bits, hb, lo, out, cnt, packed + before, o - before,
                       !aside);
        }
    }
    return true;
}

bool sgl_sort_packed_quick_i64(const uint64_t *src, uint64_t *dst, int64_t n)
{
    if (n < SGL_SORT_PACKED_QUICK_MIN || !sgl_sort_vec_available())
        return false;
    uint64_t sall;
    sgl_sort_span g = sgl_sort_sample_i64(src, n, &sall);
    int w = g.lo > g.hi ? 0 : g.hi - g.lo + 1;
    if (!sgl_sort_packed_quick_suits(w, n))
        return false;
    return sgl_sort_vec_packed_i64((const int64_t *)src, (int64_t *)dst, n,
                                   g.hi > 31 ? g.hi - 31 : 0) == 1;
}
