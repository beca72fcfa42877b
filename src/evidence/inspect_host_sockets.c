/* inspect_host_sockets.c: where the sandbox's mounts reach the host's bound unix sockets (all netns). */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "evidence/inspect-internal.h"
#include "base/cleanup.h"
#include "base/procfs.h"

#define SOCKET_NAMESPACES_MAX 4096 /* network namespaces whose sockets one look lists */

/* Whether the namespace ns is owned by kbound's own user namespace. */
static bool owned_by_own_userns(int ns) {
        _cleanup_close_ int userns = ioctl(ns, NS_GET_USERNS);
        struct stat theirs, mine;
        return userns >= 0 && fstat(userns, &theirs) == 0 && stat("/proc/self/ns/user", &mine) == 0 &&
               theirs.st_dev == mine.st_dev && theirs.st_ino == mine.st_ino;
}

/* A sock_diag socket made in the network namespace of pid, by a short-lived thread that joins it
 * (kb_inspect_diag_socket; root may): the socket answers for that namespace wherever it is used,
 * so kbound itself never changes namespace. Only a namespace of kbound's own user
 * namespace is joined: one of a user namespace below it is a sandbox's or a rootless container's,
 * and a process of the host in one is what another run's check looks for (sandbox.backend), so
 * kbound never enters one; its sockets are read as text (namespace_by_text). Returns the
 * descriptor, -ESRCH when the process is gone, or -errno (-EPERM: kbound does not enter it). */
static int diag_fd_in(const char *proc_root, pid_t pid) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%d/ns/net", proc_root, (int) pid);
        _cleanup_close_ int netns = open(path, O_RDONLY | O_CLOEXEC);
        if (netns < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        if (!owned_by_own_userns(netns))
                return -EPERM;
        return kb_inspect_diag_socket(netns, -1);
}

/* A socket the host has not placed yet, and whether anyone was found holding it. */
/* The reach of a look's host sockets, and the counts boundary.sockets reports. */
typedef struct host_sockets_ctx {
        sockets *s;
        const sandbox_table *tables; /* every mount table of the sandbox, the kernel's first */
        size_t n_tables;
        json_object *devs;         /* devices the sandbox's mounts are on ("maj:min" → null) */
        json_object *files;        /* socket files looked at ("maj:min:ino" → placed or out of reach) */
        json_object *reach;        /* the look's "reach" */
        json_object *not_claimed;  /* sockets the host could not place */
        kb_sockdiag_unix *pending; /* not placed yet (malloc'd) */
        size_t n_pending, cap_pending;
        size_t checked, elsewhere, vanished, abstract;
} host_sockets_ctx;

static void host_sockets_done(host_sockets_ctx *x) {
        free(x->pending);
}

static const char *socket_kind(const kb_sockdiag_unix *u, char *buf, size_t size) {
        snprintf(buf, size, "%s unix %s socket", kb_inspect_socket_state_name(u->state),
                 kb_inspect_socket_type_name(u->type));
        return buf;
}

/* Entries of one folder looked at for a socket renamed in it. */
#define RENAMED_ENTRIES_MAX 4096

/* The file of u where its name no longer is: a socket file of its inode in the folder that name was
 * in (renamed in place, as a daemon that binds a temporary name and renames it over its real one
 * does), looked at from root_fd (kbound's "/" or a process's root), at most RENAMED_ENTRIES_MAX
 * entries. Returns 1 with *ret_st and the file's path in path (which held the name), 0 when it is
 * not there. */
static int renamed_in_folder(int root_fd, const kb_sockdiag_unix *u, char *path, size_t size, struct stat *ret_st) {
        char folder[PATH_MAX];
        const char *slash = strrchr(path, '/');
        if (!slash)
                return 0;
        snprintf(folder, sizeof folder, "%.*s", slash == path ? 1 : (int) (slash - path), path);
        int dfd = kb_inspect_open_dir_in_root(root_fd, folder);
        if (dfd < 0)
                return 0;
        DIR *d = fdopendir(dfd);
        if (!d) {
                close(dfd);
                return 0;
        }
        struct dirent *de;
        int found = 0;
        for (size_t n = 0; !found && n < RENAMED_ENTRIES_MAX && (de = readdir(d)); n++) {
                struct stat st;
                if ((de->d_type != DT_SOCK && de->d_type != DT_UNKNOWN) ||
                    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISSOCK(st.st_mode) ||
                    (uint32_t) st.st_ino != u->file_ino)
                        continue;
                if (snprintf(path, size, "%s/%s", strcmp(folder, "/") == 0 ? "" : folder, de->d_name) >= (int) size)
                        break;
                *ret_st = st;
                found = 1;
        }
        closedir(d);
        return found;
}

/* Whether pid (0: kbound) shows u's file at path (or, renamed, in path's folder: path then names
 * it), confirmed by the file's device and inode. When it does, appends u's reach entry
 * (kb_inspect_reach_entry, kb_inspect_expose) and returns 1; returns 0 when it does not, -ENOMEM. */
static int try_place(host_sockets_ctx *x, const kb_sockdiag_unix *u, pid_t pid, char *path, size_t size) {
        const kb_inspect_target *t = x->s->t;
        char root[PATH_MAX], file_dev[KB_PROCFS_DEV_MAX];
        struct stat st;
        _cleanup_json_ json_object *table = NULL;
        kb_procfs_dev(major(u->file_dev), minor(u->file_dev), file_dev);
        if (pid == 0)
                snprintf(root, sizeof root, "/");
        else
                snprintf(root, sizeof root, "%s/%d/root", t->proc_root, (int) pid);
        _cleanup_close_ int root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return 0;
        bool at_name = pid == 0 ? lstat(path, &st) == 0 : kb_inspect_stat_in_root(root_fd, path, &st) == 0;
        bool found_file = (at_name && S_ISSOCK(st.st_mode) && (uint32_t) st.st_ino == u->file_ino) ||
                          renamed_in_folder(root_fd, u, path, size, &st);
        /* The name the mount table is matched by: its folder's links followed (/var/run/x is on
         * /run's filesystem); a folder that cannot be named leaves it not placed. */
        char named[PATH_MAX];
        if (found_file && kb_inspect_name_in_root(root_fd, path, named, sizeof named) < 0)
                found_file = false;
        /* Another process's root is held only for the lookup: another kbound run judges a process
         * outside its sandbox that holds a file of it, and a look of this one would be that for the
         * moment it holds another sandbox's root (inspect_shared.c confirms a kbound's hold later). */
        kb_closep(&root_fd);
        if (!found_file)
                return 0;
        if (pid == 0)
                table = json_object_get(kb_fact_arr_of(t->host, FACT_HOST_MOUNTS));
        else {
                _cleanup_free_ char *mi = NULL;
                int r = kb_inspect_read_proc(t->proc_root, pid, "mountinfo", KB_PROCFS_MOUNTINFO_MAX, &mi, NULL);
                if (r >= 0)
                        r = kb_procfs_mountinfo_parse(mi, &table);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return 0;
        }
        /* sock_diag names the superblock's device, stat the file's (which differ on btrfs): either
         * identifies it, with the inode. */
        json_object *hm = kb_procfs_mount_of(table, named);
        const char *hdev = kb_fact_str_of(hm, FACT_MOUNT_DEV);
        if (!S_ISSOCK(st.st_mode) || (uint32_t) st.st_ino != u->file_ino ||
            (st.st_dev != u->file_dev && (!hdev || strcmp(hdev, file_dev) != 0)))
                return 0;
        char kind[64], shown[PATH_MAX + 64];
        if (pid == 0)
                snprintf(shown, sizeof shown, "%s", path);
        else
                snprintf(shown, sizeof shown, "%s (in the mount namespace of pid %d)", path, (int) pid);
        json_object *exposed = NULL, *e = kb_inspect_reach_entry(socket_kind(u, kind, sizeof kind), shown, "socket",
                                                                 t->socket_claim, x->reach, &exposed);
        json_object *facts = kb_inspect_socket_facts(u);
        if (!e) {
                json_object_put(facts);
                return -ENOMEM;
        }
        if (kb_fact_set_obj(e, FACT_REACH_SOCKET, facts) < 0)
                return -ENOMEM;
        return kb_inspect_expose(t, table, named, &st, x->tables, x->n_tables, e, exposed) < 0 ? -ENOMEM : 1;
}

/* Folders a holder still references, where a socket it bound through a folder's descriptor it has
 * since closed (conmon binds /proc/self/fd/N/attach, then closes N) may be: its working folder and
 * the folder of each file its descriptors name (a folder itself, or a file's parent), at most
 * HOLDER_FOLDERS_MAX, each once, as paths of the holder's view. */
#define HOLDER_FOLDERS_MAX 16
#define HOLDER_FDS_MAX 1024

static size_t holder_folders(const char *proc_root, pid_t pid, char (*folders)[PATH_MAX]) {
        size_t n = 0;
        char link[PATH_MAX + 64], target[PATH_MAX];
        snprintf(link, sizeof link, "%s/%d/cwd", proc_root, (int) pid);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (len > 0 && target[0] == '/') {
                target[len] = '\0';
                snprintf(folders[n++], PATH_MAX, "%s", target);
        }
        snprintf(link, sizeof link, "%s/%d/fd", proc_root, (int) pid);
        DIR *d = opendir(link);
        if (!d)
                return n;
        struct dirent *de;
        for (size_t seen = 0; n < HOLDER_FOLDERS_MAX && seen < HOLDER_FDS_MAX && (de = readdir(d)); seen++) {
                struct stat st;
                if (de->d_name[0] == '.')
                        continue;
                snprintf(link, sizeof link, "%s/%d/fd/%s", proc_root, (int) pid, de->d_name);
                len = readlink(link, target, sizeof target - 1);
                if (len <= 0 || target[0] != '/' || stat(link, &st) < 0)
                        continue;
                target[len] = '\0';
                char *slash = strrchr(target, '/');
                if (!S_ISDIR(st.st_mode))
                        *(slash == target ? slash + 1 : slash) = '\0';
                bool known = false;
                for (size_t i = 0; i < n && !known; i++)
                        known = strcmp(folders[i], target) == 0;
                if (!known)
                        snprintf(folders[n++], PATH_MAX, "%s", target);
        }
        closedir(d);
        return n;
}

/* Finds the file of u, a pathname socket of a host network namespace (rep: one of that namespace's
 * processes, 0 for kbound's own), by its name: in kbound's mount namespace, in rep's, in each
 * holder's (a relative name from the holder's working folder; a name through a folder's descriptor
 * under that folder while the holder has it open, else under the folders it still references),
 * each try confirmed by the file's device and inode (try_place). Returns 1 when found, 0 when not,
 * -ENOMEM. */
static int place_socket(host_sockets_ctx *x, const kb_sockdiag_unix *u, pid_t rep) {
        const kb_inspect_target *t = x->s->t;
        char name[KB_SOCKDIAG_NAME_MAX + 1];
        memcpy(name, u->name, u->name_len);
        name[u->name_len] = '\0';
        pid_t tries[8];
        size_t n_tries = 0;
        if (name[0] == '/') {
                tries[n_tries++] = 0;
                if (rep > 0)
                        tries[n_tries++] = rep;
        }
        for (int pass = 0; pass < 2; pass++) {
                if (pass == 1) {
                        /* Not where its name says: ask who holds it. */
                        json_object *holders = kb_inspect_holders_of(x->s, u->inode);
                        if (!holders)
                                return -ENOMEM;
                        n_tries = 0;
                        for (size_t i = 0; i < json_object_array_length(holders) && n_tries < KB_ELEMENTSOF(tries);
                             i++) {
                                json_object *h = json_object_array_get_idx(holders, i);
                                const char *side = kb_fact_str_of(h, FACT_HOLDER_SIDE);
                                if (side && strcmp(side, "sandbox") != 0)
                                        tries[n_tries++] = (pid_t) kb_fact_int_or(h, FACT_HOLDER_PID, -1);
                        }
                        json_object_put(holders);
                }
                for (size_t i = 0; i < n_tries; i++) {
                        pid_t pid = tries[i];
                        char path[PATH_MAX];
                        long dir_fd = -1;
                        int rest = 0, r = 0;
                        bool through_fd =
                                pass == 1 && sscanf(name, "/proc/self/fd/%ld/%n", &dir_fd, &rest) == 1 && rest > 0;
                        if (through_fd) {
                                /* Bound through a folder's descriptor (a path too long for a socket's
                                 * name, as conmon binds /proc/self/fd/N/attach): under the folder the
                                 * holder still has open there, if it does; the inode says. */
                                char fd_link[PATH_MAX];
                                snprintf(fd_link, sizeof fd_link, "%s/%d/fd/%ld", t->proc_root, (int) pid, dir_fd);
                                ssize_t len = readlink(fd_link, path, sizeof path - 1);
                                if (len > 0 && path[0] == '/') {
                                        path[len] = '\0';
                                        size_t used = (size_t) len;
                                        if (snprintf(path + used, sizeof path - used, "%s%s", used > 1 ? "/" : "",
                                                     name + rest) < (int) (sizeof path - used))
                                                r = try_place(x, u, pid, path, sizeof path);
                                }
                        } else if (name[0] == '/') {
                                snprintf(path, sizeof path, "%s", name);
                                r = try_place(x, u, pid, path, sizeof path);
                        } else {
                                /* Relative to the working folder it was bound in, if the holder
                                 * is still there: the file's inode says whether it is. */
                                char cwd[PATH_MAX + 32];
                                snprintf(cwd, sizeof cwd, "%s/%d/cwd", t->proc_root, (int) pid);
                                ssize_t len = readlink(cwd, path, sizeof path - 1);
                                if (len > 0 && path[0] == '/') {
                                        path[len] = '\0';
                                        size_t used = (size_t) len;
                                        if (snprintf(path + used, sizeof path - used, "%s%s", used > 1 ? "/" : "",
                                                     name) < (int) (sizeof path - used))
                                                r = try_place(x, u, pid, path, sizeof path);
                                }
                        }
                        if (r != 0)
                                return r;
                        if (!through_fd)
                                continue;
                        /* That folder's descriptor closed since: the folders the holder still
                         * references, each with the name's last part (or renamed there). */
                        const char *base = strrchr(name, '/') + 1;
                        char(*folders)[PATH_MAX] = calloc(HOLDER_FOLDERS_MAX, PATH_MAX);
                        if (!folders)
                                return -ENOMEM;
                        size_t n_folders = holder_folders(t->proc_root, pid, folders);
                        for (size_t k = 0; r == 0 && k < n_folders; k++)
                                if (snprintf(path, sizeof path, "%s/%s", strcmp(folders[k], "/") == 0 ? "" : folders[k],
                                             base) < (int) sizeof path)
                                        r = try_place(x, u, pid, path, sizeof path);
                        free(folders);
                        if (r != 0)
                                return r;
                }
        }
        return 0;
}

/* Whether the file key names ("maj:min:ino") was placed, or is out of the sandbox's reach. */
static bool file_resolved(host_sockets_ctx *x, const char *key) {
        json_object *v = NULL;
        return json_object_object_get_ex(x->files, key, &v) && json_object_get_boolean(v);
}

static void file_key(const kb_sockdiag_unix *u, char *buf, size_t size) {
        snprintf(buf, size, "%u:%u:%u", major(u->file_dev), minor(u->file_dev), u->file_ino);
}

/* The bound pathname sockets of one network namespace's list (rep: one of its processes, 0 for
 * kbound's own; diag: a sock_diag socket of it, -1 for kbound's), except the sandbox's own: each
 * socket file on a device one of the kernel's mounts is on is placed (place_socket) through any
 * socket bound to it (a connection not yet accepted carries its listener's file, and is placed
 * with it). One still unplaced and still there when the namespace is listed again is kept in
 * x->pending for kb_inspect_host_sockets to judge once every namespace was read. */
static int namespace_sockets(host_sockets_ctx *x, const kb_sockdiag_unix *list, size_t n, pid_t rep, int diag) {
        size_t first = x->n_pending;
        for (size_t i = 0; i < n; i++) {
                const kb_sockdiag_unix *u = &list[i];
                char key[64];
                int r = 0;
                kb_inspect_socket_key(key, sizeof key, u->inode);
                if (json_object_object_get_ex(x->s->members, key, NULL))
                        continue; /* the sandbox's own */
                char peer_key[32];
                kb_inspect_socket_key(peer_key, sizeof peer_key, u->peer);
                if (u->peer && json_object_object_get_ex(x->s->own, peer_key, NULL))
                        continue; /* the far end of one of kbound's own connections (identity.pid2 judges whose) */
                if (!kb_sockdiag_is_path(u)) {
                        if (u->name_len > 0 && rep == 0 && !json_object_object_get_ex(x->s->own, key, NULL))
                                x->abstract++; /* the host's, kbound's own canary not counted */
                        continue;
                }
                if (u->has_file) {
                        char dev[KB_PROCFS_DEV_MAX];
                        bool seen = false;
                        file_key(u, key, sizeof key);
                        kb_procfs_dev(major(u->file_dev), minor(u->file_dev), dev);
                        if (file_resolved(x, key))
                                continue; /* placed through another socket bound to that file */
                        seen = json_object_object_get_ex(x->files, key, NULL);
                        if (!seen) {
                                x->checked++;
                                bool elsewhere = !json_object_object_get_ex(x->devs, dev, NULL);
                                x->elsewhere += elsewhere; /* no mount of the sandbox is on its filesystem */
                                if (kb_inspect_map_add(x->files, key, json_object_new_boolean(elsewhere)) < 0)
                                        return -ENOMEM;
                                if (elsewhere)
                                        continue;
                        }
                        r = place_socket(x, u, rep);
                        if (r < 0)
                                return r;
                        if (r == 1 && kb_inspect_map_add(x->files, key, json_object_new_boolean(true)) < 0)
                                return -ENOMEM;
                        if (r == 1 || seen)
                                continue; /* one socket of an unplaced file is enough to judge */
                } else
                        x->checked++;
                if (x->n_pending == x->cap_pending) {
                        size_t cap = x->cap_pending ? 2 * x->cap_pending : 16;
                        kb_sockdiag_unix *np = realloc(x->pending, cap * sizeof *np);
                        if (!np)
                                return -ENOMEM;
                        x->pending = np;
                        x->cap_pending = cap;
                }
                x->pending[x->n_pending++] = *u;
        }
        if (x->n_pending == first)
                return 0;
        /* A socket closed since the list was taken is no longer anyone's to reach. */
        kb_sockdiag_unix *again = NULL;
        size_t n_again = 0, kept = first;
        int r = kb_sockdiag_unix_list(diag, &again, &n_again);
        if (r == -ENOMEM)
                return r;
        for (size_t i = first; i < x->n_pending; i++) {
                if (r == 0 && !kb_sockdiag_find(again, n_again, x->pending[i].inode))
                        x->vanished++;
                else
                        x->pending[kept++] = x->pending[i];
        }
        x->n_pending = kept;
        free(again);
        return 0;
}

/* Whether the file of u, a socket the host could not find by its name, is in the sandbox all the
 * same, at a place its name ends with under one of the sandbox's mounts of its filesystem (a name
 * bound relative to a folder since bound into the sandbox): a bounded set of places, each
 * confirmed by the file's device and inode. Returns 1 and appends u's reach entry, 0, -ENOMEM. */
static int find_in_sandbox(host_sockets_ctx *x, const kb_sockdiag_unix *u) {
        char name[KB_SOCKDIAG_NAME_MAX + 1], dev[KB_PROCFS_DEV_MAX];
        memcpy(name, u->name, u->name_len);
        name[u->name_len] = '\0';
        kb_procfs_dev(major(u->file_dev), minor(u->file_dev), dev);
        for (size_t k = 0; k < x->n_tables; k++)
                for (size_t i = 0; x->tables[k].root_fd >= 0 && x->tables[k].mounts &&
                                   i < json_object_array_length(x->tables[k].mounts);
                     i++) {
                        json_object *m = json_object_array_get_idx(x->tables[k].mounts, i);
                        const char *mdev = kb_fact_str_of(m, FACT_MOUNT_DEV),
                                   *mp = kb_fact_str_of(m, FACT_MOUNT_MOUNTPOINT),
                                   *type = kb_fact_str_of(kb_fact_obj_of(m, FACT_MOUNT_TARGET), FACT_STAT_TYPE);
                        if (!mdev || !mp || strcmp(mdev, dev) != 0 || !type || strcmp(type, "dir") != 0)
                                continue;
                        for (const char *suffix = name; suffix;
                             suffix = strchr(suffix, '/') ? strchr(suffix, '/') + 1 : NULL) {
                                char at[PATH_MAX];
                                struct stat st;
                                if (!*suffix ||
                                    snprintf(at, sizeof at, "%s/%s", strcmp(mp, "/") == 0 ? "" : mp, suffix) >=
                                            (int) sizeof at ||
                                    kb_inspect_stat_in_root(x->tables[k].root_fd, at, &st) < 0 ||
                                    !S_ISSOCK(st.st_mode) || (uint32_t) st.st_ino != u->file_ino ||
                                    st.st_dev != u->file_dev)
                                        continue;
                                char kind[64], shown[PATH_MAX + 64];
                                snprintf(shown, sizeof shown, "%s (not found by that name on the host)", name);
                                json_object *exposed = NULL, *e = kb_inspect_reach_entry(
                                                                     socket_kind(u, kind, sizeof kind), shown, "socket",
                                                                     x->s->t->socket_claim, x->reach, &exposed);
                                json_object *where = json_object_new_object(), *facts = kb_inspect_socket_facts(u);
                                if (!e || !where || kb_fact_set_str(where, FACT_EXPOSURE_AT, at) < 0 ||
                                    kb_fact_set_bool(where, FACT_EXPOSURE_CONFIRMED, true) < 0 ||
                                    kb_inspect_push(exposed, where) < 0 ||
                                    kb_fact_set_obj(e, FACT_REACH_SOCKET, facts) < 0)
                                        return -ENOMEM;
                                return 1;
                        }
                }
        return 0;
}

/* The sockets of x->pending whose files no socket of any namespace placed. One found in the
 * sandbox all the same (find_in_sandbox) fails the check; the others, on a filesystem the sandbox
 * mounts but whose files the host cannot find (removed while bound, moved, bound by a relative
 * name in a folder their holder has left, or another user's that an unprivileged kbound may not
 * look into), are reported as not claimed ("not_claimed"), with who holds them. */
static int unplaced_sockets(host_sockets_ctx *x) {
        for (size_t i = 0; i < x->n_pending; i++) {
                const kb_sockdiag_unix *u = &x->pending[i];
                char key[64], why[200];
                file_key(u, key, sizeof key);
                if (u->has_file && file_resolved(x, key))
                        continue;
                int r = u->has_file ? find_in_sandbox(x, u) : 0;
                if (r != 0) {
                        if (r < 0)
                                return r;
                        continue;
                }
                if (u->has_file)
                        snprintf(why, sizeof why, "its file (device %u:%u, inode %u) was not found by its name",
                                 major(u->file_dev), minor(u->file_dev), u->file_ino);
                else
                        snprintf(why, sizeof why, "the kernel did not say which file it is bound to");
                json_object *o = kb_inspect_socket_facts(u);
                if (!o || kb_inspect_push(x->not_claimed, o) < 0 || kb_fact_set_str(o, FACT_SOCKET_WHY, why) < 0 ||
                    (u->has_uid && kb_fact_set_int(o, FACT_SOCKET_UID, u->uid) < 0) ||
                    kb_fact_set_arr(o, FACT_SOCKET_HELD_BY, kb_inspect_holders_of(x->s, u->inode)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* A network namespace kbound could not enter, read from /proc/<pid>/net/unix instead: text whose
 * names their owners choose, so only a path found as a socket in pid's view is placed (never by
 * the same name in kbound's: that could be another file); the rest is reported as not placed, and a table that cannot
 * be read or parsed as such, never skipped (the lines of it that have the table's shape are still looked for). Where
 * its paths are looked for is pid's view, so pid must last the reading: if it ends meanwhile (its table, its root or
 * its mount table gone: a process that exits gives up its root before it leaves its namespaces), nothing is recorded of
 * the namespace but what was placed, and -ESRCH lets another of its processes stand for it, as for a namespace entered.
 * A process still there whose root cannot be opened (another user's, unprivileged) leaves its sockets not placed.
 * Returns 0, -ESRCH or -ENOMEM. */
static int namespace_by_text(host_sockets_ctx *x, pid_t pid, int enter_error, json_object *not_entered) {
        const kb_inspect_target *t = x->s->t;
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o || kb_fact_set_int(o, FACT_NOT_ENTERED_PID, pid) < 0 ||
            kb_fact_set_str(o, FACT_NOT_ENTERED_ERROR, strerror(-enter_error)) < 0)
                return -ENOMEM;
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_object *list = NULL;
        int r = kb_inspect_read_proc(t->proc_root, pid, "net/unix", KB_PROCFS_NET_MAX, &text, NULL);
        if (r == -ESRCH)
                return r;
        if (r >= 0)
                r = kb_procfs_unix_parse(text, &list);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                /* Recorded; the lines that have the table's shape are still looked for. */
                size_t skipped = 0;
                if (kb_fact_set_str(o, FACT_NOT_ENTERED_TABLE_ERROR, strerror(-r)) < 0)
                        return -ENOMEM;
                r = text ? kb_procfs_unix_parse_lenient(text, &list, &skipped) : -ENODATA;
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return kb_inspect_push(not_entered, TAKE_PTR(o));
        }
        size_t by_path = 0, unplaced = 0;
        /* Each path is looked for where the namespace's process sees it (another sandbox's
         * sockets are bound in its own view: /run/kbound/...), its mount table saying where that
         * is on the host. */
        char root[PATH_MAX];
        snprintf(root, sizeof root, "%s/%d/root", t->proc_root, (int) pid);
        _cleanup_json_ json_object *table = NULL;
        bool table_read = false;
        for (size_t k = 0; k < json_object_array_length(list); k++) {
                json_object *u = json_object_array_get_idx(list, k);
                const char *path = kb_fact_str_of(u, FACT_UNIX_ENTRY_PATH);
                char key[64];
                struct stat st;
                snprintf(key, sizeof key, "socket:[%lld]", (long long) kb_fact_int_or(u, FACT_UNIX_ENTRY_INODE, -1));
                if (!path || path[0] == '@' || json_object_object_get_ex(x->s->members, key, NULL))
                        continue;
                /* Looked for where the namespace's process sees it, never by the same name in
                 * kbound's view: the table gives the socket's inode, not its file's, so a file of
                 * kbound's at that name (/run/dbus/system_bus_socket, which a container has too)
                 * is not shown to be this socket's. The namespace's root held for this lookup
                 * alone (as above: another run judges a hold of its sandbox's files). */
                bool inside = false;
                char named[PATH_MAX];
                if (path[0] == '/') {
                        _cleanup_close_ int root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
                        if (root_fd < 0 && errno == ENOENT)
                                return -ESRCH; /* ended, or ending */
                        inside = root_fd >= 0 && kb_inspect_stat_in_root(root_fd, path, &st) == 0 &&
                                 S_ISSOCK(st.st_mode) &&
                                 kb_inspect_name_in_root(root_fd, path, named, sizeof named) == 0;
                }
                if (inside && !table_read) {
                        _cleanup_free_ char *mi = NULL;
                        table_read = true;
                        r = kb_inspect_read_proc(t->proc_root, pid, "mountinfo", KB_PROCFS_MOUNTINFO_MAX, &mi, NULL);
                        if (r >= 0)
                                r = kb_procfs_mountinfo_parse(mi, &table);
                        if (r == -ENOMEM || r == -ESRCH)
                                return r;
                        if (r < 0 && !kb_inspect_process_has_root(t->proc_root, pid))
                                return -ESRCH; /* a process that has ended says EINVAL for its mounts */
                }
                if (!inside || !table) {
                        unplaced++;
                        continue;
                }
                snprintf(key, sizeof key, "%u:%u:%u", major(st.st_dev), minor(st.st_dev), (uint32_t) st.st_ino);
                if (json_object_object_get_ex(x->files, key, NULL))
                        continue;
                if (kb_inspect_map_add(x->files, key, json_object_new_boolean(true)) < 0)
                        return -ENOMEM;
                by_path++;
                char shown[PATH_MAX + 64];
                snprintf(shown, sizeof shown, "%s (in the mount namespace of pid %d)", path, (int) pid);
                json_object *exposed = NULL,
                            *e = kb_inspect_reach_entry("unix socket (by the path its table shows)", shown, "socket",
                                                        t->socket_claim, x->reach, &exposed);
                if (!e || kb_inspect_expose(t, table, named, &st, x->tables, x->n_tables, e, exposed) < 0)
                        return -ENOMEM;
        }
        if (kb_fact_set_int(o, FACT_NOT_ENTERED_PLACED_BY_PATH, (int64_t) by_path) < 0 ||
            kb_fact_set_int(o, FACT_NOT_ENTERED_UNPLACED, (int64_t) unplaced) < 0)
                return -ENOMEM;
        return kb_inspect_push(not_entered, TAKE_PTR(o));
}

int kb_inspect_host_sockets(sockets *s, json_object *snap, const sandbox_table *tables, size_t n_tables,
                            json_object *reach) {
        const kb_inspect_target *t = s->t;
        _cleanup_json_ json_object *devs = json_object_new_object(), *files = json_object_new_object(),
                                   *not_entered = json_object_new_array(), *not_claimed = json_object_new_array();
        _cleanup_free_ uint64_t *seen = calloc(s->n_procs + 1, sizeof(uint64_t));
        if (!devs || !files || !not_entered || !not_claimed || !seen)
                return -ENOMEM;
        kb_inspect_table_devices(tables, n_tables, devs);
        _cleanup_(host_sockets_done) host_sockets_ctx x = {.s = s,
                                                           .tables = tables,
                                                           .n_tables = n_tables,
                                                           .devs = devs,
                                                           .files = files,
                                                           .reach = reach,
                                                           .not_claimed = not_claimed};
        size_t listed = 0, skipped = 0, n_seen = 0;
        char table[PATH_MAX];
        struct stat tst;
        /* Network namespaces are keyed by their unix table's inode, which differs per namespace
         * and, unlike ns/net, can be read for another user's process. */
        snprintf(table, sizeof table, "%s/%d/net/unix", t->proc_root, (int) getpid());
        if (stat(table, &tst) == 0)
                seen[n_seen++] = (uint64_t) tst.st_ino;
        /* The sandbox's own network namespaces are not the host's, whoever else is in one for a
         * moment: listed as the host's, a connection the kernel accepted after its descriptors were
         * read would look like a host socket reachable in the sandbox. */
        for (size_t i = 0; i < s->n_procs; i++) {
                snprintf(table, sizeof table, "%s/%d/net/unix", t->proc_root, (int) s->procs[i].pid);
                if (!s->procs[i].member || stat(table, &tst) < 0)
                        continue;
                bool known = false;
                for (size_t j = 0; j < n_seen && !known; j++)
                        known = seen[j] == (uint64_t) tst.st_ino;
                if (!known)
                        seen[n_seen++] = (uint64_t) tst.st_ino;
        }
        if (s->list) {
                listed++;
                if (namespace_sockets(&x, s->list, s->n, 0, -1) < 0)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < s->n_procs; i++) {
                pid_t pid = s->procs[i].pid;
                snprintf(table, sizeof table, "%s/%d/net/unix", t->proc_root, (int) pid);
                if (s->procs[i].member || stat(table, &tst) < 0)
                        continue;
                bool known = false;
                for (size_t j = 0; j < n_seen && !known; j++)
                        known = seen[j] == (uint64_t) tst.st_ino;
                if (known)
                        continue;
                seen[n_seen++] = (uint64_t) tst.st_ino;
                if (listed + json_object_array_length(not_entered) >= SOCKET_NAMESPACES_MAX) {
                        skipped++;
                        continue;
                }
                int fd = diag_fd_in(t->proc_root, pid);
                if (fd == -ESRCH) {
                        n_seen--; /* gone: another of its processes may stand for it */
                        continue;
                }
                if (fd == -ENOMEM)
                        return fd;
                kb_sockdiag_unix *list = NULL;
                size_t n = 0;
                int r = fd >= 0 ? kb_sockdiag_unix_list(fd, &list, &n) : fd;
                if (r == -ENOMEM) {
                        close(fd);
                        return r;
                }
                if (r >= 0) {
                        listed++;
                        r = kb_inspect_peers_offer(s, list, n, KB_PEERS_FOUND_HOST, pid);
                        if (r >= 0)
                                r = namespace_sockets(&x, list, n, pid, fd);
                        free(list);
                        close(fd);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (fd >= 0)
                        close(fd);
                r = namespace_by_text(&x, pid, r, not_entered);
                if (r == -ESRCH)
                        n_seen--; /* ended while read: another of its processes may stand for it */
                else if (r < 0)
                        return r;
        }
        if (unplaced_sockets(&x) < 0)
                return -ENOMEM;
        json_object *counts = json_object_new_object();
        if (!counts || kb_fact_set_int(counts, FACT_HOST_SOCKETS_CHECKED, (int64_t) x.checked) < 0 ||
            kb_fact_set_int(counts, FACT_HOST_SOCKETS_ELSEWHERE, (int64_t) x.elsewhere) < 0 ||
            kb_fact_set_int(counts, FACT_HOST_SOCKETS_VANISHED, (int64_t) x.vanished) < 0 ||
            kb_fact_set_arr(counts, FACT_HOST_SOCKETS_NOT_CLAIMED, TAKE_PTR(not_claimed)) < 0) {
                json_object_put(counts);
                return -ENOMEM;
        }
        if (kb_fact_set_int(snap, FACT_LOOK_SOCKET_NAMESPACES, (int64_t) listed) < 0 ||
            kb_fact_set_arr(snap, FACT_LOOK_SOCKET_NAMESPACES_NOT_ENTERED, TAKE_PTR(not_entered)) < 0 ||
            kb_fact_set_int(snap, FACT_LOOK_SOCKET_NAMESPACES_SKIPPED, (int64_t) skipped) < 0 ||
            kb_fact_set_int(snap, FACT_LOOK_ABSTRACT_SOCKETS, (int64_t) x.abstract) < 0) {
                json_object_put(counts);
                return -ENOMEM;
        }
        return kb_fact_set_obj(snap, FACT_LOOK_HOST_SOCKETS, counts);
}
