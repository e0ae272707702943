/*
 * test_values.c: unit tests of the value half of the SGL C runtime
 * (sgl_value.c, sgl_print.c, sgl_misc.c), linked with stub_tree.c.
 *
 * Plain C11, no framework.  Prints each failure, then a final line
 * "N passed, M failed"; the exit status is nonzero when M > 0.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sgl.h"
#include "check.h"
#include "stub_tree.h"


/* Compares two strings, showing both on failure. */
static void check_str(const char *got, const char *want, int line)
{
    bool ok = strcmp(got, want) == 0;
    if (!ok)
        printf("FAIL line %d: got \"%s\", want \"%s\"\n", line, got, want);
    ok ? n_passed++ : n_failed++;
}

#define CHECK_STR(got, want) check_str((got), (want), __LINE__)

/* Runs stmt, which must call sgl_fail with exactly the message msg. */
#define CHECK_FAILS(stmt, msg)                                                          \
    do {                                                                                \
        jmp_buf jb_;                                                                    \
        sgl_test_jmp = &jb_;                                                            \
        sgl_test_msg[0] = '\0';                                                         \
        if (setjmp(jb_) == 0) {                                                         \
            stmt;                                                                       \
            sgl_test_jmp = NULL;                                                        \
            check(false, "did not fail: " #stmt, __LINE__);                             \
        } else {                                                                        \
            check_str(sgl_test_msg, (msg), __LINE__);                                   \
        }                                                                               \
    } while (0)

/* Types used below. */
static const sgl_type T_IV = {.kind = SGL_T_VEC, .elem = &sgl_t_int};     /* [int] */
static const sgl_type T_FV = {.kind = SGL_T_VEC, .elem = &sgl_t_float};   /* [float] */
static const sgl_type T_BV = {.kind = SGL_T_VEC, .elem = &sgl_t_bool};    /* [bool] */
static const sgl_type T_IVV = {.kind = SGL_T_VEC, .elem = &T_IV};         /* [[int]] */
static const sgl_type T_FVV = {.kind = SGL_T_VEC, .elem = &T_FV};         /* [[float]] */
static const sgl_type T_IVVV = {.kind = SGL_T_VEC, .elem = &T_IVV};       /* [[[int]]] */
static const sgl_type T_FVVV = {.kind = SGL_T_VEC, .elem = &T_FVV};       /* [[[float]]] */

static sgl_vec ivec(int n, const sgl_int *xs)
{
    sgl_vec v = {NULL, 0, 0};
    for (int i = 0; i < n; i++)
        sgl_vec_push_move(&T_IV, &v, &xs[i], 1, 1);
    return v;
}

static sgl_vec fvec(int n, const sgl_float *xs)
{
    sgl_vec v = {NULL, 0, 0};
    for (int i = 0; i < n; i++)
        sgl_vec_push_move(&T_FV, &v, &xs[i], 1, 1);
    return v;
}

#define IVEC(...) ivec(sizeof((sgl_int[]){__VA_ARGS__}) / sizeof(sgl_int), (sgl_int[]){__VA_ARGS__})
/* writable element access, as generated code does it (copy-on-write) */
#define MUT_V(vv, i) ((sgl_vec *)sgl_at_mut(&T_IVV, (vv), (i), sizeof(sgl_vec), 1, 1))
#define MUT_II(vv, i, j) (*(sgl_int *)sgl_at_mut(&T_IV, MUT_V(vv, i), (j), sizeof(sgl_int), 1, 1))
#define FVEC(...) fvec(sizeof((sgl_float[]){__VA_ARGS__}) / sizeof(sgl_float), (sgl_float[]){__VA_ARGS__})

/* [[1, 2], [], [3]]: pushes move, so the inner vectors need no freeing. */
static sgl_vec sample_ivv(void)
{
    sgl_vec vv = {NULL, 0, 0};
    sgl_vec a = IVEC(1, 2), b = {NULL, 0, 0}, c = IVEC(3);
    sgl_vec_push_move(&T_IVV, &vv, &a, 1, 1);
    sgl_vec_push_move(&T_IVV, &vv, &b, 1, 1);
    sgl_vec_push_move(&T_IVV, &vv, &c, 1, 1);
    return vv;
}

/* The printed form of a value (a static buffer, valid until the next call). */
static const char *show(const sgl_type *t, const void *v)
{
    static char out[4096];
    sgl_buf b = {0};
    sgl_fmt_value(&b, t, v);
    snprintf(out, sizeof out, "%.*s", (int)b.len, b.data ? b.data : "");
    sgl_buf_free(&b);
    return out;
}

static const char *repr(double x)
{
    static char out[32];
    sgl_float_repr(out, x);
    return out;
}

/* ------------------------------------------------------------------ */

static void test_types(void)
{
    CHECK(sgl_sizeof(&sgl_t_int) == 8);
    CHECK(sgl_sizeof(&sgl_t_float) == 8);
    CHECK(sgl_sizeof(&sgl_t_bool) == 1);
    CHECK(sgl_sizeof(&T_IV) == sizeof(sgl_vec));
}

static void test_vectors(void)
{
    sgl_vec v = sgl_vec_new(&T_IV, 5, 1, 1);
    CHECK(v.len == 5 && v.buf->cap >= 5);
    CHECK(sgl_sum_int(&v) == 0);
    for (sgl_int i = 0; i < 100; i++)
        sgl_vec_push_move(&T_IV, &v, &i, 1, 1);
    CHECK(v.len == 105);
    CHECK(*(sgl_int *)sgl_vec_at(&T_IV, &v, 104, 1, 1) == 99);
    *(sgl_int *)sgl_vec_at(&T_IV, &v, 0, 1, 1) = 42;
    CHECK(((sgl_int *)v.data)[0] == 42);
    CHECK_FAILS(sgl_vec_at(&T_IV, &v, 105, 3, 7), "index 105 out of range for vector of length 105");
    CHECK(sgl_test_line == 3 && sgl_test_col == 7);
    CHECK_FAILS(sgl_vec_at(&T_IV, &v, -1, 1, 1), "index -1 out of range for vector of length 105");
    sgl_vec_reserve(&T_IV, &v, 1000, 1, 1);
    CHECK(v.buf->cap >= 1000 && v.len == 105 && ((sgl_int *)v.data)[104] == 99);
    /* pushing one of the vector's own elements while it grows */
    sgl_vec small = IVEC(1, 2, 3, 4, 5, 6, 7, 8);
    CHECK(small.len == small.buf->cap);
    sgl_vec_push_move(&T_IV, &small, sgl_vec_at(&T_IV, &small, 1, 1, 1), 1, 1);
    CHECK_STR(show(&T_IV, &small), "[1, 2, 3, 4, 5, 6, 7, 8, 2]");
    sgl_vec_free(&T_IV, &small);
    sgl_vec_free(&T_IV, &v);
    CHECK(v.data == NULL && v.len == 0 && v.buf == NULL);

    sgl_vec e = {NULL, 0, 0};
    CHECK_FAILS(sgl_vec_at(&T_IV, &e, 0, 1, 1), "index 0 out of range for vector of length 0");
    CHECK_STR(show(&T_IV, &e), "[]");

    /* nested vectors of vectors zero-initialise to empty vectors */
    sgl_vec z = sgl_vec_new(&T_IVV, 2, 1, 1);
    CHECK_STR(show(&T_IVV, &z), "[[], []]");
    sgl_vec_free(&T_IVV, &z);

    sgl_vec bv = {NULL, 0, 0};
    for (int i = 0; i < 5; i++) {
        sgl_bool x = i % 2 == 0;
        sgl_vec_push_move(&T_BV, &bv, &x, 1, 1);
    }
    CHECK_STR(show(&T_BV, &bv), "[true, false, true, false, true]");
    CHECK(*(sgl_bool *)sgl_vec_at(&T_BV, &bv, 4, 1, 1) == true);
    sgl_vec_free(&T_BV, &bv);
}

/* A vector that is the only owner of its buffer but a part of it (after
 * st = slice(st, 0, len(st) - 1) or q = slice(q, 1, len(q))) grows in
 * its own buffer: no copy of its elements at the next push, the elements
 * outside it freed (LeakSanitizer sees it in the sanitizer build). */
static void test_push_after_slice(void)
{
    sgl_vec st = {NULL, 0, 0};
    for (sgl_int i = 0; i < 6; i++)
        sgl_vec_push_move(&T_IV, &st, &i, 1, 1);
    sgl_vbuf *b = st.buf;
    st = sgl_slice_take(&T_IV, &st, 0, 4, 1, 1); /* two pops */
    CHECK(st.buf == b && st.len == 4 && b->used == 6);
    sgl_int x = 40;
    sgl_vec_push_move(&T_IV, &st, &x, 1, 1);
    CHECK(st.buf == b && st.data == ((char *)(b + 1)) && b->used == 5);
    CHECK_STR(show(&T_IV, &st), "[0, 1, 2, 3, 40]");

    /* a queue: pops at the front, pushes at the back, in the same buffer
     * while it has room; the popped elements go when it must grow */
    st = sgl_slice_take(&T_IV, &st, 2, 5, 1, 1);
    CHECK(st.buf == b && st.data == ((char *)(b + 1)) + 2 * sizeof(sgl_int));
    x = 50;
    sgl_vec_push_move(&T_IV, &st, &x, 1, 1);
    CHECK(st.buf == b && st.data == ((char *)(b + 1)) + 2 * sizeof(sgl_int) && b->used == 6);
    CHECK_STR(show(&T_IV, &st), "[2, 3, 40, 50]");
    for (sgl_int i = 0; i < 100; i++) {
        sgl_vec_push_move(&T_IV, &st, &i, 1, 1);
        st = sgl_slice_take(&T_IV, &st, 1, st.len, 1, 1);
        CHECK(st.len == 4 && !st.buf->parent && st.buf->cap <= 16);
    }
    CHECK_STR(show(&T_IV, &st), "[96, 97, 98, 99]");
    sgl_vec_free(&T_IV, &st);

    /* elements that are vectors: those outside are freed, once */
    sgl_vec vv = {NULL, 0, 0};
    for (int i = 0; i < 5; i++) {
        sgl_vec a = IVEC(i, i);
        sgl_vec_push_move(&T_IVV, &vv, &a, 1, 1);
    }
    vv = sgl_slice_take(&T_IVV, &vv, 1, 4, 1, 1);
    sgl_vec a = IVEC(9);
    sgl_vec_push_move(&T_IVV, &vv, &a, 1, 1);
    CHECK_STR(show(&T_IVV, &vv), "[[1, 1], [2, 2], [3, 3], [9]]");
    sgl_vec_free(&T_IVV, &vv);
}

static void test_copy_eq_assign(void)
{
    sgl_vec vv = sample_ivv();
    CHECK_STR(show(&T_IVV, &vv), "[[1, 2], [], [3]]");
    sgl_vec cp = sgl_vec_copy(&T_IVV, &vv);
    CHECK(sgl_value_eq(&T_IVV, &vv, &cp));
    /* deep: changing the copy's inner vector leaves the original alone */
    /* copies share storage until written (copy-on-write) */
    CHECK(((sgl_vec *)vv.data)[0].data == ((sgl_vec *)cp.data)[0].data);
    MUT_II(&cp, 0, 0) = 100;
    sgl_int seven = 7;
    sgl_vec_push_move(&T_IV, MUT_V(&cp, 1), &seven, 1, 1);
    CHECK_STR(show(&T_IVV, &vv), "[[1, 2], [], [3]]");
    CHECK_STR(show(&T_IVV, &cp), "[[100, 2], [7], [3]]");
    CHECK(!sgl_value_eq(&T_IVV, &vv, &cp));
    CHECK(((sgl_vec *)vv.data)[0].data != ((sgl_vec *)cp.data)[0].data);

    /* generic copy of a vector value */
    sgl_vec g;
    sgl_value_copy(&T_IVV, &g, &vv);
    CHECK(sgl_value_eq(&T_IVV, &g, &vv));
    sgl_value_free(&T_IVV, &g);
    CHECK(g.data == NULL && g.len == 0);

    /* assign: deep copy replacing the old value */
    sgl_value_assign(&T_IVV, &cp, &vv);
    CHECK(sgl_value_eq(&T_IVV, &cp, &vv));
    /* an element assigned from a sibling, and from itself */
    sgl_value_assign(&T_IV, MUT_V(&cp, 1), sgl_vec_at(&T_IVV, &cp, 0, 1, 1));
    CHECK_STR(show(&T_IVV, &cp), "[[1, 2], [1, 2], [3]]");
    sgl_value_assign(&T_IV, MUT_V(&cp, 0), sgl_vec_at(&T_IVV, &cp, 0, 1, 1));
    CHECK_STR(show(&T_IVV, &cp), "[[1, 2], [1, 2], [3]]");
    sgl_vec_free(&T_IVV, &cp);

    /* assign_move takes the source's storage */
    sgl_vec dst = IVEC(9, 9, 9), src = IVEC(4, 5);
    void *storage = src.data;
    sgl_value_assign_move(&T_IV, &dst, &src);
    CHECK(dst.data == storage && dst.len == 2);
    CHECK(src.data == NULL && src.len == 0);
    sgl_vec_free(&T_IV, &dst);

    sgl_int a = 1, b = 2;
    sgl_value_assign(&sgl_t_int, &a, &b);
    CHECK(a == 2);

    /* equality */
    sgl_vec x = IVEC(1, 2, 3), y = IVEC(1, 2, 3), z = IVEC(1, 2), w = IVEC(1, 2, 4);
    CHECK(sgl_value_eq(&T_IV, &x, &y));
    CHECK(!sgl_value_eq(&T_IV, &x, &z));
    CHECK(!sgl_value_eq(&T_IV, &x, &w));
    sgl_vec f1 = FVEC(0.0, NAN), f2 = FVEC(-0.0, NAN), f3 = FVEC(-0.0);
    sgl_vec f4 = FVEC(0.0);
    CHECK(!sgl_value_eq(&T_FV, &f1, &f2)); /* nan != nan */
    CHECK(sgl_value_eq(&T_FV, &f3, &f4));  /* -0.0 == 0.0 */
    sgl_bool t = true, t2 = true, f = false;
    CHECK(sgl_value_eq(&sgl_t_bool, &t, &t2) && !sgl_value_eq(&sgl_t_bool, &t, &f));
    sgl_vec e1 = {NULL, 0, 0}, e2 = {NULL, 0, 0};
    CHECK(sgl_value_eq(&T_IVV, &e1, &e2));
    sgl_vec_free(&T_IV, &x);
    sgl_vec_free(&T_IV, &y);
    sgl_vec_free(&T_IV, &z);
    sgl_vec_free(&T_IV, &w);
    sgl_vec_free(&T_FV, &f1);
    sgl_vec_free(&T_FV, &f2);
    sgl_vec_free(&T_FV, &f3);
    sgl_vec_free(&T_FV, &f4);
    sgl_vec_free(&T_IVV, &vv);
}

static void test_fill_range_slice(void)
{
    sgl_int x = 7;
    sgl_vec v = sgl_fill(&T_IV, 3, &x, 1, 1);
    CHECK_STR(show(&T_IV, &v), "[7, 7, 7]");
    sgl_vec_free(&T_IV, &v);
    v = sgl_fill(&T_IV, 0, &x, 1, 1);
    CHECK(v.len == 0);
    CHECK_FAILS(sgl_fill(&T_IV, -2, &x, 4, 5), "fill with a negative count -2");
    CHECK(sgl_test_line == 4 && sgl_test_col == 5);

    /* fill with a vector: every copy is independent */
    sgl_vec inner = IVEC(1, 2);
    sgl_vec vv = sgl_fill(&T_IVV, 2, &inner, 1, 1);
    MUT_II(&vv, 0, 0) = 5;
    CHECK_STR(show(&T_IVV, &vv), "[[5, 2], [1, 2]]");
    CHECK_STR(show(&T_IV, &inner), "[1, 2]");
    sgl_vec_free(&T_IVV, &vv);
    sgl_vec_free(&T_IV, &inner);

    v = sgl_range(2, 6, 1, 1);
    CHECK_STR(show(&T_IV, &v), "[2, 3, 4, 5]");
    sgl_vec_free(&T_IV, &v);
    v = sgl_range(-2, 1, 1, 1);
    CHECK_STR(show(&T_IV, &v), "[-2, -1, 0]");
    sgl_vec_free(&T_IV, &v);
    v = sgl_range(5, 5, 1, 1);
    CHECK(v.len == 0 && v.data == NULL);
    v = sgl_range(5, -5, 1, 1);
    CHECK(v.len == 0);
    v = sgl_range(INT64_MAX - 2, INT64_MAX, 1, 1);
    CHECK(v.len == 2 && ((sgl_int *)v.data)[1] == INT64_MAX - 1);
    sgl_vec_free(&T_IV, &v);

    sgl_vec r = IVEC(10, 11, 12, 13, 14);
    v = sgl_slice(&T_IV, &r, 1, 4, 1, 1);
    CHECK_STR(show(&T_IV, &v), "[11, 12, 13]");
    sgl_vec_free(&T_IV, &v);
    v = sgl_slice(&T_IV, &r, 5, 5, 1, 1);
    CHECK(v.len == 0);
    v = sgl_slice(&T_IV, &r, 0, 5, 1, 1);
    CHECK(sgl_value_eq(&T_IV, &v, &r));
    *(sgl_int *)sgl_at_mut(&T_IV, &v, 0, sizeof(sgl_int), 1, 1) = -5; /* copy on write */
    CHECK_STR(show(&T_IV, &v), "[-5, 11, 12, 13, 14]");
    CHECK_STR(show(&T_IV, &r), "[10, 11, 12, 13, 14]");
    sgl_vec_free(&T_IV, &v);
    CHECK_FAILS(sgl_slice(&T_IV, &r, -1, 2, 1, 1), "slice -1..2 out of range for vector of length 5");
    CHECK_FAILS(sgl_slice(&T_IV, &r, 3, 2, 1, 1), "slice 3..2 out of range for vector of length 5");
    CHECK_FAILS(sgl_slice(&T_IV, &r, 0, 6, 1, 1), "slice 0..6 out of range for vector of length 5");
    sgl_vec_free(&T_IV, &r);

    /* slicing nested vectors copies deeply */
    vv = sample_ivv();
    v = sgl_slice(&T_IVV, &vv, 0, 2, 1, 1);
    MUT_II(&v, 0, 1) = 99;
    CHECK_STR(show(&T_IVV, &v), "[[1, 99], []]");
    CHECK_STR(show(&T_IVV, &vv), "[[1, 2], [], [3]]");
    sgl_vec_free(&T_IVV, &v);
    sgl_vec_free(&T_IVV, &vv);
}

static void test_concat_split(void)
{
    sgl_vec vv = sample_ivv();
    sgl_vec c = sgl_concat(&T_IVV, &vv, 1, 1);
    CHECK_STR(show(&T_IV, &c), "[1, 2, 3]");
    sgl_vec_free(&T_IV, &c);
    sgl_vec_free(&T_IVV, &vv);
    sgl_vec e = {NULL, 0, 0};
    c = sgl_concat(&T_IVV, &e, 1, 1);
    CHECK(c.len == 0);

    /* [[[int]]] -> [[int]], deep */
    sgl_vec vvv = {NULL, 0, 0};
    sgl_vec a = sample_ivv(), b = sample_ivv();
    sgl_vec_push_move(&T_IVVV, &vvv, &a, 1, 1);
    sgl_vec_push_move(&T_IVVV, &vvv, &e, 1, 1);
    sgl_vec_push_move(&T_IVVV, &vvv, &b, 1, 1);
    c = sgl_concat(&T_IVVV, &vvv, 1, 1);
    CHECK_STR(show(&T_IVV, &c), "[[1, 2], [], [3], [1, 2], [], [3]]");
    MUT_II(&c, 0, 0) = -1;
    CHECK_STR(show(&T_IVVV, &vvv), "[[[1, 2], [], [3]], [], [[1, 2], [], [3]]]");
    sgl_vec_free(&T_IVV, &c);
    sgl_vec_free(&T_IVVV, &vvv);

    /* split: the first len % k blocks are one longer */
    sgl_vec v = sgl_range(0, 10, 1, 1);
    sgl_vec s = sgl_split(&T_IV, &v, 3, 1, 1);
    CHECK_STR(show(&T_IVV, &s), "[[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]");
    c = sgl_concat(&T_IVV, &s, 1, 1);
    CHECK(sgl_value_eq(&T_IV, &c, &v));
    sgl_vec_free(&T_IV, &c);
    sgl_vec_free(&T_IVV, &s);
    s = sgl_split(&T_IV, &v, 4, 1, 1);
    CHECK_STR(show(&T_IVV, &s), "[[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]");
    sgl_vec_free(&T_IVV, &s);
    s = sgl_split(&T_IV, &v, 1, 1, 1);
    CHECK_STR(show(&T_IVV, &s), "[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]]");
    sgl_vec_free(&T_IVV, &s);
    s = sgl_split(&T_IV, &v, 12, 1, 1);
    CHECK_STR(show(&T_IVV, &s), "[[0], [1], [2], [3], [4], [5], [6], [7], [8], [9], [], []]");
    sgl_vec_free(&T_IVV, &s);
    CHECK_FAILS(sgl_split(&T_IV, &v, 0, 2, 3), "split into 0 blocks (must be at least 1)");
    CHECK_FAILS(sgl_split(&T_IV, &v, -4, 2, 3), "split into -4 blocks (must be at least 1)");
    /* split_bounds: the same blocks' boundaries, the same errors */
    s = sgl_split_bounds(10, 4, 1, 1);
    CHECK_STR(show(&T_IV, &s), "[0, 3, 6, 8, 10]");
    sgl_vec_free(&T_IV, &s);
    s = sgl_split_bounds(2, 3, 1, 1);
    CHECK_STR(show(&T_IV, &s), "[0, 1, 2, 2]");
    sgl_vec_free(&T_IV, &s);
    CHECK_FAILS(sgl_split_bounds(3, 0, 2, 3), "split_bounds into 0 blocks (must be at least 1)");
    CHECK_FAILS(sgl_split_bounds(-1, 2, 2, 3), "split_bounds of a negative length (-1)");
    sgl_vec_free(&T_IV, &v);
    s = sgl_split(&T_IV, &e, 2, 1, 1);
    CHECK_STR(show(&T_IVV, &s), "[[], []]");
    sgl_vec_free(&T_IVV, &s);

    /* split of nested vectors: [[int]] -> [[[int]]] */
    vv = sample_ivv();
    s = sgl_split(&T_IVV, &vv, 2, 1, 1);
    CHECK_STR(show(&T_IVVV, &s), "[[[1, 2], []], [[3]]]");
    sgl_vec_free(&T_IVVV, &s);
    sgl_vec_free(&T_IVV, &vv);
}

/* split_by(v, w): block i ends at floor(len(v) * (w[0] + ... + w[i]) / sum(w)) */
static void test_split_by(void)
{
    sgl_vec v = sgl_range(0, 10, 1, 1);
    sgl_vec w = IVEC(1, 1, 1);
    sgl_vec s = sgl_split_by(&T_IV, &v, &T_IV, &w, 1, 1);
    CHECK_STR(show(&T_IVV, &s), "[[0, 1, 2], [3, 4, 5], [6, 7, 8, 9]]");
    /* the blocks are views of v: writing one copies it */
    MUT_II(&s, 1, 0) = -1;
    CHECK_STR(show(&T_IVV, &s), "[[0, 1, 2], [-1, 4, 5], [6, 7, 8, 9]]");
    CHECK_STR(show(&T_IV, &v), "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]");
    sgl_vec_free(&T_IVV, &s);
    sgl_vec_free(&T_IV, &w);

    /* zero weights give empty blocks */
    w = IVEC(0, 2, 0, 1);
    s = sgl_split_by(&T_IV, &v, &T_IV, &w, 1, 1);
    CHECK_STR(show(&T_IVV, &s), "[[], [0, 1, 2, 3, 4, 5], [], [6, 7, 8, 9]]");
    sgl_vec_free(&T_IVV, &s);
    sgl_vec_free(&T_IV, &w);

    /* large int weights are exact: a sum of 2^63 (one 64-bit word) ... */
    w = IVEC(INT64_MAX, 1);
    s = sgl_split_by(&T_IV, &v, &T_IV, &w, 1, 1);
    CHECK_STR(show(&T_IVV, &s), "[[0, 1, 2, 3, 4, 5, 6, 7, 8], [9]]");
    sgl_vec_free(&T_IVV, &s);
    sgl_vec_free(&T_IV, &w);
    /* ... and sums beyond 64 bits: 3 (2^63 - 1) and 2^64 */
    w = IVEC(INT64_MAX, INT64_MAX, INT64_MAX);
    s = sgl_split_by(&T_IV, &v, &T_IV, &w, 1, 1);
    CHECK_STR(show(&T_IVV, &s), "[[0, 1, 2], [3, 4, 5], [6, 7, 8, 9]]");
    sgl_vec_free(&T_IVV, &s);
    sgl_vec_free(&T_IV, &w);
    w = IVEC(INT64_MAX, INT64_MAX, 2);
    s = sgl_split_by(&T_IV, &v, &T_IV, &w, 1, 1);
    CHECK_STR(show(&T_IVV, &s), "[[0, 1, 2, 3], [4, 5, 6, 7, 8], [9]]");
    sgl_vec_free(&T_IVV, &s);
    sgl_vec_free(&T_IV, &w);

    /* float weights */
    w = FVEC(0.5, 1.5);
    s = sgl_split_by(&T_IV, &v, &T_FV, &w, 1, 1);
    CHECK_STR(show(&T_IVV, &s), "[[0, 1], [2, 3, 4, 5, 6, 7, 8, 9]]");
    sgl_vec_free(&T_IVV, &s);
    sgl_vec_free(&T_FV, &w);
    w = FVEC(1e300, 1e300, 0.0);
    s = sgl_split_by(&T_IV, &v, &T_FV, &w, 1, 1);
    CHECK_STR(show(&T_IVV, &s), "[[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], []]");
    sgl_vec_free(&T_IVV, &s);
    sgl_vec_free(&T_FV, &w);

    /* the errors */
    sgl_vec e = {NULL, 0, 0};
    CHECK_FAILS(sgl_split_by(&T_IV, &v, &T_IV, &e, 2, 3),
                "split_by with no weights (the weight vector is empty)");
    w = IVEC(1, -2);
    CHECK_FAILS(sgl_split_by(&T_IV, &v, &T_IV, &w, 2, 3), "split_by with a negative weight (w[1] = -2)");
    sgl_vec_free(&T_IV, &w);
    w = IVEC(0, 0);
    CHECK_FAILS(sgl_split_by(&T_IV, &v, &T_IV, &w, 2, 3),
                "split_by with weights whose sum is 0 (it must be positive)");
    sgl_vec_free(&T_IV, &w);
    w = FVEC(1.0, -0.5);
    CHECK_FAILS(sgl_split_by(&T_IV, &v, &T_FV, &w, 2, 3), "split_by with a negative weight (w[1] = -0.5)");
    sgl_vec_free(&T_FV, &w);
    w = FVEC(0.0, -0.0);
    CHECK_FAILS(sgl_split_by(&T_IV, &v, &T_FV, &w, 2, 3),
                "split_by with weights whose sum is 0 (it must be positive)");
    sgl_vec_free(&T_FV, &w);
    w = FVEC(1.0, NAN);
    CHECK_FAILS(sgl_split_by(&T_IV, &v, &T_FV, &w, 2, 3),
                "split_by with a weight that is not finite (w[1] = nan)");
    sgl_vec_free(&T_FV, &w);
    w = FVEC(INFINITY);
    CHECK_FAILS(sgl_split_by(&T_IV, &v, &T_FV, &w, 2, 3),
                "split_by with a weight that is not finite (w[0] = inf)");
    sgl_vec_free(&T_FV, &w);
    /* a sum that overflows a double: the weights are scaled, not refused */
    w = FVEC(1e308, 1e308, 1.7e308);
    s = sgl_split_by(&T_IV, &v, &T_FV, &w, 1, 1);
    CHECK_STR(show(&T_IVV, &s), "[[0, 1], [2, 3, 4], [5, 6, 7, 8, 9]]");
    sgl_vec_free(&T_IVV, &s);
    sgl_vec_free(&T_FV, &w);
    sgl_vec_free(&T_IV, &v);

    /* an empty v: every block is empty */
    w = IVEC(1, 2);
    s = sgl_split_by(&T_IV, &e, &T_IV, &w, 1, 1);
    CHECK_STR(show(&T_IVV, &s), "[[], []]");
    sgl_vec_free(&T_IVV, &s);
    sgl_vec_free(&T_IV, &w);

    /* nested vectors: [[int]] -> [[[int]]] */
    sgl_vec vv = sample_ivv();
    w = IVEC(1, 2);
    s = sgl_split_by(&T_IVV, &vv, &T_IV, &w, 1, 1);
    CHECK_STR(show(&T_IVVV, &s), "[[[1, 2]], [[], [3]]]");
    sgl_vec_free(&T_IVVV, &s);
    sgl_vec_free(&T_IV, &w);
    sgl_vec_free(&T_IVV, &vv);
}

static void test_sort(void)
{
    sgl_vec v = IVEC(5, -3, 9, 0, -3, INT64_MIN, INT64_MAX, 2);
    sgl_vec s = sgl_sort(&T_IV, &v, 1, 1);
    CHECK_STR(show(&T_IV, &s),
              "[-9223372036854775808, -3, -3, 0, 2, 5, 9, 9223372036854775807]");
    CHECK_STR(show(&T_IV, &v), "[5, -3, 9, 0, -3, -9223372036854775808, 9223372036854775807, 2]");
    sgl_vec_free(&T_IV, &s);
    sgl_vec_free(&T_IV, &v);

    sgl_vec f = FVEC(2.5, NAN, -1.0, 0.0, -0.0, INFINITY, -INFINITY, 1e-300);
    s = sgl_sort(&T_FV, &f, 1, 1);
    /* stable: 0.0 and -0.0 are equal and keep their order */
    CHECK_STR(show(&T_FV, &s), "[-inf, -1.0, 0.0, -0.0, 1e-300, 2.5, inf, nan]");
    sgl_vec_free(&T_FV, &s);
    sgl_vec_free(&T_FV, &f);

    sgl_vec e = {NULL, 0, 0};
    s = sgl_sort(&T_IV, &e, 1, 1);
    CHECK(s.len == 0);

    /* a larger one: sorted, and the same multiset (sum and length) */
    v = sgl_rand_ints(10007, -1000, 1000, 3, 1, 1);
    s = sgl_sort(&T_IV, &v, 1, 1);
    bool sorted = true;
    for (int64_t i = 1; i < s.len; i++)
        sorted = sorted && ((sgl_int *)s.data)[i - 1] <= ((sgl_int *)s.data)[i];
    CHECK(sorted);
    CHECK(s.len == v.len && sgl_sum_int(&s) == sgl_sum_int(&v));
    CHECK(sgl_min_int(&v, 1, 1) == ((sgl_int *)s.data)[0]);
    CHECK(sgl_max_int(&v, 1, 1) == ((sgl_int *)s.data)[s.len - 1]);
    sgl_vec_free(&T_IV, &s);
    sgl_vec_free(&T_IV, &v);
}

static void test_sum_min_max(void)
{
    sgl_vec e = {NULL, 0, 0};
    CHECK(sgl_sum_int(&e) == 0);
    CHECK(sgl_sum_float(&e) == 0.0 && !signbit(sgl_sum_float(&e)));
    CHECK_FAILS(sgl_min_int(&e, 5, 6), "min of an empty vector");
    CHECK(sgl_test_line == 5 && sgl_test_col == 6);
    CHECK_FAILS(sgl_max_int(&e, 1, 1), "max of an empty vector");
    CHECK_FAILS(sgl_min_float(&e, 1, 1), "min of an empty vector");
    CHECK_FAILS(sgl_max_float(&e, 1, 1), "max of an empty vector");

    sgl_vec v = IVEC(INT64_MAX, 1, 4, -7, 10);
    CHECK(sgl_sum_int(&v) == INT64_MIN + 7); /* wraps around */
    /* four lanes and the tail: every length up to 13, every position */
    for (sgl_int n = 0; n <= 13; n++) {
        sgl_vec r = sgl_range(0, n, 1, 1);
        CHECK(sgl_sum_int(&r) == n * (n - 1) / 2);
        for (sgl_int k = 0; k < n; k++) {
            sgl_vec_make_unique(&T_IV, &r, 1, 1);
            ((sgl_int *)r.data)[k] = INT64_MAX; /* wraps in lane k % 4 or the tail */
            CHECK(sgl_sum_int(&r) == (sgl_int)((uint64_t)(n * (n - 1) / 2 - k) + (uint64_t)INT64_MAX));
            ((sgl_int *)r.data)[k] = k;
        }
        sgl_vec_free(&T_IV, &r);
    }
    CHECK(sgl_min_int(&v, 1, 1) == -7);
    CHECK(sgl_max_int(&v, 1, 1) == INT64_MAX);
    sgl_vec_free(&T_IV, &v);

    /* float sums go from the first element to the last */
    sgl_vec f = FVEC(1e16, 1.0, 1.0);
    CHECK_STR(repr(sgl_sum_float(&f)), "1e+16");
    sgl_vec_free(&T_FV, &f);
    f = FVEC(1.0, 1.0, 1e16);
    CHECK_STR(repr(sgl_sum_float(&f)), "1.0000000000000002e+16");
    sgl_vec_free(&T_FV, &f);
    f = FVEC(0.1, 0.2, 0.3);
    CHECK_STR(repr(sgl_sum_float(&f)), "0.6000000000000001");
    CHECK(sgl_min_float(&f, 1, 1) == 0.1 && sgl_max_float(&f, 1, 1) == 0.3);
    sgl_vec_free(&T_FV, &f);
    f = FVEC(3.0, -2.5, 8.25);
    CHECK(sgl_min_float(&f, 1, 1) == -2.5 && sgl_max_float(&f, 1, 1) == 8.25);
    sgl_vec_free(&T_FV, &f);
}

static void test_numbers(void)
{
    CHECK(sgl_div(7, 2, 1, 1) == 3);
    CHECK(sgl_div(-7, 2, 1, 1) == -3);
    CHECK(sgl_div(7, -2, 1, 1) == -3);
    CHECK(sgl_div(-7, -2, 1, 1) == 3);
    CHECK(sgl_mod(7, 2, 1, 1) == 1);
    CHECK(sgl_mod(-7, 2, 1, 1) == -1);
    CHECK(sgl_mod(7, -2, 1, 1) == 1);
    CHECK(sgl_mod(-7, -2, 1, 1) == -1);
    CHECK(sgl_div(INT64_MIN, -1, 1, 1) == INT64_MIN);
    CHECK(sgl_shl(1, 63, 1, 1) == INT64_MIN);
    CHECK(sgl_shl(3, 62, 1, 1) == INT64_MIN + ((sgl_int)1 << 62));
    CHECK(sgl_shl(-1, 4, 1, 1) == -16);
    CHECK(sgl_shl(INT64_MAX, 1, 1, 1) == -2);
    CHECK(sgl_shr(-8, 1, 1, 1) == -4);
    CHECK(sgl_shr(-1, 63, 1, 1) == -1);
    CHECK(sgl_shr(INT64_MIN, 63, 1, 1) == -1);
    CHECK(sgl_shr(INT64_MAX, 62, 1, 1) == 1);
    CHECK(sgl_shr(5, 0, 1, 1) == 5);
    CHECK(sgl_shl_unchecked(1, 64) == 1 && sgl_shr_unchecked(-2, 65) == -1);
    {
        /* >> is floor division by 2^k, for every count and ints of both signs */
        const sgl_int xs[] = {0, 1, -1, 2, -2, 7, -7, 1000003, -1000003, INT64_MAX, INT64_MIN,
                              INT64_MIN + 1, (sgl_int)0x5555555555555555, -(sgl_int)0x123456789abcdef};
        int bad = 0;
        for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
            for (sgl_int k = 0; k < 64; k++) {
                sgl_int a = xs[i], want;
                if (k == 63) {
                    want = a < 0 ? -1 : 0;
                } else {
                    sgl_int p = (sgl_int)1 << k, q = a / p;
                    want = (a % p != 0 && a < 0) ? q - 1 : q;
                }
                bad += sgl_shr(a, k, 1, 1) != want || sgl_shr_unchecked(a, k + 64) != want;
            }
        }
        CHECK(bad == 0);
    }
    CHECK(sgl_mod(INT64_MIN, -1, 1, 1) == 0);
    CHECK(sgl_div(INT64_MIN, 1, 1, 1) == INT64_MIN);
    CHECK(sgl_div(5, -1, 1, 1) == -5);
    CHECK_FAILS(sgl_div(1, 0, 8, 9), "division by zero");
    CHECK(sgl_test_line == 8 && sgl_test_col == 9);
    CHECK_FAILS(sgl_mod(1, 0, 1, 1), "modulo by zero");
    CHECK(sgl_add(INT64_MAX, 1) == INT64_MIN);
    CHECK(sgl_mul(INT64_MAX, 2) == -2);
    CHECK(sgl_neg(INT64_MIN) == INT64_MIN);

    CHECK(sgl_float_to_int(2.9, 1, 1) == 2);
    CHECK(sgl_float_to_int(-2.9, 1, 1) == -2);
    CHECK(sgl_float_to_int(-0.0, 1, 1) == 0);
    CHECK(sgl_float_to_int(-9223372036854775808.0, 1, 1) == INT64_MIN);
    CHECK(sgl_float_to_int(9223372036854774784.0, 1, 1) == 9223372036854774784);
    CHECK_FAILS(sgl_float_to_int(NAN, 1, 1), "int() of nan");
    CHECK_FAILS(sgl_float_to_int(INFINITY, 1, 1), "int() of inf");
    CHECK_FAILS(sgl_float_to_int(-INFINITY, 1, 1), "int() of -inf");
    CHECK_FAILS(sgl_float_to_int(9223372036854775808.0, 1, 1),
                "int() of 9.223372036854776e+18: out of the int range");
    CHECK_FAILS(sgl_float_to_int(-1e19, 1, 1), "int() of -1e+19: out of the int range");
}

static void test_random(void)
{
    /* Expected draws from Python:
     * python3 -c "
     * M=2**64
     * def sm(s):
     *     def nxt():
     *         nonlocal s
     *         s=(s+0x9E3779B97F4A7C15)%M; z=s
     *         z=((z^(z>>30))*0xBF58476D1CE4E5B9)%M
     *         z=((z^(z>>27))*0x94D049BB133111EB)%M
     *         return z^(z>>31)
     *     return nxt
     * n=sm(0); print([hex(n()) for _ in range(3)])
     * n=sm(42); print([hex(n()) for _ in range(3)])
     * n=sm(7); print([3+n()%(10-3) for _ in range(6)])
     * n=sm(-5%M); print([-2**63+n()%(2**64-1) for _ in range(3)])
     * n=sm(123); print([repr((n()>>11)*2**-53) for _ in range(4)])"
     */
    uint64_t s = 0;
    CHECK(sgl_splitmix64_next(&s) == UINT64_C(0xe220a8397b1dcdaf));
    CHECK(sgl_splitmix64_next(&s) == UINT64_C(0x6e789e6aa1b965f4));
    CHECK(sgl_splitmix64_next(&s) == UINT64_C(0x06c45d188009454f));
    s = 42;
    CHECK(sgl_splitmix64_next(&s) == UINT64_C(0xbdd732262feb6e95));
    CHECK(sgl_splitmix64_next(&s) == UINT64_C(0x28efe333b266f103));
    CHECK(sgl_splitmix64_next(&s) == UINT64_C(0x47526757130f9f52));

    sgl_vec v = sgl_rand_ints(6, 3, 10, 7, 1, 1);
    CHECK_STR(show(&T_IV, &v), "[5, 6, 3, 6, 8, 9]");
    sgl_vec_free(&T_IV, &v);
    v = sgl_rand_ints(3, INT64_MIN, INT64_MAX, -5, 1, 1);
    CHECK_STR(show(&T_IV, &v),
              "[-7588059968825851294, 1061573582192121096, 7055904448874679361]");
    sgl_vec_free(&T_IV, &v);
    v = sgl_rand_ints(0, 0, 1, 7, 1, 1);
    CHECK(v.len == 0);
    v = sgl_rand_ints(5, 4, 5, 7, 1, 1);
    CHECK_STR(show(&T_IV, &v), "[4, 4, 4, 4, 4]");
    sgl_vec_free(&T_IV, &v);
    CHECK_FAILS(sgl_rand_ints(3, 5, 5, 1, 1, 1), "rand_ints with hi (5) <= lo (5)");
    CHECK_FAILS(sgl_rand_ints(3, 5, -2, 1, 1, 1), "rand_ints with hi (-2) <= lo (5)");
    CHECK_FAILS(sgl_rand_ints(-1, 0, 2, 1, 1, 1), "rand_ints with a negative count -1");

    v = sgl_rand_floats(4, 123, 1, 1);
    CHECK_STR(show(&T_FV, &v),
              "[0.7064912217637067, 0.976596648325027, 0.8596622389336012, 0.6867983370471809]");
    sgl_vec_free(&T_FV, &v);
    v = sgl_rand_floats(1000, 9, 1, 1);
    CHECK(sgl_min_float(&v, 1, 1) >= 0.0 && sgl_max_float(&v, 1, 1) < 1.0);
    sgl_vec_free(&T_FV, &v);
    CHECK_FAILS(sgl_rand_floats(-3, 1, 1, 1), "rand_floats with a negative count -3");
}

/* Serializes x of type t, checks the byte count, reads it back and checks
 * it is equal and prints the same. */
static void round_trip(const sgl_type *t, const void *x, size_t want_bytes, int line)
{
    sgl_buf b = {0};
    sgl_ser(&b, t, x);
    check(b.len == want_bytes, "serialized size", line);
    union {
        sgl_vec v;
        sgl_int i;
        sgl_float f;
        sgl_bool b;
    } y;
    char text[1024];
    snprintf(text, sizeof text, "%s", show(t, x));
    const char *end = sgl_deser(b.data, t, &y);
    check(end == b.data + b.len, "deser consumed everything", line);
    check_str(show(t, &y), text, line);
    sgl_value_free(t, &y);
    sgl_buf_free(&b);
}

static void test_serialization(void)
{
    sgl_int i = -123456789012345;
    round_trip(&sgl_t_int, &i, 8, __LINE__);
    sgl_float f = -0.0;
    round_trip(&sgl_t_float, &f, 8, __LINE__);
    sgl_bool b = true;
    round_trip(&sgl_t_bool, &b, 1, __LINE__);

    sgl_vec e = {NULL, 0, 0};
    round_trip(&T_IV, &e, 8, __LINE__);
    sgl_vec v = IVEC(1, -2, 3);
    round_trip(&T_IV, &v, 8 + 3 * 8, __LINE__);
    sgl_vec_free(&T_IV, &v);

    sgl_vec bv = {NULL, 0, 0};
    for (int k = 0; k < 3; k++) {
        sgl_bool x = k != 1;
        sgl_vec_push_move(&T_BV, &bv, &x, 1, 1);
    }
    round_trip(&T_BV, &bv, 8 + 3, __LINE__);
    sgl_vec_free(&T_BV, &bv);

    sgl_vec vv = sample_ivv();
    round_trip(&T_IVV, &vv, 8 + (8 + 16) + 8 + (8 + 8), __LINE__);
    sgl_vec_free(&T_IVV, &vv);

    /* [[[float]]]: [[[0.5, 1e-300]], [], [[], [nan]]] */
    sgl_vec vvv = {NULL, 0, 0}, p = {NULL, 0, 0}, q = {NULL, 0, 0}, r = {NULL, 0, 0};
    sgl_vec a = FVEC(0.5, 1e-300), n = FVEC(NAN);
    sgl_vec_push_move(&T_FVV, &p, &a, 1, 1);
    sgl_vec_push_move(&T_FVV, &r, &e, 1, 1);
    sgl_vec_push_move(&T_FVV, &r, &n, 1, 1);
    sgl_vec_push_move(&T_FVVV, &vvv, &p, 1, 1);
    sgl_vec_push_move(&T_FVVV, &vvv, &q, 1, 1);
    sgl_vec_push_move(&T_FVVV, &vvv, &r, 1, 1);
    CHECK_STR(show(&T_FVVV, &vvv), "[[[0.5, 1e-300]], [], [[], [nan]]]");
    round_trip(&T_FVVV, &vvv, 8 + (8 + 8 + 16) + 8 + (8 + 8 + 8 + 8), __LINE__);

    /* two values back to back */
    sgl_buf buf = {0};
    sgl_int k = 77;
    sgl_ser(&buf, &T_FVVV, &vvv);
    sgl_ser(&buf, &sgl_t_int, &k);
    sgl_vec out;
    sgl_int k2 = 0;
    const char *pos = sgl_deser(buf.data, &T_FVVV, &out);
    pos = sgl_deser(pos, &sgl_t_int, &k2);
    CHECK(pos == buf.data + buf.len && k2 == 77);
    CHECK_STR(show(&T_FVVV, &out), "[[[0.5, 1e-300]], [], [[], [nan]]]");
    sgl_vec_free(&T_FVVV, &out);
    sgl_buf_free(&buf);
    sgl_vec_free(&T_FVVV, &vvv);
}

static void test_print(void)
{
    sgl_buf b = {0};
    sgl_fmt_int(&b, INT64_MIN);
    sgl_buf_puts(&b, " ");
    sgl_fmt_int(&b, 42);
    sgl_buf_puts(&b, " ");
    sgl_fmt_bool(&b, true);
    sgl_buf_puts(&b, " ");
    sgl_fmt_bool(&b, false);
    sgl_buf_puts(&b, " ");
    sgl_fmt_float(&b, 0.1);
    sgl_buf_put(&b, "", 1);
    CHECK_STR(b.data, "-9223372036854775808 42 true false 0.1");
    sgl_buf_free(&b);
    CHECK(b.data == NULL && b.len == 0);

    static const struct {
        double x;
        const char *want;
    } cases[] = {
        {0.0, "0.0"},
        {-0.0, "-0.0"},
        {1.0, "1.0"},
        {2.0, "2.0"},
        {-2.5, "-2.5"},
        {0.1, "0.1"},
        {1.0 / 3.0, "0.3333333333333333"},
        {123.456, "123.456"},
        {0.0001, "0.0001"},
        {0.00001, "1e-05"},
        {0.00012, "0.00012"},
        {1.5e-5, "1.5e-05"},
        {1e15, "1000000000000000.0"},
        {1e16, "1e+16"},
        {1.5e16, "1.5e+16"},
        {9007199254740993.0, "9007199254740992.0"},
        {123456789012345678.0, "1.2345678901234568e+17"},
        {1.5e300, "1.5e+300"},
        {1e100, "1e+100"},
        {5e-324, "5e-324"},
        {2.2250738585072014e-308, "2.2250738585072014e-308"},
        {1.7976931348623157e308, "1.7976931348623157e+308"},
        {INFINITY, "inf"},
        {-INFINITY, "-inf"},
        {NAN, "nan"},
        {-NAN, "nan"},
        {0.30000000000000004, "0.30000000000000004"},
        {100.0, "100.0"},
        {1e22, "1e+22"},
        {0x1p-1022, "2.2250738585072014e-308"},
        {0x1p-1074 * 3, "1.5e-323"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[32];
        int n = sgl_float_repr(out, cases[i].x);
        CHECK(n == (int)strlen(out));
        CHECK_STR(out, cases[i].want);
    }

    sgl_vec vv = sample_ivv();
    CHECK_STR(show(&T_IVV, &vv), "[[1, 2], [], [3]]");
    sgl_vec_free(&T_IVV, &vv);
    sgl_vec f = FVEC(1.0, 0.5, 1e-7);
    CHECK_STR(show(&T_FV, &f), "[1.0, 0.5, 1e-07]");
    sgl_vec_free(&T_FV, &f);
    sgl_vec e = {NULL, 0, 0};
    CHECK_STR(show(&T_IVVV, &e), "[]");
    sgl_float x = 2.0;
    CHECK_STR(show(&sgl_t_float, &x), "2.0");

    /* a buffer that grows a lot */
    sgl_buf big = {0};
    for (int i = 0; i < 10000; i++)
        sgl_buf_puts(&big, "abcdefghij");
    CHECK(big.len == 100000 && big.cap >= big.len && memcmp(big.data + 99990, "abcdefghij", 10) == 0);
    sgl_buf_free(&big);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static const char *file_text(const char *path)
{
    static char out[4096];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(out, 1, sizeof out - 1, f) : 0;
    out[n] = '\0';
    if (f)
        fclose(f);
    return out;
}

static void test_files(void)
{
    const char *base = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/sgl_test_XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        check(false, "mkdtemp", __LINE__);
        return;
    }
    char ints[600], floats[600], bad[600], missing[600];
    snprintf(ints, sizeof ints, "%s/ints.txt", dir);
    snprintf(floats, sizeof floats, "%s/floats.txt", dir);
    snprintf(bad, sizeof bad, "%s/bad.txt", dir);
    snprintf(missing, sizeof missing, "%s/missing.txt", dir);

    sgl_vec v = IVEC(3, -1, INT64_MIN, 0, 1000000);
    sgl_write_ints(ints, &v, 1, 1);
    CHECK_STR(file_text(ints), "3\n-1\n-9223372036854775808\n0\n1000000\n");
    sgl_vec w = sgl_read_ints(ints, 1, 1);
    CHECK(sgl_value_eq(&T_IV, &v, &w));
    sgl_vec_free(&T_IV, &w);
    sgl_vec_free(&T_IV, &v);

    sgl_vec f = FVEC(0.1, 2.0, 1e-05, -0.0, 1e+16, INFINITY, 5e-324);
    sgl_write_floats(floats, &f, 1, 1);
    CHECK_STR(file_text(floats), "0.1\n2.0\n1e-05\n-0.0\n1e+16\ninf\n5e-324\n");
    sgl_vec g = sgl_read_floats(floats, 1, 1);
    CHECK_STR(show(&T_FV, &g), "[0.1, 2.0, 1e-05, -0.0, 1e+16, inf, 5e-324]");
    sgl_vec_free(&T_FV, &g);
    sgl_vec_free(&T_FV, &f);

    /* white space of any kind, and empty files */
    write_text(bad, "  1\t2\n\n3 \r\n  -4  ");
    w = sgl_read_ints(bad, 1, 1);
    CHECK_STR(show(&T_IV, &w), "[1, 2, 3, -4]");
    sgl_vec_free(&T_IV, &w);
    w = sgl_read_floats(bad, 1, 1);
    CHECK_STR(show(&T_FV, &w), "[1.0, 2.0, 3.0, -4.0]");
    sgl_vec_free(&T_FV, &w);
    write_text(bad, "");
    w = sgl_read_ints(bad, 1, 1);
    CHECK(w.len == 0);
    sgl_vec e = {NULL, 0, 0};
    sgl_write_ints(bad, &e, 1, 1);
    CHECK_STR(file_text(bad), "");

    /* slices and file_len: words outside the slice are not converted */
    write_text(bad, "x 1\v2\f3 y");
    CHECK(sgl_file_len(bad, 1, 1) == 5);
    w = sgl_read_ints_slice(bad, 1, 4, 1, 1);
    CHECK_STR(show(&T_IV, &w), "[1, 2, 3]");
    sgl_vec_free(&T_IV, &w);
    w = sgl_read_ints_slice(bad, 5, 5, 1, 1);
    CHECK(w.len == 0);

    /* quoting for messages */
    char q[64];
    CHECK_STR(sgl_quote(q, sizeof q, "a\x1b[0m\\'\0b", 9), "'a\\x1b[0m\\\\\\'\\x00b'");
    CHECK(strlen(sgl_quote(q, sizeof q, "0123456789012345678901234567890123456789012345678901234567890123456789", 70))
          < sizeof q);

    /* errors */
    char msg[1200];
    write_text(bad, "1 2 x3 4\n");
    snprintf(msg, sizeof msg, "'x3' in '%s' is not an int", bad);
    CHECK_FAILS(sgl_read_ints(bad, 2, 2), msg);
    write_text(bad, "1 2.5\n");
    snprintf(msg, sizeof msg, "'2.5' in '%s' is not an int", bad);
    CHECK_FAILS(sgl_read_ints(bad, 2, 2), msg);
    write_text(bad, "1.5 abc\n");
    snprintf(msg, sizeof msg, "'abc' in '%s' is not a float", bad);
    CHECK_FAILS(sgl_read_floats(bad, 2, 2), msg);
    snprintf(msg, sizeof msg, "cannot open '%s': No such file or directory", missing);
    CHECK_FAILS(sgl_read_ints(missing, 2, 2), msg);
    CHECK_FAILS(sgl_read_floats(missing, 2, 2), msg);
    char nodir[700];
    snprintf(nodir, sizeof nodir, "%s/no/such/dir.txt", dir);
    snprintf(msg, sizeof msg, "cannot open '%s': No such file or directory", nodir);
    CHECK_FAILS(sgl_write_ints(nodir, &e, 2, 2), msg);
    CHECK_FAILS(sgl_write_floats(nodir, &e, 2, 2), msg);

    /* a file bigger than the first read buffer */
    v = sgl_range(0, 100000, 1, 1);
    sgl_write_ints(ints, &v, 1, 1);
    w = sgl_read_ints(ints, 1, 1);
    CHECK(sgl_value_eq(&T_IV, &v, &w));
    sgl_vec_free(&T_IV, &w);
    sgl_vec_free(&T_IV, &v);

    remove(ints);
    remove(floats);
    remove(bad);
    rmdir(dir);
}

static void test_args(void)
{
    char *argv[] = {"12", "-3", "abc", "2.5", "1e3", "", " 5", "99999999999999999999", "+7"};
    sgl_set_args(9, argv);
    CHECK(sgl_arg_int(0, 5, 1, 1) == 12);
    CHECK(sgl_arg_int(1, 5, 1, 1) == -3);
    CHECK(sgl_arg_int(8, 5, 1, 1) == 7);
    CHECK(sgl_arg_int(9, 5, 1, 1) == 5);
    CHECK(sgl_arg_int(-1, 6, 1, 1) == 6);
    CHECK(sgl_arg_float(3, 0.0, 1, 1) == 2.5);
    CHECK(sgl_arg_float(4, 0.0, 1, 1) == 1000.0);
    CHECK(sgl_arg_float(0, 0.0, 1, 1) == 12.0);
    CHECK(sgl_arg_float(20, 0.25, 1, 1) == 0.25);
    CHECK(sgl_arg_float(-2, 0.25, 1, 1) == 0.25);
    CHECK_FAILS(sgl_arg_int(2, 0, 3, 4), "bad argument 2: 'abc' is not an int");
    CHECK(sgl_test_line == 3 && sgl_test_col == 4);
    CHECK_FAILS(sgl_arg_int(3, 0, 1, 1), "bad argument 3: '2.5' is not an int");
    CHECK_FAILS(sgl_arg_int(5, 0, 1, 1), "bad argument 5: '' is not an int");
    CHECK_FAILS(sgl_arg_int(6, 0, 1, 1), "bad argument 6: ' 5' is not an int");
    CHECK_FAILS(sgl_arg_int(7, 0, 1, 1), "bad argument 7: '99999999999999999999' is not an int");
    CHECK_FAILS(sgl_arg_float(2, 0, 1, 1), "bad argument 2: 'abc' is not a float");
    CHECK_FAILS(sgl_arg_float(5, 0, 1, 1), "bad argument 5: '' is not a float");
    CHECK_FAILS(sgl_arg_float(6, 0, 1, 1), "bad argument 6: ' 5' is not a float");
    sgl_set_args(0, NULL);
    CHECK(sgl_arg_int(0, 11, 1, 1) == 11);
}

static void test_wtime(void)
{
    double t0 = sgl_wtime(), t1 = sgl_wtime();
    CHECK(t0 > 0.0 && t1 >= t0);
}

/* sort(concat(vv)) as one call (sglc's pass `compose`): the same vector
 * as the two calls, from every path: two sorted runs of ints merged from
 * the parts (interleaved, with ties, with empty parts beside them, parts
 * that are views of one buffer or shared with another owner), and the
 * plain way for the rest (in order already, a part out of order, three
 * runs, too short, floats); vv and its parts unchanged when borrowed. */
static sgl_vec sorted_run(int64_t n, sgl_int lo, sgl_int hi, uint64_t seed)
{
    sgl_vec v = sgl_rand_ints(n, lo, hi, (sgl_int)seed, 1, 1);
    sgl_vec s = sgl_sort(&T_IV, &v, 1, 1);
    sgl_vec_free(&T_IV, &v);
    return s;
}

static void check_sort_concat(sgl_vec *vv, const char *what)
{
    sgl_vec c = sgl_concat(&T_IVV, vv, 1, 1);
    sgl_vec want = sgl_sort_take(&T_IV, &c, 1, 1);
    sgl_vec before = sgl_vec_copy(&T_IVV, vv); /* shares vv: compared after */
    sgl_vec deep = sgl_concat(&T_IVV, vv, 1, 1);  /* a copy of the elements */
    sgl_vec got = sgl_sort_concat(&T_IVV, vv, 1, 1);
    bool same = sgl_value_eq(&T_IV, &got, &want);
    if (!same)
        fprintf(stderr, "sort_concat (%s): not the sort of the concat\n", what);
    CHECK(same);
    sgl_vec again = sgl_concat(&T_IVV, vv, 1, 1);
    CHECK(sgl_value_eq(&T_IV, &again, &deep) && sgl_value_eq(&T_IVV, &before, vv));
    sgl_vec_free(&T_IV, &again);
    sgl_vec_free(&T_IV, &got);
    sgl_vec_free(&T_IVV, &before);
    /* taken: the same result, vv left empty */
    got = sgl_sort_concat_take(&T_IVV, vv, 1, 1);
    CHECK(vv->len == 0 && vv->buf == NULL && sgl_value_eq(&T_IV, &got, &want));
    sgl_vec_free(&T_IV, &got);
    sgl_vec_free(&T_IV, &want);
    sgl_vec_free(&T_IV, &deep);
}

static void test_sort_concat(void)
{
    const int64_t n = 40000; /* two of them: over SGL_SORT_HYBRID_MIN (65,536) */
    sgl_vec vv = {NULL, 0, NULL}, a, b, e = {NULL, 0, NULL};
    /* interleaved runs with many ties */
    a = sorted_run(n, -50, 50, 1), b = sorted_run(n + 7, -60, 40, 2);
    sgl_vec_push_move(&T_IVV, &vv, &a, 1, 1);
    sgl_vec_push_move(&T_IVV, &vv, &b, 1, 1);
    check_sort_concat(&vv, "two runs");
    /* with empty parts before, between and after */
    a = sorted_run(n, INT64_MIN, INT64_MAX, 3), b = sorted_run(n, 0, 1000, 4);
    sgl_vec_push_move(&T_IVV, &vv, &e, 1, 1);
    sgl_vec_push_move(&T_IVV, &vv, &a, 1, 1);
    sgl_vec_push_move(&T_IVV, &vv, &e, 1, 1);
    sgl_vec_push_move(&T_IVV, &vv, &b, 1, 1);
    sgl_vec_push_move(&T_IVV, &vv, &e, 1, 1);
    check_sort_concat(&vv, "empty parts");
    /* in order already; then the second run's least below the first's greatest */
    a = sorted_run(n, 0, 100, 5), b = sorted_run(n, 100, 200, 6);
    sgl_vec_push_move(&T_IVV, &vv, &a, 1, 1);
    sgl_vec_push_move(&T_IVV, &vv, &b, 1, 1);
    check_sort_concat(&vv, "in order");
    a = sorted_run(n, 0, 100, 5), b = sorted_run(n, 100, 200, 6);
    ((sgl_int *)b.data)[0] = 99;
    sgl_vec_push_move(&T_IVV, &vv, &a, 1, 1);
    sgl_vec_push_move(&T_IVV, &vv, &b, 1, 1);
    check_sort_concat(&vv, "overlapping by one");
    /* a part out of order at its end, then at its start */
    for (int end = 0; end < 2; end++) {
        a = sorted_run(n, 0, 1000, 7), b = sorted_run(n, 0, 1000, 8);
        sgl_int *d = end ? a.data : b.data;
        if (end)
            d[n - 1] = d[n - 2] - 1; /* a descent at the first part's end */
        else
            d[0] = d[1] + 1; /* at the second part's start */
        sgl_vec_push_move(&T_IVV, &vv, &a, 1, 1);
        sgl_vec_push_move(&T_IVV, &vv, &b, 1, 1);
        check_sort_concat(&vv, end ? "first part unsorted" : "second part unsorted");
    }
    /* three runs; two short ones */
    for (int k = 0; k < 3; k++) {
        a = sorted_run(n, 0, 1000, 10 + (uint64_t)k);
        sgl_vec_push_move(&T_IVV, &vv, &a, 1, 1);
    }
    check_sort_concat(&vv, "three runs");
    a = sorted_run(100, 0, 1000, 20), b = sorted_run(300, 0, 1000, 21);
    sgl_vec_push_move(&T_IVV, &vv, &a, 1, 1);
    sgl_vec_push_move(&T_IVV, &vv, &b, 1, 1);
    check_sort_concat(&vv, "short");
    /* views of one buffer, the later block first; then parts that another
     * vector shares (taken: they must stay as they are for it) */
    sgl_vec whole = sorted_run(2 * n, -1000, 1000, 22);
    sgl_vec blocks = sgl_split(&T_IV, &whole, 2, 1, 1);
    sgl_vec *bl = blocks.data;
    sgl_vec x = sgl_vec_copy(&T_IV, &bl[1]), y = sgl_vec_copy(&T_IV, &bl[0]);
    sgl_vec_push_move(&T_IVV, &vv, &x, 1, 1);
    sgl_vec_push_move(&T_IVV, &vv, &y, 1, 1);
    sgl_vec kept = sgl_vec_copy(&T_IVV, &vv);
    check_sort_concat(&vv, "views");
    CHECK(sgl_value_eq(&T_IV, &((sgl_vec *)kept.data)[0], &bl[1]) &&
          sgl_value_eq(&T_IV, &((sgl_vec *)kept.data)[1], &bl[0]));
    sgl_vec_free(&T_IVV, &kept);
    sgl_vec_free(&T_IVV, &blocks);
    sgl_vec_free(&T_IV, &whole);
    sgl_vec_free(&T_IVV, &vv);

    /* floats: the plain way (the float sort keeps -0.0 and 0.0 in order) */
    sgl_vec fv = {NULL, 0, NULL}, fa = FVEC(0.0, -0.0, 1.5), fb = FVEC(-0.0, NAN, 0.0, -2.0);
    sgl_vec_push_move(&T_FVV, &fv, &fa, 1, 1);
    sgl_vec_push_move(&T_FVV, &fv, &fb, 1, 1);
    sgl_vec got = sgl_sort_concat(&T_FVV, &fv, 1, 1);
    CHECK_STR(show(&T_FV, &got), "[-2.0, 0.0, -0.0, -0.0, 0.0, 1.5, nan]");
    sgl_vec_free(&T_FV, &got);
    got = sgl_sort_concat_take(&T_FVV, &fv, 1, 1);
    CHECK_STR(show(&T_FV, &got), "[-2.0, 0.0, -0.0, -0.0, 0.0, 1.5, nan]");
    CHECK(fv.len == 0);
    sgl_vec_free(&T_FV, &got);
}

/* The taking variants: a split of a buffer's only owner gives disjoint
 * range handles, each written in place; concat_take joins unshared adjacent
 * handles without a copy; anything shared is copied on write. */
static void test_split_take_concat_take(void)
{
    sgl_vec v = sgl_range(0, 10, 1, 1);
    void *data = v.data;
    sgl_vec s = sgl_split_take(&T_IV, &v, 3, 1, 1);
    CHECK(v.buf == NULL && v.len == 0); /* taken */
    sgl_vec *b = s.data;
    CHECK(b[0].buf->parent && b[0].buf->parent == b[2].buf->parent && b[0].buf != b[1].buf);
    for (int i = 0; i < 3; i++) CHECK(sgl_vec_unique(&b[i]));
    /* each block written in place, the others unchanged */
    *(sgl_int *)sgl_at_mut(&T_IV, &b[1], 0, sizeof(sgl_int), 1, 1) = 40;
    CHECK(b[1].data == (char *)data + 4 * sizeof(sgl_int));
    CHECK_STR(show(&T_IVV, &s), "[[0, 1, 2, 3], [40, 5, 6], [7, 8, 9]]");
    /* a borrowed concat of handles copies (the blocks stay writable) */
    sgl_vec c = sgl_concat(&T_IVV, &s, 1, 1);
    CHECK(c.data != data && sgl_vec_unique(&c));
    CHECK_STR(show(&T_IV, &c), "[0, 1, 2, 3, 40, 5, 6, 7, 8, 9]");
    sgl_vec_free(&T_IV, &c);
    /* a shared block is copied on write, and stops the join */
    sgl_vec keep = sgl_vec_copy(&T_IV, &b[2]);
    CHECK(!sgl_vec_unique(&b[2]));
    sgl_vec s2 = sgl_vec_copy(&T_IVV, &s);
    c = sgl_concat_take(&T_IVV, &s2, 1, 1); /* s2 shares s: copied */
    CHECK(c.data != data && s2.buf == NULL);
    sgl_vec_free(&T_IV, &c);
    /* unshared handles covering the buffer: the buffer itself, no copy */
    sgl_vec_free(&T_IV, &keep);
    c = sgl_concat_take(&T_IVV, &s, 1, 1);
    CHECK(c.data == data && c.len == 10 && c.buf->parent == NULL && sgl_vec_unique(&c));
    CHECK_STR(show(&T_IV, &c), "[0, 1, 2, 3, 40, 5, 6, 7, 8, 9]");
    /* blocks of a block: handles of the same buffer; their join is a handle */
    sgl_vec half = sgl_split_take(&T_IV, &c, 2, 1, 1);
    sgl_vec h1 = ((sgl_vec *)half.data)[1];
    ((sgl_vec *)half.data)[1] = (sgl_vec){NULL, 0, NULL};
    sgl_vec quarters = sgl_split_take(&T_IV, &h1, 2, 1, 1);
    sgl_vec *q = quarters.data;
    CHECK(q[0].buf->parent == ((sgl_vec *)half.data)[0].buf->parent);
    sgl_vec back = sgl_concat_take(&T_IVV, &quarters, 1, 1);
    CHECK(back.data == (char *)data + 5 * sizeof(sgl_int) && back.buf->parent && sgl_vec_unique(&back));
    CHECK_STR(show(&T_IV, &back), "[5, 6, 7, 8, 9]");
    sgl_vec_free(&T_IV, &back);
    sgl_vec_free(&T_IVV, &half);
    /* a shared vector is split into shared views */
    v = sgl_range(0, 4, 1, 1);
    sgl_vec other = sgl_vec_copy(&T_IV, &v);
    s = sgl_split_take(&T_IV, &v, 2, 1, 1);
    b = s.data;
    CHECK(!sgl_vec_unique(&b[0]) && b[0].buf == other.buf);
    *(sgl_int *)sgl_at_mut(&T_IV, &b[0], 0, sizeof(sgl_int), 1, 1) = 9;
    CHECK_STR(show(&T_IV, &other), "[0, 1, 2, 3]");
    c = sgl_concat(&T_IVV, &s, 1, 1); /* not adjacent any more: a copy */
    CHECK_STR(show(&T_IV, &c), "[9, 1, 2, 3]");
    sgl_vec_free(&T_IV, &c);
    sgl_vec_free(&T_IVV, &s);
    sgl_vec_free(&T_IV, &other);
    /* one block: the vector itself */
    v = sgl_range(0, 3, 1, 1);
    data = v.data;
    s = sgl_split_take(&T_IV, &v, 1, 1, 1);
    CHECK(((sgl_vec *)s.data)[0].data == data && ((sgl_vec *)s.data)[0].buf->parent == NULL);
    sgl_vec_free(&T_IVV, &s);
    /* split_by_take */
    v = sgl_range(0, 9, 1, 1);
    sgl_vec w = sgl_range(1, 3, 1, 1);
    s = sgl_split_by_take(&T_IV, &v, &T_IV, &w, 1, 1);
    b = s.data;
    CHECK(sgl_vec_unique(&b[0]) && sgl_vec_unique(&b[1]) && b[0].buf->parent);
    CHECK_STR(show(&T_IVV, &s), "[[0, 1, 2], [3, 4, 5, 6, 7, 8]]");
    sgl_vec_free(&T_IVV, &s);
    sgl_vec_free(&T_IV, &w);
}

/* Resident pages of this process (/proc/self/statm), or -1. */
static long rss_pages(void)
{
    long size = 0, res = -1;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &res) != 2)
            res = -1;
        fclose(f);
    }
    return res;
}

/* Big buffers (mapped) are unmapped on a background thread (at most a few
 * queued, the rest by the caller); the next big mapping finishes those
 * unmaps (itself, or waiting for the chunk in progress), so
 * memory freed before it is gone when it starts, and a mapping is zeroed. */
static void test_big_buffers(void)
{
    enum { N = (1 << 21) + 8, K = 6 }; /* a little over 16 MiB of ints: mapped */
    long page = sysconf(_SC_PAGESIZE);
    sgl_int seven = 7;
    for (int round = 0; round < 3; round++) {
        sgl_vec big[K];
        for (int k = 0; k < K; k++) {
            big[k] = sgl_fill(&T_IV, N, &seven, 1, 1);
            CHECK(((sgl_int *)big[k].data)[N - 1] == 7);
        }
        long before = rss_pages();
        for (int k = 0; k < K; k++)
            sgl_vec_free(&T_IV, &big[k]);
        sgl_vec z = sgl_vec_new(&T_IV, N, 1, 1);
        long after = rss_pages();
        CHECK(sgl_sum_int(&z) == 0 && ((sgl_int *)z.data)[N - 1] == 0);
        if (before > 0 && after > 0 && page > 0) /* the K are gone, the new one is in */
            CHECK(before - after >= (long)((K * (size_t)N * 8 * 9 / 10 - (size_t)N * 8) / (size_t)page));
        sgl_vec_free(&T_IV, &z);
    }
}

/* Small buffers come from a per-thread cache of freed blocks
 * (sgl_blocks.c): a reused block is dirty, so a zeroed vector must still
 * be zeroed; a small buffer grows past its block (realloc); blocks of
 * one class are not shared by two live vectors; more than the cache keeps
 * are freed. */
static void test_small_buffers(void)
{
    sgl_int junk = -1;
    for (int round = 0; round < 3; round++) {
        sgl_vec dirty[20];
        for (int k = 0; k < 20; k++) dirty[k] = sgl_fill(&T_IV, 1 + k % 24, &junk, 1, 1);
        for (int k = 0; k < 20; k++) sgl_vec_free(&T_IV, &dirty[k]);
        sgl_vec vv = sgl_vec_new(&T_IVV, 3, 1, 1); /* three empty vectors, in a reused block */
        bool empty = vv.len == 3;
        for (int i = 0; i < 3; i++) {
            const sgl_vec *e = (const sgl_vec *)vv.data + i;
            empty = empty && e->len == 0 && e->buf == NULL;
        }
        CHECK(empty);
        sgl_vec_free(&T_IVV, &vv);
        sgl_vec live[20];
        for (int k = 0; k < 20; k++) {
            sgl_int x = k;
            live[k] = sgl_fill(&T_IV, 2 + k % 5, &x, 1, 1);
        }
        bool apart = true;
        for (int k = 0; k < 20; k++)
            for (int64_t i = 0; i < live[k].len; i++)
                apart = apart && ((sgl_int *)live[k].data)[i] == k;
        CHECK(apart);
        sgl_vec grow = live[0];
        live[0] = (sgl_vec){NULL, 0, NULL};
        for (sgl_int i = 0; i < 1000; i++) sgl_vec_push_move(&T_IV, &grow, &i, 1, 1);
        const sgl_int *g = grow.data;
        CHECK(grow.len == 1002 && g[1] == 0 && g[1001] == 999);
        sgl_vec_free(&T_IV, &grow);
        for (int k = 1; k < 20; k++) sgl_vec_free(&T_IV, &live[k]);
    }
}

int main(void)
{
    test_types();
    test_vectors();
    test_push_after_slice();
    test_copy_eq_assign();
    test_fill_range_slice();
    test_concat_split();
    test_split_take_concat_take();
    test_split_by();
    test_sort();
    test_sort_concat();
    test_sum_min_max();
    test_numbers();
    test_random();
    test_serialization();
    test_print();
    test_files();
    test_args();
    test_wtime();
    test_big_buffers();
    test_small_buffers();
    printf("%d passed, %d failed\n", n_passed, n_failed);
    fflush(stdout);
    return n_failed == 0 ? 0 : 1;
}
