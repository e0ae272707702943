/*
 * test_results.c: what a child's run of a superstep stores into its
 * result (sgl_tree.c's sgl_child_run, sgl_output.c's sgl_out_result),
 * linked with the whole runtime.  A run that changes nothing (no output,
 * no failure, no file) stores nothing: its result lies on a page made
 * read-only, and a store there would fault (any fault inside the run is
 * taken for one).  Each field still takes its new value when it changes
 * (output, a failure, a file used, and back), and sgl_lines_calloc gives
 * whole, aligned lines (tests/test_runtime_c.py builds this test and
 * test_library.c with UBSan, which reports a node or a result that does
 * not start on a line: `_Alignas(SGL_LINE)`).
 * Prints the counts, exits 1 on any failure.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#define _POSIX_C_SOURCE 200809L
#include "../sgl_internal.h"

#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

static int mode; /* what the pardo does: 0 nothing, 1 prints a line, 2 fails, 3 uses a file */

static void body(sgl_node *N, sgl_key K, void *frame)
{
    (void)K;
    (void)frame;
    if (mode == 1) {
        sgl_buf_puts(sgl_out(N, 5, 1), "a line");
        sgl_print_end(N, 5, 1);
    } else if (mode == 2) {
        sgl_fail(7, 3, "boom");
    } else if (mode == 3) {
        sgl_files_note(N, "out.txt", SGL_FILE_WROTE);
    }
}

static void frame_free(void *frame)
{
    (void)frame;
}

static const sgl_op ops[] = {{SGL_OP_PARDO, NULL, NULL, body, NULL, 5, 1}};
static const sgl_site site = {"f", 5, 1, 1, ops, 8, frame_free, 0, {0}};

static sigjmp_buf on_fault;

static void fault(int sig)
{
    (void)sig;
    siglongjmp(on_fault, 1);
}

/* Runs the child once; false if it stored into a read-only result. */
static bool run(sgl_node *c, sgl_child_result *r)
{
    void *in[1] = {NULL}, *out[1] = {NULL};
    if (sigsetjmp(on_fault, 1) != 0) return false;
    sgl_child_run(c, &site, (sgl_key){0, 1}, in, out, r);
    return true;
}

static void set_writable(void *page, size_t len, bool w)
{
    CHECK(mprotect(page, len, w ? PROT_READ | PROT_WRITE : PROT_READ) == 0);
}

static void test_unchanged_result_not_stored(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    size_t len = (size_t)(ps > 0 ? ps : 4096);
    while (len < sizeof(sgl_child_result)) len *= 2;
    void *page = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(page != MAP_FAILED);
    if (page == MAP_FAILED) return;
    sgl_child_result *r = page;
    sgl_node *c = sgl_lines_calloc(1, sizeof *c);
    CHECK(c != NULL);
    if (!c) return;
    c->depth = 1;
    strcpy(c->path, "0.1");
    c->cur = -1;
    atomic_store(&c->cur_op, -1);
    atomic_store(&c->cancel_at, INT_MAX);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fault;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGSEGV, &sa, &old) == 0);

    /* the first run writes every field (the page held zeros) */
    mode = 0;
    CHECK(run(c, r));
    CHECK(r->failed_op == -1 && r->msg == NULL && r->seg_end[0] == 0 && r->out_fd == -1);
    /* the same again: nothing to store */
    set_writable(page, len, false);
    CHECK(run(c, r));
    CHECK(run(c, r));
    set_writable(page, len, true);

    /* output: its end and its buffer are stored; emptied, back to 0 */
    mode = 1;
    CHECK(run(c, r));
    CHECK(r->seg_end[0] == 7 && r->out == c->out.data && r->out != NULL);
    CHECK(r->out && memcmp(r->out, "a line\n", 7) == 0);
    sgl_out_reset(c);
    mode = 0;
    CHECK(run(c, r));
    CHECK(r->seg_end[0] == 0 && r->failed_op == -1);

    /* a failure: its op and message; the next run clears both */
    mode = 2;
    CHECK(run(c, r));
    CHECK(r->failed_op == 0 && r->msg && strstr(r->msg, "boom") != NULL);
    free(r->msg); /* the master's merge would */
    sgl_out_reset(c);
    mode = 0;
    CHECK(run(c, r));
    CHECK(r->failed_op == -1 && r->msg == NULL && r->seg_end[0] == 0);
    set_writable(page, len, false);
    CHECK(run(c, r));
    set_writable(page, len, true);

    /* a file used: moved to the result; freed by the master, the next
     * run stores nothing again */
    mode = 3;
    CHECK(run(c, r));
    CHECK(r->files.n == 1 && r->files.cap > 0 && strcmp(r->files.path[0], "out.txt") == 0);
    CHECK(c->files.n == 0 && c->files.cap == 0 && c->files.path == NULL);
    sgl_files_free(&r->files);
    mode = 0;
    set_writable(page, len, false);
    CHECK(run(c, r));
    set_writable(page, len, true);
    CHECK(r->files.cap == 0 && r->failed_op == -1);

    CHECK(sigaction(SIGSEGV, &old, NULL) == 0);
    sgl_out_free(c);
    free(c->slots[0].frame); /* the frame of the master's key {0, 1} */
    free(c->slots);
    free(c);
    munmap(page, len);
}

static void test_lines_of_their_own(void)
{
    CHECK(sizeof(sgl_node) % SGL_LINE == 0);
    CHECK(sizeof(sgl_child_result) % SGL_LINE == 0);
    for (size_t n = 1; n <= 5; n++) {
        sgl_child_result *r = sgl_lines_calloc(n, sizeof *r);
        CHECK(r != NULL && (uintptr_t)r % SGL_LINE == 0);
        bool zero = true;
        for (size_t i = 0; r && i < n * sizeof *r; i++) zero &= ((unsigned char *)r)[i] == 0;
        CHECK(zero);
        free(r);
    }
    CHECK(sgl_lines_calloc(2, 100) == NULL); /* not whole lines */
    CHECK(sgl_lines_calloc(SIZE_MAX / 64, 128) == NULL);
}

int main(void)
{
    test_unchanged_result_not_stored();
    test_lines_of_their_own();
    printf("%d passed, %d failed\n", n_passed, n_failed);
    return n_failed ? 1 : 0;
}
