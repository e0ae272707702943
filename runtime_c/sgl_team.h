/*
 * sgl_team.h: a team of threads for one thread-level master (sgl_team.c).
 *
 * A team of n members runs fn(ctx, i) for every member i at once: member
 * 0 on the thread that calls sgl_team_run, members 1 .. n-1 each on a
 * thread of its own, kept for the team's whole life; sgl_team_run returns
 * once every member's call has returned, and everything the members wrote
 * is then visible to the caller (as everything the caller wrote before is
 * to the members).  A thread with nothing to do spins a while before it
 * sleeps (sgl_team_spin); the caller, while it waits for the others, may
 * call a function every few milliseconds (the MPI poll).
 *
 * Not an OpenMP parallel region: a superstep of a thread level costs one
 * store the members see and one count they decrement, where libgomp's
 * region costs two barriers and a futex system call each.  Depends on
 * pthreads and C11 atomics only (its unit test: tests/test_team.c).
 */
#ifndef SGL_TEAM_H
#define SGL_TEAM_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sgl_team sgl_team;
typedef void (*sgl_team_fn)(void *ctx, int member);

/* A team of n >= 1 members (n - 1 threads started, with stacks of
 * `stack` bytes, or the system's default size if 0).  NULL if a thread or
 * the memory could not be had (errno says why; nothing is left behind). */
sgl_team *sgl_team_new(int n, size_t stack);

/* Runs fn(ctx, i) for i in 0 .. n-1 as above.  poll, if not NULL, is
 * called on the caller's thread every poll_ms milliseconds while it waits
 * for the other members (never while its own member runs).  Not
 * reentrant: one run of a team at a time (a member may run a team of its
 * own). */
void sgl_team_run(sgl_team *t, sgl_team_fn fn, void *ctx, void (*poll)(void), int poll_ms);

/* Stops and joins the threads, frees the team.  In a process forked from
 * the one that made the team (which has none of its threads), only frees
 * the memory. */
void sgl_team_free(sgl_team *t);

/* How many times an idle thread checks for work (with a pause between two
 * checks) before it sleeps: GOMP_SPINCOUNT if set (a number, or
 * "infinite"), else 0 under OMP_WAIT_POLICY=passive, unbounded under
 * OMP_WAIT_POLICY=active, else SGL_TEAM_SPIN_DEFAULT.  Read once. */
#define SGL_TEAM_SPIN_DEFAULT 1000L
long sgl_team_spin(void);
/* The same from the two variables' values (NULL: unset); LONG_MAX:
 * unbounded. */
long sgl_team_spin_of(const char *gomp_spincount, const char *omp_wait_policy);

/* OMP_STACKSIZE in bytes, as libgomp reads it (a size with an optional
 * unit B, K, M or G, K by default); 0 when unset or not a size. */
size_t sgl_team_stacksize(void);

#endif
