/* inspect_diag.c: a sock_diag socket made in another network namespace, which kbound itself never joins. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/cleanup.h"
#include "evidence/inspect-internal.h"

typedef struct netns_thread {
        int netns, fd, err;
} netns_thread;

static void *diag_thread(void *arg) {
        netns_thread *nt = arg;
        if (setns(nt->netns, CLONE_NEWNET) < 0)
                nt->err = errno;
        else if ((nt->fd = kb_sockdiag_open()) < 0)
                nt->err = -nt->fd;
        return NULL;
}

/* A network namespace is a thread's own: a short-lived thread joins it and makes the socket, which
 * answers for that namespace wherever it is used. Needs CAP_SYS_ADMIN over the namespace's owner
 * (root). Returns the descriptor or -errno. */
static int by_thread(int netns) {
        netns_thread nt = {.netns = netns, .fd = -1};
        pthread_t thread;
        int tr = pthread_create(&thread, NULL, diag_thread, &nt);
        if (tr != 0)
                return -tr;
        if (pthread_join(thread, NULL) != 0)
                return -EIO;
        return nt.fd >= 0 ? nt.fd : -(nt.err ? nt.err : EIO);
}

/* A helper process of kbound that joins userns (the user namespace owning netns, which kbound's
 * own user owns: every capability in it is the owner's), then netns, makes the socket there and
 * hands it back over a socket pair, then exits. A user namespace is joined only by a process of
 * one thread that shares no filesystem state, so the helper is a process of its own: a vfork, which
 * shares kbound's memory while the calling thread waits (as posix_spawn does), so nothing is copied
 * whatever kbound's size, every signal blocked meanwhile so no handler runs on the shared stack;
 * the helper makes system calls only. It is reaped before this returns, so no look ever finds it in
 * the namespace (inspect_holders.c: a fork of this kbound is its own code in any case, never a
 * holder, and one of another kbound's counts if it stays). Returns the descriptor or -errno (the
 * step the kernel refused). */
static int by_helper(int netns, int userns) {
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return -errno;
        sigset_t all, old;
        sigfillset(&all);
        int r = pthread_sigmask(SIG_SETMASK, &all, &old);
        if (r != 0) {
                close(pair[0]);
                close(pair[1]);
                return -r;
        }
        pid_t child = vfork();
        if (child == 0) {
                int err = 0, fd = -1;
                if (setns(userns, CLONE_NEWUSER) < 0 || setns(netns, CLONE_NEWNET) < 0)
                        err = errno;
                else if ((fd = kb_sockdiag_open()) < 0)
                        err = -fd;
                _exit(kb_fd_send(pair[1], &err, sizeof err, err ? -1 : fd) < 0 ? 1 : 0);
        }
        int fork_errno = errno;
        (void) pthread_sigmask(SIG_SETMASK, &old, NULL);
        close(pair[1]);
        int err = EIO, fd = -1;
        if (child < 0)
                err = fork_errno;
        else {
                /* The helper has exited (vfork waits for it): what it sent is queued, or nothing. */
                r = kb_fd_recv(pair[0], &err, sizeof err, &fd);
                if (r < 0)
                        err = -r;
                else if (!err && fd < 0)
                        err = EIO;
                /* ECHILD: reaped already (SIGCHLD ignored by the program kbound runs in). */
                while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        close(pair[0]);
        if (err) {
                if (fd >= 0)
                        close(fd);
                return -err;
        }
        return fd;
}

int kb_inspect_diag_socket(int netns, int userns) {
        int fd = by_thread(netns);
        if (fd >= 0 || userns < 0 || (fd != -EPERM && fd != -EACCES))
                return fd;
        return by_helper(netns, userns);
}
