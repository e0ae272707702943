/*
 * float_repr_main.c: prints sgl_float_repr of doubles given as bit
 * patterns, to compare the runtime's float printing with Python's repr().
 *
 * Input: one uint64 per line in hex (16 digits).  Output: one repr a line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../sgl.h"

int main(void)
{
    char line[128];
    while (fgets(line, sizeof line, stdin)) {
        uint64_t bits;
        if (sscanf(line, "%" SCNx64, &bits) != 1)
            continue;
        double x;
        memcpy(&x, &bits, sizeof x);
        char out[32];
        sgl_float_repr(out, x);
        puts(out);
    }
    return 0;
}
