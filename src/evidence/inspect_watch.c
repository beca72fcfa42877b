/* inspect_watch.c: the file an inotify or fanotify inode mark watches, found in its holder's view by its handle. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "evidence/inspect-internal.h"
#include "base/cleanup.h"
#include "base/procfs.h"

/* The largest file handle the kernel makes (MAX_HANDLE_SZ). */
#define HANDLE_BYTES_MAX 128

/* hex ("f_handle" of fdinfo) into h's bytes. Returns 0, or -EINVAL. */
static int handle_from_hex(const char *hex, int type, struct file_handle *h) {
        size_t n = strlen(hex) / 2;
        if (n == 0 || n > HANDLE_BYTES_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                unsigned v;
                if (sscanf(hex + 2 * i, "%2x", &v) != 1)
                        return -EINVAL;
                h->f_handle[i] = (unsigned char) v;
        }
        h->handle_bytes = (unsigned) n;
        h->handle_type = type;
        return 0;
}

/* Whether st is the file dev ("maj:min", as the fdinfo's sdev) and ino. */
static bool is_file(const struct stat *st, const char *dev, int64_t ino) {
        char d[KB_PROCFS_DEV_MAX];
        kb_procfs_dev(major(st->st_dev), minor(st->st_dev), d);
        return strcmp(d, dev) == 0 && (int64_t) st->st_ino == ino;
}

/* Where the file of handle h (device dev, inode ino) is in the view whose root is root_fd, through
 * mount m of that view's table (a mount of its filesystem): opened by its handle on m, the path the
 * kernel names for it there, looked up again from root_fd and found to be that very file (device
 * and inode). A file of the filesystem outside what the view mounts gets a path that leads
 * elsewhere in the view, or nowhere. Returns 0 and the path in at, -errno. */
static int place_on(int root_fd, json_object *m, struct file_handle *h, const char *dev, int64_t ino, char *at,
                    size_t size) {
        const char *point = kb_fact_str_of(m, FACT_MOUNT_MOUNTPOINT);
        int64_t id;
        if (!point || !kb_fact_int_of(m, FACT_MOUNT_ID, &id))
                return -EINVAL;
        int mount_fd = -1;
        struct stat st;
        int r = kb_inspect_open_mount_root(root_fd, point, id, &mount_fd, &st, NULL);
        if (r < 0)
                return r;
        _cleanup_close_ int path_fd = mount_fd;
        if (!S_ISDIR(st.st_mode))
                return -ENOENT; /* a file bound alone: another mount of its filesystem serves */
        /* open_by_handle_at takes no O_PATH descriptor: the mount's root folder opened through it
         * (O_DIRECTORY: nothing but a folder is opened) */
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", path_fd);
        _cleanup_close_ int mfd = open(link, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (mfd < 0)
                return -errno;
        /* CAP_DAC_READ_SEARCH: root's; unprivileged, EPERM, and the mark is not placed. */
        _cleanup_close_ int fd = open_by_handle_at(mfd, h, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t len = kb_inspect_fd_name(fd, at, size);
        if (len < 0)
                return (int) len;
        r = kb_inspect_stat_in_root(root_fd, at, &st);
        if (r < 0)
                return r;
        return is_file(&st, dev, ino) ? 0 : -ENOENT;
}

int kb_inspect_place_watches(const char *proc_root, pid_t pid, json_object *fd) {
        json_object *watches = kb_fact_arr_of(fd, FACT_FD_WATCHES);
        _cleanup_json_ json_object *table = NULL;
        _cleanup_close_ int root_fd = -1;
        int table_error = 0;
        for (size_t i = 0; i < (watches ? json_object_array_length(watches) : 0); i++) {
                json_object *w = json_object_array_get_idx(watches, i);
                const char *kind = kb_fact_str_or(w, FACT_WATCH_KIND, ""), *dev = kb_fact_str_of(w, FACT_WATCH_DEV),
                           *hex = kb_fact_str_of(w, FACT_WATCH_HANDLE);
                int64_t ino, type;
                if (strcmp(kind, "inotify") != 0 && strcmp(kind, "fanotify-inode") != 0)
                        continue;
                if (!dev || !hex || !kb_fact_int_of(w, FACT_WATCH_INO, &ino) ||
                    !kb_fact_int_of(w, FACT_WATCH_HANDLE_TYPE, &type)) {
                        if (kb_fact_set_str(w, FACT_WATCH_PLACE_ERROR, "its fdinfo shows no file handle") < 0)
                                return -ENOMEM;
                        continue;
                }
                /* The holder's view, read once for all its marks. */
                if (!table && !table_error) {
                        char root[PATH_MAX];
                        snprintf(root, sizeof root, "%s/%d/root", proc_root, (int) pid);
                        root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
                        _cleanup_free_ char *mi = NULL;
                        table_error = root_fd < 0 ? -errno
                                                  : kb_inspect_read_proc(proc_root, pid, "mountinfo",
                                                                         KB_PROCFS_MOUNTINFO_MAX, &mi, NULL);
                        if (table_error >= 0)
                                table_error = kb_procfs_mountinfo_parse(mi, &table);
                        if (table_error == -ENOMEM)
                                return -ENOMEM;
                        if (table_error > 0)
                                table_error = 0;
                }
                union {
                        struct file_handle h;
                        char room[sizeof(struct file_handle) + HANDLE_BYTES_MAX];
                } handle;
                int r = table_error < 0 ? table_error : handle_from_hex(hex, (int) type, &handle.h);
                char at[PATH_MAX];
                /* Each mount of its filesystem in the holder's table, until one shows the file. */
                bool any = false;
                for (size_t k = 0; r >= 0 && table && k < json_object_array_length(table); k++) {
                        json_object *m = json_object_array_get_idx(table, k);
                        const char *mdev = kb_fact_str_of(m, FACT_MOUNT_DEV);
                        if (!mdev || strcmp(mdev, dev) != 0)
                                continue;
                        any = true;
                        int placed = place_on(root_fd, m, &handle.h, dev, ino, at, sizeof at);
                        if (placed == 0) {
                                if (kb_fact_set_str(w, FACT_WATCH_AT, at) < 0)
                                        return -ENOMEM;
                                break;
                        }
                        if (placed != -ENOENT)
                                r = placed; /* the first error that is not "not there" is said */
                }
                if (kb_fact_str_of(w, FACT_WATCH_AT))
                        continue;
                char why[128];
                if (r < 0)
                        snprintf(why, sizeof why, "%s", strerror(-r));
                else
                        snprintf(why, sizeof why, "%s",
                                 any ? "not in the holder's view" : "on no mount of the holder's");
                if (kb_fact_set_str(w, FACT_WATCH_PLACE_ERROR, why) < 0)
                        return -ENOMEM;
        }
        return 0;
}
