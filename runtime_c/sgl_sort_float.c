/*
 * sgl_sort_float.c: the float sort of sgl_sort.c when no element is a NaN
 * (from SGL_SORT_FLOAT_SMALL elements on; under SGL_SORT_HYBRID_MIN, not
 * with both -0.0 and 0.0 either), where the CPU has no AVX-512 (else the
 * long sort is sgl_sort_vec.c's, whose zeros this file puts in order).
 *
 * Without NaNs, two floats that compare equal are the same bits, but for
 * -0.0 and 0.0, so stability cannot be seen, and a float's bits map to
 * an int of the same order and back (as_int, its own inverse: the bits
 * below the sign are flipped in a negative float; -0.0 comes just before
 * 0.0).  The sort is then one of ints, after which the zeros, if both
 * signs are there, are put back in their input order (read again from
 * the input, which the long sort leaves alone).  Two things that float
 * data needs and ints in [0, 10^9) do not:
 *
 * - A split whose buckets follow the data.  Floats in [0, 1) put half
 *   their values under one exponent, a quarter under the next, so a
 *   digit of fixed bits leaves a few huge buckets to split again (a
 *   second pass through DRAM).  Here the key's 12 bits below the bits all
 *   keys share (a float's sign and exponent, where they differ) make a
 *   group; a sample of the input says how many elements each group
 *   holds, and each group gets as many of its next bits as leave
 *   buckets of about the target length (groups the sample barely sees
 *   share one bucket).  A table of one entry per group gives an
 *   element's bucket; the buckets, in order, are still ranges of keys.
 * - Buckets sorted in the cache by two digits, not four.  A bucket's
 *   keys still differ in about 40 bits (52 bits of mantissa, 10 used by
 *   the split); the int sort's bucket sort (sgl_sort_bucket_i64) sorts
 *   such a bucket by the top two digits of those bits (22 of them),
 *   which leaves in order all but the keys that agree on those bits (in
 *   a bucket of a few thousand uniformly spread keys, a handful), and an
 *   insertion pass puts those in place.
 *
 * A bucket longer than SGL_SORT_CACHE_MAX (keys that cluster where the
 * sample did not see it) is sorted by sgl_sort_i64.  A NaN is found by
 * the counting pass, before anything is written.
 */
#include "sgl_sort.h"

#include <string.h>

#include "sgl_vbuf.h"

#define SIGN ((uint64_t)1 << 63)
#define INF_BITS ((uint64_t)0x7ff0000000000000)
#define GROUP_BITS 12
#define NGROUPS ((size_t)1 << GROUP_BITS)
#define SAMPLES 2048
/* the most buckets: one a group, and less than n / (3/4 target) <=
 * 2^(SGL_SORT_TOP_BITS + 1) more (plan) */
#define MAX_BUCKETS (NGROUPS + ((size_t)2 << SGL_SORT_TOP_BITS))

/* A float's bits as an int whose order is the float's (no -0.0, no
 * NaN); its own inverse. */
static inline uint64_t as_int(uint64_t b)
{
    return b ^ ((uint64_t)((int64_t)b >> 63) >> 1);
}

/* The float's unsigned key: as_int's, the sign bit flipped. */
static inline uint64_t key_of(uint64_t b)
{
    return b ^ ((uint64_t)((int64_t)b >> 63) | SIGN);
}

/* The bucket of a key shifted left by cp (the bits all keys share): its
 * group (the top 12 bits of kk) gives a first bucket (the entry's low 32
 * bits) and how many of the bits below the group to add to it (63 minus
 * that is the entry's high bits: 63 adds none). */
static inline size_t bucket_of(const uint64_t *tab, uint64_t kk)
{
    uint64_t e = tab[kk >> (64 - GROUP_BITS)];
    return (uint32_t)e + (size_t)(((kk << GROUP_BITS) >> 1) >> (e >> 32));
}
/* For SGL_SORT_SCATTER, with tab and cp in scope: any float; a float
 * >= +0.0 (its key is its bits with the sign bit set, which cp >= 1
 * shifts out). */
#define ANY_BUCKET(KEY, sl, x) bucket_of(tab, key_of(x) << cp)
#define POS_BUCKET(KEY, sl, x) bucket_of(tab, (x) << cp)
#define ID(x) (x)

/* Fills tab (one entry a group) for n elements whose keys share their
 * top cp bits, from the sample s[0..ns) of their keys; returns the number
 * of buckets.  hist: NGROUPS counts of scratch. */
static size_t plan(const uint64_t *s, int ns, int64_t n, int cp, uint64_t *tab, int64_t *hist)
{
    memset(hist, 0, NGROUPS * sizeof *hist);
    for (int j = 0; j < ns; j++)
        hist[(s[j] << cp) >> (64 - GROUP_BITS)]++;
    int64_t target = n >> SGL_SORT_TOP_BITS > SGL_SORT_BUCKET ? n >> SGL_SORT_TOP_BITS
                                                                 : SGL_SORT_BUCKET;
    int avail = 64 - GROUP_BITS - cp; /* key bits below the group */
    size_t nb = 0;
    int64_t open = -1; /* the estimate of a bucket more groups may join; -1: none */
    for (size_t g = 0; g < NGROUPS; g++) {
        int64_t est = hist[g] * n / ns;
        int w = 0;
        while (w < avail && w < 16 && (est >> w) > target + target / 2)
            w++;
        if (w == 0 && open >= 0 && open + est <= target + target / 2) {
            tab[g] = (uint64_t)(nb - 1) | (uint64_t)63 << 32;
            open += est;
        } else {
            tab[g] = (uint64_t)nb | (uint64_t)(63 - w) << 32;
            nb += (size_t)1 << w;
            open = w == 0 ? est : -1;
        }
    }
    return nb;
}

/* Sorts bucket a[0..m) (ints as_int of floats) into floats in place: as
 * ints, then back.  Up to tn elements in the cache (sgl_sort_bucket_i64,
 * with t (tn elements) and cnt as scratch and pf, pfn the next bucket to
 * prefetch), longer ones by sgl_sort_i64. */
static void sort_bucket(uint64_t *a, int64_t m, uint64_t *t, int64_t tn, int64_t *cnt,
                        const uint64_t *pf, int64_t pfn)
{
    if (m <= tn)
        sgl_sort_bucket_i64((int64_t *)a, (int64_t *)t, m, cnt, (const int64_t *)pf, pfn);
    else
        sgl_sort_i64((int64_t *)a, m);
    for (int64_t i = 0; i < m; i++)
        a[i] = as_int(a[i]);
}

/* Where a, sorted, holds -0.0 and 0.0 (in any order: as_int puts -0.0
 * first, sgl_sort_vec.c mixes them), they take their order in src
 * instead: the builtin's sort keeps equal elements in input order. */
static void zeros_in_order(const uint64_t *src, uint64_t *a, int64_t n)
{
    int64_t l = 0, r = n; /* the first element not below -0.0 */
    while (l < r) {
        int64_t mid = l + (r - l) / 2;
        if ((int64_t)as_int(a[mid]) < -1)
            l = mid + 1;
        else
            r = mid;
    }
    int64_t z = l, e = l;
    uint64_t any = 0, all = ~(uint64_t)0;
    for (; e < n && (a[e] << 1) == 0; e++) {
        any |= a[e];
        all &= a[e];
    }
    if (any == all)
        return; /* not both (or none) */
    for (int64_t i = 0; i < n && z < e; i++)
        if ((src[i] << 1) == 0)
            a[z++] = src[i];
}

bool sgl_sort_float_short(const double *src_d, double *dst_d, uint64_t *tmp, int64_t n,
                          int64_t *cnt)
{
    const uint64_t *src = (const uint64_t *)(const void *)src_d;
    uint64_t *dst = (uint64_t *)(void *)dst_d;
    bool nan = false, neg0 = false, pos0 = false;
    for (int64_t i = 0; i < n; i++) {
        nan |= sgl_sort_is_nan(src[i]);
        neg0 |= src[i] == SIGN;
        pos0 |= src[i] == 0;
    }
    if (nan || (neg0 && pos0))
        return false;
    for (int64_t i = 0; i < n; i++)
        dst[i] = as_int(src[i]);
    sort_bucket(dst, n, tmp, n, cnt, NULL, 0);
    return true;
}

/* COUNT(KEY, BUCKET, NAN): src[0..n)'s buckets counted into pos, the OR
 * and the AND of their KEYs into any and all, and whether NAN(x) holds
 * for one into nan. */
#define COUNT(KEY, BUCKET, NAN)                                                                 \
    do {                                                                                        \
        any = 0;                                                                                \
        all = ~(uint64_t)0;                                                                     \
        bool bad = false;                                                                       \
        int64_t i = 0;                                                                          \
        for (; i + 8 <= n; i += 8) {                                                            \
            __builtin_prefetch(SGL_SORT_AHEAD_OF(src + i));                                     \
            for (int j = 0; j < 8; j++) {                                                       \
                uint64_t x = src[i + j];                                                        \
                bad |= NAN(x);                                                                  \
                any |= KEY(x);                                                                  \
                all &= KEY(x);                                                                  \
                pos[BUCKET(KEY, sl, x)]++;                                                      \
            }                                                                                   \
        }                                                                                       \
        for (; i < n; i++) {                                                                    \
            uint64_t x = src[i];                                                                \
            bad |= NAN(x);                                                                      \
            any |= KEY(x);                                                                      \
            all &= KEY(x);                                                                      \
            pos[BUCKET(KEY, sl, x)]++;                                                          \
        }                                                                                       \
        nan = bad;                                                                              \
    } while (0)
/* a NaN among floats >= +0.0 */
#define POS_NAN(x) ((x) > INF_BITS)

bool sgl_sort_float_f64(const double *src, double *dst, int64_t n)
{
    int vec = sgl_sort_vec_f64(src, dst, n); /* AVX-512: the zeros in any order */
    if (vec > 0)
        zeros_in_order((const uint64_t *)(const void *)src, (uint64_t *)(void *)dst, n);
    return vec > 0 || (vec == 0 && sgl_sort_float_radix_f64(src, dst, n)); /* -1: a NaN */
}

bool sgl_sort_float_radix_f64(const double *src_d, double *dst_d, int64_t n)
{
    const uint64_t *src = (const uint64_t *)(const void *)src_d;
    uint64_t *dst = (uint64_t *)(void *)dst_d;
    if (n < 1)
        return true;
    /* one block: tab, hist, the sample, pos, start, the write-combining
     * lines (64-byte aligned), the buckets' scratch and counts */
    size_t bytes = (2 * NGROUPS + SAMPLES + 2 * MAX_BUCKETS + 1) * 8 + 64 + MAX_BUCKETS * 64 +
                   (SGL_SORT_CACHE_MAX + (2 << SGL_SORT_DIGIT_MAX)) * 8;
    int64_t kind;
    void *meta = sgl_block_alloc(bytes, false, &kind);
    if (!meta)
        return false;
    uint64_t *tab = meta, *sample = tab + 2 * NGROUPS;
    int64_t *hist = (int64_t *)(tab + NGROUPS);
    int64_t *pos = (int64_t *)(sample + SAMPLES), *start = pos + MAX_BUCKETS;
    uint64_t(*lines)[8] =
        (uint64_t(*)[8])(void *)(((uintptr_t)(start + MAX_BUCKETS + 1) + 63) & ~(uintptr_t)63);
    uint64_t *tmp = (uint64_t *)(void *)(lines + MAX_BUCKETS);
    int64_t *cnt = (int64_t *)(tmp + SGL_SORT_CACHE_MAX);

    /* the plan from a sample, for a prefix 4 bits shorter than the
     * sample's: the input's own is shorter where it reaches further */
    int ns = n < SAMPLES ? (int)n : SAMPLES;
    uint64_t sany = 0, sall = ~(uint64_t)0;
    for (int j = 0; j < ns; j++) {
        sample[j] = key_of(src[(int64_t)j * (n / ns)]);
        sany |= sample[j];
        sall &= sample[j];
    }
    int cp = sany == sall ? 63 : __builtin_clzll(sany ^ sall);
    cp = cp > 4 ? cp - 4 : 0;
    /* counted as floats >= +0.0 when the sample has only those (the
     * common case: their keys are their bits with the sign bit set, and
     * their ints their bits), as any float when it has others, or when
     * the input has */
    bool pos_only = sall >> 63;
    if (pos_only && cp == 0)
        cp = 1;
    uint64_t any, all;
    size_t nb;
    bool nan;
    for (;;) {
        nb = plan(sample, ns, n, cp, tab, hist);
        memset(pos, 0, nb * sizeof *pos);
        if (pos_only) {
            COUNT(ID, POS_BUCKET, POS_NAN);
            if (any >> 63) { /* a float below +0.0 (or -0.0) after all */
                pos_only = false;
                continue;
            }
            any |= SIGN;
            all |= SIGN;
        } else {
            COUNT(key_of, ANY_BUCKET, sgl_sort_is_nan);
        }
        if (nan || any == all || __builtin_clzll(any ^ all) >= cp)
            break;
        cp = __builtin_clzll(any ^ all); /* the sample shared more than the input */
    }
    if (nan || any == all) {
        if (!nan) /* all the same bits: in order */
            memcpy(dst, src, (size_t)n * sizeof *dst);
        sgl_block_free(meta, kind);
        return !nan; /* a NaN: the stable sort's to do */
    }
    int64_t sum = 0;
    for (size_t b = 0; b < nb; b++) {
        int64_t c = pos[b];
        start[b] = pos[b] = sum;
        sum += c;
    }
    start[nb] = n;
    sgl_sort_split sl = {.nb = nb, .pos = pos, .start = start,
                         .lines = SGL_SORT_WC && n >= SGL_SORT_WC_MIN ? lines : NULL};
    if (pos_only)
        SGL_SORT_SCATTER(uint64_t, 8, ID, POS_BUCKET, ID, src, dst, n, sl);
    else
        SGL_SORT_SCATTER(uint64_t, 8, as_int, ANY_BUCKET, key_of, src, dst, n, sl);
    for (size_t b = 0; b < nb; b++) {
        int64_t o = start[b], m = start[b + 1] - o;
        int64_t next = b + 1 < nb ? start[b + 2] - start[b + 1] : 0;
        sort_bucket(dst + o, m, tmp, SGL_SORT_CACHE_MAX, cnt, dst + o + m, next);
    }
    sgl_block_free(meta, kind);
    zeros_in_order(src, dst, n);
    return true;
}
