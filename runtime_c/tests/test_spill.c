/*
 * test_spill.c: output past the memory threshold (sgl_output.c), linked
 * with the whole runtime (seq): spill files, a node's print spilling whole
 * lines only, draining it in pieces that end at a line's end, and a
 * temporary file that cannot be made.  Run with SGL_OUTPUT_SPILL=64 (the
 * test sets it).  Prints the counts, exits 1 on any failure.
 */
#define _POSIX_C_SOURCE 200809L
#include "../sgl_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static sgl_buf got;
static int pieces, pieces_at_line_end;

static void collect(const char *p, size_t len, void *user)
{
    (void)user;
    sgl_buf_put(&got, p, len);
    pieces++;
    if (len > 0 && p[len - 1] == '\n') pieces_at_line_end++;
}

static void test_files(void)
{
    sgl_spill f = {0};
    CHECK(sgl_spill_append(&f, "abc\n", 4) == 0 && f.open && f.len == 4);
    CHECK(sgl_spill_append(&f, "de\n", 3) == 0 && f.len == 7);
    char b[8] = {0};
    CHECK(sgl_spill_read(f.fd, 0, b, 7) == 0 && memcmp(b, "abc\nde\n", 7) == 0);
    CHECK(sgl_spill_read(f.fd, 4, b, 3) == 0 && memcmp(b, "de\n", 3) == 0);
    CHECK(sgl_spill_read(f.fd, 5, b, 3) == EIO); /* past the end */
    /* rewound: the next use starts at 0 and gives the old bytes back */
    sgl_spill_rewind(&f);
    CHECK(f.len == 0 && sgl_spill_read(f.fd, 0, b, 7) == 0);
    CHECK(sgl_spill_append(&f, "x\n", 2) == 0 && f.len == 2 && f.size == 2);
    CHECK(sgl_spill_read(f.fd, 0, b, 2) == 0 && memcmp(b, "x\n", 2) == 0);
    CHECK(sgl_spill_read(f.fd, 2, b, 1) == EIO);
    sgl_spill_close(&f);
    CHECK(!f.open && f.len == 0);
}

static void node_init(sgl_node *n)
{
    memset(n, 0, sizeof *n);
    n->depth = 1;
    strcpy(n->path, "0.1");
}

static void print_line(sgl_node *n, int i)
{
    char line[64];
    snprintf(line, sizeof line, "line %d of a node's output, 30+ bytes", i);
    sgl_buf_puts(sgl_out(n, 0, 0), line);
    sgl_print_end(n, 1, 1);
}

static void test_print_spills_whole_lines(void)
{
    CHECK(sgl_spill_threshold() == 64);
    sgl_node n;
    node_init(&n);
    print_line(&n, 0);
    CHECK(!n.spill.open && n.out.len > 0); /* under the threshold: in memory */
    size_t total = n.out.len;
    for (int i = 1; i < 100; i++) {
        print_line(&n, i);
        total = sgl_out_pos(&n);
        CHECK(n.out.len < 64 + 64); /* bounded: the threshold and a line */
    }
    CHECK(n.spill.open && n.spill.len > 0);
    /* the file holds whole lines: its last byte is a newline */
    char last = 0;
    CHECK(sgl_spill_read(n.spill.fd, n.spill.len - 1, &last, 1) == 0 && last == '\n');
    /* a line being printed stays in memory */
    sgl_buf_puts(sgl_out(&n, 0, 0), "partial");
    CHECK(sgl_out_pos(&n) == total + 7);
    n.out.len -= 7;
    /* drained in order, in pieces that end at a line's end */
    got.len = 0;
    pieces = pieces_at_line_end = 0;
    CHECK(sgl_out_drain(&n, collect, NULL) == 0);
    CHECK(got.len == total && pieces >= 1 && pieces == pieces_at_line_end);
    CHECK(sgl_out_pos(&n) == 0);
    sgl_buf want = {0};
    for (int i = 0; i < 100; i++) {
        char line[64];
        snprintf(line, sizeof line, "line %d of a node's output, 30+ bytes\n", i);
        sgl_buf_puts(&want, line);
    }
    CHECK(want.len == got.len && memcmp(want.data, got.data, want.len) == 0);
    /* the node's next superstep reuses the file from its start */
    print_line(&n, 0);
    print_line(&n, 1);
    print_line(&n, 2);
    CHECK(n.spill.len > 0 && n.spill.len == n.spill.size);
    sgl_buf_free(&want);
    sgl_out_free(&n);
    CHECK(!n.spill.open && n.out.data == NULL);
}

static void test_no_temporary_file(void)
{
    setenv("TMPDIR", "/nonexistent-sgl-test-dir", 1);
    sgl_node n;
    node_init(&n);
    jmp_buf jb;
    n.boundary = &jb;
    volatile int printed = 0;
    if (setjmp(jb) == 0) {
        for (int i = 0; i < 10; i++) {
            print_line(&n, i);
            printed++;
        }
        CHECK(!"a spill file in a missing directory was made");
    } else {
        /* the failing print's line is dropped: whole lines only */
        CHECK(printed == 1 && n.errmsg != NULL); /* line 1 passes 64 bytes */
        CHECK(n.out.len == 37 && n.out.data[36] == '\n'); /* line 0 alone */
        CHECK(strstr(n.errmsg, "sgl:1:1: runtime error: cannot keep the output in a temporary file "
                               "in '/nonexistent-sgl-test-dir': No such file or directory (node 0.1)") != NULL);
        free(n.errmsg);
    }
    sgl_out_free(&n);
    unsetenv("TMPDIR");
}

int main(void)
{
    setenv("SGL_OUTPUT_SPILL", "64", 1);
    test_files();
    test_print_spills_whole_lines();
    test_no_temporary_file();
    sgl_buf_free(&got);
    printf("%d passed, %d failed\n", n_passed, n_failed);
    return n_failed ? 1 : 0;
}
