/*
 * sgl_sort.h: the typed sorts behind the builtin sort (internal; sgl_sort.c).
 *
 * No comparator is called per comparison: 64-bit integers are compared
 * with `<` inline, and both ints and floats are radix-sorted by unsigned
 * 64-bit keys whose order is the builtin's (see sgl_sort.c).  The sorts of
 * long inputs are stable and need one scratch buffer as long as the input.
 */
#ifndef SGL_SORT_H
#define SGL_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sgl_prefetch.h"

/* Below this length the introsort uses insertion sort. */
#define SGL_SORT_SMALL 24
/* From this length on, ints are sorted by the LSD radix sort (or merged,
 * see SGL_SORT_MAX_RUNS); shorter ones by the introsort. */
#define SGL_SORT_RADIX_MIN 256
/* From this length on, floats are sorted by the LSD radix sort; shorter
 * ones by a stable insertion sort on their keys. */
#define SGL_SORT_FLOAT_SMALL 48
/* Digits of the radix sort: at most SGL_SORT_DIGIT_MAX bits from
 * SGL_SORT_WIDE_MIN elements on, at most 8 below. */
#ifndef SGL_SORT_DIGIT_MAX
#define SGL_SORT_DIGIT_MAX 11
#endif
#ifndef SGL_SORT_WIDE_MIN
#define SGL_SORT_WIDE_MIN ((int64_t)2048)
#endif
/* From this length on, the radix sort starts with one pass on the
 * highest SGL_SORT_TOP_BITS bits that differ, from the source into the
 * output, and sorts each bucket it leaves by the LSD radix sort, in the
 * cache. */
#define SGL_SORT_HYBRID_MIN ((int64_t)1 << 16)
#ifndef SGL_SORT_TOP_BITS
#define SGL_SORT_TOP_BITS 10
#endif

/* From this many ints on, where their keys differ in more bits than the
 * top digit's and at most 32, the int sort packs them into 32 bits and
 * sorts those by the quicksort of 16 to a vector (sgl_sort_vec.c; a CPU
 * with AVX-512): 2 to 4 times as fast as the radix sort's passes below
 * 65,536 ints (in the cache), 1.3 times above (bench/README.md). */
#define SGL_SORT_PACKED_QUICK_MIN 512
/* From this many on, only keys of at least n values or of at most n /
 * 512 (sgl_sort_packed_quick_suits). */
#define SGL_SORT_PACKED_QUICK_SPARSE ((int64_t)1 << 21)

/* Whether the packed quicksort suits n ints whose keys differ in w bits:
 * more than the top digit's (fewer: the top digit holds them all, and
 * int_special writes each value as many times as it was counted) and at
 * most 32.  From SGL_SORT_PACKED_QUICK_SPARSE ints on, keys of 2^w values
 * that each occur a few to a few hundred times are sorted faster by the
 * radix sort (its passes do not grow with n; the quicksort's partitions
 * do, and its runs of equal keys are still short): 5*10^6 ints of 16
 * bits, 25.3 against 22.1 ms; 2*10^7 of 24 bits, 122 against 115
 * (bench/README.md). */
static inline bool sgl_sort_packed_quick_suits(int w, int64_t n)
{
    if (w <= SGL_SORT_TOP_BITS || w > 32)
        return false;
    return n < SGL_SORT_PACKED_QUICK_SPARSE || ((int64_t)1 << w) >= n ||
           ((int64_t)1 << (w + 9)) <= n;
}

/* Splits of at least this many elements (more than the L2 cache holds)
 * scatter through write-combining lines with non-temporal stores. */
#ifndef SGL_SORT_WC_MIN
#define SGL_SORT_WC_MIN ((int64_t)1 << 19)
#endif
/* The passes that stream an input out of the cache ask for the line this
 * many elements ahead (__builtin_prefetch): the hardware's prefetchers
 * stop at each 4 KiB page, and a bucket's LSD sort asks for the next
 * bucket's lines while it sorts its own (bench/README.md). */
#ifndef SGL_SORT_AHEAD
#define SGL_SORT_AHEAD 512
#endif
/* The address SGL_SORT_AHEAD elements past p, to prefetch. */
#define SGL_SORT_AHEAD_OF(p) sgl_ahead((p), SGL_SORT_AHEAD * (int64_t)sizeof *(p))
/* Buckets of the top digit up to this length are sorted by the LSD radix
 * sort (in the cache); longer ones are split again by their own top
 * digit (sgl_sort_float.c: sorted by sgl_sort_i64). */
/* The top digit is as wide as leaves buckets of about this many elements
 * on spread-out keys (at most SGL_SORT_TOP_BITS bits). */
#ifndef SGL_SORT_BUCKET
#define SGL_SORT_BUCKET ((int64_t)2048)
#endif
#ifndef SGL_SORT_CACHE_MAX
#define SGL_SORT_CACHE_MAX ((int64_t)1 << 15)
#endif
/* From SGL_SORT_RADIX_MIN elements on, int inputs of at most this many
 * ascending runs are merged, not radix-sorted. */
#define SGL_SORT_MAX_RUNS 16

/* Sorts a[0..n) ascending in place: introsort (quicksort with a median of
 * three or of nine, equal keys swept aside in one pass, heapsort past
 * 2 log2 n levels, insertion sort below SGL_SORT_SMALL).  Not stable. */
void sgl_introsort_i64(int64_t *a, int64_t n);

/* The same with a given limit of partitioning levels before heapsort takes
 * over (0: heapsort of the whole range); for the tests. */
void sgl_introsort_depth_i64(int64_t *a, int64_t n, int depth);

/* Stable LSD radix sorts of src[0..n) into dst[0..n) (dst may be src),
 * with tmp (n elements, neither src nor dst) as scratch and cnt
 * (2 << SGL_SORT_DIGIT_MAX entries) for the digit counts.  Any n. */
void sgl_radix_sort_i64(const int64_t *src, int64_t *dst, int64_t *tmp, int64_t n, int64_t *cnt);
void sgl_radix_sort_f64(const double *src, double *dst, double *tmp, int64_t n, int64_t *cnt);

/* The unsigned key by which a float is sorted (equal keys: equal in the
 * builtin's order). */
uint64_t sgl_sort_key_f64(double x);

/* Splits a[0..n) (n >= 1) into its maximal ascending runs: returns their
 * number r <= maxruns, with run i at [bounds[i], bounds[i+1]) (bounds has
 * room for maxruns + 1), or 0 when there are more than maxruns (then it
 * has read a only a little past the maxruns-th descent). */
int sgl_sort_runs_i64(const int64_t *a, int64_t n, int64_t *bounds, int maxruns);

/* The least k in i..n-1 with a[k] < a[k - 1] (i >= 1), or n when a[i-1..n)
 * is ascending; in vectorised blocks (on x86-64 where the CPU has AVX2),
 * so it may read up to 32 elements past k.  The _plain form: element by
 * element (what the other falls back to; the tests compare the two). */
int64_t sgl_first_descent_i64(const int64_t *a, int64_t i, int64_t n);
int64_t sgl_first_descent_plain_i64(const int64_t *a, int64_t i, int64_t n);

/* sgl_sort_runs_i64 and sgl_first_descent_i64 for floats (as bits, or
 * doubles), in the builtin's order (a NaN after every other value, -0.0
 * equal to 0.0): the scan in blocks of 16 compares with one branch, then
 * element by element where a block has a descent. */
int sgl_sort_runs_f64(const uint64_t *a, int64_t n, int64_t *bounds, int maxruns);
int64_t sgl_first_descent_f64(const double *d, int64_t i, int64_t n);

/* Merges the nruns ascending runs of src[0..n) (as sgl_sort_runs_i64 gives
 * them; bounds is overwritten) into dst (which may be src), stably, in
 * rounds of pairwise merges between dst and tmp (n elements). */
void sgl_merge_runs_i64(const int64_t *src, int64_t *dst, int64_t *tmp, int64_t n,
                        int64_t *bounds, int nruns);

/* Merges the ascending x[0..nx) and y[0..ny) into out (neither), stably
 * (x's first on a tie). */
void sgl_merge2_i64(const int64_t *x, int64_t nx, const int64_t *y, int64_t ny, int64_t *out);

/* The same for x and y in any order, checked as it goes: true where both
 * ascend (out is their merge), false where one does not (out is written,
 * in no order).  Bounds-safe on any input.  The order is checked on what
 * the merge writes, while it is in the cache, not in a pass of its own
 * (but where y[0] is not below x's last: x and y are then copied and
 * each checked). */
bool sgl_merge2_checked_i64(const int64_t *x, int64_t nx, const int64_t *y, int64_t ny,
                            int64_t *out);

/* The two merges for floats (as bits), ascending in the builtin's order:
 * the values by `<` (x's first on a tie, -0.0 and 0.0 too), then x's NaNs,
 * then y's (each run's NaNs are its last elements, or, checked, it does
 * not ascend). */
void sgl_merge2_f64(const uint64_t *x, int64_t nx, const uint64_t *y, int64_t ny, uint64_t *out);
bool sgl_merge2_checked_f64(const uint64_t *x, int64_t nx, const uint64_t *y, int64_t ny,
                            uint64_t *out);

/* Merges the ascending a[0..n1) and a[n1..n1+n2) in place, stably.  False
 * (a unchanged) without memory for a buffer as long as the shorter run. */
bool sgl_merge2_in_place_i64(int64_t *a, int64_t n1, int64_t n2);

/* The buffer pass `i` (from 0) of `passes` out-of-place passes writes to,
 * when the first reads src and the last must write dst, tmp being the
 * other buffer; when src is dst, the passes start in tmp and an odd count
 * ends there (the caller copies back). */
static inline void *sgl_pass_dest(const void *src, void *dst, void *tmp, int passes, int i)
{
    bool first_in_dst = src != dst && passes % 2 == 1;
    return (i % 2 == 0) == first_in_dst ? dst : tmp;
}

/* ------------------------------------------------------------------ */
/* Shared by sgl_sort.c, sgl_sort_packed.c and sgl_sort_float.c        */

/* An int's key: its bits with the sign bit flipped (unsigned order is
 * the ints' order); its own inverse. */
static inline uint64_t sgl_sort_key_int(uint64_t bits)
{
    return bits ^ ((uint64_t)1 << 63);
}

/* Whether a float (its bits) is a NaN: its magnitude above +inf's. */
static inline bool sgl_sort_is_nan(uint64_t bits)
{
    return (bits << 1) > ((uint64_t)0x7ff0000000000000u << 1);
}

/* A float's key (its bits): unsigned order is the builtin's order, and
 * floats equal in it have one key (-0.0 and 0.0; every NaN, after +inf). */
static inline uint64_t sgl_sort_key_float(uint64_t bits)
{
    const uint64_t sign = (uint64_t)1 << 63, inf = 0x7ff0000000000000u;
    if (sgl_sort_is_nan(bits))
        return (inf | sign) + 1;
    if ((bits & ~sign) == 0)
        bits = 0; /* -0.0 is 0.0 */
    return bits >> 63 ? ~bits : bits | sign;
}

/* The widest digit of an LSD sort of n elements: wide digits pay
 * 2^width counts per pass, worth it only on long inputs. */
static inline int sgl_sort_digit_max(int64_t n)
{
    return n >= SGL_SORT_WIDE_MIN ? SGL_SORT_DIGIT_MAX : 8;
}

/* The counts cnt[0..nb) of a digit's values become where each value's
 * elements start (an exclusive prefix sum). */
static inline void sgl_sort_offsets(int64_t *cnt, size_t nb)
{
    int64_t sum = 0;
    for (size_t b = 0; b < nb; b++) {
        int64_t c = cnt[b];
        cnt[b] = sum;
        sum += c;
    }
}

/* The key bits in which the elements differ, the lowest and the highest
 * (lo > hi when all keys are equal). */
typedef struct {
    int lo, hi;
} sgl_sort_span;

/* The bits of sp as a mask (none where it is empty). */
static inline uint64_t sgl_sort_span_bits(sgl_sort_span sp)
{
    if (sp.lo > sp.hi)
        return 0;
    return (sp.hi == 63 ? ~(uint64_t)0 : ((uint64_t)1 << (sp.hi + 1)) - 1) &
           ~(((uint64_t)1 << sp.lo) - 1);
}

/* The counted top digit of a split of n elements (sgl_sort.c): the
 * buckets' starts, and where each bucket's next element goes (the scatter
 * advances pos), in one block with the scatter's write-combining lines. */
typedef struct {
    sgl_sort_span sp;
    uint64_t all;            /* the AND of all keys: their bits outside sp */
    int shift;               /* the digit: bits shift..sp.hi of the key */
    size_t nb;               /* its buckets, 1 << (sp.hi - shift + 1) */
    int64_t *pos, *start;    /* nb, nb + 1 entries (start[nb] = n) */
    int64_t longest;         /* the most elements of one bucket */
    bool uncounted;          /* skewed keys left to the quicksort: pos, start, nb unset;
                              * sp, all, shift, longest the sample's (narrower, maybe) */
    bool wide;               /* more than 32 bits below the digit, in the sample too
                              * (false where sp is empty) */
    uint64_t (*lines)[8];    /* nb 64-byte lines (NULL: scatter directly) */
    void *meta;              /* the block of pos, start, SGL_SORT_COUNT's and lines */
    int64_t meta_kind;
} sgl_sort_split;

/* Whether sgl_sort_packed_i64 sorts the ints whose top digit was counted
 * into sl: all the key bits below the digit fit in 32 bits and every
 * bucket in the cache (SGL_SORT_CACHE_MAX). */
bool sgl_sort_packs(const sgl_sort_split *sl);

/* Sorts the ints src[0..n) into dst after their split's top digit was
 * counted into sl, when sgl_sort_packs(sl): each element's low bits are
 * scattered as 4 bytes into `aside` (n of them), or into the first half
 * of dst when aside is NULL (then dst is not src), then each bucket is
 * radix-sorted in the cache and written back whole (sgl_sort_packed.c).
 * With aside, dst may be src (the sort in place).  tmp:
 * SGL_SORT_CACHE_MAX 8-byte elements of scratch; cnt: 2 <<
 * SGL_SORT_DIGIT_MAX counts.  False (nothing written) when the keys do
 * not fit. */
bool sgl_sort_packed_i64(const int64_t *src, int64_t *dst, int64_t n, sgl_sort_split *sl,
                         uint64_t *tmp, int64_t *cnt, uint32_t *aside);

/* The bits in which the keys (sgl_sort_key_int) of 256 of the ints
 * from[0..n), evenly spaced, differ (sgl_sort.c); *sall: the bits all of
 * them set. */
sgl_sort_span sgl_sort_sample_i64(const uint64_t *from, int64_t n, uint64_t *sall);

/* Sorts the ints src[0..n) into dst (or in place: src == dst) by the
 * packed quicksort (sgl_sort_vec_packed_i64, sgl_sort_packed.c) where the
 * sample (sgl_sort_sample_i64) shows their keys differing in more bits
 * than the top digit's and at most 32, and the packing finds them all so
 * in the 32 bits from the sample's highest down: true where sorted (else
 * src as it was; nothing counted yet). */
bool sgl_sort_packed_quick_i64(const uint64_t *src, uint64_t *dst, int64_t n);

/* Sorts the ints a[0..n) in place, as the long int sort sorts a bucket
 * in the cache (sgl_sort.c): an introsort under SGL_SORT_RADIX_MIN, else
 * an LSD sort of the bits that differ, of their top two digits and an
 * insertion pass where that suits them; tmp (n elements) and cnt
 * (2 << SGL_SORT_DIGIT_MAX) are scratch; the first pass prefetches
 * pf[0..pfn) (the next bucket).  Not stable (equal ints are the same
 * value). */
void sgl_sort_bucket_i64(int64_t *a, int64_t *tmp, int64_t n, int64_t *cnt, const int64_t *pf,
                         int64_t pfn);

/* The bucket of element x in the split sl: the digit counted, of KEY(x). */
#define SGL_SORT_DIGIT(KEY, sl, x) ((KEY(x) >> (sl).shift) & ((sl).nb - 1))

/* Sorts the doubles src[0..n) into dst (not src) when none is a NaN
 * (then equal floats are equal bits but for -0.0 and 0.0, which it puts
 * back in their input order, so stability cannot be seen): on a CPU
 * with AVX-512 by sgl_sort_vec_f64, else as ints of the floats' order,
 * split by a table that a sample of the input planned, each bucket
 * sorted in the cache by its top two digits and an insertion pass
 * (sgl_sort_float.c).  For n >= SGL_SORT_HYBRID_MIN (any n works).
 * False (dst unspecified) when an element is a NaN, or without memory. */
bool sgl_sort_float_f64(const double *src, double *dst, int64_t n);
/* The same by the radix sort alone, whatever the CPU (sgl_sort_float_f64
 * takes sgl_sort_vec_f64 where it can). */
bool sgl_sort_float_radix_f64(const double *src, double *dst, int64_t n);

/* Sorts the doubles src[0..n) into dst (not src) with `<` by a quicksort
 * on AVX-512 (sgl_sort_vec.c), unstable: -0.0 and 0.0 in any order (dst
 * a permutation of src).  1: sorted; -1 (dst unspecified): an element is
 * a NaN; 0 (nothing done): the CPU has no AVX-512F, the environment sets
 * SGL_SORT_VEC=0 (sgl_sort_vec_available), or n < 256.  _depth: at most
 * depth partitions deep, then heapsort (sgl_sort_vec_f64: 2 log2(n)). */
int sgl_sort_vec_f64(const double *src, double *dst, int64_t n);
int sgl_sort_vec_f64_depth(const double *src, double *dst, int64_t n, int depth);
/* The same quicksort of int64s (no NaN: 1 or 0), src into dst or in place
 * (src == dst): the int sort's for keys the radix sort splits badly
 * (sgl_sort.c, int_special). */
int sgl_sort_vec_i64(const int64_t *src, int64_t *dst, int64_t n);
int sgl_sort_vec_i64_depth(const int64_t *src, int64_t *dst, int64_t n, int depth);
/* The float quicksort of a[0..n) in place, where that cannot be told from
 * a stable sort: 1: sorted; -1 (a as it was, read once): an element is a
 * NaN, or both -0.0 and 0.0 are there (their input order would be lost);
 * 0 (nothing done) as for sgl_sort_vec_f64. */
int sgl_sort_vec_f64_in_place(double *a, int64_t n);
/* The ints src[0..n) into dst (or in place: src == dst) by the quicksort
 * on 16 to a vector, where their keys (sgl_sort_key_int) all agree but in
 * bits lo..lo+31 (lo < 64; from 33 on, bits lo..63): each key's 32 bits
 * (from lo) packed into dst's buffer,
 * sorted there, and unpacked into ints, from the last.  The packing
 * checks each key against the first, 16 at a time, before it writes them.
 * 1: sorted; -1: a key differs outside those bits (in place: src as it
 * was; else dst unspecified); 0 (nothing done) as for sgl_sort_vec_f64
 * (n < 512). */
int sgl_sort_vec_packed_i64(const int64_t *src, int64_t *dst, int64_t n, int lo);
bool sgl_sort_vec_available(void);

/* The same under SGL_SORT_HYBRID_MIN elements, as one bucket, dst may be
 * src, with tmp (n elements) and cnt (2 << SGL_SORT_DIGIT_MAX) for
 * scratch.  False (dst as it was) when an element is a NaN or when both
 * -0.0 and 0.0 are there (the input would be needed again). */
bool sgl_sort_float_short(const double *src, double *dst, uint64_t *tmp, int64_t n,
                          int64_t *cnt);

/* Adds to top[0..nb) (nb a power of 2) the count of each digit
 * (KEY(x) >> shift) & (nb - 1) of the elements x of from[0..n), EACH(k)
 * run on each key k first; more: 3 nb counts of scratch.  The counts are
 * kept in four histograms, added at the end: on keys of few values a run
 * of equal digits would otherwise be one chain of increments of one count
 * through memory (a store forwarded to the next load, about 5 cycles an
 * element). */
#define SGL_SORT_COUNT(KEY, from, n, shift, nb, top, more, EACH)                                  \
    do {                                                                                          \
        uint64_t mask_ = (uint64_t)(nb)-1;                                                        \
        int64_t *c1_ = (more), *c2_ = c1_ + (nb), *c3_ = c2_ + (nb), i_ = 0;                      \
        memset(c1_, 0, 3 * (nb) * sizeof *c1_);                                                   \
        for (; i_ + 4 <= (n); i_ += 4) {                                                          \
            if ((i_ & 7) == 0)                                                                    \
                __builtin_prefetch(SGL_SORT_AHEAD_OF((from) + i_));                               \
            uint64_t k0_ = KEY((from)[i_]), k1_ = KEY((from)[i_ + 1]);                            \
            uint64_t k2_ = KEY((from)[i_ + 2]), k3_ = KEY((from)[i_ + 3]);                        \
            EACH(k0_);                                                                            \
            EACH(k1_);                                                                            \
            EACH(k2_);                                                                            \
            EACH(k3_);                                                                            \
            (top)[(k0_ >> (shift)) & mask_]++;                                                    \
            c1_[(k1_ >> (shift)) & mask_]++;                                                      \
            c2_[(k2_ >> (shift)) & mask_]++;                                                      \
            c3_[(k3_ >> (shift)) & mask_]++;                                                      \
        }                                                                                         \
        for (; i_ < (n); i_++) {                                                                  \
            uint64_t k_ = KEY((from)[i_]);                                                        \
            EACH(k_);                                                                             \
            (top)[(k_ >> (shift)) & mask_]++;                                                     \
        }                                                                                         \
        for (size_t b_ = 0; b_ < (size_t)(nb); b_++)                                              \
            (top)[b_] += c1_[b_] + c2_[b_] + c3_[b_];                                             \
    } while (0)

/* SGL_SORT_SCATTER(T, L, VAL, BUCKET, KEY, from, to, n, sl): scatters the
 * uint64_t elements from[0..n) into `to` (of T), element x into bucket
 * BUCKET(KEY, sl, x) (SGL_SORT_DIGIT, or sgl_sort_float.c's table) at
 * sl's pos, VAL(x) for each element x: through sl's write-combining lines
 * when it has them (WC_SCATTER, L elements of T to a 64-byte line), else
 * one store per element. */
#define SGL_SORT_SCATTER(T, L, VAL, BUCKET, KEY, from, to, n, sl)                               \
    do {                                                                                        \
        if ((sl).lines) {                                                                       \
            WC_SCATTER(T, L, VAL, BUCKET, KEY, from, to, n, sl);                                \
        } else {                                                                                \
            for (int64_t i = 0; i < (n); i++) {                                                 \
                uint64_t x = (from)[i];                                                         \
                (to)[(sl).pos[BUCKET(KEY, sl, x)]++] = VAL(x);                                  \
            }                                                                                   \
        }                                                                                       \
    } while (0)

/* WC_SCATTER(T, L, VAL, BUCKET, KEY, from, to, n, sl): the scatter of a
 * split out of the cache, with software write-combining: each bucket's elements
 * (VAL(x) of type T, L of them in 64 bytes) are gathered in sl's 64-byte
 * line of the bucket, and a full line goes to its place in `to` with
 * non-temporal stores (whole lines: no read of the line before the write,
 * no eviction of what the cache holds); the partial lines at each
 * bucket's two ends are copied element by element.  One store per element
 * into the cache, instead of one into a line of DRAM among 1024 (more
 * lines than the write-combining buffers and the TLB hold): 5*10^6 ints,
 * 59 -> 52 ms on a 2-core Intel VM (bench/README.md).  SGL_SORT_WC is 0
 * where there is no SSE2 (WC_SCATTER then does nothing). */
#ifdef __SSE2__
#include <emmintrin.h> /* _mm_stream_si128: baseline x86-64 */
#define SGL_SORT_WC 1
static inline void sgl_sort_wc_line(void *dst, const void *line)
{
    for (int j = 0; j < 64; j += 16)
        _mm_stream_si128((__m128i *)(void *)((char *)dst + j),
                         _mm_load_si128((const __m128i *)(const void *)((const char *)line + j)));
}
#define WC_SCATTER(T, L, VAL, BUCKET, KEY, from, to, n, sl)                                     \
    do {                                                                                        \
        T(*line_)[L] = (T(*)[L])(void *)(sl).lines;                                             \
        /* a0: to's offset in its line */                                                       \
        int64_t a0 = (int64_t)(((uintptr_t)(to) / sizeof(T)) & ((L) - 1));                     \
        const int64_t *start_ = (sl).start;                                                     \
        int64_t *pos_ = (sl).pos;                                                               \
        for (int64_t i = 0; i < (n); i++) {                                                     \
            if ((i & 7) == 0)                                                                   \
                __builtin_prefetch(SGL_SORT_AHEAD_OF((from) + i));                              \
            uint64_t x = (from)[i];                                                             \
            size_t b = BUCKET(KEY, sl, x);                                                      \
            int64_t p = pos_[b]++, slot = (p + a0) & ((L) - 1);                                 \
            line_[b][slot] = VAL(x);                                                            \
            if (slot == (L) - 1) { /* full: all of it, or the part from the bucket's start */   \
                if (p - ((L) - 1) >= start_[b])                                                 \
                    sgl_sort_wc_line((to) + p - ((L) - 1), line_[b]);                           \
                else                                                                            \
                    for (int64_t q = start_[b]; q <= p; q++)                                    \
                        (to)[q] = line_[b][(q + a0) & ((L) - 1)];                               \
            }                                                                                   \
        }                                                                                       \
        for (size_t b = 0; b < (sl).nb; b++) { /* the last lines, partial */                    \
            int64_t p = pos_[b], from_q = p - ((p + a0) & ((L) - 1));                           \
            for (int64_t q = from_q > start_[b] ? from_q : start_[b]; q < p; q++)               \
                (to)[q] = line_[b][(q + a0) & ((L) - 1)];                                       \
        }                                                                                       \
        _mm_sfence();                                                                           \
    } while (0)
#else
#define SGL_SORT_WC 0
#define WC_SCATTER(T, L, VAL, BUCKET, KEY, from, to, n, sl) ((void)0)
#endif

/* Sorts a[0..n) ascending in place, with scratch it allocates (the
 * introsort when it cannot). */
void sgl_sort_i64(int64_t *a, int64_t n);

/* Sorts the n doubles of a in place, stably, in the builtin's order:
 * ascending by `<`, -0.0 and 0.0 equal, every NaN after all the other
 * values.  False (a unchanged) when its scratch could not be allocated. */
bool sgl_sort_f64(double *a, int64_t n);

/* True when a[0..n) is already in the builtin's order. */
bool sgl_sorted_i64(const int64_t *a, int64_t n);
bool sgl_sorted_f64(const double *a, int64_t n);

/* Whether a[0..n) (ints or floats, as bits) is in the reverse of the
 * builtin's order so that reversing it sorts it: ints that never ascend,
 * floats that always descend (a NaN, or two equal floats, whose order a
 * reversal would change: no); it reads up to the first element that says
 * no.  sgl_sort_reverse writes src[0..n) reversed into dst (which may be
 * src). */
bool sgl_sort_descending(bool is_float, const uint64_t *a, int64_t n);
void sgl_sort_reverse(const uint64_t *src, uint64_t *dst, int64_t n);

/* sgl_sort_count_runs's result for an input that sgl_sort_descending
 * accepts where it would otherwise say 0 (ints of more runs than are
 * merged, floats not in order): reversed, not sorted */
#define SGL_SORT_DESCENDING (-2)

/* The ascending runs of an int input (as bits) of n >= SGL_SORT_RADIX_MIN
 * elements, as sgl_sort_runs_i64 gives them (0: more than
 * SGL_SORT_MAX_RUNS); a float input's as sgl_sort_runs_f64 gives them,
 * at most two (0: more, as only two are merged); for
 * either SGL_SORT_DESCENDING instead of 0 where the reverse of the input
 * is in order. */
int sgl_sort_count_runs(bool is_float, const uint64_t *a, int64_t n, int64_t *bounds);

/* Sorts src[0..n) (ints or floats, as bits) into dst (which may be src):
 * short inputs in place (after a copy), int inputs of a few runs by
 * merging, float inputs of two runs by one merge (into a dst that is not
 * src; else sorted as any), ints whose keys differ in at most 32 bits by the packed
 * quicksort (sgl_sort_packed_quick_i64), the others by the radix sorts
 * (or the quicksorts of sgl_sort_vec.c).  runs and bounds: what
 * sgl_sort_count_runs said of src, or -1 when it was not asked (one read
 * pass fewer for a caller that asked; floats not asked are not checked
 * for a descending input).  False when memory for scratch could not be
 * had. */
bool sgl_sort_into(bool is_float, const uint64_t *src, uint64_t *dst, int64_t n, int runs,
                   int64_t *bounds);

/* The long int sort of a[0..n) (n >= SGL_SORT_HYBRID_MIN, not a few runs)
 * where a may be written.  Ints that the packed quicksort sorts
 * (sgl_sort_packed_quick_i64, tried first), or sgl_sort.c's int_special
 * (that differ only in the top digit's bits; in at most 32 bits, packed
 * again once counted, or skewed or wide, on AVX-512): in place, nothing
 * aside.  Where the packed sort applies (sgl_sort_packs)
 * and its 4 bytes an element make SGL_BLOCK_MAP_MIN bytes or more, in
 * place: those bytes go to a buffer aside, half a's, and the buckets back
 * into a (nothing copied).  Else into fresh(arg), a new buffer of n
 * elements that the caller makes (sgl_sort_take's new vector: the first
 * pass reads a, nothing is copied twice), or, without fresh or its buffer
 * (NULL) or the buffer aside, in place from a copy of a in a scratch as
 * long as it.  *moved: whether the ints went to fresh's buffer.  False
 * (a as it was) without memory. */
bool sgl_sort_int_in_place(uint64_t *a, int64_t n, uint64_t *(*fresh)(void *), void *arg,
                           bool *moved);

#endif
