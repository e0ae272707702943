/*
 * sgl_sort_vec_body.h: the quicksort of sgl_sort_vec.c for one element
 * type, included once per type by sgl_sort_vec.c only, which defines
 * first: T (the element), V (a vector of L of them: 8 or 16), M (a mask of
 * L lanes), T_MAX (the greatest T, the networks' padding), FN(name) (name
 * with the type's suffix), V_IDX_XOR(k) (the lane indices, each XOR k: a
 * permutation), and the vector operations V_LOADU, V_STOREU,
 * V_MASK_LOADU, V_MASKZ_LOADU, V_MASK_STOREU, V_COMPRESS (a compress
 * store), V_MASKZ_COMPRESS (in a register; 16 lanes only), V_SET1,
 * V_PERM, V_MIN, V_MAX, V_BLEND, V_LT, V_GT, V_GE (masks of a < b, a > b,
 * a >= b: false where a lane is a NaN) and V_NAN (the lanes that are
 * NaNs: none for ints); MINMAX_CX where a min and a max may exchange two
 * vectors (ints), WITH_INTO for the sort from the input into the output
 * (else in place only).  The body undefines them all at its end.
 * sgl_sort_vec.c's comment says how it sorts.
 */

/* The lanes of vector i of a[0..n) that hold elements. */
static inline M FN(lanes)(int64_t n, int i)
{
    int64_t r = n - L * (int64_t)i;
    return r >= L ? (M)~(M)0 : r <= 0 ? 0 : (M)((1u << r) - 1);
}

/* One stage of a bitonic network inside a vector: each lane takes the
 * min or (where takemax) the max of itself and the lane perm gives (of
 * two equal, each takes the other's bits: -0.0 and 0.0 swap, none is
 * lost). */
AVX512 static inline V FN(stage)(V a, __m512i perm, M takemax)
{
    V b = V_PERM(perm, a);
    return V_BLEND(takemax, V_MIN(a, b), V_MAX(a, b));
}

/* The lanes whose index has bit h (1, 2, 4 or 8) set. */
#define UPPER(h) ((M)(0xFF00F0F0CCCCAAAAull >> (16 * __builtin_ctz(h))))

/* The stage of lane l against lane l ^ k, the one of the two with bit h
 * set taking the max (k = h: the lanes h apart; k = 2h - 1: each lane
 * against its mirror in a block of 2h).  k and h are constants once
 * inlined, and so are the permutation and the mask. */
#define XSTAGE(x, k, h) FN(stage)(x, V_IDX_XOR(k), UPPER(h))

/* A compare-exchange of two vectors, lane by lane: *lo the lesser, *hi
 * the greater.  For ints, a min and a max (equal ints are the same
 * bits); for floats, a compare and two blends, so that of two equal each
 * takes the other's bits (min and max of -0.0 and 0.0 would both give
 * the second operand: a zero would be lost). */
AVX512 static inline __attribute__((always_inline)) void FN(cx)(V *lo, V *hi)
{
    V a = *lo, b = *hi;
#ifdef MINMAX_CX
    *lo = V_MIN(a, b);
    *hi = V_MAX(a, b);
#else
    M sw = V_LT(b, a);
    *lo = V_BLEND(sw, a, b);
    *hi = V_BLEND(sw, b, a);
#endif
}

/* flipNV: sorts the L NV Ts of v[0..NV) (NV from 1 to 16), in registers
 * once the loops are unrolled, as the rows of a matrix of P vectors (the
 * power of 2 from NV up) by L lanes whose P - NV rows past v's would hold
 * T_MAX, the greatest:
 * - First each column (lane) is sorted down the rows, by a bitonic
 *   network of compare-exchanges of whole vectors (cx): every block of
 *   rows sorted, two blocks merged by comparing each row of the first
 *   with its mirror in the second, then half-cleaners m/4 .. 1 rows apart
 *   (a merged block of m rows).
 * - Then, for s = 2, 4, .., L, the blocks of s lanes are merged from
 *   their two halves of s/2 (each sorted in row-major order: row, then
 *   lane): across rows, the upper half of every block of m = P, P/2, ..,
 *   2 rows reversed in its blocks of s lanes (and left so), and each row
 *   of the lower half compared with its mirror row; then inside each
 *   vector, each lane with its mirror in its block of s, then the lanes
 *   s/4, .., 1 apart.  After the last, the rows in order hold the Ts in
 *   order.  (The merges of x86-simd-sort's networks: log2(s) steps inside
 *   a vector per merge, where a bitonic sort of the rows took more.)
 * A compare-exchange never moves a row of T_MAX (its min stays at the
 * lower row), nor does a permutation inside one, so the network leaves
 * out every step that reads those rows: a part of 80 doubles costs 10
 * vectors' work, not 16's (the lanes of padding in v's last vector, and
 * small_sort's vector of padding for an odd count past 8, are sorted as
 * the others). */
#define FLIP(NV)                                                                                  \
    NETWORK static inline __attribute__((always_inline)) void FN(flip##NV)(V *v)                  \
    {                                                                                             \
        enum { P = NV <= 1 ? 1 : NV <= 2 ? 2 : NV <= 4 ? 4 : NV <= 8 ? 8 : 16 };                  \
        /* (every loop of a constant count, so that all unroll, inner first) */                   \
        _Pragma("GCC unroll 4") for (int m = 2; m <= 16; m <<= 1) /* rows a block */              \
        {                                                                                         \
            if (m > P)                                                                            \
                break;                                                                            \
            _Pragma("GCC unroll 16") for (int a = 0; a < NV; a++)                                 \
            {                                                                                     \
                int i = a % m, b = a - i + m - 1 - i;                                             \
                if (i < m / 2 && b < NV)                                                          \
                    FN(cx)(&v[a], &v[b]);                                                         \
            }                                                                                     \
            _Pragma("GCC unroll 3") for (int d = 4; d >= 1; d >>= 1)                              \
            {                                                                                     \
                if (d > m / 4)                                                                    \
                    continue;                                                                     \
                _Pragma("GCC unroll 16") for (int a = 0; a < NV; a++) if (!(a & d) && a + d < NV) \
                    FN(cx)(&v[a], &v[a + d]);                                                     \
            }                                                                                     \
        }                                                                                         \
        _Pragma("GCC unroll 4") for (int s = 2; s <= L; s <<= 1) /* lanes a block */              \
        {                                                                                         \
            _Pragma("GCC unroll 4") for (int m = 16; m >= 2; m >>= 1)                             \
            {                                                                                     \
                if (m > P)                                                                        \
                    continue;                                                                     \
                _Pragma("GCC unroll 16") for (int a = 0; a < NV; a++) if (a % m >= m / 2)         \
                    v[a] = V_PERM(V_IDX_XOR(s - 1), v[a]);                                        \
                _Pragma("GCC unroll 16") for (int a = 0; a < NV; a++)                             \
                {                                                                                 \
                    int i = a % m, b = a - i + m - 1 - i;                                         \
                    if (i < m / 2 && b < NV)                                                      \
                        FN(cx)(&v[a], &v[b]);                                                     \
                }                                                                                 \
            }                                                                                     \
            _Pragma("GCC unroll 16") for (int a = 0; a < NV; a++)                                 \
            {                                                                                     \
                v[a] = XSTAGE(v[a], s - 1, s / 2);                                                \
                _Pragma("GCC unroll 3") for (int d = 4; d >= 1; d >>= 1) if (d <= s / 4) v[a] =   \
                    XSTAGE(v[a], d, d);                                                           \
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
#undef XSTAGE
#undef UPPER

#define SMALL_SORT(NV)                                                                            \
    do {                                                                                          \
        V v[NV];                                                                                  \
        _Pragma("GCC unroll 16") for (int i = 0; i < NV; i++) v[i] =                              \
            V_MASK_LOADU(inf, FN(lanes)(n, i), a + L * i);                                      \
        FN(flip##NV)(v);                                                                          \
        _Pragma("GCC unroll 16") for (int i = 0; i < NV; i++)                                     \
            V_MASK_STOREU(a + L * i, FN(lanes)(n, i), v[i]);                                    \
    } while (0)

/* Sorts a[0..n), n <= SMALL: the network of the fewest vectors that hold
 * n (of 10, 12, 14 or 16 past 8: 12 networks, not 16, of code). */
NETWORK static void FN(small_sort)(T *a, int64_t n)
{
    const V inf = V_SET1(T_MAX);
    switch ((n + L - 1) / L) {
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
        M hi_ = (M)(FN(above)(v, vp, le) & (m)), lo_ = (M)(~hi_ & (m));                           \
        int nh_ = __builtin_popcount(hi_);                                                        \
        V_COMPRESS(a + wl, lo_, v);                                                               \
        wl += (cnt)-nh_;                                                                          \
        wr -= nh_;                                                                                \
        V_COMPRESS(a + wr, hi_, v);                                                               \
    } while (0)
/* The same for a whole vector, where there are L places of room at both
 * ends (or exactly L in all: the two stores are then one, the same lanes
 * at the same place): the lanes below the pivot are stored first, those
 * above last.  For 8 lanes, one permutation (a table of one per mask)
 * and the vector stored whole at both ends; for 16 (a table of 2^16
 * would not stay in the cache), each side compressed in a register, the
 * lanes below stored whole at the left (the lanes past them are room),
 * then those above exactly, masked, at the right. */
#if L == 8
#define PUT(v)                                                                                    \
    do {                                                                                          \
        M hi_ = FN(above)(v, vp, le);                                                             \
        __m512i ix_ = _mm512_cvtepu8_epi64(_mm_cvtsi64_si128((long long)part_perm[hi_]));         \
        V pv_ = V_PERM(ix_, v);                                                                   \
        int nh_ = __builtin_popcount(hi_);                                                        \
        V_STOREU(a + wl, pv_);                                                                    \
        V_STOREU(a + wr - L, pv_);                                                                \
        wl += L - nh_;                                                                            \
        wr -= nh_;                                                                                \
    } while (0)
#else
#define PUT(v)                                                                                    \
    do {                                                                                          \
        M hi_ = FN(above)(v, vp, le);                                                             \
        int nh_ = __builtin_popcount(hi_);                                                        \
        V_STOREU(a + wl, V_MASKZ_COMPRESS((M)~hi_, v));                                           \
        V_MASK_STOREU(a + wr - nh_, (M)((1u << nh_) - 1), V_MASKZ_COMPRESS(hi_, v));              \
        wl += L - nh_;                                                                            \
        wr -= nh_;                                                                                \
    } while (0)
#endif

/* The lanes of v above the pivot: > p where le, else >= p. */
AVX512 static inline M FN(above)(V v, V vp, bool le)
{
    return le ? V_GT(v, vp) : V_GE(v, vp);
}

/* Partitions a[0..n) (n > 2 L U) around p: those below p (le: not above
 * it) first; their count.  The ends' U vectors each are read first, so
 * that the elements read and not yet written leave 2 L U places of room:
 * reading U vectors from the end with less room leaves at least L U at
 * both ends.  With track, *ext is the greatest element (le: the least). */
AVX512 static inline __attribute__((always_inline)) int64_t FN(partition)(T *a, int64_t n,
                                                                      T p, bool le, bool track,
                                                                      T *ext)
{
    V vp = V_SET1(p), lv[U], rv[U];
    for (int u = 0; u < U; u++) {
        lv[u] = V_LOADU(a + L * u);
        rv[u] = V_LOADU(a + n - L * U + L * u);
    }
    V acc = lv[0];
#define TRACK(v) (acc = track ? (le ? V_MIN(acc, v) : V_MAX(acc, v)) : acc)
    int64_t l = L * U, r = n - L * U, wl = 0, wr = n;
    while (r - l >= L * U) {
        const T *from;
        if (l - wl <= wr - r) {
            from = a + l;
            l += L * U;
            if (n >= PREFETCH_MIN)
                _Pragma("GCC unroll 8") for (int u = 0; u < U; u++)
                    __builtin_prefetch(sgl_ahead(from, AHEAD + 64 * u));
        } else {
            r -= L * U;
            from = a + r;
            if (n >= PREFETCH_MIN)
                _Pragma("GCC unroll 8") for (int u = 0; u < U; u++)
                    __builtin_prefetch(sgl_ahead(from, 64 * u - AHEAD));
        }
        V v[U];
        _Pragma("GCC unroll 8") for (int u = 0; u < U; u++) v[u] = V_LOADU(from + L * u);
        _Pragma("GCC unroll 8") for (int u = 0; u < U; u++) {
            TRACK(v[u]);
            PUT(v[u]);
        }
    }
    while (r - l >= L) {
        V v;
        if (l - wl <= wr - r) {
            v = V_LOADU(a + l);
            l += L;
        } else {
            r -= L;
            v = V_LOADU(a + r);
        }
        TRACK(v);
        PUT(v);
    }
    if (r > l) {
        M m = (M)((1u << (r - l)) - 1);
        /* tracked: acc's lanes past the part, no new extreme */
        V v = track ? V_MASK_LOADU(acc, m, a + l) : V_MASKZ_LOADU(m, a + l);
        TRACK(v);
        PUT_EXACT(v, m, (int)(r - l));
    }
    /* Every element not held is written: the room left is L places for
     * each vector held, so PUT's two stores land in it, apart while two
     * vectors or more are left (2 L places or more), the same L places,
     * with the same lanes, for the last. */
    for (int u = 0; u < U; u++) {
        TRACK(lv[u]);
        TRACK(rv[u]);
        PUT(lv[u]);
        PUT(rv[u]);
    }
#undef TRACK
    if (track) {
        _Alignas(64) T t[L];
        V_STOREU(t, acc);
        T e = t[0];
        for (int k = 1; k < L; k++)
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

#ifdef WITH_INTO
/* src[0..n) partitioned into dst around p (below p first, the others
 * down from the end): their count, or -1 where an element is a NaN. */
AVX512 static int64_t FN(partition_into)(const T *src, T *dst, int64_t n, T p)
{
    V vp = V_SET1(p);
    int64_t wl = 0, wr = n, i = 0;
    M nan = 0;
    const bool le = false;
    T *a = dst; /* (PUT's names) */
    for (; i + L <= n && wr - wl >= 2 * L; i += L) { /* room for PUT's whole stores */
        V v = V_LOADU(src + i);
        nan |= V_NAN(v);
        PUT(v);
    }
    for (; i < n; i += L) {
        M m = FN(lanes)(n - i, 0);
        V v = V_MASKZ_LOADU(m, src + i);
        nan |= (M)(V_NAN(v) & m);
        M hi = (M)(V_GE(v, vp) & m), lo = (M)(m & ~hi);
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
#endif

#undef FLIP
#undef SMALL_SORT
#undef PUT_EXACT
#undef PUT
/* the type's */
#undef SUFFIX
#undef T
#undef V
#undef L
#undef M
#undef WITH_INTO
#undef MINMAX_CX
#undef T_MAX
#undef V_IDX_XOR
#undef V_LOADU
#undef V_STOREU
#undef V_MASK_LOADU
#undef V_MASKZ_LOADU
#undef V_MASK_STOREU
#undef V_COMPRESS
#undef V_MASKZ_COMPRESS
#undef V_SET1
#undef V_PERM
#undef V_MIN
#undef V_MAX
#undef V_BLEND
#undef V_LT
#undef V_GT
#undef V_GE
#undef V_NAN
