/* test_client.c: the client's behaviour when the process runs out of file descriptors (no kernel:
 * its sockets connect to ipc paths nobody listens on, which libzmq allows). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "kbound/client.h"

static long fds_open(void) {
        DIR *d = opendir("/proc/self/fd");
        assert_non_null(d);
        long n = 0;
        for (struct dirent *de = readdir(d); de; de = readdir(d))
                n += de->d_name[0] != '.';
        closedir(d);
        return n - 1;
}

/* czmq's zsock_new asserts when libzmq cannot make a socket: out of descriptors, kbound aborted
 * (SIGABRT) with team folders and a connection key left on disk. kb_client_new must say -EMFILE. */
static void test_out_of_descriptors_is_an_error(void **state) {
        char dir[] = "/tmp/kb-client-XXXXXX", prefix[64];
        assert_non_null(mkdtemp(dir));
        snprintf(prefix, sizeof(prefix), "%s/k", dir);
        kb_connection *conn = NULL;
        assert_int_equal(kb_connection_new_ipc(prefix, &conn), 0);

        /* A first client starts libzmq's context (its threads' pollers, which libzmq itself cannot
         * do without: kbound checks the limit before any kernel starts, for that). */
        long before = fds_open();
        kb_client *c = NULL;
        assert_int_equal(kb_client_new(conn, NULL, NULL, &c), 0);
        assert_true(fds_open() - before >= 13); /* one per socket: 5 channels, 4 monitors and peers */
        kb_client_destroy(&c);
        /* libzmq closes sockets on its reaper thread: wait until the client's descriptors are gone
         * (the context's stay), so the limit below means what it says. */
        for (int i = 0; i < 500 && fds_open() > before + 5; i++)
                usleep(10000);
        assert_true(fds_open() <= before + 5);

        /* Room for a few sockets, not for all thirteen of a client. */
        struct rlimit saved, low;
        assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
        low = saved;
        low.rlim_cur = (rlim_t) fds_open() + 4;
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
        int r = kb_client_new(conn, NULL, NULL, &c);
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
        assert_int_equal(r, -EMFILE);
        assert_null(c);

        /* And with descriptors again, a client works: nothing was left half made. */
        assert_int_equal(kb_client_new(conn, NULL, NULL, &c), 0);
        kb_client_destroy(&c);
        kb_connection_destroy(&conn);
        assert_int_equal(rmdir(dir), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_out_of_descriptors_is_an_error),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
