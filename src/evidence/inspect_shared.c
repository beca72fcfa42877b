/* inspect_shared.c: anonymous objects and memory files of the sandbox held outside it, found by the
 * object itself: the same open file (kcmp), or the same memory file mapped (device and inode). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "base/cleanup.h"
#include "evidence/inspect-internal.h"
#include "base/procfs.h"

/* kcmp's type for "the same open file description" (linux/kcmp.h's KCMP_FILE). */
#define SHARED_KCMP_FILE 0
#define SHARED_FDS_MAX 4096
#define SHARED_OBJECTS_MAX 1024

typedef struct shared_fd {
        const char *target; /* borrowed from the look */
        pid_t pid;
        pid_t task; /* the thread whose table holds fd: the FD's tid (a table of its own), the thread
                     * a zombie leader was read through, or pid */
        pid_t tid;  /* the FD's tid, 0 for the process's table */
        int fd;
} shared_fd;

struct shared_set {
        shared_fd fds[SHARED_FDS_MAX];
        size_t n_fds;
        char objects[SHARED_OBJECTS_MAX][48]; /* "maj:min:ino" of the memory files the sandbox maps shared */
        size_t n_objects;
        bool truncated; /* more than kbound traces: said as an error of the look */
};

/* Whether a descriptor's target names an object that no path reaches, so only its holders tell
 * where it goes: an anonymous inode (eventfd, epoll, a pidfd, ...) or an anonymous memory file. */
static bool anonymous(const char *target) {
        return strncmp(target, "anon_inode:", 11) == 0 || strncmp(target, "/memfd:", 7) == 0;
}

/* Whether a mapping of the sandbox is of memory another process could share: a shared mapping of
 * an anonymous memory file, a SysV segment, a deleted file, or a file on the memory file device. */
static bool memory_object(json_object *m, const char *memfd_dev) {
        const char *path = kb_fact_str_of(m, FACT_MAPPING_PATH), *dev = kb_fact_str_of(m, FACT_MAPPING_DEV);
        if (!kb_fact_bool_of(m, FACT_MAPPING_SHARED))
                return false;
        return (path && (strncmp(path, "/memfd:", 7) == 0 || strncmp(path, "/SYSV", 5) == 0 ||
                         strstr(path, " (deleted)") || strncmp(path, "/dev/shm/", 9) == 0)) ||
               (dev && memfd_dev && strcmp(dev, memfd_dev) == 0);
}

int kb_inspect_shared_new(json_object *processes, const char *memfd_dev, shared_set **ret) {
        shared_set *s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        for (size_t p = 0; p < json_object_array_length(processes); p++) {
                json_object *proc = json_object_array_get_idx(processes, p),
                            *fds = kb_fact_arr_of(proc, FACT_PROCESS_FDS),
                            *maps = kb_fact_arr_of(kb_fact_obj_of(proc, FACT_PROCESS_REFS), FACT_REFS_MAPS);
                pid_t pid = (pid_t) kb_fact_int_or(proc, FACT_PROCESS_PID, -1), via = kb_inspect_process_via(proc);
                for (size_t i = 0; pid > 0 && fds && i < json_object_array_length(fds); i++) {
                        json_object *f = json_object_array_get_idx(fds, i);
                        const char *target = kb_fact_str_of(f, FACT_FD_TARGET);
                        int64_t fd = kb_fact_int_or(f, FACT_FD_FD, -1), tid = kb_fact_int_or(f, FACT_FD_TID, 0);
                        if (!target || fd < 0 || !anonymous(target))
                                continue;
                        if (s->n_fds == SHARED_FDS_MAX) {
                                s->truncated = true;
                                continue;
                        }
                        s->fds[s->n_fds++] = (shared_fd){.target = target,
                                                         .pid = pid,
                                                         .task = tid > 0 ? (pid_t) tid : via,
                                                         .tid = (pid_t) tid,
                                                         .fd = (int) fd};
                }
                for (size_t i = 0; maps && i < json_object_array_length(maps); i++) {
                        json_object *m = json_object_array_get_idx(maps, i);
                        if (!memory_object(m, memfd_dev))
                                continue;
                        if (s->n_objects == SHARED_OBJECTS_MAX) {
                                s->truncated = true;
                                continue;
                        }
                        snprintf(s->objects[s->n_objects++], sizeof s->objects[0], "%s:%lld",
                                 kb_fact_str_or(m, FACT_MAPPING_DEV, "?"),
                                 (long long) kb_fact_int_or(m, FACT_MAPPING_INO, -1));
                }
        }
        *ret = s;
        return 0;
}

void kb_inspect_shared_free(shared_set **s) {
        free(*s);
        *s = NULL;
}

bool kb_inspect_shared_truncated(const shared_set *s) {
        return s && s->truncated;
}

bool kb_inspect_shared_wants(const shared_set *s, const char *target) {
        if (!s || !target || !anonymous(target))
                return false;
        for (size_t i = 0; i < s->n_fds; i++)
                if (strcmp(s->fds[i].target, target) == 0)
                        return true;
        return false;
}

/* An OUTSIDE_CHANNEL: target held as fd by process e (thread tid), the same object as the sandbox
 * process's sandbox_fd (of its thread sandbox_tid's own table, when > 0; or, sandbox_fd < 0, mapped
 * by process e as the same memory file). */
static int push_shared(json_object *channels, const proc_entry *e, pid_t tid, int fd, const char *target,
                       pid_t sandbox_pid, pid_t sandbox_tid, int sandbox_fd, const char *dev, long long ino) {
        json_object *c = json_object_new_object();
        if (!c || kb_fact_set_str(c, FACT_OUTSIDE_CHANNEL_TARGET, target) < 0 ||
            kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_PID, e->pid) < 0 ||
            kb_fact_set_str(c, FACT_OUTSIDE_CHANNEL_NAME, e->comm) < 0 ||
            kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_FD, fd) < 0 ||
            (tid != e->pid && kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_THREAD, tid) < 0) ||
            (sandbox_pid > 0 && kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_SANDBOX_PID, sandbox_pid) < 0) ||
            (sandbox_fd >= 0 && kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_SANDBOX_FD, sandbox_fd) < 0) ||
            (sandbox_tid > 0 && kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_SANDBOX_TID, sandbox_tid) < 0) ||
            (sandbox_fd < 0 && kb_fact_set_bool(c, FACT_OUTSIDE_CHANNEL_MAPPED, true) < 0) ||
            (dev && kb_fact_set_str(c, FACT_OUTSIDE_CHANNEL_DEV, dev) < 0) ||
            (dev && kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_INO, ino) < 0)) {
                json_object_put(c);
                return -ENOMEM;
        }
        return kb_inspect_push(channels, c);
}

int kb_inspect_shared_match(const shared_set *s, const proc_entry *e, pid_t tid, int fd, const char *target,
                            json_object *channels) {
        for (size_t i = 0; s && i < s->n_fds; i++) {
                const shared_fd *sf = &s->fds[i];
                if (strcmp(sf->target, target) != 0)
                        continue;
                /* 0: the same open file description, however it travelled (inherited, dup'ed,
                 * passed in a message, taken with pidfd_getfd). An error (a process gone, one kbound
                 * may not compare) is no match: a table it cannot read is judged where it is read. */
                if (syscall(SYS_kcmp, tid, sf->task, SHARED_KCMP_FILE, fd, sf->fd) == 0 &&
                    push_shared(channels, e, tid, fd, target, sf->pid, sf->tid, sf->fd, NULL, 0) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int kb_inspect_shared_maps(const shared_set *s, const char *proc_root, const proc_entry *e, json_object *channels) {
        if (!s || s->n_objects == 0)
                return 0;
        _cleanup_free_ char *text = NULL;
        if (kb_inspect_read_proc(proc_root, e->pid, "maps", 16 * 1024 * 1024, &text, NULL) < 0)
                return 0; /* gone, or another user's: its descriptor table is unreadable too, and judged so */
        for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
                nl = strchr(line, '\n');
                unsigned major, minor;
                unsigned long long ino;
                char perms[8], object[48];
                int path_at = 0;
                if (sscanf(line, "%*x-%*x %7s %*x %x:%x %llu %n", perms, &major, &minor, &ino, &path_at) < 4 ||
                    ino == 0)
                        continue;
                char dev[KB_PROCFS_DEV_MAX];
                snprintf(object, sizeof object, "%s:%llu", kb_procfs_dev(major, minor, dev), ino);
                for (size_t i = 0; i < s->n_objects; i++) {
                        if (strcmp(s->objects[i], object) != 0)
                                continue;
                        char target[256];
                        snprintf(target, sizeof target, "%.*s",
                                 nl ? (int) (nl - line - path_at) : (int) strlen(line + path_at), line + path_at);
                        if (push_shared(channels, e, e->pid, -1, target[0] ? target : object, 0, 0, -1, dev,
                                        (long long) ino) < 0)
                                return -ENOMEM;
                        break;
                }
        }
        return 0;
}
