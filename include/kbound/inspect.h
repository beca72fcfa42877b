/* inspect.h: what the host itself sees of a running sandbox. kbound reads /proc of every process
 * in the sandbox (credentials, namespaces, session, descriptors, environment, command line), the
 * sandbox's mount tables and network tables, and decides from the mount table which host objects
 * (canaries, listening sockets) the sandbox can reach; none of it comes from a cell. The facts are
 * JSON so that the judge (judge.h) is a pure function of them and reports can quote them
 * (docs/report-format.md, docs/probes.md). */
#pragma once

#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>
#include "kbound/common.h"
#include "kbound/secrets.h"

/* Mount tables (the kernel's and other mount namespaces among the sandbox's processes) one look
 * reads; a sandbox with more is recorded as not inspected ("more mount namespaces than kbound
 * inspects"), and every host-judged check fails. */
#define KB_INSPECT_MOUNT_TABLES_MAX 64

/* The namespaces compared between kbound and the sandbox, in report order. */
KB_EXPORT const char *const *kb_inspect_namespaces(void);

/* A host object whose reachability from the sandbox is decided from the mount table. */
typedef struct kb_inspect_canary {
        const char *name;  /* e.g. "credential file"; reported */
        const char *path;  /* host path */
        const char *claim; /* the check it belongs to ("boundary.credentials"); reported */
} kb_inspect_canary;

typedef struct kb_inspect_target {
        const char *proc_root;            /* "/proc"; tests point it at a fake tree */
        pid_t init_pid;                   /* the sandbox's PID 1 (bwrap's init), as kbound sees it */
        pid_t kernel_pid;                 /* the pinned PID 2 */
        pid_t launcher_pid;               /* the process kbound spawned to run bwrap */
        uint64_t pidns_ino;               /* the sandbox's pid namespace */
        const kb_secrets *const *secrets; /* sets searched in every environ and command line (names
                                           * only are reported); may be NULL */
        size_t n_secrets;
        const char *const *endpoints; /* sandbox paths of the kernel's shell and control sockets
                                       * (NULL-terminated; may be NULL) */
        const kb_inspect_canary *canaries;
        size_t n_canaries;
        const char *socket_claim; /* the check a host socket within reach belongs to, named by the caller as each
                                   * canary's claim is (reported; facts.def requires a reach entry's claim) */
        const char *own_runtime;  /* where the host reaches the kernel's socket folder (kb_kernel_socket_dir): listening
                                   * sockets under it are the kernel's own */
        json_object *host;        /* kb_inspect_host facts (kbound's mount table); borrowed */
} kb_inspect_target;

/* Facts about kbound itself and the host that every sandbox is compared with: "pid", "session",
 * "uid" (kbound's), "ns" (namespace name → inode, kb_inspect_namespaces), "proc_entries" (the
 * kb_sandbox_proc_readonly names that exist in the host's /proc), "memfd_dev" (the device of
 * anonymous memory files, learned from one kbound makes), "mounts" (kbound's own mount table),
 * "seccomp_filters" (how many seccomp filters kbound itself runs under; absent if the kernel does
 * not say).
 * Returns 0 and a new object, -errno when kbound's own /proc cannot be read (nothing can be
 * compared then). */
KB_EXPORT int kb_inspect_host(const char *proc_root, json_object **ret);

/* One look at the whole sandbox, in one walk of proc_root:
 * - "processes": every process that descends from init_pid or lives in the sandbox's pid
 *   namespace, each with its status (procfs.h fields), "session", "pgrp", "tty_nr", "ns",
 *   "uid_map", "gid_map", "cmdline" (start of it), "environ_secrets"/"cmdline_secrets" (names of
 *   secrets found), "fds" ([{fd, target, type, dev, ino, rdev, flags, mnt_id, pid}]), "ns_owners"
 *   ({name: [owner, owner's parent, ...]}: the user namespaces above each namespace, nearest first,
 *   read with NS_GET_USERNS and NS_GET_PARENT; for "user" the chain starts at its parent), "exe"
 *   ({path, dev, ino} of the program it runs) or "exe_error";
 * - "ns_holders": [{pid, name, ns, inode}] the processes outside the sandbox that are in one of its
 *   namespaces (those of its processes and the user namespaces above them, less kbound's own and
 *   those above kbound's user namespace); "ns_outside": {"read", "unreadable", "holders"}, how many
 *   processes outside were read and how many could not be (another user's, as an unprivileged
 *   kbound);
 * - "mounts": the kernel's mount table, each mount with "target" (what its mount point is, stat'd
 *   through the kernel's root, with no symbolic link followed and statx proving it is that mount's
 *   root: {type, dev, ino, rdev}) or "target_error"; "mount_tables": the tables of other mount
 *   namespaces among the processes, by namespace inode, each looked at through the root of a
 *   process of that namespace; "outside_mounts": {"devices": {dev: pid}, "namespaces", "unreadable"},
 *   which devices of those tables a mount namespace of a process outside the sandbox also holds
 *   (kbound's and the launcher's included), how many outside namespaces were read and how many
 *   outside processes could not be;
 * - "net": per network namespace among the processes (by inode): "unix", "socket_inodes",
 *   "interfaces", "routes"; "kernel_net": the kernel's namespace inode (a namespace that is
 *   kbound's own has its "unix" from sock_diag);
 * - unix sockets of kbound's network namespace, from sock_diag (src/base/sockdiag.h), never from a name:
 *   "kbound_sockets" (inodes of kbound's own), "kbound_net_sockets" (those a sandbox process holds:
 *   {"inode", "type", "state", "path", "peer", "peer_held_by": [{"pid", "name", "side"}]}, side
 *   "kbound", "sandbox", "launch" or "host"); "endpoints" ({"path", "file" or "error"}: the socket
 *   files of the kernel's endpoints in the team's runtime folder) and "connections" (each of
 *   kbound's own sockets connected to a socket file there: {"endpoint", "kbound_socket", "peer",
 *   "holders"}: who holds the other end, found by its inode);
 * - "launcher": the process that runs bwrap outside the sandbox (init's parent): "pid", "ppid",
 *   "argv", "environ" (kb_inspect_env_digests form), "exe" (as for processes), "spawned" (what
 *   kbound spawned), "kbound"; "outside_inodes": pipe and socket inodes held by kbound and its
 *   other descendants outside the sandbox;
 * - "reach": for each canary and each bound pathname unix socket of the host, any type and state
 *   (kbound's network namespace and every other one the walk finds, read with sock_diag through a
 *   short-lived thread or child that enters it), where the mounts of every mount table of the
 *   sandbox expose it: {"name", "path", "kind" ("canary" or "socket"), "claim", "dev" (its host
 *   filesystem), "links" (its link count; not for a directory), "exposed": [{"at", "confirmed",
 *   "error", "pid" (a process of the namespace, for a table not the kernel's)}], "error", "socket"}.
 *   A confirmation opens the mount's own root (statx-proven) and looks beneath it without following
 *   a link; "No such file or directory" disproves an exposure only on a filesystem no mount of the
 *   sandbox can write. A socket's file is found by its name and confirmed by its device and inode;
 *   one on a filesystem the sandbox mounts that cannot be found is listed in
 *   "host_sockets"/"not_claimed" ({"inode", "type", "state", "path", "peer", "why", "uid",
 *   "held_by"}). "socket_namespaces" (listed), "socket_namespaces_not_entered" ([{"pid", "error",
 *   "table_error", "placed_by_path", "unplaced"}]: read from /proc/<pid>/net/unix instead),
 *   "socket_namespaces_skipped" (past the ceiling), "host_sockets" {"checked", "elsewhere",
 *   "vanished", "not_claimed"} and "abstract_sockets" (abstract names in kbound's namespace) say how
 *   far that went.
 * A process that ends while it is read is left out and counted ("vanished"); anything else that
 * cannot be read is recorded in that process's (or the snapshot's) "errors" array as {"what",
 * "error"}, never skipped silently: the judge fails the checks that needed it. label names the
 * moment ("ready", "child alive").
 * Returns 0 and a new object, -ENOMEM; -ESRCH when the pinned kernel itself is not among the
 * processes found (the snapshot then still comes back, with the error recorded). */
KB_EXPORT int kb_inspect_snapshot(const kb_inspect_target *t, const char *label, json_object **ret);

/* The look before the kernel's program runs, while bwrap's init waits on kbound's --block-fd pipe
 * (kb_sandbox_policy.before_exec): t->kernel_pid is 0 (there is none yet). The same walk of /proc
 * as a snapshot, with "label" "pre-exec", "processes", "errors", "vanished", "ns_holders",
 * "ns_outside" and "launcher" as kb_inspect_snapshot has them (no mounts, network tables or
 * reach), and "init": {"pid", "syscall" (the call bwrap's init is in and its first argument, from
 * /proc/<pid>/syscall), "reads_fd" (the descriptor it is blocked reading, or -1)}, read after the
 * processes. Returns 0 and a new object, -ENOMEM. */
KB_EXPORT int kb_inspect_pre_exec(const kb_inspect_target *t, json_object **ret);

/* Closes every namespace descriptor (nsfs: "net:[N]" and the like) numbered 3 or above that this
 * process holds, which it can only have inherited: a look does not count a process running
 * kbound's program as holding a sandbox's namespace (another run's look enters them all), so no
 * kbound process may keep one it did not open itself. For main(), before anything else. Returns
 * how many it closed, or -errno when /proc/self/fd cannot be read. */
KB_EXPORT int kb_inspect_drop_inherited_namespaces(void);

/* An environment (NULL-terminated "NAME=value" strings) as facts: one "NAME=sha256:<hex>" string
 * per entry, in order; the name in clear, the value only inside the digest of the whole entry, so
 * two environments can be compared and a difference named without a value in any fact. The
 * launcher's "environ" is in this form. Returns a new array, NULL if out of memory. */
KB_EXPORT json_object *kb_inspect_env_digests(char *const *env);
