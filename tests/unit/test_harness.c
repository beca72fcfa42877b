/* test_harness.c: what check and conformance share of a kernel under test (harness.c), and the
 * check sequence's list of checks (scenario_checks.c), without a kernel: the checks it records,
 * its deadlines, the words for a failed wait, progress and results redacted with the run's secrets,
 * the language pack found in the user's folder first, and a report's checks kept whole and in the
 * table's order, a check no step reported never passing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include "kbound/check.h"
#include "kbound/common.h"
#include "kbound/langpack.h"
#include "kbound/secrets.h"
#include "run/harness-internal.h"
#include "run/scenario-internal.h"
#include "tmp_tree.h"

#define SECRET "kbound-harness-secret-4f1c9a"

typedef struct logged {
        char lines[16][800];
        int levels[16];
        size_t n;
} logged;

static void collect(void *userdata, int level, const char *line) {
        logged *l = userdata;
        if (l->n < KB_ELEMENTSOF(l->lines)) {
                snprintf(l->lines[l->n], sizeof l->lines[0], "%s", line);
                l->levels[l->n++] = level;
        }
}

static char *argv_none[] = {NULL};
static kb_kernelspec spec = {.name = "testk", .argv = argv_none, .language = "testlang"};

/* A harness with no kernel: its checks array, a secret set, progress collected in *l. */
static kb_harness harness(json_object *checks, kb_secrets *secrets, logged *l) {
        return (kb_harness){
                .spec = &spec,
                .checks = checks,
                .secrets = {secrets, NULL},
                .log = collect,
                .log_userdata = l,
                .deadline_ms = -1,
        };
}

static kb_secrets *one_secret(void) {
        kb_secrets *s = NULL;
        assert_int_equal(kb_secrets_new(&s), 0);
        assert_int_equal(kb_secrets_add(s, "TEST_TOKEN", SECRET), 0);
        return s;
}

static void test_add_check_records_problems(void **state) {
        (void) state;
        logged l = {.n = 0};
        json_object *checks = json_object_new_array();
        kb_harness h = harness(checks, NULL, &l);
        kb_harness_add_check(&h, "x.pass", "pass", 0, NULL, "all fine");
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "seen", json_object_new_int(3));
        kb_harness_add_check(&h, "x.fail", "fail", kb_now_ms(), ev, "it leaked");
        assert_int_equal(json_object_array_length(checks), 2);

        json_object *pass = json_object_array_get_idx(checks, 0), *fail = json_object_array_get_idx(checks, 1), *v;
        assert_true(json_object_object_get_ex(pass, "evidence", &v));
        assert_true(json_object_object_get_ex(v, "problems", &v));
        assert_int_equal(json_object_array_length(v), 0); /* a pass lists no problem */
        assert_true(json_object_object_get_ex(pass, "duration_ms", &v));
        assert_int_equal(json_object_get_int64(v), 0); /* t0 0: not timed */

        assert_true(json_object_object_get_ex(fail, "status", &v));
        assert_string_equal(json_object_get_string(v), "fail");
        assert_true(json_object_object_get_ex(fail, "evidence", &v));
        json_object *seen = NULL, *problems = NULL;
        assert_true(json_object_object_get_ex(v, "seen", &seen)); /* the caller's evidence kept */
        assert_int_equal(json_object_get_int(seen), 3);
        assert_true(json_object_object_get_ex(v, "problems", &problems));
        assert_int_equal(json_object_array_length(problems), 1); /* the detail is its problem */
        assert_string_equal(json_object_get_string(json_object_array_get_idx(problems, 0)), "it leaked");

        /* Each result went to progress at debug level only, named by its kernel. */
        assert_int_equal(l.n, 2);
        assert_int_equal(l.levels[1], KB_LOG_DEBUG);
        assert_string_equal(l.lines[1], "kernel 'testk': x.fail fail: it leaked");
        json_object_put(checks);
}

static void test_log_redacts_secrets(void **state) {
        (void) state;
        logged l = {.n = 0};
        kb_secrets *s = one_secret();
        json_object *checks = json_object_new_array();
        kb_harness h = harness(checks, s, &l);
        kb_harness_log(&h, KB_LOG_INFO, "the kernel said %s twice: %s", SECRET, SECRET);
        kb_harness_add_check(&h, "x.fail", "fail", 0, NULL, "found " SECRET " in a child");
        assert_int_equal(l.n, 2);
        for (size_t i = 0; i < l.n; i++) {
                assert_null(strstr(l.lines[i], SECRET));
                assert_non_null(strstr(l.lines[i], "kernel 'testk': "));
        }

        /* A result handed out is redacted the same way; the original is let go. */
        json_object *result = json_object_new_object();
        json_object_object_add(result, "env", json_object_new_string("TEST_TOKEN=" SECRET));
        kb_harness_redact(&h, &result);
        assert_non_null(result);
        assert_null(strstr(json_object_to_json_string(result), SECRET));
        json_object_put(result);

        /* Without a log callback nothing is sent, and nothing breaks. */
        h.log = NULL;
        kb_harness_log(&h, KB_LOG_INFO, "%s", SECRET);
        json_object_put(checks);
        kb_secrets_destroy(&s);
}

static void test_deadlines(void **state) {
        (void) state;
        logged l = {.n = 0};
        kb_harness h = harness(NULL, NULL, &l);
        int64_t now = kb_now_ms();
        int64_t d = kb_harness_deadline_in(&h, 5000);
        assert_true(d >= now + 5000 && d <= kb_now_ms() + 5000); /* no run deadline: now + ms */
        assert_false(kb_harness_deadline_passed(&h));

        h.deadline_ms = now + 1000; /* the run's deadline is sooner: it wins */
        assert_int_equal(kb_harness_deadline_in(&h, 60000), now + 1000);
        assert_false(kb_harness_deadline_passed(&h));
        h.deadline_ms = now - 1; /* passed: nothing is given past it */
        assert_int_equal(kb_harness_deadline_in(&h, 60000), now - 1);
        assert_true(kb_harness_deadline_passed(&h));
}

static void test_wait_error_words_and_marks(void **state) {
        (void) state;
        logged l = {.n = 0};
        kb_harness h = harness(NULL, NULL, &l);
        assert_string_equal(kb_harness_wait_error(&h, -ETIMEDOUT), "timed out");
        assert_false(h.cancelled || h.dead);
        assert_string_equal(kb_harness_wait_error(&h, -ECANCELED), "cancelled");
        assert_true(h.cancelled);
        assert_false(h.dead);
        assert_string_equal(kb_harness_wait_error(&h, -ESRCH), "the kernel process died");
        assert_true(h.dead);
}

static void write_pack(const char *root, const char *folder, const char *language, const char *marker) {
        char rel[128], manifest[256];
        snprintf(rel, sizeof rel, "%s/%s", folder, KB_LANGPACK_MANIFEST);
        int n = snprintf(manifest, sizeof manifest, "{\"language\": \"%s\", \"cells\": {\"probe\": \"%s\"}}", language,
                         marker);
        tmp_tree_write(root, rel, manifest, (size_t) n);
        snprintf(rel, sizeof rel, "%s/%s", folder, marker);
        tmp_tree_write(root, rel, "probe\n", 6);
}

static void test_find_pack_user_first(void **state) {
        tree *t = *state;
        char ours[PATH_MAX], users[PATH_MAX], where[2 * PATH_MAX];
        snprintf(ours, sizeof ours, "%s/kbound", t->root);
        snprintf(users, sizeof users, "%s/user", t->root);
        write_pack(t->root, "kbound/testlang", "testlang", "ours.tl");
        write_pack(t->root, "kbound/other", "other", "other.tl");
        write_pack(t->root, "user/mine", "testlang", "mine.tl");
        tmp_tree_mkdir(t->root, "user/empty");

        kb_harness_env env = {.kernels_dir = ours, .user_kernels_dir = users};
        kb_langpack *lp = NULL;
        /* The user's pack of a language kbound also has comes first. */
        assert_int_equal(kb_harness_find_pack(&env, "testlang", &lp, where, sizeof where), 0);
        assert_non_null(strstr(kb_langpack_dir(lp), "/user/mine"));
        kb_langpack_destroy(&lp);
        char expect_where[2 * PATH_MAX + 8];
        snprintf(expect_where, sizeof expect_where, "%s, then %s", users, ours);
        assert_string_equal(where, expect_where);
        /* A language only kbound has is still found: the user's folder adds, never replaces. */
        assert_int_equal(kb_harness_find_pack(&env, "other", &lp, where, sizeof where), 0);
        assert_non_null(strstr(kb_langpack_dir(lp), "/kbound/other"));
        kb_langpack_destroy(&lp);
        /* Neither has it: -ENOENT, and the folders searched are named. */
        assert_int_equal(kb_harness_find_pack(&env, "nosuchlang", &lp, where, sizeof where), -ENOENT);
        assert_null(lp);
        /* No user folder: kbound's alone. */
        env.user_kernels_dir = NULL;
        assert_int_equal(kb_harness_find_pack(&env, "testlang", &lp, where, sizeof where), 0);
        assert_non_null(strstr(kb_langpack_dir(lp), "/kbound/testlang"));
        assert_string_equal(where, ours);
        kb_langpack_destroy(&lp);
}

/* A ctx of the check sequence with no kernel, whose report holds checks (taken). */
static ctx sequence(json_object *checks, logged *l) {
        ctx x;
        memset(&x, 0, sizeof x);
        x.spec = &spec;
        x.h = harness(checks, NULL, l);
        return x;
}

static const char *status_of(json_object *checks, const char *id) {
        for (size_t i = 0; i < json_object_array_length(checks); i++) {
                json_object *c = json_object_array_get_idx(checks, i), *v = NULL;
                if (json_object_object_get_ex(c, "id", &v) && strcmp(json_object_get_string(v), id) == 0 &&
                    json_object_object_get_ex(c, "status", &v))
                        return json_object_get_string(v);
        }
        return NULL;
}

static void test_checks_whole_and_in_order(void **state) {
        (void) state;
        assert_int_equal(scenario_n_checks(), _KB_CHECK_MAX);
        logged l = {.n = 0};
        json_object *checks = json_object_new_array();
        ctx x = sequence(checks, &l);
        /* Two checks reported out of the table's order. */
        kb_check late = _KB_CHECK_MAX - 1, early = 0;
        scenario_add_check(&x, kb_check_id(late), "pass", 0, NULL, "reported first");
        scenario_add_check(&x, kb_check_id(early), "fail", 0, NULL, "reported second");
        scenario_fill_missing(&x, true);
        scenario_sort_checks(&x);

        assert_int_equal(json_object_array_length(checks), _KB_CHECK_MAX);
        for (kb_check c = 0; c < _KB_CHECK_MAX; c++) {
                json_object *v = NULL;
                assert_true(json_object_object_get_ex(json_object_array_get_idx(checks, (size_t) c), "id", &v));
                assert_string_equal(json_object_get_string(v), kb_check_id(c)); /* the table's order */
                const char *status = status_of(checks, kb_check_id(c));
                if (c == late)
                        assert_string_equal(status, "pass");
                else if (c == early)
                        assert_string_equal(status, "fail");
                else
                        assert_string_equal(status, "not_run"); /* never run is never a pass */
        }
        json_object *filled = json_object_array_get_idx(checks, 1), *detail = NULL;
        assert_true(json_object_object_get_ex(filled, "detail", &detail));
        assert_non_null(strstr(json_object_get_string(detail), "an earlier step failed"));
        json_object_put(checks);
}

static void test_missing_says_why(void **state) {
        (void) state;
        const struct {
                bool cancelled, wedged;
                const char *why;
        } cases[] = {
                {true, false, "not run: the run was cancelled first"},
                {false, true, "not run: a long cell could not be stopped, so the kernel cannot answer"},
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(cases); i++) {
                logged l = {.n = 0};
                json_object *checks = json_object_new_array();
                ctx x = sequence(checks, &l);
                x.h.cancelled = cases[i].cancelled;
                x.h.wedged = cases[i].wedged;
                scenario_fill_missing(&x, true);
                assert_int_equal(json_object_array_length(checks), _KB_CHECK_MAX);
                for (size_t k = 0; k < json_object_array_length(checks); k++) {
                        json_object *c = json_object_array_get_idx(checks, k), *v = NULL;
                        assert_true(json_object_object_get_ex(c, "status", &v));
                        assert_string_equal(json_object_get_string(v), "not_run");
                        assert_true(json_object_object_get_ex(c, "detail", &v));
                        assert_string_equal(json_object_get_string(v), cases[i].why);
                }
                json_object_put(checks);
        }
}

static int setup(void **state) {
        return tmp_tree_setup(state, "kb-harness");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_add_check_records_problems),
                cmocka_unit_test(test_log_redacts_secrets),
                cmocka_unit_test(test_deadlines),
                cmocka_unit_test(test_wait_error_words_and_marks),
                cmocka_unit_test_setup_teardown(test_find_pack_user_first, setup, tree_teardown),
                cmocka_unit_test(test_checks_whole_and_in_order),
                cmocka_unit_test(test_missing_says_why),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
