/* test_replay.c: the bounded replay history (src/protocol/replay.c) without sockets. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "protocol/replay-internal.h"

static void test_repeat_refused(void **state) {
        kb_replay_history *h = NULL;
        assert_int_equal(kb_replay_history_new(KB_REPLAY_HISTORY_DEFAULT, &h), 0);
        const char *sig = "9e8f7061b5c4d3e2f1a0b9c8d7e6f5a49e8f7061b5c4d3e2f1a0b9c8d7e6f5a4";
        assert_int_equal(kb_replay_history_add(h, sig, strlen(sig)), 0);
        assert_int_equal(kb_replay_history_add(h, sig, strlen(sig)), -EEXIST);
        /* A prefix or one more byte is another entry. */
        assert_int_equal(kb_replay_history_add(h, sig, strlen(sig) - 1), 0);
        assert_int_equal(kb_replay_history_add(h, "", 0), 0);
        assert_int_equal(kb_replay_history_add(h, "", 0), -EEXIST);
        assert_int_equal(kb_replay_history_count(h), 3);
        kb_replay_history_destroy(&h);
        assert_null(h);
        kb_replay_history_destroy(&h);
        kb_replay_history_destroy(NULL);
}

/* Past its capacity the oldest entries are forgotten first, and only they. */
static void test_bounded_oldest_forgotten(void **state) {
        kb_replay_history *h = NULL;
        assert_int_equal(kb_replay_history_new(1000, &h), 0); /* rounded up to 1024 */
        char id[32];
        for (int i = 0; i < 1024 + 10; i++) {
                int n = snprintf(id, sizeof(id), "msg-%d", i);
                assert_int_equal(kb_replay_history_add(h, id, (size_t) n), 0);
        }
        assert_int_equal(kb_replay_history_count(h), 1024);
        /* msg-0..msg-9 were pushed out by the last ten; msg-10 onwards are still there. */
        for (int i = 10; i < 1024 + 10; i++) {
                int n = snprintf(id, sizeof(id), "msg-%d", i);
                assert_int_equal(kb_replay_history_add(h, id, (size_t) n), -EEXIST);
        }
        int n = snprintf(id, sizeof(id), "msg-%d", 0);
        assert_int_equal(kb_replay_history_add(h, id, (size_t) n), 0);
        /* ... which in turn pushed out msg-10. */
        n = snprintf(id, sizeof(id), "msg-%d", 10);
        assert_int_equal(kb_replay_history_add(h, id, (size_t) n), 0);
        assert_int_equal(kb_replay_history_count(h), 1024);
        kb_replay_history_destroy(&h);
}

/* Many rounds through a tiny history: the chains stay consistent (every remembered entry is found,
 * every forgotten one is not). */
static void test_wraps_many_times(void **state) {
        kb_replay_history *h = NULL;
        assert_int_equal(kb_replay_history_new(2, &h), 0);
        char id[32];
        for (int i = 0; i < 10000; i++) {
                int n = snprintf(id, sizeof(id), "%d", i);
                assert_int_equal(kb_replay_history_add(h, id, (size_t) n), 0);
                assert_int_equal(kb_replay_history_add(h, id, (size_t) n), -EEXIST);
                if (i >= 1) {
                        n = snprintf(id, sizeof(id), "%d", i - 1);
                        assert_int_equal(kb_replay_history_add(h, id, (size_t) n), -EEXIST);
                }
        }
        assert_int_equal(kb_replay_history_count(h), 2);
        kb_replay_history_destroy(&h);
}

static void test_bad_capacity(void **state) {
        kb_replay_history *h = NULL;
        assert_int_equal(kb_replay_history_new(0, &h), -EINVAL);
        assert_int_equal(kb_replay_history_new((size_t) 1 << 30, &h), -EINVAL);
        assert_null(h);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_repeat_refused),
                cmocka_unit_test(test_bounded_oldest_forgotten),
                cmocka_unit_test(test_wraps_many_times),
                cmocka_unit_test(test_bad_capacity),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
