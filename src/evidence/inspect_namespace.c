/* inspect_namespace.c: a process's namespaces: inodes, owning user namespaces, nsfs targets. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include "evidence/inspect-internal.h"
#include "base/cleanup.h"

/* The kernel allows 32 nested user namespaces: a longer chain of parents is not one. */
#define USERNS_DEPTH_MAX 40

static const char *const namespaces[] = {"user", "mnt", "pid", "net", "ipc", "uts", "cgroup", NULL};
_Static_assert(KB_ELEMENTSOF(namespaces) == NS_TYPES + 1, "namespaces[] and its indices");

const char *const *kb_inspect_namespaces(void) {
        return namespaces;
}

int kb_inspect_ns_inode(const char *proc_root, pid_t pid, const char *name, uint64_t *ret) {
        char path[PATH_MAX];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%d/ns/%s", proc_root, (int) pid, name) >= (int) sizeof path)
                return -ENAMETOOLONG;
        if (stat(path, &st) < 0) {
                int e = errno;
                if (e == ENOENT)
                        return kb_inspect_process_exists(proc_root, pid) ? -ENOENT : -ESRCH;
                return -e;
        }
        *ret = (uint64_t) st.st_ino;
        return 0;
}

int kb_inspect_ns_object(const char *proc_root, pid_t pid, json_object *errors, json_object **ret) {
        _cleanup_json_ json_object *ns = json_object_new_object();
        if (!ns)
                return -ENOMEM;
        for (const char *const *n = namespaces; *n; n++) {
                uint64_t ino;
                int r = kb_inspect_ns_inode(proc_root, pid, *n, &ino);
                if (r == -ESRCH)
                        return r;
                if (r == -ENOENT)
                        continue;
                if (r < 0) {
                        if (kb_inspect_note(errors, WHAT_NS, *n, r) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (kb_inspect_map_add(ns, *n, json_object_new_int64((int64_t) ino)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(ns);
        return 0;
}

int kb_inspect_ns_inodes_all(const char *proc_root, pid_t pid, uint64_t ret[NS_TYPES]) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%d/ns", proc_root, (int) pid) >= (int) sizeof path)
                return -ENAMETOOLONG;
        _cleanup_close_ int dfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        for (size_t i = 0; i < NS_TYPES; i++) {
                char link[64];
                ssize_t len = readlinkat(dfd, namespaces[i], link, sizeof link - 1);
                if (len < 0) {
                        int e = errno;
                        /* A process gone meanwhile answers EACCES (not ENOENT): ask whether it is. */
                        if ((e == ENOENT || e == EACCES) && !kb_inspect_process_exists(proc_root, pid))
                                return -ESRCH;
                        if (e != ENOENT)
                                return -e;
                        ret[i] = 0; /* a type this kernel lacks, or an exiting process's */
                        continue;
                }
                link[len] = '\0';
                size_t name_len = strlen(namespaces[i]);
                char *end;
                if (strncmp(link, namespaces[i], name_len) != 0 || strncmp(link + name_len, ":[", 2) != 0)
                        return -EPROTO;
                errno = 0;
                unsigned long long ino = strtoull(link + name_len + 2, &end, 10);
                if (errno || strcmp(end, "]") != 0)
                        return -EPROTO;
                ret[i] = (uint64_t) ino;
        }
        return 0;
}

int kb_inspect_owner_chain(int fd, bool is_user, json_object *chain) {
        int cur = ioctl(fd, is_user ? NS_GET_PARENT : NS_GET_USERNS);
        int e = cur < 0 ? errno : 0;
        for (int depth = 0; cur >= 0; depth++) {
                struct stat st;
                int r = depth >= USERNS_DEPTH_MAX ? -ELOOP
                        : fstat(cur, &st) < 0     ? -errno
                                                  : kb_inspect_push(chain, json_object_new_int64((int64_t) st.st_ino));
                if (r < 0) {
                        close(cur);
                        return r;
                }
                int parent = ioctl(cur, NS_GET_PARENT);
                e = parent < 0 ? errno : 0;
                close(cur);
                cur = parent;
        }
        return e == EPERM ? 0 : -e;
}

int kb_inspect_ns_owners_object(const char *proc_root, pid_t pid, json_object *errors, json_object **ret) {
        _cleanup_json_ json_object *owners = json_object_new_object();
        if (!owners)
                return -ENOMEM;
        for (size_t i = 0; i < NS_TYPES; i++) {
                char path[PATH_MAX];
                snprintf(path, sizeof path, "%s/%d/ns/%s", proc_root, (int) pid, namespaces[i]);
                _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                int open_error = fd < 0 ? errno : 0;
                if (open_error == ENOENT) {
                        if (!kb_inspect_process_exists(proc_root, pid))
                                return -ESRCH;
                        continue; /* a type this kernel does not have */
                }
                json_object *chain = json_object_new_array();
                int r = !chain ? -ENOMEM : open_error ? -open_error : kb_inspect_owner_chain(fd, i == NS_USER, chain);
                if (r == -ENOMEM) {
                        json_object_put(chain);
                        return r;
                }
                if (r < 0) {
                        json_object_put(chain);
                        if (kb_inspect_note(errors, WHAT_NS_OWNERS, namespaces[i], r) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (kb_inspect_map_add(owners, namespaces[i], chain) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(owners);
        return 0;
}

bool kb_inspect_pidns_below(const char *proc_root, pid_t pid, uint64_t ancestor) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%d/ns/pid", proc_root, (int) pid);
        int cur = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        for (int depth = 0; cur >= 0 && depth < USERNS_DEPTH_MAX; depth++) {
                /* EPERM past kbound's own pid namespace, the top of what it sees */
                int parent = ioctl(cur, NS_GET_PARENT);
                struct stat st;
                close(cur);
                cur = parent;
                if (cur >= 0 && fstat(cur, &st) == 0 && (uint64_t) st.st_ino == ancestor) {
                        close(cur);
                        return true;
                }
        }
        if (cur >= 0)
                close(cur);
        return false;
}

int64_t kb_inspect_process_ns(json_object *proc, size_t type) {
        json_object *ino = json_object_object_get(kb_fact_map_of(proc, FACT_PROCESS_NS), namespaces[type]);
        return json_object_is_type(ino, json_type_int) ? json_object_get_int64(ino) : -1;
}

bool kb_inspect_ns_set_has(const ns_set *set, uint64_t ino) {
        for (size_t i = 0; i < set->n; i++)
                if (set->ino[i] == ino)
                        return true;
        return false;
}

int kb_inspect_ns_set_add(ns_set *set, uint64_t ino, const ns_set *except) {
        if (ino == 0 || kb_inspect_ns_set_has(set, ino) || (except && kb_inspect_ns_set_has(except, ino)))
                return 0;
        if (set->n == NS_SET_MAX)
                return -E2BIG;
        set->ino[set->n++] = ino;
        return 0;
}

const char *kb_inspect_nsfs_target(const char *target, uint64_t *ret_ino) {
        static const char *const types[] = {"user", "mnt", "pid", "net", "ipc", "uts", "cgroup", "time"};
        for (size_t i = 0; i < KB_ELEMENTSOF(types); i++) {
                size_t len = strlen(types[i]);
                if (strncmp(target, types[i], len) != 0 || strncmp(target + len, ":[", 2) != 0)
                        continue;
                char *end;
                errno = 0;
                unsigned long long ino = strtoull(target + len + 2, &end, 10);
                if (errno || end == target + len + 2 || strcmp(end, "]") != 0)
                        return NULL;
                *ret_ino = ino;
                return types[i];
        }
        return NULL;
}

/* Every link a thread's ns folder has: the namespaces it is in, and those it hands its children
 * (pid_for_children: a process that did setns(CLONE_NEWPID) stays in its own pid namespace, its
 * children are born in the other one; time_for_children likewise). A link this table does not name
 * (a kernel's newer one) is still read, under the name "ns". */
static const char *const ns_links[] = {
        "user", "mnt", "pid", "net", "ipc", "uts", "cgroup", "time", "pid_for_children", "time_for_children"};

/* One link of a thread's ns folder (dfd) to visit, under its name in ns_links ("ns" for one this
 * table does not name). Returns visit's result, 0 for a link not there or not a namespace's. */
static int visit_link(int dfd, const char *entry, int (*visit)(const char *link, uint64_t ino, void *userdata),
                      void *userdata) {
        char link[64];
        ssize_t len = readlinkat(dfd, entry, link, sizeof link - 1);
        if (len <= 0)
                return 0; /* an exiting thread's, or a pid namespace not made yet */
        link[len] = '\0';
        uint64_t ino;
        if (!kb_inspect_nsfs_target(link, &ino))
                return 0;
        const char *name = "ns";
        for (size_t i = 0; i < KB_ELEMENTSOF(ns_links); i++)
                if (strcmp(entry, ns_links[i]) == 0)
                        name = ns_links[i];
        return visit(name, ino, userdata);
}

int kb_inspect_ns_links(const char *proc_root, pid_t pid, pid_t tid, bool children_only,
                        int (*visit)(const char *link, uint64_t ino, void *userdata), void *userdata) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%d/task/%d/ns", proc_root, (int) pid, (int) tid) >= (int) sizeof path)
                return -ENAMETOOLONG;
        int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return errno == ENOENT ? 0 : -errno;
        int r = 0;
        if (children_only) {
                for (size_t i = 0; r >= 0 && i < KB_ELEMENTSOF(ns_links); i++)
                        if (strstr(ns_links[i], "_for_children"))
                                r = visit_link(dfd, ns_links[i], visit, userdata);
                close(dfd);
                return r;
        }
        DIR *d = fdopendir(dfd);
        if (!d) {
                int e = errno;
                close(dfd);
                return -e;
        }
        struct dirent *de;
        while (r >= 0 && (de = readdir(d)))
                if (de->d_name[0] != '.')
                        r = visit_link(dirfd(d), de->d_name, visit, userdata);
        closedir(d);
        return r;
}

static int drop_namespace(int fd, const char *target, void *userdata) {
        uint64_t ino;
        int *closed = userdata;
        if (fd >= 3 && kb_inspect_nsfs_target(target, &ino) && close(fd) == 0)
                (*closed)++;
        return 0;
}

int kb_inspect_drop_inherited_namespaces(void) {
        int closed = 0;
        int r = kb_inspect_fd_targets("/proc", getpid(), drop_namespace, &closed);
        return r < 0 ? r : closed;
}
