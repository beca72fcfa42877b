/* scenario_cell.c: what every step of one kernel's run does with the kernel: a check recorded, a
 * look at the whole sandbox from the host (and again whenever its mount table changes while a cell
 * runs), the look before exec, a probe cell run and its result read back, an expectation set for
 * the judge. The steps (scenario.c, scenario_interrupt.c, scenario_end.c) call here; nothing here
 * calls them. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "kbound/inspect.h"
#include "base/cleanup.h"
#include "base/jsonpool.h"
#include "verdict/rules.h"
#include "kbound/kernel.h"
#include "kbound/langpack.h"
#include "kbound/sandbox.h"
#include "run/harness-internal.h"
#include "run/scenario-internal.h"

void scenario_add_check(ctx *x, const char *id, const char *status, int64_t started_ms, json_object *evidence,
                        const char *fmt, ...) {
        char detail[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof(detail), fmt, ap);
        va_end(ap);
        kb_harness_add_check(&x->h, id, status, started_ms, evidence, detail);
}

/* One look at the whole sandbox from the host (inspect.h), kept for the judge. A look that could
 * not even be recorded leaves nothing, and the checks that need one fail for the lack of it. */
void scenario_host_look(ctx *x, const char *label) {
        kb_sandbox *sb = kb_kernel_sandbox(x->h.kernel);
        if (!sb)
                return;
        int64_t t0 = kb_now_ms();
        const kb_secrets *sets[] = {x->env->secrets, x->env->sibling_secrets};
        char shell[256], control[256];
        const char *endpoints[3] = {NULL, NULL, NULL};
        size_t n_ep = 0;
        if (kb_kernel_socket_path(x->h.kernel, KB_CHANNEL_SHELL, shell, sizeof shell) == 0)
                endpoints[n_ep++] = shell;
        if (kb_kernel_socket_path(x->h.kernel, KB_CHANNEL_CONTROL, control, sizeof control) == 0)
                endpoints[n_ep++] = control;
        /* A kernel reached over TCP on the host's loopback (an audit): its addresses instead. */
        if (n_ep == 0 && kb_kernel_tcp_port(x->h.kernel, KB_CHANNEL_SHELL) > 0) {
                snprintf(shell, sizeof shell, "tcp://127.0.0.1:%d", kb_kernel_tcp_port(x->h.kernel, KB_CHANNEL_SHELL));
                snprintf(control, sizeof control, "tcp://127.0.0.1:%d",
                         kb_kernel_tcp_port(x->h.kernel, KB_CHANNEL_CONTROL));
                endpoints[n_ep++] = shell;
                endpoints[n_ep++] = control;
        }
        /* The program kbound handed bwrap, which each process's filters in force are held to where
         * the host can read them; without it they are not read, and a root run's check fails. */
        _cleanup_free_ void *program = NULL;
        size_t program_len = 0;
        if (kb_seccomp_program_read(kb_sandbox_seccomp_program(sb), &program, &program_len) < 0)
                program_len = 0;
        kb_inspect_target t = {
                .proc_root = "/proc",
                .init_pid = kb_sandbox_init_pid(sb),
                .kernel_pid = kb_sandbox_kernel_pid(sb),
                .launcher_pid = kb_sandbox_bwrap_pid(sb),
                .pidns_ino = kb_sandbox_pidns(sb),
                .secrets = sets,
                .n_secrets = KB_ELEMENTSOF(sets),
                .endpoints = endpoints,
                .canaries = x->env->canaries,
                .n_canaries = x->env->n_canaries,
                .socket_claim = kb_check_id(KB_CHECK_SOCKETS),
                .own_runtime = kb_kernel_socket_dir(x->h.kernel),
                .host = x->host,
                .seccomp_program = program,
                .seccomp_program_len = program_len,
        };
        json_object *snap = NULL;
        if (kb_inspect_snapshot(&t, label, &snap) != -ENOMEM && snap) {
                kb_json_pool_intern(x->pool, &snap);
                json_object_array_add(x->snapshots, snap);
        }
        x->inspect_ms += kb_now_ms() - t0;
}

/* The last look, after the interrupts and persistence, while the kernel is alive. A kernel that
 * ends while the host looks (xeus-python ends some time after a SIGINT it did not deliver to the
 * cell, later under load) leaves a look that could not find it by its pinned pid: that look is not
 * kept, as when the kernel ended before it, since what it missed is the kernel's end, which the
 * steps that needed the kernel (an interrupt, the shutdown) already fail for. A look that missed a
 * kernel still alive is kept, and fails every host-judged check. */
void scenario_final_look(ctx *x) {
        if (x->h.cancelled || !kb_kernel_alive(x->h.kernel))
                return;
        size_t n = json_object_array_length(x->snapshots);
        scenario_host_look(x, "final");
        if (json_object_array_length(x->snapshots) <= n)
                return;
        json_object *look = json_object_array_get_idx(x->snapshots, n);
        if (kb_fact_error_find(kb_fact_arr_of(look, FACT_LOOK_ERRORS), WHAT_KERNEL_MISSING, NULL) &&
            !kb_kernel_alive(x->h.kernel)) {
                kb_harness_log(&x->h, KB_LOG_INFO,
                               "the kernel ended while the host took its final look; that look is not kept");
                json_object_array_del_idx(x->snapshots, n, 1);
        }
}

/* Reads what is left of the mountinfo fd, so that poll reports only a later change. */
static void mountinfo_drain(int fd) {
        char buf[8192];
        if (lseek(fd, 0, SEEK_SET) < 0)
                return;
        while (read(fd, buf, sizeof buf) > 0)
                ;
}

/* A mount table can change between two looks (a mount made inside, or one that reached the sandbox
 * anyhow): /proc/<pid>/mountinfo polls POLLPRI when it did, and the host then looks again, so that
 * the judges see every mount table the sandbox had, not only those of the fixed looks. Called
 * between the kernel's messages; at most MOUNT_LOOKS_MAX extra looks. */
#define MOUNT_LOOKS_MAX 8
void scenario_look_if_mounts_changed(ctx *x) {
        if (x->mountinfo_fd < 0 || x->mount_looks >= MOUNT_LOOKS_MAX || !kb_kernel_alive(x->h.kernel))
                return;
        struct pollfd p = {.fd = x->mountinfo_fd, .events = POLLPRI};
        if (poll(&p, 1, 0) <= 0 || !(p.revents & (POLLPRI | POLLERR)))
                return;
        mountinfo_drain(x->mountinfo_fd);
        x->mount_looks++;
        scenario_host_look(x, "mounts changed");
}

/* Opens the kernel's mountinfo for scenario_look_if_mounts_changed (-1 when it cannot: the fixed looks
 * remain). */
void scenario_watch_mounts(ctx *x) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/mountinfo", (int) kb_sandbox_kernel_pid(kb_kernel_sandbox(x->h.kernel)));
        x->mountinfo_fd = open(path, O_RDONLY | O_CLOEXEC);
        if (x->mountinfo_fd >= 0)
                mountinfo_drain(x->mountinfo_fd);
}

/* kb_client_execute_wait's message hook around another (or none): the mounts are watched too. */
typedef struct watched_hook {
        ctx *x;
        int (*fn)(void *userdata, kb_execution *ex, const kb_msg *msg);
        void *userdata;
} watched_hook;

static int watched_msg(void *userdata, kb_execution *ex, const kb_msg *msg) {
        watched_hook *w = userdata;
        scenario_look_if_mounts_changed(w->x);
        return w->fn ? w->fn(w->userdata, ex, msg) : 0;
}

/* The marker a stdout-transport cell prints before its result: fresh per run. */
void scenario_result_marker(const ctx *x, char *buf, size_t size) {
        snprintf(buf, size, "KBOUND-RESULT-%.16s", x->nonce);
}

/* A cell's result: by the pack's transport first, then by the other one (a Python cell falls back
 * to the marked stdout line when the kernel has no IPython display, as a raw xeus-python). Both
 * carry the cell's word alike: neither can pass a check. */
int scenario_cell_result(const ctx *x, const kb_execution *ex, json_object **ret) {
        char marker[64];
        scenario_result_marker(x, marker, sizeof marker);
        bool text_first = x->transport == KB_RESULT_STDOUT;
        int r = text_first ? kb_probe_result_text(ex, marker, ret) : kb_probe_result(ex, ret);
        if (r == -ENOMSG)
                r = text_first ? kb_probe_result(ex, ret) : kb_probe_result_text(ex, marker, ret);
        return r;
}

/* A cell's error quotes the kernel (its exception's name and value): bounded, as every text of the
 * kernel's is, at what one report line of it has always held. */
#define CELL_ERROR_MAX 511

/* r as the cell's error: what fmt formats, cut at CELL_ERROR_MAX bytes. Returns r. */
__attribute__((format(printf, 3, 4))) static int cell_error(kb_error **ret_error, int r, const char *fmt, ...) {
        if (!ret_error)
                return r;
        _cleanup_free_ char *what = NULL;
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&what, fmt, ap) < 0)
                what = NULL; /* vasprintf leaves it undefined on failure */
        va_end(ap);
        if (what && strlen(what) > CELL_ERROR_MAX)
                what[CELL_ERROR_MAX] = '\0';
        return kb_error_make(ret_error, r, "%s", what ? what : strerror(-r));
}

int scenario_run_cell_hooked(ctx *x, const char *cell, json_object *params, int64_t timeout_ms, const cell_hook *hook,
                             json_object **ret, kb_error **ret_error) {
        _cleanup_free_ char *code = NULL;
        _cleanup_json_ json_object *own_params = params ? NULL : json_object_new_object();
        char marker[64];
        scenario_result_marker(x, marker, sizeof marker);
        json_object_object_add(params ? params : own_params, "result_marker", json_object_new_string(marker));
        int r = kb_langpack_render(x->lp, cell, params ? params : own_params, &code);
        if (r < 0)
                return cell_error(ret_error, r, "cannot render cell '%s' from %s: %s", cell, kb_langpack_dir(x->lp),
                                  strerror(-r));
        kb_client *c = kb_kernel_client(x->h.kernel);
        kb_execution *ex = NULL;
        kb_execute_options eo = {.store_history = false, .stop_on_error = false};
        int64_t deadline = kb_harness_deadline_in(&x->h, timeout_ms);
        r = kb_client_execute_start(c, code, &eo, &ex);
        watched_hook w = {.x = x, .fn = hook ? hook->fn : NULL, .userdata = hook ? hook->userdata : NULL};
        if (r >= 0)
                r = kb_client_execute_wait(c, ex, deadline, watched_msg, &w);
        if (r == 1) {
                hook->then(x, hook->userdata);
                w.fn = NULL;
                r = kb_client_execute_wait(c, ex, deadline, watched_msg, &w);
        }
        if (r == -ETIMEDOUT && ex) {
                char what[256];
                kb_execution_explain_timeout(c, ex, what, sizeof(what));
                r = cell_error(ret_error, r, "cell '%s': timed out: %s", cell, what);
        } else if (r < 0) {
                r = cell_error(ret_error, r, "cell '%s': %s", cell, kb_harness_wait_error(&x->h, r));
        } else if (strcmp(ex->status, "ok") != 0) {
                r = cell_error(ret_error, -EPROTO, "cell '%s' ended with status %s%s%s%s%s", cell, ex->status,
                               ex->ename ? ": " : "", ex->ename ? ex->ename : "", ex->evalue ? ": " : "",
                               ex->evalue ? ex->evalue : "");
        } else {
                r = scenario_cell_result(x, ex, ret);
                if (r >= 0)
                        kb_json_pool_intern(x->pool, ret);
                if (r < 0)
                        r = cell_error(ret_error, r, "cell '%s' %s", cell,
                                       r == -ENOMSG ? (x->transport == KB_RESULT_STDOUT ? "printed no result line"
                                                                                        : "published no " KB_PROBE_MIME
                                                                                          " result")
                                                    : "published a malformed or duplicate probe result");
        }
        kb_execution_destroy(c, &ex);
        return r;
}

int scenario_run_cell(ctx *x, const char *cell, json_object *params, int64_t timeout_ms, json_object **ret,
                      kb_error **ret_error) {
        return scenario_run_cell_hooked(x, cell, params, timeout_ms, NULL, ret, ret_error);
}

const char *scenario_image_change(ctx *x, char *buf, size_t size) {
        pid_t kernel = kb_sandbox_kernel_pid(kb_kernel_sandbox(x->h.kernel));
        json_object *first = NULL,
                    *procs = kb_fact_arr_of(json_object_array_get_idx(x->snapshots, 0), FACT_LOOK_PROCESSES);
        for (size_t i = 0; procs && !first && i < json_object_array_length(procs); i++) {
                json_object *p = json_object_array_get_idx(procs, i);
                if (kb_fact_int_or(p, FACT_PROCESS_PID, -1) == kernel)
                        first = kb_fact_obj_of(p, FACT_PROCESS_IMAGE);
        }
        _cleanup_json_ json_object *now = NULL;
        int r = kb_inspect_image("/proc", kernel, &now);
        if (r < 0) {
                snprintf(buf, size, "the host could not read where its image lies now (%s)", strerror(-r));
                return buf;
        }
        return kb_rules_image_change(x->host, first, now, buf, size);
}

/* Each sets one fact of kbound's expectations (EXPECT in facts.def), replacing what was there; a
 * value that could not be made (NULL) leaves the fact null, which every judge reads as not known. */
static void expect_put(ctx *x, kb_fact_id id, json_object *value) {
        json_object_object_add(x->expect, kb_fact_row(id)->key, value);
}

void scenario_expect_int(ctx *x, kb_fact_int f, int64_t v) {
        expect_put(x, f.id, json_object_new_int64(v));
}

void scenario_expect_str(ctx *x, kb_fact_str f, const char *v) {
        expect_put(x, f.id, v ? json_object_new_string(v) : NULL);
}

void scenario_expect_bool(ctx *x, kb_fact_bool f, bool v) {
        expect_put(x, f.id, json_object_new_boolean(v));
}

void scenario_expect_obj(ctx *x, kb_fact_obj f, json_object *v) {
        expect_put(x, f.id, v);
}

void scenario_expect_arr(ctx *x, kb_fact_arr f, json_object *v) {
        expect_put(x, f.id, v);
}

void scenario_expect_drop(ctx *x, kb_fact_id id) {
        json_object_object_del(x->expect, kb_fact_row(id)->key);
}
