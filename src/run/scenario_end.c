/* scenario_end.c: the end of one kernel's run: the variable read back over the same connections,
 * shutdown through control, and the twin sandbox that shows the sandbox cannot outlive kbound. */
#include "verdict/rules.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kbound/kernel.h"
#include "run/scenario-internal.h"
#include "base/cleanup.h"
#include "base/jsonget.h"

#define SHUTDOWN_REPLY_MS 2000

void scenario_check_persistence(ctx *x) {
        const char *id = kb_check_id(KB_CHECK_PERSISTENCE);
        int64_t t0 = kb_now_ms();
        _cleanup_error_ kb_error *error = NULL;
        json_object *result = NULL;
        if (x->h.wedged) {
                scenario_add_check(x, id, "fail", t0, NULL,
                                   "not tested: a long cell could not be stopped, so the kernel cannot answer");
                return;
        }
        int r = scenario_run_cell(x, "get_var", NULL, CELL_TIMEOUT_MS, &result, &error);
        /* The same process image as the first look saw: an execve keeps the pid (and the pidfd),
         * and a kernel that restores its variables in the new image would read the nonce back. An
         * exec is said first, whatever the cell did (an exec drops the kernel's connections). */
        char image_words[400];
        const char *image_change = scenario_image_change(x, image_words, sizeof image_words);
        if (r < 0) {
                if (image_change)
                        scenario_add_check(x, id, "fail", t0, NULL,
                                           "the pinned PID 2 is not proven the kernel the first look saw: %s; and "
                                           "the cell: %s",
                                           image_change, kb_error_text(error, r));
                else
                        scenario_add_check(x, id, "fail", t0, NULL, "%s", kb_error_text(error, r));
                return;
        }
        const char *value = kb_fact_str_of(result, FACT_VAR_CELL_VALUE);
        int64_t pid = kb_fact_int_or(result, FACT_VAR_CELL_PID, -1);
        int v = kb_sandbox_verify(kb_kernel_sandbox(x->h.kernel));
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "pid", json_object_new_int64(pid));
        json_object_object_add(ev, "nonce_intact", json_object_new_boolean(value && strcmp(value, x->nonce) == 0));
        json_object_object_add(ev, "pidfd_same_process", json_object_new_boolean(v == 0));
        json_object_object_add(ev, "same_image", json_object_new_boolean(!image_change));
        if (image_change)
                scenario_add_check(x, id, "fail", t0, ev,
                                   "the pinned PID 2 is not proven the kernel the first look saw: %s", image_change);
        else if (!value || strcmp(value, x->nonce) != 0)
                scenario_add_check(x, id, "fail", t0, ev, "the variable set before the interrupts %s",
                                   value ? "changed" : "is gone");
        else if (pid != x->inside.kernel_pid)
                scenario_add_check(x, id, "fail", t0, ev, "the answering kernel is pid %lld, not %lld%s",
                                   (long long) pid, (long long) x->inside.kernel_pid,
                                   pid > x->inside.kernel_pid
                                           ? " (a get_var cell that runs in a child of the kernel reports the kernel "
                                             "process, its parent, never its own; docs/probes-cells.md)"
                                           : "");
        else if (v != 0)
                scenario_add_check(x, id, "fail", t0, ev, "the pinned pidfd no longer refers to the same live kernel");
        else
                scenario_add_check(x, id, "pass", t0, ev,
                                   "after both interrupts the pinned %s is the same live process, in the same process "
                                   "image as the first look saw (no execve), and the nonce set before reads back over "
                                   "kbound's connections to it (the kernel says pid %lld)",
                                   x->env->audit ? "kernel" : "PID 2", (long long) x->inside.kernel_pid);
        json_object_put(result);
}

/* lifecycle.shutdown: shutdown_request on control is answered, and the kernel process (the pinned
 * PID 2, seen through its pidfd) goes: on its own, said late past KB_SHUTDOWN_PROMPT_MS with what
 * held it then, or at the latest on the SIGTERM a kernel manager sends one that does not go
 * (kb_harness_wait_exit, rules.h). */
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
        kb_harness_exit e;
        r = kb_harness_wait_exit(&x->h, replied, ev, &e);
        if (r < 0) {
                scenario_add_check(x, id, "fail", t0, ev, "the host could not wait for the kernel's exit: %s",
                                   strerror(-r));
                return;
        }
        if (r == 0 && e.terminated) {
                scenario_add_check(x, id, "fail", t0, ev,
                                   "shutdown_reply came after %lld ms, but the kernel process was still running %d ms "
                                   "later (its child processes then: %s), and still %d ms after the SIGTERM a kernel "
                                   "manager sends then",
                                   (long long) (replied - t0), KB_SHUTDOWN_PROMPT_MS, e.held, KB_SHUTDOWN_TERM_MS);
                return;
        }
        if (r == 0) {
                scenario_add_check(
                        x, id, "fail", t0, ev,
                        "shutdown_reply came after %lld ms, but the kernel process was still running %lld ms "
                        "later, when the run's deadline came (its child processes %d ms after the reply: %s)",
                        (long long) (replied - t0), (long long) (kb_now_ms() - replied), KB_SHUTDOWN_PROMPT_MS, e.held);
                return;
        }
        if (e.terminated)
                scenario_add_check(x, id, "pass", t0, ev,
                                   "shutdown_request on control answered in %lld ms; the kernel process (pinned pidfd) "
                                   "did not exit on its own: still running %d ms after the reply (its child processes "
                                   "then: %s; its threads in the evidence), it ended on the SIGTERM a kernel manager "
                                   "sends then (jupyter_client: 2.5 s after the reply), %lld ms after the reply",
                                   (long long) (replied - t0), KB_SHUTDOWN_PROMPT_MS, e.held, (long long) e.exit_ms);
        else if (e.late)
                scenario_add_check(x, id, "pass", t0, ev,
                                   "shutdown_request on control answered in %lld ms; the kernel process (pinned pidfd) "
                                   "exited on its own %lld ms later, late: still running %d ms after the reply (its "
                                   "child processes then: %s)",
                                   (long long) (replied - t0), (long long) e.exit_ms, KB_SHUTDOWN_PROMPT_MS, e.held);
        else
                scenario_add_check(x, id, "pass", t0, ev,
                                   "shutdown_request on control answered in %lld ms; the kernel process (pinned pidfd) "
                                   "exited %lld ms later",
                                   (long long) (replied - t0), (long long) e.exit_ms);
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
                if (kb_fact_set_str(ev, FACT_LIFETIME_ERROR, strerror(j->r < 0 ? -j->r : ENOMEM)) < 0) {
                        json_object_put(ev);
                        ev = NULL; /* not known: sandbox.session fails for the lack */
                }
        }
        scenario_expect_obj(x, FACT_EXPECT_LIFETIME, ev);
}
