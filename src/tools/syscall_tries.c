/* syscall_tries.c: the harmless argument set of docs/seccomp.md, one try per refused call, for the
 * probe program and the unit test alike, through any system-call ABI (kbound/sysabi.h). */
#include "syscall_tries.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/io_uring.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

#define KEY_SPEC_PROCESS_KEYRING (-2)
#define KEYCTL_GET_KEYRING_ID 0
#define SYSLOG_ACTION_SIZE_BUFFER 10
#define UFFD_USER_MODE_ONLY 1

/* The raw result of a call: its return value, or -errno. */
static long result(long r) {
        return r < 0 ? -errno : r;
}

/* The try's call through its ABI with up to six arguments (the rest 0): what the kernel returned,
 * or -errno. */
#define SYS_(c, a0, a1, a2, a3, a4, a5, ...)                                                                           \
        kb_sysabi_call((c)->abi, (c)->nr, (long) (a0), (long) (a1), (long) (a2), (long) (a3), (long) (a4), (long) (a5))
#define SYS(...) SYS_(__VA_ARGS__, 0, 0, 0, 0, 0, 0)

/* What a pointer argument points at, where the try's ABI can reach it (below 4 GiB for i386 and
 * x32, whose kernel entry reads 32 bits of a pointer: a 64-bit stack address would reach whatever
 * lies at its low half). */
#define LOW(c, p) kb_sysabi_low((c)->abi, (p), sizeof *(p))
#define LOW_STR(c, s) kb_sysabi_low((c)->abi, (s), sizeof(s))

/* Each try's comment says what the kernel answers when the call is allowed. */

static long try_syslog(const kb_call *c, uint64_t v) {
        return SYS(c, SYSLOG_ACTION_SIZE_BUFFER, NULL, 0); /* the log's size */
}
static long try_acct(const kb_call *c, uint64_t v) {
        /* ENOENT: no file, accounting untouched (never NULL, which switches accounting off) */
        return SYS(c, LOW_STR(c, ""));
}
static long try_uselib(const kb_call *c, uint64_t v) {
        return SYS(c, NULL); /* EFAULT (ENOSYS without CONFIG_USELIB) */
}
static long try_modify_ldt(const kb_call *c, uint64_t v) {
        char buf[16] = {0};
        return SYS(c, 0, LOW(c, &buf), 0); /* reads 0 bytes: 0 */
}
static long try_quotactl(const kb_call *c, uint64_t v) {
        return SYS(c, 0, NULL, 0, NULL); /* no device: ENODEV */
}
static long try_quotactl_fd(const kb_call *c, uint64_t v) {
        return SYS(c, -1, 0, 0, NULL); /* EBADF */
}
static long try_add_key(const kb_call *c, uint64_t v) {
        /* an empty key type: EINVAL before any keyring is looked at, nothing stored */
        return SYS(c, LOW_STR(c, ""), LOW_STR(c, "kbound"), NULL, 0, KEY_SPEC_PROCESS_KEYRING);
}
static long try_keyctl(const kb_call *c, uint64_t v) {
        /* the process keyring's id, without creating it: ENOKEY */
        return SYS(c, KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 0);
}
static long try_request_key(const kb_call *c, uint64_t v) {
        return SYS(c, LOW_STR(c, ""), LOW_STR(c, "kbound"), NULL, 0); /* empty type: EINVAL */
}
static long try_move_pages(const kb_call *c, uint64_t v) {
        return SYS(c, 0, 0, NULL, NULL, NULL, 1); /* MPOL_MF_STRICT: EINVAL */
}
static long try_mbind(const kb_call *c, uint64_t v) {
        return SYS(c, NULL, 0, 0xff, NULL, 0, 0); /* no such mode: EINVAL */
}
static long try_get_mempolicy(const kb_call *c, uint64_t v) {
        return SYS(c, NULL, NULL, 0, NULL, 0x80); /* unknown flag: EINVAL */
}
static long try_set_mempolicy(const kb_call *c, uint64_t v) {
        return SYS(c, 0xff, NULL, 0); /* no such mode: EINVAL */
}
static long try_migrate_pages(const kb_call *c, uint64_t v) {
        return SYS(c, INT_MAX, 0, NULL, NULL); /* no such process: ESRCH */
}
static long try_set_mempolicy_home_node(const kb_call *c, uint64_t v) {
        return SYS(c, 0, 0, 0, 1); /* flags must be 0: EINVAL */
}
static long try_unshare(const kb_call *c, uint64_t v) {
        /* CLONE_VFORK is no unshare flag: EINVAL, even in a single-threaded process */
        return SYS(c, CLONE_NEWUSER | CLONE_VFORK);
}
static long try_unshare_child(const kb_call *c, uint64_t v) {
        /* The real thing: a user namespace, in a forked grandchild that exits at once, so the
         * caller never moves into it. Its exit status carries the errno. */
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                long r = SYS(c, CLONE_NEWUSER);
                _exit(r == 0 ? 0 : (int) (-r > 255 ? 255 : -r));
        }
        int status;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (!WIFEXITED(status))
                return -ECHILD;
        return WEXITSTATUS(status) == 0 ? 0 : -WEXITSTATUS(status);
}
static long try_setns(const kb_call *c, uint64_t v) {
        return SYS(c, -1, 0); /* EBADF */
}
static long try_clone_flag(const kb_call *c, uint64_t flag) {
        /* the namespace flag and CLONE_THREAD without CLONE_SIGHAND: EINVAL before anything is
         * created; the filter looks only at the namespace bit, so it still sees what it refuses */
        long r = SYS(c, (unsigned long) flag | CLONE_THREAD, NULL, NULL, NULL, NULL);
        if (r == 0) /* cannot happen; if it did, this is the new thread, which must go at once */
                syscall(SYS_exit, 0);
        return r;
}
static long try_clone_child(const kb_call *c, uint64_t flag) {
        /* the real thing: a child in the new namespace, which exits at once (a pid) */
        long r = SYS(c, (unsigned long) flag | SIGCHLD, NULL, NULL, NULL, NULL);
        if (r == 0)
                _exit(0);
        if (r > 0) {
                int status;
                while (waitpid((pid_t) r, &status, 0) < 0 && errno == EINTR)
                        ;
                return 0;
        }
        return r;
}
static long try_clone3(const kb_call *c, uint64_t v) {
        return SYS(c, NULL, 0); /* size 0: EINVAL */
}
static long try_mount(const kb_call *c, uint64_t v) {
        return SYS(c, NULL, NULL, NULL, 0, NULL); /* no target: EFAULT */
}
static long try_umount(const kb_call *c, uint64_t v) {
        return SYS(c, NULL); /* i386 only: EFAULT */
}
static long try_umount2(const kb_call *c, uint64_t v) {
        return SYS(c, NULL, 0); /* EFAULT */
}
static long try_pivot_root(const kb_call *c, uint64_t v) {
        return SYS(c, NULL, NULL); /* EFAULT */
}
static long try_chroot(const kb_call *c, uint64_t v) {
        return SYS(c, NULL); /* EFAULT */
}
static long try_open_tree(const kb_call *c, uint64_t v) {
        return SYS(c, -1, NULL, 0); /* EBADF or EFAULT */
}
static long try_move_mount(const kb_call *c, uint64_t v) {
        return SYS(c, -1, NULL, -1, NULL, 0); /* EFAULT, or EPERM */
}
static long try_fsopen(const kb_call *c, uint64_t v) {
        return SYS(c, NULL, 0); /* EFAULT, or EPERM */
}
static long try_fsconfig(const kb_call *c, uint64_t v) {
        return SYS(c, -1, 0, NULL, NULL, 0); /* EINVAL */
}
static long try_fsmount(const kb_call *c, uint64_t v) {
        return SYS(c, -1, 0, 0); /* EBADF, or EPERM */
}
static long try_fspick(const kb_call *c, uint64_t v) {
        return SYS(c, -1, NULL, 0); /* EFAULT, or EPERM */
}
static long try_mount_setattr(const kb_call *c, uint64_t v) {
        return SYS(c, -1, NULL, 0, NULL, 0); /* size 0: EINVAL */
}
static long try_ioctl(const kb_call *c, uint64_t request) {
        char arg[8] = {0};
        return SYS(c, -1, (unsigned long) request, LOW(c, &arg)); /* no fd: EBADF */
}

int kb_tries_open_pty(int *ret_master) {
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

static long try_ioctl_child(const kb_call *c, uint64_t request) {
        /* on the terminal side of a pty nobody reads: TIOCSTI pushes a byte there (root: 0, else
         * EPERM or EIO); a pty is no console, so TIOCLINUX says ENOTTY */
        int master = -1, tty = kb_tries_open_pty(&master);
        if (tty < 0)
                return tty;
        char byte = 0;
        long r = SYS(c, tty, (unsigned long) request, LOW(c, &byte));
        close(tty);
        close(master);
        return r;
}
static long try_ptrace(const kb_call *c, uint64_t v) {
        return SYS(c, PTRACE_PEEKUSER, INT_MAX, 0, 0); /* no such process: ESRCH */
}
static long try_process_vm_rw(const kb_call *c, uint64_t v) {
        return SYS(c, 0, NULL, 0, NULL, 0, 1); /* flags must be 0: EINVAL */
}
static long try_process_madvise(const kb_call *c, uint64_t v) {
        return SYS(c, -1, NULL, 0, 0, 1); /* EINVAL */
}
static long try_kcmp(const kb_call *c, uint64_t v) {
        return SYS(c, INT_MAX, INT_MAX, 0, 0, 0); /* no such process: ESRCH */
}
static long try_pidfd_getfd(const kb_call *c, uint64_t v) {
        return SYS(c, -1, 0, 1); /* flags must be 0: EINVAL */
}
static long try_personality(const kb_call *c, uint64_t v) {
        /* ADDR_NO_RANDOMIZE takes effect only at the next execve; the old value goes back at once
         * if the change was allowed (the old persona) */
        long old = SYS(c, 0xffffffffUL);
        long r = SYS(c, (unsigned long) ADDR_NO_RANDOMIZE);
        if (r >= 0 && old >= 0)
                SYS(c, (unsigned long) old);
        return r;
}
static long try_perf_event_open(const kb_call *c, uint64_t v) {
        return SYS(c, NULL, 0, -1, -1, 0); /* no attributes: EFAULT */
}
static long try_io_uring_setup(const kb_call *c, uint64_t v) {
        /* a one-entry ring, closed at once (an fd; EPERM if kernel.io_uring_disabled) */
        struct io_uring_params params;
        memset(&params, 0, sizeof params);
        long r = SYS(c, 1, LOW(c, &params));
        if (r >= 0)
                close((int) r);
        return r;
}
static long try_io_uring_enter(const kb_call *c, uint64_t v) {
        return SYS(c, -1, 0, 0, 0, NULL, 0); /* EBADF */
}
static long try_io_uring_register(const kb_call *c, uint64_t v) {
        return SYS(c, -1, 0, NULL, 0); /* EBADF (EINVAL on some kernels) */
}
static long try_bpf(const kb_call *c, uint64_t v) {
        return SYS(c, 0x7fff, NULL, 0); /* no such command: EINVAL */
}
static long try_userfaultfd(const kb_call *c, uint64_t v) {
        /* UFFD_USER_MODE_ONLY passes the privilege check; the undefined flag 2 fails: EINVAL */
        return SYS(c, UFFD_USER_MODE_ONLY | 2);
}
static long try_open_by_handle_at(const kb_call *c, uint64_t v) {
        return SYS(c, -1, NULL, 0); /* EBADF or EFAULT */
}
static long try_name_to_handle_at(const kb_call *c, uint64_t v) {
        return SYS(c, -1, NULL, NULL, NULL, 0); /* EFAULT */
}
static long try_kexec_load(const kb_call *c, uint64_t v) {
        /* an undefined flag and too many segments: EINVAL (never 0 segments, which unloads) */
        return SYS(c, 0, 17, NULL, 0x8000);
}
static long try_kexec_file_load(const kb_call *c, uint64_t v) {
        /* an undefined flag, never KEXEC_FILE_UNLOAD: EINVAL */
        return SYS(c, -1, -1, 0, NULL, 0x8000);
}
static long try_init_module(const kb_call *c, uint64_t v) {
        return SYS(c, NULL, 0, LOW_STR(c, "")); /* an empty image: ENOEXEC */
}
static long try_finit_module(const kb_call *c, uint64_t v) {
        return SYS(c, -1, LOW_STR(c, ""), 0); /* EBADF */
}
static long try_delete_module(const kb_call *c, uint64_t v) {
        return SYS(c, NULL, 0); /* EFAULT (never a real name) */
}
static long try_reboot(const kb_call *c, uint64_t v) {
        return SYS(c, 0, 0, 0, NULL); /* wrong magic: EINVAL */
}
static long try_swapon(const kb_call *c, uint64_t v) {
        return SYS(c, NULL, 0x40000000); /* undefined flag, checked first: EINVAL */
}
static long try_swapoff(const kb_call *c, uint64_t v) {
        return SYS(c, NULL); /* EFAULT */
}
static long try_iopl(const kb_call *c, uint64_t v) {
        return SYS(c, 4); /* level > 3: EINVAL */
}
static long try_ioperm(const kb_call *c, uint64_t v) {
        return SYS(c, 0, 0, 0); /* empty range: EINVAL */
}
static long try_settimeofday(const kb_call *c, uint64_t v) {
        /* tv_usec out of range, checked first: EINVAL. Read as a 64-bit timeval (x86_64, x32) the
         * seconds are 2000000 << 32 and the microseconds 2000000; as i386's 32-bit one, 0 and
         * 2000000: no ABI's reading of it is a time the kernel would set. */
        static const int32_t bad[4] = {0, 2000000, 2000000, 0};
        return SYS(c, LOW(c, &bad), NULL);
}
static long try_clock_settime(const kb_call *c, uint64_t v) {
        return SYS(c, 16, NULL); /* no clock 16, checked first: EINVAL (clock_settime64 too) */
}
static long try_stime(const kb_call *c, uint64_t v) {
        return SYS(c, NULL); /* i386 only: the time is read first, from NULL: EFAULT */
}
static long try_vm86(const kb_call *c, uint64_t v) {
        /* i386 only, and a 64-bit kernel has neither vm86 nor vm86old: ENOSYS */
        return SYS(c, 0, NULL);
}

#define HARMLESS(name_, fn_, gated_)                                                                                   \
        { .name = name_, .form = KB_TRY_HARMLESS, .run = fn_, .gated = gated_ }
#define CHILD(name_, fn_, gated_)                                                                                      \
        { .name = name_, .form = KB_TRY_CHILD, .run = fn_, .gated = gated_ }

/* Calls that exist only for 32-bit x86 (umount, vm86, vm86old, stime, clock_settime64) are tried
 * through int 0x80 only: the native ABI has no number for them. */
static const kb_try tries[] = {
        HARMLESS("syslog", try_syslog, true),
        HARMLESS("acct", try_acct, true),
        HARMLESS("uselib", try_uselib, false),
        HARMLESS("modify_ldt", try_modify_ldt, false),
        HARMLESS("vm86", try_vm86, false),
        HARMLESS("vm86old", try_vm86, false),
        HARMLESS("quotactl", try_quotactl, false),
        HARMLESS("quotactl_fd", try_quotactl_fd, false),
        HARMLESS("add_key", try_add_key, false),
        HARMLESS("keyctl", try_keyctl, false),
        HARMLESS("request_key", try_request_key, false),
        HARMLESS("move_pages", try_move_pages, false),
        HARMLESS("mbind", try_mbind, false),
        HARMLESS("get_mempolicy", try_get_mempolicy, false),
        HARMLESS("set_mempolicy", try_set_mempolicy, false),
        HARMLESS("migrate_pages", try_migrate_pages, false),
        HARMLESS("set_mempolicy_home_node", try_set_mempolicy_home_node, false),
        HARMLESS("unshare", try_unshare, false),
        CHILD("unshare", try_unshare_child, true),
        HARMLESS("setns", try_setns, false),
        HARMLESS("clone:CLONE_NEWUSER", try_clone_flag, false),
        CHILD("clone:CLONE_NEWUSER", try_clone_child, true),
        HARMLESS("clone:CLONE_NEWNS", try_clone_flag, false),
        HARMLESS("clone:CLONE_NEWPID", try_clone_flag, false),
        HARMLESS("clone:CLONE_NEWNET", try_clone_flag, false),
        HARMLESS("clone:CLONE_NEWIPC", try_clone_flag, false),
        HARMLESS("clone:CLONE_NEWUTS", try_clone_flag, false),
        HARMLESS("clone:CLONE_NEWCGROUP", try_clone_flag, false),
        HARMLESS("clone3", try_clone3, false),
        HARMLESS("mount", try_mount, false),
        HARMLESS("umount", try_umount, false),
        HARMLESS("umount2", try_umount2, false),
        HARMLESS("pivot_root", try_pivot_root, true),
        HARMLESS("chroot", try_chroot, false),
        HARMLESS("open_tree", try_open_tree, false),
        HARMLESS("move_mount", try_move_mount, false),
        HARMLESS("fsopen", try_fsopen, false),
        HARMLESS("fsconfig", try_fsconfig, false),
        HARMLESS("fsmount", try_fsmount, false),
        HARMLESS("fspick", try_fspick, false),
        HARMLESS("mount_setattr", try_mount_setattr, false),
        HARMLESS("ioctl:TIOCSTI", try_ioctl, false),
        CHILD("ioctl:TIOCSTI", try_ioctl_child, true),
        HARMLESS("ioctl:TIOCLINUX", try_ioctl, false),
        CHILD("ioctl:TIOCLINUX", try_ioctl_child, false),
        HARMLESS("ptrace", try_ptrace, false),
        HARMLESS("process_vm_readv", try_process_vm_rw, false),
        HARMLESS("process_vm_writev", try_process_vm_rw, false),
        HARMLESS("process_madvise", try_process_madvise, false),
        HARMLESS("kcmp", try_kcmp, false),
        HARMLESS("pidfd_getfd", try_pidfd_getfd, false),
        HARMLESS("personality", try_personality, false),
        HARMLESS("perf_event_open", try_perf_event_open, false),
        HARMLESS("io_uring_setup", try_io_uring_setup, true),
        HARMLESS("io_uring_enter", try_io_uring_enter, false),
        HARMLESS("io_uring_register", try_io_uring_register, false),
        HARMLESS("bpf", try_bpf, true),
        HARMLESS("userfaultfd", try_userfaultfd, true),
        HARMLESS("open_by_handle_at", try_open_by_handle_at, true),
        HARMLESS("name_to_handle_at", try_name_to_handle_at, false),
        HARMLESS("kexec_load", try_kexec_load, true),
        HARMLESS("kexec_file_load", try_kexec_file_load, true),
        HARMLESS("init_module", try_init_module, true),
        HARMLESS("finit_module", try_finit_module, true),
        HARMLESS("delete_module", try_delete_module, true),
        HARMLESS("reboot", try_reboot, true),
        HARMLESS("swapon", try_swapon, false),
        HARMLESS("swapoff", try_swapoff, true),
        HARMLESS("iopl", try_iopl, false),
        HARMLESS("ioperm", try_ioperm, false),
        HARMLESS("settimeofday", try_settimeofday, false),
        HARMLESS("clock_settime", try_clock_settime, false),
        HARMLESS("clock_settime64", try_clock_settime, false),
        HARMLESS("stime", try_stime, false),
};

size_t kb_tries_count(void) {
        return ELEMENTSOF(tries);
}

const kb_try *kb_tries_at(size_t i) {
        return i < ELEMENTSOF(tries) ? &tries[i] : NULL;
}

const kb_try *kb_tries_find(const char *name, kb_try_form form) {
        if (!name)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(tries); i++)
                if (tries[i].form == form && strcmp(tries[i].name, name) == 0)
                        return &tries[i];
        return NULL;
}

long kb_tries_family(long family, bool pair) {
        int type = family == AF_NETLINK ? SOCK_RAW : SOCK_STREAM;
        if (pair) {
                int sv[2];
                long r = result(syscall(SYS_socketpair, family, type, 0, sv));
                if (r >= 0) {
                        close(sv[0]);
                        close(sv[1]);
                }
                return r;
        }
        long r = result(syscall(SYS_socket, family, type, 0));
        if (r >= 0)
                close((int) r);
        return r;
}

/* A type flag no kernel defines (the type is SOCK_TYPE_MASK's low four bits plus SOCK_CLOEXEC and
 * SOCK_NONBLOCK): socket(2) and socketpair(2) refuse it with EINVAL before they look at the family
 * (__sys_socket_create, __sys_socketpair; socketcall(2) calls the same), so no socket is made and
 * no family's module loaded, whatever the family. */
#define INERT_TYPE_FLAG 0x10000000L
#define SOCKETCALL_SOCKET 1     /* SYS_SOCKET of linux/net.h */
#define SOCKETCALL_SOCKETPAIR 8 /* SYS_SOCKETPAIR */

long kb_tries_family_inert(const kb_call *c, long family, kb_family_route route) {
        long type = SOCK_STREAM | INERT_TYPE_FLAG;
        switch (route) {
        case KB_FAMILY_SOCKET:
                return SYS(c, family, type, 0);
        case KB_FAMILY_SOCKETPAIR:
                return SYS(c, family, type, 0, NULL);
        case KB_FAMILY_SOCKETCALL_SOCKET:
        case KB_FAMILY_SOCKETCALL_SOCKETPAIR: {
                /* socketcall's arguments are a block of the ABI's unsigned longs: 32-bit ones */
                const uint32_t block[4] = {(uint32_t) family, (uint32_t) type, 0, 0};
                long op = route == KB_FAMILY_SOCKETCALL_SOCKET ? SOCKETCALL_SOCKET : SOCKETCALL_SOCKETPAIR;
                return SYS(c, op, LOW(c, &block));
        }
        }
        return -EINVAL;
}
