/*
 * sgl_start.c: sgl_run, the entry point of a generated program.
 *
 * It reads the runtime's --sgl- options (the program never sees them),
 * decides the machine shape (--sgl-shape, $SGL_SHAPE, or the default: the
 * MPI processes, then each one's OpenMP threads), a general tree
 * (sgl_shape, possibly uneven: "2x[1,3]"), maps the leading levels onto
 * MPI processes and the others onto threads, builds the part of the tree
 * this process hosts, and runs main on the root; the other processes
 * serve their masters' commands.  docs/execution.md describes the rules.
 */
#define _POSIX_C_SOURCE 200809L
#include "sgl_crash.h"
#include "sgl_internal.h"
#include "sgl_speed.h"
#include "sgl_vbuf.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

const sgl_program *sgl_prog;

/* ------------------------------------------------------------------ */
/* libgomp's idle threads                                               */

#if defined(SGL_USE_OMP) && !defined(SGL_LIBRARY) && defined(__linux__) && !defined(__clang__)
/* The thread levels run on the runtime's own teams (sgl_team.c), which
 * read GOMP_SPINCOUNT and OMP_WAIT_POLICY themselves; OpenMP still runs
 * child_speeds()' measurement (sgl_speed.c).  A thread of an OpenMP team
 * that has nothing to do spins before it sleeps: GOMP_SPINCOUNT
 * iterations, 300000 by default (a few ms), fewer only while libgomp
 * counts more threads than CPUs, which it does not for the idle threads of
 * nested teams or of other processes, so that idle threads would spin on
 * the cores that the busy ones need (when libgomp's teams ran the thread
 * levels, 1000 supersteps of a small iterative program took 3.0 s at 2x2
 * against 0.05 s at 4 on two cores; 0.13 s with a spin of 1000, libgomp's
 * own figure for an oversubscribed machine).  libgomp reads its variables
 * when it is loaded, before main, and no code of the program can run
 * between libc's start, which sets the environment, and libgomp's: so a
 * program started with neither GOMP_SPINCOUNT nor OMP_WAIT_POLICY set sets
 * GOMP_SPINCOUNT=1000 (the teams' default too) and executes itself again,
 * before anything else (MPI_Init included).  Not under valgrind, which
 * would not follow the exec, nor when started through the dynamic loader;
 * libomp (clang) has a policy of its own.  docs/execution.md, "Idle
 * threads". */
static void omp_spin_reexec(char **argv)
{
    if (getenv("GOMP_SPINCOUNT") || getenv("OMP_WAIT_POLICY")) return;
    const char *pre = getenv("LD_PRELOAD");
    if (pre && strstr(pre, "vgpreload")) return;
    /* /proc/self/exe must be this program: started through the dynamic
     * loader (`/lib64/ld-linux-x86-64.so.2 ./prog`), it is the loader,
     * while AT_EXECFN names the program */
    const char *fn = (const char *)getauxval(AT_EXECFN);
    struct stat me, exe;
    if (!fn || stat(fn, &me) != 0 || stat("/proc/self/exe", &exe) != 0 || me.st_dev != exe.st_dev ||
        me.st_ino != exe.st_ino)
        return;
    if (setenv("GOMP_SPINCOUNT", "1000", 1) != 0) return;
    execv("/proc/self/exe", argv);
    unsetenv("GOMP_SPINCOUNT"); /* no exec: run with libgomp's default */
}
#else
static void omp_spin_reexec(char **argv)
{
    (void)argv;
}
#endif

/* ------------------------------------------------------------------ */
/* Options                                                              */

typedef struct run_options {
    const char *shape_text; /* --sgl-shape or a non-empty $SGL_SHAPE; NULL: the default */
    char **args;            /* the program's own arguments (NULL-terminated) */
    const char *bad;        /* an unknown or malformed --sgl- option, or NULL */
    bool help;              /* --sgl-help: print the runtime's options, run nothing */
} run_options;

/* The runtime's arguments: --sgl-shape S, --sgl-shape=S and the
 * instrumentation options (sgl_instr_option); the others are the
 * program's (sgl_set_args). */
static void read_options(int argc, char **argv, const char *shape_env, run_options *o)
{
    o->shape_text = shape_env && *shape_env ? shape_env : NULL; /* SGL_SHAPE= is unset */
    o->bad = NULL;
    o->help = false;
    o->args = malloc(((size_t)argc + 1) * sizeof *o->args);
    if (!o->args) sgl_internal_error("out of memory");
    int nargs = 0, speed;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--sgl-", 6) != 0) {
            o->args[nargs++] = argv[i];
        } else if (strcmp(argv[i], "--sgl-help") == 0) {
            o->help = true;
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

#ifdef SGL_USE_MPI
/* Whether a runtime argument takes the next argument as its value
 * (read_options, sgl_speed_option). */
static bool separate_value(const char *a)
{
    return strcmp(a, "--sgl-shape") == 0 || strcmp(a, "--sgl-speeds") == 0 ||
           strcmp(a, "--sgl-machine") == 0;
}

/* Under MPI every process takes rank 0's runtime options: its --sgl-
 * arguments and its $SGL_SHAPE (rank 0's choice of speeds, $SGL_SPEEDS or
 * $SGL_MACHINE included, is broadcast by sgl_speed_start).  The processes
 * of one MPMD launch (mpirun -np 1 ./p --sgl-stats : -np 1 ./p) may be
 * started with different ones; a process that followed its own would
 * build another tree than the others, or wait in a collective that they
 * never enter.  Returns the argument vector to read: argv[0], this
 * process's own program arguments, then rank 0's runtime arguments (kept
 * in *keep, which must live as long as the options are used), and sets
 * *shape_env to rank 0's $SGL_SHAPE (NULL when it has none). */
static char **agreed_argv(int argc, char **argv, int rank, int *nargc, const char **shape_env,
                          char **keep)
{
    /* rank 0's: "S" + $SGL_SHAPE or "N", then its runtime arguments, each
     * ending in a NUL */
    size_t len = 0;
    char *blob = NULL;
    if (rank == 0) {
        const char *env = getenv("SGL_SHAPE");
        len = (env ? strlen(env) : 0) + 2;
        for (int i = 1; i < argc; i++)
            if (strncmp(argv[i], "--sgl-", 6) == 0) {
                len += strlen(argv[i]) + 1;
                if (separate_value(argv[i]) && i + 1 < argc) len += strlen(argv[++i]) + 1;
            }
        if (len > (size_t)INT_MAX) sgl_internal_error("runtime options too long");
        blob = malloc(len);
        if (!blob) sgl_internal_error("out of memory (options)");
        char *q = blob;
        q += sprintf(q, "%c%s", env ? 'S' : 'N', env ? env : "") + 1;
        for (int i = 1; i < argc; i++)
            if (strncmp(argv[i], "--sgl-", 6) == 0) {
                q += sprintf(q, "%s", argv[i]) + 1;
                if (separate_value(argv[i]) && i + 1 < argc) q += sprintf(q, "%s", argv[++i]) + 1;
            }
    }
    int n = (int)len;
    MPI_CHECK(MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank != 0) {
        blob = malloc((size_t)n);
        if (!blob) sgl_internal_error("out of memory (options)");
    }
    MPI_CHECK(MPI_Bcast(blob, n, MPI_CHAR, 0, MPI_COMM_WORLD));
    int count = 0; /* rank 0's runtime arguments */
    for (int k = (int)strlen(blob) + 1; k < n; k += (int)strlen(blob + k) + 1) count++;
    char **v = malloc(((size_t)argc + (size_t)count + 1) * sizeof *v);
    if (!v) sgl_internal_error("out of memory (options)");
    int m = 0;
    v[m++] = argv[0];
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--sgl-", 6) != 0) v[m++] = argv[i];
        else if (separate_value(argv[i]) && i + 1 < argc) i++;
    }
    for (int k = (int)strlen(blob) + 1; k < n; k += (int)strlen(blob + k) + 1) v[m++] = blob + k;
    v[m] = NULL;
    *nargc = m;
    *shape_env = blob[0] == 'S' ? blob + 1 : NULL;
    *keep = blob;
    return v;
}
#endif

/* --sgl-help: the runtime's options, on standard output. */
static void option_help(void)
{
    printf("%s, compiled by sglc. Arguments that begin with --sgl- are the runtime's;\n"
           "every other argument is the program's (arg_int, arg_float, arg_str).\n\n"
           "  --sgl-shape S             the machine tree, e.g. 2x2x3 or 2x[1,3] (also $SGL_SHAPE)\n"
           "  --sgl-stats[=FILE.json]   per-level statistics on stderr at the end (or as JSON)\n"
           "  --sgl-trace=FILE.json     a timeline of the run (Chrome/Perfetto trace format)\n"
           "  --sgl-report=FILE.html    a picture of the run: the tree, busy and waiting time,\n"
           "                            imbalance per level, timeline (one self-contained page)\n"
           "  --sgl-predict=MACHINE.json  predicted against measured cost\n"
           "  --sgl-speeds=auto|auto:MS|workers  the children's speeds for child_speeds()\n"
           "  --sgl-machine FILE        a machine file written by sglc probe (also $SGL_MACHINE)\n"
           "  --sgl-help                this text\n",
           sgl_prog->file);
}

static void option_error(const char *bad)
{
    fprintf(stderr, "%s: runtime error: unknown or malformed runtime option '%s' (known: --sgl-shape S, "
            "--sgl-stats[=FILE.json], --sgl-trace=FILE.json, --sgl-report=FILE.html, "
            "--sgl-predict=MACHINE.json, "
            "--sgl-speeds=auto|auto:MS|workers, --sgl-machine FILE, --sgl-help)\n",
            sgl_prog->file, bad);
}

/* ------------------------------------------------------------------ */
/* The machine shape and its mapping onto processes                     */

typedef struct machine_plan {
    sgl_shape shape;
    int plevels;   /* how many leading levels are processes */
    int nprocs, rank;
    int64_t leaf;  /* the id of this rank's node of depth plevels */
    int j0;        /* the depth of the highest node this process hosts */
} machine_plan;

/* ---- shapes ---- */

#define SHAPE_HINT "expected levels like 2x2x3 or 2x[1,3], or 0"
#define SHAPE_MAX_COUNT (1 << 20)

void sgl_shape_free(sgl_shape *sh)
{
    free(sh->nkids);
    free(sh->first);
    free(sh->nworkers);
    memset(sh, 0, sizeof *sh);
}

static int level_count(int *const *counts, const int64_t *len, int k, int64_t i)
{
    return counts[k][len[k] == 1 ? 0 : i];
}

bool sgl_shape_make(sgl_shape *sh, int nlevels, int *const *counts, const int64_t *len,
                    char *err, size_t errsz)
{
    memset(sh, 0, sizeof *sh);
    if (nlevels < 0 || nlevels > SGL_MAX_LEVELS) {
        snprintf(err, errsz, "more than %d levels", SGL_MAX_LEVELS);
        return false;
    }
    sh->nlevels = nlevels;
    sh->off[0] = 0;
    sh->off[1] = 1;
    for (int k = 0; k < nlevels; k++) {
        int64_t w = sh->off[k + 1] - sh->off[k]; /* the nodes of depth k */
        if (len[k] != 1 && len[k] != w) {
            snprintf(err, errsz, "level %d lists %lld counts for %lld nodes", k + 1,
                     (long long)len[k], (long long)w);
            return false;
        }
        int64_t nw = 0;
        for (int64_t i = 0; i < w; i++) {
            int c = level_count(counts, len, k, i);
            if (c < 1 || c > SHAPE_MAX_COUNT) {
                snprintf(err, errsz, "level %d: a count of %d (counts are 1 to %d)", k + 1, c,
                         SHAPE_MAX_COUNT);
                return false;
            }
            nw += c;
            if (sh->off[k + 1] + nw > SGL_MAX_NODES) {
                snprintf(err, errsz, "more than %lld nodes", (long long)SGL_MAX_NODES);
                return false;
            }
        }
        sh->off[k + 2] = sh->off[k + 1] + nw;
    }
    int64_t nn = sh->nnodes = sh->off[nlevels + 1];
    sh->nkids = malloc((size_t)nn * sizeof *sh->nkids);
    sh->first = malloc((size_t)nn * sizeof *sh->first);
    sh->nworkers = malloc((size_t)nn * sizeof *sh->nworkers);
    if (!sh->nkids || !sh->first || !sh->nworkers) {
        sgl_shape_free(sh);
        snprintf(err, errsz, "out of memory");
        return false;
    }
    for (int d = 0; d <= nlevels; d++) {
        int64_t next = sh->off[d + 1]; /* the next unused id of depth d + 1 */
        for (int64_t id = sh->off[d]; id < sh->off[d + 1]; id++) {
            int c = d < nlevels ? level_count(counts, len, d, id - sh->off[d]) : 0;
            sh->nkids[id] = c;
            sh->first[id] = c ? next : -1;
            next += c;
        }
    }
    for (int64_t id = nn - 1; id >= 0; id--) {
        int64_t w = sh->nkids[id] ? 0 : 1;
        for (int i = 0; i < sh->nkids[id]; i++) w += sh->nworkers[sh->first[id] + i];
        sh->nworkers[id] = w;
    }
    return true;
}

int64_t sgl_shape_parent(const sgl_shape *sh, int depth, int64_t id)
{
    /* the last node of depth - 1 whose first child is at or before id */
    int64_t lo = sh->off[depth - 1], hi = sh->off[depth] - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (sh->first[mid] <= id) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

int sgl_shape_child_index(const sgl_shape *sh, int depth, int64_t id)
{
    return depth == 0 ? 0 : (int)(id - sh->first[sgl_shape_parent(sh, depth, id)]);
}

/* A count at *p (digits: 1 .. SHAPE_MAX_COUNT) of level k; moves *p past
 * it.  False, with the error in err, if there is none. */
static bool parse_count(const char **p, int k, int *v, char *err, size_t errsz)
{
    const char *s = *p;
    if (*s < '0' || *s > '9') {
        if (*s == '\0')
            snprintf(err, errsz, "level %d: expected a count, found the end (" SHAPE_HINT ")", k);
        else
            snprintf(err, errsz, "level %d: expected a count, found '%c' (" SHAPE_HINT ")", k,
                     *s);
        return false;
    }
    long x = 0;
    while (*s >= '0' && *s <= '9') {
        if (x <= SHAPE_MAX_COUNT) x = 10 * x + (*s - '0');
        s++;
    }
    if (x < 1 || x > SHAPE_MAX_COUNT) {
        if (x == 0)
            snprintf(err, errsz, "level %d: a count of 0 (counts are at least 1; '0' alone is "
                     "the one-node tree)", k);
        else
            snprintf(err, errsz, "level %d: a count larger than %d", k, SHAPE_MAX_COUNT);
        return false;
    }
    *v = (int)x;
    *p = s;
    return true;
}

static void skip_blanks(const char **p)
{
    while (**p == ' ' || **p == '\t') (*p)++;
}

/* A level in brackets, "[a,b,...]" at *p (past the '['), of level k, for
 * the `above` nodes of level k - 1; moves *p past the ']'. */
static bool parse_list(const char **p, int k, int64_t above, int **counts, int64_t *len,
                       char *err, size_t errsz)
{
    int64_t n = 0, cap = 0;
    int *c = NULL;
    for (;;) {
        skip_blanks(p);
        if (**p == ']' && n == 0) {
            snprintf(err, errsz, "level %d: an empty list [] (" SHAPE_HINT ")", k);
            goto fail;
        }
        int v;
        if (!parse_count(p, k, &v, err, errsz)) goto fail;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            if (cap > SGL_MAX_NODES) {
                snprintf(err, errsz, "more than %lld nodes", (long long)SGL_MAX_NODES);
                goto fail;
            }
            int *g = realloc(c, (size_t)cap * sizeof *g);
            if (!g) {
                snprintf(err, errsz, "out of memory");
                goto fail;
            }
            c = g;
        }
        c[n++] = v;
        skip_blanks(p);
        if (**p == ',') {
            (*p)++;
        } else if (**p == ']') {
            (*p)++;
            break;
        } else if (**p == '\0') {
            snprintf(err, errsz, "level %d: missing ']' (" SHAPE_HINT ")", k);
            goto fail;
        } else {
            snprintf(err, errsz, "level %d: expected ',' or ']' after a count, found '%c' ("
                     SHAPE_HINT ")", k, **p);
            goto fail;
        }
    }
    if (n != above) {
        if (k == 1)
            snprintf(err, errsz, "level 1 lists %lld counts, but there is one node (the root) "
                     "above it", (long long)n);
        else
            snprintf(err, errsz, "level %d lists %lld counts, but level %d has %lld node%s", k,
                     (long long)n, k - 1, (long long)above, above == 1 ? "" : "s");
        goto fail;
    }
    *counts = c;
    *len = n;
    return true;
fail:
    free(c);
    return false;
}

bool sgl_parse_shape(const char *text, sgl_shape *sh, char *err, size_t errsz)
{
    memset(sh, 0, sizeof *sh);
    if (strcmp(text, "0") == 0) return sgl_shape_make(sh, 0, NULL, NULL, err, errsz);
    int *counts[SGL_MAX_LEVELS];
    int64_t len[SGL_MAX_LEVELS];
    int n = 0;
    int64_t width = 1; /* the nodes of the level above */
    bool ok = false;
    const char *p = text;
    for (;;) {
        int k = n + 1;
        if (n == SGL_MAX_LEVELS) {
            snprintf(err, errsz, "more than %d levels", SGL_MAX_LEVELS);
            goto done;
        }
        if (*p == '[') {
            p++;
            if (!parse_list(&p, k, width, &counts[n], &len[n], err, errsz)) goto done;
        } else {
            int v;
            if (!parse_count(&p, k, &v, err, errsz)) goto done;
            counts[n] = malloc(sizeof *counts[n]);
            if (!counts[n]) {
                snprintf(err, errsz, "out of memory");
                goto done;
            }
            counts[n][0] = v;
            len[n] = 1;
        }
        int64_t w = 0;
        for (int64_t i = 0; i < width; i++) w += counts[n][len[n] == 1 ? 0 : i];
        n++;
        if (w > SGL_MAX_NODES) {
            snprintf(err, errsz, "more than %lld nodes", (long long)SGL_MAX_NODES);
            goto done;
        }
        width = w;
        if (*p == '\0') break;
        if (*p != 'x' && *p != 'X') {
            snprintf(err, errsz, "expected 'x' after level %d, found '%c' (" SHAPE_HINT ")", k,
                     *p);
            goto done;
        }
        p++;
    }
    ok = sgl_shape_make(sh, n, counts, len, err, errsz);
done:
    for (int i = 0; i < n; i++) free(counts[i]);
    return ok;
}

static void shape_error(const char *msg, const char *text)
{
    fflush(stdout);
    fprintf(stderr, "%s: runtime error: bad machine shape '%s': %s\n", sgl_prog->file, text, msg);
}

/* The shape: the one given, or one level of processes (if more than one)
 * and one of threads: each process's own thread count (the level is left
 * out if every process has one thread).  False (and a message from
 * rank 0) if the text is not a shape. */
static bool choose_shape(const char *text, machine_plan *m)
{
    char err[256];
    if (text) { /* "" from --sgl-shape: not a shape */
        if (!sgl_parse_shape(text, &m->shape, err, sizeof err)) {
            if (m->rank == 0) shape_error(err, text);
            return false;
        }
        return true;
    }
    int *threads = malloc((size_t)m->nprocs * sizeof *threads);
    if (!threads) sgl_internal_error("out of memory (shape)");
    sgl_mpi_allgather_int(sgl_local_default_threads(), threads);
    bool any = false;
    for (int r = 0; r < m->nprocs; r++)
        if (threads[r] > 1) any = true;
    int procs = m->nprocs;
    int *counts[2];
    int64_t len[2];
    int n = 0;
    if (m->nprocs > 1) {
        counts[n] = &procs;
        len[n++] = 1;
    }
    if (any) {
        counts[n] = threads;
        len[n++] = m->nprocs;
    }
    bool ok = sgl_shape_make(&m->shape, n, counts, len, err, sizeof err);
    free(threads);
    if (!ok) {
        if (m->rank == 0) shape_error(err, "(default)");
        return false;
    }
    return true;
}

/* The process levels: the shortest prefix of levels whose last level has
 * as many nodes as there are processes (for a regular shape: whose
 * product is the number of processes).  False (and a message from rank 0)
 * if none has.  Then this rank's node and the highest of its ancestors
 * that it hosts: rank r hosts the r-th node of depth plevels, and every
 * ancestor of it of which it is the first descendant at that depth. */
static bool map_processes(const char *text, machine_plan *m)
{
    const sgl_shape *sh = &m->shape;
    m->plevels = 0;
    if (m->nprocs > 1) {
        while (m->plevels < sh->nlevels &&
               sh->off[m->plevels + 1] - sh->off[m->plevels] < m->nprocs)
            m->plevels++;
        if (sh->off[m->plevels + 1] - sh->off[m->plevels] != m->nprocs) {
            if (m->rank == 0) {
                char msg[96 + 24 * SGL_MAX_LEVELS];
                int w = snprintf(msg, sizeof msg,
                                 "no level has as many nodes as the %d MPI processes", m->nprocs);
                if (sh->nlevels == 0 && w > 0 && (size_t)w < sizeof msg)
                    w += snprintf(msg + w, sizeof msg - (size_t)w, " (the root is alone)");
                if (sh->nlevels == 1 && w > 0 && (size_t)w < sizeof msg) {
                    long long k = (long long)(sh->off[2] - sh->off[1]);
                    snprintf(msg + w, sizeof msg - (size_t)w, " (its one level has %lld node%s)",
                             k, k == 1 ? "" : "s");
                }
                for (int d = 1; sh->nlevels > 1 && d <= sh->nlevels && w > 0 &&
                                (size_t)w < sizeof msg; d++)
                    w += snprintf(msg + w, sizeof msg - (size_t)w, "%s %lld",
                                  d > 1 ? "," : " (the levels have",
                                  (long long)(sh->off[d + 1] - sh->off[d]));
                if (sh->nlevels > 1 && w > 0 && (size_t)w < sizeof msg)
                    snprintf(msg + w, sizeof msg - (size_t)w, " nodes)");
                shape_error(msg, text ? text : "(default)");
            }
            return false;
        }
    }
    m->leaf = sh->off[m->plevels] + m->rank;
    m->j0 = m->plevels;
    for (int64_t id = m->leaf; m->j0 > 0 && sgl_shape_child_index(sh, m->j0, id) == 0; m->j0--)
        id = sgl_shape_parent(sh, m->j0, id);
    return true;
}

/* The most threads one process runs (the workers of its subtree, every
 * thread level together: OpenMP gives each child of a thread level its own
 * thread).  libgomp fails past a few tens of thousands (a crash inside
 * libgomp at 70,000 children, `Thread creation failed` at 50,000 here), so
 * a bigger thread level is a bad shape, reported at start-up.  The seq
 * target, which runs children one after the other, has no such limit. */
#define SGL_MAX_THREADS 8192

/* False (and a message from rank 0) if a process would run more than
 * SGL_MAX_THREADS threads. */
static bool threads_fit(const char *text, const machine_plan *m)
{
#ifdef SGL_USE_OMP
    const sgl_shape *sh = &m->shape;
    int64_t most = 0, at = 0;
    for (int64_t id = sh->off[m->plevels]; id < sh->off[m->plevels + 1]; id++)
        if (sh->nworkers[id] > most) {
            most = sh->nworkers[id];
            at = id - sh->off[m->plevels];
        }
    if (most <= SGL_MAX_THREADS) return true;
    if (m->rank == 0) {
        char msg[256];
        if (m->nprocs > 1)
            snprintf(msg, sizeof msg,
                     "MPI process %lld would run %lld threads, more than the %d a process may run "
                     "(use fewer threads, more processes, or the seq target)",
                     (long long)at, (long long)most, SGL_MAX_THREADS);
        else
            snprintf(msg, sizeof msg,
                     "%lld threads, more than the %d a process may run "
                     "(use fewer threads, more MPI processes, or the seq target)",
                     (long long)most, SGL_MAX_THREADS);
        shape_error(msg, text ? text : "(default)");
    }
    return false;
#else
    (void)text;
    (void)m;
    return true;
#endif
}

/* ------------------------------------------------------------------ */
/* Building the tree                                                    */

/* The process-level nodes this process hosts, chain[j0..plevels] (one
 * per depth, child 0 of the one above), connected through MPI, and the
 * subtree below chain[plevels], all in this process. */
static sgl_node *build_tree(machine_plan *m)
{
    sgl_node *chain = sgl_lines_calloc((size_t)(m->plevels + 1), sizeof *chain);
    if (!chain) sgl_internal_error("out of memory (tree)");
    int64_t id = m->leaf;
    for (int l = m->plevels; l >= m->j0; l--) {
        sgl_node_init(&chain[l], NULL, &m->shape, l, id, sgl_shape_child_index(&m->shape, l, id));
        if (l > 0) id = sgl_shape_parent(&m->shape, l, id);
    }
    sgl_mpi_connect(chain, m->plevels, m->j0);
    sgl_local_build(&chain[m->plevels]);
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
    omp_spin_reexec(argv);
    sgl_prog = prog;
    sgl_ignore_sigpipe(); /* from the start: a broken pipe is EPIPE (sgl_output.c) */
    sgl_crash_install(prog->file); /* before MPI_Init: Open MPI keeps it (sgl_crash.c) */
    if (started_by_mpi_launcher()) return 1;
    machine_plan m;
    sgl_mpi_init(&argc, &argv, &m.nprocs, &m.rank);
#ifdef SGL_USE_MPI
    if (sgl_mpi_up) sgl_crash_set_rank(m.rank);
#endif
    /* other ranks may run on the other cores: the unmapper stays on its
     * waker's (sgl_blocks.c) */
    sgl_unmap_spread(m.nprocs == 1);
    run_options o;
    char **opt_argv = NULL, *opt_keep = NULL;
#ifdef SGL_USE_MPI
    if (m.nprocs > 1) {
        int nargc;
        const char *shape_env;
        opt_argv = agreed_argv(argc, argv, m.rank, &nargc, &shape_env, &opt_keep);
        read_options(nargc, opt_argv, shape_env, &o);
    } else
#endif
        read_options(argc, argv, getenv("SGL_SHAPE"), &o);
    if (o.bad) {
        if (m.rank == 0) option_error(o.bad);
        sgl_mpi_finalize();
        return 1;
    }
    if (o.help) {
        if (m.rank == 0) option_help();
        sgl_mpi_finalize();
        free(o.args);
        free(opt_argv);
        free(opt_keep);
        return 0;
    }
    if (!sgl_stacks_fit(m.rank, m.nprocs)) {
        sgl_mpi_finalize();
        free(o.args);
        free(opt_argv);
        free(opt_keep);
        return 1;
    }
    if (!choose_shape(o.shape_text, &m) || !map_processes(o.shape_text, &m) ||
        !threads_fit(o.shape_text, &m)) {
        sgl_shape_free(&m.shape);
        sgl_mpi_finalize();
        free(o.args);
        return 1;
    }
    sgl_local_configure(m.shape.nlevels - m.plevels);

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
    sgl_instr_start(prog, m.plevels, m.shape.nlevels, o.shape_text, m.nprocs, m.rank);

    int status = run_hosted(top);
    fflush(stdout);
    sgl_nodevars_free_tree(top); /* this process's nodes: no thread runs SGL code now */
    sgl_instr_finish();
    sgl_mpi_finalize();
    free(o.args);
    free(opt_argv);
    free(opt_keep);
    sgl_shape_free(&m.shape);
    if (status != 0) sgl_registry_free_all(); /* what the error's longjmp left (sgl_vbuf.h) */
    return status;
}
