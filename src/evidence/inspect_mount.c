/* inspect_mount.c: mount tables, each mount point proven its mount's root, and mounts outside. */
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include "evidence/inspect-internal.h"
#include "base/cleanup.h"
#include "base/procfs.h"

static void statx_to_stat(const struct statx *sx, struct stat *st) {
        memset(st, 0, sizeof *st);
        st->st_mode = sx->stx_mode;
        st->st_ino = (ino_t) sx->stx_ino;
        st->st_nlink = sx->stx_nlink;
        st->st_dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);
        st->st_rdev = makedev(sx->stx_rdev_major, sx->stx_rdev_minor);
}

static long open_how_at(int dir_fd, const char *path, uint64_t resolve) {
        struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC, .resolve = resolve};
        return syscall(SYS_openat2, dir_fd, path, &how, sizeof how);
}

static const char *lookup_error(int err) {
        if (err == ELOOP)
                return "a symbolic link is on the path";
        return err == EXDEV ? "the path leaves the mount or crosses another" : strerror(err);
}

int kb_inspect_open_mount_root(int root_fd, const char *path, int64_t mnt_id, int *ret_fd, struct stat *ret_st,
                               kb_error **ret_error) {
        /* RESOLVE_NO_SYMLINKS: a mount point path as mountinfo prints it holds no link, so a link
         * on it now is one the sandbox swapped in after the table was read. */
        long fd = open_how_at(root_fd, path, RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS);
        if (fd < 0) {
                int e = errno;
                return kb_error_make(ret_error, e, "%s", lookup_error(e));
        }
        struct statx sx;
        if (statx((int) fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_MNT_ID, &sx) < 0) {
                int e = errno;
                close((int) fd);
                return kb_error_make(ret_error, e, "%s", strerror(e));
        }
        int r = 0;
        if (!(sx.stx_mask & STATX_MNT_ID) || !(sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
                r = kb_error_make(ret_error, ENOSYS, "this Linux does not tell which mount a file is on (statx)");
        else if ((int64_t) sx.stx_mnt_id != mnt_id)
                r = kb_error_make(ret_error, EXDEV, "a different mount is there (mount id %llu, not %lld)",
                                  (unsigned long long) sx.stx_mnt_id, (long long) mnt_id);
        else if (!(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
                r = kb_error_make(ret_error, EXDEV, "the path leads inside mount %lld, not to its root",
                                  (long long) mnt_id);
        if (r < 0) {
                close((int) fd);
                return r;
        }
        statx_to_stat(&sx, ret_st);
        *ret_fd = (int) fd;
        return 0;
}

int kb_inspect_stat_in_mount(int mount_fd, const char *inner, bool writable, struct stat *ret_st,
                             kb_error **ret_error) {
        while (*inner == '/')
                inner++;
        long fd = open_how_at(mount_fd, *inner ? inner : ".", RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV);
        if (fd < 0) {
                int e = errno;
                if (e == ENOENT && writable)
                        /* The sandbox can rename within a mount it writes to: absent now is no proof. */
                        return kb_error_make(ret_error, EAGAIN,
                                             "not there at the host's look, but the sandbox can write to that "
                                             "filesystem (it can be moved away and back)");
                return kb_error_make(ret_error, e, "%s", lookup_error(e));
        }
        int r = fstat((int) fd, ret_st) < 0 ? -errno : 0;
        close((int) fd);
        if (r < 0)
                return kb_error_make(ret_error, r, "%s", strerror(-r));
        return 0;
}

int kb_inspect_stat_in_root(int root_fd, const char *path, struct stat *st) {
        struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                               .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
        long fd = syscall(SYS_openat2, root_fd, path, &how, sizeof how);
        if (fd < 0)
                return -errno;
        int r = fstat((int) fd, st) < 0 ? -errno : 0;
        close((int) fd);
        return r;
}

/* The folder at path, opened with flags (O_PATH, or O_RDONLY to list it), links followed as in the
 * view whose root is root_fd, never out of it (no_links: none followed). A descriptor or -errno. */
static int open_folder_in_root(int root_fd, const char *path, int flags, bool no_links) {
        struct open_how how = {.flags = (uint64_t) (flags | O_DIRECTORY | O_CLOEXEC),
                               .resolve =
                                       RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | (no_links ? RESOLVE_NO_SYMLINKS : 0)};
        long fd = syscall(SYS_openat2, root_fd, path, &how, sizeof how);
        return fd < 0 ? -errno : (int) fd;
}

int kb_inspect_open_dir_in_root(int root_fd, const char *path) {
        return open_folder_in_root(root_fd, path, O_RDONLY, false);
}

/* Whether the folder text (ending in '/') names its folder plainly: no "." or ".." and no "//". */
static bool plain_folder(const char *folder, size_t len) {
        for (size_t i = 0; i + 1 < len; i++) {
                if (folder[i] != '/')
                        continue;
                const char *c = folder + i + 1;
                size_t dots = c[0] == '.' ? (c[1] == '.' ? 2 : 1) : 0;
                if (c[0] == '/' || (dots && (c[dots] == '/' || c[dots] == '\0')))
                        return false;
        }
        return true;
}

ssize_t kb_inspect_fd_name(int fd, char *buf, size_t size) {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, buf, size - 1);
        if (n <= 0)
                return n < 0 ? -errno : -ENOENT;
        buf[n] = '\0';
        return buf[0] == '/' ? n : -ENOENT;
}

/* Whether path, looked up in root_fd's view without a link, is the folder st. */
static bool same_folder(int root_fd, const char *path, const struct stat *st) {
        _cleanup_close_ int fd = open_folder_in_root(root_fd, path, O_PATH, true);
        struct stat again;
        return fd >= 0 && fstat(fd, &again) == 0 && again.st_dev == st->st_dev && again.st_ino == st->st_ino;
}

int kb_inspect_name_in_root(int root_fd, const char *path, char *out, size_t size) {
        if (path[0] != '/')
                return -EINVAL;
        size_t len = strlen(path);
        while (len > 1 && path[len - 1] == '/')
                len--;
        const char *last = path + len;
        while (last > path && last[-1] != '/')
                last--;
        size_t folder_len = (size_t) (last - path), last_len = len - folder_len;
        char folder[PATH_MAX], canon[PATH_MAX];
        if (last_len == 0) { /* "/" itself */
                if (size < 2)
                        return -ENAMETOOLONG;
                snprintf(out, size, "/");
                return 0;
        }
        if (folder_len >= sizeof folder)
                return -ENAMETOOLONG;
        memcpy(folder, path, folder_len);
        folder[folder_len] = '\0';
        _cleanup_close_ int fd = open_folder_in_root(root_fd, folder, O_PATH, false);
        if (fd < 0)
                return fd;
        struct stat st, again;
        if (fstat(fd, &st) < 0)
                return -errno;
        /* No link and nothing to fold on the way: the name is the path itself. */
        _cleanup_close_ int plain =
                plain_folder(folder, folder_len) ? open_folder_in_root(root_fd, folder, O_PATH, true) : -ELOOP;
        if (plain >= 0 && fstat(plain, &again) == 0 && again.st_dev == st.st_dev && again.st_ino == st.st_ino) {
                if (len >= size)
                        return -ENAMETOOLONG;
                memcpy(out, path, len);
                out[len] = '\0';
                return 0;
        }
        if (plain < 0 && plain != -ELOOP)
                return plain;
        /* The folder as the kernel names it: in another mount namespace, from that view's root
         * (d_path stops there, as inspect_watch.c's placing relies on); in kbound's own, from
         * kbound's root, so a view rooted in a folder of it (a chroot) is cut off that folder's
         * name. Either is found again in the view by that name, without a link. */
        ssize_t n = kb_inspect_fd_name(fd, canon, sizeof canon);
        if (n < 0)
                return (int) n;
        if (!same_folder(root_fd, canon, &st)) {
                char view[PATH_MAX];
                ssize_t v = kb_inspect_fd_name(root_fd, view, sizeof view);
                if (v <= 1 || strncmp(canon, view, (size_t) v) != 0 || (canon[v] != '/' && canon[v] != '\0'))
                        return -ENOENT;
                const char *rest = canon[v] ? canon + v : "/";
                memmove(canon, rest, strlen(rest) + 1);
                n = (ssize_t) strlen(canon);
                if (!same_folder(root_fd, canon, &st))
                        return -ENOENT;
        }
        if (snprintf(out, size, "%s%s%.*s", canon, n == 1 ? "" : "/", (int) last_len, last) >= (int) size)
                return -ENAMETOOLONG;
        return 0;
}

/* pid's mount table, each mount with what its mount point is: the root of that very mount, looked
 * up through root_fd (pid's root) without following a link (its target), or why not (target_error).
 * Returns 0 and a new array, -ENOMEM, or -errno when the table cannot be read. */
static int table_facts(const kb_inspect_target *t, pid_t pid, int root_fd, json_object **ret) {
        _cleanup_free_ char *mi = NULL;
        _cleanup_json_ json_object *mounts = NULL;
        int r = kb_inspect_read_proc(t->proc_root, pid, "mountinfo", KB_PROCFS_MOUNTINFO_MAX, &mi, NULL);
        if (r >= 0)
                r = kb_procfs_mountinfo_parse(mi, &mounts);
        if (r < 0)
                return r;
        for (size_t i = 0; i < json_object_array_length(mounts); i++) {
                json_object *m = json_object_array_get_idx(mounts, i);
                const char *mp = kb_fact_str_of(m, FACT_MOUNT_MOUNTPOINT);
                _cleanup_error_ kb_error *error = NULL;
                struct stat st;
                int fd = -1, e = root_fd < 0 ? -EBADF : mp ? 0 : -EPROTO;
                if (e == 0)
                        e = kb_inspect_open_mount_root(root_fd, mp, kb_fact_int_or(m, FACT_MOUNT_ID, -1), &fd, &st,
                                                       &error);
                if (fd >= 0)
                        close(fd);
                const char *why = root_fd < 0 ? "the host could not open the process's root" : kb_error_text(error, e);
                if (e == 0 ? kb_fact_set_obj(m, FACT_MOUNT_TARGET, kb_inspect_stat_facts(&st)) < 0
                           : kb_fact_set_str(m, FACT_MOUNT_TARGET_ERROR, why) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(mounts);
        return 0;
}

/* bwrap's init waits on the block channel with the sandbox built: its mount table, each mount point
 * proven through its root (the new one: it has pivoted) as the kernel's are, so that the judges
 * match the look before exec against the plan by what each mount shows, as every later look. */
int kb_inspect_pre_exec_mounts(const kb_inspect_target *t, json_object *snap, json_object *errors) {
        char path[PATH_MAX];
        json_object *mounts = NULL;
        snprintf(path, sizeof path, "%s/%d/root", t->proc_root, (int) t->init_pid);
        _cleanup_close_ int root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int r = table_facts(t, t->init_pid, root_fd, &mounts);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return kb_inspect_note(errors, WHAT_INIT_MOUNTS, NULL, r);
        return kb_fact_set_arr(snap, FACT_LOOK_MOUNTS, mounts);
}

int kb_inspect_snapshot_tables(const kb_inspect_target *t, json_object *processes, json_object *snap,
                               sandbox_table *tables, size_t *ret_n, json_object **ret_kernel_net, sockets *socks,
                               uint64_t own_netns) {
        json_object *errors = kb_fact_arr_of(snap, FACT_LOOK_ERRORS),
                    *mount_tables = kb_fact_map_of(snap, FACT_LOOK_MOUNT_TABLES), *mounts = NULL;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%d/root", t->proc_root, (int) t->kernel_pid);
        int root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        tables[0] = (sandbox_table){t->kernel_pid, NULL, root_fd};
        *ret_n = 1;
        if (root_fd < 0 && kb_inspect_note(errors, WHAT_KERNEL_ROOT, NULL, -errno) < 0)
                return -ENOMEM;
        int r = table_facts(t, t->kernel_pid, root_fd, &mounts);
        if (r == -ENOMEM || (r < 0 ? kb_inspect_note(errors, WHAT_KERNEL_MOUNTINFO, NULL, r)
                                   : kb_fact_set_arr(snap, FACT_LOOK_MOUNTS, mounts)) < 0)
                return -ENOMEM;
        tables[0].mounts = mounts;
        uint64_t kernel_mnt = 0;
        bool over = false;
        (void) kb_inspect_ns_inode(t->proc_root, t->kernel_pid, "mnt", &kernel_mnt);
        for (size_t i = 0; i < json_object_array_length(processes); i++) {
                json_object *p = json_object_array_get_idx(processes, i);
                pid_t pid = (pid_t) kb_fact_int_or(p, FACT_PROCESS_PID, -1);
                int64_t mnt = kb_inspect_process_ns(p, NS_MNT), netns = kb_inspect_process_ns(p, NS_NET);
                char key[32];
                if (mnt > 0 && (uint64_t) mnt != kernel_mnt) {
                        snprintf(key, sizeof key, "%lld", (long long) mnt);
                        if (!json_object_object_get_ex(mount_tables, key, NULL) &&
                            *ret_n == KB_INSPECT_MOUNT_TABLES_MAX) {
                                if (!over && kb_inspect_note(errors, WHAT_TOO_MANY_MOUNT_TABLES, NULL, E2BIG) < 0)
                                        return -ENOMEM;
                                over = true;
                        } else if (!json_object_object_get_ex(mount_tables, key, NULL)) {
                                snprintf(path, sizeof path, "%s/%d/root", t->proc_root, (int) pid);
                                int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
                                json_object *m = NULL;
                                uint64_t mnt_after = 0;
                                r = table_facts(t, pid, fd, &m);
                                /* Filed under the namespace it was read from: a pid that ended (and
                                 * was perhaps reused) or moved meanwhile lent another's table. */
                                int nr = r == 0 ? kb_inspect_ns_inode(t->proc_root, pid, "mnt", &mnt_after) : 0;
                                if (r == 0 && (nr < 0 || mnt_after != (uint64_t) mnt)) {
                                        /* gone or moved: not this namespace's (another process of
                                         * it may still give it); unreadable: noted, it fails */
                                        json_object_put(m);
                                        m = NULL;
                                        r = nr < 0 ? nr : -ESRCH;
                                }
                                if (r < 0 && fd >= 0)
                                        close(fd);
                                if (r == -ENOMEM)
                                        return r;
                                if (r < 0 && r != -ESRCH && kb_inspect_note(errors, WHAT_MOUNT_TABLE, NULL, r) < 0)
                                        return -ENOMEM;
                                if (r == 0) {
                                        if (kb_inspect_map_add(mount_tables, key, m) < 0) {
                                                if (fd >= 0)
                                                        close(fd);
                                                return -ENOMEM;
                                        }
                                        tables[(*ret_n)++] = (sandbox_table){pid, m, fd};
                                }
                        }
                }
                if (netns > 0 && kb_inspect_net_namespace(t, snap, pid, netns, socks, own_netns, ret_kernel_net) < 0)
                        return -ENOMEM;
        }
        return 0;
}

void kb_inspect_table_devices(const sandbox_table *tables, size_t n_tables, json_object *devs) {
        for (size_t k = 0; k < n_tables; k++)
                for (size_t i = 0; tables[k].mounts && i < json_object_array_length(tables[k].mounts); i++) {
                        const char *dev =
                                kb_fact_str_of(json_object_array_get_idx(tables[k].mounts, i), FACT_MOUNT_DEV);
                        if (dev)
                                json_object_object_add(devs, dev, NULL);
                }
}

void kb_inspect_tables_close(sandbox_table *tables, size_t n_tables) {
        for (size_t k = 0; k < n_tables; k++)
                if (tables[k].root_fd >= 0)
                        close(tables[k].root_fd);
        free(tables);
}

/* The id of the first mount in pid's mount table, or -errno (-EINVAL: a zombie, which has no
 * mount namespace). A mount belongs to one namespace, so the id names the namespace where kbound
 * may not read ns/mnt (another user's process). */
static int first_mount_id(const char *proc_root, pid_t pid, long long *ret) {
        char path[PATH_MAX], buf[32];
        snprintf(path, sizeof path, "%s/%d/mountinfo", proc_root, (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        char *end;
        long long id = strtoll(buf, &end, 10);
        if (end == buf || *end != ' ')
                return n == 0 ? -EINVAL : -EPROTO;
        *ret = id;
        return 0;
}

/* kb_inspect_outside_mounts, for the devices that are the keys of wanted. */
static int outside_mounts(const kb_inspect_target *t, const proc_entry *procs, size_t n, json_object *wanted,
                          json_object *snap) {
        _cleanup_json_ json_object *o = json_object_new_object(), *devices = json_object_new_object(),
                                   *seen = json_object_new_object(), *ns_mounts = json_object_new_array();
        _cleanup_free_ ns_set *sandbox = calloc(1, sizeof *sandbox);
        if (!o || !devices || !seen || !ns_mounts || !sandbox)
                return -ENOMEM;
        json_object *listed = kb_fact_arr_of(snap, FACT_LOOK_SANDBOX_NAMESPACES);
        for (size_t i = 0; i < (listed ? json_object_array_length(listed) : 0); i++)
                (void) kb_inspect_ns_set_add(
                        sandbox, (uint64_t) json_object_get_int64(json_object_array_get_idx(listed, i)), NULL);
        int n_namespaces = 0, unreadable = 0;
        for (size_t i = 0; i < n; i++) {
                if (procs[i].member)
                        continue;
                pid_t pid = procs[i].pid;
                char key[64];
                uint64_t ino;
                long long first;
                int r = kb_inspect_ns_inode(t->proc_root, pid, "mnt", &ino);
                if (r == -ESRCH)
                        continue;
                if (r == 0)
                        snprintf(key, sizeof key, "ns:%llu", (unsigned long long) ino);
                else if ((r = first_mount_id(t->proc_root, pid, &first)) == 0)
                        snprintf(key, sizeof key, "mount:%lld", first);
                else {
                        if (r != -ESRCH && r != -EINVAL)
                                unreadable++;
                        continue;
                }
                if (json_object_object_get_ex(seen, key, NULL))
                        continue;
                _cleanup_free_ char *mi = NULL;
                json_object *mounts = NULL;
                r = kb_inspect_read_proc(t->proc_root, pid, "mountinfo", KB_PROCFS_MOUNTINFO_MAX, &mi, NULL);
                if (r >= 0)
                        r = kb_procfs_mountinfo_parse(mi, &mounts);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        if (r != -ESRCH && r != -EINVAL)
                                unreadable++;
                        continue;
                }
                n_namespaces++;
                json_object_object_add(seen, key, NULL);
                if (json_object_array_length(mounts) > 0) {
                        /* the same namespace, met again through a process whose ns/mnt is unreadable */
                        snprintf(key, sizeof key, "mount:%lld",
                                 (long long) kb_fact_int_or(json_object_array_get_idx(mounts, 0), FACT_MOUNT_ID, -1));
                        json_object_object_add(seen, key, NULL);
                }
                for (size_t k = 0; k < json_object_array_length(mounts); k++) {
                        json_object *m = json_object_array_get_idx(mounts, k);
                        const char *dev = kb_fact_str_of(m, FACT_MOUNT_DEV),
                                   *fstype = kb_fact_str_of(m, FACT_MOUNT_FSTYPE),
                                   *root = kb_fact_str_of(m, FACT_MOUNT_ROOT), *type = NULL;
                        uint64_t ns_ino = 0;
                        if (dev && json_object_object_get_ex(wanted, dev, NULL) &&
                            !json_object_object_get_ex(devices, dev, NULL) &&
                            kb_inspect_map_add(devices, dev, json_object_new_int(pid)) < 0) {
                                json_object_put(mounts);
                                return -ENOMEM;
                        }
                        if (fstype && strcmp(fstype, "nsfs") == 0 && root &&
                            (type = kb_inspect_nsfs_target(root, &ns_ino)) && kb_inspect_ns_set_has(sandbox, ns_ino) &&
                            json_object_array_length(ns_mounts) < NS_HOLDERS_MAX) {
                                json_object *e = json_object_new_object();
                                if (!e || kb_fact_set_int(e, FACT_NS_MOUNT_PID, pid) < 0 ||
                                    kb_fact_set_str(e, FACT_NS_MOUNT_NS, type) < 0 ||
                                    kb_fact_set_int(e, FACT_NS_MOUNT_INODE, (int64_t) ns_ino) < 0 ||
                                    kb_fact_set_str(e, FACT_NS_MOUNT_MOUNTPOINT,
                                                    kb_fact_str_of(m, FACT_MOUNT_MOUNTPOINT)) < 0) {
                                        json_object_put(e);
                                        json_object_put(mounts);
                                        return -ENOMEM;
                                }
                                if (kb_inspect_push(ns_mounts, e) < 0) { /* push put e */
                                        json_object_put(mounts);
                                        return -ENOMEM;
                                }
                        }
                }
                json_object_put(mounts);
        }
        if (kb_fact_set_map(o, FACT_OUTSIDE_MOUNTS_DEVICES, TAKE_PTR(devices)) < 0 ||
            kb_fact_set_int(o, FACT_OUTSIDE_MOUNTS_NAMESPACES, n_namespaces) < 0 ||
            kb_fact_set_int(o, FACT_OUTSIDE_MOUNTS_UNREADABLE, unreadable) < 0 ||
            kb_fact_set_arr(snap, FACT_LOOK_NS_MOUNTS, TAKE_PTR(ns_mounts)) < 0)
                return -ENOMEM;
        return kb_fact_set_obj(snap, FACT_LOOK_OUTSIDE_MOUNTS, TAKE_PTR(o));
}

int kb_inspect_outside_mounts(const kb_inspect_target *t, const proc_entry *procs, size_t n,
                              const sandbox_table *tables, size_t n_tables, json_object *snap) {
        _cleanup_json_ json_object *wanted = json_object_new_object();
        if (!wanted)
                return -ENOMEM;
        kb_inspect_table_devices(tables, n_tables, wanted);
        return outside_mounts(t, procs, n, wanted, snap);
}
