/* test_error.c: the error carrier: the errno it returns is the one it holds, the first error made
 * is kept, context goes in front, and the words at the edge never come back NULL. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include "kbound/error.h"
#include "base/cleanup.h"

static int fails_with_context(const char *path, kb_error **ret_error) {
        return kb_error_make(ret_error, ENOENT, "cannot open %s", path);
}

static void test_make_returns_what_it_holds(void **state) {
        (void) state;
        _cleanup_error_ kb_error *e = NULL;
        assert_int_equal(fails_with_context("/no/such", &e), -ENOENT);
        assert_non_null(e);
        assert_int_equal(e->err, ENOENT);
        assert_string_equal(e->msg, "cannot open /no/such");
        assert_string_equal(kb_error_text(e, -ENOENT), "cannot open /no/such");
        /* a caller that wants the errno only */
        assert_int_equal(fails_with_context("/no/such", NULL), -ENOENT);
}

static void test_sign_and_zero_still_fail(void **state) {
        (void) state;
        _cleanup_error_ kb_error *neg = NULL, *zero = NULL;
        assert_int_equal(kb_error_make(&neg, -EPERM, "refused"), -EPERM);
        assert_int_equal(neg->err, EPERM);
        assert_int_equal(kb_error_make(&zero, 0, "lost"), -EIO);
        assert_int_equal(zero->err, EIO);
}

static void test_first_error_kept(void **state) {
        (void) state;
        _cleanup_error_ kb_error *e = NULL;
        assert_int_equal(kb_error_make(&e, EXDEV, "a different mount is there"), -EXDEV);
        /* a caller's fallback words never replace the callee's, but it still returns its own errno */
        assert_int_equal(kb_error_make(&e, EIO, "something failed"), -EIO);
        assert_int_equal(e->err, EXDEV);
        assert_string_equal(e->msg, "a different mount is there");
}

static void test_prefix(void **state) {
        (void) state;
        _cleanup_error_ kb_error *e = NULL;
        kb_error_prefix(&e, "ignored"); /* nothing to prefix */
        assert_null(e);
        kb_error_prefix(NULL, "ignored");
        kb_error_make(&e, ELOOP, "a symbolic link is on the path");
        kb_error_prefix(&e, "its mount point %s", "/a");
        assert_string_equal(e->msg, "its mount point /a: a symbolic link is on the path");
        assert_int_equal(e->err, ELOOP);
        /* an error that lost its words to a lack of memory gets the errno's own */
        free(e->msg);
        e->msg = NULL;
        kb_error_prefix(&e, "at %d", 1);
        assert_string_equal(e->msg, "at 1: Too many levels of symbolic links");
}

static void test_text_never_null(void **state) {
        (void) state;
        assert_string_equal(kb_error_text(NULL, -ENOENT), strerror(ENOENT));
        kb_error bare = {.err = EACCES, .msg = NULL};
        assert_string_equal(kb_error_text(&bare, -EIO), strerror(EACCES));
}

static void test_free_accepts_null(void **state) {
        (void) state;
        kb_error *e = NULL;
        kb_error_free(&e);
        kb_error_free(NULL);
        kb_error_make(&e, EIO, "x");
        kb_error_free(&e);
        assert_null(e);
        kb_error_free(&e);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_make_returns_what_it_holds),
                cmocka_unit_test(test_sign_and_zero_still_fail),
                cmocka_unit_test(test_first_error_kept),
                cmocka_unit_test(test_prefix),
                cmocka_unit_test(test_text_never_null),
                cmocka_unit_test(test_free_accepts_null),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
