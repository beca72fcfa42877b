/* test_facts.c: the evidence's schema (src/base/facts.def) and what facts.h makes of it: the
 * table's own rules (each object's rows together, one key once per object, kinds and element
 * types that fit, no object declared that nothing holds), the accessors' reading of an absent fact
 * as its row says, the writers, the validator naming where an object breaks its declaration, and
 * the header-only keys agreeing with the table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "base/facts.h"

/* The objects a judge is handed at the top (judge.h's kb_judge_input), and the pseudo-objects. */
static bool is_root(kb_fact_object o) {
        return o == KB_FACT_OBJECT_HOST || o == KB_FACT_OBJECT_LOOK || o == KB_FACT_OBJECT_EXPECT ||
               o == KB_FACT_OBJECT_PROBE || o == KB_FACT_OBJECT_VAR_CELL || o == KB_FACT_OBJECT_LONG_CELL;
}

static bool is_pseudo(kb_fact_object o) {
        return o == KB_FACT_OBJECT_NONE || o == KB_FACT_OBJECT_INTS || o == KB_FACT_OBJECT_STRS ||
               o == KB_FACT_OBJECT_BOOLS || o == KB_FACT_OBJECT_ANYS || o == KB_FACT_OBJECT_INT_LISTS ||
               o == KB_FACT_OBJECT_MOUNT_LISTS;
}

/* Every row lies in its object's range, and the ranges cover every row once. */
static void test_rows_grouped(void **state) {
        (void) state;
        size_t covered = 0;
        for (int o = 0; o < _KB_FACT_OBJECT_MAX; o++) {
                kb_fact_id first, end;
                kb_fact_rows_of((kb_fact_object) o, &first, &end);
                assert_true(first <= end);
                for (kb_fact_id id = first; id < end; id++) {
                        if (kb_fact_row(id)->object != (kb_fact_object) o)
                                fail_msg("row %s.%s is in %s's range", kb_fact_object_name(kb_fact_row(id)->object),
                                         kb_fact_row(id)->key, kb_fact_object_name((kb_fact_object) o));
                        covered++;
                }
        }
        assert_int_equal(covered, _KB_FACT_ID_MAX);
        assert_null(kb_fact_row(_KB_FACT_ID_MAX));
        assert_null(kb_fact_row((kb_fact_id) -1));
}

/* Within an object each key once; kinds and element types that fit; TRUE only for bools. */
static void test_rows_consistent(void **state) {
        (void) state;
        for (kb_fact_id id = 0; id < _KB_FACT_ID_MAX; id++) {
                const kb_fact_info *r = kb_fact_row(id);
                const char *obj = kb_fact_object_name(r->object);
                assert_non_null(r->key);
                assert_true(r->key[0] != '\0');
                assert_non_null(r->what);
                for (kb_fact_id other = id + 1; other < _KB_FACT_ID_MAX; other++)
                        if (kb_fact_row(other)->object == r->object && strcmp(kb_fact_row(other)->key, r->key) == 0)
                                fail_msg("%s declares \"%s\" twice", obj, r->key);
                bool scalar = r->kind == KB_FACT_INT || r->kind == KB_FACT_STR || r->kind == KB_FACT_BOOL ||
                              r->kind == KB_FACT_ANY;
                if (scalar && r->of != KB_FACT_OBJECT_NONE)
                        fail_msg("%s.%s is a scalar with an element type", obj, r->key);
                if (!scalar && r->of == KB_FACT_OBJECT_NONE)
                        fail_msg("%s.%s has no element type", obj, r->key);
                if (r->kind == KB_FACT_OBJ && is_pseudo(r->of))
                        fail_msg("%s.%s is an object of a pseudo-type", obj, r->key);
                if ((r->presence == KB_FACT_TRUE || r->presence == KB_FACT_REQUIRED_TRUE) && r->kind != KB_FACT_BOOL)
                        fail_msg("%s.%s reads true when absent but is no bool", obj, r->key);
                if (is_pseudo(r->object))
                        fail_msg("the pseudo-type %s has a fact", obj);
        }
}

/* Every object but the roots is some row's element type: none is declared and held by nothing. */
static void test_objects_held(void **state) {
        (void) state;
        for (int o = 0; o < _KB_FACT_OBJECT_MAX; o++) {
                if (is_root((kb_fact_object) o) || is_pseudo((kb_fact_object) o))
                        continue;
                bool held = false;
                for (kb_fact_id id = 0; id < _KB_FACT_ID_MAX && !held; id++)
                        held = kb_fact_row(id)->of == (kb_fact_object) o;
                if (!held)
                        fail_msg("%s is declared but no fact holds one", kb_fact_object_name((kb_fact_object) o));
        }
}

/* Reading: present values as they are; an absent one as its row says. */
static void test_accessors(void **state) {
        (void) state;
        json_object *m = json_object_new_object();
        int64_t v = 7;
        /* absent */
        assert_false(kb_fact_int_of(m, FACT_MOUNT_ID, &v)); /* required: not known */
        assert_int_equal(v, 7);
        assert_true(kb_fact_int_of(m, FACT_MOUNT_SHARED, &v)); /* NONE: 0 */
        assert_int_equal(v, 0);
        assert_int_equal(kb_fact_int_or(m, FACT_MOUNT_ID, -5), -5);
        assert_true(kb_fact_bool_of(m, FACT_MOUNT_WRITABLE)); /* REQUIRED_TRUE */
        assert_false(kb_fact_bool_of(m, FACT_MOUNT_NODEV));   /* REQUIRED */
        bool b = true;
        assert_false(kb_fact_bool_known(m, FACT_MOUNT_WRITABLE, &b));
        assert_null(kb_fact_str_of(m, FACT_MOUNT_DEV));
        assert_string_equal(kb_fact_str_or(m, FACT_MOUNT_DEV, "?"), "?");
        assert_false(kb_fact_has(m, FACT_MOUNT_DEV));
        /* written, then read */
        assert_int_equal(kb_fact_set_int(m, FACT_MOUNT_ID, 42), 0);
        assert_int_equal(kb_fact_set_str(m, FACT_MOUNT_DEV, "0:42"), 0);
        assert_int_equal(kb_fact_set_bool(m, FACT_MOUNT_WRITABLE, false), 0);
        assert_int_equal(kb_fact_set_arr(m, FACT_MOUNT_OPTIONS, json_object_new_array()), 0);
        assert_true(kb_fact_int_of(m, FACT_MOUNT_ID, &v));
        assert_int_equal(v, 42);
        assert_string_equal(kb_fact_str_of(m, FACT_MOUNT_DEV), "0:42");
        assert_false(kb_fact_bool_of(m, FACT_MOUNT_WRITABLE));
        assert_true(kb_fact_bool_known(m, FACT_MOUNT_WRITABLE, &b));
        assert_false(b);
        assert_non_null(kb_fact_arr_of(m, FACT_MOUNT_OPTIONS));
        assert_true(kb_fact_has(m, FACT_MOUNT_DEV));
        /* the spelling is the table's */
        json_object *raw = NULL;
        assert_true(json_object_object_get_ex(m, kb_fact_row(FACT_MOUNT_DEV.id)->key, &raw));
        /* of another JSON type: not there as what it should be */
        json_object_object_add(m, kb_fact_row(FACT_MOUNT_PARENT.id)->key, json_object_new_string("1"));
        assert_false(kb_fact_int_of(m, FACT_MOUNT_PARENT, &v));
        json_object_object_add(m, kb_fact_row(FACT_MOUNT_NODEV.id)->key, json_object_new_int(1));
        assert_false(kb_fact_bool_of(m, FACT_MOUNT_NODEV));
        /* NULL objects and null members read as absent */
        assert_null(kb_fact_str_of(NULL, FACT_MOUNT_DEV));
        json_object_object_add(m, kb_fact_row(FACT_MOUNT_SOURCE.id)->key, NULL);
        assert_false(kb_fact_has(m, FACT_MOUNT_SOURCE));
        /* a writer given NULL (out of memory) says so */
        assert_int_equal(kb_fact_set_obj(m, FACT_MOUNT_TARGET, NULL), -ENOMEM);
        json_object_put(m);
}

static json_object *parse(const char *text) {
        json_object *o = json_tokener_parse(text);
        if (!o)
                fail_msg("bad test JSON: %s", text);
        return o;
}

/* The problems kb_fact_validate finds in text held to type, as one string. */
static int validate(const char *text, kb_fact_object type, bool strict, char *out, size_t size) {
        json_object *o = parse(text), *problems = json_object_new_array();
        int n = kb_fact_validate(o, type, strict, problems, 16);
        out[0] = '\0';
        for (size_t i = 0; i < json_object_array_length(problems); i++) {
                size_t used = strlen(out);
                snprintf(out + used, size - used, "%s%s", i ? " | " : "",
                         json_object_get_string(json_object_array_get_idx(problems, i)));
        }
        json_object_put(problems);
        json_object_put(o);
        return n;
}

#define GOOD_REF "{\"target\": \"/\", \"type\": \"dir\", \"dev\": \"0:1\", \"ino\": 2, \"mnt_id\": 3}"
#define GOOD_REFS "{\"cwd\": " GOOD_REF ", \"threads\": [{\"tid\": 9, \"root\": " GOOD_REF "}]}"

/* A process as the table declares it passes; each break is named where it is. */
static void test_validate(void **state) {
        (void) state;
        char got[2048];
        const char *good = "{\"pid\": 5, \"ns\": {\"net\": 1}, \"ns_owners\": {\"net\": [1, 2]}, \"refs\": " GOOD_REFS
                           ", \"fds\": [], \"errors\": [], \"uid\": [1, 1, 1, 1]}";
        if (validate(good, KB_FACT_OBJECT_PROCESS, true, got, sizeof got) != 0)
                fail_msg("a good process: %s", got);
        /* a required fact absent, or null */
        assert_int_equal(validate("{\"ns\": {}, \"ns_owners\": {}, \"refs\": {}, \"fds\": [], \"errors\": []}",
                                  KB_FACT_OBJECT_PROCESS, true, got, sizeof got),
                         1);
        assert_string_equal(got, "pid: required, absent");
        assert_int_equal(validate("{\"pid\": null, \"ns\": {}, \"ns_owners\": {}, \"refs\": {}, \"fds\": [], "
                                  "\"errors\": []}",
                                  KB_FACT_OBJECT_PROCESS, true, got, sizeof got),
                         1);
        assert_string_equal(got, "pid: required, null");
        /* of another type, deep in an array and a map */
        assert_int_equal(validate("{\"pid\": 5, \"ns\": {\"net\": \"1\"}, \"ns_owners\": {\"pid\": [1, \"x\"]}, "
                                  "\"refs\": {\"threads\": [{\"tid\": 1, \"cwd\": {\"target\": 1}}]}, \"fds\": [], "
                                  "\"errors\": [], \"uid\": 0}",
                                  KB_FACT_OBJECT_PROCESS, true, got, sizeof got),
                         8);
        assert_non_null(strstr(got, "uid: int, not an array"));
        assert_non_null(strstr(got, "ns.net: string, not an integer"));
        assert_non_null(strstr(got, "ns_owners.pid[1]: string, not an integer"));
        assert_non_null(strstr(got, "refs.threads[0].cwd.target: int, not a string"));
        assert_non_null(strstr(got, "refs.threads[0].cwd.type: required, absent"));
        /* a key the table does not declare: a problem of a host fact, tolerated in a cell's */
        assert_int_equal(validate("{\"target\": \"/\", \"type\": \"dir\", \"dev\": \"0:1\", \"ino\": 2, \"mnt_id\": "
                                  "3, \"in_process\": true}",
                                  KB_FACT_OBJECT_REF_LINK, true, got, sizeof got),
                         1);
        assert_string_equal(got, "in_process: not a declared fact of REF_LINK");
        assert_int_equal(validate("{\"pid\": 2, \"nspid\": [5, 2], \"extra\": 1}", KB_FACT_OBJECT_IDENTITY, false, got,
                                  sizeof got),
                         0);
        /* an optional fact may be null; a cell's result has nothing required */
        assert_int_equal(validate("{\"pid\": null}", KB_FACT_OBJECT_IDENTITY, false, got, sizeof got), 0);
        /* not an object at all */
        assert_int_equal(validate("[1]", KB_FACT_OBJECT_MOUNT, true, got, sizeof got), 1);
        assert_string_equal(got, "array, not an object (MOUNT)");
        /* problems past max are counted, not kept */
        json_object *o = parse("{}"), *problems = json_object_new_array();
        assert_true(kb_fact_validate(o, KB_FACT_OBJECT_MOUNT, true, problems, 2) > 2);
        assert_int_equal(json_object_array_length(problems), 2);
        assert_int_equal(kb_fact_validate(o, KB_FACT_OBJECT_MOUNT, true, NULL, 2), -EINVAL);
        json_object_put(problems);
        json_object_put(o);
}

/* A mount table of a look's map is an array of mounts, each held to MOUNT. */
static void test_validate_lists(void **state) {
        (void) state;
        char got[2048];
        assert_int_equal(validate("{\"label\": \"ready\", \"taken_ms\": 1, \"processes\": [], \"errors\": [], "
                                  "\"vanished\": 0, \"launcher\": {\"pid\": 1, \"ppid\": 1, \"spawned\": 1, "
                                  "\"kbound\": 1, \"argv\": [], \"outside_inodes\": [], \"shared_files\": []}, "
                                  "\"mount_tables\": {\"4026\": [{\"id\": 1}], \"4027\": {}}}",
                                  KB_FACT_OBJECT_LOOK, true, got, sizeof got),
                         11);
        assert_non_null(strstr(got, "mount_tables.4026[0].parent: required, absent"));
        assert_non_null(strstr(got, "mount_tables.4027: object, not an array"));
}

/* What a look could not read: one name per kind, with a suffix where it takes one. */
static void test_whats(void **state) {
        (void) state;
        char buf[128];
        assert_string_equal(kb_fact_what_text(WHAT_LAUNCH_SIDE_FDS), "the launch side's descriptors");
        assert_string_equal(kb_fact_what_words(WHAT_NS_OWNERS, "net", buf, sizeof buf), "ns_owners/net");
        assert_string_equal(kb_fact_what_words(WHAT_STATUS, NULL, buf, sizeof buf), "status");
        assert_string_equal(kb_fact_what_text((kb_fact_what){-1}), "?");
        assert_string_equal(kb_fact_what_text((kb_fact_what){_KB_FACT_WHAT_MAX}), "?");
}

/* The header-only key of every fact (kb_fact_key, for the programs that link no table) is its row's. */
static void test_keys(void **state) {
        (void) state;
        for (kb_fact_id id = 0; id < _KB_FACT_ID_MAX; id++)
                assert_string_equal(kb_fact_key(id), kb_fact_row(id)->key);
        assert_null(kb_fact_key(-1));
        assert_null(kb_fact_key(_KB_FACT_ID_MAX));
        assert_string_equal(kb_fact_key_of(FACT_TRY_SOCKETPAIR), "socketpair");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rows_grouped), cmocka_unit_test(test_rows_consistent),
                cmocka_unit_test(test_objects_held), cmocka_unit_test(test_accessors),
                cmocka_unit_test(test_validate),     cmocka_unit_test(test_validate_lists),
                cmocka_unit_test(test_whats),        cmocka_unit_test(test_keys),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
