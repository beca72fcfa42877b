/* test_sandbox_mounts.c: the mounts a bwrap command line plans (kb_sandbox_planned_mounts): every
 * kind bwrap makes, what it makes for them, destinations through the plan's links, the sources
 * stat'd on the host, the submounts a recursive bind takes along, and the argvs it refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kbound/sandbox.h"
#include "sandbox/sandbox-internal.h"
#include "base/facts.h"
#include "tmp_tree.h"
#include <sys/stat.h>
#include <sys/sysmacros.h>

static int setup(void **state) {
        return tmp_tree_setup(state, "kbound-test-mounts");
}

/* The planned mount at index i, and its facts as the judge reads them. */
static json_object *nth(json_object *mounts, size_t i) {
        assert_true(i < json_object_array_length(mounts));
        return json_object_array_get_idx(mounts, i);
}

static void assert_entry(json_object *e, const char *kind, const char *mountpoint, bool read_only, bool nodev,
                         bool optional) {
        if (strcmp(kb_fact_str_or(e, FACT_PLANNED_MOUNT_MOUNTPOINT, "?"), mountpoint) != 0 ||
            strcmp(kb_fact_str_or(e, FACT_PLANNED_MOUNT_KIND, "?"), kind) != 0 ||
            kb_fact_bool_of(e, FACT_PLANNED_MOUNT_READ_ONLY) != read_only ||
            kb_fact_bool_of(e, FACT_PLANNED_MOUNT_NODEV) != nodev ||
            kb_fact_bool_of(e, FACT_PLANNED_MOUNT_OPTIONAL) != optional)
                fail_msg("expected %s at %s (ro %d, nodev %d, optional %d): %s", kind, mountpoint, read_only, nodev,
                         optional, json_object_to_json_string(e));
}

/* e's source is the object at path on the host. */
static void assert_source(json_object *e, const char *path) {
        struct stat st;
        char dev[32];
        assert_int_equal(stat(path, &st), 0);
        snprintf(dev, sizeof dev, "%u:%u", major(st.st_dev), minor(st.st_dev));
        json_object *src = kb_fact_obj_of(e, FACT_PLANNED_MOUNT_SOURCE);
        assert_non_null(src);
        assert_string_equal(kb_fact_str_or(src, FACT_FILE_ID_DEV, "?"), dev);
        assert_int_equal(kb_fact_int_or(src, FACT_FILE_ID_INO, -1), (int64_t) st.st_ino);
}

static void assert_valid(json_object *mounts) {
        json_object *problems = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(mounts); i++)
                assert_int_equal(kb_fact_validate(nth(mounts, i), KB_FACT_OBJECT_PLANNED_MOUNT, true, problems, 8), 0);
        json_object_put(problems);
}

/* Every kind of mount, in bwrap's order, with what bwrap adds for each. */
static void test_every_kind(void **state) {
        tree *t = *state;
        char usr[PATH_MAX], ws[PATH_MAX], missing[PATH_MAX], sub[PATH_MAX + 8];
        /* each folder made on the way to a path below it */
        tmp_tree_path(t->root, "usr/keep", usr);
        tmp_tree_path(t->root, "ws/keep", ws);
        *strrchr(usr, '/') = '\0';
        *strrchr(ws, '/') = '\0';
        snprintf(missing, sizeof missing, "%s/not-there", t->root);
        snprintf(sub, sizeof sub, "%s/sub", usr);
        /* kbound's table: a writable mount with devices below the read-only bind's source */
        char host[2 * PATH_MAX];
        snprintf(host, sizeof host,
                 "[{\"id\": 1, \"parent\": 0, \"dev\": \"8:1\", \"root\": \"/\", \"mountpoint\": \"/\", \"options\": "
                 "[\"rw\"], \"fstype\": \"ext4\", \"source\": \"/dev/sda1\", \"super\": [], \"writable\": true, "
                 "\"nodev\": false}, {\"id\": 2, \"parent\": 1, \"dev\": \"0:99\", \"root\": \"/x\", \"mountpoint\": "
                 "\"%s\", \"options\": [\"rw\"], \"fstype\": \"tmpfs\", \"source\": \"tmpfs\", \"super\": [], "
                 "\"writable\": true, \"nodev\": false}]",
                 sub);
        json_object *host_mounts = json_tokener_parse(host);
        assert_non_null(host_mounts);
        char *argv[] = {"/usr/bin/bwrap",
                        "--unshare-all",
                        "--setenv",
                        "--tmpfs",
                        "/not-a-mount",
                        "--ro-bind",
                        usr,
                        "/usr",
                        "--symlink",
                        "usr/lib",
                        "/lib",
                        "--ro-bind-try",
                        missing,
                        "/lib/x",
                        "--proc",
                        "/proc",
                        "--ro-bind",
                        "/proc/sys",
                        "/proc/sys",
                        "--dev",
                        "/dev",
                        "--size",
                        "1048576",
                        "--tmpfs",
                        "/tmp",
                        "--tmpfs",
                        "/proc/acpi",
                        "--remount-ro",
                        "/proc/acpi",
                        "--dir",
                        "/var",
                        "--symlink",
                        "../tmp",
                        "/var/tmp",
                        "--bind",
                        ws,
                        "/var/tmp/ws//",
                        "--file",
                        "5",
                        "/run/kernel.json",
                        "--remount-ro",
                        "/",
                        "--block-fd",
                        "6",
                        "--",
                        "/bin/sh",
                        "--tmpfs",
                        "/after-the-command",
                        NULL};
        json_object *mounts = NULL;
        assert_int_equal(kb_sandbox_planned_mounts(argv, host_mounts, &mounts), 0);
        assert_valid(mounts);
        size_t i = 0;
        /* bwrap's root, made read-only by the last --remount-ro */
        assert_entry(nth(mounts, i), "fresh", "/", true, true, false);
        assert_string_equal(kb_fact_str_of(nth(mounts, i++), FACT_PLANNED_MOUNT_FSTYPE), "tmpfs");
        /* "--setenv --tmpfs /not-a-mount" sets a variable */
        assert_entry(nth(mounts, i), "bind", "/usr", true, true, false);
        assert_source(nth(mounts, i++), usr);
        /* the recursive bind takes the host's mount along, read-only and nodev added */
        assert_entry(nth(mounts, i), "submount", "/usr/sub", true, true, true);
        assert_string_equal(kb_fact_str_of(nth(mounts, i), FACT_PLANNED_MOUNT_DEV), "0:99");
        assert_string_equal(kb_fact_str_of(nth(mounts, i++), FACT_PLANNED_MOUNT_ROOT), "/x");
        /* through the plan's link /lib -> usr/lib; a -try whose source is not there may be absent */
        assert_entry(nth(mounts, i), "bind", "/usr/lib/x", true, true, true);
        assert_null(kb_fact_obj_of(nth(mounts, i), FACT_PLANNED_MOUNT_SOURCE));
        assert_string_equal(kb_fact_str_of(nth(mounts, i++), FACT_PLANNED_MOUNT_SOURCE_ERROR),
                            "No such file or directory");
        assert_entry(nth(mounts, i++), "fresh", "/proc", false, true, false);
        static const char *const covers[] = {"sys", "sysrq-trigger", "irq", "bus"};
        for (size_t k = 0; k < 4; k++, i++) {
                char at[64], root[64];
                snprintf(at, sizeof at, "/proc/%s", covers[k]);
                snprintf(root, sizeof root, "/%s", covers[k]);
                assert_entry(nth(mounts, i), "cover", at, true, true, true);
                assert_string_equal(kb_fact_str_of(nth(mounts, i), FACT_PLANNED_MOUNT_ROOT), root);
        }
        assert_entry(nth(mounts, i), "bind", "/proc/sys", true, true, false);
        assert_source(nth(mounts, i++), "/proc/sys");
        assert_entry(nth(mounts, i++), "fresh", "/dev", false, true, false);
        static const char *const nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
        for (size_t k = 0; k < 6; k++, i++) {
                char at[64];
                snprintf(at, sizeof at, "/dev/%s", nodes[k]);
                assert_entry(nth(mounts, i), "bind", at, false, false, false);
                assert_source(nth(mounts, i), at);
        }
        assert_entry(nth(mounts, i), "fresh", "/dev/pts", false, false, false);
        assert_string_equal(kb_fact_str_of(nth(mounts, i++), FACT_PLANNED_MOUNT_FSTYPE), "devpts");
        /* --size belongs to the next --tmpfs alone */
        assert_entry(nth(mounts, i), "fresh", "/tmp", false, true, false);
        assert_int_equal(kb_fact_int_or(nth(mounts, i), FACT_PLANNED_MOUNT_SIZE, -1), 1048576);
        assert_string_equal(kb_fact_str_of(nth(mounts, i++), FACT_PLANNED_MOUNT_ASKED), "--size 1048576 --tmpfs /tmp");
        assert_entry(nth(mounts, i), "fresh", "/proc/acpi", true, true, false);
        assert_int_equal(kb_fact_int_or(nth(mounts, i++), FACT_PLANNED_MOUNT_SIZE, -1), -1);
        /* /var/tmp is a link to ../tmp: the bind lands at /tmp/ws; --dir and --file mount nothing */
        assert_entry(nth(mounts, i), "bind", "/tmp/ws", false, true, false);
        assert_source(nth(mounts, i++), ws);
        /* nothing of the command is read as an option */
        assert_int_equal(json_object_array_length(mounts), i);
        json_object_put(mounts);
        json_object_put(host_mounts);
}

/* kbound's own plan is read whole, and every entry is what facts.def declares. */
static void test_kbound_plan(void **state) {
        (void) state;
        char *kernel_argv[] = {"/usr/bin/python3", "-m", "ipykernel_launcher", NULL};
        kb_sandbox_policy p = {.team = "team_a", .workspace = "/srv/a/ws", .runtime_dir = "/srv/a/run"};
        char **argv = NULL;
        json_object *mounts = NULL;
        assert_int_equal(kb_sandbox_plan(&p, kernel_argv, 3, &argv), 0);
        assert_int_equal(kb_sandbox_planned_mounts(argv, NULL, &mounts), 0);
        assert_valid(mounts);
        bool root_ro = false, workspace = false;
        for (size_t i = 0; i < json_object_array_length(mounts); i++) {
                const char *mp = kb_fact_str_of(nth(mounts, i), FACT_PLANNED_MOUNT_MOUNTPOINT);
                root_ro |= strcmp(mp, "/") == 0 && kb_fact_bool_of(nth(mounts, i), FACT_PLANNED_MOUNT_READ_ONLY);
                workspace |= strcmp(mp, "/workspace") == 0;
        }
        assert_true(root_ro);
        assert_true(workspace);
        json_object_put(mounts);
        kb_strv_free(argv);
}

/* An argv bwrap would refuse, or one the plan cannot read, is no plan. */
static void test_refused(void **state) {
        (void) state;
        char *unknown[] = {"bwrap", "--bind-everything", "/", "/", "--", "sh", NULL};
        char *short_bind[] = {"bwrap", "--ro-bind", "/usr", NULL};
        char *args[] = {"bwrap", "--args", "3", "--", "sh", NULL};
        char *remount[] = {"bwrap", "--remount-ro", "/nothing-planned", "--", "sh", NULL};
        char *relative[] = {"bwrap", "--tmpfs", "tmp", "--", "sh", NULL};
        char **refused[] = {unknown, short_bind, args, remount, relative};
        int errors[] = {-EPROTO, -EPROTO, -EPROTO, -EPROTO, -EINVAL};
        for (size_t i = 0; i < KB_ELEMENTSOF(refused); i++) {
                json_object *mounts = NULL;
                assert_int_equal(kb_sandbox_planned_mounts(refused[i], NULL, &mounts), errors[i]);
                assert_null(mounts);
        }
        /* a link that loops */
        char *loop[] = {"bwrap", "--symlink", "/b", "/a", "--symlink", "/a", "/b", "--tmpfs", "/a/x", "--", "sh", NULL};
        json_object *mounts = NULL;
        assert_int_equal(kb_sandbox_planned_mounts(loop, NULL, &mounts), -ELOOP);
        /* descriptors' objects are planned but cannot be named beforehand */
        char *fd[] = {"bwrap", "--ro-bind-data", "7", "/etc/x", "--", "sh", NULL};
        assert_int_equal(kb_sandbox_planned_mounts(fd, NULL, &mounts), 0);
        assert_non_null(kb_fact_str_of(nth(mounts, 1), FACT_PLANNED_MOUNT_SOURCE_ERROR));
        assert_true(kb_fact_bool_of(nth(mounts, 1), FACT_PLANNED_MOUNT_READ_ONLY));
        json_object_put(mounts);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_every_kind, setup, tree_teardown),
                cmocka_unit_test(test_kbound_plan),
                cmocka_unit_test(test_refused),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
