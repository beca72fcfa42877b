/* scenario.c: one kernel's check sequence: launch, identity, boundary probes confirmed from the
 * host, both interrupt paths, namespace persistence; each step becomes a check with evidence. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "kbound/kernel.h"
#include "kbound/sandbox.h"
#include "kbound/scenario.h"
#include "kbound/report.h"

#define CELL_TIMEOUT_MS 60000
#define MARKER_TIMEOUT_MS 30000
#define CONTROL_REPLY_TIMEOUT_MS 2000
/* After no interrupt_reply: only for an execute_reply already in flight. The cell is watched
 * during the whole reply wait (its reply is recorded as it arrives), so a longer grace would only
 * add idle time for kernels that ignore the request (IRkernel: it cost 1 s of every check). */
#define CONTROL_GRACE_MS 100
#define STOP_GRACE_MS 1000
#define HOST_MOUNTINFO_MAX (4 * 1024 * 1024)

typedef struct ctx {
        const kb_check_env *env;
        const kb_kernelspec *spec;
        kb_langpack *lp;
        kb_kernel *kernel;
        json_object *k;       /* the kernel object being built */
        json_object *checks;  /* k["checks"] */
        bool cancelled;
        bool wedged;          /* a long cell could not be stopped by any path */
        char nonce[33];
} ctx;

static void logf_(const ctx *x, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void logf_(const ctx *x, int level, const char *fmt, ...) {
        if (!x->env->log)
                return;
        char buf[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        char line[600];
        snprintf(line, sizeof(line), "kernel '%s': %s", x->spec->name, buf);
        /* Details quote the kernel (its log, kernel_info, error values): redact before anyone
         * sees them, with its key and every canary; a line that cannot be redacted is not sent. */
        _cleanup_free_ char *clean = x->kernel ? kb_kernel_redact_text(x->kernel, line) : strdup(line);
        const kb_secrets *sets[] = { x->env->secrets, x->env->sibling_secrets };
        for (size_t i = 0; clean && i < KB_ELEMENTSOF(sets); i++) {
                if (!sets[i])
                        continue;
                char *r = kb_secrets_redact_text(sets[i], clean, strlen(clean), NULL);
                free(clean);
                clean = r;
        }
        if (clean)
                x->env->log(x->env->log_userdata, level, clean);
}

/* Replaces *o by its copy redacted with the kernel's key and every canary set. On failure *o
 * becomes NULL: nothing unredacted is handed out. */
static void redact_result(const ctx *x, json_object **o) {
        json_object *cur = *o;
        if (x->kernel && cur) {
                json_object *r = kb_kernel_redact(x->kernel, cur);
                json_object_put(cur);
                cur = r;
        }
        const kb_secrets *sets[] = { x->env->secrets, x->env->sibling_secrets };
        for (size_t i = 0; cur && i < KB_ELEMENTSOF(sets); i++) {
                if (!sets[i])
                        continue;
                json_object *r = kb_secrets_redact(sets[i], cur);
                json_object_put(cur);
                cur = r;
        }
        *o = cur;
}

/* Whether the run's own deadline (check --timeout) has passed: whatever it cut short, start-up
 * included, makes the run incomplete (exit 1), not a kernel that cannot be checked (docs/faults.md). */
static bool run_deadline_passed(const kb_check_env *env) {
        return env->deadline_ms >= 0 && kb_ms_left(env->deadline_ms) == 0;
}

static int64_t step_deadline(const ctx *x, int64_t ms) {
        int64_t d = kb_now_ms() + ms;
        return x->env->deadline_ms >= 0 && x->env->deadline_ms < d ? x->env->deadline_ms : d;
}

static void add_check(ctx *x, const char *id, const char *status, int64_t started_ms, json_object *evidence,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void add_check(ctx *x, const char *id, const char *status, int64_t started_ms, json_object *evidence,
                      const char *fmt, ...) {
        char detail[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof(detail), fmt, ap);
        va_end(ap);
        json_object *c = json_object_new_object();
        json_object_object_add(c, "id", json_object_new_string(id));
        json_object_object_add(c, "status", json_object_new_string(status));
        json_object_object_add(c, "detail", json_object_new_string(detail));
        json_object_object_add(c, "duration_ms", json_object_new_int64(started_ms ? kb_now_ms() - started_ms : 0));
        json_object_object_add(c, "evidence", evidence ? evidence : json_object_new_object());
        json_object_array_add(x->checks, c);
        logf_(x, strcmp(status, "fail") == 0 ? KB_LOG_WARN : KB_LOG_INFO, "%s %s: %s", id, status, detail);
}

static const char *jstr(json_object *o, const char *key) {
        json_object *v = NULL;
        if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

static json_object *jget(json_object *o, const char *key) {
        json_object *v = NULL;
        return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static bool jbool(json_object *o, const char *key) {
        json_object *v = jget(o, key);
        return v && json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

static bool jint(json_object *o, const char *key, int64_t *ret) {
        json_object *v = jget(o, key);
        if (!v || !json_object_is_type(v, json_type_int))
                return false;
        *ret = json_object_get_int64(v);
        return true;
}

/* Why a wait ended badly, in words, for a check's detail. */
static const char *wait_error(ctx *x, int r) {
        if (r == -ECANCELED)
                x->cancelled = true;
        switch (r) {
        case -ETIMEDOUT:
                return "timed out";
        case -ESRCH: {
                /* Say how it died: the exit status (bwrap passes the kernel's on; the pidfd fires
                 * first, so allow bwrap a moment to follow) and the end of the kernel's log. */
                static __thread char died[400];
                _cleanup_free_ char *d = kb_kernel_death_diagnosis(x->kernel, 200, kb_now_ms() + 1000);
                snprintf(died, sizeof(died), "%s", d ? d : "the kernel process died");
                return died;
        }
        case -ECANCELED:
                return "cancelled";
        default: {
                static __thread char buf[256];
                kb_client_explain_error(kb_kernel_client(x->kernel), buf, sizeof(buf));
                return buf;
        }
        }
}

/* Runs one probe cell and returns its result object. On failure *ret_why says what went wrong. */
static int run_cell(ctx *x, const char *cell, json_object *params, int64_t timeout_ms, json_object **ret,
                    char *why, size_t why_size) {
        _cleanup_free_ char *code = NULL;
        _cleanup_json_ json_object *own_params = params ? NULL : json_object_new_object();
        int r = kb_langpack_render(x->lp, cell, params ? params : own_params, &code);
        if (r < 0) {
                snprintf(why, why_size, "cannot render cell '%s' from %s: %s", cell, kb_langpack_dir(x->lp),
                         strerror(-r));
                return r;
        }
        kb_client *c = kb_kernel_client(x->kernel);
        kb_execution *ex = NULL;
        kb_execute_options eo = { .store_history = false, .stop_on_error = false };
        r = kb_client_execute_start(c, code, &eo, &ex);
        if (r >= 0)
                r = kb_client_execute_wait(c, ex, step_deadline(x, timeout_ms), NULL, NULL);
        if (r == -ETIMEDOUT && ex) {
                char what[256];
                kb_execution_explain_timeout(c, ex, what, sizeof(what));
                snprintf(why, why_size, "cell '%s': timed out: %s", cell, what);
        } else if (r < 0) {
                snprintf(why, why_size, "cell '%s': %s", cell, wait_error(x, r));
        } else if (strcmp(ex->status, "ok") != 0) {
                snprintf(why, why_size, "cell '%s' ended with status %s%s%s%s%s", cell, ex->status,
                         ex->ename ? ": " : "", ex->ename ? ex->ename : "", ex->evalue ? ": " : "",
                         ex->evalue ? ex->evalue : "");
                r = -EPROTO;
        } else {
                r = kb_probe_result(ex, ret);
                if (r < 0)
                        snprintf(why, why_size, "cell '%s' %s", cell,
                                 r == -ENOMSG ? "published no " KB_PROBE_MIME " result"
                                              : "published a malformed or duplicate probe result");
        }
        kb_execution_destroy(c, &ex);
        return r;
}

/* ---- sandbox.backend and identity ---- */

static void check_backend(ctx *x) {
        kb_sandbox *sb = kb_kernel_sandbox(x->kernel);
        json_object *info = kb_sandbox_info(sb);
        json_object *ev = json_object_new_object();
        json_object *ns = json_object_new_object();
        static const char *const names[] = { "pid", "net", "mnt", "ipc", "uts", "user", "cgroup" };
        char list[128] = "";
        for (size_t i = 0; i < KB_ELEMENTSOF(names); i++) {
                char key[32];
                snprintf(key, sizeof(key), "%s-namespace", names[i]);
                json_object *v = jget(info, key);
                json_object_object_add(ns, names[i], v ? json_object_get(v) : NULL);
                if (v) {
                        strncat(list, *list ? ", " : "", sizeof(list) - strlen(list) - 1);
                        strncat(list, names[i], sizeof(list) - strlen(list) - 1);
                }
        }
        json_object_object_add(x->k, "namespaces", ns);
        json_object_object_add(x->k, "kernel_host_pid", json_object_new_int(kb_sandbox_kernel_pid(sb)));
        json_object_object_add(ev, "bwrap", json_object_new_string(x->env->bwrap));
        json_object_object_add(ev, "bwrap_version",
                               json_object_new_string(x->env->bwrap_version ? x->env->bwrap_version : "?"));
        json_object_object_add(ev, "info", json_object_get(info));
        /* A pid namespace is what makes PID 2 meaningful; without it nothing else holds. */
        bool has_pid = jget(info, "pid-namespace") != NULL;
        bool has_net = jget(info, "net-namespace") != NULL;
        if (!has_pid)
                add_check(x, "sandbox.backend", "fail", 0, ev, "bubblewrap reported no pid namespace");
        else if (!has_net && !x->env->allow_network)
                add_check(x, "sandbox.backend", "fail", 0, ev, "bubblewrap reported no network namespace");
        else
                add_check(x, "sandbox.backend", "pass", 0, ev, "bubblewrap %s (%s); namespaces: %s; start-up %lld ms",
                          x->env->bwrap_version ? x->env->bwrap_version : "?", x->env->bwrap, list,
                          (long long) kb_kernel_startup_ms(x->kernel));
}

static int64_t nspid_last(json_object *result) {
        json_object *nspid = jget(result, "nspid");
        size_t n = nspid && json_object_is_type(nspid, json_type_array) ? json_object_array_length(nspid) : 0;
        return n ? json_object_get_int64(json_object_array_get_idx(nspid, n - 1)) : -1;
}

static void check_identity(ctx *x) {
        int64_t t0 = kb_now_ms();
        char why[512];
        json_object *result = NULL;
        kb_sandbox *sb = kb_kernel_sandbox(x->kernel);
        int r = run_cell(x, "identity", NULL, CELL_TIMEOUT_MS, &result, why, sizeof(why));
        if (r < 0) {
                add_check(x, "identity.pid2", "fail", t0, NULL, "%s", why);
        } else {
                int64_t pid = -1;
                jint(result, "pid", &pid);
                int64_t last = nspid_last(result);
                json_object *ev = json_object_new_object();
                json_object_object_add(ev, "cell", json_object_get(result));
                json_object_object_add(ev, "kernel_host_pid", json_object_new_int(kb_sandbox_kernel_pid(sb)));
                if (pid == 2 && last == 2)
                        add_check(x, "identity.pid2", "pass", t0, ev,
                                  "the kernel reports pid 2 in its namespace; host pid %d is PID 2 of the sandbox",
                                  (int) kb_sandbox_kernel_pid(sb));
                else
                        add_check(x, "identity.pid2", "fail", t0, ev,
                                  "the kernel reports pid %lld (NSpid ends in %lld), expected 2: no private pid "
                                  "namespace or a different process",
                                  (long long) pid, (long long) last);
        }
        json_object_put(result);

        t0 = kb_now_ms();
        r = kb_sandbox_verify(sb);
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

/* ---- boundary probes ---- */

/* The device ("major:minor") of the mount holding path, from mountinfo lines; NULL if unknown. */
static const char *mount_device_of(json_object *mounts, const char *path, char *dev, size_t dev_size,
                                   char *mount_point, size_t mp_size) {
        size_t best = 0;
        bool found = false;
        size_t n = mounts && json_object_is_type(mounts, json_type_array) ? json_object_array_length(mounts) : 0;
        for (size_t i = 0; i < n; i++) {
                const char *line = json_object_get_string(json_object_array_get_idx(mounts, i));
                char d[64], mp[1024];
                /* mountinfo: id parent major:minor root mount-point options ... */
                if (!line || sscanf(line, "%*s %*s %63s %*s %1023s", d, mp) != 2)
                        continue;
                size_t len = strlen(mp);
                bool prefix = strcmp(mp, "/") == 0 ||
                              (strncmp(path, mp, len) == 0 && (path[len] == '/' || path[len] == '\0'));
                if (prefix && (len >= best || !found)) { /* later lines are mounted on top */
                        best = len;
                        found = true;
                        snprintf(dev, dev_size, "%s", d);
                        snprintf(mount_point, mp_size, "%s", mp);
                }
        }
        return found ? dev : NULL;
}

/* Every device number mounted in kbound's own mount namespace: a write that lands on one of these
 * landed on a filesystem the host shares. */
static json_object *host_devices(void) {
        json_object *set = json_object_new_object();
        FILE *f = fopen("/proc/self/mountinfo", "re");
        if (!f || !set) {
                if (f)
                        fclose(f);
                return set;
        }
        char line[4096];
        while (fgets(line, sizeof(line), f)) {
                char d[64];
                if (sscanf(line, "%*s %*s %63s", d) == 1)
                        json_object_object_add(set, d, NULL);
        }
        fclose(f);
        return set;
}

static void check_write_outside(ctx *x, json_object *result, const char *escape_name, int64_t t0) {
        json_object *attempts = jget(result, "write_outside");
        json_object *mounts = jget(result, "mounts");
        _cleanup_json_ json_object *host_devs = host_devices();
        json_object *ev = json_object_new_object();
        json_object *breaches = json_object_new_array();
        json_object *private_writes = json_object_new_array();
        json_object_object_add(ev, "breaches", breaches);
        json_object_object_add(ev, "sandbox_private_writes", private_writes);
        size_t n = attempts && json_object_is_type(attempts, json_type_array) ? json_object_array_length(attempts) : 0;
        json_object_object_add(ev, "attempts", json_object_new_int((int) n));

        /* Inside view: a write that succeeded must have landed on a filesystem the host does not
         * mount anywhere (a private tmpfs); otherwise the host could see it under some path. */
        for (size_t i = 0; i < n; i++) {
                json_object *a = json_object_array_get_idx(attempts, i);
                const char *path = jstr(a, "path");
                if (!path || !jbool(a, "created"))
                        continue;
                char dev[64], mp[1024], line[1400];
                if (!mount_device_of(mounts, path, dev, sizeof(dev), mp, sizeof(mp))) {
                        snprintf(line, sizeof(line), "created a file in %s on a mount the cell did not report", path);
                        json_object_array_add(breaches, json_object_new_string(line));
                } else if (json_object_object_get_ex(host_devs, dev, NULL)) {
                        snprintf(line, sizeof(line), "created a file in %s on device %s (mounted at %s), which the host "
                                 "also mounts", path, dev, mp);
                        json_object_array_add(breaches, json_object_new_string(line));
                } else {
                        json_object_array_add(private_writes, json_object_new_string(path));
                }
        }
        /* Host view: the file must not exist at any host folder the cell aimed at, nor at the host
         * path of anything the cell says it created. */
        json_object *dirs = x->env->escape_dirs;
        size_t n_dirs = dirs ? json_object_array_length(dirs) : 0;
        for (size_t i = 0; i < n_dirs + n; i++) {
                const char *dir = i < n_dirs ? json_object_get_string(json_object_array_get_idx(dirs, i))
                                             : jstr(json_object_array_get_idx(attempts, i - n_dirs), "path");
                if (!dir)
                        continue;
                _cleanup_free_ char *p = NULL;
                if (asprintf(&p, "%s/%s", dir, escape_name) < 0)
                        continue;
                struct stat st;
                if (lstat(p, &st) == 0) {
                        char line[1400];
                        snprintf(line, sizeof(line), "the host sees the cell's file at %s", p);
                        json_object_array_add(breaches, json_object_new_string(line));
                        unlink(p);
                }
        }
        /* With an image as root, the host path of an in-sandbox /usr/x is <rootfs>/usr/x. */
        for (size_t i = 0; x->env->rootfs && i < n; i++) {
                const char *dir = jstr(json_object_array_get_idx(attempts, i), "path");
                _cleanup_free_ char *p = NULL;
                struct stat st;
                /* The path is the cell's word: nothing with ".." is joined to a host path. */
                if (dir && dir[0] == '/' && !strstr(dir, "..") &&
                    asprintf(&p, "%s%s/%s", x->env->rootfs, dir, escape_name) >= 0 &&
                    lstat(p, &st) == 0) {
                        char line[1400];
                        snprintf(line, sizeof(line), "the cell's file landed in the image at %s", p);
                        json_object_array_add(breaches, json_object_new_string(line));
                        unlink(p);
                }
        }
        size_t n_breach = json_object_array_length(breaches);
        if (n == 0)
                add_check(x, "boundary.write_outside", "fail", t0, ev, "the probe reported no write attempts");
        else if (n_breach)
                add_check(x, "boundary.write_outside", "fail", t0, ev, "%s%s",
                          json_object_get_string(json_object_array_get_idx(breaches, 0)),
                          n_breach > 1 ? " (and more, see evidence)" : "");
        else
                add_check(x, "boundary.write_outside", "pass", t0, ev,
                          "%zu locations tried; %zu writes landed only on sandbox-private filesystems; nothing "
                          "appeared in %zu host folders",
                          n, json_object_array_length(private_writes), n_dirs);
}

static void check_workspace(ctx *x, json_object *result, const char *file_name, int64_t t0) {
        json_object *ws = jget(result, "workspace");
        _cleanup_free_ char *host_path = NULL;
        char content[128] = "";
        bool host_ok = false;
        if (asprintf(&host_path, "%s/%s", kb_kernel_workspace(x->kernel), file_name) >= 0) {
                _cleanup_close_ int fd = open(host_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                ssize_t len = fd >= 0 ? read(fd, content, sizeof(content) - 1) : -1;
                if (len > 0) {
                        content[len] = '\0';
                        content[strcspn(content, "\r\n")] = '\0';
                        host_ok = strcmp(content, x->nonce) == 0;
                }
        }
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "cell", json_object_get(ws));
        json_object_object_add(ev, "host_read_back", json_object_new_boolean(host_ok));
        if (jbool(ws, "written") && host_ok)
                add_check(x, "boundary.workspace_writable", "pass", t0, ev,
                          "the cell wrote a nonce to %s; the host read the same nonce back", KB_SANDBOX_WORKSPACE);
        else
                add_check(x, "boundary.workspace_writable", "fail", t0, ev, "%s",
                          !jbool(ws, "written") ? "the cell could not write to its workspace"
                                                : "the host did not find the cell's nonce in the workspace");
}

static void check_network(ctx *x, json_object *result, kb_canary_net *canary, int64_t t0) {
        json_object *net = jget(result, "network");
        unsigned tcp_hits = 0, unix_hits = 0;
        kb_canary_net_count(canary, &tcp_hits, &unix_hits);
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "host_tcp_connections", json_object_new_int((int) tcp_hits));
        json_object_object_add(ev, "host_unix_connections", json_object_new_int((int) unix_hits));
        json_object_object_add(ev, "cell", json_object_get(net));
        if (x->env->allow_network) {
                add_check(x, "boundary.network", "not_claimed", t0, ev,
                          "raw-network override: network isolation NOT claimed (canary connections seen: %u)",
                          tcp_hits + unix_hits);
                return;
        }
        char why[512] = "";
        json_object *ifs = jget(net, "interfaces");
        size_t n_if = ifs && json_object_is_type(ifs, json_type_array) ? json_object_array_length(ifs) : 0;
        for (size_t i = 0; i < n_if && !*why; i++) {
                const char *name = json_object_get_string(json_object_array_get_idx(ifs, i));
                if (!name || strcmp(name, "lo") != 0)
                        snprintf(why, sizeof(why), "the sandbox has a network interface '%s' besides lo",
                                 name ? name : "?");
        }
        static const char *const route_keys[] = { "routes_v4", "routes_v6" };
        for (size_t k = 0; k < KB_ELEMENTSOF(route_keys) && !*why; k++) {
                json_object *routes = jget(net, route_keys[k]);
                size_t nr = routes && json_object_is_type(routes, json_type_array) ? json_object_array_length(routes) : 0;
                for (size_t i = 0; i < nr && !*why; i++) {
                        const char *line = json_object_get_string(json_object_array_get_idx(routes, i));
                        /* /proc/net/route starts with the device; ipv6_route ends with it. */
                        char dev[64] = "";
                        if (!line)
                                continue;
                        if (k == 0)
                                sscanf(line, "%63s", dev);
                        else {
                                const char *sp = strrchr(line, ' ');
                                snprintf(dev, sizeof(dev), "%s", sp ? sp + 1 : line);
                                dev[strcspn(dev, "\r\n")] = '\0';
                        }
                        if (*dev && strcmp(dev, "lo") != 0)
                                snprintf(why, sizeof(why), "the sandbox has a route through '%s'", dev);
                }
        }
        static const char *const conn_keys[] = { "tcp", "abstract" };
        size_t tested = 0;
        for (size_t k = 0; k < KB_ELEMENTSOF(conn_keys); k++) {
                json_object *arr = jget(net, conn_keys[k]);
                size_t na = arr && json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
                for (size_t i = 0; i < na; i++) {
                        json_object *a = json_object_array_get_idx(arr, i);
                        if (k == 1 && jget(a, "tested") && !jbool(a, "tested"))
                                continue;
                        tested++;
                        if (jbool(a, "connected") && !*why)
                                snprintf(why, sizeof(why), "the cell connected to the host's %s canary",
                                         k == 0 ? "loopback TCP" : "abstract unix socket");
                }
        }
        json_object *visible = jget(net, "unix_visible");
        if (!*why && visible && json_object_is_type(visible, json_type_array) && json_object_array_length(visible))
                snprintf(why, sizeof(why), "the host's abstract canary socket is visible in the sandbox's /proc/net/unix");
        if (!*why && (tcp_hits || unix_hits))
                snprintf(why, sizeof(why), "the host's canaries saw %u TCP and %u unix connections", tcp_hits, unix_hits);
        if (!*why && tested == 0)
                snprintf(why, sizeof(why), "the probe tested no canary connection");
        if (!*why && !net)
                snprintf(why, sizeof(why), "the probe reported no network facts");
        if (*why)
                add_check(x, "boundary.network", "fail", t0, ev, "%s", why);
        else
                add_check(x, "boundary.network", "pass", t0, ev,
                          "%zu canary connection attempts failed and the host saw none; interfaces: lo only; "
                          "no routes",
                          tested);
}

static void check_credentials(ctx *x, json_object *result, int64_t t0) {
        json_object *cred = jget(result, "credentials");
        json_object *sub = jget(cred, "subprocess");
        json_object *found = kb_secrets_scan(x->env->secrets, result);
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "secrets_checked", json_object_new_int((int) kb_secrets_count(x->env->secrets)));
        json_object_object_add(ev, "found", found ? found : json_object_new_array());
        json_object *procs = jget(sub, "proc");
        size_t n_proc = procs && json_object_is_type(procs, json_type_array) ? json_object_array_length(procs) : 0;
        json_object_object_add(ev, "processes_read", json_object_new_int((int) n_proc));
        json_object *files = jget(cred, "files");
        const char *file_seen = NULL;
        size_t n_files = files && json_object_is_type(files, json_type_array) ? json_object_array_length(files) : 0;
        for (size_t i = 0; i < n_files; i++)
                if (jbool(json_object_array_get_idx(files, i), "exists"))
                        file_seen = jstr(json_object_array_get_idx(files, i), "path");
        size_t n_found = found ? json_object_array_length(found) : 0;
        if (!found)
                add_check(x, "boundary.credentials", "fail", t0, ev, "out of memory while scanning");
        else if (n_found)
                add_check(x, "boundary.credentials", "fail", t0, ev,
                          "%zu secret(s) reachable from the sandbox, first: %s (values never shown)", n_found,
                          json_object_get_string(json_object_array_get_idx(found, 0)));
        else if (file_seen)
                add_check(x, "boundary.credentials", "fail", t0, ev, "the host credential file %s is visible in the sandbox",
                          file_seen);
        else if (!jbool(sub, "spawned"))
                add_check(x, "boundary.credentials", "fail", t0, ev,
                          "the cell could not spawn a subprocess (%s), so the claim was not tested",
                          jstr(sub, "error") ? jstr(sub, "error") : "no reason given");
        else
                add_check(x, "boundary.credentials", "pass", t0, ev,
                          "%zu daemon secrets and canaries: none in a spawned subprocess's environment, in %zu "
                          "readable /proc/*/environ and cmdline, or at the host credential file's path",
                          kb_secrets_count(x->env->secrets), n_proc);
}

static void check_cross_team(ctx *x, json_object *result, int64_t t0) {
        json_object *cross = jget(result, "cross_team");
        json_object *found = kb_secrets_scan(x->env->sibling_secrets, result);
        json_object *ev = json_object_new_object();
        /* What the cell saw of each path, without what it read: the canary's value (or another
         * team's file names) must not reach a report. The scan above had the content. */
        json_object *cell = json_object_new_array();
        size_t n_cross = cross && json_object_is_type(cross, json_type_array) ? json_object_array_length(cross) : 0;
        for (size_t i = 0; cell && i < n_cross; i++) {
                json_object *e = json_object_array_get_idx(cross, i), *copy = json_object_new_object();
                if (!copy || !json_object_is_type(e, json_type_object)) {
                        json_object_put(copy);
                        continue;
                }
                json_object_object_foreach(e, key, value) {
                        if (strcmp(key, "content") == 0)
                                json_object_object_add(copy, "content_read",
                                                       json_object_new_boolean(value && !json_object_is_type(value, json_type_null)));
                        else
                                json_object_object_add(copy, key, json_object_get(value));
                }
                json_object_array_add(cell, copy);
        }
        json_object_object_add(ev, "cell", cell);
        json_object_object_add(ev, "canaries_found", found ? found : json_object_new_array());
        const char *seen = NULL;
        size_t n = cross && json_object_is_type(cross, json_type_array) ? json_object_array_length(cross) : 0;
        for (size_t i = 0; i < n && !seen; i++) {
                json_object *e = json_object_array_get_idx(cross, i);
                if (jbool(e, "exists") || jbool(e, "readable"))
                        seen = jstr(e, "path");
        }
        /* Another team's folder showing up in the mount table is a leak even if unreadable. */
        json_object *mounts = jget(result, "mounts");
        json_object *paths = x->env->sibling_paths;
        size_t n_mounts = mounts && json_object_is_type(mounts, json_type_array) ? json_object_array_length(mounts) : 0;
        for (size_t i = 0; i < n_mounts && !seen; i++) {
                const char *line = json_object_get_string(json_object_array_get_idx(mounts, i));
                for (size_t j = 0; line && paths && j < json_object_array_length(paths); j++) {
                        const char *p = json_object_get_string(json_object_array_get_idx(paths, j));
                        if (p && strstr(line, p))
                                seen = p;
                }
        }
        if (!found)
                add_check(x, "boundary.cross_team", "fail", t0, ev, "out of memory while scanning");
        else if (json_object_array_length(found))
                add_check(x, "boundary.cross_team", "fail", t0, ev, "another team's canary was readable in the sandbox");
        else if (seen)
                add_check(x, "boundary.cross_team", "fail", t0, ev, "another team's path %s is visible in the sandbox", seen);
        else if (n == 0)
                add_check(x, "boundary.cross_team", "fail", t0, ev, "the probe reported no cross-team attempts");
        else
                add_check(x, "boundary.cross_team", "pass", t0, ev,
                          "another team's folder and canary (%zu paths) are neither visible nor readable", n);
}

static void check_boundaries(ctx *x) {
        int64_t t0 = kb_now_ms();
        kb_canary_net *canary = NULL;
        char why[512];
        char escape_name[64], file_name[64];
        snprintf(escape_name, sizeof(escape_name), "kbound-escape-%.16s", x->nonce);
        snprintf(file_name, sizeof(file_name), "kbound-probe-%.16s.txt", x->nonce);
        static const char *const ids[] = { "boundary.write_outside", "boundary.workspace_writable",
                                           "boundary.network", "boundary.credentials", "boundary.cross_team" };

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
        int r = kb_canary_net_open(&canary);
        if (r >= 0)
                r = kb_canary_net_params(canary, params);
        if (r < 0) {
                for (size_t i = 0; i < KB_ELEMENTSOF(ids); i++)
                        add_check(x, ids[i], "fail", t0, NULL, "cannot open the host's loopback canaries: %s",
                                  strerror(-r));
                json_object_put(params);
                return;
        }
        json_object *result = NULL;
        r = run_cell(x, "probe", params, CELL_TIMEOUT_MS, &result, why, sizeof(why));
        json_object_put(params);
        if (r < 0) {
                for (size_t i = 0; i < KB_ELEMENTSOF(ids); i++)
                        add_check(x, ids[i], "fail", t0, NULL, "%s", why);
        } else {
                json_object_object_add(x->k, "process", json_object_get(jget(result, "process")));
                check_write_outside(x, result, escape_name, t0);
                check_workspace(x, result, file_name, t0);
                check_network(x, result, canary, t0);
                check_credentials(x, result, t0);
                check_cross_team(x, result, t0);
        }
        json_object_put(result);
        kb_canary_net_destroy(&canary);
}

/* ---- interrupts ---- */

typedef enum { PATH_CONTROL, PATH_PIDFD } interrupt_path;

static int marker_seen(void *userdata, kb_execution *ex, const kb_msg *msg) {
        return ex->stdout_text && strstr(ex->stdout_text, (const char *) userdata) != NULL;
}

/* True if the long cell ran to its end instead of being stopped. */
static bool cell_completed(const kb_execution *ex) {
        json_object *result = NULL;
        if (kb_probe_result(ex, &result) < 0)
                return false;
        bool done = jbool(result, "completed");
        json_object_put(result);
        return done;
}

static bool cell_stopped(const kb_execution *ex) {
        return ex->got_reply && strcmp(ex->status, "ok") != 0 && !cell_completed(ex);
}

/* Sends the interrupt through one path. *ret_reply gets the interrupt_reply status for control. */
static int send_interrupt(ctx *x, interrupt_path path, char **ret_reply) {
        if (path == PATH_PIDFD)
                return kb_kernel_signal(x->kernel, SIGINT);
        return kb_client_interrupt(kb_kernel_client(x->kernel), step_deadline(x, CONTROL_REPLY_TIMEOUT_MS), ret_reply);
}

static void check_interrupt(ctx *x, interrupt_path path) {
        const char *id = path == PATH_CONTROL ? "interrupt.control" : "interrupt.pidfd";
        bool message_mode = x->spec->interrupt_mode && strcmp(x->spec->interrupt_mode, "message") == 0;
        int64_t t0 = kb_now_ms();
        char marker[64], why[512];
        snprintf(marker, sizeof(marker), "kbound-marker-%s-%.8s", path == PATH_CONTROL ? "control" : "pidfd", x->nonce);
        if (x->wedged) {
                add_check(x, id, "fail", t0, NULL, "not tested: an earlier long cell could not be stopped");
                return;
        }
        json_object *params = json_object_new_object();
        json_object_object_add(params, "marker", json_object_new_string(marker));
        json_object_object_add(params, "seconds", json_object_new_int(x->env->long_cell_seconds));
        _cleanup_free_ char *code = NULL;
        int r = kb_langpack_render(x->lp, "long", params, &code);
        json_object_put(params);
        if (r < 0) {
                add_check(x, id, "fail", t0, NULL, "cannot render the long cell: %s", strerror(-r));
                return;
        }
        kb_client *c = kb_kernel_client(x->kernel);
        kb_execution *ex = NULL;
        /* stop_on_error false: the interrupt makes this cell fail, and the next request must not
         * be aborted because of it. */
        kb_execute_options eo = { .store_history = false, .stop_on_error = false };
        r = kb_client_execute_start(c, code, &eo, &ex);
        if (r >= 0)
                r = kb_client_execute_wait(c, ex, step_deadline(x, MARKER_TIMEOUT_MS), marker_seen, marker);
        if (r != 1) {
                /* The kernel drops SIGINT outside a running cell, so without the marker there is
                 * nothing honest to interrupt. */
                add_check(x, id, "fail", t0, NULL, "the long cell never printed its start marker (%s)",
                          r == 0 ? "it finished first" : wait_error(x, r));
                if (r == -ETIMEDOUT)
                        x->wedged = true;
                kb_execution_destroy(c, &ex);
                return;
        }

        json_object *ev = json_object_new_object();
        int64_t sent = kb_now_ms();
        _cleanup_free_ char *reply_status = NULL;
        int sr = send_interrupt(x, path, &reply_status);
        if (path == PATH_CONTROL)
                json_object_object_add(ev, "interrupt_reply",
                                       sr == 0 ? json_object_new_string(reply_status ? reply_status : "") : NULL);
        if (sr < 0 && sr != -ETIMEDOUT)
                json_object_object_add(ev, "send_error", json_object_new_string(strerror(-sr)));
        /* A kernel that did not even answer interrupt_request gets a short grace, not the full
         * timeout: the reply is what says the request was taken. An execute_reply that came
         * during the reply wait has already been recorded in ex, so the cell counts as stopped
         * if it stopped at any time within CONTROL_REPLY_TIMEOUT_MS. */
        int wait_ms = path == PATH_CONTROL && sr == -ETIMEDOUT ? CONTROL_GRACE_MS : x->env->interrupt_timeout_ms;
        r = kb_client_execute_wait(c, ex, step_deadline(x, wait_ms), NULL, NULL);
        bool stopped = r == 0 && cell_stopped(ex);
        if (r == 0)
                json_object_object_add(ev, "execute_reply_status", json_object_new_string(ex->status));
        if (stopped) {
                json_object_object_add(ev, "latency_ms", json_object_new_int64(ex->reply_ms - sent));
                if (ex->ename)
                        json_object_object_add(ev, "ename", json_object_new_string(ex->ename));
                add_check(x, id, "pass", t0, ev, "%s stopped the running cell: execute_reply status '%s'%s%s after %lld ms",
                          path == PATH_CONTROL ? "interrupt_request on control" : "SIGINT through the pinned pidfd",
                          ex->status, ex->ename ? " " : "", ex->ename ? ex->ename : "",
                          (long long) (ex->reply_ms - sent));
                kb_execution_destroy(c, &ex);
                return;
        }
        if (r == -ECANCELED || r == -ESRCH) {
                add_check(x, id, "fail", t0, ev, "while waiting for the interrupted cell: %s", wait_error(x, r));
                kb_execution_destroy(c, &ex);
                return;
        }
        /* Not stopped: say why, then unblock the cell through the other path so the kernel can
         * still be checked. */
        if (r == 0)
                snprintf(why, sizeof(why), "the cell ran to completion (status %s)", ex->status);
        else if (path == PATH_CONTROL && sr == -ETIMEDOUT)
                snprintf(why, sizeof(why), "no interrupt_reply within %d ms and the cell kept running",
                         CONTROL_REPLY_TIMEOUT_MS);
        else if (path == PATH_CONTROL && sr == 0)
                snprintf(why, sizeof(why), "interrupt_reply '%s' but the cell kept running",
                         reply_status ? reply_status : "");
        else if (sr < 0)
                snprintf(why, sizeof(why), "the interrupt could not be sent (%s)", strerror(-sr));
        else
                snprintf(why, sizeof(why), "the cell kept running %d ms after the interrupt (%s)", wait_ms,
                         wait_error(x, r));
        if (r != 0) {
                (void) send_interrupt(x, path == PATH_CONTROL ? PATH_PIDFD : PATH_CONTROL, NULL);
                int u = kb_client_execute_wait(c, ex, step_deadline(x, x->env->interrupt_timeout_ms), NULL, NULL);
                json_object_object_add(ev, "unblocked_by_other_path", json_object_new_boolean(u == 0));
                if (u != 0)
                        x->wedged = true;
        }
        if (path == PATH_CONTROL && !message_mode)
                add_check(x, id, "unsupported", t0, ev,
                          "%s; the kernelspec declares interrupt_mode 'signal', so only the signal path is "
                          "required%s",
                          why, x->wedged ? "; neither path stopped the cell" : "");
        else
                add_check(x, id, "fail", t0, ev, "%s%s%s", why, x->wedged ? "; " : "",
                          x->wedged ? "and the other path did not stop it either" : "");
        kb_execution_destroy(c, &ex);
}

static void check_persistence(ctx *x) {
        int64_t t0 = kb_now_ms();
        char why[512];
        json_object *result = NULL;
        if (x->wedged) {
                add_check(x, "persistence.namespace", "fail", t0, NULL,
                          "not tested: a long cell could not be stopped, so the kernel cannot answer");
                return;
        }
        int r = run_cell(x, "get_var", NULL, CELL_TIMEOUT_MS, &result, why, sizeof(why));
        if (r < 0) {
                add_check(x, "persistence.namespace", "fail", t0, NULL, "%s", why);
                return;
        }
        const char *value = jstr(result, "value");
        int64_t pid = -1;
        jint(result, "pid", &pid);
        int v = kb_sandbox_verify(kb_kernel_sandbox(x->kernel));
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "pid", json_object_new_int64(pid));
        json_object_object_add(ev, "nonce_intact", json_object_new_boolean(value && strcmp(value, x->nonce) == 0));
        json_object_object_add(ev, "pidfd_same_process", json_object_new_boolean(v == 0));
        if (!value || strcmp(value, x->nonce) != 0)
                add_check(x, "persistence.namespace", "fail", t0, ev,
                          "the variable set before the interrupts %s", value ? "changed" : "is gone");
        else if (pid != 2)
                add_check(x, "persistence.namespace", "fail", t0, ev, "the answering kernel is pid %lld, not 2",
                          (long long) pid);
        else if (v != 0)
                add_check(x, "persistence.namespace", "fail", t0, ev,
                          "the pinned pidfd no longer refers to the same live PID 2");
        else
                add_check(x, "persistence.namespace", "pass", t0, ev,
                          "after both interrupts the same process (pid 2, pinned pidfd) still holds the nonce");
        json_object_put(result);
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
        json_object_object_add(x->k, "error", json_object_new_string(buf));
        logf_(x, KB_LOG_ERROR, "%s", buf);
}

int kb_scenario_run(const kb_check_env *env, const kb_kernelspec *spec, const char *team, json_object **ret,
                    kb_check_outcome *ret_outcome) {
        ctx x = { .env = env, .spec = spec };
        kb_check_outcome outcome = KB_CHECK_DONE;
        _cleanup_free_ char *diagnosis = NULL;
        x.k = kb_report_kernel_new(spec, team);
        if (!x.k)
                return -ENOMEM;
        json_object_object_get_ex(x.k, "checks", &x.checks);
        int r = kb_random_hex(x.nonce, 16);
        if (r < 0) {
                set_error(&x, "no randomness for nonces: %s", strerror(-r));
                outcome = KB_CHECK_NOT_ENFORCED;
                goto done;
        }

        /* Probes are data: a language without a pack is not checked at all, and says so. */
        r = kb_langpack_find(env->kernels_dir, spec->language ? spec->language : "", &x.lp);
        if (r < 0) {
                set_error(&x, "no probe set for language '%s' in %s (%s): add a folder kernels/<language>/ with "
                          "kbound.json and the cells (see docs/probes.md)",
                          spec->language ? spec->language : "?", env->kernels_dir,
                          r == -ENOENT ? "none matches" : strerror(-r));
                add_check(&x, "sandbox.backend", "fail", 0, NULL, "not started: no probe set for this language");
                outcome = KB_CHECK_NOT_ENFORCED;
                goto done;
        }

        logf_(&x, KB_LOG_INFO, "starting in bubblewrap as team %s", team);
        kb_kernel_options ko = {
                .spec = spec,
                .base_dir = env->base_dir,
                .team = team,
                .sandbox = true,
                .bwrap = env->bwrap,
                .allow_network = env->allow_network,
                .rootfs = env->rootfs,
                .ro_paths = env->ro_paths,
                .host_env = env->host_env,
                .on_msg = env->on_msg,
                .on_msg_userdata = env->on_msg_userdata,
                .cancel_fd = env->cancel_fd,
                .deadline_ms = step_deadline(&x, CELL_TIMEOUT_MS),
        };
        r = kb_kernel_start(&ko, &x.kernel, &diagnosis);
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
                outcome = r == -ECANCELED || run_deadline_passed(env) ? KB_CHECK_CANCELLED : KB_CHECK_NOT_ENFORCED;
                goto done;
        }
        json_object_object_add(x.k, "startup_ms", json_object_new_int64(kb_kernel_startup_ms(x.kernel)));
        json_object_object_add(x.k, "kernel_info", kb_report_kernel_info(kb_kernel_info(x.kernel)));

        check_backend(&x);
        check_identity(&x);
        if (!x.cancelled)
                check_boundaries(&x);
        if (!x.cancelled && set_nonce(&x) >= 0) {
                check_interrupt(&x, PATH_CONTROL);
                if (!x.cancelled)
                        check_interrupt(&x, PATH_PIDFD);
                if (!x.cancelled)
                        check_persistence(&x);
        }
        /* A check the run's deadline cut short failed as a timeout; the run must say it is
         * incomplete too (teardown that runs past the deadline does not count). */
        if (x.cancelled || run_deadline_passed(env))
                outcome = KB_CHECK_CANCELLED;

done:
        if (x.kernel) {
                int status = 0;
                int grace = x.cancelled || x.wedged ? 0 : STOP_GRACE_MS;
                /* The shutdown_reply is the kernel's goodbye. What it does after it (ipykernel:
                 * 0.3-0.7 s of IO loops, history database, interpreter teardown) is only worth
                 * waiting for when the team folder is kept for inspection; otherwise the folder
                 * is removed and the whole pid namespace killed right after anyway. */
                if (grace && !env->keep && kb_kernel_client(x.kernel)) {
                        (void) kb_client_shutdown(kb_kernel_client(x.kernel), step_deadline(&x, grace));
                        grace = 0;
                }
                kb_kernel_stop(x.kernel, grace, kb_now_ms() + 5000, &status);
                /* What the client took in, so a transcript can be checked against it. */
                uint64_t received = 0, dropped = 0;
                kb_client_stats(kb_kernel_client(x.kernel), &received, &dropped);
                json_object *messages = json_object_new_object();
                json_object_object_add(messages, "received", json_object_new_int64((int64_t) received));
                json_object_object_add(messages, "dropped", json_object_new_int64((int64_t) dropped));
                json_object_object_add(x.k, "messages", messages);
        }
        /* Last, while the key is still known: the whole kernel object is redacted (a copy when
         * anything matched, so x.checks is looked up again). */
        redact_result(&x, &x.k);
        kb_kernel_destroy(&x.kernel, env->keep);
        kb_langpack_destroy(&x.lp);
        if (!x.k)
                return -ENOMEM;
        x.checks = NULL;
        json_object_object_get_ex(x.k, "checks", &x.checks);
        if (env->deadline_ms >= 0 && kb_ms_left(env->deadline_ms) == 0 && outcome == KB_CHECK_DONE &&
            json_object_array_length(x.checks) < 11)
                outcome = KB_CHECK_CANCELLED;
        *ret = x.k;
        if (ret_outcome)
                *ret_outcome = outcome;
        return 0;
}
