/* scenario_audit.c: `kbound audit` in one kernel's check sequence: the kernelspec's own wrapper
 * started as it is (kb_sandbox_audit_launch), its kernel found as the holder of the kernel end of
 * kbound's connections and pinned, where the kernel finds kbound's programs and folders, the twin
 * that shows whether the kernel outlives its wrapper, and every check held to its expectation.
 * The rest of the sequence is check's own (scenario.c): the same looks, cells and judges. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/cleanup.h"
#include "base/facts.h"
#include "base/procfs.h"
#include "base/strv.h"
#include "kbound/audit.h"
#include "kbound/inspect.h"
#include "kbound/kernel.h"
#include "kbound/sandbox.h"
#include "run/harness-internal.h"
#include "run/scenario-internal.h"
#include "sandbox/sandbox-internal.h"

/* The name kbound-probe gets in the team's runtime folder, which an audited kernel sees. */
#define AUDIT_PROBE "kbound-probe"
/* How long the kernel's connections may take to be accepted once it answered. */
#define ADOPT_MS 3000
/* How long the twin's kernel may live on after its launcher is killed. */
#define LIFETIME_BOUND_MS 3000

void scenario_inside_default(ctx *x) {
        snprintf(x->inside.workspace, sizeof x->inside.workspace, "%s", KB_SANDBOX_WORKSPACE);
        snprintf(x->inside.program, sizeof x->inside.program, "%s", KB_SANDBOX_BOUNDARY_PROGRAM);
        snprintf(x->inside.handoff, sizeof x->inside.handoff, "%s",
                 kb_sandbox_handoff_inside(x->env->harness.hardening));
        x->inside.kernel_pid = 2;
}

/* Who the launcher runs as: the run's sandbox user, or root when asked (a kb_sandbox_user that
 * "switches" to uid 0, so that kb_kernel_start's promise is kept by the caller's word, said in the
 * report). */
static const kb_sandbox_user *audit_user(const ctx *x) {
        static const kb_sandbox_user root = {.switch_user = true, .uid = 0, .gid = 0, .name = "root"};
        return x->env->audit->as_root ? &root : x->env->harness.user;
}

/* Whether this kernel is reached over TCP on the host's loopback: asked for (--transport tcp), or its
 * kernelspec says it speaks only TCP (docs/transports.md). */
static bool audit_tcp(const ctx *x) {
        return x->env->audit->tcp || (x->spec && x->spec->tcp_only);
}

void scenario_audit_options(ctx *x, kb_kernel_options *o) {
        o->sandbox = false;
        o->tcp = false;
        o->host_tcp = audit_tcp(x);
        o->hardening = NULL;
        o->before_exec = NULL;
        o->user = audit_user(x);
        o->launch = scenario_audit_launch;
        o->launch_userdata = x;
}

/* env with HOME set to the team's workspace folder on the host (the sandbox's /workspace is
 * kbound's own). A new vector, NULL when out of memory. */
static char **audit_env(char *const *env, const char *workspace) {
        _cleanup_strv_ char **copy = kb_strv_copy(env);
        for (char **e = copy; e && *e; e++)
                if (strncmp(*e, "HOME=", 5) == 0) {
                        char *home = NULL;
                        if (asprintf(&home, "HOME=%s", workspace) < 0)
                                return NULL;
                        free(*e);
                        *e = home;
                }
        return TAKE_PTR(copy);
}

int scenario_audit_launch(void *userdata, const kb_kernel *k, char *const *argv, char *const *env, kb_sandbox **ret,
                          kb_error **ret_error) {
        ctx *x = userdata;
        /* kbound-probe where the kernel finds it: its folder of sockets, which the launcher shows it
         * at the same path (static, so any root filesystem runs it). */
        if (x->env->harness.boundary_probe) {
                _cleanup_free_ char *copy = NULL;
                if (asprintf(&copy, "%s/%s", kb_kernel_runtime_dir(k), AUDIT_PROBE) < 0)
                        return -ENOMEM;
                int r = kb_copy_file(x->env->harness.boundary_probe, copy, 0555, 64u << 20);
                if (r < 0)
                        return kb_error_make(ret_error, -r, "cannot copy kbound-probe into %s: %s",
                                             kb_kernel_runtime_dir(k), strerror(-r));
        }
        _cleanup_strv_ char **audit_environment = audit_env(env, kb_kernel_workspace(k));
        if (!audit_environment)
                return -ENOMEM;
        kb_sandbox_audit_policy policy = {
                .env = audit_environment,
                .user = audit_user(x),
                .chdir_to = kb_kernel_workspace(k),
        };
        json_object *launcher = json_object_new_array();
        for (char *const *a = argv; launcher && *a; a++)
                json_object_array_add(launcher, json_object_new_string(*a));
        json_object_put(x->audit);
        x->audit = json_object_new_object();
        if (!x->audit || kb_fact_set_arr(x->audit, FACT_AUDIT_LAUNCHER, launcher) < 0 ||
            kb_fact_set_str(x->audit, FACT_AUDIT_RAN_AS, policy.user->name) < 0 ||
            kb_fact_set_str(x->audit, FACT_AUDIT_TRANSPORT, audit_tcp(x) ? "tcp" : "ipc") < 0 ||
            (x->env->audit->expect_path &&
             kb_fact_set_str(x->audit, FACT_AUDIT_EXPECT_FILE, x->env->audit->expect_path) < 0))
                return -ENOMEM;
        return kb_sandbox_audit_launch(&policy, argv, kb_kernel_log_path(k), ret, ret_error);
}

/* The kernel's pid in its own pid namespace (the last of NSpid), or -1. */
static int64_t nspid_of(pid_t pid) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/status", (int) pid);
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_object *st = NULL;
        if (kb_read_file(AT_FDCWD, path, 0, KB_PROCFS_STATUS_MAX, &text, NULL) < 0 ||
            kb_procfs_status_parse(text, &st) < 0)
                return -1;
        json_object *nspid = kb_fact_arr_of(st, FACT_PROCESS_NSPID);
        size_t n = nspid ? json_object_array_length(nspid) : 0;
        return n ? json_object_get_int64(json_object_array_get_idx(nspid, n - 1)) : -1;
}

/* Where the kernel sees its working folder (/proc/<pid>/cwd's text, which is its own view). */
static int cwd_inside(pid_t pid, char *buf, size_t size) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/cwd", (int) pid);
        ssize_t n = readlink(path, buf, size - 1);
        if (n < 0)
                return -errno;
        if ((size_t) n >= size - 1 || buf[0] != '/')
                return -ENAMETOOLONG;
        buf[n] = '\0';
        return 0;
}

/* The kernel of k's sandbox: the holder of the kernel end of kbound's connections (unix sockets in
 * its folder, or TCP on the loopback), a descendant of the launcher, pinned; with the words for why
 * it could not be. */
static int audit_find_kernel(kb_kernel *k, const char *workspace, pid_t *ret_pid, char *why, size_t why_size) {
        int64_t until = kb_now_ms() + ADOPT_MS;
        size_t connections = 0;
        pid_t launcher = kb_sandbox_bwrap_pid(kb_kernel_sandbox(k));
        int ports[_KB_CHANNEL_MAX];
        bool tcp = kb_kernel_tcp_port(k, KB_CHANNEL_SHELL) > 0;
        for (int ch = 0; ch < _KB_CHANNEL_MAX; ch++)
                ports[ch] = kb_kernel_tcp_port(k, (kb_channel) ch);
        int r;
        for (;;) {
                r = tcp ? kb_inspect_kernel_holder_tcp("/proc", ports, _KB_CHANNEL_MAX, launcher, ret_pid, &connections,
                                                       why, why_size)
                        : kb_inspect_kernel_holder("/proc", kb_kernel_socket_dir(k), launcher, ret_pid, &connections,
                                                   why, why_size);
                /* A connection libzmq is still making, or an end not accepted yet: again, shortly. */
                if (r >= 0 || r == -ENOMEM || r == -EPERM || kb_now_ms() >= until)
                        break;
                (void) poll(NULL, 0, 20);
        }
        if (r < 0)
                return r;
        _cleanup_error_ kb_error *error = NULL;
        r = kb_sandbox_audit_adopt(kb_kernel_sandbox(k), *ret_pid, workspace, &error);
        if (r < 0)
                snprintf(why, why_size, "%s", kb_error_text(error, r));
        return r;
}

int scenario_audit_adopt(ctx *x) {
        char why[512] = "";
        pid_t kernel = 0;
        const char *workspace = x->env->audit->workspace;
        int r = audit_find_kernel(x->h.kernel, workspace, &kernel, why, sizeof why);
        if (r < 0) {
                scenario_add_check(x, kb_check_id(KB_CHECK_PID2), "fail", 0, NULL,
                                   "the kernel could not be found from the host: %s", why);
                return r;
        }
        kb_sandbox *sb = kb_kernel_sandbox(x->h.kernel);
        x->inside.kernel_pid = nspid_of(kernel);
        if (workspace)
                snprintf(x->inside.workspace, sizeof x->inside.workspace, "%s", workspace);
        else if (cwd_inside(kernel, x->inside.workspace, sizeof x->inside.workspace) < 0)
                snprintf(x->inside.workspace, sizeof x->inside.workspace, "/");
        /* The team's runtime folder is where the launcher shows the kernel its sockets, at the same
         * path: the probe program and the go files are there. */
        snprintf(x->inside.program, sizeof x->inside.program, "%s/%s", kb_kernel_runtime_dir(x->h.kernel), AUDIT_PROBE);
        snprintf(x->inside.handoff, sizeof x->inside.handoff, "%s", kb_kernel_runtime_dir(x->h.kernel));
        if (kb_fact_set_int(x->audit, FACT_AUDIT_KERNEL_PID, kernel) < 0 ||
            kb_fact_set_int(x->audit, FACT_AUDIT_KERNEL_NSPID, x->inside.kernel_pid) < 0 ||
            kb_fact_set_int(x->audit, FACT_AUDIT_INIT_PID, kb_sandbox_init_pid(sb)) < 0 ||
            kb_fact_set_bool(x->audit, FACT_AUDIT_OWN_PIDNS, kb_sandbox_pidns(sb) != 0) < 0 ||
            kb_fact_set_str(x->audit, FACT_AUDIT_WORKSPACE, x->inside.workspace) < 0)
                return -ENOMEM;
        kb_harness_log(&x->h, KB_LOG_INFO,
                       "kernel found: host pid %d (pid %lld in its %s pid namespace), holding the kernel end of "
                       "kbound's %s connections; workspace %s",
                       (int) kernel, (long long) x->inside.kernel_pid, kb_sandbox_pidns(sb) ? "own" : "host's",
                       audit_tcp(x) ? "tcp" : "ipc", x->inside.workspace);
        if (!x->expect && !(x->expect = json_object_new_object()))
                return -ENOMEM;
        scenario_expect_obj(x, FACT_EXPECT_AUDIT, json_object_get(x->audit));
        return 0;
}

/* ---- the twin: does the kernel outlive its launcher? ---- */

/* Whether pidfd's process ended within bound_ms: the ms it took, or -1. */
static int64_t gone_within(int pidfd, int64_t t0, int64_t bound_ms) {
        if (pidfd < 0)
                return 0; /* nothing of its own to end */
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        int left = kb_ms_left(t0 + bound_ms);
        while (poll(&p, 1, left) < 0 && errno == EINTR)
                left = kb_ms_left(t0 + bound_ms);
        return (p.revents & POLLIN) ? kb_now_ms() - t0 : -1;
}

void scenario_audit_lifetime(ctx *x) {
        kb_harness twin_h = {
                .spec = x->spec, .log = x->h.log, .log_userdata = x->h.log_userdata, .deadline_ms = x->h.deadline_ms};
        char team[KB_TEAM_NAME_MAX + 1];
        const char *own = kb_kernel_team_dir(x->h.kernel);
        const char *slash = own ? strrchr(own, '/') : NULL;
        snprintf(team, sizeof team, "%.58s-twin", slash ? slash + 1 : "audit");
        kb_kernel_options ko = kb_harness_kernel_options(&twin_h, &x->env->harness, team, CELL_TIMEOUT_MS);
        scenario_audit_options(x, &ko);
        ko.on_msg = NULL;
        /* The twin's launch records its own facts: x's are kept aside and put back. */
        json_object *audit = TAKE_PTR(x->audit);
        _cleanup_error_ kb_error *error = NULL;
        json_object *ev = json_object_new_object();
        kb_kernel *twin = NULL;
        char why[512] = "";
        pid_t kernel = 0;
        int r = kb_kernel_start(&ko, &twin, &error);
        if (r < 0)
                snprintf(why, sizeof why, "the twin did not start: %s", kb_error_text(error, r));
        else
                r = audit_find_kernel(twin, NULL, &kernel, why, sizeof why); /* why says, when not */
        json_object_put(x->audit);
        x->audit = audit;
        if (r >= 0) {
                kb_sandbox *sb = kb_kernel_sandbox(twin);
                /* The launcher is kbound's unreaped child: its pid names it until kbound reaps it. */
                int64_t t0 = kb_now_ms();
                (void) kill(kb_sandbox_bwrap_pid(sb), SIGKILL);
                int64_t kernel_ms = gone_within(kb_sandbox_pidfd(sb), t0, LIFETIME_BOUND_MS);
                int64_t init_ms = kb_sandbox_pidns(sb) ? gone_within(kb_sandbox_init_pidfd(sb), t0, 500) : kernel_ms;
                bool survived = kernel_ms < 0 || init_ms < 0;
                if (kb_fact_set_int(ev, FACT_LIFETIME_BOUND_MS, LIFETIME_BOUND_MS) < 0 ||
                    (init_ms >= 0 ? kb_fact_set_int(ev, FACT_LIFETIME_INIT_GONE_MS, init_ms)
                                  : kb_fact_set_null(ev, FACT_LIFETIME_INIT_GONE_MS)) < 0 ||
                    (kernel_ms >= 0 ? kb_fact_set_int(ev, FACT_LIFETIME_PID2_GONE_MS, kernel_ms)
                                    : kb_fact_set_null(ev, FACT_LIFETIME_PID2_GONE_MS)) < 0 ||
                    kb_fact_set_bool(ev, FACT_LIFETIME_SURVIVED, survived) < 0 ||
                    kb_fact_set_bool(ev, FACT_LIFETIME_STOPPED_BY_KBOUND, survived) < 0) {
                        json_object_put(ev);
                        ev = NULL;
                }
        } else if (kb_fact_set_str(ev, FACT_LIFETIME_ERROR, why) < 0) {
                json_object_put(ev);
                ev = NULL;
        }
        /* What survived is stopped through its pidfds (kb_sandbox_stop), its folders removed. */
        kb_kernel_destroy(&twin, false);
        scenario_expect_obj(x, FACT_EXPECT_LIFETIME, ev);
}

void scenario_audit_end(ctx *x) {
        int r = kb_audit_hold(x->env->audit->expect, x->env->audit->expect_path, x->h.checks);
        if (r == -ENOMEM)
                scenario_add_check(x, kb_check_id(KB_CHECK_BACKEND), "fail", 0, NULL,
                                   "out of memory while holding the checks to their expectations");
        json_object_object_add(x->h.k, "audit", json_object_get(x->audit));
}

void scenario_audit_binds(ctx *x, json_object *binds) {
        json_object *writable = binds ? kb_audit_expect_writable(x->env->audit->expect) : NULL;
        for (size_t i = 0; writable && i < json_object_array_length(writable); i++) {
                const char *folder = json_object_get_string(json_object_array_get_idx(writable, i));
                json_object *id = scenario_file_id(folder, FACT_TEAM_BIND_DEV, FACT_TEAM_BIND_INO);
                if (!id)
                        continue; /* gone since the file was read: its mounts count as foreign */
                _cleanup_free_ char *real = realpath(folder, NULL);
                if (kb_fact_set_str(id, FACT_TEAM_BIND_NAME, "expected") < 0 ||
                    (real ? kb_fact_set_str(id, FACT_TEAM_BIND_PATH, real)
                          : kb_fact_set_null(id, FACT_TEAM_BIND_PATH)) < 0 ||
                    json_object_array_add(binds, id) < 0)
                        json_object_put(id);
        }
}
