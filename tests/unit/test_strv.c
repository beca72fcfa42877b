/* test_strv.c: growable string vectors: ownership on failure, the ceiling, an empty take. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include "base/strv.h"
#include "base/cleanup.h"

static void test_push_take(void **state) {
        kb_strv v = {0};
        for (int i = 0; i < 100; i++)
                assert_int_equal(kb_strv_push(&v, i % 2 ? "odd" : "even"), 0);
        assert_int_equal(v.n, 100);
        assert_null(v.items[100]);
        assert_true(kb_strv_contains(&v, "odd"));
        assert_false(kb_strv_contains(&v, "none"));
        assert_int_equal(kb_strv_push_take(&v, NULL), -ENOMEM);
        _cleanup_strv_ char **out = NULL;
        assert_int_equal(kb_strv_take(&v, &out), 0);
        assert_null(v.items);
        assert_int_equal(v.n, 0);
        assert_string_equal(out[99], "odd");
        _cleanup_strv_ char **copy = kb_strv_copy(out);
        assert_non_null(copy);
        assert_string_equal(copy[0], "even");
        assert_null(copy[100]);
}

static void test_max(void **state) {
        kb_strv v = {.max = 3};
        assert_int_equal(kb_strv_push(&v, "a"), 0);
        assert_int_equal(kb_strv_push(&v, "b"), 0);
        assert_int_equal(kb_strv_push(&v, "c"), -E2BIG);
        assert_int_equal(v.n, 2);
        kb_strv_clear(&v);
        assert_int_equal(v.max, 3);
        assert_null(v.items);
}

static void test_empty_take(void **state) {
        kb_strv v = {0};
        _cleanup_strv_ char **out = NULL;
        assert_int_equal(kb_strv_take(&v, &out), 0);
        assert_non_null(out);
        assert_null(out[0]);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_push_take),
                cmocka_unit_test(test_max),
                cmocka_unit_test(test_empty_take),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
