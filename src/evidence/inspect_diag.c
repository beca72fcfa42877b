/* inspect_diag.c: a sock_diag socket made in another network namespace, which kbound itself never joins. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
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

/* The socket made by a helper that joins userns (the user namespace owning netns), then netns
 * (kb_inspect_enter). */
static void diag_in_helper(const void *arg, int err[], int fd[]) {
        (void) arg;
        fd[0] = kb_sockdiag_open();
        if (fd[0] < 0)
                err[0] = -fd[0];
}

/* Returns the descriptor or -errno (the step the kernel refused). */
static int by_helper(int netns, int userns) {
        int err, fd;
        int r = kb_inspect_enter(userns, netns, CLONE_NEWNET, diag_in_helper, NULL, 1, &err, &fd);
        if (r < 0)
                return r;
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
