/* inspect_reach.c: where the sandbox's mounts expose a host object (a canary, a socket's file). */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "evidence/inspect-internal.h"
#include "base/cleanup.h"
#include "base/procfs.h"

/* Whether the object a reach entry names is at at, through mount m of table tb: the mount's own
 * root is found first (kb_inspect_open_mount_root), then the object beneath it, with no link
 * followed; fs_writable says whether the sandbox can write to that filesystem through any mount
 * (then an absence proves nothing). Appends an EXPOSURE (at, confirmed, error, pid for a table
 * other than the kernel's) to exposed. */
static int reach_confirm(const kb_inspect_target *t, const sandbox_table *tb, json_object *m, const char *at,
                         const char *rel, const struct stat *host_st, bool fs_writable, json_object *exposed) {
        _cleanup_error_ kb_error *error = NULL;
        struct stat st;
        int mount_fd = -1, r;
        if (tb->root_fd < 0)
                r = kb_error_make(&error, EBADF, "the host could not open that mount table's root");
        else if ((r = kb_inspect_open_mount_root(tb->root_fd, kb_fact_str_of(m, FACT_MOUNT_MOUNTPOINT),
                                                 kb_fact_int_or(m, FACT_MOUNT_ID, -1), &mount_fd, &st, &error)) < 0)
                kb_error_prefix(&error, "its mount point"); /* never "no such file" alone */
        else {
                const char *root = kb_fact_str_of(m, FACT_MOUNT_ROOT);
                const char *inner = root && strcmp(root, "/") != 0 ? rel + strlen(root) : rel;
                r = kb_inspect_stat_in_mount(mount_fd, inner, fs_writable, &st, &error);
                close(mount_fd);
        }
        bool confirmed = r == 0 && st.st_dev == host_st->st_dev && st.st_ino == host_st->st_ino;
        /* Found, and something else: a finding, not a failed look. */
        const char *why = r == 0 ? "a different object is there" : kb_error_text(error, r);
        json_object *x = json_object_new_object();
        if (!x || kb_fact_set_str(x, FACT_EXPOSURE_AT, at) < 0 ||
            kb_fact_set_bool(x, FACT_EXPOSURE_CONFIRMED, confirmed) < 0 ||
            (!confirmed && kb_fact_set_str(x, FACT_EXPOSURE_ERROR, why) < 0) ||
            (tb->pid != t->kernel_pid && kb_fact_set_int(x, FACT_EXPOSURE_PID, tb->pid) < 0)) {
                json_object_put(x);
                return -ENOMEM;
        }
        return kb_inspect_push(exposed, x);
}

json_object *kb_inspect_reach_entry(const char *name, const char *path, const char *kind, const char *claim,
                                    json_object *out, json_object **ret_exposed) {
        _cleanup_json_ json_object *e = json_object_new_object(), *exposed_list = json_object_new_array();
        json_object *exposed = exposed_list; /* e's, once added */
        if (!e || !exposed_list || kb_fact_set_str(e, FACT_REACH_NAME, name) < 0 ||
            kb_fact_set_str(e, FACT_REACH_PATH, path) < 0 || kb_fact_set_str(e, FACT_REACH_KIND, kind) < 0 ||
            (claim && kb_fact_set_str(e, FACT_REACH_CLAIM, claim) < 0) ||
            kb_fact_set_arr(e, FACT_REACH_EXPOSED, TAKE_PTR(exposed_list)) < 0)
                return NULL;
        json_object *entry = TAKE_PTR(e);
        if (kb_inspect_push(out, entry) < 0)
                return NULL;
        *ret_exposed = exposed;
        return entry;
}

int kb_inspect_expose(const kb_inspect_target *t, json_object *table, const char *path, const struct stat *host_st,
                      const sandbox_table *tables, size_t n_tables, json_object *e, json_object *exposed) {
        json_object *hm = kb_procfs_mount_of(table, path);
        char rel[PATH_MAX];
        if (!hm || n_tables == 0 || !tables[0].mounts || !kb_procfs_fs_path(hm, path, rel, sizeof rel))
                return kb_fact_set_str(e, FACT_REACH_ERROR, "no host mount holds it");
        const char *dev = kb_fact_str_of(hm, FACT_MOUNT_DEV);
        if ((dev && kb_fact_set_str(e, FACT_REACH_DEV, dev) < 0) ||
            (!S_ISDIR(host_st->st_mode) && kb_fact_set_int(e, FACT_REACH_LINKS, (int64_t) host_st->st_nlink) < 0))
                return -ENOMEM;
        /* A rename through any writable mount of that filesystem moves what every other mount of it
         * shows (dentries are the filesystem's), so an absence is proof only if none is writable. */
        bool fs_writable = false;
        for (size_t k = 0; k < n_tables; k++)
                for (size_t i = 0; tables[k].mounts && i < json_object_array_length(tables[k].mounts); i++) {
                        json_object *m = json_object_array_get_idx(tables[k].mounts, i);
                        const char *mdev = kb_fact_str_of(m, FACT_MOUNT_DEV);
                        if (mdev && dev && strcmp(mdev, dev) == 0 && kb_fact_bool_of(m, FACT_MOUNT_WRITABLE))
                                fs_writable = true;
                }
        for (size_t k = 0; k < n_tables; k++) {
                json_object *mounts = tables[k].mounts;
                for (size_t i = 0; mounts && i < json_object_array_length(mounts); i++) {
                        json_object *m = json_object_array_get_idx(mounts, i);
                        const char *mdev = kb_fact_str_of(m, FACT_MOUNT_DEV);
                        char at[PATH_MAX];
                        if (!mdev || !dev || strcmp(mdev, dev) != 0 || !kb_procfs_path_in_mount(m, rel, at, sizeof at))
                                continue;
                        if (kb_procfs_mount_of(mounts, at) != m)
                                continue; /* covered there by another mount */
                        if (reach_confirm(t, &tables[k], m, at, rel, host_st, fs_writable, exposed) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

int kb_inspect_reach_one(const kb_inspect_target *t, const sandbox_table *tables, size_t n_tables, const char *name,
                         const char *path, const char *kind, const char *claim, json_object *out) {
        json_object *exposed = NULL, *e = kb_inspect_reach_entry(name, path, kind, claim, out, &exposed);
        if (!e)
                return -ENOMEM;
        struct stat host_st;
        json_object *host_mounts = kb_fact_arr_of(t->host, FACT_HOST_MOUNTS);
        if (lstat(path, &host_st) < 0)
                return kb_fact_set_str(e, FACT_REACH_ERROR, strerror(errno));
        /* Matched against the mount table by the name its folder has, links followed (a home
         * reached through a link lives on the filesystem the link leads to). */
        char named[PATH_MAX], why[PATH_MAX + 64];
        _cleanup_close_ int root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        int r = root_fd < 0 ? -errno : kb_inspect_name_in_root(root_fd, path, named, sizeof named);
        if (r < 0) {
                snprintf(why, sizeof why, "the host could not name its folder: %s", strerror(-r));
                return kb_fact_set_str(e, FACT_REACH_ERROR, why);
        }
        return kb_inspect_expose(t, host_mounts, named, &host_st, tables, n_tables, e, exposed);
}

int kb_inspect_canary_reach(const kb_inspect_target *t, const sandbox_table *tables, size_t n_tables,
                            json_object *reach) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < t->n_canaries; i++)
                if (t->canaries[i].path)
                        r = kb_inspect_reach_one(t, tables, n_tables, t->canaries[i].name, t->canaries[i].path,
                                                 "canary", t->canaries[i].claim, reach);
        return r;
}
