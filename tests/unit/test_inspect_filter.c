/* test_inspect_filter.c: the host's read of the seccomp filters in force (inspect_filter.c) on real
 * processes: a child under kbound's program is found to hold it; one under a program that lets keyctl
 * through on i386 is found not to, with that call named; one that stacked a filter of its own on
 * kbound's still holds kbound's; one with no filter is said so. Each reader stops a process for a
 * moment: a read(2) it was blocked in goes on, and nothing traces it afterwards. Whether the host
 * can read at all, and which ABIs the kernel runs, as kbound's own facts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "evidence/inspect-internal.h"
#include "kbound/inspect.h"
#include "kbound/seccomp.h"
#include "kbound/sysabi.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

/* kbound's default program, as bwrap is handed it. */
static void *built(size_t *ret_len) {
        int fd = -1;
        assert_int_equal(kb_seccomp_build(NULL, &fd), 0);
        void *prog = NULL;
        assert_int_equal(kb_seccomp_program_read(fd, &prog, ret_len), 0);
        close(fd);
        return prog;
}

/* What a child loads: kbound's program, the same with keyctl let through on i386 first (as
 * tests/fixtures/seccomp-patch does), kbound's with a filter of the child's own on top, or nothing. */
typedef enum { LOAD_KBOUND, LOAD_I386_KEYCTL, LOAD_STACKED, LOAD_NONE } load_kind;

#define I386_KEYCTL 288

static int load(const struct sock_filter *prog, size_t n) {
        struct sock_fprog fprog = {.len = (unsigned short) n, .filter = (struct sock_filter *) prog};
        return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) < 0 ? -errno : 0;
}

/* A child under kind, blocked reading *ret_go's other end: it exits 0 once it has read a byte and
 * its status says nothing traces it, 1 otherwise. */
static pid_t child_under(load_kind kind, const void *prog, size_t len, int *ret_go) {
        int go[2], ready[2];
        assert_int_equal(pipe2(go, O_CLOEXEC), 0);
        assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                size_t n = len / sizeof(struct sock_filter);
                struct sock_filter patched[5 + BPF_MAXINSNS];
                static const struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
                int r = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? -errno : 0;
                if (r == 0 && kind == LOAD_I386_KEYCTL) {
                        const struct sock_filter prefix[5] = {
                                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 0, 3),
                                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, I386_KEYCTL, 0, 1),
                                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                        };
                        memcpy(patched, prefix, sizeof prefix);
                        memcpy(patched + 5, prog, len);
                        r = load(patched, n + 5);
                } else if (r == 0 && kind != LOAD_NONE) {
                        r = load(prog, n);
                        if (r == 0 && kind == LOAD_STACKED)
                                r = load(&allow, 1);
                }
                char c = r == 0 ? 'y' : 'n', byte;
                if (write(ready[1], &c, 1) != 1 || r < 0)
                        _exit(2);
                ssize_t got;
                do
                        got = read(go[0], &byte, 1);
                while (got < 0 && errno == EINTR);
                char status[4096] = "";
                int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
                ssize_t s = fd >= 0 ? read(fd, status, sizeof status - 1) : -1;
                _exit(got == 1 && s > 0 && strstr(status, "\nTracerPid:\t0\n") ? 0 : 1);
        }
        close(go[0]);
        close(ready[1]);
        char c = 0;
        assert_int_equal(read(ready[0], &c, 1), 1);
        close(ready[0]);
        if (c != 'y')
                fail_msg("a child could not load its filter");
        *ret_go = go[1];
        return pid;
}

/* The child goes on and must have come through the read unharmed. */
static void let_go(pid_t pid, int go) {
        assert_int_equal(write(go, "g", 1), 1);
        close(go);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fail_msg("pid %d after the read: %s %d (1: its blocked read failed, or it was still traced)", (int) pid,
                         WIFEXITED(status) ? "exit" : "signal",
                         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* The FILTER of pid, read against prog by kb_inspect_filter_facts (a new object to put). */
static json_object *read_of(pid_t pid, json_object *host, const void *prog, size_t len) {
        kb_inspect_target t = {.proc_root = "/proc", .host = host, .seccomp_program = prog, .seccomp_program_len = len};
        json_object *proc = json_object_new_object();
        assert_int_equal(kb_fact_set_str(proc, FACT_PROCESS_STATE, "S"), 0);
        assert_int_equal(kb_inspect_filter_facts(&t, pid, proc), 0);
        json_object *f = kb_fact_obj_of(proc, FACT_PROCESS_FILTER);
        assert_non_null(f);
        json_object_get(f);
        json_object_put(proc);
        return f;
}

static void test_read(void **state) {
        json_object *host = json_object_new_object();
        assert_int_equal(kb_inspect_filter_access(host), 0);
        if (!kb_fact_bool_of(host, FACT_HOST_FILTER_READ)) {
                const char *why = kb_fact_str_of(host, FACT_HOST_FILTER_READ_WHY);
                assert_non_null(why);
                if (geteuid() == 0 && !RUNNING_ON_VALGRIND)
                        fail_msg("root cannot read a filter in force here: %s", why);
                fprintf(stderr, "test_inspect_filter: NOT reading filters (not root, or valgrind): %s\n", why);
                json_object_put(host);
                skip();
        }
        size_t len = 0;
        void *prog = built(&len);
        size_t n = len / sizeof(struct sock_filter);
        int go[4];
        pid_t kbound = child_under(LOAD_KBOUND, prog, len, &go[0]),
              leak = child_under(LOAD_I386_KEYCTL, prog, len, &go[1]),
              stacked = child_under(LOAD_STACKED, prog, len, &go[2]), none = child_under(LOAD_NONE, prog, len, &go[3]);

        json_object *f = read_of(kbound, host, prog, len);
        assert_int_equal(kb_fact_int_or(f, FACT_FILTER_KBOUND, -1), 0);
        assert_int_equal(kb_fact_int_or(f, FACT_FILTER_BUILT, -1), (int64_t) n);
        assert_int_equal(json_object_array_length(kb_fact_arr_of(f, FACT_FILTER_LENGTHS)), 1);
        assert_null(kb_fact_get(f, FACT_FILTER_DIFFERENCES));
        assert_null(kb_fact_get(f, FACT_FILTER_ERROR));
        json_object_put(f);

        /* the program that differs on one ABI: named, one call, nothing else */
        f = read_of(leak, host, prog, len);
        assert_null(kb_fact_get(f, FACT_FILTER_KBOUND));
        assert_int_equal(kb_fact_int_or(f, FACT_FILTER_FIRST_DIFFERENCE, -1), 1); /* both load the arch first */
        json_object *diffs = kb_fact_arr_of(f, FACT_FILTER_DIFFERENCES);
        assert_int_equal(json_object_array_length(diffs), 1);
        json_object *d = json_object_array_get_idx(diffs, 0);
        assert_string_equal(kb_fact_str_of(d, FACT_FILTER_DIFF_ABI), "i386");
        assert_string_equal(kb_fact_str_of(d, FACT_FILTER_DIFF_CALL), "keyctl");
        assert_int_equal(kb_fact_int_or(d, FACT_FILTER_DIFF_NR, -1), I386_KEYCTL);
        assert_string_equal(kb_fact_str_of(d, FACT_FILTER_DIFF_BUILT), "errno EPERM");
        assert_string_equal(kb_fact_str_of(d, FACT_FILTER_DIFF_IN_FORCE), "allow");
        json_object_put(f);

        /* a filter of the process's own on top only refuses more: kbound's is still the oldest */
        f = read_of(stacked, host, prog, len);
        assert_int_equal(kb_fact_int_or(f, FACT_FILTER_KBOUND, -1), 0);
        assert_int_equal(json_object_array_length(kb_fact_arr_of(f, FACT_FILTER_LENGTHS)), 2);
        json_object_put(f);

        f = read_of(none, host, prog, len);
        assert_non_null(kb_fact_str_of(f, FACT_FILTER_ERROR));
        assert_null(kb_fact_get(f, FACT_FILTER_KBOUND));
        json_object_put(f);

        pid_t pids[4] = {kbound, leak, stacked, none};
        for (size_t i = 0; i < 4; i++)
                let_go(pids[i], go[i]);

        /* a process that is gone is said so */
        kb_inspect_target t = {.proc_root = "/proc", .host = host, .seccomp_program = prog, .seccomp_program_len = len};
        json_object *proc = json_object_new_object();
        assert_int_equal(kb_inspect_filter_facts(&t, kbound, proc), -ESRCH);
        json_object_put(proc);
        /* and nothing is read without kbound's program */
        t.seccomp_program = NULL;
        proc = json_object_new_object();
        assert_int_equal(kb_inspect_filter_facts(&t, getpid(), proc), 0);
        assert_null(kb_fact_get(proc, FACT_PROCESS_FILTER));
        json_object_put(proc);
        free(prog);
        json_object_put(host);
}

/* kbound's own facts: whether the host can read a filter (root can, unless kbound itself runs
 * under one), and each ABI of the filter with getpid's answer through it. */
static void test_host_facts(void **state) {
        json_object *host = NULL;
        assert_int_equal(kb_inspect_host("/proc", &host), 0);
        bool can = kb_fact_bool_of(host, FACT_HOST_FILTER_READ);
        if (!can)
                assert_non_null(kb_fact_str_of(host, FACT_HOST_FILTER_READ_WHY));
        if (geteuid() != 0)
                assert_false(can);
        json_object *abis = kb_fact_map_of(host, FACT_HOST_ABIS), *native = NULL;
        assert_true(json_object_object_get_ex(abis, kb_sysabi_name(KB_SYSABI_NATIVE), &native));
        assert_true(kb_fact_bool_of(native, FACT_HOST_ABI_NATIVE));
        assert_true(kb_fact_bool_of(native, FACT_HOST_ABI_ACCEPTED));
        for (kb_sysabi abi = KB_SYSABI_COMPAT32; abi < KB_SYSABI_MAX_; abi++) {
                json_object *o = NULL;
                bool listed = kb_sysabi_name(abi) && json_object_object_get_ex(abis, kb_sysabi_name(abi), &o);
                assert_int_equal(listed, kb_seccomp_abi_filtered(abi));
                if (!listed)
                        continue;
                char why[256];
                int here = kb_sysabi_accepted(abi, why, sizeof why);
                json_object *accepted = kb_fact_get(o, FACT_HOST_ABI_ACCEPTED);
                if (here < 0)
                        assert_null(accepted);
                else
                        assert_int_equal(json_object_get_boolean(accepted), here == 1);
                assert_non_null(kb_fact_str_of(o, FACT_HOST_ABI_ANSWER));
        }
        json_object_put(host);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_read),
                cmocka_unit_test(test_host_facts),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
