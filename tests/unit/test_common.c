/* test_common.c: the small shared helpers: hex formatting and random hex. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kbound/common.h"

static void test_hex_encode(void **state) {
        static const unsigned char bytes[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
        char out[2 * sizeof(bytes) + 1];
        memset(out, 'x', sizeof(out));
        kb_hex_encode(bytes, sizeof(bytes), out);
        assert_string_equal(out, "00017f80abff");
        kb_hex_encode(bytes, 0, out);
        assert_string_equal(out, "");
}

static void test_random_hex(void **state) {
        char a[129], b[129];
        assert_int_equal(kb_random_hex(a, 64), 0);
        assert_int_equal(kb_random_hex(b, 64), 0);
        assert_int_equal(strlen(a), 128);
        assert_int_equal(strspn(a, "0123456789abcdef"), 128);
        assert_string_not_equal(a, b); /* 512 random bits each */
        assert_int_equal(kb_random_hex(a, 65), -EINVAL);
}

static void test_iso_time_now(void **state) {
        char buf[40];
        assert_int_equal(kb_iso_time_now(3, buf, sizeof(buf)), 0);
        assert_int_equal(strlen(buf), strlen("2026-01-02T03:04:05.678Z"));
        assert_true(buf[4] == '-' && buf[10] == 'T' && buf[19] == '.' && buf[23] == 'Z');
        assert_int_equal(kb_iso_time_now(6, buf, sizeof(buf)), 0);
        assert_int_equal(strlen(buf), strlen("2026-01-02T03:04:05.678901Z"));
        assert_int_equal(kb_iso_time_now(0, buf, sizeof(buf)), 0);
        assert_int_equal(strlen(buf), strlen("2026-01-02T03:04:05Z"));
        assert_int_equal(kb_iso_time_now(6, buf, 20), -EOVERFLOW);
        assert_int_equal(kb_iso_time_now(10, buf, sizeof(buf)), -EINVAL);
}

static void test_env_get(void **state) {
        char *env[] = {"PATHX=no", "PATH=/bin", "EMPTY=", NULL};
        assert_string_equal(kb_env_get(env, "PATH"), "/bin");
        assert_string_equal(kb_env_get(env, "EMPTY"), "");
        assert_null(kb_env_get(env, "PAT"));
        assert_null(kb_env_get(NULL, "PATH"));
}

static void test_path_next(void **state) {
        const char *cursor = "/a::rel:/b/c:";
        char *c = NULL;
        assert_int_equal(kb_path_next(&cursor, "prog", &c), 1);
        assert_string_equal(c, "/a/prog");
        free(c);
        assert_int_equal(kb_path_next(&cursor, "prog", &c), 1);
        assert_string_equal(c, "/b/c/prog");
        free(c);
        assert_int_equal(kb_path_next(&cursor, "prog", &c), 0);
        assert_int_equal(kb_path_next(&cursor, "prog", &c), 0);
}

/* What kbound hands into a sandbox by path is a copy of its own: exact bytes, the mode asked for
 * whatever the umask, never over an existing file or through a link, never past the ceiling, and
 * nothing left behind on failure. */
static void test_copy_file(void **state) {
        (void) state;
        char dir[] = "/tmp/kbound-test-copy-XXXXXX";
        assert_non_null(mkdtemp(dir));
        char src[64], dst[64], link[64], big[64];
        snprintf(src, sizeof src, "%s/src", dir);
        snprintf(dst, sizeof dst, "%s/dst", dir);
        snprintf(link, sizeof link, "%s/link", dir);
        snprintf(big, sizeof big, "%s/big", dir);
        int fd = open(src, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        static char payload[200000];
        for (size_t i = 0; i < sizeof payload; i++)
                payload[i] = (char) (i * 7);
        assert_int_equal(kb_write_all(fd, payload, sizeof payload), 0);
        close(fd);
        mode_t old = umask(077);
        assert_int_equal(kb_copy_file(src, dst, 0555, 1 << 20), 0);
        umask(old);
        struct stat st;
        assert_int_equal(stat(dst, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0555);
        char *text = NULL;
        size_t len = 0;
        assert_int_equal(kb_read_file(AT_FDCWD, dst, 0, 1 << 20, &text, &len), 0);
        assert_int_equal(len, sizeof payload);
        assert_memory_equal(text, payload, sizeof payload);
        free(text);
        /* never over an existing file, never through a planted link */
        assert_int_equal(kb_copy_file(src, dst, 0555, 1 << 20), -EEXIST);
        assert_int_equal(symlink(src, link), 0);
        assert_int_equal(kb_copy_file(src, link, 0555, 1 << 20), -EEXIST);
        /* over the ceiling: refused, nothing left; not a regular file: refused */
        assert_int_equal(kb_copy_file(src, big, 0555, 1000), -EFBIG);
        assert_int_equal(access(big, F_OK), -1);
        assert_int_equal(kb_copy_file(dir, big, 0555, 1 << 20), -EINVAL);
        assert_int_equal(kb_copy_file("/nonexistent/kbound", big, 0555, 1 << 20), -ENOENT);
        assert_int_equal(kb_remove_tree(dir), 0);
}

static void test_files(void **state) {
        char dir[] = "/tmp/kbound-test-common-XXXXXX";
        assert_non_null(mkdtemp(dir));
        char file[64], sub[64], fifo[64];
        snprintf(file, sizeof(file), "%s/f", dir);
        snprintf(sub, sizeof(sub), "%s/d", dir);
        snprintf(fifo, sizeof(fifo), "%s/p", dir);
        int fd = kb_open_regular(AT_FDCWD, file, O_WRONLY | O_CREAT, 0600, NULL);
        assert_true(fd >= 0);
        assert_int_equal(kb_write_all(fd, "hello", 5), 0);
        close(fd);
        assert_int_equal(mkfifo(fifo, 0600), 0);
        /* A FIFO is refused at once, never waited on. */
        assert_int_equal(kb_open_regular(AT_FDCWD, fifo, O_RDONLY, 0, NULL), -EINVAL);
        assert_int_equal(kb_open_regular(AT_FDCWD, dir, O_RDONLY, 0, NULL), -EINVAL);
        char *text = NULL;
        size_t len = 0;
        assert_int_equal(kb_read_file(AT_FDCWD, file, 0, 16, &text, &len), 0);
        assert_int_equal(len, 5);
        assert_string_equal(text, "hello");
        free(text);
        assert_int_equal(mkdir(sub, 0700), 0);
        /* A link planted inside is removed, never followed: its target (outside) stays. */
        char keep[] = "/tmp/kbound-test-common-keep-XXXXXX", link[80];
        assert_non_null(mkdtemp(keep));
        snprintf(link, sizeof(link), "%s/link", sub);
        assert_int_equal(symlink(keep, link), 0);
        assert_int_equal(kb_remove_tree(dir), 0);
        struct stat st;
        assert_int_equal(stat(dir, &st), -1);
        assert_int_equal(kb_remove_tree(dir), 0); /* already gone */
        assert_int_equal(stat(keep, &st), 0);
        assert_int_equal(rmdir(keep), 0);
}

/* A descriptor passed down a socket pair arrives as the same file; a message of the wrong size is
 * refused and what it carried closed; a message without one leaves *ret_fd at -1. */
static void test_fd_passing(void **state) {
        (void) state;
        int sv[2], pipe_fds[2], got = -2, value = 0;
        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        assert_int_equal(pipe2(pipe_fds, O_CLOEXEC), 0);
        int sent = 42;
        assert_int_equal(kb_fd_send(sv[0], &sent, sizeof sent, pipe_fds[1]), 0);
        assert_int_equal(kb_fd_recv(sv[1], &value, sizeof value, &got), 0);
        assert_int_equal(value, 42);
        assert_true(got >= 0 && got != pipe_fds[1]);
        struct stat a, b;
        assert_int_equal(fstat(got, &a), 0);
        assert_int_equal(fstat(pipe_fds[1], &b), 0);
        assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
        assert_true(fcntl(got, F_GETFD) & FD_CLOEXEC);
        close(got);

        assert_int_equal(kb_fd_send(sv[0], &sent, sizeof sent, -1), 0);
        assert_int_equal(kb_fd_recv(sv[1], &value, sizeof value, &got), 0);
        assert_int_equal(got, -1);

        char two[2] = {1, 2};
        assert_int_equal(kb_fd_send(sv[0], two, sizeof two, pipe_fds[1]), 0);
        assert_int_equal(kb_fd_recv(sv[1], &value, sizeof value, &got), -EBADMSG);
        assert_int_equal(got, -1);

        close(sv[0]);
        assert_int_equal(kb_fd_recv(sv[1], &value, sizeof value, &got), -EBADMSG); /* end of stream */
        close(sv[1]);
        close(pipe_fds[0]);
        close(pipe_fds[1]);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_hex_encode),   cmocka_unit_test(test_random_hex),
                cmocka_unit_test(test_iso_time_now), cmocka_unit_test(test_env_get),
                cmocka_unit_test(test_path_next),    cmocka_unit_test(test_files),
                cmocka_unit_test(test_fd_passing),   cmocka_unit_test(test_copy_file),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
