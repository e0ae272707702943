/*
 * sgl_value.c: values of the SGL runtime.
 *
 * Type descriptors, checked allocation, deep copy/free/equality of values,
 * growable vectors with value semantics and range handles (sgl.h), the
 * vector builtins of brief §8 (fill, range, sum, min, max; sort is in
 * sgl_sort.c, the views slice, split, split_by and concat in sgl_views.c),
 * integer division and int(x). Byte buffers and the serialization that sends values between
 * nodes are in sgl_ser.c.
 *
 * Element storage: int and float take 8 bytes, bool 1 byte (sgl_bool),
 * a vector element is a sgl_vec struct owning its own storage.
 */
#include "sgl.h"
#include "sgl_prefetch.h"
#include "sgl_vbuf.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const sgl_type sgl_t_int = {.kind = SGL_T_INT, .elem = NULL};
const sgl_type sgl_t_float = {.kind = SGL_T_FLOAT, .elem = NULL};
const sgl_type sgl_t_bool = {.kind = SGL_T_BOOL, .elem = NULL};


/* True when values of type t own no memory (a flat byte copy is a copy). */
static bool is_flat(const sgl_type *t)
{
    return !sgl_type_owns(t);
}

/* ------------------------------------------------------------------ */
/* Allocation                                                          */

void *sgl_alloc(size_t size, int line, int col)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        sgl_fail(line, col, "out of memory allocating %zu bytes", size);
    return p;
}

void *sgl_realloc(void *p, size_t size, int line, int col)
{
    void *q = realloc(p, size ? size : 1);
    if (!q)
        sgl_fail(line, col, "out of memory allocating %zu bytes", size);
    return q;
}

/* Bytes taken by n elements of size esz; fails when that overflows. */
static size_t elems_bytes(int64_t n, size_t esz, int line, int col)
{
    if (n < 0 || (uint64_t)n > SIZE_MAX / esz)
        sgl_fail(line, col, "out of memory allocating %lld elements of %zu bytes",
                 (long long)n, esz);
    return (size_t)n * esz;
}


/* ------------------------------------------------------------------ */
/* Generic values                                                      */

void sgl_value_copy(const sgl_type *t, void *dst, const void *src)
{
    if (is_flat(t))
        memcpy(dst, src, sgl_sizeof(t));
    else if (t->kind == SGL_T_STRUCT)
        for (int i = 0; i < t->nfields; i++) {
            const sgl_field *f = &t->fields[i];
            sgl_value_copy(f->type, (char *)dst + f->offset, (const char *)src + f->offset);
        }
    else
        *(sgl_vec *)dst = sgl_vec_copy(t, (const sgl_vec *)src);
}

void sgl_value_free(const sgl_type *t, void *v)
{
    if (is_flat(t))
        return;
    if (t->kind == SGL_T_STRUCT) {
        for (int i = 0; i < t->nfields; i++)
            sgl_value_free(t->fields[i].type, (char *)v + t->fields[i].offset);
        return;
    }
    sgl_vec_free(t, (sgl_vec *)v);
}

bool sgl_value_eq(const sgl_type *t, const void *a, const void *b)
{
    switch (t->kind) {
    case SGL_T_INT:
        return *(const sgl_int *)a == *(const sgl_int *)b;
    case SGL_T_FLOAT:
        return *(const sgl_float *)a == *(const sgl_float *)b;
    case SGL_T_BOOL:
        return *(const sgl_bool *)a == *(const sgl_bool *)b;
    case SGL_T_BYTE:
        return *(const unsigned char *)a == *(const unsigned char *)b;
    case SGL_T_STR: {
        const sgl_vec *x = a, *y = b;
        return x->len == y->len && (x->len == 0 || memcmp(x->data, y->data, (size_t)x->len) == 0);
    }
    case SGL_T_VEC: {
        const sgl_vec *x = a, *y = b;
        if (x->len != y->len)
            return false;
        const sgl_type *et = t->elem;
        size_t esz = sgl_sizeof(et);
        for (int64_t i = 0; i < x->len; i++)
            if (!sgl_value_eq(et, elem_ptr(x, esz, i), elem_ptr(y, esz, i)))
                return false;
        return true;
    }
    case SGL_T_STRUCT:
        for (int i = 0; i < t->nfields; i++) {
            const sgl_field *f = &t->fields[i];
            if (!sgl_value_eq(f->type, (const char *)a + f->offset, (const char *)b + f->offset))
                return false;
        }
        return true;
    }
    return false;
}

void sgl_value_assign(const sgl_type *t, void *dst, const void *src)
{
    if (dst == src)
        return;
    if (is_flat(t)) {
        memmove(dst, src, sgl_sizeof(t));
        return;
    }
    if (t->kind == SGL_T_STRUCT) {
        /* Copy first: src may live inside *dst. */
        char tmp[t->size];
        sgl_value_copy(t, tmp, src);
        sgl_value_free(t, dst);
        memcpy(dst, tmp, t->size);
        return;
    }
    /* Copy first: src may live inside *dst. */
    sgl_vec tmp = sgl_vec_copy(t, (const sgl_vec *)src);
    sgl_vec_free(t, (sgl_vec *)dst);
    *(sgl_vec *)dst = tmp;
}

void sgl_value_assign_move(const sgl_type *t, void *dst, void *src)
{
    if (dst == src)
        return;
    if (is_flat(t)) {
        memmove(dst, src, sgl_sizeof(t));
        return;
    }
    if (t->kind == SGL_T_STRUCT) {
        char tmp[t->size];
        memcpy(tmp, src, t->size);
        memset(src, 0, t->size); /* src gave its storage away */
        sgl_value_free(t, dst);
        memcpy(dst, tmp, t->size);
        return;
    }
    sgl_vec tmp = *(sgl_vec *)src;
    *(sgl_vec *)src = (sgl_vec){NULL, 0, 0}; /* src gave its storage away */
    sgl_vec_free(t, (sgl_vec *)dst);
    *(sgl_vec *)dst = tmp;
}

/* ------------------------------------------------------------------ */
/* Vectors                                                             */


/* A header's memory block starts SGL_VBUF_PREFIX bytes before it (the
 * registry's link in a library build, sgl_vbuf.h; nothing otherwise). */
static sgl_vbuf *block_vbuf(void *p)
{
    return p ? (sgl_vbuf *)((char *)p + SGL_VBUF_PREFIX) : NULL;
}

static void *vbuf_block(sgl_vbuf *b)
{
    return (char *)b - SGL_VBUF_PREFIX;
}

/* Registers b (builds with the registry, sgl_vbuf.h; et: its elements' type). */
static void vbuf_track(sgl_vbuf *b, const sgl_type *et)
{
#ifdef SGL_REGISTRY
    sgl_lib_track(b, et);
#else
    (void)b;
    (void)et;
#endif
}

void sgl_vbuf_discard(sgl_vbuf *b)
{
    sgl_block_free(vbuf_block(b), b->mapped);
}

static void vbuf_dealloc(sgl_vbuf *b)
{
#ifdef SGL_REGISTRY
    sgl_lib_untrack(b);
#endif
    sgl_vbuf_discard(b);
}

/* A fresh buffer with room for cap elements of type et, one reference;
 * NULL without the memory. */
static sgl_vbuf *vbuf_try_alloc(const sgl_type *et, int64_t cap, bool zero)
{
    size_t esz = sgl_sizeof(et);
    if (cap < 0 || (uint64_t)cap > (SIZE_MAX - sizeof(sgl_vbuf) - SGL_VBUF_PREFIX) / esz)
        return NULL;
    int64_t kind;
    sgl_vbuf *b = block_vbuf(
        sgl_block_alloc(SGL_VBUF_PREFIX + sizeof(sgl_vbuf) + (size_t)cap * esz, zero, &kind));
    if (!b)
        return NULL;
    b->mapped = kind;
    atomic_init(&b->refs, 1);
    b->used = 0;
    b->cap = cap;
    b->parent = NULL;
    vbuf_track(b, et);
    return b;
}

/* The same, failing at line:col without the memory. */
static sgl_vbuf *vbuf_alloc(const sgl_type *et, int64_t cap, bool zero, int line, int col)
{
    sgl_vbuf *b = vbuf_try_alloc(et, cap, zero);
    if (!b)
        sgl_fail(line, col, "out of memory allocating %lld elements of %zu bytes", (long long)cap,
                 sgl_sizeof(et));
    return b;
}

static void vbuf_retain(sgl_vbuf *b)
{
    atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
}

/* Drops a reference; the last one frees the elements and the buffer (the
 * last one of a range handle frees the handle and releases its parent). */
/* Frees the n elements of type et at e (nothing to do for flat ones). */
static void drop_elems(const sgl_type *et, char *e, int64_t n)
{
    if (et->kind == SGL_T_STRUCT && et->managed) {
        for (int64_t i = 0; i < n; i++)
            sgl_value_free(et, e + (size_t)i * et->size);
    } else if (!is_flat(et)) {
        sgl_vec *x = (sgl_vec *)(void *)e;
        for (int64_t i = 0; i < n; i++)
            sgl_vec_free(et, &x[i]);
    }
}

static void vbuf_release(const sgl_type *et, sgl_vbuf *b)
{
    /* The sole reference needs no read-modify-write: nobody else holds
     * one, so nobody can take or drop one meanwhile (the acquire load sees
     * what the threads that dropped theirs wrote).  The atomic decrement
     * costs tens of cycles; a loop of supersteps frees two small vectors
     * per step on the master's critical path. */
    if (atomic_load_explicit(&b->refs, memory_order_acquire) != 1 &&
        atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (b->parent) {
        sgl_vbuf *p = b->parent;
        vbuf_dealloc(b);
        vbuf_release(et, p);
        return;
    }
    drop_elems(et, vbuf_data(b), b->used);
    vbuf_dealloc(b);
}

/* A new range handle of buffer p (one reference; it holds one of p's). */
static sgl_vbuf *vbuf_handle(sgl_vbuf *p, int line, int col)
{
    sgl_vbuf *h = block_vbuf(malloc(SGL_VBUF_PREFIX + sizeof *h));
    if (!h)
        sgl_fail(line, col, "out of memory allocating %zu bytes", sizeof *h);
    atomic_init(&h->refs, 1);
    h->used = h->cap = h->mapped = 0;
    h->parent = p;
    vbuf_retain(p);
#ifdef SGL_REGISTRY
    vbuf_track(h, vbuf_link(p)->et);
#endif
    return h;
}

sgl_vbuf *sgl_vbuf_header(const sgl_type *et, int64_t len, int64_t refs)
{
    sgl_vbuf *b = block_vbuf(malloc(SGL_VBUF_PREFIX + sizeof *b));
    if (!b)
        sgl_fail(0, 0, "out of memory allocating %zu bytes", sizeof *b);
    atomic_init(&b->refs, refs);
    b->used = b->cap = len;
    b->mapped = 0;
    b->parent = NULL;
    vbuf_track(b, et);
    return b;
}

/* A vector of len elements of type et in a buffer of its own (elements
 * uninitialized unless zero). */
static sgl_vec vec_alloc(const sgl_type *et, int64_t len, bool zero, int line, int col)
{
    sgl_vec v = {NULL, 0, NULL};
    if (len <= 0)
        return v;
    v.buf = vbuf_alloc(et, len, zero, line, col);
    v.buf->used = len;
    v.data = vbuf_data(v.buf);
    v.len = len;
    return v;
}

sgl_vec sgl_vec_new(const sgl_type *vt, int64_t len, int line, int col)
{
    return vec_alloc(vt->elem, len, true, line, col);
}

sgl_vec sgl_vec_new_uninit(const sgl_type *vt, int64_t len, int line, int col)
{
    return vec_alloc(vt->elem, len, !is_flat(vt->elem), line, col);
}

/* Copies n elements from src to dst: bytes, or shared vectors. */
static void copy_into(const sgl_type *et, void *dst, const void *src, int64_t n)
{
    if (n <= 0)
        return;
    if (is_flat(et)) {
        memcpy(dst, src, (size_t)n * sgl_sizeof(et));
    } else if (et->kind == SGL_T_STRUCT) {
        for (int64_t i = 0; i < n; i++)
            sgl_value_copy(et, (char *)dst + (size_t)i * et->size,
                           (const char *)src + (size_t)i * et->size);
    } else {
        const sgl_vec *s = src;
        sgl_vec *d = dst;
        for (int64_t i = 0; i < n; i++)
            d[i] = sgl_vec_copy(et, &s[i]);
    }
}

/* A fresh vector (a buffer of its own) holding copies of n elements. */
static sgl_vec copy_elems(const sgl_type *et, const void *src, int64_t n, int line, int col)
{
    sgl_vec r = vec_alloc(et, n, false, line, col);
    copy_into(et, r.data, src, n);
    return r;
}

/* For sgl_views.c (sgl_vbuf.h). */
void sgl_vbuf_retain(sgl_vbuf *b)
{
    vbuf_retain(b);
}

void sgl_vbuf_release(const sgl_type *et, sgl_vbuf *b)
{
    vbuf_release(et, b);
}

sgl_vbuf *sgl_vbuf_handle(sgl_vbuf *p, int line, int col)
{
    return vbuf_handle(p, line, col);
}

sgl_vec sgl_vec_alloc(const sgl_type *et, int64_t len, bool zero, int line, int col)
{
    return vec_alloc(et, len, zero, line, col);
}

bool sgl_vec_try_alloc(const sgl_type *et, int64_t len, sgl_vec *out)
{
    *out = (sgl_vec){NULL, 0, NULL};
    if (len <= 0)
        return true;
    sgl_vbuf *b = vbuf_try_alloc(et, len, false);
    if (!b)
        return false;
    b->used = len;
    *out = (sgl_vec){vbuf_data(b), len, b};
    return true;
}

void sgl_copy_elems_into(const sgl_type *et, void *dst, const void *src, int64_t n)
{
    copy_into(et, dst, src, n);
}

sgl_vec sgl_vec_copy(const sgl_type *vt, const sgl_vec *v)
{
    (void)vt;
    if (v->buf)
        vbuf_retain(v->buf);
    return *v;
}

void sgl_vec_free(const sgl_type *vt, sgl_vec *v)
{
    if (v->buf)
        vbuf_release(vt->elem, v->buf);
    v->data = NULL;
    v->len = 0;
    v->buf = NULL;
}

void sgl_vec_make_unique(const sgl_type *vt, sgl_vec *v, int line, int col)
{
    if (sgl_vec_unique(v))
        return;
    sgl_vec r = copy_elems(vt->elem, v->data, v->len, line, col);
    sgl_vec_free(vt, v);
    *v = r;
}

/* v, the only owner of its buffer b but a part of it (`st = slice(st, 0,
 * len(st) - 1)`, a stack's pop; `q = slice(q, 1, len(q))`, a queue's):
 * the elements outside v are freed and v's moved to the front, so that v
 * is the whole buffer again and grows in place, instead of being copied
 * into a new buffer at its next push (a copy of the whole stack at every
 * push after a pop: the square of its length). */
static void own_whole(const sgl_type *et, sgl_vec *v, size_t esz)
{
    sgl_vbuf *b = v->buf;
    char *start = vbuf_data(b);
    int64_t off = (int64_t)(((char *)v->data - start) / (ptrdiff_t)esz);
    drop_elems(et, start + (size_t)(off + v->len) * esz, b->used - off - v->len);
    drop_elems(et, start, off);
    if (off > 0 && v->len > 0)
        memmove(start, v->data, (size_t)v->len * esz); /* the elements move, no copies */
    v->data = start;
    b->used = v->len;
}

/* Makes v the sole owner of a buffer that ends where v ends, with room
 * for at least cap elements, so that it can grow in place. */
void sgl_vec_reserve(const sgl_type *vt, sgl_vec *v, int64_t cap, int line, int col)
{
    const sgl_type *et = vt->elem;
    size_t esz = sgl_sizeof(et);
    sgl_vbuf *b = v->buf;
    if (b && !b->parent && sgl_vec_unique(v) && (v->data != vbuf_data(b) || v->len != b->used))
        own_whole(et, v, esz);
    bool in_place = b && sgl_vec_unique(v) && v->data == vbuf_data(b) && v->len == b->used;
    if (in_place && cap <= b->cap)
        return;
    if (cap < v->len)
        cap = v->len;
    if (in_place) {
        /* the block itself grows: a malloc'd (or small) one by realloc, a
         * mapped one by mremap with its pages (sgl_block_grow); nothing
         * is copied by hand */
        size_t bytes = elems_bytes(cap, esz, line, col);
        if (bytes > SIZE_MAX - sizeof(sgl_vbuf) - SGL_VBUF_PREFIX)
            sgl_fail(line, col, "out of memory allocating %lld elements of %zu bytes",
                     (long long)cap, esz);
        size_t all = SGL_VBUF_PREFIX + sizeof(sgl_vbuf) + bytes;
        bool mapped = b->mapped > 0;
#ifdef SGL_REGISTRY
        /* the registry's neighbours point at the link: off the list while
         * the block moves, then on again (this thread's) if it was on one */
        bool tracked = vbuf_link(b)->reg != NULL;
        sgl_lib_untrack(b);
#endif
        int64_t kind = 0; /* realloc's block: a malloc'd one, even if it was small */
        sgl_vbuf *nb = block_vbuf(mapped ? sgl_block_grow(vbuf_block(b), b->mapped, all, &kind)
                                         : realloc(vbuf_block(b), all));
#ifdef SGL_REGISTRY
        if (tracked)
            sgl_lib_track(nb ? nb : b, et);
#endif
        if (nb) {
            nb->mapped = kind;
            nb->cap = cap;
            v->buf = nb;
            v->data = vbuf_data(nb);
            return;
        }
        if (!mapped)
            sgl_fail(line, col, "out of memory allocating %zu bytes", all);
        /* a mapped block mremap could not grow: into a new buffer below */
    }
    sgl_vbuf *nb = vbuf_alloc(et, cap < 1 ? 1 : cap, false, line, col);
    int64_t len = v->len;
    if (in_place) {
        /* (a mapped buffer mremap could not grow) its elements are moved:
         * a memcpy, no element copies */
        memcpy(vbuf_data(nb), v->data, (size_t)len * esz);
        nb->used = len;
        vbuf_dealloc(b); /* the elements moved: the old block alone */
        v->buf = nb;
        v->data = vbuf_data(nb);
        return;
    }
    copy_into(et, vbuf_data(nb), v->data, v->len);
    nb->used = v->len;
    sgl_vec_free(vt, v);
    v->buf = nb;
    v->data = vbuf_data(nb);
    v->len = len;
}

void sgl_vec_push_move(const sgl_type *vt, sgl_vec *v, const void *x, int line, int col)
{
    size_t esz = sgl_sizeof(vt->elem);
    /* x may point into v's own storage, which growing would move. */
    sgl_slot slot;
    void *item = sgl_slot_place(esz, &slot, line, col);
    memcpy(item, x, esz);
    sgl_vbuf *b = v->buf;
    if (b && !b->parent && v->data != vbuf_data(b) && sgl_vec_unique(v) &&
        (char *)v->data + (size_t)v->len * esz == vbuf_data(b) + (size_t)b->used * esz &&
        b->used < b->cap) {
        /* the end of its buffer, which it owns alone (a queue after its
         * pops, q = slice(q, 1, len(q))): appended in place; the elements
         * before it are freed when the buffer must grow (sgl_vec_reserve) */
    } else if (!(b && v->len < b->cap && sgl_vec_unique(v) && v->data == vbuf_data(b) &&
                 v->len == b->used)) {
        int64_t cap = v->len < 2 ? 4 : (v->len > INT64_MAX / 2 ? INT64_MAX : v->len * 2);
        sgl_vec_reserve(vt, v, cap, line, col);
    }
    memcpy(elem_ptr(v, esz, v->len), item, esz);
    sgl_slot_release(&slot, item);
    v->len++;
    v->buf->used++;
}

_Noreturn void sgl_index_fail(sgl_int i, int64_t len, int line, int col)
{
    sgl_fail(line, col, "index %lld out of range for vector of length %lld", (long long)i,
             (long long)len);
}

void *sgl_vec_at(const sgl_type *vt, const sgl_vec *v, sgl_int i, int line, int col)
{
    if (i < 0 || i >= v->len)
        sgl_index_fail(i, v->len, line, col);
    return elem_ptr(v, sgl_sizeof(vt->elem), i);
}

/* ------------------------------------------------------------------ */
/* Vector builtins                                                     */

sgl_vec sgl_fill(const sgl_type *vt, sgl_int n, const void *x, int line, int col)
{
    if (n < 0)
        sgl_fail(line, col, "fill with a negative count %lld", (long long)n);
    const sgl_type *et = vt->elem;
    size_t esz = sgl_sizeof(et);
    sgl_vec r = sgl_vec_new_uninit(vt, n, line, col); /* every element is written below */
    if (esz == sizeof(int64_t) && is_flat(et)) { /* int, float: one word each */
        int64_t w;
        memcpy(&w, x, sizeof w);
        int64_t *d = r.data;
        for (int64_t i = 0; i < n; i++)
            d[i] = w;
    } else {
        for (int64_t i = 0; i < n; i++)
            sgl_value_copy(et, elem_ptr(&r, esz, i), x);
    }
    return r;
}

sgl_vec sgl_range(sgl_int a, sgl_int b, int line, int col)
{
    sgl_vec r = {NULL, 0, 0};
    if (b <= a)
        return r;
    uint64_t n = (uint64_t)b - (uint64_t)a;
    if (n > (uint64_t)INT64_MAX)
        sgl_fail(line, col, "out of memory allocating %llu elements of %zu bytes",
                 (unsigned long long)n, sizeof(sgl_int));
    r = vec_alloc(&sgl_t_int, (int64_t)n, false, line, col);
    sgl_int *d = r.data;
    for (uint64_t i = 0; i < n; i++)
        d[i] = sgl_add(a, (sgl_int)i);
    return r;
}

/* Wrapping addition is associative and commutative, so the int sum may
 * run in four independent chains (the same result as one): gcc vectorizes
 * the four lanes at -O2 (two SSE2 paddq), where the one-chain loop stays
 * scalar, one dependent add per element.  Eight elements (a line, where
 * they are aligned) per step, with the line SGL_STREAM_AHEAD bytes (1024
 * elements) ahead prefetched: the hardware's prefetchers stop at each 4 KiB
 * page (bench/README.md, "Reductions").  min and max read so too. */
#define SGL_STREAM_AHEAD 8192 /* bytes: 1024 elements */
sgl_int sgl_sum_int(const sgl_vec *v)
{
    const sgl_int *d = v->data;
    int64_t n = v->len, i = 0;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (; i + 8 <= n; i += 8) {
        __builtin_prefetch(sgl_ahead(d + i, SGL_STREAM_AHEAD));
        s0 += (uint64_t)d[i] + (uint64_t)d[i + 4];
        s1 += (uint64_t)d[i + 1] + (uint64_t)d[i + 5];
        s2 += (uint64_t)d[i + 2] + (uint64_t)d[i + 6];
        s3 += (uint64_t)d[i + 3] + (uint64_t)d[i + 7];
    }
    for (; i + 4 <= n; i += 4) {
        s0 += (uint64_t)d[i];
        s1 += (uint64_t)d[i + 1];
        s2 += (uint64_t)d[i + 2];
        s3 += (uint64_t)d[i + 3];
    }
    for (; i < n; i++)
        s0 += (uint64_t)d[i];
    return (sgl_int)((s0 + s1) + (s2 + s3));
}

/* A float sum adds from the first element to the last (brief §8): one
 * dependent chain, which no compiler may reorder (bench/README.md gives
 * its speed against the memory's). */
sgl_float sgl_sum_float(const sgl_vec *v)
{
    const sgl_float *d = v->data;
    sgl_float s = 0.0;
    for (int64_t i = 0; i < v->len; i++)
        s += d[i];
    return s;
}

/* min/max: the fold of min(a, b) = a unless b < a (max: unless b > a)
 * from the first element to the last (brief §8).
 *
 * Ints: equal ints are the same value, so the fold's result is the
 * smallest (largest) element, found in four independent chains. */
#define SGL_EXTREMUM_INT(name, better, what)                                 \
    sgl_int name(const sgl_vec *v, int line, int col)                        \
    {                                                                        \
        if (v->len == 0)                                                     \
            sgl_fail(line, col, what " of an empty vector");                 \
        const sgl_int *d = v->data;                                          \
        int64_t n = v->len, i = 1;                                           \
        sgl_int m0 = d[0], m1 = d[0], m2 = d[0], m3 = d[0];                  \
        for (; i + 8 <= n; i += 8) {                                         \
            __builtin_prefetch(sgl_ahead(d + i, SGL_STREAM_AHEAD));          \
            m0 = d[i] better m0 ? d[i] : m0;                                 \
            m1 = d[i + 1] better m1 ? d[i + 1] : m1;                         \
            m2 = d[i + 2] better m2 ? d[i + 2] : m2;                         \
            m3 = d[i + 3] better m3 ? d[i + 3] : m3;                         \
            m0 = d[i + 4] better m0 ? d[i + 4] : m0;                         \
            m1 = d[i + 5] better m1 ? d[i + 5] : m1;                         \
            m2 = d[i + 6] better m2 ? d[i + 6] : m2;                         \
            m3 = d[i + 7] better m3 ? d[i + 7] : m3;                         \
        }                                                                    \
        for (; i < n; i++)                                                   \
            m0 = d[i] better m0 ? d[i] : m0;                                 \
        m0 = m1 better m0 ? m1 : m0;                                         \
        m2 = m3 better m2 ? m3 : m2;                                         \
        return m2 better m0 ? m2 : m0;                                       \
    }

SGL_EXTREMUM_INT(sgl_min_int, <, "min")
SGL_EXTREMUM_INT(sgl_max_int, >, "max")

/* Floats: a NaN first is the result (nothing is < NaN); later NaNs are
 * never taken; values equal by `<` have the same bits but -0.0 and 0.0,
 * of which the fold keeps the first it meets while that zero is the
 * extremum so far.  So the elements are taken in blocks of
 * SGL_EXTREMUM_BLOCK: a block's extremum comes from four independent
 * chains (x < m ? x : m: minsd/maxsd, NaNs skipped, from +inf/-inf), and
 * replaces the result only when strictly better, as the fold would; when
 * that block extremum is a zero, the fold's is the block's first zero
 * (every element before it in the block is worse or NaN), found by
 * rescanning the block, which is still in the cache (at most once per
 * call: nothing is better than a zero afterwards). */
#define SGL_EXTREMUM_BLOCK 2048
#define SGL_EXTREMUM_FLOAT(name, better, start, what)                        \
    sgl_float name(const sgl_vec *v, int line, int col)                      \
    {                                                                        \
        if (v->len == 0)                                                     \
            sgl_fail(line, col, what " of an empty vector");                 \
        const sgl_float *d = v->data;                                        \
        int64_t n = v->len;                                                  \
        sgl_float m = d[0];                                                  \
        if (m != m)                                                          \
            return m;                                                        \
        for (int64_t b = 1; b < n; b += SGL_EXTREMUM_BLOCK) {                \
            int64_t e = n - b < SGL_EXTREMUM_BLOCK ? n : b + SGL_EXTREMUM_BLOCK; \
            sgl_float m0 = start, m1 = start, m2 = start, m3 = start;        \
            int64_t i = b;                                                   \
            for (; i + 8 <= e; i += 8) {                                     \
                __builtin_prefetch(sgl_ahead(d + i, SGL_STREAM_AHEAD));      \
                m0 = d[i] better m0 ? d[i] : m0;                             \
                m1 = d[i + 1] better m1 ? d[i + 1] : m1;                     \
                m2 = d[i + 2] better m2 ? d[i + 2] : m2;                     \
                m3 = d[i + 3] better m3 ? d[i + 3] : m3;                     \
                m0 = d[i + 4] better m0 ? d[i + 4] : m0;                     \
                m1 = d[i + 5] better m1 ? d[i + 5] : m1;                     \
                m2 = d[i + 6] better m2 ? d[i + 6] : m2;                     \
                m3 = d[i + 7] better m3 ? d[i + 7] : m3;                     \
            }                                                                \
            for (; i < e; i++)                                               \
                m0 = d[i] better m0 ? d[i] : m0;                             \
            m0 = m1 better m0 ? m1 : m0;                                     \
            m2 = m3 better m2 ? m3 : m2;                                     \
            m0 = m2 better m0 ? m2 : m0;                                     \
            if (m0 better m) {                                               \
                if (m0 == 0.0) {                                             \
                    for (i = b; d[i] != 0.0; i++) {                          \
                    }                                                        \
                    m0 = d[i];                                               \
                }                                                            \
                m = m0;                                                      \
            }                                                                \
        }                                                                    \
        return m;                                                            \
    }

SGL_EXTREMUM_FLOAT(sgl_min_float, <, INFINITY, "min")
SGL_EXTREMUM_FLOAT(sgl_max_float, >, -INFINITY, "max")

/* ------------------------------------------------------------------ */
/* Numbers                                                             */

sgl_int sgl_div(sgl_int a, sgl_int b, int line, int col)
{
    if (b == 0)
        sgl_fail(line, col, "division by zero");
    return sgl_div_unchecked(a, b);
}

sgl_int sgl_mod(sgl_int a, sgl_int b, int line, int col)
{
    if (b == 0)
        sgl_fail(line, col, "modulo by zero");
    return sgl_mod_unchecked(a, b);
}

void sgl_shift_fail(sgl_int k, int line, int col)
{
    sgl_fail(line, col, "shift count %lld out of range 0 .. 63", (long long)k);
}

sgl_int sgl_float_to_int(sgl_float x, int line, int col)
{
    if (isnan(x))
        sgl_fail(line, col, "int() of nan");
    if (isinf(x))
        sgl_fail(line, col, "int() of %s", x > 0 ? "inf" : "-inf");
    /* -2^63 and 2^63 are exact doubles; the int range is [-2^63, 2^63). */
    if (x < -9223372036854775808.0 || x >= 9223372036854775808.0) {
        char repr[32];
        sgl_float_repr(repr, x);
        sgl_fail(line, col, "int() of %s: out of the int range", repr);
    }
    return (sgl_int)x;
}
