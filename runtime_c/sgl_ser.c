/*
 * sgl_ser.c: byte buffers (sgl_buf) and the flat serialization of values
 * that the transports use to send them between nodes.
 */
#include "sgl.h"

#include <stdlib.h>
#include <string.h>

/* True when values of type t own no memory (a flat byte copy is a copy). */
static bool is_flat(const sgl_type *t)
{
    return t->kind != SGL_T_VEC;
}

/* ------------------------------------------------------------------ */
/* Byte buffers                                                        */

void sgl_buf_put(sgl_buf *b, const void *p, size_t n)
{
    if (n == 0)
        return;
    if (n > b->cap - b->len) {
        if (n > SIZE_MAX / 2 - b->len)
            sgl_fail(0, 0, "out of memory allocating %zu bytes", SIZE_MAX);
        size_t cap = b->cap < 64 ? 64 : b->cap;
        while (cap < b->len + n)
            cap *= 2;
        b->data = sgl_realloc(b->data, cap, 0, 0);
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
    if (is_flat(t)) {
        if (t->kind == SGL_T_BOOL) {
            unsigned char c = *(const sgl_bool *)v ? 1 : 0;
            sgl_buf_put(b, &c, 1);
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
        const sgl_vec *e = x->data;
        for (int64_t i = 0; i < len; i++)
            sgl_ser(b, et, &e[i]);
    }
}

size_t sgl_ser_size(const sgl_type *t, const void *v)
{
    if (is_flat(t))
        return t->kind == SGL_T_BOOL ? SGL_SER_BOOL_SIZE
               : t->kind == SGL_T_INT ? SGL_SER_INT_SIZE : SGL_SER_FLOAT_SIZE;
    const sgl_vec *x = v;
    const sgl_type *et = t->elem;
    if (is_flat(et))
        return SGL_SER_LEN_SIZE + (size_t)x->len * sgl_sizeof(et);
    size_t n = SGL_SER_LEN_SIZE;
    const sgl_vec *e = x->data;
    for (int64_t i = 0; i < x->len; i++)
        n += sgl_ser_size(et, &e[i]);
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
    case SGL_T_VEC:
        break;
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
            sgl_vec *d = r.data;
            for (int64_t i = 0; i < len; i++)
                p = sgl_deser(p, et, &d[i]);
        }
    }
    *(sgl_vec *)out = r;
    return p;
}
