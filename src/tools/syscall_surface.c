/* syscall_surface.c: the attack-surface tries of kbound's static programs. Every entry of the
 * seccomp table is tried with arguments that do nothing whether the call is allowed or refused,
 * each in a forked process of its own, and what each returned is written as one JSON object
 * (docs/seccomp.md). It knows the table, never the policy: the host compares the answers with
 * what the filter it built gives. kbound-syscall-probe prints that object; kbound-probe's
 * attack-surface cell puts it in its result as "child". Its keys are facts.def's (SURFACE_TRIES,
 * TRY, SOCKETPAIR), which the judge reads through the same names; the JSON is printed by hand, the
 * keys through kb_fact_key, since kbound-syscall-probe links nothing but libc. */
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
        const char *name;    /* kb_seccomp_entry.name */
        const char *syscall; /* the call as libseccomp names it ("socket" for families) */
        bool family;         /* a socket family: value is its number */
        long nr;             /* the call's number on this ABI, or -1: the ABI has no such call */
        uint64_t value;      /* the clone flag, ioctl request or family number; else 0 */
} probe_entry;

#define PROBE_ENTRY(name_, syscall_, family_, nr_, value_)                                                             \
        {.name = name_, .syscall = syscall_, .family = family_, .nr = nr_, .value = value_},
static const probe_entry entries[] = {KB_PROBE_TABLE(PROBE_ENTRY)};

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
        char why[256]; /* when not tested: why */
} outcome;

static void untested(outcome *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void untested(outcome *o, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        o->tested = false;
        o->result = 0;
        vsnprintf(o->why, sizeof o->why, fmt, ap);
        va_end(ap);
}

/* Runs fn(nr, value) in a forked grandchild and fills *o with what the call returned. Each try
 * gets a fresh process: a try that must change process state (personality, a namespace) changes
 * only a process that exits right after, no try can change what the next one sees, and a try the
 * kernel or a filter kills is reported rather than ending the probe. */
static void run_forked(kb_try_fn fn, long nr, uint64_t value, outcome *o) {
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
                long r = fn(nr, value);
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

static long try_socket(long nr, uint64_t family) {
        return kb_tries_family((long) family, false);
}

static long try_socketpair(long nr, uint64_t family) {
        return kb_tries_family((long) family, true);
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
        run_forked(try_socket, -1, (uint64_t) FAMILY_CANARY, &canary);
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

/* The facts an outcome is written as: a TRY's, or its SOCKETPAIR's. */
typedef struct outcome_facts {
        kb_fact_str errno_name;
        kb_fact_int ret;
        kb_fact_bool tested;
        kb_fact_str why;
} outcome_facts;

/* "errno": ..., "ret": ..., "tested": ..., "why": ... of one outcome, after ", " unless first. */
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
}

void kb_surface_write(FILE *out, bool one_line) {
        /* A spawning process that ignores SIGCHLD would pass that on through execve, and the kernel
         * would then reap the tries' processes before waitpid could see how they ended. */
        signal(SIGCHLD, SIG_DFL);

        status_fields st;
        read_status(&st);
        bool skip_kexec = kexec_would_spend_a_load(&st);
        char family_why[512];
        bool try_families = families_gate(&st, family_why, sizeof family_why);

        const char *sep = one_line ? "" : "\n  ";
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
        fputc('[', out);
        for (size_t i = 0; i < ELEMENTSOF(entries); i++) {
                const probe_entry *e = &entries[i];
                outcome call, pair;
                if (e->family) {
                        if (try_families) {
                                run_forked(try_socket, -1, e->value, &call);
                                run_forked(try_socketpair, -1, e->value, &pair);
                        } else {
                                untested(&call, "%s", family_why);
                                untested(&pair, "%s", family_why);
                        }
                } else if (e->nr < 0) {
                        untested(&call,
                                 "not tried: the %s ABI has no %s call (the filter refuses it for the "
                                 "ABIs that have it)",
                                 KB_PROBE_TABLE_ARCH, e->syscall);
                } else if (skip_kexec && strncmp(e->name, "kexec", 5) == 0) {
                        untested(&call, "not tried: this process has CAP_SYS_BOOT and "
                                        "kernel.kexec_load_limit_reboot is set: a try would spend a load");
                } else {
                        const kb_try *t = kb_tries_find(e->name, KB_TRY_HARMLESS);
                        if (t)
                                run_forked(t->run, e->nr, e->value, &call);
                        else
                                untested(&call, "not tried: no harmless try for this entry");
                }
                fprintf(out, "%s%s{", i ? "," : "", sep);
                put_key(out, true, kb_fact_key_of(FACT_TRY_NAME));
                put_string(out, e->name);
                put_outcome(out, false, &call,
                            (outcome_facts){FACT_TRY_ERRNO, FACT_TRY_RET, FACT_TRY_TESTED, FACT_TRY_WHY});
                if (e->family) {
                        put_key(out, false, kb_fact_key_of(FACT_TRY_SOCKETPAIR));
                        fputc('{', out);
                        put_outcome(out, true, &pair,
                                    (outcome_facts){FACT_SOCKETPAIR_ERRNO, FACT_SOCKETPAIR_RET, FACT_SOCKETPAIR_TESTED,
                                                    FACT_SOCKETPAIR_WHY});
                        fputc('}', out);
                }
                fputc('}', out);
        }
        fputs(one_line ? "]}" : "\n]}", out);
}
