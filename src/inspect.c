/* inspect.c: the host's own view of a sandbox, read from /proc: processes, credentials,
 * namespaces, sessions, the mount table. Facts only; judge.c decides what they mean. */
#include "kbound/inspect.h"
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "kbound/sandbox.h"
#include "procfs.h"

#define PROCS_MAX 65536   /* host processes looked at in one walk */
#define SANDBOX_PROCS_MAX 4096
#define MAP_MAX 4096

static const char *const namespaces[] = {"user", "mnt", "pid", "net", "ipc", "uts", "cgroup", NULL};

const char *const *kb_inspect_namespaces(void) {
        return namespaces;
}

static int add(json_object *o, const char *key, json_object *v) {
        if (!v || json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

/* Appends {"what": what, "error": strerror} to errors. */
static int note_error(json_object *errors, const char *what, int err) {
        json_object *e = json_object_new_object();
        if (!e || add(e, "what", json_object_new_string(what)) < 0 ||
            add(e, "error", json_object_new_string(strerror(err > 0 ? err : -err))) < 0 ||
            json_object_array_add(errors, e) < 0) {
                json_object_put(e);
                return -ENOMEM;
        }
        return 0;
}

/* Reads <proc_root>/<pid>/<name> (max bytes). -ESRCH when the process is gone. */
static int read_proc(const char *proc_root, pid_t pid, const char *name, size_t max, char **ret, size_t *ret_len) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%d/%s", proc_root, (int) pid, name) >= (int) sizeof path)
                return -ENAMETOOLONG;
        int r = kb_read_file(AT_FDCWD, path, 0, max, ret, ret_len);
        return r == -ENOENT ? -ESRCH : r;
}

/* Inode of <proc_root>/<pid>/ns/<name>; -ESRCH when the process is gone, -ENOENT when this kernel
 * has no such namespace type. */
static int ns_inode(const char *proc_root, pid_t pid, const char *name, uint64_t *ret) {
        char path[PATH_MAX];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%d/ns/%s", proc_root, (int) pid, name) >= (int) sizeof path)
                return -ENAMETOOLONG;
        if (stat(path, &st) < 0) {
                int e = errno;
                if (e == ENOENT) {
                        snprintf(path, sizeof path, "%s/%d", proc_root, (int) pid);
                        return access(path, F_OK) < 0 ? -ESRCH : -ENOENT;
                }
                return -e;
        }
        *ret = (uint64_t) st.st_ino;
        return 0;
}

/* "ns": {name: inode} of pid; a type this kernel lacks is left out. */
static int ns_object(const char *proc_root, pid_t pid, json_object *errors, json_object **ret) {
        _cleanup_json_ json_object *ns = json_object_new_object();
        if (!ns)
                return -ENOMEM;
        for (const char *const *n = namespaces; *n; n++) {
                uint64_t ino;
                int r = ns_inode(proc_root, pid, *n, &ino);
                if (r == -ESRCH)
                        return r;
                if (r == -ENOENT)
                        continue;
                if (r < 0) {
                        char what[64];
                        snprintf(what, sizeof what, "ns/%s", *n);
                        if (note_error(errors, what, r) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (add(ns, *n, json_object_new_int64((int64_t) ino)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(ns);
        return 0;
}

int kb_inspect_host(const char *proc_root, json_object **ret) {
        if (!proc_root || !ret)
                return -EINVAL;
        _cleanup_json_ json_object *h = json_object_new_object(), *errors = json_object_new_array();
        if (!h || !errors)
                return -ENOMEM;
        pid_t self = getpid();
        _cleanup_free_ char *stat_text = NULL;
        kb_procfs_stat st;
        int r = read_proc(proc_root, self, "stat", KB_PROCFS_STAT_MAX, &stat_text, NULL);
        if (r < 0)
                return r == -ESRCH ? -ENOENT : r;
        if (kb_procfs_stat_parse(stat_text, &st) < 0)
                return -EPROTO;
        json_object *ns = NULL;
        r = ns_object(proc_root, self, errors, &ns);
        if (r < 0)
                return r == -ESRCH ? -ENOENT : r;
        if (json_object_array_length(errors) > 0) {
                json_object_put(ns);
                return -EACCES; /* kbound's own namespaces unreadable: nothing can be compared */
        }
        json_object *entries = json_object_new_array();
        for (const char *const *e = kb_sandbox_proc_readonly(); entries && *e; e++) {
                char path[PATH_MAX];
                struct stat sst;
                snprintf(path, sizeof path, "%s/%s", proc_root, *e);
                if (lstat(path, &sst) == 0 && json_object_array_add(entries, json_object_new_string(*e)) < 0) {
                        json_object_put(entries);
                        entries = NULL;
                }
        }
        if (add(h, "pid", json_object_new_int(self)) < 0 || add(h, "session", json_object_new_int(st.session)) < 0 ||
            add(h, "uid", json_object_new_int64((int64_t) getuid())) < 0 || add(h, "ns", ns) < 0 ||
            add(h, "proc_entries", entries) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(h);
        return 0;
}

/* The first line of a uid_map/gid_map, squeezed ("999 999 1"); several lines are joined by "; ". */
static json_object *map_text(const char *text) {
        char out[256];
        size_t n = 0;
        bool space = true;
        for (const char *p = text; *p && n + 3 < sizeof out; p++) {
                char c = *p == '\n' ? ';' : *p;
                if (c == ' ' || c == '\t') {
                        if (!space)
                                out[n++] = ' ';
                        space = true;
                        continue;
                }
                if (c == ';') {
                        while (n > 0 && out[n - 1] == ' ')
                                n--;
                        if (p[1]) {
                                out[n++] = ';';
                                out[n++] = ' ';
                        }
                        space = true;
                        continue;
                }
                out[n++] = c;
                space = false;
        }
        while (n > 0 && out[n - 1] == ' ')
                n--;
        return json_object_new_string_len(out, (int) n);
}

/* Everything about one sandbox process. -ESRCH if it ended meanwhile. */
static int inspect_process(const kb_inspect_target *t, pid_t pid, json_object **ret) {
        _cleanup_json_ json_object *errors = json_object_new_array();
        _cleanup_free_ char *status_text = NULL, *stat_text = NULL;
        json_object *p = NULL;
        if (!errors)
                return -ENOMEM;
        int r = read_proc(t->proc_root, pid, "status", KB_PROCFS_STATUS_MAX, &status_text, NULL);
        if (r == -ESRCH)
                return r;
        if (r >= 0)
                r = kb_procfs_status_parse(status_text, &p);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                /* Unreadable status: the process is still listed, with only the error. */
                p = json_object_new_object();
                if (!p || note_error(errors, "status", r) < 0) {
                        json_object_put(p);
                        return -ENOMEM;
                }
        }
        _cleanup_json_ json_object *proc = p;
        if (add(proc, "pid", json_object_new_int(pid)) < 0)
                return -ENOMEM;
        kb_procfs_stat st;
        r = read_proc(t->proc_root, pid, "stat", KB_PROCFS_STAT_MAX, &stat_text, NULL);
        if (r == -ESRCH)
                return r;
        if (r >= 0)
                r = kb_procfs_stat_parse(stat_text, &st);
        if (r >= 0) {
                if (add(proc, "session", json_object_new_int(st.session)) < 0 ||
                    add(proc, "pgrp", json_object_new_int(st.pgrp)) < 0 ||
                    add(proc, "tty_nr", json_object_new_int(st.tty_nr)) < 0)
                        return -ENOMEM;
        } else if (note_error(errors, "stat", r) < 0)
                return -ENOMEM;
        json_object *ns = NULL;
        r = ns_object(t->proc_root, pid, errors, &ns);
        if (r < 0)
                return r;
        if (add(proc, "ns", ns) < 0)
                return -ENOMEM;
        static const char *const maps[] = {"uid_map", "gid_map"};
        for (size_t i = 0; i < KB_ELEMENTSOF(maps); i++) {
                _cleanup_free_ char *text = NULL;
                r = read_proc(t->proc_root, pid, maps[i], MAP_MAX, &text, NULL);
                if (r == -ESRCH)
                        return r;
                if (r >= 0 ? add(proc, maps[i], map_text(text)) < 0 : note_error(errors, maps[i], r) < 0)
                        return -ENOMEM;
        }
        if (add(proc, "errors", TAKE_PTR(errors)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(proc);
        return 0;
}

typedef struct proc_entry {
        pid_t pid, ppid;
} proc_entry;

/* Every process of proc_root with its parent; *ret is malloc'd. */
static int list_processes(const char *proc_root, proc_entry **ret, size_t *ret_n) {
        DIR *d = opendir(proc_root);
        if (!d)
                return -errno;
        size_t n = 0, cap = 256;
        proc_entry *v = malloc(cap * sizeof *v);
        int r = v ? 0 : -ENOMEM;
        struct dirent *de;
        while (r >= 0 && (de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);
                if (*end || pid <= 0 || pid > INT_MAX)
                        continue;
                _cleanup_free_ char *text = NULL;
                kb_procfs_stat st;
                if (read_proc(proc_root, (pid_t) pid, "stat", KB_PROCFS_STAT_MAX, &text, NULL) < 0 ||
                    kb_procfs_stat_parse(text, &st) < 0)
                        continue; /* gone meanwhile */
                if (n == cap) {
                        if (cap >= PROCS_MAX) {
                                r = -E2BIG;
                                break;
                        }
                        proc_entry *nv = realloc(v, 2 * cap * sizeof *v);
                        if (!nv) {
                                r = -ENOMEM;
                                break;
                        }
                        v = nv;
                        cap *= 2;
                }
                v[n++] = (proc_entry) {(pid_t) pid, st.ppid};
        }
        closedir(d);
        if (r < 0) {
                free(v);
                return r;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

/* The sandbox: init_pid, its descendants, and whatever else is in its pid namespace. Marks
 * members in member[] (parallel to procs). */
static void sandbox_members(const kb_inspect_target *t, const proc_entry *procs, size_t n, bool *member) {
        for (size_t i = 0; i < n; i++)
                member[i] = procs[i].pid == t->init_pid;
        /* Descendants: repeat until nothing new joins (n passes at most). */
        for (bool grew = true; grew;) {
                grew = false;
                for (size_t i = 0; i < n; i++) {
                        if (member[i])
                                continue;
                        for (size_t j = 0; j < n; j++)
                                if (member[j] && procs[j].pid == procs[i].ppid) {
                                        member[i] = grew = true;
                                        break;
                                }
                }
        }
        /* A process of the sandbox's pid namespace that is not a descendant (reparented past init,
         * or started into it from outside) is still the sandbox's. */
        for (size_t i = 0; i < n; i++) {
                uint64_t ino;
                if (!member[i] && ns_inode(t->proc_root, procs[i].pid, "pid", &ino) == 0 && ino == t->pidns_ino)
                        member[i] = true;
        }
}

int kb_inspect_snapshot(const kb_inspect_target *t, const char *label, json_object **ret) {
        if (!t || !t->proc_root || !ret)
                return -EINVAL;
        _cleanup_json_ json_object *snap = json_object_new_object();
        json_object *processes = json_object_new_array(), *errors = json_object_new_array();
        if (!snap || add(snap, "label", json_object_new_string(label ? label : "")) < 0 ||
            add(snap, "taken_ms", json_object_new_int64(kb_now_ms())) < 0 || add(snap, "processes", processes) < 0 ||
            add(snap, "errors", errors) < 0)
                return -ENOMEM;
        _cleanup_free_ proc_entry *procs = NULL;
        size_t n = 0;
        int r = list_processes(t->proc_root, &procs, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && note_error(errors, "the process list", r) < 0)
                return -ENOMEM;
        _cleanup_free_ bool *member = calloc(n ? n : 1, sizeof(bool));
        if (!member)
                return -ENOMEM;
        sandbox_members(t, procs, n, member);
        int vanished = 0;
        bool kernel_seen = false;
        size_t kept = 0;
        for (size_t i = 0; i < n; i++) {
                if (!member[i])
                        continue;
                if (kept == SANDBOX_PROCS_MAX) {
                        if (note_error(errors, "more sandbox processes than kbound inspects", E2BIG) < 0)
                                return -ENOMEM;
                        break;
                }
                json_object *p = NULL;
                r = inspect_process(t, procs[i].pid, &p);
                if (r == -ESRCH) {
                        vanished++;
                        continue;
                }
                if (r < 0 || json_object_array_add(processes, p) < 0) {
                        json_object_put(p);
                        return -ENOMEM;
                }
                kept++;
                kernel_seen |= procs[i].pid == t->kernel_pid;
        }
        if (add(snap, "vanished", json_object_new_int(vanished)) < 0)
                return -ENOMEM;
        /* The kernel's mount table, read by the host (the cell's copy is only its word). */
        _cleanup_free_ char *mi = NULL;
        json_object *mounts = NULL;
        r = read_proc(t->proc_root, t->kernel_pid, "mountinfo", KB_PROCFS_MOUNTINFO_MAX, &mi, NULL);
        if (r >= 0)
                r = kb_procfs_mountinfo_parse(mi, &mounts);
        if (r == -ENOMEM)
                return r;
        if (r < 0 ? note_error(errors, "the kernel's mountinfo", r) < 0 : add(snap, "mounts", mounts) < 0)
                return -ENOMEM;
        r = 0;
        if (!kernel_seen) {
                if (note_error(errors, "the pinned kernel among the sandbox's processes", ESRCH) < 0)
                        return -ENOMEM;
                r = -ESRCH;
        }
        *ret = TAKE_PTR(snap);
        return r;
}
