/*
 * sgl_prefetch.h (internal): the address a streaming loop prefetches, some
 * bytes ahead of where it reads.
 */
#ifndef SGL_PREFETCH_H
#define SGL_PREFETCH_H

#include <stdint.h>

/* The address `bytes` from p (a negative count: before it), for
 * __builtin_prefetch.  It may lie outside p's array, which a prefetch
 * allows (it never faults) and pointer arithmetic does not (undefined past
 * one element beyond the end), so it is computed on the integer. */
static inline const void *sgl_ahead(const void *p, int64_t bytes)
{
    return (const void *)((uintptr_t)p + (uintptr_t)bytes);
}

#endif
