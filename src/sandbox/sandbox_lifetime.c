/* sandbox_lifetime.c: the sandbox cannot outlive kbound, shown by effect on a twin of it. */
#include "sandbox/sandbox-internal.h"
#include "base/cleanup.h"
#include "base/facts.h"
#include "base/strv.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

/* How long the twin's init and PID 2 may take to go once their bwrap is killed. */
#define LIFETIME_BOUND_MS 2000
#define TWIN_START_MS 10000

/* "<what> <pid>: State ..., PPid ..., ShdPnd ..." of a process still there, appended to out. */
static void describe_survivor(const char *what, pid_t pid, char *out, size_t size) {
        char path[64], *text = NULL, line[160] = "";
        snprintf(path, sizeof path, "/proc/%d/status", (int) pid);
        if (kb_read_file(AT_FDCWD, path, 0, 64 * 1024, &text, NULL) >= 0) {
                static const char *const keys[] = {"State:", "PPid:", "ShdPnd:"};
                for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
                        const char *at = strstr(text, keys[k]);
                        size_t len = at ? strcspn(at, "\n") : 0;
                        size_t used = strlen(line);
                        if (at && used + len + 3 < sizeof line)
                                snprintf(line + used, sizeof line - used, "%s%.*s", used ? ", " : "", (int) len, at);
                }
                free(text);
        } else
                snprintf(line, sizeof line, "its status unreadable");
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%s %d: %s", used ? "; " : "", what, (int) pid, line);
}

/* Waits (polling, until deadline_ms) until the twin's init is blocked waiting for its children:
 * bwrap's init arms --die-with-parent (PR_SET_PDEATHSIG) only after it forked PID 2, just before
 * that wait (do_init in every bwrap read, 0.4.1 to 0.12.0), so a bwrap killed between PID 2's
 * start and then leaves an init that never learns of it. The twin is tried as the sandbox it
 * stands for is judged: set up. Init and PID 2 are confirmed alive after each reading (a pid
 * reused by another process cannot answer for init). Returns 0 with *ret_ms (since since),
 * -ESRCH when init or PID 2 ended first, -ETIMEDOUT, -errno when its call cannot be read. */
static int wait_init_armed(const kb_sandbox *twin, int64_t since, int64_t deadline_ms, int64_t *ret_ms) {
        for (int tries = 0;; tries++) {
                long nr = -1;
                unsigned long long arg0;
                int r = kb_sandbox_current_call("/proc", kb_sandbox_init_pid(twin), &nr, &arg0);
                if (r == -ESRCH || !kb_sandbox_pidfd_alive(kb_sandbox_init_pidfd(twin)) ||
                    !kb_sandbox_pidfd_alive(kb_sandbox_pidfd(twin)))
                        return -ESRCH;
                if (r < 0)
                        return r;
                if (nr == SYS_wait4 || nr == SYS_waitid) {
                        *ret_ms = kb_now_ms() - since;
                        return 0;
                }
                if (kb_now_ms() >= deadline_ms)
                        return -ETIMEDOUT;
                (void) poll(NULL, 0, tries < 200 ? 1 : 10);
        }
}

/* Milliseconds until pidfd is readable (its process exited), or -1 past bound_ms. */
static int64_t gone_within(int pidfd, int64_t since, int64_t bound_ms) {
        for (;;) {
                if (!kb_sandbox_pidfd_alive(pidfd))
                        return kb_now_ms() - since;
                int64_t left = since + bound_ms - kb_now_ms();
                if (left <= 0)
                        return -1;
                struct pollfd p = {.fd = pidfd, .events = POLLIN};
                (void) poll(&p, 1, (int) left);
        }
}

int kb_sandbox_prove_lifetime(const kb_sandbox_policy *policy, const char *log_path, json_object **ret) {
        /* The twin runs what exists in any image: kbound's own probe program waiting, else sleep. */
        char *with_probe[] = {KB_SANDBOX_PROBE_PROGRAM, "--pause", NULL};
        char *without[] = {"sleep", "3600", NULL};
        kb_sandbox *twin = NULL;
        _cleanup_error_ kb_error *error = NULL;
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        int64_t deadline = kb_now_ms() + TWIN_START_MS;
        int r = kb_sandbox_launch(policy, policy->syscall_probe ? with_probe : without, log_path, deadline, &twin,
                                  &error);
        if (r < 0) {
                if (kb_fact_set_str(o, FACT_LIFETIME_ERROR, kb_error_text(error, r)) < 0)
                        return -ENOMEM;
                *ret = TAKE_PTR(o);
                return 0;
        }
        int64_t armed_ms = -1;
        r = wait_init_armed(twin, kb_now_ms(), deadline, &armed_ms);
        if (r < 0) {
                char why[256];
                if (r == -ETIMEDOUT)
                        snprintf(why, sizeof why,
                                 "the twin's init was not waiting for its children %d ms after the launch began "
                                 "(bwrap's init arms --die-with-parent just before that wait)",
                                 TWIN_START_MS);
                else if (r == -ESRCH)
                        snprintf(why, sizeof why, "the twin's init or PID 2 ended before its bwrap was killed");
                else
                        snprintf(why, sizeof why, "the host could not read which call the twin's init is in: %s",
                                 strerror(-r));
                kb_sandbox_destroy(&twin);
                if (kb_fact_set_str(o, FACT_LIFETIME_ERROR, why) < 0)
                        return -ENOMEM;
                *ret = TAKE_PTR(o);
                return 0;
        }
        /* What --die-with-parent is for: kbound, the parent, gone. Its child, bwrap's outer process,
         * is killed; bwrap's init and the program must then die by themselves. */
        int64_t killed = kb_now_ms();
        int kr = kill(kb_sandbox_bwrap_pid(twin), SIGKILL);
        int kill_errno = errno;
        int64_t init_ms = kr == 0 ? gone_within(kb_sandbox_init_pidfd(twin), killed, LIFETIME_BOUND_MS) : -1;
        int64_t pid2_ms = kr == 0 ? gone_within(kb_sandbox_pidfd(twin), killed, LIFETIME_BOUND_MS) : -1;
        bool survived = init_ms < 0 || pid2_ms < 0;
        /* Before kbound stops them: what they were (a death signal sent and not acted on yet, or
         * never sent) */
        char survivors[512] = "";
        if (kr == 0 && init_ms < 0)
                describe_survivor("init", kb_sandbox_init_pid(twin), survivors, sizeof survivors);
        if (kr == 0 && pid2_ms < 0)
                describe_survivor("PID 2", kb_sandbox_kernel_pid(twin), survivors, sizeof survivors);
        /* Written whole or not at all: a lifetime record without its facts would read as unknown. */
        if (kb_fact_set_int(o, FACT_LIFETIME_BOUND_MS, LIFETIME_BOUND_MS) < 0 ||
            kb_fact_set_int(o, FACT_LIFETIME_INIT_ARMED_MS, armed_ms) < 0 ||
            (init_ms >= 0 ? kb_fact_set_int(o, FACT_LIFETIME_INIT_GONE_MS, init_ms)
                          : kb_fact_set_null(o, FACT_LIFETIME_INIT_GONE_MS)) < 0 ||
            (pid2_ms >= 0 ? kb_fact_set_int(o, FACT_LIFETIME_PID2_GONE_MS, pid2_ms)
                          : kb_fact_set_null(o, FACT_LIFETIME_PID2_GONE_MS)) < 0 ||
            kb_fact_set_bool(o, FACT_LIFETIME_SURVIVED, survived) < 0 ||
            (kr < 0 && kb_fact_set_str(o, FACT_LIFETIME_ERROR, strerror(kill_errno)) < 0) ||
            (survivors[0] && kb_fact_set_str(o, FACT_LIFETIME_SURVIVORS, survivors) < 0) ||
            /* A twin that outlived its bwrap is stopped here, through its pidfds, and said so. */
            kb_fact_set_bool(o, FACT_LIFETIME_STOPPED_BY_KBOUND, survived) < 0) {
                kb_sandbox_destroy(&twin);
                return -ENOMEM;
        }
        kb_sandbox_destroy(&twin);
        *ret = TAKE_PTR(o);
        return 0;
}

int kb_sandbox_lifetime(const kb_sandbox *sb, const char *log_path, json_object **ret_evidence) {
        const kb_sandbox_policy *policy = kb_sandbox_launched_policy(sb);
        if (!policy || !log_path || !ret_evidence)
                return -EINVAL;
        return kb_sandbox_prove_lifetime(policy, log_path, ret_evidence);
}
