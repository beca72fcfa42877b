/* conformance_interrupt.c: the conformance items that stop the kernel's work: interrupt_request
 * on an idle kernel, a running cell interrupted through control and through SIGINT (the pinned
 * pidfd), and shutdown_request, the kernel's exit seen by the host. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "kbound/kernel.h"
#include "base/cleanup.h"
#include "run/conformance-internal.h"

/* ---- interrupts ---- */

void cx_check_interrupt_idle(cx *x) {
        const char *id = cx_item_id(x);
        if (!cx_can_run(x, id))
                return;
        int64_t t0 = kb_now_ms();
        _cleanup_free_ char *status = NULL;
        int r = kb_client_interrupt(kb_kernel_client(x->h.kernel),
                                    kb_harness_deadline_in(&x->h, CONTROL_REPLY_TIMEOUT_MS), &status);
        json_object *after = NULL;
        /* Whatever the kernel did with it, it must still answer. */
        int a = r == 0 || r == -ETIMEDOUT ? cx_request(x, "kernel_info_request", NULL, &after) : r;
        json_object_put(after);
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "interrupt_reply", r == 0 ? json_object_new_string(status) : NULL);
        json_object_object_add(ev, "answers_afterwards", json_object_new_boolean(a == 0));
        findings f = {.n = 0};
        if (r < 0 && r != -ETIMEDOUT)
                cx_found(&f, "wait", "interrupt_request: %s", kb_harness_wait_error(&x->h, r));
        else {
                if (r == -ETIMEDOUT)
                        cx_found(&f, "no_reply", "no interrupt_reply on control within %d ms",
                                 CONTROL_REPLY_TIMEOUT_MS);
                else if (*status && strcmp(status, "ok") != 0)
                        cx_found(&f, "status", "interrupt_reply status '%s'", status);
                if (a < 0)
                        cx_found(&f, "dead_after", "after interrupt_request while idle, kernel_info_request: %s",
                                 kb_harness_wait_error(&x->h, a));
        }
        if (f.n > 0) {
                if (!cx_ignored_control_interrupt(x, id, t0, ev, &f))
                        cx_judge(x, id, t0, ev, &f);
        } else
                cx_pass(x, id, t0, ev,
                        "interrupt_reply on control while idle (status %s); the kernel answers afterwards",
                        *status ? status : "absent");
}

static bool cell_completed(const kb_execution *ex) {
        json_object *result = NULL;
        if (kb_probe_result(ex, &result) < 0)
                return false;
        json_object *done = kb_json_get(result, "completed");
        bool completed = done && json_object_is_type(done, json_type_boolean) && json_object_get_boolean(done);
        json_object_put(result);
        return completed;
}

/* Starts the language pack's long cell and waits for its marker. Returns 0 and *ret_ex, or records
 * the item and returns < 0. */
static int start_long(cx *x, const char *id, int64_t t0, kb_execution **ret_ex) {
        if (!x->lp) {
                cx_untested(x, id, "%s", x->no_snippets);
                return -ENOENT;
        }
        char marker[64], nonce[17];
        if (kb_random_hex(nonce, 8) < 0)
                return -EIO;
        snprintf(marker, sizeof(marker), "kbound-conformance-%s", nonce);
        json_object *params = json_object_new_object();
        json_object_object_add(params, "marker", json_object_new_string(marker));
        json_object_object_add(params, "seconds",
                               json_object_new_int(x->env->long_cell_seconds > 0 ? x->env->long_cell_seconds : 60));
        _cleanup_free_ char *code = NULL;
        int r = kb_langpack_render(x->lp, "long", params, &code);
        json_object_put(params);
        if (r < 0) {
                cx_untested(x, id, "the language pack %s has no usable \"long\" cell (%s)", kb_langpack_dir(x->lp),
                            strerror(-r));
                return r;
        }
        kb_execution *ex = NULL;
        r = kb_harness_long_start(&x->h, code, marker, &ex);
        if (r != 1) {
                cx_problem(x, id, t0, NULL, "no_marker", "the long cell never printed its start marker (%s)",
                           r == 0 ? "it finished first" : kb_harness_wait_error(&x->h, r));
                return r < 0 ? r : -EPROTO;
        }
        *ret_ex = ex;
        return 0;
}

/* Waits for an interrupted cell's reply; 0 when it came. */
static int wait_stopped(cx *x, kb_execution *ex, int ms) {
        int r = kb_client_execute_wait(kb_kernel_client(x->h.kernel), ex, kb_harness_deadline_in(&x->h, ms), NULL,
                                       NULL);
        return r == 0 && ex->got_reply ? 0 : r == 0 ? -ETIMEDOUT : r;
}

/* A cell that the interrupt did not stop is stopped through the other path, so the remaining
 * items can run; if nothing stops it, the kernel is wedged. */
static void unblock(cx *x, kb_execution *ex, bool by_signal, json_object *ev) {
        if (by_signal)
                (void) kb_kernel_signal(x->h.kernel, SIGINT);
        else
                (void) kb_client_interrupt(kb_kernel_client(x->h.kernel),
                                           kb_harness_deadline_in(&x->h, CONTROL_REPLY_TIMEOUT_MS), NULL);
        int u = wait_stopped(x, ex, cx_item_ms(x));
        json_object_object_add(ev, "unblocked_by_other_path", json_object_new_boolean(u == 0));
        if (u == -ESRCH || u == -ECANCELED)
                (void) kb_harness_wait_error(&x->h, u);
        else if (u != 0)
                x->h.wedged = true;
}

void cx_check_interrupt_busy(cx *x, bool by_signal) {
        const char *id = cx_item_id(x);
        if (!cx_can_run(x, id))
                return;
        int64_t t0 = kb_now_ms();
        kb_execution *ex = NULL;
        if (start_long(x, id, t0, &ex) < 0)
                return;
        kb_client *c = kb_kernel_client(x->h.kernel);
        json_object *ev = json_object_new_object();
        int64_t sent = kb_now_ms();
        _cleanup_free_ char *reply_status = NULL;
        int sr = by_signal ? kb_kernel_signal(x->h.kernel, SIGINT)
                           : kb_client_interrupt(c, kb_harness_deadline_in(&x->h, CONTROL_REPLY_TIMEOUT_MS),
                                                 &reply_status);
        if (!by_signal)
                json_object_object_add(ev, "interrupt_reply", sr == 0 ? json_object_new_string(reply_status) : NULL);
        int wait_ms = !by_signal && sr == -ETIMEDOUT ? CONTROL_GRACE_MS : cx_item_ms(x);
        int r = sr == 0 || sr == -ETIMEDOUT ? wait_stopped(x, ex, wait_ms) : sr;
        bool stopped = r == 0 && !cell_completed(ex);
        if (r == 0) {
                json_object_object_add(ev, "execute_reply_status", json_object_new_string(ex->status));
                json_object_object_add(ev, "latency_ms", json_object_new_int64(ex->reply_ms - sent));
                json_object_object_add(ev, "iopub_error",
                                       json_object_new_boolean(json_object_array_length(ex->errors) > 0));
        }
        /* Every problem is named on its own, so a known deviation (IRkernel: no reply on control,
         * the cell runs on) never hides another (the cell could not be stopped at all). */
        findings f = {.n = 0};
        if (r == -ESRCH || r == -ECANCELED) {
                cx_found(&f, "wait", "while waiting for the interrupted cell: %s", kb_harness_wait_error(&x->h, r));
        } else {
                if (!by_signal && sr == -ETIMEDOUT)
                        cx_found(&f, "no_reply", "no interrupt_reply within %d ms", CONTROL_REPLY_TIMEOUT_MS);
                if (!stopped) {
                        if (r != 0)
                                unblock(x, ex, !by_signal, ev);
                        if (r == 0)
                                cx_found(&f, "not_stopped", "the cell ran to completion");
                        else
                                cx_found(&f, "not_stopped", "the cell kept running %d ms after the interrupt", wait_ms);
                        if (x->h.wedged)
                                cx_found(&f, "unstoppable", "the other path did not stop it either");
                } else if (strcmp(ex->status, "error") != 0) {
                        cx_found(&f, strcmp(ex->status, "abort") == 0 ? "abort_status" : "status",
                                 "the interrupted cell's execute_reply status is '%s', expected 'error'", ex->status);
                } else if (json_object_array_length(ex->errors) == 0) {
                        /* Only asked of an 'error' reply: an aborted cell has no error to publish. */
                        cx_found(&f, "no_iopub_error", "execute_reply status 'error' but no iopub error message");
                }
        }
        if (f.n > 0) {
                if (by_signal || !cx_ignored_control_interrupt(x, id, t0, ev, &f))
                        cx_judge(x, id, t0, ev, &f);
        } else {
                cx_pass(x, id, t0, ev, "%s stopped the running cell: status 'error'%s%s after %lld ms",
                        by_signal ? "SIGINT through the pinned pidfd" : "interrupt_request on control",
                        ex->ename ? ", " : "", ex->ename ? ex->ename : "", (long long) (ex->reply_ms - sent));
        }
        kb_execution_destroy(c, &ex);
}

/* ---- shutdown ---- */

void cx_check_shutdown(cx *x) {
        const char *id = cx_item_id(x);
        if (!cx_can_run(x, id))
                return;
        int64_t t0 = kb_now_ms();
        json_object *content = json_object_new_object();
        json_object_object_add(content, "restart", json_object_new_boolean(0));
        kb_msg *reply = NULL;
        int r = kb_client_request(kb_kernel_client(x->h.kernel), KB_CHANNEL_CONTROL, "shutdown_request", content,
                                  kb_harness_deadline_in(&x->h, cx_item_ms(x)), &reply);
        if (r < 0) {
                cx_request_failed(x, id, t0, NULL, r, "shutdown_request on control");
                return;
        }
        json_object *restart = kb_json_get(reply->content, "restart");
        const char *status = kb_msg_content_string(reply, "status");
        json_object *ev = json_object_new_object();
        kb_harness_exit e;
        int exited = kb_harness_wait_exit(&x->h, kb_now_ms(), ev, &e) > 0;
        json_object_object_add(ev, "restart", restart ? json_object_get(restart) : NULL);
        json_object_object_add(ev, "status", cx_jstring_or_null(status));
        json_object_object_add(ev, "exited", json_object_new_boolean(exited));
        findings f = {.n = 0};
        if (!restart || !json_object_is_type(restart, json_type_boolean) || json_object_get_boolean(restart))
                cx_found(&f, "restart", "shutdown_reply does not echo restart: false");
        if (status && strcmp(status, "ok") != 0)
                cx_found(&f, "status", "shutdown_reply status '%s'", status);
        if (!exited)
                cx_found(&f, "no_exit",
                         "the kernel process did not exit after its shutdown_reply: still running %d ms after it "
                         "(its child processes then: %s)%s",
                         KB_SHUTDOWN_PROMPT_MS, e.held,
                         e.terminated ? ", and after the SIGTERM a kernel manager sends then" : "");
        cx_verdict(x, id, t0, ev, &f, "shutdown_reply echoes restart: false (status %s) and the process exited%s",
                   status ? status : "absent",
                   e.terminated ? ", not on its own: on the SIGTERM a kernel manager sends one that does not go" : "");
        kb_msg_destroy(&reply);
}
