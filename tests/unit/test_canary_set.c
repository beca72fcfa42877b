/* test_canary_set.c: a check run's canaries and secret sets, planted in a temporary base folder
 * and a temporary HOME, as the current user (no root needed; as root the sandbox user is the
 * default one, as in a real run). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kbound/canary_set.h"
#include "base/facts.h"
#include "tmp_tree.h"

#define HOST_TOKEN "KBOUND_TEST_TOKEN=host-secret-5d1c0a9e7b3f-not-for-sandboxes"
#define LEGIT_VALUE "KBOUND_TEST_LEGIT=legit-argv-word-4c2e"

typedef struct fixture {
        char base[64];
        char home[64];
        char home_env[80];
        char *host_env[4];
        char *argv[3];
        kb_kernelspec spec;
        const kb_kernelspec *specs[1];
        kb_sandbox_user user;
        kb_canary_set_options o;
        char logged[512];
        int n_logged;
} fixture;

static void on_log(void *userdata, int level, const char *message) {
        fixture *f = userdata;
        snprintf(f->logged, sizeof(f->logged), "%s", message);
        f->n_logged++;
}

static int setup(void **state) {
        fixture *f = calloc(1, sizeof(*f));
        assert_non_null(f);
        snprintf(f->base, sizeof(f->base), "/tmp/kb-canary-set-XXXXXX");
        snprintf(f->home, sizeof(f->home), "/tmp/kb-canary-home-XXXXXX");
        assert_non_null(mkdtemp(f->base));
        assert_non_null(mkdtemp(f->home));
        snprintf(f->home_env, sizeof(f->home_env), "HOME=%s", f->home);
        f->host_env[0] = f->home_env;
        f->host_env[1] = HOST_TOKEN;
        f->host_env[2] = LEGIT_VALUE;
        f->argv[0] = "/usr/bin/true";
        f->argv[1] = "legit-argv-word-4c2e";
        f->spec = (kb_kernelspec){.name = "fake", .argv = f->argv};
        f->specs[0] = &f->spec;
        assert_int_equal(kb_sandbox_user_resolve(getenv("KBOUND_SANDBOX_USER"), &f->user), 0);
        f->o = (kb_canary_set_options){
                .base_dir = f->base,
                .team = "unit",
                .user = &f->user,
                .specs = f->specs,
                .n_specs = 1,
                .host_env = f->host_env,
                .log = on_log,
                .log_userdata = f,
        };
        *state = f;
        return 0;
}

static int teardown(void **state) {
        fixture *f = *state;
        tmp_tree_remove(f->base);
        tmp_tree_remove(f->home);
        free(f);
        return 0;
}

static void assert_secret_file(const char *path) {
        struct stat st;
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0600);
        assert_int_equal(st.st_size, 64);
}

/* The names of s's secrets found in the file at path. */
static json_object *scan_file(const kb_secrets *s, const char *path) {
        char buf[128] = {0};
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(read(fd, buf, sizeof(buf) - 1), 64);
        close(fd);
        json_object *data = json_object_new_string(buf);
        json_object *found = kb_secrets_scan(s, data);
        json_object_put(data);
        assert_non_null(found);
        return found;
}

static void assert_found_only(json_object *found, const char *name) {
        assert_int_equal(json_object_array_length(found), 1);
        assert_string_equal(json_object_get_string(json_object_array_get_idx(found, 0)), name);
        json_object_put(found);
}

static bool array_has(json_object *array, const char *s) {
        for (size_t i = 0; i < json_object_array_length(array); i++)
                if (strcmp(json_object_get_string(json_object_array_get_idx(array, i)), s) == 0)
                        return true;
        return false;
}

/* The record of the canary named name (kb_canary_set.planted, facts.def's CANARY_PLANT), held to
 * its declaration: its check, and whether it was planted. */
static json_object *planted(const kb_canary_set *s, const char *name, const char *check, bool is_planted) {
        json_object *found = NULL;
        for (size_t i = 0; i < json_object_array_length(s->planted); i++) {
                json_object *e = json_object_array_get_idx(s->planted, i);
                if (strcmp(kb_fact_str_or(e, FACT_CANARY_PLANT_NAME, ""), name) == 0)
                        found = e;
        }
        if (!found)
                fail_msg("no record of the %s: %s", name, json_object_to_json_string(s->planted));
        json_object *problems = json_object_new_array();
        if (kb_fact_validate(found, KB_FACT_OBJECT_CANARY_PLANT, true, problems, 8) != 0)
                fail_msg("the %s's record breaks facts.def: %s", name, json_object_to_json_string(problems));
        json_object_put(problems);
        assert_string_equal(kb_fact_str_or(found, FACT_CANARY_PLANT_CHECK, ""), check);
        assert_int_equal(kb_fact_bool_of(found, FACT_CANARY_PLANT_PLANTED), is_planted);
        assert_int_equal(kb_fact_has(found, FACT_CANARY_PLANT_WHY), !is_planted);
        return found;
}

static void test_plant(void **state) {
        fixture *f = *state;
        kb_canary_set *s = NULL;
        assert_int_equal(kb_canary_set_plant(&f->o, &s, NULL), 0);
        assert_non_null(s);

        /* Every canary file: there, 0600, a 256-bit token that only its own set knows. */
        assert_secret_file(s->credential_file);
        assert_secret_file(s->sibling_file);
        assert_non_null(s->home_canary);
        assert_secret_file(s->home_canary);
        assert_int_equal(strncmp(s->home_canary, f->home, strlen(f->home)), 0);
        assert_int_equal(s->home_error, 0);
        assert_int_equal(f->n_logged, 0);
        assert_found_only(scan_file(s->secrets, s->credential_file), "canary:credential-file");
        assert_found_only(scan_file(s->secrets, s->home_canary), "canary:home-file");
        assert_found_only(scan_file(s->sibling_secrets, s->sibling_file), "canary:sibling-team-file");
        json_object *found = scan_file(s->secrets, s->sibling_file);
        assert_int_equal(json_object_array_length(found), 0);
        json_object_put(found);
        char expect[256];
        snprintf(expect, sizeof(expect), "%s/teams/unit-sibling/workspace/canary.txt", f->base);
        assert_string_equal(s->sibling_file, expect);

        /* The host's secret is guarded; a value the sandbox shows by design (argv) is not. */
        json_object *said = json_object_new_string("host-secret-5d1c0a9e7b3f-not-for-sandboxes legit-argv-word-4c2e");
        found = kb_secrets_scan(s->secrets, said);
        json_object_put(said);
        assert_found_only(found, "env:KBOUND_TEST_TOKEN");
        assert_true(s->env_values_skipped >= 1);

        /* What the checks are handed. */
        assert_true(array_has(s->credential_paths, s->credential_file));
        assert_true(array_has(s->credential_paths, s->home_canary));
        assert_true(array_has(s->sibling_paths, s->sibling_workspace));
        assert_true(array_has(s->sibling_paths, s->sibling_file));
        assert_true(array_has(s->escape_dirs, f->base));
        assert_true(array_has(s->escape_dirs, f->home));
        assert_true(array_has(s->escape_dirs, "/tmp"));
        assert_int_equal(s->n_canaries, 4);
        assert_string_equal(s->canaries[3].path, s->home_canary);
        assert_string_equal(s->canaries[0].claim, "boundary.credentials");
        assert_string_equal(s->canaries[2].claim, "boundary.cross_team");
        /* What was planted for which check's claim: everything, each where it is. */
        assert_int_equal(json_object_array_length(s->planted), 4);
        assert_string_equal(
                kb_fact_str_or(planted(s, "credential file", "boundary.credentials", true), FACT_CANARY_PLANT_PATH, ""),
                s->credential_file);
        assert_string_equal(
                kb_fact_str_or(planted(s, "credential canary in the user's home", "boundary.credentials", true),
                               FACT_CANARY_PLANT_PATH, ""),
                s->home_canary);
        (void) planted(s, "another team's workspace", "boundary.cross_team", true);
        assert_string_equal(kb_fact_str_or(planted(s, "another team's canary", "boundary.cross_team", true),
                                           FACT_CANARY_PLANT_PATH, ""),
                            s->sibling_file);
        /* Keys may be unavailable here (a container's seccomp filter): then nothing is planted. */
        assert_true(s->keyring_canary == 0 || s->keyring_canary == -ENOSYS || s->keyring_canary == -EPERM);
        if (s->keyring_canary == 0)
                assert_int_equal(strncmp(s->keyring_canary_name, "kbound-canary-", 14), 0);
        else
                assert_string_equal(s->keyring_canary_name, "");

        /* The base folder records the home canary, for the sweep after a killed run. */
        char record[128], recorded[256] = "";
        snprintf(record, sizeof(record), "%s/" KB_CANARY_SET_HOME_RECORD, f->base);
        FILE *rf = fopen(record, "re");
        assert_non_null(rf);
        assert_non_null(fgets(recorded, sizeof(recorded), rf));
        fclose(rf);
        assert_string_equal(recorded, s->home_canary);

        /* Destroy removes the home canary; the base folder's canaries are the caller's. */
        char home_canary[256];
        snprintf(home_canary, sizeof(home_canary), "%s", s->home_canary);
        snprintf(expect, sizeof(expect), "%s", s->credential_file);
        kb_canary_set_destroy(&s);
        assert_null(s);
        assert_int_equal(access(home_canary, F_OK), -1);
        assert_int_equal(errno, ENOENT);
        assert_int_equal(access(expect, F_OK), 0);
        kb_canary_set_destroy(&s);
        kb_canary_set_destroy(NULL);
}

static void test_home_unwritable(void **state) {
        fixture *f = *state;
        snprintf(f->home_env, sizeof(f->home_env), "HOME=%s/missing", f->home);
        kb_canary_set *s = NULL;
        assert_int_equal(kb_canary_set_plant(&f->o, &s, NULL), 0);
        assert_null(s->home_canary);
        assert_int_equal(s->home_error, -ENOENT);
        assert_int_equal(s->n_canaries, 3);
        assert_int_equal(json_object_array_length(s->credential_paths), 1);
        assert_int_equal(f->n_logged, 1);
        char expect[256];
        snprintf(expect, sizeof(expect), "no canary in %s/missing (%s): the home folder is not checked", f->home,
                 strerror(ENOENT));
        assert_string_equal(f->logged, expect);
        /* Recorded as not planted, saying why: the credential check says what it did not test. */
        json_object *home = planted(s, "credential canary in the user's home", "boundary.credentials", false);
        snprintf(expect, sizeof(expect), "kbound cannot write to %s/missing: %s", f->home, strerror(ENOENT));
        assert_string_equal(kb_fact_str_or(home, FACT_CANARY_PLANT_WHY, ""), expect);
        snprintf(expect, sizeof(expect), "%s/missing", f->home);
        assert_string_equal(kb_fact_str_or(home, FACT_CANARY_PLANT_PATH, ""), expect);
        (void) planted(s, "credential file", "boundary.credentials", true);
        kb_canary_set_destroy(&s);
}

/* No HOME at all: nothing to plant in, said so. */
static void test_home_unset(void **state) {
        fixture *f = *state;
        f->host_env[0] = LEGIT_VALUE; /* HOME gone from the environment */
        kb_canary_set *s = NULL;
        assert_int_equal(kb_canary_set_plant(&f->o, &s, NULL), 0);
        assert_null(s->home_canary);
        assert_int_equal(s->n_canaries, 3);
        json_object *home = planted(s, "credential canary in the user's home", "boundary.credentials", false);
        assert_string_equal(kb_fact_str_or(home, FACT_CANARY_PLANT_WHY, ""), "HOME is not set");
        assert_false(kb_fact_has(home, FACT_CANARY_PLANT_PATH));
        kb_canary_set_destroy(&s);
}

static void test_files_exist(void **state) {
        fixture *f = *state;
        char path[128];
        snprintf(path, sizeof(path), "%s/host-secrets", f->base);
        assert_int_equal(mkdir(path, 0700), 0);
        kb_canary_set *s = NULL;
        kb_canary_set_step step = KB_CANARY_SET_MEMORY;
        assert_int_equal(kb_canary_set_plant(&f->o, &s, &step), -EEXIST);
        assert_null(s);
        assert_int_equal(step, KB_CANARY_SET_FILES);
}

/* The sweep removes only what a run of this user planted: the name, a regular file, the owner. */
static void test_remove_home(void **state) {
        fixture *f = *state;
        char path[128], other[128], link[128];
        snprintf(path, sizeof(path), "%s/" KB_CANARY_SET_HOME_PREFIX "Ab12Cd", f->home);
        snprintf(other, sizeof(other), "%s/.bashrc", f->home);
        snprintf(link, sizeof(link), "%s/" KB_CANARY_SET_HOME_PREFIX "Zz99zz", f->home);
        FILE *a = fopen(path, "we"), *b = fopen(other, "we");
        assert_non_null(a);
        assert_non_null(b);
        fclose(a);
        fclose(b);
        assert_int_equal(symlink(other, link), 0);
        assert_int_equal(kb_canary_set_remove_home(other, geteuid()), 0);    /* not the name */
        assert_int_equal(kb_canary_set_remove_home(link, geteuid()), 0);     /* a symlink */
        assert_int_equal(kb_canary_set_remove_home(path, geteuid() + 1), 0); /* another user's */
        assert_int_equal(access(path, F_OK), 0);
        assert_int_equal(kb_canary_set_remove_home("relative/" KB_CANARY_SET_HOME_PREFIX "Ab12Cd", geteuid()), -EINVAL);
        assert_int_equal(kb_canary_set_remove_home(path, geteuid()), 1);
        assert_int_equal(access(path, F_OK), -1);
        assert_int_equal(access(other, F_OK), 0);
        assert_int_equal(kb_canary_set_remove_home(path, geteuid()), 0); /* already gone */
        unlink(link);
        unlink(other);
}

static void test_bad_arguments(void **state) {
        fixture *f = *state;
        kb_canary_set *s = NULL;
        kb_canary_set_options o = f->o;
        assert_int_equal(kb_canary_set_plant(NULL, &s, NULL), -EINVAL);
        assert_int_equal(kb_canary_set_plant(&o, NULL, NULL), -EINVAL);
        o.base_dir = "relative";
        assert_int_equal(kb_canary_set_plant(&o, &s, NULL), -EINVAL);
        o = f->o;
        o.base_dir = NULL;
        assert_int_equal(kb_canary_set_plant(&o, &s, NULL), -EINVAL);
        o = f->o;
        o.team = "../escape";
        assert_int_equal(kb_canary_set_plant(&o, &s, NULL), -EINVAL);
        o.team = NULL;
        assert_int_equal(kb_canary_set_plant(&o, &s, NULL), -EINVAL);
        o = f->o;
        o.user = NULL;
        assert_int_equal(kb_canary_set_plant(&o, &s, NULL), -EINVAL);
        o = f->o;
        o.specs = NULL;
        assert_int_equal(kb_canary_set_plant(&o, &s, NULL), -EINVAL);
        assert_null(s);
        /* Nothing was made. */
        char path[128];
        snprintf(path, sizeof(path), "%s/host-secrets", f->base);
        assert_int_equal(access(path, F_OK), -1);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_plant, setup, teardown),
                cmocka_unit_test_setup_teardown(test_home_unwritable, setup, teardown),
                cmocka_unit_test_setup_teardown(test_home_unset, setup, teardown),
                cmocka_unit_test_setup_teardown(test_files_exist, setup, teardown),
                cmocka_unit_test_setup_teardown(test_remove_home, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
