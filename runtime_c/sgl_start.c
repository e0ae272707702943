/*
 * sgl_start.c: sgl_run, the entry point of a generated program.
 *
 * It reads the runtime's --sgl- options (the program never sees them),
 * decides the machine shape (--sgl-shape, $SGL_SHAPE, or the default: the
 * MPI processes, then the OpenMP threads), maps the leading levels onto
 * MPI processes and the others onto threads, builds the part of the tree
 * this process hosts, and runs main on the root; the other processes
 * serve their masters' commands.  docs/execution.md describes the rules.
 */
#define _POSIX_C_SOURCE 200809L
#include "sgl_internal.h"
#include "sgl_speed.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const sgl_program *sgl_prog;

/* ------------------------------------------------------------------ */
/* Options                                                              */

typedef struct run_options {
    const char *shape_text; /* --sgl-shape or $SGL_SHAPE; NULL: the default */
    char **args;            /* the program's own arguments (NULL-terminated) */
    const char *bad;        /* an unknown or malformed --sgl- option, or NULL */
} run_options;

/* The runtime's arguments: --sgl-shape S, --sgl-shape=S and the
 * instrumentation options (sgl_instr_option); the others are the
 * program's (sgl_set_args). */
static void read_options(int argc, char **argv, run_options *o)
{
    o->shape_text = getenv("SGL_SHAPE");
    o->bad = NULL;
    o->args = malloc(((size_t)argc + 1) * sizeof *o->args);
    if (!o->args) sgl_internal_error("out of memory");
    int nargs = 0, speed;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--sgl-", 6) != 0) {
            o->args[nargs++] = argv[i];
        } else if (strcmp(argv[i], "--sgl-shape") == 0 && i + 1 < argc) {
            o->shape_text = argv[++i];
        } else if (strncmp(argv[i], "--sgl-shape=", 12) == 0) {
            o->shape_text = argv[i] + 12;
        } else if ((speed = sgl_speed_option(argc, argv, &i)) != 0) {
            if (speed < 0) o->bad = argv[i];
        } else if (sgl_instr_option(argv[i]) <= 0) {
            o->bad = argv[i];
        }
    }
    o->args[nargs] = NULL;
    sgl_set_args(nargs, o->args);
}

static void option_error(const char *bad)
{
    fprintf(stderr, "%s: runtime error: unknown or malformed runtime option '%s' (known: --sgl-shape S, "
            "--sgl-stats[=FILE.json], --sgl-trace=FILE.json, --sgl-predict=MACHINE.json, "
            "--sgl-speeds=auto|auto:MS|workers, --sgl-machine FILE)\n",
            sgl_prog->file, bad);
}

/* ------------------------------------------------------------------ */
/* The machine shape and its mapping onto processes                     */

typedef struct machine_plan {
    int shape[SGL_MAX_LEVELS]; /* children per node, level by level */
    int nlevels;
    int plevels;               /* how many leading levels are processes */
    int nprocs, rank;
    int digit[SGL_MAX_LEVELS]; /* rank's digits in the mixed radix of the process levels */
    int j0;                    /* the level of the highest node this process hosts */
} machine_plan;

/* Parse "2x2x3" (or "0" for the one-node tree). Returns the number of
 * levels, or -1 if the text is not a shape. */
int sgl_parse_shape(const char *text, int *shape)
{
    if (strcmp(text, "0") == 0) return 0;
    int n = 0;
    const char *p = text;
    for (;;) {
        if (*p < '0' || *p > '9') return -1;
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || v < 1 || v > 1 << 20 || n == SGL_MAX_LEVELS) return -1;
        shape[n++] = (int)v;
        p = end;
        if (*p == '\0') return n;
        if (*p != 'x' && *p != 'X') return -1;
        p++;
    }
}

static void shape_error(const char *msg, const char *text)
{
    fflush(stdout);
    fprintf(stderr, "%s: runtime error: bad machine shape '%s': %s\n", sgl_prog->file, text, msg);
}

/* The shape: the one given, or one level of processes (if more than one)
 * and one of threads (if more than one).  False (and a message from
 * rank 0) if the text is not a shape. */
static bool choose_shape(const char *text, machine_plan *m)
{
    if (text && *text) {
        m->nlevels = sgl_parse_shape(text, m->shape);
        if (m->nlevels < 0) {
            if (m->rank == 0) shape_error("expected levels like 2x2x3, or 0", text);
            return false;
        }
        return true;
    }
    int threads = sgl_local_default_threads();
    m->nlevels = 0;
    if (m->nprocs > 1) m->shape[m->nlevels++] = m->nprocs;
    if (threads > 1) m->shape[m->nlevels++] = threads;
    return true;
}

/* The process levels: the shortest prefix of levels whose product is the
 * number of processes.  False (and a message from rank 0) if none is. */
static bool map_processes(const char *text, machine_plan *m)
{
    m->plevels = 0;
    if (m->nprocs > 1) {
        long prod = 1;
        while (m->plevels < m->nlevels && prod < m->nprocs) prod *= m->shape[m->plevels++];
        if (prod != m->nprocs) {
            if (m->rank == 0) {
                char msg[128];
                snprintf(msg, sizeof msg,
                         "no leading levels multiply to the %d MPI processes", m->nprocs);
                shape_error(msg, text ? text : "(default)");
            }
            return false;
        }
    }
    /* rank's digits in the mixed radix of the process levels */
    int r = m->rank;
    for (int l = 0; l < SGL_MAX_LEVELS; l++) m->digit[l] = 0;
    for (int l = m->plevels - 1; l >= 0; l--) {
        m->digit[l] = r % m->shape[l];
        r /= m->shape[l];
    }
    /* the highest node this process hosts: level j0 */
    m->j0 = 0;
    for (int l = 0; l < m->plevels; l++)
        if (m->digit[l] != 0) m->j0 = l + 1;
    return true;
}

/* ------------------------------------------------------------------ */
/* Building the tree                                                    */

/* The process-level nodes this process hosts, chain[j0..plevels] (one
 * per level, child 0 of the one above), connected through MPI, and the
 * subtree below chain[plevels], all in this process. */
static sgl_node *build_tree(const machine_plan *m)
{
    sgl_node *chain = calloc((size_t)(m->plevels + 1), sizeof *chain);
    if (!chain) sgl_internal_error("out of memory (tree)");
    char path[8 * SGL_MAX_LEVELS] = "0";
    for (int l = 0; l <= m->plevels; l++) {
        if (l > 0) {
            size_t len = strlen(path);
            snprintf(path + len, sizeof path - len, ".%d", m->digit[l - 1]);
        }
        if (l >= m->j0) {
            sgl_node *n = &chain[l];
            sgl_node_init(n, NULL, l, l ? m->digit[l - 1] : 0, m->shape, m->nlevels);
            snprintf(n->path, sizeof n->path, "%s", path);
        }
    }
    sgl_mpi_connect(chain, m->digit, m->shape, m->plevels, m->j0);
    sgl_local_build(&chain[m->plevels], m->shape, m->nlevels);
    return chain;
}

/* ------------------------------------------------------------------ */
/* Running                                                              */

/* Run main on the root; the exit status: 0, or 1 after a run-time error
 * (printed here, after the output before it). */
static int run_root_main(sgl_node *root)
{
    jmp_buf jb;
    int status;
    root->boundary = &jb;
    sgl_cur = root;
    sgl_stack_init();
    if (setjmp(jb) == 0) {
        sgl_prog->main(root);
        sgl_flush_root(root);
        fflush(stdout);
        status = 0;
    } else {
        sgl_flush_root(root);
        fflush(stdout);
        if (!root->errmsg) sgl_internal_error("the root was cancelled");
        fprintf(stderr, "%s\n", root->errmsg);
        fflush(stderr);
        status = 1;
    }
    root->boundary = NULL;
    return status;
}

/* Run the part of the program that this process hosts, from its highest
 * node top: main on the root, or the master's commands. */
static int run_hosted(sgl_node *top)
{
    if (top->depth > 0) {
        sgl_mpi_serve(top);
        return 0;
    }
    top->is_root = true;
    int status = run_root_main(top);
    sgl_tree_shutdown(top, status);
    return status;
}

/* ------------------------------------------------------------------ */
/* Launch mistakes                                                      */

#ifndef SGL_USE_MPI
/* The value of the first of the variables names[] that is set, or -1. */
static long launcher_var(const char *const *names)
{
    for (const char *const *v = names; *v; v++) {
        const char *t = getenv(*v);
        if (t && *t) {
            char *end;
            long x = strtol(t, &end, 10);
            if (*end == '\0' && x >= 0) return x;
        }
    }
    return -1;
}

/* A build without MPI started by an MPI launcher with several ranks would
 * run one whole copy of the program per rank: refuse, with one message
 * (from rank 0).  The launchers' variables: Open MPI, MPICH/Intel MPI
 * (PMI), MVAPICH, PMIx. */
static bool started_by_mpi_launcher(void)
{
    static const char *const size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                            "MV2_COMM_WORLD_SIZE", "PMIX_SIZE", NULL};
    static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                            "MV2_COMM_WORLD_RANK", "PMIX_RANK", NULL};
    long size = launcher_var(size_vars);
    if (size <= 1) return false;
    if (launcher_var(rank_vars) <= 0) {
#ifdef SGL_USE_OMP
        const char *target = "omp";
#else
        const char *target = "seq";
#endif
        fprintf(stderr,
                "%s: runtime error: this executable was built for the %s target, without MPI, "
                "but an MPI launcher started it as %ld processes: run it directly (one "
                "process), or build it with --target mpi\n",
                sgl_prog->file, target, size);
    }
    return true;
}
#else
static bool started_by_mpi_launcher(void) { return false; }
#endif

int sgl_run(int argc, char **argv, const sgl_program *prog)
{
    sgl_prog = prog;
    if (started_by_mpi_launcher()) return 1;
    machine_plan m;
    sgl_mpi_init(&argc, &argv, &m.nprocs, &m.rank);
    run_options o;
    read_options(argc, argv, &o);
    if (o.bad) {
        if (m.rank == 0) option_error(o.bad);
        sgl_mpi_finalize();
        return 1;
    }
    if (!choose_shape(o.shape_text, &m) || !map_processes(o.shape_text, &m)) {
        sgl_mpi_finalize();
        return 1;
    }
    sgl_local_configure(m.nlevels - m.plevels);

    sgl_node *chain = build_tree(&m);
    sgl_node *top = &chain[m.j0];
    sgl_tree_start(top);
    if (!sgl_speed_start(top, m.rank)) {
        sgl_mpi_finalize();
        return 1;
    }
    if (sgl_instr) {
        sgl_make_tracks(top);
        sgl_mpi_barrier();
    }
    sgl_instr_start(prog, m.plevels, m.nlevels, o.shape_text, m.nprocs, m.rank);

    int status = run_hosted(top);
    fflush(stdout);
    sgl_instr_finish();
    sgl_mpi_finalize();
    free(o.args);
    return status;
}
