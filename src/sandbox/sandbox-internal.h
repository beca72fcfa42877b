/* sandbox-internal.h: sandbox helpers shared by sandbox.c, sandbox_launch.c, machine_checks.c and their tests. */
#pragma once

#include "kbound/sandbox.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "base/strv.h"
#include <json-c/json.h>
#include <sys/stat.h>

/* The fd number bwrap's --info-fd uses inside the launched child. Fixed so the plan can name it
 * before the pipe exists; the launcher moves the pipe's write end onto it after fork. */
#define KB_SANDBOX_INFO_FD 3

/* Why a set-uid bwrap is refused (kb_sandbox_launch, the preflight): it builds the sandbox as
 * root, so the sandbox's user namespace belongs to root, a root process sits between bwrap and
 * the sandbox's init, and the sandbox's processes are closed to an unprivileged kbound's look:
 * nothing kbound claims could be proven. */
#define KB_SANDBOX_SETUID_WHY                                                                                          \
        "bwrap is set-uid root, which kbound does not support: it would build the sandbox as root (a user "            \
        "namespace owned by root, a root helper between bwrap and the sandbox, processes kbound cannot read); use "    \
        "a bubblewrap that is not set-uid (Debian's and Ubuntu's are not; docs/ci.md)"

/* Makes every mount of the sandbox whose init is init_pid (pinned by init_pidfd) private, so that
 * no mount event of the host's propagates in (sandbox_propagation.c). Call while init waits on
 * the block channel. Returns 0, -ESRCH (init gone), -ETIMEDOUT or -errno. */
int kb_sandbox_make_mounts_private(pid_t init_pid, int init_pidfd);

/* The in-memory folders kb_sandbox_plan may make, NULL-terminated (their sizes:
 * kb_sandbox_sized_size). */
const char *const *kb_sandbox_sized_paths(void);

/* kbound's stand-ins for what the bwrap lacks (h->host_sizes: --size; h->host_userns:
 * --disable-userns), made from the host while bwrap's init (init_pid, pinned by init_pidfd) waits
 * on the block channel: each sized folder remounted with its size, the sandbox's
 * user.max_user_namespaces set and a nested user namespace then refused to user (the sandbox's)
 * (sandbox_stand_in.c). Nothing to do: 0. Returns 0 or -errno with an error naming the step. */
int kb_sandbox_stand_in(pid_t init_pid, int init_pidfd, const kb_sandbox_hardening *h, const kb_sandbox_user *user,
                        kb_error **ret_error);

/* Opens the sandbox's folder inside (KB_SANDBOX_WORKSPACE, KB_SANDBOX_RUNTIME) through bwrap's init
 * (init_pid, pinned by init_pidfd) and checks it is what was asked: a tmpfs (sandbox.resources
 * judges its size), or else the host folder host_dir itself (sandbox_workspace.c). Returns 0 with
 * an owned O_RDONLY directory *ret_fd, -EPERM (it is something else), -ESRCH, -EINVAL (no inside,
 * or no host_dir to prove a bound folder against), -ENAMETOOLONG, -errno. */
int kb_sandbox_folder_open(pid_t init_pid, int init_pidfd, const char *inside, bool tmpfs, const char *host_dir,
                           int *ret_fd);

/* The mounts the bwrap command line argv (argv[0] the program; the very one bwrap is started with)
 * makes, in bwrap's order, as PLANNED_MOUNT facts (src/base/facts.def), and those bwrap makes for
 * them: its own root tmpfs; --dev's tmpfs, the host nodes it binds (null, zero, full, random,
 * urandom, tty) and its devpts; --proc's read-only covers of its own sys, sysrq-trigger, irq and bus
 * (optional: bwrap makes them only where it may write); and, below each bind, every mount of
 * host_mounts (kbound's own table, the one bwrap starts in; may be NULL) under the source's real
 * path, which the recursive bind takes along. A bind's source is stat'd here, links followed as
 * bwrap follows them, so call it as bwrap is about to be started. Destinations are taken through
 * the links the plan makes (--symlink). Returns 0 and a new array, -EPROTO (an argv bwrap would
 * refuse or the plan cannot read: an unknown option, a missing operand, --args, --remount-ro of no
 * planned mount), -ELOOP, -ENAMETOOLONG, -E2BIG, -ENOMEM (sandbox_mounts.c). */
int kb_sandbox_planned_mounts(char *const *argv, json_object *host_mounts, json_object **ret);

/* The mounts argv plans (kb_sandbox_planned_mounts), as launch's LAUNCH mounts: its binds' sources
 * stat'd now, as bwrap is about to start, with kbound's own mount table for the submounts they
 * take along. A table that cannot be read plans none: a submount is then unplanned (fail closed).
 * Returns 0 or as kb_sandbox_planned_mounts. */
int kb_sandbox_launch_mounts(json_object *launch, char *const *argv);

/* The plan of launch (LAUNCH facts) made again from the host as it is now, once bwrap has made its
 * mounts and the sandbox stopped receiving the host's, against the plan made as bwrap started:
 * - a bind whose source's path now names another object (a host file replaced by a rename in
 *   between, as useradd rewrites /etc/passwd) gets that object as its source_after, so the bind
 *   may show either of the two, and the path is appended to changed;
 * - with changed (while the launch may be made again), each submount the plan lacks (a host mount
 *   made below a bind's source in between, which bwrap took along) is appended to it in words. A
 *   submount gone is not counted (the plan's submounts are optional).
 * Returns how many changed, -ENOMEM. */
int kb_sandbox_plan_again(json_object *launch, json_object *changed);

/* The FILE_ID (facts.def) of st, with its path when given. NULL if out of memory. */
json_object *kb_sandbox_file_id(const char *path, const struct stat *st);

/* An owned deep copy of a policy (sandbox_policy_copy.c), so a twin of a sandbox can be started long
 * after the caller's policy is gone. The copy's before_exec is NULL. */
typedef struct kb_sandbox_policy_copy kb_sandbox_policy_copy;
int kb_sandbox_policy_copy_new(const kb_sandbox_policy *policy, kb_sandbox_policy_copy **ret);
const kb_sandbox_policy *kb_sandbox_policy_copy_get(const kb_sandbox_policy_copy *c);
void kb_sandbox_policy_copy_free(kb_sandbox_policy_copy *c);

/* kb_sandbox_lifetime's work, for a policy (sandbox_lifetime.c). */
int kb_sandbox_prove_lifetime(const kb_sandbox_policy *policy, const char *log_path, json_object **ret);

/* The policy sb was launched with (its copy), or NULL. */
const kb_sandbox_policy *kb_sandbox_launched_policy(const kb_sandbox *sb);

/* The pidfd of bwrap's init (PID 1 of the sandbox), or -1. */
int kb_sandbox_init_pidfd(const kb_sandbox *sb);

/* 1 if the file path names (after symlinks) has its set-user-ID bit, 0 if not, -errno (bwrap.c). */
int kb_sandbox_bwrap_setuid(const char *path);

/* Ceiling on the --info-fd JSON we accept from bwrap (it is a few hundred bytes). */
#define KB_SANDBOX_INFO_MAX 65536

/* What one /proc/<pid>/status says about a process that matters for pinning. */
typedef struct kb_proc_status {
        pid_t ppid;       /* PPid: parent in the reader's pid namespace */
        pid_t nspid_last; /* last NSpid field: the pid in the process's own (innermost) namespace */
        int nspid_depth;  /* number of NSpid fields (1 = same namespace as the reader) */
        char state;       /* first letter of State: R, S, Z, X, ... */
} kb_proc_status;

/* Reads <proc_root>/<pid>/status. Returns 0, -ESRCH (no such process), -EPROTO (unparsable),
 * -errno. */
int kb_sandbox_proc_status(const char *proc_root, pid_t pid, kb_proc_status *ret);

/* Inode of <proc_root>/<pid>/ns/pid (the process's pid namespace). Returns 0, -ESRCH, -errno. */
int kb_sandbox_proc_pidns(const char *proc_root, pid_t pid, uint64_t *ret_ino);

/* Scans proc_root once for the child of init_pid whose NSpid ends in 2 (with at least two NSpid
 * levels). Returns 0 and its pid, -ESRCH if none (yet), -errno. */
int kb_sandbox_find_pid2(const char *proc_root, pid_t init_pid, pid_t *ret_pid);

/* Confirms, after pidfd was opened for pid, that pid is still PID 2 of the namespace pidns_ino
 * and a child of init_pid, and that pidfd is still alive after those reads (a pid that was
 * recycled between the scan and pidfd_open then cannot pass). Returns 0, -ESRCH (exited),
 * -EPERM (a different process). */
int kb_sandbox_verify_identity(const char *proc_root, pid_t pid, int pidfd, pid_t init_pid, uint64_t pidns_ino);

/* Finds, pins and verifies the kernel (PID 2 under init_pid) in proc_root, retrying every few ms
 * until deadline_ms because it may appear after bwrap reports. Gives up early when init_pid is
 * gone. Returns 0 with *ret_pid and an owned *ret_pidfd, -ESRCH (never appeared or exited),
 * -EPERM (identity mismatch), -errno. */
int kb_sandbox_pin_pid2(const char *proc_root, pid_t init_pid, uint64_t pidns_ino, int64_t deadline_ms, pid_t *ret_pid,
                        int *ret_pidfd);

/* The system call pid is in, from <proc_root>/<pid>/syscall: *ret_nr its number (the native ABI's)
 * and *ret_arg0 its first argument, or *ret_nr -1 when it is in none (running). Reading that file
 * needs ptrace rights over pid (kbound has them over its sandbox). Returns 0, -ESRCH, -errno. */
int kb_sandbox_current_call(const char *proc_root, pid_t pid, long *ret_nr, unsigned long long *ret_arg0);

/* Which descriptor pid is blocked reading, from <proc_root>/<pid>/syscall: *ret_fd is the first
 * argument when the call it is in is read(2), else -1 (running, or another call). Reading that
 * file needs ptrace rights over pid (kbound has them over its sandbox). Returns 0, -ESRCH, -errno. */
int kb_sandbox_waits_on(const char *proc_root, pid_t pid, int *ret_fd);

/* 1 if the pidfd's process is alive, 0 if it has exited (pidfd readable). */
int kb_sandbox_pidfd_alive(int pidfd);

/* Thin syscall wrappers (glibc 2.36 on Debian 12 has no pidfd_open wrapper). Return fd/0 or -errno. */
int kb_sandbox_pidfd_open(pid_t pid);
int kb_sandbox_pidfd_send_signal(int pidfd, int sig);

/* How kb_sandbox_spawn starts a child. */
#define KB_SPAWN_EXTRA_MAX 4
enum { KB_SPAWN_STAGE_EXEC = 1, KB_SPAWN_STAGE_USER, KB_SPAWN_STAGE_KEYRING, KB_SPAWN_STAGE_SETUP };
typedef struct kb_spawn_options {
        int stdin_fd, stdout_fd, stderr_fd; /* become fds 0, 1, 2; -1: /dev/null */
        const int *extra_fds;               /* each becomes extra_targets[i] (3..8, distinct) */
        const int *extra_targets;
        size_t n_extra;              /* at most KB_SPAWN_EXTRA_MAX */
        const kb_sandbox_user *user; /* switch_user: drop to it (groups, gid, uid) before exec */
        bool new_session_keyring;    /* join a fresh anonymous session keyring before exec */
        bool die_with_parent;        /* PR_SET_PDEATHSIG SIGKILL, set after the user switch */
        bool new_session;            /* setsid() (no controlling terminal) instead of setpgid */
        const char *chdir_to;        /* working directory (after the user switch); NULL: kept */
        int *ret_failed_stage;       /* if not NULL: KB_SPAWN_STAGE_* of a failure in the child */
        const int *join_fds;         /* cgroup.procs files the child writes "0" to first (joins) */
        uint64_t rlimit_as;          /* RLIMIT_AS (soft and hard) before exec; 0: left as it is */
        size_t n_join;
} kb_spawn_options;

/* How a kernel's launcher is started, bwrap or (unsandboxed) the kernel itself: stdin on
 * /dev/null, stdout and stderr on log_fd, dropped to user, in a fresh session keyring, dying with
 * the thread that started it. The caller adds what its launch needs. */
static inline kb_spawn_options kb_spawn_options_kernel(int log_fd, const kb_sandbox_user *user) {
        return (kb_spawn_options){.stdin_fd = -1,
                                  .stdout_fd = log_fd,
                                  .stderr_fd = log_fd,
                                  .user = user,
                                  .new_session_keyring = true,
                                  .die_with_parent = true};
}

/* Forks and execs path with argv/envp and nothing else inherited: the fds o names, every other fd
 * closed, signal dispositions and mask reset, its own process group (or session); then, as o asks, the user
 * switched, a fresh session keyring joined and the parent-death signal set. o NULL: stdio on
 * /dev/null and nothing else. Returns 0 and *ret_pid once exec has succeeded, or the child's
 * -errno (exec, user switch, keyring: *o->ret_failed_stage says which; the child is reaped then),
 * or -errno of fork/pipe, -EINVAL for bad options. */
int kb_sandbox_spawn(const char *path, char *const *argv, char *const *envp, const kb_spawn_options *o, pid_t *ret_pid);

/* Waits for child pid until deadline_ms; on timeout SIGKILLs and reaps it. Returns 0 and
 * *ret_status, -ETIMEDOUT (killed and reaped), -errno. */
int kb_sandbox_wait_child(pid_t pid, int64_t deadline_ms, int *ret_status);

/* Runs argv (argv[0] is the path) with envp as user (NULL: kbound's own; else as
 * kb_sandbox_spawn switches, with a fresh session keyring), capturing stdout and stderr together
 * (at most max_output bytes kept), until deadline_ms; extra_fd (>= 0) becomes extra_target in the
 * child. Returns 0 with *ret_status and a malloc'd, NUL-
 * terminated *ret_output; -ENOENT/-EACCES if it could not be exec'd; -ETIMEDOUT; -errno. */
int kb_sandbox_run_capture(char *const *argv, char *const *envp, const kb_sandbox_user *user, int extra_fd,
                           int extra_target, size_t max_output, int64_t deadline_ms, int *ret_status,
                           char **ret_output);

/* A one-line explanation of a bwrap failure from the tail of its log (text), with a hint for the
 * well-known causes (user namespaces refused). Returns a malloc'd string or NULL (ENOMEM). */
char *kb_sandbox_diagnose(const char *what, const char *log_tail);
/* A launch's failure as an error (sandbox_diagnose.c): *ret_error (if ret_error) gets err with
 * kb_sandbox_diagnose's line for what fmt formats and, with log_path, the end of what bwrap wrote
 * to it since log_offset. Returns -err (kb_error_make). */
int kb_sandbox_error(kb_error **ret_error, int err, const char *log_path, off_t log_offset, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

/* sandbox_pid.c's readers, shared with sandbox_launch.c: a small file under /proc into buf
 * (NUL-terminated; -ESRCH when the process is gone), and a decimal pid (false for anything else). */
int kb_sandbox_read_small(const char *path, char *buf, size_t size);
bool kb_sandbox_parse_pid(const char *s, char **end, pid_t *ret);

/* The kernel's log, bounded (sandbox_log.c): a pipe whose write end is bwrap's stdout and stderr,
 * drained by a thread of kbound into log_path (log_fd, appended to), at most max bytes kept on
 * disk: log_path and log_path.1, the older half dropped when the newer fills. */
typedef struct kb_log_keeper kb_log_keeper;
/* Starts the keeper; *ret_write_fd is the pipe's write end (CLOEXEC) for bwrap. Returns 0, -errno. */
int kb_log_keeper_start(const char *log_path, int log_fd, uint64_t max, kb_log_keeper **ret, int *ret_write_fd);
/* Returns once what the sandbox wrote so far is on disk (or at deadline_ms): before a log is read. */
void kb_log_keeper_settle(const kb_log_keeper *k, int64_t deadline_ms);
/* Drains until every writer is gone or deadline_ms, then ends the thread and frees it. */
void kb_log_keeper_stop(kb_log_keeper **k, int64_t deadline_ms);
/* {"pipe": "pipe:[N]", "max", "written", "dropped", "kept" (bytes on disk now, by stat)}, or NULL. */
json_object *kb_log_keeper_facts(const kb_log_keeper *k);

/* The cgroups of one sandbox (sandbox_cgroup.c): at most one folder per hierarchy. */
#define KB_CGROUP_DIRS_MAX 3
/* The period of a cgroup's CPU bandwidth limit (v2 cpu.max, v1 cpu.cfs_period_us): the default. */
#define KB_CGROUP_CPU_PERIOD_US UINT64_C(100000)

typedef struct kb_cgroup {
        char *dirs[KB_CGROUP_DIRS_MAX];
        size_t n;
        int version; /* 2, 1, or 0: none */
} kb_cgroup;

/* Makes cgroups for the memory and tasks limits of l (none asked: nothing, 0): v2 where kbound's
 * own cgroup enables memory and pids for its children, else v1's memory and pids hierarchies.
 * Returns 0, or -errno when kbound may not make them (unprivileged: -EACCES), with nothing left. */
int kb_cgroup_create(kb_cgroup *cg, const kb_limits *l, const char *team);
/* Opens each folder's cgroup.procs for writing into fds (at most max); returns how many, -errno. */
int kb_cgroup_open_procs(const kb_cgroup *cg, int *fds, size_t max);
/* How many processes the sandbox's memory cgroup killed at its limit; -2 when none could be read
 * (no memory cgroup). */
int64_t kb_cgroup_oom_kills(const kb_cgroup *cg);
/* Removes the folders (waiting up to a second for the last process to leave each). */
void kb_cgroup_destroy(kb_cgroup *cg);

/* ---- a sandbox kbound did not build (sandbox_audit.c; the struct is sandbox_launch.c's) ---- */

/* A sandbox whose launcher (the kernelspec's own wrapper, kbound's child launcher, pinned by
 * launcher_pidfd, taken) kbound started with env (taken) and did not build: no bwrap, no info, no
 * plan. Its kernel is not known until kb_sandbox_audit_pin. NULL: out of memory (nothing taken). */
kb_sandbox *kb_sandbox_audit_new(pid_t launcher, int launcher_pidfd, char **env);
/* The kernel found (descriptors taken): its pid, pidfd and start time; the init of its own pid
 * namespace (or the kernel itself, pidns_ino 0, when it shares kbound's); its working folder. */
typedef struct kb_sandbox_audit_pinned {
        pid_t kernel_pid;
        int kernel_pidfd;
        uint64_t kernel_start;
        pid_t init_pid;
        int init_pidfd;
        uint64_t pidns_ino;
        int workspace_fd;
} kb_sandbox_audit_pinned;
void kb_sandbox_audit_pin(kb_sandbox *sb, const kb_sandbox_audit_pinned *p);
/* That the pinned kernel is still the process it was: alive, with the same start time, before and
 * after the read. Returns 0, -ESRCH (exited), -EPERM (another process). */
int kb_sandbox_audit_verify(pid_t pid, int pidfd, uint64_t start);
/* Field 22 of /proc/<pid>/stat: when pid started. Returns 0, -ESRCH, -EPROTO, -errno. */
int kb_sandbox_start_time(pid_t pid, uint64_t *ret);
