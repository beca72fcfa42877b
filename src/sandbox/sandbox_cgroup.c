/* sandbox_cgroup.c: a cgroup of its own for each sandbox, where kbound may make one (root, or a
 * delegated subtree): memory (swap included) and tasks bounded for the whole sandbox at once,
 * with peaks and OOM kills to report. cgroup v2 where its controllers are enabled below kbound's
 * own cgroup, else the v1 memory and pids hierarchies (and cpu, for --cpu-max). Where none can be made, the limits kept
 * inside the sandbox (RLIMIT_NPROC, RLIMIT_AS: kb_sandbox_plan) are all there is. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/facts.h"
#include "sandbox/cgroupfs.h"
#include "base/cleanup.h"
#include "base/procfs.h"
#include "sandbox/sandbox-internal.h"

#define SELF_MAX 8192
#define MOUNTINFO_MAX (4 * 1024 * 1024)
#define RMDIR_TRIES 100 /* 10 ms apart: the last sandbox process may take a moment to be reaped */

/* kbound's own path for controller ("" for v2) in /proc/self/cgroup, or NULL. */
static char *own_path(const char *controller) {
        _cleanup_free_ char *text = NULL;
        if (kb_read_file(AT_FDCWD, "/proc/self/cgroup", 0, SELF_MAX, &text, NULL) < 0)
                return NULL;
        for (char *line = text; line && *line;) {
                char *nl = strchr(line, '\n');
                if (nl)
                        *nl = '\0';
                char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (c2) {
                        *c2 = '\0';
                        bool match = !*controller ? c1[1] == '\0' : false;
                        for (char *p = c1 + 1, *tok; *controller && (tok = strsep(&p, ","));)
                                match |= strcmp(tok, controller) == 0;
                        if (match)
                                return strdup(c2 + 1);
                }
                line = nl ? nl + 1 : NULL;
        }
        return NULL;
}

int kb_cgroupfs_mount(json_object *mounts, const char *controller, const char *path, const char **ret_mountpoint,
                      const char **ret_rest) {
        for (size_t i = 0, n = json_object_array_length(mounts); i < n; i++) {
                json_object *m = json_object_array_get_idx(mounts, i), *super = kb_fact_arr_of(m, FACT_MOUNT_SUPER);
                const char *fstype = kb_fact_str_of(m, FACT_MOUNT_FSTYPE), *root = kb_fact_str_of(m, FACT_MOUNT_ROOT),
                           *mp = kb_fact_str_of(m, FACT_MOUNT_MOUNTPOINT);
                if (!fstype || !root || !mp)
                        continue;
                bool match = !*controller && strcmp(fstype, "cgroup2") == 0;
                if (*controller && strcmp(fstype, "cgroup") == 0 && super)
                        for (size_t k = 0, ns = json_object_array_length(super); k < ns; k++)
                                match |= strcmp(json_object_get_string(json_object_array_get_idx(super, k)),
                                                controller) == 0;
                if (!match || !kb_procfs_path_under(path, root))
                        continue;
                *ret_mountpoint = mp;
                *ret_rest = path + (strcmp(root, "/") == 0 ? 0 : strlen(root));
                return 0;
        }
        return -ENOENT;
}

/* The host folder of kbound's own cgroup in the hierarchy of controller ("" for v2). */
static char *own_dir(const char *controller) {
        _cleanup_free_ char *path = own_path(controller), *text = NULL;
        _cleanup_json_ json_object *mounts = NULL;
        const char *mp, *rest;
        if (!path || kb_read_file(AT_FDCWD, "/proc/self/mountinfo", 0, MOUNTINFO_MAX, &text, NULL) < 0 ||
            kb_procfs_mountinfo_parse(text, &mounts) < 0 || kb_cgroupfs_mount(mounts, controller, path, &mp, &rest) < 0)
                return NULL;
        char *dir = NULL;
        return asprintf(&dir, "%s%s", mp, strcmp(rest, "/") == 0 ? "" : rest) < 0 ? NULL : dir;
}

/* dir/file into path (PATH_MAX bytes). A cut path names another file, which kbound would then
 * write a limit to or read a fact from: refused instead. Returns 0 or -ENAMETOOLONG. */
static int cgroup_path(char path[static PATH_MAX], const char *dir, const char *file) {
        return snprintf(path, PATH_MAX, "%s/%s", dir, file) >= PATH_MAX ? -ENAMETOOLONG : 0;
}

static int write_value(const char *dir, const char *file, const char *value) {
        char path[PATH_MAX];
        if (cgroup_path(path, dir, file) < 0)
                return -ENAMETOOLONG;
        int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        ssize_t n = write(fd, value, strlen(value));
        int r = n == (ssize_t) strlen(value) ? 0 : n < 0 ? -errno : -EIO;
        close(fd);
        return r;
}

static int write_number(const char *dir, const char *file, uint64_t v) {
        char value[32];
        snprintf(value, sizeof value, "%llu", (unsigned long long) v);
        return write_value(dir, file, value);
}

/* A new folder under parent named for this kbound and sandbox; removes the empty ones left by
 * kbounds that are gone (a kill -9 leaves them). */
static char *make_child(const char *parent, const char *team) {
        static unsigned counter;
        DIR *d = opendir(parent);
        struct dirent *de;
        while (d && (de = readdir(d))) {
                int pid;
                if (sscanf(de->d_name, "kbound-%d-", &pid) == 1 && pid > 0 && kill(pid, 0) < 0 && errno == ESRCH) {
                        char stale[PATH_MAX];
                        if (cgroup_path(stale, parent, de->d_name) == 0)
                                (void) rmdir(stale);
                }
        }
        if (d)
                closedir(d);
        char *dir = NULL;
        if (asprintf(&dir, "%s/kbound-%d-%u-%s", parent, (int) getpid(),
                     __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED), team ? team : "sandbox") < 0)
                return NULL;
        if (mkdir(dir, 0755) < 0) {
                free(dir);
                return NULL;
        }
        return dir;
}

static bool has_file(const char *dir, const char *file) {
        char path[PATH_MAX];
        return cgroup_path(path, dir, file) == 0 && access(path, F_OK) == 0;
}

/* cgroup v2: one folder with memory.max, memory.swap.max 0 and pids.max, where kbound's own
 * cgroup enables those controllers for its children. */
static int try_v2(kb_cgroup *cg, const kb_limits *l, const char *team) {
        _cleanup_free_ char *own = own_dir("");
        if (!own)
                return -ENOENT;
        char *dir = make_child(own, team);
        if (!dir)
                return -errno;
        bool mem = !l->max[KB_LIMIT_MEMORY] || has_file(dir, "memory.max");
        bool pids = !l->max[KB_LIMIT_TASKS] || has_file(dir, "pids.max");
        bool cpu = !l->max[KB_LIMIT_CPU] || has_file(dir, "cpu.max");
        int r = mem && pids && cpu ? 0 : -ENOTSUP;
        if (r == 0 && l->max[KB_LIMIT_MEMORY]) {
                r = write_number(dir, "memory.max", l->max[KB_LIMIT_MEMORY]);
                if (r == 0 && has_file(dir, "memory.swap.max"))
                        r = write_value(dir, "memory.swap.max", "0");
        }
        if (r == 0 && l->max[KB_LIMIT_TASKS])
                r = write_number(dir, "pids.max", l->max[KB_LIMIT_TASKS]);
        if (r == 0 && l->max[KB_LIMIT_CPU]) {
                char value[64];
                snprintf(value, sizeof value, "%llu %llu",
                         (unsigned long long) (l->max[KB_LIMIT_CPU] * KB_CGROUP_CPU_PERIOD_US),
                         (unsigned long long) KB_CGROUP_CPU_PERIOD_US);
                r = write_value(dir, "cpu.max", value);
        }
        if (r < 0) {
                (void) rmdir(dir);
                free(dir);
                return r;
        }
        cg->dirs[cg->n++] = dir;
        cg->version = 2;
        return 0;
}

/* cgroup v1: a folder in the memory hierarchy (limit_in_bytes, then memsw: memory and swap
 * together) and one in the pids hierarchy, for the limits asked. */
static int try_v1(kb_cgroup *cg, const kb_limits *l, const char *team) {
        static const struct {
                kb_limit_id id;
                const char *controller;
        } wanted[] = {{KB_LIMIT_MEMORY, "memory"}, {KB_LIMIT_TASKS, "pids"}, {KB_LIMIT_CPU, "cpu"}};
        for (size_t i = 0; i < KB_ELEMENTSOF(wanted); i++) {
                uint64_t max = l->max[wanted[i].id];
                if (!max)
                        continue;
                _cleanup_free_ char *own = own_dir(wanted[i].controller);
                char *dir = own ? make_child(own, team) : NULL;
                if (!dir)
                        return own ? -errno : -ENOENT;
                int r;
                if (wanted[i].id == KB_LIMIT_MEMORY) {
                        r = write_number(dir, "memory.limit_in_bytes", max);
                        if (r == 0 && has_file(dir, "memory.memsw.limit_in_bytes"))
                                r = write_number(dir, "memory.memsw.limit_in_bytes", max);
                } else if (wanted[i].id == KB_LIMIT_CPU) {
                        r = write_number(dir, "cpu.cfs_period_us", KB_CGROUP_CPU_PERIOD_US);
                        if (r == 0)
                                r = write_number(dir, "cpu.cfs_quota_us", max * KB_CGROUP_CPU_PERIOD_US);
                } else
                        r = write_number(dir, "pids.max", max);
                cg->dirs[cg->n++] = dir;
                if (r < 0)
                        return r;
        }
        cg->version = 1;
        return 0;
}

int64_t kb_cgroupfs_value(const char *dir, const char *file) {
        char path[PATH_MAX], buf[KB_CGROUPFS_FILE_MAX];
        if (cgroup_path(path, dir, file) < 0)
                return -2;
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -2;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
                return -2;
        buf[n] = '\0';
        if (strncmp(buf, "max", 3) == 0)
                return -1;
        const char *v = buf;
        if (strncmp(file, "memory.events", 13) == 0 || strcmp(file, "memory.oom_control") == 0) {
                v = strstr(buf, "oom_kill ");
                if (!v)
                        return -2;
                v += 9;
        }
        char *end;
        errno = 0;
        unsigned long long x = strtoull(v, &end, 10);
        if (errno || end == v)
                return -2;
        /* cgroup v1 writes "no limit" as the largest page-aligned 63-bit value */
        return x >= (UINT64_C(1) << 62) ? -1 : (int64_t) x;
}

int64_t kb_cgroup_oom_kills(const kb_cgroup *cg) {
        int64_t total = -2;
        for (size_t i = 0; cg && i < cg->n; i++) {
                int64_t n = kb_cgroupfs_value(cg->dirs[i], cg->version == 2 ? "memory.events" : "memory.oom_control");
                if (n >= 0)
                        total = (total < 0 ? 0 : total) + n;
        }
        return total;
}

void kb_cgroup_destroy(kb_cgroup *cg) {
        for (size_t i = 0; i < cg->n; i++) {
                for (int tries = 0; rmdir(cg->dirs[i]) < 0 && errno == EBUSY && tries < RMDIR_TRIES; tries++)
                        (void) poll(NULL, 0, 10);
                free(cg->dirs[i]);
                cg->dirs[i] = NULL;
        }
        cg->n = 0;
        cg->version = 0;
}

int kb_cgroup_create(kb_cgroup *cg, const kb_limits *l, const char *team) {
        *cg = (kb_cgroup){0};
        if (!l || (!l->max[KB_LIMIT_MEMORY] && !l->max[KB_LIMIT_TASKS] && !l->max[KB_LIMIT_CPU]))
                return 0;
        int r = try_v2(cg, l, team);
        if (r < 0) {
                kb_cgroup_destroy(cg);
                r = try_v1(cg, l, team);
        }
        if (r < 0)
                kb_cgroup_destroy(cg);
        return r;
}

int kb_cgroup_open_procs(const kb_cgroup *cg, int *fds, size_t max) {
        size_t n = 0;
        for (size_t i = 0; i < cg->n && n < max; i++) {
                char path[PATH_MAX];
                int fd = -1, r = cgroup_path(path, cg->dirs[i], "cgroup.procs");
                if (r == 0) {
                        fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
                        r = fd < 0 ? -errno : 0;
                }
                if (r < 0) {
                        for (size_t k = 0; k < n; k++)
                                close(fds[k]);
                        return r;
                }
                fds[n++] = fd;
        }
        return (int) n;
}
