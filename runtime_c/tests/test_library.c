/*
 * test_library.c: library mode's call boundary (sgl_library.c), linked
 * with the whole runtime (seq or omp): a run-time error and an internal
 * error of the runtime fail the call and never stop the host process; after
 * an internal error every call fails until sgl_lib_init runs again.
 * Built with -DSGL_LIBRARY (as sglc --library builds the runtime), a call
 * that fails with vectors in C temporaries (buffers, views, range
 * handles, vectors of vectors, grown vectors, the library's own results
 * handed back) leaves nothing behind: the boundary frees them
 * (sgl_lib_swept), the results keep their elements, and under
 * LeakSanitizer nothing leaks.
 * Prints "ok" and exits 0, or names the first failed check and exits 1.
 */
#include "../sgl_internal.h"
#include "../sgl_library.h"
#include "../sgl_vbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                             \
        }                                                                           \
    } while (0)

static void body_ok(sgl_node *root, void *ctx)
{
    (void)root;
    *(int *)ctx += 1;
}

static void body_runtime_error(sgl_node *root, void *ctx)
{
    (void)root;
    (void)ctx;
    sgl_fail(3, 7, "simulated failure");
}

static void body_internal_error(sgl_node *root, void *ctx)
{
    (void)root;
    *(int *)ctx += 100;
    sgl_internal_error("simulated internal error");
}

static const sgl_program prog = {"lib_test.sgl", 0, NULL, NULL, 0, NULL, NULL, NULL};

#ifdef SGL_LIBRARY
static const sgl_type vec_int = {.kind = SGL_T_VEC, .elem = &sgl_t_int};
static const sgl_type vec_vec_int = {.kind = SGL_T_VEC, .elem = &vec_int};

/* A result of the library: range(0, n) (made in a call, returned). */
static void body_make(sgl_node *root, void *ctx)
{
    (void)root;
    sgl_lib_vec *out = ctx;
    sgl_vec r = sgl_range(0, out->len, 0, 0);
    sgl_lib_export(&vec_int, &r);
    memcpy(out, &r, sizeof r);
}

/* A result of type [[int]]: range(0, 60) in 3 rows (views of one buffer). */
static void body_make_nested(sgl_node *root, void *ctx)
{
    (void)root;
    sgl_vec r = sgl_range(0, 60, 0, 0);
    sgl_vec rows = sgl_split_take(&vec_int, &r, 3, 0, 0);
    sgl_lib_export(&vec_vec_int, &rows);
    memcpy(ctx, &rows, sizeof rows);
}

typedef struct {
    const sgl_lib_vec *arg; /* the caller's memory, or a result handed back */
    const sgl_lib_vec *nested; /* a result of the library's [[int]], or NULL */
} leak_ctx;

/* Vectors of every kind in temporaries, then a run-time error. */
static void body_leaky(sgl_node *root, void *ctx)
{
    (void)root;
    leak_ctx *c = ctx;
    sgl_vec a;
    sgl_lib_import(&vec_int, c->arg, &a);
    sgl_vec big = sgl_range(0, 10000, 0, 0);          /* a buffer */
    sgl_vec view = sgl_slice(&vec_int, &big, 10, 20, 0, 0);       /* a view of it */
    sgl_vec blocks = sgl_split_take(&vec_int, &big, 4, 0, 0);     /* range handles */
    sgl_vec copy = sgl_vec_copy(&vec_int, &a);            /* shares the argument */
    sgl_vec argv = sgl_split(&vec_int, &a, 3, 0, 0);       /* views of the argument */
    sgl_vec grown = {NULL, 0, NULL};
    for (sgl_int i = 0; i < 1000; i++) sgl_vec_push_move(&vec_int, &grown, &i, 0, 0);
    sgl_vec nested = sgl_vec_new(&vec_vec_int, 2, 0, 0); /* a vector of vectors */
    ((sgl_vec *)nested.data)[0] = sgl_vec_copy(&vec_int, &view);
    ((sgl_vec *)nested.data)[1] = sgl_range(0, 5, 0, 0);
    if (c->nested) {
        sgl_vec n2;
        sgl_lib_import(&vec_vec_int, c->nested, &n2);
        sgl_vec row = sgl_vec_copy(&vec_int, &((sgl_vec *)n2.data)[0]); /* one of its rows */
        (void)row;
    }
    (void)view;
    (void)blocks;
    (void)copy;
    (void)argv;
    sgl_fail(5, 1, "fails with %lld vectors held", (long long)(grown.len + nested.len));
}

static void check_no_leaks(void)
{
    CHECK(sgl_lib_init(&prog, "2", 0) == SGL_LIB_OK);
    int64_t mine[100];
    for (int i = 0; i < 100; i++) mine[i] = i;
    sgl_lib_vec caller = {mine, 100, NULL};
    sgl_lib_vec result = {NULL, 50, NULL};
    CHECK(sgl_lib_call(body_make, &result) == SGL_LIB_OK && result.owner && result.len == 50);
    sgl_lib_vec rows = {NULL, 0, NULL};
    CHECK(sgl_lib_call(body_make_nested, &rows) == SGL_LIB_OK && rows.owner && rows.len == 3);
    /* what the boundary frees: the buffers of big, blocks, argv, grown,
     * nested and its second row, and the argument's header or handle (held
     * by copy and argv); with the nested argument, the handle of its row 0
     * (held by row; the outer vector and the other rows' handles are freed
     * with the parameters) */
    int64_t swept = sgl_lib_swept(), expect = 0;
    for (int k = 0; k < 100; k++) {
        leak_ctx c = {k % 2 ? &caller : &result, k % 3 ? &rows : NULL};
        CHECK(sgl_lib_call(body_leaky, &c) == SGL_LIB_ERR_RUNTIME);
        expect += c.nested ? 8 : 7;
    }
    CHECK(sgl_lib_swept() - swept == expect);
    CHECK(strstr(sgl_lib_last_error(), "fails with 1002 vectors held") != NULL);
    /* the caller's memory and the result are intact, and the result is
     * still the caller's alone (freed below, with no leak) */
    for (int i = 0; i < 100; i++) CHECK(mine[i] == i);
    for (int i = 0; i < 50; i++) CHECK(((int64_t *)result.data)[i] == i);
    CHECK(atomic_load(&((sgl_vbuf *)result.owner)->refs) == 1);
    CHECK(atomic_load(&((sgl_vbuf *)rows.owner)->refs) == 1);
    const sgl_lib_vec *row = rows.data;
    for (int i = 0; i < 3; i++) {
        CHECK(row[i].len == 20 && ((int64_t *)row[i].data)[19] == 20 * i + 19);
        /* the three rows are handles of one buffer, each held by its row only */
        CHECK(atomic_load(&((sgl_vbuf *)row[i].owner)->refs) == 1);
    }
    sgl_lib_vec_free(&result, 1);
    sgl_lib_vec_free(&rows, 2);
    sgl_lib_finalize();
}
#endif

int main(void)
{
    int count = 0;
    CHECK(sgl_lib_call(body_ok, &count) == SGL_LIB_ERR_NOT_INIT);
    CHECK(sgl_lib_init(&prog, "4", 0) == SGL_LIB_OK);
    CHECK(sgl_lib_call(body_ok, &count) == SGL_LIB_OK && count == 1);

    /* a run-time error: the next call works */
    CHECK(sgl_lib_call(body_runtime_error, &count) == SGL_LIB_ERR_RUNTIME);
    CHECK(sgl_lib_last_error_line() == 3 && sgl_lib_last_error_col() == 7);
    CHECK(strcmp(sgl_lib_last_error_what(), "simulated failure") == 0);
    CHECK(sgl_lib_call(body_ok, &count) == SGL_LIB_OK && count == 2);

    /* an internal error: the process goes on, the call fails with it ... */
    CHECK(sgl_lib_call(body_internal_error, &count) == SGL_LIB_ERR_INTERNAL && count == 102);
    CHECK(strcmp(sgl_lib_last_error(), "lib_test.sgl: internal error: simulated internal error") == 0);
    /* ... and so does every call until init, without running its body */
    CHECK(sgl_lib_call(body_ok, &count) == SGL_LIB_ERR_INTERNAL && count == 102);
    CHECK(strstr(sgl_lib_last_error(), "simulated internal error") != NULL);
    CHECK(strstr(sgl_lib_last_error(), "call init again") != NULL);
    CHECK(sgl_lib_init(&prog, "2x2", 0) == SGL_LIB_OK);
    CHECK(sgl_lib_call(body_ok, &count) == SGL_LIB_OK && count == 103);
    CHECK(sgl_lib_last_error()[0] == '\0');

    /* a bad shape fails init, and the library is not initialized */
    CHECK(sgl_lib_init(&prog, "2x", 0) == SGL_LIB_ERR_INIT);
    CHECK(strstr(sgl_lib_last_error(), "bad machine shape") != NULL);
    CHECK(sgl_lib_call(body_ok, &count) == SGL_LIB_ERR_NOT_INIT);
    sgl_lib_finalize();

#ifdef SGL_LIBRARY
    check_no_leaks();
#endif

    if (failures) return 1;
    puts("ok");
    return 0;
}
