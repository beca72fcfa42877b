/* test_sandbox_launch.c: real launches in real bwrap: PID 2 pinning, signals, stop, environment
 * isolation, and the failure paths (missing bwrap, bwrap dying, a kernel that never appears). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kbound/canary.h"
#include "kbound/inspect.h"
#include "kbound/judge.h"
#include "kbound/sandbox.h"
#include "base/procfs.h"
#include "sandbox/sandbox-internal.h"
#include "tmp_tree.h"
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch_fixture.h"

static void test_launch_pid2_signal_stop(void **state) {
        fixture *f = *state;
        char *argv[] = {"/bin/sh", "-c", "echo $$ > /run/kbound/pid; sleep 30", NULL};
        kb_sandbox *sb = NULL;
        kb_error *error = NULL;
        int r = kb_sandbox_launch(&f->policy, argv, f->log, kb_now_ms() + 10000, &sb, &error);
        if (r < 0)
                fail_msg("launch failed: %d %s", r, kb_error_text(error, r));
        assert_null(error);
        pid_t kernel = kb_sandbox_kernel_pid(sb);
        pid_t bwrap = kb_sandbox_bwrap_pid(sb);
        assert_true(kernel > 0 && bwrap > 0 && kernel != bwrap);

        /* From the host: the kernel's NSpid ends in 2, and it is the child of info's child-pid. */
        kb_proc_status st;
        assert_int_equal(kb_sandbox_proc_status("/proc", kernel, &st), 0);
        assert_true(st.nspid_depth >= 2);
        assert_int_equal(st.nspid_last, 2);
        json_object *info = kb_sandbox_info(sb), *child;
        assert_non_null(info);
        assert_true(json_object_object_get_ex(info, "child-pid", &child));
        assert_int_equal(st.ppid, json_object_get_int(child));

        /* From inside: the shell sees itself as PID 2. */
        char pidfile[256];
        snprintf(pidfile, sizeof pidfile, "%s/pid", f->runtime);
        char *inside = wait_file(pidfile, 5000, NULL);
        assert_non_null(inside);
        assert_string_equal(inside, "2\n");
        free(inside);

        assert_int_equal(kb_sandbox_alive(sb), 1);
        assert_int_equal(kb_sandbox_verify(sb), 0);

        /* The signal reaches PID 2 through the pidfd, and the pidfd then turns readable. */
        assert_int_equal(kb_sandbox_signal(sb, SIGTERM), 0);
        struct pollfd p = {.fd = kb_sandbox_pidfd(sb), .events = POLLIN};
        assert_int_equal(poll(&p, 1, 5000), 1);
        assert_true(p.revents & POLLIN);
        assert_int_equal(kb_sandbox_alive(sb), 0);
        assert_int_equal(kb_sandbox_signal(sb, SIGTERM), -ESRCH);
        assert_int_equal(kb_sandbox_verify(sb), -ESRCH);

        int status = -1;
        assert_int_equal(kb_sandbox_stop(sb, kb_now_ms() + 5000, &status), 0);
        /* bwrap passed on the kernel's death by SIGTERM (exit code 128+15 from its init) */
        assert_true(WIFEXITED(status) || WIFSIGNALED(status));
        assert_false(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        assert_false(proc_exists(bwrap));
        assert_true(proc_gone_soon(kernel));
        assert_int_equal(kb_sandbox_stop(sb, kb_now_ms() + 1000, NULL), 0); /* idempotent */
        kb_sandbox_destroy(&sb);
        assert_null(sb);
}

static void test_stop_leaves_nothing(void **state) {
        fixture *f = *state;
        char *argv[] = {"/bin/sh", "-c", "sleep 60 & sleep 60", NULL};
        kb_sandbox *sb = NULL;
        kb_error *error = NULL;
        int r = kb_sandbox_launch(&f->policy, argv, f->log, kb_now_ms() + 10000, &sb, &error);
        if (r < 0)
                fail_msg("launch failed: %d %s", r, kb_error_text(error, r));
        pid_t kernel = kb_sandbox_kernel_pid(sb);
        pid_t bwrap = kb_sandbox_bwrap_pid(sb);
        json_object *child;
        assert_true(json_object_object_get_ex(kb_sandbox_info(sb), "child-pid", &child));
        pid_t init = json_object_get_int(child);
        assert_true(proc_exists(kernel) && proc_exists(bwrap) && proc_exists(init));
        int status = 0;
        assert_int_equal(kb_sandbox_try_reap(sb, &status), 0); /* still running */
        int64_t start = kb_now_ms();
        assert_int_equal(kb_sandbox_stop(sb, start + 5000, &status), 0);
        assert_true(kb_now_ms() - start < 5000 + 10000); /* its deadline bounds it; room for load */
        assert_false(proc_exists(bwrap));
        assert_false(proc_exists(kernel));
        assert_true(proc_gone_soon(init));
        assert_int_equal(kb_sandbox_try_reap(sb, &status), 1);
        kb_sandbox_destroy(&sb);
}

static void test_environ_isolated(void **state) {
        fixture *f = *state;
        char *argv[] = {"/bin/sh", "-c",
                        "cat /proc/1/environ > /workspace/env.tmp && mv /workspace/env.tmp "
                        "/workspace/env; env > /workspace/kenv; sleep 30",
                        NULL};
        kb_sandbox *sb = NULL;
        kb_error *error = NULL;
        int r = kb_sandbox_launch(&f->policy, argv, f->log, kb_now_ms() + 10000, &sb, &error);
        if (r < 0)
                fail_msg("launch failed: %d %s", r, kb_error_text(error, r));
        char path[256];
        snprintf(path, sizeof path, "%s/env", f->workspace);
        size_t len = 0;
        char *env = NULL;
        for (int i = 0; i < 250 && !env; i++) {
                env = slurp(path, &len);
                if (!env)
                        usleep(20 * 1000);
        }
        assert_non_null(env);
        assert_true(len > 0);
        for (size_t i = 0; i < len; i++) /* NUL-separated → searchable */
                if (env[i] == '\0')
                        env[i] = '\n';
        /* the file has the sandbox's environment in it... */
        assert_non_null(strstr(env, "HOME=/workspace"));
        /* ...and nothing of the launcher's */
        assert_null(strstr(env, SECRET_NAME));
        assert_null(strstr(env, SECRET_VALUE));
        free(env);
        /* from the host, bwrap's own environ is clean as well */
        snprintf(path, sizeof path, "/proc/%d/environ", (int) kb_sandbox_bwrap_pid(sb));
        env = slurp(path, &len);
        assert_non_null(env);
        assert_true(len > 0);
        assert_null(memmem(env, len, SECRET_VALUE, strlen(SECRET_VALUE)));
        free(env);
        kb_sandbox_destroy(&sb);
}

static void test_missing_bwrap(void **state) {
        fixture *f = *state;
        kb_sandbox_policy p = f->policy;
        p.bwrap = "/nonexistent/bwrap";
        char *argv[] = {"/bin/true", NULL};
        kb_sandbox *sb = NULL;
        kb_error *error = NULL;
        assert_int_equal(kb_sandbox_launch(&p, argv, f->log, kb_now_ms() + 2000, &sb, &error), -ENOENT);
        assert_null(sb);
        assert_non_null(error);
        assert_int_equal(error->err, ENOENT); /* the errno the launch returned */
        assert_string_equal(error->msg, "bwrap not found");
        kb_error_free(&error);
        /* not executable */
        char fake[256];
        snprintf(fake, sizeof fake, "%s/noexec-bwrap", f->base);
        write_file(fake, "#!/bin/sh\nexit 0\n", 0644);
        p.bwrap = fake;
        int r = kb_sandbox_launch(&p, argv, f->log, kb_now_ms() + 2000, &sb, &error);
        /* root may execute anything with an x bit; with none, execve says EACCES even to root */
        assert_int_equal(r, -EACCES);
        kb_error_free(&error);
}

static void test_bwrap_dies(void **state) {
        fixture *f = *state;
        char fake[256];
        snprintf(fake, sizeof fake, "%s/dying-bwrap", f->base);
        write_file(fake, "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n", 0755);
        kb_sandbox_policy p = f->policy;
        p.bwrap = fake;
        char *argv[] = {"/bin/true", NULL};
        kb_sandbox *sb = NULL;
        kb_error *error = NULL;
        int64_t start = kb_now_ms();
        assert_int_equal(kb_sandbox_launch(&p, argv, f->log, start + 120000, &sb, &error), -ECHILD);
        assert_true(kb_now_ms() - start < 60000); /* bwrap's exit is seen, not the deadline waited out */
        assert_null(sb);
        assert_non_null(error);
        assert_int_equal(error->err, ECHILD);
        assert_non_null(strstr(error->msg, "bwrap: setting up uid map: Permission denied"));
        assert_non_null(strstr(error->msg, "user namespaces"));
        kb_error_free(&error);
        /* the log kept bwrap's words, and it is private */
        struct stat st;
        assert_int_equal(stat(f->log, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
}

static void test_kernel_never_appears(void **state) {
        fixture *f = *state;
        char fake[256], marker[256], script[1024];
        snprintf(fake, sizeof fake, "%s/lying-bwrap", f->base);
        snprintf(marker, sizeof marker, "%s/init-pid", f->runtime); /* writable by the sandbox user */
        /* Reports a plausible sandbox whose "init" is a sleep that never forks a PID 2. */
        snprintf(script, sizeof script,
                 "#!/bin/sh\nsleep 60 &\necho $! > %s\n"
                 "printf '{\"child-pid\": %%d, \"pid-namespace\": 4026531836}' $! >&3\nexec 3>&-\nwait\n",
                 marker);
        write_file(fake, script, 0755);
        kb_sandbox_policy p = f->policy;
        p.bwrap = fake;
        char *argv[] = {"/bin/true", NULL};
        kb_sandbox *sb = NULL;
        kb_error *error = NULL;
        int64_t start = kb_now_ms();
        int r = kb_sandbox_launch(&p, argv, f->log, start + 1500, &sb, &error);
        int64_t elapsed = kb_now_ms() - start;
        assert_true(r == -ESRCH || r == -ETIMEDOUT);
        assert_true(elapsed >= 1400);
        /* The deadline, then a bounded teardown: the stop (2 s at most), the log's settle and its
         * keeper's drain (1 s each at most), and slack for a loaded machine (the CI runs this beside
         * the sanitizer suite; 6 s was once not enough). A hang would last the fake init's 60 s. */
        if (elapsed >= 1500 + 2000 + 1000 + 1000 + 4500)
                fail_msg("the launch returned %lld ms after it began, for a deadline of 1500 ms", (long long) elapsed);
        assert_null(sb);
        assert_non_null(error);
        kb_error_free(&error);
        char *init_text = slurp(marker, NULL);
        assert_non_null(init_text);
        pid_t init = (pid_t) strtol(init_text, NULL, 10);
        free(init_text);
        assert_true(init > 0);
        assert_true(proc_gone_soon(init));
}

/* The call a process is blocked in, read from the host: waitpid's wait4 (or waitid) for a parent
 * waiting on its child, read with its descriptor for a reader of a pipe. */
static void test_current_call(void **state) {
        (void) state;
        int block[2];
        assert_int_equal(pipe2(block, O_CLOEXEC), 0);
        pid_t waiter = fork();
        assert_true(waiter >= 0);
        if (waiter == 0) {
                close(block[1]); /* the reader sees the end when the test closes its own */
                pid_t reader = fork();
                if (reader == 0) {
                        char c;
                        (void) read(block[0], &c, 1);
                        _exit(0);
                }
                (void) waitpid(reader, NULL, 0);
                _exit(0);
        }
        long nr = -1;
        unsigned long long arg0 = 0;
        for (int i = 0; i < 5000 && nr != SYS_wait4 && nr != SYS_waitid; i++) {
                assert_int_equal(kb_sandbox_current_call("/proc", waiter, &nr, &arg0), 0);
                usleep(1000);
        }
        assert_true(nr == SYS_wait4 || nr == SYS_waitid);
        /* the reader: the waiter's child, blocked reading the pipe */
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int) waiter, (int) waiter);
        char *children = slurp(path, NULL);
        assert_non_null(children);
        pid_t reader = (pid_t) strtol(children, NULL, 10);
        free(children);
        assert_true(reader > 0);
        int fd = -1;
        for (int i = 0; i < 5000 && fd != block[0]; i++) {
                assert_int_equal(kb_sandbox_waits_on("/proc", reader, &fd), 0);
                usleep(1000);
        }
        assert_int_equal(fd, block[0]);
        assert_int_equal(kb_sandbox_current_call("/proc", -1, &nr, &arg0) < 0, true);
        close(block[1]);
        close(block[0]);
        assert_int_equal(waitpid(waiter, NULL, 0), waiter);
}

/* The twin trial on a real bwrap: its bwrap is killed only once its init waits for its children
 * (where bwrap has armed --die-with-parent), and init and PID 2 then go by themselves. */
static void test_lifetime(void **state) {
        fixture *f = *state;
        json_object *ev = NULL;
        assert_int_equal(kb_sandbox_prove_lifetime(&f->policy, f->log, &ev), 0);
        assert_non_null(ev);
        json_object *v = NULL;
        if (json_object_object_get_ex(ev, "error", &v))
                fail_msg("the trial was not made: %s", json_object_get_string(v));
        assert_true(json_object_object_get_ex(ev, "init_armed_ms", &v) && json_object_get_int64(v) >= 0);
        assert_true(json_object_object_get_ex(ev, "init_gone_ms", &v) && json_object_is_type(v, json_type_int));
        assert_true(json_object_object_get_ex(ev, "pid2_gone_ms", &v) && json_object_is_type(v, json_type_int));
        assert_true(json_object_object_get_ex(ev, "survived", &v) && !json_object_get_boolean(v));
        assert_false(json_object_object_get_ex(ev, "survivors", &v));
        json_object_put(ev);
}

/* What the before_exec hook saw. */
/* The host looks before anything of the kernel runs: bwrap's init is blocked reading kbound's
 * --block-fd pipe, has no child, and the kernel's program has not run; what it holds then is
 * exactly what kbound handed it and bwrap's own (the judge's pre-exec rules pass on real facts). */
static void test_before_exec(void **state) {
        fixture *f = *state;
        pre_exec_seen seen = {.reads_fd = -1};
        snprintf(seen.marker_path, sizeof seen.marker_path, "%s/started", f->runtime);
        char *argv[] = {"/bin/sh", "-c", "echo > /run/kbound/started; sleep 30", NULL};
        kb_sandbox_policy p = f->policy;
        p.before_exec = seen_before_exec;
        p.before_exec_userdata = &seen;
        kb_sandbox *sb = NULL;
        kb_error *error = NULL;
        int r = kb_sandbox_launch(&p, argv, f->log, kb_now_ms() + 10000, &sb, &error);
        if (r < 0)
                fail_msg("launch failed: %d %s", r, kb_error_text(error, r));
        assert_int_equal(seen.calls, 1);
        assert_int_equal(seen.reads_fd, KB_SANDBOX_BLOCK_FD);
        assert_false(seen.child);
        assert_false(seen.marker);
        /* released: the kernel runs */
        char *started = wait_file(seen.marker_path, 5000, NULL);
        assert_non_null(started);
        free(started);
        /* the facts kbound keeps of its launch agree with what the host saw before exec */
        json_object *init = NULL, *procs = NULL;
        assert_true(json_object_object_get_ex(seen.look, "init", &init));
        assert_true(json_object_object_get_ex(seen.look, "processes", &procs));
        assert_int_equal(json_object_array_length(procs), 1);
        json_object *expect = json_object_new_object(), *launch = NULL;
        assert_int_equal(json_object_deep_copy(kb_sandbox_launch_facts(sb), &launch, NULL), 0);
        json_object_object_add(expect, "launch", launch);
        kb_judge_input in = {.expect = expect, .pre_exec = seen.look};
        json_object *c = kb_judge_descriptors(&in), *ev = NULL, *problems = NULL;
        assert_true(json_object_object_get_ex(c, "evidence", &ev));
        assert_true(json_object_object_get_ex(ev, "problems", &problems));
        /* no look was taken after exec here, so the check fails for that, and for nothing else */
        for (size_t i = 0; i < json_object_array_length(problems); i++) {
                const char *text = json_object_get_string(json_object_array_get_idx(problems, i));
                if (strstr(text, "before the kernel") || strstr(text, "block") || strstr(text, "wait"))
                        fail_msg("pre-exec: %s", text);
        }
        json_object *n = NULL;
        assert_true(json_object_object_get_ex(ev, "descriptors_before_exec", &n));
        assert_true(json_object_get_int64(n) >= 6); /* stdio, seccomp channel, block channel, bwrap's own two */
        json_object_put(c);
        json_object_put(expect);
        json_object_put(seen.look);
        kb_sandbox_destroy(&sb);
}

/* kbound dies (SIGKILL) while bwrap's init waits for the host's look: init has no parent-death
 * signal yet, so it must not go on to start the kernel. */
static int death_report_fd = -1;

static void die_before_exec(void *userdata, const kb_sandbox *sb) {
        (void) userdata;
        pid_t init = kb_sandbox_init_pid(sb);
        ssize_t w = write(death_report_fd, &init, sizeof init);
        (void) w;
        raise(SIGKILL);
}

static void test_death_before_exec(void **state) {
        fixture *f = *state;
        char marker[256];
        snprintf(marker, sizeof marker, "%s/started", f->runtime);
        int report[2];
        assert_int_equal(pipe2(report, O_CLOEXEC), 0);
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                close(report[0]);
                death_report_fd = report[1];
                char *argv[] = {"/bin/sh", "-c", "echo > /run/kbound/started; sleep 30", NULL};
                kb_sandbox_policy p = f->policy;
                p.before_exec = die_before_exec;
                kb_sandbox *sb = NULL;
                (void) kb_sandbox_launch(&p, argv, f->log, kb_now_ms() + 10000, &sb, NULL);
                _exit(3); /* not reached: the hook kills this process */
        }
        close(report[1]);
        pid_t init = -1;
        assert_int_equal(read(report[0], &init, sizeof init), (ssize_t) sizeof init);
        close(report[0]);
        int status;
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        assert_true(init > 0);
        assert_true(proc_gone_soon(init));
        usleep(300 * 1000);
        assert_int_equal(access(marker, F_OK), -1); /* the kernel's program never ran */
}

/* A set-uid bwrap builds the sandbox as root: refused before it runs, and said so. */
static void test_setuid_bwrap_refused(void **state) {
        fixture *f = *state;
        char copy[256];
        snprintf(copy, sizeof copy, "%s/setuid-bwrap", f->base);
        write_file(copy, "#!/bin/sh\nexit 0\n", 0755);
        assert_int_equal(chmod(copy, 04755), 0);
        assert_int_equal(kb_sandbox_bwrap_setuid(copy), 1);
        assert_int_equal(kb_sandbox_bwrap_setuid(f->bwrap), 0);
        kb_sandbox_policy p = f->policy;
        p.bwrap = copy;
        char *argv[] = {"/bin/true", NULL};
        kb_sandbox *sb = NULL;
        kb_error *error = NULL;
        assert_int_equal(kb_sandbox_launch(&p, argv, f->log, kb_now_ms() + 2000, &sb, &error), -ENOTSUP);
        assert_null(sb);
        assert_non_null(error);
        assert_non_null(strstr(error->msg, "set-uid"));
        kb_error_free(&error);
}

/* A bwrap whose report kbound cannot read leaves a child blocked on the --block-fd pipe, which
 * neither dies with bwrap nor stays blocked once kbound closes the pipe: kbound kills it. */
static void test_failed_launch_kills_blocked_child(void **state) {
        fixture *f = *state;
        char fake[256], marker[256], script[1024];
        snprintf(fake, sizeof fake, "%s/garbling-bwrap", f->base);
        snprintf(marker, sizeof marker, "%s/child-pid", f->runtime);
        snprintf(script, sizeof script,
                 "#!/bin/sh\n(read x <&%d; exec sleep 60) &\necho $! > %s\nprintf 'not json' >&3\nexec 3>&-\nwait\n",
                 KB_SANDBOX_BLOCK_FD, marker);
        write_file(fake, script, 0755);
        kb_sandbox_policy p = f->policy;
        p.bwrap = fake;
        char *argv[] = {"/bin/true", NULL};
        kb_sandbox *sb = NULL;
        kb_error *error = NULL;
        assert_int_equal(kb_sandbox_launch(&p, argv, f->log, kb_now_ms() + 5000, &sb, &error), -EPROTO);
        assert_null(sb);
        assert_int_equal(error->err, EPROTO);
        kb_error_free(&error);
        char *text = wait_file(marker, 1000, NULL);
        assert_non_null(text);
        pid_t child = (pid_t) strtol(text, NULL, 10);
        free(text);
        assert_true(child > 0);
        assert_true(proc_gone_soon(child));
}

/* The kernel never runs as the host's root: a root caller must name an unprivileged user, and
 * every process of the sandbox then runs as it, as the host sees it. */
static void test_never_root(void **state) {
        fixture *f = *state;
        kb_sandbox_user u;
        /* root (uid 0) is never a sandbox user, whoever asks */
        assert_int_equal(kb_sandbox_user_resolve("root", &u), -EPERM);
        assert_int_equal(kb_sandbox_user_resolve("kbound-no-such-user", &u), -ENOENT);
        char *argv[] = {"/bin/sh", "-c", "sleep 30", NULL};
        kb_sandbox *sb = NULL;
        kb_error *error = NULL;
        if (geteuid() == 0) {
                kb_sandbox_policy p = f->policy;
                p.user = NULL;
                assert_int_equal(kb_sandbox_launch(&p, argv, f->log, kb_now_ms() + 5000, &sb, &error), -EINVAL);
                assert_null(sb);
                assert_non_null(error);
                assert_non_null(strstr(error->msg, "root"));
                kb_error_free(&error);
                assert_true(f->user.switch_user);
                assert_true(f->user.uid != 0 && f->user.gid != 0);
        } else {
                /* an ordinary user cannot run a sandbox as anyone else */
                assert_int_equal(kb_sandbox_user_resolve("nobody", &u), getuid() == 65534 ? 0 : -EPERM);
                assert_false(f->user.switch_user);
                assert_int_equal(f->user.uid, getuid());
        }
        int r = kb_sandbox_launch(&f->policy, argv, f->log, kb_now_ms() + 10000, &sb, &error);
        if (r < 0)
                fail_msg("launch failed: %d %s", r, kb_error_text(error, r));
        kb_inspect_target t = look_target(sb, kb_sandbox_kernel_pid(sb));
        json_object *snap = NULL;
        assert_int_equal(kb_inspect_snapshot(&t, "ready", &snap), 0);
        json_object *procs = NULL;
        assert_true(json_object_object_get_ex(snap, "processes", &procs));
        assert_true(json_object_array_length(procs) >= 2); /* bwrap's init and the kernel */
        for (size_t i = 0; i < json_object_array_length(procs); i++) {
                json_object *uid = NULL;
                assert_true(json_object_object_get_ex(json_object_array_get_idx(procs, i), "uid", &uid));
                for (size_t j = 0; j < 4; j++)
                        assert_int_equal(json_object_get_int64(json_object_array_get_idx(uid, j)),
                                         (int64_t) f->user.uid);
        }
        json_object *snaps = json_object_new_array();
        json_object_array_add(snaps, snap);
        json_object *c = kb_judge_privileges(snaps);
        json_object *status = NULL, *detail = NULL;
        json_object_object_get_ex(c, "status", &status);
        json_object_object_get_ex(c, "detail", &detail);
        if (strcmp(json_object_get_string(status), "pass") != 0)
                fail_msg("sandbox.privileges: %s", json_object_get_string(detail));
        json_object_put(c);

        /* /proc's host-global entries are read-only in the host's view of the kernel's mounts */
        json_object *host = NULL, *entries = NULL, *mounts = NULL;
        assert_int_equal(kb_inspect_host("/proc", &host), 0);
        assert_true(json_object_object_get_ex(host, "proc_entries", &entries));
        assert_true(json_object_array_length(entries) > 0); /* every Linux has /proc/sys */
        assert_true(json_object_object_get_ex(snap, "mounts", &mounts));
        /* every writable mount is the sandbox's own or one of the team's two binds */
        json_object *binds = json_object_new_array(), *host_mounts = NULL;
        const char *dirs[] = {f->workspace, f->runtime};
        for (size_t i = 0; i < 2; i++) {
                struct stat st;
                char dev[32];
                assert_int_equal(stat(dirs[i], &st), 0);
                snprintf(dev, sizeof dev, "%u:%u", major(st.st_dev), minor(st.st_dev));
                json_object *b = json_object_new_object();
                json_object_object_add(b, "dev", json_object_new_string(dev));
                json_object_object_add(b, "ino", json_object_new_int64((int64_t) st.st_ino));
                json_object_array_add(binds, b);
        }
        assert_true(json_object_object_get_ex(host, "mounts", &host_mounts));
        json_object *problems = json_object_new_array(), *outside = NULL;
        assert_true(json_object_object_get_ex(snap, "outside_mounts", &outside));
        kb_judge_mount_facts facts = {
                .host_mounts = host_mounts, .proc_entries = entries, .team_binds = binds, .outside = outside};
        int n_problems = kb_judge_mount_problems(mounts, &facts, problems);
        if (n_problems != 0)
                fail_msg("mount problems: %s", json_object_to_json_string(problems));
        /* and without the team binds, the host's own folders bound read-write are found */
        facts.team_binds = NULL;
        assert_int_equal(kb_judge_mount_problems(mounts, &facts, problems), 2);
        json_object_put(problems);
        json_object_put(binds);
        json_object_put(host);
        json_object_put(snaps);
        kb_sandbox_destroy(&sb);
}

/* Runs "cat /proc/keys" as kb_sandbox_spawn would start bwrap, with or without a fresh keyring. */
static char *keys_seen(const kb_sandbox_user *user, bool fresh) {
        int out[2];
        assert_int_equal(pipe2(out, O_CLOEXEC), 0);
        char *argv[] = {"/bin/cat", "/proc/keys", NULL};
        kb_spawn_options so = {
                .stdin_fd = -1, .stdout_fd = out[1], .stderr_fd = out[1], .user = user, .new_session_keyring = fresh};
        pid_t pid;
        assert_int_equal(kb_sandbox_spawn(argv[0], argv, NULL, &so, &pid), 0);
        close(out[1]);
        char *buf = calloc(1, 1 << 16);
        size_t used = 0;
        ssize_t n;
        while ((n = read(out[0], buf + used, (1 << 16) - 1 - used)) > 0)
                used += (size_t) n;
        close(out[0]);
        assert_int_equal(kb_sandbox_wait_child(pid, kb_now_ms() + 5000, NULL), 0);
        return buf;
}

/* No key of kbound's is possessed by what it starts: the canary key (possessor-only) is listed
 * for a child that keeps kbound's session keyring, and for none that gets a fresh one. */
static void test_fresh_keyring(void **state) {
        fixture *f = *state;
        char name[64];
        snprintf(name, sizeof name, "kbound-unit-canary-%d", (int) getpid());
        int r = kb_canary_keyring_plant(name, "kbound-unit-canary-value", NULL);
        if (r == -ENOSYS || r == -EPERM) {
                print_message("NOT running test_fresh_keyring: keys are unavailable to this process (%s)\n",
                              strerror(-r));
                return;
        }
        assert_int_equal(r, 0);
        /* the same user keeping kbound's keyring possesses the key (so the probe is not blind) */
        kb_sandbox_user self = {.switch_user = false, .uid = getuid(), .gid = getgid()};
        char *inherited = keys_seen(&self, false);
        if (!strstr(inherited, name))
                fail_msg("a child keeping the session keyring does not list the canary: %s", inherited);
        free(inherited);
        /* a fresh keyring: nothing, as this user and (as root) as the sandbox user */
        char *fresh = keys_seen(&self, true);
        if (strstr(fresh, name))
                fail_msg("a child with a fresh session keyring lists the canary: %s", fresh);
        free(fresh);
        fresh = keys_seen(&f->user, true);
        if (strstr(fresh, name))
                fail_msg("the sandbox user lists the canary: %s", fresh);
        free(fresh);
}

static void test_bwrap_version(void **state) {
        fixture *f = *state;
        char *version = NULL;
        assert_int_equal(kb_sandbox_bwrap_version(f->bwrap, &version), 0);
        assert_non_null(version);
        assert_true(version[0] >= '0' && version[0] <= '9');
        assert_non_null(strchr(version, '.'));
        free(version);
        assert_int_equal(kb_sandbox_bwrap_version("/nonexistent/bwrap", &version), -ENOENT);
        char fake[256];
        snprintf(fake, sizeof fake, "%s/failing-bwrap", f->base);
        write_file(fake, "#!/bin/sh\nexit 3\n", 0755);
        assert_int_equal(kb_sandbox_bwrap_version(fake, &version), -EIO);
}

/* the preflight item of that name (the list grows; tests name items, never count them) */
static kb_preflight_item *item(kb_preflight_item **items, const char *name) {
        for (size_t i = 0; items[i]; i++)
                if (strcmp(items[i]->name, name) == 0)
                        return items[i];
        fail_msg("no preflight item %s", name);
        return NULL;
}

static void test_preflight(void **state) {
        fixture *f = *state;
        kb_preflight_item **items = NULL;
        /* the run's own sandbox user (scripts/test makes one; kbound-sandbox may not exist here) */
        assert_int_equal(kb_sandbox_preflight(f->bwrap, "/tmp/kbound-XXXXXX", f->user.name, NULL, NULL, &items), 0);
        const char *names[] = {"sandbox-user", "bwrap",    "seccomp", "limits",
                               "sandbox",      "apparmor", "pidfd",   "ipc-path"};
        size_t n = 0;
        for (; items[n]; n++) {
                assert_string_equal(items[n]->name, names[n]);
                assert_non_null(items[n]->detail);
                /* this machine runs the real launch tests above, so every item must be ok here */
                if (!items[n]->ok)
                        fail_msg("preflight item %s not ok: %s", items[n]->name, items[n]->detail);
        }
        assert_int_equal(n, KB_ELEMENTSOF(names));
        kb_preflight_free(items);

        /* a missing bwrap and a runtime base too long for sun_path fail their items */
        char longbase[128];
        memset(longbase, 'a', sizeof longbase - 1);
        longbase[0] = '/';
        longbase[sizeof longbase - 1] = '\0';
        assert_int_equal(kb_sandbox_preflight("/nonexistent/bwrap", longbase, NULL, NULL, NULL, &items), 0);
        assert_false(item(items, "bwrap")->ok);
        assert_true(item(items, "bwrap")->required);
        assert_false(item(items, "sandbox")->ok);
        assert_false(item(items, "ipc-path")->ok);
        assert_non_null(strstr(item(items, "ipc-path")->detail, "107"));
        kb_preflight_free(items);

        /* a sandbox user that is root, or that does not exist, fails its item (and the sandbox is
         * then not even tried) */
        assert_int_equal(kb_sandbox_preflight(f->bwrap, "/tmp/kbound-XXXXXX", "root", NULL, NULL, &items), 0);
        assert_false(item(items, "sandbox-user")->ok);
        assert_true(item(items, "sandbox-user")->required);
        assert_false(item(items, "sandbox")->ok);
        kb_preflight_free(items);
        assert_int_equal(
                kb_sandbox_preflight(f->bwrap, "/tmp/kbound-XXXXXX", "kbound-no-such-user", NULL, NULL, &items), 0);
        assert_false(item(items, "sandbox-user")->ok);
        assert_non_null(strstr(item(items, "sandbox-user")->detail, "kbound-no-such-user"));
        kb_preflight_free(items);

        /* A bwrap whose --help lacks an option kbound needs is refused by name, and the sandbox is
         * not tried; one that lists it but refuses it when run fails the trial sandbox, naming
         * what bwrap said: doctor meets what check would. */
        char hiding[256], refusing[256];
        snprintf(hiding, sizeof hiding, "%s/hiding-bwrap", f->base);
        snprintf(refusing, sizeof refusing, "%s/refusing-bwrap", f->base);
        char script[3 * PATH_MAX];
        snprintf(script, sizeof script,
                 "#!/bin/sh\nif [ \"$1\" = --help ]; then %s --help | grep -v -- '--block-fd'; exit 0; fi\n"
                 "exec %s \"$@\"\n",
                 f->bwrap, f->bwrap);
        write_file(hiding, script, 0755);
        snprintf(script, sizeof script,
                 "#!/bin/sh\nfor a; do [ \"$a\" = --block-fd ] && { echo 'bwrap: Unknown option --block-fd' >&2; "
                 "exit 1; }; done\nexec %s \"$@\"\n",
                 f->bwrap);
        write_file(refusing, script, 0755);
        /* as the fixture's sandbox user, the one its folder lets through (scripts/test's own) */
        assert_int_equal(kb_sandbox_preflight(hiding, "/tmp/kbound-XXXXXX", f->user.name, NULL, NULL, &items), 0);
        assert_false(item(items, "bwrap")->ok);
        assert_non_null(strstr(item(items, "bwrap")->detail, "lacks --block-fd"));
        assert_false(item(items, "sandbox")->ok);
        kb_preflight_free(items);
        assert_int_equal(kb_sandbox_preflight(refusing, "/tmp/kbound-XXXXXX", f->user.name, NULL, NULL, &items), 0);
        assert_true(item(items, "bwrap")->ok);
        assert_false(item(items, "sandbox")->ok);
        const char *detail = item(items, "sandbox")->detail;
        if (!strstr(detail, "Unknown option --block-fd"))
                print_error("the refused trial's detail does not quote bwrap: %s\n", detail);
        assert_non_null(strstr(detail, "Unknown option --block-fd"));
        kb_preflight_free(items);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_launch_pid2_signal_stop, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stop_leaves_nothing, setup, teardown),
                cmocka_unit_test_setup_teardown(test_environ_isolated, setup, teardown),
                cmocka_unit_test_setup_teardown(test_missing_bwrap, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bwrap_dies, setup, teardown),
                cmocka_unit_test_setup_teardown(test_kernel_never_appears, setup, teardown),
                cmocka_unit_test_setup_teardown(test_never_root, setup, teardown),
                cmocka_unit_test_setup_teardown(test_before_exec, setup, teardown),
                cmocka_unit_test_setup_teardown(test_setuid_bwrap_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_death_before_exec, setup, teardown),
                cmocka_unit_test_setup_teardown(test_failed_launch_kills_blocked_child, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fresh_keyring, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bwrap_version, setup, teardown),
                cmocka_unit_test_setup_teardown(test_preflight, setup, teardown),
                cmocka_unit_test(test_current_call),
                cmocka_unit_test_setup_teardown(test_lifetime, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
