/*
 * stub_tree.h: the test stand-in for the runtime's error reporting
 * (sgl_fail, in sgl_output.c).
 *
 * sgl_fail() records its message and position here and longjmps to
 * *sgl_test_jmp, so tests can check error paths.  With sgl_test_jmp NULL
 * it prints the message and aborts.
 */
#ifndef SGL_STUB_TREE_H
#define SGL_STUB_TREE_H

#include <setjmp.h>

extern jmp_buf *sgl_test_jmp;
extern char sgl_test_msg[512];
extern int sgl_test_line, sgl_test_col;

#endif
