/* test_common.c: the small shared helpers: hex formatting and random hex. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include "kbound/common.h"

static void test_hex_encode(void **state) {
        static const unsigned char bytes[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
        char out[2 * sizeof(bytes) + 1];
        memset(out, 'x', sizeof(out));
        kb_hex_encode(bytes, sizeof(bytes), out);
        assert_string_equal(out, "00017f80abff");
        kb_hex_encode(bytes, 0, out);
        assert_string_equal(out, "");
}

static void test_random_hex(void **state) {
        char a[129], b[129];
        assert_int_equal(kb_random_hex(a, 64), 0);
        assert_int_equal(kb_random_hex(b, 64), 0);
        assert_int_equal(strlen(a), 128);
        assert_int_equal(strspn(a, "0123456789abcdef"), 128);
        assert_string_not_equal(a, b); /* 512 random bits each */
        assert_int_equal(kb_random_hex(a, 65), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_hex_encode),
                cmocka_unit_test(test_random_hex),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
