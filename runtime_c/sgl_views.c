/*
 * sgl_views.c: the vector builtins that return views of their argument's
 * buffer (brief §8): slice, split, split_by, and concat, which gives a
 * view when its parts lie one after the other in one buffer.  The
 * consuming variants (sgl_slice_take, sgl_split_take, sgl_split_by_take,
 * sgl_concat_take) are what sglc calls when the argument is a variable at
 * its last use or a temporary: a split of a buffer with one owner gives each block a range
 * handle of its own (sgl.h), so each block is written in place, and
 * concat joins such blocks back into one vector without copying.
 */
#include "sgl.h"
#include "sgl_vbuf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

sgl_vec sgl_slice(const sgl_type *vt, const sgl_vec *v, sgl_int a, sgl_int b, int line, int col)
{
    if (a < 0 || a > b || b > v->len)
        sgl_fail(line, col, "slice %lld..%lld out of range for %s of length %lld",
                 (long long)a, (long long)b, vt->kind == SGL_T_STR ? "string" : "vector",
                 (long long)v->len);
    sgl_vec r = {NULL, 0, NULL};
    if (b == a)
        return r;
    /* a view of the same buffer: no copy until someone writes */
    r = sgl_vec_copy(vt, v);
    r.data = elem_ptr(v, sgl_sizeof(vt->elem), a);
    r.len = b - a;
    return r;
}

sgl_vec sgl_slice_take(const sgl_type *vt, sgl_vec *v, sgl_int a, sgl_int b, int line, int col)
{
    sgl_vec r = sgl_slice(vt, v, a, b, line, col);
    sgl_vec_free(vt, v);
    return r;
}

/* The non-empty parts of vv, if they lie one after the other in memory, in
 * order, all in buffer `same` (same != NULL) or all in unshared range
 * handles of one buffer (same == NULL; *owner is that buffer); false
 * otherwise, or when fewer than two parts are non-empty. */
static bool adjacent_parts(const sgl_vec *parts, int64_t n, size_t esz, sgl_vbuf **same,
                           sgl_vbuf **owner)
{
    const sgl_vec *prev = NULL;
    bool one_buf = true, handles = true;
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) {
        const sgl_vec *p = &parts[i];
        if (p->len == 0)
            continue;
        count++;
        if (!p->buf)
            return false;
        if (prev) {
            if ((char *)prev->data + (size_t)prev->len * esz != (char *)p->data)
                return false;
            one_buf = one_buf && p->buf == prev->buf;
            handles = handles && p->buf->parent && p->buf->parent == prev->buf->parent;
        } else {
            handles = p->buf->parent != NULL;
        }
        handles = handles && atomic_load_explicit(&p->buf->refs, memory_order_acquire) == 1;
        prev = p;
    }
    if (count < 2 || !(one_buf || handles))
        return false;
    for (int64_t i = 0; i < n; i++)
        if (parts[i].len > 0) {
            *same = one_buf ? parts[i].buf : NULL;
            *owner = vbuf_owner(parts[i].buf);
            break;
        }
    return true;
}

/* The total length of the parts of vv (fails on overflow); *first: the
 * first non-empty part (or -1), *nonempty: how many there are. */
static int64_t concat_len(const sgl_vec *vv, int64_t *first, int64_t *nonempty, int line, int col)
{
    const sgl_vec *parts = vv->data;
    int64_t total = 0;
    *first = -1;
    *nonempty = 0;
    for (int64_t i = 0; i < vv->len; i++) {
        if (parts[i].len > INT64_MAX - total)
            sgl_fail(line, col, "out of memory: concat of more than %lld elements",
                     (long long)INT64_MAX);
        total += parts[i].len;
        if (parts[i].len > 0) {
            if (*first < 0)
                *first = i;
            (*nonempty)++;
        }
    }
    return total;
}

/* Copies the elements of parts i0 .. of vv (of vectors of type vt) into r
 * from element `at` on.  With `drop` (vv is owned and given up), each part
 * is dropped as soon as it is copied: a big buffer that only these parts
 * and another's (a sibling's concat) hold is freed, and kept for reuse,
 * as soon as both have copied from it, not after the whole copy (PSRS: a
 * child's sort of its concat then finds one of the sorted blocks its
 * buckets were cut from). */
static void copy_parts(const sgl_type *vt, sgl_vec *r, int64_t at, const sgl_vec *vv, int64_t i0,
                       bool drop)
{
    size_t esz = sgl_sizeof(vt->elem);
    sgl_vec *parts = vv->data;
    bool bytes = !sgl_type_owns(vt->elem); /* a byte copy is a copy */
    for (int64_t i = i0; i < vv->len; i++) {
        if (!(bytes && sgl_team_copy(elem_ptr(r, esz, at), parts[i].data,
                                     (size_t)parts[i].len * esz)))
            sgl_copy_elems_into(vt->elem, elem_ptr(r, esz, at), parts[i].data, parts[i].len);
        at += parts[i].len;
        if (drop) {
            sgl_vec_free(vt, &parts[i]);
            parts[i] = (sgl_vec){NULL, 0, NULL}; /* vv's free skips it */
        }
    }
}

static sgl_vec concat_copy(const sgl_type *vt, const sgl_vec *vv, int64_t total, bool drop,
                           int line, int col)
{
    sgl_vec r = sgl_vec_alloc(vt->elem, total, false, line, col);
    copy_parts(vt, &r, 0, vv, 0, drop);
    return r;
}

sgl_vec sgl_concat(const sgl_type *vvt, const sgl_vec *vv, int line, int col)
{
    const sgl_type *vt = vvt->elem; /* [T] */
    const sgl_type *et = vt->elem;  /* T */
    const sgl_vec *parts = vv->data;
    int64_t first, nonempty;
    int64_t total = concat_len(vv, &first, &nonempty, line, col);
    sgl_vec r = {NULL, 0, 0};
    if (total == 0)
        return r;
    if (nonempty == 1) /* one non-empty part: share it */
        return sgl_vec_copy(vt, &parts[first]);
    /* adjacent views of one buffer: a view of it, shared (copy-on-write) */
    sgl_vbuf *same, *owner;
    if (adjacent_parts(parts, vv->len, sgl_sizeof(et), &same, &owner) && same) {
        sgl_vbuf_retain(same);
        return (sgl_vec){parts[first].data, total, same};
    }
    return concat_copy(vt, vv, total, false, line, col);
}

/* Whether part p is in a buffer with no other owner, so that it can
 * grow into the concatenation (sgl_vec_reserve: a mapped block keeps its
 * pages, mremap moves them if it must; a part of the buffer, after a
 * slice, is made the whole buffer first). */
static bool grows_in_place(const sgl_vec *p)
{
    sgl_vbuf *b = p->buf;
    return b && !b->parent && sgl_vec_unique(p);
}

/* The concatenation of the parts of vv (which has no other owner) made by
 * growing its first non-empty part, vv's part `first`, and appending the
 * others: neither the first part's elements are copied nor new pages
 * populated for them (PSRS's root joins its children's sorted blocks). */
static sgl_vec concat_onto_first(const sgl_type *vt, sgl_vec *vv, int64_t first, int64_t total,
                                 int line, int col)
{
    sgl_vec *parts = vv->data;
    sgl_vec r = parts[first];
    parts[first] = (sgl_vec){NULL, 0, NULL}; /* moved out: vv's free skips it */
    sgl_vec_reserve(vt, &r, total, line, col);
    copy_parts(vt, &r, r.len, vv, first + 1, true);
    r.len = total;
    r.buf->used = total;
    return r;
}

sgl_vec sgl_concat_take(const sgl_type *vvt, sgl_vec *vv, int line, int col)
{
    const sgl_type *vt = vvt->elem;
    const sgl_type *et = vt->elem;
    if (!sgl_vec_unique(vv)) { /* the parts are shared with another owner */
        sgl_vec r = sgl_concat(vvt, vv, line, col);
        sgl_vec_free(vvt, vv);
        return r;
    }
    const sgl_vec *parts = vv->data;
    int64_t first, nonempty;
    int64_t total = concat_len(vv, &first, &nonempty, line, col);
    sgl_vec r = {NULL, 0, NULL};
    sgl_vbuf *same, *owner;
    size_t esz = sgl_sizeof(et);
    if (total == 0) {
    } else if (nonempty == 1) {
        r = sgl_vec_copy(vt, &parts[first]);
    } else if (adjacent_parts(parts, vv->len, esz, &same, &owner)) {
        if (same) {
            sgl_vbuf_retain(same);
            r = (sgl_vec){parts[first].data, total, same};
        } else if (parts[first].data == vbuf_data(owner) && total == owner->used) {
            /* unshared handles covering the whole buffer: the buffer itself */
            sgl_vbuf_retain(owner);
            r = (sgl_vec){parts[first].data, total, owner};
        } else { /* unshared handles of part of it: one handle of their union */
            r = (sgl_vec){parts[first].data, total, sgl_vbuf_handle(owner, line, col)};
        }
    } else if (grows_in_place(&parts[first])) {
        r = concat_onto_first(vt, vv, first, total, line, col);
    } else {
        r = concat_copy(vt, vv, total, true, line, col);
    }
    sgl_vec_free(vvt, vv); /* drops the parts' references */
    return r;
}

/* Block i of blocks: the n elements of v from pos.  With `own` (v is the
 * only owner of its elements, and is given up by the caller), a range
 * handle of its own, or v itself when the block is the whole of v; else a
 * view sharing v's buffer. */
static void put_block(const sgl_type *vt, sgl_vec *blocks, int64_t i, sgl_vec *v, int64_t pos,
                      int64_t n, bool own, int line, int col)
{
    if (n <= 0)
        return;
    if (own && n == v->len) {
        blocks[i] = *v;
        *v = (sgl_vec){NULL, 0, NULL};
        return;
    }
    sgl_vbuf *b = own ? sgl_vbuf_handle(vbuf_owner(v->buf), line, col) : v->buf;
    if (!own)
        sgl_vbuf_retain(b);
    blocks[i] = (sgl_vec){elem_ptr(v, sgl_sizeof(vt->elem), pos), n, b};
}

/* Boundary i (0 <= i <= k) of split's k blocks of a vector of length n:
 * the first n % k blocks have one element more (brief §8).  The one home
 * of that arithmetic: split and split_bounds. */
static int64_t split_bound(int64_t n, int64_t k, int64_t i)
{
    int64_t base = n / k, extra = n % k;
    return i * base + (i < extra ? i : extra);
}

static void check_blocks(const char *what, sgl_int k, int line, int col)
{
    if (k < 1)
        sgl_fail(line, col, "%s into %lld blocks (must be at least 1)", what, (long long)k);
}

static sgl_vec split_blocks(const sgl_type *vt, sgl_vec *v, sgl_int k, bool own, int line, int col)
{
    check_blocks("split", k, line, col);
    sgl_vec r = sgl_vec_alloc(vt, k, true, line, col);
    sgl_vec *blocks = r.data;
    int64_t len = v->len;
    /* the blocks are views of v's buffer: no copy until someone writes */
    for (int64_t i = 0; i < k; i++) {
        int64_t pos = split_bound(len, k, i);
        put_block(vt, blocks, i, v, pos, split_bound(len, k, i + 1) - pos, own, line, col);
    }
    return r;
}

static const sgl_type vec_int = {.kind = SGL_T_VEC, .elem = &sgl_t_int};

static void check_length(const char *what, sgl_int n, int line, int col)
{
    if (n < 0)
        sgl_fail(line, col, "%s of a negative length (%lld)", what, (long long)n);
}

sgl_vec sgl_split_bounds(sgl_int n, sgl_int k, int line, int col)
{
    check_length("split_bounds", n, line, col);
    check_blocks("split_bounds", k, line, col);
    /* k + 1 would overflow: ask for k, which fails as too large a vector */
    sgl_vec r = sgl_vec_new_uninit(&vec_int, k < INT64_MAX ? k + 1 : k, line, col);
    sgl_int *b = r.data;
    for (int64_t i = 0; i <= k; i++)
        b[i] = split_bound(n, k, i);
    return r;
}

sgl_vec sgl_split(const sgl_type *vt, const sgl_vec *v, sgl_int k, int line, int col)
{
    sgl_vec view = *v; /* not given up: put_block only reads it */
    return split_blocks(vt, &view, k, false, line, col);
}

sgl_vec sgl_split_take(const sgl_type *vt, sgl_vec *v, sgl_int k, int line, int col)
{
    bool own = v->buf && sgl_vec_unique(v);
    sgl_vec r = split_blocks(vt, v, k, own, line, col);
    sgl_vec_free(vt, v);
    return r;
}

__extension__ typedef unsigned __int128 u128; /* gcc and clang */

/* floor(n * c / w) for c <= w, exactly (n < 2^63, w < 2^127). */
static int64_t mul_div_u128(int64_t n, u128 c, u128 w)
{
    if (w <= UINT64_MAX) /* n * c < 2^127 */
        return (int64_t)((u128)n * c / w);
    /* long division of the 192-bit n * c by w, one bit at a time */
    uint64_t lo = (uint64_t)c, hi = (uint64_t)(c >> 64);
    u128 p_lo = (u128)(uint64_t)n * lo;
    u128 p_hi = (u128)(uint64_t)n * hi + (uint64_t)(p_lo >> 64);
    uint64_t limbs[3] = {(uint64_t)(p_hi >> 64), (uint64_t)p_hi, (uint64_t)p_lo};
    u128 rem = 0;
    uint64_t q = 0;
    for (int b = 0; b < 192; b++) {
        rem = (rem << 1) | ((limbs[b / 64] >> (63 - b % 64)) & 1u);
        q <<= 1; /* the quotient is at most n: its high bits stay 0 */
        if (rem >= w) {
            rem -= w;
            q |= 1;
        }
    }
    return (int64_t)q;
}

/* floor(n * c / s) exactly, for doubles 0 <= c <= s with s > 0 finite:
 * c = mc * 2^(ec - 53) and s = ms * 2^(es - 53) with integer mantissas
 * in [2^52, 2^53) (frexp; subnormals too), ec <= es since c <= s, so the
 * quotient is n * mc / (ms * 2^(es - ec)).  Computing it in doubles
 * rounds: split_by_bounds(466, [1/3.0, 1/3.0]) gave 232, not 233. */
static int64_t mul_div_f64(int64_t n, double c, double s)
{
    if (c <= 0.0)
        return 0;
    if (c >= s)
        return n;
    int ec, es;
    uint64_t mc = (uint64_t)ldexp(frexp(c, &ec), 53), ms = (uint64_t)ldexp(frexp(s, &es), 53);
    int d = es - ec;
    if (d > 74) /* ms * 2^d >= 2^127 > n * mc */
        return 0;
    return mul_div_u128(n, mc, (u128)ms << d);
}

/* split_by's arithmetic (brief §8), the one home of it for split_by and
 * split_by_bounds: the weights checked and summed once (split_by_start),
 * then each block's end in order (split_by_end). */
typedef struct {
    int64_t n, k;
    bool ints;
    const sgl_int *wi;
    const sgl_float *wf;
    u128 isum, ic;
    sgl_float fsum, fc;
    double scale;
} split_by_state;

static split_by_state split_by_start(const char *what, int64_t n, const sgl_type *wt, const sgl_vec *w,
                                     int line, int col)
{
    split_by_state st = {.n = n, .k = w->len, .ints = wt->elem->kind == SGL_T_INT, .wi = w->data,
                         .wf = w->data, .scale = 1.0};
    int64_t k = st.k;
    if (k == 0)
        sgl_fail(line, col, "%s with no weights (the weight vector is empty)", what);
    const sgl_int *wi = st.wi;
    const sgl_float *wf = st.wf;
    for (int64_t i = 0; i < k; i++) {
        if (st.ints) {
            if (wi[i] < 0)
                sgl_fail(line, col, "%s with a negative weight (w[%lld] = %lld)", what, (long long)i,
                         (long long)wi[i]);
            st.isum += (uint64_t)wi[i];
        } else {
            if (!isfinite(wf[i]))
                sgl_fail(line, col, "%s with a weight that is not finite (w[%lld] = %s)", what, (long long)i,
                         isnan(wf[i]) ? "nan" : wf[i] > 0 ? "inf" : "-inf");
            if (wf[i] < 0)
                sgl_fail(line, col, "%s with a negative weight (w[%lld] = %.17g)", what, (long long)i, wf[i]);
            st.fsum += wf[i];
        }
    }
    if (st.ints ? st.isum == 0 : st.fsum == 0.0)
        sgl_fail(line, col, "%s with weights whose sum is 0 (it must be positive)", what);
    /* A float sum too large for a double: the weights are all scaled by
     * one power of two (exact), so that the ratios c_i / W stay those of
     * the brief; when the sum is finite no scaling happens at all. */
    if (!st.ints && !isfinite(st.fsum)) {
        st.scale = 0x1p-64;
        st.fsum = 0.0;
        for (int64_t i = 0; i < k; i++)
            st.fsum += wf[i] * st.scale;
    }
    return st;
}

/* The end (exclusive) of block i, given that block i starts at pos; called
 * for i = 0, 1, ..., k-1 in order. */
static int64_t split_by_end(split_by_state *st, int64_t i, int64_t pos)
{
    int64_t n = st->n, end = n;
    if (i < st->k - 1) {
        if (st->ints) {
            st->ic += (uint64_t)st->wi[i];
            end = mul_div_u128(n, st->ic, st->isum);
        } else {
            st->fc += st->wf[i] * st->scale;
            end = mul_div_f64(n, st->fc, st->fsum);
        }
        if (end < pos)
            end = pos;
    }
    return end;
}

static sgl_vec split_by_blocks(const sgl_type *vt, sgl_vec *v, const sgl_type *wt, const sgl_vec *w,
                               bool own, int line, int col)
{
    split_by_state st = split_by_start("split_by", v->len, wt, w, line, col);
    sgl_vec r = sgl_vec_alloc(vt, st.k, true, line, col);
    sgl_vec *blocks = r.data;
    int64_t pos = 0;
    for (int64_t i = 0; i < st.k; i++) {
        int64_t end = split_by_end(&st, i, pos);
        /* the blocks are views of v's buffer, as split's */
        put_block(vt, blocks, i, v, pos, end - pos, own, line, col);
        pos = end;
    }
    return r;
}

sgl_vec sgl_split_by_bounds(sgl_int n, const sgl_type *wt, const sgl_vec *w, int line, int col)
{
    check_length("split_by_bounds", n, line, col);
    split_by_state st = split_by_start("split_by_bounds", n, wt, w, line, col);
    sgl_vec r = sgl_vec_new_uninit(&vec_int, st.k + 1, line, col);
    sgl_int *b = r.data;
    b[0] = 0;
    for (int64_t i = 0; i < st.k; i++)
        b[i + 1] = split_by_end(&st, i, b[i]);
    return r;
}

sgl_vec sgl_split_by(const sgl_type *vt, const sgl_vec *v, const sgl_type *wt, const sgl_vec *w, int line,
                     int col)
{
    sgl_vec view = *v; /* not given up: put_block only reads it */
    return split_by_blocks(vt, &view, wt, w, false, line, col);
}

sgl_vec sgl_split_by_take(const sgl_type *vt, sgl_vec *v, const sgl_type *wt, const sgl_vec *w,
                          int line, int col)
{
    bool own = v->buf && sgl_vec_unique(v);
    sgl_vec r = split_by_blocks(vt, v, wt, w, own, line, col);
    sgl_vec_free(vt, v);
    return r;
}

