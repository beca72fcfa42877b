/* test_rules.c: the judgements check and conformance share (src/verdict/rules.c), and how the report shows
 * the language warning for either command. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "kbound/report.h"
#include <unistd.h>
#include "kbound/inspect.h"
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

/* An IMAGE (facts.def) as JSON text, with its stack at stack and the given personality (-1: none). */
static json_object *image(long long starttime, long long stack, long long personality) {
        char text[1024];
        int n = snprintf(text, sizeof text,
                         "{\"starttime\": %lld, \"start_code\": 4194304, \"end_code\": 6000000, \"start_stack\": %lld, "
                         "\"start_data\": 7000000, \"end_data\": 7100000, \"start_brk\": 9000000, \"arg_start\": %lld, "
                         "\"arg_end\": %lld, \"env_start\": %lld, \"env_end\": %lld",
                         starttime, stack, stack + 100, stack + 200, stack + 200, stack + 900);
        if (personality >= 0)
                snprintf(text + n, sizeof text - (size_t) n, ", \"personality\": %lld}", personality);
        else
                snprintf(text + n, sizeof text - (size_t) n, "}");
        json_object *o = json_tokener_parse(text);
        assert_non_null(o);
        return o;
}

/* "The same kernel" is the same process image: any layout change is an execve, and a sameness
 * proves it only where layouts are randomized and readable. */
static void test_image_change(void **state) {
        (void) state;
        char buf[400];
        json_object *host = json_tokener_parse("{\"randomize_va_space\": 2}");
        json_object *first = image(100, 0x7ffd0000, 0), *same = image(100, 0x7ffd0000, 0);
        assert_null(kb_rules_image_change(host, first, same, buf, sizeof buf));
        /* an execve: the same start time, the stack elsewhere */
        json_object *moved = image(100, 0x7ffe1000, 0);
        assert_non_null(kb_rules_image_change(host, first, moved, buf, sizeof buf));
        assert_non_null(strstr(buf, "replaced its process image (execve)"));
        assert_non_null(strstr(buf, "its stack moved from 0x7ffd0000 to 0x7ffe1000"));
        /* another process */
        json_object *other = image(101, 0x7ffd0000, 0);
        assert_non_null(kb_rules_image_change(host, first, other, buf, sizeof buf));
        assert_non_null(strstr(buf, "start time"));
        /* nothing to compare with, or a layout the host may not see */
        assert_non_null(kb_rules_image_change(host, NULL, same, buf, sizeof buf));
        json_object *zero = image(100, 0, 0);
        json_object_object_add(zero, "start_code", json_object_new_int(0));
        json_object_object_add(zero, "end_code", json_object_new_int(0));
        json_object_object_add(zero, "start_data", json_object_new_int(0));
        json_object_object_add(zero, "end_data", json_object_new_int(0));
        json_object_object_add(zero, "start_brk", json_object_new_int(0));
        json_object_object_add(zero, "arg_start", json_object_new_int(0));
        json_object_object_add(zero, "arg_end", json_object_new_int(0));
        json_object_object_add(zero, "env_start", json_object_new_int(0));
        json_object_object_add(zero, "env_end", json_object_new_int(0));
        json_object *zero2 = json_object_get(zero);
        assert_non_null(kb_rules_image_change(host, zero, zero2, buf, sizeof buf));
        assert_non_null(strstr(buf, "may not see where its image lies"));
        /* layouts that are not randomized prove nothing by being the same */
        json_object *norand = json_tokener_parse("{\"randomize_va_space\": 0}");
        assert_non_null(kb_rules_image_change(norand, first, same, buf, sizeof buf));
        assert_non_null(strstr(buf, "randomize_va_space is 0"));
        json_object *fixed = image(100, 0x7ffd0000, 0x0040000), *fixed2 = image(100, 0x7ffd0000, 0x0040000);
        assert_non_null(kb_rules_image_change(host, fixed, fixed2, buf, sizeof buf));
        assert_non_null(strstr(buf, "ADDR_NO_RANDOMIZE"));
        json_object *unread = image(100, 0x7ffd0000, -1);
        assert_non_null(kb_rules_image_change(host, first, unread, buf, sizeof buf));
        assert_non_null(strstr(buf, "personality"));
        json_object *objs[] = {host, first, same, moved, other, zero, zero2, norand, fixed, fixed2, unread};
        for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++)
                json_object_put(objs[i]);
}

/* The host reads its own process's image: a layout it may see, and its personality. */
static void test_image_of_self(void **state) {
        (void) state;
        json_object *a = NULL, *b = NULL, *host = json_tokener_parse("{}");
        char buf[400];
        assert_int_equal(kb_inspect_image("/proc", getpid(), &a), 0);
        assert_int_equal(kb_inspect_image("/proc", getpid(), &b), 0);
        if (kb_rules_image_change(host, a, b, buf, sizeof buf))
                fail_msg("this process, read twice: %s", buf);
        assert_int_equal(kb_inspect_image("/proc", 99999999, &host), -ESRCH);
        json_object_put(a);
        json_object_put(b);
        json_object_put(host);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_ignored_control_interrupt),
                cmocka_unit_test(test_language_mismatch),
                cmocka_unit_test(test_report_warning),
                cmocka_unit_test(test_image_change),
                cmocka_unit_test(test_image_of_self),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
