/* common.c: clock, file, environment and cleanup helpers shared by every module (common.h). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>
#include <json-c/json.h>
#include "kbound/common.h"
#include "base/cleanup.h"

int64_t kb_now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int kb_ms_left(int64_t deadline_ms) {
        if (deadline_ms < 0)
                return -1;
        int64_t left = deadline_ms - kb_now_ms();
        if (left <= 0)
                return 0;
        return left > INT32_MAX ? INT32_MAX : (int) left;
}

void kb_hex_encode(const void *in, size_t n, char *out) {
        static const char digits[] = "0123456789abcdef";
        const unsigned char *p = in;
        for (size_t i = 0; i < n; i++) {
                out[2 * i] = digits[p[i] >> 4];
                out[2 * i + 1] = digits[p[i] & 0x0f];
        }
        out[2 * n] = '\0';
}

int kb_random_hex(char *buf, size_t n_bytes) {
        unsigned char raw[64];
        if (n_bytes > sizeof(raw))
                return -EINVAL;
        size_t got = 0;
        while (got < n_bytes) {
                ssize_t n = getrandom(raw + got, n_bytes - got, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int r = -errno;
                        explicit_bzero(raw, sizeof(raw));
                        return r;
                }
                got += (size_t) n;
        }
        kb_hex_encode(raw, n_bytes, buf);
        /* The bytes may be a key or a canary: nothing of them stays on the stack. */
        explicit_bzero(raw, sizeof(raw));
        return 0;
}

void kb_json_putp(struct json_object **p) {
        if (*p)
                json_object_put(*p);
        *p = NULL;
}

int kb_open_regular(int dirfd, const char *path, int flags, mode_t mode, struct stat *ret_st) {
        _cleanup_close_ int fd = openat(dirfd, path, flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, mode);
        if (fd < 0)
                return -errno;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        if (ret_st)
                *ret_st = st;
        return TAKE_FD(fd);
}

/* read(2), again when a signal interrupted it: the bytes read (0 at the end) or -errno. */
static ssize_t read_retry(int fd, void *buf, size_t len) {
        ssize_t n;
        do
                n = read(fd, buf, len);
        while (n < 0 && errno == EINTR);
        return n < 0 ? -errno : n;
}

int kb_read_file(int dirfd, const char *path, int open_flags, size_t max, char **ret, size_t *ret_len) {
        /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever (a
         * kernelspec folder is untrusted); for the regular files accepted below it changes nothing. */
        struct stat st;
        _cleanup_close_ int fd = kb_open_regular(dirfd, path, O_RDONLY | open_flags, 0, &st);
        if (fd < 0)
                return fd;
        if ((uint64_t) st.st_size > max)
                return -EMSGSIZE;
        /* The buffer grows as the file is read (from its size, or a page for /proc's files, which
         * say 0): allocating the ceiling for every small file (64 KiB for each descriptor's
         * fdinfo, 1 MiB for a mount table) left malloc's arenas megabytes larger than the data. */
        size_t cap = (size_t) st.st_size + 2 > 4096 ? (size_t) st.st_size + 2 : 4096;
        if (cap > max + 2)
                cap = max + 2;
        char *buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        size_t len = 0;
        int r = 0;
        /* One byte past the limit catches a file that grew after fstat. */
        while (len < max + 1) {
                if (len >= cap - 1 && cap < max + 2) { /* full, and below the ceiling: grow */
                        size_t grown = cap > (max + 2) / 2 ? max + 2 : cap * 2;
                        char *bigger = malloc(grown);
                        if (!bigger) {
                                r = -ENOMEM;
                                break;
                        }
                        memcpy(bigger, buf, len);
                        explicit_bzero(buf, len); /* a copy of a secret file is not left behind */
                        free(buf);
                        buf = bigger;
                        cap = grown;
                }
                /* Up to max + 1 bytes in all, and a byte kept for the NUL (cap <= max + 2). */
                ssize_t n = read_retry(fd, buf + len, cap - 1 - len);
                if (n < 0) {
                        r = (int) n;
                        break;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        if (r == 0 && len > max)
                r = -EMSGSIZE;
        if (r < 0) {
                explicit_bzero(buf, len);
                free(buf);
                return r;
        }
        buf[len] = '\0';
        *ret = buf;
        if (ret_len)
                *ret_len = len;
        return 0;
}

int kb_json_parse_strict(const char *text, size_t len, int max_depth, struct json_object **ret) {
        if (len > INT_MAX || memchr(text, '\0', len))
                return -EPROTO;
        struct json_tokener *tok = json_tokener_new_ex(max_depth);
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        struct json_object *obj = json_tokener_parse_ex(tok, text, (int) len);
        bool ok = obj && json_tokener_get_error(tok) == json_tokener_success && json_tokener_get_parse_end(tok) == len;
        json_tokener_free(tok);
        if (!ok) {
                json_object_put(obj);
                return -EPROTO;
        }
        *ret = obj;
        return 0;
}

int kb_write_all(int fd, const void *buf, size_t len) {
        const char *p = buf;
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -EIO;
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

int kb_copy_file(const char *src, const char *path, mode_t mode, size_t max) {
        struct stat st;
        _cleanup_close_ int in = kb_open_regular(AT_FDCWD, src, O_RDONLY, 0, &st);
        if (in < 0)
                return in;
        if ((uint64_t) st.st_size > max)
                return -EFBIG;
        _cleanup_close_ int out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (out < 0)
                return -errno;
        char buf[65536];
        size_t total = 0;
        int r = 0;
        for (;;) {
                ssize_t n = read_retry(in, buf, sizeof buf);
                if (n < 0) {
                        r = (int) n;
                        break;
                }
                if (n == 0)
                        break;
                total += (size_t) n;
                if (total > max) { /* it grew while being read */
                        r = -EFBIG;
                        break;
                }
                if ((r = kb_write_all(out, buf, (size_t) n)) < 0)
                        break;
        }
        /* The mode asked for, whatever the umask took from it. */
        if (r == 0 && fchmod(out, mode) < 0)
                r = -errno;
        if (r == 0 && close(TAKE_FD(out)) < 0)
                r = -errno;
        if (r < 0)
                (void) unlink(path);
        return r;
}

static int nftw_remove(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        int r = flag == FTW_DP ? rmdir(path) : unlink(path);
        return r < 0 && errno != ENOENT ? -errno : 0;
}

int kb_remove_tree(const char *path) {
        /* FTW_PHYS: never follow a symlink a kernel planted in its workspace; unlink removes the
         * link itself. FTW_MOUNT: never cross into another filesystem. */
        int r = nftw(path, nftw_remove, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
        if (r < 0)
                return errno == ENOENT ? 0 : -errno;
        return r;
}

int kb_iso_time_now(unsigned frac_digits, char *buf, size_t size) {
        struct timespec ts;
        struct tm tm;
        if (frac_digits > 9)
                return -EINVAL;
        if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
                return -errno;
        if (!gmtime_r(&ts.tv_sec, &tm))
                return -EOVERFLOW;
        long frac = ts.tv_nsec;
        for (unsigned i = frac_digits; i < 9; i++)
                frac /= 10;
        int n = snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d%s%.*ld%s", tm.tm_year + 1900, tm.tm_mon + 1,
                         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac_digits ? "." : "", (int) frac_digits,
                         frac_digits ? frac : 0L, "Z");
        if (n < 0 || (size_t) n >= size)
                return -EOVERFLOW;
        return 0;
}

const char *kb_env_get(char *const *envp, const char *name) {
        size_t len = strlen(name);
        for (char *const *e = envp; e && *e; e++)
                if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
                        return *e + len + 1;
        return NULL;
}

int kb_path_next(const char **cursor, const char *program, char **ret_candidate) {
        while (*cursor) {
                const char *entry = *cursor, *colon = strchrnul(entry, ':');
                size_t len = (size_t) (colon - entry);
                *cursor = *colon ? colon + 1 : NULL;
                if (len > 0 && entry[0] == '/') {
                        if (asprintf(ret_candidate, "%.*s/%s", (int) len, entry, program) < 0)
                                return -ENOMEM;
                        return 1;
                }
        }
        return 0;
}

int kb_fd_send(int sock, const void *data, size_t len, int fd) {
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } c;
        memset(&c, 0, sizeof c);
        struct iovec iov = {.iov_base = (void *) data, .iov_len = len};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
        if (fd >= 0) {
                mh.msg_control = c.buf;
                mh.msg_controllen = sizeof c.buf;
                struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
                cm->cmsg_level = SOL_SOCKET;
                cm->cmsg_type = SCM_RIGHTS;
                cm->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(cm), &fd, sizeof fd);
        }
        ssize_t n;
        do
                n = sendmsg(sock, &mh, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        return n < 0 ? -errno : (size_t) n == len ? 0 : -EIO;
}

int kb_fd_recv(int sock, void *data, size_t len, int *ret_fd) {
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } c;
        struct iovec iov = {.iov_base = data, .iov_len = len};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof c.buf};
        ssize_t n;
        *ret_fd = -1;
        do
                n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len == CMSG_LEN(sizeof(int)))
                memcpy(ret_fd, CMSG_DATA(cm), sizeof *ret_fd);
        if ((size_t) n != len || (mh.msg_flags & MSG_TRUNC)) {
                if (*ret_fd >= 0)
                        close(*ret_fd);
                *ret_fd = -1;
                return -EBADMSG;
        }
        return 0;
}
