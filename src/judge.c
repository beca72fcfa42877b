/* judge.c: verdicts as pure functions of host facts and probe results (judge.h). */
#include "judge-internal.h"
#include <inttypes.h>
#include <limits.h>
#include "kbound/inspect.h"
#include <stdio.h>
#include <string.h>
#include "jsonget.h"
#include "procfs.h"

#define PROBLEMS_MAX 64 /* kept in the evidence; the count says how many there were */

json_object *kb_judge_check(const char *id, const char *status, json_object *evidence, const char *fmt, ...) {
        char detail[DETAIL_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
        json_object *c = json_object_new_object();
        if (!c || json_object_object_add(c, "id", json_object_new_string(id)) < 0 ||
            json_object_object_add(c, "status", json_object_new_string(status)) < 0 ||
            json_object_object_add(c, "detail", json_object_new_string(detail)) < 0 ||
            json_object_object_add(c, "evidence", evidence ? evidence : json_object_new_object()) < 0) {
                if (!c)
                        json_object_put(evidence);
                json_object_put(c);
                return NULL;
        }
        return c;
}

/* ---- facts ---- */

/* The first error facts carry about what (NULL: any), as "what: error", or NULL. */
const char *judge_fact_error(json_object *o, const char *what, char *buf, size_t size) {
        json_object *errors = kb_json_get(o, "errors");
        for (size_t i = 0; i < arr_len(errors); i++) {
                json_object *e = at(errors, i);
                const char *w = kb_json_str(e, "what");
                if (!what || (w && strcmp(w, what) == 0)) {
                        snprintf(buf, size, "%s: %s", w ? w : "?", str_or(e, "error", "?"));
                        return buf;
                }
        }
        return NULL;
}

/* The last NSpid of a process: its pid inside its own namespace. */
int64_t judge_inner_pid(json_object *p) {
        json_object *nspid = kb_json_get(p, "nspid");
        size_t n = arr_len(nspid);
        json_object *v = n ? at(nspid, n - 1) : NULL;
        return v && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -1;
}

/* Appends text to strings unless it is there already (every look is judged; a mount that stays the
 * same is one problem). */
void judge_add_unique(json_object *strings, const char *text) {
        if (strings && !str_in(strings, text))
                json_object_array_add(strings, json_object_new_string(text));
}

/* ---- a verdict under construction: every problem is kept, the first one is the detail ---- */

void verdict_init(verdict *v) {
        v->ev = json_object_new_object();
        v->problems = json_object_new_array();
        v->n = 0;
        v->oom = !v->ev || !v->problems || json_object_object_add(v->ev, "problems", v->problems) < 0;
}

void verdict_problem(verdict *v, const char *fmt, ...) {
        char text[DETAIL_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        if (v->n++ < PROBLEMS_MAX && !v->oom && json_object_array_add(v->problems, json_object_new_string(text)) < 0)
                v->oom = true;
}

/* Adds a member to the evidence (value taken). */
void verdict_evidence(verdict *v, const char *key, json_object *value) {
        if (v->oom || !v->ev || json_object_object_add(v->ev, key, value) < 0) {
                json_object_put(value);
                v->oom = true;
        }
}

/* Ends the verdict: fail with the first problem (and how many more), else pass with pass_detail. */
json_object *verdict_end(verdict *v, const char *id, const char *pass_detail) {
        if (v->oom) {
                json_object_put(v->ev);
                return NULL;
        }
        if (v->n == 0)
                return kb_judge_check(id, "pass", v->ev, "%s", pass_detail);
        const char *first = json_object_get_string(at(v->problems, 0));
        if (v->n == 1)
                return kb_judge_check(id, "fail", v->ev, "%s", first);
        return kb_judge_check(id, "fail", v->ev, "%s (and %zu more, see evidence)", first, v->n - 1);
}

/* ---- snapshots ---- */

json_object *judge_last_look(const kb_judge_input *in) {
        size_t n = arr_len(in->snapshots);
        return n ? at(in->snapshots, n - 1) : NULL;
}

json_object *judge_look_labelled(const kb_judge_input *in, const char *label) {
        for (size_t i = 0; i < arr_len(in->snapshots); i++) {
                const char *l = kb_json_str(at(in->snapshots, i), "label");
                if (l && strcmp(l, label) == 0)
                        return at(in->snapshots, i);
        }
        return NULL;
}

/* Problems every host-judged check shares: no look, a look that missed the kernel or could not
 * list processes. */
void judge_look_problems(verdict *v, const kb_judge_input *in) {
        char buf[512];
        if (arr_len(in->snapshots) == 0) {
                verdict_problem(v, "the host took no look at the sandbox");
                return;
        }
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *snap = at(in->snapshots, s);
                if (judge_fact_error(snap, "the pinned kernel among the sandbox's processes", buf, sizeof buf))
                        verdict_problem(v, "the host did not find the pinned kernel among the sandbox's processes (%s)",
                                        str_or(snap, "label", "?"));
                if (judge_fact_error(snap, "the process list", buf, sizeof buf))
                        verdict_problem(v, "the host could not list processes (%s)", buf);
                if (judge_fact_error(snap, "more sandbox processes than kbound inspects", buf, sizeof buf))
                        verdict_problem(v, "the host did not inspect every process of the sandbox (%s)",
                                        str_or(snap, "label", "?"));
                if (judge_fact_error(snap, "more mount namespaces than kbound inspects", buf, sizeof buf))
                        verdict_problem(v, "the host did not inspect every mount namespace of the sandbox (%s)",
                                        str_or(snap, "label", "?"));
                if (arr_len(kb_json_get(snap, "processes")) == 0)
                        verdict_problem(v, "the host found no process in the sandbox (%s)", str_or(snap, "label", "?"));
        }
}

/* ---- the cell ---- */

/* The first error the cell reported for a sub-probe whose name starts with one of prefixes. */
const char *judge_cell_error(json_object *probe, const char *const *prefixes, char *buf, size_t size) {
        json_object *errors = kb_json_get(probe, "errors");
        for (size_t i = 0; i < arr_len(errors); i++) {
                const char *name = kb_json_str(at(errors, i), "probe");
                for (const char *const *p = prefixes; name && *p; p++)
                        if (strncmp(name, *p, strlen(*p)) == 0) {
                                snprintf(buf, size, "the cell's %s sub-probe failed: %s", name,
                                         str_or(at(errors, i), "error", "?"));
                                return buf;
                        }
        }
        return NULL;
}

void judge_no_probe(verdict *v, const kb_judge_input *in) {
        if (!in->probe && !in->cells_absent)
                verdict_problem(v, "the probe cell gave no result: %s", in->probe_error ? in->probe_error : "unknown");
}

/* ---- bwrap's command line ---- */

/* bwrap's options and how many arguments each takes (bwrap 0.8's --help). A command line is read
 * with this grammar, never by searching for a word: "--setenv X --die-with-parent" sets a variable. */
int judge_bwrap_arity(const char *opt) {
        static const char *const zero[] = {"--help",
                                           "--version",
                                           "--unshare-all",
                                           "--share-net",
                                           "--unshare-user",
                                           "--unshare-user-try",
                                           "--unshare-ipc",
                                           "--unshare-pid",
                                           "--unshare-net",
                                           "--unshare-uts",
                                           "--unshare-cgroup",
                                           "--unshare-cgroup-try",
                                           "--disable-userns",
                                           "--assert-userns-disabled",
                                           "--clearenv",
                                           "--new-session",
                                           "--die-with-parent",
                                           "--as-pid-1",
                                           NULL};
        static const char *const one[] = {"--args",
                                          "--userns",
                                          "--userns2",
                                          "--pidns",
                                          "--uid",
                                          "--gid",
                                          "--hostname",
                                          "--chdir",
                                          "--unsetenv",
                                          "--lock-file",
                                          "--sync-fd",
                                          "--remount-ro",
                                          "--exec-label",
                                          "--file-label",
                                          "--proc",
                                          "--dev",
                                          "--tmpfs",
                                          "--mqueue",
                                          "--dir",
                                          "--seccomp",
                                          "--add-seccomp-fd",
                                          "--block-fd",
                                          "--userns-block-fd",
                                          "--info-fd",
                                          "--json-status-fd",
                                          "--cap-add",
                                          "--cap-drop",
                                          "--perms",
                                          "--size",
                                          NULL};
        static const char *const two[] = {
                "--setenv",    "--bind",         "--bind-try", "--dev-bind",   "--dev-bind-try",
                "--ro-bind",   "--ro-bind-try",  "--bind-fd",  "--ro-bind-fd", "--file",
                "--bind-data", "--ro-bind-data", "--symlink",  "--chmod",      NULL};
        const char *const *lists[] = {zero, one, two};
        for (int n = 0; n < 3; n++)
                for (const char *const *o = lists[n]; *o; o++)
                        if (strcmp(*o, opt) == 0)
                                return n;
        return -1;
}

/* ---- descriptors ---- */

static bool starts(const char *s, const char *prefix) {
        return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The number in "pipe:[N]" / "socket:[N]", or -1. */
static int64_t bracket_inode(const char *target) {
        const char *b = target ? strchr(target, '[') : NULL;
        if (!b)
                return -1;
        char *end;
        long long v = strtoll(b + 1, &end, 10);
        return *end == ']' ? v : -1;
}

static json_object *mount_by_id(json_object *mounts, int64_t id) {
        for (size_t i = 0; i < arr_len(mounts); i++)
                if (int_or(at(mounts, i), "id", -2) == id)
                        return at(mounts, i);
        return NULL;
}

/* True if inode is a socket of the network namespace p is in. */
static bool socket_of_namespace(json_object *snap, json_object *p, int64_t inode) {
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long) int_or(kb_json_get(p, "ns"), "net", -1));
        json_object *net = kb_json_get(kb_json_get(snap, "net"), key);
        if (int_in(kb_json_get(net, "socket_inodes"), inode))
                return true;
        json_object *unix_list = kb_json_get(net, "unix");
        for (size_t i = 0; i < arr_len(unix_list); i++)
                if (int_or(at(unix_list, i), "inode", -1) == inode)
                        return true;
        return false;
}

/* Why a socket of kbound's network namespace that p holds (k: its kbound_net_sockets entry) is a
 * channel out, or NULL. A unix socket lives in the namespace of the side that connected, so the
 * kernel's end of each of kbound's connections is one; any other, whatever name it carries, joins
 * the host's network: its peer must be one of kbound's own sockets, found by inode. */
static const char *host_net_socket_problem(json_object *snap, json_object *k, char *buf, size_t size) {
        int64_t inode = int_or(k, "inode", -1), peer = int_or(k, "peer", 0);
        const char *state = str_or(k, "state", "?"), *type = str_or(k, "type", "?"), *path = kb_json_str(k, "path");
        if (peer > 0 && int_in(kb_json_get(snap, "kbound_sockets"), peer))
                return NULL;
        char named[300] = "";
        if (path)
                snprintf(named, sizeof named, ", named %s", path);
        if (peer <= 0) {
                snprintf(buf, size,
                         "socket:[%" PRId64
                         "] (a %s %s unix socket of kbound's network namespace%s) is connected to no "
                         "socket of kbound's (a channel out)",
                         inode, state, type, named);
                return buf;
        }
        json_object *holders = kb_json_get(k, "peer_held_by");
        char who[256] = "no process the host found";
        if (arr_len(holders) > 0)
                judge_holder_words(snap, at(holders, 0), who, sizeof who);
        snprintf(buf, size,
                 "socket:[%" PRId64 "] is a unix %s socket of kbound's network namespace%s, whose peer socket:[%" PRId64
                 "] is held by %s, not by kbound (a channel out)",
                 inode, type, named, peer, who);
        return buf;
}

/* Why fd (of process p in snap) refers to something outside the sandbox, or NULL. */
static const char *fd_problem(const kb_judge_input *in, json_object *snap, json_object *p, json_object *fd, char *buf,
                              size_t size) {
        const char *target = kb_json_str(fd, "target"), *type = kb_json_str(fd, "type"), *dev = kb_json_str(fd, "dev");
        int64_t mnt_id = int_or(fd, "mnt_id", -1);
        json_object *outside = kb_json_get(kb_json_get(judge_last_look(in), "launcher"), "outside_inodes");
        if (!target)
                return "the host could not read what it refers to";
        if (starts(target, "pipe:[") || starts(target, "socket:[")) {
                if (str_in(outside, target)) {
                        snprintf(buf, size, "%s is shared with kbound's side of the sandbox (a channel out)", target);
                        return buf;
                }
                json_object *shared = kb_json_get(snap, "outside_channels");
                for (size_t i = 0; i < arr_len(shared); i++)
                        if (strcmp(str_or(at(shared, i), "target", ""), target) == 0) {
                                snprintf(buf, size,
                                         "%s is shared with pid %" PRId64 " (%s, its fd %" PRId64
                                         "), a process outside the sandbox (a channel out)",
                                         target, int_or(at(shared, i), "pid", -1), str_or(at(shared, i), "name", "?"),
                                         int_or(at(shared, i), "fd", -1));
                                return buf;
                        }
                int64_t inode = bracket_inode(target);
                if (!starts(target, "socket:[") || socket_of_namespace(snap, p, inode))
                        return NULL;
                json_object *host_net = kb_json_get(snap, "kbound_net_sockets");
                for (size_t i = 0; i < arr_len(host_net); i++)
                        if (int_or(at(host_net, i), "inode", -1) == inode)
                                return host_net_socket_problem(snap, at(host_net, i), buf, size);
                snprintf(buf, size, "%s is not a socket of the sandbox's network namespace", target);
                return buf;
        }
        if (starts(target, "anon_inode:")) {
                static const char *const ok[] = {"anon_inode:[eventfd]", "anon_inode:[eventpoll]",
                                                 "anon_inode:[timerfd]", "anon_inode:[signalfd]", "anon_inode:inotify"};
                for (size_t i = 0; i < KB_ELEMENTSOF(ok); i++)
                        if (strcmp(target, ok[i]) == 0)
                                return NULL;
                if (strcmp(target, "anon_inode:[pidfd]") == 0) {
                        int64_t pid;
                        if (!kb_json_int(fd, "pid", &pid))
                                return "a pidfd the host could not place (its fdinfo was not read)";
                        json_object *procs = kb_json_get(snap, "processes");
                        for (size_t i = 0; i < arr_len(procs); i++)
                                if (int_or(at(procs, i), "pid", -2) == pid)
                                        return NULL;
                        if (pid == -1)
                                return NULL; /* a pidfd of a process that has exited */
                        if (pid == 0)        /* visible in no pid namespace kbound sees: not the sandbox's */
                                return "a pidfd of a process outside kbound's pid namespace";
                        snprintf(buf, size, "a pidfd of pid %" PRId64 ", a process outside the sandbox", pid);
                        return buf;
                }
                snprintf(buf, size, "%s is a kind of descriptor kbound does not let through", target);
                return buf;
        }
        if (starts(target, "/memfd:") && dev && str_or(in->host, "memfd_dev", NULL) &&
            strcmp(dev, kb_json_str(in->host, "memfd_dev")) == 0)
                return NULL; /* anonymous memory */
        if (target[0] != '/') {
                snprintf(buf, size, "%s is a kind of descriptor kbound does not let through", target);
                return buf;
        }
        json_object *through = mnt_id >= 0 ? mount_by_id(judge_mounts_of(snap, p), mnt_id) : NULL;
        if (through && type && (strcmp(type, "chr") == 0 || strcmp(type, "blk") == 0)) {
                /* A device opened through one of the process's own mounts: only one of kbound's own
                 * /dev nodes (the node bound there itself) or a pty of the sandbox's own devpts. */
                json_object *node_target = kb_json_get(through, "target");
                const char *rdev = kb_json_str(fd, "rdev"), *node = kb_json_str(node_target, "rdev"),
                           *ntype = kb_json_str(node_target, "type");
                kb_judge_mount_facts f = judge_mount_facts(in, snap);
                char why[256];
                if (judge_harmless_char(rdev, false) && strcmp(type, "chr") == 0)
                        return NULL;
                if (rdev && node && ntype && strcmp(ntype, type) == 0 && strcmp(node, rdev) == 0 &&
                    judge_harmless_char(node, true))
                        return NULL;
                if (judge_mount_is(through, "devpts") && !judge_not_own(through, &f, why, sizeof why))
                        return NULL;
                snprintf(buf, size,
                         "%s is a device (%s %s) opened through the mount at %s (mount id %" PRId64 "), which is "
                         "not one of kbound's own /dev nodes",
                         target, type, rdev ? rdev : "?", str_or(through, "mountpoint", "?"), mnt_id);
                return buf;
        }
        if (through)
                return NULL; /* opened through one of the process's own mounts */
        if (type && strcmp(type, "chr") == 0 && judge_harmless_char(kb_json_str(fd, "rdev"), false))
                return NULL;
        json_object *log = kb_json_get(in->expect, "kernel_log");
        int64_t flags = int_or(fd, "flags", -1);
        if (type && strcmp(type, "reg") == 0 && dev && kb_json_str(log, "dev") &&
            strcmp(dev, kb_json_str(log, "dev")) == 0 && int_or(fd, "ino", -1) == int_or(log, "ino", -2) &&
            flags >= 0 && (flags & 03) == 01 && (flags & 02000))
                return NULL; /* the kernel's log: write-only, append-only */
        snprintf(buf, size, "%s is on a host mount (mount id %" PRId64 ") outside the sandbox", target, mnt_id);
        return buf;
}

/* The value of bwrap option opt (one argument) in argv, read with bwrap's grammar, or NULL (not
 * there, or the command line cannot be read that way). */
static const char *bwrap_option_value(json_object *argv, const char *opt) {
        const char *found = NULL;
        for (size_t i = 1; i < arr_len(argv); i++) {
                const char *a = json_object_get_string(at(argv, i));
                if (!a || strcmp(a, "--") == 0 || strncmp(a, "--", 2) != 0)
                        return found;
                int arity = judge_bwrap_arity(a);
                if (arity < 0 || strcmp(a, "--args") == 0 || i + (size_t) arity >= arr_len(argv))
                        return NULL;
                if (strcmp(a, opt) == 0 && arity == 1)
                        found = json_object_get_string(at(argv, i + 1));
                i += (size_t) arity;
        }
        return NULL;
}

static bool same_file(json_object *a, json_object *b) {
        const char *da = kb_json_str(a, "dev"), *db = kb_json_str(b, "dev");
        return da && db && strcmp(da, db) == 0 && int_or(a, "ino", -1) == int_or(b, "ino", -2);
}

/* The look before the kernel's program ran: bwrap's init alone in the sandbox, blocked reading
 * kbound's block channel, still the program the bwrap outside runs, holding only what kbound
 * handed it (each descriptor by number and object) and bwrap 0.8's own two: an O_PATH descriptor of the host's /proc
 * (opened before the namespaces were made) and the eventfd that carries PID 2's exit status to bwrap. Anything else was
 * inherited from elsewhere, and everything PID 1 holds then, the kernel inherits. Returns how many descriptors were
 * judged. */
static size_t pre_exec_problems(verdict *v, const kb_judge_input *in) {
        json_object *pe = in->pre_exec, *plan = kb_json_get(in->expect, "launch");
        char buf[DETAIL_MAX];
        if (!plan) {
                verdict_problem(v, "kbound kept no record of the descriptors it handed bwrap");
                return 0;
        }
        if (!pe) {
                verdict_problem(v, "the host took no look at the sandbox before the kernel's program ran");
                return 0;
        }
        int64_t block_fd = int_or(plan, "block_fd", -1);
        if (judge_fact_error(pe, "the process list", buf, sizeof buf))
                verdict_problem(v, "the host could not list processes before the kernel ran (%s)", buf);
        const char *value = bwrap_option_value(kb_json_get(kb_json_get(pe, "launcher"), "argv"), "--block-fd");
        char want[32];
        snprintf(want, sizeof want, "%" PRId64, block_fd);
        if (!value || strcmp(value, want) != 0)
                verdict_problem(v,
                                "the running bwrap was not started with --block-fd %" PRId64
                                ": nothing made the sandbox wait for "
                                "the host's look before the kernel ran",
                                block_fd);
        json_object *init = kb_json_get(pe, "init");
        if (!init)
                verdict_problem(v, "the host could not see whether bwrap's init waited before the kernel ran%s%s",
                                judge_fact_error(pe, "bwrap's init's system call", buf, sizeof buf) ? ": " : "",
                                judge_fact_error(pe, "bwrap's init's system call", buf, sizeof buf) ? buf : "");
        else if (int_or(init, "reads_fd", -1) != block_fd)
                verdict_problem(v,
                                "bwrap's init was not waiting on kbound's block channel (fd %" PRId64
                                ") when the host looked (it was in: %s): "
                                "the kernel's program may already have run",
                                block_fd, str_or(init, "syscall", "?"));
        json_object *procs = kb_json_get(pe, "processes"), *planned = kb_json_get(plan, "fds");
        if (arr_len(procs) == 0)
                verdict_problem(v, "the host found no process in the sandbox before the kernel ran");
        size_t n = 0;
        for (size_t i = 0; i < arr_len(procs); i++) {
                json_object *p = at(procs, i), *fds = kb_json_get(p, "fds");
                int64_t pid = int_or(p, "pid", -1), inner = judge_inner_pid(p);
                if (inner != 1) {
                        verdict_problem(v,
                                        "the sandbox did not wait for kbound: pid %" PRId64 " (%s, PID %" PRId64
                                        " in the sandbox) ran "
                                        "before kbound let the kernel start",
                                        pid, str_or(p, "name", "?"), inner);
                        continue;
                }
                /* PID 1 is a fork of the bwrap outside: the same program, unless it has exec'd another. */
                json_object *bwrap_exe = kb_json_get(kb_json_get(pe, "launcher"), "exe");
                if (!same_file(kb_json_get(p, "exe"), bwrap_exe))
                        verdict_problem(v,
                                        "before the kernel ran, the sandbox's PID 1 (pid %" PRId64
                                        ") was already %s, not the bwrap "
                                        "outside (%s)",
                                        pid, str_or(kb_json_get(p, "exe"), "path", str_or(p, "exe_error", "?")),
                                        str_or(bwrap_exe, "path", "unknown"));
                const char *unread = judge_fact_error(p, "fd", buf, sizeof buf);
                if (!fds || unread)
                        verdict_problem(v,
                                        "the host could not read the descriptors of PID 1 before the kernel ran (%s)",
                                        unread ? unread : "no table");
                bool block_held = false;
                size_t proc_fds = 0, eventfds = 0;
                for (size_t f = 0; f < arr_len(fds); f++) {
                        json_object *fd = at(fds, f), *match = NULL;
                        int64_t num = int_or(fd, "fd", -1);
                        const char *target = str_or(fd, "target", "?");
                        n++;
                        for (size_t k = 0; k < arr_len(planned) && !match; k++)
                                if (int_or(at(planned, k), "fd", -2) == num && same_file(at(planned, k), fd))
                                        match = at(planned, k);
                        if (match) {
                                block_held |= num == block_fd;
                                continue;
                        }
                        /* bwrap's own: O_PATH (010000000) of the host's /proc root, and its eventfd */
                        if ((int_or(fd, "flags", 0) & 010000000) && same_file(fd, kb_json_get(plan, "proc")) &&
                            proc_fds++ == 0)
                                continue;
                        if (strcmp(target, "anon_inode:[eventfd]") == 0 && eventfds++ == 0)
                                continue;
                        verdict_problem(v,
                                        "before the kernel ran, fd %" PRId64 " of the sandbox's PID 1 (pid %" PRId64
                                        ") was %s, which "
                                        "kbound did not hand in",
                                        num, pid, target);
                }
                if (fds && !unread && !block_held)
                        verdict_problem(v,
                                        "before the kernel ran, the sandbox's PID 1 (pid %" PRId64
                                        ") did not hold kbound's block channel "
                                        "as fd %" PRId64,
                                        pid, block_fd);
        }
        return n;
}

json_object *kb_judge_descriptors(const kb_judge_input *in) {
        verdict v;
        verdict_init(&v);
        judge_look_problems(&v, in);
        char buf[DETAIL_MAX], why_buf[DETAIL_MAX];
        size_t n_fds = 0;
        /* First what the kernel started with, then what the looks after saw. */
        size_t n_pre = pre_exec_problems(&v, in);
        if (judge_fact_error(judge_last_look(in), "the launch side's descriptors", buf, sizeof buf))
                verdict_problem(&v, "the host could not read %s", buf);
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                if (judge_fact_error(at(in->snapshots, s), "kbound's unix sockets", buf, sizeof buf))
                        verdict_problem(&v, "the host could not list %s", buf);
                if (!kb_json_get(at(in->snapshots, s), "outside_channels"))
                        verdict_problem(&v,
                                        "the host did not check which processes outside the sandbox hold its pipes and "
                                        "sockets (%s)",
                                        str_or(at(in->snapshots, s), "label", "?"));
        }
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *snap = at(in->snapshots, s), *procs = kb_json_get(snap, "processes");
                for (size_t i = 0; i < arr_len(procs); i++) {
                        json_object *p = at(procs, i), *fds = kb_json_get(p, "fds");
                        int64_t pid = int_or(p, "pid", -1);
                        const char *unread = judge_fact_error(p, "fd", buf, sizeof buf);
                        if (!fds || unread)
                                verdict_problem(&v, "the host could not read the descriptors of pid %" PRId64 " (%s)",
                                                pid, unread ? unread : "no table");
                        for (size_t f = 0; f < arr_len(fds); f++) {
                                json_object *fd = at(fds, f);
                                n_fds++;
                                const char *why = fd_problem(in, snap, p, fd, why_buf, sizeof why_buf);
                                if (why)
                                        verdict_problem(&v, "fd %" PRId64 " of pid %" PRId64 " (%s): %s",
                                                        int_or(fd, "fd", -1), pid, str_or(p, "name", "?"), why);
                        }
                }
        }
        verdict_evidence(&v, "descriptors_checked", json_object_new_int64((int64_t) n_fds));
        verdict_evidence(&v, "descriptors_before_exec", json_object_new_int64((int64_t) n_pre));
        char pass[512];
        snprintf(pass, sizeof pass,
                 "all %zu open descriptors of the sandbox's processes (read by the host) refer to the sandbox's own "
                 "mounts, sockets, pipes or anonymous objects, the kernel's write-only log, or /dev/null-like devices; "
                 "before the kernel's program ran, bwrap's init waited on kbound's block channel holding only the "
                 "descriptors "
                 "kbound handed it and bwrap's own (%zu)",
                 n_fds, n_pre);
        return verdict_end(&v, "boundary.descriptors", pass);
}

/* ---- sandbox.attack_surface ---- */

/* The result of entry name in a program's or cell's "results", or NULL. */
static json_object *try_result(json_object *tries, const char *name) {
        json_object *results = kb_json_get(tries, "results");
        for (size_t i = 0; i < arr_len(results); i++) {
                const char *n = kb_json_str(at(results, i), "name");
                if (n && strcmp(n, name) == 0)
                        return at(results, i);
        }
        return NULL;
}

/* Judges one side's tries (the spawned program, or the cell in its own process) against what the
 * filter refuses; records each entry's answer in table[name][side]. Returns how many were tried. */
static size_t judge_tries(verdict *v, json_object *tries, const char *side, json_object *blocked, json_object *table,
                          bool required) {
        size_t tried = 0;
        if (!tries) {
                if (required)
                        verdict_problem(v, "the %s gave no result", side);
                return 0;
        }
        if (!blocked)
                return 0; /* already a problem: kbound has no list to judge against */
        json_object_object_foreach(blocked, name, want) {
                json_object *r = try_result(tries, name), *row = kb_json_get(table, name);
                const char *expected = json_object_get_string(want);
                if (!r) {
                        if (required)
                                verdict_problem(v, "the %s did not try %s", side, name);
                        continue;
                }
                json_object *err = kb_json_get(r, "errno");
                const char *got =
                        err && json_object_is_type(err, json_type_string) ? json_object_get_string(err) : NULL;
                if (row)
                        json_object_object_add(row, side,
                                               json_object_new_string(!kb_json_true(r, "tested") ? "untested"
                                                                      : got                      ? got
                                                                                                 : "allowed"));
                if (!kb_json_true(r, "tested"))
                        continue; /* the call does not exist here (another ABI's), said with why */
                tried++;
                if (!got)
                        verdict_problem(
                                v,
                                "the sandbox lets %s through (the %s's call succeeded; the filter refuses it with %s)",
                                name, side, expected);
                else if (strcmp(got, expected) != 0)
                        verdict_problem(
                                v,
                                "%s answers %s in the %s, not the filter's %s: the filter kbound built is not the one "
                                "in force",
                                name, got, side, expected);
                /* A family is refused for socketpair(2) as well as socket(2). */
                json_object *pair = kb_json_get(r, "socketpair");
                if (pair && kb_json_true(pair, "tested")) {
                        const char *pgot = kb_json_str(pair, "errno");
                        if (!pgot)
                                verdict_problem(
                                        v,
                                        "the sandbox lets socketpair(%s) through (the %s's call succeeded; the filter "
                                        "refuses it with %s)",
                                        name, side, expected);
                        else if (strcmp(pgot, expected) != 0)
                                verdict_problem(v, "socketpair(%s) answers %s in the %s, not the filter's %s", name,
                                                pgot, side, expected);
                }
        }
        return tried;
}

json_object *kb_judge_attack_surface(const kb_judge_input *in) {
        verdict v;
        verdict_init(&v);
        judge_look_problems(&v, in);
        int64_t own = 0, want;
        if (!kb_json_int(in->host, "seccomp_filters", &own))
                own = 0; /* a kernel that does not count filters: kbound has none it could know of */
        want = own + 1;
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *procs = kb_json_get(at(in->snapshots, s), "processes");
                for (size_t i = 0; i < arr_len(procs); i++) {
                        json_object *p = at(procs, i);
                        int64_t pid = int_or(p, "pid", -1), mode, count;
                        if (!kb_json_int(p, "seccomp", &mode) || mode != 2)
                                verdict_problem(&v, "pid %" PRId64 " (%s) runs without a seccomp filter (mode %s)", pid,
                                                str_or(p, "name", "?"),
                                                kb_json_get(p, "seccomp")
                                                        ? json_object_get_string(kb_json_get(p, "seccomp"))
                                                        : "unknown");
                        /* More filters than kbound's can only refuse more (the strictest action wins), so
                         * a kernel that adds its own is not a leak; fewer means one is missing. */
                        else if (!kb_json_int(p, "seccomp_filters", &count) || count < want)
                                verdict_problem(&v,
                                                "pid %" PRId64
                                                " (%s) runs under %s seccomp filters, fewer than kbound's %" PRId64
                                                " (its own and the sandbox's): the filter kbound built is not in force",
                                                pid, str_or(p, "name", "?"),
                                                kb_json_get(p, "seccomp_filters")
                                                        ? json_object_get_string(kb_json_get(p, "seccomp_filters"))
                                                        : "an unknown number of",
                                                want);
                }
        }
        json_object *seccomp = kb_json_get(in->expect, "seccomp"), *blocked = kb_json_get(seccomp, "blocked");
        json_object *surface = kb_json_get(in->expect, "surface");
        json_object *table = json_object_new_object();
        if (blocked && !json_object_is_type(blocked, json_type_object))
                blocked = NULL; /* json_object_object_foreach cannot walk a non-object */
        if (!blocked || json_object_object_length(blocked) == 0)
                verdict_problem(&v, "kbound has no list of what its filter refuses");
        else {
                json_object_object_foreach(blocked, bname, bwant) {
                        json_object *row = json_object_new_object();
                        json_object_object_add(row, "expected", json_object_get(bwant));
                        json_object_object_add(table, bname, row);
                }
        }
        const char *surface_error = kb_json_str(surface, "error");
        if (in->cells_absent)
                ; /* the host's part only: the scenario reports the tries as untested */
        else if (!surface || surface_error)
                verdict_problem(&v, "the attack-surface cell gave no result: %s",
                                surface_error ? surface_error : "none");
        char buf[DETAIL_MAX];
        static const char *const subprobes[] = {"child", "in_process", NULL};
        if (judge_cell_error(surface, subprobes, buf, sizeof buf))
                verdict_problem(&v, "%s", buf);
        size_t child = surface && !surface_error
                               ? judge_tries(&v, kb_json_get(surface, "child"), "spawned program", blocked, table, true)
                               : 0;
        size_t inside = surface && !surface_error ? judge_tries(&v, kb_json_get(surface, "in_process"),
                                                                "kernel process", blocked, table, false)
                                                  : 0;
        json_object *not_claimed = kb_json_get(seccomp, "not_claimed");
        for (size_t i = 0; i < arr_len(not_claimed); i++) {
                json_object *row = json_object_new_object();
                json_object_object_add(row, "expected", json_object_new_string("not_claimed"));
                json_object_object_add(table, json_object_get_string(at(not_claimed, i)), row);
        }
        verdict_evidence(&v, "calls", table);
        verdict_evidence(&v, "filters_expected", json_object_new_int64(want));
        verdict_evidence(&v, "sockets", json_object_get(kb_json_get(seccomp, "sockets")));
        verdict_evidence(&v, "not_claimed", json_object_get(not_claimed));
        char pass[512], left[256] = "";
        for (size_t i = 0; i < arr_len(not_claimed) && strlen(left) < sizeof left - 40; i++)
                snprintf(left + strlen(left), sizeof left - strlen(left), "%s%s", i ? ", " : "",
                         json_object_get_string(at(not_claimed, i)));
        snprintf(pass, sizeof pass,
                 "every sandbox process runs under kbound's seccomp filter (mode 2, %" PRId64 " filter%s); %zu refused "
                 "calls and socket families tried from a spawned program%s, each refused as the filter says%s%s",
                 want, want == 1 ? "" : "s", child, inside ? " and the kernel itself" : "",
                 *left ? "; NOT claimed: " : "", left);
        return verdict_end(&v, "sandbox.attack_surface", pass);
}
