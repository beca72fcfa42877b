/* test_sockdiag.c: sock_diag's unix sockets on a real set of sockets this test makes: a listener,
 * a connection to it (both ends), a socketpair with bytes waiting in one end, a bound datagram
 * socket, an abstract name holding a newline, a name bound relative to the working folder, a
 * listener with a connection it has not accepted; and a socket made in another network namespace,
 * seen only through a sock_diag socket made there; and TCP on the loopback (inet_diag), both families. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kbound/common.h"
#include "base/sockdiag.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/kbound-sockdiag-XXXXXX";

static uint32_t inode_of(int fd) {
        struct stat st;
        assert_int_equal(fstat(fd, &st), 0);
        return (uint32_t) st.st_ino;
}

static int bound(int type, const void *name, size_t len) {
        int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
        assert_true(fd >= 0);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        assert_true(len <= sizeof a.sun_path);
        memcpy(a.sun_path, name, len);
        if (bind(fd, (struct sockaddr *) &a, (socklen_t) (offsetof(struct sockaddr_un, sun_path) + len)) < 0)
                fail_msg("bind: %s", strerror(errno));
        return fd;
}

static const kb_sockdiag_unix *find(const kb_sockdiag_unix *list, size_t n, int fd) {
        const kb_sockdiag_unix *u = kb_sockdiag_find(list, n, inode_of(fd));
        if (!u)
                fail_msg("socket:[%u] is not in the list of %zu", inode_of(fd), n);
        return u;
}

static void assert_file(const kb_sockdiag_unix *u, const char *path) {
        struct stat st;
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISSOCK(st.st_mode));
        assert_true(u->has_file);
        assert_int_equal(u->file_dev, st.st_dev);
        assert_int_equal(u->file_ino, (uint32_t) st.st_ino);
}

static void test_every_kind(void **state) {
        char listen_path[PATH_MAX], dgram_path[PATH_MAX], rel_path[PATH_MAX], cwd[PATH_MAX];
        assert_non_null(mkdtemp(dir));
        snprintf(listen_path, sizeof listen_path, "%s/listen.sock", dir);
        snprintf(dgram_path, sizeof dgram_path, "%s/log.sock", dir);
        snprintf(rel_path, sizeof rel_path, "%s/rel.sock", dir);

        int listener = bound(SOCK_STREAM, listen_path, strlen(listen_path));
        assert_int_equal(listen(listener, 4), 0);
        int client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        memcpy(a.sun_path, listen_path, strlen(listen_path));
        assert_int_equal(connect(client, (struct sockaddr *) &a, sizeof a), 0);
        int accepted = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        assert_true(accepted >= 0);
        int pair[2];
        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
        int dgram = bound(SOCK_DGRAM, dgram_path, strlen(dgram_path));
        /* the pid in it: another run of the test binds its own */
        char abstract[64];
        size_t abstract_len =
                (size_t) snprintf(abstract, sizeof abstract, "%ckbound-test\nnot a line %d", '\0', (int) getpid());
        int abs_fd = bound(SOCK_STREAM, abstract, abstract_len);
        assert_int_equal(listen(abs_fd, 1), 0);
        assert_non_null(getcwd(cwd, sizeof cwd));
        assert_int_equal(chdir(dir), 0);
        int rel = bound(SOCK_STREAM, "rel.sock", strlen("rel.sock") + 1);
        assert_int_equal(chdir(cwd), 0);
        /* a connection the relative listener has not accepted: it waits in its queue */
        assert_int_equal(listen(rel, 4), 0);
        int waiting = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        memcpy(a.sun_path, rel_path, strlen(rel_path) + 1);
        assert_int_equal(connect(waiting, (struct sockaddr *) &a, sizeof a), 0);
        /* three bytes waiting in pair[1], none in pair[0] */
        assert_int_equal(write(pair[0], "abc", 3), 3);

        kb_sockdiag_unix *list = NULL;
        size_t n = 0;
        assert_int_equal(kb_sockdiag_unix_list(-1, &list, &n), 0);
        assert_true(n >= 8);
        for (size_t i = 1; i < n; i++)
                assert_true(list[i - 1].inode < list[i].inode);

        const kb_sockdiag_unix *u = find(list, n, listener);
        assert_int_equal(u->type, SOCK_STREAM);
        assert_int_equal(u->state, TCP_LISTEN);
        assert_int_equal(u->name_len, strlen(listen_path));
        assert_memory_equal(u->name, listen_path, strlen(listen_path));
        assert_true(kb_sockdiag_is_path(u));
        assert_int_equal(u->peer, 0);
        assert_file(u, listen_path);
        assert_true(u->has_uid);
        assert_int_equal(u->uid, geteuid());

        u = find(list, n, client);
        assert_int_equal(u->state, TCP_ESTABLISHED);
        assert_int_equal(u->peer, inode_of(accepted));
        assert_int_equal(u->name_len, 0);
        assert_false(u->has_file);
        /* the accepted end: the listener's name and file, the client as its peer */
        u = find(list, n, accepted);
        assert_int_equal(u->state, TCP_ESTABLISHED);
        assert_int_equal(u->peer, inode_of(client));
        assert_memory_equal(u->name, listen_path, strlen(listen_path));
        assert_file(u, listen_path);

        u = find(list, n, pair[0]);
        assert_int_equal(u->type, SOCK_SEQPACKET);
        assert_int_equal(u->peer, inode_of(pair[1]));
        assert_true(u->has_rqueue);
        assert_int_equal(u->rqueue, 0);
        u = find(list, n, pair[1]);
        assert_int_equal(u->peer, inode_of(pair[0]));
        assert_int_equal(u->rqueue, 3);
        /* a listener's queue: how many wait, and each one's connecting socket */
        u = find(list, n, listener);
        assert_int_equal(u->rqueue, 0);
        assert_int_equal(u->n_pending, 0);
        u = find(list, n, rel);
        assert_int_equal(u->state, TCP_LISTEN);
        assert_int_equal(u->rqueue, 1);
        assert_int_equal(u->n_pending, 1);
        assert_int_equal(u->pending[0], inode_of(waiting));
        /* the connecting socket shows no peer: the connection waiting in that queue has no inode
         * until it is accepted, so the listener's queue is the only place that names it */
        u = find(list, n, waiting);
        assert_int_equal(u->state, TCP_ESTABLISHED);
        assert_int_equal(u->peer, 0);

        u = find(list, n, dgram);
        assert_int_equal(u->type, SOCK_DGRAM);
        assert_int_equal(u->state, TCP_CLOSE);
        assert_int_equal(u->peer, 0);
        assert_file(u, dgram_path);

        /* an abstract name: every byte, the newline and the leading NUL included; no file */
        u = find(list, n, abs_fd);
        assert_int_equal(u->name_len, abstract_len);
        assert_memory_equal(u->name, abstract, abstract_len);
        assert_false(kb_sockdiag_is_path(u));
        assert_false(u->has_file);

        /* a relative name is reported as bound; the file says where it is */
        u = find(list, n, rel);
        assert_int_equal(u->name_len, strlen("rel.sock"));
        assert_memory_equal(u->name, "rel.sock", strlen("rel.sock"));
        assert_file(u, rel_path);

        assert_null(kb_sockdiag_find(list, n, 0));
        free(list);

        /* one sock_diag socket answers twice */
        int fd = kb_sockdiag_open();
        assert_true(fd >= 0);
        for (int i = 0; i < 2; i++) {
                assert_int_equal(kb_sockdiag_unix_list(fd, &list, &n), 0);
                assert_non_null(kb_sockdiag_find(list, n, inode_of(rel)));
                free(list);
        }
        close(fd);

        /* not a sock_diag socket: an error, and nothing written */
        int p[2];
        assert_int_equal(pipe(p), 0);
        list = NULL;
        n = 12345;
        assert_int_equal(kb_sockdiag_unix_list(p[0], &list, &n), -ENOTSOCK);
        assert_null(list);
        assert_int_equal(n, 12345);
        close(p[0]);
        close(p[1]);

        int fds[] = {listener, client, accepted, pair[0], pair[1], dgram, abs_fd, rel, waiting};
        for (size_t i = 0; i < KB_ELEMENTSOF(fds); i++)
                close(fds[i]);
        unlink(listen_path);
        unlink(dgram_path);
        unlink(rel_path);
        assert_int_equal(rmdir(dir), 0);
}

/* A sock_diag socket made in another network namespace lists that namespace's sockets wherever it
 * is used: a child in a new user and network namespace makes one, binds an abstract name there and
 * hands the socket back. */
static void test_other_namespace(void **state) {
        int sv[2];
        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        char name[64]; /* the pid in it: another run of the test binds its own */
        size_t name_len = (size_t) snprintf(name, sizeof name, "%ckbound-test-other-netns-%d", '\0', (int) getpid());
        int here = bound(SOCK_STREAM, name, name_len); /* the same name, in this namespace */
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(sv[0]);
                int err = 0, diag = -1, theirs = -1;
                if (unshare(geteuid() == 0 ? CLONE_NEWNET : CLONE_NEWUSER | CLONE_NEWNET) < 0)
                        err = errno;
                if (!err && (diag = kb_sockdiag_open()) < 0)
                        err = -diag;
                if (!err) {
                        theirs = socket(AF_UNIX, SOCK_STREAM, 0);
                        struct sockaddr_un a = {.sun_family = AF_UNIX};
                        memcpy(a.sun_path, name, name_len);
                        if (bind(theirs, (struct sockaddr *) &a, offsetof(struct sockaddr_un, sun_path) + name_len) < 0)
                                err = errno;
                }
                uint32_t ino = 0;
                struct stat st;
                if (!err && fstat(theirs, &st) == 0)
                        ino = (uint32_t) st.st_ino;
                struct {
                        int err;
                        uint32_t ino;
                } msg = {err, ino};
                if (kb_fd_send(sv[1], &msg, sizeof msg, err ? -1 : diag) < 0)
                        _exit(2);
                char wait_for_parent;
                (void) !read(sv[1], &wait_for_parent, 1);
                _exit(0);
        }
        close(sv[1]);
        struct {
                int err;
                uint32_t ino;
        } msg;
        int diag = -1;
        assert_int_equal(kb_fd_recv(sv[0], &msg, sizeof msg, &diag), 0);
        if (msg.err)
                fail_msg("the child could not make a network namespace of its own: %s (user namespaces "
                         "allowed?)",
                         strerror(msg.err));
        assert_true(diag >= 0);

        kb_sockdiag_unix *list = NULL;
        size_t n = 0;
        assert_int_equal(kb_sockdiag_unix_list(diag, &list, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(list[0].inode, msg.ino);
        assert_memory_equal(list[0].name, name, name_len);
        assert_null(kb_sockdiag_find(list, n, inode_of(here)));
        free(list);
        close(diag);
        assert_int_equal(write(sv[0], "x", 1), 1);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        close(sv[0]);
        close(here);
}

/* A message of no bytes carrying a descriptor shows in no queue length, of a datagram socket or a
 * seqpacket one: why boundary.descriptors holds a datagram socket bound to a name as taking messages
 * from senders it cannot know, whatever its queue says (judge_socket_ends.c). Bytes do show. */
static void test_empty_message_unseen(void **state) {
        (void) state;
        int dgram[2], seq[2];
        assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, dgram), 0);
        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, seq), 0);
        int fd = open("/", O_PATH | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(kb_fd_send(dgram[0], "", 0, fd), 0);
        assert_int_equal(kb_fd_send(seq[0], "", 0, fd), 0);
        kb_sockdiag_unix *list = NULL;
        size_t n = 0;
        assert_int_equal(kb_sockdiag_unix_list(-1, &list, &n), 0);
        assert_true(find(list, n, dgram[1])->has_rqueue);
        assert_int_equal(find(list, n, dgram[1])->rqueue, 0);
        assert_int_equal(find(list, n, seq[1])->rqueue, 0);
        free(list);
        assert_int_equal(kb_fd_send(seq[0], "ab", 2, -1), 0);
        assert_int_equal(kb_sockdiag_unix_list(-1, &list, &n), 0);
        assert_int_equal(find(list, n, seq[1])->rqueue, 2);
        free(list);
        /* the descriptor was there all along */
        char byte;
        int got = -1;
        assert_int_equal(kb_fd_recv(dgram[1], &byte, 0, &got), 0);
        assert_true(got >= 0);
        close(got);
        int fds[] = {dgram[0], dgram[1], seq[0], seq[1], fd};
        for (size_t i = 0; i < KB_ELEMENTSOF(fds); i++)
                close(fds[i]);
}

/* TCP on the loopback, both families: a listener, a connection to it and its accepted end, each end
 * found as the other's peer by the crossed addresses; one not accepted yet has no inode. */
static const kb_sockdiag_tcp *find_tcp(const kb_sockdiag_tcp *list, size_t n, uint32_t inode) {
        for (size_t i = 0; i < n; i++)
                if (list[i].inode == inode)
                        return &list[i];
        fail_msg("socket:[%u] is not in the TCP list of %zu", inode, n);
        return NULL;
}

static void tcp_family(int family) {
        struct sockaddr_storage ss = {0};
        socklen_t len;
        if (family == AF_INET) {
                struct sockaddr_in *in = (struct sockaddr_in *) &ss;
                in->sin_family = AF_INET;
                in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                len = sizeof *in;
        } else {
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &ss;
                in6->sin6_family = AF_INET6;
                in6->sin6_addr = in6addr_loopback;
                len = sizeof *in6;
        }
        int listener = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(listener >= 0);
        if (bind(listener, (struct sockaddr *) &ss, len) < 0) {
                assert_int_equal(family, AF_INET6); /* a host without IPv6 on its loopback */
                close(listener);
                return;
        }
        assert_int_equal(listen(listener, 4), 0);
        assert_int_equal(getsockname(listener, (struct sockaddr *) &ss, &len), 0);
        int client = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0),
            waiting = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_int_equal(connect(client, (struct sockaddr *) &ss, len), 0);
        int accepted = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        assert_true(accepted >= 0);
        assert_int_equal(connect(waiting, (struct sockaddr *) &ss, len), 0);
        unsigned port = ntohs(family == AF_INET ? ((struct sockaddr_in *) &ss)->sin_port
                                                : ((struct sockaddr_in6 *) &ss)->sin6_port);

        kb_sockdiag_tcp *list = NULL;
        size_t n = 0;
        assert_int_equal(kb_sockdiag_tcp_list(-1, &list, &n), 0);
        const kb_sockdiag_tcp *l = find_tcp(list, n, inode_of(listener));
        assert_int_equal(l->state, TCP_LISTEN);
        assert_int_equal(l->family, family);
        assert_int_equal(l->local_port, port);
        const kb_sockdiag_tcp *c = find_tcp(list, n, inode_of(client)), *a = find_tcp(list, n, inode_of(accepted));
        assert_int_equal(c->state, TCP_ESTABLISHED);
        assert_int_equal(c->remote_port, port);
        assert_true(kb_sockdiag_tcp_loopback(c, true));
        assert_int_equal(c->uid, geteuid());
        assert_ptr_equal(kb_sockdiag_tcp_peer(list, n, c), a);
        assert_ptr_equal(kb_sockdiag_tcp_peer(list, n, a), c);
        char words[80], expect[80];
        kb_sockdiag_tcp_address(c, true, words, sizeof words);
        snprintf(expect, sizeof expect, family == AF_INET ? "127.0.0.1:%u" : "[::1]:%u", port);
        assert_string_equal(words, expect);
        /* in the listener's queue: its end is listed, held by no file yet */
        const kb_sockdiag_tcp *w = find_tcp(list, n, inode_of(waiting)), *queued = kb_sockdiag_tcp_peer(list, n, w);
        assert_non_null(queued);
        assert_int_equal(queued->inode, 0);
        free(list);
        close(waiting);
        close(accepted);
        close(client);
        close(listener);
}

static void test_tcp(void **state) {
        (void) state;
        tcp_family(AF_INET);
        tcp_family(AF_INET6);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_every_kind),
                cmocka_unit_test(test_tcp),
                cmocka_unit_test(test_other_namespace),
                cmocka_unit_test(test_empty_message_unseen),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
