/*
 * sgl_sort_builtin.c: the builtin `sort` of a vector (sgl_sort.c sorts the
 * elements): which vector the sorted elements go to.
 *
 * The builtin reads its input once to count its runs
 * (sgl_sort_count_runs) and passes what it found on: an input already in
 * order is not sorted at all (the result shares it).  The owned form
 * (sgl_sort_take), on a vector that no one else sees:
 * - in reverse order (sgl_sort_descending) and most of its buffer:
 *   reversed in place;
 * - shorter than SGL_SORT_HYBRID_MIN: sorted in place;
 * - two runs of ints: merged into a new vector (from both ends at once),
 *   or in place, the shorter run set aside, where there is not the memory
 *   for a new vector; two runs of floats: merged into a new vector, or,
 *   without the memory for it, sorted in place as any;
 * - ints that the packed quicksort sorts (sgl_sort_packed_quick_i64),
 *   where they are a block of a buffer whose other blocks are alive now
 *   (PSRS's children: the buffer stays for them anyway), in place: it
 *   needs no memory;
 * - more runs of ints that are most of their buffer (a view sorted in
 *   place keeps all of it alive), which the packed sort sorts with a
 *   mapped buffer aside (sgl_sort_int_in_place), or which differ only in
 *   the top digit's bits, or are skewed or wide (sgl_sort.c,
 *   int_special): in place, with half the input's bytes aside for the
 *   packed sort;
 * - floats neither in order nor in reverse order nor two runs that are
 *   most of their buffer or a block with live siblings (as the ints
 *   above), on a CPU with AVX-512, with no NaN and zeros of one sign
 *   (read first): in place by the quicksort (sgl_sort_vec_f64_in_place),
 *   nothing aside;
 * - any other: into a new vector (a longer sort needs a buffer as long as
 *   the input anyway), the input freed.
 * Anything else (a vector also seen elsewhere, the borrowed form) is
 * sorted into a new vector; its first pass reads the input where it lies,
 * so nothing is copied twice.
 */
#include <stdbool.h>
#include <stdint.h>

#include "sgl.h"
#include "sgl_sort.h"
#include "sgl_vbuf.h"

/* Only [int], [float] and [S] for a struct S of int, float and bool
 * fields reach here (the type checker sees to it). */

/* What sgl_sort_count_runs says of v; 0 for structs (never asked: the generated
 * merge sort is linear on sorted input). */
static int runs_of(const sgl_type *vt, const sgl_vec *v, int64_t *bounds)
{
    if (vt->elem->kind == SGL_T_STRUCT)
        return 0;
    return sgl_sort_count_runs(vt->elem->kind == SGL_T_FLOAT, v->data, v->len, bounds);
}

/* Sorts src[0..n) into dst (dst may be src); runs and bounds: runs_of's. */
static void sort_data(const sgl_type *vt, const void *src, void *dst, int64_t n, int runs,
                      int64_t *bounds, int line, int col)
{
    if (vt->elem->kind == SGL_T_STRUCT) {
        /* sorted in place by the sort generated per struct (sglc) */
        if (dst != src) sgl_copy_elems_into(vt->elem, dst, src, n); /* a copy of each */
        vt->elem->sort(dst, n);
        return;
    }
    if (!sgl_sort_into(vt->elem->kind == SGL_T_FLOAT, src, dst, n, runs, bounds))
        sgl_fail(line, col, "out of memory: no scratch buffer to sort %lld elements",
                 (long long)n);
}

/* A fresh vector holding v's elements in order. */
static sgl_vec sorted_copy(const sgl_type *vt, const sgl_vec *v, int runs, int64_t *bounds,
                           int line, int col)
{
    sgl_vec r = sgl_vec_new_uninit(vt, v->len, line, col);
    sort_data(vt, v->data, r.data, v->len, runs, bounds, line, col);
    return r;
}

sgl_vec sgl_sort(const sgl_type *vt, const sgl_vec *v, int line, int col)
{
    if (vt->elem->kind == SGL_T_STR)
        return sgl_sort_str(vt, v, line, col);
    int64_t bounds[SGL_SORT_MAX_RUNS + 1];
    int runs = v->len == 0 ? 1 : runs_of(vt, v, bounds);
    if (runs == 1)
        return sgl_vec_copy(vt, v); /* in order: shares v (copy-on-write) */
    return sorted_copy(vt, v, runs, bounds, line, col);
}

/* Whether v's elements are at least three quarters of the buffer they lie
 * in (its parent's, for a range handle): a view sorted in place keeps its
 * whole buffer alive, where a new vector would let the rest go (a block of
 * a split of 4: a quarter of the buffer).  Short views are sorted in place
 * all the same (their buffers are short too, mostly). */
static bool most_of_its_buffer(const sgl_vec *v)
{
    if (!v->buf)
        return true;
    const sgl_vbuf *b = vbuf_owner(v->buf);
    return v->len >= b->cap - b->cap / 4;
}

/* Whether v is a block of a buffer whose other blocks are alive now (its
 * range handle's parent has other handles): sorted where it lies, v then
 * keeps alive only what they keep for now. */
static bool blocks_beside(const sgl_vec *v)
{
    return v->buf && v->buf->parent &&
           atomic_load_explicit(&v->buf->parent->refs, memory_order_acquire) > 1;
}

/* A new vector for sgl_sort_int_in_place's `fresh` (its data, or NULL
 * without the memory). */
typedef struct {
    const sgl_type *et;
    int64_t len;
    sgl_vec v;
} fresh_vec;

static uint64_t *fresh_vec_data(void *arg)
{
    fresh_vec *f = arg;
    return sgl_vec_try_alloc(f->et, f->len, &f->v) ? f->v.data : NULL;
}

sgl_vec sgl_sort_take(const sgl_type *vt, sgl_vec *v, int line, int col)
{
    if (vt->elem->kind == SGL_T_STR)
        return sgl_sort_str_take(vt, v, line, col);
    sgl_vec r = *v;
    *v = (sgl_vec){NULL, 0, NULL};
    int64_t bounds[SGL_SORT_MAX_RUNS + 1];
    int runs = r.len == 0 ? 1 : runs_of(vt, &r, bounds); /* one read pass for all below */
    if (runs == 1)
        return r;
    if (runs == SGL_SORT_DESCENDING && sgl_vec_unique(&r) && most_of_its_buffer(&r)) {
        sort_data(vt, r.data, r.data, r.len, runs, bounds, line, col); /* reversed in place */
        return r;
    }
    if (sgl_vec_unique(&r) && runs == 2 && vt->elem->kind == SGL_T_INT &&
        r.len >= SGL_SORT_HYBRID_MIN) {
        /* merged from both ends into a new vector, which the merge needs
         * anyway, or, where there is not the memory for it, in place with
         * the shorter run set aside (as long as it, not as the vector) */
        sgl_vec s;
        if (!sgl_vec_try_alloc(vt->elem, r.len, &s)) {
            sort_data(vt, r.data, r.data, r.len, runs, bounds, line, col);
            return r;
        }
        sort_data(vt, r.data, s.data, r.len, runs, bounds, line, col);
        sgl_vec_free(vt, &r);
        return s;
    }
    bool long_ints = sgl_vec_unique(&r) && runs == 0 && vt->elem->kind == SGL_T_INT &&
                     r.len >= SGL_SORT_HYBRID_MIN;
    if (long_ints && !most_of_its_buffer(&r) && blocks_beside(&r) &&
        sgl_sort_packed_quick_i64(r.data, r.data, r.len))
        return r; /* in place by the packed quicksort: no new memory, no page to populate */
    if (long_ints && most_of_its_buffer(&r)) {
        /* in place where the packed quicksort, the packed sort (a buffer
         * aside of half the bytes) or int_special applies, else into a
         * new vector */
        fresh_vec f = {vt->elem, r.len, {NULL, 0, NULL}};
        bool moved;
        if (!sgl_sort_int_in_place(r.data, r.len, fresh_vec_data, &f, &moved))
            sgl_fail(line, col, "out of memory: no scratch buffer to sort %lld elements",
                     (long long)r.len);
        if (!moved)
            return r;
        sgl_vec_free(vt, &r);
        return f.v;
    }
    if (sgl_vec_unique(&r) && runs == 2 && vt->elem->kind == SGL_T_FLOAT &&
        r.len >= SGL_SORT_HYBRID_MIN) {
        sgl_vec s;
        if (sgl_vec_try_alloc(vt->elem, r.len, &s)) { /* merged into it */
            sort_data(vt, r.data, s.data, r.len, runs, bounds, line, col);
            sgl_vec_free(vt, &r);
            return s;
        }
        if (sgl_sort_vec_f64_in_place(r.data, r.len) != 1) /* no memory: in place as any */
            sort_data(vt, r.data, r.data, r.len, runs, bounds, line, col);
        return r;
    }
    if (sgl_vec_unique(&r) && runs == 0 && vt->elem->kind == SGL_T_FLOAT &&
        r.len >= SGL_SORT_HYBRID_MIN && (most_of_its_buffer(&r) || blocks_beside(&r)) &&
        sgl_sort_vec_f64_in_place(r.data, r.len) == 1)
        return r; /* the AVX-512 quicksort, in place: no new memory */
    if (!sgl_vec_unique(&r) || r.len >= SGL_SORT_HYBRID_MIN) {
        /* someone else still sees these elements, or the sort needs a
         * buffer as long as them anyway (the radix sort): sort into a new
         * vector (its first pass reads these elements, so nothing is
         * copied twice) */
        sgl_vec s = sorted_copy(vt, &r, runs, bounds, line, col);
        sgl_vec_free(vt, &r);
        return s;
    }
    sort_data(vt, r.data, r.data, r.len, runs, bounds, line, col);
    return r;
}
