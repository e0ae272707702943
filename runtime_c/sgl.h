/*
 * sgl.h: the C runtime of sglc, the compiler for SGL (the Scatter-Gather
 * Language).  Generated programs include this header and link with the
 * runtime's .c files.  C11.
 *
 * The runtime has two halves:
 *   - values (sgl_value.c, sgl_print.c, sgl_misc.c): typed vectors with
 *     value semantics, the builtins, printing, SplitMix64, arguments, files;
 *   - the machine tree (sgl_tree.c, sgl_output.c, sgl_local.c, sgl_mpi.c,
 *     sgl_start.c; their internal header is sgl_internal.h): nodes, frames,
 *     supersteps, ordered output and errors, the transports that run them
 *     (sequential, OpenMP threads, MPI processes), and sgl_run.
 *
 * Build switches: SGL_USE_MPI (MPI process levels), SGL_USE_OMP (OpenMP
 * thread levels).  Without either, every level is simulated depth-first on
 * one thread (the `seq` target).
 *
 * Conventions:
 *   - Functions that can fail take the SGL source position (line, col) of
 *     the operation and stop the program through sgl_fail() (brief §9).
 *   - A sgl_vec is owned by exactly one variable or temporary.  Functions
 *     taking `const sgl_vec *` borrow; functions returning sgl_vec return
 *     a fresh vector that the caller owns.
 */
#ifndef SGL_H
#define SGL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Constants shared with the compiler                                   */
/* sglc reads these #defines from this file (sglc/rtconst.py): each is  */
/* a plain decimal number, and this is their only source.               */

/* The most operations one superstep site may have (sglc splits longer
 * runs of fused statements into several sites). */
#define SGL_MAX_OPS 64

/* The bytes of a slot (sgl_slot), where a superstep holds its inputs and
 * outputs: a larger value (a struct) gets a block of its own
 * (sgl_slot_place). */
#define SGL_VALUE_MAX 512

/* Serialized sizes in bytes (sgl_ser, what a superstep sends): an int or
 * a float, a bool, and the length that precedes a vector's elements. */
#define SGL_SER_INT_SIZE 8
#define SGL_SER_FLOAT_SIZE 8
#define SGL_SER_BOOL_SIZE 1
#define SGL_SER_LEN_SIZE 8

/* ------------------------------------------------------------------ */
/* Scalars and types                                                    */

typedef int64_t sgl_int;
typedef double sgl_float;
typedef bool sgl_bool;

typedef enum { SGL_T_INT, SGL_T_FLOAT, SGL_T_BOOL, SGL_T_VEC, SGL_T_STR, SGL_T_BYTE, SGL_T_STRUCT } sgl_kind;

struct sgl_type;

/* A field of a struct type: its SGL name, its byte offset, its type. */
typedef struct sgl_field {
    const char *name;
    size_t offset;
    const struct sgl_type *type;
} sgl_field;

/* A run-time type descriptor.  For SGL_T_VEC, `elem` is the element type
 * (the other members are zero).  For SGL_T_STRUCT (a C struct generated
 * per SGL struct): `name`, `size` (sizeof the C struct), `managed` (some
 * field owns heap memory: copying copies the fields, freeing frees them;
 * otherwise the value is plain bytes) and the `nfields` fields in
 * declaration order. */
/* A string (SGL_T_STR, the one descriptor sgl_t_str) is a sgl_vec of
 * bytes: its `elem` is sgl_t_byte (SGL_T_BYTE, one unsigned byte, never
 * the type of an SGL value of its own), so that copy, free, slice,
 * serialization and reference counting are the vector code's; printing,
 * comparison and concatenation are the string's own (sgl_string.c).
 * Strings are immutable: a string is never written in place except by
 * sgl_str_append, which copies a shared one first.  A string literal is
 * a view of static storage: {data, len, NULL} (no buffer, nothing to
 * free; a copy is the same view). */
typedef struct sgl_type {
    sgl_kind kind;
    const struct sgl_type *elem;
    const char *name;
    size_t size;
    bool managed;
    int nfields;
    const sgl_field *fields;
    /* sort (a struct of int, float and bool fields only): sorts n values
     * at data in place, stably, by the generated comparison of the fields
     * in declaration order; NULL for other types */
    void (*sort)(void *data, int64_t n);
} sgl_type;

/* The order of one field in a struct's sort (brief §8): -1, 0 or 1.
 * Floats as `<` orders them, -0.0 equal to 0.0, NaNs equal and last. */
static inline int sgl_cmp_int(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}
static inline int sgl_cmp_float(double a, double b)
{
    if (a != a) return b != b ? 0 : 1;
    if (b != b) return -1;
    return (a > b) - (a < b);
}
static inline int sgl_cmp_bool(bool a, bool b)
{
    return (int)a - (int)b;
}

/* Does a value of type t own heap memory (a vector, a managed struct)?
 * Values that do not are copied as bytes. */
static inline bool sgl_managed(const struct sgl_type *t)
{
    return t->kind == SGL_T_VEC || t->kind == SGL_T_STR || (t->kind == SGL_T_STRUCT && t->managed);
}

extern const sgl_type sgl_t_int;
extern const sgl_type sgl_t_float;
extern const sgl_type sgl_t_bool;
extern const sgl_type sgl_t_str;
extern const sgl_type sgl_t_byte;

/* Values of type t own memory (a vector or a string: a sgl_vec). */
static inline bool sgl_type_owns(const sgl_type *t)
{
    return sgl_managed(t);
}

/* A vector is a view of `len` elements at `data` inside a reference-counted
 * buffer (`buf`); the buffer owns its elements.  Copying a vector shares
 * the buffer (value semantics by copy-on-write): a vector is written in
 * place only while its buffer has one reference, else it is copied first
 * (sgl_vec_make_unique, called by sgl_at_mut).  Elements take 8 bytes for
 * int and float, 1 for bool, sizeof(sgl_vec) for vectors.  The zero value
 * {NULL, 0, NULL} is the empty vector.
 *
 * Disjoint views: a buffer whose only owner is split (sgl_split_take,
 * sgl_split_by_take) gives each block a *range handle* of its own, a
 * header with `parent` set that owns no elements and holds one reference
 * to the parent buffer.  The handles of one parent cover disjoint ranges,
 * so a block whose handle has one reference is the only view of its
 * elements and is written in place, while the other blocks are written in
 * theirs (by other threads too).  Handles always point at the buffer that
 * owns the elements (a block of a block gets a handle of that buffer);
 * the parent is freed with its last handle.  sgl_concat_take joins
 * adjacent unshared handles again without a copy. */
typedef struct sgl_vbuf {
    _Atomic int64_t refs;
    int64_t used; /* elements constructed, from the start of the buffer */
    int64_t cap;  /* elements allocated */
    int64_t mapped; /* bytes of a buffer mapped with mmap (0: malloc'd; < 0: a small
                       block of sgl_blocks.c's cache) */
    struct sgl_vbuf *parent; /* a range handle: the buffer it is a range of
                                (used = cap = 0); NULL for a buffer */
} sgl_vbuf;

typedef struct sgl_vec {
    void *data;
    int64_t len;
    sgl_vbuf *buf;
} sgl_vec;

/* Storage for one value of any type (at most SGL_VALUE_MAX bytes). */
typedef union sgl_slot {
    sgl_vec v;
    long double align_;
    char bytes[SGL_VALUE_MAX];
} sgl_slot;

/* Size in bytes of one value of type t. */
static inline size_t sgl_sizeof(const sgl_type *t)
{
    switch (t->kind) {
    case SGL_T_INT: return sizeof(sgl_int);
    case SGL_T_FLOAT: return sizeof(sgl_float);
    case SGL_T_BOOL: return sizeof(sgl_bool);
    case SGL_T_VEC: return sizeof(sgl_vec);
    case SGL_T_STRUCT: return t->size;
    case SGL_T_STR: return sizeof(sgl_vec);
    case SGL_T_BYTE: return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Errors (implemented in sgl_output.c)                                 */

/* Stop the program with "FILE:line:col: runtime error: MSG (node PATH)".
 * Never returns. */
_Noreturn void sgl_fail(int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Allocation that never returns NULL: out of memory is a run-time error
 * reported at (line, col); line 0 means "no source position". */
void *sgl_alloc(size_t size, int line, int col);
void *sgl_realloc(void *p, size_t size, int line, int col);

/* Where to keep `size` bytes of a value for a while (a superstep's input
 * or output, an element being pushed): the slot when they fit, else a
 * block of their own (a struct of more than SGL_VALUE_MAX bytes), which
 * sgl_slot_release frees once the value has been taken (it leaves the
 * value's own vectors alone). */
static inline void *sgl_slot_place(size_t size, sgl_slot *slot, int line, int col)
{
    return size <= sizeof *slot ? (void *)slot : sgl_alloc(size, line, col);
}
static inline void sgl_slot_release(sgl_slot *slot, void *place)
{
    if (place != (void *)slot) free(place);
}

/* ------------------------------------------------------------------ */
/* Generic values (deep operations; t is the value's type)              */

void sgl_value_copy(const sgl_type *t, void *dst, const void *src);
void sgl_value_free(const sgl_type *t, void *v);
bool sgl_value_eq(const sgl_type *t, const void *a, const void *b);

/* Vectors: vt is the VECTOR type (kind SGL_T_VEC). */
sgl_vec sgl_vec_new(const sgl_type *vt, int64_t len, int line, int col); /* zeroed elements */
/* Elements left uninitialized: only for int, float and bool elements. */
sgl_vec sgl_vec_new_uninit(const sgl_type *vt, int64_t len, int line, int col);
sgl_vec sgl_vec_copy(const sgl_type *vt, const sgl_vec *v);
void sgl_vec_free(const sgl_type *vt, sgl_vec *v);               /* drops a reference; leaves {0} */
void sgl_vec_reserve(const sgl_type *vt, sgl_vec *v, int64_t cap, int line, int col);
/* push: appends *x, taking ownership of it (shallow move). */
void sgl_vec_push_move(const sgl_type *vt, sgl_vec *v, const void *x, int line, int col);
/* Checked element address: fails with "index I out of range for vector
 * of length N" unless 0 <= i < len. */
void *sgl_vec_at(const sgl_type *vt, const sgl_vec *v, sgl_int i, int line, int col);
/* Before writing into v: give v a buffer of its own (copying if shared). */
void sgl_vec_make_unique(const sgl_type *vt, sgl_vec *v, int line, int col);
/* True when v holds the only reference to its buffer (or is empty). */
static inline bool sgl_vec_unique(const sgl_vec *v)
{
    return !v->buf || atomic_load_explicit(&v->buf->refs, memory_order_acquire) == 1;
}
_Noreturn void sgl_index_fail(sgl_int i, int64_t len, int line, int col);

/* The element accessors used by generated code (esz: the element size). */
static inline void *sgl_at(const sgl_vec *v, sgl_int i, size_t esz, int line, int col)
{
    if (__builtin_expect((uint64_t)i >= (uint64_t)v->len, 0)) sgl_index_fail(i, v->len, line, col);
    return (char *)v->data + (size_t)i * esz;
}
/* i itself, after the same check (an element of a loop's hoisted row,
 * whose data pointer and length are locals of the generated code). */
static inline sgl_int sgl_index(sgl_int i, int64_t len, int line, int col)
{
    if (__builtin_expect((uint64_t)i >= (uint64_t)len, 0)) sgl_index_fail(i, len, line, col);
    return i;
}
static inline void *sgl_at_mut(const sgl_type *vt, sgl_vec *v, sgl_int i, size_t esz, int line,
                               int col)
{
    if (__builtin_expect((uint64_t)i >= (uint64_t)v->len, 0)) sgl_index_fail(i, v->len, line, col);
    if (!sgl_vec_unique(v)) sgl_vec_make_unique(vt, v, line, col);
    return (char *)v->data + (size_t)i * esz;
}
/* The guards of the loops whose checks sglc hoisted (the pass `bounds`,
 * docs/execution.md): they never fail, they only tell which version of the
 * loop runs.  sgl_in_range: 0 <= i < len.  sgl_span_in_range: 0 <= i + c <
 * len for every i of a .. b-1 (a < b); sgl_span_in_range_sub: the same for
 * i - c.  Computed without overflow (an overflowing i + c is "not in
 * range": the checked loop then runs). */
static inline bool sgl_in_range(sgl_int i, int64_t len)
{
    return (uint64_t)i < (uint64_t)len;
}
static inline bool sgl_span_in_range(sgl_int a, sgl_int b, sgl_int c, int64_t len)
{
    sgl_int lo, hi;
    if (__builtin_add_overflow(a, c, &lo) || __builtin_add_overflow(b - 1, c, &hi)) return false;
    return lo >= 0 && hi < len;
}
static inline bool sgl_span_in_range_sub(sgl_int a, sgl_int b, sgl_int c, int64_t len)
{
    sgl_int lo, hi;
    if (__builtin_sub_overflow(a, c, &lo) || __builtin_sub_overflow(b - 1, c, &hi)) return false;
    return lo >= 0 && hi < len;
}
/* Unchecked variant of sgl_at_mut (no bounds check). */
static inline void *sgl_data_mut(const sgl_type *vt, sgl_vec *v)
{
    if (!sgl_vec_unique(v)) sgl_vec_make_unique(vt, v, 0, 0);
    return v->data;
}

/* Replace *dst with *src (deep copy of src, then free the old *dst; safe
 * when src lies inside dst). */
void sgl_value_assign(const sgl_type *t, void *dst, const void *src);
/* Replace *dst with *src taking ownership of src (no copy). */
void sgl_value_assign_move(const sgl_type *t, void *dst, void *src);
/* The same for vectors, src a vector of its own (a gather's result). */
static inline void sgl_vec_move_into(const sgl_type *vt, sgl_vec *dst, sgl_vec *src)
{
    sgl_vec tmp = *src;
    *src = (sgl_vec){NULL, 0, NULL};
    if (dst->buf) sgl_vec_free(vt, dst);
    *dst = tmp;
}

/* ------------------------------------------------------------------ */
/* Builtins on vectors (brief §8).  `vt` is the type of the vector       */
/* argument or result as named.                                         */

sgl_vec sgl_fill(const sgl_type *vt, sgl_int n, const void *x, int line, int col);
sgl_vec sgl_range(sgl_int a, sgl_int b, int line, int col);
sgl_vec sgl_slice(const sgl_type *vt, const sgl_vec *v, sgl_int a, sgl_int b, int line, int col);
/* slice taking *v (owned; left empty): the view is then v's buffer's only
 * owner when v was. */
sgl_vec sgl_slice_take(const sgl_type *vt, sgl_vec *v, sgl_int a, sgl_int b, int line, int col);
/* vvt: type of vv ([[T]]); result is [T].  Parts that are adjacent views
 * of one buffer, in order, give a view of it (no copy); else a copy. */
sgl_vec sgl_concat(const sgl_type *vvt, const sgl_vec *vv, int line, int col);
/* concat taking *vv (owned; left empty): parts that are unshared adjacent
 * range handles of one buffer, in order, are joined into one view of it,
 * which its new owner may write in place. */
sgl_vec sgl_concat_take(const sgl_type *vvt, sgl_vec *vv, int line, int col);
/* vt: type of v ([T]); result is [[T]] of views of v's buffer. */
sgl_vec sgl_split(const sgl_type *vt, const sgl_vec *v, sgl_int k, int line, int col);
/* split taking *v (owned; left empty): when v was the only owner of its
 * elements, each block gets a range handle of its own (disjoint views,
 * each written in place); else as sgl_split. */
sgl_vec sgl_split_take(const sgl_type *vt, sgl_vec *v, sgl_int k, int line, int col);
/* split_bounds(n, k), split_by_bounds(n, w): the k+1 (len(w)+1) boundaries
 * of split's (split_by's) blocks of a vector of length n, by the same
 * arithmetic and with the same run-time errors (brief §8). */
sgl_vec sgl_split_bounds(sgl_int n, sgl_int k, int line, int col);
sgl_vec sgl_split_by_bounds(sgl_int n, const sgl_type *wt, const sgl_vec *w, int line, int col);
/* vt: type of v ([T]), wt: type of w ([int] or [float]); result is [[T]]:
 * len(w) blocks of v (views, as split's), block i ending at
 * floor(len(v) * (w[0] + ... + w[i]) / sum(w)), the last at len(v). */
sgl_vec sgl_split_by(const sgl_type *vt, const sgl_vec *v, const sgl_type *wt, const sgl_vec *w, int line,
                     int col);
/* split_by taking *v, as sgl_split_take. */
sgl_vec sgl_split_by_take(const sgl_type *vt, sgl_vec *v, const sgl_type *wt, const sgl_vec *w,
                          int line, int col);
/* sort: [int], [float] or [S] ascending, stably (floats: -0.0 and 0.0
 * equal, NaNs last; equal elements in their input order).  An input
 * already in order is shared, not copied; any other is sorted into a new
 * vector (an input in reverse order reversed into it: sgl_sort.h,
 * sgl_sort_descending). */
sgl_vec sgl_sort(const sgl_type *vt, const sgl_vec *v, int line, int col);
/* sort taking *v (owned; left empty): a vector that is the only view of its
 * elements (sgl_vec_unique) and in reverse order is reversed in place
 * where it is most of its buffer; else it is sorted in place and returned
 * below 65,536 elements, from there into a new vector (the sort needs one
 * that long; two runs of ints are merged in place where there is not the
 * memory for it) and *v freed, but ints that are most of their buffer and
 * that the packed sort sorts with a mapped buffer aside of half their
 * bytes, or that differ only in the top digit's bits, or skewed or wide
 * ones on AVX-512 (sgl_sort.c, int_special), and floats that are most of
 * their buffer with no NaN and zeros of one sign, on AVX-512, are sorted
 * in place (sgl_sort_builtin.c); a shared one is sorted as by sgl_sort,
 * and *v's reference dropped. */
sgl_vec sgl_sort_take(const sgl_type *vt, sgl_vec *v, int line, int col);
/* sort(concat(vv)), which sglc writes as one call (the pass `compose`):
 * vvt is vv's type ([[T]]).  Two sorted runs of ints or of floats, 65,536
 * elements and more in all, are merged straight from vv's two non-empty parts into the
 * result (no concatenated copy, no count of its runs); anything else is
 * concatenated, then sorted as sgl_sort_take sorts. */
sgl_vec sgl_sort_concat(const sgl_type *vvt, const sgl_vec *vv, int line, int col);
/* The same, taking *vv (owned; left empty). */
sgl_vec sgl_sort_concat_take(const sgl_type *vvt, sgl_vec *vv, int line, int col);
sgl_int sgl_sum_int(const sgl_vec *v);
sgl_float sgl_sum_float(const sgl_vec *v);
sgl_int sgl_min_int(const sgl_vec *v, int line, int col);
sgl_int sgl_max_int(const sgl_vec *v, int line, int col);
sgl_float sgl_min_float(const sgl_vec *v, int line, int col);
sgl_float sgl_max_float(const sgl_vec *v, int line, int col);

/* ------------------------------------------------------------------ */
/* Strings (brief §3; sgl_string.c).  A string is a sgl_vec of bytes     */
/* (sgl_t_str); these take and return strings with the ownership rules  */
/* of vectors.                                                          */

struct sgl_buf;

/* A fresh string holding the n bytes at p. */
sgl_vec sgl_str_from(const char *p, size_t n, int line, int col);
/* a + b */
sgl_vec sgl_str_concat(const sgl_vec *a, const sgl_vec *b, int line, int col);
/* s += t (t may be s itself): in place when s's buffer is its own. */
void sgl_str_append(sgl_vec *s, const sgl_vec *t, int line, int col);
/* <0, 0, >0 as a is before, equal to, after b: unsigned bytes (memcmp
 * order), a proper prefix before the longer string. */
int sgl_str_cmp(const sgl_vec *a, const sgl_vec *b);
/* str(x): the text print writes for the value *v of type t. */
sgl_vec sgl_str(const sgl_type *t, const void *v, int line, int col);
/* A copy of s followed by a NUL byte (data is then a C string), for a
 * file name; a NUL byte inside s is a run-time error. */
sgl_vec sgl_str_cstr(const sgl_vec *s, int line, int col);
/* A string's bytes as print writes them: as they are (sgl_fmt_text), or
 * in double quotes with \" \\ \n \t escaped (sgl_fmt_quoted: a string
 * inside a vector or a struct). */
void sgl_fmt_text(struct sgl_buf *b, const sgl_vec *s);
void sgl_fmt_quoted(struct sgl_buf *b, const sgl_vec *s);
/* sort of a [string]: byte order, stable (sgl_sort dispatches here). */
sgl_vec sgl_sort_str(const sgl_type *vt, const sgl_vec *v, int line, int col);
sgl_vec sgl_sort_str_take(const sgl_type *vt, sgl_vec *v, int line, int col);

/* ------------------------------------------------------------------ */
/* Numbers                                                              */

/* int arithmetic wraps around (two's complement); / and % follow C99 and
 * fail on a zero divisor. */
static inline sgl_int sgl_add(sgl_int a, sgl_int b) { return (sgl_int)((uint64_t)a + (uint64_t)b); }
static inline sgl_int sgl_sub(sgl_int a, sgl_int b) { return (sgl_int)((uint64_t)a - (uint64_t)b); }
static inline sgl_int sgl_mul(sgl_int a, sgl_int b) { return (sgl_int)((uint64_t)a * (uint64_t)b); }
static inline sgl_int sgl_neg(sgl_int a) { return (sgl_int)(0u - (uint64_t)a); }
sgl_int sgl_div(sgl_int a, sgl_int b, int line, int col);
sgl_int sgl_mod(sgl_int a, sgl_int b, int line, int col);
static inline sgl_int sgl_div_unchecked(sgl_int a, sgl_int b) { return (b == -1) ? sgl_neg(a) : a / b; }
static inline sgl_int sgl_mod_unchecked(sgl_int a, sgl_int b) { return (b == -1) ? 0 : a % b; }
static inline sgl_int sgl_abs_int(sgl_int a) { return a < 0 ? sgl_neg(a) : a; }
/* Shifts (brief §3) on the 64-bit two's-complement bits, in defined C:
 * `<<` loses the bits shifted out (wrap-around multiplication by 2^k), `>>`
 * copies the sign bit in (-8 >> 1 == -4).  A count outside 0 .. 63 fails
 * (sgl_shift_fail).  The _unchecked forms take the count modulo 64; the
 * emitter uses them for a literal count in range and under --unchecked. */
_Noreturn void sgl_shift_fail(sgl_int k, int line, int col);
static inline sgl_int sgl_shl_unchecked(sgl_int a, sgl_int k)
{
    return (sgl_int)((uint64_t)a << (k & 63));
}
static inline sgl_int sgl_shr_unchecked(sgl_int a, sgl_int k)
{
    /* ~(~a >> k) for a < 0, without a branch: s is all ones then, else 0
     * (a branch on the sign mispredicted on every other element of a vector
     * of mixed signs: 3.6 ns an element against 0.3) */
    uint64_t s = 0u - ((uint64_t)a >> 63);
    return (sgl_int)((((uint64_t)a ^ s) >> (k & 63)) ^ s);
}
static inline sgl_int sgl_shl(sgl_int a, sgl_int k, int line, int col)
{
    if ((uint64_t)k > 63)
        sgl_shift_fail(k, line, col);
    return sgl_shl_unchecked(a, k);
}
static inline sgl_int sgl_shr(sgl_int a, sgl_int k, int line, int col)
{
    if ((uint64_t)k > 63)
        sgl_shift_fail(k, line, col);
    return sgl_shr_unchecked(a, k);
}
/* min(a, b) is a unless b < a, max(a, b) is a unless b > a: on a tie or a
 * NaN the first argument (brief §8; min(0.0, -0.0) is 0.0, min(nan, 1.0)
 * is nan), the rule of min(v)/max(v) applied to two elements. */
static inline sgl_int sgl_min2_int(sgl_int a, sgl_int b) { return b < a ? b : a; }
static inline sgl_int sgl_max2_int(sgl_int a, sgl_int b) { return b > a ? b : a; }
static inline sgl_float sgl_min2_float(sgl_float a, sgl_float b) { return b < a ? b : a; }
static inline sgl_float sgl_max2_float(sgl_float a, sgl_float b) { return b > a ? b : a; }
/* int(x): truncates toward zero; NaN, infinities and values outside the
 * int range fail. */
sgl_int sgl_float_to_int(sgl_float x, int line, int col);

/* ------------------------------------------------------------------ */
/* Random data (SplitMix64, brief §8)                                    */

uint64_t sgl_splitmix64_next(uint64_t *state);
sgl_vec sgl_rand_ints(sgl_int n, sgl_int lo, sgl_int hi, sgl_int seed, int line, int col);
sgl_vec sgl_rand_floats(sgl_int n, sgl_int seed, int line, int col);

/* ------------------------------------------------------------------ */
/* Arguments, time, files                                               */

/* The program's own arguments (the runtime's --sgl-* ones removed). */
void sgl_set_args(int argc, char **argv);
sgl_int sgl_arg_int(sgl_int i, sgl_int dflt, int line, int col);
sgl_float sgl_arg_float(sgl_int i, sgl_float dflt, int line, int col);
/* arg_str(i, default): the argument as it is, or a copy of the default. */
sgl_vec sgl_arg_str(sgl_int i, const sgl_vec *dflt, int line, int col);
sgl_float sgl_wtime(void);
/* The whole of the C string s as an int / a float (false when it is not
 * one; no white space around it): arguments and the words of text files. */
bool sgl_parse_int(const char *s, sgl_int *out);
bool sgl_parse_float(const char *s, sgl_float *out);

/* Files (brief §8, sgl_files.c): text, or NumPy's .npy format when the path
 * ends in ".npy".  read_*_slice read only the numbers a .. b-1 of the file
 * (0 <= a <= b <= file_len(path), else a run-time error). */
sgl_vec sgl_read_ints(const char *path, int line, int col);
sgl_vec sgl_read_floats(const char *path, int line, int col);
sgl_vec sgl_read_ints_slice(const char *path, sgl_int a, sgl_int b, int line, int col);
sgl_vec sgl_read_floats_slice(const char *path, sgl_int a, sgl_int b, int line, int col);
sgl_int sgl_file_len(const char *path, int line, int col);
void sgl_write_ints(const char *path, const sgl_vec *v, int line, int col);
void sgl_write_floats(const char *path, const sgl_vec *v, int line, int col);
/* The n bytes at s quoted for a message: in single quotes, with every byte
 * outside printable ASCII, the quote and the backslash escaped (\xHH, \',
 * \\), so that a file's bytes or a path cannot send the terminal control
 * sequences; cut with "..." past about cap/4 source bytes.  Returns out. */
char *sgl_quote(char *out, size_t cap, const char *s, size_t n);
/* The path as the file-sharing check compares it (brief §8): realpath of
 * the file when it exists, else realpath of its directory + its name, else
 * the path as written.  Owned by the caller (free). */
char *sgl_file_identity(const char *path);

/* ------------------------------------------------------------------ */
/* Byte buffers, printing, serialization                                */

typedef struct sgl_buf {
    char *data;
    size_t len;
    size_t cap;
    int line, col; /* the statement that grows it, for an out-of-memory error (0: none) */
} sgl_buf;

void sgl_buf_put(sgl_buf *b, const void *p, size_t n);
void sgl_buf_puts(sgl_buf *b, const char *s);
void sgl_buf_free(sgl_buf *b);

/* Formatting (brief §8): ints in decimal, floats as Python's repr(),
 * bools as true/false, vectors as [a, b, c]. */
void sgl_fmt_int(sgl_buf *b, sgl_int x);
void sgl_fmt_float(sgl_buf *b, sgl_float x);
void sgl_fmt_bool(sgl_buf *b, sgl_bool x);
void sgl_fmt_value(sgl_buf *b, const sgl_type *t, const void *v);
/* Writes the shortest repr of x into out (at least 32 bytes); returns length. */
int sgl_float_repr(char *out, sgl_float x);

/* Serialization of a value into a flat byte string (nested vectors are
 * flattened: length, then elements).  sgl_deser reads one value from p
 * into *out (allocating), and returns the position after it. */
void sgl_ser(sgl_buf *b, const sgl_type *t, const void *v);
const char *sgl_deser(const char *p, const sgl_type *t, void *out);
/* The number of bytes sgl_ser would write for *v. */
size_t sgl_ser_size(const sgl_type *t, const void *v);

/* ------------------------------------------------------------------ */
/* The machine tree (sgl_tree.c; sgl_run in sgl_start.c)              */

typedef struct sgl_node sgl_node;

/* Cancellation and the stack check, read by generated code.
 *
 * The head of every node (the first member of struct sgl_node): its
 * `cancelled` flag is non-zero when the node's runtime wants attention.
 * SGL_CANCEL_STOP is set when a node before it in depth-first order has
 * failed, so that this node and its subtree stop (brief §9);
 * SGL_CANCEL_POLL is set every few milliseconds while the node runs in
 * an MPI master's process as (part of) its child 0, so that the process's
 * main thread looks at the reports of the master's remote children
 * meanwhile (sgl_mpi.c).  Generated code reads the flag at every loop
 * iteration and every call (sgl_loop_check, sgl_call_check: one relaxed
 * load and a never-taken branch) and then calls sgl_check_slow, which
 * polls, and leaves through sgl_unwind (a longjmp to the boundary of the
 * node's current action; the runtime turns that into a cancelled child
 * result) if the node must stop.  A call also compares the stack pointer
 * with this thread's limit (sgl_stack_limit, the lowest usable address
 * plus a safety margin; NULL: no check) and fails with `recursion too
 * deep` at the call's position.  So that this limit is reached by every
 * unbounded recursion, whatever the C compiler does with tail calls
 * (brief §9: gcc -O2 turns `return f(n + 1) + 1` into a loop, which would
 * run for ever), every call is followed by sgl_call_done, an empty
 * volatile asm: the call is then never in tail position, each level keeps
 * its frame, and the stack check fires at every -O level (it costs no
 * instruction; it only forbids tail-call elimination of SGL calls).
 * Compiling with -DSGL_NO_CANCEL_CHECKS removes all three (to measure
 * their cost; such a program cannot be cancelled and dies by a signal on a
 * stack overflow, or loops for ever on a tail recursion). */
typedef struct sgl_node_head {
    _Atomic int cancelled;
    /* the node's own node variables (brief §4): a struct sgl_nodevars of
     * the generated program (sgl_program.nodevars_size), made when the node
     * is set up and kept for the whole run; NULL without node variables */
    void *nodevars;
} sgl_node_head;

/* The node variables of node n (generated code casts them to its struct
 * sgl_nodevars). */
static inline void *sgl_nodevars_of(const sgl_node *n)
{
    return ((const sgl_node_head *)(const void *)(uintptr_t)n)->nodevars;
}

#define SGL_CANCEL_STOP 1
#define SGL_CANCEL_POLL 2

#define SGL_UNLIKELY(x) __builtin_expect(!!(x), 0)

extern _Thread_local const char *sgl_stack_limit;
_Noreturn void sgl_unwind(sgl_node *n);
_Noreturn void sgl_stack_fail(int line, int col);
/* The flag of n is non-zero: poll (the main thread of an MPI process),
 * clear SGL_CANCEL_POLL, and unwind if n must stop; else return. */
void sgl_check_slow(sgl_node *n);

static inline int sgl_cancel_flag(const sgl_node *n)
{
    return atomic_load_explicit(&((sgl_node_head *)(void *)(uintptr_t)n)->cancelled,
                                memory_order_relaxed);
}
/* Whether n must stop. */
static inline bool sgl_cancelled(const sgl_node *n)
{
    return (sgl_cancel_flag(n) & SGL_CANCEL_STOP) != 0;
}
#ifdef SGL_NO_CANCEL_CHECKS
#define sgl_loop_check(n) ((void)(n))
#define sgl_call_check(n, line, col) ((void)(n), (void)(line), (void)(col))
#define sgl_call_done() ((void)0)
#else
/* At the top of every iteration of a while or for loop. */
static inline void sgl_loop_check(sgl_node *n)
{
    if (SGL_UNLIKELY(sgl_cancel_flag(n))) sgl_check_slow(n);
}
/* Before every call of an SGL function, at the call's position. */
static inline __attribute__((always_inline)) void sgl_call_check(sgl_node *n, int line, int col)
{
    if (SGL_UNLIKELY((const char *)__builtin_frame_address(0) < sgl_stack_limit))
        sgl_stack_fail(line, col);
    if (SGL_UNLIKELY(sgl_cancel_flag(n))) sgl_check_slow(n);
}
/* Right after every call of an SGL function: keeps the call out of tail
 * position (see above). */
#define sgl_call_done() __asm__ volatile("")
#endif

/* Node queries (brief §7). */
sgl_bool sgl_q_master(const sgl_node *n);
sgl_int sgl_q_nchildren(const sgl_node *n);
sgl_int sgl_q_child_index(const sgl_node *n);
sgl_int sgl_q_depth(const sgl_node *n);
sgl_int sgl_q_nworkers(const sgl_node *n);
/* child_speeds(): one relative speed per child, the number of workers in
 * its subtree; [] on a worker. */
sgl_vec sgl_child_speeds(sgl_node *n);

/* The output buffer of node n: print appends here.  sgl_print_end ends a
 * line (and lets the root flush to stdout; a failed write is a run-time
 * error at line:col, the print's position). */
sgl_buf *sgl_out(sgl_node *n, int line, int col);
void sgl_print_end(sgl_node *n, int line, int col);

/* An activation of a function that runs supersteps.  Children find the
 * copies of this activation's variables by its key. */
typedef struct sgl_key {
    int64_t depth;
    int64_t uid;
} sgl_key;

sgl_key sgl_enter(sgl_node *n);
void sgl_leave(sgl_node *n, sgl_key k);

/* One superstep: a sequence of operations between a master and all of
 * its children, sent as one command.  The child-side code of each
 * operation is a generated function running on one child with that
 * child's frame (its copies of the function's variables). */
typedef enum { SGL_OP_SCATTER, SGL_OP_BCAST, SGL_OP_PARDO, SGL_OP_GATHER } sgl_op_kind;

/* SCATTER/BCAST: store *value (owned, moved in) into the target.         */
typedef void (*sgl_recv_fn)(sgl_node *n, sgl_key k, void *frame, void *value);
/* PARDO: run the block.                                                  */
typedef void (*sgl_body_fn)(sgl_node *n, sgl_key k, void *frame);
/* GATHER: evaluate the source into *out (an owned value).                */
typedef void (*sgl_eval_fn)(sgl_node *n, sgl_key k, void *frame, void *out);

typedef struct sgl_op {
    sgl_op_kind kind;
    const sgl_type *type; /* value type: element type for SCATTER and GATHER */
    sgl_recv_fn recv;
    sgl_body_fn body;
    sgl_eval_fn eval;
    int line, col;
} sgl_op;

typedef struct sgl_site {
    const char *func; /* SGL function the superstep is in */
    int line, col;    /* first primitive */
    int nops;
    const sgl_op *ops;
    size_t frame_size;
    void (*frame_free)(void *frame);
    int id; /* index in the program's site table */
    /* The ops by kind, as bit masks (op j: bit j; at most SGL_MAX_OPS),
     * those whose value is a vector, and those whose value does not fit
     * in a slot (`big`: a struct of more than SGL_VALUE_MAX bytes, held in
     * a block of its own, sgl_slot_place): what the loops of a superstep
     * visit instead of every op; and the scatters and bcasts whose store
     * on a child may fail (`fails`: a target with an index, `-> a[c]`),
     * which a pardo or a gather after them cannot overtake in the
     * sequential order (sgl_mpi.c, surely_first).  sglc computes them. */
    struct sgl_site_masks {
        uint64_t scatter, bcast, gather, vec, big, fails;
    } masks;
} sgl_site;

/* Master-side arguments, one per op:
 *   SCATTER: src = (sgl_vec *) the vector to scatter; `owned` says the
 *            runtime may move its elements out (it then leaves it empty).
 *   BCAST:   src = pointer to the value.
 *   PARDO:   unused.
 *   GATHER:  dst = (sgl_vec *) receives a fresh vector, one element per
 *            child in child order (the caller owns it).  `contiguous`
 *            (a hint: sglc sets it when the target is joined by concat)
 *            asks for the elements, if they are vectors of numbers, as
 *            adjacent views of one buffer in child order, so that concat
 *            is a view of the whole (the MPI transport receives them in
 *            place; docs/execution.md). */
typedef struct sgl_arg {
    void *src;
    bool owned;
    void *dst;
    bool contiguous;
} sgl_arg;

void sgl_superstep(sgl_node *n, sgl_key k, const sgl_site *s, sgl_arg *args);

typedef struct sgl_program {
    const char *file; /* the .sgl path, for messages */
    int nsites;
    const sgl_site *const *sites;
    void (*main)(sgl_node *root);
    /* node variables: the size of the generated struct sgl_nodevars (0:
     * none), the function giving a zeroed one its initial values, and the
     * one freeing what it holds (not the struct) */
    size_t nodevars_size;
    void (*nodevars_init)(void *nv);
    void (*nodevars_free)(void *nv);
    /* fn on every node variable of nv that owns memory (library mode:
     * sgl_library.c): a vector or a string, or a struct with such fields
     * (then v points to the struct, and t is its type) */
    void (*nodevars_each)(void *nv, void (*fn)(const sgl_type *vt, sgl_vec *v));
} sgl_program;

/* Entry point of a generated program: starts MPI if built with it,
 * discovers the tree, runs main on the root and returns the exit status. */
int sgl_run(int argc, char **argv, const sgl_program *prog);

#ifdef __cplusplus
}
#endif

#endif /* SGL_H */
