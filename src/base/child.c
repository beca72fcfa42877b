/* child.c: a function run in a forked child, its answer read back over a pipe (child.h). libc only:
 * the static programs compile it in. */
#include "base/child.h"
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

pid_t kb_child_answer(kb_child_fn *fn, void *arg, void *buf, size_t size, ssize_t *ret_got) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid_t pid = fork();
        if (pid < 0) {
                int e = errno;
                close(p[0]);
                close(p[1]);
                return -e;
        }
        if (pid == 0)
                _exit(fn(p[1], arg));
        close(p[1]);
        ssize_t got;
        do
                got = read(p[0], buf, size);
        while (got < 0 && errno == EINTR);
        close(p[0]);
        *ret_got = got;
        return pid;
}
