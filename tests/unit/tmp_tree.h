/* tmp_tree.h: a scratch folder under /tmp for a unit test, made before each test and removed
 * (without following links) after it, for cmocka's setup/teardown; and that removal alone
 * (tmp_tree_remove), for tests whose fixture holds more than one folder; and files, links and
 * folders made inside one by a path relative to it (tmp_tree_write, tmp_tree_link), their parent
 * folders made on the way, failing the test when they cannot be. Include after cmocka.h. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct tree {
        char root[64];
} tree;

/* *state = a new tree whose root is /tmp/<prefix>-XXXXXX, made; -1 if it cannot be. */
static inline int tmp_tree_setup(void **state, const char *prefix) {
        tree *t = calloc(1, sizeof(*t));
        if (!t)
                return -1;
        snprintf(t->root, sizeof(t->root), "/tmp/%s-XXXXXX", prefix);
        if (!mkdtemp(t->root)) {
                free(t);
                return -1;
        }
        *state = t;
        return 0;
}

static inline int tmp_tree_remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path);
}

/* Removes path and everything below it, never following a symlink out of it (FTW_PHYS). */
static inline void tmp_tree_remove(const char *path) {
        nftw(path, tmp_tree_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static inline int tree_teardown(void **state) {
        tree *t = *state;
        tmp_tree_remove(t->root);
        free(t);
        return 0;
}

/* root/rel into out (PATH_MAX bytes), and every folder above it made (0755). */
static inline void tmp_tree_path(const char *root, const char *rel, char *out) {
        if (snprintf(out, PATH_MAX, "%s/%s", root, rel) >= PATH_MAX)
                fail_msg("path too long: %s/%s", root, rel);
        for (char *slash = strchr(out + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
                *slash = '\0';
                if (mkdir(out, 0755) < 0 && errno != EEXIST)
                        fail_msg("mkdir %s: %s", out, strerror(errno));
                *slash = '/';
        }
}

/* The file root/rel holding len bytes of data (NULs too), replacing any. */
static inline void tmp_tree_write(const char *root, const char *rel, const char *data, size_t len) {
        char path[PATH_MAX];
        tmp_tree_path(root, rel, path);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, data, len) != (ssize_t) len)
                fail_msg("cannot write %s: %s", path, strerror(errno));
        close(fd);
}

/* The symbolic link root/rel whose text is target. */
static inline void tmp_tree_link(const char *root, const char *rel, const char *target) {
        char path[PATH_MAX];
        tmp_tree_path(root, rel, path);
        if (symlink(target, path) < 0)
                fail_msg("symlink %s -> %s: %s", path, target, strerror(errno));
}

/* The folder root/rel. */
static inline void tmp_tree_mkdir(const char *root, const char *rel) {
        char path[PATH_MAX];
        tmp_tree_path(root, rel, path);
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                fail_msg("mkdir %s: %s", path, strerror(errno));
}

/* A folder under root whose path is exactly len bytes long (len < PATH_MAX), into path (PATH_MAX
 * bytes): folders of at most 200 bytes each, the last one sized to fit. For what a path near
 * PATH_MAX does to a buffer that holds it and a name more. */
static inline void tmp_tree_deep(const char *root, size_t len, char *path) {
        snprintf(path, PATH_MAX, "%s", root);
        while (strlen(path) < len) {
                size_t n = len - strlen(path) - 1;
                if (n > 200)
                        n = n - 200 < 2 ? n - 2 : 200; /* never leave a one-byte remainder: "/" alone */
                size_t at = strlen(path);
                path[at] = '/';
                memset(path + at + 1, 'd', n);
                path[at + 1 + n] = '\0';
                if (mkdir(path, 0700) < 0)
                        fail_msg("mkdir %s: %s", path, strerror(errno));
        }
        if (strlen(path) != len)
                fail_msg("a folder of %zu bytes instead of %zu", strlen(path), len);
}
