/*
 * sgl_team.c: a team of threads for one thread-level master (sgl_team.h).
 *
 * A run: the caller stores the work (fn, ctx) and the count of members
 * still to finish (`left`), then a new generation number (`gen`); each
 * member thread, waiting for gen to change, runs its member and
 * decrements left; the caller runs member 0, then waits for left to reach
 * 0.  The stores before gen's and the members' work before their
 * decrements are published by release and read by acquire.
 *
 * Waiting spins sgl_team_spin() times, then sleeps on the word itself
 * (a Linux futex: the kernel sleeps only while the word still holds the
 * value the thread saw, so no wake-up is lost; elsewhere, short naps).
 * A thread about to sleep first says so (`sleepers`, `caller_sleeps`);
 * the other side stores the word first, then reads that flag and wakes
 * the word only if set.  Both are sequentially consistent, so one of the
 * two sees the other, and a run whose threads are awake makes no system
 * call.  (Not a mutex and condition variable: a broadcast would wake every
 * member to take the mutex in turn.)
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "sgl_team.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#endif
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define LINE 64 /* a cache line: what one side writes and the other reads */

typedef struct member {
    sgl_team *team;
    int index;
    pthread_t thread;
} member;

struct sgl_team {
    /* written by the caller to start a run, read by the members */
    _Alignas(LINE) _Atomic int gen;
    sgl_team_fn fn;
    void *ctx;
    bool quit;
    /* written by the members as they finish, read by the caller */
    _Alignas(LINE) _Atomic int left;
    _Alignas(LINE) _Atomic int sleepers; /* members asleep or going to sleep */
    _Atomic int caller_sleeps;
    int n;
    int started; /* member threads started: n - 1, unless sgl_team_new failed */
    long spin;
    int ncpus;
    pid_t pid; /* the process whose threads these are */
    member *members; /* 1 .. n-1 (0 is the caller) */
};

/* The threads of this process's teams that are awake (not asleep in a
 * wait; the main thread counts as one).  With more of them than CPUs, a
 * thread that spins takes the CPU that another needs to finish its work:
 * see spin_turn.  The idle threads of nested teams, asleep, do not
 * count. */
#define THROTTLED 100L
static _Atomic int awake = 1;

/* The CPUs this process may run on. */
static int cpus(void)
{
    int c = 0;
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) c = CPU_COUNT(&set);
#endif
    if (c <= 0) {
        long x = sysconf(_SC_NPROCESSORS_ONLN);
        c = x > 0 && x < INT_MAX ? (int)x : 1;
    }
    return c;
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* More threads awake than CPUs, or this team alone has more. */
static inline bool crowded(const sgl_team *t)
{
    return t->n > t->ncpus || atomic_load_explicit(&awake, memory_order_relaxed) > t->ncpus;
}

/* One turn of a wait's spin, the i-th; false once the wait should sleep
 * instead.  On a crowded machine a waiting thread spins THROTTLED turns
 * at most, each giving its CPU away (sched_yield) to a thread that has
 * work, rather than a pause that keeps it. */
static inline bool spin_turn(const sgl_team *t, long i)
{
    if (i >= t->spin) return false;
    if (crowded(t)) {
        if (i >= THROTTLED) return false;
        sched_yield();
    } else {
        relax();
    }
    return true;
}

static bool blank(const char *s)
{
    while (isspace((unsigned char)*s)) s++;
    return *s == '\0';
}

long sgl_team_spin_of(const char *c, const char *w)
{
    while (c && isspace((unsigned char)*c)) c++;
    if (c && *c) {
        if (strncasecmp(c, "infinit", 7) == 0) return LONG_MAX;
        char *end = NULL;
        errno = 0;
        long long x = strtoll(c, &end, 10);
        if (end != c && x >= 0 && errno == 0) {
            while (isspace((unsigned char)*end)) end++;
            /* libgomp's suffixes: k, M, G, T (10^3, 10^6, 10^9, 10^12) */
            long long mul = 1;
            switch (*end) {
            case 'k': mul = 1000LL; end++; break;
            case 'M': mul = 1000000LL; end++; break;
            case 'G': mul = 1000000000LL; end++; break;
            case 'T': mul = 1000000000000LL; end++; break;
            default: break;
            }
            while (isspace((unsigned char)*end)) end++;
            if (*end == '\0') return x > LONG_MAX / mul ? LONG_MAX : (long)(x * mul);
        }
    }
    while (w && isspace((unsigned char)*w)) w++;
    if (w && strncasecmp(w, "passive", 7) == 0 && blank(w + 7)) return 0;
    if (w && strncasecmp(w, "active", 6) == 0 && blank(w + 6)) return LONG_MAX;
    return SGL_TEAM_SPIN_DEFAULT;
}

long sgl_team_spin(void)
{
    static _Atomic long cached = -1;
    long s = atomic_load_explicit(&cached, memory_order_relaxed);
    if (s < 0) {
        s = sgl_team_spin_of(getenv("GOMP_SPINCOUNT"), getenv("OMP_WAIT_POLICY"));
        atomic_store_explicit(&cached, s, memory_order_relaxed);
    }
    return s;
}

size_t sgl_team_stacksize(void)
{
    const char *e = getenv("OMP_STACKSIZE");
    if (!e) return 0;
    while (isspace((unsigned char)*e)) e++;
    char *end = NULL;
    unsigned long long x = strtoull(e, &end, 10);
    if (end == e || *e == '-') return 0;
    while (isspace((unsigned char)*end)) end++;
    size_t unit = (size_t)1 << 10;
    switch (toupper((unsigned char)*end)) {
    case 'B': unit = 1; end++; break;
    case 'K': end++; break;
    case 'M': unit = (size_t)1 << 20; end++; break;
    case 'G': unit = (size_t)1 << 30; end++; break;
    default: break;
    }
    while (isspace((unsigned char)*end)) end++;
    if (*end || x > SIZE_MAX / unit) return 0;
    return (size_t)x * unit;
}

/* Sleeps while *w == v, at most ms milliseconds if ms > 0 (spurious
 * returns are the caller's to check). */
static void word_wait(_Atomic int *w, int v, double ms)
{
#ifdef __linux__
    long ns = (long)(ms * 1e6) + 1;
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    syscall(SYS_futex, (int *)w, FUTEX_WAIT_PRIVATE, v, ms > 0 ? &ts : NULL, NULL, 0);
#else
    struct timespec ts = {0, 50000L}; /* 50 us */
    if (atomic_load(w) == v) nanosleep(&ts, NULL);
    (void)ms;
#endif
}

static void word_wake(_Atomic int *w, int nthreads)
{
#ifdef __linux__
    syscall(SYS_futex, (int *)w, FUTEX_WAKE_PRIVATE, nthreads, NULL, NULL, 0);
#else
    (void)w;
    (void)nthreads;
#endif
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* A member thread: waits for each new generation and runs its member. */
static void *member_main(void *arg)
{
    member *m = arg;
    sgl_team *t = m->team;
    int seen = 0; /* gen when the team was made: no run before sgl_team_new returns */
    for (;;) {
        int g = seen;
        for (long i = 0; (g = atomic_load_explicit(&t->gen, memory_order_acquire)) == seen; i++)
            if (!spin_turn(t, i)) break;
        if (g == seen) {
            atomic_fetch_add(&t->sleepers, 1);
            atomic_fetch_sub_explicit(&awake, 1, memory_order_relaxed);
            while ((g = atomic_load(&t->gen)) == seen) word_wait(&t->gen, seen, 0);
            atomic_fetch_add_explicit(&awake, 1, memory_order_relaxed);
            atomic_fetch_sub(&t->sleepers, 1);
        }
        seen = g;
        if (t->quit) {
            atomic_fetch_sub_explicit(&awake, 1, memory_order_relaxed);
            return NULL;
        }
        t->fn(t->ctx, m->index);
        if (atomic_fetch_sub(&t->left, 1) == 1 && atomic_load(&t->caller_sleeps))
            word_wake(&t->left, 1);
    }
}

/* A new generation: the members start (fn, ctx, quit stored before). */
static void publish(sgl_team *t)
{
    /* (wraps: the generations differ, which is all a member asks) */
    atomic_store(&t->gen, (int)((unsigned)atomic_load_explicit(&t->gen, memory_order_relaxed) + 1u));
    if (atomic_load(&t->sleepers) > 0) word_wake(&t->gen, INT_MAX);
}

sgl_team *sgl_team_new(int n, size_t stack)
{
    if (n < 1) {
        errno = EINVAL;
        return NULL;
    }
    sgl_team *t = NULL;
    if (posix_memalign((void **)&t, LINE, sizeof *t) != 0) {
        errno = ENOMEM;
        return NULL;
    }
    memset(t, 0, sizeof *t);
    t->n = n;
    t->spin = sgl_team_spin();
    t->ncpus = cpus();
    t->pid = getpid();
    t->members = calloc((size_t)n, sizeof *t->members);
    int err = t->members ? 0 : ENOMEM;
    pthread_attr_t attr;
    if (!err) err = pthread_attr_init(&attr);
    if (err) {
        free(t->members);
        free(t);
        errno = err;
        return NULL;
    }
    if (stack) {
        long page = sysconf(_SC_PAGESIZE);
        size_t p = page > 0 ? (size_t)page : 4096;
        if (stack < (size_t)PTHREAD_STACK_MIN) stack = (size_t)PTHREAD_STACK_MIN;
        err = pthread_attr_setstacksize(&attr, (stack + p - 1) / p * p);
    }
    for (int i = 1; !err && i < n; i++) {
        member *m = &t->members[i];
        m->team = t;
        m->index = i;
        err = pthread_create(&m->thread, &attr, member_main, m);
        if (err) break;
        t->started++;
        atomic_fetch_add_explicit(&awake, 1, memory_order_relaxed);
    }
    pthread_attr_destroy(&attr);
    if (err) {
        sgl_team_free(t);
        errno = err;
        return NULL;
    }
    return t;
}

static void wait_done(sgl_team *t, void (*poll)(void), int poll_ms)
{
    for (long i = 0; atomic_load_explicit(&t->left, memory_order_acquire) != 0; i++) {
        if (poll && (i & 4095) == 4095) poll(); /* a long (or endless) spin polls too */
        if (!spin_turn(t, i)) break;
    }
    if (atomic_load_explicit(&t->left, memory_order_acquire) == 0) return;
    atomic_store(&t->caller_sleeps, 1);
    atomic_fetch_sub_explicit(&awake, 1, memory_order_relaxed);
    double next = poll ? now_ms() + poll_ms : 0;
    for (int l; (l = atomic_load(&t->left)) != 0;) {
        if (!poll) {
            word_wait(&t->left, l, 0);
            continue;
        }
        double ms = next - now_ms();
        if (ms > 0) {
            word_wait(&t->left, l, ms);
            continue;
        }
        poll();
        next = now_ms() + poll_ms;
    }
    atomic_fetch_add_explicit(&awake, 1, memory_order_relaxed);
    atomic_store_explicit(&t->caller_sleeps, 0, memory_order_relaxed);
}

void sgl_team_run(sgl_team *t, sgl_team_fn fn, void *ctx, void (*poll)(void), int poll_ms)
{
    if (t->n == 1) {
        fn(ctx, 0);
        return;
    }
    t->fn = fn;
    t->ctx = ctx;
    atomic_store_explicit(&t->left, t->n - 1, memory_order_relaxed);
    publish(t);
    fn(ctx, 0);
    wait_done(t, poll, poll_ms);
}

void sgl_team_free(sgl_team *t)
{
    if (!t) return;
    if (t->pid == getpid()) {
        t->quit = true;
        publish(t);
        for (int i = 1; i <= t->started; i++) pthread_join(t->members[i].thread, NULL);
    }
    free(t->members);
    free(t);
}
