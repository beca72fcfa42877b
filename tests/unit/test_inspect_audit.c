/* test_inspect_audit.c: finding an audited kernel over TCP (kb_inspect_kernel_holder_tcp) on real
 * processes and loopback connections this test makes, this test standing for kbound: a child that
 * accepted the test's connection is found; the same child named as outside the tree when another
 * pid is the launcher; a child that also holds a connection to its own child (a forwarder) is
 * refused, named, as is one whose child shares the accepted socket; no connection at all is
 * -ENOENT. Loopback only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kbound/inspect.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* A listener on 127.0.0.1 and its port. */
static int listener(int *ret_port) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        assert_true(fd >= 0);
        assert_int_equal(bind(fd, (struct sockaddr *) &a, sizeof a), 0);
        assert_int_equal(listen(fd, 4), 0);
        assert_int_equal(getsockname(fd, (struct sockaddr *) &a, &len), 0);
        *ret_port = ntohs(a.sin_port);
        return fd;
}

static int connect_to(int port) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {
                .sin_family = AF_INET, .sin_port = htons((uint16_t) port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (fd < 0 || connect(fd, (struct sockaddr *) &a, sizeof a) < 0)
                return -1;
        return fd;
}

/* A child that listens, tells its port, accepts one connection (and, forwarding, connects to a
 * listener of a child of its own, which accepts), says so, and waits to be killed. */
typedef struct kernel {
        pid_t pid, helper; /* the child, and its own child when forwarding */
        int port, pipe;    /* its port; what it writes to when it has accepted */
} kernel;

enum { PLAIN, FORWARDING, SHARING };

static kernel start(int mode) {
        bool forwarding = mode == FORWARDING;
        int to_parent[2];
        assert_int_equal(pipe(to_parent), 0);
        kernel k = {0};
        k.pid = fork();
        assert_true(k.pid >= 0);
        if (k.pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL); /* nothing outlives a failed test */
                int port, fd = listener(&port), hport = 0, onward = -1, accepted_pipe[2] = {-1, -1};
                pid_t helper = 0;
                if (forwarding) {
                        /* forked before it accepts: the helper must not inherit kbound's connection */
                        int hfd = listener(&hport);
                        if (pipe(accepted_pipe) < 0)
                                _exit(1);
                        helper = fork();
                        if (helper == 0) {
                                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                                int h = accept(hfd, NULL, NULL);
                                /* says when it holds its end, so no one waits on a guess */
                                if (h < 0 || write(accepted_pipe[1], "a", 1) != 1)
                                        _exit(1);
                                pause();
                                _exit(0);
                        }
                        close(hfd);
                }
                if (write(to_parent[1], &port, sizeof port) != sizeof port)
                        _exit(1);
                int accepted = accept(fd, NULL, NULL);
                char a;
                if (forwarding && (onward = connect_to(hport)) >= 0 && read(accepted_pipe[0], &a, 1) != 1)
                        onward = -1;
                if (mode == SHARING && (helper = fork()) == 0) {
                        /* forked after it accepts: holds kbound's connection too */
                        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                        pause();
                        _exit(0);
                }
                if (accepted < 0 || (forwarding && onward < 0) ||
                    write(to_parent[1], &helper, sizeof helper) != sizeof helper)
                        _exit(1);
                pause();
                _exit(0);
        }
        close(to_parent[1]);
        assert_int_equal(read(to_parent[0], &k.port, sizeof k.port), sizeof k.port);
        k.pipe = to_parent[0];
        return k;
}

/* Connects to k, waits until it accepted; returns the connection. */
static int connect_kernel(kernel *k) {
        int fd = connect_to(k->port);
        assert_true(fd >= 0);
        assert_int_equal(read(k->pipe, &k->helper, sizeof k->helper), sizeof k->helper);
        close(k->pipe); /* the child wrote only once every accept was made */
        return fd;
}

static void stop(kernel *k) {
        if (k->helper > 0)
                kill(k->helper, SIGKILL);
        kill(k->pid, SIGKILL);
        waitpid(k->pid, NULL, 0); /* its own child, killed too, is init's to reap */
}

static void test_found(void **state) {
        (void) state;
        kernel k = start(PLAIN);
        int fd = connect_kernel(&k);
        int ports[] = {0, k.port, 0};
        pid_t pid = 0;
        size_t n = 0;
        char why[512] = "";
        int r = kb_inspect_kernel_holder_tcp("/proc", ports, 3, k.pid, &pid, &n, why, sizeof why);
        if (r < 0)
                fail_msg("%s", why);
        assert_int_equal(pid, k.pid);
        assert_int_equal(n, 1);
        assert_true(kb_inspect_descends_from("/proc", k.pid, getpid()));
        assert_false(kb_inspect_descends_from("/proc", getpid(), k.pid));
        /* the same holder, another process named as the launcher: outside its tree */
        pid_t unrelated = fork();
        assert_true(unrelated >= 0);
        if (unrelated == 0) {
                pause();
                _exit(0);
        }
        r = kb_inspect_kernel_holder_tcp("/proc", ports, 3, unrelated, &pid, &n, why, sizeof why);
        assert_int_equal(r, -EPERM);
        assert_non_null(strstr(why, "not by a process of the wrapper's tree"));
        kill(unrelated, SIGKILL);
        waitpid(unrelated, NULL, 0);
        close(fd);
        stop(&k);
}

static void test_forwarder(void **state) {
        (void) state;
        kernel k = start(FORWARDING);
        int fd = connect_kernel(&k);
        int ports[] = {k.port};
        pid_t pid = 0;
        size_t n = 0;
        char why[512] = "";
        int r = kb_inspect_kernel_holder_tcp("/proc", ports, 1, k.pid, &pid, &n, why, sizeof why);
        assert_int_equal(r, -ESRCH);
        if (!strstr(why, "(a forwarder)"))
                fail_msg("%s", why);
        close(fd);
        stop(&k);
}

static void test_shared(void **state) {
        (void) state;
        kernel k = start(SHARING);
        int fd = connect_kernel(&k);
        int ports[] = {k.port};
        pid_t pid = 0;
        size_t n = 0;
        char why[512] = "";
        assert_int_equal(kb_inspect_kernel_holder_tcp("/proc", ports, 1, k.pid, &pid, &n, why, sizeof why), -ESRCH);
        if (!strstr(why, "is held by more than one process"))
                fail_msg("%s", why);
        close(fd);
        stop(&k);
}

static void test_no_connection(void **state) {
        (void) state;
        int port, fd = listener(&port);
        int ports[] = {port};
        pid_t pid = 0;
        size_t n = 7;
        char why[512] = "";
        assert_int_equal(kb_inspect_kernel_holder_tcp("/proc", ports, 1, getpid(), &pid, &n, why, sizeof why), -ENOENT);
        assert_int_equal(n, 0);
        close(fd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_found),
                cmocka_unit_test(test_forwarder),
                cmocka_unit_test(test_shared),
                cmocka_unit_test(test_no_connection),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
