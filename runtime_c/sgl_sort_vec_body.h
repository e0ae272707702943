/*
 * sgl_sort_vec_body.h: the quicksort of sgl_sort_vec.c for one element
 * type, included once per type by sgl_sort_vec.c only, which defines
 * first: T (the element), V (a vector of 8), T_MAX (the greatest T, the
 * networks' padding), FN(name) (name with the type's suffix), and the
 * vector operations V_LOADU, V_STOREU, V_MASK_LOADU, V_MASKZ_LOADU,
 * V_MASK_STOREU, V_COMPRESS, V_SET1, V_PERM, V_MIN, V_MAX, V_BLEND, V_LT,
 * V_GT, V_GE (masks of a < b, a > b, a >= b: false where a lane is a NaN)
 * and V_NAN (the lanes that are NaNs: none for ints).  sgl_sort_vec.c's
 * comment says how it sorts.
 */

/* One stage of a bitonic network inside a vector: each lane takes the
 * min or (where takemax) the max of itself and the lane perm gives (of
 * two equal, each takes the other's bits: -0.0 and 0.0 swap, none is
 * lost). */
AVX512 static inline V FN(stage)(V a, __m512i perm, __mmask8 takemax)
{
    V b = V_PERM(perm, a);
    return V_BLEND(takemax, V_MIN(a, b), V_MAX(a, b));
}

/* flipNV: sorts the 8 NV Ts of v[0..NV) (NV from 1 to 16), in
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
#define REV(x) V_PERM(rev, x)
#define FLIP(NV)                                                                                  \
    NETWORK static inline __attribute__((always_inline)) void FN(flip##NV)(V *v)                  \
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
            v[a] = FN(stage)(v[a], p1, 0xAA);                                                     \
            v[a] = FN(stage)(v[a], m3, 0xCC);                                                     \
            v[a] = FN(stage)(v[a], p1, 0xAA);                                                     \
            v[a] = FN(stage)(v[a], rev, 0xF0);                                                    \
            v[a] = FN(stage)(v[a], p2, 0xCC);                                                     \
            v[a] = FN(stage)(v[a], p1, 0xAA);                                                     \
        }                                                                                         \
        _Pragma("GCC unroll 8") for (int m = 2; m <= P; m <<= 1) /* vectors a block */            \
        {                                                                                         \
            _Pragma("GCC unroll 16") for (int a = 0; a < NV; a++)                                 \
            {                                                                                     \
                int i = a % m, b = a - i + m - 1 - i;                                             \
                if (i >= m / 2 || b >= NV)                                                        \
                    continue;                                                                     \
                V rb = REV(v[b]);                                                                 \
                __mmask8 sw = V_LT(rb, v[a]);                                                     \
                V lo = V_BLEND(sw, v[a], rb);                                                     \
                V hi = V_BLEND(sw, rb, v[a]);                                                     \
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
                    __mmask8 sw = V_LT(v[b], v[a]);                                               \
                    V lo = V_BLEND(sw, v[a], v[b]);                                               \
                    V hi = V_BLEND(sw, v[b], v[a]);                                               \
                    v[a] = lo;                                                                    \
                    v[b] = hi;                                                                    \
                }                                                                                 \
            }                                                                                     \
            /* the half-cleaners inside each vector: l^4, l^2, l^1 */                             \
            _Pragma("GCC unroll 16") for (int a = 0; a < NV; a++)                                 \
            {                                                                                     \
                v[a] = FN(stage)(v[a], p4, 0xF0);                                                 \
                v[a] = FN(stage)(v[a], p2, 0xCC);                                                 \
                v[a] = FN(stage)(v[a], p1, 0xAA);                                                 \
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

#define SMALL_SORT(NV)                                                                            \
    do {                                                                                          \
        V v[NV];                                                                                  \
        _Pragma("GCC unroll 16") for (int i = 0; i < NV; i++) v[i] =                              \
            V_MASK_LOADU(inf, lanes(n, i), a + 8 * i);                                            \
        FN(flip##NV)(v);                                                                          \
        _Pragma("GCC unroll 16") for (int i = 0; i < NV; i++)                                     \
            V_MASK_STOREU(a + 8 * i, lanes(n, i), v[i]);                                          \
    } while (0)

/* Sorts a[0..n), n <= SMALL: the network of the fewest vectors that hold
 * n (of 10, 12, 14 or 16 past 8: 12 networks, not 16, of code). */
NETWORK static void FN(small_sort)(T *a, int64_t n)
{
    const V inf = V_SET1(T_MAX);
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
        __mmask8 hi_ = FN(above)(v, vp, le) & (m), lo_ = (__mmask8)(~hi_ & (m));                  \
        int nh_ = __builtin_popcount(hi_);                                                        \
        V_COMPRESS(a + wl, lo_, v);                                                               \
        wl += (cnt)-nh_;                                                                          \
        wr -= nh_;                                                                                \
        V_COMPRESS(a + wr, hi_, v);                                                               \
    } while (0)
/* The same for a whole vector, where there are 8 places of room at both
 * ends (or exactly 8 in all: the two stores are then one, the same lanes
 * at the same place): one permutation puts the lanes below the pivot
 * first, those above last, and the vector is stored whole at both ends. */
#define PUT(v)                                                                                    \
    do {                                                                                          \
        __mmask8 hi_ = FN(above)(v, vp, le);                                                      \
        __m512i ix_ = _mm512_cvtepu8_epi64(_mm_cvtsi64_si128((long long)part_perm[hi_]));         \
        V pv_ = V_PERM(ix_, v);                                                                   \
        int nh_ = __builtin_popcount(hi_);                                                        \
        V_STOREU(a + wl, pv_);                                                                    \
        V_STOREU(a + wr - 8, pv_);                                                                \
        wl += 8 - nh_;                                                                            \
        wr -= nh_;                                                                                \
    } while (0)

/* The lanes of v above the pivot: > p where le, else >= p. */
AVX512 static inline __mmask8 FN(above)(V v, V vp, bool le)
{
    return le ? V_GT(v, vp) : V_GE(v, vp);
}

/* Partitions a[0..n) (n > 16 U) around p: those below p (le: not above
 * it) first; their count.  The ends' U vectors each are read first, so
 * that the elements read and not yet written leave 16 U places of room:
 * reading U vectors from the end with less room leaves at least 8 U at
 * both ends.  With track, *ext is the greatest element (le: the least). */
AVX512 static inline __attribute__((always_inline)) int64_t FN(partition)(T *a, int64_t n,
                                                                      T p, bool le, bool track,
                                                                      T *ext)
{
    V vp = V_SET1(p), lv[U], rv[U];
    for (int u = 0; u < U; u++) {
        lv[u] = V_LOADU(a + 8 * u);
        rv[u] = V_LOADU(a + n - 8 * U + 8 * u);
    }
    V acc = lv[0];
#define TRACK(v) (acc = track ? (le ? V_MIN(acc, v) : V_MAX(acc, v)) : acc)
    int64_t l = 8 * U, r = n - 8 * U, wl = 0, wr = n;
    while (r - l >= 8 * U) {
        const T *from;
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
        V v[U];
        _Pragma("GCC unroll 8") for (int u = 0; u < U; u++) v[u] = V_LOADU(from + 8 * u);
        _Pragma("GCC unroll 8") for (int u = 0; u < U; u++) {
            TRACK(v[u]);
            PUT(v[u]);
        }
    }
    while (r - l >= 8) {
        V v;
        if (l - wl <= wr - r) {
            v = V_LOADU(a + l);
            l += 8;
        } else {
            r -= 8;
            v = V_LOADU(a + r);
        }
        TRACK(v);
        PUT(v);
    }
    if (r > l) {
        __mmask8 m = (__mmask8)((1u << (r - l)) - 1);
        /* tracked: acc's lanes past the part, no new extreme */
        V v = track ? V_MASK_LOADU(acc, m, a + l) : V_MASKZ_LOADU(m, a + l);
        TRACK(v);
        PUT_EXACT(v, m, (int)(r - l));
    }
    /* Every element not held is written: the room left is 8 places for
     * each vector held, so PUT's two whole stores land in it, apart while
     * two vectors or more are left (16 places or more), the same 8
     * places, with the same lanes, for the last. */
    for (int u = 0; u < U; u++) {
        TRACK(lv[u]);
        TRACK(rv[u]);
        PUT(lv[u]);
        PUT(rv[u]);
    }
#undef TRACK
    if (track) {
        _Alignas(64) T t[8];
        V_STOREU(t, acc);
        T e = t[0];
        for (int k = 1; k < 8; k++)
            e = le ? (t[k] < e ? t[k] : e) : (t[k] > e ? t[k] : e);
        *ext = e;
    }
    return wl;
}

AVX512 static int64_t FN(partition_lt)(T *a, int64_t n, T p)
{
    return FN(partition)(a, n, p, false, false, NULL);
}

AVX512 static int64_t FN(partition_le)(T *a, int64_t n, T p)
{
    return FN(partition)(a, n, p, true, false, NULL);
}

/* The same, *most the greatest element */
AVX512 static int64_t FN(partition_lt_max)(T *a, int64_t n, T p, T *most)
{
    return FN(partition)(a, n, p, false, true, most);
}

/* The same at <=, *least the least element */
AVX512 static int64_t FN(partition_le_min)(T *a, int64_t n, T p, T *least)
{
    return FN(partition)(a, n, p, true, true, least);
}

/* Whether the sorted sample s holds its element s[mid] (0 < mid, and
 * s[mid + 1] in it) twice: DUP_LEAST where it is also the sample's least,
 * DUP where not, else NO_DUP. */
static inline int FN(dup_of)(const T *s, int mid)
{
    T p = s[mid];
    if (s[mid - 1] != p && s[mid + 1] != p)
        return NO_DUP;
    return s[0] == p ? DUP_LEAST : DUP;
}

/* A pivot of a[0..n): an element, the median of 9 spread over a (of 3
 * under 8,192; of 64 from 65,536 on, where a pivot far from the median
 * costs a pass more over more elements); *dup: whether the sample held
 * it twice (dup_of). */
AVX512 static T FN(pivot)(const T *a, int64_t n, int *dup)
{
    if (n >= 65536) {
        _Alignas(64) T s[64];
        for (int i = 0; i < 64; i++)
            s[i] = a[(n - 1) / 63 * i];
        FN(small_sort)(s, 64);
        *dup = FN(dup_of)(s, 32);
        return s[32];
    }
    T s[9] = {a[0], a[n / 2], a[n - 1]};
    int k = 3;
    if (n >= 8192)
        for (k = 0; k < 9; k++)
            s[k] = a[(n - 1) / 8 * k];
    for (int i = 1; i < k; i++) { /* insertion sort of the sample */
        T x = s[i];
        int j = i;
        for (; j > 0 && s[j - 1] > x; j--)
            s[j] = s[j - 1];
        s[j] = x;
    }
    *dup = FN(dup_of)(s, k / 2);
    return s[k / 2];
}

static void FN(sift)(T *a, int64_t i, int64_t n)
{
    T x = a[i];
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
static void FN(heapsort)(T *a, int64_t n)
{
    for (int64_t i = n / 2; i-- > 0;)
        FN(sift)(a, i, n);
    for (int64_t e = n - 1; e > 0; e--) {
        T t = a[0];
        a[0] = a[e];
        a[e] = t;
        FN(sift)(a, 0, e);
    }
}

/* Sorts a[0..n), at most depth partitions deep: the smaller part by
 * recursion, the larger in the loop.  Where the pivot's sample held it
 * twice (keys of few values), the partition finds its part's extreme
 * too, and a side of elements all equal to the pivot is done after that
 * pass: one pass over a run of equal keys, not two (below p, then at p),
 * unless elements below the pivot turn up where the sample had none. */
AVX512 static void FN(quicksort)(T *a, int64_t n, int depth)
{
    while (n > SMALL) {
        if (depth-- <= 0) {
            FN(heapsort)(a, n);
            return;
        }
        int dup;
        T p = FN(pivot)(a, n, &dup), ext;
        int64_t m, lo_end, hi_start; /* the parts left: [0, lo_end) and [hi_start, n) */
        if (dup == DUP_LEAST) { /* likely none below p: at <= */
            m = FN(partition_le_min)(a, n, p, &ext);
            lo_end = m;
            hi_start = m;
            if (ext == p) /* [0, m) all equal to p */
                lo_end = 0;
            else if (m > SMALL) /* some below p: those equal to it are done */
                lo_end = FN(partition_lt)(a, m, p);
        } else {
            m = dup == DUP ? FN(partition_lt_max)(a, n, p, &ext) : FN(partition_lt)(a, n, p);
            lo_end = m;
            hi_start = m;
            if (dup == DUP && ext == p) /* [m, n) all equal to p */
                hi_start = n;
            else if (m == 0) /* p is the least: those equal to it are in place */
                hi_start = FN(partition_le)(a, n, p);
        }
        if (lo_end < n - hi_start) {
            FN(quicksort)(a, lo_end, depth);
            a += hi_start;
            n -= hi_start;
        } else {
            FN(quicksort)(a + hi_start, n - hi_start, depth);
            n = lo_end;
        }
    }
    if (n > 1)
        FN(small_sort)(a, n);
}

/* src[0..n) partitioned into dst around p (below p first, the others
 * down from the end): their count, or -1 where an element is a NaN. */
AVX512 static int64_t FN(partition_into)(const T *src, T *dst, int64_t n, T p)
{
    V vp = V_SET1(p);
    int64_t wl = 0, wr = n, i = 0;
    __mmask8 nan = 0;
    const bool le = false;
    T *a = dst; /* (PUT's names) */
    for (; i + 8 <= n && wr - wl >= 16; i += 8) { /* room for PUT's whole stores */
        V v = V_LOADU(src + i);
        nan |= V_NAN(v);
        PUT(v);
    }
    for (; i < n; i += 8) {
        __mmask8 m = lanes(n - i, 0);
        V v = V_MASKZ_LOADU(m, src + i);
        nan |= (__mmask8)(V_NAN(v) & m);
        __mmask8 hi = (__mmask8)(V_GE(v, vp) & m), lo = (__mmask8)(m & ~hi);
        V_COMPRESS(dst + wl, lo, v);
        wl += __builtin_popcount(lo);
        wr -= __builtin_popcount(hi);
        V_COMPRESS(dst + wr, hi, v);
    }
    return nan ? -1 : wl;
}

/* Sorts src[0..n) into dst (n >= 2 SMALL), at most depth partitions deep
 * (then heapsort): 1, or -1 (dst unspecified) where an element is a NaN. */
AVX512 static int FN(sort_into)(const T *src, T *dst, int64_t n, int depth)
{
    int dup;
    T p = FN(pivot)(src, n, &dup);
    int64_t m = FN(partition_into)(src, dst, n, p);
    if (m < 0)
        return -1;
    if (m == 0) {
        m = FN(partition_le)(dst, n, p);
        FN(quicksort)(dst + m, n - m, depth);
    } else {
        FN(quicksort)(dst, m, depth);
        FN(quicksort)(dst + m, n - m, depth);
    }
    return 1;
}

#undef FLIP
#undef SMALL_SORT
#undef PUT_EXACT
#undef PUT
