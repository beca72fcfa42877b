/* inspect_resources.c: what bounds each sandbox process, as the host reads it: its rlimits
 * (/proc/<pid>/limits), its memory and pids cgroups (/proc/<pid>/cgroup) with the limits in force
 * along their paths, and how much of /tmp and /dev/shm is used (statfs through its root). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "kbound/sandbox.h"
#include "base/cleanup.h"
#include "evidence/inspect-internal.h"
#include "sandbox/cgroupfs.h"
#include "base/procfs.h"

#define LIMITS_MAX 8192
#define CGROUP_MAX 8192
#define HOST_MOUNTINFO_MAX (4 * 1024 * 1024)

/* One line of /proc/<pid>/limits ("Max processes   512   512   processes"): the soft value, -1 for
 * unlimited, or -2 when the line is missing or unreadable. */
static int64_t limit_soft(const char *text, const char *name) {
        const char *line = strstr(text, name);
        if (!line)
                return -2;
        const char *v = line + strlen(name);
        while (*v == ' ')
                v++;
        if (strncmp(v, "unlimited", 9) == 0)
                return -1;
        char *end;
        errno = 0;
        long long n = strtoll(v, &end, 10);
        return errno || end == v || n < 0 ? -2 : n;
}

/* The controller's path in /proc/<pid>/cgroup text: a v1 line naming it among its controllers, or
 * v2's "0::" line for "unified". NULL if none. */
static char *cgroup_path(const char *text, const char *controller) {
        for (const char *line = text; line && *line;) {
                const char *nl = strchr(line, '\n');
                size_t len = nl ? (size_t) (nl - line) : strlen(line);
                const char *c1 = memchr(line, ':', len);
                const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t) (c1 + 1 - line)) : NULL;
                if (c2) {
                        size_t clen = (size_t) (c2 - c1 - 1);
                        bool match = false;
                        if (strcmp(controller, "unified") == 0)
                                match = clen == 0;
                        else
                                for (const char *p = c1 + 1; p < c2;) {
                                        const char *comma = memchr(p, ',', (size_t) (c2 - p));
                                        size_t n = comma ? (size_t) (comma - p) : (size_t) (c2 - p);
                                        match |= n == strlen(controller) && strncmp(p, controller, n) == 0;
                                        p = comma ? comma + 1 : c2;
                                }
                        if (match)
                                return strndup(c2 + 1, len - (size_t) (c2 + 1 - line));
                }
                line = nl ? nl + 1 : NULL;
        }
        return NULL;
}

/* A process's cgroup facts (PROC_CGROUPS), each named for its controller: v1 names the controllers
 * a line's hierarchy has, v2's line is "unified". */
typedef struct cgroup_controller {
        const char *name;
        kb_fact_str fact;
} cgroup_controller;
#define CONTROLLERS 4

static cgroup_controller controller_at(size_t i) {
        const cgroup_controller all[CONTROLLERS] = {{"memory", FACT_PROC_CGROUPS_MEMORY},
                                                    {"pids", FACT_PROC_CGROUPS_PIDS},
                                                    {"cpu", FACT_PROC_CGROUPS_CPU},
                                                    {"unified", FACT_PROC_CGROUPS_UNIFIED}};
        return all[i];
}

int kb_inspect_resource_facts(const char *proc_root, pid_t pid, json_object *errors, json_object *proc) {
        _cleanup_free_ char *limits = NULL, *cgroups = NULL;
        int r = kb_inspect_read_proc(proc_root, pid, "limits", LIMITS_MAX, &limits, NULL);
        if (r == -ESRCH || r == -ENOMEM)
                return r;
        if (r < 0)
                return kb_inspect_note(errors, WHAT_LIMITS, NULL, r);
        json_object *l = json_object_new_object();
        if (kb_fact_set_obj(proc, FACT_PROCESS_LIMITS, l) < 0 ||
            kb_fact_set_int(l, FACT_PROC_LIMITS_NPROC, limit_soft(limits, "Max processes")) < 0 ||
            kb_fact_set_int(l, FACT_PROC_LIMITS_AS, limit_soft(limits, "Max address space")) < 0)
                return -ENOMEM;
        r = kb_inspect_read_proc(proc_root, pid, "cgroup", CGROUP_MAX, &cgroups, NULL);
        if (r == -ESRCH || r == -ENOMEM)
                return r;
        if (r < 0)
                return kb_inspect_note(errors, WHAT_CGROUP, NULL, r);
        json_object *cg = json_object_new_object();
        if (kb_fact_set_obj(proc, FACT_PROCESS_CGROUPS, cg) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < CONTROLLERS; i++) {
                cgroup_controller c = controller_at(i);
                _cleanup_free_ char *path = cgroup_path(cgroups, c.name);
                if (path && kb_fact_set_str(cg, c.fact, path) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The folder of cgroup path (as /proc/<pid>/cgroup shows it to kbound) in the hierarchy that
 * mounts controller ("unified": cgroup2), from kbound's own mount table. NULL if not mounted. */
static char *cgroup_dir(json_object *mounts, const char *controller, const char *path) {
        const char *mp, *rest;
        if (kb_cgroupfs_mount(mounts, strcmp(controller, "unified") == 0 ? "" : controller, path, &mp, &rest) < 0)
                return NULL;
        char *dir = NULL;
        return asprintf(&dir, "%s%s", mp, rest) < 0 ? NULL : dir;
}

/* The CPU bandwidth limit of one cgroup folder, in thousandths of a CPU: v2 cpu.max ("QUOTA PERIOD",
 * QUOTA "max" for none), v1 cpu.cfs_quota_us over cpu.cfs_period_us (-1 for none). -1: none; -2:
 * unreadable. */
static int64_t cpu_milli(const char *dir, bool v2) {
        int64_t quota, period;
        if (v2) {
                char path[PATH_MAX];
                snprintf(path, sizeof path, "%s/cpu.max", dir);
                _cleanup_free_ char *text = NULL;
                if (kb_read_file(AT_FDCWD, path, O_NOFOLLOW, KB_CGROUPFS_FILE_MAX, &text, NULL) < 0)
                        return -2;
                if (strncmp(text, "max", 3) == 0)
                        return -1;
                long long q, pd;
                if (sscanf(text, "%lld %lld", &q, &pd) != 2)
                        return -2;
                quota = q;
                period = pd;
        } else {
                quota = kb_cgroupfs_value(dir, "cpu.cfs_quota_us");
                period = kb_cgroupfs_value(dir, "cpu.cfs_period_us");
                if (quota == -2 || period <= 0)
                        return -2;
        }
        if (quota < 0)
                return -1;
        return period > 0 ? quota * 1000 / period : -2;
}

/* The smallest limit on the way from cgroup path up to its hierarchy's root: the one in force,
 * hierarchy being hierarchical. file: the limit's (v1: "memory.limit_in_bytes" or "pids.max"; v2:
 * "memory.max" or "pids.max"), or NULL for the CPU bandwidth limit (cpu_milli). -1: none; -2:
 * nothing readable. */
static int64_t effective_limit(json_object *mounts, const char *controller, const char *path, const char *file) {
        int64_t best = -2;
        _cleanup_free_ char *p = strdup(path);
        for (char *slash; p;) {
                _cleanup_free_ char *dir = cgroup_dir(mounts, controller, p);
                if (!dir)
                        break;
                int64_t v = file ? kb_cgroupfs_value(dir, file) : cpu_milli(dir, strcmp(controller, "unified") == 0);
                if (v >= 0 && (best < 0 || v < best))
                        best = v;
                else if (v == -1 && best == -2)
                        best = -1;
                if (strcmp(p, "/") == 0 || !(slash = strrchr(p, '/')))
                        break;
                if (slash == p)
                        slash[1] = '\0';
                else
                        *slash = '\0';
        }
        return best;
}

/* A CGROUP (dir, the limits in force and the peaks and OOM kills kbound can read) for one cgroup;
 * NULL if out of memory. A fact that cannot be had for want of memory is left out. */
static json_object *cgroup_facts(json_object *mounts, const char *controller, const char *path) {
        json_object *o = json_object_new_object();
        _cleanup_free_ char *leaf = cgroup_dir(mounts, controller, path);
        if (!o || !leaf || kb_fact_set_str(o, FACT_CGROUP_DIR, leaf) < 0)
                return o;
        bool v2 = strcmp(controller, "unified") == 0, mem = strcmp(controller, "memory") == 0,
             cpu = strcmp(controller, "cpu") == 0;
        if (v2 || cpu) {
                (void) kb_fact_set_int(o, FACT_CGROUP_CPU_MAX_MILLI, effective_limit(mounts, controller, path, NULL));
                if (cpu)
                        return o;
        }
        if (v2 || mem) {
                (void) kb_fact_set_int(
                        o, FACT_CGROUP_MEMORY_MAX,
                        effective_limit(mounts, controller, path, v2 ? "memory.max" : "memory.limit_in_bytes"));
                (void) kb_fact_set_int(o, FACT_CGROUP_MEMORY_PEAK,
                                       kb_cgroupfs_value(leaf, v2 ? "memory.peak" : "memory.max_usage_in_bytes"));
                (void) kb_fact_set_int(o, FACT_CGROUP_OOM_KILL,
                                       kb_cgroupfs_value(leaf, v2 ? "memory.events" : "memory.oom_control"));
        }
        if (v2 || !mem) {
                (void) kb_fact_set_int(o, FACT_CGROUP_PIDS_MAX, effective_limit(mounts, controller, path, "pids.max"));
                (void) kb_fact_set_int(o, FACT_CGROUP_PIDS_PEAK, kb_cgroupfs_value(leaf, "pids.peak"));
        }
        return o;
}

/* Bytes used of the in-memory filesystem at path inside the kernel's root, or -errno
 * (-EMEDIUMTYPE: not a tmpfs, whose use would be a whole host filesystem's). */
static int64_t used_in_root(const kb_inspect_target *t, const char *path) {
        char full[PATH_MAX];
        snprintf(full, sizeof full, "%s/%d/root%s", t->proc_root, (int) t->kernel_pid, path);
        int fd = open(full, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        struct statfs sf;
        int r = fstatfs(fd, &sf);
        int e = errno;
        close(fd);
        if (r < 0)
                return -e;
        if (sf.f_type != TMPFS_MAGIC)
                return -EMEDIUMTYPE;
        return (int64_t) ((sf.f_blocks - sf.f_bfree) * (uint64_t) sf.f_bsize);
}

int kb_inspect_resource_totals(const kb_inspect_target *t, json_object *processes, json_object *snap) {
        json_object *res = json_object_new_object(), *cgroups = json_object_new_object();
        if (kb_fact_set_obj(snap, FACT_LOOK_RESOURCES, res) < 0) {
                json_object_put(cgroups);
                return -ENOMEM;
        }
        if (kb_fact_set_map(res, FACT_RESOURCES_CGROUPS, cgroups) < 0)
                return -ENOMEM;
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_object *mounts = NULL;
        char self[PATH_MAX];
        snprintf(self, sizeof self, "%s/self/mountinfo", t->proc_root);
        if (kb_read_file(AT_FDCWD, self, 0, HOST_MOUNTINFO_MAX, &text, NULL) < 0 ||
            kb_procfs_mountinfo_parse(text, &mounts) < 0)
                mounts = json_object_new_array();
        int64_t rss_kb = 0, tasks = 0;
        for (size_t i = 0, n = json_object_array_length(processes); i < n; i++) {
                json_object *p = json_object_array_get_idx(processes, i);
                int64_t rss = kb_fact_int_or(p, FACT_PROCESS_VM_RSS_KB, -1),
                        th = kb_fact_int_or(p, FACT_PROCESS_THREADS, -1);
                rss_kb += rss > 0 ? rss : 0;
                tasks += th > 0 ? th : 1;
                json_object *cg = kb_fact_obj_of(p, FACT_PROCESS_CGROUPS);
                for (size_t k = 0; cg && k < CONTROLLERS; k++) {
                        cgroup_controller c = controller_at(k);
                        const char *path = kb_fact_str_of(cg, c.fact);
                        char key[PATH_MAX + 16];
                        if (!path)
                                continue;
                        snprintf(key, sizeof key, "%s:%s", c.name, path);
                        if (json_object_object_get(cgroups, key))
                                continue;
                        if (kb_inspect_map_add(cgroups, key, cgroup_facts(mounts, c.name, path)) < 0)
                                return -ENOMEM;
                }
        }
        if (kb_fact_set_int(res, FACT_RESOURCES_RSS_BYTES, rss_kb * 1024) < 0 ||
            kb_fact_set_int(res, FACT_RESOURCES_TASKS, tasks) < 0)
                return -ENOMEM;
        if (t->kernel_pid > 0) {
                static const char *const dirs[] = {"/tmp", "/dev/shm", KB_SANDBOX_WORKSPACE};
                json_object *used = json_object_new_object();
                if (kb_fact_set_map(res, FACT_RESOURCES_USED, used) < 0)
                        return -ENOMEM;
                for (size_t i = 0; i < KB_ELEMENTSOF(dirs); i++)
                        if (kb_inspect_map_add(used, dirs[i], json_object_new_int64(used_in_root(t, dirs[i]))) < 0)
                                return -ENOMEM;
        }
        return 0;
}
