/* sandbox_stand_in.c: what a bwrap without --size or --disable-userns (0.4 to 0.7) leaves undone, done
 * by kbound from the host the way the option does it, before anything of the kernel runs. */
#include "sandbox/sandbox-internal.h"
#include "base/cleanup.h"
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#define STAND_IN_TIMEOUT_MS 5000
#define SIZED_MAX 8

/* Trust boundary. Both stand-ins run while bwrap's init waits on the block channel: bwrap has built
 * every mount and dropped its capabilities, and nothing of the kernel exists. A child of kbound's
 * joins the user namespace bwrap built the mounts in (bwrap's first; its owner, kbound's user or
 * root, holds every capability there) and
 *  - writes 1 to that namespace's user.max_user_namespaces, as bwrap's --disable-userns does from
 *    the same namespace: the sandbox's processes live in a second user namespace nested in it,
 *    which already counts as that one, so no process of the sandbox can make another (ENOSPC);
 *    a second child, as the sandbox's user in that second namespace, then tries and must be
 *    refused so, as bwrap itself checks;
 *  - joins the sandbox's mount namespace and remounts each in-memory folder bwrap made with its
 *    size (tmpfs keeps every other option on a remount: only size= changes; the mount's own
 *    flags are passed back as they are). What --size would have given: sandbox.resources reads
 *    each size from the sandbox's mount table at every look, whoever set it.
 * Nothing is added to the sandbox: no capability, no program, no descriptor. */

enum step {
        STEP_JOIN_USERNS = 1,
        STEP_SYSCTL,
        STEP_JOIN_MNTNS,
        STEP_NOT_MOUNT,
        STEP_NOT_TMPFS,
        STEP_REMOUNT,
        STEP_USER,
        STEP_JOIN_SANDBOX_USERNS,
        STEP_NESTED,
};

typedef struct child_result {
        int err;
        int step;
        int index; /* which folder, for the remount steps */
} child_result;

/* What the first child does, prepared before fork (a child of a threaded parent makes system calls
 * only). */
typedef struct setup {
        int userns, mntns;
        bool userns_limit;
        size_t n;
        const char *paths[SIZED_MAX];
        char parents[SIZED_MAX][64]; /* "<path>/..", made before fork */
        char options[SIZED_MAX][40];
} setup;

static child_result fail_at(int step, int index, int err) {
        return (child_result){.err = err ? err : EIO, .step = step, .index = index};
}

/* A mount point is the root of its own mount: its device differs from its parent's (every folder
 * sized here is a tmpfs of its own over bwrap's root tmpfs, which has another device). */
static bool mount_root(const char *path, const char *parent) {
        struct stat st, pst;
        return stat(path, &st) == 0 && stat(parent, &pst) == 0 && st.st_dev != pst.st_dev;
}

static child_result do_setup(const setup *s) {
        if (setns(s->userns, CLONE_NEWUSER) < 0)
                return fail_at(STEP_JOIN_USERNS, 0, errno);
        if (s->userns_limit) {
                /* The host's /proc, read as a member of the joined namespace: its own table. */
                int fd = open("/proc/sys/user/max_user_namespaces", O_WRONLY | O_CLOEXEC);
                if (fd < 0)
                        return fail_at(STEP_SYSCTL, 0, errno);
                ssize_t w = write(fd, "1", 1);
                int e = errno;
                close(fd);
                if (w != 1)
                        return fail_at(STEP_SYSCTL, 0, w < 0 ? e : EIO);
        }
        if (s->n == 0)
                return (child_result){0};
        /* setns puts the child at the namespace's root: bwrap's new root, so the paths are the
         * sandbox's. */
        if (setns(s->mntns, CLONE_NEWNS) < 0)
                return fail_at(STEP_JOIN_MNTNS, 0, errno);
        for (size_t i = 0; i < s->n; i++) {
                struct statfs sf;
                struct statvfs sv;
                if (!mount_root(s->paths[i], s->parents[i]))
                        return fail_at(STEP_NOT_MOUNT, (int) i, ENOENT);
                if (statfs(s->paths[i], &sf) < 0 || statvfs(s->paths[i], &sv) < 0)
                        return fail_at(STEP_NOT_TMPFS, (int) i, errno);
                if (sf.f_type != TMPFS_MAGIC)
                        return fail_at(STEP_NOT_TMPFS, (int) i, EXDEV);
                unsigned long flags = MS_REMOUNT;
                flags |= (sv.f_flag & ST_RDONLY) ? MS_RDONLY : 0;
                flags |= (sv.f_flag & ST_NOSUID) ? MS_NOSUID : 0;
                flags |= (sv.f_flag & ST_NODEV) ? MS_NODEV : 0;
                flags |= (sv.f_flag & ST_NOEXEC) ? MS_NOEXEC : 0;
                if (mount(NULL, s->paths[i], NULL, flags, s->options[i]) < 0)
                        return fail_at(STEP_REMOUNT, (int) i, errno);
        }
        return (child_result){0};
}

/* What the second child does: become the sandbox's user, join the sandbox's own user namespace
 * and try to make one more. */
typedef struct nested {
        int sandbox_userns;
        const kb_sandbox_user *user;
} nested;

static child_result do_nested(const nested *n) {
        if (n->user && n->user->switch_user &&
            (setgroups(0, NULL) < 0 || setresgid(n->user->gid, n->user->gid, n->user->gid) < 0 ||
             setresuid(n->user->uid, n->user->uid, n->user->uid) < 0))
                return fail_at(STEP_USER, 0, errno);
        if (setns(n->sandbox_userns, CLONE_NEWUSER) < 0)
                return fail_at(STEP_JOIN_SANDBOX_USERNS, 0, errno);
        if (unshare(CLONE_NEWUSER) == 0)
                return fail_at(STEP_NESTED, 0, EEXIST);
        /* ENOSPC is the limit's own answer; any other refusal says nothing about the limit. */
        return errno == ENOSPC ? (child_result){0} : fail_at(STEP_NESTED, 0, errno);
}

typedef child_result (*child_fn)(const void *arg);

static child_result setup_fn(const void *arg) {
        return do_setup(arg);
}

static child_result nested_fn(const void *arg) {
        return do_nested(arg);
}

/* Runs fn in a child, bounded by STAND_IN_TIMEOUT_MS. */
static child_result run_child(child_fn fn, const void *arg) {
        int status_pipe[2];
        if (pipe2(status_pipe, O_CLOEXEC) < 0)
                return fail_at(0, 0, errno);
        pid_t child = fork();
        if (child < 0) {
                int e = errno;
                close(status_pipe[0]);
                close(status_pipe[1]);
                return fail_at(0, 0, e);
        }
        if (child == 0) {
                child_result res = fn(arg);
                (void) !write(status_pipe[1], &res, sizeof res);
                _exit(res.err ? 1 : 0);
        }
        close(status_pipe[1]);
        child_result res = fail_at(0, 0, EIO);
        struct pollfd p = {.fd = status_pipe[0], .events = POLLIN};
        int pr;
        do
                pr = poll(&p, 1, STAND_IN_TIMEOUT_MS);
        while (pr < 0 && errno == EINTR);
        if (pr > 0 && read(status_pipe[0], &res, sizeof res) != (ssize_t) sizeof res)
                res = fail_at(0, 0, EIO);
        if (pr == 0) {
                kill(child, SIGKILL);
                res = fail_at(0, 0, ETIMEDOUT);
        }
        close(status_pipe[0]);
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
                ;
        return res;
}

static int inode_of(int fd, uint64_t *ret) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        *ret = (uint64_t) st.st_ino;
        return 0;
}

static bool same_ns(int fd, const char *own) {
        struct stat a, b;
        return fstat(fd, &a) == 0 && stat(own, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

static int result_error(const child_result *res, const setup *s, kb_error **ret_error) {
        const char *path = res->index >= 0 && (size_t) res->index < s->n ? s->paths[res->index] : "?";
        switch (res->step) {
        case STEP_JOIN_USERNS:
                return kb_error_make(ret_error, res->err,
                                     "cannot join the user namespace the sandbox's mounts belong to: %s",
                                     strerror(res->err));
        case STEP_SYSCTL:
                return kb_error_make(ret_error, res->err,
                                     "cannot set the sandbox's user.max_user_namespaces (kbound's stand-in for "
                                     "--disable-userns): %s",
                                     strerror(res->err));
        case STEP_JOIN_MNTNS:
                return kb_error_make(ret_error, res->err, "cannot join the sandbox's mount namespace: %s",
                                     strerror(res->err));
        case STEP_NOT_MOUNT:
                return kb_error_make(ret_error, EXDEV,
                                     "the sandbox's %s is not a mount of its own (bwrap made no tmpfs there)", path);
        case STEP_NOT_TMPFS:
                return kb_error_make(ret_error, EXDEV, "the sandbox's %s is not a tmpfs (%s)", path,
                                     strerror(res->err));
        case STEP_REMOUNT:
                return kb_error_make(ret_error, res->err,
                                     "cannot give the sandbox's %s its size (kbound's stand-in for --size): %s", path,
                                     strerror(res->err));
        case STEP_USER:
                return kb_error_make(ret_error, res->err,
                                     "cannot become the sandbox's user to try a nested user namespace: %s",
                                     strerror(res->err));
        case STEP_JOIN_SANDBOX_USERNS:
                return kb_error_make(ret_error, res->err, "cannot join the sandbox's user namespace: %s",
                                     strerror(res->err));
        case STEP_NESTED:
                return res->err == EEXIST
                               ? kb_error_make(
                                         ret_error, EPERM,
                                         "a nested user namespace was made in the sandbox after kbound's stand-in "
                                         "for --disable-userns")
                               : kb_error_make(ret_error, res->err,
                                               "a nested user namespace was refused with %s, not by the sandbox's "
                                               "max_user_namespaces (ENOSPC)",
                                               strerror(res->err));
        default:
                return kb_error_make(ret_error, res->err, "kbound's stand-in for bwrap's options failed: %s",
                                     strerror(res->err));
        }
}

int kb_sandbox_stand_in(pid_t init_pid, int init_pidfd, const kb_sandbox_hardening *h, const kb_sandbox_user *user,
                        kb_error **ret_error) {
        if (!h || (!h->host_sizes && !h->host_userns))
                return 0;
        setup s = {.userns = -1, .mntns = -1, .userns_limit = h->host_userns && h->disable_userns};
        for (const char *const *p = kb_sandbox_sized_paths(); h->host_sizes && *p; p++) {
                uint64_t size = kb_sandbox_sized_size(h, *p);
                if (!size || s.n == SIZED_MAX)
                        continue;
                s.paths[s.n] = *p;
                snprintf(s.parents[s.n], sizeof s.parents[s.n], "%s/..", *p);
                snprintf(s.options[s.n], sizeof s.options[s.n], "size=%llu", (unsigned long long) size);
                s.n++;
        }
        if (!s.userns_limit && s.n == 0)
                return 0;
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int) init_pid);
        _cleanup_close_ int mntns = open(path, O_RDONLY | O_CLOEXEC);
        snprintf(path, sizeof path, "/proc/%d/ns/user", (int) init_pid);
        _cleanup_close_ int sandbox_userns = open(path, O_RDONLY | O_CLOEXEC);
        if (mntns < 0 || sandbox_userns < 0)
                return kb_error_make(ret_error, errno == ENOENT ? ESRCH : errno,
                                     "cannot open the sandbox's namespaces: %s", strerror(errno));
        /* Opened by pid: init still alive after the opens means they are its namespaces, not those of
         * a process given the pid later (as root, the host's own). */
        if (!kb_sandbox_pidfd_alive(init_pidfd))
                return kb_error_make(ret_error, ESRCH, "bwrap's init exited before kbound's stand-ins");
        _cleanup_close_ int userns = ioctl(mntns, NS_GET_USERNS);
        _cleanup_close_ int parent = ioctl(sandbox_userns, NS_GET_PARENT);
        if (userns < 0)
                return kb_error_make(ret_error, errno, "cannot find the user namespace of the sandbox's mounts: %s",
                                     strerror(errno));
        /* Never the host's own: a stand-in there would limit or remount kbound's own world. */
        if (same_ns(userns, "/proc/self/ns/user") || same_ns(mntns, "/proc/self/ns/mnt"))
                return kb_error_make(
                        ret_error, EPERM,
                        "the sandbox's mounts belong to kbound's own namespaces: no stand-in is made there");
        uint64_t owner_ino = 0, parent_ino = 0;
        /* The limit holds the sandbox only from the namespace above its own (bwrap's second). */
        if (s.userns_limit && (parent < 0 || inode_of(parent, &parent_ino) < 0 || inode_of(userns, &owner_ino) < 0 ||
                               parent_ino != owner_ino))
                return kb_error_make(ret_error, EPERM,
                                     "the sandbox's processes are not in a user namespace nested in the one its mounts "
                                     "belong to: user.max_user_namespaces there cannot hold them");
        s.userns = userns;
        s.mntns = mntns;
        child_result res = run_child(setup_fn, &s);
        if (res.err)
                return result_error(&res, &s, ret_error);
        if (s.userns_limit) {
                nested n = {.sandbox_userns = sandbox_userns, .user = user};
                res = run_child(nested_fn, &n);
                if (res.err)
                        return result_error(&res, &s, ret_error);
        }
        return 0;
}
