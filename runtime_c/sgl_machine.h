/*
 * sgl_machine.h: the BSP parameters of a machine file, per level, for
 * --sgl-predict (internal to the runtime; sgl_machine.c reads them).
 */
#ifndef SGL_MACHINE_H
#define SGL_MACHINE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sgl_machine_level {
    bool known;     /* the file gives this level */
    double l, g[3]; /* s; s/byte for scatter, bcast, gather */
} sgl_machine_level;

/* Reads the "levels" of the machine file at path into machine[0 ..
 * nlevels-1] (levels not given stay as they were: zeroed by the caller).
 * False, with the reason in why, if the file gives no level's parameters
 * or a bad one (a level that is not a whole number >= 0, a parameter that
 * is not a finite number >= 0); machine is then all zero. */
bool sgl_machine_load(const char *path, sgl_machine_level *machine, int nlevels, char *why,
                      size_t whylen);

#endif
