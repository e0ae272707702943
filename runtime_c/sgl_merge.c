/*
 * sgl_merge.c: the sort of an int input made of a few ascending runs
 * (sgl_sort.c sends it here: PSRS's concatenated sorted blocks): its runs
 * found (sgl_sort_runs_i64), then merged pairwise, stably, two runs in one
 * pass, from both ends at once, with no branch on the comparison; a float
 * input of two runs the same way (sgl_sort_runs_f64, sgl_merge2_f64); and
 * sort(concat(vv)) as one call (sgl_sort_concat), which merges two sorted
 * runs straight from vv's parts.  And an input in reverse order
 * (sgl_sort_descending), reversed.  The scan for a run's end
 * (sgl_first_descent_i64) is vectorised where the CPU allows.
 */
#include "sgl_sort.h"

#include <stdbool.h>
#include <string.h>

#include "sgl_vbuf.h"

bool sgl_sort_descending(bool is_float, const uint64_t *a, int64_t n)
{
    int64_t i = 1;
    if (is_float) {
        const double *d = (const double *)(const void *)a;
        while (i < n && d[i] < d[i - 1])
            i++;
    } else {
        const int64_t *x = (const int64_t *)(const void *)a;
        while (i < n && x[i] <= x[i - 1])
            i++;
    }
    return i >= n;
}

void sgl_sort_reverse(const uint64_t *src, uint64_t *dst, int64_t n)
{
    if (src == dst) {
        for (int64_t i = 0, j = n - 1; i < j; i++, j--) {
            uint64_t t = dst[i];
            dst[i] = dst[j];
            dst[j] = t;
        }
        return;
    }
    for (int64_t i = 0; i < n; i++)
        dst[i] = src[n - 1 - i];
}

/* The first descent of a[0..n) at or after i (i >= 1), element by
 * element: a compare and a branch each. */
int64_t sgl_first_descent_plain_i64(const int64_t *a, int64_t i, int64_t n)
{
    for (; i < n; i++)
        if (a[i] < a[i - 1])
            return i;
    return n;
}

/* The same in blocks of DESCENT_BLOCK compares ORed without a branch
 * (vectorised), one test a block, the block that has one then scanned
 * element by element.  Inlined into each caller, to be compiled for its
 * target. */
#define DESCENT_BLOCK 32
static inline __attribute__((always_inline)) int64_t first_descent_blocks(const int64_t *a,
                                                                          int64_t i, int64_t n)
{
    for (; i + DESCENT_BLOCK <= n; i += DESCENT_BLOCK) {
        int64_t down = 0;
        for (int j = 0; j < DESCENT_BLOCK; j++)
            down |= a[i + j] < a[i + j - 1];
        if (down)
            break;
    }
    return sgl_first_descent_plain_i64(a, i, n);
}

/* x86-64's baseline (SSE2) has no 64-bit compare: there the blocks are
 * slower than the plain loop, and they are built for AVX2 (four ints a
 * compare) and chosen at run time where the CPU has it (a scan of
 * 1.25*10^6 sorted ints: 1.0 ms element by element, 0.6 ms; bench/README.md,
 * "The sort").  Elsewhere (aarch64's NEON has the compare) the blocks are
 * the only form. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2"))) static int64_t first_descent_avx2(const int64_t *a, int64_t i,
                                                                   int64_t n)
{
    return first_descent_blocks(a, i, n);
}

int64_t sgl_first_descent_i64(const int64_t *a, int64_t i, int64_t n)
{
    if (__builtin_cpu_supports("avx2"))
        return first_descent_avx2(a, i, n);
    return sgl_first_descent_plain_i64(a, i, n);
}
#elif defined(__x86_64__)
int64_t sgl_first_descent_i64(const int64_t *a, int64_t i, int64_t n)
{
    return sgl_first_descent_plain_i64(a, i, n);
}
#else
int64_t sgl_first_descent_i64(const int64_t *a, int64_t i, int64_t n)
{
    return first_descent_blocks(a, i, n);
}
#endif

int sgl_sort_runs_i64(const int64_t *a, int64_t n, int64_t *bounds, int maxruns)
{
    int r = 0;
    bounds[0] = 0;
    for (int64_t i = 1; i < n; i++) {
        /* eight elements here (random data has a descent every other
         * one), the rest of a longer run by the vectorised scan */
        int64_t probe = i + 8 < n ? i + 8 : n;
        while (i < probe && a[i] >= a[i - 1])
            i++;
        if (i == probe && (i = sgl_first_descent_i64(a, i, n)) == n)
            break;
        if (++r == maxruns)
            return 0; /* stops after maxruns descents: cheap on random data */
        bounds[r] = i;
    }
    bounds[++r] = n;
    return r;
}

/* Whether float y goes strictly before x in the builtin's order (-0.0 and
 * 0.0 tie, as NaNs do; a NaN goes after every other value). */
static inline bool before_f64(double y, double x)
{
    return (y < x) | ((x != x) & (y == y));
}

/* Whether b goes strictly before a: ints by value, or (fl) floats that are
 * not NaNs, as their bits (sgl_merge2_f64 sets the NaNs apart); fl is a
 * constant where it is used. */
static inline __attribute__((always_inline)) bool before(bool fl, int64_t b, int64_t a)
{
    if (!fl)
        return b < a;
    double y, x;
    memcpy(&y, &b, sizeof y);
    memcpy(&x, &a, sizeof x);
    return y < x;
}

int64_t sgl_first_descent_f64(const double *d, int64_t i, int64_t n)
{
    /* blocks of 16 compares with one branch, then element by element */
    for (; i + 16 <= n; i += 16) {
        bool any = false;
        for (int j = 0; j < 16; j++)
            any |= before_f64(d[i + j], d[i + j - 1]);
        if (any)
            break;
    }
    for (; i < n; i++)
        if (before_f64(d[i], d[i - 1]))
            return i;
    return n;
}

int sgl_sort_runs_f64(const uint64_t *a, int64_t n, int64_t *bounds, int maxruns)
{
    const double *d = (const double *)(const void *)a;
    int r = 0;
    bounds[0] = 0;
    for (int64_t i = 1; (i = sgl_first_descent_f64(d, i, n)) < n; i++) {
        if (++r == maxruns)
            return 0;
        bounds[r] = i;
    }
    bounds[++r] = n;
    return r;
}

/* A merge of the ascending x[0..nx) and y[0..ny) into out, stably, with
 * no branch on the comparison, from both ends: the front takes the least
 * left (x's on a tie), the back the greatest (y's), each until it wrote
 * half of out, two chains of loads side by side (2.5*10^6 ints: 7.1 ->
 * 3.8 ms); they never take the same element (the k least and the m
 * greatest, k + m <= nx + ny); a forward merge does the middle left.
 *
 * Checked (merge2's `check`), the runs may be in any order: out is then
 * read back as it is written, a chunk at a time while it is in the cache
 * (each end's chunk with the element before it), and the ends must not
 * have crossed; out ascends exactly when both runs do (a merge keeps each
 * run's order).  Every index stays in bounds either way: the steps are
 * bounded by the runs' lengths, not by their order. */
typedef struct {
    const int64_t *x, *y;
    int64_t *out;
    int64_t nx, ny, i, j, k, ie, je, ke;
} merging;

#define MERGING(x, nx, y, ny, out)                                             \
    ((merging){x, y, out, nx, ny, 0, 0, 0, (nx) - 1, (ny) - 1, (nx) + (ny) - 1})

/* One element at each end of m: each run must have one left at both. */
#define MERGE_STEP(m, fl)                                                    \
    do {                                                                     \
        int64_t a_ = m.x[m.i], b_ = m.y[m.j], c_ = m.x[m.ie], d_ = m.y[m.je]; \
        bool t_ = before(fl, b_, a_), u_ = before(fl, d_, c_);               \
        m.out[m.k++] = t_ ? b_ : a_;                                         \
        m.j += t_;                                                           \
        m.i += !t_;                                                          \
        m.out[m.ke--] = u_ ? c_ : d_;                                        \
        m.ie -= u_;                                                          \
        m.je -= !u_;                                                         \
    } while (0)

/* Steps of the checked merge between two reads of what they wrote: 4 KiB
 * at each end of each half, 16 KiB in all. */
#define CHECK_CHUNK 512

/* Whether a[0..n) ascends: ints, or (fl) floats in the builtin's order. */
static inline bool sorted_as(bool fl, const int64_t *a, int64_t n)
{
    return fl ? sgl_sorted_f64((const double *)(const void *)a, n) : sgl_sorted_i64(a, n);
}

/* Whether out[from..to) ascends, from and to clamped to out[0..n). */
static bool ascends(bool fl, const int64_t *out, int64_t from, int64_t to, int64_t n)
{
    from = from < 0 ? 0 : from;
    to = to > n ? n : to;
    return from >= to || sorted_as(fl, out + from, to - from);
}

/* What m's front wrote since k0 and its back since ke0 (each with the
 * element before, in out's order), ascending. */
static inline bool wrote_in_order(bool fl, const merging *m, int64_t k0, int64_t ke0)
{
    int64_t n = m->nx + m->ny;
    return ascends(fl, m->out, k0 - 1, m->k, n) && ascends(fl, m->out, m->ke + 1, ke0 + 2, n);
}

/* The rest of m's merge; false (checked only) where out does not ascend. */
static inline __attribute__((always_inline)) bool merging_finish(merging m, bool check,
                                                                 bool fl)
{
    int64_t half = (m.nx + m.ny) / 2, k0 = m.k, ke0 = m.ke;
    while (m.k < half && m.i < m.nx && m.j < m.ny && m.ie >= 0 && m.je >= 0)
        MERGE_STEP(m, fl);
    while (m.i <= m.ie && m.j <= m.je) {
        int64_t a = m.x[m.i], b = m.y[m.j];
        bool t = before(fl, b, a);
        m.out[m.k++] = t ? b : a;
        m.j += t;
        m.i += !t;
    }
    if (check && (m.i > m.ie + 1 || m.j > m.je + 1))
        return false; /* the ends crossed: out of order (the rest would not fit) */
    memcpy(m.out + m.k, m.x + m.i, (size_t)(m.ie + 1 - m.i) * sizeof *m.x);
    m.k += m.ie + 1 - m.i;
    memcpy(m.out + m.k, m.y + m.j, (size_t)(m.je + 1 - m.j) * sizeof *m.y);
    /* from the front's last checked element to the back's first */
    return !check || ascends(fl, m.out, k0 - 1, ke0 + 2, m.nx + m.ny);
}

/* Split at the middle of out (the count of x's in its first h elements:
 * a binary search), the halves' merges run side by side, four chains, for
 * as many steps as no run can run out at either end (each half's half and
 * each run's length at most): 2.5*10^6 ints 3.8 -> 2.4 ms.  Checked: false
 * where x or y does not ascend (out is then written, in no order). */
static inline __attribute__((always_inline)) bool merge2(const int64_t *x, int64_t nx,
                                                         const int64_t *y, int64_t ny,
                                                         int64_t *out, bool check, bool fl)
{
    if (nx > 0 && ny > 0 && !before(fl, y[0], x[nx - 1])) { /* already in order */
        memcpy(out, x, (size_t)nx * sizeof *x);
        memcpy(out + nx, y, (size_t)ny * sizeof *y);
        return !check || (sorted_as(fl, x, nx) && sorted_as(fl, y, ny));
    }
    int64_t h = (nx + ny) / 2, lo = h > ny ? h - ny : 0, hi = h < nx ? h : nx;
    while (lo < hi) { /* the least i such that y[h - i - 1] < x[i] (or none is left) */
        int64_t i = lo + (hi - lo) / 2, j = h - i;
        if (j > 0 && i < nx && !before(fl, y[j - 1], x[i]))
            lo = i + 1;
        else
            hi = i;
    }
    merging a = MERGING(x, lo, y, h - lo, out);
    merging b = MERGING(x + lo, nx - lo, y + (h - lo), ny - (h - lo), out + h);
    int64_t steps = h / 2, bound[] = {(nx + ny - h) / 2, a.nx, a.ny, b.nx, b.ny};
    for (int r = 0; r < 5; r++)
        steps = bound[r] < steps ? bound[r] : steps;
    if (!check) {
        for (int64_t s = 0; s < steps; s++) {
            MERGE_STEP(a, fl);
            MERGE_STEP(b, fl);
        }
        merging_finish(a, false, fl);
        merging_finish(b, false, fl);
        return true;
    }
    for (int64_t s = 0; s < steps;) {
        int64_t e = steps - s < CHECK_CHUNK ? steps : s + CHECK_CHUNK;
        int64_t ak = a.k, ake = a.ke, bk = b.k, bke = b.ke;
        for (; s < e; s++) {
            MERGE_STEP(a, fl);
            MERGE_STEP(b, fl);
        }
        if (!wrote_in_order(fl, &a, ak, ake) || !wrote_in_order(fl, &b, bk, bke))
            return false;
    }
    return merging_finish(a, true, fl) && merging_finish(b, true, fl) &&
           ascends(fl, out, h - 1, h + 1, nx + ny);
}

void sgl_merge2_i64(const int64_t *x, int64_t nx, const int64_t *y, int64_t ny, int64_t *out)
{
    (void)merge2(x, nx, y, ny, out, false, false);
}

/* The NaNs of an ascending run of floats: its last elements. */
static int64_t nans_at_end(const uint64_t *x, int64_t n)
{
    int64_t k = n;
    while (k > 0 && sgl_sort_is_nan(x[k - 1]))
        k--;
    return n - k;
}

/* The float merge, checked or not: the values by `<` (-0.0 and 0.0 tie:
 * x's first), then x's NaNs, then y's.  A NaN among a run's values (not
 * at its end) is a descent that the check finds in what is written. */
static bool merge2_f64(const uint64_t *x, int64_t nx, const uint64_t *y, int64_t ny,
                       uint64_t *out, bool check)
{
    int64_t xn = nans_at_end(x, nx), yn = nans_at_end(y, ny), mx = nx - xn, my = ny - yn;
    bool ok = check ? merge2((const int64_t *)x, mx, (const int64_t *)y, my, (int64_t *)out,
                             true, true)
                    : merge2((const int64_t *)x, mx, (const int64_t *)y, my, (int64_t *)out,
                             false, true);
    memcpy(out + mx + my, x + mx, (size_t)xn * sizeof *x);
    memcpy(out + mx + my + xn, y + my, (size_t)yn * sizeof *y);
    return ok;
}

void sgl_merge2_f64(const uint64_t *x, int64_t nx, const uint64_t *y, int64_t ny, uint64_t *out)
{
    (void)merge2_f64(x, nx, y, ny, out, false);
}

bool sgl_merge2_checked_f64(const uint64_t *x, int64_t nx, const uint64_t *y, int64_t ny,
                            uint64_t *out)
{
    return merge2_f64(x, nx, y, ny, out, true);
}

bool sgl_merge2_checked_i64(const int64_t *x, int64_t nx, const int64_t *y, int64_t ny,
                            int64_t *out)
{
    return merge2(x, nx, y, ny, out, true, false);
}

/* Merges the ascending a[0..n1) and a[n1..n1+n2) in place, stably, with
 * only the shorter run set aside: from the front (the first run aside) or
 * from the back (the second), one chain of loads; buf holds the run. */
static void merge2_aside(int64_t *a, int64_t n1, int64_t n2, int64_t *buf)
{
    if (n1 <= n2) {
        memcpy(buf, a, (size_t)n1 * sizeof *a);
        int64_t i = 0, j = n1, k = 0, n = n1 + n2;
        while (i < n1 && j < n) {
            int64_t x = buf[i], y = a[j];
            bool t = y < x;
            a[k++] = t ? y : x;
            j += t;
            i += !t;
        }
        memcpy(a + k, buf + i, (size_t)(n1 - i) * sizeof *a);
    } else {
        memcpy(buf, a + n1, (size_t)n2 * sizeof *a);
        int64_t i = n1 - 1, j = n2 - 1, k = n1 + n2 - 1;
        while (i >= 0 && j >= 0) {
            int64_t x = a[i], y = buf[j];
            bool t = y < x; /* on a tie the second run's element goes last */
            a[k--] = t ? x : y;
            i -= t;
            j -= !t;
        }
        memcpy(a, buf, (size_t)(j + 1) * sizeof *a);
    }
}

/* Merges the ascending a[0..n1) and a[n1..n1+n2) in place, stably: a is
 * copied aside whole and merged back from both ends (merge2), which is
 * faster than merge2_aside (the copy is the cheaper part); merge2_aside
 * where a buffer as long as a cannot be had.  False (a unchanged) without
 * memory for either. */
bool sgl_merge2_in_place_i64(int64_t *a, int64_t n1, int64_t n2)
{
    if (n1 == 0 || n2 == 0 || !(a[n1] < a[n1 - 1]))
        return true;
    int64_t kind;
    int64_t *buf = sgl_block_alloc((size_t)(n1 + n2) * sizeof *a, false, &kind);
    if (buf) {
        memcpy(buf, a, (size_t)(n1 + n2) * sizeof *a);
        sgl_merge2_i64(buf, n1, buf + n1, n2, a);
    } else if ((buf = sgl_block_alloc((size_t)(n1 < n2 ? n1 : n2) * sizeof *a, false, &kind))) {
        merge2_aside(a, n1, n2, buf);
    } else {
        return false;
    }
    sgl_block_free(buf, kind);
    return true;
}

void sgl_merge_runs_i64(const int64_t *src, int64_t *dst, int64_t *tmp, int64_t n,
                        int64_t *bounds, int nruns)
{
    int rounds = 0;
    for (int r = nruns; r > 1; r = (r + 1) / 2)
        rounds++;
    if (rounds == 0) {
        if (dst != src)
            memcpy(dst, src, (size_t)n * sizeof *dst);
        return;
    }
    const int64_t *from = src;
    for (int p = 0; p < rounds; p++) {
        int64_t *to = sgl_pass_dest(src, dst, tmp, rounds, p);
        int k = 0;
        for (int r = 0; r < nruns; r += 2) {
            int64_t lo = bounds[r], mid = bounds[r + 1];
            int64_t hi = r + 1 < nruns ? bounds[r + 2] : mid;
            sgl_merge2_i64(from + lo, mid - lo, from + mid, hi - mid, to + lo);
            bounds[k++] = lo;
        }
        bounds[k] = n;
        nruns = k;
        from = to;
    }
    if (from != dst)
        memcpy(dst, from, (size_t)n * sizeof *dst);
}

/* The elements at each end of a part that two_sorted_runs reads. */
#define ENDS_CHECKED 256

/* The two non-empty parts of vv when it has exactly two, both ascending
 * runs of ints or floats as far as their ends show (the merge checks the rest, in
 * the same pass: the separate read of both parts took 1.2-1.9 ms of the
 * 3-5 ms merge of PSRS's 2.5*10^6 ints at 1x2 on the 2-core VM),
 * SGL_SORT_HYBRID_MIN elements or more in all (below, the concatenated
 * copy is in the cache and the plain path as fast). */
static bool two_sorted_runs(const sgl_type *vvt, const sgl_vec *vv, const sgl_vec **x,
                            const sgl_vec **y)
{
    bool fl = vvt->elem->elem->kind == SGL_T_FLOAT;
    if (!fl && vvt->elem->elem->kind != SGL_T_INT)
        return false;
    const sgl_vec *parts = vv->data, *got[2] = {NULL, NULL};
    int k = 0;
    int64_t total = 0;
    for (int64_t i = 0; i < vv->len; i++) {
        if (parts[i].len == 0)
            continue;
        if (k == 2)
            return false;
        got[k++] = &parts[i];
        total += parts[i].len;
    }
    if (k != 2 || total < SGL_SORT_HYBRID_MIN)
        return false;
    const int64_t *a = got[0]->data, *b = got[1]->data;
    int64_t last = a[got[0]->len - 1], first = b[0];
    double fl_last, fl_first;
    memcpy(&fl_last, &last, sizeof fl_last);
    memcpy(&fl_first, &first, sizeof fl_first);
    if (fl ? !before_f64(fl_first, fl_last) : !(first < last))
        return false; /* in order as they are: concat's copy (or view) is all */
    /* both ends of each part ascend (a part in no order fails at once);
     * the merge checks the rest as it goes */
    for (int p = 0; p < 2; p++) {
        const int64_t *d = got[p]->data;
        int64_t n = got[p]->len, e = n < ENDS_CHECKED ? n : ENDS_CHECKED;
        if (!sorted_as(fl, d, e) || !sorted_as(fl, d + n - e, e))
            return false;
    }
    *x = got[0];
    *y = got[1];
    return true;
}

/* The merge of two_sorted_runs' parts into a new vector; false (nothing
 * allocated) without the memory for it, or where a part was not in order
 * after all (the merge found out: the vector is freed). */
static bool merged(const sgl_type *vt, const sgl_vec *x, const sgl_vec *y, sgl_vec *out)
{
    if (!sgl_vec_try_alloc(vt->elem, x->len + y->len, out))
        return false;
    bool ok = vt->elem->kind == SGL_T_FLOAT
                  ? sgl_merge2_checked_f64(x->data, x->len, y->data, y->len, out->data)
                  : sgl_merge2_checked_i64(x->data, x->len, y->data, y->len, out->data);
    if (ok)
        return true;
    sgl_vec_free(vt, out);
    return false;
}

sgl_vec sgl_sort_concat(const sgl_type *vvt, const sgl_vec *vv, int line, int col)
{
    const sgl_vec *x, *y;
    sgl_vec r;
    if (two_sorted_runs(vvt, vv, &x, &y) && merged(vvt->elem, x, y, &r))
        return r;
    r = sgl_concat(vvt, vv, line, col);
    return sgl_sort_take(vvt->elem, &r, line, col);
}

sgl_vec sgl_sort_concat_take(const sgl_type *vvt, sgl_vec *vv, int line, int col)
{
    const sgl_vec *x, *y;
    sgl_vec r;
    if (two_sorted_runs(vvt, vv, &x, &y) && merged(vvt->elem, x, y, &r)) {
        sgl_vec_free(vvt, vv);
        return r;
    }
    r = sgl_concat_take(vvt, vv, line, col);
    return sgl_sort_take(vvt->elem, &r, line, col);
}
