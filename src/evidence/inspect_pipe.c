/* inspect_pipe.c: whether a pipe's other end still exists anywhere, from a copy of the end a sandbox process holds. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "evidence/inspect-internal.h"
#include "base/cleanup.h"

/* A pipe's other end may be held where no descriptor table shows it (a descriptor in flight in a
 * socket's queue, an io_uring's registered files): the host cannot list those, but the pipe itself
 * counts its readers and writers, and poll tells whether the count of the other side is zero. A
 * copy of the end (pidfd_getfd: the same open file, so no reader or writer added on the polled
 * side's other side) is polled without waiting and closed. */
/* PIDFD_THREAD (Linux 6.9): a pidfd of one thread, not of its thread group. */
#define PIDFD_THREAD_FLAG O_EXCL

int kb_inspect_pipe_other_end(const char *proc_root, pid_t pid, long fd, json_object *o) {
        const char *why = NULL;
        int64_t flags;
        /* pid is a process of /proc, or a thread of /proc/<pid>/task whose own descriptor table
         * (unshare(CLONE_FILES)) fd is in: a pidfd of that very thread copies from its table. */
        int owner = 0, end_of_root = 0;
        bool thread = sscanf(proc_root, "/proc/%d/task%n", &owner, &end_of_root) == 1 && end_of_root > 0 &&
                      proc_root[end_of_root] == '\0';
        if (strcmp(proc_root, "/proc") != 0 && !thread)
                why = "not a live /proc";
        else if (!kb_fact_int_of(o, FACT_FD_FLAGS, &flags))
                why = "its flags were not read";
        else if ((flags & 03) == 02)
                why = "opened for reading and writing"; /* a FIFO's: both ends in one, never a pipe(2)'s */
        if (why)
                return kb_fact_set_str(o, FACT_FD_PIPE_ERROR, why) < 0 ? -ENOMEM : 0;
        _cleanup_close_ int pidfd = (int) syscall(SYS_pidfd_open, pid, thread ? PIDFD_THREAD_FLAG : 0);
        int copy = pidfd < 0 ? -1 : (int) syscall(SYS_pidfd_getfd, pidfd, (int) fd, 0);
        if (copy < 0)
                return kb_fact_set_str(o, FACT_FD_PIPE_ERROR, strerror(errno)) < 0 ? -ENOMEM : 0;
        _cleanup_close_ int end = copy;
        struct stat st;
        int64_t ino;
        if (fstat(end, &st) < 0 || !kb_fact_int_of(o, FACT_FD_INO, &ino) || (int64_t) st.st_ino != ino)
                return kb_fact_set_str(o, FACT_FD_PIPE_ERROR, "its number was another file's when copied") < 0 ? -ENOMEM
                                                                                                               : 0;
        struct pollfd p = {.fd = end, .events = (flags & 03) == 0 ? POLLIN : POLLOUT};
        if (poll(&p, 1, 0) < 0)
                return kb_fact_set_str(o, FACT_FD_PIPE_ERROR, strerror(errno)) < 0 ? -ENOMEM : 0;
        bool none = (flags & 03) == 0 ? (p.revents & POLLHUP) != 0 : (p.revents & POLLERR) != 0;
        return kb_fact_set_str(o, FACT_FD_PIPE_OTHER_END, none ? "none" : "open") < 0 ? -ENOMEM : 0;
}
