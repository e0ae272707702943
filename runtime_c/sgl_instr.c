/*
 * sgl_instr.c: run statistics (--sgl-stats), Chrome trace-event timelines
 * (--sgl-trace) and predicted-against-measured superstep costs
 * (--sgl-predict) for SGL programs.
 *
 * Statistics are kept per superstep site and per level (the depth of the
 * master in the tree) and summed over every master of that level, in
 * every process.  The prediction of one superstep is the BSP cost
 *     max child compute + g_scatter*h_s + g_bcast*h_b + g_gather*h_g + l
 * with g and l of the master's level read from a machine file written by
 * `sglc probe`, the compute times measured, and h the largest number of
 * bytes one child receives or sends (for a scatter of split_by, the
 * largest block's: the child with the largest weight).  Per master, each
 * child's speed (child_speeds()), bytes received and compute time show
 * how evenly a distribution loaded the children.
 */
#define _POSIX_C_SOURCE 200809L
#include "sgl_internal.h"
#include "sgl_json.h"
#include "sgl_speed.h"

#include <errno.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LEVELS SGL_MAX_LEVELS

#ifndef SGL_NO_INSTR
int sgl_instr;
#endif

static char *stats_path;   /* NULL: summary on stderr */
static char *trace_path;
static char *predict_path;

typedef struct acc {
    double count, wall, cmax, cmean;
    double hsum[3], bytes[3];
    double hmax[3];
} acc;

static acc *accs; /* [nsites][MAX_LEVELS] */
static int n_sites, p_levels, n_levels, n_procs, my_rank;
static const sgl_site *const *site_table;
static char *shape_str; /* the shape text as given, "" for the default */
static double t_start;

typedef struct machine_level {
    bool known;
    double l, g[3];
} machine_level;
static machine_level machine[MAX_LEVELS];

static char *dup_str(const char *s) __attribute__((unused));
static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (!p) {
        fprintf(stderr, "sgl: out of memory\n");
        exit(1);
    }
    memcpy(p, s, n);
    return p;
}

int sgl_instr_option(const char *arg)
{
#ifdef SGL_NO_INSTR
    (void)arg;
    return 0;
#else
    if (strcmp(arg, "--sgl-stats") == 0) {
        sgl_instr |= SGL_INSTR_STATS;
        return 1;
    }
    if (strncmp(arg, "--sgl-stats=", 12) == 0) {
        sgl_instr |= SGL_INSTR_STATS;
        stats_path = dup_str(arg + 12);
        return *stats_path ? 1 : -1;
    }
    if (strncmp(arg, "--sgl-trace=", 12) == 0) {
        sgl_instr |= SGL_INSTR_TRACE;
        trace_path = dup_str(arg + 12);
        return *trace_path ? 1 : -1;
    }
    if (strncmp(arg, "--sgl-predict=", 14) == 0) {
        sgl_instr |= SGL_INSTR_PREDICT;
        predict_path = dup_str(arg + 14);
        return *predict_path ? 1 : -1;
    }
    return 0;
#endif
}

/* ------------------------------------------------------------------ */
/* The machine file (docs/machine-file.md): a JSON object with "levels":
 * [{"level": k, "l": ..., "g_scatter": ..., "g_bcast": ..., "g_gather": ...},
 * ...].  Only those keys are read here; a missing l or g is 0. */

static double member_num(const json_doc *d, const json_val *o, const char *key)
{
    const json_val *v = json_get(d, o, key);
    return v && v->kind == JSON_NUMBER ? v->num : 0;
}

/* False, with the reason in why, if the file gives no level's parameters. */
static bool load_machine(const char *path, char *why, size_t whylen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, whylen, "%s", strerror(errno));
        return false;
    }
    sgl_buf text = {0};
    char chunk[4096];
    size_t got;
    bool large = false; /* a machine file is small: /dev/urandom is not read for ever */
    while (!large && (got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        sgl_buf_put(&text, chunk, got);
        large = text.len > (size_t)256 << 20;
    }
    bool failed = !large && ferror(f) != 0;
    fclose(f);
    if (large || failed) {
        snprintf(why, whylen, "%s", large ? "larger than 256 MiB" : "read error");
        sgl_buf_free(&text);
        return false;
    }
    sgl_buf_put(&text, "", 1);
    json_doc doc;
    char jwhy[160];
    bool any = false;
    if (!json_parse(text.data, &doc, jwhy, sizeof jwhy)) {
        snprintf(why, whylen, "not valid JSON: %s", jwhy);
        sgl_buf_free(&text);
        return false;
    }
    const json_val *levels = json_get(&doc, &doc.vals[0], "levels");
    for (int k = 0; levels && levels->kind == JSON_ARRAY && k < levels->n; k++) {
        const json_val *o = json_item(&doc, levels, k);
        const json_val *lv = json_get(&doc, o, "level");
        if (!lv || lv->kind != JSON_NUMBER || lv->num < 0 || lv->num >= MAX_LEVELS) continue;
        machine[(int)lv->num] = (machine_level){true, member_num(&doc, o, "l"),
                                                {member_num(&doc, o, "g_scatter"),
                                                 member_num(&doc, o, "g_bcast"),
                                                 member_num(&doc, o, "g_gather")}};
        any = true;
    }
    if (!any) snprintf(why, whylen, "no \"levels\" with a \"level\"");
    json_free(&doc);
    sgl_buf_free(&text);
    return any;
}

/* ------------------------------------------------------------------ */
/* Statistics                                                           */

void sgl_instr_start(const sgl_program *prog, int plevels, int nlevels, const char *shape_text,
                     int nprocs, int rank)
{
    int nsites = prog->nsites;
    site_table = prog->sites;
    n_sites = nsites;
    p_levels = plevels;
    n_levels = nlevels;
    n_procs = nprocs;
    my_rank = rank;
    free(shape_str);
    shape_str = dup_str(shape_text ? shape_text : "");
    t_start = sgl_wtime();
    if (!sgl_instr) return;
    accs = calloc((size_t)(nsites ? nsites : 1) * MAX_LEVELS, sizeof *accs);
    if (!accs) {
        fprintf(stderr, "sgl: out of memory (statistics)\n");
        exit(1);
    }
    char why[200];
    if ((sgl_instr & SGL_INSTR_PREDICT) && rank == 0 && !load_machine(predict_path, why, sizeof why))
        fprintf(stderr, "sgl-predict: cannot read machine parameters from '%s': %s\n", predict_path,
                why);
}

void sgl_instr_step(const sgl_step_rec *r)
{
    if (!accs || r->level < 0 || r->level >= MAX_LEVELS) return;
    acc *a = &accs[r->site->id * MAX_LEVELS + r->level];
#ifdef SGL_USE_OMP
#pragma omp critical(sgl_instr_lock)
#endif
    {
        a->count += 1;
        a->wall += r->t1 - r->t0;
        a->cmax += r->cmax;
        a->cmean += r->nkids ? r->csum / r->nkids : 0;
        for (int k = 0; k < 3; k++) {
            a->hsum[k] += r->h[k];
            a->bytes[k] += r->bytes[k];
            if (r->h[k] > a->hmax[k]) a->hmax[k] = r->h[k];
        }
    }
}

/* ---- per child of every master (the children's shares) ---- */

typedef struct master_acc {
    const sgl_node *node; /* NULL: an empty slot; after the reduction: unused */
    char path[8 * MAX_LEVELS];
    int depth, nk;
    double count, wall;
    double *speed, *recv, *compute; /* per child */
} master_acc;

static master_acc *masters; /* open addressing on the node's address */
static int masters_cap, masters_n;

static master_acc *master_new(master_acc *m, const sgl_node *n)
{
    m->node = n;
    snprintf(m->path, sizeof m->path, "%s", n->path);
    m->depth = n->depth;
    m->nk = n->nchildren;
    m->count = m->wall = 0;
    m->speed = calloc((size_t)m->nk * 3, sizeof(double));
    if (!m->speed) sgl_internal_error("out of memory (statistics)");
    m->recv = m->speed + m->nk;
    m->compute = m->recv + m->nk;
    sgl_vec sp = sgl_child_speeds((sgl_node *)n);
    for (int i = 0; i < m->nk && i < sp.len; i++) m->speed[i] = ((sgl_float *)sp.data)[i];
    static const sgl_type vec_float = {.kind = SGL_T_VEC, .elem = &sgl_t_float};
    sgl_vec_free(&vec_float, &sp);
    masters_n++;
    return m;
}

/* The record of master n (made on its first superstep); callers hold the lock. */
static master_acc *master_of(const sgl_node *n)
{
    if (2 * (masters_n + 1) > masters_cap) {
        int cap = masters_cap ? 2 * masters_cap : 64;
        master_acc *t = calloc((size_t)cap, sizeof *t);
        if (!t) sgl_internal_error("out of memory (statistics)");
        for (int i = 0; i < masters_cap; i++) {
            if (!masters[i].node) continue;
            size_t h = ((uintptr_t)masters[i].node >> 4) % (size_t)cap;
            while (t[h].node) h = (h + 1) % (size_t)cap;
            t[h] = masters[i];
        }
        free(masters);
        masters = t;
        masters_cap = cap;
    }
    size_t h = ((uintptr_t)n >> 4) % (size_t)masters_cap;
    while (masters[h].node && masters[h].node != n) h = (h + 1) % (size_t)masters_cap;
    return masters[h].node ? &masters[h] : master_new(&masters[h], n);
}

void sgl_instr_children_in(sgl_node *n, const sgl_site *s, const sgl_arg *args)
{
    if (!accs || !(sgl_instr & SGL_INSTR_STATS)) return;
    double b[SGL_MAX_OPS];
    for (int j = 0; j < s->nops; j++)
        b[j] = s->ops[j].kind == SGL_OP_BCAST ? (double)sgl_ser_size(s->ops[j].type, args[j].src) : 0;
#ifdef SGL_USE_OMP
#pragma omp critical(sgl_instr_lock)
#endif
    {
        master_acc *m = master_of(n);
        for (int j = 0; j < s->nops; j++) {
            const sgl_op *op = &s->ops[j];
            if (op->kind == SGL_OP_SCATTER) {
                const sgl_vec *v = args[j].src;
                size_t sz = sgl_sizeof(op->type);
                for (int i = 0; i < m->nk && i < v->len; i++)
                    m->recv[i] += (double)sgl_ser_size(op->type, (const char *)v->data + (size_t)i * sz);
            } else if (op->kind == SGL_OP_BCAST) {
                for (int i = 0; i < m->nk; i++) m->recv[i] += b[j];
            }
        }
    }
}

void sgl_instr_children_out(sgl_node *n, const void *res, const sgl_step_rec *r)
{
    if (!accs || !(sgl_instr & SGL_INSTR_STATS)) return;
    const sgl_child_result *cr = res;
#ifdef SGL_USE_OMP
#pragma omp critical(sgl_instr_lock)
#endif
    {
        master_acc *m = master_of(n);
        m->count += 1;
        m->wall += r->t1 - r->t0;
        for (int i = 0; i < m->nk; i++) m->compute[i] += cr[i].compute;
    }
}

static int master_cmp(const void *a, const void *b)
{
    return sgl_path_cmp(((const master_acc *)a)->path, ((const master_acc *)b)->path);
}

/* Every process's master records onto rank 0, in depth-first order:
 * masters[0 .. masters_n), compacted. */
static void gather_masters(void)
{
    sgl_buf b = {0};
    char num[8 * MAX_LEVELS + 128];
    for (int k = 0; k < masters_cap; k++) {
        master_acc *m = &masters[k];
        if (!m->node) continue;
        snprintf(num, sizeof num, "%s %d %d %.17g %.17g", m->path, m->depth, m->nk, m->count,
                 m->wall);
        sgl_buf_puts(&b, num);
        for (int i = 0; i < m->nk; i++) {
            snprintf(num, sizeof num, " %.17g %.17g %.17g", m->speed[i], m->recv[i], m->compute[i]);
            sgl_buf_puts(&b, num);
        }
        sgl_buf_puts(&b, "\n");
    }
    sgl_buf_put(&b, "", 1);
    char *all = b.data;
#ifdef SGL_USE_MPI
    int len = (int)b.len;
    int *lens = NULL, *displs = NULL;
    size_t total = 0;
    if (my_rank == 0) {
        lens = calloc((size_t)n_procs, sizeof *lens);
        displs = calloc((size_t)n_procs, sizeof *displs);
        if (!lens || !displs) sgl_internal_error("out of memory (statistics)");
    }
    MPI_CHECK(MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD));
    all = NULL;
    if (my_rank == 0) {
        for (int i = 0; i < n_procs; i++) {
            displs[i] = (int)total;
            total += (size_t)lens[i];
        }
        all = malloc(total);
        if (!all) sgl_internal_error("out of memory (statistics)");
    }
    MPI_CHECK(MPI_Gatherv(b.data, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD));
    if (my_rank == 0) /* each process's text ends with a NUL: make them one text */
        for (size_t i = 0; i + 1 < total; i++)
            if (all[i] == '\0') all[i] = '\n';
    free(lens);
    free(displs);
#endif
    if (my_rank == 0) {
        /* parse the lines back into records (in place of this process's) */
        int n = 0;
        for (const char *p = all; *p; p++) n += *p == '\n';
        master_acc *t = calloc((size_t)(n ? n : 1), sizeof *t);
        if (!t) sgl_internal_error("out of memory (statistics)");
        char *p = all;
        int k = 0;
        while (k < n && *p) {
            while (*p == '\n') p++;
            if (!*p) break;
            master_acc *m = &t[k];
            int used = 0;
            if (sscanf(p, "%255s %d %d %lf %lf%n", m->path, &m->depth, &m->nk, &m->count,
                       &m->wall, &used) != 5)
                break;
            p += used;
            m->speed = calloc((size_t)(m->nk ? m->nk : 1) * 3, sizeof(double));
            if (!m->speed) sgl_internal_error("out of memory (statistics)");
            m->recv = m->speed + m->nk;
            m->compute = m->recv + m->nk;
            for (int i = 0; i < m->nk; i++) {
                m->speed[i] = strtod(p, &p);
                m->recv[i] = strtod(p, &p);
                m->compute[i] = strtod(p, &p);
            }
            k++;
        }
        qsort(t, (size_t)k, sizeof *t, master_cmp);
        for (int i = 0; i < masters_cap; i++)
            if (masters[i].node) free(masters[i].speed);
        free(masters);
        masters = t;
        masters_n = k;
    }
#ifdef SGL_USE_MPI
    free(all);
#endif
    sgl_buf_free(&b);
}

#define SUMMARY_MASTERS 16 /* masters in the summary on stderr; the JSON file has all */

static void write_children(FILE *f)
{
    if (!f) {
        fprintf(stderr, "sgl-stats: %-12s %5s %8s %7s %12s %7s %12s %7s  (speeds: %s)\n",
                "children of", "child", "speed", "speed%", "recv B", "recv%", "compute s", "busy%",
                sgl_speed_source() ? sgl_speed_source() : "worker counts");
    } else {
        fprintf(f, ",\n  \"speeds\": \"%s\",\n  \"masters\": [",
                sgl_speed_source() ? (strcmp(sgl_speed_source(), "auto") ? "machine" : "auto")
                                   : "workers");
    }
    for (int k = 0; k < masters_n; k++) {
        master_acc *m = &masters[k];
        double ssum = 0, rsum = 0;
        for (int i = 0; i < m->nk; i++) {
            ssum += m->speed[i];
            rsum += m->recv[i];
        }
        if (f) {
            fprintf(f, "%s\n    {\"node\": \"%s\", \"level\": %d, \"supersteps\": %.0f, "
                       "\"time\": %.9g, \"children\": [",
                    k ? "," : "", m->path, m->depth, m->count, m->wall);
            for (int i = 0; i < m->nk; i++)
                fprintf(f, "%s\n      {\"child\": %d, \"speed\": %.9g, \"recv_bytes\": %.0f, "
                           "\"compute\": %.9g}",
                        i ? "," : "", i, m->speed[i], m->recv[i], m->compute[i]);
            fprintf(f, "]}");
            continue;
        }
        if (k == SUMMARY_MASTERS) {
            fprintf(stderr, "sgl-stats: ... %d more masters (all of them: --sgl-stats=FILE.json)\n",
                    masters_n - k);
            break;
        }
        for (int i = 0; i < m->nk; i++)
            fprintf(stderr, "sgl-stats: %-12s %5d %8.4g %7.1f %12.0f %7.1f %12.6f %7.1f\n",
                    i ? "" : m->path, i, m->speed[i], ssum > 0 ? 100 * m->speed[i] / ssum : 0,
                    m->recv[i], rsum > 0 ? 100 * m->recv[i] / rsum : 0, m->compute[i],
                    m->wall > 0 ? 100 * m->compute[i] / m->wall : 0);
    }
    if (f) fprintf(f, "\n  ]");
}

static const char *transport(int level)
{
    if (level < p_levels) return "mpi";
#ifdef SGL_USE_OMP
    return "omp";
#else
    return "seq";
#endif
}

/* Sums and maxima over every process, onto rank 0. */
static void reduce_accs(void)
{
#ifdef SGL_USE_MPI
    size_t n = (size_t)(n_sites ? n_sites : 1) * MAX_LEVELS;
    size_t per = sizeof(acc) / sizeof(double);
    double *sums = malloc(n * per * sizeof(double));
    double *maxs = malloc(n * per * sizeof(double));
    if (!sums || !maxs) sgl_internal_error("out of memory (statistics)");
    MPI_CHECK(MPI_Reduce(accs, sums, (int)(n * per), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Reduce(accs, maxs, (int)(n * per), MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    if (my_rank == 0) {
        memcpy(accs, sums, n * per * sizeof(double));
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < 3; k++) accs[i].hmax[k] = ((acc *)maxs)[i].hmax[k];
    }
    free(sums);
    free(maxs);
#endif
}

static acc level_total(int level)
{
    acc t = {0};
    for (int s = 0; s < n_sites; s++) {
        acc *a = &accs[s * MAX_LEVELS + level];
        t.count += a->count;
        t.wall += a->wall;
        t.cmax += a->cmax;
        t.cmean += a->cmean;
        for (int k = 0; k < 3; k++) {
            t.hsum[k] += a->hsum[k];
            t.bytes[k] += a->bytes[k];
            if (a->hmax[k] > t.hmax[k]) t.hmax[k] = a->hmax[k];
        }
    }
    return t;
}

/* s as a JSON string (a shape may hold tabs: "2x[1,\t3]"). */
static void put_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void write_stats(double total)
{
    FILE *f = stats_path ? fopen(stats_path, "w") : NULL;
    if (stats_path && !f) {
        fprintf(stderr, "sgl-stats: cannot write '%s'\n", stats_path);
        return;
    }
    if (!f) {
        fprintf(stderr, "sgl-stats: shape %s, %d process%s, total %.6f s\n",
                shape_str[0] ? shape_str : "(default)", n_procs, n_procs == 1 ? "" : "es", total);
        fprintf(stderr, "sgl-stats: %5s %-9s %10s %12s %12s %12s %12s %12s %12s %12s %9s\n",
                "level", "transport", "supersteps", "scatter B", "bcast B", "gather B", "h max B",
                "comm+wait s", "compute max", "compute mean", "imbalance");
    } else {
        fprintf(f, "{\n  \"sglc_stats\": 1,\n  \"shape\": ");
        put_json_string(f, shape_str);
        fprintf(f, ",\n  \"nprocs\": %d,\n  \"total_time\": %.9g,\n  \"levels\": [", n_procs,
                total);
    }
    bool first = true;
    for (int l = 0; l < n_levels && l < MAX_LEVELS; l++) {
        acc t = level_total(l);
        if (t.count == 0) continue;
        double hmax = t.hmax[0] + t.hmax[1] + t.hmax[2];
        double imb = t.cmean > 0 ? t.cmax / t.cmean : 1.0;
        double comm = t.wall - t.cmax;
        if (!f) {
            fprintf(stderr, "sgl-stats: %5d %-9s %10.0f %12.0f %12.0f %12.0f %12.0f %12.6f %12.6f %12.6f %9.3f\n",
                    l, transport(l), t.count, t.bytes[0], t.bytes[1], t.bytes[2], hmax, comm,
                    t.cmax, t.cmean, imb);
            continue;
        }
        fprintf(f,
                "%s\n    {\"level\": %d, \"transport\": \"%s\", \"supersteps\": %.0f,\n"
                "     \"bytes\": {\"scatter\": %.0f, \"bcast\": %.0f, \"gather\": %.0f},\n"
                "     \"h_max\": {\"scatter\": %.0f, \"bcast\": %.0f, \"gather\": %.0f},\n"
                "     \"h_sum\": {\"scatter\": %.0f, \"bcast\": %.0f, \"gather\": %.0f},\n"
                "     \"time\": {\"total\": %.9g, \"comm_wait\": %.9g, \"compute_max\": %.9g, "
                "\"compute_mean\": %.9g},\n     \"imbalance\": %.6g}",
                first ? "" : ",", l, transport(l), t.count, t.bytes[0], t.bytes[1], t.bytes[2],
                t.hmax[0], t.hmax[1], t.hmax[2], t.hsum[0], t.hsum[1], t.hsum[2], t.wall, comm,
                t.cmax, t.cmean, imb);
        first = false;
    }
    if (f) fprintf(f, "\n  ]");
    write_children(f);
    if (f) {
        fprintf(f, "\n}\n");
        fclose(f);
    }
}

static void write_predict(void)
{
    fprintf(stderr, "sgl-predict: %-24s %5s %10s %14s %14s %9s\n", "site", "level", "supersteps",
            "predicted s", "measured s", "error");
    double ptot = 0, mtot = 0;
    for (int s = 0; s < n_sites; s++) {
        for (int l = 0; l < MAX_LEVELS; l++) {
            acc *a = &accs[s * MAX_LEVELS + l];
            if (a->count == 0) continue;
            machine_level *m = &machine[l];
            double pred = a->cmax + a->count * m->l;
            for (int k = 0; k < 3; k++) pred += m->g[k] * a->hsum[k];
            char name[96];
            snprintf(name, sizeof name, "%s:%d", site_table[s]->func, site_table[s]->line);
            fprintf(stderr, "sgl-predict: %-24s %5d %10.0f %14.6f %14.6f %8.1f%%%s\n",
                    name, l, a->count, pred, a->wall,
                    a->wall > 0 ? 100.0 * (pred - a->wall) / a->wall : 0.0,
                    m->known ? "" : " (no parameters for this level)");
            ptot += pred;
            mtot += a->wall;
        }
    }
    fprintf(stderr, "sgl-predict: %-24s %5s %10s %14.6f %14.6f %8.1f%%\n", "total", "", "", ptot,
            mtot, mtot > 0 ? 100.0 * (ptot - mtot) / mtot : 0.0);
}

/* ------------------------------------------------------------------ */
/* Timeline                                                             */

typedef struct span {
    const char *what;
    const sgl_site *site;
    double t0, t1;
} span;

struct sgl_track {
    char path[256];
    int id;
    span *spans;
    size_t n, cap;
    sgl_track *next;
};

static sgl_track *tracks;
static int ntracks;

sgl_track *sgl_trace_track(const char *path)
{
    if (!(sgl_instr & SGL_INSTR_TRACE)) return NULL;
    sgl_track *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    snprintf(t->path, sizeof t->path, "%s", path);
    t->id = ntracks++;
    t->next = tracks;
    tracks = t;
    return t;
}

void sgl_trace_span(sgl_track *t, const char *what, const sgl_site *s, double t0, double t1)
{
    if (!t) return;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 256;
        span *p = realloc(t->spans, cap * sizeof *p);
        if (!p) return;
        t->spans = p;
        t->cap = cap;
    }
    t->spans[t->n++] = (span){what, s, t0, t1};
}

static void trace_events(sgl_buf *b)
{
    char line[512];
    snprintf(line, sizeof line,
             "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
             "\"args\":{\"name\":\"rank %d\"}},\n",
             my_rank + 1, my_rank); /* pid = rank + 1: viewers treat pid 0 specially */
    sgl_buf_puts(b, line);
    for (sgl_track *t = tracks; t; t = t->next) {
        snprintf(line, sizeof line,
                 "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                 "\"args\":{\"name\":\"node %s\"}},\n",
                 my_rank + 1, t->id, t->path);
        sgl_buf_puts(b, line);
        for (size_t i = 0; i < t->n; i++) {
            span *sp = &t->spans[i];
            snprintf(line, sizeof line,
                     "{\"name\":\"%s %s:%d\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
                     "\"ts\":%.3f,\"dur\":%.3f},\n",
                     sp->what, sp->site ? sp->site->func : "main", sp->site ? sp->site->line : 0,
                     sp->what, my_rank + 1, t->id, (sp->t0 - t_start) * 1e6, (sp->t1 - sp->t0) * 1e6);
            sgl_buf_puts(b, line);
        }
    }
}

static void write_trace(void)
{
    sgl_buf mine = {0};
    trace_events(&mine);
    char *all = mine.data;
    size_t total = mine.len;
#ifdef SGL_USE_MPI
    int len = (int)mine.len;
    int *lens = NULL, *displs = NULL;
    if (my_rank == 0) {
        lens = calloc((size_t)n_procs, sizeof *lens);
        displs = calloc((size_t)n_procs, sizeof *displs);
        if (!lens || !displs) sgl_internal_error("out of memory (timeline)");
    }
    MPI_CHECK(MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD));
    all = NULL;
    if (my_rank == 0) {
        total = 0;
        for (int i = 0; i < n_procs; i++) {
            displs[i] = (int)total;
            total += (size_t)lens[i];
        }
        all = malloc(total + 1);
        if (!all) sgl_internal_error("out of memory (timeline)");
    }
    char dummy = 0;
    MPI_CHECK(MPI_Gatherv(mine.data ? mine.data : &dummy, len, MPI_CHAR, all, lens, displs,
                          MPI_CHAR, 0, MPI_COMM_WORLD));
    free(lens);
    free(displs);
#endif
    if (my_rank == 0) {
        FILE *f = fopen(trace_path, "w");
        if (!f) {
            fprintf(stderr, "sgl-trace: cannot write '%s'\n", trace_path);
        } else {
            fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
            /* every event ends with ",\n": drop the last one */
            if (total > 2) fwrite(all, 1, total - 2, f);
            fprintf(f, "\n]}\n");
            fclose(f);
        }
    }
#ifdef SGL_USE_MPI
    free(all);
#endif
    sgl_buf_free(&mine);
}

void sgl_instr_finish(void)
{
    if (!sgl_instr) return;
    double total = sgl_wtime() - t_start;
    if (sgl_instr & SGL_INSTR_TRACE) write_trace();
    if (!(sgl_instr & (SGL_INSTR_STATS | SGL_INSTR_PREDICT))) return;
    reduce_accs();
    if (sgl_instr & SGL_INSTR_STATS) gather_masters();
    if (my_rank != 0) return;
    if (sgl_instr & SGL_INSTR_STATS) write_stats(total);
    if (sgl_instr & SGL_INSTR_PREDICT) write_predict();
}
