/* test_evidence_schema.c: schemas/kbound-evidence.schema.json is what facts.def and evidence.def
 * say, and evidence.def names real facts and checks, each key once per check. Run with
 * KBOUND_WRITE_SCHEMA=<path> to write the schema there (then commit it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "verdict/evidence.h"

static void test_rows(void **state) {
        (void) state;
        for (int e = 0; e < _KB_EVIDENCE_ID_MAX; e++) {
                const kb_evidence_info *row = kb_evidence_row((kb_evidence_id) e);
                assert_non_null(row);
                assert_non_null(kb_fact_row(row->fact));
                assert_true((unsigned) row->check < _KB_CHECK_MAX);
                for (int o = 0; o < e; o++) {
                        const kb_evidence_info *other = kb_evidence_row((kb_evidence_id) o);
                        if (other->check == row->check && strcmp(other->key, row->key) == 0)
                                fail_msg("%s's evidence quotes two facts as \"%s\"", kb_check_id(row->check), row->key);
                }
        }
        assert_null(kb_evidence_row(_KB_EVIDENCE_ID_MAX));
}

/* A quote has its fact's shape: an array of NOT_ENTERED objects, each a host-made object that
 * admits nothing undeclared, may be null. */
static void test_shapes(void **state) {
        (void) state;
        json_object *schema = kb_evidence_schema();
        assert_non_null(schema);
        json_object *rules = json_object_object_get(schema, "allOf"), *quote = NULL;
        for (size_t i = 0; i < json_object_array_length(rules); i++) {
                json_object *rule = json_object_array_get_idx(rules, i), *id = NULL;
                json_object_object_get_ex(json_object_object_get(json_object_object_get(rule, "if"), "properties"),
                                          "id", &id);
                if (strcmp(json_object_get_string(json_object_object_get(id, "const")), "boundary.sockets") == 0)
                        quote = json_object_object_get(
                                json_object_object_get(
                                        json_object_object_get(
                                                json_object_object_get(json_object_object_get(rule, "then"),
                                                                       "properties"),
                                                "evidence"),
                                        "properties"),
                                "namespaces_not_entered");
        }
        assert_non_null(quote);
        json_object *alt = json_object_object_get(quote, "anyOf");
        assert_int_equal(json_object_array_length(alt), 2);
        json_object *arr = json_object_array_get_idx(alt, 0);
        assert_string_equal(json_object_get_string(json_object_object_get(arr, "type")), "array");
        assert_string_equal(
                json_object_get_string(json_object_object_get(json_object_object_get(arr, "items"), "$ref")),
                "#/definitions/NOT_ENTERED");
        json_object *def = json_object_object_get(json_object_object_get(schema, "definitions"), "NOT_ENTERED");
        assert_false(json_object_get_boolean(json_object_object_get(def, "additionalProperties")));
        assert_true(json_object_array_length(json_object_object_get(def, "required")) > 0);
        /* what a cell said may say more */
        def = json_object_object_get(json_object_object_get(schema, "definitions"), "PROBE_NETWORK");
        if (def)
                assert_true(json_object_get_boolean(json_object_object_get(def, "additionalProperties")));
        json_object_put(schema);
}

/* The committed schema is the one the tables make. */
static void test_committed(void **state) {
        (void) state;
        json_object *made = kb_evidence_schema();
        assert_non_null(made);
        const char *out = getenv("KBOUND_WRITE_SCHEMA");
        if (out && *out) {
                assert_int_equal(json_object_to_file_ext(out, made,
                                                         JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE),
                                 0);
                json_object_put(made);
                return;
        }
        const char *src = getenv("KBOUND_SOURCE_DIR");
        assert_non_null(src);
        char path[4096];
        snprintf(path, sizeof path, "%s/schemas/kbound-evidence.schema.json", src);
        json_object *committed = json_object_from_file(path);
        if (!committed || !json_object_equal(made, committed))
                fail_msg("%s is not what facts.def and evidence.def make: run "
                         "KBOUND_WRITE_SCHEMA=%s ./test_evidence_schema in the build folder and commit it",
                         path, path);
        json_object_put(committed);
        json_object_put(made);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rows),
                cmocka_unit_test(test_shapes),
                cmocka_unit_test(test_committed),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
