/*
 * sgl_crash.c: the report of a crash.  An executable (sgl_run) installs a
 * handler for the signals a fault raises (SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE, and SIGABRT of an abort), before MPI starts, so that Open MPI
 * keeps it (it installs its own only where none is).  The handler writes
 * to stderr, with async-signal-safe calls only (write, open, read and the
 * string functions) but for glibc's backtrace (its libgcc is loaded at
 * install time; should it wait for a lock that the crashed thread holds,
 * an alarm ends the process 5 s into the report):
 *
 *   prog.sgl: crash: SIGSEGV (address not mapped) at 0x7f...66f0 (no
 *     mapping; 0x1a6f0 past the end of /usr/lib/.../libfoo.so.40)
 *   prog.sgl: in thread 4242 "prog" of process 4240 (rank 0), code at
 *     0x7f... (/usr/lib/.../libbar.so+0x12345)
 *   prog.sgl: this is a bug of sglc or of a library it runs on (or, in a
 *     program built with --unchecked, a failed check): please report it
 *     with these lines
 *   then the backtrace (glibc's backtrace_symbols_fd)
 *
 * and then the signal ends the process as it would have without the
 * handler (its default action: a core dump where they are enabled, the
 * exit status of a signal, mpirun's note that a rank was killed).
 * Addresses are placed in the process's mappings (/proc/self/maps, Linux)
 * as file+offset, the offset being the file's (what `addr2line -e file`
 * and gdb take).  The main thread runs the handler on an alternate stack
 * (a stack overflow is a crash of its own); other threads on theirs.
 */
#define _GNU_SOURCE
#include "sgl_crash.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/syscall.h>
#include <ucontext.h>
#endif
#if defined(__GLIBC__)
#include <execinfo.h>
#endif

/* ------------------------------------------------------------------ */
/* Text without stdio (async-signal-safe)                              */

typedef struct {
    char *p;
    size_t len, cap;
} text;

static void t_put(text *t, const char *s)
{
    size_t n = strlen(s);
    if (n > t->cap - 1 - t->len) n = t->cap - 1 - t->len;
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void t_putn(text *t, const char *s, size_t n)
{
    if (n > t->cap - 1 - t->len) n = t->cap - 1 - t->len;
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void t_hex(text *t, uintptr_t x)
{
    char b[2 + 2 * sizeof x + 1], *e = b + sizeof b - 1;
    *e = '\0';
    do {
        *--e = "0123456789abcdef"[x & 15];
        x >>= 4;
    } while (x);
    *--e = 'x';
    *--e = '0';
    t_put(t, e);
}

static void t_dec(text *t, long long x)
{
    char b[24], *e = b + sizeof b - 1;
    unsigned long long u = x < 0 ? 0ull - (unsigned long long)x : (unsigned long long)x;
    *e = '\0';
    do {
        *--e = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (x < 0) *--e = '-';
    t_put(t, e);
}

/* ------------------------------------------------------------------ */
/* Where an address is                                                 */

/* The hexadecimal number at *s (advanced past it). */
static uintptr_t parse_hex(const char **s, const char *end)
{
    uintptr_t x = 0;
    for (; *s < end; (*s)++) {
        char c = **s;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) break;
        x = x * 16 + (uintptr_t)d;
    }
    return x;
}

/* One line of /proc/PID/maps: "start-end perms offset dev inode   path". */
typedef struct {
    uintptr_t start, end, offset;
    const char *path; /* not terminated: path_len bytes; "" for none */
    size_t path_len;
} mapping;

static bool parse_line(const char *s, const char *end, mapping *m)
{
    m->start = parse_hex(&s, end);
    if (s >= end || *s != '-') return false;
    s++;
    m->end = parse_hex(&s, end);
    m->offset = 0;
    for (int field = 0; field < 4; field++) { /* perms, offset, dev, inode */
        while (s < end && *s == ' ') s++;
        if (field == 1)
            m->offset = parse_hex(&s, end);
        else
            while (s < end && *s != ' ') s++;
    }
    while (s < end && *s == ' ') s++;
    m->path = s;
    m->path_len = (size_t)(end - s);
    return m->end > m->start;
}

static void put_place(text *t, const mapping *m, uintptr_t addr)
{
    if (m->path_len > 0) {
        t_putn(t, m->path, m->path_len);
    } else {
        t_put(t, "anonymous memory at ");
        t_hex(t, m->start);
    }
    t_put(t, "+");
    t_hex(t, addr - m->start + (m->path_len > 0 && m->path[0] == '/' ? m->offset : 0));
}

void sgl_crash_place(const char *maps, size_t len, uintptr_t addr, char *out, size_t outsz)
{
    text t = {out, 0, outsz};
    if (outsz == 0) return;
    out[0] = '\0';
    const char *s = maps, *end = maps + len;
    mapping below = {0}, m;
    bool have_below = false;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *le = nl ? nl : end;
        if (parse_line(s, le, &m)) {
            if (addr >= m.start && addr < m.end) {
                put_place(&t, &m, addr);
                return;
            }
            if (m.end <= addr && (!have_below || m.end > below.end)) {
                below = m;
                have_below = true;
            }
        }
        s = nl ? nl + 1 : end;
    }
    t_put(&t, "no mapping");
    if (have_below) {
        t_put(&t, "; ");
        t_hex(&t, addr - below.end);
        t_put(&t, " past the end of ");
        if (below.path_len > 0) {
            t_putn(&t, below.path, below.path_len);
        } else {
            t_put(&t, "anonymous memory at ");
            t_hex(&t, below.start);
        }
    }
}

/* ------------------------------------------------------------------ */
/* The handler                                                         */

static const char *crash_file = "sgl";
static long long crash_rank = -1;
static atomic_flag crash_once = ATOMIC_FLAG_INIT;
static char maps_buf[1 << 18]; /* untouched (no pages) until a crash */
static size_t maps_len;
static char line_buf[4096];

static size_t read_file(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    size_t n = 0;
    while (n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd);
    return n;
}

static void say(const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

/* addr, and where it is in the mappings read (maps_buf) */
static void t_address(text *t, uintptr_t addr)
{
    t_hex(t, addr);
    if (maps_len == 0) return;
    char place[1024];
    sgl_crash_place(maps_buf, maps_len, addr, place, sizeof place);
    t_put(t, " (");
    t_put(t, place);
    t_put(t, ")");
}

static const char *sig_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    default: return "a signal";
    }
}

static const char *code_name(int sig, int code)
{
    if (code <= 0) return code == SI_USER || code == SI_TKILL ? "sent by a process" : "";
#ifdef SI_KERNEL
    if (code == SI_KERNEL) /* x86: a general protection fault, no address */
        return sig == SIGSEGV ? "general protection fault: an address outside the address space" : "";
#endif
    switch (sig) {
    case SIGSEGV:
        return code == SEGV_MAPERR ? "address not mapped" : code == SEGV_ACCERR ? "access not allowed" : "";
    case SIGBUS:
        return code == BUS_ADRERR ? "no such address in the file" : code == BUS_ADRALN ? "misaligned access" : "";
    case SIGFPE:
        return code == FPE_INTDIV ? "integer division by zero" : code == FPE_INTOVF ? "integer overflow" : "";
    case SIGILL: return "illegal instruction";
    default: return "";
    }
}

static uintptr_t crash_pc(void *uc_)
{
#if defined(__linux__) && defined(__x86_64__)
    return (uintptr_t)((ucontext_t *)uc_)->uc_mcontext.gregs[REG_RIP];
#elif defined(__linux__) && defined(__aarch64__)
    return (uintptr_t)((ucontext_t *)uc_)->uc_mcontext.pc;
#else
    (void)uc_;
    return 0;
#endif
}

static volatile sig_atomic_t crash_sig;

/* SIGALRM, 5 s into a report that has not ended (the backtrace waits for
 * a lock that a crashed thread holds): the crash's signal ends the
 * process now, with its default action (on whichever thread this runs) */
static void crash_timeout(int sig)
{
    (void)sig;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, crash_sig);
    signal(crash_sig, SIG_DFL);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(crash_sig);
}

static void crash_handler(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    if (atomic_flag_test_and_set(&crash_once)) {
        /* another thread reports, and its signal ends the process; in
         * case it does not within 5 s, this one does */
        struct timespec ts = {0, 50000000};
        for (int i = 0; i < 100; i++) nanosleep(&ts, NULL);
        signal(sig, SIG_DFL);
        raise(sig);
        errno = saved;
        return;
    }
    crash_sig = sig;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = crash_timeout;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) == 0) alarm(5);
    maps_len = read_file("/proc/self/maps", maps_buf, sizeof maps_buf);
    text t = {line_buf, 0, sizeof line_buf};

    t_put(&t, crash_file);
    t_put(&t, ": crash: ");
    t_put(&t, sig_name(sig));
    const char *what = code_name(sig, si->si_code);
    if (*what) {
        t_put(&t, " (");
        t_put(&t, what);
        t_put(&t, ")");
    }
    bool addressed = si->si_code > 0;
#ifdef SI_KERNEL
    addressed = addressed && si->si_code != SI_KERNEL;
#endif
    if (addressed && (sig == SIGSEGV || sig == SIGBUS)) {
        t_put(&t, " at ");
        t_address(&t, (uintptr_t)si->si_addr);
    }
    t_put(&t, "\n");
    t_put(&t, crash_file);
    t_put(&t, ": in thread ");
#if defined(__linux__)
    long tid = syscall(SYS_gettid);
    t_dec(&t, tid);
    char comm[64], path[64];
    text pt = {path, 0, sizeof path};
    t_put(&pt, "/proc/self/task/");
    t_dec(&pt, tid);
    t_put(&pt, "/comm");
    size_t cn = read_file(path, comm, sizeof comm - 1);
    while (cn > 0 && comm[cn - 1] == '\n') cn--;
    if (cn > 0) {
        t_put(&t, " \"");
        t_putn(&t, comm, cn);
        t_put(&t, "\"");
    }
    t_put(&t, " of");
#endif
    t_put(&t, " process ");
    t_dec(&t, (long long)getpid());
    if (crash_rank >= 0) {
        t_put(&t, " (rank ");
        t_dec(&t, crash_rank);
        t_put(&t, ")");
    }
    uintptr_t pc = crash_pc(uc);
    if (pc) {
        t_put(&t, ", code at ");
        t_address(&t, pc);
    }
    t_put(&t, "\n");
    t_put(&t, crash_file);
    t_put(&t, ": this is a bug of sglc or of a library it runs on (or, in a program built "
              "with --unchecked, a failed check): please report it with these lines\n");
    say(t.p, t.len);
#if defined(__GLIBC__)
    void *frames[64];
    int nf = backtrace(frames, 64);
    if (nf > 0) {
        say("backtrace:\n", 11);
        backtrace_symbols_fd(frames, nf, STDERR_FILENO);
    }
#endif
    /* the default disposition again: the signal, blocked in here, ends
     * the process when the handler returns (a fault would also happen
     * again).  Not SA_RESETHAND: another thread's fault during the report
     * must wait above, not end the process with the report half written */
    signal(sig, SIG_DFL);
    raise(sig);
    errno = saved;
}

void sgl_crash_install(const char *file)
{
    static bool done;
    if (done) return;
    done = true;
    if (file) crash_file = file;
    const char *env = getenv("SGL_NO_CRASH_REPORT"); /* a debugger's or a tool's own handler */
    if (env && *env && strcmp(env, "0") != 0) return;
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank) rank = getenv("PMIX_RANK");
    if (!rank) rank = getenv("PMI_RANK");
    if (rank && *rank) crash_rank = strtoll(rank, NULL, 10);
#if defined(__GLIBC__)
    void *f[1];
    (void)backtrace(f, 1); /* loads libgcc_s now, not in the handler */
#endif
    static char alt[1 << 16];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    bool on_alt = sigaltstack(&ss, NULL) == 0;
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa, old;
        if (sigaction(sigs[i], NULL, &old) != 0) continue;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;
        if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue; /* someone's own */
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = crash_handler;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_SIGINFO | (on_alt ? SA_ONSTACK : 0);
        (void)sigaction(sigs[i], &sa, NULL);
    }
}
