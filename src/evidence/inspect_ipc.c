/* inspect_ipc.c: the kernel's IPC namespace read from inside it: its SysV shared memory segments,
 * with how many of each one's attachments are the sandbox's own, and the device of its POSIX
 * message-queue filesystem, which no mount table shows (mq_open uses the namespace's internal
 * mount). kbound never joins the namespace itself: a short-lived thread does (root), or a helper
 * that joins the namespace's user namespace first (kbound's own user owns it). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "base/cleanup.h"
#include "evidence/inspect-internal.h"

#define SEGMENTS_MAX 1024        /* segments of the namespace kept */
#define SHM_TEXT_MAX (256 << 10) /* /proc/sysvipc/shm read: some 150 bytes a segment */
#define COUNT_TRIES 5            /* readings of the attachments before they are said to move */
#define OWN_IPC_WORDS "it is kbound's own IPC namespace: its message queues and SysV objects are the host's"

/* What is opened inside the namespace: /proc/sysvipc/shm (a seq_file answers for the IPC namespace
 * of whoever opened it, wherever it is read), and an instance of the message-queue filesystem
 * (fsopen: the namespace's own superblock, never mounted anywhere). */
typedef struct ipc_open {
        int ipcns, userns; /* userns: -1 when kbound joins nothing but the IPC namespace */
        const char *shm_path;
        int shm_fd, shm_err, mq_fd, mq_err;
} ipc_open;

/* A mount descriptor of the message-queue filesystem of the caller's IPC namespace (which needs
 * CAP_SYS_ADMIN over the caller's mount namespace and the IPC namespace's owner), or -errno. */
static int mqueue_instance(void) {
        int fs = (int) syscall(SYS_fsopen, "mqueue", FSOPEN_CLOEXEC);
        if (fs < 0)
                return -errno;
        int m = syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0
                        ? -errno
                        : (int) syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
        if (m == -1)
                m = -errno;
        close(fs);
        return m;
}

/* Both opens, in the namespace the caller has joined; own_mounts: a mount namespace of the caller's
 * own is made first (a helper in the sandbox's user namespace has no capability over kbound's). */
static void open_here(ipc_open *o, bool own_mounts) {
        o->shm_fd = open(o->shm_path, O_RDONLY | O_CLOEXEC);
        o->shm_err = o->shm_fd < 0 ? errno : 0;
        if (own_mounts && unshare(CLONE_NEWNS) < 0) {
                o->mq_err = errno;
                return;
        }
        o->mq_fd = mqueue_instance();
        o->mq_err = o->mq_fd < 0 ? -o->mq_fd : 0;
}

static void *ipc_thread(void *arg) {
        ipc_open *o = arg;
        if (setns(o->ipcns, CLONE_NEWIPC) < 0)
                o->shm_err = o->mq_err = errno;
        else
                open_here(o, false);
        return NULL;
}

/* An IPC namespace is a thread's own: a short-lived thread joins it (root). 0 or -errno (the thread
 * could not be made); what it could not open is in o. */
static int by_thread(ipc_open *o) {
        pthread_t thread;
        int tr = pthread_create(&thread, NULL, ipc_thread, o);
        if (tr != 0)
                return -tr;
        return pthread_join(thread, NULL) != 0 ? -EIO : 0;
}

/* Both opens, in a helper that has joined the sandbox's user namespace and the IPC namespace
 * (kb_inspect_enter); arg: the caller's ipc_open, read only. */
static void ipc_in_helper(const void *arg, int err[], int fd[]) {
        const ipc_open *o = arg;
        ipc_open mine = {.shm_path = o->shm_path, .shm_fd = -1, .mq_fd = -1};
        open_here(&mine, true);
        err[0] = mine.shm_err;
        fd[0] = mine.shm_fd;
        err[1] = mine.mq_err;
        fd[1] = mine.mq_fd;
}

/* The opens of ipc_in_helper, by a helper that joins o->userns, then the IPC namespace. 0 or
 * -errno (the helper could not be made); what it could not do is in o. */
static int by_helper(ipc_open *o) {
        int err[2], fd[2];
        int r = kb_inspect_enter(o->userns, o->ipcns, CLONE_NEWIPC, ipc_in_helper, o, 2, err, fd);
        if (r < 0)
                return r;
        o->shm_err = err[0];
        o->shm_fd = fd[0];
        o->mq_err = err[1];
        o->mq_fd = fd[1];
        return 0;
}

/* The user namespaces of the sandbox's own tree: bwrap's init's (or the kernel's) and those above
 * it, below kbound's own. kbound enters only a namespace one of them owns. */
static void sandbox_users(const kb_inspect_target *t, json_object *processes, ns_set *allowed) {
        json_object *own_ino = json_object_object_get(kb_fact_map_of(t->host, FACT_HOST_NS), "user");
        int64_t own = json_object_is_type(own_ino, json_type_int) ? json_object_get_int64(own_ino) : -1;
        json_object *init = NULL, *kernel = NULL;
        for (size_t i = 0; i < json_object_array_length(processes); i++) {
                json_object *p = json_object_array_get_idx(processes, i);
                int64_t pid = kb_fact_int_or(p, FACT_PROCESS_PID, -1);
                init = pid == t->init_pid ? p : init;
                kernel = pid == t->kernel_pid ? p : kernel;
        }
        json_object *p = init ? init : kernel;
        int64_t user = kb_inspect_process_ns(p, NS_USER);
        if (!p || user <= 0 || user == own)
                return;
        (void) kb_inspect_ns_set_add(allowed, (uint64_t) user, NULL);
        json_object *chain = json_object_object_get(kb_fact_map_of(p, FACT_PROCESS_NS_OWNERS), "user");
        for (size_t i = 0; json_object_is_type(chain, json_type_array) && i < json_object_array_length(chain); i++) {
                int64_t ino = json_object_get_int64(json_object_array_get_idx(chain, i));
                if (ino == own)
                        break;
                (void) kb_inspect_ns_set_add(allowed, (uint64_t) ino, NULL);
        }
}

/* Opens in the kernel's IPC namespace (ipcns, the look's inode of it) what o names. Returns 0 (what
 * could not be opened is in o), or -errno when kbound does not enter it: -ESRCH (the kernel is gone
 * or is not the look's), -EPERM (a namespace the sandbox's user namespaces do not own), -EEXIST
 * (kbound's own IPC namespace), -ENOMEM. */
static int open_in(const kb_inspect_target *t, json_object *processes, int64_t ipcns, ipc_open *o) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%d/ns/ipc", t->proc_root, (int) t->kernel_pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        uint64_t pidns = 0;
        /* opened while the kernel is still the sandbox's: never a namespace a stranger given its
         * pid since has */
        if (fd < 0 || fstat(fd, &st) < 0 || (int64_t) st.st_ino != ipcns ||
            kb_inspect_ns_inode(t->proc_root, t->kernel_pid, "pid", &pidns) < 0 || pidns != t->pidns_ino)
                return -ESRCH;
        _cleanup_free_ ns_set *allowed = calloc(1, sizeof *allowed);
        _cleanup_json_ json_object *chain = json_object_new_array();
        if (!allowed || !chain)
                return -ENOMEM;
        /* kbound's own IPC namespace (a wrapper that did not unshare it): its queues and segments
         * are the host's, nothing of the sandbox's own to look for (sandbox.backend names it). */
        json_object *own_ipc = json_object_object_get(kb_fact_map_of(t->host, FACT_HOST_NS), "ipc");
        if (json_object_is_type(own_ipc, json_type_int) && json_object_get_int64(own_ipc) == ipcns)
                return -EEXIST;
        sandbox_users(t, processes, allowed);
        int r = kb_inspect_owner_chain(fd, false, chain);
        if (r == -ENOMEM)
                return r;
        /* One of kbound's own user namespace (a sandbox made by root that kbound did not build:
         * kbound audit): root's thread joins it, as inspect_peers.c does a network namespace. */
        json_object *own_user = json_object_object_get(kb_fact_map_of(t->host, FACT_HOST_NS), "user");
        bool owned = r >= 0 && json_object_array_length(chain) > 0 && json_object_is_type(own_user, json_type_int) &&
                     json_object_get_int64(json_object_array_get_idx(chain, 0)) == json_object_get_int64(own_user);
        for (size_t i = 0; r >= 0 && i < json_object_array_length(chain); i++)
                owned |= kb_inspect_ns_set_has(allowed,
                                               (uint64_t) json_object_get_int64(json_object_array_get_idx(chain, i)));
        if (!owned)
                return r < 0 ? r : -EPERM;
        o->ipcns = fd;
        r = by_thread(o);
        if (r < 0 || (o->shm_err != EPERM && o->shm_err != EACCES) || o->shm_fd >= 0)
                return r;
        /* kbound is not root: its helper enters through the user namespace that owns this one */
        _cleanup_close_ int userns = ioctl(fd, NS_GET_USERNS);
        if (userns < 0)
                return 0; /* the thread's refusal stands */
        o->userns = userns;
        o->shm_err = o->mq_err = 0;
        if (o->mq_fd >= 0)
                close(o->mq_fd);
        o->mq_fd = -1;
        return by_helper(o);
}

/* ---- the SysV segments and their attachments ---- */

typedef struct segment {
        int64_t key, id, nattch, sandbox;
} segment;

/* The segments /proc/sysvipc/shm lists (opened in the namespace: fd), read from its start. Returns
 * how many, or -errno. */
static int read_segments(int fd, segment *segs) {
        if (lseek(fd, 0, SEEK_SET) < 0)
                return -errno;
        /* read from this very descriptor: opening the file again would answer for kbound's namespace */
        _cleanup_free_ char *text = malloc(SHM_TEXT_MAX + 1);
        if (!text)
                return -ENOMEM;
        size_t len = 0;
        for (ssize_t got; len < SHM_TEXT_MAX; len += (size_t) got) {
                got = read(fd, text + len, SHM_TEXT_MAX - len);
                if (got < 0 && errno == EINTR) {
                        got = 0;
                        continue;
                }
                if (got < 0)
                        return -errno;
                if (got == 0)
                        break;
        }
        if (len == SHM_TEXT_MAX)
                return -E2BIG;
        text[len] = '\0';
        int n = 0;
        const char *line = strchr(text, '\n'); /* the header */
        while (line && *++line) {
                long long key, id, nattch;
                /* key shmid perms size cpid lpid nattch ... */
                if (sscanf(line, "%lld %lld %*s %*s %*s %*s %lld", &key, &id, &nattch) == 3) {
                        if (n == SEGMENTS_MAX)
                                return -E2BIG;
                        segs[n++] = (segment){.key = key, .id = id, .nattch = nattch};
                }
                line = strchr(line, '\n');
        }
        return n;
}

/* Whether a process's maps line is a SysV segment's mapping; its key (from its name) and id (its
 * inode) into *key and *id. */
static bool sysv_line(const char *line, uint32_t *key, int64_t *id) {
        unsigned long long ino;
        int used = 0;
        unsigned k;
        if (sscanf(line, "%*s %*s %*s %*s %llu %n", &ino, &used) != 1 || used == 0 ||
            strncmp(line + used, "/SYSV", 5) != 0 || sscanf(line + used + 5, "%8x", &k) != 1)
                return false;
        *key = k;
        *id = (int64_t) ino;
        return true;
}

/* Whether pid is a process of the sandbox's pid namespace (t->pidns_ino). */
static bool in_sandbox(const kb_inspect_target *t, pid_t pid) {
        uint64_t ino;
        return kb_inspect_ns_inode(t->proc_root, pid, "pid", &ino) == 0 && ino == t->pidns_ino;
}

/* Every mapping of a SysV segment by a process of the sandbox's pid namespace (walked afresh: one
 * forked since the look holds its parent's attachments), counted into segs by id (and key, but
 * for a segment whose listed key is private or removed); *foreign: those of no segment listed. */
static int count_sandbox(const kb_inspect_target *t, segment *segs, int n, int64_t *foreign) {
        for (int i = 0; i < n; i++)
                segs[i].sandbox = 0;
        *foreign = 0;
        DIR *d = opendir(t->proc_root);
        if (!d)
                return -errno;
        struct dirent *de;
        int r = 0;
        while (r >= 0 && (de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);
                if (*end || pid <= 0 || !in_sandbox(t, (pid_t) pid))
                        continue;
                _cleanup_free_ char *text = NULL;
                r = kb_inspect_read_proc(t->proc_root, (pid_t) pid, "maps", 8 << 20, &text, NULL);
                if (r == -ESRCH || r == -ENOENT) {
                        r = 0; /* gone: its mappings with it, and nattch moves */
                        continue;
                }
                for (const char *line = text; r >= 0 && line && *line;) {
                        uint32_t key;
                        int64_t id;
                        if (sysv_line(line, &key, &id)) {
                                int k = 0;
                                while (k < n &&
                                       !(segs[k].id == id && (segs[k].key == 0 || (uint32_t) segs[k].key == key)))
                                        k++;
                                if (k < n)
                                        segs[k].sandbox++;
                                else
                                        ++*foreign;
                        }
                        line = strchr(line, '\n');
                        line = line ? line + 1 : NULL;
                }
        }
        closedir(d);
        return r;
}

static bool same_segments(const segment *a, int na, const segment *b, int nb) {
        if (na != nb)
                return false;
        for (int i = 0; i < na; i++)
                if (a[i].id != b[i].id || a[i].key != b[i].key || a[i].nattch != b[i].nattch)
                        return false;
        return true;
}

/* Whether a look's process maps a SysV segment (its refs' maps). */
static bool sandbox_maps_sysv(json_object *processes) {
        for (size_t p = 0; p < json_object_array_length(processes); p++) {
                json_object *maps = kb_fact_arr_of(
                        kb_fact_obj_of(json_object_array_get_idx(processes, p), FACT_PROCESS_REFS), FACT_REFS_MAPS);
                for (size_t i = 0; maps && i < json_object_array_length(maps); i++) {
                        const char *path = kb_fact_str_of(json_object_array_get_idx(maps, i), FACT_MAPPING_PATH);
                        if (path && strncmp(path, "/SYSV", 5) == 0)
                                return true;
                }
        }
        return false;
}

/* IPC's shm (or shm_error) and shm_foreign: the segments, each with the sandbox's mappings of it
 * counted between two readings of the list that agree (a segment attached or let go meanwhile
 * moves nattch, and the count is made again). -ENOMEM only. */
static int shm_facts(const kb_inspect_target *t, json_object *processes, int fd, json_object *ipc) {
        _cleanup_free_ segment *segs = calloc(SEGMENTS_MAX, sizeof *segs), *again = calloc(SEGMENTS_MAX, sizeof *again);
        if (!segs || !again)
                return -ENOMEM;
        int n = read_segments(fd, segs), r = n;
        int64_t foreign = 0;
        bool counted = n == 0 && !sandbox_maps_sysv(processes);
        for (int try = 0; n >= 0 && !counted && try < COUNT_TRIES; try++) {
                if (try > 0)
                        (void) poll(NULL, 0, 2);
                r = count_sandbox(t, segs, n, &foreign);
                if (r < 0)
                        break;
                int m = read_segments(fd, again);
                if (m < 0) {
                        r = m;
                        break;
                }
                counted = same_segments(segs, n, again, m);
                if (!counted) {
                        memcpy(segs, again, (size_t) m * sizeof *segs);
                        n = m;
                }
        }
        if (n < 0 || r < 0)
                return kb_fact_set_str(ipc, FACT_IPC_SHM_ERROR, strerror(-(n < 0 ? n : r)));
        if (!counted)
                return kb_fact_set_str(ipc, FACT_IPC_SHM_ERROR,
                                       "its segments' attachments changed each time they were counted");
        json_object *list = json_object_new_array();
        if (kb_fact_set_arr(ipc, FACT_IPC_SHM, list) < 0 ||
            (foreign > 0 && kb_fact_set_int(ipc, FACT_IPC_SHM_FOREIGN, foreign) < 0))
                return -ENOMEM;
        for (int i = 0; i < n; i++) {
                json_object *s = json_object_new_object();
                if (!s || kb_fact_set_int(s, FACT_SYSV_SHM_KEY, segs[i].key) < 0 ||
                    kb_fact_set_int(s, FACT_SYSV_SHM_ID, segs[i].id) < 0 ||
                    kb_fact_set_int(s, FACT_SYSV_SHM_NATTCH, segs[i].nattch) < 0 ||
                    kb_fact_set_int(s, FACT_SYSV_SHM_SANDBOX, segs[i].sandbox) < 0) {
                        json_object_put(s);
                        return -ENOMEM;
                }
                if (kb_inspect_push(list, s) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int kb_inspect_ipc_facts(const kb_inspect_target *t, json_object *processes, json_object *snap) {
        json_object *kernel = NULL;
        for (size_t i = 0; i < json_object_array_length(processes); i++)
                if (kb_fact_int_or(json_object_array_get_idx(processes, i), FACT_PROCESS_PID, -1) == t->kernel_pid)
                        kernel = json_object_array_get_idx(processes, i);
        int64_t ipcns = kb_inspect_process_ns(kernel, NS_IPC);
        if (!kernel || ipcns <= 0)
                return 0; /* no kernel, or its namespace not read: the look says so; no IPC fact */
        _cleanup_json_ json_object *ipc = json_object_new_object();
        if (!ipc || kb_fact_set_int(ipc, FACT_IPC_NS, ipcns) < 0)
                return -ENOMEM;
        char shm_path[PATH_MAX];
        snprintf(shm_path, sizeof shm_path, "%s/sysvipc/shm", t->proc_root);
        ipc_open o = {.ipcns = -1, .userns = -1, .shm_path = shm_path, .shm_fd = -1, .mq_fd = -1};
        int r = open_in(t, processes, ipcns, &o);
        if (r == -ENOMEM)
                return r;
        if (r == -EEXIST) {
                /* said as it is, not as an error number */
                if (kb_fact_set_str(ipc, FACT_IPC_MQUEUE_ERROR, OWN_IPC_WORDS) < 0 ||
                    kb_fact_set_str(ipc, FACT_IPC_SHM_ERROR, OWN_IPC_WORDS) < 0)
                        return -ENOMEM;
                return kb_fact_set_obj(snap, FACT_LOOK_IPC, TAKE_PTR(ipc));
        }
        if (r < 0)
                o.shm_err = o.mq_err = -r;
        struct stat st;
        char dev[KB_PROCFS_DEV_MAX];
        if (o.mq_fd >= 0 && fstat(o.mq_fd, &st) < 0)
                o.mq_err = errno;
        r = o.mq_fd >= 0 && !o.mq_err
                    ? kb_fact_set_str(ipc, FACT_IPC_MQUEUE_DEV, kb_procfs_dev(major(st.st_dev), minor(st.st_dev), dev))
                    : kb_fact_set_str(ipc, FACT_IPC_MQUEUE_ERROR, strerror(o.mq_err ? o.mq_err : EIO));
        if (o.mq_fd >= 0)
                close(o.mq_fd);
        if (r >= 0)
                r = o.shm_fd >= 0 ? shm_facts(t, processes, o.shm_fd, ipc)
                                  : kb_fact_set_str(ipc, FACT_IPC_SHM_ERROR, strerror(o.shm_err ? o.shm_err : EIO));
        if (o.shm_fd >= 0)
                close(o.shm_fd);
        if (r < 0)
                return r;
        return kb_fact_set_obj(snap, FACT_LOOK_IPC, TAKE_PTR(ipc));
}
