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
#include "base/cleanup.h"
#include "kbound/inspect.h"
#include "kbound/judge.h"
#include "kbound/kernel.h"
#include "kbound/langpack.h"
#include "kbound/sandbox.h"
#include "kbound/scenario.h"
#include "kbound/report.h"
#include "run/harness-internal.h"
#include "run/scenario-internal.h"
#include "base/jsonget.h"
#include "base/procfs.h"
#include "verdict/rules.h"

#define CHILD_WAIT_S 10
#define STOP_GRACE_MS 1000
/* lifecycle.shutdown: the reply on control, then the kernel process gone. */
#define HOST_MOUNTINFO_MAX (4 * 1024 * 1024)

/* Appends a check the judge made (NULL: out of memory, recorded as a failure). duration_ms: what
 * gathering its evidence cost (a cell, the host's looks), not the judging, which costs nothing. */
static void add_judged(ctx *x, const char *id, json_object *check, int64_t duration_ms) {
        if (!check) {
                scenario_add_check(x, id, "fail", 0, NULL, "out of memory while judging");
                return;
        }
        json_object_object_add(check, "duration_ms", json_object_new_int64(duration_ms));
        json_object *status = NULL, *detail = NULL;
        json_object_object_get_ex(check, "status", &status);
        json_object_object_get_ex(check, "detail", &detail);
        json_object_array_add(x->h.checks, check);
        kb_harness_log(&x->h, KB_LOG_DEBUG, "%s %s: %s", id, json_object_get_string(status),
                       json_object_get_string(detail));
}

/* ---- what the host arranged and saw outside the cell, for the judge ---- */

/* The kernel's log: its keeper's facts (the pipe bwrap writes to, what was written, dropped and
 * kept), or the file bwrap writes itself when its size is not bounded. Set again before the check
 * that reports its figures. */
void scenario_expect_log(ctx *x) {
        json_object *log = kb_sandbox_log_facts(kb_kernel_sandbox(x->h.kernel));
        if (log) {
                scenario_expect_obj(x, FACT_EXPECT_KERNEL_LOG, log);
                scenario_expect_drop(x, FACT_EXPECT_KERNEL_LOG_FILE.id);
        } else {
                scenario_expect_obj(
                        x, FACT_EXPECT_KERNEL_LOG_FILE,
                        scenario_file_id(kb_kernel_log_path(x->h.kernel), FACT_FILE_ID_DEV, FACT_FILE_ID_INO));
                scenario_expect_drop(x, FACT_EXPECT_KERNEL_LOG.id);
        }
}

/* A kernel that speaks only TCP: kbound's relay (RELAY in facts.def), whose program and ports
 * identity.pid2 follows kbound's connections through; NULL for an ipc kernel (or out of memory:
 * then every connection answered by the relay fails, as by any process but PID 2). */
static json_object *relay_expected(kb_kernel *k) {
        const char *ports = kb_kernel_relay_ports(k);
        if (!ports)
                return NULL;
        json_object *relay = json_object_new_object();
        bool ok = relay &&
                  kb_fact_set_obj(relay, FACT_RELAY_PROGRAM,
                                  scenario_file_id(kb_kernel_relay_program(k), FACT_FILE_ID_DEV, FACT_FILE_ID_INO)) ==
                          0 &&
                  kb_fact_set_arr(relay, FACT_RELAY_PORTS, json_object_new_array()) == 0 &&
                  kb_fact_set_str(relay, FACT_RELAY_PREFIX, kb_kernel_relay_prefix(k)) == 0;
        json_object *list = ok ? kb_fact_arr_of(relay, FACT_RELAY_PORTS) : NULL;
        for (const char *p = ports; ok && *p;) {
                char *end;
                long port = strtol(p, &end, 10);
                ok = end != p && json_object_array_add(list, json_object_new_int64(port)) == 0;
                p = *end == ',' ? end + 1 : end;
        }
        if (!ok) {
                json_object_put(relay);
                return NULL;
        }
        return relay;
}

/* The run's facts every judgement needs, set once the kernel is up. */
static void expect_basics(ctx *x) {
        kb_sandbox *sb = kb_kernel_sandbox(x->h.kernel);
        scenario_expect_sandbox(x, sb);
        if (x->env->audit)
                scenario_audit_binds(x, kb_fact_arr_of(x->expect, FACT_EXPECT_TEAM_BINDS));
        scenario_expect_int(x, FACT_EXPECT_KERNEL_PID, kb_sandbox_kernel_pid(sb));
        scenario_expect_obj(x, FACT_EXPECT_RELAY, relay_expected(x->h.kernel));
        scenario_expect_log(x);
}

/* The filter the kernel's sandbox runs under (the run's, with IP sockets for a kernel that speaks
 * only TCP: kb_kernel_hardening), or NULL for the strictest. */
static const kb_seccomp_policy *kernel_seccomp(ctx *x) {
        const kb_sandbox_hardening *h = x->h.kernel ? kb_kernel_hardening(x->h.kernel) : x->env->harness.hardening;
        return h ? &h->seccomp : NULL;
}

/* What the filter refuses (entry name → errno name) and what the policy leaves allowed. */
static void expect_seccomp(ctx *x) {
        const kb_seccomp_policy *policy = kernel_seccomp(x);
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
        if (kb_fact_set_map(seccomp, FACT_SECCOMP_BLOCKED, blocked) < 0 ||
            kb_fact_set_arr(seccomp, FACT_SECCOMP_NOT_CLAIMED, not_claimed) < 0 ||
            kb_fact_set_str(seccomp, FACT_SECCOMP_SOCKETS, kb_seccomp_sockets_to_string(policy ? policy->sockets : 0)) <
                    0) {
                json_object_put(seccomp); /* not known, never a partial list of what is refused */
                seccomp = NULL;
        }
        scenario_expect_obj(x, FACT_EXPECT_SECCOMP, seccomp);
}

/* The attack-surface cell: the program it spawns (kbound-probe attack-surface; and, in a pack
 * that can, the kernel itself) tries every refused call and family. */
static void surface_cell(ctx *x) {
        _cleanup_error_ kb_error *error = NULL;
        json_object *params = json_object_new_object(), *result = NULL;
        json_object_object_add(params, "program", json_object_new_string(x->inside.program));
        /* For a language that can make raw calls in the kernel's own process: each refused call with
         * its number on this ABI (-1: none here) and each refused family. */
        const kb_seccomp_policy *policy = kernel_seccomp(x);
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
        int r = x->env->harness.boundary_probe
                        ? scenario_run_cell(x, "attack_surface", params, CELL_TIMEOUT_MS, &result, &error)
                        : kb_error_make(&error, ENOENT, "kbound-probe, the program the cell runs, was not found");
        json_object_put(params);
        if (r < 0) {
                scenario_expect_str(x, FACT_EXPECT_SURFACE_ERROR, kb_error_text(error, r));
                return;
        }
        scenario_expect_obj(x, FACT_EXPECT_SURFACE, result);
}

/* What every judge reads: the evidence, once it is all in. */
static kb_judge_input judge_input(const ctx *x) {
        return (kb_judge_input){.host = x->host,
                                .snapshots = x->snapshots,
                                .probe = x->probe,
                                .probe_error = x->probe_error ? kb_error_text(x->probe_error, 0) : NULL,
                                .expect = x->expect,
                                .cells_absent = x->no_pack ? "no probe set for the kernel's language" : NULL,
                                .pre_exec = x->pre_exec,
                                .malformed = x->malformed};
}

static bool check_passed(json_object *check) {
        json_object *status = NULL;
        return check && json_object_object_get_ex(check, "status", &status) &&
               strcmp(json_object_get_string(status), "pass") == 0;
}

/* Adds the check its judge made (check.c), in the scenario's order of checks. */
static void judged(ctx *x, kb_check c, int64_t duration_ms) {
        const kb_check_info *info = kb_check_get(c);
        kb_judge_input in = judge_input(x);
        json_object *check = info->judge(&in), *detail = NULL;
        /* Without a pack a pass rests on the host's evidence alone: say so in its words. */
        if (x->no_pack && check_passed(check) && json_object_object_get_ex(check, "detail", &detail)) {
                char *text = NULL;
                if (asprintf(&text, "%s (the host's evidence only: no cell ran, no probe set for language '%s')",
                             json_object_get_string(detail), x->spec->language ? x->spec->language : "?") >= 0) {
                        json_object_object_add(check, "detail", json_object_new_string(text));
                        free(text);
                }
        }
        add_judged(x, info->id, check, duration_ms);
}

/* A check that needs a cell, for a kernel without a pack: untested, saying which folder to add. */
static void untested_without_pack(ctx *x, kb_check c) {
        const char *language = x->spec->language ? x->spec->language : "";
        char folder[KB_LANGPACK_FOLDER_MAX];
        kb_langpack_folder_name(language, folder);
        /* The folder to add is one path component; a language whose name is not one (a MIME type)
         * is named in the pack's kbound.json. */
        bool named = folder[0] && strcmp(folder, language) != 0;
        scenario_add_check(x, kb_check_id(c), "untested", kb_now_ms(), NULL,
                           "%s needs a cell, and there is no probe set for language '%s': add a pack, a folder %s/ "
                           "with kbound.json%s%s%s and the cells, in a folder of yours given with --kernels-dir DIR "
                           "(or in kbound's kernels/; docs/probes-cells.md, \"Writing a pack\")",
                           kb_check_get(c)->without_cell, x->spec->language ? language : "?",
                           folder[0] ? folder : "<language>", named ? " (\"aliases\": [\"" : "", named ? language : "",
                           named ? "\"])" : "");
}

/* A check that needs a cell but whose host part can fail it (sandbox.attack_surface: the seccomp
 * mode and filter count of every process), for a kernel without a pack: a host part that holds
 * leaves it untested. */
static void host_part_only(ctx *x, kb_check c, int64_t duration_ms) {
        kb_judge_input in = judge_input(x);
        json_object *check = kb_check_get(c)->judge(&in);
        if (check_passed(check)) {
                json_object_put(check);
                untested_without_pack(x, c);
                return;
        }
        add_judged(x, kb_check_id(c), check, duration_ms);
}

/* Every check a judge makes (check.c), once all the evidence is in: the full boundary's only for a
 * run not cancelled; without a pack, the ones that need a cell on the host's part alone, or not. */
static void judge_checks(ctx *x, const int64_t time_ms[static _KB_CHECK_TIME_MAX]) {
        /* The kernel's log figures, read again now that it has stopped writing. */
        scenario_expect_log(x);
        /* The evidence held to facts.def once for every judge (NULL when out of memory: then each
         * judge holds it itself, and fails if it cannot). */
        kb_judge_input in = judge_input(x);
        x->malformed = kb_judge_malformed(&in);
        for (kb_check c = 0; c < _KB_CHECK_MAX; c++) {
                const kb_check_info *info = kb_check_get(c);
                if (!info->judge || (info->phase == KB_CHECK_PHASE_BOUNDARY && x->h.cancelled))
                        continue;
                if (x->no_pack && info->needs == KB_CHECK_NEEDS_CELL && info->host_part)
                        host_part_only(x, c, time_ms[info->time]);
                else if (x->no_pack && info->needs == KB_CHECK_NEEDS_CELL)
                        untested_without_pack(x, c);
                else
                        judged(x, c, time_ms[info->time]);
        }
}

/* The checks a step runs that need a cell (the interrupts, persistence), for a kernel without a
 * pack: untested. */
static void steps_untested(ctx *x) {
        for (kb_check c = 0; c < _KB_CHECK_MAX; c++)
                if (!kb_check_get(c)->judge && kb_check_get(c)->needs == KB_CHECK_NEEDS_CELL)
                        untested_without_pack(x, c);
}

/* ---- identity ---- */

static void identity_cell(ctx *x) {
        _cleanup_error_ kb_error *error = NULL;
        json_object *result = NULL;
        int r = scenario_run_cell(x, "identity", NULL, CELL_TIMEOUT_MS, &result, &error);
        if (r < 0) {
                scenario_expect_str(x, FACT_EXPECT_IDENTITY_ERROR, kb_error_text(error, r));
                return;
        }
        scenario_expect_obj(x, FACT_EXPECT_IDENTITY, result);
}

static void check_pidfd(ctx *x) {
        int64_t t0 = kb_now_ms();
        kb_sandbox *sb = kb_kernel_sandbox(x->h.kernel);
        int r = kb_sandbox_verify(sb);
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "pidfd", json_object_new_int(kb_sandbox_pidfd(sb)));
        json_object_object_add(ev, "kernel_host_pid", json_object_new_int(kb_sandbox_kernel_pid(sb)));
        if (r == 0)
                scenario_add_check(x, kb_check_id(KB_CHECK_PIDFD), "pass", t0, ev,
                                   x->env->audit ? "pidfd pinned to host pid %d: alive, the process (by its start "
                                                   "time) found holding the kernel end of kbound's connections"
                                                 : "pidfd pinned to host pid %d: alive, PID 2 of the sandbox's pid "
                                                   "namespace",
                                   (int) kb_sandbox_kernel_pid(sb));
        else
                scenario_add_check(x, kb_check_id(KB_CHECK_PIDFD), "fail", t0, ev, "the pinned pidfd %s",
                                   r == -ESRCH ? "refers to a process that has exited"
                                               : "no longer refers to PID 2 of the sandbox");
}

/* ---- the probe cell, with the host's look while its child is alive ---- */

typedef struct child_watch {
        char marker[64];
        char go_host[PATH_MAX]; /* the go file, as the host sees it (in the team's runtime folder) */
        bool seen;
        int64_t unended_ms; /* when the marker was first there without its line end (0: never) */
        int64_t seen_ms;    /* when it was there whole */
} child_watch;

/* Past this, a marker that waited for its line end was held back by the kernel (a metakernel
 * kernel sends a line's end only with the next output), not split between two messages. */
#define CHILD_MARKER_LATE_MS 1000

static int child_marker_seen(void *userdata, kb_execution *ex, const kb_msg *msg) {
        child_watch *w = userdata;
        if (w->seen || !ex->stdout_text)
                return 0;
        const char *m = strstr(ex->stdout_text, w->marker);
        if (!m)
                return 0;
        if (!strchr(m, '\n')) {
                if (!w->unended_ms)
                        w->unended_ms = kb_now_ms();
                return 0; /* the whole line, pid included */
        }
        w->seen = true;
        w->seen_ms = kb_now_ms();
        return 1;
}

/* How the marker came, for the judge (EXPECT child_marker): the words a pack writer needs when the
 * host's look while the child was alive did not happen. */
static const char *child_marker_state(const child_watch *w) {
        if (w->unended_ms && (!w->seen || w->seen_ms - w->unended_ms > CHILD_MARKER_LATE_MS))
                return "unended";
        return w->seen ? "whole" : "absent";
}

/* The cell's child is alive and waits: look at the sandbox, then let it go on. */
static void child_alive(ctx *x, void *userdata) {
        child_watch *w = userdata;
        scenario_host_look(x, "child alive");
        /* O_EXCL|O_NOFOLLOW in the team's runtime folder: never through something the kernel planted.
         * (Not the workspace: a tmpfs of the sandbox's user namespace, where the host's root can
         * read but not create, its uid having no mapping there.) */
        int fd = open(w->go_host, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0)
                close(fd);
}

/* Looks for the cell's escape file where the host can see it; removes what it finds. */
static void confirm_escapes(ctx *x, json_object *result, const char *escape_name) {
        json_object *seen = json_object_new_array();
        json_object *attempts = kb_fact_arr_of(result, FACT_PROBE_WRITE_OUTSIDE);
        size_t n = attempts && json_object_is_type(attempts, json_type_array) ? json_object_array_length(attempts) : 0;
        json_object *dirs = x->env->escape_dirs;
        size_t n_dirs = dirs ? json_object_array_length(dirs) : 0;
        for (size_t i = 0; i < n_dirs + n; i++) {
                const char *dir = i < n_dirs ? json_object_get_string(json_object_array_get_idx(dirs, i))
                                             : kb_fact_str_of(json_object_array_get_idx(attempts, i - n_dirs),
                                                              FACT_PROBE_WRITE_PATH);
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
                const char *dir = kb_fact_str_of(json_object_array_get_idx(attempts, i), FACT_PROBE_WRITE_PATH);
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
        scenario_expect_arr(x, FACT_EXPECT_ESCAPES_SEEN, seen);
        scenario_expect_int(x, FACT_EXPECT_ESCAPE_DIRS, (int64_t) n_dirs);
}

/* The host reads the cell's nonce back from the workspace (a regular file only: the kernel owns the
 * folder and could leave a FIFO there). */
static void read_back_workspace(ctx *x, const char *file_name) {
        _cleanup_free_ char *content = NULL;
        bool ok = false;
        int ws = kb_kernel_workspace_fd(x->h.kernel);
        if (ws >= 0 && kb_read_file(ws, file_name, O_NOFOLLOW, 4096, &content, NULL) == 0) {
                content[strcspn(content, "\r\n")] = '\0';
                ok = strcmp(content, x->nonce) == 0;
        }
        scenario_expect_bool(x, FACT_EXPECT_WORKSPACE_READ_BACK, ok);
}

static void run_probe(ctx *x) {
        kb_canary_net *canary = NULL;
        if (!x->env->harness.boundary_probe) {
                kb_error_make(&x->probe_error, ENOENT,
                              "kbound-probe, the program the probe cell runs, was not found (install kbound, or set "
                              "KBOUND_PROBE)");
                return;
        }
        char escape_name[64], file_name[64];
        snprintf(escape_name, sizeof(escape_name), "kbound-escape-%.16s", x->nonce);
        snprintf(file_name, sizeof(file_name), "kbound-probe-%.16s.txt", x->nonce);
        child_watch watch = {.seen = false};
        snprintf(watch.marker, sizeof watch.marker, "kbound-child-%.12s", x->nonce);
        char go_name[64];
        snprintf(go_name, sizeof go_name, ".kbound-go-%.16s", x->nonce);
        /* The host creates the go file there and removes it after: a cut path would be another file. */
        if (snprintf(watch.go_host, sizeof watch.go_host, "%s/%s", kb_kernel_runtime_dir(x->h.kernel), go_name) >=
            (int) sizeof watch.go_host) {
                kb_error_make(&x->probe_error, ENAMETOOLONG, "the team's runtime folder's path is too long: %s",
                              kb_kernel_runtime_dir(x->h.kernel));
                return;
        }

        json_object *params = json_object_new_object();
        json_object_object_add(params, "program", json_object_new_string(x->inside.program));
        json_object_object_add(params, "workspace", json_object_new_string(x->inside.workspace));
        json_object_object_add(params, "nonce", json_object_new_string(x->nonce));
        json_object_object_add(params, "workspace_file", json_object_new_string(file_name));
        json_object_object_add(params, "escape_name", json_object_new_string(escape_name));
        json_object_object_add(params, "escape_dirs", json_object_get(x->env->escape_dirs));
        json_object *skip = json_object_new_array();
        json_object_array_add(skip, json_object_new_string(x->inside.workspace));
        json_object_array_add(skip, json_object_new_string(KB_SANDBOX_RUNTIME));
        json_object_array_add(skip, json_object_new_string(KB_SANDBOX_HANDOFF));
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
        char go_inside[PATH_MAX + 64];
        snprintf(go_inside, sizeof go_inside, "%s/%s", x->inside.handoff, go_name);
        json_object_object_add(params, "child_go", json_object_new_string(go_inside));
        /* The child waits this long for the host's look: ample for a marker on iopub and a look of
         * tens of ms on a loaded machine; a kernel that loses the marker costs no more. */
        json_object_object_add(params, "child_wait_s", json_object_new_int(CHILD_WAIT_S));
        int r = kb_canary_net_open(&canary);
        if (r >= 0)
                r = kb_canary_net_params(canary, params);
        if (r < 0) {
                kb_error_make(&x->probe_error, r, "cannot open the host's loopback canaries: %s", strerror(-r));
                json_object_put(params);
                return;
        }
        scenario_expect_arr(x, FACT_EXPECT_ABSTRACT_CANARIES, json_object_get(kb_json_get(params, "abstract_sockets")));
        cell_hook hook = {.fn = child_marker_seen, .userdata = &watch, .then = child_alive};
        r = scenario_run_cell_hooked(x, "probe", params, CELL_TIMEOUT_MS, &hook, &x->probe, &x->probe_error);
        json_object_put(params);
        if (r < 0)
                x->probe = NULL;
        scenario_expect_str(x, FACT_EXPECT_CHILD_MARKER, child_marker_state(&watch));
        /* What the host sees now: the canaries' counts, escape files, the workspace nonce. */
        unsigned tcp_hits = 0, unix_hits = 0;
        kb_canary_net_count(canary, &tcp_hits, &unix_hits);
        json_object *conn = json_object_new_object();
        if (!conn || kb_fact_set_int(conn, FACT_CANARY_COUNTS_TCP, tcp_hits) < 0 ||
            kb_fact_set_int(conn, FACT_CANARY_COUNTS_UNIX, unix_hits) < 0) {
                json_object_put(conn); /* not counted, never counted as none */
                conn = NULL;
        }
        scenario_expect_obj(x, FACT_EXPECT_CANARY_CONNECTIONS, conn);
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
                scenario_expect_arr(x, FACT_EXPECT_SECRETS_IN_PROBE, found);
                scenario_expect_arr(x, FACT_EXPECT_SIBLING_IN_PROBE, sibling);
                json_object_object_add(x->h.k, "process",
                                       json_object_get(kb_fact_obj_of(x->probe, FACT_PROBE_PROCESS)));
        }
}

static int set_nonce(ctx *x) {
        _cleanup_error_ kb_error *error = NULL;
        json_object *params = json_object_new_object(), *result = NULL;
        json_object_object_add(params, "value", json_object_new_string(x->nonce));
        int r = scenario_run_cell(x, "set_var", params, CELL_TIMEOUT_MS, &result, &error);
        json_object_put(params);
        json_object_put(result);
        if (r < 0)
                scenario_add_check(x, kb_check_id(KB_CHECK_PERSISTENCE), "fail", kb_now_ms(), NULL,
                                   "could not set the variable: %s", kb_error_text(error, r));
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

/* The language's probe set (probes are data). A language without one still gets every check the
 * host carries alone; the checks that need a cell are untested, naming the folder to add. A probe
 * set that cannot be read or is malformed fails the run: < 0. */
static int find_pack(ctx *x) {
        const kb_check_env *env = x->env;
        const char *language = x->spec->language;
        char where[2 * PATH_MAX + 16];
        int r = kb_harness_find_pack(&env->harness, language ? language : "", &x->lp, where, sizeof where);
        if (r == -ENOENT) {
                x->no_pack = true;
                kb_harness_log(&x->h, KB_LOG_WARN,
                               "no probe set for language '%s' in %s: the checks that need a cell are untested",
                               language ? language : "?", where);
        } else if (r < 0) {
                set_error(x,
                          "no probe set for language '%s' in %s (%s): add a folder kernels/<language>/ with "
                          "kbound.json and the cells (see docs/probes.md)",
                          language ? language : "?", where, r == -ENOENT ? "none matches" : strerror(-r));
                scenario_add_check(x, kb_check_id(KB_CHECK_BACKEND), "fail", 0, NULL,
                                   "not started: no probe set for this language");
                return r;
        }

        if (x->lp && kb_langpack_transport(x->lp, &x->transport) < 0) {
                set_error(x,
                          "the probe set in %s names an unknown result transport (kbound.json \"transport\": "
                          "\"mime\" or \"stdout\")",
                          kb_langpack_dir(x->lp));
                scenario_add_check(x, kb_check_id(KB_CHECK_BACKEND), "fail", 0, NULL,
                                   "not started: the probe set is malformed");
                return -EINVAL;
        }
        return 0;
}

/* Starts the kernel in its sandbox as team, until it answers. On failure (< 0) the checks it
 * decides are added and *outcome says how the run ended. */
static int start_kernel(ctx *x, const char *team, kb_check_outcome *outcome) {
        const kb_check_env *env = x->env;
        _cleanup_error_ kb_error *error = NULL;
        kb_harness_phase(&x->h,
                         env->audit ? "starting as the kernelspec says (audit) as team %s"
                                    : "starting in bubblewrap as team %s",
                         team);
        kb_kernel_options ko = kb_harness_kernel_options(&x->h, &env->harness, team, CELL_TIMEOUT_MS);
        ko.allow_network = env->allow_network;
        ko.syscall_probe = env->syscall_probe;
        ko.before_exec = scenario_pre_exec_look;
        ko.before_exec_userdata = x;
        if (env->audit)
                scenario_audit_options(x, &ko); /* started as it is: no bwrap, limits or filter of kbound's */
        int r = kb_harness_start(&x->h, &ko, &error);
        if (r >= 0 && env->audit)
                r = scenario_audit_adopt(x);
        if (r >= 0)
                return 0;
        if (env->audit && x->h.kernel) {
                *outcome = KB_CHECK_DONE; /* not identified: identity.pid2 says why */
                return r;
        }
        const char *why = kb_error_text(error, r);
        /* The sandbox given is leaky: that is a failed check, not a machine that cannot enforce,
         * whatever else the look before exec shows. */
        if (r == -EPERM)
                scenario_add_check(x, kb_check_id(KB_CHECK_PID2), "fail", 0, NULL,
                                   "the kernel is not PID 2 of a private pid namespace: %s", why);
        /* What the look before exec shows wrong with the sandbox is often why the kernel died, and a
         * finding about the sandbox in any case, not a machine that cannot enforce. */
        if (scenario_judge_before_start(x, why)) {
                *outcome = x->h.cancelled || kb_harness_deadline_passed(&x->h) ? KB_CHECK_CANCELLED : KB_CHECK_DONE;
                return r;
        }
        set_error(x, "cannot start in the sandbox: %s", why);
        /* A kernel that never became ready says nothing of the sandbox: the kernel's error fails the
         * run, and the backend's check is not run rather than blamed. */
        if (r == -ETIMEDOUT)
                scenario_add_check(x, kb_check_id(KB_CHECK_BACKEND), "not_run", 0, NULL, "not run: %s", why);
        else
                scenario_add_check(x, kb_check_id(KB_CHECK_BACKEND), "fail", 0, NULL, "%s", why);
        if (r == -EXDEV) {
                /* bwrap built something else at /workspace than it was asked: leaky. */
                *outcome = KB_CHECK_DONE;
                return r;
        }
        if (r == -EPERM) {
                scenario_sort_checks(x); /* identity.pid2, failed above, after sandbox.backend */
                *outcome = KB_CHECK_DONE;
                return r;
        }
        /* A kernel that cannot be started and pinned inside the sandbox cannot have any boundary
         * claimed for it: fail closed, with the error. */
        *outcome = r == -ECANCELED || kb_harness_deadline_passed(&x->h) ? KB_CHECK_CANCELLED : KB_CHECK_NOT_ENFORCED;
        return r;
}

/* The host looks first (after readiness), then the cells run; one more look happens while the
 * probe cell's child is alive. What each part took goes to time_ms, for the checks judged on it. */
static void gather_evidence(ctx *x, int64_t time_ms[static _KB_CHECK_TIME_MAX]) {
        kb_harness_phase(&x->h, "up (kernel_info answered, iopub flowing); the host looks, then the probe cells run");
        x->snapshots = json_object_new_array();
        if (!x->expect)
                x->expect = json_object_new_object(); /* made at the look before exec, normally */
        int64_t t0 = kb_now_ms();
        if (kb_inspect_host("/proc", &x->host) < 0)
                x->host = NULL; /* every host-judged check fails for the lack of it */
        kb_json_pool_intern(x->pool, &x->host);
        x->inspect_ms += kb_now_ms() - t0;
        scenario_host_look(x, "ready");
        scenario_watch_mounts(x);
        expect_basics(x);
        t0 = kb_now_ms();
        if (!x->no_pack)
                identity_cell(x);
        time_ms[KB_CHECK_TIME_IDENTITY] = kb_now_ms() - t0;
        if (!x->h.cancelled && !x->no_pack) {
                t0 = kb_now_ms();
                run_probe(x);
                time_ms[KB_CHECK_TIME_PROBE] = kb_now_ms() - t0;
        }
        expect_seccomp(x);
        if (!x->h.cancelled && !x->no_pack) {
                t0 = kb_now_ms();
                surface_cell(x);
                time_ms[KB_CHECK_TIME_SURFACE] = kb_now_ms() - t0;
        }
}

/* The checks the run's steps make as they happen: the pidfd's identity, both interrupts, the
 * variable read back, the last look, the shutdown and the twin sandbox's lifetime. */
static void run_steps(ctx *x) {
        check_pidfd(x);
        if (x->no_pack) {
                steps_untested(x);
        } else if (!x->h.cancelled && set_nonce(x) >= 0) {
                if (!x->env->audit)
                        scenario_lifetime_start(x);
                kb_harness_phase(&x->h, "interrupting a running cell through the control channel");
                scenario_check_interrupt(x, PATH_CONTROL);
                if (!x->h.cancelled) {
                        kb_harness_phase(&x->h, "interrupting a running cell with SIGINT through the pinned pidfd");
                        scenario_check_interrupt(x, PATH_PIDFD);
                }
                scenario_control_late(x, false);
                scenario_settle_stop(x, PATH_CONTROL);
                if (!x->h.cancelled) {
                        kb_harness_phase(&x->h, "reading the variable back after both interrupts");
                        scenario_check_persistence(x);
                }
                scenario_control_late(x, false);
        }
        /* The last look, after the interrupts and persistence, while the kernel is idle and alive:
         * every host-judged check covers every moment from before exec to here. */
        scenario_final_look(x);
        /* Before the shutdown: once the kernel is gone, nothing of it can go on. */
        scenario_settle_stop(x, PATH_CONTROL);
        scenario_settle_stop(x, PATH_PIDFD);
        if (!x->h.cancelled) {
                kb_harness_phase(&x->h, "shutting down through the control channel");
                scenario_check_shutdown(x);
        }
        /* A late interrupt_reply is taken where the client has just read the kernel's messages
         * (each step's wait, the shutdown's last): listening takes no wait of its own. */
        scenario_control_late(x, true);
        /* The sandbox cannot outlive kbound: shown on a twin of it (kb_sandbox_lifetime); an audited
         * one's twin is the kernelspec started again, its launcher killed. */
        if (x->env->audit && !x->h.cancelled)
                scenario_audit_lifetime(x);
        else if (!x->h.cancelled || x->lifetime.started)
                scenario_lifetime_end(x);
}

/* The kernel stopped, and its messages recorded. */
static void stop_kernel(ctx *x) {
        if (!x->h.kernel)
                return;
        int status = 0;
        int grace = x->h.cancelled || x->h.wedged ? 0 : STOP_GRACE_MS;
        /* The shutdown_reply is the kernel's goodbye. What it does after it (ipykernel: 0.3-0.7 s of
         * IO loops, history database, interpreter teardown) is only worth waiting for when the team
         * folder is kept for inspection; otherwise the folder is removed and the whole pid namespace
         * killed right after anyway. */
        if (x->shut_down)
                grace = 0; /* lifecycle.shutdown asked, and waited, already */
        if (grace && !x->env->harness.keep && kb_kernel_client(x->h.kernel)) {
                (void) kb_client_shutdown(kb_kernel_client(x->h.kernel), kb_harness_deadline_in(&x->h, grace));
                grace = 0;
        }
        kb_kernel_stop(x->h.kernel, grace, kb_now_ms() + 5000, &status);
        kb_harness_record_messages(&x->h);
}

/* The report's "inspection": each look's label, process count, vanished processes and errors, and
 * what the looks cost. */
static void record_inspection(ctx *x) {
        if (!x->snapshots)
                return;
        json_object *insp = json_object_new_object();
        json_object *looks = json_object_new_array();
        size_t first = x->pre_exec ? 0 : 1;
        for (size_t i = first; i < json_object_array_length(x->snapshots) + 1; i++) {
                json_object *snap = i == 0 ? x->pre_exec : json_object_array_get_idx(x->snapshots, i - 1);
                json_object *l = json_object_new_object();
                json_object_object_add(l, "label", json_object_get(kb_fact_get(snap, FACT_LOOK_LABEL)));
                json_object *procs = kb_fact_arr_of(snap, FACT_LOOK_PROCESSES);
                json_object_object_add(l, "processes",
                                       json_object_new_int((int) (procs ? json_object_array_length(procs) : 0)));
                json_object_object_add(l, "vanished", json_object_get(kb_fact_get(snap, FACT_LOOK_VANISHED)));
                json_object_object_add(l, "errors", json_object_get(kb_fact_get(snap, FACT_LOOK_ERRORS)));
                json_object_array_add(looks, l);
        }
        json_object_object_add(insp, "looks", looks);
        json_object_object_add(insp, "cost_ms", json_object_new_int64(x->inspect_ms));
        json_object_object_add(insp, "pre_exec_ms", json_object_new_int64(x->pre_exec_ms));
        json_object_object_add(x->h.k, "inspection", insp);
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
                                .started_ms = kb_now_ms(),
                                .diagnose_death = true,
                        },
        };
        kb_check_outcome outcome = KB_CHECK_DONE;
        scenario_inside_default(&x);
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

        /* Without a pool the evidence is kept whole: it costs memory, not a verdict. */
        (void) kb_json_pool_new(&x.pool);
        if (find_pack(&x) < 0) {
                outcome = KB_CHECK_NOT_ENFORCED;
                goto done;
        }

        if (start_kernel(&x, team, &outcome) < 0)
                goto done;

        int64_t time_ms[_KB_CHECK_TIME_MAX] = {0};
        gather_evidence(&x, time_ms);
        run_steps(&x);
        time_ms[KB_CHECK_TIME_LOOKS] = x.inspect_ms;
        judge_checks(&x, time_ms);
        /* Judged last, so that every look counts; reported in the list's order. */
        scenario_sort_checks(&x);
        /* Every check of the list is in the report: one a failed step never reached fails, saying so. */
        scenario_fill_missing(&x, true);
        if (env->audit)
                scenario_audit_end(&x);
        kb_harness_phase(&x.h, "judged %zu checks from %zu host looks", json_object_array_length(x.h.checks),
                         x.snapshots ? json_object_array_length(x.snapshots) : (size_t) 0);
        /* A check the run's deadline cut short failed as a timeout; the run must say it is
         * incomplete too (teardown that runs past the deadline does not count). */
        if (x.h.cancelled || kb_harness_deadline_passed(&x.h))
                outcome = KB_CHECK_CANCELLED;

done:
        if (!x.h.kernel) {
                /* Never started: every check is still in the report, as not run with the reason, so a
                 * CI's history keeps them (and the kernel's error says why). */
                scenario_fill_missing(&x, false);
                scenario_sort_checks(&x);
        }
        stop_kernel(&x);
        record_inspection(&x);
        scenario_control_late(&x, true);
        kb_closep(&x.mountinfo_fd);
        json_object_put(x.snapshots);
        json_object_put(x.pre_exec);
        json_object_put(x.malformed);
        json_object_put(x.host);
        json_object_put(x.expect);
        json_object_put(x.probe);
        json_object_put(x.audit);
        kb_json_pool_free(&x.pool);
        /* Last, while the key is still known: the whole kernel object is redacted (a copy when
         * anything matched, so x.h.checks is looked up again). */
        kb_harness_redact(&x.h, &x.h.k);
        kb_kernel_destroy(&x.h.kernel, env->harness.keep);
        kb_langpack_destroy(&x.lp);
        free(x.died_on_sigint);
        kb_error_free(&x.probe_error);
        if (!x.h.k)
                return -ENOMEM;
        x.h.checks = NULL;
        json_object_object_get_ex(x.h.k, "checks", &x.h.checks);
        if (kb_harness_deadline_passed(&x.h) && outcome == KB_CHECK_DONE &&
            json_object_array_length(x.h.checks) < scenario_n_checks())
                outcome = KB_CHECK_CANCELLED;
        *ret = x.h.k;
        if (ret_outcome)
                *ret_outcome = outcome;
        return 0;
}
