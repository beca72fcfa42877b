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
        const char *const *endpoints; /* sandbox paths of the kernel's shell and control sockets, or
                                       * "tcp://127.0.0.1:P" for a kernel kbound reaches over TCP on
                                       * its own loopback (an audit): kbound's connections to it are
                                       * traced by the TCP table (NULL-terminated; may be NULL) */
        const kb_inspect_canary *canaries;
        size_t n_canaries;
        const char *socket_claim; /* the check a host socket within reach belongs to, named by the caller as each
                                   * canary's claim is (reported; facts.def requires a reach entry's claim) */
        const char *own_runtime;  /* where the host reaches the kernel's socket folder (kb_kernel_socket_dir): listening
                                   * sockets under it are the kernel's own */
        json_object *host;        /* kb_inspect_host facts (kbound's mount table); borrowed */
        /* The seccomp program kbound built for this launch (struct sock_filter[], as bwrap was
         * handed it), borrowed: each process's filters in force are read and held to it where the
         * host can read them (HOST's filter_read). NULL: not read (the look before the filter). */
        const void *seccomp_program;
        size_t seccomp_program_len; /* bytes */
} kb_inspect_target;

/* Facts about kbound itself and the host that every sandbox is compared with (a HOST of
 * src/base/facts.def): kbound's pid, session, uid, namespaces, mount table and seccomp filters, the
 * host-global /proc entries that exist here, and the device of anonymous memory files (learned
 * from one kbound makes).
 * Returns 0 and a new object, -errno when kbound's own /proc cannot be read (nothing can be
 * compared then). */
KB_EXPORT int kb_inspect_host(const char *proc_root, json_object **ret);

/* One look at the whole sandbox, in one walk of proc_root: a LOOK of src/base/facts.def, where each
 * fact, its type and what its absence means are declared (this comment says how they are found,
 * not their keys). Every process that descends from init_pid or lives in the sandbox's pid
 * namespace, with its status, session, namespaces and the user namespaces that own them (read with
 * NS_GET_USERNS and NS_GET_PARENT), descriptors, every other reference it and each of its threads
 * holds, and the names of the secrets in its environment and command line; the processes outside
 * that are in one of its namespaces, and the pipes and sockets of the sandbox they hold; every mount
 * table of the sandbox, each mount point stat'd through that namespace's root with no link followed
 * and proven by statx to be the root of the mount the table names, and which of its filesystems a
 * mount namespace outside holds; every network namespace's tables; the unix sockets of kbound's
 * network namespace from sock_diag (src/base/sockdiag.h), never from a name, and who holds the
 * other end of each of kbound's connections to the kernel; the process that runs bwrap outside;
 * and, for each canary and each bound pathname unix socket of the host (every network namespace,
 * read with sock_diag through a short-lived thread that enters it, or as text where kbound does
 * not enter), where the sandbox's mounts expose it: a confirmation opens the mount's own root and
 * looks beneath it without following a link, and "No such file or directory" disproves an
 * exposure only on a filesystem no mount of the sandbox can write. A process that ends while it is
 * read is left out and counted; anything else that cannot be read is recorded in the look's or the
 * process's errors (by its declared kind, KB_FACT_WHAT), never skipped silently: the judge fails
 * the checks that needed it. label names the moment ("ready", "child alive").
 * Returns 0 and a new object, -ENOMEM; -ESRCH when the pinned kernel itself is not among the
 * processes found (the snapshot then still comes back, with the error recorded). */
KB_EXPORT int kb_inspect_snapshot(const kb_inspect_target *t, const char *label, json_object **ret);

/* The look before the kernel's program runs, while bwrap's init waits on kbound's --block-fd pipe
 * (kb_sandbox_policy.before_exec): t->kernel_pid is 0 (there is none yet). The same walk of /proc
 * as a snapshot, labelled "pre-exec", with the processes, the holders outside, the launcher and
 * init's mount table (each mount point proven through init's root, which is the sandbox's: bwrap
 * has built the tree and pivoted), but no network tables or reach; and what bwrap's init was doing (the call
 * it is in, from /proc/<pid>/syscall, and the descriptor it is blocked reading), read after the
 * processes. A LOOK of facts.def. Returns 0 and a new object, -ENOMEM. */
KB_EXPORT int kb_inspect_pre_exec(const kb_inspect_target *t, json_object **ret);

/* Where the process image of pid lies (an IMAGE of facts.def: its start time and the layout
 * fields of /proc/<pid>/stat an execve lays out afresh, and its personality where the host may read
 * it), so that an exec between two looks shows (kb_rules_image_change). Returns 0 and a new
 * object, -ESRCH when pid is gone, -ENOMEM, or -errno when its stat cannot be read. */
KB_EXPORT int kb_inspect_image(const char *proc_root, pid_t pid, json_object **ret);

/* Closes every namespace descriptor (nsfs: "net:[N]" and the like) numbered 3 or above that this
 * process holds, which it can only have inherited: a look does not count a process running
 * kbound's program as holding a sandbox's namespace (another run's look enters them all), so no
 * kbound process may keep one it did not open itself. For main(), before anything else. Returns
 * how many it closed, or -errno when /proc/self/fd cannot be read. */
KB_EXPORT int kb_inspect_drop_inherited_namespaces(void);

/* Where the image of process pid lies now (an IMAGE of src/base/facts.def: its start time and the
 * bounds of its code, data, heap, stack, arguments and environment from /proc/<pid>/stat, and its
 * personality where the host may read it), for comparing with a look's (kb_judge_image_change): an
 * execve keeps the pid but not the layout. Returns 0 and a new object, -ESRCH (gone), -errno,
 * -ENOMEM. */
KB_EXPORT int kb_inspect_image(const char *proc_root, pid_t pid, json_object **ret);

/* An environment (NULL-terminated "NAME=value" strings) as facts: one "NAME=sha256:<hex>" string
 * per entry, in order; the name in clear, the value only inside the digest of the whole entry, so
 * two environments can be compared and a difference named without a value in any fact. The
 * launcher's "environ" is in this form. Returns a new array, NULL if out of memory. */
KB_EXPORT json_object *kb_inspect_env_digests(char *const *env);

/* The kernel of a sandbox kbound did not build (`kbound audit`): the one process that holds the
 * other end of every one of kbound's connections to a socket file of socket_dir (the folder of the
 * kernel's ipc sockets, as the host reaches it), found as identity.pid2 finds it: each other end by
 * sock_diag, its holder in every descriptor table of proc_root that kbound may read; and that
 * process launcher or a descendant of it (launcher: the wrapper kbound started; 0: not asked).
 * That process must not pass the connections on: one holding a TUN/TAP device or in another network
 * namespace than kbound's TCP connections (-EPERM), or a connection of its own to another process,
 * or a socket neither of kbound's network's TCP and unix tables lists (-ESRCH: a socket made or
 * closed meanwhile looks alike for a moment; ask again until a deadline), is a forwarder, named.
 * Returns 0 with *ret_pid, -ENOENT (no such connection), -ESRCH (an end held by no readable
 * process, or by two; a forwarder's sockets), -EPERM (ends held by different processes, or by a
 * process outside the launcher's tree; a port forward), -ENOMEM, -errno; why (why_size bytes)
 * says which, naming the holder found.
 * *ret_connections gets how many connections were traced (on -ENOENT too). */
KB_EXPORT int kb_inspect_kernel_holder(const char *proc_root, const char *socket_dir, pid_t launcher, pid_t *ret_pid,
                                       size_t *ret_connections, char *why, size_t why_size);

/* The same for a kernel kbound reaches over TCP on the loopback of its own network namespace (the
 * wrapper shares it): each of kbound's established connections to one of ports (n_ports of them;
 * 0 is skipped) on 127.0.0.0/8 or ::1, its other end found in the namespace's TCP table by the
 * addresses and ports crossed (sock_diag inet, both families), and the holder of that socket's
 * inode as above. A far end held by a proxy (slirp4netns, pasta, rootlessport forwarding the port
 * into another namespace) is outside the launcher's tree or not the holder of every end: refused,
 * named. Returns as kb_inspect_kernel_holder; -ESRCH too for an end no process has accepted yet. */
KB_EXPORT int kb_inspect_kernel_holder_tcp(const char *proc_root, const int *ports, size_t n_ports, pid_t launcher,
                                           pid_t *ret_pid, size_t *ret_connections, char *why, size_t why_size);

/* Whether pid is ancestor or descends from it, by the parents /proc says (a process whose
 * parent cannot be read ends the walk: false). */
KB_EXPORT bool kb_inspect_descends_from(const char *proc_root, pid_t pid, pid_t ancestor);
