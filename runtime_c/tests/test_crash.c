/*
 * test_crash.c: where the crash report places an address
 * (sgl_crash_place): in a file's mapping as the file's own offset, in
 * anonymous memory, or in no mapping (and how far past the nearest one
 * below); lines with odd spacing, a last line without its newline, a
 * truncated output buffer; the same read from a file in chunks (over a
 * megabyte of maps: the mapping listed last is found, and a path longer
 * than the output is cut).  Prints the counts, exits 1 on any failure.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../sgl_crash.h"
#include "check.h"

static const char MAPS[] =
    "55d0c0000000-55d0c0001000 r--p 00000000 08:01 1234                       /tmp/prog\n"
    "55d0c0001000-55d0c0005000 r-xp 00001000 08:01 1234                       /tmp/prog\n"
    "55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]\n"
    "7f0000000000-7f0000100000 rw-p 00000000 00:00 0 \n"
    "7f0000200000-7f0000210000 r-xp 0002a000 fd:00 99   /usr/lib/libx so.1\n"
    "7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]";

static const char *place(uintptr_t a, size_t outsz)
{
    static char out[256];
    memset(out, '#', sizeof out);
    sgl_crash_place(MAPS, sizeof MAPS - 1, a, out, outsz);
    return out;
}

int main(void)
{
    /* a file's mapping: the offset in the file (mapping offset added) */
    CHECK(strcmp(place(0x55d0c0000010, 256), "/tmp/prog+0x10") == 0);
    CHECK(strcmp(place(0x55d0c00048ff, 256), "/tmp/prog+0x48ff") == 0);
    CHECK(strcmp(place(0x7f0000200010, 256), "/usr/lib/libx so.1+0x2a010") == 0);
    /* a named pseudo-file: the offset in the mapping */
    CHECK(strcmp(place(0x55d0c1000020, 256), "[heap]+0x20") == 0);
    CHECK(strcmp(place(0x7ffc00020ff8, 256), "[stack]+0x20ff8") == 0); /* last line, no newline */
    /* anonymous memory */
    CHECK(strcmp(place(0x7f00000000ff, 256), "anonymous memory at 0x7f0000000000+0xff") == 0);
    /* no mapping: how far past the nearest one below */
    CHECK(strcmp(place(0x7f00002166f0, 256), "no mapping; 0x66f0 past the end of /usr/lib/libx so.1") == 0);
    CHECK(strcmp(place(0x7f0000100000, 256), "no mapping; 0x0 past the end of anonymous memory at 0x7f0000000000") == 0);
    CHECK(strcmp(place(0x10, 256), "no mapping") == 0);
    CHECK(strcmp(place(0x55d0c0005000, 256), "no mapping; 0x0 past the end of /tmp/prog") == 0);
    /* the output is cut to its buffer, and always terminated */
    CHECK(strcmp(place(0x55d0c0000010, 6), "/tmp/") == 0);
    CHECK(strcmp(place(0x55d0c0000010, 1), "") == 0);
    /* no text: no mapping */
    char out[32];
    sgl_crash_place("", 0, 0x1234, out, sizeof out);
    CHECK(strcmp(out, "no mapping") == 0);
    sgl_crash_place("garbage\n-\n12-\n", 15, 0x1234, out, sizeof out);
    CHECK(strcmp(out, "no mapping") == 0);
    /* from a file: 30000 mappings (about 1.9 MB), the one asked for last */
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (f) {
        for (int i = 0; i < 30000; i++)
            fprintf(f, "%012llx-%012llx rw-p 00000000 00:00 0                          \n",
                    0x100000000000ull + 0x2000ull * (unsigned)i, 0x100000001000ull + 0x2000ull * (unsigned)i);
        fprintf(f, "7f0000200000-7f0000210000 r-xp 0002a000 fd:00 99   /usr/lib/");
        for (int i = 0; i < 3000; i++) fputc('d', f); /* a path longer than any buffer */
        fprintf(f, "/libz.so\n7f0000300000-7f0000310000 r-xp 00001000 fd:00 98   /usr/lib/liby.so");
        fflush(f);
        char big[4096];
        rewind(f);
        CHECK(sgl_crash_place_fd(fileno(f), 0x7f0000300010, big, sizeof big));
        CHECK(strcmp(big, "/usr/lib/liby.so+0x1010") == 0);
        rewind(f);
        CHECK(sgl_crash_place_fd(fileno(f), 0x100000000010 + 0x2000ull * 29999, big, sizeof big));
        char want[64];
        snprintf(want, sizeof want, "anonymous memory at 0x%llx+0x10", 0x100000000000ull + 0x2000ull * 29999);
        CHECK(strcmp(big, want) == 0);
        rewind(f);
        CHECK(sgl_crash_place_fd(fileno(f), 0x100000001800, big, sizeof big)); /* in a gap */
        CHECK(strcmp(big, "no mapping; 0x800 past the end of anonymous memory at 0x100000000000") == 0);
        rewind(f);
        CHECK(sgl_crash_place_fd(fileno(f), 0x7f0000200004, big, sizeof big)); /* the long path: cut */
        CHECK(strncmp(big, "/usr/lib/ddd", 12) == 0 && strlen(big) < 600);
        fclose(f);
    }
    int none[2];
    CHECK(pipe(none) == 0);
    close(none[1]);
    CHECK(!sgl_crash_place_fd(none[0], 0x10, out, sizeof out)); /* nothing to read */
    CHECK(strcmp(out, "no mapping") == 0);
    close(none[0]);
    printf("%d passed, %d failed\n", n_passed, n_failed);
    return n_failed ? 1 : 0;
}
