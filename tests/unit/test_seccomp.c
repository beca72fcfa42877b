/* test_seccomp.c: the seccomp filter, built and loaded in forked children, each blocked call and
 * socket family tried with arguments that do nothing whether or not the call is allowed (the tries
 * of src/tools/syscall_tries.c, which kbound-syscall-probe runs too, and docs/seccomp.md lists),
 * ordinary calls still working, the policy variants, the 32-bit x86 and x32 ABIs; the same tries
 * without the filter, so a filter that blocks nothing would fail; and the probe program itself run
 * under each filter and without one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include "child_output.h"

#include "kbound/seccomp.h"
#include "kbound/seccomp_compare.h"
#include "syscall_tries.h"
#include <linux/audit.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

extern char **environ;

#define KEY_SPEC_PROCESS_KEYRING (-2)
#define KEYCTL_GET_KEYRING_ID 0

/* ---------- running one try in a child ---------- */

/* The raw result of a call: its return value, or -errno. */
static long result(long r) {
        return r < 0 ? -errno : r;
}

typedef long (*try_fn)(const void *arg);

typedef struct outcome {
        int load;    /* 0, or -errno from loading the filter */
        long result; /* what the try returned (>= 0) or -errno */
        int signal;  /* the child died of this signal; 0 if it exited */
} outcome;

/* Loads the program in fd into the calling process, as bwrap does: no_new_privs, then
 * seccomp(SECCOMP_SET_MODE_FILTER). Returns 0 or -errno. */
static int load_program(int fd) {
        size_t n;
        int r = kb_seccomp_instructions(fd, &n);
        if (r < 0)
                return r;
        struct sock_filter *insns = calloc(n, sizeof *insns);
        if (!insns)
                return -ENOMEM;
        r = 0;
        if (pread(fd, insns, n * sizeof *insns, 0) != (ssize_t) (n * sizeof *insns))
                r = -EIO;
        else if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                r = -errno;
        else {
                struct sock_fprog prog = {.len = (unsigned short) n, .filter = insns};
                if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                        r = -errno;
        }
        free(insns);
        return r;
}

/* Runs fn(arg) in a forked child, with the program in prog_fd loaded first (none if prog_fd < 0).
 * Every try gets a fresh process, so no try can change what the next one sees. */
static outcome run_child(int prog_fd, try_fn fn, const void *arg) {
        int p[2];
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                /* cmocka catches these to report a failed test; in the child they must kill it, so
                 * the parent sees how the try ended. */
                static const int fatal[] = {SIGILL, SIGSEGV, SIGBUS, SIGFPE, SIGABRT, SIGSYS};
                for (size_t i = 0; i < KB_ELEMENTSOF(fatal); i++)
                        signal(fatal[i], SIG_DFL);
                outcome o = {0};
                if (prog_fd >= 0)
                        o.load = load_program(prog_fd);
                if (o.load == 0)
                        o.result = fn(arg);
                ssize_t w = write(p[1], &o, sizeof o);
                _exit(w == (ssize_t) sizeof o ? 0 : 1);
        }
        close(p[1]);
        outcome o = {0};
        ssize_t got = read(p[0], &o, sizeof o);
        close(p[0]);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (WIFSIGNALED(status)) {
                o.signal = WTERMSIG(status);
                return o;
        }
        assert_int_equal(got, (ssize_t) sizeof o);
        return o;
}

/* ---------- the tries: src/tools/syscall_tries.c, shared with kbound-syscall-probe ---------- */

/* One shared try with its entry's number on this ABI (from libseccomp, as the filter has it) and
 * value. */
typedef struct try_arg {
        const kb_try *t;
        const kb_seccomp_entry *e;
        long nr;
        kb_sysabi abi;
} try_arg;

static long run_try(const void *arg) {
        const try_arg *a = arg;
        const kb_call call = {.abi = a->abi, .nr = a->nr};
        return a->t->run(&call, a->e->value);
}

/* Try i with its entry; false if this ABI has no such call (the try is then not run). */
static bool try_at(size_t i, try_arg *ret) {
        const kb_try *t = kb_tries_at(i);
        assert_non_null(t);
        const kb_seccomp_entry *e = kb_seccomp_entry_find(t->name);
        if (!e)
                fail_msg("try %s names no entry of the table", t->name);
        int nr = kb_seccomp_entry_syscall_nr(e);
        if (nr < 0)
                return false;
        *ret = (try_arg){.t = t, .e = e, .nr = nr, .abi = KB_SYSABI_NATIVE};
        return true;
}

static const char *form_name(kb_try_form form) {
        return form == KB_TRY_CHILD ? "child" : "harmless";
}

/* ---------- socket families ---------- */

typedef struct family_try {
        long family;
        bool pair; /* socketpair(2) rather than socket(2) */
} family_try;

static long try_family(const void *arg) {
        const family_try *t = arg;
        return kb_tries_family(t->family, t->pair);
}

/* Families a run without the filter may try: built into every kernel kbound supports. Any other
 * family would make the host kernel load its module on demand (socket(2) does that for anyone),
 * which a test must not do; with the filter loaded nothing reaches that code. */
static bool family_always_built_in(uint64_t family) {
        return family == AF_UNIX || family == AF_INET || family == AF_INET6 || family == AF_NETLINK;
}

/* ---------- helpers ---------- */

static int build(const kb_seccomp_policy *policy) {
        int fd = -1;
        int r = kb_seccomp_build(policy, &fd);
        if (r < 0)
                fail_msg("kb_seccomp_build: %s", strerror(-r));
        return fd;
}

/* A result for a message: "ok (3)" or "EPERM". Rotates through four buffers, so one message can
 * name several results. */
static const char *errname(long r) {
        static char bufs[4][64];
        static unsigned next;
        char *buf = bufs[next++ % 4];
        if (r >= 0)
                snprintf(buf, sizeof bufs[0], "ok (%ld)", r);
        else if (r == LONG_MIN)
                snprintf(buf, sizeof bufs[0], "not run");
        else
                snprintf(buf, sizeof bufs[0], "%s", strerrorname_np((int) -r) ? strerrorname_np((int) -r) : "?");
        return buf;
}

/* Whether two results are the same outcome: both succeeded, or both failed with one errno. */
static bool same_outcome(long a, long b) {
        return (a >= 0 && b >= 0) || a == b;
}

static bool is_root(void) {
        return geteuid() == 0;
}

/* kexec as root decrements kernel.kexec_load_limit_reboot when an administrator set one (-1, the
 * default, means no limit): a run without the filter must not spend it. */
static bool kexec_limit_unset(void) {
        int fd = open("/proc/sys/kernel/kexec_load_limit_reboot", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return true;
        char buf[32] = {0};
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        return n > 0 && strncmp(buf, "-1", 2) == 0;
}

/* Whether the filtered child could load the program at all, and was not killed. */
static void assert_loaded(const outcome *o, const char *what) {
        if (o->signal)
                fail_msg("%s: the child died of signal %d (%s)%s", what, o->signal, strsignal(o->signal),
                         o->signal == SIGSYS ? ": the filter killed it instead of returning an errno" : "");
        if (o->load < 0)
                fail_msg("%s: loading the filter failed: %s", what, strerror(-o->load));
}

/* Runs every try and family against prog_fd and checks each against what policy blocks: blocked
 * entries must give their errno; allowed ones must behave as without the filter (control, which
 * is indexed like kb_tries_at). */
static void check_policy(const kb_seccomp_policy *policy, const long *control) {
        int fd = build(policy);
        for (size_t i = 0; i < kb_tries_count(); i++) {
                try_arg a;
                if (!try_at(i, &a))
                        continue; /* no such call on this ABI */
                outcome o = run_child(fd, run_try, &a);
                assert_loaded(&o, a.t->name);
                if (kb_seccomp_blocks(policy, a.e)) {
                        if (o.result != -a.e->errnum)
                                fail_msg("%s (%s form): expected %s from the filter, got %s", a.t->name,
                                         form_name(a.t->form), strerrorname_np(a.e->errnum), errname(o.result));
                } else if (control[i] == LONG_MIN) {
                        fprintf(stderr,
                                "test_seccomp: NOT compared: %s is left allowed, but its control was not "
                                "run\n",
                                a.t->name);
                } else if (!same_outcome(o.result, control[i])) {
                        fail_msg("%s (%s form) is left allowed but gave %s (without the filter: %s)", a.t->name,
                                 form_name(a.t->form), errname(o.result), errname(control[i]));
                }
        }
        for (size_t i = 0; i < kb_seccomp_entry_count(); i++) {
                const kb_seccomp_entry *e = kb_seccomp_entry_at(i);
                if (e->match != KB_SECCOMP_MATCH_FAMILY)
                        continue;
                for (int pair = 0; pair <= 1; pair++) {
                        family_try t = {.family = (long) e->value, .pair = pair};
                        outcome o = run_child(fd, try_family, &t);
                        assert_loaded(&o, e->name);
                        if (kb_seccomp_blocks(policy, e)) {
                                if (o.result != -EAFNOSUPPORT)
                                        fail_msg("%s(%s): expected EAFNOSUPPORT, got %s",
                                                 pair ? "socketpair" : "socket", e->name, errname(o.result));
                                continue;
                        }
                        if (!family_always_built_in(e->value))
                                fail_msg("%s is allowed, but this test cannot try it without the filter", e->name);
                        outcome c = run_child(-1, try_family, &t);
                        if (!same_outcome(o.result, c.result))
                                fail_msg("%s(%s) is allowed but gave %s (without the filter: %s)",
                                         pair ? "socketpair" : "socket", e->name, errname(o.result), errname(c.result));
                }
        }
        /* AF_UNIX is never refused. */
        for (int pair = 0; pair <= 1; pair++) {
                family_try t = {.family = AF_UNIX, .pair = pair};
                outcome o = run_child(fd, try_family, &t);
                assert_loaded(&o, "AF_UNIX");
                if (o.result < 0)
                        fail_msg("AF_UNIX %s refused: %s", pair ? "socketpair" : "socket", errname(o.result));
        }
        close(fd);
}

/* Every try without a filter, indexed like kb_tries_at (LONG_MIN: not run); filled once by
 * controls(). */
#define MAX_TRIES 256
static long control_results[MAX_TRIES];
static bool control_done;

/* Runs every try without a filter. Each must come back with something other than the errno the
 * filter gives (so the filtered run proves the filter, not the kernel), except a gated try when
 * not root, which is reported. Fills control[] (indexed like kb_tries_at). */
static void run_controls(long *control) {
        assert_true(kb_tries_count() <= MAX_TRIES);
        for (size_t i = 0; i < kb_tries_count(); i++) {
                control[i] = LONG_MIN;
                try_arg a;
                if (!try_at(i, &a))
                        continue;
                if (strncmp(a.t->name, "kexec", 5) == 0 && is_root() && !kexec_limit_unset()) {
                        fprintf(stderr,
                                "test_seccomp: control NOT run for %s: kernel.kexec_load_limit_reboot is "
                                "set and a root kexec call would spend one\n",
                                a.t->name);
                        continue;
                }
                outcome o = run_child(-1, run_try, &a);
                if (o.signal)
                        fail_msg("%s without the filter: the child died of signal %d", a.t->name, o.signal);
                control[i] = o.result;
                if (o.result != -a.e->errnum)
                        continue;
                if (a.t->gated && !is_root()) {
                        fprintf(stderr,
                                "test_seccomp: control NOT conclusive for %s (%s form): the kernel itself "
                                "answered %s (it checks privilege first; run as root to tell)\n",
                                a.t->name, form_name(a.t->form), strerrorname_np(a.e->errnum));
                        continue;
                }
                fail_msg("%s (%s form) without the filter gave %s, the filter's own errno: the try cannot "
                         "tell the filter from the kernel",
                         a.t->name, form_name(a.t->form), errname(o.result));
        }
}

static const long *controls(void) {
        if (!control_done) {
                run_controls(control_results);
                control_done = true;
        }
        return control_results;
}

/* ---------- tests ---------- */

static void test_table(void **state) {
        size_t n = kb_seccomp_entry_count();
        assert_true(n > 100);
        assert_null(kb_seccomp_entry_at(n));
        for (size_t i = 0; i < n; i++) {
                const kb_seccomp_entry *e = kb_seccomp_entry_at(i);
                assert_non_null(e->name);
                assert_non_null(e->syscall);
                assert_true(e->why && strlen(e->why) > 10);
                assert_true(e->anchors && *e->anchors);
                assert_ptr_equal(kb_seccomp_entry_find(e->name), e); /* names are unique */
                /* EPERM, except where a caller must fall back (clone3 -> clone, the new mount API),
                 * as Flatpak and systemd do, and EAFNOSUPPORT for families. */
                static const char *const enosys[] = {"clone3",   "open_tree", "move_mount", "fsopen",
                                                     "fsconfig", "fsmount",   "fspick",     "mount_setattr"};
                bool want_enosys = false;
                for (size_t k = 0; k < KB_ELEMENTSOF(enosys); k++)
                        if (strcmp(e->name, enosys[k]) == 0)
                                want_enosys = true;
                if (e->match == KB_SECCOMP_MATCH_FAMILY)
                        assert_int_equal(e->errnum, EAFNOSUPPORT);
                else
                        assert_int_equal(e->errnum, want_enosys ? ENOSYS : EPERM);
                if (e->match == KB_SECCOMP_MATCH_FAMILY)
                        continue;
                /* Every call any ABI of the filter has is tried, in the form the probe runs. */
                for (kb_sysabi abi = 0; abi < KB_SYSABI_MAX_; abi++) {
                        int nr = kb_seccomp_abi_filtered(abi) ? kb_seccomp_entry_syscall_nr_on(e, abi) : -1;
                        if (nr >= 0 && !kb_tries_find(e->name, KB_TRY_HARMLESS))
                                fail_msg("%s: no harmless try in src/tools/syscall_tries.c (and so none in the "
                                         "probe), yet %s has the call",
                                         e->name, kb_sysabi_name(abi));
                }
        }
        /* Every try is of a call entry, and each (name, form) is tried once. */
        for (size_t i = 0; i < kb_tries_count(); i++) {
                const kb_try *t = kb_tries_at(i);
                const kb_seccomp_entry *e = kb_seccomp_entry_find(t->name);
                if (!e || e->match == KB_SECCOMP_MATCH_FAMILY)
                        fail_msg("try %s names no call entry of the table", t->name);
                assert_ptr_equal(kb_tries_find(t->name, t->form), t);
        }
        assert_null(kb_tries_at(kb_tries_count()));
        assert_null(kb_tries_find("AF_VSOCK", KB_TRY_HARMLESS));
        assert_int_equal(kb_seccomp_entry_syscall_nr(kb_seccomp_entry_find("keyctl")), SYS_keyctl);
        assert_int_equal(kb_seccomp_entry_syscall_nr(NULL), -EINVAL);
        assert_true(kb_seccomp_abi_filtered(KB_SYSABI_NATIVE));
#if defined(__x86_64__)
        /* the numbers kbound has of its own: i386's direct socket calls, which libseccomp names by
         * socketcall's pseudo numbers, and getpid's on each ABI (kb_sysabi_accepted) */
        assert_true(kb_seccomp_abi_filtered(KB_SYSABI_COMPAT32) && kb_seccomp_abi_filtered(KB_SYSABI_X32));
        static const char *const direct[] = {"socket", "socketpair"};
        for (size_t i = 0; i < KB_ELEMENTSOF(direct); i++) {
                char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86,
                                                              kb_seccomp_syscall_nr_on(direct[i], KB_SYSABI_COMPAT32));
                assert_non_null(name);
                assert_string_equal(name, direct[i]);
                free(name);
        }
        assert_int_equal(kb_seccomp_syscall_nr_on("getpid", KB_SYSABI_COMPAT32), 20);
        assert_int_equal(kb_seccomp_syscall_nr_on("getpid", KB_SYSABI_X32), KB_SYSABI_X32_BIT | SYS_getpid);
        assert_int_equal(kb_seccomp_entry_syscall_nr_on(kb_seccomp_entry_find("keyctl"), KB_SYSABI_COMPAT32), 288);
        assert_int_equal(kb_seccomp_entry_syscall_nr_on(kb_seccomp_entry_find("kexec_file_load"), KB_SYSABI_COMPAT32),
                         -ENOSYS);
        assert_string_equal(kb_sysabi_name(KB_SYSABI_COMPAT32), "i386");
#endif
        assert_null(kb_seccomp_entry_find("no-such-call"));
        assert_null(kb_seccomp_entry_find(NULL));
        assert_null(kb_seccomp_entry_find("AF_UNIX")); /* never refused, so not in the table */
        const kb_seccomp_entry *vsock = kb_seccomp_entry_find("AF_VSOCK");
        assert_non_null(vsock);
        assert_int_equal(vsock->value, 40);
        const kb_seccomp_entry *sti = kb_seccomp_entry_find("ioctl:TIOCSTI");
        assert_non_null(sti);
        assert_int_equal(sti->value, TIOCSTI);
        assert_int_equal(sti->arg, 1);
}

static void test_policy(void **state) {
        assert_int_equal(kb_seccomp_policy_check(NULL), 0);
        kb_seccomp_policy p = {0};
        assert_int_equal(kb_seccomp_policy_check(&p), 0);
        char *unknown[] = {"keyctl", "no_such_call", NULL};
        p.allow = unknown;
        assert_int_equal(kb_seccomp_policy_check(&p), -EINVAL);
        int fd = -1;
        assert_int_equal(kb_seccomp_build(&p, &fd), -EINVAL);
        assert_int_equal(fd, -1);
        char *family[] = {"AF_VSOCK", NULL};
        p.allow = family;
        assert_int_equal(kb_seccomp_policy_check(&p), -EINVAL);
        char *good[] = {"keyctl", "ioctl:TIOCSTI", NULL};
        p.allow = good;
        assert_int_equal(kb_seccomp_policy_check(&p), 0);
        assert_false(kb_seccomp_blocks(&p, kb_seccomp_entry_find("keyctl")));
        assert_true(kb_seccomp_blocks(&p, kb_seccomp_entry_find("add_key")));
        p.allow = NULL;
        p.sockets = KB_SECCOMP_SOCKETS_MAX_;
        assert_int_equal(kb_seccomp_policy_check(&p), -EINVAL);
        p.sockets = (kb_seccomp_sockets) -1;
        assert_int_equal(kb_seccomp_policy_check(&p), -EINVAL);
        assert_int_equal(kb_seccomp_build(NULL, NULL), -EINVAL);
        /* Under valgrind (no seccomp(2)) the build stops at the kill action, and memcheck sees that
         * error path; elsewhere it succeeds. */
        fd = -1;
        int r = kb_seccomp_build(NULL, &fd);
        if (r == 0) {
                close(fd);
        } else {
                assert_int_equal(r, -EOPNOTSUPP);
                assert_int_equal(fd, -1);
        }

        const char *names[] = {"default", "unix", "inet"};
        for (int i = 0; i < 3; i++) {
                kb_seccomp_sockets s;
                assert_int_equal(kb_seccomp_sockets_from_string(names[i], &s), 0);
                assert_int_equal(s, i);
                assert_string_equal(kb_seccomp_sockets_to_string(s), names[i]);
        }
        kb_seccomp_sockets s;
        assert_int_equal(kb_seccomp_sockets_from_string("INET", &s), -EINVAL);
        assert_int_equal(kb_seccomp_sockets_from_string(NULL, &s), -EINVAL);
        assert_null(kb_seccomp_sockets_to_string(KB_SECCOMP_SOCKETS_MAX_));

        /* Which families each mode refuses. */
        const kb_seccomp_entry *inet = kb_seccomp_entry_find("AF_INET"), *netlink = kb_seccomp_entry_find("AF_NETLINK"),
                               *vsock = kb_seccomp_entry_find("AF_VSOCK");
        assert_true(kb_seccomp_blocks(NULL, inet));
        assert_false(kb_seccomp_blocks(NULL, netlink));
        assert_true(kb_seccomp_blocks(NULL, vsock));
        kb_seccomp_policy unix_only = {.sockets = KB_SECCOMP_SOCKETS_UNIX};
        assert_true(kb_seccomp_blocks(&unix_only, netlink));
        kb_seccomp_policy with_inet = {.sockets = KB_SECCOMP_SOCKETS_INET};
        assert_false(kb_seccomp_blocks(&with_inet, inet));
        assert_false(kb_seccomp_blocks(&with_inet, kb_seccomp_entry_find("AF_INET6")));
        assert_true(kb_seccomp_blocks(&with_inet, vsock));
}

/* The program itself: its fd, its size, and that the only way it kills is a foreign ABI. */
static void test_filter_program(void **state) {
        int fd = build(NULL);
        int flags = fcntl(fd, F_GETFD);
        assert_true(flags >= 0 && (flags & FD_CLOEXEC));
        int seals = fcntl(fd, F_GET_SEALS);
        assert_int_equal(seals, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
        assert_int_equal(lseek(fd, 0, SEEK_CUR), 0);
        assert_int_equal(write(fd, "x", 1), -1); /* sealed */
        assert_int_equal(errno, EPERM);
        size_t n = 0;
        assert_int_equal(kb_seccomp_instructions(fd, &n), 0);
        assert_true(n > 0 && n <= BPF_MAXINSNS);
        assert_int_equal(kb_seccomp_instructions(-1, &n), -EINVAL);

        struct sock_filter *insns = calloc(n, sizeof *insns);
        assert_non_null(insns);
        assert_int_equal(pread(fd, insns, n * sizeof *insns, 0), (ssize_t) (n * sizeof *insns));
        bool kill_process = false;
        for (size_t i = 0; i < n; i++) {
                if (insns[i].code != (BPF_RET | BPF_K))
                        continue;
                uint32_t k = insns[i].k;
                if (k == SECCOMP_RET_KILL_PROCESS) {
                        kill_process = true;
                        continue;
                }
                if (k == SECCOMP_RET_ALLOW)
                        continue;
                uint32_t e = k & SECCOMP_RET_DATA;
                if ((k & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ERRNO ||
                    (e != EPERM && e != ENOSYS && e != EAFNOSUPPORT))
                        fail_msg("instruction %zu returns 0x%08x: neither allow, an errno of the table, nor "
                                 "the "
                                 "bad-architecture kill",
                                 i, k);
        }
        assert_true(kill_process); /* a foreign ABI is killed */
        free(insns);

        /* The same policy builds the same program. */
        int fd2 = build(NULL);
        size_t n2 = 0;
        assert_int_equal(kb_seccomp_instructions(fd2, &n2), 0);
        assert_int_equal(n2, n);
        char *a = malloc(n * 8), *b = malloc(n * 8);
        assert_int_equal(pread(fd, a, n * 8, 0), (ssize_t) (n * 8));
        assert_int_equal(pread(fd2, b, n * 8, 0), (ssize_t) (n * 8));
        assert_memory_equal(a, b, n * 8);
        free(a);
        free(b);
        close(fd2);
        close(fd);
}

/* The default filter refuses every entry with its errno; allowed calls behave as without it; and
 * without the filter every try gets something else (so the filtered run proves the filter). */
static void test_filter_default(void **state) {
        check_policy(NULL, controls());
}

/* Each variant changes exactly what it should: everything else stays as in the default. */
static void test_filter_variants(void **state) {
        const long *control = controls();
        kb_seccomp_policy unix_only = {.sockets = KB_SECCOMP_SOCKETS_UNIX};
        check_policy(&unix_only, control);
        kb_seccomp_policy with_inet = {.sockets = KB_SECCOMP_SOCKETS_INET};
        check_policy(&with_inet, control);
        char *allow[] = {"keyctl", "ioctl:TIOCSTI", "personality", NULL};
        kb_seccomp_policy hatch = {.allow = allow};
        check_policy(&hatch, control);
}

/* Families beyond the table, and a family number with garbage in the high half of the register,
 * are refused (the latter fails closed: the kernel would read AF_UNIX). Only with the filter:
 * without it an unknown family could make the kernel load a module. */
static void test_filter_families_beyond_table(void **state) {
        int fd = build(NULL);
        const long families[] = {46, 100, 255, INT_MAX, -1, (long) 0x100000001L};
        for (size_t i = 0; i < KB_ELEMENTSOF(families); i++)
                for (int pair = 0; pair <= 1; pair++) {
                        family_try t = {.family = families[i], .pair = pair};
                        outcome o = run_child(fd, try_family, &t);
                        assert_loaded(&o, "family");
                        if (o.result != -EAFNOSUPPORT)
                                fail_msg("%s(%ld): expected EAFNOSUPPORT, got %s", pair ? "socketpair" : "socket",
                                         families[i], errname(o.result));
                }
        close(fd);
}

/* personality: 0 and the query 0xffffffff pass, every other 32-bit value is refused (each
 * single-bit value and each value with a single clear bit exercises one of the 32 rules). */
static long try_personality_values(const void *arg) {
        long r = syscall(SYS_personality, 0xffffffffUL);
        if (r < 0)
                return 1000 + errno;
        if (syscall(SYS_personality, 0UL) < 0)
                return 2000 + errno;
        /* high bits are ignored by the kernel and by the filter alike */
        if (syscall(SYS_personality, 0x1ffffffffUL) < 0)
                return 3000 + errno;
        for (unsigned i = 0; i < 32; i++) {
                unsigned long one = 1UL << i, all_but_one = 0xffffffffUL & ~(1UL << i);
                if (syscall(SYS_personality, one) != -1 || errno != EPERM)
                        return 4000 + i;
                if (syscall(SYS_personality, all_but_one) != -1 || errno != EPERM)
                        return 5000 + i;
        }
        return 0;
}

static void test_filter_personality(void **state) {
        int fd = build(NULL);
        outcome o = run_child(fd, try_personality_values, NULL);
        assert_loaded(&o, "personality");
        if (o.result != 0)
                fail_msg("personality: step %ld failed", o.result);
        close(fd);
}

/* What a kernel does all day still works under the filter, including the clone3 -> clone fallback
 * of glibc's pthread_create and posix_spawn. Returns 0 or the number of the step that failed. */
static void *thread_main(void *arg) {
        return arg;
}

static long try_ordinary(const void *arg) {
        if (getpid() <= 0)
                return 1;
        int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (fd < 0 || write(fd, "x", 1) != 1)
                return 2;
        close(fd);
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0 || write(p[1], "y", 1) != 1)
                return 3;
        int avail = 0;
        if (ioctl(p[0], FIONREAD, &avail) < 0 || avail != 1)
                return 4;
        close(p[0]);
        close(p[1]);
        void *m = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
                return 5;
        munmap(m, 65536);
        int ev = eventfd(0, EFD_CLOEXEC), ep = epoll_create1(EPOLL_CLOEXEC);
        if (ev < 0 || ep < 0)
                return 6;
        close(ev);
        close(ep);
        int mfd = memfd_create("kbound-test", MFD_CLOEXEC);
        if (mfd < 0)
                return 7;
        close(mfd);
        pthread_t th;
        void *back = NULL;
        if (pthread_create(&th, NULL, thread_main, (void *) 42) != 0 || pthread_join(th, &back) != 0 ||
            back != (void *) 42)
                return 8;
        pid_t child = fork();
        if (child < 0)
                return 9;
        if (child == 0)
                _exit(7);
        int status;
        if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 7)
                return 10;
        char *argv[] = {"/bin/true", NULL};
        pid_t spawned;
        if (posix_spawn(&spawned, "/bin/true", NULL, NULL, argv, environ) != 0)
                return 11;
        if (waitpid(spawned, &status, 0) != spawned || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return 12;
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return 13;
        close(sv[0]);
        close(sv[1]);
        int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0);
        if (nl < 0)
                return 14;
        close(nl);
        if (personality(0xffffffff) < 0 || personality(PER_LINUX) < 0)
                return 15;
        int master = -1, tty = kb_tries_open_pty(&master);
        if (tty < 0)
                return 16;
        struct winsize ws;
        if (ioctl(tty, TIOCGWINSZ, &ws) < 0)
                return 17;
        close(tty);
        close(master);
        return 0;
}

static void test_filter_ordinary_calls(void **state) {
        int fd = build(NULL);
        outcome o = run_child(fd, try_ordinary, NULL);
        assert_loaded(&o, "ordinary calls");
        if (o.result != 0)
                fail_msg("an ordinary call failed under the filter: step %ld", o.result);
        close(fd);
}

/* ---------- the probe program ---------- */

/* How the probe's process is filtered before it starts. */
typedef enum probe_filter {
        PROBE_UNFILTERED, /* no filter: the negative control */
        PROBE_KBOUND,     /* the program kb_seccomp_build made (prog_fd), loaded as bwrap loads it */
        PROBE_FOREIGN,    /* a filter that refuses keyctl and nothing else: Seccomp is 2, but no family
                           * filter is there, so the probe must not try the families */
} probe_filter;

static int load_foreign_filter(void) {
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx)
                return -ENOMEM;
        int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(keyctl), 0);
        if (r == 0)
                r = seccomp_load(ctx); /* sets no_new_privs first */
        seccomp_release(ctx);
        return r;
}

#define PROBE_OUTPUT_MAX (1024 * 1024)

/* Runs kbound-syscall-probe, as a kernel's child would, in a process filtered as said; fails the
 * test unless it exits 0 having printed one JSON object, and returns that object. */
static json_object *run_probe(probe_filter filter, int prog_fd) {
        int p[2];
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int r = filter == PROBE_KBOUND    ? load_program(prog_fd)
                        : filter == PROBE_FOREIGN ? load_foreign_filter()
                                                  : 0;
                if (r < 0)
                        _exit(120);
                if (dup2(p[1], STDOUT_FILENO) < 0)
                        _exit(121);
                char *argv[] = {KBOUND_SYSCALL_PROBE, NULL};
                execve(KBOUND_SYSCALL_PROBE, argv, environ);
                _exit(122);
        }
        close(p[1]);
        char *buf = malloc(PROBE_OUTPUT_MAX);
        assert_non_null(buf);
        size_t len = 0;
        for (size_t n; (n = child_output_read(p[0], buf, len, PROBE_OUTPUT_MAX, KBOUND_SYSCALL_PROBE));)
                len += n;
        close(p[0]);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fail_msg("%s: %s %d (120: the filter did not load; 122: no such program)", KBOUND_SYSCALL_PROBE,
                         WIFEXITED(status) ? "exit status" : "killed by signal",
                         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        json_object *doc = NULL;
        if (kb_json_parse_strict(buf, len, 8, &doc) < 0 || !json_object_is_type(doc, json_type_object))
                fail_msg("%s printed no JSON object: %.*s", KBOUND_SYSCALL_PROBE, (int) (len > 400 ? 400 : len), buf);
        free(buf);
        return doc;
}

static json_object *field(json_object *o, const char *key) {
        json_object *v = NULL;
        if (!json_object_object_get_ex(o, key, &v))
                fail_msg("probe output: no \"%s\" in %s", key, json_object_to_json_string(o));
        return v;
}

/* The errno called name (as errno.h spells it), or 0. */
static int errno_from_name(const char *name) {
        for (int e = 1; e < 4096; e++)
                if (strerrorname_np(e) && strcmp(strerrorname_np(e), name) == 0)
                        return e;
        return 0;
}

/* What one outcome of the probe's output says, in the form of run_child's results: what the call
 * returned (>= 0) or -errno; LONG_MIN when not tested, which then must say why. */
static long probe_result(json_object *o, const char *what) {
        json_object *err = field(o, "errno"), *ret = field(o, "ret"), *why = field(o, "why");
        if (!json_object_get_boolean(field(o, "tested"))) {
                if (err || ret || json_object_get_string_len(why) < 10)
                        fail_msg("%s: untested, but %s", what, json_object_to_json_string(o));
                return LONG_MIN;
        }
        if (why || !json_object_is_type(ret, json_type_int))
                fail_msg("%s: tested, but %s", what, json_object_to_json_string(o));
        if (!err) {
                if (json_object_get_int64(ret) < 0)
                        fail_msg("%s: no errno, yet a negative ret: %s", what, json_object_to_json_string(o));
                return (long) json_object_get_int64(ret);
        }
        int e = errno_from_name(json_object_get_string(err));
        if (e == 0 || json_object_get_int64(ret) != -1)
                fail_msg("%s: %s", what, json_object_to_json_string(o));
        return -e;
}

/* The control (indexed like kb_tries_at) of entry e's harmless try; LONG_MIN if none was run. */
static long harmless_control(const long *control, const kb_seccomp_entry *e) {
        for (size_t i = 0; i < kb_tries_count(); i++) {
                const kb_try *t = kb_tries_at(i);
                if (t->form == KB_TRY_HARMLESS && strcmp(t->name, e->name) == 0)
                        return control[i];
        }
        return LONG_MIN;
}

/* What a family's inert try through a compat ABI answers (kb_tries_family_inert): under kbound's
 * filter, EAFNOSUPPORT for a refused family, and for socketcall's operations whatever the family
 * (the filter cannot read their arguments); otherwise the kernel's EINVAL for the undefined type
 * flag, before it looks at the family. */
static long inert_want(bool kbound_filter, bool blocked, bool socketcall) {
        return kbound_filter && (blocked || socketcall) ? -EAFNOSUPPORT : -EINVAL;
}

/* The probe's tries through each ABI besides the native one that the filter has rules for: each
 * there, accepted as this test finds the kernel to accept it (under the foreign filter, built with
 * libseccomp for the native ABI alone, libseccomp's default kills every call through another, and
 * the probe says so), and, where accepted, every entry answering as the policy says, each family
 * on every way in. */
static void check_probe_compat(json_object *doc, probe_filter filter, const kb_seccomp_policy *policy) {
        json_object *compat = field(doc, "compat");
        assert_true(json_object_is_type(compat, json_type_array));
        size_t k = 0;
        for (kb_sysabi abi = KB_SYSABI_COMPAT32; abi < KB_SYSABI_MAX_; abi++) {
                if (!kb_seccomp_abi_filtered(abi))
                        continue;
                const char *name = kb_sysabi_name(abi);
                json_object *c = json_object_array_get_idx(compat, k++);
                if (!c)
                        fail_msg("probe: no tries through %s", name);
                assert_string_equal(json_object_get_string(field(c, "abi")), name);
                char why[256];
                int here = kb_sysabi_accepted(abi, why, sizeof why);
                bool accepted = json_object_get_boolean(field(c, "accepted"));
                const char *said = json_object_get_string(field(c, "why"));
                if (filter == PROBE_FOREIGN && here == 1) {
                        if (accepted || !said || !strstr(said, "SIGSYS"))
                                fail_msg("probe under a native-only filter: %s %s (%s)", name,
                                         accepted ? "accepted" : "refused", said ? said : "no why");
                        continue;
                }
                if (accepted != (here == 1))
                        fail_msg("probe: %s %s (%s), where this test finds %s", name, accepted ? "accepted" : "refused",
                                 said ? said : "no why", why);
                if (!accepted)
                        continue;
                json_object *results = field(c, "results");
                assert_int_equal(json_object_array_length(results), kb_seccomp_entry_count());
                bool has_socketcall = kb_seccomp_syscall_nr_on("socketcall", abi) >= 0;
                for (size_t i = 0; i < kb_seccomp_entry_count(); i++) {
                        const kb_seccomp_entry *e = kb_seccomp_entry_at(i);
                        json_object *r = json_object_array_get_idx(results, i);
                        assert_string_equal(json_object_get_string(field(r, "name")), e->name);
                        bool blocked = filter == PROBE_KBOUND && kb_seccomp_blocks(policy, e);
                        if (e->match == KB_SECCOMP_MATCH_FAMILY) {
                                static const char *const routes[] = {NULL, "socketpair", "socketcall",
                                                                     "socketcall_pair"};
                                for (size_t j = 0; j < KB_ELEMENTSOF(routes); j++) {
                                        if (j >= 2 && !has_socketcall)
                                                continue;
                                        long got = probe_result(routes[j] ? field(r, routes[j]) : r, e->name);
                                        long want = inert_want(filter == PROBE_KBOUND, blocked, j >= 2);
                                        if (got != want)
                                                fail_msg("probe: %s %s(%s): expected %s, got %s", name,
                                                         routes[j] ? routes[j] : "socket", e->name, errname(want),
                                                         errname(got));
                                }
                                continue;
                        }
                        long got = probe_result(r, e->name);
                        if (kb_seccomp_entry_syscall_nr_on(e, abi) < 0) {
                                if (got != LONG_MIN)
                                        fail_msg("probe: %s %s: tried, but the ABI has no such call", name, e->name);
                                continue;
                        }
                        if (got == LONG_MIN && strncmp(e->name, "kexec", 5) == 0)
                                continue; /* not spending a kexec load */
                        if (got == LONG_MIN)
                                fail_msg("probe: %s %s: not tried: %s", name, e->name,
                                         json_object_get_string(field(r, "why")));
                        if (filter == PROBE_FOREIGN && strcmp(e->name, "keyctl") == 0)
                                continue;
                        const kb_try *t = kb_tries_find(e->name, KB_TRY_HARMLESS);
                        if (blocked ? got != -e->errnum : got == -e->errnum && !(t && t->gated && !is_root()))
                                fail_msg("probe: %s %s: %s, got %s", name, e->name,
                                         blocked ? "expected the filter's errno"
                                                 : "left allowed, but answered "
                                                   "the filter's errno",
                                         errname(got));
                }
        }
        assert_int_equal(json_object_array_length(compat), k);
}

/* Checks the probe's output against the table: every entry once, in the table's order; each call
 * this ABI has tried, and answering as policy says (refused: the table's errno; allowed: as the
 * same try without a filter, control); families tried only under kbound's filter, and then each
 * answering as policy says. policy is ignored unless filter is PROBE_KBOUND. */
static void check_probe(json_object *doc, probe_filter filter, const kb_seccomp_policy *policy, const long *control) {
        assert_int_equal(json_object_get_int(field(doc, "version")), 1);
        const char *arch = json_object_get_string(field(doc, "arch"));
#if defined(__x86_64__)
        assert_string_equal(arch, "x86_64");
#elif defined(__aarch64__)
        assert_string_equal(arch, "aarch64");
#else
        assert_true(arch && *arch);
#endif
        int seccomp = json_object_get_int(field(doc, "seccomp")), filters = json_object_get_int(field(doc, "filters"));
        if (filter == PROBE_UNFILTERED && (seccomp != 0 || filters != 0))
                fail_msg("unfiltered probe: Seccomp %d, %d filters: is this test itself under a filter?", seccomp,
                         filters);
        if (filter != PROBE_UNFILTERED && (seccomp != 2 || filters < 1))
                fail_msg("filtered probe: Seccomp %d, %d filters", seccomp, filters);
        json_object *results = field(doc, "results");
        assert_true(json_object_is_type(results, json_type_array));
        assert_int_equal(json_object_array_length(results), kb_seccomp_entry_count());
        for (size_t i = 0; i < kb_seccomp_entry_count(); i++) {
                const kb_seccomp_entry *e = kb_seccomp_entry_at(i);
                json_object *r = json_object_array_get_idx(results, i);
                assert_string_equal(json_object_get_string(field(r, "name")), e->name);
                bool blocked = filter == PROBE_KBOUND && kb_seccomp_blocks(policy, e);
                if (e->match != KB_SECCOMP_MATCH_FAMILY) {
                        long got = probe_result(r, e->name);
                        if (kb_seccomp_entry_syscall_nr(e) < 0) {
                                if (got != LONG_MIN)
                                        fail_msg("%s: tried, but this ABI has no such call", e->name);
                                continue;
                        }
                        long want = harmless_control(control, e);
                        if (filter == PROBE_FOREIGN && strcmp(e->name, "keyctl") == 0)
                                want = -EPERM;
                        if (got == LONG_MIN && want == LONG_MIN && strncmp(e->name, "kexec", 5) == 0)
                                continue; /* neither spends a kexec load */
                        if (got == LONG_MIN)
                                fail_msg("%s: not tried: %s", e->name, json_object_get_string(field(r, "why")));
                        if (blocked) {
                                if (got != -e->errnum)
                                        fail_msg("probe: %s: expected %s from the filter, got %s", e->name,
                                                 strerrorname_np(e->errnum), errname(got));
                        } else if (want != LONG_MIN && !same_outcome(got, want)) {
                                fail_msg("probe: %s gave %s, where the same try in this test gave %s", e->name,
                                         errname(got), errname(want));
                        }
                        continue;
                }
                for (int pair = 0; pair <= 1; pair++) {
                        json_object *o = pair ? field(r, "socketpair") : r;
                        long got = probe_result(o, e->name);
                        if (filter != PROBE_KBOUND) {
                                /* never tried without kbound's filter: it could load a module */
                                if (got != LONG_MIN)
                                        fail_msg("probe: %s tried without kbound's filter", e->name);
                                const char *why = json_object_get_string(field(o, "why"));
                                if (!strstr(why,
                                            filter == PROBE_UNFILTERED ? "Seccomp: 0" : "no filter of the families"))
                                        fail_msg("probe: %s untested for another reason: %s", e->name, why);
                                continue;
                        }
                        if (got == LONG_MIN)
                                fail_msg("probe: %s not tried under kbound's filter: %s", e->name,
                                         json_object_get_string(field(o, "why")));
                        if (blocked) {
                                if (got != -EAFNOSUPPORT)
                                        fail_msg("probe: %s(%s): expected EAFNOSUPPORT, got %s",
                                                 pair ? "socketpair" : "socket", e->name, errname(got));
                                continue;
                        }
                        assert_true(family_always_built_in(e->value));
                        family_try t = {.family = (long) e->value, .pair = pair};
                        outcome c = run_child(-1, try_family, &t);
                        if (!same_outcome(got, c.result))
                                fail_msg("probe: %s(%s) is allowed but gave %s (without the filter: %s)",
                                         pair ? "socketpair" : "socket", e->name, errname(got), errname(c.result));
                }
        }
        check_probe_compat(doc, filter, policy);
}

/* The probe program under each filter variant: every entry answers what the filter gives, the
 * allowed ones what the same tries in this test give without a filter. */
static void test_filter_probe_program(void **state) {
        const long *control = controls();
        char *allow[] = {"keyctl", "ioctl:TIOCSTI", "personality", NULL};
        const kb_seccomp_policy policies[] = {
                {0},
                {.sockets = KB_SECCOMP_SOCKETS_UNIX},
                {.sockets = KB_SECCOMP_SOCKETS_INET},
                {.allow = allow},
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(policies); i++) {
                int fd = build(&policies[i]);
                json_object *doc = run_probe(PROBE_KBOUND, fd);
                check_probe(doc, PROBE_KBOUND, &policies[i], control);
                json_object_put(doc);
                close(fd);
        }
}

/* Without a filter (the negative control) the probe's calls reach the kernel and answer as this
 * test's tries do, and it tries no family; under a filter that is not kbound's it tries no family
 * either. */
static void test_filter_probe_program_unfiltered(void **state) {
        const long *control = controls();
        json_object *doc = run_probe(PROBE_UNFILTERED, -1);
        check_probe(doc, PROBE_UNFILTERED, NULL, control);
        json_object_put(doc);
        doc = run_probe(PROBE_FOREIGN, -1);
        check_probe(doc, PROBE_FOREIGN, NULL, control);
        json_object_put(doc);
}

/* ---------- the program as data: run as the kernel runs it (seccomp_compare.c) ---------- */

/* kbound's program for policy, read back: *ret_prog (free its insns). */
static void program_of(const kb_seccomp_policy *policy, kb_seccomp_prog *ret_prog) {
        int fd = build(policy);
        void *insns = NULL;
        size_t len = 0;
        assert_int_equal(kb_seccomp_program_read(fd, &insns, &len), 0);
        close(fd);
        *ret_prog = (kb_seccomp_prog){.insns = insns, .len = len / sizeof(struct sock_filter)};
}

/* The program libseccomp made, run by kb_seccomp_run, answers each entry of the table on each ABI
 * as the filter refuses it (what the tries show the kernel doing), getpid with allow, and a call
 * from an architecture it has no rules for with a kill; comparing it with itself finds nothing, and
 * with a program that leaves keyctl allowed, keyctl on every ABI and nothing else. */
static void test_filter_program_run(void **state) {
        kb_seccomp_prog prog, loose;
        program_of(NULL, &prog);
        for (kb_sysabi abi = 0; abi < KB_SYSABI_MAX_; abi++) {
                if (!kb_seccomp_abi_filtered(abi))
                        continue;
#if defined(__x86_64__)
                uint32_t arch = abi == KB_SYSABI_COMPAT32 ? AUDIT_ARCH_I386 : AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
                uint32_t arch = abi == KB_SYSABI_COMPAT32 ? AUDIT_ARCH_ARM : AUDIT_ARCH_AARCH64;
#else
                uint32_t arch = 0;
                continue;
#endif
                uint32_t answer;
                struct seccomp_data d = {.nr = kb_seccomp_syscall_nr_on("getpid", abi), .arch = arch};
                assert_int_equal(kb_seccomp_run(&prog, 1, &d, &answer), 0);
                assert_int_equal(answer, SECCOMP_RET_ALLOW);
                for (size_t i = 0; i < kb_seccomp_entry_count(); i++) {
                        const kb_seccomp_entry *e = kb_seccomp_entry_at(i);
                        int nr = kb_seccomp_entry_syscall_nr_on(e, abi);
                        if (nr < 0 || e->match == KB_SECCOMP_MATCH_PERSONALITY)
                                continue;
                        d = (struct seccomp_data){.nr = nr, .arch = arch};
                        if (e->match != KB_SECCOMP_MATCH_CALL)
                                d.args[e->match == KB_SECCOMP_MATCH_FAMILY ? 0 : e->arg] = e->value;
                        assert_int_equal(kb_seccomp_run(&prog, 1, &d, &answer), 0);
                        uint32_t want = kb_seccomp_blocks(NULL, e) ? SECCOMP_RET_ERRNO | (uint32_t) e->errnum
                                                                   : SECCOMP_RET_ALLOW;
                        if (answer != want)
                                fail_msg("%s on %s: the program answers 0x%08x, not 0x%08x", e->name,
                                         kb_sysabi_name(abi), answer, want);
                }
        }
        uint32_t answer;
        struct seccomp_data foreign = {.nr = 1, .arch = AUDIT_ARCH_S390X};
        assert_int_equal(kb_seccomp_run(&prog, 1, &foreign, &answer), 0);
        assert_int_equal(answer & SECCOMP_RET_ACTION_FULL, SECCOMP_RET_KILL_PROCESS);

        kb_seccomp_difference diffs[8];
        size_t n = 99;
        assert_int_equal(kb_seccomp_compare(&prog, &prog, 1, diffs, 8, &n), 0);
        assert_int_equal(n, 0);
        char *allow[] = {"keyctl", NULL};
        const kb_seccomp_policy keyctl_allowed = {.allow = allow};
        program_of(&keyctl_allowed, &loose);
        assert_int_equal(kb_seccomp_compare(&prog, &loose, 1, diffs, 8, &n), 0);
        size_t abis = 0;
        for (kb_sysabi abi = 0; abi < KB_SYSABI_MAX_; abi++)
                abis += kb_seccomp_abi_filtered(abi) && kb_seccomp_syscall_nr_on("keyctl", abi) >= 0;
        assert_int_equal(n, abis);
        for (size_t i = 0; i < n; i++) {
                char a[48], b[48];
                assert_string_equal(diffs[i].call, "keyctl");
                assert_string_equal(kb_seccomp_action_text(diffs[i].built, a, sizeof a), "errno EPERM");
                assert_string_equal(kb_seccomp_action_text(diffs[i].in_force, b, sizeof b), "allow");
        }
        /* stacked on kbound's, a program that allows keyctl changes nothing: the strictest wins */
        const kb_seccomp_prog stack[2] = {prog, loose};
        assert_int_equal(kb_seccomp_compare(&prog, stack, 2, diffs, 8, &n), 0);
        assert_int_equal(n, 0);
        /* a program the kernel would not run */
        const struct sock_filter off_end[1] = {BPF_JUMP(BPF_JMP | BPF_JA, 5, 0, 0)};
        const kb_seccomp_prog bad = {.insns = off_end, .len = 1};
        assert_int_equal(kb_seccomp_run(&bad, 1, &foreign, &answer), -EINVAL);
        free((void *) prog.insns);
        free((void *) loose.insns);
}

/* ---------- compat ABIs ---------- */

/* A family's inert try through an ABI (kb_tries_family_inert). */
typedef struct inert_try {
        kb_call call;
        long family;
        kb_family_route route;
} inert_try;

static long run_inert(const void *arg) {
        const inert_try *t = arg;
        return kb_tries_family_inert(&t->call, t->family, t->route);
}

/* Every harmless try through abi, under the default filter and without one: each refused call
 * answers the table's errno under it, and something else without it (so the try tells the filter
 * from the kernel on that ABI too, and does nothing: the arguments are the native ones, copied
 * below 4 GiB); each family's inert tries on every way in answer as the filter says under it, and
 * the kernel's EINVAL without it, making no socket. */
static void check_compat_tries(kb_sysabi abi) {
        const char *name = kb_sysabi_name(abi);
        int fd = build(NULL);
        for (size_t i = 0; i < kb_tries_count(); i++) {
                const kb_try *t = kb_tries_at(i);
                const kb_seccomp_entry *e = kb_seccomp_entry_find(t->name);
                int nr = kb_seccomp_entry_syscall_nr_on(e, abi);
                if (t->form != KB_TRY_HARMLESS || nr < 0)
                        continue;
                if (strncmp(t->name, "kexec", 5) == 0 && is_root() && !kexec_limit_unset())
                        continue; /* a root kexec call would spend one of kernel.kexec_load_limit_reboot's */
                try_arg a = {.t = t, .e = e, .nr = nr, .abi = abi};
                outcome o = run_child(fd, run_try, &a);
                assert_loaded(&o, t->name);
                if (o.result != -e->errnum)
                        fail_msg("%s %s: expected %s from the filter, got %s", name, t->name,
                                 strerrorname_np(e->errnum), errname(o.result));
                outcome u = run_child(-1, run_try, &a);
                if (u.signal)
                        fail_msg("%s %s without the filter: the child died of signal %d", name, t->name, u.signal);
                if (u.result != -e->errnum)
                        continue;
                if (t->gated && !is_root())
                        fprintf(stderr, "test_seccomp: control NOT conclusive for %s %s: the kernel answered %s\n",
                                name, t->name, errname(u.result));
                else
                        fail_msg("%s %s without the filter gave %s, the filter's own errno: the try cannot tell the "
                                 "filter from the kernel",
                                 name, t->name, errname(u.result));
        }
        const struct {
                const char *call;
                kb_family_route route;
        } routes[] = {{"socket", KB_FAMILY_SOCKET},
                      {"socketpair", KB_FAMILY_SOCKETPAIR},
                      {"socketcall", KB_FAMILY_SOCKETCALL_SOCKET},
                      {"socketcall", KB_FAMILY_SOCKETCALL_SOCKETPAIR}};
        for (size_t i = 0; i < kb_seccomp_entry_count(); i++) {
                const kb_seccomp_entry *e = kb_seccomp_entry_at(i);
                if (e->match != KB_SECCOMP_MATCH_FAMILY)
                        continue;
                for (size_t j = 0; j < KB_ELEMENTSOF(routes); j++) {
                        inert_try t = {.call = {.abi = abi, .nr = kb_seccomp_syscall_nr_on(routes[j].call, abi)},
                                       .family = (long) e->value,
                                       .route = routes[j].route};
                        if (t.call.nr < 0)
                                continue;
                        outcome o = run_child(fd, run_inert, &t), u = run_child(-1, run_inert, &t);
                        assert_loaded(&o, e->name);
                        long want = inert_want(true, kb_seccomp_blocks(NULL, e), j >= 2);
                        if (o.result != want || u.signal || u.result != -EINVAL)
                                fail_msg("%s %s (way in %zu) of %s: %s under the filter (expected %s), %s without it "
                                         "(expected EINVAL)",
                                         name, routes[j].call, j, e->name, errname(o.result), errname(want),
                                         u.signal ? "killed" : errname(u.result));
                }
        }
        close(fd);
}

/* The tries through every ABI besides the native one that the filter has rules for and this kernel
 * runs; one it does not run is named (here: x32, compiled out of the kernel). */
static void test_filter_compat_tries(void **state) {
        for (kb_sysabi abi = KB_SYSABI_COMPAT32; abi < KB_SYSABI_MAX_; abi++) {
                if (!kb_seccomp_abi_filtered(abi))
                        continue;
                char why[256];
                int accepted = kb_sysabi_accepted(abi, why, sizeof why);
                if (accepted != 1) {
                        fprintf(stderr, "test_seccomp: NOT trying through %s: %s\n", kb_sysabi_name(abi), why);
                        continue;
                }
                check_compat_tries(abi);
        }
}

#if defined(__x86_64__)
/* A 32-bit x86 syscall from 64-bit code (kbound/sysabi.h). Pointers must lie below 4 GiB. */
static long int80(long nr, long a, long b, long c) {
        return kb_sysabi_call(KB_SYSABI_COMPAT32, nr, a, b, c, 0, 0, 0);
}

/* 32-bit x86 numbers (arch/x86/entry/syscalls/syscall_32.tbl). */
#define X86_GETPID 20
#define X86_UMOUNT 22
#define X86_STIME 25
#define X86_SOCKETCALL 102
#define X86_VM86OLD 113
#define X86_PERSONALITY 136
#define X86_KEYCTL 288
#define X86_UNSHARE 310
#define X86_SOCKET 359
#define X86_IO_URING_SETUP 425
#define X86_CLONE3 435
#define SOCKETCALL_SOCKET 1

typedef struct int80_case {
        const char *what;
        long nr, a, b, c;
        long blocked; /* what the filter returns; 0: allowed */
        bool args;    /* b points at a socketcall argument block */
        bool control; /* also run without the filter (never for a family that may not be built in) */
} int80_case;

static const int80_case int80_cases[] = {
        {"getpid", X86_GETPID, 0, 0, 0, 0, false, true},
        {"personality query", X86_PERSONALITY, 0xffffffffL, 0, 0, 0, false, true},
        {"socket(AF_UNIX)", X86_SOCKET, AF_UNIX, SOCK_STREAM, 0, 0, false, true},
        {"keyctl", X86_KEYCTL, KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 0, -EPERM, false, true},
        {"unshare", X86_UNSHARE, CLONE_NEWUSER | CLONE_VFORK, 0, 0, -EPERM, false, true},
        {"umount", X86_UMOUNT, 0, 0, 0, -EPERM, false, true},
        {"stime", X86_STIME, 0, 0, 0, -EPERM, false, true},
        {"vm86old", X86_VM86OLD, 0, 0, 0, -EPERM, false, true},
        {"personality(ADDR_NO_RANDOMIZE)", X86_PERSONALITY, ADDR_NO_RANDOMIZE, 0, 0, -EPERM, false, true},
        {"io_uring_setup", X86_IO_URING_SETUP, 1, 0, 0, -EPERM, false, true},
        {"clone3", X86_CLONE3, 0, 0, 0, -ENOSYS, false, true},
        {"socket(AF_VSOCK)", X86_SOCKET, 40, SOCK_STREAM, 0, -EAFNOSUPPORT, false, false},
        /* socketcall cannot be filtered by family, so its socket operation is refused outright */
        {"socketcall(SOCKET, AF_UNIX)", X86_SOCKETCALL, SOCKETCALL_SOCKET, 0, 0, -EAFNOSUPPORT, true, true},
};

static long try_int80(const void *arg) {
        const int80_case *c = arg;
        long a = c->a, b = c->b;
        if (c->args) {
                uint32_t *block =
                        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
                if (block == MAP_FAILED)
                        return -ENOMEM;
                block[0] = AF_UNIX;
                block[1] = SOCK_STREAM;
                block[2] = 0;
                b = (long) (uintptr_t) block;
        }
        long r = int80(c->nr, a, b, c->c);
        if (c->nr == X86_PERSONALITY && c->a != 0xffffffffL && r >= 0)
                int80(X86_PERSONALITY, r, 0, 0); /* allowed after all: put it back */
        return r;
}

static long try_int80_getpid(const void *arg) {
        return int80(X86_GETPID, 0, 0, 0);
}

/* x32 syscalls are the x86_64 numbers with bit 30 set; kernels usually leave x32 off. */
#define X32_BIT 0x40000000L
static long try_x32(const void *arg) {
        const long *nr_args = arg;
        return result(syscall(X32_BIT | nr_args[0], nr_args[1], nr_args[2], nr_args[3]));
}
#endif

static void test_filter_x86_32(void **state) {
#if defined(__x86_64__)
        /* Can this machine run a 32-bit syscall at all? Killed (no IA32 emulation: SIGSEGV;
         * valgrind does not emulate int 0x80 in 64-bit code: SIGILL) or ENOSYS means no. */
        outcome probe = run_child(-1, try_int80_getpid, NULL);
        if (probe.signal || probe.result <= 0) {
                fprintf(stderr, "test_seccomp: NOT running the 32-bit x86 checks: int 0x80 getpid in a child %s%s\n",
                        probe.signal ? "died of signal " : "returned ",
                        probe.signal ? strsignal(probe.signal) : errname(probe.result));
                return;
        }
        int fd = build(NULL);
        for (size_t i = 0; i < KB_ELEMENTSOF(int80_cases); i++) {
                const int80_case *c = &int80_cases[i];
                outcome o = run_child(fd, try_int80, c);
                assert_loaded(&o, c->what);
                if (c->blocked) {
                        if (o.result != c->blocked)
                                fail_msg("x86 %s: expected %s, got %s", c->what, strerrorname_np((int) -c->blocked),
                                         errname(o.result));
                        if (!c->control)
                                continue;
                        /* and without the filter the kernel answers something else */
                        outcome u = run_child(-1, try_int80, c);
                        if (u.signal || u.result == c->blocked)
                                fail_msg("x86 %s without the filter: %s: the try cannot tell the filter from "
                                         "the kernel",
                                         c->what, u.signal ? "killed" : errname(u.result));
                } else if (o.result < 0) {
                        fail_msg("x86 %s: refused under the filter: %s", c->what, errname(o.result));
                }
        }
        close(fd);
#else
        fprintf(stderr, "test_seccomp: NOT running the 32-bit x86 checks: not an x86_64 build\n");
#endif
}

static void test_filter_x32(void **state) {
#if defined(__x86_64__)
        static const long getpid_args[] = {SYS_getpid, 0, 0, 0};
        outcome probe = run_child(-1, try_x32, getpid_args);
        if (probe.signal || probe.result <= 0) {
                fprintf(stderr,
                        "test_seccomp: NOT running the x32 checks: this kernel does not run x32 syscalls "
                        "(x32 getpid %s)\n",
                        probe.signal ? "killed the child" : errname(probe.result));
                return;
        }
        int fd = build(NULL);
        static const long keyctl_args[] = {SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 0};
        static const long vsock_args[] = {SYS_socket, 40, SOCK_STREAM, 0};
        outcome o = run_child(fd, try_x32, keyctl_args);
        assert_loaded(&o, "x32 keyctl");
        assert_int_equal(o.result, -EPERM);
        o = run_child(fd, try_x32, vsock_args);
        assert_loaded(&o, "x32 socket");
        assert_int_equal(o.result, -EAFNOSUPPORT);
        o = run_child(fd, try_x32, getpid_args);
        assert_loaded(&o, "x32 getpid");
        assert_true(o.result > 0);
        close(fd);
#else
        fprintf(stderr, "test_seccomp: NOT running the x32 checks: not an x86_64 build\n");
#endif
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_table),
                cmocka_unit_test(test_policy),
                cmocka_unit_test(test_filter_program),
                cmocka_unit_test(test_filter_default),
                cmocka_unit_test(test_filter_variants),
                cmocka_unit_test(test_filter_families_beyond_table),
                cmocka_unit_test(test_filter_personality),
                cmocka_unit_test(test_filter_ordinary_calls),
                cmocka_unit_test(test_filter_probe_program),
                cmocka_unit_test(test_filter_probe_program_unfiltered),
                cmocka_unit_test(test_filter_program_run),
                cmocka_unit_test(test_filter_compat_tries),
                cmocka_unit_test(test_filter_x86_32),
                cmocka_unit_test(test_filter_x32),
        };
        /* valgrind 3.19 does not implement seccomp(2) (syscall 317): libseccomp cannot confirm the
         * kill action while building, and no child could load the program. Everything that builds
         * or loads a filter is then left out, and said so; the normal and sanitizer runs do it. A
         * kernel without seccomp(2) outside valgrind is a real failure: the tests then fail. */
        uint32_t kill_process = SECCOMP_RET_KILL_PROCESS;
        if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &kill_process) < 0 && RUNNING_ON_VALGRIND) {
                fprintf(stderr, "test_seccomp: NOT running test_filter_* under valgrind: it does not implement "
                                "seccomp(2), so no filter can be built or loaded here\n");
                cmocka_set_skip_filter("test_filter_*");
        }
        return cmocka_run_group_tests(tests, NULL, NULL);
}
