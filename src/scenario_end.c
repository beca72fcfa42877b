/* scenario_end.c: the end of one kernel's run: the variable read back over the same connections,
 * shutdown through control, and the twin sandbox that shows the sandbox cannot outlive kbound. */
#include "rules.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kbound/kernel.h"
#include "scenario-internal.h"
#include "jsonget.h"
#include "procfs.h"

#define SHUTDOWN_REPLY_MS 2000
#define SHUTDOWN_EXIT_MS KB_SHUTDOWN_EXIT_MS

void scenario_check_persistence(ctx *x) {
        const char *id = kb_check_id(KB_CHECK_PERSISTENCE);
        int64_t t0 = kb_now_ms();
        char why[512];
        json_object *result = NULL;
        if (x->h.wedged) {
                scenario_add_check(x, id, "fail", t0, NULL,
                                   "not tested: a long cell could not be stopped, so the kernel cannot answer");
                return;
        }
        int r = scenario_run_cell(x, "get_var", NULL, CELL_TIMEOUT_MS, &result, why, sizeof(why));
        if (r < 0) {
                scenario_add_check(x, id, "fail", t0, NULL, "%s", why);
                return;
        }
        const char *value = kb_json_str(result, "value");
        int64_t pid = -1;
        kb_json_int(result, "pid", &pid);
        int v = kb_sandbox_verify(kb_kernel_sandbox(x->h.kernel));
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "pid", json_object_new_int64(pid));
        json_object_object_add(ev, "nonce_intact", json_object_new_boolean(value && strcmp(value, x->nonce) == 0));
        json_object_object_add(ev, "pidfd_same_process", json_object_new_boolean(v == 0));
        if (!value || strcmp(value, x->nonce) != 0)
                scenario_add_check(x, id, "fail", t0, ev, "the variable set before the interrupts %s",
                                   value ? "changed" : "is gone");
        else if (pid != 2)
                scenario_add_check(x, id, "fail", t0, ev, "the answering kernel is pid %lld, not 2", (long long) pid);
        else if (v != 0)
                scenario_add_check(x, id, "fail", t0, ev, "the pinned pidfd no longer refers to the same live PID 2");
        else
                scenario_add_check(
                        x, id, "pass", t0, ev,
                        "after both interrupts the pinned PID 2 is the same live process and the nonce set before "
                        "reads back over kbound's connections to it (the kernel says pid 2)");
        json_object_put(result);
}

/* lifecycle.shutdown: shutdown_request on control is answered, and the kernel process (the pinned
 * PID 2, seen through its pidfd) is gone within SHUTDOWN_EXIT_MS of the reply. */
/* What the host sees of a kernel that did not exit after its shutdown_reply: its child processes,
 * each with its name and state ("Z": a zombie it never reaped), from /proc/<pid>/task/<tid>/children
 * and /proc/<child>/stat. ipykernel waits for its children (SIGTERM, then SIGKILL, about 14 s each)
 * before it exits, so a child that does not go holds it. Adds "children" to ev and says them in
 * words (at most size bytes), or "none" when the kernel has none the host can read. */
static void still_running_children(pid_t kernel, json_object *ev, char *words, size_t size) {
        json_object *children = json_object_new_array();
        snprintf(words, size, "none");
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task", (int) kernel);
        DIR *tasks = opendir(path);
        size_t said = 0;
        for (struct dirent *t; tasks && children && (t = readdir(tasks));) {
                if (t->d_name[0] == '.')
                        continue;
                char rel[320];
                snprintf(rel, sizeof rel, "/proc/%d/task/%s/children", (int) kernel, t->d_name);
                _cleanup_free_ char *list = NULL;
                if (kb_read_file(AT_FDCWD, rel, O_RDONLY, 4096, &list, NULL) < 0)
                        continue;
                char *save = NULL;
                for (char *tok = strtok_r(list, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
                        snprintf(rel, sizeof rel, "/proc/%s/stat", tok);
                        _cleanup_free_ char *text = NULL;
                        kb_procfs_stat st = {0};
                        if (kb_read_file(AT_FDCWD, rel, O_RDONLY, 4096, &text, NULL) < 0 ||
                            kb_procfs_stat_parse(text, &st) < 0)
                                continue;
                        json_object *c = json_object_new_object();
                        json_object_object_add(c, "pid", json_object_new_int64(st.pid));
                        json_object_object_add(c, "comm", json_object_new_string(st.comm));
                        json_object_object_add(c, "state", json_object_new_string_len(&st.state, 1));
                        json_object_array_add(children, c);
                        size_t used = said ? strlen(words) : 0;
                        if (used < size)
                                snprintf(words + used, size - used, "%shost pid %d %s (%c)", said ? ", " : "",
                                         (int) st.pid, st.comm, st.state);
                        said++;
                }
        }
        if (tasks)
                closedir(tasks);
        json_object_object_add(ev, "children", children);
}

void scenario_check_shutdown(ctx *x) {
        const char *id = kb_check_id(KB_CHECK_SHUTDOWN);
        int64_t t0 = kb_now_ms();
        if (x->h.wedged) {
                scenario_add_check(x, id, "fail", t0, NULL,
                                   "not tested: a long cell could not be stopped, so the kernel cannot answer");
                return;
        }
        json_object *ev = json_object_new_object();
        int r = kb_client_shutdown(kb_kernel_client(x->h.kernel), kb_harness_deadline_in(&x->h, SHUTDOWN_REPLY_MS));
        int64_t replied = kb_now_ms();
        x->shut_down = true;
        if (r == -ESRCH) {
                scenario_add_check(x, id, "fail", t0, ev, "the kernel died before it answered shutdown_request: %s",
                                   kb_harness_wait_error(&x->h, r));
                return;
        }
        if (r < 0) {
                scenario_add_check(x, id, "fail", t0, ev, "no shutdown_reply on control within %d ms (%s)",
                                   SHUTDOWN_REPLY_MS, r == -ETIMEDOUT ? "timed out" : kb_harness_wait_error(&x->h, r));
                return;
        }
        json_object_object_add(ev, "reply_ms", json_object_new_int64(replied - t0));
        struct pollfd p = {.fd = kb_kernel_pidfd(x->h.kernel), .events = POLLIN};
        int64_t deadline = kb_harness_deadline_in(&x->h, SHUTDOWN_EXIT_MS);
        int n;
        do
                n = poll(&p, 1, kb_ms_left(deadline));
        while (n < 0 && errno == EINTR);
        if (n <= 0) {
                char children[256];
                still_running_children(kb_sandbox_kernel_pid(kb_kernel_sandbox(x->h.kernel)), ev, children,
                                       sizeof children);
                scenario_add_check(x, id, "fail", t0, ev,
                                   "shutdown_reply came after %lld ms, but the kernel process was still running %d ms "
                                   "later (its child processes, as the host read them then: %s)",
                                   (long long) (replied - t0), SHUTDOWN_EXIT_MS, children);
                return;
        }
        int64_t gone = kb_now_ms();
        json_object_object_add(ev, "exit_ms", json_object_new_int64(gone - replied));
        scenario_add_check(
                x, id, "pass", t0, ev,
                "shutdown_request on control answered in %lld ms; the kernel process (pinned pidfd) exited %lld ms "
                "later",
                (long long) (replied - t0), (long long) (gone - replied));
}

/* The twin sandbox of kb_sandbox_lifetime, tried in a thread of its own while the interrupt cells
 * run (it mostly waits on bwrap, so it costs the run no wall time); its evidence becomes expect
 * "lifetime" for sandbox.session. */
static void *lifetime_thread(void *arg) {
        lifetime_job *j = arg;
        j->r = kb_sandbox_lifetime(j->sb, j->log, &j->ev);
        return NULL;
}

void scenario_lifetime_start(ctx *x) {
        lifetime_job *j = &x->lifetime;
        j->sb = kb_kernel_sandbox(x->h.kernel);
        snprintf(j->log, sizeof j->log, "%s/lifetime.log", kb_kernel_host_dir(x->h.kernel));
        j->started = pthread_create(&j->thread, NULL, lifetime_thread, j) == 0;
}

void scenario_lifetime_end(ctx *x) {
        lifetime_job *j = &x->lifetime;
        if (!j->sb)
                scenario_lifetime_start(x); /* never started: now, here */
        if (j->started)
                (void) pthread_join(j->thread, NULL);
        else if (j->sb)
                lifetime_thread(j); /* no thread could be made: in this one */
        j->started = false;
        json_object *ev = j->ev;
        j->ev = NULL;
        if (j->r < 0 || !ev) {
                json_object_put(ev);
                ev = json_object_new_object();
                json_object_object_add(ev, "error", json_object_new_string(strerror(j->r < 0 ? -j->r : ENOMEM)));
        }
        scenario_expect_set(x, "lifetime", ev);
}
