/* cli_base.c: the base folder of a run under the runtime folder, made and locked for kbound's
 * life, kept with --keep, and the sweep of the folders of runs that are gone (cli.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <kbound/canary_set.h>
#include <kbound/kernel.h>
#include <kbound/sandbox.h>
#include "cli.h"

/* The base folder's lock: its directory open and flock'ed for kbound's life. However a run ends,
 * even by SIGKILL, the kernel releases the lock with the process; a base folder whose lock is free
 * belongs to no live run, and the next run removes it. */
static int base_lock_fd = -1;

#define BASE_PREFIX "kbound-"
#define KEPT_MARKER ".kbound-kept" /* in a base folder kept with --keep: never swept */

const char *cli_runtime_parent(void) {
        static char absolute[PATH_MAX];
        const char *parent = getenv("KBOUND_RUNTIME_DIR");
        if (!parent || !*parent)
                parent = getenv("TMPDIR");
        if (!parent || !*parent)
                parent = "/tmp";
        if (parent[0] == '/')
                return parent;
        /* A relative folder is taken from the working directory, as a shell would, and said whole
         * from then on: bwrap, the reports and the sandbox user's reach all need the absolute
         * path. A folder that is not there is named so by whatever makes a folder in it. */
        if (absolute[0])
                return absolute;
        char cwd[PATH_MAX];
        _cleanup_free_ char *real = realpath(parent, NULL);
        if (real && strlen(real) < sizeof absolute)
                snprintf(absolute, sizeof absolute, "%s", real);
        else if (!getcwd(cwd, sizeof cwd) || strlen(cwd) + 1 + strlen(parent) >= sizeof absolute)
                return parent;
        else {
                size_t n = strlen(cwd);
                memcpy(absolute, cwd, n);
                absolute[n] = '/';
                memcpy(absolute + n + 1, parent, strlen(parent) + 1);
        }
        return absolute;
}

/* Whether name is what mkdtemp makes of BASE_PREFIX "XXXXXX". */
static bool base_name(const char *name) {
        size_t n = strlen(BASE_PREFIX);
        return strncmp(name, BASE_PREFIX, n) == 0 && strlen(name + n) == 6 &&
               strspn(name + n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == 6;
}

/* Opens the directory name (in dir_fd) and takes its lock without waiting. Returns the fd,
 * -EWOULDBLOCK (a live run holds it), or -errno. */
static int lock_dir(int dir_fd, const char *name) {
        int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

/* Appends a copy of s to the NULL-terminated *v (at most 64 entries are listed). */
static void strv_add(char ***v, size_t *n, const char *s) {
        if (!v || *n >= 64)
                return;
        char **grown = realloc(*v, (*n + 2) * sizeof(char *));
        if (!grown)
                return;
        *v = grown;
        grown[*n] = strdup(s);
        if (grown[*n])
                (*n)++;
        grown[*n] = NULL;
}

/* The home canary a killed run recorded in its base folder (dir_fd), removed if it is one of ours
 * (kb_canary_set_remove_home). Returns its path when removed, else NULL. */
static char *remove_recorded_home_canary(int dir_fd) {
        _cleanup_close_ int fd = openat(dir_fd, KB_CANARY_SET_HOME_RECORD, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        char path[PATH_MAX];
        ssize_t n = read(fd, path, sizeof path - 1);
        if (n <= 0)
                return NULL;
        path[n] = '\0';
        return kb_canary_set_remove_home(path, geteuid()) == 1 ? strdup(path) : NULL;
}

size_t cli_base_dirs_scan(const char *parent, bool remove_stale, char ***ret_stale, char ***ret_kept) {
        size_t n_stale = 0, n_listed = 0, n_kept = 0;
        DIR *d = opendir(parent);
        if (!d)
                return 0;
        for (struct dirent *de = readdir(d); de; de = readdir(d)) {
                struct stat st, locked;
                if (!base_name(de->d_name) || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
                        continue; /* not a folder of ours: another user's, a symlink, a file */
                _cleanup_close_ int fd = lock_dir(dirfd(d), de->d_name);
                if (fd < 0)
                        continue; /* a live run holds it, or it is gone */
                if (fstat(fd, &locked) < 0 || locked.st_dev != st.st_dev || locked.st_ino != st.st_ino ||
                    locked.st_nlink == 0)
                        continue;
                _cleanup_free_ char *path = NULL;
                if (asprintf(&path, "%s/%s", parent, de->d_name) < 0)
                        continue;
                if (faccessat(fd, KEPT_MARKER, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
                        strv_add(ret_kept, &n_kept, path);
                        continue;
                }
                n_stale++;
                if (!remove_stale) {
                        strv_add(ret_stale, &n_listed, path);
                        continue;
                }
                /* Removed while we hold its lock: no run can take it meanwhile. */
                _cleanup_free_ char *home_canary = remove_recorded_home_canary(fd);
                if (home_canary)
                        cli_error("removed %s: the home canary of a kbound run that did not end cleanly", home_canary);
                int r = kb_remove_tree(path);
                if (r < 0)
                        cli_error("cannot remove the stale folder %s: %s", path, strerror(-r));
                else
                        cli_error("removed %s: left by a kbound run that did not end cleanly (killed?), with its "
                                  "team folders and canaries",
                                  path);
        }
        closedir(d);
        return n_stale;
}

/* mkdtemp under parent, then the lock. Another run sweeping parent may take the lock of a folder
 * just made (it is not locked yet, so it looks stale) and remove it: then make another. Returns 0
 * and *ret, or -errno. */
static int make_locked_dir(const char *parent, char **ret) {
        for (int attempt = 0; attempt < 8; attempt++) {
                _cleanup_free_ char *path = NULL;
                if (asprintf(&path, "%s/" BASE_PREFIX "XXXXXX", parent) < 0)
                        return -ENOMEM;
                if (!mkdtemp(path))
                        return -errno;
                int fd = lock_dir(AT_FDCWD, path);
                if (fd == -EWOULDBLOCK || fd == -ENOENT)
                        continue; /* a sweep has it, and removes it */
                if (fd < 0) {
                        (void) rmdir(path);
                        return fd;
                }
                /* Locked; but a sweep may have locked, removed and released it first. */
                struct stat locked, named;
                if (fstat(fd, &locked) == 0 && locked.st_nlink > 0 && stat(path, &named) == 0 &&
                    locked.st_dev == named.st_dev && locked.st_ino == named.st_ino) {
                        base_lock_fd = fd;
                        *ret = TAKE_PTR(path);
                        return 0;
                }
                close(fd);
        }
        return -EBUSY;
}

int cli_make_base_dir(const kb_sandbox_user *user, char **ret) {
        const char *parent = cli_runtime_parent();
        if (user && user->switch_user) {
                /* bwrap runs as the sandbox user and must walk to the team folders it binds. */
                _cleanup_free_ char *blocker = NULL;
                int r = kb_sandbox_user_can_reach(user, parent, &blocker);
                if (r <= 0) {
                        cli_error("the sandbox user %s cannot reach %s (%s): set KBOUND_RUNTIME_DIR to a folder it "
                                  "can traverse, such as /tmp",
                                  user->name, parent,
                                  r < 0     ? strerror(-r)
                                  : blocker ? blocker
                                            : "?");
                        return KB_EXIT_ENFORCE;
                }
        }
        /* What runs that are gone left (a SIGKILL removes nothing): team folders, canaries. */
        (void) cli_base_dirs_scan(parent, true, NULL, NULL);
        char *path = NULL;
        int r = make_locked_dir(parent, &path);
        if (r < 0) {
                cli_error("cannot create a private folder under %s: %s", parent, strerror(-r));
                return KB_EXIT_ENFORCE;
        }
        /* Searchable, not listable, by the sandbox user's group alone (see kb_kernel_start). */
        r = kb_sandbox_user_pass_through(user, path);
        if (r < 0) {
                cli_error("cannot open %s to the sandbox user's group: %s", path, strerror(-r));
                rmdir(path);
                free(path);
                return KB_EXIT_ENFORCE;
        }
        *ret = path;
        return 0;
}

void cli_keep_base_dir(const char *base) {
        _cleanup_free_ char *marker = NULL;
        _cleanup_close_ int fd = -1;
        if (asprintf(&marker, "%s/%s", base, KEPT_MARKER) >= 0)
                fd = open(marker, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                cli_error("kept the team folders under %s, but cannot mark them kept (%s): the next run may "
                          "remove them",
                          base, strerror(errno));
        else
                cli_progress("kept the team folders under %s", base); /* later runs leave it alone */
}
