/*
 * test_library.c: library mode's call boundary (sgl_library.c), linked
 * with the whole runtime (seq or omp): a run-time error and an internal
 * error of the runtime fail the call and never stop the host process; after
 * an internal error every call fails until sgl_lib_init runs again.
 * Prints "ok" and exits 0, or names the first failed check and exits 1.
 */
#include "../sgl_internal.h"
#include "../sgl_library.h"

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

static const sgl_program prog = {"lib_test.sgl", 0, NULL, NULL};

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

    if (failures) return 1;
    puts("ok");
    return 0;
}
