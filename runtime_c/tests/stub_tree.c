/*
 * stub_tree.c: a stand-in for the machine-tree half of the runtime
 * (sgl_tree.c, sgl_output.c, ...) in the C unit tests.  It provides only
 * sgl_fail(), which records the message and jumps back into the test
 * (see stub_tree.h).
 */
#include "stub_tree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "../sgl.h"

jmp_buf *sgl_test_jmp;
char sgl_test_msg[512];
int sgl_test_line, sgl_test_col;

void sgl_fail(int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sgl_test_msg, sizeof sgl_test_msg, fmt, ap);
    va_end(ap);
    sgl_test_line = line;
    sgl_test_col = col;
    if (sgl_test_jmp) {
        jmp_buf *j = sgl_test_jmp;
        sgl_test_jmp = NULL;
        longjmp(*j, 1);
    }
    fprintf(stderr, "test.sgl:%d:%d: runtime error: %s (unexpected)\n", line, col, sgl_test_msg);
    abort();
}

/* No machine tree, no team: every copy is the caller's. */
bool sgl_team_copy(void *dst, const void *src, size_t n)
{
    (void)dst;
    (void)src;
    (void)n;
    return false;
}
