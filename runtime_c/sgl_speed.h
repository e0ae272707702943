/*
 * sgl_speed.h: the workers' measured speeds, which child_speeds() returns
 * (internal to the runtime; generated code never includes it).
 *
 * By default child_speeds() gives each child the number of workers in its
 * subtree.  With --sgl-speeds=auto every worker measures its own speed
 * when the program starts (sgl_speed_start: a fixed time window of a
 * fixed loop, all workers of all processes at once), and with
 * --sgl-machine FILE (or $SGL_MACHINE) the speeds come from a machine
 * file written by `sglc probe` (its "worker_speeds").  Either way the
 * runtime keeps one table of every worker of the tree (its path and its
 * speed, in depth-first order) on every process, and a master's
 * child_speeds() sums the speeds of each child's workers.  docs/execution.md
 * and docs/machine-file.md describe the rules.
 */
#ifndef SGL_SPEED_H
#define SGL_SPEED_H

#include "sgl.h"

/* Consumes the runtime option argv[*i] (--sgl-speeds=auto|auto:MS|workers,
 * --sgl-speeds VALUE, --sgl-machine FILE, --sgl-machine=FILE), advancing
 * *i past a separate value; returns 1 if it was one, 0 if it is not one
 * of these options, -1 if it is malformed. */
int sgl_speed_option(int argc, char **argv, int *i);

/* After the tree is built and before main: measure the speeds or read
 * them from the machine file (the options, else $SGL_MACHINE, else
 * $SGL_SPEEDS), and share them between the processes.  Collective under
 * MPI (every process calls it with its highest node).  False after an
 * error, reported by rank 0 on stderr (every process then returns false). */
bool sgl_speed_start(sgl_node *top, int rank);

/* Measured speeds of n's children, summed over each child's workers, into
 * out[0 .. nchildren); false (out untouched) if the run has no measured
 * speeds.  Speeds are multiples of 1/16, the fastest worker's is 1. */
bool sgl_speed_children(const sgl_node *n, double *out);

/* Depth-first order of two node paths ("0.1.2"): component by component. */
int sgl_path_cmp(const char *a, const char *b);

/* Whether the run has measured speeds, and where they come from: "auto",
 * the machine file's path, or NULL (the default: worker counts). */
const char *sgl_speed_source(void);

#endif
