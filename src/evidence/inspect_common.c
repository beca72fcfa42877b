/* inspect_common.c: what every inspect file builds facts with: JSON members, errors, /proc reads. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "base/cleanup.h"
#include "evidence/inspect-internal.h"
#include "base/procfs.h"

int kb_inspect_map_add(json_object *map, const char *key, json_object *v) {
        if (!v || json_object_object_add(map, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int kb_inspect_push(json_object *a, json_object *v) {
        if (!v || json_object_array_add(a, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int kb_inspect_note(json_object *errors, kb_fact_what what, const char *suffix, int err) {
        char words[256];
        json_object *e = json_object_new_object();
        if (!e || kb_fact_set_str(e, FACT_ERROR_WHAT, kb_fact_what_words(what, suffix, words, sizeof words)) < 0 ||
            kb_fact_set_str(e, FACT_ERROR_ERROR, strerror(err > 0 ? err : -err)) < 0) {
                json_object_put(e);
                return -ENOMEM;
        }
        return kb_inspect_push(errors, e);
}

const char *kb_inspect_file_type(mode_t mode) {
        return S_ISREG(mode)    ? "reg"
               : S_ISDIR(mode)  ? "dir"
               : S_ISCHR(mode)  ? "chr"
               : S_ISBLK(mode)  ? "blk"
               : S_ISFIFO(mode) ? "fifo"
               : S_ISSOCK(mode) ? "sock"
               : S_ISLNK(mode)  ? "lnk"
                                : "unknown";
}

json_object *kb_inspect_stat_facts(const struct stat *st) {
        char dev[KB_PROCFS_DEV_MAX], rdev[KB_PROCFS_DEV_MAX];
        json_object *o = json_object_new_object();
        if (!o || kb_fact_set_str(o, FACT_STAT_TYPE, kb_inspect_file_type(st->st_mode)) < 0 ||
            kb_fact_set_str(o, FACT_STAT_DEV, kb_procfs_dev(major(st->st_dev), minor(st->st_dev), dev)) < 0 ||
            kb_fact_set_int(o, FACT_STAT_INO, (int64_t) st->st_ino) < 0 ||
            ((S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) &&
             kb_fact_set_str(o, FACT_STAT_RDEV, kb_procfs_dev(major(st->st_rdev), minor(st->st_rdev), rdev)) < 0)) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

int kb_inspect_read_proc(const char *proc_root, pid_t pid, const char *name, size_t max, char **ret, size_t *ret_len) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%d/%s", proc_root, (int) pid, name) >= (int) sizeof path)
                return -ENAMETOOLONG;
        int r = kb_read_file(AT_FDCWD, path, 0, max, ret, ret_len);
        return r == -ENOENT ? -ESRCH : r;
}

bool kb_inspect_process_exists(const char *proc_root, pid_t pid) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%d", proc_root, (int) pid);
        return access(path, F_OK) == 0;
}

bool kb_inspect_process_has_root(const char *proc_root, pid_t pid) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%d/root", proc_root, (int) pid);
        _cleanup_close_ int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return fd >= 0 || errno != ENOENT;
}
