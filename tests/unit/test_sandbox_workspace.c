/* test_sandbox_workspace.c: what kb_sandbox_workspace_copy_out takes out of a workspace a kernel
 * filled: folders and regular files, the owner's mode bits only; never a link (followed or made),
 * a FIFO or a socket; nothing on the host replaced; no more bytes than the bound. And what
 * kb_sandbox_folder_open refuses to call a sandbox's folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kbound/common.h"
#include "kbound/sandbox.h"
#include "sandbox/sandbox-internal.h"
#include "tmp_tree.h"
#include "valgrind_skip.h"
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static void put(const char *dir, const char *name, const char *content, mode_t mode) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, content, strlen(content)), (ssize_t) strlen(content));
        close(fd);
        assert_int_equal(chmod(path, mode), 0);
}

static char *slurp(const char *dir, const char *name) {
        char *text = NULL;
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r = kb_read_file(fd, name, O_NOFOLLOW, 4096, &text, NULL);
        if (fd >= 0)
                close(fd);
        return r == 0 ? text : NULL;
}

/* from/ holds what a kernel might leave; to/ is the kept team folder's workspace. */
static void make_dirs(const tree *t, char *from, char *to, size_t size) {
        snprintf(from, size, "%s/from", t->root);
        snprintf(to, size, "%s/to", t->root);
        assert_int_equal(mkdir(from, 0700), 0);
        assert_int_equal(mkdir(to, 0700), 0);
}

static void test_copies_files_and_folders_only(void **state) {
        tree *t = *state;
        char from[128], to[128], path[256], secret[256];
        make_dirs(t, from, to, sizeof from);
        put(from, "notes.txt", "hello", 04755); /* set-uid asked: never kept */
        snprintf(path, sizeof path, "%s/sub", from);
        assert_int_equal(mkdir(path, 0755), 0);
        put(path, "data.csv", "1,2,3", 0644);
        /* a link to a host file, a FIFO and a socket: none recreated, the file never read */
        snprintf(secret, sizeof secret, "%s/host-secret", t->root);
        put(t->root, "host-secret", "SECRET", 0600);
        snprintf(path, sizeof path, "%s/link", from);
        assert_int_equal(symlink(secret, path), 0);
        snprintf(path, sizeof path, "%s/fifo", from);
        assert_int_equal(mkfifo(path, 0600), 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(path, sizeof path, "%s/sock", from);
        assert_true(strlen(path) < sizeof sa.sun_path);
        memcpy(sa.sun_path, path, strlen(path) + 1);
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        assert_int_equal(bind(s, (struct sockaddr *) &sa, sizeof sa), 0);
        /* a file already on the host side is never replaced */
        put(to, "sub", "the host's own", 0600);

        int fd = open(from, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        kb_workspace_copied c;
        assert_int_equal(kb_sandbox_workspace_copy_out(fd, to, 0, kb_now_ms() + 5000, &c), 0);
        close(fd);
        close(s);
        assert_int_equal(c.files, 1); /* notes.txt; sub/ could not be made over the host's file */
        assert_int_equal(c.dirs, 0);
        assert_int_equal(c.bytes, 5);
        assert_int_equal(c.skipped, 4); /* link, fifo, sock, sub */
        assert_false(c.truncated);
        char *text = slurp(to, "notes.txt");
        assert_non_null(text);
        assert_string_equal(text, "hello");
        free(text);
        struct stat st;
        snprintf(path, sizeof path, "%s/notes.txt", to);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        snprintf(path, sizeof path, "%s/link", to);
        assert_int_equal(lstat(path, &st), -1);
        snprintf(path, sizeof path, "%s/fifo", to);
        assert_int_equal(lstat(path, &st), -1);
        text = slurp(to, "sub");
        assert_non_null(text);
        assert_string_equal(text, "the host's own");
        free(text);
}

static void test_folders_and_the_byte_bound(void **state) {
        tree *t = *state;
        char from[128], to[128], path[256];
        make_dirs(t, from, to, sizeof from);
        snprintf(path, sizeof path, "%s/a", from);
        assert_int_equal(mkdir(path, 0700), 0);
        snprintf(path, sizeof path, "%s/a/b", from);
        assert_int_equal(mkdir(path, 0700), 0);
        put(path, "big", "0123456789", 0600);
        int fd = open(from, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        kb_workspace_copied c;
        assert_int_equal(kb_sandbox_workspace_copy_out(fd, to, 4, kb_now_ms() + 5000, &c), 0);
        close(fd);
        assert_int_equal(c.dirs, 2);
        assert_int_equal(c.bytes, 4);
        assert_true(c.truncated);
        snprintf(path, sizeof path, "%s/a/b", to);
        char *text = slurp(path, "big");
        assert_non_null(text);
        assert_string_equal(text, "0123");
        free(text);
        /* a descriptor that is not open, or no folder to copy to */
        assert_int_equal(kb_sandbox_workspace_copy_out(-1, to, 0, kb_now_ms() + 5000, &c), -EBADF);
        fd = open(from, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        snprintf(path, sizeof path, "%s/none", t->root);
        assert_int_equal(kb_sandbox_workspace_copy_out(fd, path, 0, kb_now_ms() + 5000, &c), -ENOENT);
        close(fd);
}

/* kbound's own process stands in for bwrap's init: its root is the host's, so a folder inside is
 * a folder of the tree. */
static void test_folder_open_refuses(void **state) {
        KB_TEST_SKIP_WITHOUT_PIDFD("test_sandbox_workspace", "test_folder_open_refuses");
        tree *t = *state;
        int pidfd = (int) syscall(SYS_pidfd_open, getpid(), 0);
        assert_true(pidfd >= 0);
        int fd = -1;
        /* the control: a folder bound from the host is its host folder */
        assert_int_equal(kb_sandbox_folder_open(getpid(), pidfd, t->root, false, t->root, &fd), 0);
        close(fd);
        /* no host folder to prove a bound folder against: refused, never a success with no
         * descriptor (the errno left over from whatever failed before was returned) */
        errno = 0;
        fd = -1;
        assert_int_equal(kb_sandbox_folder_open(getpid(), pidfd, t->root, false, NULL, &fd), -EINVAL);
        assert_int_equal(fd, -1);
        /* a path too long for its buffer: cut, it names another folder, which is there and is the
         * host folder given; refused, not opened as the one asked */
        char inside[256], full[512], cut_host[512];
        snprintf(inside, sizeof inside, "%s/%0150d", t->root, 0);
        int prefix = snprintf(full, sizeof full, "/proc/%d/root", (int) getpid());
        snprintf(full + prefix, sizeof full - (size_t) prefix, "%s", inside);
        full[127] = '\0'; /* what a 128-byte buffer kept */
        snprintf(cut_host, sizeof cut_host, "%s", full + prefix);
        assert_int_equal(mkdir(cut_host, 0700), 0);
        assert_int_equal(kb_sandbox_folder_open(getpid(), pidfd, inside, false, cut_host, &fd), -ENAMETOOLONG);
        assert_int_equal(rmdir(cut_host), 0);
        close(pidfd);
}

static int setup(void **state) {
        return tmp_tree_setup(state, "kbound-ws");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_copies_files_and_folders_only, setup, tree_teardown),
                cmocka_unit_test_setup_teardown(test_folders_and_the_byte_bound, setup, tree_teardown),
                cmocka_unit_test_setup_teardown(test_folder_open_refuses, setup, tree_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
