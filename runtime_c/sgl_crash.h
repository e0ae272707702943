/* sgl_crash.h: the report of a crash (sgl_crash.c). */
#ifndef SGL_CRASH_H
#define SGL_CRASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Installs the handler of SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT
 * that reports a crash on stderr, its lines starting with `file:` (once;
 * an executable's start-up, before MPI_Init; not where a handler is
 * already installed, nor with SGL_NO_CRASH_REPORT=1 in the environment). */
void sgl_crash_install(const char *file);

/* The MPI rank the report names (once MPI has started; none before). */
void sgl_crash_set_rank(int rank);

/* Where addr is in the mappings `maps` (the text of /proc/PID/maps, len
 * bytes): "path+0xOFFSET" (the offset in the file), "anonymous memory at
 * 0xSTART+0xOFFSET", or "no mapping; 0xN past the end of path" (the
 * nearest mapping below it), into out (always terminated, truncated to
 * outsz). */
void sgl_crash_place(const char *maps, size_t len, uintptr_t addr, char *out, size_t outsz);

/* The same, the maps read from fd (in chunks: any length); false if
 * nothing could be read.  Not reentrant (one static buffer). */
bool sgl_crash_place_fd(int fd, uintptr_t addr, char *out, size_t outsz);

#endif
