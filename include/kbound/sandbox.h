/* sandbox.h: sandbox policy → bwrap argv → launch → the kernel pinned as PID 2 by a pidfd. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>
#include "kbound/common.h"
#include "kbound/error.h"
#include "kbound/limits.h"
#include "kbound/seccomp.h"

/* The descriptor number of the seccomp program in bwrap's argv (kb_sandbox_plan, kb_sandbox_launch). */
#define KB_SANDBOX_SECCOMP_FD 4
/* bwrap's --block-fd: its init waits on this pipe (kbound holds the write end) before it starts the
 * kernel's program, so the host can look at the sandbox before anything of the kernel runs. */
#define KB_SANDBOX_BLOCK_FD 6
/* bwrap's --file: the connection file's content, which bwrap copies into the sandbox's socket
 * tmpfs (kb_sandbox_runtime_in_memory), kbound holding the only other copy. */
#define KB_SANDBOX_CONNECTION_FD 5
/* Where the syscall probe program (kbound-syscall-probe) appears inside the sandbox, read-only. */
#define KB_SANDBOX_PROBE_PROGRAM "/run/kbound-tools/syscall-probe"
/* Where the boundary probe program (kbound-probe, docs/probes-cells.md) appears, read-only, beside it. */
#define KB_SANDBOX_BOUNDARY_PROGRAM "/run/kbound-tools/probe"
/* KB_SANDBOX_PROBE_PROGRAM --exec-limited NPROC AS -- ARGV...: sets RLIMIT_NPROC and RLIMIT_AS
 * (0: left as they are) and execs ARGV (kb_sandbox_plan puts it before the kernel's argv). */
#define KB_SANDBOX_LIMITS_ARG "--exec-limited"

/* Where the team's directories appear inside the sandbox. Host paths never reach the kernel. */
#define KB_SANDBOX_WORKSPACE "/workspace"
#define KB_SANDBOX_RUNTIME "/run/kbound"
/* Where the team's runtime folder on the host (what the host hands the kernel while it runs: the
 * probe's go files) is bound read-only when the kernel's sockets and connection file are in a tmpfs
 * of their own at KB_SANDBOX_RUNTIME (kb_sandbox_runtime_in_memory); else that folder is bound
 * read-write at KB_SANDBOX_RUNTIME and holds everything. */
#define KB_SANDBOX_HANDOFF "/run/kbound-host"
/* The size of that tmpfs: the kernel's ipc sockets take no space. */
#define KB_SANDBOX_RUNTIME_SIZE (UINT64_C(1) << 20)

/* Who the sandbox runs as on the host. The kernel never runs as the host's root: a kernel whose host
 * uid is 0 could rewrite host sysctls (core_pattern: code run as root on the next crash) and reach
 * root's keys. So when kbound itself is root, bwrap is started as an unprivileged user (its uid and
 * gid, no supplementary groups); bwrap then makes the user namespace as in any unprivileged run,
 * mapping that uid only. When kbound is not root, the sandbox runs as kbound's own user. */
#define KB_SANDBOX_USER_DEFAULT "kbound-sandbox"
typedef struct kb_sandbox_user {
        bool switch_user; /* true: bwrap (and an unsandboxed kernel) start as uid/gid, not as kbound */
        uid_t uid;
        gid_t gid;
        char name[64]; /* user name (or "uid N"), for reports */
} kb_sandbox_user;

/* Resolves the sandbox user. name NULL (or ""): when kbound's effective uid is 0, the dedicated
 * KB_SANDBOX_USER_DEFAULT (scripts/setup and the package create it; never a shared account such as
 * nobody in its place); otherwise kbound's own user. A name given when kbound is not root must be kbound's own user
 * (an ordinary user cannot switch). Returns 0, -ENOENT (no such user; for the default: it does
 * not exist), -EPERM (the user is uid 0 or its group gid 0, or an ordinary user asked for another
 * user), -errno from the user database. */
KB_EXPORT int kb_sandbox_user_resolve(const char *name, kb_sandbox_user *ret);

/* Whether user can reach (search every directory of) path, judged from the owner, group and mode
 * of each ancestor (ACLs are not read). bwrap runs as that user and must resolve every bind
 * source. Returns 1, 0 (and *ret_blocker, if not NULL, gets a malloc'd copy of the first folder
 * that stops it), -errno (path missing, unreadable). */
KB_EXPORT int kb_sandbox_user_can_reach(const kb_sandbox_user *user, const char *path, char **ret_blocker);

/* Folder ownership for a switching user (both do nothing otherwise; call them on paths just made,
 * before anyone else can reach them, since they follow no symlink but do not re-check the object):
 * kb_sandbox_user_give hands path to the user (a team's workspace, runtime folder, connection file);
 * kb_sandbox_user_pass_through keeps a folder root's but lets the user's group search it, not list
 * it (0710), so bwrap, running as the user, can reach the binds below and nothing else.
 * Return 0 or -errno. */
KB_EXPORT int kb_sandbox_user_give(const kb_sandbox_user *user, const char *path);
KB_EXPORT int kb_sandbox_user_pass_through(const kb_sandbox_user *user, const char *path);
/* Team names become host folder names (teams/<team>) and the sandbox's hostname: 1 to
 * KB_TEAM_NAME_MAX characters of [A-Za-z0-9_.-], not starting with '.' (so never ".", ".." or a
 * hidden folder). The one rule every team name is checked against. */
#define KB_TEAM_NAME_MAX 64
KB_EXPORT bool kb_team_name_valid(const char *team);

/* What narrows the kernel's reach into the Linux kernel itself, beyond namespaces (docs/seccomp.md).
 * A zero-initialised value is the strictest filter and no limit; kb_bwrap_hardening (bwrap.h) says
 * how the bwrap at hand refuses nested user namespaces and sizes the in-memory folders. */
typedef struct kb_sandbox_hardening {
        kb_seccomp_policy seccomp; /* the filter every sandbox process runs under */
        /* Nested user namespaces refused (the filter refuses them anyway): by bwrap's --disable-userns,
         * or, with host_userns, by kbound the same way (kb_sandbox_launch). */
        bool disable_userns;
        /* What the sandbox may consume (limits.h; zero: nothing asked, as in a zero-initialised
         * value, which callers fill with kb_limits_default). */
        kb_limits limits;
        /* The in-memory folders get their sizes (kb_sandbox_sized_size): by bwrap's --size, or, with
         * host_sizes, by kbound (kb_sandbox_launch). */
        bool tmpfs_size;
        /* For a bwrap that lacks the option, kbound does what it would have done itself, from the host,
         * while bwrap's init waits on the block channel and nothing of the kernel exists yet
         * (sandbox_stand_in.c): host_sizes remounts each of bwrap's in-memory folders with its size
         * (no --size); host_userns sets the sandbox's first user namespace's max_user_namespaces to
         * 1, as --disable-userns does, and proves a nested one refused (no --disable-userns). A
         * stand-in that cannot be made fails the launch, as the bwrap option would. */
        bool host_sizes;
        bool host_userns;
} kb_sandbox_hardening;

/* The size kb_sandbox_plan gives the in-memory folder at path (KB_SANDBOX_WORKSPACE,
 * KB_SANDBOX_RUNTIME, /tmp or /dev/shm) under h, in bytes; 0: none (not asked, or not such a
 * folder). The one table of the sizes, which bwrap's --size and kbound's stand-in both apply. */
KB_EXPORT uint64_t kb_sandbox_sized_size(const kb_sandbox_hardening *h, const char *path);

/* Whether /workspace is a tmpfs of limits.max[KB_LIMIT_WORKSPACE] (a size asked, and the folders
 * sized: tmpfs_size) rather than the team's host folder bound read-write. */
KB_EXPORT bool kb_sandbox_workspace_sized(const kb_sandbox_hardening *h);
/* Whether the kernel's sockets are in a tmpfs of KB_SANDBOX_RUNTIME_SIZE at KB_SANDBOX_RUNTIME (the
 * folders sized: tmpfs_size), the team's runtime folder on the host then bound read-only at
 * KB_SANDBOX_HANDOFF: nothing of the host's disk is writable by the sandbox. */
KB_EXPORT bool kb_sandbox_runtime_in_memory(const kb_sandbox_hardening *h);
/* Where the kernel finds what the host hands it while it runs: KB_SANDBOX_HANDOFF or
 * KB_SANDBOX_RUNTIME. */
KB_EXPORT const char *kb_sandbox_handoff_inside(const kb_sandbox_hardening *h);

typedef struct kb_sandbox kb_sandbox;

typedef struct kb_sandbox_policy {
        const char *team;                      /* names the team (kb_team_name_valid); the hostname and reports */
        const char *workspace;                 /* host directory, bound read-write at KB_SANDBOX_WORKSPACE
                                                * unless that is a tmpfs (kb_sandbox_workspace_sized) */
        const char *runtime_dir;               /* host directory (connection file, and the ipc sockets unless
                                                * kb_sandbox_runtime_in_memory: then read-only at
                                                * KB_SANDBOX_HANDOFF), read-write at KB_SANDBOX_RUNTIME */
        const char *connection_file;           /* host path of the connection file, copied by bwrap (--file)
                                                * to KB_SANDBOX_RUNTIME under its own name when that is a
                                                * tmpfs; NULL: none (it is in runtime_dir) */
        const char *rootfs;                    /* NULL: the host's system paths read-only; else an image's root */
        bool allow_network;                    /* raw-network override: share the host's network namespace */
        char *const *ro_paths;                 /* extra host paths bound read-only at the same place (NULL-term.) */
        char *const *env;                      /* the kernel's complete environment, "NAME=value", NULL-terminated;
                                                * build it with kb_sandbox_env() */
        const char *bwrap;                     /* bubblewrap executable */
        const kb_sandbox_user *user;           /* NULL or !switch_user: bwrap runs as kbound's user */
        const kb_sandbox_hardening *hardening; /* NULL: the strictest defaults */
        const char *syscall_probe;             /* host path of kbound-syscall-probe, shown read-only at
                                                * KB_SANDBOX_PROBE_PROGRAM, bound by path (--ro-bind: every
                                                * bwrap has it), so the sandbox user must reach it: the
                                                * team's copy (kb_kernel_start); NULL: none */
        const char *boundary_probe;            /* host path of kbound-probe, shown read-only at
                                                * KB_SANDBOX_BOUNDARY_PROGRAM the same way; NULL: none */
        /* A kernel that speaks only TCP (docs/transports.md): kbound's relay (syscall_probe's --relay,
         * so syscall_probe is required) listens at "<relay_prefix>-<port>" inside, where kbound
         * connects as to an ipc kernel, for each of relay_ports ("P1,P2,..."), and carries each
         * connection to 127.0.0.1:<port> on the sandbox's own loopback; it runs as PID 2's child and
         * dies with it. NULL: none. */
        const char *relay_prefix;
        const char *relay_ports;
        /* Called once bwrap has built the sandbox and its init (pinned) waits on kbound's
         * --block-fd pipe, before anything of the kernel runs: the host's look before exec
         * (kb_inspect_pre_exec). The sandbox goes on when it returns. NULL: at once. */
        void (*before_exec)(void *userdata, const kb_sandbox *sb);
        void *before_exec_userdata;
} kb_sandbox_policy;

/* True if a variable of kbound's own environment may pass into the sandbox (locale and time zone
 * only: LANG, LANGUAGE, LC_*, TZ). Everything else in kbound's environment is treated as a
 * daemon secret and never reaches bwrap or the kernel. */
KB_EXPORT bool kb_sandbox_env_allowed(const char *name);

/* Builds the kernel's environment: a fixed base (PATH, HOME=/workspace, TMPDIR=/tmp, LANG=C.UTF-8
 * unless allowed host vars say otherwise), then allowed variables of host_env, then spec_env
 * (kernelspec "env", which wins). JPY_PARENT_PID is never passed. Returns 0 and a NULL-terminated
 * vector, or -ENOMEM. */
KB_EXPORT int kb_sandbox_env(char *const *host_env, char *const *spec_env, char ***ret_env);

/* The /proc entries (NULL-terminated names under /proc) that reach host-global state (sysctls, the
 * SysRq trigger, IRQ affinity, PCI, filesystem tunables): read-only in every sandbox, as Docker, runc and
 * systemd-nspawn make them, whatever bwrap's own writability test decides (it skips the cover when access(W_OK) fails,
 * which it does for a uid-0 mapping; the sysctls stay writable for host root). */
KB_EXPORT const char *const *kb_sandbox_proc_readonly(void);
/* The /proc entries that are hidden (a read-only empty mount over them), as Docker's defaults do:
 * kernel memory, timers and scheduler internals, hardware tables. */
KB_EXPORT const char *const *kb_sandbox_proc_masked(void);

/* The bwrap argv for policy running kernel_argv, with --info-fd info_fd. Pure: no I/O except
 * checking which system paths and /proc entries exist (so it works for a rootfs too). Always:
 * --unshare-all (--share-net only if allow_network), --unshare-pid, --die-with-parent,
 * --new-session, --cap-drop ALL, --unshare-user (and --disable-userns when hardening says so),
 * --seccomp KB_SANDBOX_SECCOMP_FD (the launcher puts the filter there), --block-fd
 * KB_SANDBOX_BLOCK_FD (and the launcher's pipe there), read-only system paths,
 * --proc /proc with kb_sandbox_proc_readonly bound read-only and kb_sandbox_proc_masked covered,
 * --dev /dev, --tmpfs /tmp, the two team directories, the syscall probe (--ro-bind
 * syscall_probe KB_SANDBOX_PROBE_PROGRAM) and the boundary probe (--ro-bind boundary_probe
 * KB_SANDBOX_BOUNDARY_PROGRAM) when the policy has them, --chdir KB_SANDBOX_WORKSPACE. Never --as-pid-1
 * (the kernel must be PID 2).
 * Returns 0 and a NULL-terminated vector, -EINVAL for a policy missing a directory or a relative
 * path, -ENOMEM. */
KB_EXPORT int kb_sandbox_plan(const kb_sandbox_policy *policy, char *const *kernel_argv, int info_fd, char ***ret_argv);

/* True if path (inside an image) lies under what kb_sandbox_plan mounts from a rootfs: /usr, /etc,
 * /opt and the top-level /bin, /sbin, /lib* entries. A kernel's program or kernelspec elsewhere in
 * the image (/home, /srv, /var...) would not exist inside the sandbox. */
KB_EXPORT bool kb_sandbox_rootfs_visible(const char *path);

/* Launches the kernel in bwrap: bwrap is exec'd directly (no shell) with policy->env as its whole
 * environment, stdin from /dev/null, stdout and stderr appended to log_path. Reads the --info-fd
 * JSON, finds the kernel's host pid (the child of "child-pid" whose NSpid ends in 2; it may appear
 * late), opens a pidfd to it and then confirms identity: its pid namespace inode equals the JSON's
 * "pid-namespace", NSpid ends in 2, its parent is child-pid, and the pidfd is still alive after
 * those reads (so a recycled pid cannot pass). All before deadline_ms. Between the two, while bwrap's
 * init waits on the --block-fd pipe, policy->before_exec runs.
 * A set-uid bwrap is refused (-ENOTSUP): it builds the sandbox as root, so its user namespace
 * belongs to root and its processes are closed to an unprivileged kbound's look
 * (docs/ci.md).
 * bwrap starts as policy->user (switched from root when it says so), with a fresh empty session
 * keyring, and dies with the calling thread.
 * Errors: -ENOENT bwrap missing, -EACCES not executable, -ENOTSUP set-uid, -ECHILD bwrap exited before reporting
 * (its log says why: e.g. user namespaces refused) or the user switch or keyring set-up was
 * refused before it could start (the error says which), -ETIMEDOUT, -ESRCH the kernel was gone or
 * never appeared, -EPERM identity did not match, -EXDEV the sandbox's /workspace is not what was
 * asked (kb_sandbox_workspace_sized). On failure everything started is killed and reaped, and *ret_error (if
 * ret_error) gets the error, its message one line (the line of bwrap's log that says why, when there is one);
 * a few failures have no words but their errno (out of memory, a descriptor that could not be made). Call from the
 * thread that will own the sandbox: --die-with-parent ties it to that thread. */
KB_EXPORT int kb_sandbox_launch(const kb_sandbox_policy *policy, char *const *kernel_argv, const char *log_path,
                                int64_t deadline_ms, kb_sandbox **ret, kb_error **ret_error);

/* The pinned pidfd of the kernel (PID 2 in the sandbox). Readable (POLLIN) once it has exited. */
KB_EXPORT int kb_sandbox_pidfd(const kb_sandbox *sb);
/* A directory descriptor (borrowed, O_RDONLY) of the sandbox's /workspace, opened by the host
 * through bwrap's init before the kernel started: the tmpfs bwrap made there, or the team's host
 * folder bound there. It stays usable after the sandbox is gone (the tmpfs lives while it is open).
 * -1 if it could not be opened (kb_sandbox_launch then failed). */
KB_EXPORT int kb_sandbox_workspace_fd(const kb_sandbox *sb);

/* A directory descriptor (borrowed) of the sandbox's KB_SANDBOX_RUNTIME, where the kernel binds its
 * sockets, opened as kb_sandbox_workspace_fd is: a tmpfs (kb_sandbox_runtime_in_memory), or the
 * team's runtime folder. */
KB_EXPORT int kb_sandbox_runtime_fd(const kb_sandbox *sb);

/* What kb_sandbox_workspace_copy_out copied of a workspace, and what it left. */
typedef struct kb_workspace_copied {
        uint64_t files, dirs, bytes;
        uint64_t skipped; /* links, FIFOs, sockets, devices, and what could not be read or made */
        bool truncated;   /* it stopped at max_bytes, its entry count or its deadline */
} kb_workspace_copied;

/* Copies the regular files and folders below from_fd (a workspace descriptor) into to_dir, which
 * must exist: nothing there is replaced, no link is followed or made, no mode but the owner's
 * read, write and execute is kept. At most max_bytes (0: no bound), 100,000 entries, 64 levels,
 * until deadline_ms. Returns 0 (*ret says what was copied and left) or -errno. */
KB_EXPORT int kb_sandbox_workspace_copy_out(int from_fd, const char *to_dir, uint64_t max_bytes, int64_t deadline_ms,
                                            kb_workspace_copied *ret);
/* The kernel's pid in kbound's pid namespace, and bwrap's. */
KB_EXPORT pid_t kb_sandbox_kernel_pid(const kb_sandbox *sb);
KB_EXPORT pid_t kb_sandbox_bwrap_pid(const kb_sandbox *sb);
/* bwrap's init (PID 1 of the sandbox) in kbound's pid namespace, and the sandbox's pid namespace
 * inode, both as pinned at launch. */
KB_EXPORT pid_t kb_sandbox_init_pid(const kb_sandbox *sb);
KB_EXPORT uint64_t kb_sandbox_pidns(const kb_sandbox *sb);
/* The seccomp program kbound built for this launch and handed bwrap: the sealed memfd of
 * kb_seccomp_build, kept for the sandbox's life (read it with kb_seccomp_program_read); -1 for none. */
KB_EXPORT int kb_sandbox_seccomp_program(const kb_sandbox *sb);
/* The --info-fd JSON (borrowed): child-pid and the namespace inodes. */
KB_EXPORT json_object *kb_sandbox_info(const kb_sandbox *sb);
/* What kbound launched, as facts for the judge (borrowed): "program" {"path", "dev", "ino"} (the
 * bwrap executed, stat'd when it was), "argv" (the planned command line, argv[0] first), "fds"
 * [{"fd", "what", "dev", "ino"}] (each descriptor kbound handed bwrap: stdin /dev/null, the log as
 * stdout and stderr, the info pipe, the seccomp channel (a socket: the program is sent on release), the block channel),
 * "proc" {"dev", "ino"} (the host's /proc, of which bwrap keeps an O_PATH descriptor), "block_fd".
 */
KB_EXPORT json_object *kb_sandbox_launch_facts(const kb_sandbox *sb);
/* The sandbox's own cgroups: {"version": 2|1|0, "dirs": [host folders], "error": why kbound could
 * not make them (absent when it did, or none was needed)}. A new object, or NULL. */
KB_EXPORT json_object *kb_sandbox_cgroup_facts(const kb_sandbox *sb);
/* How many of the sandbox's processes its memory cgroup killed at the limit so far; -2 without a
 * memory cgroup (or when its counter could not be read). */
KB_EXPORT int64_t kb_sandbox_oom_kills(const kb_sandbox *sb);
/* The memory limit as each process's RLIMIT_AS, where no memory cgroup holds it (0: not so). */
KB_EXPORT uint64_t kb_sandbox_rlimit_as(const kb_sandbox *sb);
/* The kernel's log as its keeper holds it: {"pipe": "pipe:[N]" (bwrap's stdout and stderr),
 * "max", "written", "dropped", "kept" (bytes on disk now)}; NULL when the log is not bounded (it
 * is then a file bwrap writes itself). A new object. */
KB_EXPORT json_object *kb_sandbox_log_facts(const kb_sandbox *sb);
/* Returns once what the sandbox wrote to its log so far is on disk, or at deadline_ms. */
KB_EXPORT void kb_sandbox_log_settle(const kb_sandbox *sb, int64_t deadline_ms);
/* The sandbox cannot outlive kbound, shown by effect: a twin of sb (the same policy, so the same
 * bwrap and command line, running kbound's syscall probe paused, or sleep without one) is started,
 * its bwrap's outer process (kbound's child, what --die-with-parent ties the sandbox to) is killed,
 * and its init and PID 2 must be gone, seen through their pidfds, within a bound. The twin writes
 * its bwrap log to log_path. *ret_evidence (owned) gets {"bound_ms", "init_gone_ms", "pid2_gone_ms"
 * (null: still alive at the bound), "survived", "stopped_by_kbound" (a twin that survived is
 * stopped through its pidfds), "error" (the twin could not be started or killed)}. Returns 0 or
 * -EINVAL, -ENOMEM. Call before the team's folders are removed: the twin binds them too. */
KB_EXPORT int kb_sandbox_lifetime(const kb_sandbox *sb, const char *log_path, json_object **ret_evidence);
/* Whether kbound made the sandbox's mount tree private before the kernel's program ran, so that
 * no mount event of the host's propagates in (bwrap leaves it a slave of the host's): 0 if it did,
 * the -errno of the step refused, 1 if the launch never got there. */
KB_EXPORT int kb_sandbox_mounts_private(const kb_sandbox *sb);
/* The environment bwrap was started with (policy->env, copied; NULL-terminated, borrowed). */
KB_EXPORT char *const *kb_sandbox_planned_env(const kb_sandbox *sb);

/* Sends sig to the kernel through the pidfd. Returns 0, -ESRCH if it has exited, -errno. */
KB_EXPORT int kb_sandbox_signal(kb_sandbox *sb, int sig);

/* 1 if the pinned kernel process is alive, 0 if it has exited. */
KB_EXPORT int kb_sandbox_alive(const kb_sandbox *sb);

/* Re-checks that the pidfd still names a live process that is PID 2 of the sandbox's pid
 * namespace. Returns 0, -ESRCH (exited), -EPERM (mismatch). */
KB_EXPORT int kb_sandbox_verify(const kb_sandbox *sb);

/* Stops everything: SIGKILL to the kernel through the pidfd (its PID 1 then ends the namespace),
 * SIGKILL to bwrap, and reaps bwrap before deadline_ms. Idempotent. If ret_status is not NULL it
 * gets bwrap's wait status (which carries the kernel's exit status). Returns 0 or -ETIMEDOUT. */
KB_EXPORT int kb_sandbox_stop(kb_sandbox *sb, int64_t deadline_ms, int *ret_status);

/* Reaps bwrap if it has already exited (the kernel died). Returns 1 and *ret_status if so, 0 if
 * still running. */
KB_EXPORT int kb_sandbox_try_reap(kb_sandbox *sb, int *ret_status);

/* Stops (if needed) and frees; sets *sbp to NULL. Accepts NULL. */
KB_EXPORT void kb_sandbox_destroy(kb_sandbox **sbp);

/* Runs "bwrap --version" and returns its version string ("0.8.0"). Returns 0, -ENOENT, -EIO (it did
 * not run cleanly), -ENOEXEC (its first line is not "bubblewrap VERSION": not bubblewrap). */
KB_EXPORT int kb_sandbox_bwrap_version(const char *bwrap, char **ret_version);

/* Resolves the bubblewrap to use: explicit (from --bwrap) if not NULL, else KBOUND_BWRAP in envp,
 * else "bwrap" searched in PATH of envp. Returns 0 and an absolute path, -ENOENT. */
KB_EXPORT int kb_sandbox_find_bwrap(const char *explicit_path, char *const *envp, char **ret_path);

/* One preflight item for `kbound doctor`. */
typedef struct kb_preflight_item {
        char *name; /* "sandbox-user", "bwrap", "seccomp", "limits", "sandbox", "apparmor", "pidfd", "ipc-path" */
        bool ok;
        bool required;
        char *detail; /* what was found, and how to fix it when not ok */
} kb_preflight_item;

/* Checks whether this machine can enforce the sandbox `check` starts with limits (NULL: the
 * defaults, kb_limits_default): the sandbox user (sandbox_user, NULL for the default:
 * kb_sandbox_user_resolve) exists, is not root and can reach runtime_base's parent; bwrap
 * present, not set-uid, with every option kbound needs (kb_bwrap_describe: the words check refuses
 * with, and what stands in for what it lacks); the seccomp filter builds; the sandbox check starts
 * (kb_sandbox_plan and kb_sandbox_launch with those limits and this bwrap's stand-ins, syscall_probe's
 * copy bound when not NULL) starts as that user and its PID 2 is pinned (the real test of bwrap,
 * user namespaces, AppArmor and seccomp here), and its in-memory folders have their sizes in its
 * mount table (what sandbox.resources reads: the limits item); the AppArmor restriction on Ubuntu
 * 24.04+ (kernel.apparmor_restrict_unprivileged_userns) when it applies, pidfd_open and
 * pidfd_send_signal work, and runtime_base leaves room for ipc socket paths.
 * Returns 0 and a NULL-terminated array (free with kb_preflight_free); the caller decides the exit
 * code from the items' ok/required: every required item ok is exactly where check can pass. */
KB_EXPORT int kb_sandbox_preflight(const char *bwrap, const char *runtime_base, const char *sandbox_user,
                                   const char *syscall_probe, const kb_limits *limits, kb_preflight_item ***ret);
KB_EXPORT void kb_preflight_free(kb_preflight_item **items);

/* ---- a sandbox kbound did not build (`kbound audit`, docs/audit.md) ----
 *
 * The kernelspec's own argv (its wrapper: bwrap, firejail, crun, ...) started as it is: kbound adds
 * no namespace, mount, filter or limit. What a check needs of a launch (the kernel pinned by a
 * pidfd, the init of its pid namespace, the launcher) is found afterwards, from the host: the
 * kernel is the process that holds the kernel end of kbound's connections (kb_inspect_holders). */
typedef struct kb_sandbox_audit_policy {
        char *const *env;            /* the launcher's whole environment (kb_sandbox_env's) */
        const kb_sandbox_user *user; /* switch_user with a uid other than 0: the launcher drops to it;
                                      * NULL, or uid 0: it runs as kbound (root only when asked) */
        const char *chdir_to;        /* its working folder (a host path); NULL: kept */
} kb_sandbox_audit_policy;

/* Starts argv (argv[0] searched in the PATH of policy->env) as policy says: stdin /dev/null, stdout
 * and stderr appended to log_path, a session of its own, a fresh session keyring, dying with the
 * calling thread. Returns 0 and a sandbox whose kernel is not known yet (kb_sandbox_pidfd is the
 * launcher's until kb_sandbox_audit_adopt), -ENOENT (no such program), -errno of the start, with
 * *ret_error (if ret_error) saying which program. */
KB_EXPORT int kb_sandbox_audit_launch(const kb_sandbox_audit_policy *policy, char *const *argv, const char *log_path,
                                      kb_sandbox **ret, kb_error **ret_error);

/* Pins kernel_pid (found by the caller as the holder of the kernel end of kbound's connections) as
 * sb's kernel: its pidfd, its start time, the PID 1 of its pid namespace when that is not kbound's
 * (else the kernel itself stands as init, and kb_sandbox_pidns is 0), and a descriptor of its
 * working folder, workspace_inside (an absolute path as the kernel sees it, resolved in its root
 * with no escape) or, when NULL, its current working directory (kb_sandbox_workspace_fd).
 * Returns 0, -ESRCH (gone), -EPERM (the host may not read it), -ENOENT (no such workspace), -errno,
 * with *ret_error saying which. */
KB_EXPORT int kb_sandbox_audit_adopt(kb_sandbox *sb, pid_t kernel_pid, const char *workspace_inside,
                                     kb_error **ret_error);

/* Whether sb is a sandbox kbound did not build (kb_sandbox_audit_launch). */
KB_EXPORT bool kb_sandbox_audited(const kb_sandbox *sb);
