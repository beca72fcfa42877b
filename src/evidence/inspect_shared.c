/* inspect_shared.c: what the sandbox shares through memory or its own filesystems, found outside it
 * by the object itself, however it is held there (a descriptor, a mapping, a working directory or
 * root): an anonymous object by its open file (kcmp); a memory object (a memory file, shared
 * anonymous memory, a deleted file) by its device and inode, held or mapped, shared or private; any
 * file of a filesystem of the sandbox's own by its device; a SysV segment of its IPC namespace by
 * its id and key (whose attachments inspect_ipc.c counts). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "base/cleanup.h"
#include "evidence/inspect-internal.h"
#include "base/procfs.h"

/* kcmp's type for "the same open file description" (linux/kcmp.h's KCMP_FILE). */
#define SHARED_KCMP_FILE 0
#define SHARED_FDS_MAX 4096
#define SHARED_OBJECTS_MAX 4096
#define SHARED_SEGMENTS_MAX 1024
#define SHARED_PENDING_MAX 64
/* A hold of the sandbox's by a process outside, whatever its name (another kbound's look, any build,
 * places the sockets of every network namespace through a holder's root, this sandbox's kernel
 * among them, for a moment; a name is no proof, as any process may take kbound's): read again at
 * least this long after it was seen, */
#define SHARED_CONFIRM_MS 20
/* and again every 5 ms for this long: one seen again at any of those reads counts. */
#define SHARED_CONFIRM_SPAN_MS 100

typedef struct shared_fd {
        const char *target; /* borrowed from the look */
        pid_t pid;
        pid_t task; /* the thread whose table holds fd: the FD's tid (a table of its own), the thread
                     * a zombie leader was read through, or pid */
        pid_t tid;  /* the FD's tid, 0 for the process's table */
        int fd;
} shared_fd;

/* How a sandbox process holds a memory object (the first one found). */
typedef struct object_ref {
        pid_t pid;
        int fd;          /* -1 unless how is "fd" */
        const char *how; /* "fd", "map" or "exe" */
} object_ref;

/* A hold seen outside, confirmed later. */
typedef struct pending {
        pid_t pid, tid;
        int fd;
        char target[256], comm[17];
        char dev[KB_PROCFS_DEV_MAX];
        int64_t ino;
        const char *link;
        int kind; /* HOLD_* */
        int64_t seen_ms;
        int object; /* index into objects[], -1 */
} pending;

enum { HOLD_OBJECT = 1, HOLD_SANDBOX_FS = 2, HOLD_SYSV = 4 };

struct shared_set {
        shared_fd fds[SHARED_FDS_MAX];
        size_t n_fds;
        json_object *objects; /* "maj:min:ino" → index into refs: the sandbox's memory objects */
        object_ref refs[SHARED_OBJECTS_MAX];
        size_t n_refs;
        json_object *devices; /* "maj:min": filesystems of the sandbox's own */
        struct {
                int64_t key, id;
        } segments[SHARED_SEGMENTS_MAX]; /* the SysV segments of its IPC namespace */
        size_t n_segments;
        pending pending[SHARED_PENDING_MAX];
        size_t n_pending;
        bool truncated;        /* more than kbound traces: said as an error of the look */
        const char *memfd_dev; /* the memory-file device (the host's fact, borrowed) */
};

/* Whether a descriptor's target names an object that no path reaches, so only its holders tell
 * where it goes: an anonymous inode (eventfd, epoll, a pidfd, ...) or an anonymous memory file. */
static bool anonymous(const char *target) {
        return strncmp(target, "anon_inode:", 11) == 0 || strncmp(target, "/memfd:", 7) == 0;
}

static bool ends_deleted(const char *s) {
        static const char suffix[] = " (deleted)";
        size_t len = s ? strlen(s) : 0;
        return len > sizeof suffix - 1 && strcmp(s + len - (sizeof suffix - 1), suffix) == 0;
}

/* Whether a file (its device, path and whether it was deleted) is a memory object: on the memory
 * file device (memory files, shared anonymous memory, SysV segments) or deleted; no path of the
 * sandbox's names it, so only its holders place it. A SysV segment is left to its namespace's
 * attachments (its inode is its id, the same number in every namespace). */
static bool memory_object(const char *dev, const char *path, bool deleted, const char *memfd_dev) {
        if (path && strncmp(path, "/SYSV", 5) == 0)
                return false;
        return deleted || (dev && memfd_dev && strcmp(dev, memfd_dev) == 0);
}

/* Adds dev:ino to s's objects, held as how (fd) by pid, unless there already. -ENOMEM only. */
static int add_object(shared_set *s, const char *dev, int64_t ino, pid_t pid, const char *how, int fd) {
        char key[64];
        snprintf(key, sizeof key, "%s:%lld", dev, (long long) ino);
        if (json_object_object_get_ex(s->objects, key, NULL))
                return 0;
        if (s->n_refs == SHARED_OBJECTS_MAX) {
                s->truncated = true;
                return 0;
        }
        s->refs[s->n_refs] = (object_ref){.pid = pid, .fd = fd, .how = how};
        return json_object_object_add(s->objects, key, json_object_new_int64((int64_t) s->n_refs++)) < 0 ? -ENOMEM : 0;
}

/* The memory objects process proc (pid) holds: its descriptors, its mappings (shared or private: a
 * private mapping still shows what another writes until it writes itself) and its program. */
static int add_objects(shared_set *s, json_object *proc, pid_t pid, const char *memfd_dev) {
        json_object *fds = kb_fact_arr_of(proc, FACT_PROCESS_FDS), *refs = kb_fact_obj_of(proc, FACT_PROCESS_REFS),
                    *maps = kb_fact_arr_of(refs, FACT_REFS_MAPS), *exe = kb_fact_obj_of(refs, FACT_REFS_EXE);
        int64_t ino = 0;
        for (size_t i = 0; fds && i < json_object_array_length(fds); i++) {
                json_object *f = json_object_array_get_idx(fds, i);
                const char *dev = kb_fact_str_of(f, FACT_FD_DEV), *target = kb_fact_str_of(f, FACT_FD_TARGET);
                if (dev && target && target[0] == '/' && kb_fact_int_of(f, FACT_FD_INO, &ino) &&
                    memory_object(dev, target, ends_deleted(target), memfd_dev) &&
                    add_object(s, dev, ino, pid, "fd", (int) kb_fact_int_or(f, FACT_FD_FD, -1)) < 0)
                        return -ENOMEM;
        }
        for (size_t i = 0; maps && i < json_object_array_length(maps); i++) {
                json_object *m = json_object_array_get_idx(maps, i);
                const char *dev = kb_fact_str_of(m, FACT_MAPPING_DEV);
                if (dev && kb_fact_int_of(m, FACT_MAPPING_INO, &ino) &&
                    memory_object(dev, kb_fact_str_of(m, FACT_MAPPING_PATH), kb_fact_bool_of(m, FACT_MAPPING_DELETED),
                                  memfd_dev) &&
                    add_object(s, dev, ino, pid, "map", -1) < 0)
                        return -ENOMEM;
        }
        const char *dev = kb_fact_str_of(exe, FACT_REF_LINK_DEV), *target = kb_fact_str_of(exe, FACT_REF_LINK_TARGET);
        if (dev && kb_fact_int_of(exe, FACT_REF_LINK_INO, &ino) &&
            memory_object(dev, target, ends_deleted(target), memfd_dev) && add_object(s, dev, ino, pid, "exe", -1) < 0)
                return -ENOMEM;
        return 0;
}

int kb_inspect_shared_new(json_object *processes, const char *memfd_dev, shared_set **ret) {
        shared_set *s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        s->memfd_dev = memfd_dev;
        s->objects = json_object_new_object();
        s->devices = json_object_new_object();
        if (!s->objects || !s->devices) {
                kb_inspect_shared_free(&s);
                return -ENOMEM;
        }
        for (size_t p = 0; p < json_object_array_length(processes); p++) {
                json_object *proc = json_object_array_get_idx(processes, p),
                            *fds = kb_fact_arr_of(proc, FACT_PROCESS_FDS);
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
                if (pid > 0 && add_objects(s, proc, pid, memfd_dev) < 0) {
                        kb_inspect_shared_free(&s);
                        return -ENOMEM;
                }
        }
        *ret = s;
        return 0;
}

int kb_inspect_shared_own(shared_set *s, json_object *snap) {
        /* The filesystems of the sandbox's own: every device of its mount tables that no mount
         * namespace outside holds (judge_plan.c's fresh filesystems hold the same notion). Before
         * the outside was read there is none (the look before exec). */
        json_object *outside =
                kb_fact_map_of(kb_fact_obj_of(snap, FACT_LOOK_OUTSIDE_MOUNTS), FACT_OUTSIDE_MOUNTS_DEVICES);
        json_object *tables[2] = {kb_fact_arr_of(snap, FACT_LOOK_MOUNTS), NULL};
        json_object *others = kb_fact_map_of(snap, FACT_LOOK_MOUNT_TABLES);
        for (size_t t = 0; outside && t < 2; t++) {
                if (t == 1) {
                        if (!others)
                                break;
                        json_object_object_foreach(others, ns, table) {
                                (void) ns;
                                for (size_t i = 0;
                                     json_object_is_type(table, json_type_array) && i < json_object_array_length(table);
                                     i++) {
                                        const char *dev =
                                                kb_fact_str_of(json_object_array_get_idx(table, i), FACT_MOUNT_DEV);
                                        if (dev && !json_object_object_get_ex(outside, dev, NULL) &&
                                            json_object_object_add(s->devices, dev, NULL) < 0)
                                                return -ENOMEM;
                                }
                        }
                        break;
                }
                for (size_t i = 0; tables[t] && i < json_object_array_length(tables[t]); i++) {
                        const char *dev = kb_fact_str_of(json_object_array_get_idx(tables[t], i), FACT_MOUNT_DEV);
                        if (dev && !json_object_object_get_ex(outside, dev, NULL) &&
                            json_object_object_add(s->devices, dev, NULL) < 0)
                                return -ENOMEM;
                }
        }
        /* Its IPC namespace's: the message-queue filesystem (every namespace has its own), and the
         * SysV segments. */
        json_object *ipc = kb_fact_obj_of(snap, FACT_LOOK_IPC), *segs = kb_fact_arr_of(ipc, FACT_IPC_SHM);
        const char *mq = kb_fact_str_of(ipc, FACT_IPC_MQUEUE_DEV);
        if (mq && json_object_object_add(s->devices, mq, NULL) < 0)
                return -ENOMEM;
        for (size_t i = 0; segs && i < json_object_array_length(segs) && s->n_segments < SHARED_SEGMENTS_MAX; i++) {
                json_object *g = json_object_array_get_idx(segs, i);
                s->segments[s->n_segments].key = kb_fact_int_or(g, FACT_SYSV_SHM_KEY, 0);
                s->segments[s->n_segments++].id = kb_fact_int_or(g, FACT_SYSV_SHM_ID, -1);
        }
        return 0;
}

void kb_inspect_shared_free(shared_set **s) {
        if (!*s)
                return;
        json_object_put((*s)->objects);
        json_object_put((*s)->devices);
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
 * process's sandbox_fd (of its thread sandbox_tid's own table, when > 0). */
static int push_shared(json_object *channels, const proc_entry *e, pid_t tid, int fd, const char *target,
                       pid_t sandbox_pid, pid_t sandbox_tid, int sandbox_fd) {
        json_object *c = json_object_new_object();
        if (!c || kb_fact_set_str(c, FACT_OUTSIDE_CHANNEL_TARGET, target) < 0 ||
            kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_PID, e->pid) < 0 ||
            kb_fact_set_str(c, FACT_OUTSIDE_CHANNEL_NAME, e->comm) < 0 ||
            kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_FD, fd) < 0 ||
            (tid != e->pid && kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_THREAD, tid) < 0) ||
            (sandbox_pid > 0 && kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_SANDBOX_PID, sandbox_pid) < 0) ||
            (sandbox_fd >= 0 && kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_SANDBOX_FD, sandbox_fd) < 0) ||
            (sandbox_tid > 0 && kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_SANDBOX_TID, sandbox_tid) < 0)) {
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
                    push_shared(channels, e, tid, fd, target, sf->pid, sf->tid, sf->fd) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The device (as facts name one) and inode of the file path (a /proc link) leads to, without
 * asking a network filesystem's server (AT_STATX_DONT_SYNC: a host process's descriptor of a
 * file on a server that no longer answers must not hold the look). 0 or -errno. */
static int link_file(const char *path, char dev[KB_PROCFS_DEV_MAX], int64_t *ret_ino) {
        struct statx sx;
        if (statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_INO, &sx) < 0)
                return -errno;
        kb_procfs_dev(sx.stx_dev_major, sx.stx_dev_minor, dev);
        *ret_ino = (int64_t) sx.stx_ino;
        return 0;
}

/* What of s the file dev:ino (path: as the holder names it) is: HOLD_* bits, and *ret_object its
 * memory object's index (-1 for none). */
static int hold_kind(const shared_set *s, const char *dev, int64_t ino, const char *path, int *ret_object) {
        char key[64];
        json_object *v;
        int kind = 0;
        *ret_object = -1;
        snprintf(key, sizeof key, "%s:%lld", dev, (long long) ino);
        if (json_object_object_get_ex(s->objects, key, &v)) {
                kind |= HOLD_OBJECT;
                *ret_object = (int) json_object_get_int64(v);
        }
        if (json_object_object_get_ex(s->devices, dev, NULL))
                kind |= HOLD_SANDBOX_FS;
        unsigned k;
        if (path && strncmp(path, "/SYSV", 5) == 0 && sscanf(path + 5, "%8x", &k) == 1)
                for (size_t i = 0; i < s->n_segments; i++)
                        if (s->segments[i].id == ino && (s->segments[i].key == 0 || (uint32_t) s->segments[i].key == k))
                                kind |= HOLD_SYSV;
        return kind;
}

/* An OUTSIDE_CHANNEL for a hold of kind (HOLD_*) of the file dev:ino by process pid (name comm,
 * thread tid), as fd, a mapping (fd -1, no link) or its link ("cwd", "root"). */
static int push_hold(json_object *channels, const shared_set *s, pid_t pid, const char *comm, pid_t tid, int fd,
                     const char *link, const char *target, const char *dev, int64_t ino, int kind, int object) {
        const object_ref *ref = object >= 0 ? &s->refs[object] : NULL;
        json_object *c = json_object_new_object();
        if (!c || kb_fact_set_str(c, FACT_OUTSIDE_CHANNEL_TARGET, target) < 0 ||
            kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_PID, pid) < 0 ||
            kb_fact_set_str(c, FACT_OUTSIDE_CHANNEL_NAME, comm) < 0 ||
            kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_FD, fd) < 0 ||
            (tid != pid && kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_THREAD, tid) < 0) ||
            (fd < 0 && !link && kb_fact_set_bool(c, FACT_OUTSIDE_CHANNEL_MAPPED, true) < 0) ||
            (link && kb_fact_set_str(c, FACT_OUTSIDE_CHANNEL_LINK, link) < 0) ||
            kb_fact_set_str(c, FACT_OUTSIDE_CHANNEL_DEV, dev) < 0 ||
            kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_INO, ino) < 0 ||
            ((kind & HOLD_SANDBOX_FS) && kb_fact_set_bool(c, FACT_OUTSIDE_CHANNEL_SANDBOX_FS, true) < 0) ||
            ((kind & HOLD_SYSV) && kb_fact_set_bool(c, FACT_OUTSIDE_CHANNEL_SYSV, true) < 0) ||
            (ref && (kb_fact_set_bool(c, FACT_OUTSIDE_CHANNEL_OBJECT, true) < 0 ||
                     kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_SANDBOX_PID, ref->pid) < 0 ||
                     kb_fact_set_str(c, FACT_OUTSIDE_CHANNEL_SANDBOX_HOW, ref->how) < 0 ||
                     (ref->fd >= 0 && kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_SANDBOX_FD, ref->fd) < 0)))) {
                json_object_put(c);
                return -ENOMEM;
        }
        return kb_inspect_push(channels, c);
}

/* A hold of e's found: one to confirm (a channel now when more are pending than kbound keeps). */
static int found(shared_set *s, const proc_entry *e, pid_t tid, int fd, const char *link, const char *target,
                 const char *dev, int64_t ino, int kind, int object, json_object *channels) {
        if (s->n_pending == SHARED_PENDING_MAX)
                return json_object_array_length(channels) >= NS_HOLDERS_MAX
                               ? 0
                               : push_hold(channels, s, e->pid, e->comm, tid, fd, link, target, dev, ino, kind, object);
        pending *p = &s->pending[s->n_pending++];
        *p = (pending){.pid = e->pid,
                       .tid = tid,
                       .fd = fd,
                       .ino = ino,
                       .link = link,
                       .kind = kind,
                       .seen_ms = kb_now_ms(),
                       .object = object};
        snprintf(p->target, sizeof p->target, "%s", target);
        snprintf(p->comm, sizeof p->comm, "%s", e->comm);
        snprintf(p->dev, sizeof p->dev, "%s", dev);
        return 0;
}

/* Whether s has anything a file of the host's could be: the sandbox's memory objects, filesystems
 * of its own, SysV segments. */
static bool wants_files(const shared_set *s) {
        return s && (s->n_refs > 0 || s->n_segments > 0 || json_object_object_length(s->devices) > 0);
}

int kb_inspect_shared_fd(shared_set *s, const char *proc_root, const proc_entry *e, pid_t tid, int fd,
                         const char *target, json_object *channels) {
        if (strncmp(target, "anon_inode:", 11) == 0)
                /* An anonymous object's target names a kind, not an object: the same open file is
                 * told by kcmp, against every sandbox descriptor of that kind. */
                return kb_inspect_shared_wants(s, target) && json_object_array_length(channels) < NS_HOLDERS_MAX
                               ? kb_inspect_shared_match(s, e, tid, fd, target, channels)
                               : 0;
        if (target[0] != '/' || !wants_files(s))
                return 0;
        /* By its device and inode: a second open of the same memory file (through /proc/<pid>/fd/N)
         * is another open file, the same object. */
        char path[PATH_MAX], dev[KB_PROCFS_DEV_MAX];
        int64_t ino = 0;
        snprintf(path, sizeof path, "%s/%d/task/%d/fd/%d", proc_root, (int) e->pid, (int) tid, fd);
        if (link_file(path, dev, &ino) < 0)
                return 0; /* closed meanwhile */
        int object, kind = hold_kind(s, dev, ino, target, &object);
        return kind ? found(s, e, tid, fd, NULL, target, dev, ino, kind, object, channels) : 0;
}

/* Each maps line of text that is a file of s's, by device and inode, as fn sees it; stops at fn's
 * error. */
static int each_mapping(const shared_set *s, char *text,
                        int (*fn)(const char *target, const char *dev, int64_t ino, int kind, int object, void *ud),
                        void *ud) {
        for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
                nl = strchr(line, '\n');
                unsigned major, minor;
                unsigned long long ino;
                int path_at = 0;
                char perms[8];
                if (sscanf(line, "%*x-%*x %7s %*x %x:%x %llu %n", perms, &major, &minor, &ino, &path_at) < 4 ||
                    path_at == 0 || line[path_at] != '/')
                        continue;
                char dev[KB_PROCFS_DEV_MAX], target[256];
                kb_procfs_dev(major, minor, dev);
                snprintf(target, sizeof target, "%.*s", nl ? (int) (nl - line - path_at) : (int) strlen(line + path_at),
                         line + path_at);
                int object, kind = hold_kind(s, dev, (int64_t) ino, target, &object);
                /* A private mapping outside of a deleted file of a disk's (a library replaced while
                 * both ran) neither writes to it nor shows the sandbox's writes, which a file
                 * opened for writing makes: a descriptor is looked for. Memory (the memory-file
                 * device) is the sandbox's own however mapped. */
                if (kind == HOLD_OBJECT && perms[3] == 'p' && !(s->memfd_dev && strcmp(dev, s->memfd_dev) == 0))
                        kind = 0;
                int r = kind ? fn(target, dev, (int64_t) ino, kind, object, ud) : 0;
                if (r != 0)
                        return r;
        }
        return 0;
}

typedef struct maps_walk {
        shared_set *s;
        const proc_entry *e;
        json_object *channels;
        json_object *seen; /* one channel per file mapped */
} maps_walk;

static int map_found(const char *target, const char *dev, int64_t ino, int kind, int object, void *ud) {
        maps_walk *w = ud;
        char key[64];
        snprintf(key, sizeof key, "%s:%lld", dev, (long long) ino);
        if (json_object_object_get_ex(w->seen, key, NULL))
                return 0;
        if (json_object_object_add(w->seen, key, NULL) < 0)
                return -ENOMEM;
        return found(w->s, w->e, w->e->pid, -1, NULL, target, dev, ino, kind, object, w->channels);
}

int kb_inspect_shared_maps(shared_set *s, const char *proc_root, const proc_entry *e, json_object *channels) {
        if (!wants_files(s))
                return 0;
        _cleanup_free_ char *text = NULL;
        if (kb_inspect_read_proc(proc_root, e->pid, "maps", 16 * 1024 * 1024, &text, NULL) < 0)
                return 0; /* gone, or another user's: its descriptor table is unreadable too, and judged so */
        _cleanup_json_ json_object *seen = json_object_new_object();
        if (!seen)
                return -ENOMEM;
        maps_walk w = {.s = s, .e = e, .channels = channels, .seen = seen};
        return each_mapping(s, text, map_found, &w);
}

int kb_inspect_shared_links(shared_set *s, const char *proc_root, const proc_entry *e, pid_t tid,
                            json_object *channels) {
        if (!s || json_object_object_length(s->devices) == 0)
                return 0;
        static const char *const links[] = {"cwd", "root"};
        for (size_t i = 0; i < KB_ELEMENTSOF(links); i++) {
                char path[PATH_MAX], target[256] = "", dev[KB_PROCFS_DEV_MAX];
                int64_t ino = 0;
                snprintf(path, sizeof path, "%s/%d/task/%d/%s", proc_root, (int) e->pid, (int) tid, links[i]);
                if (link_file(path, dev, &ino) < 0)
                        continue; /* gone, or unreadable: its tables are judged where they are read */
                if (!json_object_object_get_ex(s->devices, dev, NULL))
                        continue;
                ssize_t n = readlink(path, target, sizeof target - 1);
                target[n > 0 ? n : 0] = '\0';
                int r = found(s, e, tid, -1, links[i], target[0] ? target : "?", dev, ino, HOLD_SANDBOX_FS, -1,
                              channels);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- a hold outside, confirmed ---- */

typedef struct still_walk {
        const pending *p;
        bool held;
} still_walk;

static int map_still(const char *target, const char *dev, int64_t ino, int kind, int object, void *ud) {
        (void) target, (void) kind, (void) object;
        still_walk *w = ud;
        w->held |= ino == w->p->ino && strcmp(dev, w->p->dev) == 0;
        return w->held ? 1 : 0;
}

/* Whether p's process still holds p's file: by any descriptor of any thread's table (whatever its
 * number now), any thread's working directory or root (kb_inspect_still_holds), or a mapping. A
 * process that cannot be read is not proven to have let go: it still holds it. */
static bool still_held(const shared_set *s, const char *proc_root, const pending *p) {
        kb_held o = {.file = true, .ino = (uint64_t) p->ino};
        snprintf(o.dev, sizeof o.dev, "%s", p->dev);
        int r = kb_inspect_still_holds(proc_root, p->pid, &o, 1);
        if ((r >= 0 && o.found) || (r < 0 && r != -ESRCH))
                return true;
        /* -ESRCH: its threads gone (a zombie maps nothing either) */
        still_walk w = {.p = p};
        _cleanup_free_ char *text = NULL;
        r = kb_inspect_read_proc(proc_root, p->pid, "maps", 16 * 1024 * 1024, &text, NULL);
        if (r == -ENOENT || r == -ESRCH)
                return false;
        if (r < 0)
                return true;
        (void) each_mapping(s, text, map_still, &w);
        return w.held;
}

int kb_inspect_shared_confirm(shared_set *s, const char *proc_root, json_object *channels, int64_t *ret_transient) {
        *ret_transient = 0;
        for (size_t i = 0; s && i < s->n_pending; i++) {
                pending *p = &s->pending[i];
                int64_t wait = p->seen_ms + SHARED_CONFIRM_MS - kb_now_ms();
                if (wait > 0)
                        (void) poll(NULL, 0, (int) wait);
                bool held = false;
                for (int64_t until = kb_now_ms() + SHARED_CONFIRM_SPAN_MS; !held;) {
                        held = still_held(s, proc_root, p);
                        if (held || kb_now_ms() >= until)
                                break;
                        (void) poll(NULL, 0, 5);
                }
                if (!held) {
                        ++*ret_transient;
                        continue;
                }
                if (push_hold(channels, s, p->pid, p->comm, p->tid, p->fd, p->link, p->target, p->dev, p->ino, p->kind,
                              p->object) < 0)
                        return -ENOMEM;
        }
        return 0;
}
