/* test_inspect.c: the host's lookups inside a sandbox's mount tree (inspect-internal.h), on real
 * mounts in a user and mount namespace of the test's own: a mount point the sandbox swaps for a
 * symbolic link, renames away or stacks another mount on is never taken for the mount the table
 * names, and an absence is a proof only where the sandbox cannot write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "inspect-internal.h"
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

static void test_mount_root_found(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect", "test_mount_root_found");
        (void) state;
        int fd = -1;
        struct stat st, want;
        char why[256] = "";
        assert_int_equal(stat(mp, &want), 0);
        int r = kb_inspect_open_mount_root(root_fd, mp, mnt_id, &fd, &st, why, sizeof why);
        if (r != 0)
                fail_msg("%s: %s", mp, why);
        assert_int_equal(st.st_dev, want.st_dev);
        assert_int_equal(st.st_ino, want.st_ino);
        close(fd);
        /* the path as the sandbox names it, from its own root */
        int dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_int_equal(kb_inspect_open_mount_root(dir_fd, "/a/m", mnt_id, &fd, &st, why, sizeof why), 0);
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
        assert_int_equal(kb_inspect_open_mount_root(root_fd, mp, mnt_id + 100000, &fd, &st, why, sizeof why), -EXDEV);
        assert_non_null(strstr(why, "a different mount is there"));
        /* a folder inside the mount is not its root */
        path_of(path, sizeof path, "a/m/sub");
        assert_int_equal(kb_inspect_open_mount_root(root_fd, path, mnt_id, &fd, &st, why, sizeof why), -EXDEV);
        assert_non_null(strstr(why, "not to its root"));
        /* the mount point's folder swapped for a link to it: refused, never followed */
        char a[512], moved[512];
        path_of(a, sizeof a, "a");
        path_of(moved, sizeof moved, "moved");
        assert_int_equal(rename(a, moved), 0);
        assert_int_equal(symlink("moved", a), 0);
        assert_int_equal(kb_inspect_open_mount_root(root_fd, mp, mnt_id, &fd, &st, why, sizeof why), -ELOOP);
        assert_string_equal(why, "a symbolic link is on the path");
        /* a plain folder where the mount point was: another mount (the one holding dir) */
        assert_int_equal(unlink(a), 0);
        assert_int_equal(mkdir(a, 0755), 0);
        assert_int_equal(mkdir(mp, 0755), 0);
        assert_int_equal(kb_inspect_open_mount_root(root_fd, mp, mnt_id, &fd, &st, why, sizeof why), -EXDEV);
        assert_non_null(strstr(why, "a different mount is there"));
        assert_int_equal(rmdir(mp), 0);
        assert_int_equal(rmdir(a), 0);
        assert_int_equal(rename(moved, a), 0);
        /* and back where the table says: found */
        assert_int_equal(kb_inspect_open_mount_root(root_fd, mp, mnt_id, &fd, &st, why, sizeof why), 0);
        close(fd);
}

static void test_stat_in_mount(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect", "test_stat_in_mount");
        (void) state;
        int fd = -1;
        struct stat st, want;
        char why[256] = "", path[512];
        assert_int_equal(kb_inspect_open_mount_root(root_fd, mp, mnt_id, &fd, &st, why, sizeof why), 0);
        path_of(path, sizeof path, "a/m/f");
        assert_int_equal(stat(path, &want), 0);
        assert_int_equal(kb_inspect_stat_in_mount(fd, "/f", false, &st, why, sizeof why), 0);
        assert_int_equal(st.st_ino, want.st_ino);
        assert_int_equal(kb_inspect_stat_in_mount(fd, "", false, &st, why, sizeof why), 0); /* the root itself */
        /* missing: a proof only where the sandbox cannot write */
        assert_int_equal(kb_inspect_stat_in_mount(fd, "nope", false, &st, why, sizeof why), -ENOENT);
        assert_string_equal(why, "No such file or directory");
        assert_int_equal(kb_inspect_stat_in_mount(fd, "nope", true, &st, why, sizeof why), -EAGAIN);
        assert_non_null(strstr(why, "the sandbox can write to that filesystem"));
        /* no link followed, no leaving the mount, no crossing into another */
        path_of(path, sizeof path, "a/m/link");
        assert_int_equal(symlink("sub", path), 0);
        assert_int_equal(kb_inspect_stat_in_mount(fd, "link/x", false, &st, why, sizeof why), -ELOOP);
        assert_int_equal(kb_inspect_stat_in_mount(fd, "../m/f", false, &st, why, sizeof why), -EXDEV);
        path_of(path, sizeof path, "a/m/sub");
        assert_int_equal(mount("tmpfs", path, "tmpfs", 0, "size=64k"), 0);
        assert_int_equal(kb_inspect_stat_in_mount(fd, "sub", false, &st, why, sizeof why), -EXDEV);
        assert_int_equal(umount2(path, MNT_DETACH), 0);
        path_of(path, sizeof path, "a/m/link");
        unlink(path);
        close(fd);
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

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_drop_inherited_namespaces),
                cmocka_unit_test(test_mount_root_found),
                cmocka_unit_test(test_mount_root_refused),
                cmocka_unit_test(test_stat_in_mount),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
