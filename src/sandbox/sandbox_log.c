/* sandbox_log.c: the kernel's log, bounded (docs/limits.md). bwrap's stdout and stderr, and so
 * the kernel's, are the write end of a pipe; a thread of kbound drains it into the log file and
 * keeps at most the limit on disk, as two halves: when kernel.log has half of it, it becomes
 * kernel.log.1 (the older half, dropped, is counted) and a new kernel.log starts. The kernel never
 * holds a descriptor of the file, so nothing it does can write past the limit, and it is never
 * blocked: what cannot be kept is read and counted as dropped. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "base/facts.h"
#include "sandbox/sandbox-internal.h"
#include "base/cleanup.h"

#define CHUNK (64 * 1024)
#define SETTLE_STEP_MS 2

struct kb_log_keeper {
        pthread_t thread;
        int read_fd;
        int stop_fd; /* eventfd: stop now, whatever is still in the pipe */
        int log_fd;
        char *path, *path_old;
        uint64_t half;
        uint64_t ino; /* the pipe's inode */
        /* Shared with the thread: */
        _Atomic uint64_t written; /* every byte the sandbox wrote and the keeper read */
        _Atomic uint64_t dropped; /* of those, what is no longer on disk (rotated away, or unwritable) */
        _Atomic uint64_t cur;     /* bytes in kernel.log */
        _Atomic bool busy;        /* between a wake-up and the bytes it read being handled */
        _Atomic bool done;        /* end of file: every writer is gone */
};

static void write_all(int fd, const char *buf, size_t n, kb_log_keeper *k) {
        while (n > 0) {
                ssize_t w = write(fd, buf, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0) {
                        /* A full disk or a failing file: counted, never blocking the sandbox. */
                        k->dropped += n;
                        return;
                }
                buf += w;
                n -= (size_t) w;
                k->cur += (uint64_t) w;
        }
}

/* kernel.log becomes kernel.log.1 (what that held is dropped) and a new kernel.log starts. */
static void rotate(kb_log_keeper *k) {
        struct stat st;
        if (stat(k->path_old, &st) == 0)
                k->dropped += (uint64_t) st.st_size;
        int fd = -1;
        if (rename(k->path, k->path_old) == 0)
                fd = open(k->path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
        if (k->log_fd >= 0)
                close(k->log_fd);
        k->log_fd = fd; /* -1: nothing more is kept, all counted as dropped */
        k->cur = 0;
}

static void keep(kb_log_keeper *k, const char *buf, size_t n) {
        k->written += n;
        while (n > 0) {
                if (k->log_fd < 0) {
                        k->dropped += n;
                        return;
                }
                if (k->cur >= k->half)
                        rotate(k);
                if (k->log_fd < 0)
                        continue;
                size_t room = (size_t) (k->half - k->cur), chunk = n < room ? n : room;
                write_all(k->log_fd, buf, chunk, k);
                buf += chunk;
                n -= chunk;
        }
}

static void *keeper_main(void *arg) {
        kb_log_keeper *k = arg;
        char *buf = malloc(CHUNK);
        while (buf) {
                struct pollfd p[2] = {{.fd = k->read_fd, .events = POLLIN}, {.fd = k->stop_fd, .events = POLLIN}};
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (p[1].revents)
                        break;
                k->busy = true;
                ssize_t n = read(k->read_fd, buf, CHUNK);
                if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
                        k->busy = false;
                        continue;
                }
                if (n <= 0)
                        break;
                keep(k, buf, (size_t) n);
                k->busy = false;
        }
        free(buf);
        k->done = true;
        k->busy = false;
        return NULL;
}

static void keeper_free(kb_log_keeper *k) {
        if (!k)
                return;
        kb_closep(&k->read_fd);
        kb_closep(&k->stop_fd);
        kb_closep(&k->log_fd);
        free(k->path);
        free(k->path_old);
        free(k);
}

int kb_log_keeper_start(const char *log_path, int log_fd, uint64_t max, kb_log_keeper **ret, int *ret_write_fd) {
        if (!log_path || log_fd < 0 || max < 2 || !ret || !ret_write_fd)
                return -EINVAL;
        kb_log_keeper *k = calloc(1, sizeof *k);
        if (!k)
                return -ENOMEM;
        k->read_fd = k->stop_fd = k->log_fd = -1;
        k->half = max / 2;
        int pipefd[2] = {-1, -1};
        struct stat st;
        if (!(k->path = strdup(log_path)) || asprintf(&k->path_old, "%s.1", log_path) < 0) {
                k->path_old = NULL;
                keeper_free(k);
                return -ENOMEM;
        }
        if (pipe2(pipefd, O_CLOEXEC) < 0 || (k->stop_fd = eventfd(0, EFD_CLOEXEC)) < 0 ||
            (k->log_fd = fcntl(log_fd, F_DUPFD_CLOEXEC, 3)) < 0 || fstat(pipefd[0], &st) < 0) {
                int e = -errno;
                if (pipefd[0] >= 0)
                        close(pipefd[0]);
                if (pipefd[1] >= 0)
                        close(pipefd[1]);
                keeper_free(k);
                return e;
        }
        k->read_fd = pipefd[0];
        k->ino = (uint64_t) st.st_ino;
        struct stat lst;
        k->cur = fstat(k->log_fd, &lst) == 0 ? (uint64_t) lst.st_size : 0;
        /* Every signal stays with kbound's own threads. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int r = pthread_create(&k->thread, NULL, keeper_main, k);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r != 0) {
                close(pipefd[1]);
                keeper_free(k);
                return -r;
        }
        *ret = k;
        *ret_write_fd = pipefd[1];
        return 0;
}

static void pause_ms(int ms) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long) ms * 1000000L};
        nanosleep(&ts, NULL);
}

void kb_log_keeper_settle(const kb_log_keeper *k, int64_t deadline_ms) {
        if (!k)
                return;
        /* Nothing left in the pipe, then no read in hand: the keeper marks itself busy before it
         * reads, so an empty pipe seen first and an idle keeper seen after mean all is on disk. */
        for (;;) {
                int pending = 0;
                if (k->done || (ioctl(k->read_fd, FIONREAD, &pending) == 0 && pending == 0 && !k->busy))
                        return;
                if (kb_ms_left(deadline_ms) == 0)
                        return;
                pause_ms(SETTLE_STEP_MS);
        }
}

void kb_log_keeper_stop(kb_log_keeper **kp, int64_t deadline_ms) {
        if (!kp || !*kp)
                return;
        kb_log_keeper *k = *kp;
        /* The sandbox's writers are gone (or never were): what they left is drained first. */
        while (!k->done && kb_ms_left(deadline_ms) != 0)
                pause_ms(SETTLE_STEP_MS);
        uint64_t one = 1;
        if (!k->done && write(k->stop_fd, &one, sizeof one) < 0) {
                /* cannot fail for an eventfd below its maximum; the join below still ends it */
        }
        pthread_join(k->thread, NULL);
        keeper_free(k);
        *kp = NULL;
}

json_object *kb_log_keeper_facts(const kb_log_keeper *k) {
        if (!k)
                return NULL;
        json_object *o = json_object_new_object();
        struct stat a, b;
        uint64_t kept = (stat(k->path, &a) == 0 ? (uint64_t) a.st_size : 0) +
                        (stat(k->path_old, &b) == 0 ? (uint64_t) b.st_size : 0);
        char pipe[48];
        snprintf(pipe, sizeof pipe, "pipe:[%llu]", (unsigned long long) k->ino);
        if (!o || kb_fact_set_str(o, FACT_LOG_KEEPER_PIPE, pipe) < 0 ||
            kb_fact_set_int(o, FACT_LOG_KEEPER_MAX, (int64_t) (k->half * 2)) < 0 ||
            kb_fact_set_int(o, FACT_LOG_KEEPER_WRITTEN, (int64_t) k->written) < 0 ||
            kb_fact_set_int(o, FACT_LOG_KEEPER_DROPPED, (int64_t) k->dropped) < 0 ||
            kb_fact_set_int(o, FACT_LOG_KEEPER_KEPT, (int64_t) kept) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}
