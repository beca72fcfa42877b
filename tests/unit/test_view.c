/* test_view.c: the sandbox's view read from the plan, paths resolved through it (links inside
 * the sandbox, never on the host), and the kernel preflight with the binds it names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kbound/view.h"
#include "tmp_tree.h"
#include "valgrind_skip.h"
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int tree_setup(void **state) {
        return tmp_tree_setup(state, "kb-view");
}

/* t->root + rel, in one of 64 static buffers used in turn (a test holds fewer at once). */
static const char *at(const tree *t, const char *rel) {
        static char bufs[64][PATH_MAX];
        static int slot;
        char *b = bufs[slot++ % 64];
        snprintf(b, PATH_MAX, "%s%s", t->root, rel);
        return b;
}

static void mkdirs(const char *path) {
        char buf[PATH_MAX];
        snprintf(buf, sizeof(buf), "%s", path);
        for (char *p = buf + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        mkdir(buf, 0755);
                        *p = '/';
                }
        mkdir(buf, 0755);
}

static void write_file(const char *path, const char *content, mode_t mode) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof(dir), "%s", path);
        *strrchr(dir, '/') = '\0';
        mkdirs(dir);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, content, strlen(content)), (ssize_t) strlen(content));
        close(fd);
        chmod(path, mode);
}

static void make_link(const char *target, const char *path) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof(dir), "%s", path);
        *strrchr(dir, '/') = '\0';
        mkdirs(dir);
        assert_int_equal(symlink(target, path), 0);
}

/* A host policy with ro_paths (NULL-terminated, may be NULL). */
static kb_sandbox_policy host_policy(const tree *t, char **ro_paths) {
        static char ws[PATH_MAX], run[PATH_MAX];
        snprintf(ws, sizeof(ws), "%s/ws", t->root);
        snprintf(run, sizeof(run), "%s/run", t->root);
        return (kb_sandbox_policy){
                .team = "view",
                .workspace = ws,
                .runtime_dir = run,
                .ro_paths = ro_paths,
        };
}

static void test_host_view(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_view", "test_host_view");
        tree *t = *state;
        kb_sandbox_policy policy = host_policy(t, NULL);
        kb_view *v = NULL;
        assert_int_equal(kb_view_new(&policy, &v), 0);

        /* The host's /usr is there, read through its own links (/bin -> usr/bin on merged /usr). */
        char *inside = NULL;
        int fd = -1;
        assert_int_equal(kb_view_resolve(v, "/usr/bin/env", &inside, &fd, NULL), 0);
        assert_string_equal(inside, "/usr/bin/env");
        assert_true(fd >= 0);
        close(fd);
        free(inside);
        inside = NULL;
        assert_int_equal(kb_view_resolve(v, "/usr/bin/../bin/./env", &inside, NULL, NULL), 0);
        assert_string_equal(inside, "/usr/bin/env");
        free(inside);
        inside = NULL;
        struct stat st;
        if (lstat("/bin", &st) == 0 && S_ISLNK(st.st_mode)) {
                assert_int_equal(kb_view_resolve(v, "/bin/env", &inside, NULL, NULL), 0);
                assert_string_equal(inside, "/usr/bin/env");
                free(inside);
                inside = NULL;
        }
        /* A fresh tmpfs: nothing of the host's /tmp; the team's folders are where the plan puts
         * them; bwrap makes the folders on the way to a mount (/run for /run/kbound). */
        char *missing = NULL;
        assert_int_equal(kb_view_resolve(v, at(t, "/x"), NULL, NULL, &missing), -ENOENT);
        assert_string_equal(missing, at(t, "/x"));
        free(missing);
        missing = NULL;
        assert_int_equal(kb_view_resolve(v, "/run", &inside, NULL, NULL), 0);
        free(inside);
        inside = NULL;
        /* Only a curated list of /etc: never the host's shadow file. */
        assert_int_equal(kb_view_resolve(v, "/etc/shadow", NULL, NULL, &missing), -ENOENT);
        assert_string_equal(missing, "/etc/shadow");
        free(missing);
        missing = NULL;
        /* A file is no folder. */
        assert_int_equal(kb_view_resolve(v, "/usr/bin/env/x", NULL, NULL, &missing), -ENOTDIR);
        free(missing);
        assert_int_equal(kb_view_resolve(v, "relative", NULL, NULL, NULL), -EINVAL);
        kb_view_destroy(&v);
        assert_null(v);
        kb_view_destroy(NULL);
}

static void test_ro_bind_and_links(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_view", "test_ro_bind_and_links");
        tree *t = *state;
        /* A venv: its python is a link to the system's, which the sandbox shows. */
        make_link("/usr/bin/env", at(t, "/venv/bin/python"));
        make_link("../bin/python", at(t, "/venv/lib/py"));
        make_link("/nowhere/at/all", at(t, "/venv/bin/dangling"));
        char *paths[] = {(char *) at(t, "/venv"), NULL};
        kb_sandbox_policy policy = host_policy(t, paths);
        kb_view *v = NULL;
        assert_int_equal(kb_view_new(&policy, &v), 0);
        char *inside = NULL, *missing = NULL;
        assert_int_equal(kb_view_resolve(v, at(t, "/venv/bin/python"), &inside, NULL, NULL), 0);
        assert_string_equal(inside, "/usr/bin/env");
        free(inside);
        inside = NULL;
        assert_int_equal(kb_view_resolve(v, at(t, "/venv/lib/py"), &inside, NULL, NULL), 0);
        assert_string_equal(inside, "/usr/bin/env");
        free(inside);
        assert_int_equal(kb_view_resolve(v, at(t, "/venv/bin/dangling"), NULL, NULL, &missing), -ENOENT);
        assert_string_equal(missing, "/nowhere/at/all");
        free(missing);
        kb_view_destroy(&v);

        /* A link loop ends with ELOOP, never a hang. */
        make_link("b", at(t, "/venv/a"));
        make_link("a", at(t, "/venv/b"));
        assert_int_equal(kb_view_new(&policy, &v), 0);
        assert_int_equal(kb_view_resolve(v, at(t, "/venv/a"), NULL, NULL, NULL), -ELOOP);
        kb_view_destroy(&v);
}

/* An image's links resolve inside the image (and so inside the sandbox), never on the host. */
static void test_rootfs_links_stay_inside(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_view", "test_rootfs_links_stay_inside");
        tree *t = *state;
        write_file(at(t, "/img/usr/bin/k"), "#!/usr/bin/missing-interp\n", 0755);
        make_link("/usr/bin/k", at(t, "/img/usr/bin/abs"));
        make_link("../../../../../../../../usr/bin/env", at(t, "/img/usr/bin/up"));
        make_link("/etc/passwd", at(t, "/img/usr/bin/hostfile"));
        mkdirs(at(t, "/img/etc"));
        kb_sandbox_policy policy = host_policy(t, NULL);
        policy.rootfs = at(t, "/img");
        kb_view *v = NULL;
        assert_int_equal(kb_view_new(&policy, &v), 0);
        char *inside = NULL, *missing = NULL;
        assert_int_equal(kb_view_resolve(v, "/usr/bin/abs", &inside, NULL, NULL), 0);
        assert_string_equal(inside, "/usr/bin/k");
        free(inside);
        /* ".." stops at the sandbox's root: the image's /usr/bin/env, which it lacks. */
        assert_int_equal(kb_view_resolve(v, "/usr/bin/up", NULL, NULL, &missing), -ENOENT);
        assert_string_equal(missing, "/usr/bin/env");
        free(missing);
        missing = NULL;
        /* The image's /etc (empty here), not the host's passwd. */
        assert_int_equal(kb_view_resolve(v, "/usr/bin/hostfile", NULL, NULL, &missing), -ENOENT);
        assert_string_equal(missing, "/etc/passwd");
        free(missing);
        kb_view_destroy(&v);

        /* The preflight reads the image's "#!" line and finds its interpreter missing; no host
         * bind is ever suggested for an image. */
        char *argv[] = {"/usr/bin/abs", "-f", "{connection_file}", NULL};
        kb_view_problem *p = NULL;
        assert_int_equal(kb_view_check_kernel(&policy, argv, NULL, NULL, &p), 0);
        assert_non_null(p);
        assert_string_equal(p->what, "interpreter");
        assert_string_equal(p->named, "/usr/bin/missing-interp");
        assert_int_equal(p->error, -ENOENT);
        assert_false(p->on_host);
        assert_null(p->fix[0]);
        kb_view_problem_free(&p);
        assert_null(p);
}

static void test_preflight_names_the_bind(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_view", "test_preflight_names_the_bind");
        tree *t = *state;
        kb_sandbox_policy policy = host_policy(t, NULL);
        kb_view_problem *p = NULL;

        /* Everything in /usr: nothing to say. */
        char *ok_argv[] = {"env", "true", NULL};
        assert_int_equal(kb_view_check_kernel(&policy, ok_argv, NULL, NULL, &p), 0);
        assert_null(p);

        /* A venv's python outside the bound paths: bind the venv (its prefix, not its bin/). */
        make_link("/usr/bin/env", at(t, "/venv/bin/python"));
        char *venv_argv[] = {(char *) at(t, "/venv/bin/python"), "-m", "ipykernel_launcher", NULL};
        assert_int_equal(kb_view_check_kernel(&policy, venv_argv, NULL, NULL, &p), 0);
        assert_non_null(p);
        assert_string_equal(p->what, "program");
        assert_int_equal(p->error, -ENOENT);
        assert_true(p->on_host);
        assert_string_equal(p->missing, at(t, "/venv/bin/python"));
        assert_non_null(p->fix[0]);
        assert_string_equal(p->fix[0], at(t, "/venv"));
        assert_null(p->fix[1]);
        kb_view_problem_free(&p);
        char *bound[] = {(char *) at(t, "/venv"), NULL};
        kb_sandbox_policy fixed = host_policy(t, bound);
        assert_int_equal(kb_view_check_kernel(&fixed, venv_argv, NULL, NULL, &p), 0);
        assert_null(p);

        /* A console script elsewhere whose "#!" names that venv's python: two binds. */
        char script[PATH_MAX + 16];
        snprintf(script, sizeof(script), "#!%s/venv/bin/python -u\nimport sys\n", t->root);
        write_file(at(t, "/tools/bin/my-kernel"), script, 0755);
        char *script_argv[] = {(char *) at(t, "/tools/bin/my-kernel"), NULL};
        assert_int_equal(kb_view_check_kernel(&policy, script_argv, NULL, NULL, &p), 0);
        assert_non_null(p);
        assert_string_equal(p->what, "program");
        assert_non_null(p->fix[0]);
        assert_non_null(p->fix[1]);
        assert_string_equal(p->fix[0], at(t, "/tools"));
        assert_string_equal(p->fix[1], at(t, "/venv"));
        kb_view_problem_free(&p);
        char *tools_only[] = {(char *) at(t, "/tools"), NULL};
        kb_sandbox_policy half = host_policy(t, tools_only);
        assert_int_equal(kb_view_check_kernel(&half, script_argv, NULL, NULL, &p), 0);
        assert_non_null(p);
        assert_string_equal(p->what, "interpreter");
        assert_string_equal(p->named, at(t, "/venv/bin/python"));
        assert_string_equal(p->fix[0], at(t, "/venv"));
        kb_view_problem_free(&p);

        /* "#!/usr/bin/env NAME": NAME through the kernel's PATH (its kernelspec env here). */
        write_file(at(t, "/tools/bin/env-kernel"), "#!/usr/bin/env -S venvpython -u\n", 0755);
        make_link("/usr/bin/env", at(t, "/venv/bin/venvpython"));
        char path_env[PATH_MAX + 32];
        snprintf(path_env, sizeof(path_env), "PATH=%s/venv/bin:/usr/bin", t->root);
        char *env[] = {path_env, NULL};
        char *env_argv[] = {(char *) at(t, "/tools/bin/env-kernel"), NULL};
        assert_int_equal(kb_view_check_kernel(&half, env_argv, env, NULL, &p), 0);
        assert_non_null(p);
        assert_string_equal(p->what, "interpreter");
        assert_string_equal(p->named, "venvpython");
        assert_non_null(p->search_path);
        assert_string_equal(p->fix[0], at(t, "/venv"));
        kb_view_problem_free(&p);

        /* A bare name that is nowhere: no fix, no host path. */
        char *nowhere[] = {"kbound-no-such-program-anywhere", NULL};
        assert_int_equal(kb_view_check_kernel(&policy, nowhere, NULL, NULL, &p), 0);
        assert_non_null(p);
        assert_false(p->on_host);
        assert_null(p->missing);
        assert_null(p->fix[0]);
        kb_view_problem_free(&p);

        /* There but not executable. */
        write_file(at(t, "/tools/bin/plain"), "data\n", 0644);
        char *plain[] = {(char *) at(t, "/tools/bin/plain"), NULL};
        assert_int_equal(kb_view_check_kernel(&half, plain, NULL, NULL, &p), 0);
        assert_non_null(p);
        assert_int_equal(p->error, -EACCES);
        assert_null(p->fix[0]);
        kb_view_problem_free(&p);

        /* "#!" with nothing after it. */
        write_file(at(t, "/tools/bin/empty-shebang"), "#!   \n", 0755);
        char *empty[] = {(char *) at(t, "/tools/bin/empty-shebang"), NULL};
        assert_int_equal(kb_view_check_kernel(&half, empty, NULL, NULL, &p), 0);
        assert_non_null(p);
        assert_int_equal(p->error, -ENOEXEC);
        kb_view_problem_free(&p);
}

static void test_preflight_resource_dir_and_rootfs(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_view", "test_preflight_resource_dir_and_rootfs");
        tree *t = *state;
        kb_sandbox_policy policy = host_policy(t, NULL);
        kb_view_problem *p = NULL;

        /* A kernel that reads a file in its own kernelspec folder needs that folder. */
        mkdirs(at(t, "/home/.local/share/jupyter/kernels/k"));
        char *argv[] = {"/usr/bin/env", "{resource_dir}/kernel.py", NULL};
        assert_int_equal(kb_view_check_kernel(&policy, argv, NULL, at(t, "/home/.local/share/jupyter/kernels/k"), &p),
                         0);
        assert_non_null(p);
        assert_string_equal(p->what, "resource folder");
        assert_string_equal(p->fix[0], at(t, "/home/.local/share/jupyter/kernels/k"));
        kb_view_problem_free(&p);
        /* Without "{resource_dir}" in argv the folder is not needed. */
        char *argv2[] = {"/usr/bin/env", "x", NULL};
        assert_int_equal(kb_view_check_kernel(&policy, argv2, NULL, at(t, "/home/.local/share/jupyter/kernels/k"), &p),
                         0);
        assert_null(p);

        /* A kernelspec inside an unpacked image whose program only the image has: --rootfs. */
        write_file(at(t, "/img/usr/local/bin/kbound-image-only-kernel"), "x", 0755);
        mkdirs(at(t, "/img/usr/share/jupyter/kernels/imgk"));
        char *img_argv[] = {"/usr/local/bin/kbound-image-only-kernel", NULL};
        assert_int_equal(
                kb_view_check_kernel(&policy, img_argv, NULL, at(t, "/img/usr/share/jupyter/kernels/imgk"), &p), 0);
        assert_non_null(p);
        assert_false(p->on_host);
        assert_non_null(p->rootfs);
        assert_string_equal(p->rootfs, at(t, "/img"));
        kb_view_problem_free(&p);

        assert_int_equal(kb_view_check_kernel(&policy, NULL, NULL, NULL, &p), -EINVAL);
        char *empty_name[] = {"", NULL};
        assert_int_equal(kb_view_check_kernel(&policy, empty_name, NULL, NULL, &p), -EINVAL);
}

/* Every plan kbound makes parses: an option the view does not know would be -EPROTO. */
static void test_plans_parse(void **state) {
        tree *t = *state;
        mkdirs(at(t, "/img/usr"));
        char *paths[] = {"/opt", NULL};
        kb_sandbox_hardening hard = {.disable_userns = true};
        kb_sandbox_policy policies[4];
        policies[0] = host_policy(t, NULL);
        policies[1] = host_policy(t, paths);
        policies[1].allow_network = true;
        policies[1].hardening = &hard;
        policies[1].syscall_probe = "/usr/bin/env";
        policies[1].boundary_probe = "/usr/bin/true";
        policies[2] = host_policy(t, NULL);
        policies[2].rootfs = at(t, "/img");
        policies[3] = policies[2];
        policies[3].ro_paths = paths;
        for (size_t i = 0; i < KB_ELEMENTSOF(policies); i++) {
                kb_view *v = NULL;
                assert_int_equal(kb_view_new(&policies[i], &v), 0);
                kb_view_destroy(&v);
        }
        kb_sandbox_policy bad = host_policy(t, NULL);
        bad.team = "../x";
        kb_view *v = NULL;
        assert_int_equal(kb_view_new(&bad, &v), -EINVAL);
        assert_null(v);
        /* The probe programs are bound by path (every bwrap can): there, as the host files they bind. */
        assert_int_equal(kb_view_new(&policies[1], &v), 0);
        static const char *const programs[][2] = {{KB_SANDBOX_PROBE_PROGRAM, "/usr/bin/env"},
                                                  {KB_SANDBOX_BOUNDARY_PROGRAM, "/usr/bin/true"}};
        for (size_t i = 0; i < KB_ELEMENTSOF(programs); i++) {
                int fd = -1;
                assert_int_equal(kb_view_resolve(v, programs[i][0], NULL, &fd, NULL), 0);
                assert_true(fd >= 0);
                struct stat shown, bound;
                assert_int_equal(fstat(fd, &shown), 0);
                assert_int_equal(stat(programs[i][1], &bound), 0);
                assert_true(shown.st_dev == bound.st_dev && shown.st_ino == bound.st_ino);
                close(fd);
        }
        kb_view_destroy(&v);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_host_view, tree_setup, tree_teardown),
                cmocka_unit_test_setup_teardown(test_ro_bind_and_links, tree_setup, tree_teardown),
                cmocka_unit_test_setup_teardown(test_rootfs_links_stay_inside, tree_setup, tree_teardown),
                cmocka_unit_test_setup_teardown(test_preflight_names_the_bind, tree_setup, tree_teardown),
                cmocka_unit_test_setup_teardown(test_preflight_resource_dir_and_rootfs, tree_setup, tree_teardown),
                cmocka_unit_test_setup_teardown(test_plans_parse, tree_setup, tree_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
