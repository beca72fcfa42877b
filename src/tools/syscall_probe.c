/* syscall_probe.c: kbound-syscall-probe, the attack-surface probe any kernel can spawn (Python, R,
 * bash: anything that runs a program). Inside the sandbox it tries every entry of the seccomp
 * table with arguments that do nothing whether the call is allowed or refused, and prints one JSON
 * object saying what each returned (syscall_surface.c, docs/seccomp.md). It knows the table, never
 * the policy: the host compares the answers with what the filter it built gives, and confirms the
 * filter from /proc itself. Linked statically, so it runs in any image's rootfs; it needs only libc,
 * and its table is generated at build time from the library's (syscall_probe_table.h). */
#include "relay.h"
#include "syscall_surface.h"
#include "tool_io.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <unistd.h>

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
                "  --relay PREFIX PORT,... -- ARGV...\n"
                "                   listen on PREFIX-PORT (unix) for each port, relay each connection\n"
                "                   to 127.0.0.1:PORT in a child that dies with this process, and\n"
                "                   exec ARGV (a kernel that speaks only TCP; docs/transports.md)\n"
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
        if (argc > 1 && strcmp(argv[1], "--relay") == 0)
                return relay_main(argc, argv);
        static const struct option options[] = {
                {"help", no_argument, NULL, 'h'},
                {"version", no_argument, NULL, 'V'},
                {"pause", no_argument, NULL, 'P'},
                {0},
        };
        int c;
        while ((c = getopt_long(argc, argv, "hV", options, NULL)) != -1) {
                if (kb_tool_help_version(c, "kbound-syscall-probe", usage, argv[0]) == 0)
                        return 0;
                switch (c) {
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

        kb_surface_write(stdout, false);
        fputc('\n', stdout);
        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "kbound-syscall-probe: writing the result: %s\n", strerror(errno));
                return 1;
        }
        return 0;
}
