/* inspect.h: what the host itself sees of a running sandbox. kbound reads /proc of every process
 * in the sandbox (credentials, namespaces, session, descriptors, environment, command line) and
 * the sandbox's mount table; none of it comes from a cell. The facts are JSON so that the judge
 * (judge.h) is a pure function of them and reports can quote them (docs/report-format.md). */
#pragma once

#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>
#include "kbound/common.h"
#include "kbound/probe.h"

/* The namespaces compared between kbound and the sandbox, in report order. */
KB_EXPORT const char *const *kb_inspect_namespaces(void);

typedef struct kb_inspect_target {
        const char *proc_root;   /* "/proc"; tests point it at a fake tree */
        pid_t init_pid;          /* the sandbox's PID 1 (bwrap's init), as kbound sees it */
        pid_t kernel_pid;        /* the pinned PID 2 */
        uint64_t pidns_ino;      /* the sandbox's pid namespace */
        const kb_secrets *const *secrets; /* sets searched in every environ and command line (names
                                           * only are reported); may be NULL */
        size_t n_secrets;
} kb_inspect_target;

/* Facts about kbound itself and the host that every sandbox is compared with: "pid", "session",
 * "uid" (kbound's), "ns" (object: namespace name → inode, kb_inspect_namespaces), "proc_entries"
 * (the kb_sandbox_proc_readonly names that exist in the host's /proc). Returns 0 and a new object,
 * -errno when kbound's own /proc cannot be read (nothing can be compared then). */
KB_EXPORT int kb_inspect_host(const char *proc_root, json_object **ret);

/* One look at the whole sandbox: every process that descends from init_pid or lives in the
 * sandbox's pid namespace (found in one walk of proc_root), each with its status (procfs.h
 * fields), "session", "pgrp", "tty_nr", "ns", "uid_map", "gid_map"; and the kernel's mount table
 * ("mounts", kb_procfs_mountinfo_parse). A process that ends while it is read is left out and
 * counted ("vanished"); anything else that cannot be read is recorded in that process's (or the
 * snapshot's) "errors" array as {"what", "error"}, never skipped silently: the judge fails the
 * checks that needed it. label names the moment ("ready", "child alive").
 * Returns 0 and a new object, -ENOMEM; -ESRCH when the pinned kernel itself is not among the
 * processes found (the snapshot then still comes back, with the error recorded). */
KB_EXPORT int kb_inspect_snapshot(const kb_inspect_target *t, const char *label, json_object **ret);
