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
 * init's mount table (each mount point proven its mount's root through init's root, which is the
 * sandbox's by then, as a snapshot's), but no network tables, reach or mounts outside; and what
 * bwrap's init was doing (the call it is in, from /proc/<pid>/syscall, and the descriptor it is
 * blocked reading), read after the processes. A LOOK of facts.def. Returns 0 and a new object,
 * -ENOMEM. */
KB_EXPORT int kb_inspect_pre_exec(const kb_inspect_target *t, json_object **ret);

/* Where pid's process image lies now (an IMAGE of facts.def: the start time, /proc/<pid>/stat's
 * layout fields, the personality when readable), to compare with a look's (an execve lays the new
 * image out afresh). Returns 0 and a new object, -ENOMEM, or -errno when stat cannot be read. */
KB_EXPORT int kb_inspect_image(const char *proc_root, pid_t pid, json_object **ret);

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
