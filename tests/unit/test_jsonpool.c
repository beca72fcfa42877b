/* test_jsonpool.c: values interned into one pool hold each equal part once, read as before, and
 * outlive the pool and each other; unequal parts (other type, value or key order) stay apart. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/jsonpool.h"
#include "base/cleanup.h"

static json_object *parse(const char *text) {
        json_object *o = json_tokener_parse(text);
        assert_non_null(o);
        return o;
}

static json_object *at(json_object *o, const char *key) {
        json_object *v = NULL;
        assert_true(json_object_object_get_ex(o, key, &v));
        return v;
}

/* Interns *v and checks that it still reads as it did, in the same order. */
static size_t intern_same(kb_json_pool *p, json_object **v) {
        char *before = strdup(json_object_to_json_string_ext(*v, JSON_C_TO_STRING_PLAIN));
        assert_non_null(before);
        size_t n = kb_json_pool_intern(p, v);
        assert_string_equal(json_object_to_json_string_ext(*v, JSON_C_TO_STRING_PLAIN), before);
        free(before);
        return n;
}

static void test_looks_share(void **state) {
        kb_json_pool *p = NULL;
        assert_int_equal(kb_json_pool_new(&p), 0);
        _cleanup_json_ json_object *first = parse("{\"label\": \"ready\", \"mounts\": [{\"dev\": \"0:1\", \"path\": "
                                                  "\"/\"}, {\"dev\": \"0:1\", \"path\": \"/tmp\"}],"
                                                  " \"processes\": [{\"pid\": 2, \"fds\": [0, 1, 2]}]}");
        _cleanup_json_ json_object *second =
                parse("{\"label\": \"final\", \"mounts\": [{\"dev\": \"0:1\", \"path\": \"/\"}, {\"dev\": \"0:1\", "
                      "\"path\": \"/tmp\"}],"
                      " \"processes\": [{\"pid\": 3, \"fds\": [0, 1, 2, 9]}, {\"pid\": 2, \"fds\": [0, 1, 2]}]}");
        intern_same(p, &first);
        /* Within one value: the same device string twice is one object. */
        json_object *m = at(first, "mounts");
        assert_ptr_equal(at(json_object_array_get_idx(m, 0), "dev"), at(json_object_array_get_idx(m, 1), "dev"));
        assert_true(intern_same(p, &second) > 0);
        /* Across values: the equal table, and the equal process at another place, are first's. */
        assert_ptr_equal(at(second, "mounts"), at(first, "mounts"));
        assert_ptr_equal(json_object_array_get_idx(at(second, "processes"), 1),
                         json_object_array_get_idx(at(first, "processes"), 0));
        /* What differs is second's own, with its equal parts shared. */
        json_object *p3 = json_object_array_get_idx(at(second, "processes"), 0),
                    *p2 = json_object_array_get_idx(at(first, "processes"), 0);
        assert_ptr_not_equal(at(p3, "fds"), at(p2, "fds"));
        assert_ptr_equal(json_object_array_get_idx(at(p3, "fds"), 2), json_object_array_get_idx(at(p2, "fds"), 2));
        assert_ptr_not_equal(at(second, "label"), at(first, "label"));
        /* The values outlive the pool. */
        kb_json_pool_free(&p);
        assert_null(p);
        assert_int_equal(json_object_get_int(at(p2, "pid")), 2);
}

/* A value equal to one interned before becomes that one; the caller's reference moves. */
static void test_whole_value_replaced(void **state) {
        kb_json_pool *p = NULL;
        assert_int_equal(kb_json_pool_new(&p), 0);
        json_object *a = parse("{\"a\": [1, 2, {\"b\": null}]}"), *b = parse("{\"a\": [1, 2, {\"b\": null}]}");
        intern_same(p, &a);
        json_object *was = b;
        intern_same(p, &b);
        assert_ptr_equal(a, b);
        assert_ptr_not_equal(was, b);
        json_object_put(a);
        kb_json_pool_free(&p);
        assert_int_equal(json_object_array_length(at(b, "a")), 3); /* b's reference keeps it */
        json_object_put(b);
}

/* Nothing unequal is shared: another type, value or key order. */
static void test_unequal_apart(void **state) {
        kb_json_pool *p = NULL;
        assert_int_equal(kb_json_pool_new(&p), 0);
        _cleanup_json_ json_object *a =
                parse("{\"x\": 1, \"y\": \"1\", \"z\": 1.5, \"t\": true, \"o\": {\"k\": 1, \"l\": 2}}");
        _cleanup_json_ json_object *b =
                parse("{\"x\": \"1\", \"y\": 1, \"z\": 2.5, \"t\": 1, \"o\": {\"l\": 2, \"k\": 1}}");
        intern_same(p, &a);
        intern_same(p, &b);
        const char *keys[] = {"x", "y", "z", "t", "o"};
        for (size_t i = 0; i < 5; i++)
                assert_ptr_not_equal(at(a, keys[i]), at(b, keys[i]));
        /* ... while equal scalars under other keys are one. */
        assert_ptr_equal(at(at(b, "o"), "k"), at(a, "x"));
        assert_ptr_equal(at(b, "t"), at(a, "x"));
        kb_json_pool_free(&p);
        kb_json_pool_free(&p);
        kb_json_pool_free(NULL);
        assert_int_equal(kb_json_pool_intern(NULL, &a), 0);
}

/* Many distinct values (the pool grows), then each again: every one is found. */
static void test_grows(void **state) {
        kb_json_pool *p = NULL;
        assert_int_equal(kb_json_pool_new(&p), 0);
        json_object *all = json_object_new_array(), *again = json_object_new_array();
        char text[64];
        for (int i = 0; i < 5000; i++) {
                snprintf(text, sizeof text, "{\"n\": %d, \"s\": \"v%d\"}", i, i);
                json_object_array_add(all, parse(text));
                json_object_array_add(again, parse(text));
        }
        intern_same(p, &all);
        intern_same(p, &again);
        for (size_t i = 0; i < 5000; i++)
                assert_ptr_equal(json_object_array_get_idx(again, i), json_object_array_get_idx(all, i));
        json_object_put(all);
        json_object_put(again);
        kb_json_pool_free(&p);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_looks_share),
                cmocka_unit_test(test_whole_value_replaced),
                cmocka_unit_test(test_unequal_apart),
                cmocka_unit_test(test_grows),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
