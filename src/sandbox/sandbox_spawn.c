/* sandbox_spawn.c: starting a program as the sandbox's launcher: its descriptors placed, the user
 * switched, a fresh session keyring, the sandbox's cgroups joined, RLIMIT_AS, the parent-death
 * signal (kb_sandbox_spawn); waiting for such a child, and running one to capture its output. */
#include "kbound/sandbox.h"
#include "base/cleanup.h"
#include "sandbox/sandbox-internal.h"
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/keyctl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Source fds are moved at or above this before fork, so the child's dup2 onto 0..9 never meets
 * an fd that already has the target number. */
#define SPAWN_HIGH_FD 10
/* How often a child without a pidfd is looked at while it is waited for. */
#define WAIT_RETRY_MS 5

/* In the forked child only: async-signal-safe calls, no allocation, no locks. */
static void child_move_fd(int src, int target) {
        if (src == target)
                (void) fcntl(target, F_SETFD, 0); /* dup2 onto itself would keep FD_CLOEXEC */
        else
                (void) dup2(src, target);
}

/* What the child reports through its error pipe when it gives up before (or at) exec. */
typedef struct child_error {
        int stage; /* KB_SPAWN_STAGE_* */
        int err;   /* errno */
} child_error;

static _Noreturn void child_fail(int err_fd, int stage, int err) {
        child_error ce = {.stage = stage, .err = err > 0 ? err : EIO};
        ssize_t w = write(err_fd, &ce, sizeof ce);
        (void) w;
        _exit(127);
}

/* Gives up the host's root for good: no supplementary groups, then gid, then uid (the order that
 * still has the privilege each step needs), and checks nothing of root is left. */
static int child_switch_user(const kb_sandbox_user *u) {
        if (setgroups(0, NULL) < 0 || setresgid(u->gid, u->gid, u->gid) < 0 || setresuid(u->uid, u->uid, u->uid) < 0)
                return errno;
        uid_t ru, eu, su;
        gid_t rg, eg, sg;
        if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
                return errno;
        if (ru != u->uid || eu != u->uid || su != u->uid || rg != u->gid || eg != u->gid || sg != u->gid)
                return EPERM;
        /* Regaining root must be impossible now; if it works, the switch was not real. */
        if (setresuid(0, 0, 0) == 0)
                return EPERM;
        return 0;
}

static _Noreturn void child_exec(const char *path, char *const *argv, char *const *envp, const int src[3],
                                 const int *extra_src, const int *extra_target, size_t n_extra, int err_fd,
                                 int err_target, unsigned max_fd, const kb_spawn_options *o, pid_t parent) {
        /* Dispositions set to SIG_IGN survive exec: a kbound that ignores SIGINT must not hand a
         * kernel that cannot be interrupted. */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_DFL;
        for (int sig = 1; sig < NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void) sigaction(sig, &sa, NULL);
        sigset_t none;
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        /* bwrap's own process (outside the sandbox) leaves kbound's process group: a Ctrl-C in
         * kbound's terminal goes to kbound's group only, and would otherwise kill that bwrap, whose
         * death (--die-with-parent) kills the kernel. kbound decides what a Ctrl-C does (the
         * console interrupts the kernel through its pidfd; check cancels and stops cleanly). */
        if (o && o->new_session)
                (void) setsid();
        else
                (void) setpgid(0, 0);
        /* Into the sandbox's cgroups before anything of bwrap runs: all it starts is counted. */
        for (size_t i = 0; o && i < o->n_join; i++)
                if (write(o->join_fds[i], "0", 1) != 1)
                        child_fail(err_fd, KB_SPAWN_STAGE_SETUP, errno);
        /* bwrap and its init bounded too (the kernel gets it again from PID 2's own setting). */
        if (o && o->rlimit_as) {
                struct rlimit rl = {(rlim_t) o->rlimit_as, (rlim_t) o->rlimit_as};
                if (setrlimit(RLIMIT_AS, &rl) < 0)
                        child_fail(err_fd, KB_SPAWN_STAGE_SETUP, errno);
        }

        child_move_fd(src[0], 0);
        child_move_fd(src[1], 1);
        child_move_fd(src[2], 2);
        for (size_t i = 0; i < n_extra; i++)
                child_move_fd(extra_src[i], extra_target[i]);
        (void) dup3(err_fd, err_target, O_CLOEXEC);
        /* Nothing else of kbound's crosses into bwrap: not sockets, not other kernels' pipes. */
        if (syscall(SYS_close_range, (unsigned) err_target + 1, ~0U, 0) < 0)
                for (unsigned fd = (unsigned) err_target + 1; fd < max_fd; fd++)
                        (void) close((int) fd);
        if (o && o->user && o->user->switch_user) {
                int e = child_switch_user(o->user);
                if (e)
                        child_fail(err_target, KB_SPAWN_STAGE_USER, e);
        }
        /* A fresh, empty, anonymous session keyring: no key of kbound's (nor of the login session
         * it runs in) is possessed by anything in the sandbox. Joined after the user switch, so the
         * keyring belongs to the sandbox's user. ENOSYS: no keys in this kernel; EPERM: keyctl is
         * refused to kbound's whole process tree (a container's seccomp filter), which the sandbox
         * inherits, so no key can be reached either way. */
        if (o && o->chdir_to && chdir(o->chdir_to) < 0)
                child_fail(err_target, KB_SPAWN_STAGE_SETUP, errno);
        if (o && o->new_session_keyring) {
                if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) >= 0) {
                        /* Proof, not hope: the keyring now in place holds no key at all. */
                        long held = syscall(SYS_keyctl, KEYCTL_READ, KEY_SPEC_SESSION_KEYRING, NULL, 0);
                        if (held != 0)
                                child_fail(err_target, KB_SPAWN_STAGE_KEYRING, held > 0 ? EEXIST : errno);
                } else if (errno != ENOSYS && errno != EPERM)
                        child_fail(err_target, KB_SPAWN_STAGE_KEYRING, errno);
        }
        /* After the user switch, which clears it: the child (and whatever it execs without a
         * set-uid bit) dies with the kbound thread that started it. */
        if (o && o->die_with_parent) {
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                        child_fail(err_target, KB_SPAWN_STAGE_SETUP, errno);
                if (getppid() != parent)
                        _exit(127); /* kbound is already gone: nothing to start for */
        }
        execve(path, argv, envp);
        child_fail(err_target, KB_SPAWN_STAGE_EXEC, errno);
}

/* fd duplicated at or above SPAWN_HIGH_FD (CLOEXEC); -1 stays -1. */
static int dup_high(int fd) {
        if (fd < 0)
                return -1;
        int r = fcntl(fd, F_DUPFD_CLOEXEC, SPAWN_HIGH_FD);
        return r < 0 ? -errno : r;
}

int kb_sandbox_spawn(const char *path, char *const *argv, char *const *envp, const kb_spawn_options *o,
                     pid_t *ret_pid) {
        static char *const empty_env[] = {NULL};
        static const kb_spawn_options defaults = {.stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1};
        if (!o)
                o = &defaults;
        if (!path || !argv || !argv[0] || !ret_pid || o->n_extra > KB_SPAWN_EXTRA_MAX)
                return -EINVAL;
        int top_target = 2;
        for (size_t i = 0; i < o->n_extra; i++) {
                if (o->extra_fds[i] < 0 || o->extra_targets[i] < 3 || o->extra_targets[i] >= SPAWN_HIGH_FD - 1)
                        return -EINVAL;
                for (size_t j = 0; j < i; j++)
                        if (o->extra_targets[j] == o->extra_targets[i])
                                return -EINVAL;
                if (o->extra_targets[i] > top_target)
                        top_target = o->extra_targets[i];
        }
        if (!envp)
                envp = empty_env;
        _cleanup_close_ int devnull = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (devnull < 0)
                return -errno;
        int given[3] = {o->stdin_fd < 0 ? devnull : o->stdin_fd, o->stdout_fd < 0 ? devnull : o->stdout_fd,
                        o->stderr_fd < 0 ? devnull : o->stderr_fd};
        int src[3] = {-1, -1, -1};
        int extra_src[KB_SPAWN_EXTRA_MAX] = {-1, -1, -1, -1};
        int errpipe[2] = {-1, -1};
        int r = 0;
        for (int i = 0; i < 3 && r >= 0; i++)
                if ((src[i] = dup_high(given[i])) < 0)
                        r = src[i];
        for (size_t i = 0; i < o->n_extra && r >= 0; i++)
                if ((extra_src[i] = dup_high(o->extra_fds[i])) < 0)
                        r = extra_src[i];
        if (r >= 0 && pipe2(errpipe, O_CLOEXEC) < 0)
                r = -errno;
        int err_w = r >= 0 ? dup_high(errpipe[1]) : -1;
        if (r >= 0 && err_w < 0)
                r = err_w;
        struct rlimit rl;
        unsigned max_fd = 65536;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < max_fd)
                max_fd = (unsigned) rl.rlim_cur;
        int err_target = top_target + 1;
        pid_t parent = getpid();

        pid_t pid = -1;
        if (r >= 0) {
                pid = fork();
                if (pid == 0)
                        child_exec(path, argv, envp, src, extra_src, o->extra_targets, o->n_extra, err_w, err_target,
                                   max_fd, o, parent);
                if (pid < 0)
                        r = -errno;
        }
        for (int i = 0; i < 3; i++)
                kb_closep(&src[i]);
        for (size_t i = 0; i < KB_SPAWN_EXTRA_MAX; i++)
                kb_closep(&extra_src[i]);
        kb_closep(&err_w);
        kb_closep(&errpipe[1]);
        if (r >= 0) {
                child_error ce = {0};
                ssize_t n;
                do
                        n = read(errpipe[0], &ce, sizeof ce);
                while (n < 0 && errno == EINTR);
                if (n == (ssize_t) sizeof ce) {
                        /* The child gave up: it has exited or is about to; reap it. */
                        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                                ;
                        r = ce.err > 0 ? -ce.err : -EIO;
                        if (o->ret_failed_stage)
                                *o->ret_failed_stage = ce.stage;
                } else
                        *ret_pid = pid;
        }
        kb_closep(&errpipe[0]);
        return r;
}

int kb_sandbox_wait_child(pid_t pid, int64_t deadline_ms, int *ret_status) {
        _cleanup_close_ int pidfd = kb_sandbox_pidfd_open(pid);
        for (bool killed = false;;) {
                int status;
                pid_t w = waitpid(pid, &status, WNOHANG);
                if (w == pid) {
                        if (ret_status)
                                *ret_status = status;
                        return killed ? -ETIMEDOUT : 0;
                }
                if (w < 0 && errno != EINTR)
                        return -errno;
                int left = kb_ms_left(deadline_ms);
                if (left == 0 && !killed) {
                        (void) kill(pid, SIGKILL); /* our unreaped child: the pid cannot be reused */
                        killed = true;
                        deadline_ms = -1;
                        continue;
                }
                if (pidfd >= 0) {
                        struct pollfd p = {.fd = pidfd, .events = POLLIN};
                        (void) poll(&p, 1, left < 0 ? -1 : left);
                } else
                        (void) poll(NULL, 0, left < 0 || left > WAIT_RETRY_MS ? WAIT_RETRY_MS : left);
        }
}

int kb_sandbox_run_capture(char *const *argv, char *const *envp, const kb_sandbox_user *user, int extra_fd,
                           int extra_target, size_t max_output, int64_t deadline_ms, int *ret_status,
                           char **ret_output) {
        int out[2];
        if (pipe2(out, O_CLOEXEC) < 0)
                return -errno;
        _cleanup_close_ int rd = out[0];
        pid_t pid;
        kb_spawn_options so = {.stdin_fd = -1,
                               .stdout_fd = out[1],
                               .stderr_fd = out[1],
                               .user = user,
                               .new_session_keyring = user != NULL,
                               .die_with_parent = true,
                               .extra_fds = &extra_fd,
                               .extra_targets = &extra_target,
                               .n_extra = extra_fd >= 0 ? 1 : 0};
        int r = kb_sandbox_spawn(argv[0], argv, envp, &so, &pid);
        close(out[1]);
        if (r < 0)
                return r;
        _cleanup_free_ char *buf = malloc(max_output + 1);
        size_t used = 0;
        bool timed_out = false;
        if (!buf) {
                (void) kill(pid, SIGKILL);
                (void) kb_sandbox_wait_child(pid, -1, NULL);
                return -ENOMEM;
        }
        for (;;) {
                int left = kb_ms_left(deadline_ms);
                struct pollfd p = {.fd = rd, .events = POLLIN};
                int n = left == 0 ? 0 : poll(&p, 1, left);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        timed_out = true;
                        break;
                }
                char chunk[4096];
                ssize_t got = read(rd, chunk, sizeof chunk);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got <= 0)
                        break;
                size_t keep = (size_t) got;
                if (keep > max_output - used)
                        keep = max_output - used; /* keep draining so the child never blocks */
                memcpy(buf + used, chunk, keep);
                used += keep;
        }
        buf[used] = '\0';
        int status = 0;
        r = kb_sandbox_wait_child(pid, timed_out ? kb_now_ms() : deadline_ms, &status);
        if (r < 0)
                return r;
        if (ret_status)
                *ret_status = status;
        if (ret_output)
                *ret_output = TAKE_PTR(buf);
        return 0;
}
