/* sandbox_launch.c: start bwrap, pin the kernel (PID 2) by a verified pidfd, signal and stop it. */
#include "kbound/sandbox.h"
#include "base/cleanup.h"
#include "sandbox/sandbox-internal.h"
#include "base/facts.h"
#include "base/procfs.h"
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <grp.h>
#include <linux/keyctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* Retry interval while the kernel has not appeared yet, and the grace bwrap gets to exit by itself
 * (carrying the kernel's status) before it is killed too. */
#define PIN_RETRY_MS 5
#define STOP_GRACE_MS 1000
/* How long bwrap's init may take to build the sandbox and block on --block-fd when the launch has
 * no deadline (it takes a few ms; seconds on a loaded machine). */
#define BLOCK_WAIT_MS 30000
#define LAUNCH_TRIES 3 /* launches made while a bind's source keeps changing under bwrap (kb_sandbox_launch) */

struct kb_sandbox {
        pid_t bwrap_pid;
        int bwrap_pidfd;
        bool reaped;
        int status;
        pid_t init_pid; /* bwrap's init: PID 1 of the sandbox, "child-pid" of the info JSON */
        int init_pidfd;
        int workspace_fd; /* the sandbox's /workspace, opened through init (kb_sandbox_workspace_fd) */
        int runtime_fd;   /* and its socket folder (kb_sandbox_runtime_fd) */
        pid_t kernel_pid; /* PID 2 of the sandbox, in our namespace */
        int kernel_pidfd;
        uint64_t pidns_ino;
        json_object *info;
        /* kbound's ends of bwrap's --block-fd and --seccomp channels (socket pairs), until the
         * sandbox goes on (release); the seccomp program is sent only then. */
        int block_w;
        int seccomp_w;
        int seccomp_program;            /* the sealed memfd kb_seccomp_build made */
        char **env;                     /* the environment bwrap was started with */
        json_object *launch_facts;      /* kb_sandbox_launch_facts */
        int mounts_private;             /* kb_sandbox_make_mounts_private's result (1: not tried yet) */
        kb_sandbox_policy_copy *policy; /* what it was launched with, for its twin (kb_sandbox_lifetime) */
        kb_cgroup cgroup;               /* the sandbox's own cgroups, when kbound could make them */
        int cgroup_error;               /* why not (-errno), 0 if made or not needed */
        uint64_t rlimit_as;             /* the memory limit kept per process instead (0: none) */
        kb_log_keeper *log;             /* the kernel's log, bounded (NULL: none asked; a file) */
        bool audited;                   /* a sandbox kbound did not build (sandbox_audit.c) */
        json_object *sources_changed;   /* set to be told: a bind source changed, abandon (sandbox_go) */
        uint64_t kernel_start;          /* audited: the kernel's start time, as pinned */
};

static void sleep_ms(int ms) {
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

/* Reads and parses bwrap's --info-fd JSON. -ECHILD if bwrap ended without writing it. */
static int read_info(int fd, int bwrap_pidfd, int64_t deadline_ms, json_object **ret_info) {
        json_tokener *tok = json_tokener_new_ex(16);
        if (!tok)
                return -ENOMEM;
        size_t total = 0;
        int r;
        for (;;) {
                int left = kb_ms_left(deadline_ms);
                if (left == 0) {
                        r = -ETIMEDOUT;
                        break;
                }
                struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = bwrap_pidfd, .events = POLLIN}};
                int n = poll(p, bwrap_pidfd >= 0 ? 2 : 1, left < 0 || left > 100 ? 100 : left);
                if (n < 0 && errno != EINTR) {
                        r = -errno;
                        break;
                }
                if (n <= 0)
                        continue;
                if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
                        if (p[1].revents & POLLIN) { /* bwrap is gone and wrote nothing more */
                                r = -ECHILD;
                                break;
                        }
                        continue;
                }
                char chunk[1024];
                ssize_t got = read(fd, chunk, sizeof chunk);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got <= 0) {
                        r = -ECHILD;
                        break;
                }
                total += (size_t) got;
                if (total > KB_SANDBOX_INFO_MAX) {
                        r = -EPROTO;
                        break;
                }
                json_object *obj = json_tokener_parse_ex(tok, chunk, (int) got);
                enum json_tokener_error err = json_tokener_get_error(tok);
                if (obj) {
                        *ret_info = obj;
                        r = 0;
                        break;
                }
                if (err != json_tokener_continue) {
                        r = -EPROTO;
                        break;
                }
        }
        json_tokener_free(tok);
        return r;
}

static int info_int(json_object *info, const char *key, int64_t *ret) {
        json_object *v;
        if (!json_object_object_get_ex(info, key, &v) || !json_object_is_type(v, json_type_int))
                return -EPROTO;
        int64_t x = json_object_get_int64(v);
        if (x <= 0)
                return -EPROTO;
        *ret = x;
        return 0;
}

/* Pins bwrap's init (child-pid): it must be bwrap's child. Held so stop can wait until the whole
 * pid namespace is gone (init exits only after every process in it has been reaped). -ENOTSUP
 * when init is bwrap's grandchild: a set-uid bwrap (or one run by root) puts a privileged
 * process between them, which this kbound does not support (kb_sandbox_launch). */
static int pin_init(kb_sandbox *sb) {
        _cleanup_close_ int pidfd = kb_sandbox_pidfd_open(sb->init_pid);
        if (pidfd < 0)
                return pidfd;
        kb_proc_status st, between;
        int r = kb_sandbox_proc_status("/proc", sb->init_pid, &st);
        if (r < 0)
                return r == -ESRCH ? -ESRCH : -EPERM;
        if (!kb_sandbox_pidfd_alive(pidfd))
                return -ESRCH;
        if (st.ppid != sb->bwrap_pid)
                return st.ppid > 0 && kb_sandbox_proc_status("/proc", st.ppid, &between) == 0 &&
                                       between.ppid == sb->bwrap_pid
                               ? -ENOTSUP
                               : -EPERM;
        sb->init_pidfd = TAKE_FD(pidfd);
        return 0;
}

/* True once init has a child: it went on without waiting (or is past the wait). */
static bool init_has_child(pid_t init_pid) {
        char path[PATH_MAX], buf[64];
        snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int) init_pid, (int) init_pid);
        return kb_sandbox_read_small(path, buf, sizeof buf) == 0 && buf[0] != '\0';
}

/* Waits (polling, until deadline_ms; BLOCK_WAIT_MS without one) until bwrap's init is blocked
 * reading one of kbound's channels: its --block-fd, or its --seccomp one, which bwrap reads right
 * after the block (a bwrap that dropped --block-fd waits there instead, and the judge fails it for
 * that). Until then it is still setting the sandbox up (its mounts, /workspace among them, are not
 * there yet) and holds descriptors of its own work (bind sources, the old root), and the info JSON
 * arrives before that starts. Setting up takes a few ms, but on a loaded machine it has taken
 * seconds, so the wait is the launch's whole deadline, not a guess. Returns 0 when init waits
 * there, and also when the host cannot tell or init will not wait (init gone, its syscall
 * unreadable, or it already has a child: the look then shows what it saw); -ETIMEDOUT when init
 * was still setting up at the deadline. */
static int wait_init_blocked(const kb_sandbox *sb, int64_t deadline_ms) {
        int64_t until = deadline_ms >= 0 ? deadline_ms : kb_now_ms() + BLOCK_WAIT_MS;
        for (int tries = 0;; tries++) {
                int fd = -1;
                if (kb_sandbox_waits_on("/proc", sb->init_pid, &fd) < 0 || fd == KB_SANDBOX_BLOCK_FD ||
                    fd == KB_SANDBOX_SECCOMP_FD || !kb_sandbox_pidfd_alive(sb->init_pidfd) ||
                    init_has_child(sb->init_pid))
                        return 0;
                if (kb_now_ms() >= until)
                        return -ETIMEDOUT;
                sleep_ms(tries < 200 ? 1 : 10);
        }
}

/* Sends all of buf on a socket, never raising SIGPIPE. -errno. */
static int send_all(int fd, const void *buf, size_t len) {
        const char *p = buf;
        while (len > 0) {
                ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

/* Lets bwrap's init go on: the seccomp program (the whole sealed memfd) and end of file on its
 * channel, then one byte on the block channel. Failures are not reported here: a bwrap that is
 * gone shows as a kernel that never appeared, and one that got a cut program refuses it. */
static void release(kb_sandbox *sb) {
        _cleanup_free_ void *program = NULL;
        size_t len = 0;
        if (kb_seccomp_program_read(sb->seccomp_program, &program, &len) == 0)
                (void) send_all(sb->seccomp_w, program, len);
        kb_closep(&sb->seccomp_w);
        (void) send_all(sb->block_w, "g", 1);
        kb_closep(&sb->block_w);
}

/* SIGKILLs every child of bwrap (our unreaped child, so its pid is not reused and a process whose
 * parent it is, is its child): a clone child that never became a pinned init. Blocked on the
 * --block-fd pipe it would not die with bwrap, and would go on to start the kernel once kbound
 * closes the pipe. */
static void kill_children_of_bwrap(const kb_sandbox *sb) {
        DIR *d = opendir("/proc");
        if (!d)
                return;
        struct dirent *de;
        while ((de = readdir(d))) {
                char *end;
                pid_t pid;
                kb_proc_status st;
                if (!kb_sandbox_parse_pid(de->d_name, &end, &pid) || *end != '\0' ||
                    kb_sandbox_proc_status("/proc", pid, &st) < 0 || st.ppid != sb->bwrap_pid)
                        continue;
                _cleanup_close_ int pidfd = kb_sandbox_pidfd_open(pid);
                /* Still bwrap's child once pinned: the pidfd is this process, not a reused pid. */
                if (pidfd >= 0 && kb_sandbox_proc_status("/proc", pid, &st) == 0 && st.ppid == sb->bwrap_pid)
                        (void) kb_sandbox_pidfd_send_signal(pidfd, SIGKILL);
        }
        closedir(d);
}

static void sandbox_free(kb_sandbox *sb) {
        kb_closep(&sb->bwrap_pidfd);
        kb_closep(&sb->init_pidfd);
        kb_closep(&sb->workspace_fd);
        kb_closep(&sb->runtime_fd);
        kb_closep(&sb->kernel_pidfd);
        kb_closep(&sb->block_w);
        kb_closep(&sb->seccomp_w);
        kb_closep(&sb->seccomp_program);
        kb_json_putp(&sb->info);
        kb_json_putp(&sb->launch_facts);
        kb_strv_free(sb->env);
        kb_sandbox_policy_copy_free(sb->policy);
        kb_cgroup_destroy(&sb->cgroup);
        /* Started: its writers are gone by now, so what they left is drained; never started: nothing
         * to wait for. */
        kb_log_keeper_stop(&sb->log, sb->bwrap_pid > 0 ? kb_now_ms() + 1000 : kb_now_ms());
        free(sb);
}

/* Appends the LAUNCH_FD (facts.def) of the object open at src (or at path, when src < 0) that bwrap
 * gets as target to fds. -errno. */
static int plan_fd(json_object *fds, int target, const char *what, int src, const char *path) {
        struct stat st;
        if (src >= 0 ? fstat(src, &st) < 0 : stat(path, &st) < 0)
                return -errno;
        char dev[KB_PROCFS_DEV_MAX];
        kb_procfs_dev(major(st.st_dev), minor(st.st_dev), dev);
        json_object *o = json_object_new_object();
        if (!o || kb_fact_set_str(o, FACT_LAUNCH_FD_DEV, dev) < 0 ||
            kb_fact_set_int(o, FACT_LAUNCH_FD_INO, (int64_t) st.st_ino) < 0 ||
            kb_fact_set_int(o, FACT_LAUNCH_FD_FD, target) < 0 || kb_fact_set_str(o, FACT_LAUNCH_FD_WHAT, what) < 0 ||
            json_object_array_add(fds, o) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        return 0;
}

/* kb_sandbox_launch_facts for what is about to be launched. */
static int launch_facts(const kb_sandbox_policy *policy, char *const *argv, const int *fds, const int *targets,
                        size_t n_fds, int logfd, int block_r, json_object **ret) {
        /* fds: the info pipe, the seccomp channel, the block channel (said below) and the connection
         * file when there is one (n_fds of them). */
        static const char *const what[] = {"the info pipe", "the seccomp channel", NULL, "the connection file"};
        _cleanup_json_ json_object *f = json_object_new_object();
        json_object *a = json_object_new_array(), *planned = json_object_new_array();
        if (!f || kb_fact_set_arr(f, FACT_LAUNCH_ARGV, a) < 0 || kb_fact_set_arr(f, FACT_LAUNCH_FDS, planned) < 0)
                return -ENOMEM;
        for (char *const *p = argv; *p; p++)
                if (json_object_array_add(a, json_object_new_string(*p)) < 0)
                        return -ENOMEM;
        struct stat st;
        if (stat(policy->bwrap, &st) < 0)
                return -errno;
        json_object *program = kb_sandbox_file_id(policy->bwrap, &st);
        if (kb_fact_set_obj(f, FACT_LAUNCH_PROGRAM, program) < 0)
                return -ENOMEM;
        if (stat("/proc", &st) < 0)
                return -errno;
        json_object *proc = kb_sandbox_file_id(NULL, &st);
        if (kb_fact_set_obj(f, FACT_LAUNCH_PROC, proc) < 0 ||
            kb_fact_set_int(f, FACT_LAUNCH_BLOCK_FD, KB_SANDBOX_BLOCK_FD) < 0)
                return -ENOMEM;
        int r = plan_fd(planned, 0, "stdin (/dev/null)", -1, "/dev/null");
        if (r >= 0)
                r = plan_fd(planned, 1, "the kernel's log", logfd, NULL);
        if (r >= 0)
                r = plan_fd(planned, 2, "the kernel's log", logfd, NULL);
        for (size_t i = 0; r >= 0 && i < n_fds && i < KB_ELEMENTSOF(what); i++)
                if (what[i])
                        r = plan_fd(planned, targets[i], what[i], fds[i], NULL);
        if (r >= 0)
                r = plan_fd(planned, KB_SANDBOX_BLOCK_FD, "the block channel", block_r, NULL);
        if (r >= 0)
                r = kb_sandbox_launch_mounts(f, argv);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(f);
        return 0;
}

/* One of bwrap's channels (the block and seccomp descriptors): a socket pair, kbound's end in
 * *ret_host and bwrap's in *ret_sandbox. Returns 0 or -errno (nothing written). */
static int channel_pair(int *ret_host, int *ret_sandbox) {
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
                return -errno;
        *ret_host = pair[0];
        *ret_sandbox = pair[1];
        return 0;
}

/* The descriptors bwrap is handed besides its stdio (launch.handed), in this order: the info pipe,
 * the seccomp channel, the block channel (the last of the three) and the connection file when
 * there is one; and the numbers bwrap gets them at. */
enum { HANDED_INFO, HANDED_SECCOMP, HANDED_BLOCK, HANDED_CONNECTION, HANDED_MAX };
static const int bwrap_fd_targets[HANDED_MAX] = {
        [HANDED_INFO] = KB_SANDBOX_INFO_FD,
        [HANDED_SECCOMP] = KB_SANDBOX_SECCOMP_FD,
        [HANDED_BLOCK] = KB_SANDBOX_BLOCK_FD,
        [HANDED_CONNECTION] = KB_SANDBOX_CONNECTION_FD,
};

/* One launch until bwrap runs: its argv and the descriptors it is handed, kbound's copies closed
 * once bwrap has its own (launch_spawn) or when the launch ends either way (launch_done). */
typedef struct launch {
        char **argv;                      /* bwrap's (kb_sandbox_plan) */
        int logfd;                        /* the kernel's log file, opened for appending */
        off_t log_offset;                 /* its size before this launch: where bwrap's words begin */
        int info_r;                       /* the --info-fd pipe's read end */
        int handed[HANDED_MAX];           /* what bwrap gets at bwrap_fd_targets; -1: not open */
        size_t n_handed;                  /* 3, or 4 with the connection file */
        int join_fds[KB_CGROUP_DIRS_MAX]; /* the sandbox's cgroup.procs files, joined by the child */
        int n_join;
        int log_w; /* the log keeper's pipe; -1: bwrap writes to logfd itself */
} launch;

/* Closes kbound's copies of what bwrap is handed, its stdio's too: once bwrap has its own, or the
 * launch is given up. */
static void launch_close_handed(launch *l) {
        for (size_t i = 0; i < HANDED_MAX; i++)
                kb_closep(&l->handed[i]);
        kb_closep(&l->log_w);
}

/* A launch with nothing open yet. */
static launch launch_empty(void) {
        launch l = {.logfd = -1, .info_r = -1, .log_w = -1};
        for (size_t i = 0; i < HANDED_MAX; i++)
                l.handed[i] = -1;
        return l;
}

static void launch_close_join_fds(launch *l) {
        for (int i = 0; i < l->n_join; i++)
                close(l->join_fds[i]);
        l->n_join = 0;
}

/* Everything of l still open closed, its argv freed: the launch's cleanup, on every path. */
static void launch_done(launch *l) {
        launch_close_join_fds(l);
        launch_close_handed(l);
        kb_closep(&l->info_r);
        kb_closep(&l->logfd);
        kb_strv_freep(&l->argv);
}

/* Where bwrap's stdout and stderr go: the log's pipe when its size is bounded, else the file. */
static int launch_out_fd(const launch *l) {
        return l->log_w >= 0 ? l->log_w : l->logfd;
}

/* Never the host's root in the sandbox (see kb_sandbox_user): a root caller must say whom to run
 * as. Returns 0, or -EINVAL with an error. */
static int launch_user_named(const kb_sandbox_policy *policy, kb_error **ret_error) {
        if (geteuid() == 0 && !(policy->user && policy->user->switch_user))
                return kb_sandbox_error(ret_error, EINVAL, NULL, 0,
                                        "kbound is root and no unprivileged sandbox user was given");
        return 0;
}

/* bwrap must be there, executable, and not set-uid (KB_SANDBOX_SETUID_WHY). Returns 0, -ENOENT,
 * -EACCES or -ENOTSUP, with an error. */
static int bwrap_usable(const char *bwrap, kb_error **ret_error) {
        if (access(bwrap, X_OK) < 0)
                return errno == ENOENT || errno == ENOTDIR
                               ? kb_sandbox_error(ret_error, ENOENT, NULL, 0, "bwrap not found")
                               : kb_sandbox_error(ret_error, EACCES, NULL, 0, "bwrap is not executable");
        if (kb_sandbox_bwrap_setuid(bwrap) > 0)
                return kb_sandbox_error(ret_error, ENOTSUP, NULL, 0, "%s", KB_SANDBOX_SETUID_WHY);
        return 0;
}

/* The kernel's log, opened for appending (with its size now), and the --info-fd pipe. Returns 0
 * or -errno. */
static int launch_open(launch *l, const char *log_path) {
        l->logfd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
        if (l->logfd < 0)
                return -errno;
        struct stat lst;
        l->log_offset = fstat(l->logfd, &lst) == 0 ? lst.st_size : 0;
        int info_pipe[2];
        if (pipe2(info_pipe, O_CLOEXEC) < 0)
                return -errno;
        l->info_r = info_pipe[0];
        l->handed[HANDED_INFO] = info_pipe[1];
        return 0;
}

/* A sandbox not launched yet: every descriptor -1, its mounts not tried yet. NULL: out of memory. */
static kb_sandbox *sandbox_new(void) {
        kb_sandbox *sb = calloc(1, sizeof *sb);
        if (!sb)
                return NULL;
        sb->bwrap_pidfd = sb->init_pidfd = sb->kernel_pidfd = sb->workspace_fd = sb->runtime_fd = -1;
        sb->block_w = sb->seccomp_w = sb->seccomp_program = -1;
        sb->mounts_private = 1;
        return sb;
}

/* The sandbox's own cgroups, where kbound may make them; else the limits kept inside the sandbox
 * stand alone (kb_sandbox_plan), which sandbox.resources reports as such. Returns 0 with their
 * cgroup.procs files in l->join_fds (none: sb->cgroup_error says why), or -ECHILD with an error. */
static int launch_cgroups(launch *l, kb_sandbox *sb, const kb_sandbox_policy *policy, kb_error **ret_error) {
        if (!policy->hardening)
                return 0;
        sb->cgroup_error = kb_cgroup_create(&sb->cgroup, &policy->hardening->limits, policy->team);
        l->n_join = sb->cgroup_error < 0 ? 0 : kb_cgroup_open_procs(&sb->cgroup, l->join_fds, KB_CGROUP_DIRS_MAX);
        if (l->n_join < 0) {
                sb->cgroup_error = l->n_join;
                l->n_join = 0;
                kb_cgroup_destroy(&sb->cgroup);
        }
        /* Processor time has no limit inside the sandbox to fall back on: asked and not
         * enforceable here, nothing is started (fail closed). */
        if (policy->hardening->limits.max[KB_LIMIT_CPU] && l->n_join == 0) {
                int e = sb->cgroup_error < 0 ? sb->cgroup_error : -ENOTSUP;
                return kb_sandbox_error(ret_error, ECHILD, NULL, 0,
                                        "cannot enforce --cpu-max: no cpu cgroup of the sandbox's own could be made "
                                        "here (%s; root, or a delegated cgroup, can make one)",
                                        strerror(-e));
        }
        return 0;
}

/* A memory cgroup of its own bounds the whole sandbox, so RLIMIT_AS does not bound each process as
 * well: address space is not memory (ipykernel reserves 750 MiB of it for 70 of resident memory, a
 * malloc arena per thread), and it would refuse a kernel that fits. Sets sb->rlimit_as, with
 * l->argv planned again without the limit inside when the cgroup holds it. Returns 0 or -errno. */
static int launch_memory_limit(launch *l, kb_sandbox *sb, const kb_sandbox_policy *policy, char *const *kernel_argv) {
        uint64_t rlimit_as = policy->hardening ? policy->hardening->limits.max[KB_LIMIT_MEMORY] : 0;
        if (l->n_join > 0 && rlimit_as) {
                kb_sandbox_hardening in_cgroup = *policy->hardening;
                in_cgroup.limits.max[KB_LIMIT_MEMORY] = 0;
                kb_sandbox_policy replanned = *policy;
                replanned.hardening = &in_cgroup;
                char **again = NULL;
                int r = kb_sandbox_plan(&replanned, kernel_argv, KB_SANDBOX_INFO_FD, &again);
                if (r < 0)
                        return r;
                kb_strv_freep(&l->argv);
                l->argv = again;
                rlimit_as = 0;
        }
        sb->rlimit_as = rlimit_as;
        return 0;
}

/* The log's keeper, when its size is bounded (l->log_w its pipe). Returns 0 or -errno with an
 * error. */
static int launch_log_keeper(launch *l, kb_sandbox *sb, const kb_sandbox_policy *policy, const char *log_path,
                             kb_error **ret_error) {
        uint64_t log_max = policy->hardening ? policy->hardening->limits.max[KB_LIMIT_LOG] : 0;
        if (!log_max)
                return 0;
        int r = kb_log_keeper_start(log_path, l->logfd, log_max, &sb->log, &l->log_w);
        if (r < 0)
                return kb_sandbox_error(ret_error, r, NULL, 0, "cannot start the kernel log's keeper");
        return 0;
}

/* The last of what bwrap is handed: the connection file, for bwrap's --file (kb_sandbox_plan),
 * read by bwrap's init into the sandbox's socket tmpfs, then closed there. (The syscall probe is
 * bound by path: kb_sandbox_plan.) Returns 0 or -errno with an error. */
static int launch_fds(launch *l, const kb_sandbox_policy *policy, kb_error **ret_error) {
        l->n_handed = HANDED_CONNECTION;
        if (!policy->connection_file || !kb_sandbox_runtime_in_memory(policy->hardening))
                return 0;
        l->handed[HANDED_CONNECTION] = open(policy->connection_file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (l->handed[HANDED_CONNECTION] < 0)
                return kb_sandbox_error(ret_error, errno, NULL, 0, "cannot open the connection file to hand it in");
        l->n_handed = HANDED_MAX;
        return 0;
}

/* What is launched, kept for the judge (the running bwrap must be exactly this), with the
 * environment and the policy it is launched with. Returns 0 or -errno. */
static int launch_record(const launch *l, kb_sandbox *sb, const kb_sandbox_policy *policy) {
        int r = launch_facts(policy, l->argv, l->handed, bwrap_fd_targets, l->n_handed, launch_out_fd(l),
                             l->handed[HANDED_BLOCK], &sb->launch_facts);
        if (r >= 0 && policy->env && !(sb->env = kb_strv_copy(policy->env)))
                r = -ENOMEM;
        if (r >= 0)
                r = kb_sandbox_policy_copy_new(policy, &sb->policy);
        return r;
}

/* Everything bwrap is handed, made before it runs: the channels, the seccomp program, the cgroups,
 * the memory limit, the log's keeper, the descriptors, and the facts of them. Returns 0 or -errno
 * (with an error where there are words for it); what it made is closed and freed with l and sb
 * (launch_done, kb_sandbox_destroy). */
static int launch_prepare(launch *l, kb_sandbox *sb, const kb_sandbox_policy *policy, char *const *kernel_argv,
                          const char *log_path, kb_error **ret_error) {
        /* bwrap's init waits on --block-fd, then reads the seccomp program from --seccomp until
         * end of file; kbound sends both only once the host has looked. Should kbound die first,
         * both channels close empty, and an empty program makes bwrap give up (prctl refuses it)
         * before anything of the kernel runs: bwrap's init has no parent-death signal yet while it
         * waits, so nothing else would stop it. Socket pairs, not pipes: a send to a bwrap that is
         * gone fails with EPIPE instead of raising SIGPIPE in a library caller. */
        int r = channel_pair(&sb->block_w, &l->handed[HANDED_BLOCK]);
        if (r >= 0)
                r = channel_pair(&sb->seccomp_w, &l->handed[HANDED_SECCOMP]);
        if (r < 0)
                return r;
        /* The seccomp program: built for this launch, sent at release. */
        r = kb_seccomp_build(policy->hardening ? &policy->hardening->seccomp : NULL, &sb->seccomp_program);
        if (r < 0)
                return kb_sandbox_error(ret_error, r == -EINVAL ? EINVAL : ENOTSUP, NULL, 0,
                                        "cannot build the seccomp filter");
        r = launch_cgroups(l, sb, policy, ret_error);
        if (r >= 0)
                r = launch_memory_limit(l, sb, policy, kernel_argv);
        if (r >= 0)
                r = launch_log_keeper(l, sb, policy, log_path, ret_error);
        if (r >= 0)
                r = launch_fds(l, policy, ret_error);
        if (r >= 0)
                r = launch_record(l, sb, policy);
        return r;
}

/* Starts bwrap as the sandbox user, with the kernel's environment exactly: bwrap's own
 * /proc/<pid>/environ is what the sandbox's /proc/1/environ shows, so kbound's environment must
 * never be its. Then closes kbound's copies of what bwrap was handed. Returns 0, -ECHILD when the
 * user switch or the keyring was refused (set-up refused before bwrap ran: this machine cannot
 * enforce the sandbox), or kb_sandbox_spawn's -errno, with an error. */
static int launch_spawn(launch *l, kb_sandbox *sb, const kb_sandbox_policy *policy, kb_error **ret_error) {
        static char *const empty_env[] = {NULL};
        int stage = 0;
        kb_spawn_options so = kb_spawn_options_kernel(launch_out_fd(l), policy->user);
        so.extra_fds = l->handed;
        so.extra_targets = bwrap_fd_targets;
        so.n_extra = l->n_handed;
        so.ret_failed_stage = &stage;
        so.join_fds = l->join_fds;
        so.n_join = (size_t) l->n_join;
        so.rlimit_as = sb->rlimit_as;
        int r = kb_sandbox_spawn(policy->bwrap, l->argv, policy->env ? policy->env : empty_env, &so, &sb->bwrap_pid);
        launch_close_join_fds(l);
        /* The log's pipe is bwrap's alone now: the keeper ends when the sandbox's writers do. */
        launch_close_handed(l);
        if (r < 0)
                return kb_sandbox_error(
                        ret_error, stage == KB_SPAWN_STAGE_USER || stage == KB_SPAWN_STAGE_KEYRING ? ECHILD : -r, NULL,
                        0, "%s",
                        stage == KB_SPAWN_STAGE_USER      ? "cannot switch to the sandbox user before starting bwrap"
                        : stage == KB_SPAWN_STAGE_KEYRING ? "cannot give the sandbox a fresh session keyring"
                                                          : "bwrap could not be executed");
        return 0;
}

/* bwrap's --info-fd report: its init's pid and the sandbox's pid namespace, into sb. Returns 0,
 * or -ECHILD, -ETIMEDOUT, -EPROTO or -errno with an error (bwrap stopped first when its report
 * never came whole). */
static int sandbox_read_report(kb_sandbox *sb, int info_r, const char *log_path, off_t log_offset, int64_t deadline_ms,
                               kb_error **ret_error) {
        int r = read_info(info_r, sb->bwrap_pidfd, deadline_ms, &sb->info);
        if (r < 0) {
                const char *what = r == -ECHILD      ? "bwrap exited before reporting the sandbox"
                                   : r == -ETIMEDOUT ? "bwrap did not report the sandbox in time"
                                                     : "bwrap's --info-fd output is malformed";
                /* Reap first so the log holds everything bwrap wrote. */
                (void) kb_sandbox_stop(sb, kb_now_ms() + 2000, NULL);
                return kb_sandbox_error(ret_error, r, log_path, log_offset, "%s", what);
        }
        int64_t child_pid, pidns;
        if (info_int(sb->info, "child-pid", &child_pid) < 0 || child_pid > INT_MAX ||
            info_int(sb->info, "pid-namespace", &pidns) < 0)
                return kb_sandbox_error(ret_error, EPROTO, NULL, 0,
                                        "bwrap's --info-fd JSON lacks child-pid or pid-namespace");
        sb->init_pid = (pid_t) child_pid;
        sb->pidns_ino = (uint64_t) pidns;
        return 0;
}

/* The sandbox's folder the host last tried to open through bwrap's init (sandbox_go). */
typedef struct folder_try {
        const char *inside; /* KB_SANDBOX_WORKSPACE, then KB_SANDBOX_RUNTIME */
        bool tmpfs;         /* what kbound asked bwrap for there: a tmpfs, else the team's folder bound */
        int r;              /* kb_sandbox_folder_open's result; -ESRCH: not tried (init not pinned) */
} folder_try;

/* bwrap's init waits on the block channel: nothing of the kernel exists yet. The host looks now,
 * then lets it go on, and pins the kernel as PID 2. A failed release (bwrap gone) shows as a
 * kernel that never appeared. Returns kb_sandbox_pin_pid2's result; f says how the folders went. */
static int sandbox_go(kb_sandbox *sb, const kb_sandbox_policy *policy, int64_t deadline_ms, folder_try *f,
                      bool *ret_worded, kb_error **ret_error) {
        int r = wait_init_blocked(sb, deadline_ms);
        if (r < 0)
                return r;
        /* Before anything of the kernel runs, and before the host's first look: the sandbox stops
         * receiving the host's mount events (kbound's own step; its result is a launch fact, and
         * every look judges the propagation fields). */
        sb->mounts_private = kb_sandbox_make_mounts_private(sb->init_pid, sb->init_pidfd);
        /* bwrap's mounts are made, from the host as it was then: what changed since the plan (a
         * bind's source replaced, a host mount below one) may show in them as kbound knows it
         * never did, so while it may, the launch is abandoned (nothing of the kernel ran) and made
         * again; the last keeps both objects of a source, and fails closed on a new submount. */
        r = kb_sandbox_plan_again(sb->launch_facts, sb->sources_changed);
        if (r < 0)
                return r;
        if (r > 0 && sb->sources_changed) {
                *ret_worded = true;
                return -EAGAIN;
        }
        /* What this bwrap's missing options would have done (its sizes, no nested user namespaces):
         * a stand-in that cannot be made fails the launch, as the option would have. */
        r = kb_sandbox_stand_in(sb->init_pid, sb->init_pidfd, policy->hardening, policy->user, ret_error);
        if (r < 0) {
                *ret_worded = true;
                return r;
        }
        /* The host's own way into the workspace, before anything of the kernel runs (judged once
         * the kernel is pinned: a kernel that never appeared says more). */
        f->r = kb_sandbox_folder_open(sb->init_pid, sb->init_pidfd, f->inside, f->tmpfs, policy->workspace,
                                      &sb->workspace_fd);
        if (f->r == 0) {
                f->inside = KB_SANDBOX_RUNTIME;
                f->tmpfs = kb_sandbox_runtime_in_memory(policy->hardening);
                f->r = kb_sandbox_folder_open(sb->init_pid, sb->init_pidfd, f->inside, f->tmpfs, policy->runtime_dir,
                                              &sb->runtime_fd);
        }
        if (policy->before_exec)
                policy->before_exec(policy->before_exec_userdata, sb);
        release(sb);
        return kb_sandbox_pin_pid2("/proc", sb->init_pid, sb->pidns_ino, deadline_ms, &sb->kernel_pid,
                                   &sb->kernel_pidfd);
}

/* A folder the host could not open as asked (f->r < 0): the sandbox stopped, and the error made.
 * Returns -EXDEV (it is something else) or -ECHILD. */
static int folder_refused(kb_sandbox *sb, const folder_try *f, const char *log_path, off_t log_offset,
                          kb_error **ret_error) {
        (void) kb_sandbox_stop(sb, kb_now_ms() + 2000, NULL);
        if (f->r == -EPERM)
                return kb_sandbox_error(ret_error, EXDEV, log_path, log_offset, "the sandbox's %s is not %s", f->inside,
                                        f->tmpfs ? "the tmpfs kbound asked bwrap to make there"
                                                 : "the team's folder kbound asked bwrap to bind there");
        return kb_sandbox_error(ret_error, ECHILD, log_path, log_offset, "the host cannot open the sandbox's %s (%s)",
                                f->inside, strerror(-f->r));
}

/* bwrap is running: pinned by a pidfd, its report read, its init pinned, the host's look while
 * init waits, the kernel let go and pinned as PID 2. Returns 0, or -errno with an error (the
 * caller destroys sb). */
static int sandbox_start(kb_sandbox *sb, const kb_sandbox_policy *policy, int info_r, const char *log_path,
                         off_t log_offset, int64_t deadline_ms, kb_error **ret_error) {
        sb->bwrap_pidfd = kb_sandbox_pidfd_open(sb->bwrap_pid);
        if (sb->bwrap_pidfd < 0)
                return kb_sandbox_error(ret_error, sb->bwrap_pidfd, NULL, 0, "pidfd_open is not available");
        int r = sandbox_read_report(sb, info_r, log_path, log_offset, deadline_ms, ret_error);
        if (r < 0)
                return r;
        r = pin_init(sb);
        folder_try f = {
                .inside = KB_SANDBOX_WORKSPACE, .tmpfs = kb_sandbox_workspace_sized(policy->hardening), .r = -ESRCH};
        bool worded = false;
        if (r == 0)
                r = sandbox_go(sb, policy, deadline_ms, &f, &worded, ret_error);
        if (r == 0 && f.r < 0)
                return folder_refused(sb, &f, log_path, log_offset, ret_error);
        if (r < 0 && worded) {
                (void) kb_sandbox_stop(sb, kb_now_ms() + 2000, NULL);
                return r;
        }
        if (r < 0) {
                const char *what = r == -ENOTSUP ? KB_SANDBOX_SETUID_WHY
                                   : r == -EPERM ? "the sandbox's PID 2 did not match the sandbox's identity"
                                   : r == -ETIMEDOUT
                                           ? "bwrap's init was still setting the sandbox up at the deadline (it never "
                                             "waited on --block-fd)"
                                           : "the kernel (PID 2 of the sandbox) exited or never appeared";
                (void) kb_sandbox_stop(sb, kb_now_ms() + 2000, NULL);
                return kb_sandbox_error(ret_error, r, log_path, log_offset, "%s", what);
        }
        return 0;
}

/* One launch; changed: NULL on the last try, else told (appended to) and -EAGAIN returned when a
 * bind's source changed while bwrap bound it. */
static int launch_once(const kb_sandbox_policy *policy, char *const *kernel_argv, const char *log_path,
                       int64_t deadline_ms, json_object *changed, kb_sandbox **ret, kb_error **ret_error) {
        int r;
        /* One idiom for everything a launch holds, whichever step fails: kbound's copies of what
         * bwrap is handed close with l (launch_done), and the sandbox, from its first field to a
         * running bwrap, is stopped and freed with sb (kb_sandbox_destroy; first, while the log's
         * keeper can still drain); success takes it. */
        _cleanup_(launch_done) launch l = launch_empty();
        _cleanup_(kb_sandbox_destroy) kb_sandbox *sb = NULL;
        r = kb_sandbox_plan(policy, kernel_argv, KB_SANDBOX_INFO_FD, &l.argv);
        if (r < 0)
                return r;
        r = bwrap_usable(policy->bwrap, ret_error);
        if (r < 0)
                return r;
        r = launch_open(&l, log_path);
        if (r < 0)
                return r;
        sb = sandbox_new();
        if (!sb)
                return -ENOMEM;
        sb->sources_changed = changed;
        r = launch_prepare(&l, sb, policy, kernel_argv, log_path, ret_error);
        if (r < 0)
                return r;
        r = launch_spawn(&l, sb, policy, ret_error);
        if (r < 0)
                return r;
        r = sandbox_start(sb, policy, l.info_r, log_path, l.log_offset, deadline_ms, ret_error);
        if (r < 0)
                return r;
        sb->sources_changed = NULL;
        *ret = TAKE_PTR(sb);
        return 0;
}

int kb_sandbox_launch(const kb_sandbox_policy *policy, char *const *kernel_argv, const char *log_path,
                      int64_t deadline_ms, kb_sandbox **ret, kb_error **ret_error) {
        if (!policy || !ret || !log_path || !policy->bwrap || policy->bwrap[0] != '/')
                return -EINVAL;
        int r = launch_user_named(policy, ret_error);
        if (r < 0)
                return r;
        _cleanup_json_ json_object *changed = json_object_new_array();
        if (!changed)
                return -ENOMEM;
        for (int attempt = 1;; attempt++) {
                r = launch_once(policy, kernel_argv, log_path, deadline_ms, attempt < LAUNCH_TRIES ? changed : NULL,
                                ret, ret_error);
                if (r != -EAGAIN)
                        break;
        }
        if (r == 0 && json_object_array_length(changed) > 0 &&
            kb_fact_set_arr((*ret)->launch_facts, FACT_LAUNCH_SOURCES_CHANGED, TAKE_PTR(changed)) < 0) {
                kb_sandbox_destroy(ret);
                return -ENOMEM;
        }
        return r;
}

/* The accessors of sandbox.h: each reads one field, or answers its "none" for NULL (-1 for a
 * descriptor or a pid, 0 for a count or an inode, NULL for an object, or what the header names). */
#define SANDBOX_ACCESSOR(type, name, expr, none)                                                                       \
        type kb_sandbox_##name(const kb_sandbox *sb) {                                                                 \
                return sb ? (expr) : (none);                                                                           \
        }

SANDBOX_ACCESSOR(int, pidfd, sb->audited && sb->kernel_pidfd < 0 ? sb->bwrap_pidfd : sb->kernel_pidfd, -1)
SANDBOX_ACCESSOR(int, workspace_fd, sb->workspace_fd, -1)
SANDBOX_ACCESSOR(int, runtime_fd, sb->runtime_fd, -1)
SANDBOX_ACCESSOR(pid_t, kernel_pid, sb->kernel_pid, -1)
SANDBOX_ACCESSOR(pid_t, bwrap_pid, sb->bwrap_pid, -1)
SANDBOX_ACCESSOR(pid_t, init_pid, sb->init_pid, -1)
SANDBOX_ACCESSOR(uint64_t, pidns, sb->pidns_ino, 0)
SANDBOX_ACCESSOR(json_object *, info, sb->info, NULL)
SANDBOX_ACCESSOR(json_object *, launch_facts, sb->launch_facts, NULL)
SANDBOX_ACCESSOR(uint64_t, rlimit_as, sb->rlimit_as, 0)
SANDBOX_ACCESSOR(json_object *, log_facts, kb_log_keeper_facts(sb->log), NULL)
SANDBOX_ACCESSOR(int64_t, oom_kills, kb_cgroup_oom_kills(&sb->cgroup), -2)
SANDBOX_ACCESSOR(const kb_sandbox_policy *, launched_policy, kb_sandbox_policy_copy_get(sb->policy), NULL)
SANDBOX_ACCESSOR(int, init_pidfd, sb->init_pidfd, -1)
SANDBOX_ACCESSOR(int, seccomp_program, sb->seccomp_program, -1)
SANDBOX_ACCESSOR(int, mounts_private, sb->mounts_private, -EINVAL)
SANDBOX_ACCESSOR(char *const *, planned_env, sb->env, NULL)
SANDBOX_ACCESSOR(bool, audited, sb->audited, false)

json_object *kb_sandbox_cgroup_facts(const kb_sandbox *sb) {
        json_object *o = json_object_new_object(), *dirs = json_object_new_array();
        if (!o || kb_fact_set_arr(o, FACT_CGROUP_SETUP_DIRS, dirs) < 0 ||
            kb_fact_set_int(o, FACT_CGROUP_SETUP_VERSION, sb ? sb->cgroup.version : 0) < 0) {
                json_object_put(o);
                return NULL;
        }
        for (size_t i = 0; sb && i < sb->cgroup.n; i++)
                json_object_array_add(dirs, json_object_new_string(sb->cgroup.dirs[i]));
        if (sb && sb->cgroup_error)
                (void) kb_fact_set_str(o, FACT_CGROUP_SETUP_ERROR, strerror(-sb->cgroup_error));
        return o;
}

void kb_sandbox_log_settle(const kb_sandbox *sb, int64_t deadline_ms) {
        if (sb)
                kb_log_keeper_settle(sb->log, deadline_ms);
}

int kb_sandbox_signal(kb_sandbox *sb, int sig) {
        if (!sb || sb->kernel_pidfd < 0)
                return -EINVAL;
        /* A zombie still accepts signals; "exited" is what the caller needs to hear. */
        if (!kb_sandbox_pidfd_alive(sb->kernel_pidfd))
                return -ESRCH;
        return kb_sandbox_pidfd_send_signal(sb->kernel_pidfd, sig);
}

int kb_sandbox_alive(const kb_sandbox *sb) {
        return sb ? kb_sandbox_pidfd_alive(sb->kernel_pidfd) : 0;
}

int kb_sandbox_verify(const kb_sandbox *sb) {
        if (!sb || sb->kernel_pidfd < 0)
                return -EINVAL;
        if (sb->audited)
                return kb_sandbox_audit_verify(sb->kernel_pid, sb->kernel_pidfd, sb->kernel_start);
        return kb_sandbox_verify_identity("/proc", sb->kernel_pid, sb->kernel_pidfd, sb->init_pid, sb->pidns_ino);
}

/* Waits until pidfd is readable (its process exited) or the deadline passes. */
static bool wait_pidfd(int pidfd, int64_t deadline_ms) {
        for (;;) {
                if (!kb_sandbox_pidfd_alive(pidfd))
                        return true;
                int left = kb_ms_left(deadline_ms);
                if (left == 0)
                        return false;
                struct pollfd p = {.fd = pidfd, .events = POLLIN};
                (void) poll(&p, 1, left);
        }
}

static bool reap_bwrap(kb_sandbox *sb) {
        if (sb->reaped)
                return true;
        int status;
        pid_t w;
        do
                w = waitpid(sb->bwrap_pid, &status, WNOHANG);
        while (w < 0 && errno == EINTR);
        if (w == sb->bwrap_pid || (w < 0 && errno == ECHILD)) {
                /* ECHILD: someone else reaped it (SIGCHLD ignored); it is gone all the same. */
                sb->reaped = true;
                sb->status = w == sb->bwrap_pid ? status : 0;
                return true;
        }
        return false;
}

int kb_sandbox_stop(kb_sandbox *sb, int64_t deadline_ms, int *ret_status) {
        if (!sb)
                return -EINVAL;
        if (!sb->reaped && sb->bwrap_pid > 0) {
                /* The kernel first: its PID 1 then ends the namespace and bwrap exits with its
                 * status, which the caller may want. Signalling bwrap would do nothing useful
                 * (its init forwards no signals). */
                if (sb->kernel_pidfd >= 0 && kb_sandbox_pidfd_alive(sb->kernel_pidfd))
                        (void) kb_sandbox_pidfd_send_signal(sb->kernel_pidfd, SIGKILL);
                else if (sb->init_pidfd >= 0)
                        /* No kernel pinned: end the namespace through its init, so bwrap still
                         * reaps its own child and nothing is left for someone else to reap. */
                        (void) kb_sandbox_pidfd_send_signal(sb->init_pidfd, SIGKILL);
                else
                        kill_children_of_bwrap(sb);
                /* With nothing killed there is nothing bwrap would exit for: no grace. */
                bool any_killed = sb->kernel_pidfd >= 0 || sb->init_pidfd >= 0;
                int64_t grace = any_killed ? kb_now_ms() + STOP_GRACE_MS : kb_now_ms();
                if (deadline_ms >= 0 && grace > deadline_ms)
                        grace = deadline_ms;
                if (sb->bwrap_pidfd >= 0)
                        (void) wait_pidfd(sb->bwrap_pidfd, grace);
                if (!reap_bwrap(sb)) {
                        if (sb->init_pidfd >= 0)
                                (void) kb_sandbox_pidfd_send_signal(sb->init_pidfd, SIGKILL);
                        (void) kill(sb->bwrap_pid, SIGKILL); /* unreaped child: pid not reusable */
                        if (sb->bwrap_pidfd >= 0)
                                (void) wait_pidfd(sb->bwrap_pidfd, deadline_ms);
                        else
                                while (!reap_bwrap(sb) && kb_ms_left(deadline_ms) != 0)
                                        sleep_ms(PIN_RETRY_MS);
                        if (!reap_bwrap(sb))
                                return -ETIMEDOUT;
                }
        }
        /* bwrap gone is not enough when it was killed: its init may linger for a moment. Init
         * exits only after every process of the namespace is reaped, so its exit means the
         * kernel is gone too. */
        if (sb->init_pidfd >= 0) {
                (void) kb_sandbox_pidfd_send_signal(sb->init_pidfd, SIGKILL);
                if (!wait_pidfd(sb->init_pidfd, deadline_ms))
                        return -ETIMEDOUT;
                /* Reaps it only if it became our child (kbound as a subreaper); else a no-op. */
                siginfo_t si;
                (void) waitid((idtype_t) P_PIDFD, (id_t) sb->init_pidfd, &si, WEXITED | WNOHANG);
        } else if (sb->kernel_pidfd >= 0 && !wait_pidfd(sb->kernel_pidfd, deadline_ms))
                return -ETIMEDOUT;
        /* Every writer of the log is gone: what they wrote is on disk before anyone reads it. */
        kb_log_keeper_settle(sb->log,
                             deadline_ms >= 0 && deadline_ms < kb_now_ms() + 1000 ? deadline_ms : kb_now_ms() + 1000);
        if (ret_status)
                *ret_status = sb->status;
        return 0;
}

int kb_sandbox_try_reap(kb_sandbox *sb, int *ret_status) {
        if (!sb)
                return -EINVAL;
        if (!reap_bwrap(sb))
                return 0;
        if (ret_status)
                *ret_status = sb->status;
        return 1;
}

void kb_sandbox_destroy(kb_sandbox **sbp) {
        if (!sbp || !*sbp)
                return;
        kb_sandbox *sb = *sbp;
        /* Nothing kbound starts outlives it: a bounded stop, then one without bound. */
        if (kb_sandbox_stop(sb, kb_now_ms() + 5000, NULL) < 0)
                (void) kb_sandbox_stop(sb, -1, NULL);
        sandbox_free(sb);
        *sbp = NULL;
}

/* sandbox_audit.c's sandbox: what its launch and its pin set (sandbox-internal.h). */
kb_sandbox *kb_sandbox_audit_new(pid_t launcher, int launcher_pidfd, char **env) {
        kb_sandbox *sb = sandbox_new();
        if (!sb)
                return NULL;
        sb->audited = true;
        sb->bwrap_pid = launcher;
        sb->bwrap_pidfd = launcher_pidfd;
        sb->env = env;
        return sb;
}

void kb_sandbox_audit_pin(kb_sandbox *sb, const kb_sandbox_audit_pinned *p) {
        sb->kernel_pid = p->kernel_pid;
        sb->kernel_pidfd = p->kernel_pidfd;
        sb->kernel_start = p->kernel_start;
        sb->init_pid = p->init_pid;
        sb->init_pidfd = p->init_pidfd;
        sb->pidns_ino = p->pidns_ino;
        sb->workspace_fd = p->workspace_fd;
}
