/* test_boundary_probe.c: kbound-probe (src/tools/boundary_probe.c) run as a kernel's cell would run
 * it, against a fixture whose every answer is known: a temporary workspace; escape folders one
 * writable and one read-only (the program runs without the capabilities that override file modes,
 * so this holds for root too); a loopback TCP listener and a bound port that does not listen; an
 * abstract unix listener and a name nobody holds; a canary in its environment; a key in a fresh
 * session keyring it possesses; credential and sibling files readable and not. Each assertion
 * names a key of the result object probe.py publishes (docs/probes-cells.md), so a shape or value
 * the judges read that drifts fails here:
 *   pid; workspace.{path,written,error}; write_outside[].{path,fstype,mount_point,created,error};
 *   sysctl[].{path,opened,error}; network.{interfaces,routes_v4,routes_v6,tcp[].{port,connected,
 *   error},abstract[].{name,tested,connected,error},unix_visible}; credentials.subprocess.{spawned,
 *   pid,go,error,environ,proc[].{pid,environ,cmdline}}; credentials.files[].{path,exists,content};
 *   credentials.keys.{tested,found,payload,error}; cross_team[].{path,exists,readable,content};
 *   mounts; process.{no_new_privs,seccomp,cap_eff,cap_prm,cap_bnd,uid,gid,visible_processes};
 *   errors[].{probe,error}.
 * And the attack-surface cell: {pid, child: the table's tries, errors}. Both results are held to
 * facts.def's declaration of them too (PROBE, SURFACE), through which the program writes them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "tmp_tree.h"
#include "child_output.h"
#include <json-c/json.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include "kbound/common.h"
#include "kbound/seccomp.h"
#include "base/facts.h"
#include "base/jsonget.h"

#define OUTPUT_MAX (8 << 20)
#define RUN_SECONDS 30
#define CANARY "KBOUND_TEST_CANARY=kbound-canary-value-7d1f"
#define KEY_PAYLOAD "kbound-key-payload-5e2a"
#define KEYCTL_JOIN_SESSION_KEYRING 1
#define KEY_SPEC_SESSION_KEYRING (-3)
/* The capabilities that let root write into a 0555 folder and read a 0000 file. */
#define CAP_DAC_OVERRIDE 1
#define CAP_DAC_READ_SEARCH 2
#define CAP_FOWNER 3

extern char **environ;

typedef struct fixture {
        tree t;
        int tcp_listener, tcp_closed, unix_listener;
        int tcp_port, closed_port;
        char abstract_name[64], key_name[64], go[PATH_MAX];
        bool keyring; /* the key was planted for the program (keyctl works here) */
} fixture;

static int setup(void **state) {
        void *t = NULL;
        if (tmp_tree_setup(&t, "kbound-bprobe") < 0)
                return -1;
        fixture *f = calloc(1, sizeof *f);
        f->t = *(tree *) t;
        free(t);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        fixture *f = *state;
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/escape-ro", f->t.root);
        chmod(p, 0755); /* for the removal, when the test ran as another user than root */
        tmp_tree_remove(f->t.root);
        for (int *fd = &f->tcp_listener; fd <= &f->unix_listener; fd++)
                if (*fd > 0)
                        close(*fd);
        free(f);
        return 0;
}

/* A TCP socket on 127.0.0.1, listening or only bound (which refuses connections); its port. */
static int loopback(bool listening, int *ret_port) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        assert_true(fd >= 0);
        assert_int_equal(bind(fd, (struct sockaddr *) &a, sizeof a), 0);
        if (listening)
                assert_int_equal(listen(fd, 4), 0);
        assert_int_equal(getsockname(fd, (struct sockaddr *) &a, &len), 0);
        *ret_port = ntohs(a.sin_port);
        return fd;
}

static void lay_out(fixture *f) {
        const char *root = f->t.root;
        tmp_tree_mkdir(root, "workspace");
        tmp_tree_mkdir(root, "escape-rw");
        tmp_tree_mkdir(root, "escape-ro");
        tmp_tree_write(root, "credential", "kbound-credential-content", 25);
        tmp_tree_write(root, "sibling/b", "x", 1);
        tmp_tree_write(root, "sibling/a", "y", 1);
        tmp_tree_write(root, "sibling-secret", "z", 1);
        tmp_tree_write(root, "setting", "", 0);
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/escape-ro", root);
        assert_int_equal(chmod(p, 0555), 0);
        snprintf(p, sizeof p, "%s/sibling-secret", root);
        assert_int_equal(chmod(p, 0), 0);
        snprintf(f->go, sizeof f->go, "%s/go", root);
        f->tcp_listener = loopback(true, &f->tcp_port);
        f->tcp_closed = loopback(false, &f->closed_port);
        snprintf(f->abstract_name, sizeof f->abstract_name, "kbound-test-%d", (int) getpid());
        snprintf(f->key_name, sizeof f->key_name, "kbound-test-key-%d", (int) getpid());
        struct sockaddr_un u = {.sun_family = AF_UNIX};
        memcpy(u.sun_path + 1, f->abstract_name, strlen(f->abstract_name));
        f->unix_listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_int_equal(bind(f->unix_listener, (struct sockaddr *) &u,
                              (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + strlen(f->abstract_name))),
                         0);
        assert_int_equal(listen(f->unix_listener, 4), 0);
}

/* The cell's parameters for the fixture: "/" skipped, so the program tries the escape folders
 * alone and never writes anywhere else on the test's machine. */
static json_object *params_of(const fixture *f) {
        char text[8192];
        const char *r = f->t.root;
        snprintf(text, sizeof text,
                 "{\"workspace\": \"%s/workspace\", \"nonce\": \"N0NCE\", \"workspace_file\": \"kbound-probe-N.txt\","
                 " \"escape_name\": \"kbound-escape-N\", \"escape_dirs\": [\"%s/escape-rw\", \"%s/escape-ro\"],"
                 " \"skip_mounts\": [\"/\"], \"tcp_ports\": [%d, %d], \"abstract_sockets\": [\"%s\", \"%s-none\"],"
                 " \"credential_paths\": [\"%s/credential\", \"%s/no-such-file\"],"
                 " \"sibling_paths\": [\"%s/sibling\", \"%s/sibling-secret\"], \"timeout_ms\": 2000,"
                 " \"sysctl_paths\": [\"%s/setting\", \"%s/no-such-setting\"], \"keyring_canary\": \"%s\","
                 " \"child_marker\": \"kbound-child-T\", \"child_go\": \"%s\", \"child_wait_s\": 20}",
                 r, r, r, f->tcp_port, f->closed_port, f->abstract_name, f->abstract_name, r, r, r, r, r, r,
                 f->key_name, f->go);
        json_object *p = NULL;
        assert_int_equal(kb_json_parse_strict(text, strlen(text), 8, &p), 0);
        return p;
}

static char *base64(const char *s) {
        char *out = malloc(strlen(s) / 3 * 4 + 8);
        assert_non_null(out);
        EVP_EncodeBlock((unsigned char *) out, (const unsigned char *) s, (int) strlen(s));
        return out;
}

/* In the program's child, before exec: the capabilities that override file modes dropped from the
 * bounding set (root's exec then does not regain them), and a key in a fresh session keyring. */
static void child_prepare(fixture *f) {
        static const int caps[] = {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER};
        for (size_t i = 0; i < KB_ELEMENTSOF(caps); i++)
                if (prctl(PR_CAPBSET_DROP, caps[i], 0, 0, 0) < 0 && geteuid() == 0)
                        _exit(123);
        if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) >= 0)
                syscall(SYS_add_key, "user", f->key_name, KEY_PAYLOAD, strlen(KEY_PAYLOAD), KEY_SPEC_SESSION_KEYRING);
}

/* Runs kbound-probe with argv (after the program's name) and, as its environment, the test's own
 * plus CANARY; answers its child marker by creating f->go (when f is given); fails the test unless
 * it exits with want_status. Returns what it printed (malloc'd, NUL-terminated) and the marker
 * line's pid in *ret_marker_pid (-1: none). */
static char *run(fixture *f, char **args, int want_status, pid_t *ret_pid, long *ret_marker_pid) {
        int out[2];
        assert_int_equal(pipe2(out, O_CLOEXEC), 0);
        char *argv[8] = {KBOUND_PROBE};
        for (size_t i = 0; args[i]; i++)
                argv[i + 1] = args[i];
        size_t n_env = 0;
        while (environ[n_env])
                n_env++;
        char **envp = calloc(n_env + 2, sizeof *envp);
        memcpy(envp, environ, n_env * sizeof *envp);
        envp[n_env] = CANARY;
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (f)
                        child_prepare(f);
                if (dup2(out[1], STDOUT_FILENO) < 0)
                        _exit(121);
                int null = want_status ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
                if (null >= 0 && dup2(null, STDERR_FILENO) < 0) /* a refusal's usage text */
                        _exit(121);
                execve(KBOUND_PROBE, argv, envp);
                _exit(122);
        }
        free(envp);
        close(out[1]);
        char *buf = malloc(OUTPUT_MAX + 1);
        size_t len = 0;
        long marker_pid = -1;
        int64_t deadline = kb_now_ms() + RUN_SECONDS * 1000;
        for (;;) {
                struct pollfd p = {.fd = out[0], .events = POLLIN};
                int64_t left = deadline - kb_now_ms();
                if (left <= 0 || poll(&p, 1, (int) left) == 0) {
                        kill(pid, SIGKILL);
                        fail_msg("kbound-probe did not finish within %d s", RUN_SECONDS);
                }
                size_t got = child_output_read(out[0], buf, len, OUTPUT_MAX, KBOUND_PROBE);
                if (got == 0)
                        break;
                len += got;
                buf[len] = '\0';
                /* the marker line, once whole: the host's look would come now; then the go file */
                if (f && marker_pid < 0 && strchr(buf, '\n') && sscanf(buf, "kbound-child-T %ld\n", &marker_pid) == 1) {
                        int fd = open(f->go, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                        assert_true(fd >= 0);
                        close(fd);
                }
        }
        close(out[0]);
        buf[len] = '\0';
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != want_status)
                fail_msg("kbound-probe: %s %d, not exit status %d (123: cannot drop capabilities); output: %.400s",
                         WIFEXITED(status) ? "exit status" : "signal",
                         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), want_status, buf);
        *ret_pid = pid;
        if (ret_marker_pid)
                *ret_marker_pid = marker_pid;
        return buf;
}

/* The result object: the last line of what the program printed. */
static json_object *result_of(const char *out) {
        size_t len = strlen(out);
        assert_true(len > 0 && out[len - 1] == '\n');
        const char *start = out + len - 1;
        while (start > out && start[-1] != '\n')
                start--;
        json_object *r = NULL;
        if (kb_json_parse_strict(start, (size_t) (out + len - start), 16, &r) < 0 ||
            !json_object_is_type(r, json_type_object))
                fail_msg("the last line is not one JSON object: %.400s", start);
        return r;
}

/* r holds to facts.def's declaration of the cell's object type: every fact of the kind the judges
 * read it as. */
static void assert_conforms(json_object *r, kb_fact_object type) {
        json_object *problems = json_object_new_array();
        int n = kb_fact_validate(r, type, true, problems, 8);
        if (n != 0)
                fail_msg("%d problems against facts.def's %s: %s", n, kb_fact_object_name(type),
                         json_object_to_json_string(problems));
        json_object_put(problems);
}

/* An integer member, or -1. */
static int64_t num(json_object *o, const char *key) {
        int64_t v = -1;
        return kb_json_int(o, key, &v) ? v : -1;
}

static json_object *at(json_object *a, size_t i) {
        assert_true(json_object_is_type(a, json_type_array) && i < json_object_array_length(a));
        return json_object_array_get_idx(a, i);
}

static bool is_null(json_object *o, const char *key) {
        json_object *v = (json_object *) 1;
        return json_object_object_get_ex(o, key, &v) && v == NULL;
}

static void assert_error(json_object *o, const char *want) {
        const char *got = kb_json_str(o, "error");
        if (!got || strcmp(got, want) != 0)
                fail_msg("error %s, not %s, in %s", got ? got : "null", want, json_object_to_json_string(o));
}

static void assert_file(const char *root, const char *rel, const char *want) {
        char p[PATH_MAX], *content = NULL;
        snprintf(p, sizeof p, "%s/%s", root, rel);
        assert_int_equal(kb_read_file(AT_FDCWD, p, O_NOFOLLOW, 4096, &content, NULL), 0);
        assert_string_equal(content, want);
        free(content);
}

static void test_boundary(void **state) {
        fixture *f = *state;
        lay_out(f);
        json_object *params = params_of(f);
        char *b64 = base64(json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN));
        char kernel[24];
        snprintf(kernel, sizeof kernel, "%d", (int) getpid());
        char *args[] = {"--kernel-pid", kernel, "boundary", b64, NULL};
        pid_t pid;
        long marker_pid;
        char *out = run(f, args, 0, &pid, &marker_pid);
        json_object *r = result_of(out);
        const char *root = f->t.root;
        char want[PATH_MAX];

        assert_conforms(r, KB_FACT_OBJECT_PROBE);
        assert_int_equal(num(r, "pid"), getpid());
        assert_int_equal(json_object_array_length(kb_json_get(r, "errors")), 0);

        json_object *ws = kb_json_get(r, "workspace");
        snprintf(want, sizeof want, "%s/workspace/kbound-probe-N.txt", root);
        assert_string_equal(kb_json_str(ws, "path"), want);
        assert_true(kb_json_true(ws, "written"));
        assert_true(is_null(ws, "error"));
        assert_file(root, "workspace/kbound-probe-N.txt", "N0NCE");

        /* "/" skipped: exactly the two escape folders, in order */
        json_object *wo = kb_json_get(r, "write_outside");
        assert_int_equal(json_object_array_length(wo), 2);
        snprintf(want, sizeof want, "%s/escape-rw", root);
        assert_string_equal(kb_json_str(at(wo, 0), "path"), want);
        assert_true(kb_json_true(at(wo, 0), "created"));
        assert_true(is_null(at(wo, 0), "error"));
        assert_non_null(kb_json_str(at(wo, 0), "fstype"));
        assert_non_null(kb_json_str(at(wo, 0), "mount_point"));
        assert_file(root, "escape-rw/kbound-escape-N", "N0NCE");
        assert_false(kb_json_true(at(wo, 1), "created"));
        assert_error(at(wo, 1), "EACCES");

        json_object *sysctl = kb_json_get(r, "sysctl");
        assert_true(kb_json_true(at(sysctl, 0), "opened"));
        assert_false(kb_json_true(at(sysctl, 1), "opened"));
        assert_error(at(sysctl, 1), "ENOENT");
        assert_file(root, "setting", ""); /* opened, never written */

        json_object *net = kb_json_get(r, "network");
        assert_true(json_object_array_length(kb_json_get(net, "interfaces")) >= 1);
        assert_string_equal(json_object_get_string(at(kb_json_get(net, "interfaces"), 0)), "lo");
        assert_true(json_object_is_type(kb_json_get(net, "routes_v4"), json_type_array));
        assert_true(json_object_is_type(kb_json_get(net, "routes_v6"), json_type_array));
        json_object *tcp = kb_json_get(net, "tcp");
        assert_int_equal(num(at(tcp, 0), "port"), f->tcp_port);
        assert_true(kb_json_true(at(tcp, 0), "connected"));
        assert_true(is_null(at(tcp, 0), "error"));
        assert_int_equal(num(at(tcp, 1), "port"), f->closed_port);
        assert_false(kb_json_true(at(tcp, 1), "connected"));
        assert_error(at(tcp, 1), "ECONNREFUSED");
        json_object *abs = kb_json_get(net, "abstract");
        assert_string_equal(kb_json_str(at(abs, 0), "name"), f->abstract_name);
        assert_true(kb_json_true(at(abs, 0), "tested"));
        assert_true(kb_json_true(at(abs, 0), "connected"));
        assert_false(kb_json_true(at(abs, 1), "connected"));
        assert_error(at(abs, 1), "ECONNREFUSED");
        json_object *visible = kb_json_get(net, "unix_visible");
        assert_int_equal(json_object_array_length(visible), 1);
        assert_string_equal(json_object_get_string(at(visible, 0)), f->abstract_name);

        /* the program is the spawned child: its marker named it, it waited for the go file */
        json_object *sub = kb_json_get(kb_json_get(r, "credentials"), "subprocess");
        assert_true(kb_json_true(sub, "spawned"));
        assert_int_equal(num(sub, "pid"), pid);
        assert_int_equal(marker_pid, pid);
        assert_true(kb_json_true(sub, "go"));
        assert_true(is_null(sub, "error"));
        assert_non_null(strstr(kb_json_str(sub, "environ"), CANARY));
        bool self_read = false;
        json_object *procs = kb_json_get(sub, "proc");
        assert_true(json_object_array_length(procs) >= 1 && json_object_array_length(procs) <= 256);
        for (size_t i = 0; i < json_object_array_length(procs); i++)
                if (num(at(procs, i), "pid") == pid) {
                        self_read = strstr(kb_json_str(at(procs, i), "environ"), CANARY) &&
                                    strstr(kb_json_str(at(procs, i), "cmdline"), "boundary\n");
                        assert_true(i == 0 || num(at(procs, i - 1), "pid") < pid);
                }
        assert_true(self_read);

        json_object *files = kb_json_get(kb_json_get(r, "credentials"), "files");
        assert_true(kb_json_true(at(files, 0), "exists"));
        assert_string_equal(kb_json_str(at(files, 0), "content"), "kbound-credential-content");
        assert_false(kb_json_true(at(files, 1), "exists"));
        assert_true(is_null(at(files, 1), "content"));

        json_object *keys = kb_json_get(kb_json_get(r, "credentials"), "keys");
        assert_true(kb_json_true(keys, "tested"));
        if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno == ENOSYS)
                fail_msg("keyctl(2) is missing here: the key canary cannot be tested");
        assert_true(kb_json_true(keys, "found"));
        assert_string_equal(kb_json_str(keys, "payload"), KEY_PAYLOAD);

        json_object *cross = kb_json_get(r, "cross_team");
        assert_true(kb_json_true(at(cross, 0), "readable"));
        assert_string_equal(kb_json_str(at(cross, 0), "content"), "a\nb");
        assert_true(kb_json_true(at(cross, 1), "exists"));
        assert_false(kb_json_true(at(cross, 1), "readable"));
        assert_true(is_null(at(cross, 1), "content"));

        assert_true(json_object_array_length(kb_json_get(r, "mounts")) >= 1);
        json_object *proc = kb_json_get(r, "process");
        assert_int_equal(num(proc, "uid"), getuid());
        assert_int_equal(num(proc, "gid"), getgid());
        assert_true(num(proc, "no_new_privs") >= 0);
        assert_true(num(proc, "seccomp") >= 0);
        assert_int_equal(strlen(kb_json_str(proc, "cap_eff")), 16);
        assert_true(num(proc, "visible_processes") >= 2);

        json_object_put(r);
        json_object_put(params);
        free(out);
        free(b64);
}

/* A bad parameter fails its own sub-probe, listed in errors, and hides none of the others. */
static void test_bad_parameter(void **state) {
        fixture *f = *state;
        lay_out(f);
        json_object *params = params_of(f);
        json_object_object_add(params, "escape_dirs", json_object_new_string("not a list"));
        json_object_object_add(params, "tcp_ports", json_object_new_string("neither"));
        json_object_object_del(params, "child_marker");
        json_object_object_add(params, "child_wait_s", json_object_new_double(0.05));
        char *b64 = base64(json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN));
        char *args[] = {"boundary", b64, NULL};
        pid_t pid;
        char *out = run(NULL, args, 0, &pid, NULL);
        json_object *r = result_of(out);
        assert_conforms(r, KB_FACT_OBJECT_PROBE);
        json_object *errors = kb_json_get(r, "errors");
        assert_int_equal(json_object_array_length(errors), 2);
        assert_string_equal(kb_json_str(at(errors, 0), "probe"), "write_outside");
        assert_string_equal(kb_json_str(at(errors, 0), "error"), "parameter escape_dirs is not a list");
        assert_string_equal(kb_json_str(at(errors, 1), "probe"), "network.tcp");
        assert_int_equal(json_object_array_length(kb_json_get(r, "write_outside")), 0);
        assert_int_equal(json_object_array_length(kb_json_get(kb_json_get(r, "network"), "tcp")), 0);
        assert_true(kb_json_true(kb_json_get(r, "workspace"), "written"));
        assert_true(kb_json_true(at(kb_json_get(kb_json_get(r, "network"), "abstract"), 0), "connected"));
        json_object *sub = kb_json_get(kb_json_get(r, "credentials"), "subprocess");
        assert_false(kb_json_true(sub, "go")); /* nobody made the go file */
        /* no marker asked for: the result is the only line */
        assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1);
        json_object_put(r);
        json_object_put(params);
        free(out);
        free(b64);
}

/* Parameters that are not one JSON object in base64 are refused with exit status 2, no result. */
static void test_refused(void **state) {
        pid_t pid;
        char *bad[][3] = {{"boundary", "!!!", NULL},
                          {"boundary", "WzFd", NULL},
                          {"boundary", NULL, NULL},
                          {"elsewhere", "e30=", NULL}};
        for (size_t i = 0; i < KB_ELEMENTSOF(bad); i++) {
                char *out = run(NULL, bad[i], 2, &pid, NULL);
                assert_string_equal(out, "");
                free(out);
        }
}

/* The attack-surface cell: every entry of the table tried, in the cell's result shape. */
static void test_attack_surface(void **state) {
        char *args[] = {"--kernel-pid", "7", "attack-surface", NULL};
        pid_t pid;
        char *out = run(NULL, args, 0, &pid, NULL);
        json_object *r = result_of(out);
        assert_conforms(r, KB_FACT_OBJECT_SURFACE);
        assert_int_equal(num(r, "pid"), 7);
        assert_int_equal(json_object_array_length(kb_json_get(r, "errors")), 0);
        json_object *child = kb_json_get(r, "child");
        assert_int_equal(num(child, "version"), 1);
        json_object *results = kb_json_get(child, "results");
        assert_int_equal(json_object_array_length(results), kb_seccomp_entry_count());
        for (size_t i = 0; i < json_object_array_length(results); i++) {
                assert_non_null(kb_json_str(at(results, i), "name"));
                assert_non_null(kb_json_get(at(results, i), "tested"));
        }
        json_object_put(r);
        free(out);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_boundary, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_parameter, setup, teardown),
                cmocka_unit_test(test_refused),
                cmocka_unit_test(test_attack_surface),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
