/*
 * sgl_library.c: library mode (sgl_library.h): the machine tree built once
 * inside a host process, and a call boundary around every exported
 * function, so that a run-time error returns an error code instead of
 * stopping the process.
 *
 * Output.  The root is built with is_root false, so sgl_flush_root never
 * writes to stdout: the root's output stays in its buffer (past the spill
 * threshold, in its spill file, like any node's but the executable's
 * root), in the deterministic order (sgl_merge_results), and is handed to
 * the output function when the call ends, in pieces that end at a line's
 * end (sgl_out_drain).
 *
 * Borrowed vectors.  sgl_lib_import wraps the caller's flat buffer in a
 * buffer header of its own (sgl_vbuf) holding one extra reference for the
 * library, so the buffer is never unique: SGL code copies before writing
 * (copy-on-write) and never frees it.  After the call the library drops
 * its reference and frees the header (never the caller's elements) once
 * nothing refers to it; results are made independent of borrowed buffers
 * first (sgl_lib_export).  A vector the library returned and the caller
 * hands back (owner set) is not shared directly: each of its flat buffers
 * gets a range handle of the library's (with an extra reference too, so
 * it is never written in place), inside fresh outer vectors.
 *
 * The temporaries of a failed call (sgl_vbuf.h).  A run-time error
 * longjmps out of generated code, past the C temporaries that hold
 * vectors (no frame holds them).  In a library build (SGL_LIBRARY) every
 * buffer and handle allocated during a call is on a registry list of its
 * thread (sgl_registry.c; cross-thread frees, as after a gather, lock the
 * list the buffer is on), and leaves it when freed.  When the call fails,
 * the boundary first releases the frames of every node and the imported
 * parameters, by their references; whatever is still registered then is
 * unreachable from anything that lives on: the caller holds only
 * buffers of earlier calls, which a call never writes (shared, or behind
 * the library's handles), and no earlier buffer refers to one of this
 * call.  The sweep drops the references those buffers hold to unregistered
 * ones (a handle's parent, the elements of a vector of vectors), then
 * frees their memory, without looking at their reference counts.  When a
 * call succeeds, the lists are emptied without freeing: the results and
 * the children's frames live on, unregistered.
 */
#define _POSIX_C_SOURCE 200809L
#include "sgl_library.h"
#include "sgl_internal.h"
#include "sgl_vbuf.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SGL_USE_OMP
#include <omp.h>
#endif

static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local bool lib_in_call;

/* Internal errors (sgl_lib_internal_error): lib_running while a call runs
 * (on any of the tree's threads), lib_init_jb while sgl_lib_init builds
 * the tree (on the calling thread); lib_internal once an internal error
 * happened, with its message, until the next sgl_lib_init. */
static atomic_bool lib_running;
static _Thread_local jmp_buf *lib_init_jb;
static atomic_int lib_internal;
static char lib_internal_msg[1024];

static sgl_node *lib_root;
static sgl_shape lib_shape; /* lib_root's shape */
static char *lib_args[1];
static sgl_lib_output_fn lib_out_fn;
static void *lib_out_user;

/* the last error of this thread's calls, and its parts */
static _Thread_local char lib_err[1600];
static _Thread_local char lib_err_node[8 * SGL_MAX_LEVELS];
static _Thread_local char lib_err_what[1400];
static _Thread_local int lib_err_line, lib_err_col;

/* the data pointers borrowed by the last call, for tests (sgl_lib_borrowed) */
#define LIB_NOTED 8
static const void *lib_noted[LIB_NOTED];
static int lib_nnoted;

/* the headers the call running now holds a reference to (dropped when it
 * ends): of buffers borrowed from the caller (copied before they are
 * returned), and the handles of the library's earlier results handed back
 * (returned as they are); and the imported parameters */
typedef struct lib_held {
    sgl_vbuf *b;
    const sgl_type *et;
    bool borrowed;
} lib_held;
static lib_held *lib_borrowed;
static int64_t lib_nborrowed, lib_borrowed_cap;
typedef struct lib_param {
    const sgl_type *vt;
    sgl_vec v;
} lib_param;
static lib_param *lib_params;
static int64_t lib_nparams, lib_params_cap;

static void set_error(const char *msg)
{
    snprintf(lib_err, sizeof lib_err, "%s", msg);
    lib_err_line = lib_err_col = 0;
    lib_err_node[0] = '\0';
    snprintf(lib_err_what, sizeof lib_err_what, "%s", msg);
}

/* Split "FILE:L:C: runtime error: WHAT (node PATH)" into its parts. */
static void parse_error(const char *msg)
{
    set_error(msg);
    const char *p = msg;
    const char *file = sgl_prog ? sgl_prog->file : "";
    size_t fl = strlen(file);
    if (fl && strncmp(p, file, fl) == 0 && p[fl] == ':') {
        p += fl + 1;
        int line = 0, col = 0, used = 0;
        if (sscanf(p, "%d:%d:%n", &line, &col, &used) == 2 && used > 0) {
            lib_err_line = line;
            lib_err_col = col;
        }
    }
    const char *tag = strstr(msg, "runtime error: ");
    const char *what = tag ? tag + strlen("runtime error: ") : msg;
    const char *node = strstr(what, " (node ");
    const char *last = node;
    while (last && (last = strstr(last + 1, " (node ")) != NULL) node = last;
    size_t wl = node ? (size_t)(node - what) : strlen(what);
    if (wl >= sizeof lib_err_what) wl = sizeof lib_err_what - 1;
    memcpy(lib_err_what, what, wl);
    lib_err_what[wl] = '\0';
    if (node) {
        const char *s = node + strlen(" (node ");
        size_t nl = strcspn(s, ")");
        if (nl >= sizeof lib_err_node) nl = sizeof lib_err_node - 1;
        memcpy(lib_err_node, s, nl);
        lib_err_node[nl] = '\0';
    }
}

const char *sgl_lib_last_error(void) { return lib_err; }
int sgl_lib_last_error_line(void) { return lib_err_line; }
int sgl_lib_last_error_col(void) { return lib_err_col; }
const char *sgl_lib_last_error_node(void) { return lib_err_node; }
const char *sgl_lib_last_error_what(void) { return lib_err_what; }

const void *sgl_lib_borrowed(int i)
{
    return i >= 0 && i < lib_nnoted ? lib_noted[i] : NULL;
}

void sgl_lib_set_output(sgl_lib_output_fn fn, void *user)
{
    lib_out_fn = fn;
    lib_out_user = user;
}

/* ------------------------------------------------------------------ */
/* The tree                                                             */

/* Release every frame of n and below, and empty their output. */
static void reset_nodes(sgl_node *n)
{
    for (int64_t i = 0; i < n->nslots; i++) {
        sgl_frame_slot *s = &n->slots[i];
        if (s->frame) {
            s->free_fn(s->frame);
            free(s->frame);
        }
        *s = (sgl_frame_slot){-1, -1, NULL, NULL};
    }
    n->cur = -1;
    free(n->errmsg);
    n->errmsg = NULL;
    /* a failed call may have cancelled nodes (sgl_tree.c): the next starts afresh */
    atomic_store(&n->head.cancelled, 0);
    atomic_store(&n->cur_op, -1);
    atomic_store(&n->cancel_at, INT_MAX);
    sgl_files_clear(&n->files);
    if (n != lib_root) sgl_out_reset(n);
    for (int i = 0; i < n->nlocal; i++) reset_nodes(&n->kids[i]);
}

/* fn(type, vector) for every vector and string inside a value of type t
 * at p: itself if t is a vector or a string, the fields of a struct
 * (nested structs' too, in declaration order), none for other types.
 * Structs are the runtime's own (sgl_type's field table), so a struct
 * crosses the boundary field by field, in the program's own layout. */
static void each_vec(const sgl_type *t, void *p, void (*fn)(const sgl_type *, sgl_vec *))
{
    if (t->kind == SGL_T_VEC || t->kind == SGL_T_STR) {
        fn(t, p);
    } else if (t->kind == SGL_T_STRUCT && t->managed) {
        for (int i = 0; i < t->nfields; i++)
            each_vec(t->fields[i].type, (char *)p + t->fields[i].offset, fn);
    }
}

#ifdef SGL_LIBRARY
/* Register (for the call starting) the buffers of node variable *v that
 * it alone holds (one reference: nothing outside the tree shares them),
 * and so the buffers of its elements.  A failed call frees the node
 * variables (by their references), then sweeps what is registered: a
 * buffer that a temporary of the call still held goes too.  A buffer
 * with more references (shared with the caller's result, or another
 * node's variable) is left alone, never freed by a sweep. */
static void node_track(const sgl_type *vt, sgl_vec *v)
{
    sgl_vbuf *b = v->buf;
    if (!b || b->parent || atomic_load_explicit(&b->refs, memory_order_acquire) != 1) return;
    if (vbuf_link(b)->reg == NULL) sgl_lib_track(b, vt->elem);
    if (sgl_type_owns(vt->elem)) {
        size_t esz = sgl_sizeof(vt->elem);
        char *e = vbuf_data(b);
        for (int64_t i = 0; i < b->used; i++) each_vec(vt->elem, e + (size_t)i * esz, node_track);
    }
}

/* sgl_nodevars_each_tree's function: a node variable of any type that
 * owns memory (a vector, a string, a struct with such fields: then v is
 * the struct, not a sgl_vec) */
static void nodevar_track(const sgl_type *t, sgl_vec *v)
{
    each_vec(t, v, node_track);
}
#endif

static void free_nodes(sgl_node *n)
{
    reset_nodes(n);
    for (int i = 0; i < n->nlocal; i++) free_nodes(&n->kids[i]);
    free(n->kids);
    free(n->slots);
    free(n->res);
    sgl_out_free(n);
}

void sgl_lib_finalize(void)
{
    pthread_mutex_lock(&lib_lock);
    if (lib_root) {
        sgl_tree_shutdown(lib_root, 0);
        sgl_nodevars_free_tree(lib_root);
        free_nodes(lib_root);
        free(lib_root);
        lib_root = NULL;
        sgl_shape_free(&lib_shape);
    }
    pthread_mutex_unlock(&lib_lock);
}

/* fork (a multiprocessing.Pool worker): the child has the calling thread
 * only, not the OpenMP threads, and libgomp would wait for them for ever
 * at the next parallel region.  The child runs every thread level's
 * children one after the other on its one thread instead (the same
 * results: one of the orders threads may take), with fresh locks. */
#ifndef SGL_USE_MPI /* (an mpi build has no sgl_lib_init) */
static void lib_after_fork_child(void)
{
    sgl_local_serial = true;
    pthread_mutex_init(&lib_lock, NULL);
    sgl_unmap_after_fork();
}

static pthread_once_t lib_fork_once = PTHREAD_ONCE_INIT;

static void lib_fork_register(void)
{
    (void)pthread_atfork(NULL, NULL, lib_after_fork_child);
}
#endif

int sgl_lib_init(const sgl_program *prog, const char *shape_text, int threads)
{
#ifdef SGL_USE_MPI
    (void)prog;
    (void)shape_text;
    (void)threads;
    (void)lib_args;
    set_error("the mpi target builds executables only: build the library for the omp or seq target");
    return SGL_LIB_ERR_INIT;
#else
    if (lib_in_call) return SGL_LIB_ERR_BUSY;
    pthread_once(&lib_fork_once, lib_fork_register);
    sgl_lib_finalize();
    atomic_store(&lib_internal, 0);
    sgl_shape shape;
    char err[256];
    bool ok;
    if (shape_text && *shape_text) {
        ok = sgl_parse_shape(shape_text, &shape, err, sizeof err);
    } else {
        int t = threads > 0 ? threads : sgl_local_default_threads();
        int *counts[1] = {&t};
        int64_t len[1] = {1};
        ok = sgl_shape_make(&shape, t > 1 ? 1 : 0, counts, len, err, sizeof err);
    }
    if (!ok) {
        char msg[600];
        snprintf(msg, sizeof msg, "bad machine shape '%.200s': %s",
                 shape_text && *shape_text ? shape_text : "(default)", err);
        set_error(msg);
        return SGL_LIB_ERR_INIT;
    }
    pthread_mutex_lock(&lib_lock);
    sgl_prog = prog;
    lib_args[0] = NULL;
    sgl_set_args(0, lib_args);
    sgl_local_configure(shape.nlevels);
    sgl_node *root = sgl_lines_calloc(1, sizeof *root);
    if (!root) {
        pthread_mutex_unlock(&lib_lock);
        sgl_shape_free(&shape);
        set_error("out of memory (tree)");
        return SGL_LIB_ERR_INIT;
    }
    jmp_buf jb;
    lib_init_jb = &jb;
    if (setjmp(jb) != 0) {
        /* an internal error while building the tree (its parts are lost) */
        lib_init_jb = NULL;
        set_error(lib_internal_msg);
        pthread_mutex_unlock(&lib_lock);
        return SGL_LIB_ERR_INIT;
    }
    lib_shape = shape;
    sgl_node_init(root, NULL, &lib_shape, 0, 0, 0);
    sgl_local_build(root);
    root->is_root = false; /* keeps the output in the buffer (see the top) */
    lib_root = root;
    sgl_tree_start(root);
    lib_init_jb = NULL;
    lib_err[0] = '\0';
    pthread_mutex_unlock(&lib_lock);
    return SGL_LIB_OK;
#endif
}

/* ------------------------------------------------------------------ */
/* Vectors across the boundary                                          */

static void *grow(void *p, int64_t *cap, int64_t need, size_t esz)
{
    if (need <= *cap) return p;
    int64_t c = *cap ? *cap * 2 : 16;
    while (c < need) c *= 2;
    void *q = realloc(p, (size_t)c * esz);
    if (!q) sgl_fail(0, 0, "out of memory (library call)");
    *cap = c;
    return q;
}

static bool is_borrowed(const sgl_vbuf *b)
{
    for (int64_t i = 0; i < lib_nborrowed; i++)
        if (lib_borrowed[i].borrowed && lib_borrowed[i].b == b) return true;
    return false;
}

static void hold(sgl_vbuf *b, const sgl_type *et, bool borrowed)
{
    lib_borrowed = grow(lib_borrowed, &lib_borrowed_cap, lib_nborrowed + 1, sizeof *lib_borrowed);
    lib_borrowed[lib_nborrowed++] = (lib_held){b, et, borrowed};
}

static void import_into(const sgl_type *vt, const sgl_lib_vec *in, sgl_vec *out);

/* One value of type t from the caller's memory at in (the program's own
 * layout: a struct's vector and string fields are sgl_lib_vec) to out. */
static void import_value(const sgl_type *t, const void *in, void *out)
{
    if (t->kind == SGL_T_VEC || t->kind == SGL_T_STR) {
        import_into(t, in, out);
    } else if (t->kind == SGL_T_STRUCT && t->managed) {
        for (int i = 0; i < t->nfields; i++) {
            const sgl_field *f = &t->fields[i];
            import_value(f->type, (const char *)in + f->offset, (char *)out + f->offset);
        }
    } else {
        memcpy(out, in, sgl_sizeof(t));
    }
}

static void import_into(const sgl_type *vt, const sgl_lib_vec *in, sgl_vec *out)
{
    *out = (sgl_vec){NULL, 0, NULL};
    if (!in || in->len <= 0) return;
    const sgl_type *et = vt->elem;
    if (sgl_type_owns(et)) {
        /* the caller's sgl_lib_vec elements, or the library's own sgl_vec
         * ones (the same layout), or structs with such fields: a fresh
         * vector of imported elements */
        *out = sgl_vec_new(vt, in->len, 0, 0);
        size_t esz = sgl_sizeof(et);
        const char *e = in->data;
        char *o = out->data;
        for (int64_t i = 0; i < in->len; i++)
            import_value(et, e + (size_t)i * esz, o + (size_t)i * esz);
        return;
    }
    if (in->owner) {
        /* a vector the library returned: a handle of its buffer, which the
         * sweep of a failed call can release exactly once (sgl_vbuf.h) */
        sgl_vbuf *b = in->owner;
        sgl_vbuf *h = sgl_vbuf_handle(vbuf_owner(b), 0, 0);
        atomic_fetch_add_explicit(&h->refs, 1, memory_order_relaxed); /* the library's */
        hold(h, et, false);
        *out = (sgl_vec){in->data, in->len, h};
        return;
    }
    sgl_vbuf *b = sgl_vbuf_header(et, in->len, 2); /* the vector's and the library's */
    hold(b, et, true);
    if (lib_nnoted < LIB_NOTED) lib_noted[lib_nnoted++] = in->data;
    *out = (sgl_vec){in->data, in->len, b};
}

void sgl_lib_import(const sgl_type *vt, const sgl_lib_vec *in, sgl_vec *out)
{
    lib_params = grow(lib_params, &lib_params_cap, lib_nparams + 1, sizeof *lib_params);
    lib_params[lib_nparams].vt = vt;
    lib_params[lib_nparams].v = (sgl_vec){NULL, 0, NULL};
    sgl_vec *slot = &lib_params[lib_nparams++].v;
    import_into(vt, in, slot);
    *out = *slot; /* the library keeps (and frees) the vector; out borrows it */
}

static bool refers_to_borrowed(const sgl_type *vt, const sgl_vec *v);

static bool value_refers_to_borrowed(const sgl_type *t, const void *p)
{
    if (t->kind == SGL_T_VEC || t->kind == SGL_T_STR) return refers_to_borrowed(t, p);
    if (t->kind == SGL_T_STRUCT && t->managed)
        for (int i = 0; i < t->nfields; i++)
            if (value_refers_to_borrowed(t->fields[i].type, (const char *)p + t->fields[i].offset))
                return true;
    return false;
}

static bool refers_to_borrowed(const sgl_type *vt, const sgl_vec *v)
{
    if (!v->buf) return false;
    if (is_borrowed(v->buf)) return true;
    if (!sgl_type_owns(vt->elem)) return false;
    size_t esz = sgl_sizeof(vt->elem);
    const char *e = v->data;
    for (int64_t i = 0; i < v->len; i++)
        if (value_refers_to_borrowed(vt->elem, e + (size_t)i * esz)) return true;
    return false;
}

void sgl_lib_export(const sgl_type *vt, sgl_vec *v)
{
    if (!refers_to_borrowed(vt, v)) return;
    sgl_vec_make_unique(vt, v, 0, 0); /* a copy: the old buffer is shared */
    if (sgl_type_owns(vt->elem)) {
        size_t esz = sgl_sizeof(vt->elem);
        char *e = v->data;
        for (int64_t i = 0; i < v->len; i++) each_vec(vt->elem, e + (size_t)i * esz, sgl_lib_export);
    }
}

void sgl_lib_export_value(const sgl_type *t, void *v)
{
    each_vec(t, v, sgl_lib_export);
}

/* sgl_nodevars_each_tree's function (see nodevar_track) */
static void nodevar_export(const sgl_type *t, sgl_vec *v)
{
    each_vec(t, v, sgl_lib_export);
}

void sgl_lib_vec_free_of(const sgl_type *leaf, sgl_lib_vec *v, int depth)
{
    if (!v) return;
    if (depth < 1) depth = 1;
    if (depth > SGL_MAX_LEVELS) depth = SGL_MAX_LEVELS;
    /* [leaf] nested depth times */
    sgl_type chain[SGL_MAX_LEVELS + 1];
    chain[0] = *leaf;
    for (int d = 1; d <= depth; d++) chain[d] = (sgl_type){.kind = SGL_T_VEC, .elem = &chain[d - 1]};
    sgl_vec_free(&chain[depth], (sgl_vec *)v);
}

void sgl_lib_vec_free(sgl_lib_vec *v, int depth)
{
    /* [int] nested depth times: only the nesting matters to freeing
     * vectors of numbers, strings and vectors (not structs that own
     * memory: sgl_lib_vec_free_of) */
    sgl_lib_vec_free_of(&sgl_t_int, v, depth);
}

void sgl_lib_value_free(const sgl_type *t, void *v)
{
    if (!v) return;
    sgl_value_free(t, v);
    memset(v, 0, sgl_sizeof(t));
}

/* After a call: free the imported parameters, then drop the library's
 * reference to each header it holds (freeing a borrowed header, never the
 * caller's elements, when nothing else refers to it). */
static void release_call(void)
{
    for (int64_t i = 0; i < lib_nparams; i++) sgl_vec_free(lib_params[i].vt, &lib_params[i].v);
    lib_nparams = 0;
    for (int64_t i = 0; i < lib_nborrowed; i++)
        sgl_vbuf_release(lib_borrowed[i].et, lib_borrowed[i].b);
    lib_nborrowed = 0;
}

static int64_t lib_swept_total;

int64_t sgl_lib_swept(void)
{
    return lib_swept_total;
}

/* ------------------------------------------------------------------ */
/* Interrupts and fork                                                  */

/* SIGINT during a call (Ctrl-C): the call's nodes are all cancelled, as
 * after a failure (sgl_tree.c: every node's stop flag, read by generated
 * code at loop iterations and calls), so the call unwinds within a loop
 * iteration and returns SGL_LIB_ERR_INTERRUPTED; then the host's own
 * SIGINT handling, restored, gets the signal (raise): Python's raises
 * KeyboardInterrupt, a C host without a handler dies of it as it would
 * have.  The handler only stores to lock-free atomics (async-signal-safe);
 * the tree does not change during a call. */
static volatile sig_atomic_t lib_interrupted;

static void stop_tree(sgl_node *n)
{
    atomic_store(&n->cancel_at, 0);
    atomic_store(&n->head.cancelled, SGL_CANCEL_STOP);
    for (int i = 0; i < n->nlocal; i++) stop_tree(&n->kids[i]);
}

static void on_sigint(int sig)
{
    (void)sig;
    lib_interrupted = 1;
    if (lib_root) stop_tree(lib_root);
}

/* ------------------------------------------------------------------ */
/* The call boundary                                                    */

static void to_stdout(const char *p, size_t len, void *user)
{
    (void)user;
    fwrite(p, 1, len, stdout);
}

static void to_caller(const char *p, size_t len, void *user)
{
    (void)user;
    lib_out_fn(p, len, lib_out_user);
}

/* Hand the call's output to the output function (or stdout): 0, or the
 * errno of spilled output that could not be read back. */
static int deliver_output(sgl_node *root)
{
    if (sgl_out_pos(root) == 0) return 0;
    int e = sgl_out_drain(root, lib_out_fn ? to_caller : to_stdout, NULL);
    if (!lib_out_fn) fflush(stdout);
    return e;
}

int sgl_lib_call(sgl_lib_body_fn body, void *ctx)
{
    if (lib_in_call) return SGL_LIB_ERR_BUSY;
    pthread_mutex_lock(&lib_lock);
    sgl_node *root = lib_root;
    if (!root) {
        pthread_mutex_unlock(&lib_lock);
        set_error("the library is not initialized (call its init function first)");
        return SGL_LIB_ERR_NOT_INIT;
    }
    if (atomic_load(&lib_internal)) {
        char msg[sizeof lib_internal_msg + 100];
        snprintf(msg, sizeof msg, "%s (an earlier call; call init again)", lib_internal_msg);
        pthread_mutex_unlock(&lib_lock);
        set_error(msg);
        return SGL_LIB_ERR_INTERNAL;
    }
    lib_in_call = true;
    atomic_store(&lib_running, true);
#ifdef SGL_LIBRARY
    sgl_registry_track(true);
    /* the node variables' buffers that they alone hold: registered for
     * the call, so that a failed call frees them also when a temporary
     * of the call held a reference (see node_track) */
    sgl_nodevars_each_tree(root, nodevar_track);
#endif
    lib_nnoted = 0;
    /* Ctrl-C cancels the call (see on_sigint), unless the host ignores it */
    struct sigaction sa, old_sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    lib_interrupted = 0;
    /* (one system call to install and fetch the host's, one to restore) */
    bool catching = sigaction(SIGINT, &sa, &old_sa) == 0;
    if (catching && !(old_sa.sa_flags & SA_SIGINFO) && old_sa.sa_handler == SIG_IGN) {
        (void)sigaction(SIGINT, &old_sa, NULL); /* the host ignores SIGINT: so do we */
        catching = false;
    }
    jmp_buf jb;
    int status;
    root->boundary = &jb;
    sgl_node *saved_cur = sgl_cur;
    sgl_cur = root;
    if (setjmp(jb) == 0) {
        body(root, ctx);
        /* node variables live on: independent of the caller's memory */
        sgl_nodevars_each_tree(root, nodevar_export);
        status = SGL_LIB_OK;
        lib_err[0] = '\0';
    } else {
        parse_error(root->errmsg ? root->errmsg : "runtime error");
        free(root->errmsg);
        root->errmsg = NULL;
        reset_nodes(root);
        /* a failed call resets the node variables (given their initial
         * values again below, once the registry is off) */
        sgl_nodevars_clear_tree(root);
        status = SGL_LIB_ERR_RUNTIME;
    }
    atomic_store(&lib_running, false);
    if (catching) (void)sigaction(SIGINT, &old_sa, NULL);
    bool interrupted = catching && lib_interrupted;
    if (interrupted && status == SGL_LIB_ERR_RUNTIME) {
        char msg[300];
        snprintf(msg, sizeof msg, "%s: interrupted (SIGINT)", sgl_prog ? sgl_prog->file : "sgl");
        set_error(msg);
        status = SGL_LIB_ERR_INTERRUPTED;
    }
    if (atomic_load(&lib_internal)) {
        set_error(lib_internal_msg); /* whatever the program's own error was */
        status = SGL_LIB_ERR_INTERNAL;
    }
    root->boundary = NULL;
    sgl_cur = saved_cur;
    release_call();
#ifdef SGL_LIBRARY
    /* (the library's runtime without -DSGL_LIBRARY, as in
     * runtime_c/tests/test_library.c: the executables' registry, which
     * holds earlier calls' buffers too, is left alone) */
    sgl_registry_track(false);
    if (status == SGL_LIB_OK)
        sgl_registry_forget();
    else
        lib_swept_total += sgl_registry_sweep();
#endif
    if (status != SGL_LIB_OK) sgl_nodevars_init_tree(root);
    int oerr = deliver_output(root);
    if (oerr && status == SGL_LIB_OK) {
        char msg[600];
        snprintf(msg, sizeof msg,
                 "%s: runtime error: cannot read the call's output back from its temporary file: %s",
                 sgl_prog ? sgl_prog->file : "sgl", strerror(oerr));
        parse_error(msg);
        status = SGL_LIB_ERR_RUNTIME;
    }
    lib_in_call = false;
    pthread_mutex_unlock(&lib_lock);
    if (interrupted) raise(SIGINT); /* to the host's handler, restored above */
    return status;
}

int sgl_lib_reset(void)
{
    if (lib_in_call) return SGL_LIB_ERR_BUSY;
    pthread_mutex_lock(&lib_lock);
    int status = SGL_LIB_OK;
    if (!lib_root) {
        set_error("the library is not initialized (call its init function first)");
        status = SGL_LIB_ERR_NOT_INIT;
    } else {
        sgl_nodevars_reset_tree(lib_root);
    }
    pthread_mutex_unlock(&lib_lock);
    return status;
}

/* ------------------------------------------------------------------ */
/* Internal errors                                                      */

void sgl_lib_internal_error(const char *what)
{
    if (!lib_init_jb && !atomic_load(&lib_running)) return;
    int none = 0;
    if (atomic_compare_exchange_strong(&lib_internal, &none, 1))
        snprintf(lib_internal_msg, sizeof lib_internal_msg, "%s: internal error: %s",
                 sgl_prog ? sgl_prog->file : "sgl", what);
    if (lib_init_jb) longjmp(*lib_init_jb, 1);
    sgl_node *n = sgl_cur;
    if (!n || !n->boundary) return;
    /* fail this node's action, as a run-time error does: its master, and
     * the root after it, see a failure and unwind the call */
    size_t len = strlen(lib_internal_msg) + 1;
    char *msg = malloc(len);
    if (!msg) sgl_unwind(n); /* out of memory: "cancelled" unwinds too */
    memcpy(msg, lib_internal_msg, len);
    sgl_raise(n, msg);
}
