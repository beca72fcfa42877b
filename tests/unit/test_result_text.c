/* test_result_text: kb_probe_result_text, the stdout transport of a pack's cell results (a marked
 * line "MARKER BASE64" among whatever else the cell printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include "kbound/langpack.h"

#define MARKER "KBOUND-RESULT-0123456789abcdef"
/* base64 of {"pid":2,"ok":true} */
#define B64_OBJECT "eyJwaWQiOjIsIm9rIjp0cnVlfQ=="
/* base64 of [1,2] (an array, not an object) */
#define B64_ARRAY "WzEsMl0="

static int result_of(const char *text, json_object **ret) {
        kb_execution ex = {.stdout_text = (char *) text, .stdout_len = strlen(text)};
        *ret = NULL;
        return kb_probe_result_text(&ex, MARKER, ret);
}

static void test_found_among_other_output(void **state) {
        static const char *const texts[] = {
                MARKER " " B64_OBJECT "\n",
                "hello\n" MARKER " " B64_OBJECT "\nbye\n",
                "noise\r\n" MARKER " " B64_OBJECT "\r\n", /* a terminal's line ends (pexpect) */
                "no newline at the end\n" MARKER " " B64_OBJECT,
        };
        for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
                json_object *o = NULL;
                assert_int_equal(result_of(texts[i], &o), 0);
                json_object *pid = NULL;
                assert_true(json_object_object_get_ex(o, "pid", &pid));
                assert_int_equal(json_object_get_int(pid), 2);
                json_object_put(o);
        }
}

static void test_refused(void **state) {
        static const struct {
                const char *text;
                int r;
        } cases[] = {
                {"", -ENOMSG},
                {"nothing marked\n", -ENOMSG},
                /* another run's marker, or one that only starts like ours */
                {"KBOUND-RESULT-ffffffffffffffff " B64_OBJECT "\n", -ENOMSG},
                {MARKER "X " B64_OBJECT "\n", -ENOMSG},
                {"  " MARKER " " B64_OBJECT "\n", -ENOMSG},
                {MARKER " " B64_OBJECT "\n" MARKER " " B64_OBJECT "\n", -EPROTO}, /* two results */
                {MARKER " " B64_ARRAY "\n", -EPROTO},                             /* not an object */
                {MARKER " {\"pid\":2}\n", -EPROTO},                               /* not base64 */
                {MARKER " eyJwaWQiOjJ9X\n", -EPROTO},                             /* bad length */
                {MARKER " e30=e30=\n", -EPROTO},                                  /* padding inside */
                {MARKER " \n", -EPROTO},
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                json_object *o = NULL;
                int r = result_of(cases[i].text, &o);
                if (r != cases[i].r)
                        fail_msg("case %zu: %d, not %d", i, r, cases[i].r);
                assert_null(o);
        }
}

static void test_bad_arguments(void **state) {
        json_object *o = NULL;
        kb_execution ex = {0};
        assert_int_equal(kb_probe_result_text(&ex, MARKER, &o), -ENOMSG);
        assert_int_equal(kb_probe_result_text(&ex, "", &o), -EINVAL);
        assert_int_equal(kb_probe_result_text(NULL, MARKER, &o), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_found_among_other_output),
                cmocka_unit_test(test_refused),
                cmocka_unit_test(test_bad_arguments),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
