/* report_file.c: a rendered report written where the user asked: a file replaced atomically, or a
 * device or FIFO written as a stream, with a ceiling on what one rendering may hold. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include "kbound/report.h"
#include "base/cleanup.h"

/* Best effort: the rename is already visible; this only makes it survive a crash. */
/* The folder part of path ("." for a bare name), malloc'd; NULL if out of memory. */
static char *dir_of(const char *path) {
        char *copy = strdup(path);
        if (!copy)
                return NULL;
        char *slash = strrchr(copy, '/');
        if (!slash) {
                free(copy);
                return strdup(".");
        }
        if (slash == copy)
                slash[1] = '\0';
        else
                *slash = '\0';
        return copy;
}

static void fsync_parent_dir(const char *path) {
        _cleanup_free_ char *dir = dir_of(path);
        if (!dir)
                return;
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0)
                (void) fsync(fd);
}

/* Whether we may create and rename entries in path's folder. */
static int dir_writable(const char *path) {
        _cleanup_free_ char *dir = dir_of(path);
        if (!dir)
                return -ENOMEM;
        struct stat st;
        if (stat(dir, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0)
                return -errno;
        return 0;
}

/* kb_report_check_path, and for KB_REPORT_REPLACE the path to replace: the file a symlink leads
 * to (the link stays a link), or path itself when nothing is there yet (malloc'd). */
static int classify(const char *path, kb_report_target *ret_target, char **ret_real) {
        struct stat st;
        if (!path || !path[0])
                return -EINVAL;
        if (stat(path, &st) < 0) {
                if (errno != ENOENT)
                        return -errno;
                /* Nothing there, or a symlink to nothing: only the first is a new path (renaming
                 * over a dangling link would replace the link, not create what it names). */
                if (lstat(path, &st) == 0)
                        return -ENOENT;
                int r = dir_writable(path);
                if (r < 0)
                        return r;
                if (ret_real && !(*ret_real = strdup(path)))
                        return -ENOMEM;
                *ret_target = KB_REPORT_REPLACE;
                return 0;
        }
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
                /* Never replaced: renaming over /dev/null would destroy it for the whole machine. */
                if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) < 0)
                        return -errno;
                *ret_target = KB_REPORT_STREAM;
                return 0;
        }
        if (!S_ISREG(st.st_mode))
                return -EINVAL; /* a block device or a socket: no place for a report */
        _cleanup_free_ char *real = realpath(path, NULL);
        if (!real)
                return -errno;
        /* A read-only report is refused as a shell redirection would refuse it, though a rename
         * could replace it. */
        if (faccessat(AT_FDCWD, real, W_OK, AT_EACCESS) < 0)
                return -errno;
        int r = dir_writable(real);
        if (r < 0)
                return r;
        if (ret_real)
                *ret_real = TAKE_PTR(real);
        *ret_target = KB_REPORT_REPLACE;
        return 0;
}

/* Whether a file can be made beside real, as write_replace will: one is made and removed at once.
 * The permission bits say yes for root on /proc (a regular file, a writable folder) and on other
 * file systems that refuse new files; only trying tells. */
static int try_create_beside(const char *real) {
        char tmp[PATH_MAX];
        int r = snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", real);
        if (r < 0 || (size_t) r >= sizeof(tmp))
                return -ENAMETOOLONG;
        int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                /* The folder is there (classify saw it): ENOENT here is /proc's way of saying no. */
                return errno == ENOENT || errno == EINVAL ? -EOPNOTSUPP : -errno;
        close(fd);
        return unlink(tmp) < 0 ? -errno : 0;
}

int kb_report_check_path(const char *path, kb_report_target *ret_target) {
        kb_report_target target = KB_REPORT_REPLACE;
        _cleanup_free_ char *real = NULL;
        int r = classify(path, &target, &real);
        if (r < 0)
                return r;
        if (target == KB_REPORT_REPLACE && (r = try_create_beside(real)) < 0)
                return r;
        if (ret_target)
                *ret_target = target;
        return 0;
}

/* A rendering held in memory with a ceiling: the render callbacks write through stdio, and a
 * stream that refuses past KB_REPORT_MAX_BYTES keeps a runaway run object from becoming a
 * runaway allocation. */
typedef struct membuf {
        char *data;
        size_t len, cap;
        bool too_big;
} membuf;

static ssize_t membuf_write(void *cookie, const char *data, size_t n) {
        membuf *m = cookie;
        if (n > KB_REPORT_MAX_BYTES - m->len) {
                m->too_big = true;
                errno = EFBIG;
                return -1;
        }
        if (m->len + n > m->cap) {
                size_t cap = m->cap ? m->cap : 64 * 1024;
                while (cap < m->len + n)
                        cap *= 2;
                char *grown = realloc(m->data, cap);
                if (!grown) {
                        errno = ENOMEM;
                        return -1;
                }
                m->data = grown;
                m->cap = cap;
        }
        memcpy(m->data + m->len, data, n);
        m->len += n;
        return (ssize_t) n;
}

static void membuf_clear(membuf *m) {
        free(m->data);
        *m = (membuf){0};
}

/* Renders run into *m. Returns 0, render's error, -EFBIG past the ceiling, or -ENOMEM. */
static int render_to_memory(json_object *run, int (*render)(json_object *, FILE *), membuf *m) {
        FILE *f = fopencookie(m, "w", (cookie_io_functions_t){.write = membuf_write});
        if (!f)
                return -ENOMEM;
        int r = render(run, f);
        if (fclose(f) != 0 && r >= 0)
                r = -EIO;
        if (m->too_big)
                return -EFBIG;
        return r < 0 ? r : 0;
}

int kb_report_write_fd(json_object *run, int fd, int (*render)(json_object *, FILE *)) {
        if (fd < 0 || !render)
                return -EINVAL;
        _cleanup_(membuf_clear) membuf m = {0};
        int r = render_to_memory(run, render, &m);
        if (r < 0)
                return r;
        return kb_write_all(fd, m.data, m.len);
}

/* Written in place: a character device or a FIFO (a reader must be there: O_NONBLOCK makes
 * opening a FIFO without one fail with -ENXIO instead of waiting forever). Returns 1 if path turned
 * out to be a regular file by now (replace it instead), 0, or -errno. */
static int write_stream(const char *path, const membuf *m) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISREG(st.st_mode))
                return 1; /* swapped since it was checked: opened without O_TRUNC, never written */
        if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
                return -EINVAL;
        /* Blocking writes from here: a slow reader is waited for, not taken for a full pipe. */
        int flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
                return -errno;
        int r = kb_write_all(fd, m->data, m->len);
        if (r < 0)
                return r;
        int closing = TAKE_FD(fd);
        return close(closing) < 0 ? -errno : 0;
}

/* Written beside real and renamed over it: a CI job never reads half a report, and a failed run
 * never leaves a stale-but-valid one. */
static int write_replace(const char *real, const membuf *m) {
        char tmp[PATH_MAX];
        int r = snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", real);
        if (r < 0 || (size_t) r >= sizeof(tmp))
                return -ENAMETOOLONG;
        int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        /* mkstemp makes 0600; a report holds no secrets and CI collectors often run as another user. */
        r = fchmod(fd, 0644) < 0 ? -errno : 0;
        if (r >= 0)
                r = kb_write_all(fd, m->data, m->len);
        if (r >= 0 && fsync(fd) < 0)
                r = -errno; /* a full disk may only say so here */
        if (close(fd) < 0 && r >= 0)
                r = -errno;
        if (r >= 0 && rename(tmp, real) < 0)
                r = -errno;
        if (r < 0) {
                unlink(tmp);
                return r;
        }
        fsync_parent_dir(real);
        return 0;
}

/* After a failed write: the regular file at real (an earlier run's report) is removed, so that a
 * run whose report could not be written never leaves an older verdict where its own should be.
 * Removing needs no space, so it works on the full disk that made the write fail. */
static void remove_earlier(const char *real) {
        struct stat st;
        if (real && lstat(real, &st) == 0 && S_ISREG(st.st_mode) && unlink(real) == 0)
                fsync_parent_dir(real);
}

int kb_report_write_file(json_object *run, const char *path, int (*render)(json_object *, FILE *)) {
        if (!path || !path[0] || !render)
                return -EINVAL;
        /* Rendered first, so nothing is opened or created for a report that cannot be made. */
        _cleanup_(membuf_clear) membuf m = {0};
        int rendered = render_to_memory(run, render, &m);
        kb_report_target target = KB_REPORT_REPLACE;
        _cleanup_free_ char *real = NULL;
        int r = classify(path, &target, &real);
        if (r < 0)
                return rendered < 0 ? rendered : r;
        if (rendered < 0) {
                if (target == KB_REPORT_REPLACE)
                        remove_earlier(real);
                return rendered;
        }
        if (target == KB_REPORT_STREAM) {
                r = write_stream(path, &m);
                if (r <= 0)
                        return r;
                r = classify(path, &target, &real);
                if (r < 0)
                        return r;
                if (target != KB_REPORT_REPLACE)
                        return -EAGAIN; /* it keeps changing under us */
        }
        r = write_replace(real, &m);
        if (r < 0)
                remove_earlier(real);
        return r;
}
