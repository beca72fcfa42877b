/* sandbox_workspace.c: the sandbox's writable team folders as the host reaches them. With a size
 * asked, /workspace is a tmpfs bwrap makes (--size --tmpfs), bounded whatever the kernel writes, and
 * so is the kernel's socket folder; the host holds a descriptor of each, opened through bwrap's
 * init before the kernel exists, and copies the workspace out to the team's host folder when that
 * is kept (docs/limits.md). */
#include "kbound/sandbox.h"
#include "base/cleanup.h"
#include "sandbox/sandbox-internal.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

/* How deep and how many entries a copy goes: a kernel can make a million empty files in a tmpfs of
 * any size, and the copy must end by its deadline whatever it left. */
#define COPY_DEPTH_MAX 64
#define COPY_ENTRIES_MAX 100000
#define COPY_CHUNK 65536

int kb_sandbox_folder_open(pid_t init_pid, int init_pidfd, const char *inside, bool tmpfs, const char *host_dir,
                           int *ret_fd) {
        /* The host folder is what a bound one is proven against: without it nothing can be. */
        if (!inside || (!tmpfs && !host_dir))
                return -EINVAL;
        char path[128];
        /* A cut path would name another folder of the sandbox's, and open it as this one. */
        if (snprintf(path, sizeof path, "/proc/%d/root%s", (int) init_pid, inside) >= (int) sizeof path)
                return -ENAMETOOLONG;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        /* The pid was still bwrap's init when the folder was opened (not a recycled one). */
        if (kb_sandbox_pidfd_alive(init_pidfd) <= 0)
                return -ESRCH;
        if (tmpfs) {
                struct statfs sf;
                if (fstatfs(fd, &sf) < 0)
                        return -errno;
                /* Its size is sandbox.resources' to judge, at every look. */
                if (sf.f_type != TMPFS_MAGIC)
                        return -EPERM;
        } else {
                struct stat in, host;
                if (fstat(fd, &in) < 0 || stat(host_dir, &host) < 0)
                        return -errno;
                if (in.st_dev != host.st_dev || in.st_ino != host.st_ino)
                        return -EPERM;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

typedef struct copy_state {
        kb_workspace_copied *out;
        uint64_t max_bytes;
        int64_t deadline_ms;
} copy_state;

/* Copies the regular file name of from into to (created, never replaced), bounded by what is
 * left of max_bytes. Returns 0 or -errno. */
static int copy_file(copy_state *s, int from, int to, const char *name, mode_t mode) {
        _cleanup_close_ int in = openat(from, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        struct stat st;
        if (in < 0 || fstat(in, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL; /* replaced between the listing and the open */
        _cleanup_close_ int outfd =
                openat(to, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode & 0100) ? 0700 : 0600);
        if (outfd < 0)
                return -errno;
        char buf[COPY_CHUNK];
        for (;;) {
                if (s->out->bytes >= s->max_bytes || kb_now_ms() >= s->deadline_ms)
                        return -EFBIG;
                size_t want = sizeof buf;
                if (s->max_bytes - s->out->bytes < want)
                        want = (size_t) (s->max_bytes - s->out->bytes);
                ssize_t n = read(in, buf, want);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return 0;
                for (ssize_t off = 0; off < n;) {
                        ssize_t w = write(outfd, buf + off, (size_t) (n - off));
                        if (w < 0 && errno == EINTR)
                                continue;
                        if (w < 0)
                                return -errno;
                        off += w;
                        s->out->bytes += (uint64_t) w;
                }
        }
}

static void copy_dir(copy_state *s, int from, int to, int depth) {
        _cleanup_close_ int list_fd = openat(from, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = list_fd >= 0 ? fdopendir(list_fd) : NULL;
        if (!d) {
                s->out->skipped++;
                return;
        }
        list_fd = -1; /* the DIR owns it */
        for (struct dirent *e; (e = readdir(d));) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                        continue;
                if (s->out->files + s->out->dirs + s->out->skipped >= COPY_ENTRIES_MAX ||
                    kb_now_ms() >= s->deadline_ms) {
                        s->out->truncated = true;
                        break;
                }
                struct stat st;
                if (fstatat(from, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        s->out->skipped++;
                        continue;
                }
                if (S_ISREG(st.st_mode)) {
                        int r = copy_file(s, from, to, e->d_name, st.st_mode);
                        if (r == -EFBIG)
                                s->out->truncated = true;
                        if (r < 0)
                                s->out->skipped++;
                        else
                                s->out->files++;
                } else if (S_ISDIR(st.st_mode) && depth < COPY_DEPTH_MAX) {
                        _cleanup_close_ int sub_from = -1, sub_to = -1;
                        if (mkdirat(to, e->d_name, 0700) < 0 ||
                            (sub_from = openat(from, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
                            (sub_to = openat(to, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
                                s->out->skipped++;
                                continue;
                        }
                        s->out->dirs++;
                        copy_dir(s, sub_from, sub_to, depth + 1);
                } else
                        s->out->skipped++; /* links, FIFOs, sockets, devices: never recreated on the host */
        }
        closedir(d);
}

int kb_sandbox_workspace_copy_out(int from_fd, const char *to_dir, uint64_t max_bytes, int64_t deadline_ms,
                                  kb_workspace_copied *ret) {
        kb_workspace_copied zero = {0};
        *ret = zero;
        if (from_fd < 0 || !to_dir)
                return -EBADF;
        _cleanup_close_ int to = open(to_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (to < 0)
                return -errno;
        copy_state s = {.out = ret, .max_bytes = max_bytes ? max_bytes : UINT64_MAX, .deadline_ms = deadline_ms};
        copy_dir(&s, from_fd, to, 0);
        return 0;
}
