/* test_rules.c: the judgements check and conformance share (src/verdict/rules.c), and how the report shows
 * the language warning for either command. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include "kbound/report.h"
#include "verdict/rules.h"

/* Only interrupt_mode "message" makes an ignored interrupt_request a failure; "signal" (and no
 * mode at all, the spec's default) makes it unsupported, with the reason naming the mode. */
static void test_ignored_control_interrupt(void **state) {
        char reason[256];
        assert_string_equal(kb_rules_ignored_control_interrupt("message", reason, sizeof(reason)), "fail");
        assert_non_null(strstr(reason, "interrupt_mode 'message'"));
        assert_string_equal(kb_rules_ignored_control_interrupt("signal", reason, sizeof(reason)), "unsupported");
        assert_non_null(strstr(reason, "interrupt_mode 'signal'"));
        assert_non_null(strstr(reason, "optional"));
        assert_string_equal(kb_rules_ignored_control_interrupt(NULL, reason, sizeof(reason)), "unsupported");
        assert_non_null(strstr(reason, "by default"));
        /* Anything that is not exactly "message" is not a promise to handle interrupt_request. */
        assert_string_equal(kb_rules_ignored_control_interrupt("Message", reason, sizeof(reason)), "unsupported");
        /* A short buffer is cut, never overrun. */
        char tiny[8];
        kb_rules_ignored_control_interrupt("message", tiny, sizeof(tiny));
        assert_int_equal(strlen(tiny), 7);
}

static void test_language_mismatch(void **state) {
        char w[256];
        assert_false(kb_rules_language_mismatch("R", "r", w, sizeof(w)));
        assert_string_equal(w, "");
        assert_false(kb_rules_language_mismatch("python", "python", w, sizeof(w)));
        assert_false(kb_rules_language_mismatch(NULL, "python", w, sizeof(w)));
        assert_false(kb_rules_language_mismatch("python", "", w, sizeof(w)));
        assert_true(kb_rules_language_mismatch("python", "julia", w, sizeof(w)));
        assert_non_null(strstr(w, "language_info.name 'python' differs from the kernelspec's language 'julia'"));
}

static json_object *kernel(const char *name, const char *spec_language, const char *info_language) {
        json_object *k = json_object_new_object(), *info = json_object_new_object(), *checks = json_object_new_array();
        json_object *c = json_object_new_object();
        json_object_object_add(c, "id", json_object_new_string("kernel_info.reply"));
        json_object_object_add(c, "status", json_object_new_string("pass"));
        json_object_object_add(c, "detail", json_object_new_string("ok"));
        json_object_array_add(checks, c);
        json_object_object_add(info, "language", json_object_new_string(info_language));
        json_object_object_add(k, "name", json_object_new_string(name));
        json_object_object_add(k, "language", json_object_new_string(spec_language));
        json_object_object_add(k, "kernel_info", info);
        json_object_object_add(k, "error", NULL);
        json_object_object_add(k, "checks", checks);
        return k;
}

/* A warning never changes the verdict; it is in the JSON (kernels[].warnings, rebuilt on every
 * finish) and on the kernel's header line in the human report. */
static void test_report_warning(void **state) {
        json_object *run = json_object_new_object(), *kernels = json_object_new_array();
        json_object_object_add(run, "kind", json_object_new_string("conformance"));
        json_object_object_add(run, "complete", json_object_new_boolean(1));
        json_object_array_add(kernels, kernel("fake-julia", "julia", "python"));
        json_object_array_add(kernels, kernel("ir", "R", "R"));
        json_object_object_add(run, "kernels", kernels);
        assert_int_equal(kb_report_finish(run), 0);
        assert_int_equal(kb_report_finish(run), 0);
        json_object *w0 = json_object_object_get(json_object_array_get_idx(kernels, 0), "warnings");
        json_object *w1 = json_object_object_get(json_object_array_get_idx(kernels, 1), "warnings");
        assert_int_equal(json_object_array_length(w0), 1);
        assert_int_equal(json_object_array_length(w1), 0);
        assert_non_null(strstr(json_object_get_string(json_object_array_get_idx(w0, 0)), "'python'"));

        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        assert_non_null(f);
        assert_int_equal(kb_report_human(run, f), 0);
        assert_int_equal(fclose(f), 0);
        assert_non_null(
                strstr(text, "  warning: language_info.name 'python' differs from the kernelspec's language 'julia'"));
        assert_int_equal(strstr(strstr(text, "warning:") + 1, "warning:") == NULL, 1);
        free(text);
        json_object_put(run);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_ignored_control_interrupt),
                cmocka_unit_test(test_language_mismatch),
                cmocka_unit_test(test_report_warning),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
