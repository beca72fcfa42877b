/* inspect_enter.c: a helper process of kbound's that joins a sandbox's user namespace and one of its
 * namespaces, opens descriptors there and hands them back (inspect_diag.c's network namespace,
 * inspect_ipc.c's IPC namespace), so kbound itself joins none. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "evidence/inspect-internal.h"

/* A user namespace is joined only by a process of one thread that shares no filesystem state, so
 * the helper is a process of its own: a vfork, which shares kbound's memory while the calling
 * thread waits (as posix_spawn does), so nothing is copied whatever kbound's size, every signal
 * blocked meanwhile so no handler runs on the shared stack; the helper makes system calls only and
 * writes nothing of the caller's. It is reaped before this returns, so no look ever finds it in the
 * namespace (inspect_holders.c: a fork of this kbound is its own code in any case, never a holder,
 * and one of another kbound's counts if it stays). */
int kb_inspect_enter(int userns, int ns, int nstype, kb_inspect_enter_fn *fn, const void *arg, size_t n, int ret_err[],
                     int ret_fd[]) {
        if (n == 0 || n > KB_INSPECT_ENTER_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                ret_err[i] = 0;
                ret_fd[i] = -1;
        }
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
                /* the helper's own: the caller's are untouched (only system calls here) */
                int err[KB_INSPECT_ENTER_MAX] = {0}, fd[KB_INSPECT_ENTER_MAX];
                for (size_t i = 0; i < n; i++)
                        fd[i] = -1;
                if (setns(userns, CLONE_NEWUSER) < 0 || setns(ns, nstype) < 0) {
                        int e = errno;
                        for (size_t i = 0; i < n; i++)
                                err[i] = e;
                } else
                        fn(arg, err, fd);
                bool sent = true;
                for (size_t i = 0; i < n && sent; i++)
                        sent = kb_fd_send(pair[1], &err[i], sizeof err[i], err[i] ? -1 : fd[i]) >= 0;
                _exit(sent ? 0 : 1);
        }
        int fork_errno = errno;
        (void) pthread_sigmask(SIG_SETMASK, &old, NULL);
        close(pair[1]);
        if (child < 0) {
                close(pair[0]);
                return -fork_errno;
        }
        /* The helper has exited (vfork waits for it): what it sent is queued, or nothing. A
         * descriptor that did not come is the receive's error, for it and every one after it. */
        for (size_t i = 0; i < n; i++) {
                r = kb_fd_recv(pair[0], &ret_err[i], sizeof ret_err[i], &ret_fd[i]);
                if (r < 0) {
                        for (size_t j = i; j < n; j++)
                                ret_err[j] = -r;
                        break;
                }
        }
        for (size_t i = 0; i < n; i++)
                if (!ret_err[i] && ret_fd[i] < 0)
                        ret_err[i] = EIO;
        /* ECHILD: reaped already (SIGCHLD ignored by the program kbound runs in). */
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
                ;
        close(pair[0]);
        return 0;
}
