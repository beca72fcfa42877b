/* syscall_surface.c: the attack-surface tries of kbound's static programs. Every entry of the
 * seccomp table is tried with arguments that do nothing whether the call is allowed or refused,
 * each in a forked process of its own, through the native ABI and every other one the running
 * kernel accepts (i386 through int 0x80, x32), and what each returned is written as one JSON object
 * (docs/seccomp.md). It knows the table, never the policy: the host compares the answers with
 * what the filter it built gives. kbound-syscall-probe prints that object; kbound-probe's
 * attack-surface cell puts it in its result as "child". Its keys are facts.def's (SURFACE_TRIES,
 * SURFACE_ABI, TRY, ROUTE), which the judge reads through the same names; the JSON is printed by
 * hand, the keys through kb_fact_key, since kbound-syscall-probe links nothing but libc. */
#include "syscall_probe_table.h"
#include "syscall_surface.h"
#include "syscall_tries.h"
#include "tool_io.h"
#include "base/facts.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

_Static_assert(KB_PROBE_TABLE_NR_GETPID == SYS_getpid,
               "syscall_probe_table.h holds the numbers of another ABI than the one this program is built for");

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* One entry of the seccomp table, as the probe needs it. */
typedef struct probe_entry {
        const char *name;        /* kb_seccomp_entry.name */
        const char *syscall;     /* the call as libseccomp names it ("socket" for families) */
        bool family;             /* a socket family: value is its number */
        long nr[KB_SYSABI_MAX_]; /* the call's number on each ABI, or -1: the ABI has no such call */
        uint64_t value;          /* the clone flag, ioctl request or family number; else 0 */
} probe_entry;

#define PROBE_ENTRY(name_, syscall_, family_, native_, compat32_, x32_, value_)                                        \
        {.name = name_, .syscall = syscall_, .family = family_, .nr = {native_, compat32_, x32_}, .value = value_},
static const probe_entry entries[] = {KB_PROBE_TABLE(PROBE_ENTRY)};

/* getpid's, socket's, socketpair's and socketcall's numbers on each ABI (-1: none); getpid's says
 * whether the filter has rules for the ABI at all. */
static const long nr_getpid[KB_SYSABI_MAX_] = KB_PROBE_NR_GETPID;
static const long nr_socket[KB_SYSABI_MAX_] = KB_PROBE_NR_SOCKET;
static const long nr_socketpair[KB_SYSABI_MAX_] = KB_PROBE_NR_SOCKETPAIR;
static const long nr_socketcall[KB_SYSABI_MAX_] = KB_PROBE_NR_SOCKETCALL;

/* A try that hangs (it never should) is killed after this long and reported untested. */
#define TRY_SECONDS 10
/* AF_UNIX with a bit above the 32 the kernel reads: see families_gate. */
#define FAMILY_CANARY ((long) ((1ULL << 32) | AF_UNIX))
#define CAP_SYS_BOOT_BIT 22
#define STATUS_MAX 65536

/* What one try came back with. */
typedef struct outcome {
        bool tested;
        long result;   /* when tested: what the call returned (>= 0), or -errno */
        int signal;    /* when not tested: the signal that killed the process that tried it, or 0 */
        char why[256]; /* when not tested: why */
} outcome;

static void untested(outcome *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void untested(outcome *o, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        o->tested = false;
        o->result = 0;
        o->signal = 0;
        vsnprintf(o->why, sizeof o->why, fmt, ap);
        va_end(ap);
}

/* Runs fn(call, value) in a forked grandchild and fills *o with what the call returned. Each try
 * gets a fresh process: a try that must change process state (personality, a namespace) changes
 * only a process that exits right after, no try can change what the next one sees, and a try the
 * kernel or a filter kills is reported rather than ending the probe. */
static void run_forked(kb_try_fn fn, const kb_call *call, uint64_t value, outcome *o) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0) {
                untested(o, "not tried: pipe2: %s", strerror(errno));
                return;
        }
        pid_t pid = fork();
        if (pid < 0) {
                untested(o, "not tried: fork: %s", strerror(errno));
                close(p[0]);
                close(p[1]);
                return;
        }
        if (pid == 0) {
                /* whatever the spawning process left ignored or blocked, the alarm must kill */
                sigset_t alarm_set;
                sigemptyset(&alarm_set);
                sigaddset(&alarm_set, SIGALRM);
                sigprocmask(SIG_UNBLOCK, &alarm_set, NULL);
                signal(SIGALRM, SIG_DFL);
                alarm(TRY_SECONDS);
                long r = fn(call, value);
                ssize_t w = write(p[1], &r, sizeof r);
                _exit(w == (ssize_t) sizeof r ? 0 : 1);
        }
        close(p[1]);
        long r = 0;
        ssize_t got;
        do
                got = read(p[0], &r, sizeof r);
        while (got < 0 && errno == EINTR);
        close(p[0]);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR) {
                        untested(o, "not known: waitpid: %s", strerror(errno));
                        return;
                }
        if (WIFSIGNALED(status)) {
                int sig = WTERMSIG(status);
                char detail[80] = "";
                if (sig == SIGSYS)
                        snprintf(detail, sizeof detail, ": a filter that kills instead of answering an errno");
                else if (sig == SIGALRM)
                        snprintf(detail, sizeof detail, ": the call did not return within %d s", TRY_SECONDS);
                untested(o, "the process that tried it was killed by signal SIG%s (%d)%s",
                         sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", sig, detail);
                o->signal = sig;
                return;
        }
        if (got != (ssize_t) sizeof r) {
                untested(o, "the process that tried it exited with status %d before it reported",
                         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
                return;
        }
        o->tested = true;
        o->result = r;
        o->why[0] = '\0';
}

/* The fields of /proc/self/status the probe needs; -1 where a field is missing. */
typedef struct status_fields {
        long seccomp; /* Seccomp: 0 none, 1 strict, 2 filter */
        long filters; /* Seccomp_filters: how many filters are stacked */
        bool cap_eff_known;
        uint64_t cap_eff; /* CapEff */
} status_fields;

static void read_status(status_fields *st) {
        *st = (status_fields){.seccomp = -1, .filters = -1};
        char *buf = NULL;
        if (kb_tool_read_file("/proc/self/status", STATUS_MAX, &buf, NULL) < 0)
                return;
        for (char *line = buf; line && *line;) {
                char *next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                char *colon = strchr(line, ':');
                if (colon) {
                        *colon = '\0';
                        const char *value = colon + 1;
                        char *end = NULL;
                        errno = 0;
                        if (strcmp(line, "Seccomp") == 0) {
                                long v = strtol(value, &end, 10);
                                if (errno == 0 && end != value)
                                        st->seccomp = v;
                        } else if (strcmp(line, "Seccomp_filters") == 0) {
                                long v = strtol(value, &end, 10);
                                if (errno == 0 && end != value)
                                        st->filters = v;
                        } else if (strcmp(line, "CapEff") == 0) {
                                unsigned long long v = strtoull(value, &end, 16);
                                if (errno == 0 && end != value) {
                                        st->cap_eff = v;
                                        st->cap_eff_known = true;
                                }
                        }
                }
                line = next;
        }
        free(buf);
}

/* kexec with CAP_SYS_BOOT spends one of kernel.kexec_load_limit_reboot's loads when an
 * administrator set one (-1, the default, means no limit), before it reads the arguments: with the
 * capability (no sandbox of kbound's has it) and a limit, the kexec tries are left out. */
static bool kexec_would_spend_a_load(const status_fields *st) {
        if (st->cap_eff_known && !(st->cap_eff & (UINT64_C(1) << CAP_SYS_BOOT_BIT)))
                return false;
        int fd = open("/proc/sys/kernel/kexec_load_limit_reboot", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return false; /* no such limit on this kernel */
        char buf[32] = {0};
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        return !(n > 0 && strncmp(buf, "-1", 2) == 0);
}

/* The native ABI's family tries: real sockets, behind families_gate. */
static long try_socket(const kb_call *call, uint64_t family) {
        return kb_tries_family((long) family, false);
}
static long try_socketpair(const kb_call *call, uint64_t family) {
        return kb_tries_family((long) family, true);
}

/* The other ABIs' family tries: inert ones (kb_tries_family_inert), call->nr the route's call. */
static long try_inert_socket(const kb_call *call, uint64_t family) {
        return kb_tries_family_inert(call, (long) family, KB_FAMILY_SOCKET);
}
static long try_inert_socketpair(const kb_call *call, uint64_t family) {
        return kb_tries_family_inert(call, (long) family, KB_FAMILY_SOCKETPAIR);
}
static long try_inert_socketcall(const kb_call *call, uint64_t family) {
        return kb_tries_family_inert(call, (long) family, KB_FAMILY_SOCKETCALL_SOCKET);
}
static long try_inert_socketcall_pair(const kb_call *call, uint64_t family) {
        return kb_tries_family_inert(call, (long) family, KB_FAMILY_SOCKETCALL_SOCKETPAIR);
}

/* Whether the families may be tried; if not, says why in why. Creating a socket of a family whose
 * module is not loaded makes the host kernel load it, for anyone and from inside any namespace, so
 * families are tried only behind a filter that refuses them before any kernel code runs. Two
 * conditions: the process is under a seccomp filter at all (Seccomp: 2), and that filter compares
 * the family on the whole register, as kbound's does and as a filter that only refuses a few calls
 * does not. The canary tells: AF_UNIX with bit 32 set, which kbound's filter refuses with
 * EAFNOSUPPORT in every socket mode, and which without such a filter is an AF_UNIX socket (the
 * kernel reads an int), closed at once. */
static bool families_gate(const status_fields *st, char *why, size_t n) {
        if (st->seccomp != 2) {
                char mode[24] = "missing";
                if (st->seccomp >= 0)
                        snprintf(mode, sizeof mode, "%ld", st->seccomp);
                snprintf(why, n,
                         "not tried: /proc/self/status says Seccomp: %s, not 2 (no filter), and creating "
                         "a socket of a family whose module is not loaded would make the host kernel load it",
                         mode);
                return false;
        }
        if (sizeof(long) < 8) {
                snprintf(why, n, "not tried: this ABI cannot pass the 64-bit family canary");
                return false;
        }
        outcome canary;
        const kb_call native = {.abi = KB_SYSABI_NATIVE, .nr = SYS_socket};
        run_forked(try_socket, &native, (uint64_t) FAMILY_CANARY, &canary);
        if (canary.tested && canary.result == -EAFNOSUPPORT)
                return true;
        char buf[KB_TOOL_ERRNO_NAME_MAX];
        snprintf(why, n,
                 "not tried: Seccomp is 2, but socket(2) of AF_UNIX with bit 32 of the family set came "
                 "back %s, where kbound's filter says EAFNOSUPPORT: no filter of the families is visible, "
                 "and creating a socket of a family whose module is not loaded would make the host kernel "
                 "load it",
                 !canary.tested       ? "untested"
                 : canary.result >= 0 ? "allowed"
                                      : kb_tool_errno_name((int) -canary.result, buf, sizeof buf));
        return false;
}

/* ---------- JSON out ---------- */

static void put_string(FILE *f, const char *s) {
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                if (*p == '"' || *p == '\\') {
                        fputc('\\', f);
                        fputc(*p, f);
                } else if (*p < 0x20 || *p == 0x7f) {
                        fprintf(f, "\\u%04x", *p);
                } else {
                        fputc(*p, f);
                }
        }
        fputc('"', f);
}

static void put_long_or_null(FILE *f, long v) {
        if (v < 0)
                fputs("null", f);
        else
                fprintf(f, "%ld", v);
}

/* `"key": ` of a fact of the tries' objects (facts.def's SURFACE_TRIES, TRY and SOCKETPAIR), after
 * ", " unless it is its object's first. */
static void put_key(FILE *f, bool first, const char *key) {
        if (!first)
                fputs(", ", f);
        put_string(f, key);
        fputs(": ", f);
}

/* The facts an outcome is written as: a TRY's, or a ROUTE's. */
typedef struct outcome_facts {
        kb_fact_str errno_name;
        kb_fact_int ret;
        kb_fact_bool tested;
        kb_fact_str why;
        kb_fact_int signal;
} outcome_facts;

/* The facts of a try's and of a route's outcome (functions, not static tables: the facts are constant
 * objects, not constant expressions, which clang refuses in a static initializer). */
static outcome_facts try_facts(void) {
        return (outcome_facts){FACT_TRY_ERRNO, FACT_TRY_RET, FACT_TRY_TESTED, FACT_TRY_WHY, FACT_TRY_SIGNAL};
}
static outcome_facts route_facts(void) {
        return (outcome_facts){FACT_ROUTE_ERRNO, FACT_ROUTE_RET, FACT_ROUTE_TESTED, FACT_ROUTE_WHY, FACT_ROUTE_SIGNAL};
}

/* "errno": ..., "ret": ..., "tested": ..., "why": ... [, "signal": N] of one outcome, after ", "
 * unless first. */
static void put_outcome(FILE *f, bool first, const outcome *o, outcome_facts facts) {
        char buf[KB_TOOL_ERRNO_NAME_MAX];
        put_key(f, first, kb_fact_key_of(facts.errno_name));
        if (o->tested && o->result < 0)
                put_string(f, kb_tool_errno_name((int) -o->result, buf, sizeof buf));
        else
                fputs("null", f);
        put_key(f, false, kb_fact_key_of(facts.ret));
        if (o->tested)
                fprintf(f, "%ld", o->result < 0 ? -1L : o->result);
        else
                fputs("null", f);
        put_key(f, false, kb_fact_key_of(facts.tested));
        fputs(o->tested ? "true" : "false", f);
        put_key(f, false, kb_fact_key_of(facts.why));
        if (o->tested)
                fputs("null", f);
        else
                put_string(f, o->why);
        if (!o->tested && o->signal) {
                put_key(f, false, kb_fact_key_of(facts.signal));
                fprintf(f, "%d", o->signal);
        }
}

/* `, "key": {outcome}` of a ROUTE. */
static void put_route(FILE *f, kb_fact_obj fact, const outcome *o) {
        put_key(f, false, kb_fact_key_of(fact));
        fputc('{', f);
        put_outcome(f, true, o, route_facts());
        fputc('}', f);
}

/* What every ABI's tries share. */
typedef struct surface {
        FILE *out;
        const char *sep; /* between array elements: "" on one line */
        bool skip_kexec;
        bool try_families; /* the native ABI's real family tries (families_gate) */
        char family_why[512];
} surface;

/* A family through every way in abi has: socket(2), socketpair(2) and, where there is one,
 * socketcall(2)'s two operations. The native ABI's tries are real sockets behind families_gate;
 * the others' are inert and need no gate. */
static void family_tries(const surface *sf, kb_sysabi abi, const probe_entry *e, outcome o[4]) {
        const struct {
                kb_try_fn native, inert;
                const long *nr;
        } routes[4] = {{try_socket, try_inert_socket, nr_socket},
                       {try_socketpair, try_inert_socketpair, nr_socketpair},
                       {NULL, try_inert_socketcall, nr_socketcall},
                       {NULL, try_inert_socketcall_pair, nr_socketcall}};
        for (size_t i = 0; i < 4; i++) {
                const kb_call call = {.abi = abi, .nr = routes[i].nr[abi]};
                if (call.nr < 0)
                        untested(&o[i], "not tried: the %s ABI has no such call", kb_sysabi_name(abi));
                else if (abi != KB_SYSABI_NATIVE)
                        run_forked(routes[i].inert, &call, e->value, &o[i]);
                else if (!sf->try_families)
                        untested(&o[i], "%s", sf->family_why);
                else
                        run_forked(routes[i].native, &call, e->value, &o[i]);
        }
}

/* One entry's call through abi. */
static void call_try(const surface *sf, kb_sysabi abi, const probe_entry *e, outcome *o) {
        const kb_call call = {.abi = abi, .nr = e->nr[abi]};
        if (call.nr < 0) {
                untested(o, "not tried: the %s ABI has no %s call (the filter refuses it for the ABIs that have it)",
                         kb_sysabi_name(abi), e->syscall);
                return;
        }
        if (sf->skip_kexec && strncmp(e->name, "kexec", 5) == 0) {
                untested(o, "not tried: this process has CAP_SYS_BOOT and kernel.kexec_load_limit_reboot is set: a "
                            "try would spend a load");
                return;
        }
        const kb_try *t = kb_tries_find(e->name, KB_TRY_HARMLESS);
        if (t)
                run_forked(t->run, &call, e->value, o);
        else
                untested(o, "not tried: no harmless try for this entry");
}

/* The "results" array of abi: every entry of the table, tried. */
static void put_results(const surface *sf, kb_sysabi abi) {
        FILE *out = sf->out;
        fputc('[', out);
        for (size_t i = 0; i < ELEMENTSOF(entries); i++) {
                const probe_entry *e = &entries[i];
                outcome o[4];
                if (e->family)
                        family_tries(sf, abi, e, o);
                else
                        call_try(sf, abi, e, &o[0]);
                fprintf(out, "%s%s{", i ? "," : "", sf->sep);
                put_key(out, true, kb_fact_key_of(FACT_TRY_NAME));
                put_string(out, e->name);
                put_outcome(out, false, &o[0], try_facts());
                if (e->family) {
                        put_route(out, FACT_TRY_SOCKETPAIR, &o[1]);
                        if (nr_socketcall[abi] >= 0) {
                                put_route(out, FACT_TRY_SOCKETCALL, &o[2]);
                                put_route(out, FACT_TRY_SOCKETCALL_PAIR, &o[3]);
                        }
                }
                fputc('}', out);
        }
        fputs(*sf->sep ? "\n]" : "]", out);
}

/* The "compat" array: each ABI besides the native one that kbound's filter has rules for, with
 * whether the running kernel accepts calls through it (getpid in a child) and, if it does, the
 * results. An ABI the kernel does not run cannot carry a call past the filter, and says so. */
static void put_compat(const surface *sf) {
        FILE *out = sf->out;
        bool first = true;
        fputc('[', out);
        for (kb_sysabi abi = KB_SYSABI_COMPAT32; abi < KB_SYSABI_MAX_; abi++) {
                if (!kb_sysabi_name(abi) || nr_getpid[abi] < 0)
                        continue;
                char why[256];
                int accepted = kb_sysabi_accepted(abi, why, sizeof why);
                if (accepted < 0 && accepted != -EOPNOTSUPP)
                        snprintf(why, sizeof why, "not known: %s", strerror(-accepted));
                fprintf(out, "%s%s{", first ? "" : ",", sf->sep);
                first = false;
                put_key(out, true, kb_fact_key_of(FACT_SURFACE_ABI_ABI));
                put_string(out, kb_sysabi_name(abi));
                put_key(out, false, kb_fact_key_of(FACT_SURFACE_ABI_ACCEPTED));
                fputs(accepted == 1 ? "true" : "false", out);
                put_key(out, false, kb_fact_key_of(FACT_SURFACE_ABI_WHY));
                put_string(out, why);
                if (accepted == 1) {
                        put_key(out, false, kb_fact_key_of(FACT_SURFACE_ABI_RESULTS));
                        put_results(sf, abi);
                }
                fputc('}', out);
        }
        fputc(']', out);
}

void kb_surface_write(FILE *out, bool one_line) {
        /* A spawning process that ignores SIGCHLD would pass that on through execve, and the kernel
         * would then reap the tries' processes before waitpid could see how they ended. */
        signal(SIGCHLD, SIG_DFL);

        status_fields st;
        read_status(&st);
        surface sf = {.out = out, .sep = one_line ? "" : "\n  ", .skip_kexec = kexec_would_spend_a_load(&st)};
        sf.try_families = families_gate(&st, sf.family_why, sizeof sf.family_why);

        fputc('{', out);
        put_key(out, true, kb_fact_key_of(FACT_SURFACE_TRIES_VERSION));
        fputs("1", out);
        put_key(out, false, kb_fact_key_of(FACT_SURFACE_TRIES_ARCH));
        put_string(out, KB_PROBE_TABLE_ARCH);
        put_key(out, false, kb_fact_key_of(FACT_SURFACE_TRIES_SECCOMP));
        put_long_or_null(out, st.seccomp);
        put_key(out, false, kb_fact_key_of(FACT_SURFACE_TRIES_FILTERS));
        put_long_or_null(out, st.filters);
        put_key(out, false, kb_fact_key_of(FACT_SURFACE_TRIES_RESULTS));
        put_results(&sf, KB_SYSABI_NATIVE);
        put_key(out, false, kb_fact_key_of(FACT_SURFACE_TRIES_COMPAT));
        put_compat(&sf);
        fputc('}', out);
}
