/* test_seccomp.c: the seccomp filter, built and loaded in forked children, each blocked call and
 * socket family tried with arguments that do nothing whether or not the call is allowed (the same
 * argument set docs/seccomp.md gives the probe cells), ordinary calls still working, the policy
 * variants, the 32-bit x86 and x32 ABIs; and the same tries without the filter, so a filter that
 * blocks nothing would fail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kbound/seccomp.h"
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

extern char **environ;

/* Calls numbered 424 and up have one number on every architecture kbound runs on; older headers
 * may lack their names. */
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig 431
#endif
#ifndef SYS_fsmount
#define SYS_fsmount 432
#endif
#ifndef SYS_fspick
#define SYS_fspick 433
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef SYS_quotactl_fd
#define SYS_quotactl_fd 443
#endif
#ifndef SYS_set_mempolicy_home_node
#define SYS_set_mempolicy_home_node 450
#endif

#define KEY_SPEC_PROCESS_KEYRING (-2)
#define KEYCTL_GET_KEYRING_ID 0
#define SYSLOG_ACTION_SIZE_BUFFER 10
#define UFFD_USER_MODE_ONLY 1

/* ---------- running one try in a child ---------- */

/* The raw result of a call: its return value, or -errno. */
static long result(long r) {
        return r < 0 ? -errno : r;
}

typedef long (*try_fn)(const void *arg);

typedef struct outcome {
        int load;    /* 0, or -errno from loading the filter */
        long result; /* what the try returned (>= 0) or -errno */
        int signal;  /* the child died of this signal; 0 if it exited */
} outcome;

/* Loads the program in fd into the calling process, as bwrap does: no_new_privs, then
 * seccomp(SECCOMP_SET_MODE_FILTER). Returns 0 or -errno. */
static int load_program(int fd) {
        size_t n;
        int r = kb_seccomp_instructions(fd, &n);
        if (r < 0)
                return r;
        struct sock_filter *insns = calloc(n, sizeof *insns);
        if (!insns)
                return -ENOMEM;
        r = 0;
        if (pread(fd, insns, n * sizeof *insns, 0) != (ssize_t) (n * sizeof *insns))
                r = -EIO;
        else if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                r = -errno;
        else {
                struct sock_fprog prog = {.len = (unsigned short) n, .filter = insns};
                if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                        r = -errno;
        }
        free(insns);
        return r;
}

/* Runs fn(arg) in a forked child, with the program in prog_fd loaded first (none if prog_fd < 0).
 * Every try gets a fresh process, so no try can change what the next one sees. */
static outcome run_child(int prog_fd, try_fn fn, const void *arg) {
        int p[2];
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                /* cmocka catches these to report a failed test; in the child they must kill it, so
                 * the parent sees how the try ended. */
                static const int fatal[] = {SIGILL, SIGSEGV, SIGBUS, SIGFPE, SIGABRT, SIGSYS};
                for (size_t i = 0; i < KB_ELEMENTSOF(fatal); i++)
                        signal(fatal[i], SIG_DFL);
                outcome o = {0};
                if (prog_fd >= 0)
                        o.load = load_program(prog_fd);
                if (o.load == 0)
                        o.result = fn(arg);
                ssize_t w = write(p[1], &o, sizeof o);
                _exit(w == (ssize_t) sizeof o ? 0 : 1);
        }
        close(p[1]);
        outcome o = {0};
        ssize_t got = read(p[0], &o, sizeof o);
        close(p[0]);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (WIFSIGNALED(status)) {
                o.signal = WTERMSIG(status);
                return o;
        }
        assert_int_equal(got, (ssize_t) sizeof o);
        return o;
}

/* ---------- the tries: the harmless argument set of docs/seccomp.md ---------- */

/* "harmless": nothing happens whether the call is allowed or refused, so a probe cell may run it in
 * the kernel's own process. "child": the real thing (a user namespace, a pty injection), run only
 * in a process that exits at once. */
typedef struct try_case {
        const char *name; /* the kb_seccomp_entry it exercises */
        const char *form; /* "harmless" or "child" */
        try_fn run;
        /* The kernel may refuse with the filter's own errno before it reads the arguments (a
         * capability or a sysctl comes first): without root, a run without the filter cannot
         * always tell the kernel's answer from the filter's. */
        bool gated;
} try_case;

static long try_syslog(const void *a) {
        return result(syscall(SYS_syslog, SYSLOG_ACTION_SIZE_BUFFER, NULL, 0)); /* a number */
}
static long try_acct(const void *a) {
        return result(syscall(SYS_acct, "")); /* ENOENT: no file, accounting untouched */
}
#ifdef SYS_uselib
static long try_uselib(const void *a) {
        return result(syscall(SYS_uselib, NULL)); /* EFAULT */
}
#endif
#ifdef SYS_modify_ldt
static long try_modify_ldt(const void *a) {
        char buf[16];
        return result(syscall(SYS_modify_ldt, 0, buf, 0)); /* reads 0 bytes: 0 */
}
#endif
static long try_quotactl(const void *a) {
        return result(syscall(SYS_quotactl, 0, NULL, 0, NULL)); /* no device: ENODEV */
}
static long try_quotactl_fd(const void *a) {
        return result(syscall(SYS_quotactl_fd, -1, 0, 0, NULL)); /* EBADF */
}
static long try_add_key(const void *a) {
        /* an empty key type: EINVAL before any keyring is looked at, nothing stored */
        return result(syscall(SYS_add_key, "", "kbound", NULL, 0, KEY_SPEC_PROCESS_KEYRING));
}
static long try_keyctl(const void *a) {
        /* the process keyring's id, without creating it: ENOKEY */
        return result(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 0));
}
static long try_request_key(const void *a) {
        return result(syscall(SYS_request_key, "", "kbound", NULL, 0)); /* empty type: EINVAL */
}
static long try_move_pages(const void *a) {
        return result(syscall(SYS_move_pages, 0, 0, NULL, NULL, NULL, 1)); /* MPOL_MF_STRICT: EINVAL */
}
static long try_mbind(const void *a) {
        return result(syscall(SYS_mbind, NULL, 0, 0xff, NULL, 0, 0)); /* no such mode: EINVAL */
}
static long try_get_mempolicy(const void *a) {
        return result(syscall(SYS_get_mempolicy, NULL, NULL, 0, NULL, 0x80)); /* unknown flag: EINVAL */
}
static long try_set_mempolicy(const void *a) {
        return result(syscall(SYS_set_mempolicy, 0xff, NULL, 0)); /* no such mode: EINVAL */
}
static long try_migrate_pages(const void *a) {
        return result(syscall(SYS_migrate_pages, INT_MAX, 0, NULL, NULL)); /* no such process: ESRCH */
}
static long try_set_mempolicy_home_node(const void *a) {
        return result(syscall(SYS_set_mempolicy_home_node, 0, 0, 0, 1)); /* flags must be 0: EINVAL */
}
static long try_unshare(const void *a) {
        /* CLONE_VFORK is no unshare flag: EINVAL, even in a single-threaded process */
        return result(syscall(SYS_unshare, CLONE_NEWUSER | CLONE_VFORK));
}
static long try_unshare_child(const void *a) {
        return result(syscall(SYS_unshare, CLONE_NEWUSER)); /* the real thing: a user namespace */
}
static long try_setns(const void *a) {
        return result(syscall(SYS_setns, -1, 0)); /* EBADF */
}
static long try_clone_flag(uint64_t flag) {
        /* CLONE_THREAD without CLONE_SIGHAND: EINVAL before anything is created */
        long r = result(syscall(SYS_clone, (unsigned long) flag | CLONE_THREAD, NULL, NULL, NULL, NULL));
        if (r == 0) /* cannot happen; if it did, this is the new thread, which must go at once */
                syscall(SYS_exit, 0);
        return r;
}
static long try_clone_newuser(const void *a) {
        return try_clone_flag(CLONE_NEWUSER);
}
static long try_clone_newns(const void *a) {
        return try_clone_flag(CLONE_NEWNS);
}
static long try_clone_newpid(const void *a) {
        return try_clone_flag(CLONE_NEWPID);
}
static long try_clone_newnet(const void *a) {
        return try_clone_flag(CLONE_NEWNET);
}
static long try_clone_newipc(const void *a) {
        return try_clone_flag(CLONE_NEWIPC);
}
static long try_clone_newuts(const void *a) {
        return try_clone_flag(CLONE_NEWUTS);
}
static long try_clone_newcgroup(const void *a) {
        return try_clone_flag(CLONE_NEWCGROUP);
}
static long try_clone_newuser_child(const void *a) {
        /* the real thing: a child in a new user namespace, which exits at once */
        long r = result(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL));
        if (r == 0)
                _exit(0);
        if (r > 0) {
                int status;
                waitpid((pid_t) r, &status, 0);
                return 0;
        }
        return r;
}
static long try_clone3(const void *a) {
        return result(syscall(SYS_clone3, NULL, 0)); /* size 0: EINVAL */
}
static long try_mount(const void *a) {
        return result(syscall(SYS_mount, NULL, NULL, NULL, 0, NULL)); /* no target: EFAULT */
}
static long try_umount2(const void *a) {
        return result(syscall(SYS_umount2, NULL, 0)); /* EFAULT */
}
static long try_pivot_root(const void *a) {
        return result(syscall(SYS_pivot_root, NULL, NULL)); /* EFAULT */
}
static long try_chroot(const void *a) {
        return result(syscall(SYS_chroot, NULL)); /* EFAULT */
}
static long try_open_tree(const void *a) {
        return result(syscall(SYS_open_tree, -1, NULL, 0)); /* EBADF or EFAULT */
}
static long try_move_mount(const void *a) {
        return result(syscall(SYS_move_mount, -1, NULL, -1, NULL, 0)); /* EFAULT, or EPERM */
}
static long try_fsopen(const void *a) {
        return result(syscall(SYS_fsopen, NULL, 0)); /* EFAULT, or EPERM */
}
static long try_fsconfig(const void *a) {
        return result(syscall(SYS_fsconfig, -1, 0, NULL, NULL, 0)); /* EINVAL */
}
static long try_fsmount(const void *a) {
        return result(syscall(SYS_fsmount, -1, 0, 0)); /* EBADF, or EPERM */
}
static long try_fspick(const void *a) {
        return result(syscall(SYS_fspick, -1, NULL, 0)); /* EFAULT, or EPERM */
}
static long try_mount_setattr(const void *a) {
        return result(syscall(SYS_mount_setattr, -1, NULL, 0, NULL, 0)); /* size 0: EINVAL */
}
static long try_tiocsti(const void *a) {
        char c = 0;
        return result(syscall(SYS_ioctl, -1, TIOCSTI, &c)); /* EBADF */
}
static long try_tioclinux(const void *a) {
        char subcode = 0;
        return result(syscall(SYS_ioctl, -1, TIOCLINUX, &subcode)); /* EBADF */
}
/* Opens a pty pair; returns the terminal (slave) side, or -errno. */
static int open_pty(int *ret_master) {
        int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master < 0)
                return -errno;
        char name[128];
        if (grantpt(master) < 0 || unlockpt(master) < 0 || ptsname_r(master, name, sizeof name) != 0) {
                int e = -errno;
                close(master);
                return e;
        }
        int tty = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (tty < 0) {
                int e = -errno;
                close(master);
                return e;
        }
        *ret_master = master;
        return tty;
}
static long try_pty_ioctl(unsigned long request) {
        int master = -1, tty = open_pty(&master);
        if (tty < 0)
                return tty;
        char c = 0;
        long r = result(syscall(SYS_ioctl, tty, request, &c));
        close(tty);
        close(master);
        return r;
}
static long try_tiocsti_child(const void *a) {
        return try_pty_ioctl(TIOCSTI); /* a byte into a pty nobody reads (root: 0) */
}
static long try_tioclinux_child(const void *a) {
        return try_pty_ioctl(TIOCLINUX); /* a pty is no console: ENOTTY */
}
static long try_ptrace(const void *a) {
        return result(syscall(SYS_ptrace, PTRACE_PEEKUSER, INT_MAX, 0, 0)); /* no such process: ESRCH */
}
static long try_process_vm_readv(const void *a) {
        return result(syscall(SYS_process_vm_readv, 0, NULL, 0, NULL, 0, 1)); /* flags must be 0: EINVAL */
}
static long try_process_vm_writev(const void *a) {
        return result(syscall(SYS_process_vm_writev, 0, NULL, 0, NULL, 0, 1)); /* EINVAL */
}
static long try_process_madvise(const void *a) {
        return result(syscall(SYS_process_madvise, -1, NULL, 0, 0, 1)); /* EINVAL */
}
static long try_kcmp(const void *a) {
        return result(syscall(SYS_kcmp, INT_MAX, INT_MAX, 0, 0, 0)); /* no such process: ESRCH */
}
static long try_pidfd_getfd(const void *a) {
        return result(syscall(SYS_pidfd_getfd, -1, 0, 1)); /* flags must be 0: EINVAL */
}
static long try_personality(const void *a) {
        /* ADDR_NO_RANDOMIZE takes effect only at the next execve; put the old value back at once
         * if the change was allowed. */
        long old = syscall(SYS_personality, 0xffffffffUL);
        long r = result(syscall(SYS_personality, (unsigned long) ADDR_NO_RANDOMIZE));
        if (r >= 0 && old >= 0)
                syscall(SYS_personality, (unsigned long) old);
        return r;
}
static long try_perf_event_open(const void *a) {
        return result(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0)); /* no attributes: EFAULT */
}
static long try_io_uring_setup(const void *a) {
        /* a one-entry ring, closed at once */
        struct io_uring_params params;
        memset(&params, 0, sizeof params);
        long r = result(syscall(SYS_io_uring_setup, 1, &params));
        if (r >= 0)
                close((int) r);
        return r;
}
static long try_io_uring_enter(const void *a) {
        return result(syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0)); /* EBADF */
}
static long try_io_uring_register(const void *a) {
        return result(syscall(SYS_io_uring_register, -1, 0, NULL, 0)); /* EBADF */
}
static long try_bpf(const void *a) {
        return result(syscall(SYS_bpf, 0x7fff, NULL, 0)); /* no such command: EINVAL */
}
static long try_userfaultfd(const void *a) {
        /* UFFD_USER_MODE_ONLY passes the privilege check; the undefined flag 2 fails: EINVAL */
        return result(syscall(SYS_userfaultfd, UFFD_USER_MODE_ONLY | 2));
}
static long try_kexec_load(const void *a) {
        /* an undefined flag and too many segments: EINVAL (never 0 segments, which unloads) */
        return result(syscall(SYS_kexec_load, 0, 17, NULL, 0x8000));
}
static long try_kexec_file_load(const void *a) {
        return result(syscall(SYS_kexec_file_load, -1, -1, 0, NULL, 0x8000)); /* undefined flag: EINVAL */
}
static long try_init_module(const void *a) {
        return result(syscall(SYS_init_module, NULL, 0, "")); /* an empty image: ENOEXEC */
}
static long try_finit_module(const void *a) {
        return result(syscall(SYS_finit_module, -1, "", 0)); /* EBADF */
}
static long try_delete_module(const void *a) {
        return result(syscall(SYS_delete_module, NULL, 0)); /* EFAULT */
}
static long try_open_by_handle_at(const void *a) {
        return result(syscall(SYS_open_by_handle_at, -1, NULL, 0)); /* EBADF or EFAULT */
}
static long try_name_to_handle_at(const void *a) {
        return result(syscall(SYS_name_to_handle_at, -1, NULL, NULL, NULL, 0)); /* EFAULT */
}
static long try_reboot(const void *a) {
        return result(syscall(SYS_reboot, 0, 0, 0, NULL)); /* wrong magic: EINVAL */
}
static long try_swapon(const void *a) {
        return result(syscall(SYS_swapon, NULL, 0x40000000)); /* undefined flag: EINVAL */
}
static long try_swapoff(const void *a) {
        return result(syscall(SYS_swapoff, NULL)); /* EFAULT */
}
#ifdef SYS_iopl
static long try_iopl(const void *a) {
        return result(syscall(SYS_iopl, 4)); /* level > 3: EINVAL */
}
#endif
#ifdef SYS_ioperm
static long try_ioperm(const void *a) {
        return result(syscall(SYS_ioperm, 0, 0, 0)); /* empty range: EINVAL */
}
#endif
static long try_settimeofday(const void *a) {
        struct timeval bad = {.tv_sec = 0, .tv_usec = 2000000};
        return result(syscall(SYS_settimeofday, &bad, NULL)); /* tv_usec out of range: EINVAL */
}
static long try_clock_settime(const void *a) {
        return result(syscall(SYS_clock_settime, 16, NULL)); /* no clock 16: EINVAL */
}

static const try_case tries[] = {
        {"syslog", "harmless", try_syslog, true},
        {"acct", "harmless", try_acct, true},
#ifdef SYS_uselib
        {"uselib", "harmless", try_uselib, false},
#endif
#ifdef SYS_modify_ldt
        {"modify_ldt", "harmless", try_modify_ldt, false},
#endif
        {"quotactl", "harmless", try_quotactl, false},
        {"quotactl_fd", "harmless", try_quotactl_fd, false},
        {"add_key", "harmless", try_add_key, false},
        {"keyctl", "harmless", try_keyctl, false},
        {"request_key", "harmless", try_request_key, false},
        {"move_pages", "harmless", try_move_pages, false},
        {"mbind", "harmless", try_mbind, false},
        {"get_mempolicy", "harmless", try_get_mempolicy, false},
        {"set_mempolicy", "harmless", try_set_mempolicy, false},
        {"migrate_pages", "harmless", try_migrate_pages, false},
        {"set_mempolicy_home_node", "harmless", try_set_mempolicy_home_node, false},
        {"unshare", "harmless", try_unshare, false},
        {"unshare", "child", try_unshare_child, true},
        {"setns", "harmless", try_setns, false},
        {"clone:CLONE_NEWUSER", "harmless", try_clone_newuser, false},
        {"clone:CLONE_NEWUSER", "child", try_clone_newuser_child, true},
        {"clone:CLONE_NEWNS", "harmless", try_clone_newns, false},
        {"clone:CLONE_NEWPID", "harmless", try_clone_newpid, false},
        {"clone:CLONE_NEWNET", "harmless", try_clone_newnet, false},
        {"clone:CLONE_NEWIPC", "harmless", try_clone_newipc, false},
        {"clone:CLONE_NEWUTS", "harmless", try_clone_newuts, false},
        {"clone:CLONE_NEWCGROUP", "harmless", try_clone_newcgroup, false},
        {"clone3", "harmless", try_clone3, false},
        {"mount", "harmless", try_mount, false},
        {"umount2", "harmless", try_umount2, false},
        {"pivot_root", "harmless", try_pivot_root, true},
        {"chroot", "harmless", try_chroot, false},
        {"open_tree", "harmless", try_open_tree, false},
        {"move_mount", "harmless", try_move_mount, false},
        {"fsopen", "harmless", try_fsopen, false},
        {"fsconfig", "harmless", try_fsconfig, false},
        {"fsmount", "harmless", try_fsmount, false},
        {"fspick", "harmless", try_fspick, false},
        {"mount_setattr", "harmless", try_mount_setattr, false},
        {"ioctl:TIOCSTI", "harmless", try_tiocsti, false},
        {"ioctl:TIOCSTI", "child", try_tiocsti_child, true},
        {"ioctl:TIOCLINUX", "harmless", try_tioclinux, false},
        {"ioctl:TIOCLINUX", "child", try_tioclinux_child, false},
        {"ptrace", "harmless", try_ptrace, false},
        {"process_vm_readv", "harmless", try_process_vm_readv, false},
        {"process_vm_writev", "harmless", try_process_vm_writev, false},
        {"process_madvise", "harmless", try_process_madvise, false},
        {"kcmp", "harmless", try_kcmp, false},
        {"pidfd_getfd", "harmless", try_pidfd_getfd, false},
        {"personality", "harmless", try_personality, false},
        {"perf_event_open", "harmless", try_perf_event_open, false},
        {"io_uring_setup", "harmless", try_io_uring_setup, true},
        {"io_uring_enter", "harmless", try_io_uring_enter, false},
        {"io_uring_register", "harmless", try_io_uring_register, false},
        {"bpf", "harmless", try_bpf, true},
        {"userfaultfd", "harmless", try_userfaultfd, true},
        {"kexec_load", "harmless", try_kexec_load, true},
        {"kexec_file_load", "harmless", try_kexec_file_load, true},
        {"init_module", "harmless", try_init_module, true},
        {"finit_module", "harmless", try_finit_module, true},
        {"delete_module", "harmless", try_delete_module, true},
        {"open_by_handle_at", "harmless", try_open_by_handle_at, true},
        {"name_to_handle_at", "harmless", try_name_to_handle_at, false},
        {"reboot", "harmless", try_reboot, true},
        {"swapon", "harmless", try_swapon, false},
        {"swapoff", "harmless", try_swapoff, true},
#ifdef SYS_iopl
        {"iopl", "harmless", try_iopl, false},
#endif
#ifdef SYS_ioperm
        {"ioperm", "harmless", try_ioperm, false},
#endif
        {"settimeofday", "harmless", try_settimeofday, false},
        {"clock_settime", "harmless", try_clock_settime, false},
};

/* ---------- socket families ---------- */

typedef struct family_try {
        long family;
        int type;
        bool pair; /* socketpair(2) rather than socket(2) */
} family_try;

static long try_family(const void *arg) {
        const family_try *t = arg;
        if (t->pair) {
                int sv[2];
                long r = result(syscall(SYS_socketpair, t->family, t->type, 0, sv));
                if (r >= 0) {
                        close(sv[0]);
                        close(sv[1]);
                }
                return r;
        }
        long r = result(syscall(SYS_socket, t->family, t->type, 0));
        if (r >= 0)
                close((int) r);
        return r;
}

/* A type each family accepts, so that an allowed family really yields a socket. */
static int family_type(uint64_t family) {
        return family == 16 /* AF_NETLINK */ ? SOCK_RAW : SOCK_STREAM;
}

/* Families a run without the filter may try: built into every kernel kbound supports. Any other
 * family would make the host kernel load its module on demand (socket(2) does that for anyone),
 * which a test must not do; with the filter loaded nothing reaches that code. */
static bool family_always_built_in(uint64_t family) {
        return family == AF_UNIX || family == AF_INET || family == AF_INET6 || family == AF_NETLINK;
}

/* ---------- helpers ---------- */

static int build(const kb_seccomp_policy *policy) {
        int fd = -1;
        int r = kb_seccomp_build(policy, &fd);
        if (r < 0)
                fail_msg("kb_seccomp_build: %s", strerror(-r));
        return fd;
}

/* A result for a message: "ok (3)" or "EPERM". Rotates through four buffers, so one message can
 * name several results. */
static const char *errname(long r) {
        static char bufs[4][64];
        static unsigned next;
        char *buf = bufs[next++ % 4];
        if (r >= 0)
                snprintf(buf, sizeof bufs[0], "ok (%ld)", r);
        else if (r == LONG_MIN)
                snprintf(buf, sizeof bufs[0], "not run");
        else
                snprintf(buf, sizeof bufs[0], "%s",
                         strerrorname_np((int) -r) ? strerrorname_np((int) -r) : "?");
        return buf;
}

/* Whether two results are the same outcome: both succeeded, or both failed with one errno. */
static bool same_outcome(long a, long b) {
        return (a >= 0 && b >= 0) || a == b;
}

static bool is_root(void) {
        return geteuid() == 0;
}

/* kexec as root decrements kernel.kexec_load_limit_reboot when an administrator set one (-1, the
 * default, means no limit): a run without the filter must not spend it. */
static bool kexec_limit_unset(void) {
        int fd = open("/proc/sys/kernel/kexec_load_limit_reboot", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return true;
        char buf[32] = {0};
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        return n > 0 && strncmp(buf, "-1", 2) == 0;
}

/* Whether the filtered child could load the program at all, and was not killed. */
static void assert_loaded(const outcome *o, const char *what) {
        if (o->signal)
                fail_msg("%s: the child died of signal %d (%s)%s", what, o->signal, strsignal(o->signal),
                         o->signal == SIGSYS ? ": the filter killed it instead of returning an errno" : "");
        if (o->load < 0)
                fail_msg("%s: loading the filter failed: %s", what, strerror(-o->load));
}

/* Runs every try and family against prog_fd and checks each against what policy blocks: blocked
 * entries must give their errno; allowed ones must behave as without the filter (control, which
 * is indexed like tries[]). */
static void check_policy(const kb_seccomp_policy *policy, const long *control) {
        int fd = build(policy);
        for (size_t i = 0; i < KB_ELEMENTSOF(tries); i++) {
                const kb_seccomp_entry *e = kb_seccomp_entry_find(tries[i].name);
                assert_non_null(e);
                outcome o = run_child(fd, tries[i].run, NULL);
                assert_loaded(&o, tries[i].name);
                if (kb_seccomp_blocks(policy, e)) {
                        if (o.result != -e->errnum)
                                fail_msg("%s (%s form): expected %s from the filter, got %s", tries[i].name,
                                         tries[i].form, strerrorname_np(e->errnum), errname(o.result));
                } else if (control[i] == LONG_MIN) {
                        fprintf(stderr,
                                "test_seccomp: NOT compared: %s is left allowed, but its control was not "
                                "run\n",
                                tries[i].name);
                } else if (!same_outcome(o.result, control[i])) {
                        fail_msg("%s (%s form) is left allowed but gave %s (without the filter: %s)",
                                 tries[i].name, tries[i].form, errname(o.result), errname(control[i]));
                }
        }
        for (size_t i = 0; i < kb_seccomp_entry_count(); i++) {
                const kb_seccomp_entry *e = kb_seccomp_entry_at(i);
                if (e->match != KB_SECCOMP_MATCH_FAMILY)
                        continue;
                for (int pair = 0; pair <= 1; pair++) {
                        family_try t = {
                                .family = (long) e->value, .type = family_type(e->value), .pair = pair};
                        outcome o = run_child(fd, try_family, &t);
                        assert_loaded(&o, e->name);
                        if (kb_seccomp_blocks(policy, e)) {
                                if (o.result != -EAFNOSUPPORT)
                                        fail_msg("%s(%s): expected EAFNOSUPPORT, got %s",
                                                 pair ? "socketpair" : "socket", e->name, errname(o.result));
                                continue;
                        }
                        if (!family_always_built_in(e->value))
                                fail_msg("%s is allowed, but this test cannot try it without the filter",
                                         e->name);
                        outcome c = run_child(-1, try_family, &t);
                        if (!same_outcome(o.result, c.result))
                                fail_msg("%s(%s) is allowed but gave %s (without the filter: %s)",
                                         pair ? "socketpair" : "socket", e->name, errname(o.result),
                                         errname(c.result));
                }
        }
        /* AF_UNIX is never refused. */
        for (int pair = 0; pair <= 1; pair++) {
                family_try t = {.family = AF_UNIX, .type = SOCK_STREAM, .pair = pair};
                outcome o = run_child(fd, try_family, &t);
                assert_loaded(&o, "AF_UNIX");
                if (o.result < 0)
                        fail_msg("AF_UNIX %s refused: %s", pair ? "socketpair" : "socket", errname(o.result));
        }
        close(fd);
}

/* Every try without a filter, indexed like tries[]; filled once by controls(). */
static long control_results[KB_ELEMENTSOF(tries)];
static bool control_done;

/* Runs every try without a filter. Each must come back with something other than the errno the
 * filter gives (so the filtered run proves the filter, not the kernel), except a gated try when
 * not root, which is reported. Fills control[] (indexed like tries[]). */
static void run_controls(long *control) {
        for (size_t i = 0; i < KB_ELEMENTSOF(tries); i++) {
                const kb_seccomp_entry *e = kb_seccomp_entry_find(tries[i].name);
                assert_non_null(e);
                if (strncmp(tries[i].name, "kexec", 5) == 0 && is_root() && !kexec_limit_unset()) {
                        fprintf(stderr,
                                "test_seccomp: control NOT run for %s: kernel.kexec_load_limit_reboot is "
                                "set and a root kexec call would spend one\n",
                                tries[i].name);
                        control[i] = LONG_MIN;
                        continue;
                }
                outcome o = run_child(-1, tries[i].run, NULL);
                if (o.signal)
                        fail_msg("%s without the filter: the child died of signal %d", tries[i].name,
                                 o.signal);
                control[i] = o.result;
                if (o.result != -e->errnum)
                        continue;
                if (tries[i].gated && !is_root()) {
                        fprintf(stderr,
                                "test_seccomp: control NOT conclusive for %s (%s form): the kernel itself "
                                "answered %s (it checks privilege first; run as root to tell)\n",
                                tries[i].name, tries[i].form, strerrorname_np(e->errnum));
                        continue;
                }
                fail_msg("%s (%s form) without the filter gave %s, the filter's own errno: the try cannot "
                         "tell "
                         "the filter from the kernel",
                         tries[i].name, tries[i].form, errname(o.result));
        }
}

static const long *controls(void) {
        if (!control_done) {
                run_controls(control_results);
                control_done = true;
        }
        return control_results;
}

/* ---------- tests ---------- */

static void test_table(void **state) {
        size_t n = kb_seccomp_entry_count();
        assert_true(n > 100);
        assert_null(kb_seccomp_entry_at(n));
        for (size_t i = 0; i < n; i++) {
                const kb_seccomp_entry *e = kb_seccomp_entry_at(i);
                assert_non_null(e->name);
                assert_non_null(e->syscall);
                assert_true(e->why && strlen(e->why) > 10);
                assert_true(e->anchors && *e->anchors);
                assert_ptr_equal(kb_seccomp_entry_find(e->name), e); /* names are unique */
                /* EPERM, except where a caller must fall back (clone3 -> clone, the new mount API),
                 * as Flatpak and systemd do, and EAFNOSUPPORT for families. */
                static const char *const enosys[] = {"clone3",   "open_tree", "move_mount", "fsopen",
                                                     "fsconfig", "fsmount",   "fspick",     "mount_setattr"};
                bool want_enosys = false;
                for (size_t k = 0; k < KB_ELEMENTSOF(enosys); k++)
                        if (strcmp(e->name, enosys[k]) == 0)
                                want_enosys = true;
                if (e->match == KB_SECCOMP_MATCH_FAMILY)
                        assert_int_equal(e->errnum, EAFNOSUPPORT);
                else
                        assert_int_equal(e->errnum, want_enosys ? ENOSYS : EPERM);
                if (e->match == KB_SECCOMP_MATCH_FAMILY)
                        continue;
                /* Every call the native ABI has is tried, in the form a cell may run. */
                int nr = kb_seccomp_entry_syscall_nr(e);
                bool tried = false;
                for (size_t t = 0; t < KB_ELEMENTSOF(tries); t++)
                        if (strcmp(tries[t].name, e->name) == 0 && strcmp(tries[t].form, "harmless") == 0)
                                tried = true;
                if (nr >= 0 && !tried)
                        fail_msg("%s: no harmless try in this test (and so none in docs/seccomp.md)",
                                 e->name);
                if (nr < 0 && tried)
                        fail_msg("%s: tried, but the native ABI has no such call", e->name);
        }
        assert_int_equal(kb_seccomp_entry_syscall_nr(kb_seccomp_entry_find("keyctl")), SYS_keyctl);
        assert_int_equal(kb_seccomp_entry_syscall_nr(NULL), -EINVAL);
        assert_null(kb_seccomp_entry_find("no-such-call"));
        assert_null(kb_seccomp_entry_find(NULL));
        assert_null(kb_seccomp_entry_find("AF_UNIX")); /* never refused, so not in the table */
        const kb_seccomp_entry *vsock = kb_seccomp_entry_find("AF_VSOCK");
        assert_non_null(vsock);
        assert_int_equal(vsock->value, 40);
        const kb_seccomp_entry *sti = kb_seccomp_entry_find("ioctl:TIOCSTI");
        assert_non_null(sti);
        assert_int_equal(sti->value, TIOCSTI);
        assert_int_equal(sti->arg, 1);
}

static void test_policy(void **state) {
        assert_int_equal(kb_seccomp_policy_check(NULL), 0);
        kb_seccomp_policy p = {0};
        assert_int_equal(kb_seccomp_policy_check(&p), 0);
        char *unknown[] = {"keyctl", "no_such_call", NULL};
        p.allow = unknown;
        assert_int_equal(kb_seccomp_policy_check(&p), -EINVAL);
        int fd = -1;
        assert_int_equal(kb_seccomp_build(&p, &fd), -EINVAL);
        assert_int_equal(fd, -1);
        char *family[] = {"AF_VSOCK", NULL};
        p.allow = family;
        assert_int_equal(kb_seccomp_policy_check(&p), -EINVAL);
        char *good[] = {"keyctl", "ioctl:TIOCSTI", NULL};
        p.allow = good;
        assert_int_equal(kb_seccomp_policy_check(&p), 0);
        assert_false(kb_seccomp_blocks(&p, kb_seccomp_entry_find("keyctl")));
        assert_true(kb_seccomp_blocks(&p, kb_seccomp_entry_find("add_key")));
        p.allow = NULL;
        p.sockets = KB_SECCOMP_SOCKETS_MAX_;
        assert_int_equal(kb_seccomp_policy_check(&p), -EINVAL);
        p.sockets = (kb_seccomp_sockets) -1;
        assert_int_equal(kb_seccomp_policy_check(&p), -EINVAL);
        assert_int_equal(kb_seccomp_build(NULL, NULL), -EINVAL);
        /* Under valgrind (no seccomp(2)) the build stops at the kill action, and memcheck sees that
         * error path; elsewhere it succeeds. */
        fd = -1;
        int r = kb_seccomp_build(NULL, &fd);
        if (r == 0) {
                close(fd);
        } else {
                assert_int_equal(r, -EOPNOTSUPP);
                assert_int_equal(fd, -1);
        }

        const char *names[] = {"default", "unix", "inet"};
        for (int i = 0; i < 3; i++) {
                kb_seccomp_sockets s;
                assert_int_equal(kb_seccomp_sockets_from_string(names[i], &s), 0);
                assert_int_equal(s, i);
                assert_string_equal(kb_seccomp_sockets_to_string(s), names[i]);
        }
        kb_seccomp_sockets s;
        assert_int_equal(kb_seccomp_sockets_from_string("INET", &s), -EINVAL);
        assert_int_equal(kb_seccomp_sockets_from_string(NULL, &s), -EINVAL);
        assert_null(kb_seccomp_sockets_to_string(KB_SECCOMP_SOCKETS_MAX_));

        /* Which families each mode refuses. */
        const kb_seccomp_entry *inet = kb_seccomp_entry_find("AF_INET"),
                               *netlink = kb_seccomp_entry_find("AF_NETLINK"),
                               *vsock = kb_seccomp_entry_find("AF_VSOCK");
        assert_true(kb_seccomp_blocks(NULL, inet));
        assert_false(kb_seccomp_blocks(NULL, netlink));
        assert_true(kb_seccomp_blocks(NULL, vsock));
        kb_seccomp_policy unix_only = {.sockets = KB_SECCOMP_SOCKETS_UNIX};
        assert_true(kb_seccomp_blocks(&unix_only, netlink));
        kb_seccomp_policy with_inet = {.sockets = KB_SECCOMP_SOCKETS_INET};
        assert_false(kb_seccomp_blocks(&with_inet, inet));
        assert_false(kb_seccomp_blocks(&with_inet, kb_seccomp_entry_find("AF_INET6")));
        assert_true(kb_seccomp_blocks(&with_inet, vsock));
}

/* The program itself: its fd, its size, and that the only way it kills is a foreign ABI. */
static void test_filter_program(void **state) {
        int fd = build(NULL);
        int flags = fcntl(fd, F_GETFD);
        assert_true(flags >= 0 && (flags & FD_CLOEXEC));
        int seals = fcntl(fd, F_GET_SEALS);
        assert_int_equal(seals, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
        assert_int_equal(lseek(fd, 0, SEEK_CUR), 0);
        assert_int_equal(write(fd, "x", 1), -1); /* sealed */
        assert_int_equal(errno, EPERM);
        size_t n = 0;
        assert_int_equal(kb_seccomp_instructions(fd, &n), 0);
        assert_true(n > 0 && n <= BPF_MAXINSNS);
        assert_int_equal(kb_seccomp_instructions(-1, &n), -EINVAL);

        struct sock_filter *insns = calloc(n, sizeof *insns);
        assert_non_null(insns);
        assert_int_equal(pread(fd, insns, n * sizeof *insns, 0), (ssize_t) (n * sizeof *insns));
        bool kill_process = false;
        for (size_t i = 0; i < n; i++) {
                if (insns[i].code != (BPF_RET | BPF_K))
                        continue;
                uint32_t k = insns[i].k;
                if (k == SECCOMP_RET_KILL_PROCESS) {
                        kill_process = true;
                        continue;
                }
                if (k == SECCOMP_RET_ALLOW)
                        continue;
                uint32_t e = k & SECCOMP_RET_DATA;
                if ((k & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ERRNO ||
                    (e != EPERM && e != ENOSYS && e != EAFNOSUPPORT))
                        fail_msg("instruction %zu returns 0x%08x: neither allow, an errno of the table, nor "
                                 "the "
                                 "bad-architecture kill",
                                 i, k);
        }
        assert_true(kill_process); /* a foreign ABI is killed */
        free(insns);

        /* The same policy builds the same program. */
        int fd2 = build(NULL);
        size_t n2 = 0;
        assert_int_equal(kb_seccomp_instructions(fd2, &n2), 0);
        assert_int_equal(n2, n);
        char *a = malloc(n * 8), *b = malloc(n * 8);
        assert_int_equal(pread(fd, a, n * 8, 0), (ssize_t) (n * 8));
        assert_int_equal(pread(fd2, b, n * 8, 0), (ssize_t) (n * 8));
        assert_memory_equal(a, b, n * 8);
        free(a);
        free(b);
        close(fd2);
        close(fd);
}

/* The default filter refuses every entry with its errno; allowed calls behave as without it; and
 * without the filter every try gets something else (so the filtered run proves the filter). */
static void test_filter_default(void **state) {
        check_policy(NULL, controls());
}

/* Each variant changes exactly what it should: everything else stays as in the default. */
static void test_filter_variants(void **state) {
        const long *control = controls();
        kb_seccomp_policy unix_only = {.sockets = KB_SECCOMP_SOCKETS_UNIX};
        check_policy(&unix_only, control);
        kb_seccomp_policy with_inet = {.sockets = KB_SECCOMP_SOCKETS_INET};
        check_policy(&with_inet, control);
        char *allow[] = {"keyctl", "ioctl:TIOCSTI", "personality", NULL};
        kb_seccomp_policy hatch = {.allow = allow};
        check_policy(&hatch, control);
}

/* Families beyond the table, and a family number with garbage in the high half of the register,
 * are refused (the latter fails closed: the kernel would read AF_UNIX). Only with the filter:
 * without it an unknown family could make the kernel load a module. */
static void test_filter_families_beyond_table(void **state) {
        int fd = build(NULL);
        const long families[] = {46, 100, 255, INT_MAX, -1, (long) 0x100000001L};
        for (size_t i = 0; i < KB_ELEMENTSOF(families); i++)
                for (int pair = 0; pair <= 1; pair++) {
                        family_try t = {.family = families[i], .type = SOCK_STREAM, .pair = pair};
                        outcome o = run_child(fd, try_family, &t);
                        assert_loaded(&o, "family");
                        if (o.result != -EAFNOSUPPORT)
                                fail_msg("%s(%ld): expected EAFNOSUPPORT, got %s",
                                         pair ? "socketpair" : "socket", families[i], errname(o.result));
                }
        close(fd);
}

/* personality: 0 and the query 0xffffffff pass, every other 32-bit value is refused (each
 * single-bit value and each value with a single clear bit exercises one of the 32 rules). */
static long try_personality_values(const void *arg) {
        long r = syscall(SYS_personality, 0xffffffffUL);
        if (r < 0)
                return 1000 + errno;
        if (syscall(SYS_personality, 0UL) < 0)
                return 2000 + errno;
        /* high bits are ignored by the kernel and by the filter alike */
        if (syscall(SYS_personality, 0x1ffffffffUL) < 0)
                return 3000 + errno;
        for (unsigned i = 0; i < 32; i++) {
                unsigned long one = 1UL << i, all_but_one = 0xffffffffUL & ~(1UL << i);
                if (syscall(SYS_personality, one) != -1 || errno != EPERM)
                        return 4000 + i;
                if (syscall(SYS_personality, all_but_one) != -1 || errno != EPERM)
                        return 5000 + i;
        }
        return 0;
}

static void test_filter_personality(void **state) {
        int fd = build(NULL);
        outcome o = run_child(fd, try_personality_values, NULL);
        assert_loaded(&o, "personality");
        if (o.result != 0)
                fail_msg("personality: step %ld failed", o.result);
        close(fd);
}

/* What a kernel does all day still works under the filter, including the clone3 -> clone fallback
 * of glibc's pthread_create and posix_spawn. Returns 0 or the number of the step that failed. */
static void *thread_main(void *arg) {
        return arg;
}

static long try_ordinary(const void *arg) {
        if (getpid() <= 0)
                return 1;
        int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (fd < 0 || write(fd, "x", 1) != 1)
                return 2;
        close(fd);
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0 || write(p[1], "y", 1) != 1)
                return 3;
        int avail = 0;
        if (ioctl(p[0], FIONREAD, &avail) < 0 || avail != 1)
                return 4;
        close(p[0]);
        close(p[1]);
        void *m = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
                return 5;
        munmap(m, 65536);
        int ev = eventfd(0, EFD_CLOEXEC), ep = epoll_create1(EPOLL_CLOEXEC);
        if (ev < 0 || ep < 0)
                return 6;
        close(ev);
        close(ep);
        int mfd = memfd_create("kbound-test", MFD_CLOEXEC);
        if (mfd < 0)
                return 7;
        close(mfd);
        pthread_t th;
        void *back = NULL;
        if (pthread_create(&th, NULL, thread_main, (void *) 42) != 0 || pthread_join(th, &back) != 0 ||
            back != (void *) 42)
                return 8;
        pid_t child = fork();
        if (child < 0)
                return 9;
        if (child == 0)
                _exit(7);
        int status;
        if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 7)
                return 10;
        char *argv[] = {"/bin/true", NULL};
        pid_t spawned;
        if (posix_spawn(&spawned, "/bin/true", NULL, NULL, argv, environ) != 0)
                return 11;
        if (waitpid(spawned, &status, 0) != spawned || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return 12;
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return 13;
        close(sv[0]);
        close(sv[1]);
        int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0);
        if (nl < 0)
                return 14;
        close(nl);
        if (personality(0xffffffff) < 0 || personality(PER_LINUX) < 0)
                return 15;
        int master = -1, tty = open_pty(&master);
        if (tty < 0)
                return 16;
        struct winsize ws;
        if (ioctl(tty, TIOCGWINSZ, &ws) < 0)
                return 17;
        close(tty);
        close(master);
        return 0;
}

static void test_filter_ordinary_calls(void **state) {
        int fd = build(NULL);
        outcome o = run_child(fd, try_ordinary, NULL);
        assert_loaded(&o, "ordinary calls");
        if (o.result != 0)
                fail_msg("an ordinary call failed under the filter: step %ld", o.result);
        close(fd);
}

/* ---------- compat ABIs ---------- */

#if defined(__x86_64__)
/* A 32-bit x86 syscall from 64-bit code. Pointers must lie below 4 GiB. */
static long int80(long nr, long a, long b, long c) {
        long ret;
        __asm__ volatile("int $0x80"
                         : "=a"(ret)
                         : "a"(nr), "b"(a), "c"(b), "d"(c)
                         : "memory", "r8", "r9", "r10", "r11");
        return ret;
}

/* 32-bit x86 numbers (arch/x86/entry/syscalls/syscall_32.tbl). */
#define X86_GETPID 20
#define X86_UMOUNT 22
#define X86_STIME 25
#define X86_SOCKETCALL 102
#define X86_VM86OLD 113
#define X86_PERSONALITY 136
#define X86_KEYCTL 288
#define X86_UNSHARE 310
#define X86_SOCKET 359
#define X86_IO_URING_SETUP 425
#define X86_CLONE3 435
#define SOCKETCALL_SOCKET 1

typedef struct int80_case {
        const char *what;
        long nr, a, b, c;
        long blocked; /* what the filter returns; 0: allowed */
        bool args;    /* b points at a socketcall argument block */
        bool control; /* also run without the filter (never for a family that may not be built in) */
} int80_case;

static const int80_case int80_cases[] = {
        {"getpid", X86_GETPID, 0, 0, 0, 0, false, true},
        {"personality query", X86_PERSONALITY, 0xffffffffL, 0, 0, 0, false, true},
        {"socket(AF_UNIX)", X86_SOCKET, AF_UNIX, SOCK_STREAM, 0, 0, false, true},
        {"keyctl", X86_KEYCTL, KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 0, -EPERM, false, true},
        {"unshare", X86_UNSHARE, CLONE_NEWUSER | CLONE_VFORK, 0, 0, -EPERM, false, true},
        {"umount", X86_UMOUNT, 0, 0, 0, -EPERM, false, true},
        {"stime", X86_STIME, 0, 0, 0, -EPERM, false, true},
        {"vm86old", X86_VM86OLD, 0, 0, 0, -EPERM, false, true},
        {"personality(ADDR_NO_RANDOMIZE)", X86_PERSONALITY, ADDR_NO_RANDOMIZE, 0, 0, -EPERM, false, true},
        {"io_uring_setup", X86_IO_URING_SETUP, 1, 0, 0, -EPERM, false, true},
        {"clone3", X86_CLONE3, 0, 0, 0, -ENOSYS, false, true},
        {"socket(AF_VSOCK)", X86_SOCKET, 40, SOCK_STREAM, 0, -EAFNOSUPPORT, false, false},
        /* socketcall cannot be filtered by family, so its socket operation is refused outright */
        {"socketcall(SOCKET, AF_UNIX)", X86_SOCKETCALL, SOCKETCALL_SOCKET, 0, 0, -EAFNOSUPPORT, true, true},
};

static long try_int80(const void *arg) {
        const int80_case *c = arg;
        long a = c->a, b = c->b;
        if (c->args) {
                uint32_t *block = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
                if (block == MAP_FAILED)
                        return -ENOMEM;
                block[0] = AF_UNIX;
                block[1] = SOCK_STREAM;
                block[2] = 0;
                b = (long) (uintptr_t) block;
        }
        long r = int80(c->nr, a, b, c->c);
        if (c->nr == X86_PERSONALITY && c->a != 0xffffffffL && r >= 0)
                int80(X86_PERSONALITY, r, 0, 0); /* allowed after all: put it back */
        return r;
}

static long try_int80_getpid(const void *arg) {
        return int80(X86_GETPID, 0, 0, 0);
}

/* x32 syscalls are the x86_64 numbers with bit 30 set; kernels usually leave x32 off. */
#define X32_BIT 0x40000000L
static long try_x32(const void *arg) {
        const long *nr_args = arg;
        return result(syscall(X32_BIT | nr_args[0], nr_args[1], nr_args[2], nr_args[3]));
}
#endif

static void test_filter_x86_32(void **state) {
#if defined(__x86_64__)
        /* Can this machine run a 32-bit syscall at all? Killed (no IA32 emulation: SIGSEGV;
         * valgrind does not emulate int 0x80 in 64-bit code: SIGILL) or ENOSYS means no. */
        outcome probe = run_child(-1, try_int80_getpid, NULL);
        if (probe.signal || probe.result <= 0) {
                fprintf(stderr,
                        "test_seccomp: NOT running the 32-bit x86 checks: int 0x80 getpid in a child %s%s\n",
                        probe.signal ? "died of signal " : "returned ",
                        probe.signal ? strsignal(probe.signal) : errname(probe.result));
                return;
        }
        int fd = build(NULL);
        for (size_t i = 0; i < KB_ELEMENTSOF(int80_cases); i++) {
                const int80_case *c = &int80_cases[i];
                outcome o = run_child(fd, try_int80, c);
                assert_loaded(&o, c->what);
                if (c->blocked) {
                        if (o.result != c->blocked)
                                fail_msg("x86 %s: expected %s, got %s", c->what,
                                         strerrorname_np((int) -c->blocked), errname(o.result));
                        if (!c->control)
                                continue;
                        /* and without the filter the kernel answers something else */
                        outcome u = run_child(-1, try_int80, c);
                        if (u.signal || u.result == c->blocked)
                                fail_msg("x86 %s without the filter: %s: the try cannot tell the filter from "
                                         "the kernel",
                                         c->what, u.signal ? "killed" : errname(u.result));
                } else if (o.result < 0) {
                        fail_msg("x86 %s: refused under the filter: %s", c->what, errname(o.result));
                }
        }
        close(fd);
#else
        fprintf(stderr, "test_seccomp: NOT running the 32-bit x86 checks: not an x86_64 build\n");
#endif
}

static void test_filter_x32(void **state) {
#if defined(__x86_64__)
        static const long getpid_args[] = {SYS_getpid, 0, 0, 0};
        outcome probe = run_child(-1, try_x32, getpid_args);
        if (probe.signal || probe.result <= 0) {
                fprintf(stderr,
                        "test_seccomp: NOT running the x32 checks: this kernel does not run x32 syscalls "
                        "(x32 getpid %s)\n",
                        probe.signal ? "killed the child" : errname(probe.result));
                return;
        }
        int fd = build(NULL);
        static const long keyctl_args[] = {SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 0};
        static const long vsock_args[] = {SYS_socket, 40, SOCK_STREAM, 0};
        outcome o = run_child(fd, try_x32, keyctl_args);
        assert_loaded(&o, "x32 keyctl");
        assert_int_equal(o.result, -EPERM);
        o = run_child(fd, try_x32, vsock_args);
        assert_loaded(&o, "x32 socket");
        assert_int_equal(o.result, -EAFNOSUPPORT);
        o = run_child(fd, try_x32, getpid_args);
        assert_loaded(&o, "x32 getpid");
        assert_true(o.result > 0);
        close(fd);
#else
        fprintf(stderr, "test_seccomp: NOT running the x32 checks: not an x86_64 build\n");
#endif
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_table),
                cmocka_unit_test(test_policy),
                cmocka_unit_test(test_filter_program),
                cmocka_unit_test(test_filter_default),
                cmocka_unit_test(test_filter_variants),
                cmocka_unit_test(test_filter_families_beyond_table),
                cmocka_unit_test(test_filter_personality),
                cmocka_unit_test(test_filter_ordinary_calls),
                cmocka_unit_test(test_filter_x86_32),
                cmocka_unit_test(test_filter_x32),
        };
        /* valgrind 3.19 does not implement seccomp(2) (syscall 317): libseccomp cannot confirm the
         * kill action while building, and no child could load the program. Everything that builds
         * or loads a filter is then left out, and said so; the normal and sanitizer runs do it. A
         * kernel without seccomp(2) outside valgrind is a real failure: the tests then fail. */
        uint32_t kill_process = SECCOMP_RET_KILL_PROCESS;
        if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &kill_process) < 0 && RUNNING_ON_VALGRIND) {
                fprintf(stderr,
                        "test_seccomp: NOT running test_filter_* under valgrind: it does not implement "
                        "seccomp(2), so no filter can be built or loaded here\n");
                cmocka_set_skip_filter("test_filter_*");
        }
        return cmocka_run_group_tests(tests, NULL, NULL);
}
