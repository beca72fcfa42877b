/* test_sanitize.c: untrusted text for a terminal, a report line and XML: what each mode removes,
 * escapes or keeps, invalid UTF-8, the byte ceiling, and removals that must not join neighbours. */
/* cmocka needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "kbound/sanitize.h"
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* text[0..len) through kb_sanitize_put, as a malloc'd NUL-terminated string. */
static char *put(const char *text, size_t len, size_t max, kb_sanitize_mode mode) {
        char *out = NULL;
        size_t out_len = 0;
        FILE *f = open_memstream(&out, &out_len);
        assert_non_null(f);
        kb_sanitize_put(f, text, len, max, mode);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(strlen(out), out_len);
        return out;
}

static void expect_len(const char *text, size_t len, size_t max, kb_sanitize_mode mode, const char *want) {
        char *got = put(text, len, max, mode);
        assert_string_equal(got, want);
        free(got);
}

static void expect(const char *text, kb_sanitize_mode mode, const char *want) {
        expect_len(text, strlen(text), SIZE_MAX, mode, want);
}

static void test_clean_text_unchanged(void **state) {
        static const char clean[] = "plain ASCII, caf\xc3\xa9, \xe2\x82\xac 5, \xf0\x9f\x99\x82 [31m ?";
        expect(clean, KB_SANITIZE_TERMINAL, clean);
        expect(clean, KB_SANITIZE_LINE, clean);
        expect(clean, KB_SANITIZE_XML_TEXT, clean);
        expect(clean, KB_SANITIZE_XML_ATTR, clean);
        expect("two\nlines\tand a tab", KB_SANITIZE_TERMINAL, "two\nlines\tand a tab");
}

static void test_terminal_escape_sequences(void **state) {
        /* Well formed: dropped whole. */
        expect("\x1b[31mred\x1b[0m", KB_SANITIZE_TERMINAL, "red");
        expect("a\x1b[2J\x1b[?1049hb", KB_SANITIZE_TERMINAL, "ab");
        expect("\x1b]0;PWNED\x07title", KB_SANITIZE_TERMINAL, "title");
        expect("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", KB_SANITIZE_TERMINAL, "link");
        expect("\x1bPq#0;2;0;0;0\x1b\\dcs", KB_SANITIZE_TERMINAL, "dcs");
        expect("\x1b"
               "cx",
               KB_SANITIZE_TERMINAL, "x"); /* ESC c: a full reset */
        /* Unterminated: only the introducer goes, the rest is shown (nothing hides behind it). */
        expect("seen\x1b]0;unterminated then-the-rest", KB_SANITIZE_TERMINAL, "seen0;unterminated then-the-rest");
        expect("csi\x1b[12;3", KB_SANITIZE_TERMINAL, "csi12;3");
        expect("end\x1b", KB_SANITIZE_TERMINAL, "end");
        /* A CSI with a control byte inside is not well formed: the byte is dropped on its own. */
        expect("\x1b[1\x07m", KB_SANITIZE_TERMINAL, "1m");
}

static void test_terminal_controls(void **state) {
        expect("a\x07\x08\x0d\x7f"
               "b",
               KB_SANITIZE_TERMINAL, "ab");
        expect("c1:\xc2\x9b"
               "31m\xc2\x85.",
               KB_SANITIZE_TERMINAL, "c1:31m.");
        expect_len("out\0put", 7, SIZE_MAX, KB_SANITIZE_TERMINAL, "out\xe2\x90\x80put");
        /* A raw C1 byte is not UTF-8: shown as '?', never passed on for an 8-bit terminal to read
         * as CSI. */
        expect("x\x9b"
               "31my",
               KB_SANITIZE_TERMINAL, "x?31my");
        /* Dropping a control must not join its neighbours into U+0085 (C2 85). */
        expect("\xc2\x07\x85", KB_SANITIZE_TERMINAL, "??");
        expect("\xc2\x1b[m\x85", KB_SANITIZE_TERMINAL, "??");
}

static void test_line(void **state) {
        expect("IRkernel ignores\ninterrupt_request \x1b[31m", KB_SANITIZE_LINE,
               "IRkernel ignores interrupt_request ?[31m");
        expect("a\tb\rc\x07\x7f\xc2\x85", KB_SANITIZE_LINE, "a b c???");
        expect_len("nul\0x", 5, SIZE_MAX, KB_SANITIZE_LINE, "nul?x");
}

static void test_xml(void **state) {
        expect("<a href=\"x\">&'</a>", KB_SANITIZE_XML_TEXT, "&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;");
        expect("l1\nl2\tx\r", KB_SANITIZE_XML_TEXT, "l1\nl2\tx\r");
        expect("l1\nl2\tx\r", KB_SANITIZE_XML_ATTR, "l1&#10;l2&#9;x&#13;");
        /* Characters XML 1.0 forbids are stripped; C1 controls are XML characters, kept. */
        expect("a\x01\x1b[0m\xef\xbf\xbe\xef\xbf\xbf"
               "b",
               KB_SANITIZE_XML_TEXT, "a[0mb");
        expect("\xed\xa0\x80", KB_SANITIZE_XML_TEXT, "???"); /* a surrogate is not UTF-8 */
}

static void test_invalid_utf8(void **state) {
        static const char *bad[] = {"\xc0\xaf", "\xe0\x80\xaf", "\xf4\x90\x80\x80", "\xf8\x88\x80\x80\x80", "\xc3"};
        for (size_t i = 0; i < KB_ELEMENTSOF(bad); i++) {
                char want[8] = "";
                memset(want, '?', strlen(bad[i]));
                for (int mode = KB_SANITIZE_TERMINAL; mode <= KB_SANITIZE_XML_ATTR; mode++)
                        expect(bad[i], (kb_sanitize_mode) mode, want);
        }
}

/* A message line: what a terminal acts on is gone as on a terminal, and a newline or carriage
 * return it quotes is shown as "\\n" or "\\r": it cannot start a line of its own. */
static void test_message(void **state) {
        expect("raised x\nPASS forged\rPASS \x1b]0;PWNED\x07\x1b[2Jend\ttab", KB_SANITIZE_MESSAGE,
               "raised x\\nPASS forged\\rPASS end\ttab");
        expect_len("nul\0x", 5, SIZE_MAX, KB_SANITIZE_MESSAGE, "nul\xe2\x90\x80x");
}

/* Bidi overrides and isolates and the line separators reorder or break what is shown: dropped on
 * a terminal and in a message, '?' on a report line. */
static void test_format_characters(void **state) {
        static const char bidi[] = "a\u202eevil\u2066x\u2069\u2028b\u200f\u061cc";
        expect(bidi, KB_SANITIZE_TERMINAL, "aevilxbc");
        expect(bidi, KB_SANITIZE_MESSAGE, "aevilxbc");
        expect(bidi, KB_SANITIZE_LINE, "a?evil?x??b??c");
        assert_true(kb_sanitize_is_format(0x202E));
        assert_false(kb_sanitize_is_format(0x202F)); /* a narrow no-break space: text */
}

/* A report tree quoting raw bytes: every string and key becomes UTF-8, each bad byte U+FFFD, and
 * the well-formed ones are left as they were. */
static void test_json_utf8(void **state) {
        json_object *root = json_object_new_object(), *list = json_object_new_array();
        json_object_object_add(root, "log", json_object_new_string_len("a\xff\xc3(b\0c", 7));
        json_object_object_add(root, "fine", json_object_new_string("caf\xc3\xa9"));
        json_object_array_add(list, json_object_new_string("\xed\xa0\x80"));
        json_object_object_add(root, "list", list);
        json_object_object_add(root, "k\xfe", json_object_new_int(7));
        assert_int_equal(kb_sanitize_json_utf8(root), 3);
        json_object *v = json_object_object_get(root, "log");
        assert_int_equal(json_object_get_string_len(v), 11);
        assert_memory_equal(json_object_get_string(v), "a\xef\xbf\xbd\xef\xbf\xbd(b\0c", 11);
        assert_string_equal(json_object_get_string(json_object_object_get(root, "fine")), "caf\xc3\xa9");
        assert_string_equal(json_object_get_string(json_object_array_get_idx(list, 0)),
                            "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
        assert_int_equal(json_object_get_int(json_object_object_get(root, "k\xef\xbf\xbd")), 7);
        assert_null(json_object_object_get(root, "k\xfe"));
        assert_true(kb_utf8_valid(json_object_to_json_string(root), strlen(json_object_to_json_string(root))));
        assert_int_equal(kb_sanitize_json_utf8(root), 0);
        json_object_put(root);
}

static void test_max(void **state) {
        expect_len("abcdef", 6, 6, KB_SANITIZE_LINE, "abcdef");
        expect_len("abcdef", 6, 3, KB_SANITIZE_LINE, "abc...");
        expect_len("abcdef", 6, 0, KB_SANITIZE_XML_TEXT, "...");
        /* Never part of a character: "é" is two bytes. */
        expect_len("ab\xc3\xa9"
                   "c",
                   5, 3, KB_SANITIZE_TERMINAL, "ab...");
        expect_len("ab\xc3\xa9"
                   "c",
                   5, 4, KB_SANITIZE_TERMINAL, "ab\xc3\xa9...");
        /* Nor part of an escape sequence. */
        expect_len("ab\x1b[31mc", 8, 5, KB_SANITIZE_TERMINAL, "ab...");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_clean_text_unchanged),
                cmocka_unit_test(test_terminal_escape_sequences),
                cmocka_unit_test(test_terminal_controls),
                cmocka_unit_test(test_line),
                cmocka_unit_test(test_xml),
                cmocka_unit_test(test_invalid_utf8),
                cmocka_unit_test(test_max),
                cmocka_unit_test(test_message),
                cmocka_unit_test(test_format_characters),
                cmocka_unit_test(test_json_utf8),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
