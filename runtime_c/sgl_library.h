/*
 * sgl_library.h: library mode of the runtime (sgl_library.c), for programs
 * built with `sglc --library` and loaded by `sglc.load()`.
 *
 * The machine tree is built once (sgl_lib_init) and every exported SGL
 * function runs on its root inside one call boundary (sgl_lib_call): a
 * run-time error (sgl_fail) returns SGL_LIB_ERR_RUNTIME with its message
 * kept (sgl_lib_last_error and the _line/_col/_node parts) instead of
 * stopping the process (the message is per calling thread); the frames of every node are released, and the
 * next call works.  The root's output is buffered during a call and handed
 * to the output function (sgl_lib_set_output; default: stdout) when the
 * call ends, also after an error (the output before it, as an executable
 * prints it).  Calls are serialised by a mutex; a call from inside a call
 * (an output function calling back) returns SGL_LIB_ERR_BUSY.
 *
 * An error of the runtime itself (sgl_internal_error: out of memory in its
 * own structures, a broken invariant), which stops an executable, never
 * stops the host process: the call returns SGL_LIB_ERR_INTERNAL with the
 * message, and so does every later call until sgl_lib_init rebuilds the
 * tree (sgl_lib_init itself returns SGL_LIB_ERR_INIT).
 *
 * Only the seq and omp targets have a library mode: an MPI build's
 * sgl_lib_init fails with SGL_LIB_ERR_INIT.
 */
#ifndef SGL_LIBRARY_H
#define SGL_LIBRARY_H

#include "sgl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A vector as the caller sees it: the layout of sgl_vec.  owner: the
 * runtime's buffer (a vector the library returned) or NULL (the caller's
 * own memory, borrowed for one call: never written, never freed).  For a
 * vector of vectors, data points to `len` sgl_lib_vec. */
typedef struct sgl_lib_vec {
    void *data;
    int64_t len;
    void *owner;
} sgl_lib_vec;

enum {
    SGL_LIB_OK = 0,
    SGL_LIB_ERR_RUNTIME = 1,  /* the SGL program failed: see sgl_lib_last_error */
    SGL_LIB_ERR_NOT_INIT = 2, /* no sgl_lib_init yet (or after sgl_lib_finalize) */
    SGL_LIB_ERR_INIT = 3,     /* sgl_lib_init failed: bad shape, mpi build */
    SGL_LIB_ERR_BUSY = 4,     /* a call from inside a call */
    SGL_LIB_ERR_INTERNAL = 5  /* the runtime itself failed (out of memory in its own
                                 structures, a broken invariant): the call was abandoned,
                                 and every call fails so until sgl_lib_init is called again */,
    SGL_LIB_ERR_INTERRUPTED = 6 /* SIGINT (Ctrl-C) stopped the call; the signal was then
                                   raised again for the host's own handler */
};

typedef void (*sgl_lib_output_fn)(const char *data, size_t len, void *user);
typedef void (*sgl_lib_body_fn)(sgl_node *root, void *ctx);

/* Build the tree: shape like "2x2" ("0": the root alone), or NULL for one
 * level of `threads` children (threads <= 0: OpenMP's default; none if
 * that is 1).  Again after an init: the old tree is finalized first. */
int sgl_lib_init(const sgl_program *prog, const char *shape, int threads);
void sgl_lib_finalize(void);
void sgl_lib_set_output(sgl_lib_output_fn fn, void *user);
/* Run body(root, ctx) inside the boundary. */
int sgl_lib_call(sgl_lib_body_fn body, void *ctx);
/* Give every node's node variables their initial values again (they keep
 * their values from one call to the next; a failed call resets them, and
 * so does sgl_lib_init, which builds a new tree). */
int sgl_lib_reset(void);

/* The last error's whole message ("" if none), and its parts: line and col
 * (0 if unknown), node path ("" if unknown), the message alone. */
const char *sgl_lib_last_error(void);
int sgl_lib_last_error_line(void);
int sgl_lib_last_error_col(void);
const char *sgl_lib_last_error_node(void);
const char *sgl_lib_last_error_what(void);

/* Inside a call: the caller's vector *in of type vt as a runtime vector
 * (*out, owned by the caller of this function; flat elements borrowed
 * without a copy).  sgl_lib_export makes *v independent of every borrowed
 * buffer (copying the parts that are borrowed) before it is returned. */
void sgl_lib_import(const sgl_type *vt, const sgl_lib_vec *in, sgl_vec *out);
void sgl_lib_export(const sgl_type *vt, sgl_vec *v);
/* sgl_lib_export for a value of any type t (a struct: its vector and
 * string fields, nested structs' too; nothing for scalars). */
void sgl_lib_export_value(const sgl_type *t, void *v);
/* The data pointer of the i-th caller's buffer the last call borrowed
 * without a copy (the first 8), or NULL: for tests of zero-copy calls. */
const void *sgl_lib_borrowed(int i);
/* How many buffers the error boundary has freed since the process began:
 * the temporaries of failed calls (library builds; 0 otherwise). */
int64_t sgl_lib_swept(void);
/* Free a vector the library returned; depth: 1 for [T], 2 for [[T]]... */
void sgl_lib_vec_free(sgl_lib_vec *v, int depth);
/* The same for a vector (nested depth times) of values of type leaf (a
 * struct that owns memory: its fields are freed too). */
void sgl_lib_vec_free_of(const sgl_type *leaf, sgl_lib_vec *v, int depth);
/* Free what a value of type t the library returned owns (a struct's
 * vector and string fields), and zero it. */
void sgl_lib_value_free(const sgl_type *t, void *v);

#ifdef __cplusplus
}
#endif

#endif /* SGL_LIBRARY_H */
