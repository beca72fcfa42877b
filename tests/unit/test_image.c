/* test_image.c: --image's unpacking with the real skopeo and umoci on a tiny image made here: the
 * formats, the name and digests, the limits, and the failures (no tools, no image, cancelled). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kbound/image.h"
#include "tmp_tree.h"
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* tmp_tree.h's tree is one folder; this one also names the image's layout and unpack folders. */
typedef struct image_tree {
        char root[64];
        char work[128];
        char layout[128];
} image_tree;

/* Runs argv (found on PATH), quietly; returns its exit status. */
static int run(char *const *argv) {
        pid_t pid = fork();
        if (pid == 0) {
                int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
                dup2(null, 1);
                dup2(null, 2);
                execvp(argv[0], argv);
                _exit(127);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void write_file(const char *path, const char *content) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, content, strlen(content)), (ssize_t) strlen(content));
        close(fd);
}

/* A one-layer OCI image with usr/bin/hello and a folder the caller cannot write (an image may
 * hold such: removal must still work), tagged "tiny". */
static int image_setup(void **state) {
        static const char *const tools[] = {"/usr/bin/skopeo", "/usr/bin/umoci", "/usr/bin/tar"};
        for (size_t i = 0; i < KB_ELEMENTSOF(tools); i++)
                if (access(tools[i], X_OK) < 0) {
                        fprintf(stderr, "test_image: %s is missing: run scripts/setup (apt-get install skopeo umoci)\n",
                                tools[i]);
                        return -1;
                }
        image_tree *t = calloc(1, sizeof(*t));
        if (!t)
                return -1;
        snprintf(t->root, sizeof(t->root), "/tmp/kb-image-XXXXXX");
        if (!mkdtemp(t->root))
                return -1;
        char src[128], tarball[128], path[256];
        snprintf(t->work, sizeof(t->work), "%s/work", t->root);
        snprintf(t->layout, sizeof(t->layout), "%s/layout", t->root);
        snprintf(src, sizeof(src), "%s/src", t->root);
        snprintf(tarball, sizeof(tarball), "%s/layer.tar", t->root);
        mkdir(t->work, 0700);
        mkdir(src, 0755);
        snprintf(path, sizeof(path), "%s/usr", src);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/usr/bin", src);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/usr/bin/hello", src);
        write_file(path, "#!/bin/sh\necho hello\n");
        snprintf(path, sizeof(path), "%s/usr/locked", src);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/usr/locked/file", src);
        write_file(path, "x");
        snprintf(path, sizeof(path), "%s/usr/locked", src);
        chmod(path, 0555);
        char layout_ref[200];
        snprintf(layout_ref, sizeof(layout_ref), "%s:tiny", t->layout);
        char *tar_argv[] = {"tar", "-C", src, "-cf", tarball, ".", NULL};
        char *init[] = {"umoci", "init", "--layout", t->layout, NULL};
        char *new_image[] = {"umoci", "new", "--image", layout_ref, NULL};
        char *add[] = {"umoci", "raw", "add-layer", "--image", layout_ref, tarball, NULL};
        char *config[] = {"umoci",
                          "config",
                          "--image",
                          layout_ref,
                          "--config.user",
                          "1000",
                          "--config.env",
                          "PATH=/opt/x/bin:/usr/bin",
                          NULL};
        char *gc[] = {"umoci", "gc", "--layout", t->layout, NULL};
        if (run(tar_argv) || run(init) || run(new_image) || run(add) || run(config) || run(gc)) {
                fprintf(stderr, "test_image: could not build the tiny image with tar and umoci\n");
                return -1;
        }
        *state = t;
        return 0;
}

static int image_teardown(void **state) {
        image_tree *t = *state;
        char cmd_path[256];
        snprintf(cmd_path, sizeof(cmd_path), "%s/src/usr/locked", t->root);
        chmod(cmd_path, 0755);
        tmp_tree_remove(t->root);
        free(t);
        return 0;
}

/* The manifest digest index.json names for the only image of layout. */
static void index_digest(const char *layout, char *buf, size_t size) {
        char path[256];
        snprintf(path, sizeof(path), "%s/index.json", layout);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        char text[4096] = "";
        size_t n = fread(text, 1, sizeof(text) - 1, f);
        fclose(f);
        text[n] = '\0';
        char *d = strstr(text, "\"digest\":\"");
        assert_non_null(d);
        d += strlen("\"digest\":\"");
        snprintf(buf, size, "%.71s", d);
}

static void test_unpack_layout(void **state) {
        image_tree *t = *state;
        kb_image_options o = {.image = t->layout, .work_dir = t->work, .envp = environ, .deadline_ms = -1};
        kb_image *img = NULL;
        kb_error *error = NULL;
        assert_int_equal(kb_image_unpack(&o, &img, &error), 0);
        assert_null(error);
        char path[512], digest[80];
        struct stat st;
        snprintf(path, sizeof(path), "%s/usr/bin/hello", kb_image_rootfs(img));
        assert_int_equal(stat(path, &st), 0);
        assert_true(S_ISREG(st.st_mode) && (st.st_mode & 0100));
        /* The files are the caller's (umoci --rootless), as root and unprivileged alike. */
        assert_int_equal(st.st_uid, geteuid());
        assert_string_equal(kb_image_format(img), "oci-layout");
        assert_string_equal(kb_image_tag(img), "tiny");
        index_digest(t->layout, digest, sizeof(digest));
        assert_string_equal(kb_image_manifest_digest(img), digest);
        assert_int_equal(strncmp(kb_image_config_digest(img), "sha256:", 7), 0);
        assert_string_equal(kb_image_user(img), "1000");
        assert_non_null(kb_image_env(img)[0]);
        assert_string_equal(kb_image_env(img)[0], "PATH=/opt/x/bin:/usr/bin");
        assert_true(kb_image_unpacked_bytes(img) > 0);
        assert_int_equal(kb_image_max_bytes(img), KB_IMAGE_MAX_BYTES_DEFAULT);
        json_object *j = kb_image_json(img);
        assert_non_null(j);
        assert_string_equal(json_object_get_string(json_object_object_get(j, "manifest_digest")), digest);
        json_object_put(j);
        /* Only the unpacked root is left below the work folder; the copy is gone. */
        snprintf(path, sizeof(path), "%s/layout", t->work);
        assert_int_equal(stat(path, &st), -1);
        char rootfs[512];
        snprintf(rootfs, sizeof(rootfs), "%s", kb_image_rootfs(img));
        kb_image_destroy(&img);
        assert_null(img);
        assert_int_equal(stat(rootfs, &st), -1);
        assert_int_equal(stat(t->work, &st), 0);
        kb_image_destroy(NULL);
}

/* The same image as a docker archive and an OCI archive, made by skopeo as docker/podman save do. */
static void test_unpack_archives(void **state) {
        image_tree *t = *state;
        char docker[256], oci[256], src[256], dst[300];
        snprintf(docker, sizeof(docker), "%s/docker.tar", t->root);
        snprintf(oci, sizeof(oci), "%s/oci.tar", t->root);
        snprintf(src, sizeof(src), "oci:%s:tiny", t->layout);
        snprintf(dst, sizeof(dst), "docker-archive:%s:kbound/tiny:2", docker);
        char *to_docker[] = {"skopeo", "--insecure-policy", "copy", "--quiet", src, dst, NULL};
        assert_int_equal(run(to_docker), 0);
        snprintf(dst, sizeof(dst), "oci-archive:%s:tiny-oci", oci);
        char *to_oci[] = {"skopeo", "--insecure-policy", "copy", "--quiet", src, dst, NULL};
        assert_int_equal(run(to_oci), 0);

        kb_image_options o = {.image = docker, .work_dir = t->work, .envp = environ, .deadline_ms = -1};
        kb_image *img = NULL;
        assert_int_equal(kb_image_unpack(&o, &img, NULL), 0);
        assert_string_equal(kb_image_format(img), "docker-archive");
        assert_string_equal(kb_image_tag(img), "docker.io/kbound/tiny:2");
        kb_image_destroy(&img);

        o.image = oci;
        assert_int_equal(kb_image_unpack(&o, &img, NULL), 0);
        assert_string_equal(kb_image_format(img), "oci-archive");
        assert_string_equal(kb_image_tag(img), "tiny-oci");
        char digest[80];
        index_digest(t->layout, digest, sizeof(digest));
        assert_string_equal(kb_image_manifest_digest(img), digest);
        kb_image_destroy(&img);

        /* PATH:TAG names one image of the layout. */
        char with_tag[256];
        snprintf(with_tag, sizeof(with_tag), "%s:tiny", t->layout);
        o.image = with_tag;
        assert_int_equal(kb_image_unpack(&o, &img, NULL), 0);
        assert_string_equal(kb_image_tag(img), "tiny");
        kb_image_destroy(&img);
        snprintf(with_tag, sizeof(with_tag), "%s:no-such-tag", t->layout);
        kb_error *error = NULL;
        assert_int_equal(kb_image_unpack(&o, &img, &error), -EIO);
        assert_non_null(strstr(error->msg, "skopeo failed"));
        kb_error_free(&error);
}

static void test_failures(void **state) {
        image_tree *t = *state;
        kb_image *img = NULL;
        kb_error *error = NULL;
        char bogus[256], plain[256], colon[256];

        /* No tools: how to install them. */
        char *no_path[] = {"PATH=/nonexistent", NULL};
        kb_image_options o = {.image = t->layout, .work_dir = t->work, .envp = no_path, .deadline_ms = -1};
        assert_int_equal(kb_image_unpack(&o, &img, &error), -ENOPKG);
        assert_int_equal(error->err, ENOPKG);
        assert_non_null(strstr(error->msg, "apt-get install skopeo umoci"));
        kb_error_free(&error);
        char *bad_override[] = {"PATH=/usr/bin:/bin", "KBOUND_UMOCI=/nonexistent/umoci", NULL};
        o.envp = bad_override;
        assert_int_equal(kb_image_unpack(&o, &img, &error), -ENOPKG);
        assert_non_null(strstr(error->msg, "umoci not found"));
        kb_error_free(&error);
        o.envp = environ;

        /* Not there; a folder that is no layout; a file no tool reads; a path with ':'. */
        o.image = "/nonexistent/image";
        assert_int_equal(kb_image_unpack(&o, &img, &error), -ENOENT);
        kb_error_free(&error);
        snprintf(plain, sizeof(plain), "%s/src", t->root);
        o.image = plain;
        assert_int_equal(kb_image_unpack(&o, &img, &error), -EINVAL);
        assert_non_null(strstr(error->msg, "--rootfs"));
        kb_error_free(&error);
        snprintf(bogus, sizeof(bogus), "%s/bogus.tar", t->root);
        write_file(bogus, "not a tar at all");
        o.image = bogus;
        /* No tar at all: not an image, said by kbound before any tool runs (a usage error). */
        assert_int_equal(kb_image_unpack(&o, &img, &error), -EINVAL);
        assert_non_null(strstr(error->msg, "not an image: "));
        kb_error_free(&error);
        snprintf(colon, sizeof(colon), "%s/a:b", t->root);
        mkdir(colon, 0700);
        o.image = colon;
        assert_int_equal(kb_image_unpack(&o, &img, &error), -EINVAL);
        kb_error_free(&error);

        /* A folder whose path leaves no room for "/oci-layout": refused as too long, never judged
         * by the file a cut path names (planted here, it made the folder a layout for skopeo). */
        char deep[PATH_MAX], planted[PATH_MAX];
        tmp_tree_deep(t->root, PATH_MAX - 11, deep);
        assert_true(snprintf(planted, sizeof(planted), "%s/oci-layou", deep) < (int) sizeof(planted));
        write_file(planted, "{}");
        o.image = deep;
        assert_int_equal(kb_image_unpack(&o, &img, &error), -ENAMETOOLONG);
        assert_non_null(strstr(error->msg, "too long"));
        kb_error_free(&error);

        /* Over the limit: refused from the manifest's sizes, before anything is unpacked. */
        o.image = t->layout;
        o.max_bytes = 1024;
        assert_int_equal(kb_image_unpack(&o, &img, &error), -EFBIG);
        assert_non_null(strstr(error->msg, "limit"));
        kb_error_free(&error);
        o.max_bytes = 0;

        /* A cancel descriptor already readable stops the first tool. */
        int pipefd[2];
        assert_int_equal(pipe(pipefd), 0);
        assert_int_equal(write(pipefd[1], "x", 1), 1);
        o.cancel_fd = pipefd[0];
        assert_int_equal(kb_image_unpack(&o, &img, &error), -ECANCELED);
        kb_error_free(&error);
        close(pipefd[0]);
        close(pipefd[1]);

        /* Whatever failed, nothing is left below the work folder. */
        DIR *d = opendir(t->work);
        assert_non_null(d);
        int entries = 0;
        for (struct dirent *de; (de = readdir(d));)
                entries += de->d_name[0] != '.';
        closedir(d);
        assert_int_equal(entries, 0);
        assert_int_equal(kb_image_unpack(NULL, &img, NULL), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_unpack_layout),
                cmocka_unit_test(test_unpack_archives),
                cmocka_unit_test(test_failures),
        };
        return cmocka_run_group_tests(tests, image_setup, image_teardown);
}
