/* image_tree.c: an unpacked image's tree walked (its size, opened up to be removed), digested
 * (what the cache verifies), and the image's JSON metadata read with kbound's ceilings. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "base/cleanup.h"
#include "sandbox/image-internal.h"

/* Ceilings on the image's metadata (untrusted): far above any real index, manifest or config. */
#define IMAGE_JSON_MAX_BYTES (4 * 1024 * 1024)
#define IMAGE_JSON_MAX_DEPTH 32
#define TREE_MAX_DEPTH 128

/* The deepest folder nesting walked (each level holds two descriptors); deeper is left alone. */
#define IMAGE_WALK_MAX_DEPTH 128

/* Walks the tree below the folder open as dir_fd without following a link or leaving its
 * filesystem (dev): adds every entry's blocks to *bytes, and with open_up makes every folder the
 * caller owns searchable and writable for it (an image may hold folders without write or read
 * permission, which only root could empty). Best effort: what cannot be read is skipped. */
static void walk_tree(int dir_fd, dev_t dev, int depth, bool open_up, uint64_t *bytes) {
        int fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        for (struct dirent *de; (de = readdir(d));) {
                struct stat st;
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
                    fstatat(dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                *bytes += (uint64_t) st.st_blocks * 512;
                if (!S_ISDIR(st.st_mode) || st.st_dev != dev || depth >= IMAGE_WALK_MAX_DEPTH)
                        continue;
                if (open_up && st.st_uid == geteuid() && (st.st_mode & 0700) != 0700)
                        (void) fchmodat(dir_fd, de->d_name, (st.st_mode & 07777) | 0700, 0);
                int sub = openat(dir_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub >= 0) {
                        walk_tree(sub, dev, depth + 1, open_up, bytes);
                        close(sub);
                }
        }
        closedir(d);
}

/* walk_tree from path; returns the bytes it saw (an upper bound: hard links count each time). */
uint64_t image_walk_path(const char *path, bool open_up) {
        uint64_t bytes = 0;
        struct stat st;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && open_up && errno == EACCES && chmod(path, 0700) == 0)
                fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 && fstat(fd, &st) == 0)
                walk_tree(fd, st.st_dev, 0, open_up, &bytes);
        return bytes;
}

void image_remove_tree(const char *path) {
        (void) image_walk_path(path, true);
        kb_remove_tree(path);
}

int image_read_json(const char *path, json_object **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = kb_read_file(AT_FDCWD, path, O_NOFOLLOW, IMAGE_JSON_MAX_BYTES, &buf, &len);
        if (r < 0)
                return r;
        return kb_json_parse_strict(buf, len, IMAGE_JSON_MAX_DEPTH, ret);
}

/* "sha256:" and 64 lowercase hex digits: a digest that is safe to make a blob path of (an
 * untrusted index could otherwise name "../../x"). */
bool image_digest_valid(const char *d) {
        if (!d || strncmp(d, "sha256:", 7) != 0 || strlen(d) != 7 + 64)
                return false;
        for (const char *p = d + 7; *p; p++)
                if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                        return false;
        return true;
}

static int name_cmp(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The names in the folder open as fd, sorted (malloc'd vector, NULL-terminated). */
static int sorted_names(int fd, char ***ret) {
        int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        DIR *d = dup >= 0 ? fdopendir(dup) : NULL;
        if (!d) {
                int e = -errno;
                if (dup >= 0)
                        close(dup);
                return e;
        }
        size_t n = 0, cap = 16;
        char **names = malloc(cap * sizeof *names);
        int r = names ? 0 : -ENOMEM;
        for (struct dirent *de; r == 0 && (de = readdir(d));) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (n + 1 >= cap) {
                        char **grown = realloc(names, (cap *= 2) * sizeof *names);
                        if (!grown) {
                                r = -ENOMEM;
                                break;
                        }
                        names = grown;
                }
                if (!(names[n++] = strdup(de->d_name)))
                        r = -ENOMEM;
        }
        closedir(d);
        if (r < 0) {
                for (size_t i = 0; names && i < n; i++)
                        free(names[i]);
                free(names);
                return r;
        }
        qsort(names, n, sizeof *names, name_cmp);
        names[n] = NULL;
        *ret = names;
        return 0;
}

static void digest_line(EVP_MD_CTX *md, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void digest_line(EVP_MD_CTX *md, const char *fmt, ...) {
        char *line = NULL;
        va_list ap;
        va_start(ap, fmt);
        int n = vasprintf(&line, fmt, ap);
        va_end(ap);
        if (n >= 0)
                (void) EVP_DigestUpdate(md, line, (size_t) n + 1); /* the NUL ends each record */
        free(line);
}

/* A regular file's content into md, read through fd. */
static int digest_file(EVP_MD_CTX *md, int dir_fd, const char *name) {
        _cleanup_close_ int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        char buf[65536];
        for (;;) {
                ssize_t n = read(fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return 0;
                if (!EVP_DigestUpdate(md, buf, (size_t) n))
                        return -EIO;
        }
}

static int digest_tree(EVP_MD_CTX *md, int dir_fd, const char *rel, int depth) {
        if (depth > TREE_MAX_DEPTH)
                return -ELOOP;
        char **names = NULL;
        int r = sorted_names(dir_fd, &names);
        if (r < 0)
                return r;
        for (char **p = names; r >= 0 && *p; p++) {
                struct stat st;
                _cleanup_free_ char *path = NULL;
                if (asprintf(&path, "%s/%s", rel, *p) < 0) {
                        r = -ENOMEM;
                        break;
                }
                if (fstatat(dir_fd, *p, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        r = -errno;
                        break;
                }
                digest_line(md, "%o %lld %s", (unsigned) st.st_mode, (long long) st.st_size, path);
                if (S_ISREG(st.st_mode)) {
                        int f = digest_file(md, dir_fd, *p);
                        if (f < 0) /* unreadable is recorded as such: the same next time, or a change */
                                digest_line(md, "unreadable %d", -f);
                } else if (S_ISLNK(st.st_mode)) {
                        char target[PATH_MAX];
                        ssize_t n = readlinkat(dir_fd, *p, target, sizeof target - 1);
                        if (n < 0) {
                                r = -errno;
                                break;
                        }
                        target[n] = '\0';
                        digest_line(md, "-> %s", target);
                } else if (S_ISDIR(st.st_mode)) {
                        int sub = openat(dir_fd, *p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (sub < 0) {
                                digest_line(md, "unreadable %d", errno);
                                continue;
                        }
                        r = digest_tree(md, sub, path, depth + 1);
                        close(sub);
                } else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
                        digest_line(md, "dev %llu", (unsigned long long) st.st_rdev);
                }
        }
        for (char **p = names; *p; p++)
                free(*p);
        free(names);
        return r;
}

int image_tree_digest(const char *root, char **ret_hex) {
        _cleanup_close_ int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        EVP_MD_CTX *md = EVP_MD_CTX_new();
        if (!md)
                return -ENOMEM;
        int r = EVP_DigestInit_ex(md, EVP_sha256(), NULL) ? digest_tree(md, fd, "", 0) : -EIO;
        unsigned char out[32];
        unsigned int out_len = 0;
        if (r >= 0 && (!EVP_DigestFinal_ex(md, out, &out_len) || out_len != sizeof out))
                r = -EIO;
        EVP_MD_CTX_free(md);
        if (r < 0)
                return r;
        char *hex = malloc(65);
        if (!hex)
                return -ENOMEM;
        for (size_t i = 0; i < sizeof out; i++)
                snprintf(hex + 2 * i, 3, "%02x", out[i]);
        *ret_hex = hex;
        return 0;
}
