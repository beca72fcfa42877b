/* test_report_conformance.c: the conformance statuses (deviation, untested) in the verdict and
 * every rendering, and the conformance summary sentence. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include "kbound/report.h"

static json_object *item(const char *id, const char *status, const char *detail) {
        json_object *c = json_object_new_object();
        json_object_object_add(c, "id", json_object_new_string(id));
        json_object_object_add(c, "status", json_object_new_string(status));
        json_object_object_add(c, "detail", detail ? json_object_new_string(detail) : NULL);
        json_object_object_add(c, "duration_ms", json_object_new_int(3));
        json_object_object_add(c, "evidence", json_object_new_object());
        return c;
}

/* python3 all pass; ir with a deviation and an untested item; untested items allowed or not. */
static json_object *new_run_allowing(const char *ir_control_status, const char *ir_control_detail, bool allow) {
        json_object *run = json_object_new_object();
        json_object_object_add(run, "kind", json_object_new_string("conformance"));
        json_object_object_add(run, "allow_untested", json_object_new_boolean(allow));
        json_object_object_add(run, "complete", json_object_new_boolean(1));
        json_object *claims = json_object_new_object();
        json_object_object_add(claims, "raw_network_override", json_object_new_boolean(0));
        json_object_object_add(run, "claims", claims);
        json_object *kernels = json_object_new_array();
        const char *names[] = {"python3", "ir"};
        for (int i = 0; i < 2; i++) {
                json_object *k = json_object_new_object();
                json_object_object_add(k, "name", json_object_new_string(names[i]));
                json_object_object_add(k, "error", NULL);
                json_object *checks = json_object_new_array();
                json_object_array_add(checks, item("kernel_info.reply", "pass", "ok"));
                json_object_array_add(checks, item("execute.stdout", "pass", "ok"));
                if (i == 1) {
                        json_object_array_add(checks, item("interrupt.control", ir_control_status, ir_control_detail));
                        json_object_array_add(checks, item("history.tail", "untested", "no snippet"));
                }
                json_object_object_add(k, "checks", checks);
                json_object_array_add(kernels, k);
        }
        json_object_object_add(run, "kernels", kernels);
        return run;
}

static json_object *new_run(const char *ir_control_status, const char *ir_control_detail) {
        return new_run_allowing(ir_control_status, ir_control_detail, true);
}

/* open_memstream's buffer pointer lives on the heap: a stack one whose address the stream keeps
 * is what gcc 12 -O2 takes for a dangling pointer (test_report.c has the same helper). */
static char *render(json_object *run, int (*fn)(json_object *, FILE *)) {
        struct {
                char *text;
                size_t size;
        } *m = calloc(1, sizeof(*m));
        assert_non_null(m);
        FILE *f = open_memstream(&m->text, &m->size);
        assert_non_null(f);
        assert_int_equal(fn(run, f), 0);
        assert_int_equal(fclose(f), 0);
        char *text = m->text;
        free(m);
        return text;
}

static const char *summary(json_object *run) {
        json_object *claims = json_object_object_get(run, "claims");
        return json_object_get_string(json_object_object_get(claims, "summary"));
}

static void test_deviation_and_untested_keep_a_pass(void **state) {
        json_object *run = new_run("deviation", "known deviation of IRkernel (no_reply): ignores interrupt_request");
        assert_int_equal(kb_report_finish(run), 0);
        assert_string_equal(json_object_get_string(json_object_object_get(run, "verdict")), "pass");
        const char *s = summary(run);
        assert_non_null(strstr(s, "PASS: protocol conformance of python3, ir: 4 item(s) passed"));
        assert_non_null(strstr(s, "known deviations: ir interrupt.control"));
        assert_non_null(strstr(s, "untested: ir history.tail"));
        assert_null(strcasestr(s, "full boundary"));
        assert_false(json_object_get_boolean(
                json_object_object_get(json_object_object_get(run, "claims"), "full_boundary")));

        char *human = render(run, kb_report_human);
        assert_non_null(strstr(human, "DEVIATION    ir       interrupt.control"));
        assert_non_null(strstr(human, "UNTESTED     ir       history.tail"));
        free(human);
        char *junit = render(run, kb_report_junit);
        assert_non_null(strstr(junit, "<skipped message=\"deviation: known deviation of IRkernel"));
        assert_non_null(strstr(junit, "<skipped message=\"untested: no snippet\"/>"));
        assert_null(strstr(junit, "<failure"));
        assert_non_null(strstr(junit, "<testsuites name=\"kbound\" tests=\"6\" failures=\"0\" errors=\"0\" time="));
        assert_non_null(strstr(junit, "name=\"kbound.ir\" tests=\"4\" failures=\"0\" errors=\"0\" skipped=\"2\""));
        free(junit);
        json_object_put(run);
}

/* An item nobody tested proves nothing: without allow_untested (JSON true) it fails the run, in
 * the summary and in JUnit, with the reason; the deviation alone would still pass. */
static void test_untested_fails_unless_allowed(void **state) {
        json_object *run = new_run_allowing("deviation", "known deviation of IRkernel (no_reply): ignores it", false);
        assert_int_equal(kb_report_finish(run), 1);
        assert_string_equal(json_object_get_string(json_object_object_get(run, "verdict")), "fail");
        assert_non_null(strstr(summary(run),
                               "FAIL: ir history.tail (untested, not accepted without --allow-untested) failed."));
        assert_null(strstr(summary(run), "interrupt.control"));
        char *junit = render(run, kb_report_junit);
        assert_non_null(
                strstr(junit, "<failure message=\"untested, not accepted without --allow-untested: no snippet\""));
        assert_non_null(strstr(junit, "<testsuites name=\"kbound\" tests=\"6\" failures=\"1\" errors=\"0\" time="));
        assert_non_null(strstr(junit, "name=\"kbound.ir\" tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"1\""));
        free(junit);
        json_object_put(run);

        /* Missing or not a JSON true is not an allowance. */
        run = new_run_allowing("pass", "ok", false);
        json_object_object_add(run, "allow_untested", json_object_new_string("true"));
        assert_int_equal(kb_report_finish(run), 1);
        json_object_object_del(run, "allow_untested");
        assert_int_equal(kb_report_finish(run), 1);
        json_object_put(run);
}

static void test_unexplained_deviation_fails(void **state) {
        json_object *run = new_run("deviation", "");
        assert_int_equal(kb_report_finish(run), 1);
        assert_non_null(strstr(summary(run), "FAIL: ir interrupt.control (deviation without a name) failed"));
        json_object_put(run);
        run = new_run("untested", NULL);
        assert_int_equal(kb_report_finish(run), 1);
        assert_non_null(strstr(summary(run), "untested without a reason"));
        json_object_put(run);
}

static void test_conformance_failure(void **state) {
        json_object *run = new_run("fail", "no interrupt_reply within 2000 ms");
        assert_int_equal(kb_report_finish(run), 1);
        assert_non_null(strstr(summary(run), "FAIL: ir interrupt.control failed."));
        char *junit = render(run, kb_report_junit);
        assert_non_null(strstr(junit, "<failure message=\"no interrupt_reply within 2000 ms\""));
        free(junit);
        json_object_put(run);
}

/* interrupt_request ignored by a kernel whose kernelspec declares signals: unsupported keeps a
 * pass, and the summary names it, as a check run's unsupported items are named. */
static void test_unsupported_is_named(void **state) {
        json_object *run =
                new_run("unsupported", "no interrupt_reply; the kernelspec declares interrupt_mode 'signal'");
        assert_int_equal(kb_report_finish(run), 0);
        assert_non_null(strstr(summary(run), "; unsupported: ir interrupt.control"));
        char *human = render(run, kb_report_human);
        assert_non_null(strstr(human, "UNSUPPORTED  ir       interrupt.control"));
        free(human);
        json_object_put(run);
        run = new_run("unsupported", "");
        assert_int_equal(kb_report_finish(run), 1);
        json_object_put(run);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_deviation_and_untested_keep_a_pass),
                cmocka_unit_test(test_untested_fails_unless_allowed),
                cmocka_unit_test(test_unexplained_deviation_fails),
                cmocka_unit_test(test_conformance_failure),
                cmocka_unit_test(test_unsupported_is_named),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
