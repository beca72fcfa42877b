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
#include "base/cleanup.h"
#include "kbound/langpack.h"
#include "run/scenario-internal.h"
#include "base/jsonget.h"
#include "base/procfs.h"
#include "verdict/rules.h"

/* ---- interrupts ---- */

/* True if the long cell ran to its end instead of being stopped. */
static bool cell_completed(const ctx *x, const kb_execution *ex) {
        json_object *result = NULL;
        if (scenario_cell_result(x, ex, &result) < 0)
                return false;
        bool done = kb_fact_bool_of(result, FACT_LONG_CELL_COMPLETED);
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
        const kb_fact_str fields[] = {FACT_PROCESS_SIG_IGN, FACT_PROCESS_SIG_CGT, FACT_PROCESS_SIG_BLK,
                                      FACT_PROCESS_SIG_PND, FACT_PROCESS_SHD_PND};
        for (size_t i = 0; i < KB_ELEMENTSOF(fields); i++) {
                const char *v = kb_fact_str_of(st, fields[i]);
                if (!v)
                        return -EPROTO;
                unsigned long long mask = strtoull(v, NULL, 16);
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
        int64_t last_ms;  /* when the latest read began */
        long limit;       /* steps that say it kept running */
} progress_watch;

static void watch_start(ctx *x, progress_watch *w, const char *name, bool started, interrupt_path path) {
        int64_t now = kb_now_ms();
        long n = started ? progress_read(x, name) : -1;
        *w = (progress_watch){.name = n >= 0 ? name : NULL,
                              .from = n,
                              .last = n,
                              .last_ms = now,
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
                        int64_t read_at = kb_now_ms();
                        long n = progress_read(x, w->name);
                        if (n >= 0) {
                                w->last = n;
                                w->last_ms = read_at;
                        }
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
        else {
                /* The count stayed; the kernel that stopped is the one the first look saw only if it is
                 * still in that process image (a kernel that execs keeps its pid). */
                char words[400];
                const char *image_change = scenario_image_change(x, words, sizeof words);
                json_object_object_add(ps->ev, "same_image", json_object_new_boolean(!image_change));
                if (image_change)
                        scenario_add_check(x, ps->id, "fail", ps->t0, ps->ev,
                                           "the cell's progress stayed at %ld after its reply, but the kernel is not "
                                           "proven the one the first look saw: %s",
                                           after, image_change);
                else
                        scenario_add_check(x, ps->id, "pass", ps->t0, ps->ev, "%s", ps->pass);
        }
        free(ps);
}

/* Sends the interrupt through one path. *ret_reply gets the interrupt_reply status for control. */
static int send_interrupt(ctx *x, interrupt_path path, char **ret_reply) {
        if (path == PATH_PIDFD)
                return kb_kernel_signal(x->h.kernel, SIGINT);
        return kb_client_interrupt(kb_kernel_client(x->h.kernel),
                                   kb_harness_deadline_in(&x->h, CONTROL_REPLY_TIMEOUT_MS), ret_reply);
}

/* What one interrupt check carries from one step to the next. */
typedef struct interrupt_run {
        interrupt_path path;
        const char *id;
        int64_t t0;
        kb_client *client;
        char progress[64];  /* the long cell's progress file, in the workspace */
        kb_execution *ex;   /* the long cell, once it runs */
        json_object *ev;    /* the evidence, until a check or the pending stop takes it */
        int started;        /* progress_started: 1 (the host saw the count) or -EAGAIN (it did not) */
        int sigint_before;  /* sigint_state before the signal (the pidfd path; 0 on control) */
        bool ignored;       /* the kernel process ignored SIGINT before it was sent */
        int64_t sent;       /* when the interrupt was sent */
        int send_r;         /* what sending it returned */
        int r;              /* how the watch ended: 0 (the cell ended), -ETIMEDOUT (it ran on), -errno */
        bool stopped;       /* the cell ended, and not by running to its end */
        int wait_ms;        /* the watch's last wait */
        char *interrupt_id; /* the interrupt_request's msg_id (control) */
        char *reply_status; /* the interrupt_reply's status (control), or NULL: none came */
        int64_t reply_at;   /* when the host took the interrupt_reply (0: none yet) */
        int64_t decided_at; /* when the watch that decided the check ended */
        bool window;        /* the control path is optional: watched for CONTROL_WINDOW_MS only */
        progress_watch watch;
} interrupt_run;

static void interrupt_run_done(interrupt_run *ir) {
        kb_execution_destroy(ir->client, &ir->ex);
        json_object_put(ir->ev);
        free(ir->interrupt_id);
        free(ir->reply_status);
}

/* An earlier long cell could not be stopped (x->h.wedged): the check fails without a cell. Returns
 * true once it has recorded the check. */
static bool interrupt_wedged(ctx *x, const interrupt_run *ir) {
        if (x->h.wedged && ir->path == PATH_PIDFD && x->died_on_sigint) {
                scenario_add_check(x, ir->id, "fail", ir->t0, NULL,
                                   "the kernel died on SIGINT (sent to free the control path's cell): %s",
                                   x->died_on_sigint);
                return true;
        }
        if (x->h.wedged) {
                scenario_add_check(x, ir->id, "fail", ir->t0, NULL,
                                   ir->path == PATH_PIDFD
                                           ? "SIGINT through the pinned pidfd, sent to free the control path's running "
                                             "cell, did not stop it either"
                                           : "not tested: an earlier long cell could not be stopped");
                return true;
        }
        return false;
}

/* Renders the long cell (its start marker, length, progress file and result marker) and starts it,
 * until its marker. Returns 1 with the cell in ir->ex; else the check is recorded as failed and it
 * returns 0 (the cell finished first) or -errno. */
static int long_cell_start(ctx *x, interrupt_run *ir) {
        const char *word = ir->path == PATH_CONTROL ? "control" : "pidfd";
        char marker[64], progress_inside[PATH_MAX + 64], marker_result[64];
        snprintf(marker, sizeof(marker), "kbound-marker-%s-%.8s", word, x->nonce);
        json_object *params = json_object_new_object();
        json_object_object_add(params, "marker", json_object_new_string(marker));
        json_object_object_add(params, "seconds", json_object_new_int(x->env->long_cell_seconds));
        snprintf(ir->progress, sizeof ir->progress, ".kbound-progress-%s-%.8s", word, x->nonce);
        snprintf(progress_inside, sizeof progress_inside, "%s/%s", x->inside.workspace, ir->progress);
        json_object_object_add(params, "progress", json_object_new_string(progress_inside));
        scenario_result_marker(x, marker_result, sizeof marker_result);
        json_object_object_add(params, "result_marker", json_object_new_string(marker_result));
        _cleanup_free_ char *code = NULL;
        int r = kb_langpack_render(x->lp, "long", params, &code);
        json_object_put(params);
        if (r < 0) {
                scenario_add_check(x, ir->id, "fail", ir->t0, NULL, "cannot render the long cell: %s", strerror(-r));
                return r;
        }
        ir->client = kb_kernel_client(x->h.kernel);
        r = kb_harness_long_start(&x->h, code, marker, &ir->ex);
        if (r != 1) {
                /* The kernel drops SIGINT outside a running cell, so without the marker there is
                 * nothing honest to interrupt. */
                scenario_add_check(x, ir->id, "fail", ir->t0, NULL, "the long cell never printed its start marker (%s)",
                                   r == 0 ? "it finished first" : kb_harness_wait_error(&x->h, r));
                return r;
        }
        return 1;
}

/* The cell ended (r == 0) or its wait failed (r < 0) before any interrupt was sent: the check
 * fails. Returns r. */
static int ended_before_interrupt(ctx *x, interrupt_run *ir, int r) {
        if (r == 0)
                json_object_object_add(ir->ev, "execute_reply_status", json_object_new_string(ir->ex->status));
        scenario_add_check(x, ir->id, "fail", ir->t0, TAKE_PTR(ir->ev), "%s",
                           r == 0 ? "the long cell ended on its own before any interrupt was sent"
                                  : kb_harness_wait_error(&x->h, r));
        return r;
}

/* Before the interrupt: the random hold, the host's sight of the cell's first count and, on the
 * pidfd path, SIGINT's state in the kernel process, into ir->ev (made here). Returns 1 to go on;
 * else the check is recorded as failed and it returns 0 (the cell ended on its own) or -errno. */
static int interrupt_prepare(ctx *x, interrupt_run *ir) {
        ir->ev = json_object_new_object();
        /* The hold: a cell that ends before anything was sent was not stopped by it. */
        int hold = (int) arc4random_uniform(HOLD_MAX_MS + 1);
        json_object_object_add(ir->ev, "hold_ms", json_object_new_int(hold));
        int r = kb_client_execute_wait(ir->client, ir->ex, kb_harness_deadline_in(&x->h, hold), NULL, NULL);
        if (r != -ETIMEDOUT)
                return ended_before_interrupt(x, ir, r);
        /* The host must see the cell go before it can see it stop. */
        ir->started = progress_started(x, ir->ex, ir->progress);
        if (ir->started != 1 && ir->started != -EAGAIN)
                return ended_before_interrupt(x, ir, ir->started);
        json_object_object_add(ir->ev, "progress_seen", json_object_new_boolean(ir->started == 1));
        /* SIGINT can stop the cell only if the kernel process neither ignores it nor leaves it
         * pending: read before sending and after the reply (the host's proof, not the kernel's). */
        ir->sigint_before = ir->path == PATH_PIDFD ? sigint_state(x, "before", ir->ev, &ir->ignored, NULL) : 0;
        if (ir->sigint_before < 0)
                json_object_object_add(ir->ev, "sigint_error", json_object_new_string(strerror(-ir->sigint_before)));
        return 1;
}

/* An interrupt_reply that came after the watch that decided interrupt.control: into its evidence
 * ev as "interrupt_reply_late" {status, after_ms: since the request, when the host took it}. */
static void late_reply_record(json_object *ev, const char *status, int64_t after_ms) {
        json_object *late = json_object_new_object();
        json_object_object_add(late, "status", json_object_new_string(status ? status : ""));
        json_object_object_add(late, "after_ms", json_object_new_int64(after_ms));
        json_object_object_add(ev, "interrupt_reply_late", late);
}

/* Whether the kernelspec's interrupt_mode makes interrupt_request optional (the rule conformance
 * shares: an ignored request is then unsupported, never failed). */
static bool control_optional(const ctx *x) {
        char words[256];
        return strcmp(kb_rules_ignored_control_interrupt(x->spec->interrupt_mode, words, sizeof words),
                      "unsupported") == 0;
}

/* Takes the interrupt_reply to ir's request if it has come (its status and when, into ir). */
static void control_reply_take(interrupt_run *ir) {
        if (ir->reply_at || !ir->interrupt_id)
                return;
        kb_msg *reply = kb_client_reply_take(ir->client, KB_CHANNEL_CONTROL, ir->interrupt_id);
        if (!reply)
                return;
        const char *st = kb_msg_content_string(reply, "status");
        ir->reply_status = strdup(st ? st : "");
        ir->reply_at = kb_now_ms();
        kb_msg_destroy(&reply);
}

/* The watch of a control path the kernel may lack (control_optional): only as long as a kernel
 * that honours interrupt_request takes to answer it (CONTROL_WINDOW_MS), then until the host has
 * read the cell's count move on after that: a step the cell made once the window was over.
 * Returns 0 (the cell ended), 2 (the interrupt_reply came: the kernel took the request, and is
 * watched as any kernel that answers), 1 (no reply, and the cell kept running past the window),
 * -ETIMEDOUT (no step seen within CONTROL_REPLY_TIMEOUT_MS), or -errno. */
static int control_window(ctx *x, interrupt_run *ir) {
        int64_t window_end = ir->sent + CONTROL_WINDOW_MS, until = ir->sent + CONTROL_REPLY_TIMEOUT_MS;
        long at_window = -1; /* the first count the host began to read after the window */
        for (;;) {
                int r = watch_wait(x, ir->ex, &ir->watch, WATCH_SLICE_MS);
                control_reply_take(ir);
                if (r != -ETIMEDOUT)
                        return r; /* it ended, ran its limit of steps, or went away */
                if (ir->reply_at)
                        return 2;
                if (ir->watch.last_ms >= window_end) {
                        if (at_window < 0)
                                at_window = ir->watch.last;
                        else if (ir->watch.last > at_window)
                                return 1;
                }
                if (kb_now_ms() >= until)
                        return -ETIMEDOUT;
        }
}

/* The control path's watch after interrupt_request: the reply is what says the request was taken,
 * so a kernel that has not answered within CONTROL_REPLY_TIMEOUT_MS gets a short grace, one that
 * answered the rest of the timeout; where the path is optional, one that has not answered within
 * the window is not watched further (control_window). An execute_reply at any time in between
 * counts. How long the cell was watched, and the reply's status and time, into ir and ir->ev. */
static void control_watch(ctx *x, interrupt_run *ir) {
        int r = 2;
        ir->window = control_optional(x) && ir->watch.name;
        if (ir->window)
                r = control_window(x, ir);
        if (r == 2) {
                int64_t left = ir->sent + CONTROL_REPLY_TIMEOUT_MS - kb_now_ms();
                r = watch_wait(x, ir->ex, &ir->watch, (int) (left > 0 ? left : 0));
                control_reply_take(ir);
                if (r == -ETIMEDOUT) {
                        ir->wait_ms = ir->reply_at ? ir->wait_ms - CONTROL_REPLY_TIMEOUT_MS : CONTROL_GRACE_MS;
                        r = watch_wait(x, ir->ex, &ir->watch, ir->wait_ms);
                        control_reply_take(ir);
                }
        }
        ir->r = r;
        ir->decided_at = kb_now_ms();
        json_object_object_add(ir->ev, "interrupt_reply",
                               ir->reply_status ? json_object_new_string(ir->reply_status) : NULL);
        json_object_object_add(ir->ev, "interrupt_reply_ms",
                               ir->reply_at ? json_object_new_int64(ir->reply_at - ir->sent) : NULL);
        json_object_object_add(ir->ev, "reply_window_ms", ir->window ? json_object_new_int(CONTROL_WINDOW_MS) : NULL);
        json_object_object_add(ir->ev, "watched_ms", json_object_new_int64(ir->decided_at - ir->sent));
}

/* Sends the interrupt through ir->path, then watches until the cell ends, or its count has moved
 * its limit of steps since (it kept running: the kernel had that much time to act and did not), or
 * the timeout; the interrupt_reply on control is taken whenever it came. How it went into ir (the
 * watch, ir->r, ir->stopped) and ir->ev. */
static void interrupt_send_and_watch(ctx *x, interrupt_run *ir) {
        watch_start(x, &ir->watch, ir->progress, ir->started == 1, ir->path);
        ir->sent = kb_now_ms();
        ir->send_r = ir->path == PATH_PIDFD ? kb_kernel_signal(x->h.kernel, SIGINT)
                                            : kb_client_request_send(ir->client, KB_CHANNEL_CONTROL,
                                                                     "interrupt_request", NULL, &ir->interrupt_id);
        ir->wait_ms = x->env->interrupt_timeout_ms;
        ir->r = -ETIMEDOUT; /* nothing sent: the cell runs on */
        if (ir->send_r >= 0 && ir->path == PATH_PIDFD)
                ir->r = watch_wait(x, ir->ex, &ir->watch, ir->wait_ms);
        else if (ir->send_r >= 0)
                control_watch(x, ir);
        if (ir->send_r < 0)
                json_object_object_add(ir->ev, "send_error", json_object_new_string(strerror(-ir->send_r)));
        json_object_object_add(ir->ev, "steps_after_interrupt", json_object_new_int64(watch_steps(&ir->watch)));
        if (ir->r == 1)
                ir->r = -ETIMEDOUT; /* the count said it kept running */
        ir->stopped = ir->r == 0 && cell_stopped(x, ir->ex);
        if (ir->r == 0)
                json_object_object_add(ir->ev, "execute_reply_status", json_object_new_string(ir->ex->status));
}

/* The reply said the cell stopped, and it is the kernel's word: the host must see the cell's
 * progress stop too. Leaves the check pending in x for scenario_settle_stop (which decides it, a
 * little later), or fails it when the host cannot watch the count. */
static void stop_pending(ctx *x, interrupt_run *ir) {
        const kb_execution *ex = ir->ex;
        long count = ir->started == 1 ? progress_read(x, ir->progress) : -1;
        pending_stop *ps = ir->started == 1 && count >= 0 ? calloc(1, sizeof *ps) : NULL;
        if (!ps) {
                scenario_add_check(x, ir->id, "fail", ir->t0, TAKE_PTR(ir->ev),
                                   "execute_reply status '%s' after %lld ms, but %s%s", ex->status,
                                   (long long) (ex->reply_ms - ir->sent),
                                   ir->started != 1
                                           ? "the host never saw the long cell's progress (its language pack "
                                             "must write the progress file: docs/probes-cells.md), so it cannot "
                                             "see the cell stop"
                                           : "the host could not read the cell's progress file at the reply: ",
                                   ir->started != 1 ? "" : strerror((int) (count < 0 ? -count : ENOMEM)));
                return;
        }
        json_object_object_add(ir->ev, "latency_ms", json_object_new_int64(ex->reply_ms - ir->sent));
        if (ex->ename)
                json_object_object_add(ir->ev, "ename", json_object_new_string(ex->ename));
        snprintf(ps->id, sizeof ps->id, "%s", ir->id);
        snprintf(ps->progress, sizeof ps->progress, "%s", ir->progress);
        ps->at_reply = count;
        ps->reply_at = kb_now_ms();
        ps->t0 = ir->t0;
        ps->ev = TAKE_PTR(ir->ev);
        snprintf(ps->pass, sizeof ps->pass,
                 "%s stopped the running cell: execute_reply status '%s'%s%s after %lld ms, and the host "
                 "saw its progress stay at %ld",
                 ir->path == PATH_CONTROL ? "interrupt_request on control" : "SIGINT through the pinned pidfd",
                 ex->status, ex->ename ? " " : "", ex->ename ? ex->ename : "", (long long) (ex->reply_ms - ir->sent),
                 count);
        x->pending[ir->path] = ps;
}

/* The cell ended, not run to its end. On the pidfd path the signal must be able to have stopped
 * it: the kernel process neither ignored SIGINT before nor left it pending after, else the check
 * fails. Then the host's watch of its progress (stop_pending). */
static void interrupt_stopped(ctx *x, interrupt_run *ir) {
        if (ir->path == PATH_PIDFD) {
                bool pending = false;
                int sa = ir->sigint_before < 0 ? ir->sigint_before : sigint_state(x, "after", ir->ev, NULL, &pending);
                const char *hole = sa < 0        ? "the host could not read the kernel's signal state"
                                   : ir->ignored ? "the kernel process ignores SIGINT (SigIgn), so the signal cannot "
                                                   "have stopped it"
                                   : pending     ? "SIGINT is still pending in the kernel process (never delivered), "
                                                   "so the signal did not stop it"
                                                 : NULL;
                if (hole) {
                        scenario_add_check(x, ir->id, "fail", ir->t0, TAKE_PTR(ir->ev),
                                           "the cell ended (execute_reply status '%s'), but %s%s%s", ir->ex->status,
                                           hole, sa < 0 ? ": " : "", sa < 0 ? strerror(-sa) : "");
                        return;
                }
        }
        stop_pending(x, ir);
}

/* Why the cell, which did not stop, is said not to have: the words of the check's detail. Not an
 * error (nothing here fails): a finding about the kernel, which the check reports as such. */
static void not_stopped_detail(ctx *x, const interrupt_run *ir, char *detail, size_t size) {
        int64_t ran = kb_now_ms() - ir->sent;
        long steps = watch_steps(&ir->watch);
        if (ir->r == 0)
                snprintf(detail, size, "the cell ran to completion (status %s)", ir->ex->status);
        else if (ir->send_r < 0)
                snprintf(detail, size, "the interrupt could not be sent (%s)", strerror(-ir->send_r));
        else if (ir->path == PATH_CONTROL && ir->window && !ir->reply_at)
                snprintf(detail, size,
                         "no interrupt_reply within the %d ms a kernel that honours interrupt_request takes, and "
                         "the host saw the cell keep running (%ld steps over %lld ms after the request)",
                         CONTROL_WINDOW_MS, steps, (long long) (ir->decided_at - ir->sent));
        else if (ir->path == PATH_CONTROL && !ir->reply_status)
                snprintf(detail, size,
                         "no interrupt_reply and the cell kept running (%ld steps over %lld ms after "
                         "the request)",
                         steps, (long long) ran);
        else if (ir->path == PATH_CONTROL)
                snprintf(detail, size, "interrupt_reply '%s' but the cell kept running (%ld steps over %lld ms)",
                         ir->reply_status, steps, (long long) ran);
        else if (steps >= ir->watch.limit)
                snprintf(detail, size, "the cell kept running after the interrupt (%ld steps over %lld ms)", steps,
                         (long long) ran);
        else
                snprintf(detail, size, "the cell kept running %d ms after the interrupt (%s)", ir->wait_ms,
                         kb_harness_wait_error(&x->h, ir->r));
}

/* The cell kept running: it is interrupted through the other path, so the kernel can still be
 * checked. x->h.wedged if that did not stop it either. */
static void unblock_by_other_path(ctx *x, interrupt_run *ir) {
        interrupt_path other = ir->path == PATH_CONTROL ? PATH_PIDFD : PATH_CONTROL;
        (void) send_interrupt(x, other, NULL);
        progress_watch again;
        watch_start(x, &again, ir->progress, ir->started == 1, other);
        int u = watch_wait(x, ir->ex, &again, x->env->interrupt_timeout_ms);
        json_object_object_add(ir->ev, "unblocked_by_other_path", json_object_new_boolean(u == 0));
        if (ir->path == PATH_CONTROL && !ir->reply_at) {
                /* Still listening on control: a reply that comes now came after the watch. */
                control_reply_take(ir);
                if (ir->reply_at)
                        late_reply_record(ir->ev, ir->reply_status, ir->reply_at - ir->sent);
        }
        if (u == -ESRCH && ir->path == PATH_CONTROL) {
                /* The SIGINT meant to free the cell killed the kernel: that is the pidfd
                 * path's verdict, said as such. */
                free(x->died_on_sigint);
                x->died_on_sigint = strdup(kb_harness_wait_error(&x->h, u));
        }
        if (u != 0)
                x->h.wedged = true;
}

/* The cell did not stop: the check fails (or, for an ignored interrupt_request, is unsupported by
 * the rule conformance shares), saying why. */
static void interrupt_not_stopped(ctx *x, interrupt_run *ir) {
        if (ir->r == -ESRCH) {
                /* The interrupt killed it: a kernel must survive its own interrupts. */
                scenario_add_check(x, ir->id, "fail", ir->t0, TAKE_PTR(ir->ev), "the kernel died on %s: %s",
                                   ir->path == PATH_CONTROL ? "interrupt_request" : "SIGINT",
                                   kb_harness_wait_error(&x->h, ir->r));
                return;
        }
        if (ir->r == -ECANCELED) {
                scenario_add_check(x, ir->id, "fail", ir->t0, TAKE_PTR(ir->ev),
                                   "while waiting for the interrupted cell: %s", kb_harness_wait_error(&x->h, ir->r));
                return;
        }
        /* Not stopped: say why, then unblock the cell through the other path. */
        char detail[512];
        not_stopped_detail(x, ir, detail, sizeof detail);
        if (ir->r != 0)
                unblock_by_other_path(x, ir);
        if (ir->path == PATH_CONTROL && ir->reply_at > ir->decided_at) {
                size_t n = strlen(detail);
                snprintf(detail + n, sizeof detail - n, "; its interrupt_reply came later, after SIGINT had been sent");
        }
        /* The same rule as conformance's interrupt.control (rules.c). */
        char rule[256];
        const char *verdict = ir->path == PATH_CONTROL
                                      ? kb_rules_ignored_control_interrupt(x->spec->interrupt_mode, rule, sizeof(rule))
                                      : "fail";
        if (strcmp(verdict, "unsupported") == 0)
                scenario_add_check(x, ir->id, "unsupported", ir->t0, TAKE_PTR(ir->ev), "%s; %s%s", detail, rule,
                                   x->h.wedged ? "; neither path stopped the cell" : "");
        else
                scenario_add_check(x, ir->id, "fail", ir->t0, TAKE_PTR(ir->ev), "%s%s%s", detail,
                                   x->h.wedged ? "; " : "",
                                   x->h.wedged ? "and the other path did not stop it either" : "");
}

void scenario_control_late(ctx *x, bool done) {
        late_reply *l = &x->control_late;
        if (!l->interrupt_id)
                return;
        kb_client *c = x->h.kernel ? kb_kernel_client(x->h.kernel) : NULL;
        kb_msg *reply = c ? kb_client_reply_take(c, KB_CHANNEL_CONTROL, l->interrupt_id) : NULL;
        if (reply) {
                late_reply_record(l->ev, kb_msg_content_string(reply, "status"), kb_now_ms() - l->sent);
                kb_msg_destroy(&reply);
        }
        if (reply || done) {
                free(l->interrupt_id);
                json_object_put(l->ev);
                *l = (late_reply){0};
        }
}

void scenario_check_interrupt(ctx *x, interrupt_path path) {
        _cleanup_(interrupt_run_done) interrupt_run ir = {
                .path = path,
                .id = kb_check_id(path == PATH_CONTROL ? KB_CHECK_INTERRUPT_CONTROL : KB_CHECK_INTERRUPT_PIDFD),
                .t0 = kb_now_ms(),
        };
        if (interrupt_wedged(x, &ir))
                return;
        if (long_cell_start(x, &ir) != 1 || interrupt_prepare(x, &ir) != 1)
                return;
        interrupt_send_and_watch(x, &ir);
        /* The check's evidence, for an interrupt_reply that comes after it was decided. */
        json_object *ev = json_object_get(ir.ev);
        if (ir.stopped)
                interrupt_stopped(x, &ir);
        else
                interrupt_not_stopped(x, &ir);
        if (path == PATH_CONTROL && ir.interrupt_id && !ir.reply_at && ev) {
                scenario_control_late(x, true);
                x->control_late = (late_reply){.interrupt_id = TAKE_PTR(ir.interrupt_id), .sent = ir.sent, .ev = ev};
        } else
                json_object_put(ev);
}
