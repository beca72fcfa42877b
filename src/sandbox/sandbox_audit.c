/* sandbox_audit.c: a sandbox kbound did not build (`kbound audit`): the kernelspec's own wrapper
 * started as it is, and, once the kernel answers, the kernel pinned and the init of its pid
 * namespace found from the host. */
#include "kbound/sandbox.h"
#include "base/cleanup.h"
#include "base/procfs.h"
#include "base/strv.h"
#include "sandbox/sandbox-internal.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The program argv[0] names: a path as it is, else the first executable of env's PATH. NULL. */
static char *audit_program(const char *name, char *const *env) {
        if (strchr(name, '/'))
                return access(name, X_OK) == 0 ? strdup(name) : NULL;
        const char *path = kb_env_get(env, "PATH");
        const char *cursor = path ? path : KB_SANDBOX_PATH;
        char *candidate = NULL;
        while (kb_path_next(&cursor, name, &candidate) > 0) {
                if (access(candidate, X_OK) == 0)
                        return candidate;
                free(candidate);
                candidate = NULL;
        }
        return NULL;
}

int kb_sandbox_audit_launch(const kb_sandbox_audit_policy *policy, char *const *argv, const char *log_path,
                            kb_sandbox **ret, kb_error **ret_error) {
        if (!policy || !argv || !argv[0] || !log_path || !ret)
                return -EINVAL;
        _cleanup_free_ char *program = audit_program(argv[0], policy->env);
        if (!program)
                return kb_error_make(ret_error, ENOENT,
                                     "the kernelspec's program '%s' was not found or is not executable", argv[0]);
        _cleanup_close_ int log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (log_fd < 0)
                return kb_error_make(ret_error, errno, "cannot open the kernel's log %s: %s", log_path,
                                     strerror(errno));
        /* uid 0 is root's own run (`--as-root`): nothing to drop to. */
        const kb_sandbox_user *user =
                policy->user && policy->user->switch_user && policy->user->uid != 0 ? policy->user : NULL;
        kb_spawn_options so = kb_spawn_options_kernel(log_fd, user);
        so.new_session = true;
        so.chdir_to = policy->chdir_to;
        int stage = 0;
        so.ret_failed_stage = &stage;
        _cleanup_strv_ char **env = kb_strv_copy(policy->env);
        if (!env)
                return -ENOMEM;
        pid_t pid;
        int r = kb_sandbox_spawn(program, argv, env, &so, &pid);
        if (r < 0)
                return kb_error_make(ret_error, -r, "cannot start the kernelspec's program %s (%s): %s", program,
                                     stage == KB_SPAWN_STAGE_USER      ? "switching to the sandbox user"
                                     : stage == KB_SPAWN_STAGE_KEYRING ? "joining a fresh session keyring"
                                                                       : "exec",
                                     strerror(-r));
        int pidfd = kb_sandbox_pidfd_open(pid);
        if (pidfd < 0) {
                (void) kill(pid, SIGKILL);
                (void) kb_sandbox_wait_child(pid, kb_now_ms() + 2000, NULL);
                return kb_error_make(ret_error, -pidfd, "cannot pin the launcher: %s", strerror(-pidfd));
        }
        kb_sandbox *sb = kb_sandbox_audit_new(pid, pidfd, env);
        if (!sb) {
                (void) kb_sandbox_pidfd_send_signal(pidfd, SIGKILL);
                (void) kb_sandbox_wait_child(pid, kb_now_ms() + 2000, NULL);
                close(pidfd);
                return -ENOMEM;
        }
        env = NULL; /* the sandbox's now */
        *ret = sb;
        return 0;
}

/* PID 1 of the pid namespace pidns (a process whose ns/pid is it and whose NSpid ends in 1),
 * pinned. Returns 0, -ESRCH (none found), -errno. */
static int find_init(uint64_t pidns, pid_t *ret_pid, int *ret_pidfd) {
        DIR *d = opendir("/proc");
        if (!d)
                return -errno;
        int r = -ESRCH;
        struct dirent *de;
        while (r == -ESRCH && (de = readdir(d))) {
                char *end;
                pid_t pid;
                uint64_t ino;
                kb_proc_status st;
                if (!kb_sandbox_parse_pid(de->d_name, &end, &pid) || *end ||
                    kb_sandbox_proc_pidns("/proc", pid, &ino) < 0 || ino != pidns ||
                    kb_sandbox_proc_status("/proc", pid, &st) < 0 || st.nspid_depth < 2 || st.nspid_last != 1)
                        continue;
                int pidfd = kb_sandbox_pidfd_open(pid);
                /* Read again once pinned: the pidfd is this process, not a pid reused since. */
                if (pidfd >= 0 && kb_sandbox_proc_pidns("/proc", pid, &ino) == 0 && ino == pidns &&
                    kb_sandbox_pidfd_alive(pidfd)) {
                        *ret_pid = pid;
                        *ret_pidfd = pidfd;
                        r = 0;
                } else if (pidfd >= 0)
                        close(pidfd);
        }
        closedir(d);
        return r;
}

/* The kernel's working folder, or workspace_inside resolved in its root (no link out, no ".."
 * past it), as an O_RDONLY directory descriptor. Returns it or -errno. */
static int open_workspace(pid_t pid, const char *workspace_inside) {
        char path[64];
        if (!workspace_inside) {
                snprintf(path, sizeof path, "/proc/%d/cwd", (int) pid);
                int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                return fd < 0 ? -errno : fd;
        }
        snprintf(path, sizeof path, "/proc/%d/root", (int) pid);
        _cleanup_close_ int root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return -errno;
        struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
        int fd = (int) syscall(SYS_openat2, root, workspace_inside, &how, sizeof how);
        return fd < 0 ? -errno : fd;
}

int kb_sandbox_audit_adopt(kb_sandbox *sb, pid_t kernel_pid, const char *workspace_inside, kb_error **ret_error) {
        if (!kb_sandbox_audited(sb) || kernel_pid <= 0 || (workspace_inside && workspace_inside[0] != '/'))
                return -EINVAL;
        kb_sandbox_audit_pinned p = {
                .kernel_pid = kernel_pid, .kernel_pidfd = -1, .init_pidfd = -1, .workspace_fd = -1};
        _cleanup_close_ int kernel_pidfd = kb_sandbox_pidfd_open(kernel_pid);
        if (kernel_pidfd < 0)
                return kb_error_make(ret_error, -kernel_pidfd, "cannot pin the kernel (pid %d): %s", (int) kernel_pid,
                                     strerror(-kernel_pidfd));
        uint64_t kernel_ns = 0, own_ns = 0;
        int r = kb_sandbox_start_time(kernel_pid, &p.kernel_start);
        if (r >= 0)
                r = kb_sandbox_proc_pidns("/proc", kernel_pid, &kernel_ns);
        if (r >= 0)
                r = kb_sandbox_proc_pidns("/proc", getpid(), &own_ns);
        if (r >= 0 && !kb_sandbox_pidfd_alive(kernel_pidfd))
                r = -ESRCH;
        if (r < 0)
                return kb_error_make(ret_error, -r, "cannot read the kernel (pid %d) from the host: %s",
                                     (int) kernel_pid, strerror(-r));
        _cleanup_close_ int init_pidfd = -1;
        if (kernel_ns != own_ns) {
                /* A pid namespace of its own: its PID 1 and everything in it are the sandbox. */
                r = find_init(kernel_ns, &p.init_pid, &init_pidfd);
                if (r < 0)
                        return kb_error_make(ret_error, -r, "cannot find PID 1 of the kernel's pid namespace: %s",
                                             strerror(-r));
                p.pidns_ino = kernel_ns;
        } else
                p.init_pid = kernel_pid; /* no pid namespace: the kernel and its descendants */
        _cleanup_close_ int ws = open_workspace(kernel_pid, workspace_inside);
        if (ws < 0)
                return kb_error_make(ret_error, -ws, "cannot open the kernel's workspace %s through its root: %s",
                                     workspace_inside ? workspace_inside : "(its working folder)", strerror(-ws));
        p.kernel_pidfd = TAKE_FD(kernel_pidfd);
        p.init_pidfd = TAKE_FD(init_pidfd);
        p.workspace_fd = TAKE_FD(ws);
        kb_sandbox_audit_pin(sb, &p);
        return 0;
}
