/* scenario.c: one kernel's check sequence: launch, identity, boundary probes confirmed from the
 * host, both interrupt paths, namespace persistence; each step becomes a check with evidence. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "kbound/canary.h"
#include "kbound/inspect.h"
#include "kbound/judge.h"
#include "kbound/kernel.h"
#include "kbound/langpack.h"
#include "kbound/sandbox.h"
#include "kbound/scenario.h"
#include "kbound/report.h"
#include "harness-internal.h"
#include "jsonget.h"
#include "procfs.h"
#include "rules.h"

#define CELL_TIMEOUT_MS 60000
#define CHILD_WAIT_S 10
#define CONTROL_REPLY_TIMEOUT_MS 2000
/* After no interrupt_reply: only for an execute_reply already in flight. The cell is watched
 * during the whole reply wait (its reply is recorded as it arrives), so a longer grace would only
 * add idle time for kernels that ignore the request (IRkernel: it cost 1 s of every check). */
#define CONTROL_GRACE_MS 100
/* After the long cell's marker kbound waits a random 0..HOLD_MAX_MS before interrupting: a cell
 * that ends then ended on its own, and a kernel cannot time a fake stop to an interrupt it cannot
 * predict. */
#define HOLD_MAX_MS 200
#define STOP_GRACE_MS 1000
/* lifecycle.shutdown: the reply on control, then the kernel process gone. */
#define SHUTDOWN_REPLY_MS 2000
#define SHUTDOWN_EXIT_MS 5000
#define HOST_MOUNTINFO_MAX (4 * 1024 * 1024)

/* Every check a kernel gets, in the order they run (docs/probes.md). */
static const char *const check_ids[] = {
        "sandbox.backend",        "sandbox.privileges",     "sandbox.session",
        "sandbox.attack_surface", "identity.pid2",          "identity.pidfd",
        "boundary.descriptors",   "boundary.write_outside", "boundary.workspace_writable",
        "boundary.network",       "boundary.sockets",       "boundary.credentials",
        "boundary.cross_team",    "interrupt.control",      "interrupt.pidfd",
        "persistence.namespace",  "lifecycle.shutdown",     NULL,
};

const char *const *kb_scenario_checks(void) {
        return check_ids;
}

/* The twin sandbox of kb_sandbox_lifetime, tried in a thread of its own (lifetime_start). */
typedef struct lifetime_job {
        const kb_sandbox *sb;
        char log[PATH_MAX];
        json_object *ev;
        int r;
        pthread_t thread;
        bool started;
} lifetime_job;

typedef struct ctx {
        const kb_check_env *env;
        const kb_kernelspec *spec;
        kb_langpack *lp;
        kb_result_transport transport; /* how the pack's cells return results */
        bool shut_down;                /* lifecycle.shutdown sent shutdown_request */
        bool no_pack;                  /* no probe set for the language: host-only checks */
        char *died_on_sigint;          /* how the kernel died on the SIGINT that was to unblock a cell */
        kb_harness h;                  /* the kernel, its report object and checks; cancelled, wedged */
        char nonce[33];
        json_object *host;               /* kb_inspect_host: kbound's own namespaces, the host's /proc */
        json_object *snapshots;          /* kb_inspect_snapshot of the sandbox, in the order taken */
        json_object *pre_exec;           /* kb_inspect_pre_exec: the look before the kernel's program ran */
        int64_t pre_exec_ms;             /* what it cost (part of the start-up) */
        int64_t inspect_ms;              /* what the host's looks cost, in total */
        json_object *expect;             /* what kbound arranged and saw outside the cell (judge.h) */
        json_object *probe;              /* the probe cell's result, or NULL */
        char probe_error[512];           /* why there is none */
        struct pending_stop *pending[2]; /* interrupt checks waiting for the host to see the cell stop */
        struct lifetime_job lifetime;    /* the twin sandbox tried beside the interrupt cells */
        int mountinfo_fd;                /* the kernel's mountinfo, polled for changes between the looks */
        int mount_looks;                 /* looks taken because it changed */
} ctx;

static void add_check(ctx *x, const char *id, const char *status, int64_t started_ms, json_object *evidence,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void add_check(ctx *x, const char *id, const char *status, int64_t started_ms, json_object *evidence,
                      const char *fmt, ...) {
        char detail[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof(detail), fmt, ap);
        va_end(ap);
        kb_harness_add_check(&x->h, id, status, started_ms, evidence, detail);
}

/* Appends a check the judge made (NULL: out of memory, recorded as a failure). duration_ms: what
 * gathering its evidence cost (a cell, the host's looks), not the judging, which costs nothing. */
static void add_judged(ctx *x, const char *id, json_object *check, int64_t duration_ms) {
        if (!check) {
                add_check(x, id, "fail", 0, NULL, "out of memory while judging");
                return;
        }
        json_object_object_add(check, "duration_ms", json_object_new_int64(duration_ms));
        json_object *status = NULL, *detail = NULL;
        json_object_object_get_ex(check, "status", &status);
        json_object_object_get_ex(check, "detail", &detail);
        json_object_array_add(x->h.checks, check);
        kb_harness_log(&x->h, strcmp(json_object_get_string(status), "fail") == 0 ? KB_LOG_WARN : KB_LOG_INFO,
                       "%s %s: %s", id, json_object_get_string(status), json_object_get_string(detail));
}

/* One look at the whole sandbox from the host (inspect.h), kept for the judge. A look that could
 * not even be recorded leaves nothing, and the checks that need one fail for the lack of it. */
static void host_look(ctx *x, const char *label) {
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
                .own_runtime = kb_kernel_runtime_dir(x->h.kernel),
                .host = x->host,
        };
        json_object *snap = NULL;
        if (kb_inspect_snapshot(&t, label, &snap) != -ENOMEM && snap)
                json_object_array_add(x->snapshots, snap);
        x->inspect_ms += kb_now_ms() - t0;
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
static void look_if_mounts_changed(ctx *x) {
        if (x->mountinfo_fd < 0 || x->mount_looks >= MOUNT_LOOKS_MAX || !kb_kernel_alive(x->h.kernel))
                return;
        struct pollfd p = {.fd = x->mountinfo_fd, .events = POLLPRI};
        if (poll(&p, 1, 0) <= 0 || !(p.revents & (POLLPRI | POLLERR)))
                return;
        mountinfo_drain(x->mountinfo_fd);
        x->mount_looks++;
        host_look(x, "mounts changed");
}

/* Opens the kernel's mountinfo for look_if_mounts_changed (-1 when it cannot: the fixed looks
 * remain). */
static void watch_mounts(ctx *x) {
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
        look_if_mounts_changed(w->x);
        return w->fn ? w->fn(w->userdata, ex, msg) : 0;
}

/* The host's look while bwrap's init waits on kbound's --block-fd pipe, before anything of the
 * kernel runs (kb_kernel_options.before_exec): every descriptor then must be one kbound handed
 * in, and nothing the kernel does later can hide one (boundary.descriptors). */
static void pre_exec_look(void *userdata, const kb_sandbox *sb) {
        ctx *x = userdata;
        int64_t t0 = kb_now_ms();
        const kb_secrets *sets[] = {x->env->secrets, x->env->sibling_secrets};
        kb_inspect_target t = {
                .proc_root = "/proc",
                .init_pid = kb_sandbox_init_pid(sb),
                .kernel_pid = 0, /* not started yet */
                .launcher_pid = kb_sandbox_bwrap_pid(sb),
                .pidns_ino = kb_sandbox_pidns(sb),
                .secrets = sets,
                .n_secrets = KB_ELEMENTSOF(sets),
        };
        json_object *look = NULL;
        if (kb_inspect_pre_exec(&t, &look) == 0) {
                json_object_put(x->pre_exec);
                x->pre_exec = look;
        }
        x->pre_exec_ms = kb_now_ms() - t0;
        x->inspect_ms += x->pre_exec_ms;
}

/* Something to do while a cell runs, once: when fn says so (it sees every iopub message of the
 * cell), then is called and the wait goes on. */
typedef struct cell_hook {
        kb_iopub_fn fn;
        void *userdata;
        void (*then)(ctx *x, void *userdata);
} cell_hook;

/* The marker a stdout-transport cell prints before its result: fresh per run. */
static void result_marker(const ctx *x, char *buf, size_t size) {
        snprintf(buf, size, "KBOUND-RESULT-%.16s", x->nonce);
}

/* A cell's result: by the pack's transport first, then by the other one (a Python cell falls back
 * to the marked stdout line when the kernel has no IPython display, as a raw xeus-python). Both
 * carry the cell's word alike: neither can pass a check. */
static int cell_result(const ctx *x, const kb_execution *ex, json_object **ret) {
        char marker[64];
        result_marker(x, marker, sizeof marker);
        bool text_first = x->transport == KB_RESULT_STDOUT;
        int r = text_first ? kb_probe_result_text(ex, marker, ret) : kb_probe_result(ex, ret);
        if (r == -ENOMSG)
                r = text_first ? kb_probe_result(ex, ret) : kb_probe_result_text(ex, marker, ret);
        return r;
}

/* Runs one probe cell and returns its result object. On failure *ret_why says what went wrong. */
static int run_cell_hooked(ctx *x, const char *cell, json_object *params, int64_t timeout_ms, const cell_hook *hook,
                           json_object **ret, char *why, size_t why_size) {
        _cleanup_free_ char *code = NULL;
        _cleanup_json_ json_object *own_params = params ? NULL : json_object_new_object();
        char marker[64];
        result_marker(x, marker, sizeof marker);
        json_object_object_add(params ? params : own_params, "result_marker", json_object_new_string(marker));
        int r = kb_langpack_render(x->lp, cell, params ? params : own_params, &code);
        if (r < 0) {
                snprintf(why, why_size, "cannot render cell '%s' from %s: %s", cell, kb_langpack_dir(x->lp),
                         strerror(-r));
                return r;
        }
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
                snprintf(why, why_size, "cell '%s': timed out: %s", cell, what);
        } else if (r < 0) {
                snprintf(why, why_size, "cell '%s': %s", cell, kb_harness_wait_error(&x->h, r));
        } else if (strcmp(ex->status, "ok") != 0) {
                snprintf(why, why_size, "cell '%s' ended with status %s%s%s%s%s", cell, ex->status,
                         ex->ename ? ": " : "", ex->ename ? ex->ename : "", ex->evalue ? ": " : "",
                         ex->evalue ? ex->evalue : "");
                r = -EPROTO;
        } else {
                r = cell_result(x, ex, ret);
                if (r < 0)
                        snprintf(why, why_size, "cell '%s' %s", cell,
                                 r == -ENOMSG
                                         ? (x->transport == KB_RESULT_STDOUT ? "printed no result line"
                                                                             : "published no " KB_PROBE_MIME " result")
                                         : "published a malformed or duplicate probe result");
        }
        kb_execution_destroy(c, &ex);
        return r;
}

static int run_cell(ctx *x, const char *cell, json_object *params, int64_t timeout_ms, json_object **ret, char *why,
                    size_t why_size) {
        return run_cell_hooked(x, cell, params, timeout_ms, NULL, ret, why, why_size);
}

/* ---- what the host arranged and saw outside the cell, for the judge ---- */

/* {"dev": "maj:min", "ino": n} of path (no symlink followed), or NULL. */
static json_object *file_id(const char *path) {
        struct stat st;
        if (!path || lstat(path, &st) < 0)
                return NULL;
        json_object *o = json_object_new_object();
        char dev[32];
        snprintf(dev, sizeof dev, "%u:%u", major(st.st_dev), minor(st.st_dev));
        json_object_object_add(o, "dev", json_object_new_string(dev));
        json_object_object_add(o, "ino", json_object_new_int64((int64_t) st.st_ino));
        return o;
}

static void expect_set(ctx *x, const char *key, json_object *value) {
        json_object_object_add(x->expect, key, value);
}

/* The run's facts every judgement needs, set once the kernel is up. */
static void expect_basics(ctx *x) {
        kb_sandbox *sb = kb_kernel_sandbox(x->h.kernel);
        expect_set(x, "allow_network", json_object_new_boolean(x->env->allow_network));
        expect_set(x, "kernel_pid", json_object_new_int(kb_sandbox_kernel_pid(sb)));
        expect_set(x, "kernel_log", file_id(kb_kernel_log_path(x->h.kernel)));
        expect_set(x, "bwrap", json_object_new_string(x->env->harness.bwrap));
        expect_set(x, "bwrap_version", json_object_new_string(x->env->bwrap_version ? x->env->bwrap_version : "?"));
        expect_set(x, "pidns", json_object_new_int64((int64_t) kb_sandbox_pidns(sb)));
        /* What kbound launched: the running bwrap must be exactly this (sandbox.backend), and hold
         * nothing else before the kernel runs (boundary.descriptors). */
        json_object *launch = NULL;
        if (kb_sandbox_launch_facts(sb) && json_object_deep_copy(kb_sandbox_launch_facts(sb), &launch, NULL) == 0)
                json_object_object_add(launch, "env", kb_inspect_env_digests(kb_sandbox_planned_env(sb)));
        expect_set(x, "launch", launch);
        expect_set(x, "secrets_guarded", json_object_new_int((int) kb_secrets_count(x->env->secrets)));
        expect_set(x, "keyring",
                   json_object_new_string(x->env->keyring_canary == 0 ? "planted in kbound's session keyring"
                                                                      : strerror(-x->env->keyring_canary)));
        json_object *binds = json_object_new_array();
        const char *dirs[][2] = {{"workspace", kb_kernel_workspace(x->h.kernel)},
                                 {"runtime", kb_kernel_runtime_dir(x->h.kernel)}};
        for (size_t i = 0; i < KB_ELEMENTSOF(dirs); i++) {
                json_object *id = file_id(dirs[i][1]);
                if (!id)
                        continue; /* unknown: the bind then counts as foreign, never as the team's */
                json_object_object_add(id, "name", json_object_new_string(dirs[i][0]));
                _cleanup_free_ char *real = realpath(dirs[i][1], NULL);
                json_object_object_add(id, "path", real ? json_object_new_string(real) : NULL);
                json_object_array_add(binds, id);
        }
        expect_set(x, "team_binds", binds);
        /* Where every team's folders are (teams/), and every kbound run's (its parent): as the
         * mount tables name folders, with no link or doubled slash (none found fails closed). */
        _cleanup_free_ char *base = x->env->harness.base_dir ? realpath(x->env->harness.base_dir, NULL) : NULL;
        expect_set(x, "base_dir", base ? json_object_new_string(base) : NULL);
}

/* What the filter refuses (entry name → errno name) and what the policy leaves allowed. */
static void expect_seccomp(ctx *x) {
        const kb_seccomp_policy *policy = x->env->harness.hardening ? &x->env->harness.hardening->seccomp : NULL;
        json_object *seccomp = json_object_new_object(), *blocked = json_object_new_object();
        json_object *not_claimed = json_object_new_array();
        for (size_t i = 0; i < kb_seccomp_entry_count(); i++) {
                const kb_seccomp_entry *e = kb_seccomp_entry_at(i);
                if (kb_seccomp_blocks(policy, e))
                        json_object_object_add(blocked, e->name, json_object_new_string(strerrorname_np(e->errnum)));
        }
        for (char *const *a = policy ? policy->allow : NULL; a && *a; a++)
                json_object_array_add(not_claimed, json_object_new_string(*a));
        /* Families the default policy refuses and this one allows (--sockets inet): not claimed. */
        const kb_seccomp_policy strict = {.sockets = KB_SECCOMP_SOCKETS_DEFAULT};
        for (size_t i = 0; i < kb_seccomp_entry_count(); i++) {
                const kb_seccomp_entry *e = kb_seccomp_entry_at(i);
                if (e->match == KB_SECCOMP_MATCH_FAMILY && kb_seccomp_blocks(&strict, e) &&
                    !kb_seccomp_blocks(policy, e))
                        json_object_array_add(not_claimed, json_object_new_string(e->name));
        }
        json_object_object_add(seccomp, "blocked", blocked);
        json_object_object_add(seccomp, "not_claimed", not_claimed);
        json_object_object_add(seccomp, "sockets",
                               json_object_new_string(kb_seccomp_sockets_to_string(policy ? policy->sockets : 0)));
        expect_set(x, "seccomp", seccomp);
}

/* The attack-surface cell: its spawned program (and, in languages that can, the kernel itself)
 * tries every refused call and family. */
static void surface_cell(ctx *x) {
        char why[512];
        json_object *params = json_object_new_object(), *result = NULL;
        json_object_object_add(params, "program",
                               json_object_new_string(x->env->syscall_probe ? KB_SANDBOX_PROBE_PROGRAM : ""));
        /* For a language that can make raw calls in the kernel's own process: each refused call with
         * its number on this ABI (-1: none here) and each refused family. */
        const kb_seccomp_policy *policy = x->env->harness.hardening ? &x->env->harness.hardening->seccomp : NULL;
        json_object *calls = json_object_new_array(), *families = json_object_new_array();
        for (size_t i = 0; i < kb_seccomp_entry_count(); i++) {
                const kb_seccomp_entry *e = kb_seccomp_entry_at(i);
                if (!kb_seccomp_blocks(policy, e))
                        continue;
                json_object *o = json_object_new_object();
                json_object_object_add(o, "name", json_object_new_string(e->name));
                if (e->match == KB_SECCOMP_MATCH_FAMILY) {
                        json_object_object_add(o, "family", json_object_new_int64((int64_t) e->value));
                        json_object_array_add(families, o);
                        continue;
                }
                int nr = kb_seccomp_entry_syscall_nr(e);
                json_object_object_add(o, "nr", json_object_new_int(nr < 0 ? -1 : nr));
                json_object_object_add(o, "value", json_object_new_int64((int64_t) e->value));
                json_object_object_add(o, "errno", json_object_new_string(strerrorname_np(e->errnum)));
                json_object_array_add(calls, o);
        }
        json_object_object_add(params, "calls", calls);
        json_object_object_add(params, "families", families);
        int r = x->env->syscall_probe
                        ? run_cell(x, "attack_surface", params, CELL_TIMEOUT_MS, &result, why, sizeof(why))
                        : (snprintf(why, sizeof why, "kbound's syscall probe program was not found"), -ENOENT);
        json_object_put(params);
        if (r < 0) {
                json_object *e = json_object_new_object();
                json_object_object_add(e, "error", json_object_new_string(why));
                expect_set(x, "surface", e);
                return;
        }
        expect_set(x, "surface", result);
}

/* Adds a check the judge made, in the scenario's order of checks. */
static void judged(ctx *x, const char *id, json_object *(*judge)(const kb_judge_input *), int64_t duration_ms) {
        kb_judge_input in = {.host = x->host,
                             .snapshots = x->snapshots,
                             .probe = x->probe,
                             .probe_error = x->probe_error[0] ? x->probe_error : NULL,
                             .expect = x->expect,
                             .cells_absent = x->no_pack ? "no probe set for the kernel's language" : NULL,
                             .pre_exec = x->pre_exec};
        json_object *check = judge(&in), *status = NULL, *detail = NULL;
        /* Without a pack a pass rests on the host's evidence alone: say so in its words. */
        if (check && x->no_pack && json_object_object_get_ex(check, "status", &status) &&
            strcmp(json_object_get_string(status), "pass") == 0 &&
            json_object_object_get_ex(check, "detail", &detail)) {
                char *text = NULL;
                if (asprintf(&text, "%s (the host's evidence only: no cell ran, no probe set for language '%s')",
                             json_object_get_string(detail), x->spec->language ? x->spec->language : "?") >= 0) {
                        json_object_object_add(check, "detail", json_object_new_string(text));
                        free(text);
                }
        }
        add_judged(x, id, check, duration_ms);
}

/* sandbox.attack_surface for a kernel without a pack: the host's part (seccomp mode and filter
 * count of every process) can fail it; the tries need a cell, so a host part that holds leaves the
 * check untested. */
static void untested_without_pack(ctx *x, const char *id, const char *what);
static void surface_host_only(ctx *x) {
        kb_judge_input in = {.host = x->host,
                             .snapshots = x->snapshots,
                             .expect = x->expect,
                             .cells_absent = "no probe set for the kernel's language"};
        json_object *check = kb_judge_attack_surface(&in), *status = NULL;
        if (check && json_object_object_get_ex(check, "status", &status) &&
            strcmp(json_object_get_string(status), "pass") == 0) {
                json_object_put(check);
                untested_without_pack(x, "sandbox.attack_surface",
                                      "trying the refused calls (the host saw every process under kbound's filter)");
                return;
        }
        add_judged(x, "sandbox.attack_surface", check, 0);
}

/* A check that needs a cell, for a kernel without a pack: untested, saying which folder to add. */
static void untested_without_pack(ctx *x, const char *id, const char *what) {
        add_check(x, id, "untested", kb_now_ms(), NULL,
                  "%s needs a cell, and there is no probe set for language '%s': add kernels/%s/ with kbound.json and "
                  "the cells (docs/probes-cells.md)",
                  what, x->spec->language ? x->spec->language : "?",
                  x->spec->language ? x->spec->language : "<language>");
}

/* ---- identity ---- */

static void identity_cell(ctx *x) {
        char why[512];
        json_object *result = NULL;
        if (run_cell(x, "identity", NULL, CELL_TIMEOUT_MS, &result, why, sizeof(why)) < 0) {
                json_object *e = json_object_new_object();
                json_object_object_add(e, "error", json_object_new_string(why));
                expect_set(x, "identity", e);
                return;
        }
        expect_set(x, "identity", result);
}

static void check_pidfd(ctx *x) {
        int64_t t0 = kb_now_ms();
        kb_sandbox *sb = kb_kernel_sandbox(x->h.kernel);
        int r = kb_sandbox_verify(sb);
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "pidfd", json_object_new_int(kb_sandbox_pidfd(sb)));
        json_object_object_add(ev, "kernel_host_pid", json_object_new_int(kb_sandbox_kernel_pid(sb)));
        if (r == 0)
                add_check(x, "identity.pidfd", "pass", t0, ev,
                          "pidfd pinned to host pid %d: alive, PID 2 of the sandbox's pid namespace",
                          (int) kb_sandbox_kernel_pid(sb));
        else
                add_check(x, "identity.pidfd", "fail", t0, ev, "the pinned pidfd %s",
                          r == -ESRCH ? "refers to a process that has exited"
                                      : "no longer refers to PID 2 of the sandbox");
}

/* ---- the probe cell, with the host's look while its child is alive ---- */

typedef struct child_watch {
        char marker[64];
        char go_host[PATH_MAX]; /* the go file, as the host sees it */
        bool seen;
} child_watch;

static int child_marker_seen(void *userdata, kb_execution *ex, const kb_msg *msg) {
        child_watch *w = userdata;
        if (w->seen || !ex->stdout_text)
                return 0;
        const char *m = strstr(ex->stdout_text, w->marker);
        if (!m || !strchr(m, '\n'))
                return 0; /* the whole line, pid included */
        w->seen = true;
        return 1;
}

/* The cell's child is alive and waits: look at the sandbox, then let it go on. */
static void child_alive(ctx *x, void *userdata) {
        child_watch *w = userdata;
        host_look(x, "child alive");
        /* O_EXCL|O_NOFOLLOW in the team's workspace: never through something the kernel planted. */
        int fd = open(w->go_host, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0)
                close(fd);
}

/* Looks for the cell's escape file where the host can see it; removes what it finds. */
static void confirm_escapes(ctx *x, json_object *result, const char *escape_name) {
        json_object *seen = json_object_new_array();
        json_object *attempts = kb_json_get(result, "write_outside");
        size_t n = attempts && json_object_is_type(attempts, json_type_array) ? json_object_array_length(attempts) : 0;
        json_object *dirs = x->env->escape_dirs;
        size_t n_dirs = dirs ? json_object_array_length(dirs) : 0;
        for (size_t i = 0; i < n_dirs + n; i++) {
                const char *dir = i < n_dirs ? json_object_get_string(json_object_array_get_idx(dirs, i))
                                             : kb_json_str(json_object_array_get_idx(attempts, i - n_dirs), "path");
                _cleanup_free_ char *p = NULL;
                struct stat st;
                /* The path is the cell's word: nothing with ".." is joined to a host path. */
                if (!dir || dir[0] != '/' || strstr(dir, "..") || asprintf(&p, "%s/%s", dir, escape_name) < 0)
                        continue;
                if (lstat(p, &st) == 0) {
                        json_object_array_add(seen, json_object_new_string(p));
                        unlink(p);
                }
        }
        /* With an image as root, the host path of an in-sandbox /usr/x is <rootfs>/usr/x. */
        for (size_t i = 0; x->env->harness.rootfs && i < n; i++) {
                const char *dir = kb_json_str(json_object_array_get_idx(attempts, i), "path");
                _cleanup_free_ char *p = NULL;
                struct stat st;
                if (dir && dir[0] == '/' && !strstr(dir, "..") &&
                    asprintf(&p, "%s%s/%s", x->env->harness.rootfs, dir, escape_name) >= 0 && lstat(p, &st) == 0) {
                        char line[PATH_MAX + 64];
                        snprintf(line, sizeof line, "%s (the cell's file landed in the image)", p);
                        json_object_array_add(seen, json_object_new_string(line));
                        unlink(p);
                }
        }
        expect_set(x, "escapes_seen", seen);
        expect_set(x, "escape_dirs", json_object_new_int((int) n_dirs));
}

/* The host reads the cell's nonce back from the workspace (a regular file only: the kernel owns the
 * folder and could leave a FIFO there). */
static void read_back_workspace(ctx *x, const char *file_name) {
        _cleanup_free_ char *path = NULL, *content = NULL;
        bool ok = false;
        if (asprintf(&path, "%s/%s", kb_kernel_workspace(x->h.kernel), file_name) >= 0 &&
            kb_read_file(AT_FDCWD, path, O_NOFOLLOW, 4096, &content, NULL) == 0) {
                content[strcspn(content, "\r\n")] = '\0';
                ok = strcmp(content, x->nonce) == 0;
        }
        expect_set(x, "workspace_read_back", json_object_new_boolean(ok));
}

static void run_probe(ctx *x) {
        kb_canary_net *canary = NULL;
        char escape_name[64], file_name[64];
        snprintf(escape_name, sizeof(escape_name), "kbound-escape-%.16s", x->nonce);
        snprintf(file_name, sizeof(file_name), "kbound-probe-%.16s.txt", x->nonce);
        child_watch watch = {.seen = false};
        snprintf(watch.marker, sizeof watch.marker, "kbound-child-%.12s", x->nonce);
        char go_name[64];
        snprintf(go_name, sizeof go_name, ".kbound-go-%.16s", x->nonce);
        snprintf(watch.go_host, sizeof watch.go_host, "%s/%s", kb_kernel_workspace(x->h.kernel), go_name);

        json_object *params = json_object_new_object();
        json_object_object_add(params, "workspace", json_object_new_string(KB_SANDBOX_WORKSPACE));
        json_object_object_add(params, "nonce", json_object_new_string(x->nonce));
        json_object_object_add(params, "workspace_file", json_object_new_string(file_name));
        json_object_object_add(params, "escape_name", json_object_new_string(escape_name));
        json_object_object_add(params, "escape_dirs", json_object_get(x->env->escape_dirs));
        json_object *skip = json_object_new_array();
        json_object_array_add(skip, json_object_new_string(KB_SANDBOX_WORKSPACE));
        json_object_array_add(skip, json_object_new_string(KB_SANDBOX_RUNTIME));
        json_object_object_add(params, "skip_mounts", skip);
        json_object_object_add(params, "credential_paths", json_object_get(x->env->credential_paths));
        json_object_object_add(params, "sibling_paths", json_object_get(x->env->sibling_paths));
        json_object_object_add(params, "timeout_ms", json_object_new_int(1000));
        /* Opened for writing, never written: the settings a root kernel could turn into an escape
         * (core_pattern runs a program as host root) or a machine-wide change. */
        json_object *sysctl = json_object_new_array();
        json_object_array_add(sysctl, json_object_new_string("/proc/sys/kernel/core_pattern"));
        json_object_array_add(sysctl, json_object_new_string("/proc/sys/vm/swappiness"));
        json_object_array_add(sysctl, json_object_new_string("/proc/sysrq-trigger"));
        json_object_object_add(params, "sysctl_paths", sysctl);
        if (x->env->keyring_canary_name)
                json_object_object_add(params, "keyring_canary", json_object_new_string(x->env->keyring_canary_name));
        json_object_object_add(params, "child_marker", json_object_new_string(watch.marker));
        char go_inside[128];
        snprintf(go_inside, sizeof go_inside, "%s/%s", KB_SANDBOX_WORKSPACE, go_name);
        json_object_object_add(params, "child_go", json_object_new_string(go_inside));
        /* The child waits this long for the host's look: ample for a marker on iopub and a look of
         * tens of ms on a loaded machine; a kernel that loses the marker costs no more. */
        json_object_object_add(params, "child_wait_s", json_object_new_int(CHILD_WAIT_S));
        int r = kb_canary_net_open(&canary);
        if (r >= 0)
                r = kb_canary_net_params(canary, params);
        if (r < 0) {
                snprintf(x->probe_error, sizeof x->probe_error, "cannot open the host's loopback canaries: %s",
                         strerror(-r));
                json_object_put(params);
                return;
        }
        expect_set(x, "abstract_canaries", json_object_get(kb_json_get(params, "abstract_sockets")));
        cell_hook hook = {.fn = child_marker_seen, .userdata = &watch, .then = child_alive};
        r = run_cell_hooked(x, "probe", params, CELL_TIMEOUT_MS, &hook, &x->probe, x->probe_error,
                            sizeof x->probe_error);
        json_object_put(params);
        if (r < 0)
                x->probe = NULL;
        else
                x->probe_error[0] = '\0';
        /* What the host sees now: the canaries' counts, escape files, the workspace nonce. */
        unsigned tcp_hits = 0, unix_hits = 0;
        kb_canary_net_count(canary, &tcp_hits, &unix_hits);
        json_object *conn = json_object_new_object();
        json_object_object_add(conn, "tcp", json_object_new_int((int) tcp_hits));
        json_object_object_add(conn, "unix", json_object_new_int((int) unix_hits));
        expect_set(x, "canary_connections", conn);
        kb_canary_net_destroy(&canary);
        unlink(watch.go_host);
        confirm_escapes(x, x->probe, escape_name);
        read_back_workspace(x, file_name);
        /* The secrets are searched for by the host: the cell never learns them. */
        if (x->probe) {
                json_object *found = kb_secrets_scan(x->env->secrets, x->probe);
                json_object *sibling = kb_secrets_scan(x->env->sibling_secrets, x->probe);
                /* A scan that could not run finds something: never a pass for want of memory. */
                if (!found && (found = json_object_new_array()))
                        json_object_array_add(found, json_object_new_string("(the search ran out of memory)"));
                if (!sibling && (sibling = json_object_new_array()))
                        json_object_array_add(sibling, json_object_new_string("(the search ran out of memory)"));
                expect_set(x, "secrets_in_probe", found);
                expect_set(x, "sibling_in_probe", sibling);
                json_object_object_add(x->h.k, "process", json_object_get(kb_json_get(x->probe, "process")));
        }
}

/* ---- interrupts ---- */

typedef enum { PATH_CONTROL, PATH_PIDFD } interrupt_path;

/* True if the long cell ran to its end instead of being stopped. */
static bool cell_completed(const ctx *x, const kb_execution *ex) {
        json_object *result = NULL;
        if (cell_result(x, ex, &result) < 0)
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

/* The long cell prints a tick line every 50 ms while it runs: TICKS_KEPT_RUNNING ticks after an
 * interrupt (about half a second of the cell's own progress, longer under load) say it kept
 * running. */
#define TICKS_KEPT_RUNNING 10
typedef struct ticks_watch {
        ctx *x;
        const char *tick;
        size_t from; /* stdout_len when the interrupt was sent */
        int needed, seen;
} ticks_watch;

static int ticks_seen(void *userdata, kb_execution *ex, const kb_msg *msg) {
        ticks_watch *tw = userdata;
        look_if_mounts_changed(tw->x);
        tw->seen = 0;
        if (!ex->stdout_text || ex->stdout_len <= tw->from)
                return 0;
        for (const char *p = ex->stdout_text + tw->from; (p = strstr(p, tw->tick)); p += strlen(tw->tick))
                tw->seen++;
        return tw->seen >= tw->needed;
}

/* The long cell writes its tick count to a progress file in the workspace (renamed into place) and
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
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", kb_kernel_workspace(x->h.kernel), name);
        _cleanup_free_ char *text = NULL;
        int r = kb_read_file(AT_FDCWD, path, O_NOFOLLOW, PROGRESS_MAX, &text, NULL);
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
                look_if_mounts_changed(x);
                if (kb_now_ms() >= until)
                        return -EAGAIN;
                int r = kb_client_execute_wait(kb_kernel_client(x->h.kernel), ex, kb_harness_deadline_in(&x->h, 10),
                                               NULL, NULL);
                if (r != -ETIMEDOUT)
                        return r;
        }
        return 1;
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
static void settle_stop(ctx *x, interrupt_path path) {
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
                add_check(x, ps->id, "fail", ps->t0, ps->ev,
                          "the cell's reply said it stopped, but the host could not read its progress file again (%s)",
                          strerror((int) -after));
        else if (after != ps->at_reply)
                add_check(x, ps->id, "fail", ps->t0, ps->ev,
                          "the cell's reply said it stopped, but the host saw the cell go on: its progress went from "
                          "%ld to %ld in the %lld ms after the reply",
                          ps->at_reply, after, (long long) waited);
        else
                add_check(x, ps->id, "pass", ps->t0, ps->ev, "%s", ps->pass);
        free(ps);
}

/* Sends the interrupt through one path. *ret_reply gets the interrupt_reply status for control. */
static int send_interrupt(ctx *x, interrupt_path path, char **ret_reply) {
        if (path == PATH_PIDFD)
                return kb_kernel_signal(x->h.kernel, SIGINT);
        return kb_client_interrupt(kb_kernel_client(x->h.kernel),
                                   kb_harness_deadline_in(&x->h, CONTROL_REPLY_TIMEOUT_MS), ret_reply);
}

static void check_interrupt(ctx *x, interrupt_path path) {
        const char *id = path == PATH_CONTROL ? "interrupt.control" : "interrupt.pidfd";
        int64_t t0 = kb_now_ms();
        char marker[64], why[512];
        snprintf(marker, sizeof(marker), "kbound-marker-%s-%.8s", path == PATH_CONTROL ? "control" : "pidfd", x->nonce);
        if (x->h.wedged && path == PATH_PIDFD && x->died_on_sigint) {
                add_check(x, id, "fail", t0, NULL,
                          "the kernel died on SIGINT (sent to free the control path's cell): %s", x->died_on_sigint);
                return;
        }
        if (x->h.wedged) {
                add_check(x, id, "fail", t0, NULL, "not tested: an earlier long cell could not be stopped");
                return;
        }
        json_object *params = json_object_new_object();
        json_object_object_add(params, "marker", json_object_new_string(marker));
        json_object_object_add(params, "seconds", json_object_new_int(x->env->long_cell_seconds));
        char tick[64];
        snprintf(tick, sizeof(tick), "kbound-tick-%.8s", x->nonce);
        json_object_object_add(params, "tick", json_object_new_string(tick));
        char progress[64], progress_inside[96];
        snprintf(progress, sizeof progress, ".kbound-progress-%s-%.8s", path == PATH_CONTROL ? "control" : "pidfd",
                 x->nonce);
        snprintf(progress_inside, sizeof progress_inside, "%s/%s", KB_SANDBOX_WORKSPACE, progress);
        json_object_object_add(params, "progress", json_object_new_string(progress_inside));
        char marker_result[64];
        result_marker(x, marker_result, sizeof marker_result);
        json_object_object_add(params, "result_marker", json_object_new_string(marker_result));
        _cleanup_free_ char *code = NULL;
        int r = kb_langpack_render(x->lp, "long", params, &code);
        json_object_put(params);
        if (r < 0) {
                add_check(x, id, "fail", t0, NULL, "cannot render the long cell: %s", strerror(-r));
                return;
        }
        kb_client *c = kb_kernel_client(x->h.kernel);
        kb_execution *ex = NULL;
        r = kb_harness_long_start(&x->h, code, marker, &ex);
        if (r != 1) {
                /* The kernel drops SIGINT outside a running cell, so without the marker there is
                 * nothing honest to interrupt. */
                add_check(x, id, "fail", t0, NULL, "the long cell never printed its start marker (%s)",
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
                add_check(x, id, "fail", t0, ev, "%s",
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
                add_check(x, id, "fail", t0, ev, "%s",
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
        /* Sent, then watched until the cell ends, or it has printed TICKS_KEPT_RUNNING ticks since
         * (it kept running: the kernel had that much time to act and did not), or the timeout.
         * The interrupt_reply on control is taken whenever it came. The ticks can only shorten a
         * wait that ends in "kept running": no pass rests on them. */
        int64_t sent = kb_now_ms();
        _cleanup_free_ char *reply_status = NULL, *interrupt_id = NULL;
        int sr = path == PATH_PIDFD
                         ? kb_kernel_signal(x->h.kernel, SIGINT)
                         : kb_client_request_send(c, KB_CHANNEL_CONTROL, "interrupt_request", NULL, &interrupt_id);
        ticks_watch tw = {.x = x, .tick = tick, .from = ex->stdout_len, .needed = TICKS_KEPT_RUNNING};
        int wait_ms = x->env->interrupt_timeout_ms;
        r = -ETIMEDOUT; /* nothing sent: the cell runs on */
        if (sr >= 0 && path == PATH_PIDFD)
                r = kb_client_execute_wait(c, ex, kb_harness_deadline_in(&x->h, wait_ms), ticks_seen, &tw);
        else if (sr >= 0) {
                /* The reply is what says the request was taken: a kernel that has not answered
                 * within CONTROL_REPLY_TIMEOUT_MS gets a short grace, one that answered the rest of
                 * the timeout. An execute_reply at any time in between counts. */
                r = kb_client_execute_wait(c, ex, kb_harness_deadline_in(&x->h, CONTROL_REPLY_TIMEOUT_MS), ticks_seen,
                                           &tw);
                kb_msg *reply = kb_client_reply_take(c, KB_CHANNEL_CONTROL, interrupt_id);
                if (r == -ETIMEDOUT) {
                        wait_ms = reply ? wait_ms - CONTROL_REPLY_TIMEOUT_MS : CONTROL_GRACE_MS;
                        r = kb_client_execute_wait(c, ex, kb_harness_deadline_in(&x->h, wait_ms > 0 ? wait_ms : 0),
                                                   ticks_seen, &tw);
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
        json_object_object_add(ev, "ticks_after_interrupt", json_object_new_int(tw.seen));
        if (r == 1)
                r = -ETIMEDOUT; /* the ticks said it kept running */
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
                        add_check(x, id, "fail", t0, ev, "the cell ended (execute_reply status '%s'), but %s%s%s",
                                  ex->status, hole, sa < 0 ? ": " : "", sa < 0 ? strerror(-sa) : "");
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
                        add_check(x, id, "fail", t0, ev, "execute_reply status '%s' after %lld ms, but %s%s",
                                  ex->status, (long long) (ex->reply_ms - sent),
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
                add_check(x, id, "fail", t0, ev, "the kernel died on %s: %s",
                          path == PATH_CONTROL ? "interrupt_request" : "SIGINT", kb_harness_wait_error(&x->h, r));
                kb_execution_destroy(c, &ex);
                return;
        }
        if (r == -ECANCELED) {
                add_check(x, id, "fail", t0, ev, "while waiting for the interrupted cell: %s",
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
                         "no interrupt_reply and the cell kept running (%d ticks over %lld ms after "
                         "the request)",
                         tw.seen, (long long) ran);
        else if (path == PATH_CONTROL)
                snprintf(why, sizeof(why), "interrupt_reply '%s' but the cell kept running (%d ticks over %lld ms)",
                         reply_status, tw.seen, (long long) ran);
        else if (tw.seen >= tw.needed)
                snprintf(why, sizeof(why), "the cell kept running after the interrupt (%d ticks over %lld ms)", tw.seen,
                         (long long) ran);
        else
                snprintf(why, sizeof(why), "the cell kept running %d ms after the interrupt (%s)", wait_ms,
                         kb_harness_wait_error(&x->h, r));
        if (r != 0) {
                (void) send_interrupt(x, path == PATH_CONTROL ? PATH_PIDFD : PATH_CONTROL, NULL);
                ticks_watch again = {.x = x, .tick = tick, .from = ex->stdout_len, .needed = TICKS_KEPT_RUNNING};
                int u = kb_client_execute_wait(c, ex, kb_harness_deadline_in(&x->h, x->env->interrupt_timeout_ms),
                                               ticks_seen, &again);
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
                add_check(x, id, "unsupported", t0, ev, "%s; %s%s", why, rule,
                          x->h.wedged ? "; neither path stopped the cell" : "");
        else
                add_check(x, id, "fail", t0, ev, "%s%s%s", why, x->h.wedged ? "; " : "",
                          x->h.wedged ? "and the other path did not stop it either" : "");
        kb_execution_destroy(c, &ex);
}

static void check_persistence(ctx *x) {
        int64_t t0 = kb_now_ms();
        char why[512];
        json_object *result = NULL;
        if (x->h.wedged) {
                add_check(x, "persistence.namespace", "fail", t0, NULL,
                          "not tested: a long cell could not be stopped, so the kernel cannot answer");
                return;
        }
        int r = run_cell(x, "get_var", NULL, CELL_TIMEOUT_MS, &result, why, sizeof(why));
        if (r < 0) {
                add_check(x, "persistence.namespace", "fail", t0, NULL, "%s", why);
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
                add_check(x, "persistence.namespace", "fail", t0, ev, "the variable set before the interrupts %s",
                          value ? "changed" : "is gone");
        else if (pid != 2)
                add_check(x, "persistence.namespace", "fail", t0, ev, "the answering kernel is pid %lld, not 2",
                          (long long) pid);
        else if (v != 0)
                add_check(x, "persistence.namespace", "fail", t0, ev,
                          "the pinned pidfd no longer refers to the same live PID 2");
        else
                add_check(x, "persistence.namespace", "pass", t0, ev,
                          "after both interrupts the pinned PID 2 is the same live process and the nonce set before "
                          "reads back over kbound's connections to it (the kernel says pid 2)");
        json_object_put(result);
}

/* lifecycle.shutdown: shutdown_request on control is answered, and the kernel process (the pinned
 * PID 2, seen through its pidfd) is gone within SHUTDOWN_EXIT_MS of the reply. */
static void check_shutdown(ctx *x) {
        int64_t t0 = kb_now_ms();
        if (x->h.wedged) {
                add_check(x, "lifecycle.shutdown", "fail", t0, NULL,
                          "not tested: a long cell could not be stopped, so the kernel cannot answer");
                return;
        }
        json_object *ev = json_object_new_object();
        int r = kb_client_shutdown(kb_kernel_client(x->h.kernel), kb_harness_deadline_in(&x->h, SHUTDOWN_REPLY_MS));
        int64_t replied = kb_now_ms();
        x->shut_down = true;
        if (r == -ESRCH) {
                add_check(x, "lifecycle.shutdown", "fail", t0, ev,
                          "the kernel died before it answered shutdown_request: %s", kb_harness_wait_error(&x->h, r));
                return;
        }
        if (r < 0) {
                add_check(x, "lifecycle.shutdown", "fail", t0, ev, "no shutdown_reply on control within %d ms (%s)",
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
                add_check(x, "lifecycle.shutdown", "fail", t0, ev,
                          "shutdown_reply came after %lld ms, but the kernel process was still running %d ms later",
                          (long long) (replied - t0), SHUTDOWN_EXIT_MS);
                return;
        }
        int64_t gone = kb_now_ms();
        json_object_object_add(ev, "exit_ms", json_object_new_int64(gone - replied));
        add_check(x, "lifecycle.shutdown", "pass", t0, ev,
                  "shutdown_request on control answered in %lld ms; the kernel process (pinned pidfd) exited %lld ms "
                  "later",
                  (long long) (replied - t0), (long long) (gone - replied));
}

/* True if the report already has a check with this id. */
static void set_error(ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A kernel that died at start-up (r, diagnosis) after the look before exec saw what bwrap's init
 * holds outside the sandbox: that is often why it died, and a finding about the sandbox in any
 * case, not a machine that cannot enforce. Fails sandbox.backend (the reason first, then the
 * diagnosis) and boundary.descriptors; true if so. */
static bool start_failed_by_sandbox(ctx *x, int r, const char *diagnosis) {
        _cleanup_free_ char *reason = x->pre_exec ? kb_judge_pre_exec_reason(x->pre_exec) : NULL;
        if (!reason)
                return false;
        const char *why = diagnosis ? diagnosis : strerror(-r);
        set_error(x, "cannot start in the sandbox: before the kernel ran, the host saw %s; %s", reason, why);
        add_check(x, "sandbox.backend", "fail", 0, NULL, "before the kernel ran, the host saw %s; %s", reason, why);
        add_check(x, "boundary.descriptors", "fail", 0, NULL, "before the kernel ran, %s", reason);
        return true;
}

/* The twin sandbox of kb_sandbox_lifetime, tried in a thread of its own while the interrupt cells
 * run (it mostly waits on bwrap, so it costs the run no wall time); its evidence becomes expect
 * "lifetime" for sandbox.session. */
static void *lifetime_thread(void *arg) {
        lifetime_job *j = arg;
        j->r = kb_sandbox_lifetime(j->sb, j->log, &j->ev);
        return NULL;
}

static void lifetime_start(ctx *x) {
        lifetime_job *j = &x->lifetime;
        j->sb = kb_kernel_sandbox(x->h.kernel);
        snprintf(j->log, sizeof j->log, "%s/lifetime.log", kb_kernel_host_dir(x->h.kernel));
        j->started = pthread_create(&j->thread, NULL, lifetime_thread, j) == 0;
}

static void lifetime_end(ctx *x) {
        lifetime_job *j = &x->lifetime;
        if (!j->sb)
                lifetime_start(x); /* never started: now, here */
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
        expect_set(x, "lifetime", ev);
}

/* Where id stands in check_ids (past the end for an id not there). */
static size_t check_rank(json_object *check) {
        const char *id = kb_json_str(check, "id");
        size_t i = 0;
        for (; check_ids[i]; i++)
                if (id && strcmp(id, check_ids[i]) == 0)
                        break;
        return i;
}

static int cmp_checks(const void *a, const void *b) {
        size_t ra = check_rank(*(json_object *const *) a), rb = check_rank(*(json_object *const *) b);
        return ra < rb ? -1 : ra > rb;
}

/* The checks in check_ids' order, whatever order they were judged in. */
static void sort_checks(ctx *x) {
        json_object_array_sort(x->h.checks, cmp_checks);
}

static bool has_check(const ctx *x, const char *id) {
        for (size_t i = 0; i < json_object_array_length(x->h.checks); i++) {
                json_object *c = json_object_array_get_idx(x->h.checks, i), *v = NULL;
                if (json_object_object_get_ex(c, "id", &v) && strcmp(json_object_get_string(v), id) == 0)
                        return true;
        }
        return false;
}

/* Adds every check of the list that no step reported, as failed: never run is never a pass. */
static void fill_missing(ctx *x) {
        for (const char *const *id = check_ids; *id; id++)
                if (!has_check(x, *id))
                        add_check(x, *id, "fail", kb_now_ms(), NULL, "not run: %s",
                                  x->h.cancelled ? "the run was cancelled first"
                                  : x->h.wedged  ? "a long cell could not be stopped, so the kernel cannot answer"
                                                 : "an earlier step failed (see persistence.namespace and the checks "
                                                   "before it)");
}

static int set_nonce(ctx *x) {
        char why[512];
        json_object *params = json_object_new_object(), *result = NULL;
        json_object_object_add(params, "value", json_object_new_string(x->nonce));
        int r = run_cell(x, "set_var", params, CELL_TIMEOUT_MS, &result, why, sizeof(why));
        json_object_put(params);
        json_object_put(result);
        if (r < 0)
                add_check(x, "persistence.namespace", "fail", kb_now_ms(), NULL, "could not set the variable: %s", why);
        return r;
}

/* ---- the sequence ---- */

static void set_error(ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_error(ctx *x, const char *fmt, ...) {
        char buf[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        json_object_object_add(x->h.k, "error", json_object_new_string(buf));
        kb_harness_log(&x->h, KB_LOG_ERROR, "%s", buf);
}

int kb_scenario_run(const kb_check_env *env, const kb_kernelspec *spec, const char *team, json_object **ret,
                    kb_check_outcome *ret_outcome) {
        ctx x = {
                .env = env,
                .spec = spec,
                .mountinfo_fd = -1,
                .h =
                        {
                                .spec = spec,
                                .secrets = {env->secrets, env->sibling_secrets},
                                .log = env->harness.log,
                                .log_userdata = env->harness.log_userdata,
                                .deadline_ms = env->harness.deadline_ms,
                                .diagnose_death = true,
                        },
        };
        kb_check_outcome outcome = KB_CHECK_DONE;
        _cleanup_free_ char *diagnosis = NULL;
        x.h.k = kb_report_kernel_new(spec, team);
        if (!x.h.k)
                return -ENOMEM;
        json_object_object_get_ex(x.h.k, "checks", &x.h.checks);
        int r = kb_random_hex(x.nonce, 16);
        if (r < 0) {
                set_error(&x, "no randomness for nonces: %s", strerror(-r));
                outcome = KB_CHECK_NOT_ENFORCED;
                goto done;
        }

        /* Probes are data. A language without a pack still gets every check the host carries alone;
         * the checks that need a cell are untested, naming the folder to add. */
        r = kb_langpack_find(env->harness.kernels_dir, spec->language ? spec->language : "", &x.lp);
        if (r == -ENOENT) {
                x.no_pack = true;
                kb_harness_log(&x.h, KB_LOG_WARN,
                               "no probe set for language '%s' in %s: the checks that need a cell are untested",
                               spec->language ? spec->language : "?", env->harness.kernels_dir);
        } else if (r < 0) {
                set_error(&x,
                          "no probe set for language '%s' in %s (%s): add a folder kernels/<language>/ with "
                          "kbound.json and the cells (see docs/probes.md)",
                          spec->language ? spec->language : "?", env->harness.kernels_dir,
                          r == -ENOENT ? "none matches" : strerror(-r));
                add_check(&x, "sandbox.backend", "fail", 0, NULL, "not started: no probe set for this language");
                outcome = KB_CHECK_NOT_ENFORCED;
                goto done;
        }

        if (x.lp && kb_langpack_transport(x.lp, &x.transport) < 0) {
                set_error(&x,
                          "the probe set in %s names an unknown result transport (kbound.json \"transport\": "
                          "\"mime\" or \"stdout\")",
                          kb_langpack_dir(x.lp));
                add_check(&x, "sandbox.backend", "fail", 0, NULL, "not started: the probe set is malformed");
                outcome = KB_CHECK_NOT_ENFORCED;
                goto done;
        }

        kb_harness_log(&x.h, KB_LOG_INFO, "starting in bubblewrap as team %s", team);
        kb_kernel_options ko = kb_harness_kernel_options(&x.h, &env->harness, team, CELL_TIMEOUT_MS);
        ko.allow_network = env->allow_network;
        ko.syscall_probe = env->syscall_probe;
        ko.before_exec = pre_exec_look;
        ko.before_exec_userdata = &x;
        r = kb_harness_start(&x.h, &ko, &diagnosis);
        if (r < 0 && start_failed_by_sandbox(&x, r, diagnosis)) {
                outcome = KB_CHECK_DONE;
                goto done;
        }
        if (r < 0) {
                const char *why = diagnosis ? diagnosis : strerror(-r);
                set_error(&x, "cannot start in the sandbox: %s", why);
                add_check(&x, "sandbox.backend", "fail", 0, NULL, "%s", why);
                if (r == -EPERM) {
                        /* The sandbox given is leaky: that is a failed check, not a machine that
                         * cannot enforce. */
                        add_check(&x, "identity.pid2", "fail", 0, NULL,
                                  "the kernel is not PID 2 of a private pid namespace: %s", why);
                        outcome = KB_CHECK_DONE;
                        goto done;
                }
                /* A kernel that cannot be started and pinned inside the sandbox cannot have any
                 * boundary claimed for it: fail closed, with the diagnosis. */
                outcome = r == -ECANCELED || kb_harness_deadline_passed(&x.h) ? KB_CHECK_CANCELLED
                                                                              : KB_CHECK_NOT_ENFORCED;
                goto done;
        }

        /* The host looks first (after readiness), then the cells run; one more look happens while
         * the probe cell's child is alive. Everything is judged once the evidence is in. */
        x.snapshots = json_object_new_array();
        x.expect = json_object_new_object();
        {
                int64_t t0 = kb_now_ms();
                if (kb_inspect_host("/proc", &x.host) < 0)
                        x.host = NULL; /* every host-judged check fails for the lack of it */
                x.inspect_ms += kb_now_ms() - t0;
        }
        host_look(&x, "ready");
        watch_mounts(&x);
        expect_basics(&x);
        int64_t t_identity = kb_now_ms();
        if (!x.no_pack)
                identity_cell(&x);
        int64_t identity_ms = kb_now_ms() - t_identity, probe_ms = 0;
        if (!x.h.cancelled && !x.no_pack) {
                int64_t t_probe = kb_now_ms();
                run_probe(&x);
                probe_ms = kb_now_ms() - t_probe;
        }
        int64_t surface_ms = 0;
        expect_seccomp(&x);
        if (!x.h.cancelled && !x.no_pack) {
                int64_t t_surface = kb_now_ms();
                surface_cell(&x);
                surface_ms = kb_now_ms() - t_surface;
        }
        check_pidfd(&x);
        if (x.no_pack) {
                untested_without_pack(&x, "interrupt.control", "interrupting a running cell");
                untested_without_pack(&x, "interrupt.pidfd", "interrupting a running cell");
                untested_without_pack(&x, "persistence.namespace", "reading a variable back");
        } else if (!x.h.cancelled && set_nonce(&x) >= 0) {
                lifetime_start(&x);
                check_interrupt(&x, PATH_CONTROL);
                if (!x.h.cancelled)
                        check_interrupt(&x, PATH_PIDFD);
                settle_stop(&x, PATH_CONTROL);
                if (!x.h.cancelled)
                        check_persistence(&x);
        }
        /* The last look, after the interrupts and persistence, while the kernel is idle and alive:
         * every host-judged check below covers every moment from before exec to here. */
        if (!x.h.cancelled && kb_kernel_alive(x.h.kernel))
                host_look(&x, "final");
        /* Before the shutdown: once the kernel is gone, nothing of it can go on. */
        settle_stop(&x, PATH_CONTROL);
        settle_stop(&x, PATH_PIDFD);
        if (!x.h.cancelled)
                check_shutdown(&x);
        /* The sandbox cannot outlive kbound: shown on a twin of it (kb_sandbox_lifetime). */
        if (!x.h.cancelled || x.lifetime.started)
                lifetime_end(&x);
        judged(&x, "sandbox.backend", kb_judge_backend, x.inspect_ms);
        add_judged(&x, "sandbox.privileges", kb_judge_privileges(x.snapshots), x.inspect_ms);
        judged(&x, "sandbox.session", kb_judge_session, x.inspect_ms);
        if (x.no_pack)
                surface_host_only(&x);
        else
                judged(&x, "sandbox.attack_surface", kb_judge_attack_surface, surface_ms);
        judged(&x, "identity.pid2", kb_judge_identity, identity_ms);
        if (!x.h.cancelled) {
                judged(&x, "boundary.descriptors", kb_judge_descriptors, x.inspect_ms);
                judged(&x, "boundary.write_outside", kb_judge_write_outside, probe_ms);
                if (x.no_pack)
                        untested_without_pack(&x, "boundary.workspace_writable", "writing to the workspace");
                else
                        judged(&x, "boundary.workspace_writable", kb_judge_workspace, probe_ms);
                judged(&x, "boundary.network", kb_judge_network, probe_ms);
                judged(&x, "boundary.sockets", kb_judge_sockets, x.inspect_ms);
                judged(&x, "boundary.credentials", kb_judge_credentials, probe_ms);
                judged(&x, "boundary.cross_team", kb_judge_cross_team, probe_ms);
        }
        /* Judged last, so that every look counts; reported in the list's order. */
        sort_checks(&x);
        /* Every check of the list is in the report: one a failed step never reached fails, saying so. */
        fill_missing(&x);
        /* A check the run's deadline cut short failed as a timeout; the run must say it is
         * incomplete too (teardown that runs past the deadline does not count). */
        if (x.h.cancelled || kb_harness_deadline_passed(&x.h))
                outcome = KB_CHECK_CANCELLED;

done:
        if (x.h.kernel) {
                int status = 0;
                int grace = x.h.cancelled || x.h.wedged ? 0 : STOP_GRACE_MS;
                /* The shutdown_reply is the kernel's goodbye. What it does after it (ipykernel:
                 * 0.3-0.7 s of IO loops, history database, interpreter teardown) is only worth
                 * waiting for when the team folder is kept for inspection; otherwise the folder
                 * is removed and the whole pid namespace killed right after anyway. */
                if (x.shut_down)
                        grace = 0; /* lifecycle.shutdown asked, and waited, already */
                if (grace && !env->harness.keep && kb_kernel_client(x.h.kernel)) {
                        (void) kb_client_shutdown(kb_kernel_client(x.h.kernel), kb_harness_deadline_in(&x.h, grace));
                        grace = 0;
                }
                kb_kernel_stop(x.h.kernel, grace, kb_now_ms() + 5000, &status);
                kb_harness_record_messages(&x.h);
        }
        if (x.snapshots) {
                json_object *insp = json_object_new_object();
                json_object *looks = json_object_new_array();
                size_t first = x.pre_exec ? 0 : 1;
                for (size_t i = first; i < json_object_array_length(x.snapshots) + 1; i++) {
                        json_object *snap = i == 0 ? x.pre_exec : json_object_array_get_idx(x.snapshots, i - 1);
                        json_object *l = json_object_new_object();
                        json_object_object_add(l, "label", json_object_get(kb_json_get(snap, "label")));
                        json_object *procs = kb_json_get(snap, "processes");
                        json_object_object_add(
                                l, "processes",
                                json_object_new_int((int) (procs ? json_object_array_length(procs) : 0)));
                        json_object_object_add(l, "vanished", json_object_get(kb_json_get(snap, "vanished")));
                        json_object_object_add(l, "errors", json_object_get(kb_json_get(snap, "errors")));
                        json_object_array_add(looks, l);
                }
                json_object_object_add(insp, "looks", looks);
                json_object_object_add(insp, "cost_ms", json_object_new_int64(x.inspect_ms));
                json_object_object_add(insp, "pre_exec_ms", json_object_new_int64(x.pre_exec_ms));
                json_object_object_add(x.h.k, "inspection", insp);
        }
        kb_closep(&x.mountinfo_fd);
        json_object_put(x.snapshots);
        json_object_put(x.pre_exec);
        json_object_put(x.host);
        json_object_put(x.expect);
        json_object_put(x.probe);
        /* Last, while the key is still known: the whole kernel object is redacted (a copy when
         * anything matched, so x.h.checks is looked up again). */
        kb_harness_redact(&x.h, &x.h.k);
        kb_kernel_destroy(&x.h.kernel, env->harness.keep);
        kb_langpack_destroy(&x.lp);
        free(x.died_on_sigint);
        if (!x.h.k)
                return -ENOMEM;
        x.h.checks = NULL;
        json_object_object_get_ex(x.h.k, "checks", &x.h.checks);
        if (kb_harness_deadline_passed(&x.h) && outcome == KB_CHECK_DONE &&
            json_object_array_length(x.h.checks) < KB_ELEMENTSOF(check_ids) - 1)
                outcome = KB_CHECK_CANCELLED;
        *ret = x.h.k;
        if (ret_outcome)
                *ret_outcome = outcome;
        return 0;
}
