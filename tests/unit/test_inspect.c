/* test_inspect.c: the host's lookups inside a sandbox's mount tree (inspect-internal.h), on real
 * mounts in a user and mount namespace of the test's own: a mount point the sandbox swaps for a
 * symbolic link, renames away or stacks another mount on is never taken for the mount the table
 * names, and an absence is a proof only where the sandbox cannot write. And kbound's own sockets:
 * every one sock_diag lists is found among kbound's descriptors, however fast they are made. And
 * other namespaces: a sock_diag socket made in a network namespace kbound does not join (by a
 * thread, or by a fork that joins its user namespace when the thread may not), and a pid namespace
 * nested in another one told apart from the others. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "evidence/inspect-internal.h"
#include "kbound/inspect.h"
#include "valgrind_skip.h"

static char dir[] = "/tmp/kbound-inspect-XXXXXX";
static char mp[256];     /* dir/a/m: a tmpfs */
static int64_t mnt_id;   /* its mount id */
static int root_fd = -1; /* the test's "/" */

static void write_file(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t) strlen(text))
                fail_msg("cannot write %s: %s", path, strerror(errno));
        close(fd);
}

static void path_of(char *out, size_t size, const char *rel) {
        snprintf(out, size, "%s/%s", dir, rel);
}

static int64_t mount_id_of(const char *path) {
        struct statx sx;
        assert_int_equal(statx(AT_FDCWD, path, 0, STATX_MNT_ID, &sx), 0);
        assert_true(sx.stx_mask & STATX_MNT_ID);
        return (int64_t) sx.stx_mnt_id;
}

/* A user and mount namespace of the test's own (unprivileged user namespaces, as bwrap needs
 * them), and a tmpfs at dir/a/m holding a file f. */
static int setup(void **state) {
        (void) state;
        char map[64], path[512];
        uid_t uid = getuid();
        gid_t gid = getgid();
        if (!mkdtemp(dir))
                fail_msg("mkdtemp: %s", strerror(errno));
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
                fail_msg("unshare(CLONE_NEWUSER|CLONE_NEWNS): %s (kbound's sandbox needs user namespaces too)",
                         strerror(errno));
        write_file("/proc/self/setgroups", "deny");
        snprintf(map, sizeof map, "0 %u 1", (unsigned) uid);
        write_file("/proc/self/uid_map", map);
        snprintf(map, sizeof map, "0 %u 1", (unsigned) gid);
        write_file("/proc/self/gid_map", map);
        assert_int_equal(mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL),
                         0); /* types ignored; valgrind wants strings */
        path_of(path, sizeof path, "a");
        assert_int_equal(mkdir(path, 0755), 0);
        path_of(mp, sizeof mp, "a/m");
        assert_int_equal(mkdir(mp, 0755), 0);
        assert_int_equal(mount("tmpfs", mp, "tmpfs", 0, "size=64k"), 0);
        path_of(path, sizeof path, "a/m/f");
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        close(fd);
        path_of(path, sizeof path, "a/m/sub");
        assert_int_equal(mkdir(path, 0755), 0);
        mnt_id = mount_id_of(mp);
        root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(root_fd >= 0);
        return 0;
}

static int teardown(void **state) {
        (void) state;
        char cmd[512];
        umount2(mp, MNT_DETACH);
        snprintf(cmd, sizeof cmd, "%s/a/m", dir);
        rmdir(cmd);
        snprintf(cmd, sizeof cmd, "%s/a", dir);
        rmdir(cmd);
        rmdir(dir);
        if (root_fd >= 0)
                close(root_fd);
        return 0;
}

/* The two lookups with their error's words in why, holding each to the carrier's contract: an
 * error only on failure, and one whose errno is the one returned. */
static void words_of(int r, kb_error **error, char *why, size_t size) {
        if (r == 0) {
                assert_null(*error);
                return;
        }
        assert_non_null(*error);
        assert_int_equal((*error)->err, -r);
        snprintf(why, size, "%s", kb_error_text(*error, r));
        kb_error_free(error);
}

static int open_mount_root(int root, const char *path, int64_t id, int *ret_fd, struct stat *ret_st, char *why,
                           size_t size) {
        kb_error *error = NULL;
        int r = kb_inspect_open_mount_root(root, path, id, ret_fd, ret_st, &error);
        words_of(r, &error, why, size);
        return r;
}

static int stat_in_mount(int mount_fd, const char *inner, bool writable, struct stat *ret_st, char *why, size_t size) {
        kb_error *error = NULL;
        int r = kb_inspect_stat_in_mount(mount_fd, inner, writable, ret_st, &error);
        words_of(r, &error, why, size);
        return r;
}

static void test_mount_root_found(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect", "test_mount_root_found");
        (void) state;
        int fd = -1;
        struct stat st, want;
        char why[256] = "";
        assert_int_equal(stat(mp, &want), 0);
        int r = open_mount_root(root_fd, mp, mnt_id, &fd, &st, why, sizeof why);
        if (r != 0)
                fail_msg("%s: %s", mp, why);
        assert_int_equal(st.st_dev, want.st_dev);
        assert_int_equal(st.st_ino, want.st_ino);
        close(fd);
        /* the path as the sandbox names it, from its own root */
        int dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_int_equal(open_mount_root(dir_fd, "/a/m", mnt_id, &fd, &st, why, sizeof why), 0);
        close(fd);
        close(dir_fd);
}

static void test_mount_root_refused(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect", "test_mount_root_refused");
        (void) state;
        int fd = -1;
        struct stat st;
        char why[256] = "", path[512];
        /* another mount's id */
        assert_int_equal(open_mount_root(root_fd, mp, mnt_id + 100000, &fd, &st, why, sizeof why), -EXDEV);
        assert_non_null(strstr(why, "a different mount is there"));
        /* a folder inside the mount is not its root */
        path_of(path, sizeof path, "a/m/sub");
        assert_int_equal(open_mount_root(root_fd, path, mnt_id, &fd, &st, why, sizeof why), -EXDEV);
        assert_non_null(strstr(why, "not to its root"));
        /* the mount point's folder swapped for a link to it: refused, never followed */
        char a[512], moved[512];
        path_of(a, sizeof a, "a");
        path_of(moved, sizeof moved, "moved");
        assert_int_equal(rename(a, moved), 0);
        assert_int_equal(symlink("moved", a), 0);
        assert_int_equal(open_mount_root(root_fd, mp, mnt_id, &fd, &st, why, sizeof why), -ELOOP);
        assert_string_equal(why, "a symbolic link is on the path");
        /* a plain folder where the mount point was: another mount (the one holding dir) */
        assert_int_equal(unlink(a), 0);
        assert_int_equal(mkdir(a, 0755), 0);
        assert_int_equal(mkdir(mp, 0755), 0);
        assert_int_equal(open_mount_root(root_fd, mp, mnt_id, &fd, &st, why, sizeof why), -EXDEV);
        assert_non_null(strstr(why, "a different mount is there"));
        assert_int_equal(rmdir(mp), 0);
        assert_int_equal(rmdir(a), 0);
        assert_int_equal(rename(moved, a), 0);
        /* and back where the table says: found */
        assert_int_equal(open_mount_root(root_fd, mp, mnt_id, &fd, &st, why, sizeof why), 0);
        close(fd);
}

static void test_stat_in_mount(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect", "test_stat_in_mount");
        (void) state;
        int fd = -1;
        struct stat st, want;
        char why[256] = "", path[512];
        assert_int_equal(open_mount_root(root_fd, mp, mnt_id, &fd, &st, why, sizeof why), 0);
        path_of(path, sizeof path, "a/m/f");
        assert_int_equal(stat(path, &want), 0);
        assert_int_equal(stat_in_mount(fd, "/f", false, &st, why, sizeof why), 0);
        assert_int_equal(st.st_ino, want.st_ino);
        assert_int_equal(stat_in_mount(fd, "", false, &st, why, sizeof why), 0); /* the root itself */
        /* missing: a proof only where the sandbox cannot write */
        assert_int_equal(stat_in_mount(fd, "nope", false, &st, why, sizeof why), -ENOENT);
        assert_string_equal(why, "No such file or directory");
        assert_int_equal(stat_in_mount(fd, "nope", true, &st, why, sizeof why), -EAGAIN);
        assert_non_null(strstr(why, "the sandbox can write to that filesystem"));
        /* no link followed, no leaving the mount, no crossing into another */
        path_of(path, sizeof path, "a/m/link");
        assert_int_equal(symlink("sub", path), 0);
        assert_int_equal(stat_in_mount(fd, "link/x", false, &st, why, sizeof why), -ELOOP);
        assert_int_equal(stat_in_mount(fd, "../m/f", false, &st, why, sizeof why), -EXDEV);
        path_of(path, sizeof path, "a/m/sub");
        assert_int_equal(mount("tmpfs", path, "tmpfs", 0, "size=64k"), 0);
        assert_int_equal(stat_in_mount(fd, "sub", false, &st, why, sizeof why), -EXDEV);
        assert_int_equal(umount2(path, MNT_DETACH), 0);
        path_of(path, sizeof path, "a/m/link");
        unlink(path);
        close(fd);
}

/* The name a path has in a view, as its mount table is matched by: a link on the way followed (a
 * home reached through a link is on the filesystem the link leads to), "." ".." "//" folded, the
 * last name kept (a link itself); in a view rooted in a folder (a chroot) as named from there. */
static void test_name_in_root(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect", "test_name_in_root");
        (void) state;
        char tmpl[] = "/tmp/kb-name-XXXXXX", t[PATH_MAX], path[PATH_MAX + 64], want[PATH_MAX + 64], got[PATH_MAX];
        assert_non_null(mkdtemp(tmpl));
        assert_non_null(realpath(tmpl, t));
        snprintf(path, sizeof path, "%s/real", t);
        assert_int_equal(mkdir(path, 0700), 0);
        snprintf(path, sizeof path, "%s/real/sub", t);
        assert_int_equal(mkdir(path, 0700), 0);
        snprintf(path, sizeof path, "%s/link", t);
        assert_int_equal(symlink("real/sub", path), 0);
        int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), view = open(t, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(root >= 0 && view >= 0);
        const struct {
                const char *in, *out; /* under t; out NULL: the error */
                int error;
        } cases[] = {
                {"/real/x", "/real/x", 0},  {"/link/x", "/real/sub/x", 0}, {"/real/./sub/../x", "/real/x", 0},
                {"//real/x", "/real/x", 0}, {"/link", "/link", 0},         {"/real/sub/", "/real/sub", 0},
                {"/nope/x", NULL, -ENOENT},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                snprintf(path, sizeof path, "%s%s", t, cases[i].in);
                int r = kb_inspect_name_in_root(root, path, got, sizeof got);
                if (!cases[i].out) {
                        assert_int_equal(r, cases[i].error);
                        continue;
                }
                snprintf(want, sizeof want, "%s%s", t, cases[i].out);
                if (r != 0 || strcmp(got, want) != 0)
                        fail_msg("%s: %d %s, not %s", path, r, r == 0 ? got : "", want);
                /* the same, seen from a view rooted at t */
                r = kb_inspect_name_in_root(view, cases[i].in, got, sizeof got);
                if (r != 0 || strcmp(got, cases[i].out) != 0)
                        fail_msg("in the view at %s, %s: %d %s, not %s", t, cases[i].in, r, r == 0 ? got : "",
                                 cases[i].out);
        }
        assert_int_equal(kb_inspect_name_in_root(root, "/", got, sizeof got), 0);
        assert_string_equal(got, "/");
        assert_int_equal(kb_inspect_name_in_root(root, "relative/x", got, sizeof got), -EINVAL);
        close(root);
        close(view);
        snprintf(path, sizeof path, "%s/link", t);
        unlink(path);
        snprintf(path, sizeof path, "%s/real/sub", t);
        rmdir(path);
        snprintf(path, sizeof path, "%s/real", t);
        rmdir(path);
        rmdir(t);
}

/* A namespace handed down to kbound is closed; every other descriptor stays. */
static void test_drop_inherited_namespaces(void **state) {
        (void) state;
        int ns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        int user_fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
        int pipe_fds[2];
        assert_true(ns_fd >= 3 && user_fd >= 3);
        assert_int_equal(pipe2(pipe_fds, O_CLOEXEC), 0);
        assert_int_equal(kb_inspect_drop_inherited_namespaces(), 2);
        assert_int_equal(fcntl(ns_fd, F_GETFD), -1);
        assert_int_equal(errno, EBADF);
        assert_int_equal(fcntl(user_fd, F_GETFD), -1);
        assert_true(fcntl(pipe_fds[0], F_GETFD) >= 0 && fcntl(pipe_fds[1], F_GETFD) >= 0);
        assert_int_equal(kb_inspect_drop_inherited_namespaces(), 0);
        close(pipe_fds[0]);
        close(pipe_fds[1]);
}

/* ---- kbound's own sockets, while its other threads make more ---- */

#define CHURN_PAIRS 300 /* socket pairs the churning thread makes, each held to the end */

typedef struct churn {
        int fds[2 * CHURN_PAIRS];
        size_t n;
        volatile int done;
} churn;

/* Makes a socket pair every 100 µs, as libzmq's I/O thread connects a channel while another
 * thread of kbound looks; none is closed before the test ends. */
static void *churn_thread(void *arg) {
        churn *c = arg;
        for (size_t i = 0; i < CHURN_PAIRS; i++) {
                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, &c->fds[c->n]) < 0)
                        break;
                c->n += 2;
                nanosleep(&(struct timespec){.tv_nsec = 100 * 1000}, NULL);
        }
        c->done = 1;
        return NULL;
}

/* Whether the process holds the socket inode now (its descriptors read again). */
static bool held_now(uint32_t inode) {
        char key[32];
        snprintf(key, sizeof key, "socket:[%u]", inode);
        char fd_dir[] = "/proc/self/fd";
        DIR *d = opendir(fd_dir);
        struct dirent *de;
        bool found = false;
        while (d && !found && (de = readdir(d))) {
                char link[300], target[64];
                snprintf(link, sizeof link, "%s/%s", fd_dir, de->d_name);
                ssize_t len = readlink(link, target, sizeof target - 1);
                if (len > 0) {
                        target[len] = '\0';
                        found = strcmp(target, key) == 0;
                }
        }
        if (d)
                closedir(d);
        return found;
}

/* kb_inspect_sockets_init lists kbound's network's sockets and reads kbound's descriptors: every
 * socket of kbound's that the list shows must be among those descriptors ("own"), or one made
 * between the two reads is taken for a host socket (a connection libzmq made while the kernel's
 * thread looked failed boundary.sockets about one run in 25). Read in the other order, the list
 * shows sockets made after the descriptors were read, and this fails within the churn (five runs
 * of five, at look 0 to 31). */
static void test_own_sockets_listed_are_own(void **state) {
        (void) state;
        churn c = {.n = 0};
        pthread_t thread;
        kb_inspect_target t = {.proc_root = "/proc"};
        assert_int_equal(pthread_create(&thread, NULL, churn_thread, &c), 0);
        size_t looks = 0, seen = 0;
        while (!c.done) {
                json_object *processes = json_object_new_array(), *errors = json_object_new_array();
                sockets s = {.t = &t, .processes = processes};
                assert_int_equal(kb_inspect_sockets_init(&s, errors), 0);
                assert_int_equal(json_object_array_length(errors), 0);
                for (size_t i = 0; i < s.n; i++) {
                        char key[32];
                        kb_inspect_socket_key(key, sizeof key, s.list[i].inode);
                        if (json_object_object_get_ex(s.own, key, NULL)) {
                                seen++;
                                continue;
                        }
                        if (held_now(s.list[i].inode))
                                fail_msg("look %zu: socket %u was listed and is held by the test, but was not "
                                         "among its descriptors when they were read",
                                         looks, s.list[i].inode);
                }
                kb_inspect_sockets_done(&s);
                json_object_put(processes);
                json_object_put(errors);
                looks++;
        }
        assert_int_equal(pthread_join(thread, NULL), 0);
        assert_int_equal(c.n, 2 * CHURN_PAIRS);
        assert_true(looks >= 2); /* the looks overlapped the churn */
        assert_true(seen > 0);
        for (size_t i = 0; i < c.n; i++)
                close(c.fds[i]);
}

/* ---- an epoll's watches, while another thread adds more ---- */

typedef struct watch_churn {
        int epoll, fds[2 * CHURN_PAIRS];
        size_t n;
        volatile int done;
} watch_churn;

/* Makes a socket pair every 100 µs and adds one end to the epoll, as libzmq adds a new
 * connection's socket to its poller while the host looks; none is closed before the test ends. */
static void *watch_churn_thread(void *arg) {
        watch_churn *c = arg;
        for (size_t i = 0; i < CHURN_PAIRS; i++) {
                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, &c->fds[c->n]) < 0)
                        break;
                struct epoll_event ev = {.events = EPOLLIN, .data.fd = c->fds[c->n]};
                if (epoll_ctl(c->epoll, EPOLL_CTL_ADD, c->fds[c->n], &ev) < 0)
                        break;
                c->n += 2;
                nanosleep(&(struct timespec){.tv_nsec = 100 * 1000}, NULL);
        }
        c->done = 1;
        return NULL;
}

/* kb_inspect_fd_facts reads the table, then each descriptor's fdinfo: a socket opened and added to
 * the epoll after the table was listed shows in the epoll's watches; the table must then hold it
 * too (read again by its number), or the watch looks like one on a file no sandbox process holds
 * (python3's boundary.descriptors failed so about one run in twenty). Without the second read this
 * fails within the churn. */
static void test_epoll_watches_are_in_the_table(void **state) {
        (void) state;
        watch_churn c = {.epoll = epoll_create1(EPOLL_CLOEXEC)};
        assert_true(c.epoll >= 0);
        pthread_t thread;
        assert_int_equal(pthread_create(&thread, NULL, watch_churn_thread, &c), 0);
        size_t looks = 0, watched = 0;
        while (!c.done) {
                json_object *errors = json_object_new_array(), *fds = NULL;
                assert_int_equal(kb_inspect_fd_facts("/proc", getpid(), errors, &fds), 0);
                json_object *ep = NULL;
                for (size_t i = 0; i < json_object_array_length(fds); i++)
                        if (kb_fact_int_or(json_object_array_get_idx(fds, i), FACT_FD_FD, -1) == c.epoll)
                                ep = json_object_array_get_idx(fds, i);
                assert_non_null(ep);
                json_object *watches = kb_fact_arr_of(ep, FACT_FD_WATCHES);
                for (size_t w = 0; w < (watches ? json_object_array_length(watches) : 0); w++) {
                        json_object *watch = json_object_array_get_idx(watches, w);
                        const char *dev = kb_fact_str_of(watch, FACT_WATCH_DEV);
                        int64_t ino = kb_fact_int_or(watch, FACT_WATCH_INO, -1);
                        bool held = false;
                        for (size_t i = 0; i < json_object_array_length(fds) && !held; i++) {
                                json_object *fd = json_object_array_get_idx(fds, i);
                                const char *d = kb_fact_str_of(fd, FACT_FD_DEV);
                                held = d && dev && strcmp(d, dev) == 0 && kb_fact_int_or(fd, FACT_FD_INO, -2) == ino;
                        }
                        if (!held)
                                fail_msg("look %zu: the epoll watches %s:%lld (added as fd %lld), which the table "
                                         "read does not hold",
                                         looks, dev ? dev : "?", (long long) ino,
                                         (long long) kb_fact_int_or(watch, FACT_WATCH_FD, -1));
                        watched++;
                }
                json_object_put(fds);
                json_object_put(errors);
                looks++;
        }
        assert_int_equal(pthread_join(thread, NULL), 0);
        assert_int_equal(c.n, 2 * CHURN_PAIRS);
        assert_true(looks >= 2);
        assert_true(watched > 0);
        for (size_t i = 0; i < c.n; i++)
                close(c.fds[i]);
        close(c.epoll);
}

/* An epoll's watch on an anonymous object is placed by the very open file (kcmp), never by its
 * device and inode, which every anonymous object shares (the epoll's own among them): a child's
 * epoll watches its own eventfd (held_at: that descriptor) and one the test (outside, to it) holds
 * and the child closed (no held_at: nothing of the child's is that file). */
static void test_epoll_anonymous(void **state) {
        (void) state;
        int outside = eventfd(0, EFD_CLOEXEC), ready[2], done[2];
        assert_true(outside >= 0);
        assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
        assert_int_equal(pipe2(done, O_CLOEXEC), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(ready[0]);
                close(done[1]);
                int fds[2] = {epoll_create1(EPOLL_CLOEXEC), eventfd(0, EFD_CLOEXEC)};
                struct epoll_event ev = {.events = EPOLLIN};
                if (fds[0] < 0 || fds[1] < 0 || epoll_ctl(fds[0], EPOLL_CTL_ADD, outside, &ev) < 0 ||
                    epoll_ctl(fds[0], EPOLL_CTL_ADD, fds[1], &ev) < 0)
                        _exit(1);
                close(outside);
                char c;
                if (write(ready[1], fds, sizeof fds) != (ssize_t) sizeof fds || read(done[0], &c, 1) < 0)
                        _exit(1);
                _exit(0);
        }
        close(ready[1]);
        close(done[0]);
        int fds[2];
        assert_int_equal(read(ready[0], fds, sizeof fds), (ssize_t) sizeof fds);
        json_object *errors = json_object_new_array(), *table = NULL, *ep = NULL;
        assert_int_equal(kb_inspect_fd_facts("/proc", pid, errors, &table), 0);
        for (size_t i = 0; i < json_object_array_length(table); i++)
                if (kb_fact_int_or(json_object_array_get_idx(table, i), FACT_FD_FD, -1) == fds[0])
                        ep = json_object_array_get_idx(table, i);
        assert_non_null(ep);
        json_object *watches = kb_fact_arr_of(ep, FACT_FD_WATCHES);
        assert_int_equal(json_object_array_length(watches), 2);
        for (size_t w = 0; w < 2; w++) {
                json_object *watch = json_object_array_get_idx(watches, w);
                int64_t tfd = kb_fact_int_or(watch, FACT_WATCH_FD, -1), held;
                bool has = kb_fact_int_of(watch, FACT_WATCH_HELD_AT, &held);
                if (tfd == outside && has)
                        fail_msg("the eventfd only the test holds was placed at the child's fd %lld", (long long) held);
                if (tfd == fds[1] && (!has || held != fds[1]))
                        fail_msg("the child's own eventfd (fd %d) was not placed: %s", fds[1],
                                 json_object_to_json_string(watch));
                assert_true(tfd == outside || tfd == fds[1]);
        }
        json_object_put(table);
        json_object_put(errors);
        close(done[1]);
        close(ready[0]);
        close(outside);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A child in new namespaces of the types flags (CLONE_NEW*), its pid in *ret_pid; with a network
 * namespace, a socket bound there to an abstract name, its inode in *ret_ino. The child waits until
 * *ret_hold (the other end of its pipe) is closed. With a pid namespace, *ret_pid is its first
 * process's, a grandchild. */
static void child_in(int flags, pid_t *ret_pid, uint32_t *ret_ino, int *ret_hold) {
        int report[2], hold[2];
        assert_int_equal(pipe2(report, O_CLOEXEC), 0);
        assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct {
                        pid_t pid;
                        uint32_t ino;
                } msg = {getpid(), 0};
                char c;
                close(report[0]);
                close(hold[1]);
                if (unshare(flags) < 0)
                        _exit(1);
                if (flags & CLONE_NEWNET) {
                        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
                        struct sockaddr_un a = {.sun_family = AF_UNIX, .sun_path = "\0kbound-test-diag"};
                        struct stat st;
                        if (fd < 0 ||
                            bind(fd, (struct sockaddr *) &a, offsetof(struct sockaddr_un, sun_path) + 18) < 0 ||
                            fstat(fd, &st) < 0)
                                _exit(1);
                        msg.ino = (uint32_t) st.st_ino;
                }
                if (flags & CLONE_NEWPID) {
                        pid_t first = fork();
                        if (first < 0)
                                _exit(1);
                        if (first == 0) {
                                (void) !read(hold[0], &c, 1);
                                _exit(0);
                        }
                        msg.pid = first; /* its pid here, in the namespace above its own */
                }
                if (write(report[1], &msg, sizeof msg) != (ssize_t) sizeof msg)
                        _exit(1);
                (void) !read(hold[0], &c, 1);
                _exit(0);
        }
        close(report[1]);
        close(hold[0]);
        struct {
                pid_t pid;
                uint32_t ino;
        } msg;
        if (read(report[0], &msg, sizeof msg) != (ssize_t) sizeof msg)
                fail_msg("the child could not make its namespaces (user namespaces allowed?)");
        close(report[0]);
        *ret_pid = msg.pid;
        *ret_ino = msg.ino;
        *ret_hold = hold[1];
}

static void reap_all(int hold) {
        close(hold);
        while (wait(NULL) > 0)
                ;
}

/* Whether the sock_diag socket diag lists a socket of inode ino. */
static bool lists(int diag, uint32_t ino) {
        kb_sockdiag_unix *list = NULL;
        size_t n = 0;
        assert_int_equal(kb_sockdiag_unix_list(diag, &list, &n), 0);
        bool found = kb_sockdiag_find(list, n, ino) != NULL;
        free(list);
        close(diag);
        return found;
}

/* The calling thread's effective capabilities: CAP_SYS_ADMIN dropped (drop) or raised again. */
static void sys_admin(bool drop) {
        struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct data[2];
        assert_int_equal(syscall(SYS_capget, &hdr, data), 0);
        if (drop)
                data[0].effective &= ~(1U << CAP_SYS_ADMIN);
        else
                data[0].effective |= 1U << CAP_SYS_ADMIN;
        assert_int_equal(syscall(SYS_capset, &hdr, data), 0);
}

/* A network namespace of a user namespace below the test's, which the test's user owns: a thread
 * joins it while the caller may (CAP_SYS_ADMIN in its own user namespace, as root has); without
 * that, only a fork that joins the owning user namespace first makes the socket. The test itself
 * never changes namespace. */
static void test_diag_socket_elsewhere(void **state) {
        (void) state;
        pid_t pid;
        uint32_t ino;
        int hold;
        char path[64];
        child_in(CLONE_NEWUSER | CLONE_NEWNET, &pid, &ino, &hold);
        snprintf(path, sizeof path, "/proc/%d/ns/net", (int) pid);
        int netns = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(netns >= 0);
        int userns = ioctl(netns, NS_GET_USERNS);
        assert_true(userns >= 0);
        int diag = kb_inspect_diag_socket(netns, -1);
        assert_true(diag >= 0);
        assert_true(lists(diag, ino));
        sys_admin(true);
        assert_int_equal(kb_inspect_diag_socket(netns, -1), -EPERM);
        diag = kb_inspect_diag_socket(netns, userns);
        sys_admin(false);
        assert_true(diag >= 0);
        assert_true(lists(diag, ino));
        struct stat mine, now;
        assert_int_equal(stat("/proc/self/ns/net", &now), 0);
        assert_int_equal(stat("/proc/thread-self/ns/net", &mine), 0);
        assert_int_equal(mine.st_ino, now.st_ino);
        close(userns);
        close(netns);
        reap_all(hold);
}

/* The first process of a pid namespace made below the test's is below it; the test's own is not
 * below itself, and a process in the test's own namespace is not below another one. */
static void test_pidns_below(void **state) {
        (void) state;
        pid_t pid;
        uint32_t ino;
        int hold;
        struct stat own;
        assert_int_equal(stat("/proc/self/ns/pid", &own), 0);
        child_in(CLONE_NEWPID, &pid, &ino, &hold);
        char path[64];
        struct stat theirs;
        snprintf(path, sizeof path, "/proc/%d/ns/pid", (int) pid);
        assert_int_equal(stat(path, &theirs), 0);
        assert_true(theirs.st_ino != own.st_ino);
        assert_true(kb_inspect_pidns_below("/proc", pid, (uint64_t) own.st_ino));
        assert_false(kb_inspect_pidns_below("/proc", getpid(), (uint64_t) own.st_ino));
        assert_false(kb_inspect_pidns_below("/proc", getpid(), (uint64_t) theirs.st_ino));
        assert_false(kb_inspect_pidns_below("/proc", 0, (uint64_t) own.st_ino));
        reap_all(hold);
}

/* The state letter of /proc/<pid>/stat's main thread, '?' unreadable. */
static char main_state(pid_t pid) {
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return '?';
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *close = strrchr(buf, ')');
        return close && close[1] == ' ' ? close[2] : '?';
}

static void *pause_forever(void *arg) {
        (void) arg;
        for (;;)
                pause();
        return NULL;
}

/* Waits (bounded) until pid's main thread shows state; false past 10 s. */
static bool main_state_becomes(pid_t pid, char state) {
        for (int i = 0; i < 10000; i++) {
                if (main_state(pid) == state)
                        return true;
                usleep(1000);
        }
        return false;
}

/* A process holds nothing only once every thread of it has exited: a zombie whose only thread
 * ended is one; a live process is not, nor is a zombie leader (its main thread ended alone) whose
 * other thread lives on and holds the shared table. */
static void test_all_exited(void **state) {
        (void) state;
        int block[2];
        assert_int_equal(pipe2(block, O_CLOEXEC), 0);
        pid_t live = fork();
        assert_true(live >= 0);
        if (live == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL); /* none outlives a failed test */
                close(block[1]);
                char c;
                (void) read(block[0], &c, 1);
                _exit(0);
        }
        pid_t leader = fork();
        assert_true(leader >= 0);
        if (leader == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                close(block[1]);
                pthread_t t;
                if (pthread_create(&t, NULL, pause_forever, NULL) != 0)
                        _exit(1);
                syscall(SYS_exit, 0); /* the main thread alone */
                _exit(2);
        }
        pid_t zombie = fork();
        assert_true(zombie >= 0);
        if (zombie == 0)
                _exit(0);
        assert_true(main_state_becomes(zombie, 'Z'));
        assert_true(main_state_becomes(leader, 'Z'));
        assert_true(kb_inspect_all_exited("/proc", zombie));
        assert_false(kb_inspect_all_exited("/proc", leader));
        assert_false(kb_inspect_all_exited("/proc", live));
        assert_false(kb_inspect_all_exited("/proc", getpid()));
        assert_false(kb_inspect_all_exited("/nonexistent-proc", zombie));
        kill(leader, SIGKILL);
        close(block[1]);
        assert_int_equal(waitpid(live, NULL, 0), live);
        assert_int_equal(waitpid(leader, NULL, 0), leader);
        assert_int_equal(waitpid(zombie, NULL, 0), zombie);
        close(block[0]);
}

/* The second read of a holder outside finds a file (by device and inode) wherever the process holds
 * it now: in the table of a thread that unshared its descriptors, as the working directory of a
 * thread that unshared its filesystem context; and not one it does not hold; and none once the
 * process is gone. Its name (kbound's) changes nothing. */
typedef struct still_child {
        int ready, fd_of;
        const char *file, *folder;
} still_child;

static void *hold_file_alone(void *arg) {
        still_child *c = arg;
        if (unshare(CLONE_FILES) < 0 || open(c->file, O_RDONLY) < 0 || write(c->ready, "f", 1) != 1)
                _exit(3);
        return pause_forever(NULL);
}

static void *cwd_alone(void *arg) {
        still_child *c = arg;
        if (unshare(CLONE_FS) < 0 || chdir(c->folder) < 0 || write(c->ready, "d", 1) != 1)
                _exit(4);
        return pause_forever(NULL);
}

static void held_object(const char *path, kb_held *o) {
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        *o = (kb_held){.file = true, .ino = st.st_ino};
        kb_procfs_dev(major(st.st_dev), minor(st.st_dev), o->dev);
}

static void test_still_holds_files(void **state) {
        (void) state;
        char file[PATH_MAX], folder[PATH_MAX], other[PATH_MAX];
        path_of(file, sizeof file, "still-file");
        path_of(folder, sizeof folder, "still-folder");
        path_of(other, sizeof other, "still-other");
        for (int i = 0; i < 2; i++) {
                int fd = open(i ? other : file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                assert_true(fd >= 0);
                close(fd);
        }
        assert_int_equal(mkdir(folder, 0755), 0);
        int ready[2];
        assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                (void) prctl(PR_SET_NAME, "kbound");
                still_child c = {.ready = ready[1], .file = file, .folder = folder};
                pthread_t a, b;
                if (pthread_create(&a, NULL, hold_file_alone, &c) != 0 || pthread_create(&b, NULL, cwd_alone, &c) != 0)
                        _exit(1);
                pause_forever(NULL);
        }
        char got[2];
        assert_int_equal(read(ready[0], got, 1), 1);
        assert_int_equal(read(ready[0], got + 1, 1), 1);
        kb_held o[3];
        held_object(file, &o[0]);
        held_object(folder, &o[1]);
        held_object(other, &o[2]);
        assert_int_equal(kb_inspect_still_holds("/proc", child, o, 3), 0);
        assert_true(o[0].found);
        assert_string_equal(o[0].type, "file");
        assert_true(o[0].tid != child && o[0].fd >= 0); /* a thread's own table, not the main one's */
        assert_true(o[1].found);
        assert_string_equal(o[1].type, "cwd");
        assert_true(o[1].tid != child);
        assert_false(o[2].found);
        kill(child, SIGKILL);
        assert_int_equal(waitpid(child, NULL, 0), child);
        assert_int_equal(kb_inspect_still_holds("/proc", child, o, 3), -ESRCH);
        close(ready[0]);
        close(ready[1]);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_all_exited),
                cmocka_unit_test(test_still_holds_files),
                cmocka_unit_test(test_drop_inherited_namespaces),
                cmocka_unit_test(test_mount_root_found),
                cmocka_unit_test(test_mount_root_refused),
                cmocka_unit_test(test_stat_in_mount),
                cmocka_unit_test(test_name_in_root),
                cmocka_unit_test(test_own_sockets_listed_are_own),
                cmocka_unit_test(test_epoll_watches_are_in_the_table),
                cmocka_unit_test(test_epoll_anonymous),
                cmocka_unit_test(test_diag_socket_elsewhere),
                cmocka_unit_test(test_pidns_below),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
