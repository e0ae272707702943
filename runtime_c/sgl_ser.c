/*
 * sgl_ser.c: byte buffers (sgl_buf) and the flat serialization of values
 * that the transports use to send them between nodes, with the
 * out-of-band variant that the MPI transport uses (sgl_internal.h: large
 * vectors of numbers travel as byte ranges of their own storage).
 */
#include "sgl_internal.h"

#include <stdlib.h>
#include <string.h>

/* True when values of type t own no memory (a flat byte copy is a copy). */
static bool is_flat(const sgl_type *t)
{
    return !sgl_managed(t);
}

/* Element i of vector x of element type et. */
static void *elem_at(const sgl_vec *x, const sgl_type *et, int64_t i)
{
    return (char *)x->data + (size_t)i * sgl_sizeof(et);
}

/* A struct's field f of value v. */
#define FIELD(v, f) ((char *)(v) + (f)->offset)

/* ------------------------------------------------------------------ */
/* Byte buffers                                                        */

void sgl_buf_put(sgl_buf *b, const void *p, size_t n)
{
    if (n == 0)
        return;
    if (n > b->cap - b->len) {
        if (n > SIZE_MAX / 2 - b->len)
            sgl_fail(b->line, b->col, "out of memory allocating %zu bytes", SIZE_MAX);
        size_t cap = b->cap < 64 ? 64 : b->cap;
        while (cap < b->len + n)
            cap *= 2;
        b->data = sgl_realloc(b->data, cap, b->line, b->col);
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void sgl_buf_puts(sgl_buf *b, const char *s)
{
    sgl_buf_put(b, s, strlen(s));
}

void sgl_buf_free(sgl_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* ------------------------------------------------------------------ */
/* Serialization: int and float as 8 bytes, bool as 1 byte, a vector as */
/* its int64 length followed by its elements (in host byte order).     */
/* The sizes are sgl.h's SGL_SER_*_SIZE (which sglc reads): a flat      */
/* vector's elements are sent as they lie in memory.                    */

_Static_assert(sizeof(sgl_int) == SGL_SER_INT_SIZE && sizeof(sgl_float) == SGL_SER_FLOAT_SIZE &&
                   sizeof(sgl_bool) == SGL_SER_BOOL_SIZE && sizeof(int64_t) == SGL_SER_LEN_SIZE,
               "serialized sizes (sgl.h) differ from the sizes in memory");

void sgl_ser(sgl_buf *b, const sgl_type *t, const void *v)
{
    if (t->kind == SGL_T_STRUCT) {
        /* a plain struct as its bytes (the nodes run one build); a managed
         * one field by field */
        if (!t->managed)
            sgl_buf_put(b, v, t->size);
        else
            for (int i = 0; i < t->nfields; i++)
                sgl_ser(b, t->fields[i].type, FIELD(v, &t->fields[i]));
        return;
    }
    if (is_flat(t)) {
        if (t->kind == SGL_T_BOOL) {
            unsigned char c = *(const sgl_bool *)v ? 1 : 0;
            sgl_buf_put(b, &c, 1);
        } else if (t->kind == SGL_T_BYTE) {
            sgl_buf_put(b, v, 1);
        } else {
            sgl_buf_put(b, v, 8);
        }
        return;
    }
    const sgl_vec *x = v;
    int64_t len = x->len;
    sgl_buf_put(b, &len, sizeof len);
    const sgl_type *et = t->elem;
    if (len == 0)
        return;
    if (is_flat(et)) {
        /* sgl_bool holds exactly 0 or 1, so its bytes are already the wire form. */
        sgl_buf_put(b, x->data, (size_t)len * sgl_sizeof(et));
    } else {
        for (int64_t i = 0; i < len; i++)
            sgl_ser(b, et, elem_at(x, et, i));
    }
}

size_t sgl_ser_size(const sgl_type *t, const void *v)
{
    if (t->kind == SGL_T_STRUCT) {
        if (!t->managed)
            return t->size;
        size_t n = 0;
        for (int i = 0; i < t->nfields; i++)
            n += sgl_ser_size(t->fields[i].type, FIELD(v, &t->fields[i]));
        return n;
    }
    if (is_flat(t))
        return t->kind == SGL_T_BOOL || t->kind == SGL_T_BYTE ? SGL_SER_BOOL_SIZE
               : t->kind == SGL_T_INT ? SGL_SER_INT_SIZE : SGL_SER_FLOAT_SIZE;
    const sgl_vec *x = v;
    const sgl_type *et = t->elem;
    if (is_flat(et))
        return SGL_SER_LEN_SIZE + (size_t)x->len * sgl_sizeof(et);
    size_t n = SGL_SER_LEN_SIZE;
    for (int64_t i = 0; i < x->len; i++)
        n += sgl_ser_size(et, elem_at(x, et, i));
    return n;
}

const char *sgl_deser(const char *p, const sgl_type *t, void *out)
{
    switch (t->kind) {
    case SGL_T_BOOL:
        *(sgl_bool *)out = *(const unsigned char *)p != 0;
        return p + 1;
    case SGL_T_INT:
    case SGL_T_FLOAT:
        memcpy(out, p, 8);
        return p + 8;
    case SGL_T_BYTE:
        *(unsigned char *)out = *(const unsigned char *)p;
        return p + 1;
    case SGL_T_VEC:
    case SGL_T_STR:
        break;
    case SGL_T_STRUCT:
        if (!t->managed) {
            memcpy(out, p, t->size);
            return p + t->size;
        }
        for (int i = 0; i < t->nfields; i++)
            p = sgl_deser(p, t->fields[i].type, FIELD(out, &t->fields[i]));
        return p;
    }
    int64_t len;
    memcpy(&len, p, sizeof len);
    p += sizeof len;
    const sgl_type *et = t->elem;
    sgl_vec r = {NULL, 0, 0};
    if (len > 0) {
        size_t esz = sgl_sizeof(et);
        r = sgl_vec_new_uninit(t, len, 0, 0);
        if (et->kind == SGL_T_BOOL) {
            sgl_bool *d = r.data;
            for (int64_t i = 0; i < len; i++)
                d[i] = p[i] != 0;
            p += len;
        } else if (is_flat(et)) {
            memcpy(r.data, p, (size_t)len * esz);
            p += (size_t)len * esz;
        } else {
            for (int64_t i = 0; i < len; i++)
                p = sgl_deser(p, et, elem_at(&r, et, i));
        }
    }
    *(sgl_vec *)out = r;
    return p;
}

/* ------------------------------------------------------------------ */
/* Out-of-band serialization (sgl_internal.h)                           */

void sgl_pieces_add(sgl_pieces *l, char *p, size_t n)
{
    if (n == 0)
        return;
    l->bytes += n;
    /* a range that continues the last one, in the same message, extends it */
    if (l->n > 0 && p && l->ptr[l->n - 1] && l->msg[l->n - 1] == l->cur &&
        l->ptr[l->n - 1] + l->len[l->n - 1] == p) {
        l->len[l->n - 1] += n;
        return;
    }
    if (l->n == l->cap) {
        int64_t cap = l->cap ? 2 * l->cap : 8;
        l->ptr = sgl_realloc(l->ptr, (size_t)cap * sizeof *l->ptr, 0, 0);
        l->len = sgl_realloc(l->len, (size_t)cap * sizeof *l->len, 0, 0);
        l->msg = sgl_realloc(l->msg, (size_t)cap * sizeof *l->msg, 0, 0);
        l->cap = cap;
    }
    l->ptr[l->n] = p;
    l->len[l->n] = n;
    l->msg[l->n] = l->cur;
    l->n++;
}

void sgl_pieces_free(sgl_pieces *l)
{
    free(l->ptr);
    free(l->len);
    free(l->msg);
    *l = (sgl_pieces){0};
}

void sgl_ser_oob(sgl_buf *b, const sgl_type *t, const void *v, size_t min_oob, sgl_pieces *l)
{
    if (is_flat(t)) {
        sgl_ser(b, t, v);
        return;
    }
    if (t->kind == SGL_T_STRUCT) {
        for (int i = 0; i < t->nfields; i++)
            sgl_ser_oob(b, t->fields[i].type, FIELD(v, &t->fields[i]), min_oob, l);
        return;
    }
    const sgl_vec *x = v;
    const sgl_type *et = t->elem;
    if (is_flat(et)) {
        size_t bytes = (size_t)x->len * sgl_sizeof(et);
        if (bytes == 0 || bytes < min_oob) {
            sgl_ser(b, t, v);
            return;
        }
        int64_t mark = -x->len - 1;
        sgl_buf_put(b, &mark, sizeof mark);
        sgl_pieces_add(l, x->data, bytes);
        return;
    }
    int64_t len = x->len;
    sgl_buf_put(b, &len, sizeof len);
    if ((et->kind == SGL_T_VEC || et->kind == SGL_T_STR) && is_flat(et->elem) && min_oob > 1) {
        /* rows of numbers: all out of band when they hold min_oob bytes
         * together (the receiver lays them out in one buffer, deser_rows;
         * the sender sends adjacent rows from where they lie and packs
         * the others once), else all in the string */
        size_t esz = sgl_sizeof(et->elem), bytes = 0;
        const sgl_vec *row = x->data;
        for (int64_t i = 0; i < len && bytes < min_oob; i++)
            bytes += (size_t)row[i].len * esz;
        if (bytes >= min_oob)
            min_oob = 1;
    }
    for (int64_t i = 0; i < len; i++)
        sgl_ser_oob(b, et, elem_at(x, et, i), min_oob, l);
}

/* The n rows of a [[T]], T a number or bool, into e: the out-of-band
 * rows become adjacent views of one new buffer, received as one piece
 * (one contiguous receive; MPI is slow to receive into many blocks). */
static const char *deser_rows(const char *p, const sgl_type *rt, sgl_vec *e, int64_t n,
                              sgl_pieces *l)
{
    size_t esz = sgl_sizeof(rt->elem);
    int64_t total = 0;
    const char *q = p;
    for (int64_t i = 0; i < n; i++) {
        int64_t len;
        memcpy(&len, q, sizeof len);
        q += sizeof len;
        if (len < 0)
            total += -len - 1;
        else
            q += (size_t)len * (rt->elem->kind == SGL_T_BOOL ? SGL_SER_BOOL_SIZE : esz);
    }
    sgl_vec all = {NULL, 0, NULL};
    if (total > 0) {
        all = sgl_vec_new_uninit(rt, total, 0, 0);
        sgl_pieces_add(l, all.data, (size_t)total * esz);
    }
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t len;
        memcpy(&len, p, sizeof len);
        if (len >= 0) {
            p = sgl_deser(p, rt, &e[i]);
            continue;
        }
        p += sizeof len;
        len = -len - 1;
        e[i] = sgl_vec_copy(rt, &all);
        e[i].data = (char *)all.data + (size_t)at * esz;
        e[i].len = len;
        at += len;
    }
    sgl_vec_free(rt, &all);
    return p;
}

const char *sgl_deser_oob(const char *p, const sgl_type *t, void *out, sgl_pieces *l)
{
    if (is_flat(t))
        return sgl_deser(p, t, out);
    if (t->kind == SGL_T_STRUCT) {
        for (int i = 0; i < t->nfields; i++)
            p = sgl_deser_oob(p, t->fields[i].type, FIELD(out, &t->fields[i]), l);
        return p;
    }
    int64_t len;
    memcpy(&len, p, sizeof len);
    const sgl_type *et = t->elem;
    if (len < 0) {
        len = -len - 1;
        sgl_vec v = sgl_vec_new_uninit(t, len, 0, 0);
        sgl_pieces_add(l, v.data, (size_t)len * sgl_sizeof(et));
        *(sgl_vec *)out = v;
        return p + sizeof len;
    }
    if (is_flat(et))
        return sgl_deser(p, t, out);
    p += sizeof len;
    sgl_vec v = {NULL, 0, NULL};
    if (len > 0) {
        v = sgl_vec_new(t, len, 0, 0);
        if ((et->kind == SGL_T_VEC || et->kind == SGL_T_STR) && !sgl_managed(et->elem)) {
            p = deser_rows(p, et, v.data, len, l);
        } else {
            for (int64_t i = 0; i < len; i++)
                p = sgl_deser_oob(p, et, elem_at(&v, et, i), l);
        }
    }
    *(sgl_vec *)out = v;
    return p;
}
