/* sandbox_lifetime.c: the sandbox cannot outlive kbound, shown by effect on a twin of it. */
#include "sandbox/sandbox-internal.h"
#include "base/cleanup.h"
#include "base/strv.h"
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* How long the twin's init and PID 2 may take to go once their bwrap is killed. */
#define LIFETIME_BOUND_MS 2000
#define TWIN_START_MS 10000

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
        int r = kb_sandbox_launch(policy, policy->syscall_probe ? with_probe : without, log_path,
                                  kb_now_ms() + TWIN_START_MS, &twin, &error);
        if (r < 0) {
                json_object_object_add(o, "error", json_object_new_string(kb_error_text(error, r)));
                *ret = TAKE_PTR(o);
                return 0;
        }
        /* What --die-with-parent is for: kbound, the parent, gone. Its child, bwrap's outer process,
         * is killed; bwrap's init and the program must then die by themselves. */
        int64_t killed = kb_now_ms();
        int kr = kill(kb_sandbox_bwrap_pid(twin), SIGKILL);
        int64_t init_ms = kr == 0 ? gone_within(kb_sandbox_init_pidfd(twin), killed, LIFETIME_BOUND_MS) : -1;
        int64_t pid2_ms = kr == 0 ? gone_within(kb_sandbox_pidfd(twin), killed, LIFETIME_BOUND_MS) : -1;
        bool survived = init_ms < 0 || pid2_ms < 0;
        json_object_object_add(o, "bound_ms", json_object_new_int(LIFETIME_BOUND_MS));
        json_object_object_add(o, "init_gone_ms", init_ms >= 0 ? json_object_new_int64(init_ms) : NULL);
        json_object_object_add(o, "pid2_gone_ms", pid2_ms >= 0 ? json_object_new_int64(pid2_ms) : NULL);
        json_object_object_add(o, "survived", json_object_new_boolean(survived));
        if (kr < 0)
                json_object_object_add(o, "error", json_object_new_string(strerror(errno)));
        /* A twin that outlived its bwrap is stopped here, through its pidfds, and said so. */
        json_object_object_add(o, "stopped_by_kbound", json_object_new_boolean(survived));
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
