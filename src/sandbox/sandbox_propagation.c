/* sandbox_propagation.c: the sandbox's mounts receive no mount events of the host's. */
#include "sandbox/sandbox-internal.h"
#include "base/cleanup.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#define PRIVATE_TIMEOUT_MS 5000

/* bwrap makes the sandbox's mount tree a slave of the host's (MS_SLAVE | MS_REC on its new
 * namespace's root before it builds the new root), and every host path it binds is a copy of a
 * mount that is still a slave of its host peer group: a mount the host makes later under /usr, a
 * writable one included, appears inside (docs/probes.md). No bwrap option turns that off, so
 * kbound does, while bwrap's init waits on the block channel: a child joins the sandbox's mount
 * namespace (through its user namespace when kbound is not root) and makes the whole tree
 * private. From then on nothing the host mounts reaches the sandbox; boundary.write_outside
 * judges the propagation fields of every look, so this is enforcement, not a claim.
 * Returns 0, -ESRCH (init gone), -ETIMEDOUT, or the -errno of the step refused. */
int kb_sandbox_make_mounts_private(pid_t init_pid, int init_pidfd) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int) init_pid);
        _cleanup_close_ int mntns = open(path, O_RDONLY | O_CLOEXEC);
        if (mntns < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        /* The namespace was opened by pid: init still alive after the open (its pidfd not readable)
         * means the pid was still init's then, not a number a stranger was given after init was
         * reaped, whose namespace (as root, the host's own) the child below would make private. */
        if (!kb_sandbox_pidfd_alive(init_pidfd))
                return -ESRCH;
        /* The user namespace that owns the mount namespace, which is not init's own: an
         * unprivileged bwrap builds the mounts in a first user namespace and then moves its
         * processes into a second one, nested in it, that maps only the sandbox's uid. */
        _cleanup_close_ int userns = ioctl(mntns, NS_GET_USERNS);
        if (userns < 0)
                return -errno;
        int status_pipe[2];
        if (pipe2(status_pipe, O_CLOEXEC) < 0)
                return -errno;
        pid_t child = fork();
        if (child < 0) {
                int r = -errno;
                close(status_pipe[0]);
                close(status_pipe[1]);
                return r;
        }
        if (child == 0) {
                /* System calls only from here on: the parent may have other threads. Root joins
                 * the mount namespace directly; kbound's own user (the sandbox's owner) through
                 * the user namespace bwrap made the mounts in, where its owner holds every
                 * capability. */
                int err = 0;
                if (setns(mntns, CLONE_NEWNS) < 0 &&
                    (setns(userns, CLONE_NEWUSER) < 0 || setns(mntns, CLONE_NEWNS) < 0))
                        err = errno;
                /* setns put this child at the namespace's root: bwrap's new root. */
                if (!err && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                        err = errno;
                (void) !write(status_pipe[1], &err, sizeof err);
                _exit(err ? 1 : 0);
        }
        close(status_pipe[1]);
        int err = EIO;
        struct pollfd p = {.fd = status_pipe[0], .events = POLLIN};
        int pr;
        do
                pr = poll(&p, 1, PRIVATE_TIMEOUT_MS);
        while (pr < 0 && errno == EINTR);
        if (pr > 0 && read(status_pipe[0], &err, sizeof err) != (ssize_t) sizeof err)
                err = EIO;
        if (pr == 0) {
                kill(child, SIGKILL);
                err = ETIMEDOUT;
        }
        close(status_pipe[0]);
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
                ;
        return -err;
}
