/* scenario_interrupt.c: the interrupt checks: a long cell stopped through the control channel or
 * the pinned pidfd, as the kernel answers and as the host sees it (the cell's progress stops). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kbound/kernel.h"
#include "kbound/langpack.h"
#include "scenario-internal.h"
#include "jsonget.h"
#include "procfs.h"
#include "rules.h"

/* ---- interrupts ---- */

/* True if the long cell ran to its end instead of being stopped. */
static bool cell_completed(const ctx *x, const kb_execution *ex) {
        json_object *result = NULL;
        if (scenario_cell_result(x, ex, &result) < 0)
                return false;
        bool done = kb_json_true(result, "completed");
        json_object_put(result);
        return done;
}

/* The cell ended without running to its end. Its status is the kernel's to choose ("error",
 * "abort"; metakernel says "ok"): the random hold before the interrupt is what rules out a cell
 * that ended by itself, and the missing completion result what rules out one that ran out. */
static bool cell_stopped(const ctx *x, const kb_execution *ex) {
        return ex->got_reply && !cell_completed(x, ex);
}

/* SIGINT's state in the kernel process as the host reads it (/proc/<pid>/status, then the pidfd
 * re-verified so the pid was still the kernel's): into ev as "sigint_<when>" {ignored, caught,
 * blocked, pending}. Returns 0, or -errno when it cannot be read. */
static int sigint_state(ctx *x, const char *when, json_object *ev, bool *ret_ignored, bool *ret_pending) {
        kb_sandbox *sb = kb_kernel_sandbox(x->h.kernel);
        char path[64], key[32];
        snprintf(path, sizeof path, "/proc/%d/status", (int) kb_sandbox_kernel_pid(sb));
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_object *st = NULL;
        int r = kb_read_file(AT_FDCWD, path, 0, KB_PROCFS_STATUS_MAX, &text, NULL);
        if (r >= 0)
                r = kb_procfs_status_parse(text, &st);
        if (r >= 0)
                r = kb_sandbox_verify(sb);
        if (r < 0)
                return r;
        bool bit[5];
        static const char *const fields[] = {"sig_ign", "sig_cgt", "sig_blk", "sig_pnd", "shd_pnd"};
        for (size_t i = 0; i < KB_ELEMENTSOF(fields); i++) {
                json_object *v = NULL;
                if (!json_object_object_get_ex(st, fields[i], &v))
                        return -EPROTO;
                unsigned long long mask = strtoull(json_object_get_string(v), NULL, 16);
                bit[i] = mask & (1ULL << (SIGINT - 1));
        }
        json_object *o = json_object_new_object();
        json_object_object_add(o, "ignored", json_object_new_boolean(bit[0]));
        json_object_object_add(o, "caught", json_object_new_boolean(bit[1]));
        json_object_object_add(o, "blocked", json_object_new_boolean(bit[2]));
        json_object_object_add(o, "pending", json_object_new_boolean(bit[3] || bit[4]));
        snprintf(key, sizeof key, "sigint_%s", when);
        json_object_object_add(ev, key, o);
        if (ret_ignored)
                *ret_ignored = bit[0];
        if (ret_pending)
                *ret_pending = bit[3] || bit[4];
        return 0;
}

/* The long cell writes its step count to a progress file in the workspace (renamed into place) and
 * the host reads it there itself: the kernel's execute_reply is its word that the cell stopped,
 * the count not moving is the host's. A cell that ended shows the same count PROGRESS_WINDOW_MS
 * after its reply (it writes every 50 ms while it runs); the first count must appear within
 * PROGRESS_START_MS of the marker, or the host cannot see the cell stop at all. */
#define PROGRESS_WINDOW_MS 150
#define PROGRESS_START_MS 2000
#define PROGRESS_MAX 32

/* The count in the progress file name of the workspace: >= 0, -ENOENT (none yet), -EPROTO (not a
 * count), -errno. Never through a link the kernel planted (O_NOFOLLOW, a regular file only). */
static long progress_read(const ctx *x, const char *name) {
        int ws = kb_kernel_workspace_fd(x->h.kernel);
        if (ws < 0)
                return -EBADF;
        _cleanup_free_ char *text = NULL;
        int r = kb_read_file(ws, name, O_NOFOLLOW, PROGRESS_MAX, &text, NULL);
        if (r < 0)
                return r;
        char *end;
        errno = 0;
        long n = strtol(text, &end, 10);
        if (errno || end == text || n < 0 || (*end && strcmp(end, "\n") != 0))
                return -EPROTO;
        return n;
}

/* Waits, pumping the kernel's messages, until the cell's first count is there. Returns 1 (seen),
 * -EAGAIN (not within PROGRESS_START_MS), or what kb_client_execute_wait said when the cell ended
 * (0) or the kernel went away (-errno) first. */
static int progress_started(ctx *x, kb_execution *ex, const char *name) {
        int64_t until = kb_now_ms() + PROGRESS_START_MS;
        while (progress_read(x, name) < 1) {
                scenario_look_if_mounts_changed(x);
                if (kb_now_ms() >= until)
                        return -EAGAIN;
                int r = kb_client_execute_wait(kb_kernel_client(x->h.kernel), ex, kb_harness_deadline_in(&x->h, 10),
                                               NULL, NULL);
                if (r != -ETIMEDOUT)
                        return r;
        }
        return 1;
}

/* After an interrupt, the host watches the cell's count: so many more steps say it kept running,
 * and end the wait early. After interrupt_request, KEPT_RUNNING_STEPS (about half a second of the
 * cell's own progress, longer under load): a kernel that ignores the request (IRkernel) is not
 * waited for longer. After SIGINT, KEPT_RUNNING_STEPS_SIGNAL (about five seconds): real kernels stop
 * at once, but one that runs its cells in a child (metakernel's bash relays SIGINT through a pty,
 * from a Python thread) took longer than half a second on a loaded machine, and more than two
 * beside the suite's image builds; that SIGINT is also what frees a cell the control path left
 * running. Only a kernel that ignores SIGINT waits that long, and then fails. The cell prints nothing meanwhile:
 * a kernel that sends frame by frame (IRkernel from R) and takes SIGINT between two frames would leave a message
 * unfinished. The count can only shorten a wait that ends in "kept running": no pass rests on it. */
#define KEPT_RUNNING_STEPS 10
#define KEPT_RUNNING_STEPS_SIGNAL 100
#define WATCH_SLICE_MS 25
#define IDLE_WAIT_MS 2000 /* the client's own grace for an idle after the reply */
typedef struct progress_watch {
        const char *name; /* the progress file, or NULL: no count seen to watch */
        long from, last;  /* the count when the interrupt was sent, and the latest read */
        long limit;       /* steps that say it kept running */
} progress_watch;

static void watch_start(ctx *x, progress_watch *w, const char *name, bool started, interrupt_path path) {
        long n = started ? progress_read(x, name) : -1;
        *w = (progress_watch){.name = n >= 0 ? name : NULL,
                              .from = n,
                              .last = n,
                              .limit = path == PATH_PIDFD ? KEPT_RUNNING_STEPS_SIGNAL : KEPT_RUNNING_STEPS};
}

static long watch_steps(const progress_watch *w) {
        return w->name ? w->last - w->from : 0;
}

/* Waits up to wait_ms for the cell to end, reading its count between slices. Returns what
 * kb_client_execute_wait said (0: it ended; -ETIMEDOUT: not within wait_ms; -errno), or 1 if the
 * count moved its limit of steps first. */
static int watch_wait(ctx *x, kb_execution *ex, progress_watch *w, int wait_ms) {
        kb_client *c = kb_kernel_client(x->h.kernel);
        int64_t until = kb_now_ms() + (wait_ms > 0 ? wait_ms : 0);
        for (;;) {
                scenario_look_if_mounts_changed(x);
                int64_t left = until - kb_now_ms();
                int r = kb_client_execute_wait(
                        c, ex,
                        kb_harness_deadline_in(&x->h,
                                               (int) (left < WATCH_SLICE_MS ? (left > 0 ? left : 0) : WATCH_SLICE_MS)),
                        NULL, NULL);
                if (r == 0 && !ex->saw_idle)
                        /* A slice can end between the reply and the idle status: IRkernel aborts
                         * what is queued on shell after an interrupted cell, before its idle, so
                         * the next request must wait for that idle (up to the client's grace). */
                        r = kb_client_execute_wait(c, ex, kb_harness_deadline_in(&x->h, IDLE_WAIT_MS), NULL, NULL);
                if (r != -ETIMEDOUT || ex->got_reply)
                        return r == -ETIMEDOUT ? 0 : r;
                if (w->name) {
                        long n = progress_read(x, w->name);
                        if (n >= 0)
                                w->last = n;
                        if (watch_steps(w) >= w->limit)
                                return 1;
                }
                if (kb_now_ms() >= until)
                        return -ETIMEDOUT;
        }
}

/* A reply that said the cell stopped, while the host waits to see the cell's count stay put: the
 * check is decided by settle_stop once PROGRESS_WINDOW_MS have passed since the reply, the next
 * step's work done meanwhile (the control path's window runs during the pidfd path's cell, the
 * pidfd path's during persistence and the last look), so the proof costs almost no wall time. */
typedef struct pending_stop {
        char id[32];
        char progress[64]; /* the progress file's name in the workspace */
        long at_reply;     /* the count the host read at the reply */
        int64_t reply_at, t0;
        json_object *ev; /* owned */
        char pass[512];  /* the pass detail, should the count stay */
} pending_stop;

/* Decides the pending check (if any): its count read again, no sooner than PROGRESS_WINDOW_MS
 * after the reply; pass if unchanged, else fail naming both counts. */
void scenario_settle_stop(ctx *x, interrupt_path path) {
        pending_stop *ps = x->pending[path];
        if (!ps)
                return;
        x->pending[path] = NULL;
        int64_t wait = ps->reply_at + PROGRESS_WINDOW_MS - kb_now_ms();
        if (wait > 0) {
                struct timespec window = {.tv_sec = wait / 1000, .tv_nsec = (wait % 1000) * 1000000L};
                while (nanosleep(&window, &window) < 0 && errno == EINTR)
                        ;
        }
        long after = progress_read(x, ps->progress);
        int64_t waited = kb_now_ms() - ps->reply_at;
        json_object *o = json_object_new_object();
        json_object_object_add(o, "at_reply", json_object_new_int64(ps->at_reply));
        json_object_object_add(o, "after", after >= 0 ? json_object_new_int64(after) : NULL);
        json_object_object_add(o, "window_ms", json_object_new_int64(waited));
        json_object_object_add(ps->ev, "progress", o);
        if (after < 0)
                scenario_add_check(
                        x, ps->id, "fail", ps->t0, ps->ev,
                        "the cell's reply said it stopped, but the host could not read its progress file again (%s)",
                        strerror((int) -after));
        else if (after != ps->at_reply)
                scenario_add_check(
                        x, ps->id, "fail", ps->t0, ps->ev,
                        "the cell's reply said it stopped, but the host saw the cell go on: its progress went from "
                        "%ld to %ld in the %lld ms after the reply",
                        ps->at_reply, after, (long long) waited);
        else
                scenario_add_check(x, ps->id, "pass", ps->t0, ps->ev, "%s", ps->pass);
        free(ps);
}

/* Sends the interrupt through one path. *ret_reply gets the interrupt_reply status for control. */
static int send_interrupt(ctx *x, interrupt_path path, char **ret_reply) {
        if (path == PATH_PIDFD)
                return kb_kernel_signal(x->h.kernel, SIGINT);
        return kb_client_interrupt(kb_kernel_client(x->h.kernel),
                                   kb_harness_deadline_in(&x->h, CONTROL_REPLY_TIMEOUT_MS), ret_reply);
}

void scenario_check_interrupt(ctx *x, interrupt_path path) {
        const char *id = kb_check_id(path == PATH_CONTROL ? KB_CHECK_INTERRUPT_CONTROL : KB_CHECK_INTERRUPT_PIDFD);
        int64_t t0 = kb_now_ms();
        char marker[64], why[512];
        snprintf(marker, sizeof(marker), "kbound-marker-%s-%.8s", path == PATH_CONTROL ? "control" : "pidfd", x->nonce);
        if (x->h.wedged && path == PATH_PIDFD && x->died_on_sigint) {
                scenario_add_check(x, id, "fail", t0, NULL,
                                   "the kernel died on SIGINT (sent to free the control path's cell): %s",
                                   x->died_on_sigint);
                return;
        }
        if (x->h.wedged) {
                scenario_add_check(x, id, "fail", t0, NULL,
                                   path == PATH_PIDFD
                                           ? "SIGINT through the pinned pidfd, sent to free the control path's running "
                                             "cell, did not stop it either"
                                           : "not tested: an earlier long cell could not be stopped");
                return;
        }
        json_object *params = json_object_new_object();
        json_object_object_add(params, "marker", json_object_new_string(marker));
        json_object_object_add(params, "seconds", json_object_new_int(x->env->long_cell_seconds));
        char progress[64], progress_inside[96];
        snprintf(progress, sizeof progress, ".kbound-progress-%s-%.8s", path == PATH_CONTROL ? "control" : "pidfd",
                 x->nonce);
        snprintf(progress_inside, sizeof progress_inside, "%s/%s", KB_SANDBOX_WORKSPACE, progress);
        json_object_object_add(params, "progress", json_object_new_string(progress_inside));
        char marker_result[64];
        scenario_result_marker(x, marker_result, sizeof marker_result);
        json_object_object_add(params, "result_marker", json_object_new_string(marker_result));
        _cleanup_free_ char *code = NULL;
        int r = kb_langpack_render(x->lp, "long", params, &code);
        json_object_put(params);
        if (r < 0) {
                scenario_add_check(x, id, "fail", t0, NULL, "cannot render the long cell: %s", strerror(-r));
                return;
        }
        kb_client *c = kb_kernel_client(x->h.kernel);
        kb_execution *ex = NULL;
        r = kb_harness_long_start(&x->h, code, marker, &ex);
        if (r != 1) {
                /* The kernel drops SIGINT outside a running cell, so without the marker there is
                 * nothing honest to interrupt. */
                scenario_add_check(x, id, "fail", t0, NULL, "the long cell never printed its start marker (%s)",
                                   r == 0 ? "it finished first" : kb_harness_wait_error(&x->h, r));
                return;
        }

        json_object *ev = json_object_new_object();
        /* The hold: a cell that ends before anything was sent was not stopped by it. */
        int hold = (int) arc4random_uniform(HOLD_MAX_MS + 1);
        json_object_object_add(ev, "hold_ms", json_object_new_int(hold));
        r = kb_client_execute_wait(c, ex, kb_harness_deadline_in(&x->h, hold), NULL, NULL);
        if (r != -ETIMEDOUT) {
                if (r == 0)
                        json_object_object_add(ev, "execute_reply_status", json_object_new_string(ex->status));
                scenario_add_check(x, id, "fail", t0, ev, "%s",
                                   r == 0 ? "the long cell ended on its own before any interrupt was sent"
                                          : kb_harness_wait_error(&x->h, r));
                kb_execution_destroy(c, &ex);
                return;
        }
        /* The host must see the cell go before it can see it stop. */
        int started = progress_started(x, ex, progress);
        if (started != 1 && started != -EAGAIN) {
                if (started == 0)
                        json_object_object_add(ev, "execute_reply_status", json_object_new_string(ex->status));
                scenario_add_check(x, id, "fail", t0, ev, "%s",
                                   started == 0 ? "the long cell ended on its own before any interrupt was sent"
                                                : kb_harness_wait_error(&x->h, started));
                kb_execution_destroy(c, &ex);
                return;
        }
        json_object_object_add(ev, "progress_seen", json_object_new_boolean(started == 1));
        /* SIGINT can stop the cell only if the kernel process neither ignores it nor leaves it
         * pending: read before sending and after the reply (the host's proof, not the kernel's). */
        bool ignored = false, pending = false;
        int ss = path == PATH_PIDFD ? sigint_state(x, "before", ev, &ignored, NULL) : 0;
        if (ss < 0)
                json_object_object_add(ev, "sigint_error", json_object_new_string(strerror(-ss)));
        /* Sent, then watched until the cell ends, or its count has moved its limit of steps since
         * (it kept running: the kernel had that much time to act and did not), or the timeout.
         * The interrupt_reply on control is taken whenever it came. */
        progress_watch tw;
        watch_start(x, &tw, progress, started == 1, path);
        int64_t sent = kb_now_ms();
        _cleanup_free_ char *reply_status = NULL, *interrupt_id = NULL;
        int sr = path == PATH_PIDFD
                         ? kb_kernel_signal(x->h.kernel, SIGINT)
                         : kb_client_request_send(c, KB_CHANNEL_CONTROL, "interrupt_request", NULL, &interrupt_id);
        int wait_ms = x->env->interrupt_timeout_ms;
        r = -ETIMEDOUT; /* nothing sent: the cell runs on */
        if (sr >= 0 && path == PATH_PIDFD)
                r = watch_wait(x, ex, &tw, wait_ms);
        else if (sr >= 0) {
                /* The reply is what says the request was taken: a kernel that has not answered
                 * within CONTROL_REPLY_TIMEOUT_MS gets a short grace, one that answered the rest of
                 * the timeout. An execute_reply at any time in between counts. */
                r = watch_wait(x, ex, &tw, CONTROL_REPLY_TIMEOUT_MS);
                kb_msg *reply = kb_client_reply_take(c, KB_CHANNEL_CONTROL, interrupt_id);
                if (r == -ETIMEDOUT) {
                        wait_ms = reply ? wait_ms - CONTROL_REPLY_TIMEOUT_MS : CONTROL_GRACE_MS;
                        r = watch_wait(x, ex, &tw, wait_ms);
                }
                if (!reply)
                        reply = kb_client_reply_take(c, KB_CHANNEL_CONTROL, interrupt_id);
                if (reply) {
                        const char *st = kb_msg_content_string(reply, "status");
                        reply_status = strdup(st ? st : "");
                        kb_msg_destroy(&reply);
                }
                json_object_object_add(ev, "interrupt_reply",
                                       reply_status ? json_object_new_string(reply_status) : NULL);
        }
        if (sr < 0)
                json_object_object_add(ev, "send_error", json_object_new_string(strerror(-sr)));
        json_object_object_add(ev, "steps_after_interrupt", json_object_new_int64(watch_steps(&tw)));
        if (r == 1)
                r = -ETIMEDOUT; /* the count said it kept running */
        bool stopped = r == 0 && cell_stopped(x, ex);
        if (r == 0)
                json_object_object_add(ev, "execute_reply_status", json_object_new_string(ex->status));
        if (stopped && path == PATH_PIDFD) {
                int sa = ss < 0 ? ss : sigint_state(x, "after", ev, NULL, &pending);
                const char *hole = sa < 0    ? "the host could not read the kernel's signal state"
                                   : ignored ? "the kernel process ignores SIGINT (SigIgn), so the signal cannot "
                                               "have stopped it"
                                   : pending ? "SIGINT is still pending in the kernel process (never delivered), so "
                                               "the signal did not stop it"
                                             : NULL;
                if (hole) {
                        scenario_add_check(x, id, "fail", t0, ev,
                                           "the cell ended (execute_reply status '%s'), but %s%s%s", ex->status, hole,
                                           sa < 0 ? ": " : "", sa < 0 ? strerror(-sa) : "");
                        kb_execution_destroy(c, &ex);
                        return;
                }
        }
        if (stopped) {
                /* The reply is the kernel's word: the host must see the cell's progress stop too
                 * (settle_stop decides, a little later). */
                long count = started == 1 ? progress_read(x, progress) : -1;
                pending_stop *ps = started == 1 && count >= 0 ? calloc(1, sizeof *ps) : NULL;
                if (!ps) {
                        scenario_add_check(
                                x, id, "fail", t0, ev, "execute_reply status '%s' after %lld ms, but %s%s", ex->status,
                                (long long) (ex->reply_ms - sent),
                                started != 1 ? "the host never saw the long cell's progress (its language pack "
                                               "must write the progress file: docs/probes-cells.md), so it cannot "
                                               "see the cell stop"
                                             : "the host could not read the cell's progress file at the reply: ",
                                started != 1 ? "" : strerror((int) (count < 0 ? -count : ENOMEM)));
                        kb_execution_destroy(c, &ex);
                        return;
                }
                json_object_object_add(ev, "latency_ms", json_object_new_int64(ex->reply_ms - sent));
                if (ex->ename)
                        json_object_object_add(ev, "ename", json_object_new_string(ex->ename));
                snprintf(ps->id, sizeof ps->id, "%s", id);
                snprintf(ps->progress, sizeof ps->progress, "%s", progress);
                ps->at_reply = count;
                ps->reply_at = kb_now_ms();
                ps->t0 = t0;
                ps->ev = ev;
                snprintf(ps->pass, sizeof ps->pass,
                         "%s stopped the running cell: execute_reply status '%s'%s%s after %lld ms, and the host "
                         "saw its progress stay at %ld",
                         path == PATH_CONTROL ? "interrupt_request on control" : "SIGINT through the pinned pidfd",
                         ex->status, ex->ename ? " " : "", ex->ename ? ex->ename : "",
                         (long long) (ex->reply_ms - sent), count);
                x->pending[path] = ps;
                kb_execution_destroy(c, &ex);
                return;
        }
        if (r == -ESRCH) {
                /* The interrupt killed it: a kernel must survive its own interrupts. */
                scenario_add_check(x, id, "fail", t0, ev, "the kernel died on %s: %s",
                                   path == PATH_CONTROL ? "interrupt_request" : "SIGINT",
                                   kb_harness_wait_error(&x->h, r));
                kb_execution_destroy(c, &ex);
                return;
        }
        if (r == -ECANCELED) {
                scenario_add_check(x, id, "fail", t0, ev, "while waiting for the interrupted cell: %s",
                                   kb_harness_wait_error(&x->h, r));
                kb_execution_destroy(c, &ex);
                return;
        }
        /* Not stopped: say why, then unblock the cell through the other path so the kernel can
         * still be checked. */
        int64_t ran = kb_now_ms() - sent;
        if (r == 0)
                snprintf(why, sizeof(why), "the cell ran to completion (status %s)", ex->status);
        else if (sr < 0)
                snprintf(why, sizeof(why), "the interrupt could not be sent (%s)", strerror(-sr));
        else if (path == PATH_CONTROL && !reply_status)
                snprintf(why, sizeof(why),
                         "no interrupt_reply and the cell kept running (%ld steps over %lld ms after "
                         "the request)",
                         watch_steps(&tw), (long long) ran);
        else if (path == PATH_CONTROL)
                snprintf(why, sizeof(why), "interrupt_reply '%s' but the cell kept running (%ld steps over %lld ms)",
                         reply_status, watch_steps(&tw), (long long) ran);
        else if (watch_steps(&tw) >= tw.limit)
                snprintf(why, sizeof(why), "the cell kept running after the interrupt (%ld steps over %lld ms)",
                         watch_steps(&tw), (long long) ran);
        else
                snprintf(why, sizeof(why), "the cell kept running %d ms after the interrupt (%s)", wait_ms,
                         kb_harness_wait_error(&x->h, r));
        if (r != 0) {
                (void) send_interrupt(x, path == PATH_CONTROL ? PATH_PIDFD : PATH_CONTROL, NULL);
                progress_watch again;
                watch_start(x, &again, progress, started == 1, path == PATH_CONTROL ? PATH_PIDFD : PATH_CONTROL);
                int u = watch_wait(x, ex, &again, x->env->interrupt_timeout_ms);
                json_object_object_add(ev, "unblocked_by_other_path", json_object_new_boolean(u == 0));
                if (u == -ESRCH && path == PATH_CONTROL) {
                        /* The SIGINT meant to free the cell killed the kernel: that is the pidfd
                         * path's verdict, said as such. */
                        free(x->died_on_sigint);
                        x->died_on_sigint = strdup(kb_harness_wait_error(&x->h, u));
                }
                if (u != 0)
                        x->h.wedged = true;
        }
        /* The same rule as conformance's interrupt.control (rules.c). */
        char rule[256];
        const char *verdict = path == PATH_CONTROL
                                      ? kb_rules_ignored_control_interrupt(x->spec->interrupt_mode, rule, sizeof(rule))
                                      : "fail";
        if (strcmp(verdict, "unsupported") == 0)
                scenario_add_check(x, id, "unsupported", t0, ev, "%s; %s%s", why, rule,
                                   x->h.wedged ? "; neither path stopped the cell" : "");
        else
                scenario_add_check(x, id, "fail", t0, ev, "%s%s%s", why, x->h.wedged ? "; " : "",
                                   x->h.wedged ? "and the other path did not stop it either" : "");
        kb_execution_destroy(c, &ex);
}
