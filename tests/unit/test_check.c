/* test_check.c: the table of checks (check.c): ids unique and well formed, each id's first part
 * its phase's name, the lookups both ways, the judged rows and the rows a step runs told apart, the
 * full boundary's rows carrying their summary words, and the rows that need a cell saying what. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <string.h>
#include "kbound/check.h"

static void test_ids_unique_and_round_trip(void **state) {
        (void) state;
        for (kb_check c = 0; c < _KB_CHECK_MAX; c++) {
                const char *id = kb_check_id(c);
                assert_non_null(id);
                assert_int_equal(kb_check_from_id(id), c);
                for (kb_check d = c + 1; d < _KB_CHECK_MAX; d++)
                        assert_string_not_equal(id, kb_check_id(d));
                /* "phase.name": lower case, digits and underscores, the phase's name first. */
                const char *dot = strchr(id, '.');
                assert_non_null(dot);
                const char *phase = kb_check_phase_name(kb_check_get(c)->phase);
                assert_non_null(phase);
                assert_int_equal((size_t) (dot - id), strlen(phase));
                assert_memory_equal(id, phase, strlen(phase));
                for (const char *p = dot + 1; *p; p++)
                        assert_true(islower((unsigned char) *p) || isdigit((unsigned char) *p) || *p == '_');
        }
}

static void test_lookups_refuse_what_is_no_check(void **state) {
        (void) state;
        assert_null(kb_check_get(_KB_CHECK_MAX));
        assert_null(kb_check_get(_KB_CHECK_INVALID));
        assert_null(kb_check_id(_KB_CHECK_MAX));
        assert_int_equal(kb_check_from_id(NULL), _KB_CHECK_INVALID);
        assert_int_equal(kb_check_from_id(""), _KB_CHECK_INVALID);
        assert_int_equal(kb_check_from_id("boundary.network "), _KB_CHECK_INVALID);
        assert_int_equal(kb_check_from_id("boundary"), _KB_CHECK_INVALID);
        assert_null(kb_check_phase_name(_KB_CHECK_PHASE_MAX));
        assert_null(kb_check_needs_name(_KB_CHECK_NEEDS_MAX));
        assert_string_equal(kb_check_needs_name(KB_CHECK_NEEDS_HOST), "host");
        assert_string_equal(kb_check_needs_name(KB_CHECK_NEEDS_CELL), "cell");
}

/* Checks run, and are reported, phase by phase: a phase's rows stand together, in phase order. */
static void test_phases_in_order(void **state) {
        (void) state;
        for (kb_check c = 1; c < _KB_CHECK_MAX; c++)
                assert_true(kb_check_get(c - 1)->phase <= kb_check_get(c)->phase);
}

static void test_rows_complete(void **state) {
        (void) state;
        size_t boundary = 0;
        for (kb_check c = 0; c < _KB_CHECK_MAX; c++) {
                const kb_check_info *i = kb_check_get(c);
                assert_non_null(i->claim);
                assert_true(strlen(i->claim) > 10);
                assert_true(i->needs >= 0 && i->needs < _KB_CHECK_NEEDS_MAX);
                assert_true(i->time >= 0 && i->time < _KB_CHECK_TIME_MAX);
                /* The summary names the full boundary's checks, and only those. */
                bool is_boundary = i->phase == KB_CHECK_PHASE_BOUNDARY;
                assert_int_equal(is_boundary, i->summary != NULL);
                assert_int_equal(is_boundary, kb_check_is_boundary(i->id));
                boundary += is_boundary;
                /* A check that needs a cell says what needs it (the untested detail names it); a
                 * host part belongs to a judged check that needs a cell. */
                assert_int_equal(i->needs == KB_CHECK_NEEDS_CELL, i->without_cell != NULL);
                if (i->host_part)
                        assert_true(i->judge && i->needs == KB_CHECK_NEEDS_CELL);
        }
        assert_true(boundary > 0);
        assert_false(kb_check_is_boundary(NULL));
        assert_false(kb_check_is_boundary("sandbox.backend"));
        assert_true(kb_check_is_boundary("boundary.network"));
}

/* The full boundary is judged from the evidence: none of its checks is left to a step of the run
 * (those are reported as they happen, and a cancelled run judges no boundary check). */
static void test_boundary_checks_are_judged(void **state) {
        (void) state;
        for (kb_check c = 0; c < _KB_CHECK_MAX; c++)
                if (kb_check_get(c)->phase == KB_CHECK_PHASE_BOUNDARY)
                        assert_non_null(kb_check_get(c)->judge);
        /* The steps: the pidfd's identity, the interrupts, persistence and the shutdown. */
        assert_null(kb_check_get(KB_CHECK_PIDFD)->judge);
        assert_null(kb_check_get(KB_CHECK_INTERRUPT_CONTROL)->judge);
        assert_null(kb_check_get(KB_CHECK_SHUTDOWN)->judge);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_ids_unique_and_round_trip),
                cmocka_unit_test(test_lookups_refuse_what_is_no_check),
                cmocka_unit_test(test_phases_in_order),
                cmocka_unit_test(test_rows_complete),
                cmocka_unit_test(test_boundary_checks_are_judged),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
