/*
 * sgl_crash.c: the report of a crash.  An executable (sgl_run) installs a
 * handler for the signals a fault raises (SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE, and SIGABRT of an abort), before MPI starts, so that Open MPI
 * keeps it (it installs its own only where none is); the main thread gets
 * an alternate stack (unless it has one), so that a stack overflow there
 * is reported too.  The handler writes to stderr, with async-signal-safe
 * calls only (write, open, read, the string functions) but for glibc's
 * backtrace (its libgcc is loaded at install time; should it wait for a
 * lock that the crashed thread holds, an alarm ends the process 5 s into
 * the report, by the crash's signal):
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
 * (a signal that another process sent says so instead of the third
 * line), and then the signal ends the process as it would have without
 * the handler (its default action: a core dump where they are enabled,
 * the exit status of a signal, mpirun's note that a rank was killed).
 * One thread reports: another that faults meanwhile waits for the end; a
 * fault inside the report ends the process at once.  Addresses are
 * placed in the process's mappings (/proc/self/maps, Linux, read in
 * chunks) as file+offset, the offset being the file's.
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

/* n bytes of s, cut to what fits (t stays terminated) */
static void t_putn(text *t, const char *s, size_t n)
{
    if (n > t->cap - 1 - t->len) n = t->cap - 1 - t->len;
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void t_put(text *t, const char *s)
{
    t_putn(t, s, strlen(s));
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

/* The search for an address's mapping, one line of the maps at a time
 * (the paths copied: the lines may come in chunks that are overwritten). */
typedef struct {
    uintptr_t addr;
    bool found, have_below;
    mapping hit, below;
    char hit_path[512], below_path[512];
} place_search;

static void keep_mapping(mapping *to, char *path, size_t cap, const mapping *m)
{
    *to = *m;
    to->path_len = m->path_len < cap ? m->path_len : cap;
    memcpy(path, m->path, to->path_len);
    to->path = path;
}

static void search_line(place_search *ps, const char *s, const char *end)
{
    mapping m;
    if (ps->found || !parse_line(s, end, &m)) return;
    if (ps->addr >= m.start && ps->addr < m.end) {
        keep_mapping(&ps->hit, ps->hit_path, sizeof ps->hit_path, &m);
        ps->found = true;
    } else if (m.end <= ps->addr && (!ps->have_below || m.end > ps->below.end)) {
        keep_mapping(&ps->below, ps->below_path, sizeof ps->below_path, &m);
        ps->have_below = true;
    }
}

/* The lines of buf[0 .. len) (the last one ended by the end of the text
 * when `last`); the length of an unfinished last line otherwise. */
static size_t search_lines(place_search *ps, const char *buf, size_t len, bool last)
{
    const char *s = buf, *end = buf + len;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl && !last) return (size_t)(end - s);
        search_line(ps, s, nl ? nl : end);
        s = nl ? nl + 1 : end;
    }
    return 0;
}

static void put_mapping(text *t, const mapping *m)
{
    if (m->path_len > 0) {
        t_putn(t, m->path, m->path_len);
    } else {
        t_put(t, "anonymous memory at ");
        t_hex(t, m->start);
    }
}

static void put_result(const place_search *ps, char *out, size_t outsz)
{
    text t = {out, 0, outsz};
    if (outsz == 0) return;
    out[0] = '\0';
    if (ps->found) {
        const mapping *m = &ps->hit;
        put_mapping(&t, m);
        t_put(&t, "+");
        t_hex(&t, ps->addr - m->start + (m->path_len > 0 && m->path[0] == '/' ? m->offset : 0));
        return;
    }
    t_put(&t, "no mapping");
    if (ps->have_below) {
        t_put(&t, "; ");
        t_hex(&t, ps->addr - ps->below.end);
        t_put(&t, " past the end of ");
        put_mapping(&t, &ps->below);
    }
}

void sgl_crash_place(const char *maps, size_t len, uintptr_t addr, char *out, size_t outsz)
{
    place_search ps = {.addr = addr};
    search_lines(&ps, maps, len, true);
    put_result(&ps, out, outsz);
}

bool sgl_crash_place_fd(int fd, uintptr_t addr, char *out, size_t outsz)
{
    static char buf[1 << 16]; /* one report at a time (crash_once) */
    place_search ps = {.addr = addr};
    size_t have = 0; /* an unfinished line at buf's start */
    bool any = false;
    for (;;) {
        if (have == sizeof buf) /* a line longer than buf: cut */
            have = search_lines(&ps, buf, have, true);
        ssize_t r = read(fd, buf + have, sizeof buf - have);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        any = true;
        size_t len = have + (size_t)r;
        have = search_lines(&ps, buf, len, false);
        memmove(buf, buf + len - have, have);
    }
    search_lines(&ps, buf, have, true);
    put_result(&ps, out, outsz);
    return any;
}

/* ------------------------------------------------------------------ */
/* The handler                                                         */

static const char *crash_file = "sgl";
static long long crash_rank = -1;
static atomic_flag crash_once = ATOMIC_FLAG_INIT;
static _Atomic long crash_tid; /* the reporting thread (Linux), else 0 */
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

/* addr, and where it is in the process's mappings */
static void t_address(text *t, uintptr_t addr)
{
    t_hex(t, addr);
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char place[1200];
    bool any = sgl_crash_place_fd(fd, addr, place, sizeof place);
    close(fd);
    if (!any) return;
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
    if (code <= 0) return "";
#ifdef SI_KERNEL
    if (code == SI_KERNEL) /* x86: a general protection fault, no address */
        return sig == SIGSEGV ? "general protection fault: a non-canonical address, a misaligned "
                                "aligned access or a privileged instruction"
                              : "";
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

static long my_tid(void)
{
#if defined(__linux__)
    return syscall(SYS_gettid);
#else
    return 0;
#endif
}

static void crash_handler(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    long tid = my_tid();
    if (atomic_flag_test_and_set(&crash_once)) {
        if (tid != 0 && tid == atomic_load(&crash_tid)) /* a fault in the report itself */
            crash_timeout(0);
        /* another thread reports, and its signal ends the process; in
         * case it does not (its alarm, 5 s, comes first), this one does */
        struct timespec ts = {0, 50000000};
        for (int i = 0; i < 200; i++) nanosleep(&ts, NULL);
        signal(sig, SIG_DFL);
        raise(sig);
        errno = saved;
        return;
    }
    atomic_store(&crash_tid, tid);
    crash_sig = sig;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = crash_timeout;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) == 0) alarm(5);
    text t = {line_buf, 0, sizeof line_buf};
    /* sent by kill (SI_USER, SI_TKILL): by this process (abort) or another */
    bool sent = si->si_code == SI_USER || si->si_code == SI_TKILL;
    bool from_outside = sent && si->si_pid != getpid();

    t_put(&t, crash_file);
    t_put(&t, ": crash: ");
    t_put(&t, sig_name(sig));
    const char *what = code_name(sig, si->si_code);
    if (*what) {
        t_put(&t, " (");
        t_put(&t, what);
        t_put(&t, ")");
    } else if (from_outside) {
        t_put(&t, " (sent by process ");
        t_dec(&t, (long long)si->si_pid);
        t_put(&t, ")");
    } else if (sent) {
        t_put(&t, sig == SIGABRT ? " (abort)" : " (raised by the process)");
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
    if (from_outside)
        t_put(&t, ": the signal came from outside the program (kill): it ends the process "
                  "as it would without this report\n");
    else
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
#if defined(__GLIBC__)
    void *f[1];
    (void)backtrace(f, 1); /* loads libgcc_s now, not in the handler */
#endif
    static char alt[1 << 16];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0}, old_ss;
    bool on_alt = sigaltstack(NULL, &old_ss) == 0 &&
                  (!(old_ss.ss_flags & SS_DISABLE) /* one already: keep it */ ||
                   sigaltstack(&ss, NULL) == 0);
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa, old;
        /* a handler already there (or SIG_IGN) is someone's own: kept */
        if (sigaction(sigs[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
            old.sa_handler != SIG_DFL)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = crash_handler;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_SIGINFO | (on_alt ? SA_ONSTACK : 0);
        (void)sigaction(sigs[i], &sa, NULL);
    }
}

void sgl_crash_set_rank(int rank)
{
    crash_rank = rank;
}
