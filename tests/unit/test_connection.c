/* test_connection.c: connection files: keys, held ports, endpoints, 0600 writes, strict parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include "kbound/connection.h"
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

/* A private scratch directory per test (mkdtemp makes it 0700), removed with its files. */
typedef struct scratch {
        char dir[64];
} scratch;

static int scratch_setup(void **state) {
        scratch *s = calloc(1, sizeof(*s));
        if (!s)
                return -1;
        snprintf(s->dir, sizeof(s->dir), "/tmp/kb-conn-XXXXXX");
        if (!mkdtemp(s->dir)) {
                free(s);
                return -1;
        }
        *state = s;
        return 0;
}

static int scratch_teardown(void **state) {
        scratch *s = *state;
        char cmd[256];
        /* Only files this test created live here; remove them one by one. */
        static const char *const names[] = {"c.json",     "c2.json",   "link.json",  "big.json",
                                            "sub/c.json", "fifo.json", "empty.json", "locked.json"};
        for (size_t i = 0; i < KB_ELEMENTSOF(names); i++) {
                snprintf(cmd, sizeof(cmd), "%s/%s", s->dir, names[i]);
                unlink(cmd);
        }
        snprintf(cmd, sizeof(cmd), "%s/sub", s->dir);
        rmdir(cmd);
        rmdir(s->dir);
        free(s);
        return 0;
}

static void path_in(const scratch *s, const char *name, char *buf, size_t size) {
        int n = snprintf(buf, size, "%s/%s", s->dir, name);
        assert_true(n > 0 && (size_t) n < size);
}

static void assert_hex_key(const char *key) {
        assert_non_null(key);
        assert_int_equal(strlen(key), 64);
        for (const char *p = key; *p; p++)
                assert_true((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'));
}

/* Binds a fresh TCP socket (no SO_REUSEADDR) to 127.0.0.1:port; returns the fd or -errno. */
static int bind_loopback(int port) {
        struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t) port)};
        inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (bind(fd, (struct sockaddr *) &addr, sizeof(addr)) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

static void test_channel_names(void **state) {
        assert_string_equal(kb_channel_name(KB_CHANNEL_SHELL), "shell");
        assert_string_equal(kb_channel_name(KB_CHANNEL_IOPUB), "iopub");
        assert_string_equal(kb_channel_name(KB_CHANNEL_STDIN), "stdin");
        assert_string_equal(kb_channel_name(KB_CHANNEL_CONTROL), "control");
        assert_string_equal(kb_channel_name(KB_CHANNEL_HB), "hb");
        assert_null(kb_channel_name(_KB_CHANNEL_MAX));
}

static void test_tcp_ports_held_distinct_and_rebindable(void **state) {
        kb_connection *c = NULL;
        assert_int_equal(kb_connection_new_tcp("127.0.0.1", &c), 0);
        assert_int_equal(c->transport, KB_TRANSPORT_TCP);
        assert_string_equal(c->ip, "127.0.0.1");
        assert_string_equal(c->signature_scheme, "hmac-sha256");
        assert_hex_key(c->key);

        for (size_t i = 0; i < _KB_CHANNEL_MAX; i++) {
                assert_in_range(c->ports[i], 1, 65535);
                assert_true(c->held_fds[i] >= 0);
                for (size_t j = 0; j < i; j++)
                        assert_int_not_equal(c->ports[i], c->ports[j]);
                /* While held, nobody else gets the port. */
                assert_int_equal(bind_loopback(c->ports[i]), -EADDRINUSE);
        }

        kb_connection_release_ports(c);
        kb_connection_release_ports(c); /* idempotent */
        int fds[_KB_CHANNEL_MAX];
        for (size_t i = 0; i < _KB_CHANNEL_MAX; i++) {
                assert_int_equal(c->held_fds[i], -1);
                fds[i] = bind_loopback(c->ports[i]);
                assert_true(fds[i] >= 0);
                assert_int_equal(listen(fds[i], 1), 0);
        }
        for (size_t i = 0; i < _KB_CHANNEL_MAX; i++)
                close(fds[i]);
        kb_connection_destroy(&c);
        assert_null(c);
        kb_connection_destroy(&c); /* NULL is fine */
        kb_connection_destroy(NULL);
}

static void test_tcp_bad_ip(void **state) {
        kb_connection *c = NULL;
        assert_int_equal(kb_connection_new_tcp("localhost", &c), -EINVAL);
        assert_int_equal(kb_connection_new_tcp("", &c), -EINVAL);
        assert_int_equal(kb_connection_new_tcp("127.0.0.256", &c), -EINVAL);
        assert_int_equal(kb_connection_new_tcp(NULL, &c), -EINVAL);
        assert_null(c);
}

static void test_keys_differ(void **state) {
        kb_connection *a = NULL, *b = NULL;
        assert_int_equal(kb_connection_new_tcp("127.0.0.1", &a), 0);
        assert_int_equal(kb_connection_new_ipc("/tmp/kb-x", &b), 0);
        assert_hex_key(a->key);
        assert_hex_key(b->key);
        assert_string_not_equal(a->key, b->key);
        kb_connection_destroy(&a);
        kb_connection_destroy(&b);
}

static void test_endpoints(void **state) {
        kb_connection *c = NULL;
        char buf[256], want[64];

        assert_int_equal(kb_connection_new_tcp("127.0.0.1", &c), 0);
        for (size_t i = 0; i < _KB_CHANNEL_MAX; i++) {
                assert_int_equal(kb_connection_endpoint(c, (kb_channel) i, NULL, buf, sizeof(buf)), 0);
                snprintf(want, sizeof(want), "tcp://127.0.0.1:%d", c->ports[i]);
                assert_string_equal(buf, want);
        }
        /* Too small a buffer is refused, not truncated. */
        assert_int_equal(kb_connection_endpoint(c, KB_CHANNEL_SHELL, NULL, buf, 10), -ENAMETOOLONG);
        kb_connection_destroy(&c);

        assert_int_equal(kb_connection_new_ipc("/run/kb/k", &c), 0);
        assert_int_equal(c->transport, KB_TRANSPORT_IPC);
        static const char *const expect[] = {"ipc:///run/kb/k-1", "ipc:///run/kb/k-2", "ipc:///run/kb/k-3",
                                             "ipc:///run/kb/k-4", "ipc:///run/kb/k-5"};
        for (size_t i = 0; i < _KB_CHANNEL_MAX; i++) {
                assert_int_equal(c->held_fds[i], -1);
                assert_int_equal(kb_connection_endpoint(c, (kb_channel) i, NULL, buf, sizeof(buf)), 0);
                assert_string_equal(buf, expect[i]);
        }
        assert_int_equal(kb_connection_endpoint(c, KB_CHANNEL_HB, "/host/dir/k", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "ipc:///host/dir/k-5");
        assert_int_equal(kb_connection_endpoint(c, _KB_CHANNEL_MAX, NULL, buf, sizeof(buf)), -EINVAL);
        kb_connection_release_ports(c); /* no-op for ipc */
        kb_connection_destroy(&c);
}

static void test_ipc_too_long(void **state) {
        kb_connection *c = NULL;
        char prefix[200];
        char buf[512];

        /* "{prefix}-5" plus its NUL must fit in 108 bytes: 105 chars fit, 106 do not. */
        memset(prefix, 'a', sizeof(prefix));
        prefix[0] = '/';
        prefix[106] = '\0';
        assert_int_equal(kb_connection_new_ipc(prefix, &c), -ENAMETOOLONG);
        assert_null(c);
        prefix[105] = '\0';
        assert_int_equal(kb_connection_new_ipc(prefix, &c), 0);
        assert_int_equal(kb_connection_endpoint(c, KB_CHANNEL_HB, NULL, buf, sizeof(buf)), 0);
        assert_int_equal(strlen(buf), strlen("ipc://") + 107);

        /* An override that does not fit sun_path is refused even with a big buffer. */
        memset(prefix, 'b', sizeof(prefix));
        prefix[150] = '\0';
        assert_int_equal(kb_connection_endpoint(c, KB_CHANNEL_SHELL, prefix, buf, sizeof(buf)), -ENAMETOOLONG);
        kb_connection_destroy(&c);

        assert_int_equal(kb_connection_new_ipc("", &c), -EINVAL);
}

static void assert_same_connection(const kb_connection *a, const kb_connection *b) {
        assert_int_equal(a->transport, b->transport);
        assert_string_equal(a->ip, b->ip);
        assert_string_equal(a->key, b->key);
        assert_string_equal(a->signature_scheme, b->signature_scheme);
        for (size_t i = 0; i < _KB_CHANNEL_MAX; i++)
                assert_int_equal(a->ports[i], b->ports[i]);
}

static void test_round_trip_tcp(void **state) {
        scratch *s = *state;
        kb_connection *c = NULL, *back = NULL;
        char path[128];
        struct stat st;

        path_in(s, "c.json", path, sizeof(path));
        assert_int_equal(kb_connection_new_tcp("127.0.0.1", &c), 0);
        c->kernel_name = strdup("python3");
        assert_non_null(c->kernel_name);
        assert_int_equal(kb_connection_write(c, NULL, path), 0);

        assert_int_equal(stat(path, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0600);

        assert_int_equal(kb_connection_read(path, &back), 0);
        assert_same_connection(c, back);
        assert_string_equal(back->kernel_name, "python3");
        for (size_t i = 0; i < _KB_CHANNEL_MAX; i++)
                assert_int_equal(back->held_fds[i], -1);

        /* A second write to the same name is refused: never reuse an existing file. */
        assert_int_equal(kb_connection_write(c, NULL, path), -EEXIST);
        kb_connection_destroy(&c);
        kb_connection_destroy(&back);
}

static void test_round_trip_ipc_with_override(void **state) {
        scratch *s = *state;
        kb_connection *c = NULL, *back = NULL;
        char path[128];

        path_in(s, "c.json", path, sizeof(path));
        assert_int_equal(kb_connection_new_ipc("/host/runtime/kernel", &c), 0);
        assert_int_equal(kb_connection_write(c, "/run/kbound/kernel", path), 0);
        assert_int_equal(kb_connection_read(path, &back), 0);
        assert_int_equal(back->transport, KB_TRANSPORT_IPC);
        /* The file carries the in-sandbox prefix; everything else is the same. */
        assert_string_equal(back->ip, "/run/kbound/kernel");
        assert_string_equal(back->key, c->key);
        assert_null(back->kernel_name);
        for (size_t i = 0; i < _KB_CHANNEL_MAX; i++)
                assert_int_equal(back->ports[i], (int) i + 1);
        kb_connection_destroy(&back);

        path_in(s, "c2.json", path, sizeof(path));
        assert_int_equal(kb_connection_write(c, NULL, path), 0);
        assert_int_equal(kb_connection_read(path, &back), 0);
        assert_same_connection(c, back);
        kb_connection_destroy(&c);
        kb_connection_destroy(&back);
}

static void test_write_refuses_symlink(void **state) {
        scratch *s = *state;
        kb_connection *c = NULL;
        char path[128], target[128];
        struct stat st;

        path_in(s, "link.json", path, sizeof(path));
        path_in(s, "c2.json", target, sizeof(target));
        assert_int_equal(symlink(target, path), 0);
        assert_int_equal(kb_connection_new_ipc("/tmp/kb-k", &c), 0);
        assert_int_equal(kb_connection_write(c, NULL, path), -EEXIST);
        /* The symlink's target was not created through it. */
        assert_int_equal(stat(target, &st), -1);
        kb_connection_destroy(&c);
}

static void test_write_refuses_unsafe_dir(void **state) {
        scratch *s = *state;
        kb_connection *c = NULL;
        char sub[128], path[128];
        struct stat st;
        static const mode_t unsafe[] = {0755, 0710, 0701, 0720, 0702};

        path_in(s, "sub", sub, sizeof(sub));
        path_in(s, "sub/c.json", path, sizeof(path));
        assert_int_equal(mkdir(sub, 0700), 0);
        assert_int_equal(kb_connection_new_ipc("/tmp/kb-k", &c), 0);
        for (size_t i = 0; i < KB_ELEMENTSOF(unsafe); i++) {
                assert_int_equal(chmod(sub, unsafe[i]), 0);
                assert_int_equal(kb_connection_write(c, NULL, path), -EPERM);
                assert_int_equal(stat(path, &st), -1);
        }
        /* Same directory, made private: accepted. */
        assert_int_equal(chmod(sub, 0700), 0);
        assert_int_equal(kb_connection_write(c, NULL, path), 0);

        assert_int_equal(kb_connection_write(c, NULL, "/nonexistent-kb-dir/c.json"), -ENOENT);
        assert_int_equal(kb_connection_write(c, NULL, sub), -EEXIST);
        char trailing[140];
        snprintf(trailing, sizeof(trailing), "%s/", sub);
        assert_int_equal(kb_connection_write(c, NULL, trailing), -EINVAL);
        kb_connection_destroy(&c);
}

static int parse_str(const char *text) {
        kb_connection *c = NULL;
        int r = kb_connection_parse(text, strlen(text), &c);
        if (r == 0)
                kb_connection_destroy(&c);
        else
                assert_null(c);
        return r;
}

#define PORTS "\"shell_port\":1,\"iopub_port\":2,\"stdin_port\":3,\"control_port\":4,\"hb_port\":5"
#define GOOD_TAIL "\"ip\":\"127.0.0.1\",\"key\":\"k\",\"transport\":\"tcp\""

static void test_parse_accepts(void **state) {
        kb_connection *c = NULL;
        const char *text = "{" PORTS "," GOOD_TAIL ",\"kernel_name\":\"ir\",\"extra\":{\"x\":[1]}}\n";
        assert_int_equal(kb_connection_parse(text, strlen(text), &c), 0);
        assert_string_equal(c->signature_scheme, "hmac-sha256"); /* missing = default */
        assert_string_equal(c->kernel_name, "ir");
        assert_int_equal(c->ports[KB_CHANNEL_SHELL], 1);
        assert_int_equal(c->ports[KB_CHANNEL_HB], 5);
        kb_connection_destroy(&c);

        assert_int_equal(parse_str("{" PORTS ",\"ip\":\"127.0.0.1\",\"key\":\"\",\"transport\":\"ipc\","
                                   "\"signature_scheme\":\"hmac-sha256\",\"shell_port\":65535}"),
                         0);
}

static void test_parse_rejects(void **state) {
        static const struct {
                const char *text;
                int err;
        } cases[] = {
                {"", -EPROTO},
                {"{", -EPROTO},
                {"not json", -EPROTO},
                {"{" PORTS "," GOOD_TAIL "} trailing", -EPROTO},
                {"{" PORTS "," GOOD_TAIL "}{}", -EPROTO},
                {"[1,2,3]", -EPROTO},
                {"\"string\"", -EPROTO},
                {"42", -EPROTO},
                {"null", -EPROTO},
                /* missing fields */
                {"{\"iopub_port\":2,\"stdin_port\":3,\"control_port\":4,\"hb_port\":5," GOOD_TAIL "}", -EPROTO},
                {"{\"shell_port\":1,\"iopub_port\":2,\"stdin_port\":3,\"control_port\":4," GOOD_TAIL "}", -EPROTO},
                {"{" PORTS ",\"key\":\"k\",\"transport\":\"tcp\"}", -EPROTO},
                {"{" PORTS ",\"ip\":\"127.0.0.1\",\"transport\":\"tcp\"}", -EPROTO},
                {"{" PORTS ",\"ip\":\"127.0.0.1\",\"key\":\"k\"}", -EPROTO},
                /* invalid ports (later duplicate keys override earlier ones in json-c) */
                {"{" PORTS "," GOOD_TAIL ",\"shell_port\":0}", -EPROTO},
                {"{" PORTS "," GOOD_TAIL ",\"shell_port\":-1}", -EPROTO},
                {"{" PORTS "," GOOD_TAIL ",\"iopub_port\":65536}", -EPROTO},
                {"{" PORTS "," GOOD_TAIL ",\"hb_port\":99999999999999999999}", -EPROTO},
                {"{" PORTS "," GOOD_TAIL ",\"stdin_port\":1.0}", -EPROTO},
                {"{" PORTS "," GOOD_TAIL ",\"stdin_port\":1e3}", -EPROTO},
                {"{" PORTS "," GOOD_TAIL ",\"control_port\":\"4\"}", -EPROTO},
                {"{" PORTS "," GOOD_TAIL ",\"control_port\":null}", -EPROTO},
                {"{" PORTS "," GOOD_TAIL ",\"control_port\":true}", -EPROTO},
                /* ip, key, kernel_name */
                {"{" PORTS "," GOOD_TAIL ",\"ip\":\"\"}", -EPROTO},
                {"{" PORTS "," GOOD_TAIL ",\"ip\":1}", -EPROTO},
                {"{" PORTS "," GOOD_TAIL ",\"ip\":\"127.0.0.1\\u0000evil\"}", -EPROTO},
                {"{" PORTS "," GOOD_TAIL ",\"key\":null}", -EPROTO},
                {"{" PORTS "," GOOD_TAIL ",\"key\":\"a\\u0000b\"}", -EPROTO},
                {"{" PORTS "," GOOD_TAIL ",\"kernel_name\":7}", -EPROTO},
                /* transport and scheme */
                {"{" PORTS "," GOOD_TAIL ",\"transport\":\"udp\"}", -ENOTSUP},
                {"{" PORTS "," GOOD_TAIL ",\"transport\":\"TCP\"}", -ENOTSUP},
                {"{" PORTS "," GOOD_TAIL ",\"transport\":\"\"}", -ENOTSUP},
                {"{" PORTS "," GOOD_TAIL ",\"transport\":3}", -EPROTO},
                {"{" PORTS "," GOOD_TAIL ",\"signature_scheme\":\"hmac-md5\"}", -ENOTSUP},
                {"{" PORTS "," GOOD_TAIL ",\"signature_scheme\":\"\"}", -ENOTSUP},
                {"{" PORTS "," GOOD_TAIL ",\"signature_scheme\":null}", -EPROTO},
                /* not UTF-8 */
                {"{" PORTS "," GOOD_TAIL ",\"kernel_name\":\"\xff\xfe\"}", -EPROTO},
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(cases); i++) {
                int r = parse_str(cases[i].text);
                if (r != cases[i].err)
                        fail_msg("case %zu (%s): got %d, want %d", i, cases[i].text, r, cases[i].err);
        }

        /* An embedded NUL in the text itself. */
        static const char with_nul[] = "{\"a\":1}\0{}";
        kb_connection *c = NULL;
        assert_int_equal(kb_connection_parse(with_nul, sizeof(with_nul) - 1, &c), -EPROTO);

        /* Deep nesting is cut off by the depth limit, not the stack. */
        char deep[4096];
        size_t n = 0;
        deep[n++] = '{';
        memcpy(deep + n, "\"x\":", 4);
        n += 4;
        for (int i = 0; i < 1000; i++)
                deep[n++] = '[';
        assert_int_equal(kb_connection_parse(deep, n, &c), -EPROTO);
        assert_null(c);
}

static void test_parse_oversized(void **state) {
        scratch *s = *state;
        size_t len = KB_CONNECTION_MAX_BYTES + 1;
        char *text = malloc(len);
        kb_connection *c = NULL;
        char path[128];

        assert_non_null(text);
        /* Valid JSON padded with whitespace past the limit: refused for size alone. */
        memset(text, ' ', len);
        const char *obj = "{" PORTS "," GOOD_TAIL "}";
        memcpy(text, obj, strlen(obj));
        assert_int_equal(kb_connection_parse(text, len, &c), -EMSGSIZE);
        assert_int_equal(kb_connection_parse(text, len - 1, &c), 0);
        kb_connection_destroy(&c);

        path_in(s, "big.json", path, sizeof(path));
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, len), (ssize_t) len);
        close(fd);
        assert_int_equal(kb_connection_read(path, &c), -EMSGSIZE);
        assert_null(c);
        free(text);

        assert_int_equal(kb_connection_read("/nonexistent-kb/c.json", &c), -ENOENT);
        assert_int_equal(kb_connection_read("/tmp", &c), -EINVAL);
}

/* Connection files a kernel or a user could hand over broken: each is refused with its own error,
 * promptly (a FIFO must not block the reader waiting for a writer). */
static void test_read_unusable_files(void **state) {
        scratch *s = *state;
        kb_connection *c = NULL;
        char path[128];

        path_in(s, "fifo.json", path, sizeof(path));
        assert_int_equal(mkfifo(path, 0600), 0);
        alarm(10); /* a regression would hang in open(): fail loudly instead */
        assert_int_equal(kb_connection_read(path, &c), -EINVAL);
        alarm(0);
        assert_null(c);

        path_in(s, "empty.json", path, sizeof(path));
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(kb_connection_read(path, &c), -EPROTO);
        assert_null(c);

        /* Unreadable: a 0600 file of root's read by another uid. Root reads anything, so the
         * read happens in a child that gave up root (when we are root; else we are that uid). */
        path_in(s, "locked.json", path, sizeof(path));
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "{}", 2), 2);
        close(fd);
        assert_int_equal(chmod(s->dir, 0711), 0);
        if (geteuid() != 0)
                assert_int_equal(chmod(path, 0000), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                                       setresuid(65534, 65534, 65534) < 0))
                        _exit(2);
                kb_connection *cc = NULL;
                _exit(kb_connection_read(path, &cc) == -EACCES && !cc ? 0 : 1);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        assert_int_equal(chmod(s->dir, 0700), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_channel_names),
                cmocka_unit_test(test_tcp_ports_held_distinct_and_rebindable),
                cmocka_unit_test(test_tcp_bad_ip),
                cmocka_unit_test(test_keys_differ),
                cmocka_unit_test(test_endpoints),
                cmocka_unit_test(test_ipc_too_long),
                cmocka_unit_test_setup_teardown(test_round_trip_tcp, scratch_setup, scratch_teardown),
                cmocka_unit_test_setup_teardown(test_round_trip_ipc_with_override, scratch_setup, scratch_teardown),
                cmocka_unit_test_setup_teardown(test_write_refuses_symlink, scratch_setup, scratch_teardown),
                cmocka_unit_test_setup_teardown(test_write_refuses_unsafe_dir, scratch_setup, scratch_teardown),
                cmocka_unit_test(test_parse_accepts),
                cmocka_unit_test(test_parse_rejects),
                cmocka_unit_test_setup_teardown(test_parse_oversized, scratch_setup, scratch_teardown),
                cmocka_unit_test_setup_teardown(test_read_unusable_files, scratch_setup, scratch_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
