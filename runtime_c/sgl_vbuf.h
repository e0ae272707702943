/*
 * sgl_vbuf.h: what sgl_value.c shares with sgl_views.c (internal): the
 * elements of a buffer, element addresses, and the few buffer operations
 * the views need.  Range handles are described in sgl.h.
 */
#ifndef SGL_VBUF_H
#define SGL_VBUF_H

#include "sgl.h"

/* The elements of buffer b (a buffer, not a range handle). */
static inline char *vbuf_data(sgl_vbuf *b)
{
    return (char *)(b + 1);
}

/* Address of element i of v (unchecked). */
static inline char *elem_ptr(const sgl_vec *v, size_t esz, int64_t i)
{
    return (char *)v->data + (size_t)i * esz;
}

/* The buffer that owns the elements b is a view of. */
static inline sgl_vbuf *vbuf_owner(sgl_vbuf *b)
{
    return b->parent ? b->parent : b;
}

void sgl_vbuf_retain(sgl_vbuf *b);
/* A new range handle of buffer p (one reference; it holds one of p's). */
sgl_vbuf *sgl_vbuf_handle(sgl_vbuf *p, int line, int col);
/* A vector of len elements of type et in a buffer of its own (elements
 * uninitialized unless zero). */
sgl_vec sgl_vec_alloc(const sgl_type *et, int64_t len, bool zero, int line, int col);
/* Copies n elements from src to dst: bytes, or shared vectors. */
void sgl_copy_elems_into(const sgl_type *et, void *dst, const void *src, int64_t n);

#endif /* SGL_VBUF_H */
