/* inspect_host.c: kbound's own facts that every sandbox is compared with (kb_inspect_host). */
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "kbound/sandbox.h"
#include "kbound/seccomp.h"
#include "kbound/sysabi.h"
#include "base/cleanup.h"
#include "evidence/inspect-internal.h"
#include "base/procfs.h"

/* HOST's abis: each system-call ABI kbound's filter has rules for, with getpid's answer through it in
 * a child of kbound's (kb_sysabi_accepted): what a process can call the kernel through here. */
static int abi_facts(json_object *h) {
        json_object *abis = json_object_new_object();
        if (!abis || kb_fact_set_map(h, FACT_HOST_ABIS, abis) < 0)
                return -ENOMEM;
        for (kb_sysabi abi = 0; abi < KB_SYSABI_MAX_; abi++) {
                if (!kb_seccomp_abi_filtered(abi))
                        continue;
                char answer[256];
                int accepted = kb_sysabi_accepted(abi, answer, sizeof answer);
                if (accepted < 0 && accepted != -EOPNOTSUPP)
                        snprintf(answer, sizeof answer, "not known: %s", strerror(-accepted));
                json_object *o = json_object_new_object();
                if (!o || kb_inspect_map_add(abis, kb_sysabi_name(abi), o) < 0 ||
                    (abi == KB_SYSABI_NATIVE && kb_fact_set_bool(o, FACT_HOST_ABI_NATIVE, true) < 0) ||
                    kb_fact_set_str(o, FACT_HOST_ABI_HOW, kb_sysabi_how(abi)) < 0 ||
                    kb_fact_set_str(o, FACT_HOST_ABI_ANSWER, answer) < 0 ||
                    (accepted >= 0 && kb_fact_set_bool(o, FACT_HOST_ABI_ACCEPTED, accepted == 1) < 0))
                        return -ENOMEM;
        }
        return 0;
}

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
        if (kb_fact_set_map(h, FACT_HOST_NS, ns) < 0)
                return -ENOMEM;
        r = kb_inspect_read_proc(proc_root, self, "mountinfo", KB_PROCFS_MOUNTINFO_MAX, &mi, NULL);
        if (r >= 0)
                r = kb_procfs_mountinfo_parse(mi, &mounts);
        if (r < 0)
                return r == -ESRCH ? -ENOENT : r;
        if (kb_fact_set_arr(h, FACT_HOST_MOUNTS, mounts) < 0)
                return -ENOMEM;
        json_object *entries = json_object_new_array();
        for (const char *const *e = kb_sandbox_proc_readonly(); entries && *e; e++) {
                char path[PATH_MAX];
                struct stat sst;
                snprintf(path, sizeof path, "%s/%s", proc_root, *e);
                if (lstat(path, &sst) == 0 && kb_inspect_push(entries, json_object_new_string(*e)) < 0) {
                        json_object_put(entries);
                        entries = NULL;
                }
        }
        /* kbound's own seccomp filters (a container may give it some): every sandbox process has
         * these plus the one kbound hands bwrap. */
        _cleanup_free_ char *status_text = NULL;
        _cleanup_json_ json_object *status = NULL;
        int64_t filters = 0;
        if (kb_inspect_read_proc(proc_root, self, "status", KB_PROCFS_STATUS_MAX, &status_text, NULL) >= 0 &&
            kb_procfs_status_parse(status_text, &status) >= 0 &&
            kb_fact_int_of(status, FACT_PROCESS_SECCOMP_FILTERS, &filters) &&
            kb_fact_set_int(h, FACT_HOST_SECCOMP_FILTERS, filters) < 0) {
                json_object_put(entries);
                return -ENOMEM;
        }
        if (kb_fact_set_int(h, FACT_HOST_PID, self) < 0 || kb_fact_set_int(h, FACT_HOST_SESSION, st.session) < 0 ||
            kb_fact_set_int(h, FACT_HOST_UID, (int64_t) getuid()) < 0) {
                json_object_put(entries);
                return -ENOMEM;
        }
        if (kb_fact_set_arr(h, FACT_HOST_PROC_ENTRIES, entries) < 0)
                return -ENOMEM;
        /* Anonymous memory files live on an internal mount no table lists: learn its device. */
        _cleanup_close_ int memfd = memfd_create("kbound-probe", MFD_CLOEXEC);
        struct stat mst;
        char dev[KB_PROCFS_DEV_MAX];
        if (memfd >= 0 && fstat(memfd, &mst) == 0 &&
            kb_fact_set_str(h, FACT_HOST_MEMFD_DEV, kb_procfs_dev(major(mst.st_dev), minor(mst.st_dev), dev)) < 0)
                return -ENOMEM;
        /* Whether processes' layouts are randomized here at all (0: no, and a new image of the same
         * program lies where the old one did). */
        _cleanup_free_ char *aslr = NULL;
        char *end;
        long v = kb_read_file(AT_FDCWD, "/proc/sys/kernel/randomize_va_space", 0, 64, &aslr, NULL) == 0
                         ? strtol(aslr, &end, 10)
                         : -1;
        if (v >= 0 && end != aslr && kb_fact_set_int(h, FACT_HOST_RANDOMIZE_VA_SPACE, v) < 0)
                return -ENOMEM;
        /* Which system-call ABIs the kernel runs, and whether the host can read a filter in force:
         * the two proofs of sandbox.attack_surface (docs/seccomp.md). */
        if (abi_facts(h) < 0 || kb_inspect_filter_access(h) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(h);
        return 0;
}
