/*
 * sgl_internal.h: what the files of the machine-tree half of the runtime
 * share.  Internal: generated code includes only sgl.h.
 *
 *   sgl_tree.c    the machine tree: nodes, node queries, frames, one
 *                 child's run of a superstep, and the part of every
 *                 superstep that does not depend on the transport
 *   sgl_output.c  ordered output and run-time errors (sgl_fail)
 *   sgl_local.c   the local transport: children in this process, run one
 *                 after the other (seq) or on a team of threads
 *   sgl_team.c    that team: n threads, one fork and join per superstep
 *   sgl_mpi.c     the MPI transport and the MPI process start-up; compiled
 *                 to nothing without SGL_USE_MPI
 *   sgl_mpi_output.c  a remote child's output that does not fit in its
 *                 report (MPI only)
 *   sgl_start.c   sgl_run: the --sgl- options, the machine shape, building
 *                 the tree, running main on the root
 *   sgl_instr.c   --sgl-stats, --sgl-trace, --sgl-predict (sgl_instr.h)
 *
 * The transport interface.  A master reaches its children through one
 * transport, a `sgl_transport` (a struct of functions) chosen when the
 * tree is built and kept in the node (`via`; NULL on a worker).  There
 * are two instances:
 *
 *   sgl_transport_local  the children are nodes of this process (`kids`,
 *                        all nchildren of them); a superstep runs them one
 *                        after the other, or, with SGL_USE_OMP, on the
 *                        master's team of threads, one thread per child;
 *   sgl_transport_mpi    the children are MPI processes of a communicator
 *                        in which the master is rank 0 (comm_down); child 0
 *                        lives in the master's process (`kids`, one node)
 *                        and is run locally, the others wait in
 *                        sgl_mpi_serve() for commands.
 *
 * A superstep (sgl_superstep, sgl_tree.c) checks its arguments and calls
 * `via->superstep`, which allocates the gathered vectors, gets every
 * child's inputs to it, runs the child's ops (sgl_child_run, on the node
 * that hosts the child) and fills one sgl_child_result per child, in
 * child order: its failure, its output, its compute time, and its
 * gathered values stored into the gather destinations.  sgl_superstep
 * then appends the output and raises the first failure in the order of
 * the sequential execution (sgl_merge_results, sgl_output.c), the same
 * for every transport.
 *
 * The MPI process start-up (sgl_mpi_init ... sgl_mpi_serve below) has
 * do-nothing versions in builds without SGL_USE_MPI, so sgl_start.c
 * needs no #ifdef.
 */
#ifndef SGL_INTERNAL_H
#define SGL_INTERNAL_H

#include "sgl.h"
#include "sgl_instr.h"

#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef SGL_USE_MPI
#include <mpi.h>
#endif

/* The deepest machine tree the runtime builds (levels below the root). */
#define SGL_MAX_LEVELS 32

/* ------------------------------------------------------------------ */
/* Nodes                                                                */

typedef struct sgl_transport sgl_transport;

/* One activation depth of a node's frame stack (sgl_tree.c). */
typedef struct sgl_frame_slot {
    int64_t master_uid; /* key uid of the master activation, -1 for own calls */
    int64_t own_uid;    /* this node's uid for the activation */
    void *frame;        /* this node's copies, NULL for its own calls */
    void (*free_fn)(void *frame);
} sgl_frame_slot;

/* ---- the machine tree's shape (sgl_start.c) ---- */
/* A general (possibly uneven) tree, every leaf at depth nlevels.  Its
 * nodes are numbered in level order: depth by depth, left to right; the
 * nodes of depth d are ids off[d] .. off[d + 1] - 1 (off[0] = 0: the
 * root), and the children of a node are consecutive ids of the next
 * depth, from first[id].  A node's position among the nodes of its depth
 * is id - off[depth]. */
typedef struct sgl_shape {
    int nlevels;                    /* levels below the root (0: the root alone) */
    int64_t off[SGL_MAX_LEVELS + 2];
    int64_t nnodes;                 /* off[nlevels + 1] */
    int *nkids;                     /* per id: its number of children (0 on a leaf) */
    int64_t *first;                 /* per id: the id of its child 0 (-1 on a leaf) */
    int64_t *nworkers;              /* per id: the workers (leaves) of its subtree */
} sgl_shape;
/* The most nodes a shape may have. */
#define SGL_MAX_NODES ((int64_t)1 << 22)
/* Parse a shape ("0", "2x2x3", "2x[1,3]", "3x[2,1,2]x2": a level is one
 * count for every node of the level above, or one count per node in
 * brackets) into *sh.  False, with what is wrong in err, if the text is
 * not a shape (sh is then empty). */
bool sgl_parse_shape(const char *text, sgl_shape *sh, char *err, size_t errsz);
/* The shape of levels: level k gives nodes of depth k - 1 their children,
 * counts[k][0] for all of them if len[k] == 1, else counts[k][i] for node
 * i (len[k] is then the number of nodes of depth k - 1).  False, with
 * what is wrong in err, if the counts do not fit. */
bool sgl_shape_make(sgl_shape *sh, int nlevels, int *const *counts, const int64_t *len,
                    char *err, size_t errsz);
void sgl_shape_free(sgl_shape *sh);
/* The id of the parent of node id (> 0), and its child index (0 at the
 * root). */
int64_t sgl_shape_parent(const sgl_shape *sh, int depth, int64_t id);
int sgl_shape_child_index(const sgl_shape *sh, int depth, int64_t id);
/* ---- end of the shape ---- */

/* ---- files of a superstep (owned by the io part: sgl_output.c) ---- */
/* The paths a node's subtree read and wrote during the current superstep
 * of its master (brief §8's file-sharing rule): the file builtins record
 * their path on the node that runs them (sgl_files_note, not on the
 * root), a master adds its children's sets to its own after each of its
 * supersteps, and checks them against each other first. */
typedef struct sgl_fileset {
    char **path;   /* owned, distinct */
    unsigned char *wrote; /* per path: SGL_FILE_ flags */
    int n, cap;
} sgl_fileset;
#define SGL_FILE_WROTE 1  /* written */
#define SGL_FILE_FAILED 2 /* the builtin that used it raised a run-time error */
void sgl_files_note(sgl_node *n, const char *path, int how);
void sgl_files_add(sgl_fileset *f, const char *path, int how);
/* After a run-time error of node c (on its thread): marks the file of the
 * file builtin that raised it, if one did, SGL_FILE_FAILED. */
void sgl_files_failed(sgl_node *c);
void sgl_files_clear(sgl_fileset *f); /* empty it (keeps its storage) */
void sgl_files_free(sgl_fileset *f);
/* ---- end of files ---- */

/* ---- output past the memory threshold (owned by the io part:
 * sgl_output.c) ----
 * A node's output is its spill file's first `len` bytes, then its buffer
 * (`out`).  A node other than the executable's root moves its buffer to
 * the file when the buffer passes sgl_spill_threshold() bytes (at the end
 * of a print, and while its master appends its children's output), so
 * the memory a node's output takes stays bounded; the file is an
 * anonymous temporary file (created in $TMPDIR, or /tmp, and unlinked at
 * once), made on first use and reused by every superstep. */
typedef struct sgl_spill {
    int fd;      /* valid if open */
    bool open;
    size_t len;  /* bytes of output in it */
    size_t size; /* the file's size (len, or more from an earlier use) */
} sgl_spill;
/* Output is copied and sent in pieces of this size at most (the file's
 * reads, the MPI messages of a report's output). */
#define SGL_OUT_CHUNK ((size_t)1 << 20)
/* The buffer size past which output goes to the file: SGL_OUTPUT_SPILL
 * bytes (a suffix k, M or G multiplies), by default 1 MiB. */
size_t sgl_spill_threshold(void);
/* Append p[0..n) to the file (made on first use).  0, or the errno of the
 * failure (the file's length is then unchanged). */
int sgl_spill_append(sgl_spill *f, const void *p, size_t n);
/* Read n bytes at offset off of file descriptor fd into p: 0 or an errno. */
int sgl_spill_read(int fd, size_t off, void *p, size_t n);
/* Empty the file (its bytes stay readable until the next append). */
void sgl_spill_rewind(sgl_spill *f);
void sgl_spill_close(sgl_spill *f);
/* Empty n's output (buffer and file; their bytes stay readable until n
 * prints again). */
void sgl_out_reset(sgl_node *n);
/* Close n's file and free its buffer. */
void sgl_out_free(sgl_node *n);
/* Hand every byte of n's output, in order, to fn, in pieces of at most
 * SGL_OUT_CHUNK bytes that end at a line's end where they can, and empty
 * it.  0, or the errno of a failed read of the file. */
int sgl_out_drain(sgl_node *n, void (*fn)(const char *p, size_t len, void *user), void *user);
/* ---- end of output ---- */

/* A cache line.  The nodes of a level live in one array, as do their
 * results of a superstep, each written by its own thread: each starts on
 * a line of its own (sgl_lines_calloc), so that no thread's writes take
 * a line another thread is using away from it. */
#define SGL_LINE 64
/* calloc of n elements of size bytes (a multiple of SGL_LINE: a struct
 * with an _Alignas(SGL_LINE) member) aligned to SGL_LINE; free with
 * free().  NULL without the memory. */
static inline void *sgl_lines_calloc(size_t n, size_t size)
{
    if (n == 0) n = 1;
    if (size == 0 || size % SGL_LINE != 0 || n > SIZE_MAX / size) return NULL;
    void *p = aligned_alloc(SGL_LINE, n * size);
    return p ? memset(p, 0, n * size) : NULL;
}

/* lv = v, skipped when lv holds v already.  For what a child's thread
 * writes each superstep and its master reads after it (sgl_child_result):
 * a store, even of the same value, takes the line from the master's cache
 * and the master's next read takes it back, two transfers between cores
 * per line on the critical path of every short superstep. */
#define SGL_SET(lv, v)                                                                        \
    do {                                                                                      \
        if ((lv) != (v)) (lv) = (v);                                                          \
    } while (0)

/* What one child's run of a superstep produced. */
typedef struct sgl_child_result {
    _Alignas(SGL_LINE) int failed_op; /* -1: none */
    char *msg;      /* the failure's message (owned) */
    double compute; /* seconds spent running the ops */
    /* Its output, bytes 0 .. seg_end[nops - 1]: the first out_spilled
     * bytes in the file out_fd (io part), the rest in out (out[0] is byte
     * out_spilled).  out_err: the errno of output that was lost on its way
     * (a temporary file that could not be written), 0 if none. */
    const char *out;
    int out_fd;
    size_t out_spilled;
    int out_err;
    size_t seg_end[SGL_MAX_OPS]; /* end of each op's output */
    sgl_fileset files; /* the files the child's subtree used (owned; moved
                          out of the child by sgl_child_run, or unpacked
                          from its report; emptied by sgl_merge_results) */
} sgl_child_result;

struct sgl_node {
    _Alignas(SGL_LINE) sgl_node_head head; /* first: generated code reads head.cancelled (sgl.h) */
    int depth;
    int child_index;
    int nchildren;
    int64_t nworkers;
    const sgl_shape *shape; /* the whole tree's shape */
    int64_t id;             /* this node's id in it (level order) */
    bool is_root;
    char path[8 * SGL_MAX_LEVELS];
    sgl_buf out;     /* the output not in spill (io part) */
    size_t out_noline; /* out's first out_noline bytes hold no '\n' (out_spill's scan) */
    sgl_spill spill; /* the output that passed the threshold (io part) */

    sgl_frame_slot *slots;
    int64_t nslots;
    int64_t top;    /* every slot from top on is empty (top <= nslots) */
    int64_t cur;
    int64_t next_uid;

    const sgl_transport *via; /* how the children are reached; NULL on a worker */
    sgl_node *kids; /* the children that live in this process: nlocal nodes */
    int nlocal;     /* local transport: nchildren; MPI: 1 (child 0) */
    struct sgl_team *team; /* local transport with threads: one per child (sgl_team.h) */
#ifdef SGL_USE_MPI
    MPI_Comm comm_down; /* to the children (this node is rank 0) */
    MPI_Comm comm_up;   /* to the master, for a node run by sgl_mpi_serve */
    struct sgl_mpi_state *mpi; /* the transport's buffers, kept from one
                                  superstep to the next (sgl_mpi.c) */
#endif
    jmp_buf *boundary;
    char *errmsg;   /* the failure being raised; NULL: a cancellation */
    /* Cancellation (sgl_tree.c, sgl_cancel_after): the master in this
     * process (NULL for the root and a node served by sgl_mpi_serve), the
     * op of the current superstep this node runs, and the first op at
     * which it must stop (INT_MAX: none). */
    sgl_node *parent;
    _Atomic int cur_op;
    _Atomic int cancel_at;
    sgl_track *track; /* timeline, with --sgl-trace */
    /* scratch space of this node's supersteps, kept from one to the next */
    sgl_child_result *res;
    int res_cap;
    sgl_fileset files; /* the files used in the current superstep (io part) */
};

/* Node variables (sgl_tree.c): give n its own copies, at their initial
 * values (sgl_node_init does); free those of n and of every node below it
 * in this process; free and make them afresh (a library's reset). */
void sgl_nodevars_make(sgl_node *n);
void sgl_nodevars_free_tree(sgl_node *n);
void sgl_nodevars_reset_tree(sgl_node *n);
/* The two halves of a reset: free their values (the structs zeroed), and
 * give them their initial values again. */
void sgl_nodevars_clear_tree(sgl_node *n);
void sgl_nodevars_init_tree(sgl_node *n);
/* fn on every node variable of n and below (in this process) that owns
 * memory (see sgl_program.nodevars_each). */
void sgl_nodevars_each_tree(sgl_node *n, void (*fn)(const sgl_type *vt, sgl_vec *v));

/* The length of n's output, spilled and buffered (io part). */
static inline size_t sgl_out_pos(const sgl_node *n) { return n->spill.len + n->out.len; }

/* ------------------------------------------------------------------ */
/* The transport interface (see the top of this file)                   */

struct sgl_transport {
    /* Once, after the tree is built and before main runs (called by
     * sgl_tree_start on the highest node of this process): make the
     * children ready (the local transport starts the OpenMP threads of
     * its level), then the same for the children in this process. */
    void (*start)(sgl_node *n);
    /* The transport's part of superstep s of master n in activation k:
     * for every child i, hand it its inputs from args (SCATTER: element i,
     * BCAST: a copy), run its ops, and fill res[i] and element i of every
     * GATHER destination.  It allocates those destinations
     * (sgl_alloc_gathers) before a child stores into them, and releases
     * the owned scatter sources (sgl_release_sources) once every child has
     * taken its element: when is the transport's choice (MPI: while the
     * remote children run, not between their reports and the next
     * command).  rec is non-NULL with instrumentation, for the
     * transport's timeline spans. */
    void (*superstep)(sgl_node *n, sgl_key k, const sgl_site *s, sgl_arg *args,
                      sgl_child_result *res, sgl_step_rec *rec);
    /* Once, at the end of the run, with the program's exit status: stop
     * the children (MPI: tell every process below n to leave
     * sgl_mpi_serve), then the same below the children in this process. */
    void (*shutdown)(sgl_node *n, int status);
};

extern const sgl_transport sgl_transport_local;
#ifdef SGL_USE_MPI
extern const sgl_transport sgl_transport_mpi;
#endif

/* ---- what crosses ranks (sgl_ser.c; used by sgl_mpi.c) ----
 * A value sent between processes is one byte string (sgl_ser's format)
 * plus, for the vectors of numbers whose elements take min_oob bytes or
 * more, a list of byte ranges ("pieces") that travel as they lie in
 * memory, in depth-first order: the string holds -(len + 1) where such a
 * vector's length would be, and no elements.  The transport sends the
 * pieces of one value together (sgl_mpi.c: one MPI message per value and
 * GiB; sgl_pieces_cut between values), so a nested vector costs one
 * message, not one per row.  Adjacent ranges are merged (the rows of split(v, k) or of slices
 * of one vector are sent as one block, from v's storage), and the
 * receiver lays the long rows of a [[T]] (T a number or bool) out as
 * adjacent views of one buffer, so that they arrive in one block. */
typedef struct sgl_pieces {
    char **ptr;
    size_t *len;
    int64_t *msg; /* per piece: its message (pieces of one value share one) */
    int64_t n, cap;
    size_t bytes; /* sum of len */
    int64_t cur;  /* the message of the next piece */
} sgl_pieces;
/* Add the range p[0..n) (p NULL: a placeholder, pointed later); merged
 * with the last piece if it continues it in the same message. */
void sgl_pieces_add(sgl_pieces *l, char *p, size_t n);
/* The pieces added from now on go into a new message. */
static inline void sgl_pieces_cut(sgl_pieces *l) { l->cur++; }
static inline void sgl_pieces_clear(sgl_pieces *l) /* empty it (keeps its storage) */
{
    l->n = 0;
    l->bytes = 0;
    l->cur = 0;
}
void sgl_pieces_free(sgl_pieces *l);
/* Serialize *v into b, adding the elements of its large vectors of
 * numbers to l instead of b. */
void sgl_ser_oob(sgl_buf *b, const sgl_type *t, const void *v, size_t min_oob, sgl_pieces *l);
/* Read one value written by sgl_ser_oob from p into *out (allocating);
 * the storage of the large vectors, left unfilled, is added to l, to be
 * received into in order.  Returns the position after the value. */
const char *sgl_deser_oob(const char *p, const sgl_type *t, void *out, sgl_pieces *l);
/* ---- end of what crosses ranks ---- */

/* ------------------------------------------------------------------ */
/* State of the run                                                     */

extern const sgl_program *sgl_prog;      /* sgl_start.c */
extern _Thread_local sgl_node *sgl_cur;  /* the node this thread runs (sgl_tree.c) */

/* ------------------------------------------------------------------ */
/* sgl_tree.c                                                           */

/* Node id of shape sh, at depth `depth` (child `child_index` of the
 * node at parent_path; NULL: its path is found from sh), with no
 * children connected yet. */
void sgl_node_init(sgl_node *n, const char *parent_path, const sgl_shape *sh, int depth,
                   int64_t id, int child_index);
/* Run child c's ops of site s for the master activation mk.  in[j]: owned
 * input value of a SCATTER/BCAST op (moved into the child); out[j]: where
 * a GATHER op's value goes. */
void sgl_child_run(sgl_node *c, const sgl_site *s, sgl_key mk, void **in, void **out,
                   sgl_child_result *r);
/* sgl_child_run in parts, for a transport that runs the ops of several
 * children interleaved (the seq target, op by op): begin, then ops j0..j1-1
 * (any number of times, in order; nothing runs after a failure), then end. */
void sgl_child_begin(sgl_node *c, sgl_child_result *r);
void sgl_child_ops(sgl_node *c, const sgl_site *s, sgl_key mk, void **in, void **out,
                   sgl_child_result *r, int j0, int j1);
void sgl_child_end(sgl_node *c, const sgl_site *s, sgl_child_result *r);
/* A site's ops by kind (sgl_site.masks). */
typedef struct sgl_site_masks sgl_masks;
static inline const sgl_masks *sgl_site_masks(const sgl_site *s) { return &s->masks; }
/* The lowest op of mask *m, taken off it (*m non-zero). */
static inline int sgl_mask_next(uint64_t *m)
{
    int j = __builtin_ctzll(*m);
    *m &= *m - 1;
    return j;
}
/* The transport's duties in a superstep (sgl_transport.superstep): the
 * vectors of the GATHER destinations of args, one element per child
 * (numbers uninitialized), and the release of what is left of the owned
 * SCATTER sources once the children have their elements. */
void sgl_alloc_gathers(sgl_node *n, const sgl_site *s, sgl_arg *args);
void sgl_release_sources(const sgl_site *s, sgl_arg *args);
/* Child `child` of master n failed in op `op` of the current superstep:
 * stop every local child after that point in depth-first order (op by
 * op, child by child), with its whole subtree. */
void sgl_cancel_after(sgl_node *n, int op, int child);
/* Stop node c from op `limit` of its current superstep on (at once if it
 * is there already), with its whole subtree; a lower limit wins. */
void sgl_cancel_from(sgl_node *c, int limit);
/* Set this thread's stack limit (sgl_stack_limit), once per thread. */
void sgl_stack_init(void);
/* Are this process's stacks (ulimit -s, OMP_STACKSIZE) big enough for the
 * recursion check? Else a message on stderr; agreed by every rank. */
bool sgl_stacks_fit(int rank, int nprocs);
/* Calls via->start / via->shutdown of n, if n has children. */
void sgl_tree_start(sgl_node *n);
void sgl_tree_shutdown(sgl_node *n, int status);
/* Timeline tracks for n and every node below it in this process. */
void sgl_make_tracks(sgl_node *n);

/* ------------------------------------------------------------------ */
/* sgl_output.c                                                         */

/* Report an error of the runtime itself (not of the program) and stop
 * every process. */
_Noreturn void sgl_internal_error(const char *what);
/* Library mode (sgl_library.c): turns an internal error inside sgl_lib_init
 * or a call into that call's failure; returns only when no library init or
 * call is running on a node of this thread (an executable: the caller stops
 * the process). */
void sgl_lib_internal_error(const char *what);
char *sgl_strdup(const char *s);
/* Raise the failure msg (owned) on node n: longjmp to the boundary of its
 * current action. */
_Noreturn void sgl_raise(sgl_node *n, char *msg);
/* The root writes its buffered output to stdout (other nodes: nothing). */
void sgl_flush_root(sgl_node *n);
/* Ignore SIGPIPE (once): writes to a broken pipe fail with EPIPE. */
void sgl_ignore_sigpipe(void);
/* Set child result r's output to node c's (sgl_child_end). */
void sgl_out_result(sgl_node *c, sgl_child_result *r);
/* Append the children's output to n's and raise the first failure, in the
 * order of the sequential execution: op by op, child by child. */
void sgl_merge_results(sgl_node *n, const sgl_site *s, sgl_child_result *res, int nkids);

/* ------------------------------------------------------------------ */
/* sgl_local.c                                                          */

/* Child i's inputs from the master's arguments, in shared memory (tmp:
 * storage for copies, one per op); sgl_local_inputs_done frees what they
 * took beyond tmp once the child has run. */
void sgl_local_inputs(const sgl_site *s, sgl_arg *args, int i, void **in, void **out,
                      sgl_slot *tmp);
void sgl_local_inputs_free(const sgl_site *s, const sgl_arg *args, void **in, sgl_slot *tmp);
static inline void sgl_local_inputs_done(const sgl_site *s, const sgl_arg *args, void **in,
                                         sgl_slot *tmp)
{
    if (s->masks.big) sgl_local_inputs_free(s, args, in, tmp); /* else nothing beyond tmp */
}
/* Op j's value's place: slot, or a block of its own for a big one. */
static inline void *sgl_op_place(const sgl_site *s, int j, sgl_slot *slot)
{
    const sgl_op *op = &s->ops[j];
    return s->masks.big >> j & 1 ? sgl_slot_place(sgl_sizeof(op->type), slot, op->line, op->col)
                                  : slot;
}

/* Build the subtree below n (its children in n->shape) entirely in this
 * process. */
void sgl_local_build(sgl_node *n);
/* Run the children of thread levels one after the other on the calling
 * thread, without OpenMP: set in a process forked from a library host
 * whose OpenMP threads the child does not have (sgl_library.c). */
extern bool sgl_local_serial;
/* In a forked child: forget the background unmapper thread (sgl_blocks.c). */
void sgl_unmap_after_fork(void);
/* The number of threads of the default machine shape (1 without OpenMP). */
int sgl_local_default_threads(void);
/* Set OpenMP up for `levels` nested thread levels. */
void sgl_local_configure(int levels);

/* ------------------------------------------------------------------ */
/* sgl_mpi.c: MPI processes                                             */

#ifdef SGL_USE_MPI
/* Stop the program with MPI's error string if an MPI call fails. */
#define MPI_CHECK(call)                                                      \
    do {                                                                     \
        int rc_ = (call);                                                    \
        if (rc_ != MPI_SUCCESS) {                                            \
            char s_[MPI_MAX_ERROR_STRING + 64];                              \
            int n_ = 0;                                                      \
            MPI_Error_string(rc_, s_, &n_);                                  \
            s_[n_] = '\0';                                                   \
            sgl_internal_error(s_);                                          \
        }                                                                    \
    } while (0)

/* Whether this thread is the one that calls MPI (sgl_mpi_proc.c). */
extern _Thread_local bool sgl_mpi_main_thread;
/* ---- a remote child's output (io part: sgl_mpi_output.c) ---- */
/* Where a master receives a child's output that follows its report. */
typedef struct sgl_mpi_outbuf {
    char *text;      /* up to the spill threshold: in memory */
    size_t text_cap;
    sgl_spill spool; /* longer: in a temporary file */
} sgl_mpi_outbuf;
/* The length of r's output; whether it travels in the report (at most
 * SGL_MPI_OUT_INLINE bytes, none spilled). */
#define SGL_MPI_OUT_INLINE ((size_t)64 << 10)
static inline size_t sgl_mpi_out_total(const sgl_site *s, const sgl_child_result *r)
{
    return s->nops ? r->seg_end[s->nops - 1] : 0;
}
static inline bool sgl_mpi_out_inline(const sgl_site *s, const sgl_child_result *r)
{
    return r->out_spilled == 0 && sgl_mpi_out_total(s, r) <= SGL_MPI_OUT_INLINE;
}
/* The child's side, after its report and its vectors: the output that is
 * not in the report, to dest with tag (*chunk: a buffer made on first use
 * and kept). */
void sgl_mpi_send_output(MPI_Comm comm, int dest, int tag, const sgl_site *s,
                         const sgl_child_result *r, char **chunk);
/* The master's side: that output, from src, into b; sets r's output. */
void sgl_mpi_recv_output(MPI_Comm comm, int src, int tag, const sgl_site *s,
                         sgl_child_result *r, sgl_mpi_outbuf *b, char **chunk);
/* ---- end of a remote child's output ---- */

/* Start MPI; this process's rank among nprocs.  A process that no MPI
 * launcher started does not start MPI: one process, rank 0, and
 * sgl_mpi_up stays false (then no MPI function may be called). */
void sgl_mpi_init(int *argc, char ***argv, int *nprocs, int *rank);
extern bool sgl_mpi_up;
void sgl_mpi_finalize(void);
/* If MPI is running: MPI_Abort (stops every process). */
void sgl_mpi_abort(void);
void sgl_mpi_barrier(void);
/* Every process's value x, in all[0..nprocs-1]. */
void sgl_mpi_allgather_int(int x, int *all);
/* Connect the process-level nodes of this process, chain[j0..plevels]
 * (chain[l] at depth l, each child 0 of the one above; chain[plevels] is
 * the node of depth plevels numbered like this rank): one communicator
 * per master and its children; chain[l] reaches its children through
 * sgl_transport_mpi. */
void sgl_mpi_connect(sgl_node *chain, int plevels, int j0);
/* A node whose master is in another process: serve its commands until
 * the master says stop. */
void sgl_mpi_serve(sgl_node *n);
/* On the main thread, while masters of this process run their child 0 or
 * wait for reports, and while a served node runs a command: look at the
 * remote children's reports that have arrived and at the stop messages
 * from the master above, and cancel what a failure stops (sgl_check_slow;
 * elsewhere nothing). */
void sgl_mpi_poll(void);
/* Whether this thread is the main thread of an MPI process that must
 * poll now (a master of it runs its child 0, or it serves a remote
 * master): then a thread-level superstep's join polls (sgl_local.c). */
bool sgl_mpi_polling(void);
#else
static inline void sgl_mpi_poll(void) {}
static inline bool sgl_mpi_polling(void) { return false; }
static inline void sgl_mpi_init(int *argc, char ***argv, int *nprocs, int *rank)
{
    (void)argc;
    (void)argv;
    *nprocs = 1;
    *rank = 0;
}
static inline void sgl_mpi_finalize(void) {}
static inline void sgl_mpi_abort(void) {}
static inline void sgl_mpi_barrier(void) {}
static inline void sgl_mpi_allgather_int(int x, int *all) { all[0] = x; }
static inline void sgl_mpi_connect(sgl_node *chain, int plevels, int j0)
{
    (void)chain;
    (void)plevels;
    (void)j0;
}
/* Without MPI every node's master is in this process: never called. */
static inline void sgl_mpi_serve(sgl_node *n)
{
    (void)n;
    sgl_internal_error("a worker process in a build without MPI");
}
#endif

#endif /* SGL_INTERNAL_H */
