/* inspect_host.c: kbound's own facts that every sandbox is compared with (kb_inspect_host). */
#include <limits.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "kbound/sandbox.h"
#include "base/cleanup.h"
#include "evidence/inspect-internal.h"
#include "base/procfs.h"

int kb_inspect_host(const char *proc_root, json_object **ret) {
        if (!proc_root || !ret)
                return -EINVAL;
        _cleanup_json_ json_object *h = json_object_new_object(), *errors = json_object_new_array();
        if (!h || !errors)
                return -ENOMEM;
        pid_t self = getpid();
        _cleanup_free_ char *stat_text = NULL, *mi = NULL;
        kb_procfs_stat st;
        int r = kb_inspect_read_proc(proc_root, self, "stat", KB_PROCFS_STAT_MAX, &stat_text, NULL);
        if (r < 0)
                return r == -ESRCH ? -ENOENT : r;
        if (kb_procfs_stat_parse(stat_text, &st) < 0)
                return -EPROTO;
        json_object *ns = NULL, *mounts = NULL;
        r = kb_inspect_ns_object(proc_root, self, errors, &ns);
        if (r < 0)
                return r == -ESRCH ? -ENOENT : r;
        if (json_object_array_length(errors) > 0) {
                json_object_put(ns);
                return -EACCES; /* kbound's own namespaces unreadable: nothing can be compared */
        }
        if (kb_inspect_add(h, "ns", ns) < 0)
                return -ENOMEM;
        r = kb_inspect_read_proc(proc_root, self, "mountinfo", KB_PROCFS_MOUNTINFO_MAX, &mi, NULL);
        if (r >= 0)
                r = kb_procfs_mountinfo_parse(mi, &mounts);
        if (r < 0)
                return r == -ESRCH ? -ENOENT : r;
        if (kb_inspect_add(h, "mounts", mounts) < 0)
                return -ENOMEM;
        json_object *entries = json_object_new_array();
        for (const char *const *e = kb_sandbox_proc_readonly(); entries && *e; e++) {
                char path[PATH_MAX];
                struct stat sst;
                snprintf(path, sizeof path, "%s/%s", proc_root, *e);
                if (lstat(path, &sst) == 0 && kb_inspect_push(entries, json_object_new_string(*e)) < 0)
                        entries = NULL;
        }
        /* kbound's own seccomp filters (a container may give it some): every sandbox process has
         * these plus the one kbound hands bwrap. */
        _cleanup_free_ char *status_text = NULL;
        json_object *status = NULL, *filters = NULL;
        if (kb_inspect_read_proc(proc_root, self, "status", KB_PROCFS_STATUS_MAX, &status_text, NULL) >= 0 &&
            kb_procfs_status_parse(status_text, &status) >= 0 &&
            json_object_object_get_ex(status, "seccomp_filters", &filters) &&
            kb_inspect_add(h, "seccomp_filters", json_object_get(filters)) < 0) {
                json_object_put(status);
                return -ENOMEM;
        }
        json_object_put(status);
        if (kb_inspect_add(h, "pid", json_object_new_int(self)) < 0 ||
            kb_inspect_add(h, "session", json_object_new_int(st.session)) < 0 ||
            kb_inspect_add(h, "uid", json_object_new_int64((int64_t) getuid())) < 0 ||
            kb_inspect_add(h, "proc_entries", entries) < 0)
                return -ENOMEM;
        /* Anonymous memory files live on an internal mount no table lists: learn its device. */
        _cleanup_close_ int memfd = memfd_create("kbound-probe", MFD_CLOEXEC);
        struct stat mst;
        if (memfd >= 0 && fstat(memfd, &mst) == 0 &&
            kb_inspect_add(h, "memfd_dev", kb_inspect_dev_string(mst.st_dev)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(h);
        return 0;
}
