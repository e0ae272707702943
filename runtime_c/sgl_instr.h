/*
 * sgl_instr.h: run statistics, timelines and cost prediction (internal to
 * the runtime; generated code never includes it).
 *
 * The runtime options --sgl-stats[=FILE.json], --sgl-trace=FILE.json,
 * --sgl-report=FILE.html and --sgl-predict=machine.json switch them on; with none of them, the only
 * cost is one test of sgl_instr per superstep.  docs/cost-model.md
 * documents the JSON files.
 */
#ifndef SGL_INSTR_H
#define SGL_INSTR_H

#include "sgl.h"

enum { SGL_INSTR_STATS = 1, SGL_INSTR_TRACE = 2, SGL_INSTR_PREDICT = 4, SGL_INSTR_REPORT = 8 };
#ifdef SGL_NO_INSTR
/* A build without instrumentation (CFLAGS=-DSGL_NO_INSTR), to measure what
 * the switched-off instrumentation costs: every `if (sgl_instr)` folds away. */
#define sgl_instr 0
#else
extern int sgl_instr;
#endif

/* What the master saw of one superstep. */
typedef struct sgl_step_rec {
    const sgl_site *site;
    int level;        /* depth of the master in the tree */
    double t0, t1;    /* the master's wall time of the superstep */
    double cmax;      /* slowest child's compute time (its ops) */
    double csum;      /* sum over the children */
    int nkids;
    double h[3];      /* largest bytes to/from one child: scatter, bcast, gather */
    double bytes[3];  /* total bytes: scatter, bcast, gather */
} sgl_step_rec;

/* Consumes a runtime option; returns 0 if it is not one of ours, -1 if it
 * is malformed. */
int sgl_instr_option(const char *arg);
/* After the tree is known: the program, the number of levels mapped to
 * processes, the number of levels. */
void sgl_instr_start(const sgl_program *prog, int plevels, int nlevels, const char *shape_text,
                     int nprocs, int rank);
void sgl_instr_step(const sgl_step_rec *r);

/* The children of master n in one superstep (--sgl-stats): at its start,
 * what each child receives (sgl_instr_children_in, before the scatter's
 * elements are handed over); at its end, each child's compute time
 * (res: one result per child, sgl_internal.h) and the superstep's wall
 * time. */
void sgl_instr_children_in(sgl_node *n, const sgl_site *s, const sgl_arg *args);
void sgl_instr_children_out(sgl_node *n, const void *res, const sgl_step_rec *r);

/* Timeline: one track per node. */
typedef struct sgl_track sgl_track;
sgl_track *sgl_trace_track(const char *path);
void sgl_trace_span(sgl_track *t, const char *what, const sgl_site *s, double t0, double t1);

/* At the end of the run, on every process (collective under MPI). */
void sgl_instr_finish(void);

#endif
