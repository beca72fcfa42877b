/* test_kernelspec.c: kernelspec search order, case-insensitive find, kernel.json parsing, argv. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include "kbound/kernelspec.h"
#include "tmp_tree.h"
#include "valgrind_skip.h"
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int tree_setup(void **state) {
        return tmp_tree_setup(state, "kb-ks");
}

/* root + "/" + rel into buf. */
static void tree_path(const tree *t, const char *rel, char *buf, size_t size) {
        int n = snprintf(buf, size, "%s/%s", t->root, rel);
        assert_true(n > 0 && (size_t) n < size);
}

/* mkdir -p for a path under the tree. */
static void mkdirs(const tree *t, const char *rel) {
        char path[PATH_MAX];
        tree_path(t, rel, path, sizeof(path));
        for (char *p = path + strlen(t->root) + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                assert_true(mkdir(path, 0700) == 0 || errno == EEXIST);
                *p = '/';
        }
        assert_true(mkdir(path, 0700) == 0 || errno == EEXIST);
}

/* Writes rel_dir/kernel.json with json as its content, creating the folders. */
static void write_spec(const tree *t, const char *rel_dir, const char *json) {
        char path[PATH_MAX];
        mkdirs(t, rel_dir);
        int n = snprintf(path, sizeof(path), "%s/%s/kernel.json", t->root, rel_dir);
        assert_true(n > 0 && (size_t) n < sizeof(path));
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, json, strlen(json)), (ssize_t) strlen(json));
        close(fd);
}

/* A valid spec whose display_name marks where it came from. */
static void write_marked(const tree *t, const char *rel_dir, const char *mark) {
        char json[256];
        snprintf(json, sizeof(json), "{\"argv\":[\"run\",\"{connection_file}\"],\"display_name\":\"%s\"}", mark);
        write_spec(t, rel_dir, json);
}

static size_t strv_len(char **v) {
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

static void assert_strv_equal(char **got, const char *const *want, size_t n_want) {
        assert_non_null(got);
        if (strv_len(got) != n_want)
                fail_msg("vector has %zu entries, want %zu (first: %s)", strv_len(got), n_want,
                         got[0] ? got[0] : "(none)");
        for (size_t i = 0; i < n_want; i++)
                assert_string_equal(got[i], want[i]);
}

/* ---------- search path ---------- */

static void test_search_path_full_env(void **state) {
        char *env[] = {"PATH=/bin", "JUPYTER_PATH=/a:/b/", "JUPYTER_DATA_DIR=/d", "XDG_DATA_HOME=/x", "HOME=/h", NULL};
        char **dirs = NULL;
        assert_int_equal(kb_kernelspec_search_path(env, &dirs), 0);
        static const char *const want[] = {"/a/kernels", "/b/kernels", "/d/kernels", "/usr/local/share/jupyter/kernels",
                                           "/usr/share/jupyter/kernels"};
        assert_strv_equal(dirs, want, KB_ELEMENTSOF(want));
        kb_strv_free(dirs);
}

static void test_search_path_fallbacks(void **state) {
        char **dirs = NULL;

        char *xdg[] = {"XDG_DATA_HOME=/x", "HOME=/h", NULL};
        assert_int_equal(kb_kernelspec_search_path(xdg, &dirs), 0);
        static const char *const want_xdg[] = {"/x/jupyter/kernels", "/usr/local/share/jupyter/kernels",
                                               "/usr/share/jupyter/kernels"};
        assert_strv_equal(dirs, want_xdg, KB_ELEMENTSOF(want_xdg));
        kb_strv_free(dirs);

        /* Empty values count as unset, as in jupyter_core. */
        char *home[] = {"JUPYTER_DATA_DIR=", "XDG_DATA_HOME=", "HOME=/h", "JUPYTER_PATH=", NULL};
        assert_int_equal(kb_kernelspec_search_path(home, &dirs), 0);
        static const char *const want_home[] = {"/h/.local/share/jupyter/kernels", "/usr/local/share/jupyter/kernels",
                                                "/usr/share/jupyter/kernels"};
        assert_strv_equal(dirs, want_home, KB_ELEMENTSOF(want_home));
        kb_strv_free(dirs);

        /* Empty JUPYTER_PATH entries are skipped; duplicates collapse onto the first occurrence. */
        char *dup[] = {"JUPYTER_PATH=::/usr/share/jupyter:/p::", "HOME=/h", NULL};
        assert_int_equal(kb_kernelspec_search_path(dup, &dirs), 0);
        static const char *const want_dup[] = {"/usr/share/jupyter/kernels", "/p/kernels",
                                               "/h/.local/share/jupyter/kernels", "/usr/local/share/jupyter/kernels"};
        assert_strv_equal(dirs, want_dup, KB_ELEMENTSOF(want_dup));
        kb_strv_free(dirs);
}

static void test_search_path_ignores_process_env(void **state) {
        char **dirs = NULL;
        char *env[] = {"HOME=/h", NULL};

        assert_int_equal(setenv("JUPYTER_PATH", "/from-getenv", 1), 0);
        assert_int_equal(setenv("JUPYTER_DATA_DIR", "/from-getenv-data", 1), 0);
        assert_int_equal(kb_kernelspec_search_path(env, &dirs), 0);
        for (char **d = dirs; *d; d++)
                assert_null(strstr(*d, "getenv"));
        assert_string_equal(dirs[0], "/h/.local/share/jupyter/kernels");
        kb_strv_free(dirs);
        unsetenv("JUPYTER_PATH");
        unsetenv("JUPYTER_DATA_DIR");

        /* No HOME at all: the passwd entry stands in, like Python's expanduser. */
        char *empty[] = {NULL};
        assert_int_equal(kb_kernelspec_search_path(empty, &dirs), 0);
        assert_int_equal(strv_len(dirs), 3);
        assert_non_null(strstr(dirs[0], "/.local/share/jupyter/kernels"));
        assert_string_equal(dirs[2], "/usr/share/jupyter/kernels");
        kb_strv_free(dirs);
}

/* ---------- discovery ---------- */

/* The search path for env built from the tree; envp strings are formatted into bufs. */
static char **tree_search_path(const tree *t, const char *jupyter_path_rels, const char *data_rel, const char *xdg_rel,
                               const char *home_rel) {
        char bufs[4][1024];
        char *env[5];
        size_t n = 0;

        if (jupyter_path_rels) {
                /* "p1:p2" → "JUPYTER_PATH=/root/p1:/root/p2" */
                int off = snprintf(bufs[n], sizeof(bufs[n]), "JUPYTER_PATH=");
                char rels[256];
                snprintf(rels, sizeof(rels), "%s", jupyter_path_rels);
                for (char *save = NULL, *tok = strtok_r(rels, ":", &save); tok; tok = strtok_r(NULL, ":", &save))
                        off += snprintf(bufs[n] + off, sizeof(bufs[n]) - (size_t) off, "%s%s/%s",
                                        off > (int) strlen("JUPYTER_PATH=") ? ":" : "", t->root, tok);
                env[n] = bufs[n];
                n++;
        }
        if (data_rel) {
                snprintf(bufs[n], sizeof(bufs[n]), "JUPYTER_DATA_DIR=%s/%s", t->root, data_rel);
                env[n] = bufs[n];
                n++;
        }
        if (xdg_rel) {
                snprintf(bufs[n], sizeof(bufs[n]), "XDG_DATA_HOME=%s/%s", t->root, xdg_rel);
                env[n] = bufs[n];
                n++;
        }
        snprintf(bufs[n], sizeof(bufs[n]), "HOME=%s/%s", t->root, home_rel);
        env[n] = bufs[n];
        n++;
        env[n] = NULL;

        char **dirs = NULL;
        assert_int_equal(kb_kernelspec_search_path(env, &dirs), 0);
        return dirs;
}

static void assert_found(const char *name, char **dirs, const char *display_name) {
        kb_kernelspec *spec = NULL;
        int r = kb_kernelspec_find(name, dirs, &spec);
        if (r != 0)
                fail_msg("find %s: %d", name, r);
        assert_string_equal(spec->display_name, display_name);
        kb_kernelspec_destroy(&spec);
        assert_null(spec);
}

static void assert_not_found(const char *name, char **dirs) {
        kb_kernelspec *spec = NULL;
        assert_int_equal(kb_kernelspec_find(name, dirs, &spec), -ENOENT);
        assert_null(spec);
}

static void test_discovery_order(void **state) {
        tree *t = *state;
        write_marked(t, "p1/kernels/foo", "foo from p1");
        write_marked(t, "p2/kernels/foo", "foo from p2");
        write_marked(t, "p2/kernels/bar", "bar from p2");
        write_marked(t, "data/kernels/bar", "bar from data");
        write_marked(t, "data/kernels/baz", "baz from data");
        write_marked(t, "data/kernels/python3", "python3 shadowing the system one");
        write_marked(t, "home/.local/share/jupyter/kernels/qux", "qux from home");
        write_marked(t, "xdg/jupyter/kernels/quux", "quux from xdg");
        mkdirs(t, "p1/kernels/baz"); /* a folder without kernel.json is not a kernel */

        char **dirs = tree_search_path(t, "p1:p2", "data", "xdg", "home");
        assert_found("foo", dirs, "foo from p1");
        assert_found("bar", dirs, "bar from p2");
        assert_found("baz", dirs, "baz from data");
        assert_found("python3", dirs, "python3 shadowing the system one");
        assert_not_found("qux", dirs);  /* JUPYTER_DATA_DIR replaces the home data dir */
        assert_not_found("quux", dirs); /* ... and the XDG one */
        assert_found("ir", dirs, "R");  /* the system dir still follows */
        assert_not_found("nonexistent", dirs);
        assert_not_found("", dirs);
        assert_not_found("..", dirs);
        kb_strv_free(dirs);

        dirs = tree_search_path(t, NULL, NULL, "xdg", "home");
        assert_found("quux", dirs, "quux from xdg");
        assert_not_found("qux", dirs);
        assert_not_found("foo", dirs);
        kb_strv_free(dirs);

        dirs = tree_search_path(t, NULL, NULL, NULL, "home");
        assert_found("qux", dirs, "qux from home");
        assert_not_found("quux", dirs);
        kb_strv_free(dirs);

        /* Reversed JUPYTER_PATH: now p2 wins. */
        dirs = tree_search_path(t, "p2:p1", NULL, NULL, "home");
        assert_found("foo", dirs, "foo from p2");
        kb_strv_free(dirs);
}

static void test_find_case_insensitive(void **state) {
        tree *t = *state;
        char kdir[PATH_MAX];
        write_marked(t, "k/kernels/MyKernel", "mixed case");
        write_marked(t, "k/kernels/Dup", "Dup");
        write_marked(t, "k/kernels/dup", "dup");
        write_marked(t, "k/kernels/DUP", "DUP");
        write_marked(t, "k/kernels/Two", "Two");
        write_marked(t, "k/kernels/TWO", "TWO");
        tree_path(t, "k/kernels", kdir, sizeof(kdir));
        char *dirs[] = {kdir, NULL};

        kb_kernelspec *spec = NULL;
        assert_int_equal(kb_kernelspec_find("mykernel", dirs, &spec), 0);
        assert_string_equal(spec->name, "mykernel"); /* Jupyter reports lowercase names */
        assert_string_equal(spec->display_name, "mixed case");
        kb_kernelspec_destroy(&spec);
        assert_found("MYKERNEL", dirs, "mixed case");
        assert_found("myKernel", dirs, "mixed case");

        /* Several spellings in one folder: the lowercase one wins, else the strcmp-smallest. */
        assert_found("DuP", dirs, "dup");
        assert_found("two", dirs, "TWO");
}

/* An image's kernelspecs are read inside it: its links resolve within the image, never on the host. */
/* sys.prefix folders (venvs, conda envs) go where jupyter_core puts its environment path. */
static void test_search_path_prefixes(void **state) {
        tree *t = *state;
        char venv[PATH_MAX], conda_base[PATH_MAX], plain[PATH_MAX], path[PATH_MAX];
        tree_path(t, "venv", venv, sizeof(venv));
        tree_path(t, "conda", conda_base, sizeof(conda_base));
        tree_path(t, "plain", plain, sizeof(plain));
        mkdirs(t, "venv");
        mkdirs(t, "conda/conda-meta");
        mkdirs(t, "conda/condabin");
        mkdirs(t, "plain");
        tree_path(t, "venv/pyvenv.cfg", path, sizeof(path));
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        close(fd);

        char venv_k[PATH_MAX + 32], conda_k[PATH_MAX + 32], plain_k[PATH_MAX + 32];
        snprintf(venv_k, sizeof(venv_k), "%s/share/jupyter/kernels", venv);
        snprintf(conda_k, sizeof(conda_k), "%s/share/jupyter/kernels", conda_base);
        snprintf(plain_k, sizeof(plain_k), "%s/share/jupyter/kernels", plain);
        /* A venv the user owns comes before the user's folder; a conda base install and a plain
         * prefix after it; /usr is a system folder and adds nothing; a relative one is ignored. */
        char *prefixes[] = {conda_base, venv, plain, "/usr", "relative", NULL};
        char *env[] = {"HOME=/h", NULL};
        char **dirs = NULL;
        assert_int_equal(kb_kernelspec_search_path_prefixes(env, prefixes, &dirs), 0);
        const char *want[] = {venv_k,  "/h/.local/share/jupyter/kernels",  conda_k,
                              plain_k, "/usr/local/share/jupyter/kernels", "/usr/share/jupyter/kernels"};
        assert_strv_equal(dirs, want, KB_ELEMENTSOF(want));
        kb_strv_free(dirs);

        /* JUPYTER_PREFER_ENV_PATH decides for all of them, with jupyter_core's false words. */
        char *prefer[] = {"HOME=/h", "JUPYTER_PREFER_ENV_PATH=yes", NULL};
        assert_int_equal(kb_kernelspec_search_path_prefixes(prefer, prefixes, &dirs), 0);
        const char *want_prefer[] = {conda_k,
                                     venv_k,
                                     plain_k,
                                     "/h/.local/share/jupyter/kernels",
                                     "/usr/local/share/jupyter/kernels",
                                     "/usr/share/jupyter/kernels"};
        assert_strv_equal(dirs, want_prefer, KB_ELEMENTSOF(want_prefer));
        kb_strv_free(dirs);
        char *no[] = {"HOME=/h", "JUPYTER_PREFER_ENV_PATH=Off", NULL};
        assert_int_equal(kb_kernelspec_search_path_prefixes(no, prefixes, &dirs), 0);
        assert_string_equal(dirs[0], "/h/.local/share/jupyter/kernels");
        kb_strv_free(dirs);

        /* Without prefixes it is kb_kernelspec_search_path. */
        assert_int_equal(kb_kernelspec_search_path_prefixes(env, NULL, &dirs), 0);
        const char *want_none[] = {"/h/.local/share/jupyter/kernels", "/usr/local/share/jupyter/kernels",
                                   "/usr/share/jupyter/kernels"};
        assert_strv_equal(dirs, want_none, KB_ELEMENTSOF(want_none));
        kb_strv_free(dirs);
}

static void test_env_prefixes(void **state) {
        tree *t = *state;
        char venv[PATH_MAX], path[PATH_MAX], other[PATH_MAX];
        tree_path(t, "venv", venv, sizeof(venv));
        tree_path(t, "other/bin", other, sizeof(other));
        mkdirs(t, "venv/bin");
        mkdirs(t, "other/bin");
        tree_path(t, "venv/pyvenv.cfg", path, sizeof(path));
        close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        tree_path(t, "venv/bin/python3", path, sizeof(path));
        close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0700));
        tree_path(t, "other/bin/python3", path, sizeof(path));
        close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0700));

        /* The venv of the first python3 on PATH. */
        char path_env[3 * PATH_MAX];
        snprintf(path_env, sizeof(path_env), "PATH=relative:%s/bin:/usr/bin", venv);
        char *env[] = {path_env, NULL};
        char **prefixes = NULL;
        assert_int_equal(kb_kernelspec_env_prefixes(env, &prefixes), 0);
        assert_non_null(prefixes[0]);
        assert_string_equal(prefixes[0], venv);
        assert_null(prefixes[1]);
        kb_strv_free(prefixes);

        /* An activated environment first, deduplicated; a python3 outside any venv adds nothing;
         * a VIRTUAL_ENV that is not a folder is ignored. */
        char venv_env[PATH_MAX + 16], other_path[PATH_MAX + 16];
        snprintf(venv_env, sizeof(venv_env), "VIRTUAL_ENV=%s", venv);
        snprintf(other_path, sizeof(other_path), "PATH=%s", other);
        char *activated[] = {venv_env, "CONDA_PREFIX=/nonexistent/conda", other_path, NULL};
        assert_int_equal(kb_kernelspec_env_prefixes(activated, &prefixes), 0);
        assert_non_null(prefixes[0]);
        assert_string_equal(prefixes[0], venv);
        assert_null(prefixes[1]);
        kb_strv_free(prefixes);
        char *none[] = {NULL};
        assert_int_equal(kb_kernelspec_env_prefixes(none, &prefixes), 0);
        assert_null(prefixes[0]);
        kb_strv_free(prefixes);
}

/* Inside an image: users' ~/.local first (root's, then /home's by name), then --prefix ones. */
static void test_rootfs_search_path_in(void **state) {
        tree *t = *state;
        char path[PATH_MAX];
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_kernelspec", "test_rootfs_search_path_in");
        mkdirs(t, "img/usr");
        mkdirs(t, "img/home/zoe");
        mkdirs(t, "img/home/jovyan");
        mkdirs(t, "img/home/.hidden");
        /* A link out of the image is not a home of the image. */
        tree_path(t, "img/home/escape", path, sizeof(path));
        assert_int_equal(symlink("/root", path), 0);
        write_marked(t, "img/home/jovyan/.local/share/jupyter/kernels/py", "jovyan");
        write_marked(t, "img/usr/share/jupyter/kernels/py", "system");
        tree_path(t, "img", path, sizeof(path));
        int root_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(root_fd >= 0);
        char *prefixes[] = {"/opt/venv", "/opt/conda", NULL};
        char **dirs = NULL;
        assert_int_equal(kb_kernelspec_rootfs_search_path_in(root_fd, prefixes, &dirs), 0);
        const char *want[] = {"/root/.local/share/jupyter/kernels",
                              "/home/jovyan/.local/share/jupyter/kernels",
                              "/home/zoe/.local/share/jupyter/kernels",
                              "/opt/venv/share/jupyter/kernels",
                              "/opt/conda/share/jupyter/kernels",
                              "/usr/local/share/jupyter/kernels",
                              "/usr/share/jupyter/kernels"};
        assert_strv_equal(dirs, want, KB_ELEMENTSOF(want));
        kb_kernelspec *spec = NULL;
        assert_int_equal(kb_kernelspec_find_in_root(root_fd, "py", dirs, &spec), 0);
        assert_string_equal(spec->display_name, "jovyan");
        assert_string_equal(spec->resource_dir, "/home/jovyan/.local/share/jupyter/kernels/py");
        kb_kernelspec_destroy(&spec);
        kb_strv_free(dirs);
        assert_int_equal(kb_kernelspec_rootfs_search_path_in(-1, NULL, &dirs), -EINVAL);
        close(root_fd);
}

static void test_find_in_root(void **state) {
        tree *t = *state;
        char path[PATH_MAX], host_spec[PATH_MAX];
        kb_kernelspec *spec = NULL;
        char **dirs = NULL;

        KB_TEST_SKIP_WITHOUT_OPENAT2("test_kernelspec", "test_find_in_root");

        /* A host folder the image must never reach through a link. */
        write_marked(t, "host/kernels/leak", "host");
        tree_path(t, "host/kernels", host_spec, sizeof(host_spec));
        mkdirs(t, "img/usr/bin");
        write_spec(t, "img/usr/share/jupyter/kernels/Py",
                   "{\"argv\":[\"python3\",\"-f\",\"{connection_file}\",\"{resource_dir}\"],\"language\":\"python\"}");
        write_marked(t, "img/opt/conda/share/jupyter/kernels/py", "conda");
        /* Absolute links inside the image point into the image, like a chroot. */
        mkdirs(t, "img/usr/local/share/jupyter");
        tree_path(t, "img/usr/local/share/jupyter/kernels", path, sizeof(path));
        assert_int_equal(symlink(host_spec, path), 0);
        tree_path(t, "img/usr/share/jupyter/kernels/evil", path, sizeof(path));
        assert_int_equal(symlink("../../../../../../host/kernels/leak", path), 0);

        tree_path(t, "img", path, sizeof(path));
        int root_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(root_fd >= 0);
        assert_int_equal(kb_kernelspec_rootfs_search_path(&dirs), 0);
        const char *want[] = {"/opt/conda/share/jupyter/kernels", "/usr/local/share/jupyter/kernels",
                              "/usr/share/jupyter/kernels"};
        assert_strv_equal(dirs, want, 3);

        /* /opt/conda comes first, as jupyter_core's ENV path precedes the system ones. */
        assert_int_equal(kb_kernelspec_find_in_root(root_fd, "PY", dirs, &spec), 0);
        assert_string_equal(spec->display_name, "conda");
        assert_string_equal(spec->resource_dir, "/opt/conda/share/jupyter/kernels/py");
        kb_kernelspec_destroy(&spec);
        assert_int_equal(kb_kernelspec_find_in_root(root_fd, "/usr/share/jupyter/kernels/Py", dirs, &spec), 0);
        assert_string_equal(spec->name, "py");
        assert_string_equal(spec->resource_dir, "/usr/share/jupyter/kernels/Py");
        kb_kernelspec_destroy(&spec);

        /* Host kernelspecs are invisible: the link to the host folder and the ".." escape both
         * stay inside the image, where nothing is found. */
        assert_int_equal(kb_kernelspec_find_in_root(root_fd, "leak", dirs, &spec), -ENOENT);
        assert_int_equal(kb_kernelspec_find_in_root(root_fd, "evil", dirs, &spec), -ENOENT);
        assert_null(spec);
        assert_int_equal(kb_kernelspec_find_in_root(root_fd, "relative/py", dirs, &spec), -EINVAL);

        /* The image's list: its kernels only, first occurrence winning, nothing from the host. */
        kb_kernelspec **list = NULL;
        size_t broken = 9;
        assert_int_equal(kb_kernelspec_list_in_root(root_fd, dirs, &list, &broken), 0);
        assert_non_null(list[0]);
        assert_string_equal(list[0]->name, "py");
        assert_string_equal(list[0]->display_name, "conda");
        assert_null(list[1]);
        assert_int_equal(broken, 0);
        kb_kernelspec_list_free(list);

        /* kernel.json as a symlink is refused, even one pointing inside the image. */
        mkdirs(t, "img/usr/share/jupyter/kernels/linked");
        tree_path(t, "img/usr/share/jupyter/kernels/linked/kernel.json", path, sizeof(path));
        assert_int_equal(symlink("/usr/share/jupyter/kernels/Py/kernel.json", path), 0);
        assert_int_equal(kb_kernelspec_find_in_root(root_fd, "/usr/share/jupyter/kernels/linked", dirs, &spec), -ELOOP);
        /* ... but it is still one of the image's kernels: listed by name (so it cannot be skipped
         * unchecked), while the list of loadable ones counts it as broken. */
        char **names = NULL;
        assert_int_equal(kb_kernelspec_names_in_root(root_fd, dirs, &names), 0);
        assert_non_null(names[0]);
        assert_string_equal(names[0], "linked");
        assert_non_null(names[1]);
        assert_string_equal(names[1], "py");
        assert_null(names[2]);
        kb_strv_free(names);
        assert_int_equal(kb_kernelspec_names_in_root(-1, dirs, &names), -EINVAL);
        assert_int_equal(kb_kernelspec_list_in_root(root_fd, dirs, &list, &broken), 0);
        assert_string_equal(list[0]->name, "py");
        assert_null(list[1]);
        assert_int_equal(broken, 1);
        kb_kernelspec_list_free(list);

        /* Programs: found through PATH inside the image, canonical path returned. */
        char *env[] = {"PATH=/usr/local/bin:/usr/bin", NULL};
        char *program = NULL;
        assert_int_equal(kb_kernelspec_find_program_in_root(root_fd, "python3", env, &program), -ENOENT);
        tree_path(t, "img/usr/bin/python3.11", path, sizeof(path));
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
        assert_true(fd >= 0);
        close(fd);
        tree_path(t, "img/usr/bin/python3", path, sizeof(path));
        assert_int_equal(symlink("/usr/bin/python3.11", path), 0);
        assert_int_equal(kb_kernelspec_find_program_in_root(root_fd, "python3", env, &program), 0);
        assert_string_equal(program, "/usr/bin/python3.11");
        free(program);
        program = NULL;
        tree_path(t, "img/usr/bin/data", path, sizeof(path));
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(kb_kernelspec_find_program_in_root(root_fd, "/usr/bin/data", env, &program), -EACCES);
        /* A host program reached through an absolute link is not the image's. */
        tree_path(t, "img/usr/bin/sh", path, sizeof(path));
        assert_int_equal(symlink("/bin/sh", path), 0);
        assert_int_equal(kb_kernelspec_find_program_in_root(root_fd, "sh", env, &program), -ENOENT);
        assert_null(program);

        kb_strv_free(dirs);
        close(root_fd);
}

static void test_find_by_path(void **state) {
        tree *t = *state;
        char path[PATH_MAX], resolved[PATH_MAX];
        kb_kernelspec *spec = NULL;

        write_marked(t, "specs/Custom", "custom");
        tree_path(t, "specs/Custom", path, sizeof(path));
        assert_non_null(realpath(path, resolved));

        assert_int_equal(kb_kernelspec_find(path, NULL, &spec), 0);
        assert_string_equal(spec->name, "custom");
        assert_string_equal(spec->resource_dir, resolved);
        assert_int_equal(spec->resource_dir[0], '/');
        kb_kernelspec_destroy(&spec);

        /* Trailing slash and "." components resolve to the same folder. */
        tree_path(t, "specs/Custom/", path, sizeof(path));
        assert_int_equal(kb_kernelspec_find(path, NULL, &spec), 0);
        assert_string_equal(spec->name, "custom");
        kb_kernelspec_destroy(&spec);
        tree_path(t, "specs/Custom/.", path, sizeof(path));
        assert_int_equal(kb_kernelspec_find(path, NULL, &spec), 0);
        assert_string_equal(spec->name, "custom");
        assert_string_equal(spec->resource_dir, resolved);
        kb_kernelspec_destroy(&spec);

        /* A path is never searched for by name, and a folder without kernel.json is ENOENT. */
        mkdirs(t, "specs/empty");
        tree_path(t, "specs/empty", path, sizeof(path));
        assert_int_equal(kb_kernelspec_find(path, NULL, &spec), -ENOENT);
        tree_path(t, "specs/missing", path, sizeof(path));
        assert_int_equal(kb_kernelspec_find(path, NULL, &spec), -ENOENT);
        assert_int_equal(kb_kernelspec_load(path, &spec), -ENOENT);
        assert_null(spec);

        /* A broken kernel.json surfaces its parse error. */
        write_spec(t, "specs/broken", "{\"argv\":[]}");
        tree_path(t, "specs/broken", path, sizeof(path));
        assert_int_equal(kb_kernelspec_find(path, NULL, &spec), -EPROTO);
        assert_null(spec);

        /* With its words: the file, and what is wrong; a syntax error is said as one, with where. */
        static const struct {
                const char *json, *words;
                int err;
        } explained[] = {
                {"{\"argv\":[]}", "/kernel.json: \"argv\" has 0 words (1 to 1024)", -EPROTO},
                {"{\"argv\":[\"k\"],\n \"env\": {\"A\": 1}}", "/kernel.json: \"env\": the value of A is not a string",
                 -EPROTO},
                {"{\"argv\": [\"k\" \"-f\"]}", "/kernel.json: not valid JSON (line 1, column 15: ", -EBADMSG},
                {"{\"argv\": [\"k\"],\n\n \"env\": {,}}",
                 "/kernel.json: not valid JSON (line 3, column 10: ", -EBADMSG},
                {"{\"argv\": [\"k\"]", "/kernel.json: not valid JSON (line 1, column 15: the text ends inside a value)",
                 -EBADMSG},
                {"{\"argv\": [\"k\"]} {}", "/kernel.json: not valid JSON (line 1, column 17: unexpected character)",
                 -EBADMSG},
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(explained); i++) {
                write_spec(t, "specs/broken", explained[i].json);
                kb_error *error = NULL;
                assert_int_equal(kb_kernelspec_lookup(-1, path, NULL, &spec, &error), explained[i].err);
                assert_null(spec);
                assert_non_null(error);
                if (!strstr(kb_error_text(error, explained[i].err), explained[i].words))
                        fail_msg("case %zu: '%s' lacks '%s'", i, kb_error_text(error, explained[i].err),
                                 explained[i].words);
                assert_non_null(strstr(kb_error_text(error, explained[i].err), path));
                kb_error_free(&error);
        }
}

static void test_list(void **state) {
        tree *t = *state;
        char a[PATH_MAX], b[PATH_MAX], missing[PATH_MAX];
        write_marked(t, "a/zeta", "zeta from a");
        write_marked(t, "a/Alpha", "alpha from a");
        write_spec(t, "a/broken", "{\"argv\":\"not a list\"}");
        write_spec(t, "a/shadow", "not json");
        mkdirs(t, "a/not-a-kernel");
        write_marked(t, "b/alpha", "alpha from b");
        write_marked(t, "b/mid", "mid from b");
        write_marked(t, "b/shadow", "good shadow in b");
        tree_path(t, "a", a, sizeof(a));
        tree_path(t, "b", b, sizeof(b));
        tree_path(t, "missing", missing, sizeof(missing));
        char *dirs[] = {missing, a, b, NULL};

        kb_kernelspec **list = NULL;
        size_t n_broken = 99;
        assert_int_equal(kb_kernelspec_list(dirs, &list, &n_broken), 0);
        /* The first folder holding a name decides it, even when it is broken. */
        assert_int_equal(n_broken, 2);
        static const char *const names[] = {"alpha", "mid", "zeta"};
        static const char *const displays[] = {"alpha from a", "mid from b", "zeta from a"};
        size_t n = 0;
        for (; list[n]; n++) {
                assert_true(n < KB_ELEMENTSOF(names));
                assert_string_equal(list[n]->name, names[n]);
                assert_string_equal(list[n]->display_name, displays[n]);
        }
        assert_int_equal(n, KB_ELEMENTSOF(names));
        kb_kernelspec_list_free(list);

        /* No folders: an empty list, not an error; n_broken may be NULL. */
        char *none[] = {NULL};
        assert_int_equal(kb_kernelspec_list(none, &list, NULL), 0);
        assert_null(list[0]);
        kb_kernelspec_list_free(list);
        kb_kernelspec_list_free(NULL);
}

/* ---------- kernel.json parsing ---------- */

static kb_kernelspec *parse_ok(const char *json) {
        kb_kernelspec *spec = NULL;
        int r = kb_kernelspec_parse(json, strlen(json), "k", "/res", &spec);
        if (r != 0)
                fail_msg("parse %s: %d", json, r);
        return spec;
}

/* metadata {"kbound": {"transport": "tcp"}} and nothing else says a kernel speaks only TCP. */
static void test_tcp_only(void **state) {
        (void) state;
        static const struct {
                const char *json;
                bool tcp;
        } cases[] = {
                {"{\"argv\":[\"k\"],\"metadata\":{\"kbound\":{\"transport\":\"tcp\"}}}", true},
                {"{\"argv\":[\"k\"],\"metadata\":{\"kbound\":{\"transport\":\"ipc\"}}}", false},
                {"{\"argv\":[\"k\"],\"metadata\":{\"kbound\":{\"transport\":[\"tcp\"]}}}", false},
                {"{\"argv\":[\"k\"],\"metadata\":{\"kbound\":\"tcp\"}}", false},
                {"{\"argv\":[\"k\"],\"metadata\":{\"transport\":\"tcp\"}}", false},
                {"{\"argv\":[\"k\"]}", false},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                kb_kernelspec *spec = parse_ok(cases[i].json);
                if (spec->tcp_only != cases[i].tcp)
                        fail_msg("%s: tcp_only %d", cases[i].json, spec->tcp_only);
                kb_kernelspec_destroy(&spec);
        }
}

static void test_parse_fields_and_defaults(void **state) {
        kb_kernelspec *spec = parse_ok("{\"argv\":[\"k\"]}");
        assert_string_equal(spec->name, "k");
        assert_string_equal(spec->resource_dir, "/res");
        assert_string_equal(spec->display_name, "k");
        assert_string_equal(spec->language, "");
        assert_string_equal(spec->interrupt_mode, "signal");
        assert_non_null(spec->env);
        assert_null(spec->env[0]);
        kb_kernelspec_destroy(&spec);

        spec = parse_ok("{\"argv\":[\"k\",\"-f\",\"{connection_file}\"],\"display_name\":\"K!\",\"language\":\"R\","
                        "\"interrupt_mode\":\"message\",\"metadata\":{\"debugger\":true,\"x\":[[{}]]},"
                        "\"env\":{\"A\":\"1\",\"B\":\"x=y\",\"C\":\"\"}}");
        assert_string_equal(spec->display_name, "K!");
        assert_string_equal(spec->language, "R");
        assert_string_equal(spec->interrupt_mode, "message");
        static const char *const argv[] = {"k", "-f", "{connection_file}"};
        assert_strv_equal(spec->argv, argv, KB_ELEMENTSOF(argv));
        static const char *const env[] = {"A=1", "B=x=y", "C="};
        assert_strv_equal(spec->env, env, KB_ELEMENTSOF(env));
        kb_kernelspec_destroy(&spec);

        spec = parse_ok("{\"argv\":[\"k\"],\"interrupt_mode\":\"signal\",\"env\":{}}");
        assert_string_equal(spec->interrupt_mode, "signal");
        assert_null(spec->env[0]);
        kb_kernelspec_destroy(&spec);
        kb_kernelspec_destroy(&spec);
        kb_kernelspec_destroy(NULL);
}

static void test_parse_rejects(void **state) {
        static const struct {
                const char *json;
                int err;
        } cases[] = {
                {"", -EBADMSG},
                {"{", -EBADMSG},
                {"[\"k\"]", -EPROTO},
                {"{\"argv\":[\"k\"]} x", -EBADMSG},
                {"{}", -EPROTO},
                {"{\"display_name\":\"no argv\"}", -EPROTO},
                {"{\"argv\":[]}", -EPROTO},
                {"{\"argv\":\"k\"}", -EPROTO},
                {"{\"argv\":null}", -EPROTO},
                {"{\"argv\":[1]}", -EPROTO},
                {"{\"argv\":[\"k\",null]}", -EPROTO},
                {"{\"argv\":[\"k\",[\"x\"]]}", -EPROTO},
                {"{\"argv\":[\"\"]}", -EPROTO},
                {"{\"argv\":[\"k\\u0000evil\"]}", -EPROTO},
                {"{\"argv\":[\"k\"],\"interrupt_mode\":\"Signal\"}", -EPROTO},
                {"{\"argv\":[\"k\"],\"interrupt_mode\":\"none\"}", -EPROTO},
                {"{\"argv\":[\"k\"],\"interrupt_mode\":\"\"}", -EPROTO},
                {"{\"argv\":[\"k\"],\"interrupt_mode\":1}", -EPROTO},
                {"{\"argv\":[\"k\"],\"env\":[]}", -EPROTO},
                {"{\"argv\":[\"k\"],\"env\":\"A=1\"}", -EPROTO},
                {"{\"argv\":[\"k\"],\"env\":{\"A=B\":\"x\"}}", -EPROTO},
                {"{\"argv\":[\"k\"],\"env\":{\"\":\"x\"}}", -EPROTO},
                {"{\"argv\":[\"k\"],\"env\":{\"A\":1}}", -EPROTO},
                {"{\"argv\":[\"k\"],\"env\":{\"A\":null}}", -EPROTO},
                {"{\"argv\":[\"k\"],\"env\":{\"A\":\"x\\u0000y\"}}", -EPROTO},
                {"{\"argv\":[\"k\"],\"display_name\":3}", -EPROTO},
                {"{\"argv\":[\"k\"],\"language\":null}", -EPROTO},
                {"{\"argv\":[\"k\"],\"language\":\"\xc3\x28\"}", -EBADMSG},
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(cases); i++) {
                kb_kernelspec *spec = NULL;
                int r = kb_kernelspec_parse(cases[i].json, strlen(cases[i].json), "k", "/res", &spec);
                if (r != cases[i].err)
                        fail_msg("case %zu (%s): got %d, want %d", i, cases[i].json, r, cases[i].err);
                assert_null(spec);
        }

        /* Size limit, and a NUL inside the text. */
        size_t len = KB_KERNELSPEC_MAX_BYTES + 1;
        char *big = malloc(len);
        assert_non_null(big);
        memset(big, ' ', len);
        memcpy(big, "{\"argv\":[\"k\"]}", 14);
        kb_kernelspec *spec = NULL;
        assert_int_equal(kb_kernelspec_parse(big, len, "k", "/res", &spec), -EMSGSIZE);
        assert_int_equal(kb_kernelspec_parse(big, len - 1, "k", "/res", &spec), 0);
        kb_kernelspec_destroy(&spec);
        free(big);
        static const char nul[] = "{\"argv\":[\"k\"]}\0";
        assert_int_equal(kb_kernelspec_parse(nul, sizeof(nul) - 1, "k", "/res", &spec), -EBADMSG);
        assert_null(spec);
}

static void test_load_oversized_file(void **state) {
        tree *t = *state;
        char path[PATH_MAX];
        mkdirs(t, "big");
        tree_path(t, "big/kernel.json", path, sizeof(path));
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, KB_KERNELSPEC_MAX_BYTES + 1), 0);
        close(fd);
        tree_path(t, "big", path, sizeof(path));
        kb_kernelspec *spec = NULL;
        assert_int_equal(kb_kernelspec_load(path, &spec), -EMSGSIZE);
        assert_null(spec);
}

/* ---------- argv ---------- */

static void test_argv_substitution(void **state) {
        kb_kernelspec *spec =
                parse_ok("{\"argv\":[\"{resource_dir}/run\",\"-f\",\"{connection_file}\","
                         "\"a{connection_file}b{connection_file}c\",\"{connection_file\",\"{resource_dir}\","
                         "\"{unknown}\",\"--x={resource_dir}:{connection_file}\"]}");
        char **argv = NULL;
        assert_int_equal(kb_kernelspec_argv(spec, "/run/kb/conn-{resource_dir}.json", &argv), 0);
        static const char *const want[] = {
                "/res/run",
                "-f",
                "/run/kb/conn-{resource_dir}.json", /* replacement text is not rescanned */
                "a/run/kb/conn-{resource_dir}.jsonb/run/kb/conn-{resource_dir}.jsonc",
                "{connection_file",
                "/res",
                "{unknown}",
                "--x=/res:/run/kb/conn-{resource_dir}.json",
        };
        assert_strv_equal(argv, want, KB_ELEMENTSOF(want));
        kb_strv_free(argv);
        /* The spec's own argv stays unsubstituted. */
        assert_string_equal(spec->argv[2], "{connection_file}");
        assert_int_equal(kb_kernelspec_argv(spec, NULL, &argv), -EINVAL);
        kb_kernelspec_destroy(&spec);
}

static void test_real_kernelspecs(void **state) {
        /* Installed by scripts/setup (python3-ipykernel, r-cran-irkernel). */
        char *dirs[] = {"/usr/share/jupyter/kernels", NULL};
        kb_kernelspec *spec = NULL;
        char **argv = NULL;

        assert_int_equal(kb_kernelspec_find("python3", dirs, &spec), 0);
        assert_string_equal(spec->name, "python3");
        assert_string_equal(spec->resource_dir, "/usr/share/jupyter/kernels/python3");
        assert_string_equal(spec->language, "python");
        assert_string_equal(spec->interrupt_mode, "signal");
        assert_int_equal(kb_kernelspec_argv(spec, "/run/kbound/kernel.json", &argv), 0);
        static const char *const py[] = {"/usr/bin/python3", "-m", "ipykernel_launcher", "-f",
                                         "/run/kbound/kernel.json"};
        assert_strv_equal(argv, py, KB_ELEMENTSOF(py));
        kb_strv_free(argv);
        kb_kernelspec_destroy(&spec);

        assert_int_equal(kb_kernelspec_find("IR", dirs, &spec), 0);
        assert_string_equal(spec->name, "ir");
        assert_string_equal(spec->display_name, "R");
        assert_string_equal(spec->language, "R");
        assert_string_equal(spec->interrupt_mode, "signal"); /* IRkernel declares none */
        assert_int_equal(kb_kernelspec_argv(spec, "/run/kbound/kernel.json", &argv), 0);
        static const char *const r[] = {"R", "--slave", "-e", "IRkernel::main()", "--args", "/run/kbound/kernel.json"};
        assert_strv_equal(argv, r, KB_ELEMENTSOF(r));
        kb_strv_free(argv);
        kb_kernelspec_destroy(&spec);

        kb_kernelspec **list = NULL;
        size_t n_broken = 0;
        assert_int_equal(kb_kernelspec_list(dirs, &list, &n_broken), 0);
        /* Whatever else the machine has installed (Octave, xeus-python): ir and python3 are listed,
         * in name order. */
        ssize_t at_ir = -1, at_python3 = -1;
        for (size_t i = 0; list[i]; i++) {
                if (list[i + 1])
                        assert_true(strcmp(list[i]->name, list[i + 1]->name) < 0);
                if (strcmp(list[i]->name, "ir") == 0)
                        at_ir = (ssize_t) i;
                if (strcmp(list[i]->name, "python3") == 0)
                        at_python3 = (ssize_t) i;
        }
        assert_true(at_ir >= 0);
        assert_true(at_python3 > at_ir);
        kb_kernelspec_list_free(list);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_search_path_full_env),
                cmocka_unit_test(test_search_path_fallbacks),
                cmocka_unit_test(test_search_path_ignores_process_env),
                cmocka_unit_test_setup_teardown(test_discovery_order, tree_setup, tree_teardown),
                cmocka_unit_test_setup_teardown(test_find_case_insensitive, tree_setup, tree_teardown),
                cmocka_unit_test_setup_teardown(test_find_by_path, tree_setup, tree_teardown),
                cmocka_unit_test_setup_teardown(test_search_path_prefixes, tree_setup, tree_teardown),
                cmocka_unit_test_setup_teardown(test_env_prefixes, tree_setup, tree_teardown),
                cmocka_unit_test_setup_teardown(test_rootfs_search_path_in, tree_setup, tree_teardown),
                cmocka_unit_test_setup_teardown(test_find_in_root, tree_setup, tree_teardown),
                cmocka_unit_test_setup_teardown(test_list, tree_setup, tree_teardown),
                cmocka_unit_test(test_parse_fields_and_defaults),
                cmocka_unit_test(test_parse_rejects),
                cmocka_unit_test_setup_teardown(test_load_oversized_file, tree_setup, tree_teardown),
                cmocka_unit_test(test_argv_substitution),
                cmocka_unit_test(test_tcp_only),
                cmocka_unit_test(test_real_kernelspecs),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
