/*
 * sgl_speed.c: --sgl-speeds=auto (every worker calibrates at start-up)
 * and --sgl-machine FILE (the speeds of a machine file), and the table of
 * worker speeds that child_speeds() sums (sgl_speed.h).
 *
 * The table.  Every process lists the workers it hosts (their paths, e.g.
 * "0.1.2", and with auto their measured rates), the lists are exchanged
 * (MPI_Allgatherv over MPI_COMM_WORLD) and sorted in depth-first order,
 * so every process holds the same table of every worker of the tree.
 * The workers of one subtree are then a contiguous run of the table (the
 * paths that begin with the subtree's path), which child_speeds finds by
 * binary search.  The table knows nothing of the shape, so uneven trees
 * need nothing more.
 *
 * Calibration (auto).  Every worker of every process runs the same
 * integer loop, in chunks, the workers of a process at once on OpenMP
 * threads (on the seq target, whose workers never run at the same time,
 * one measurement serves them all).  Once every worker has run it for a
 * short warm-up (all processes agree with an MPI_Ibarrier, tested between
 * chunks), a window of fixed wall-clock length opens (30 ms, or
 * --sgl-speeds=auto:MS), and it closes for all at once (a second
 * Ibarrier); a worker's rate is its iterations while it saw the window
 * open.  A window of fixed length (not a fixed amount of work) keeps the
 * contention the same for every worker from start to end: a worker
 * sharing a core gets its share of the core for the whole window, and no
 * worker that started late runs alone in it.
 *
 * Determinism.  Rates are divided by the largest and rounded to a
 * multiple of 1/16 (at least 1/16), so that speeds are short exact
 * binary fractions: sums do not depend on their order, a machine whose
 * workers are equal gives 1.0 for every worker (child_speeds then equals
 * the default worker counts), and printed speeds are stable across runs
 * as long as no worker's share moves across a rounding boundary.
 *
 * The machine file is JSON; rank 0 reads and checks it (a small JSON
 * parser below), and broadcasts the outcome, so that an error stops every
 * process with one message and nothing waits.
 */
#define _POSIX_C_SOURCE 200809L
#include "sgl_speed.h"

#include "sgl_internal.h"
#include "sgl_json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SGL_USE_OMP
#include <omp.h>
#endif

enum { SPEED_DEFAULT, SPEED_AUTO, SPEED_FILE };

#define QUANTUM 16.0 /* speeds are multiples of 1/QUANTUM */
#define DEFAULT_WINDOW_MS 30
#define CHUNK 2048 /* loop iterations between two looks at the clock */

static int mode = SPEED_DEFAULT;
static bool mode_by_option;   /* an option beats the environment */
static long window_ms = DEFAULT_WINDOW_MS;
static const char *machine_path;

typedef struct worker_speed {
    char *path;
    double speed; /* raw rate (auto) or the file's number; then normalized */
} worker_speed;

static worker_speed *table; /* depth-first order; NULL: default speeds */
static int64_t nworkers_all;

/* ------------------------------------------------------------------ */
/* Options                                                              */

/* "auto", "auto:MS", "workers": the mode (and window); false if none. */
static bool parse_speeds(const char *v, int *m, long *ms)
{
    if (strcmp(v, "workers") == 0) {
        *m = SPEED_DEFAULT;
        return true;
    }
    if (strcmp(v, "auto") == 0) {
        *m = SPEED_AUTO;
        *ms = DEFAULT_WINDOW_MS;
        return true;
    }
    if (strncmp(v, "auto:", 5) == 0 && v[5] >= '0' && v[5] <= '9') {
        char *end;
        errno = 0;
        long x = strtol(v + 5, &end, 10);
        if (errno || *end || x < 1 || x > 10000) return false;
        *m = SPEED_AUTO;
        *ms = x;
        return true;
    }
    return false;
}

int sgl_speed_option(int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *value = NULL;
    bool speeds;
    bool separate = false;
    if (strcmp(a, "--sgl-speeds") == 0 || strcmp(a, "--sgl-machine") == 0) {
        if (*i + 1 >= argc) return -1;
        speeds = a[6] == 's';
        value = argv[*i + 1];
        separate = true;
    } else if (strncmp(a, "--sgl-speeds=", 13) == 0) {
        speeds = true;
        value = a + 13;
    } else if (strncmp(a, "--sgl-machine=", 14) == 0) {
        speeds = false;
        value = a + 14;
    } else {
        return 0;
    }
    if (speeds) {
        if (!parse_speeds(value, &mode, &window_ms)) return -1;
    } else {
        if (!*value) return -1;
        mode = SPEED_FILE;
        machine_path = value;
    }
    mode_by_option = true;
    if (separate) ++*i;
    return 1;
}

static void speed_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void speed_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    fprintf(stderr, "%s: runtime error: ", sgl_prog->file);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(stderr);
    va_end(ap);
}

/* The environment, when no option chose: $SGL_MACHINE, else $SGL_SPEEDS.
 * False (and a message from rank 0) for a bad $SGL_SPEEDS. */
static bool read_environment(int rank)
{
    if (mode_by_option) return true;
    const char *m = getenv("SGL_MACHINE");
    if (m && *m) {
        mode = SPEED_FILE;
        machine_path = m;
        return true;
    }
    const char *s = getenv("SGL_SPEEDS");
    if (s && *s && !parse_speeds(s, &mode, &window_ms)) {
        if (rank == 0)
            speed_error("bad SGL_SPEEDS '%s' (expected auto, auto:MS or workers)", s);
        return false;
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Paths and the table                                                  */

int sgl_path_cmp(const char *a, const char *b)
{
    for (;;) {
        char *ea, *eb;
        long x = strtol(a, &ea, 10), y = strtol(b, &eb, 10);
        if (x != y) return x < y ? -1 : 1;
        if (!*ea || !*eb) return (*ea != 0) - (*eb != 0);
        a = ea + 1;
        b = eb + 1;
    }
}

static int entry_cmp(const void *a, const void *b)
{
    return sgl_path_cmp(((const worker_speed *)a)->path, ((const worker_speed *)b)->path);
}

/* Whether worker path w lies in the subtree of the node at path p. */
static bool in_subtree(const char *w, const char *p)
{
    size_t n = strlen(p);
    return strncmp(w, p, n) == 0 && (w[n] == '\0' || w[n] == '.');
}

bool sgl_speed_children(const sgl_node *n, double *out)
{
    if (!table) return false;
    char p[8 * SGL_MAX_LEVELS + 16];
    for (int i = 0; i < n->nchildren; i++) {
        snprintf(p, sizeof p, "%s.%d", n->path, i);
        /* the first entry not before p: the subtree's first worker */
        int64_t lo = 0, hi = nworkers_all;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (sgl_path_cmp(table[mid].path, p) < 0) lo = mid + 1;
            else hi = mid;
        }
        double s = 0;
        for (int64_t k = lo; k < nworkers_all && in_subtree(table[k].path, p); k++)
            s += table[k].speed;
        out[i] = s;
    }
    return true;
}

const char *sgl_speed_source(void)
{
    if (!table) return NULL;
    return mode == SPEED_FILE ? machine_path : "auto";
}

/* The workers this process hosts, below (and including) n. */
static void local_workers(sgl_node *n, sgl_node ***list, int *len, int *cap)
{
    if (n->nchildren == 0) {
        if (*len == *cap) {
            *cap = *cap ? 2 * *cap : 16;
            sgl_node **l = realloc(*list, (size_t)*cap * sizeof *l);
            if (!l) sgl_internal_error("out of memory (speeds)");
            *list = l;
        }
        (*list)[(*len)++] = n;
        return;
    }
    for (int i = 0; i < n->nlocal; i++) local_workers(&n->kids[i], list, len, cap);
}

/* ------------------------------------------------------------------ */
/* Calibration                                                          */

/* The calibration of one process's workers, one thread each: every thread
 * runs the loop from its start; once all of them (in every process) have
 * run it for WARM_S, the coordinator (thread 0, the only one that calls
 * MPI) opens the window (phase 1), and after the window closes it (phase
 * 2).  Each thread counts its iterations between the moments it sees the
 * two phases, so a process or thread that starts late (not scheduled yet)
 * cannot run alone at the start of its window: while the window is open,
 * every worker of the tree is in the loop. */
#define WARM_S 0.005

typedef struct calibration {
    _Atomic int ready; /* threads of this process past their warm-up */
    _Atomic int phase; /* 0 warm-up, 1 window open, 2 closed */
    int nthreads;
    double window;
} calibration;

typedef struct coordinator {
    int stage; /* 0 wait for the local threads, 1 for the other processes, 2 window, 3 closing */
    double opened;
#ifdef SGL_USE_MPI
    MPI_Request req;
#endif
} coordinator;

/* One step of thread 0's coordination, at time t, in a process alone
 * (no MPI, or no launcher: sgl_mpi_up false). */
static void coordinate_local(calibration *c, coordinator *k, double t)
{
    if (k->stage == 0 && atomic_load(&c->ready) == c->nthreads) {
        k->opened = t;
        k->stage = 2;
        atomic_store(&c->phase, 1);
    } else if (k->stage == 2 && t - k->opened >= c->window) {
        atomic_store(&c->phase, 2);
    }
}

/* One step of thread 0's coordination, at time t. */
static void coordinate(calibration *c, coordinator *k, double t)
{
#ifdef SGL_USE_MPI
    int done = 0;
    if (!sgl_mpi_up) {
        coordinate_local(c, k, t);
    } else if (k->stage == 0 && atomic_load(&c->ready) == c->nthreads) {
        MPI_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &k->req));
        k->stage = 1;
    } else if (k->stage == 1) {
        MPI_CHECK(MPI_Test(&k->req, &done, MPI_STATUS_IGNORE));
        if (done) {
            k->opened = t;
            k->stage = 2;
            atomic_store(&c->phase, 1);
        }
    } else if (k->stage == 2 && t - k->opened >= c->window) {
        MPI_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &k->req));
        k->stage = 3;
    } else if (k->stage == 3) {
        MPI_CHECK(MPI_Test(&k->req, &done, MPI_STATUS_IGNORE));
        if (done) atomic_store(&c->phase, 2);
    }
#else
    coordinate_local(c, k, t);
#endif
}

/* One thread's rate: iterations per second while the window was open. */
static double calibrate(calibration *c, bool is_coordinator, uint64_t seed)
{
    uint64_t x = seed | 1;
    coordinator k = {0};
    double iters = 0, ia = 0, ta = 0, t, t0 = sgl_wtime();
    bool warm = false, seen = false;
    for (;;) {
        for (int j = 0; j < CHUNK; j++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        iters += CHUNK;
        t = sgl_wtime();
        if (!warm && t - t0 >= WARM_S) {
            warm = true;
            atomic_fetch_add(&c->ready, 1);
        }
        if (is_coordinator) coordinate(c, &k, t);
        int ph = atomic_load(&c->phase);
        if (ph >= 1 && !seen) {
            seen = true;
            ia = iters;
            ta = t;
        }
        if (ph == 2) break;
    }
    volatile uint64_t keep = x; /* the loop's result is used */
    (void)keep;
    return t > ta ? (iters - ia) / (t - ta) : iters / (t - t0);
}

static void calibrate_local(double *rate, int nw)
{
    calibration c;
    atomic_store(&c.ready, 0);
    atomic_store(&c.phase, 0);
    c.window = (double)window_ms / 1000.0;
#ifdef SGL_USE_OMP
    if (nw == 0) nw = 1; /* a process without workers still meets the others */
#pragma omp parallel num_threads(nw)
    {
#pragma omp single
        c.nthreads = omp_get_num_threads();
        /* the implicit barrier of single: every thread sees nthreads */
        int i = omp_get_thread_num();
        double r = calibrate(&c, i == 0, 0x9E3779B97F4A7C15u + (uint64_t)i);
        if (i < nw) rate[i] = r;
    }
#else
    /* seq: the workers of a process run one after the other, each with
     * the whole process: one measurement for all */
    c.nthreads = 1;
    double r = calibrate(&c, true, 0x9E3779B97F4A7C15u);
    for (int i = 0; i < nw; i++) rate[i] = r;
#endif
}

/* ------------------------------------------------------------------ */
/* Sharing the table between processes                                  */

/* Every process's (path, rate) records into one table on every process. */
static void gather_table(sgl_node **mine, const double *rate, int nw)
{
    sgl_buf b = {0};
    for (int i = 0; i < nw; i++) {
        sgl_buf_put(&b, &rate[i], sizeof rate[i]);
        sgl_buf_put(&b, mine[i]->path, strlen(mine[i]->path) + 1);
    }
    char *all = b.data;
    size_t total = b.len;
#ifdef SGL_USE_MPI
    if (sgl_mpi_up) {
    int nprocs = 1;
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    int len = (int)b.len;
    int *lens = malloc((size_t)nprocs * sizeof *lens);
    int *displs = malloc((size_t)nprocs * sizeof *displs);
    if (!lens || !displs) sgl_internal_error("out of memory (speeds)");
    MPI_CHECK(MPI_Allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, MPI_COMM_WORLD));
    total = 0;
    for (int r = 0; r < nprocs; r++) {
        displs[r] = (int)total;
        total += (size_t)lens[r];
        if (total > (size_t)1 << 30) sgl_internal_error("too many workers (speeds)");
    }
    all = malloc(total ? total : 1);
    if (!all) sgl_internal_error("out of memory (speeds)");
    char dummy = 0;
    MPI_CHECK(MPI_Allgatherv(b.data ? b.data : &dummy, len, MPI_BYTE, all, lens, displs,
                             MPI_BYTE, MPI_COMM_WORLD));
    free(lens);
    free(displs);
    }
#endif
    int64_t n = 0;
    for (size_t off = 0; off < total; n++) off += sizeof(double) + strlen(all + off + sizeof(double)) + 1;
    table = calloc((size_t)(n ? n : 1), sizeof *table);
    if (!table) sgl_internal_error("out of memory (speeds)");
    size_t off = 0;
    for (int64_t k = 0; k < n; k++) {
        memcpy(&table[k].speed, all + off, sizeof(double));
        off += sizeof(double);
        table[k].path = sgl_strdup(all + off);
        off += strlen(all + off) + 1;
    }
    nworkers_all = n;
    qsort(table, (size_t)n, sizeof *table, entry_cmp);
    if (all != b.data) free(all);
    sgl_buf_free(&b);
}

/* Divide by the largest and round to a multiple of 1/QUANTUM (>= 1/QUANTUM). */
static void normalize(void)
{
    double top = 0;
    for (int64_t k = 0; k < nworkers_all; k++)
        if (table[k].speed > top) top = table[k].speed;
    for (int64_t k = 0; k < nworkers_all; k++) {
        double q = top > 0 ? floor(table[k].speed / top * QUANTUM + 0.5) : QUANTUM;
        table[k].speed = (q < 1 ? 1 : q) / QUANTUM;
    }
}

/* ------------------------------------------------------------------ */
/* The machine file                                                     */

/* The largest machine file read: the probe's for the largest tree (4M
 * workers, a path and a speed each) is about 100 MiB; /dev/urandom is not
 * read for ever. */
#define MACHINE_FILE_MAX (256 << 20)

/* Rank 0: the file's speeds for the table (its paths), or false with a
 * message printed. */
static bool read_machine(double *speeds)
{
    /* the path and the file's strings quoted for messages (sgl_quote) */
    char qp[1100], qw[200], qv[200];
    sgl_quote(qp, sizeof qp, machine_path, strlen(machine_path));
    FILE *f = fopen(machine_path, "rb");
    if (!f) {
        speed_error("cannot read machine file %s: %s", qp, strerror(errno));
        return false;
    }
    sgl_buf text = {0};
    char chunk[4096];
    size_t got;
    bool large = false;
    while (!large && (got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        sgl_buf_put(&text, chunk, got);
        large = text.len > MACHINE_FILE_MAX;
    }
    bool failed = !large && ferror(f) != 0;
    fclose(f);
    if (failed || large) {
        if (large)
            speed_error("cannot read machine file %s: larger than %d MiB (not a machine file?)",
                        qp, MACHINE_FILE_MAX >> 20);
        else
            speed_error("cannot read machine file %s: read error", qp);
        sgl_buf_free(&text);
        return false;
    }
    sgl_buf_put(&text, "", 1);
    json_doc doc;
    char why[160];
    bool ok = false;
    if (!json_parse(text.data, &doc, why, sizeof why)) {
        speed_error("machine file %s is not valid JSON: %s", qp, why);
        goto done;
    }
    const json_val *root = &doc.vals[0];
    const json_val *ws = json_get(&doc, root, "worker_speeds");
    const json_val *shape = json_get(&doc, root, "shape");
    const char *written = shape && shape->kind == JSON_STRING ? shape->str : NULL;
    if (written) { /* escaped, shown without the quotes */
        sgl_quote(qw, sizeof qw, written, strlen(written));
        qw[strlen(qw) - 1] = '\0';
        written = qw + 1;
    }
    if (root->kind != JSON_OBJECT || !ws) {
        speed_error("machine file %s has no \"worker_speeds\" (write one with `sglc probe`)",
                    qp);
        goto done;
    }
    if (ws->kind != JSON_ARRAY) {
        speed_error("machine file %s: \"worker_speeds\" must be a list of numbers", qp);
        goto done;
    }
    if (ws->n != nworkers_all) {
        speed_error("machine file %s has speeds for %d worker%s, but this tree has %lld%s%s%s",
                    qp, ws->n, ws->n == 1 ? "" : "s", (long long)nworkers_all,
                    written ? " (the file was written for shape " : "", written ? written : "",
                    written ? ")" : "");
        goto done;
    }
    for (int k = 0; k < ws->n; k++) {
        const json_val *v = json_item(&doc, ws, k);
        if (v->kind != JSON_NUMBER || !(v->num > 0) || !isfinite(v->num)) {
            speed_error("machine file %s: worker_speeds[%d] must be a positive number",
                        qp, k);
            goto done;
        }
        speeds[k] = v->num;
    }
    const json_val *wp = json_get(&doc, root, "worker_paths");
    if (wp) {
        bool good = wp->kind == JSON_ARRAY && wp->n == ws->n;
        for (int k = 0; good && k < wp->n; k++) {
            const json_val *v = json_item(&doc, wp, k);
            if (v->kind != JSON_STRING || strcmp(v->str, table[k].path) != 0) {
                speed_error("machine file %s was written for another tree: its worker %d is "
                            "%s, this tree's is '%s'%s%s%s",
                            qp, k, v->kind == JSON_STRING ? sgl_quote(qv, sizeof qv, v->str, strlen(v->str)) : "?",
                            table[k].path, written ? " (the file is for shape " : "",
                            written ? written : "", written ? ")" : "");
                goto done;
            }
        }
        if (!good) {
            speed_error("machine file %s: \"worker_paths\" must list one path per speed",
                        qp);
            goto done;
        }
    }
    ok = true;
done:
    json_free(&doc);
    sgl_buf_free(&text);
    return ok;
}

/* ------------------------------------------------------------------ */
/* Start-up                                                             */

bool sgl_speed_start(sgl_node *top, int rank)
{
    int ok_env = read_environment(rank);
#ifdef SGL_USE_MPI
    /* every process follows rank 0's options (one broadcast), so that
     * processes started with different options or environments still
     * meet in the same collective calls */
    if (sgl_mpi_up) {
        long opt[3] = {ok_env, mode, window_ms};
        MPI_CHECK(MPI_Bcast(opt, 3, MPI_LONG, 0, MPI_COMM_WORLD));
        ok_env = (int)opt[0];
        mode = (int)opt[1];
        window_ms = opt[2];
    }
#endif
    if (!ok_env) return false;
    if (mode == SPEED_DEFAULT) return true;
    sgl_node **mine = NULL;
    int nw = 0, cap = 0;
    local_workers(top, &mine, &nw, &cap);
    double *rate = calloc((size_t)(nw ? nw : 1), sizeof *rate);
    if (!rate) sgl_internal_error("out of memory (speeds)");
    if (mode == SPEED_AUTO) calibrate_local(rate, nw);
    gather_table(mine, rate, nw);
    free(mine);
    free(rate);
    if (mode == SPEED_FILE) {
        double *speeds = malloc((size_t)(nworkers_all ? nworkers_all : 1) * sizeof *speeds);
        if (!speeds) sgl_internal_error("out of memory (speeds)");
        int ok = rank == 0 ? read_machine(speeds) : 0;
#ifdef SGL_USE_MPI
        if (sgl_mpi_up) {
            MPI_CHECK(MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD));
            if (ok)
                MPI_CHECK(MPI_Bcast(speeds, (int)nworkers_all, MPI_DOUBLE, 0, MPI_COMM_WORLD));
        }
#endif
        if (!ok) {
            free(speeds);
            for (int64_t k = 0; k < nworkers_all; k++) free(table[k].path);
            free(table);
            table = NULL;
            return false;
        }
        for (int64_t k = 0; k < nworkers_all; k++) table[k].speed = speeds[k];
        free(speeds);
    }
    normalize();
    return true;
}
