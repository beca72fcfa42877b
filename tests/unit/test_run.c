/* test_run.c: a run across kernels without kernels: team names, one call per kernel on its own
 * thread, the run object's fields and order, and the exit code. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include "kbound/report.h"
#include "kbound/run.h"

static kb_kernelspec python3 = {
        .name = "python3", .resource_dir = "/k/python3", .language = "python", .interrupt_mode = "signal"};
static kb_kernelspec ir = {.name = "ir", .resource_dir = "/k/ir", .language = "R", .interrupt_mode = "signal"};
static kb_kernelspec long_name = {
        .name = "a-kernel-name-much-longer-than-twenty", .resource_dir = "/k/long", .interrupt_mode = "signal"};

/* A fake kernel: one passing item and the outcome asked for, or no kernel object at all. It runs
 * on the run's threads, where cmocka cannot fail a test: what it sees is checked afterwards. */
typedef struct fake {
        kb_check_outcome outcome;
        bool no_result;
        int calls;
        int with_transcript;
} fake;

static int fake_kernel(void *userdata, const kb_kernelspec *spec, const char *team, kb_client_msg_fn on_msg,
                       void *on_msg_userdata, json_object **ret, kb_check_outcome *ret_outcome) {
        fake *f = userdata;
        __atomic_fetch_add(&f->calls, 1, __ATOMIC_SEQ_CST);
        if (on_msg)
                __atomic_fetch_add(&f->with_transcript, 1, __ATOMIC_SEQ_CST);
        *ret_outcome = f->outcome;
        if (f->no_result) {
                *ret = NULL;
                return -ENOMEM;
        }
        json_object *k = kb_report_kernel_new(spec, team);
        json_object *item = json_object_new_object();
        json_object_object_add(item, "id", json_object_new_string("kernel_info.reply"));
        json_object_object_add(item, "status", json_object_new_string("pass"));
        json_object_object_add(item, "detail", json_object_new_string("ok"));
        json_object_array_add(json_object_object_get(k, "checks"), item);
        *ret = k;
        return 0;
}

static void test_team_names(void **state) {
        kb_kernelspec *specs[] = {&python3, &ir, &python3, &long_name};
        kb_run *run = NULL;
        assert_int_equal(kb_run_new("kbound", specs, 4, NULL, &run), 0);
        assert_string_equal(kb_run_team(run, 0), "kbound-python3-1");
        assert_string_equal(kb_run_team(run, 1), "kbound-ir");
        assert_string_equal(kb_run_team(run, 2), "kbound-python3-3");
        assert_string_equal(kb_run_team(run, 3), "kbound-a-kernel-name-much-l");
        assert_null(kb_run_team(run, 4));
        kb_run_destroy(&run);
        assert_null(run);
        kb_run_destroy(&run);
}

static void test_refuses(void **state) {
        kb_kernelspec *specs[] = {&python3};
        kb_run *run = NULL;
        char prefix[KB_RUN_TEAM_PREFIX_MAX + 2];
        memset(prefix, 'x', sizeof(prefix) - 1);
        prefix[sizeof(prefix) - 1] = '\0';
        assert_int_equal(kb_run_new(prefix, specs, 1, NULL, &run), -EINVAL);
        assert_int_equal(kb_run_new("", specs, 1, NULL, &run), -EINVAL);
        assert_int_equal(kb_run_new("kbound", specs, 0, NULL, &run), -EINVAL);
        assert_int_equal(kb_run_new("kbound", specs, KB_RUN_KERNELS_MAX + 1, NULL, &run), -EINVAL);
        assert_null(run);
}

static json_object *report(kb_kernelspec **specs, size_t n, fake *f, const kb_run_facts *facts, int *ret_exit) {
        kb_run *run = NULL;
        assert_int_equal(kb_run_new("t", specs, n, NULL, &run), 0);
        assert_int_equal(kb_run_kernels(run, fake_kernel, f, NULL), 0);
        assert_int_equal(f->calls, (int) n);
        assert_int_equal(f->with_transcript, 0);                              /* no transcript in these runs */
        assert_int_equal(kb_run_kernels(run, fake_kernel, f, NULL), -EINVAL); /* once */
        json_object *out = NULL;
        assert_int_equal(kb_run_report(run, facts, &out, ret_exit), 0);
        kb_run_destroy(&run);
        return out;
}

static void test_conformance_pass(void **state) {
        kb_kernelspec *specs[] = {&python3, &ir};
        fake f = {.outcome = KB_CHECK_DONE};
        kb_run_facts facts = {.kind = KB_RUN_CONFORMANCE,
                              .started_at = "2026-01-01T00:00:00Z",
                              .started_ms = kb_now_ms(),
                              .timeout = "300",
                              .sandbox = kb_run_sandbox_new("/usr/bin/bwrap", "bubblewrap 0.8.0")};
        int exit_code = -1;
        json_object *out = report(specs, 2, &f, &facts, &exit_code);
        assert_int_equal(exit_code, KB_RUN_EXIT_PASS);
        /* The fields in the order the reports have always had them. */
        const char *order[] = {"kind",           "kbound_version",    "started_at", "duration_ms", "complete",
                               "allow_untested", "incomplete_reason", "claims",     "sandbox",     "kernels"};
        size_t i = 0;
        json_object_object_foreach(out, key, value) {
                (void) value;
                if (i < KB_ELEMENTSOF(order))
                        assert_string_equal(key, order[i]);
                i++;
        }
        assert_true(json_object_get_boolean(json_object_object_get(out, "complete")));
        assert_null(json_object_object_get(out, "incomplete_reason"));
        assert_int_equal(json_object_get_int(json_object_object_get(out, "exit_code")), 0);
        assert_int_equal(json_object_array_length(json_object_object_get(out, "kernels")), 2);
        json_object *sandbox = json_object_object_get(out, "sandbox");
        assert_string_equal(json_object_get_string(json_object_object_get(sandbox, "backend")), "bubblewrap");
        assert_string_equal(json_object_get_string(json_object_object_get(sandbox, "bwrap")), "/usr/bin/bwrap");
        json_object_put(out);
}

static void test_check_has_no_kind(void **state) {
        kb_kernelspec *specs[] = {&python3};
        fake f = {.outcome = KB_CHECK_DONE};
        kb_run_facts facts = {.kind = KB_RUN_CHECK,
                              .timeout = "300",
                              .raw_network_override = true,
                              .sandbox = kb_run_sandbox_new("b", "v")};
        int exit_code = -1;
        json_object *out = report(specs, 1, &f, &facts, &exit_code);
        assert_null(json_object_object_get(out, "kind"));
        assert_false(json_object_object_get_ex(out, "allow_untested", NULL));
        json_object *claims = json_object_object_get(out, "claims");
        assert_true(json_object_get_boolean(json_object_object_get(claims, "raw_network_override")));
        json_object_put(out);
}

static void test_cancelled_and_not_enforced(void **state) {
        kb_kernelspec *specs[] = {&python3};
        fake cancelled = {.outcome = KB_CHECK_CANCELLED};
        kb_run_facts facts = {.kind = KB_RUN_CONFORMANCE, .timeout = "0.5", .sandbox = kb_run_sandbox_new("b", "v")};
        int exit_code = -1;
        json_object *out = report(specs, 1, &cancelled, &facts, &exit_code);
        assert_int_equal(exit_code, KB_RUN_EXIT_FAIL);
        assert_false(json_object_get_boolean(json_object_object_get(out, "complete")));
        assert_string_equal(json_object_get_string(json_object_object_get(out, "incomplete_reason")),
                            "the 0.5 s deadline passed (--timeout)");
        json_object_put(out);

        fake gone = {.outcome = KB_CHECK_DONE, .no_result = true};
        facts.sandbox = kb_run_sandbox_new("b", "v");
        facts.signal = 15;
        out = report(specs, 1, &gone, &facts, &exit_code);
        assert_int_equal(exit_code, KB_RUN_EXIT_FAIL);
        assert_string_equal(json_object_get_string(json_object_object_get(out, "incomplete_reason")),
                            "interrupted by signal 15");
        json_object_put(out);

        fake refused = {.outcome = KB_CHECK_NOT_ENFORCED};
        facts.sandbox = kb_run_sandbox_new("b", "v");
        facts.signal = 0;
        out = report(specs, 1, &refused, &facts, &exit_code);
        assert_int_equal(exit_code, KB_RUN_EXIT_NOT_ENFORCED);
        json_object_put(out);
}

static void test_transcript_failure_fails_a_pass(void **state) {
        kb_kernelspec *specs[] = {&python3};
        fake f = {.outcome = KB_CHECK_DONE};
        kb_run_facts facts = {.kind = KB_RUN_CONFORMANCE,
                              .timeout = "300",
                              .transcript_failed = true,
                              .sandbox = kb_run_sandbox_new("b", "v")};
        int exit_code = -1;
        json_object *out = report(specs, 1, &f, &facts, &exit_code);
        assert_int_equal(exit_code, KB_RUN_EXIT_FAIL);
        assert_int_equal(json_object_get_int(json_object_object_get(out, "exit_code")), KB_RUN_EXIT_FAIL);
        json_object_put(out);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_team_names),
                cmocka_unit_test(test_refuses),
                cmocka_unit_test(test_conformance_pass),
                cmocka_unit_test(test_check_has_no_kind),
                cmocka_unit_test(test_cancelled_and_not_enforced),
                cmocka_unit_test(test_transcript_failure_fails_a_pass),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
