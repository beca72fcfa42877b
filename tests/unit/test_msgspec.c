/* test_msgspec.c: the messaging spec as data (src/protocol/msgspec.c): each kind of problem, the status
 * rules of replies, and the shapes ipykernel 6.17 and IRkernel 1.3.2 were measured sending. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include "protocol/msgspec.h"

typedef struct seen {
        char codes[512];
        char last_detail[320];
} seen;

static void collect(void *userdata, const char *code, const char *detail) {
        seen *s = userdata;
        size_t used = strlen(s->codes);
        snprintf(s->codes + used, sizeof(s->codes) - used, "%s%s", used ? " " : "", code);
        snprintf(s->last_detail, sizeof(s->last_detail), "%s", detail);
}

static json_object *obj(const char *text) {
        json_object *o = json_tokener_parse(text);
        assert_non_null(o);
        return o;
}

static json_object *good_header(void) {
        return obj("{\"msg_id\": \"a\", \"username\": \"u\", \"session\": \"s\", \"date\": \"2026-01-01T00:00:00Z\", "
                   "\"msg_type\": \"status\", \"version\": \"5.3\"}");
}

/* Checks content as msg_type with a good header; returns the problem codes. */
static size_t check(const char *msg_type, const char *content, seen *s) {
        memset(s, 0, sizeof(*s));
        json_object *h = good_header(), *c = content ? obj(content) : NULL;
        size_t n = kb_msgspec_check(msg_type, h, c, collect, s);
        json_object_put(h);
        json_object_put(c);
        return n;
}

static void test_header(void **state) {
        seen s = {0};
        json_object *h = obj("{\"msg_id\": \"a\", \"username\": 7, \"session\": \"s\", \"msg_type\": \"status\", "
                             "\"version\": \"5\"}");
        json_object *c = obj("{\"execution_state\": \"idle\"}");
        assert_int_equal(kb_msgspec_check("status", h, c, collect, &s), 3);
        assert_string_equal(s.codes, "header.username:type header.date:missing header.version:type");
        json_object_put(h);
        h = good_header();
        assert_int_equal(kb_msgspec_check("status", h, c, NULL, NULL), 0);
        /* A header that is not there at all misses every field. */
        assert_int_equal(kb_msgspec_check("status", NULL, c, NULL, NULL), 6);
        json_object_put(h);
        json_object_put(c);
}

static void test_content(void **state) {
        seen s;
        assert_int_equal(check("status", "{\"execution_state\": \"sleeping\"}", &s), 1);
        assert_string_equal(s.codes, "status.execution_state:value");
        assert_non_null(strstr(s.last_detail, "not one of busy|idle|starting"));
        assert_int_equal(check("stream", "{\"name\": \"stdout\", \"text\": \"x\"}", &s), 0);
        assert_int_equal(check("stream", "{\"name\": \"stdout\", \"text\": null}", &s), 1);
        assert_string_equal(s.codes, "stream.text:type");
        assert_non_null(strstr(s.last_detail, "is null, not a string"));
        /* Extra members are allowed. */
        assert_int_equal(check("clear_output", "{\"wait\": false, \"extra\": 1}", &s), 0);
        assert_int_equal(check("display_data", "{\"data\": {\"text/plain\": \"x\"}, \"metadata\": {}}", &s), 0);
        assert_int_equal(check("display_data", "{\"data\": {\"plain\": \"x\"}, \"metadata\": {}}", &s), 1);
        assert_string_equal(s.codes, "display_data.data:type");
        assert_int_equal(check("update_display_data", "{\"data\": {}, \"metadata\": {}}", &s), 1);
        assert_string_equal(s.codes, "update_display_data.transient:missing");
        assert_int_equal(check("execute_result", "{\"data\": {}, \"metadata\": {}, \"execution_count\": 1.5}", &s), 1);
        assert_string_equal(s.codes, "execute_result.execution_count:type");
        assert_int_equal(check("input_request", "{\"prompt\": \"> \", \"password\": 0}", &s), 1);
        assert_string_equal(s.codes, "input_request.password:type");
        /* An unknown type: only the header is checked. */
        assert_false(kb_msgspec_known("kbound_custom"));
        assert_int_equal(check("kbound_custom", "{\"anything\": []}", &s), 0);
}

static void test_reply_status(void **state) {
        seen s;
        assert_true(kb_msgspec_known("interrupt_reply"));
        /* ipykernel 6.17's interrupt_reply echoes the request's content: {} (measured). */
        assert_int_equal(check("interrupt_reply", "{}", &s), 1);
        assert_string_equal(s.codes, "interrupt_reply.status:missing");
        assert_int_equal(check("interrupt_reply", "{\"status\": \"ok\"}", &s), 0);
        assert_int_equal(check("execute_reply", "{\"status\": \"done\", \"execution_count\": 1}", &s), 1);
        assert_string_equal(s.codes, "execute_reply.status:value");
        /* ok: execution_count required; error: ename, evalue, traceback instead. */
        assert_int_equal(check("execute_reply", "{\"status\": \"ok\"}", &s), 1);
        assert_string_equal(s.codes, "execute_reply.execution_count:missing");
        assert_int_equal(check("execute_reply",
                               "{\"status\": \"error\", \"ename\": \"E\", \"evalue\": \"v\", "
                               "\"traceback\": [\"t\", 1]}",
                               &s),
                         1);
        assert_string_equal(s.codes, "execute_reply.traceback:type");
        assert_int_equal(check("execute_reply",
                               "{\"status\": \"error\", \"ename\": \"E\", \"evalue\": \"v\", "
                               "\"traceback\": []}",
                               &s),
                         0);
        /* abort: nothing else is asked (IRkernel's interrupted cell, measured, adds execution_count). */
        assert_int_equal(check("execute_reply", "{\"status\": \"abort\", \"execution_count\": 4}", &s), 0);
        /* is_complete_reply's status has its own values. */
        assert_int_equal(check("is_complete_reply", "{\"status\": \"incomplete\", \"indent\": \"  \"}", &s), 0);
        assert_int_equal(check("is_complete_reply", "{\"status\": \"ok\"}", &s), 1);
        assert_string_equal(s.codes, "is_complete_reply.status:value");
        /* debug_reply carries a DAP response, not a status. */
        assert_int_equal(
                check("debug_reply", "{\"type\": \"response\", \"success\": true, \"command\": \"initialize\"}", &s),
                0);
}

/* What IRkernel 1.3.2 was measured sending: comm_info_reply nests its comms under content.comms,
 * and a comm_close for an unknown target carries "data": [] (jsonlite's empty list). */
static void test_irkernel_shapes(void **state) {
        seen s;
        assert_int_equal(check("comm_info_reply", "{\"content\": {\"comms\": []}, \"status\": \"ok\"}", &s), 1);
        assert_string_equal(s.codes, "comm_info_reply.comms:missing");
        assert_int_equal(check("comm_close",
                               "{\"metadata\": [], \"comm_id\": \"c\", \"target_name\": \"t\", "
                               "\"data\": []}",
                               &s),
                         1);
        assert_string_equal(s.codes, "comm_close.data:type");
        assert_non_null(strstr(s.last_detail, "comm_close: content 'data' is array, not an object"));
}

/* Every row names a type and a known kind; a "*reply" or "header" row always names a field. */
static void test_table(void **state) {
        size_t n = 0;
        const kb_msgspec_field *f = kb_msgspec_fields(&n);
        assert_true(n > 40);
        for (size_t i = 0; i < n; i++) {
                assert_non_null(f[i].msg_type);
                assert_true(f[i].kind <= KB_MS_VERSION);
                if (strcmp(f[i].msg_type, "header") == 0 || strcmp(f[i].msg_type, "*reply") == 0)
                        assert_non_null(f[i].field);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_header),       cmocka_unit_test(test_content),
                cmocka_unit_test(test_reply_status), cmocka_unit_test(test_irkernel_shapes),
                cmocka_unit_test(test_table),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
