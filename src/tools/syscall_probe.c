/* syscall_probe.c: kbound-syscall-probe, the attack-surface probe any kernel can spawn (Python, R,
 * bash: anything that runs a program). Inside the sandbox it tries every entry of the seccomp
 * table with arguments that do nothing whether the call is allowed or refused, and prints one JSON
 * object saying what each returned (docs/seccomp.md). It knows the table, never the policy: the
 * host compares the answers with what the filter it built gives, and confirms the filter from
 * /proc itself. Linked statically, so it runs in any image's rootfs; it needs only libc, and its
 * table is generated at build time from the library's (syscall_probe_table.h). */
#include "syscall_probe_table.h"
#include "syscall_tries.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/resource.h>
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

/* The errno's name as errno.h spells it ("EPERM"), in buf if glibc has no name for it. */
static const char *errno_name(int e, char *buf, size_t n) {
        const char *name = strerrorname_np(e);
        if (name)
                return name;
        snprintf(buf, n, "E%d", e);
        return buf;
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
        int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return;
        static char buf[STATUS_MAX];
        size_t len = 0;
        while (len < sizeof buf - 1) {
                ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                len += (size_t) n;
        }
        close(fd);
        buf[len] = '\0';
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
        char buf[24];
        snprintf(why, n,
                 "not tried: Seccomp is 2, but socket(2) of AF_UNIX with bit 32 of the family set came "
                 "back %s, where kbound's filter says EAFNOSUPPORT: no filter of the families is visible, "
                 "and creating a socket of a family whose module is not loaded would make the host kernel "
                 "load it",
                 !canary.tested       ? "untested"
                 : canary.result >= 0 ? "allowed"
                                      : errno_name((int) -canary.result, buf, sizeof buf));
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

/* "errno": ..., "ret": ..., "tested": ..., "why": ... of one outcome. */
static void put_outcome(FILE *f, const outcome *o) {
        char buf[24];
        fputs("\"errno\": ", f);
        if (o->tested && o->result < 0)
                put_string(f, errno_name((int) -o->result, buf, sizeof buf));
        else
                fputs("null", f);
        fputs(", \"ret\": ", f);
        if (o->tested)
                fprintf(f, "%ld", o->result < 0 ? -1L : o->result);
        else
                fputs("null", f);
        fprintf(f, ", \"tested\": %s, \"why\": ", o->tested ? "true" : "false");
        if (o->tested)
                fputs("null", f);
        else
                put_string(f, o->why);
}

static void usage(FILE *f, const char *argv0) {
        fprintf(f,
                "usage: %s\n"
                "Tries every call and socket family of kbound's seccomp table harmlessly and prints\n"
                "one JSON object of what each returned (docs/seccomp.md). Socket families are tried\n"
                "only under a filter that refuses them. Exit 0 when the JSON was written.\n"
                "  --pause          try nothing: wait until killed (the program kbound's sandbox\n"
                "                   lifetime test runs, in any image)\n"
                "  --exec-limited NPROC AS -- ARGV...\n"
                "                   set RLIMIT_NPROC and RLIMIT_AS (0: leave one) and exec ARGV\n"
                "  -h, --help       this text\n"
                "  -V, --version    the version\n",
                argv0);
}

/* A limit's value from the command line: a decimal number, 0 for "leave it". */
static bool limit_value(const char *s, rlim_t *ret) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || end == s || *end || s[0] == '-')
                return false;
        *ret = (rlim_t) v;
        return true;
}

/* --exec-limited NPROC AS -- ARGV...: the sandbox's PID 2 before the kernel. RLIMIT_NPROC set here,
 * inside the sandbox's user namespace, counts that namespace's processes alone (Linux >= 5.14
 * counts it per user namespace); RLIMIT_AS bounds each process's address space. Both soft and
 * hard, so nothing in the sandbox can raise them again. Then execs ARGV (PATH searched), keeping
 * the pid. Returns only on failure: 127. */
static int exec_limited(int argc, char **argv) {
        rlim_t nproc, as;
        if (argc < 6 || !limit_value(argv[2], &nproc) || !limit_value(argv[3], &as) || strcmp(argv[4], "--") != 0) {
                fprintf(stderr, "kbound-syscall-probe: usage: %s --exec-limited NPROC AS -- ARGV...\n", argv[0]);
                return 127;
        }
        const struct {
                int resource;
                rlim_t value;
                const char *name;
        } set[] = {{RLIMIT_NPROC, nproc, "RLIMIT_NPROC"}, {RLIMIT_AS, as, "RLIMIT_AS"}};
        for (size_t i = 0; i < sizeof set / sizeof set[0]; i++) {
                struct rlimit rl = {set[i].value, set[i].value};
                if (set[i].value && setrlimit(set[i].resource, &rl) < 0) {
                        fprintf(stderr, "kbound-syscall-probe: %s %llu: %s\n", set[i].name,
                                (unsigned long long) set[i].value, strerror(errno));
                        return 127;
                }
        }
        execvp(argv[5], argv + 5);
        fprintf(stderr, "kbound-syscall-probe: cannot run %s: %s\n", argv[5], strerror(errno));
        return 127;
}

int main(int argc, char **argv) {
        /* Before getopt, which would take the kernel's own options for this program's. */
        if (argc > 1 && strcmp(argv[1], "--exec-limited") == 0)
                return exec_limited(argc, argv);
        static const struct option options[] = {
                {"help", no_argument, NULL, 'h'},
                {"version", no_argument, NULL, 'V'},
                {"pause", no_argument, NULL, 'P'},
                {0},
        };
        int c;
        while ((c = getopt_long(argc, argv, "hV", options, NULL)) != -1) {
                switch (c) {
                case 'h':
                        usage(stdout, argv[0]);
                        return 0;
                case 'V':
                        printf("kbound-syscall-probe %s\n", KBOUND_VERSION);
                        return 0;
                case 'P':
                        for (;;)
                                pause();
                default:
                        usage(stderr, argv[0]);
                        return 2;
                }
        }
        if (optind < argc) {
                usage(stderr, argv[0]);
                return 2;
        }

        /* A spawning process that ignores SIGCHLD would pass that on through execve, and the kernel
         * would then reap the tries' processes before waitpid could see how they ended. */
        signal(SIGCHLD, SIG_DFL);

        status_fields st;
        read_status(&st);
        bool skip_kexec = kexec_would_spend_a_load(&st);
        char family_why[512];
        bool try_families = families_gate(&st, family_why, sizeof family_why);

        FILE *out = stdout;
        fprintf(out, "{\"version\": 1, \"arch\": ");
        put_string(out, KB_PROBE_TABLE_ARCH);
        fputs(", \"seccomp\": ", out);
        put_long_or_null(out, st.seccomp);
        fputs(", \"filters\": ", out);
        put_long_or_null(out, st.filters);
        fputs(", \"results\": [", out);
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
                fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", out);
                put_string(out, e->name);
                fputs(", ", out);
                put_outcome(out, &call);
                if (e->family) {
                        fputs(", \"socketpair\": {", out);
                        put_outcome(out, &pair);
                        fputc('}', out);
                }
                fputc('}', out);
        }
        fputs("\n]}\n", out);
        if (fflush(out) != 0 || ferror(out)) {
                fprintf(stderr, "kbound-syscall-probe: writing the result: %s\n", strerror(errno));
                return 1;
        }
        return 0;
}
