/* inspect_reach.c: where the sandbox's mounts expose a host object (a canary, a socket's file). */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "evidence/inspect-internal.h"
#include "base/cleanup.h"
#include "base/jsonget.h"
#include "base/procfs.h"

/* Whether the object a reach entry names is at at, through mount m of table tb: the mount's own
 * root is found first (kb_inspect_open_mount_root), then the object beneath it, with no link
 * followed; fs_writable says whether the sandbox can write to that filesystem through any mount
 * (then an absence proves nothing). Adds {"at", "confirmed", "error", "pid" (for a table other
 * than the kernel's)}. */
static int reach_confirm(const kb_inspect_target *t, const sandbox_table *tb, json_object *m, const char *at,
                         const char *rel, const struct stat *host_st, bool fs_writable, json_object *exposed) {
        _cleanup_error_ kb_error *error = NULL;
        struct stat st;
        int mount_fd = -1, r;
        if (tb->root_fd < 0)
                r = kb_error_make(&error, EBADF, "the host could not open that mount table's root");
        else if ((r = kb_inspect_open_mount_root(tb->root_fd, kb_json_str(m, "mountpoint"), kb_inspect_int_of(m, "id"),
                                                 &mount_fd, &st, &error)) < 0)
                kb_error_prefix(&error, "its mount point"); /* never "no such file" alone */
        else {
                const char *root = kb_json_str(m, "root");
                const char *inner = root && strcmp(root, "/") != 0 ? rel + strlen(root) : rel;
                r = kb_inspect_stat_in_mount(mount_fd, inner, fs_writable, &st, &error);
                close(mount_fd);
        }
        bool confirmed = r == 0 && st.st_dev == host_st->st_dev && st.st_ino == host_st->st_ino;
        /* Found, and something else: a finding, not a failed look. */
        const char *why = r == 0 ? "a different object is there" : kb_error_text(error, r);
        json_object *x = json_object_new_object();
        if (!x || kb_inspect_add(x, "at", json_object_new_string(at)) < 0 ||
            kb_inspect_add(x, "confirmed", json_object_new_boolean(confirmed)) < 0 ||
            (!confirmed && kb_inspect_add(x, "error", json_object_new_string(why)) < 0) ||
            (tb->pid != t->kernel_pid && kb_inspect_add(x, "pid", json_object_new_int(tb->pid)) < 0)) {
                json_object_put(x);
                return -ENOMEM;
        }
        return kb_inspect_push(exposed, x);
}

json_object *kb_inspect_reach_entry(const char *name, const char *path, const char *kind, const char *claim,
                                    json_object *out, json_object **ret_exposed) {
        json_object *e = json_object_new_object(), *exposed = json_object_new_array();
        if (!e || !exposed || kb_inspect_add(e, "name", json_object_new_string(name)) < 0 ||
            kb_inspect_add(e, "path", json_object_new_string(path)) < 0 ||
            kb_inspect_add(e, "kind", json_object_new_string(kind)) < 0 ||
            (claim && kb_inspect_add(e, "claim", json_object_new_string(claim)) < 0)) {
                json_object_put(e);
                json_object_put(exposed);
                return NULL;
        }
        json_object_object_add(e, "exposed", exposed);
        if (kb_inspect_push(out, e) < 0)
                return NULL;
        *ret_exposed = exposed;
        return e;
}

int kb_inspect_expose(const kb_inspect_target *t, json_object *table, const char *path, const struct stat *host_st,
                      const sandbox_table *tables, size_t n_tables, json_object *e, json_object *exposed) {
        json_object *hm = kb_procfs_mount_of(table, path);
        char rel[PATH_MAX];
        if (!hm || n_tables == 0 || !tables[0].mounts || !kb_procfs_fs_path(hm, path, rel, sizeof rel))
                return kb_inspect_add(e, "error", json_object_new_string("no host mount holds it"));
        const char *dev = kb_json_str(hm, "dev");
        if ((dev && kb_inspect_add(e, "dev", json_object_new_string(dev)) < 0) ||
            (!S_ISDIR(host_st->st_mode) &&
             kb_inspect_add(e, "links", json_object_new_int64((int64_t) host_st->st_nlink)) < 0))
                return -ENOMEM;
        /* A rename through any writable mount of that filesystem moves what every other mount of it
         * shows (dentries are the filesystem's), so an absence is proof only if none is writable. */
        bool fs_writable = false;
        for (size_t k = 0; k < n_tables; k++)
                for (size_t i = 0; tables[k].mounts && i < json_object_array_length(tables[k].mounts); i++) {
                        json_object *m = json_object_array_get_idx(tables[k].mounts, i), *w = NULL;
                        const char *mdev = kb_json_str(m, "dev");
                        if (mdev && dev && strcmp(mdev, dev) == 0 &&
                            (!json_object_object_get_ex(m, "writable", &w) || json_object_get_boolean(w)))
                                fs_writable = true;
                }
        for (size_t k = 0; k < n_tables; k++) {
                json_object *mounts = tables[k].mounts;
                for (size_t i = 0; mounts && i < json_object_array_length(mounts); i++) {
                        json_object *m = json_object_array_get_idx(mounts, i);
                        const char *mdev = kb_json_str(m, "dev");
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
        json_object *host_mounts = NULL;
        json_object_object_get_ex(t->host, "mounts", &host_mounts);
        if (lstat(path, &host_st) < 0)
                return kb_inspect_add(e, "error", json_object_new_string(strerror(errno)));
        return kb_inspect_expose(t, host_mounts, path, &host_st, tables, n_tables, e, exposed);
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
