/* test_redact.c: the redaction primitive: whole secrets, token fragments of at least
 * KB_SECRET_FRAGMENT_MIN bytes in any letter case, overlaps, boundaries, embedded NULs, and no
 * masking of ordinary text or of short coincidences. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kbound/sandbox.h"
#include "kbound/secrets.h"

#define KEY "3f9c1a7be2d64c0598a1f0e7c3b24d6a9e8f7061b5c4d3e2f1a0b9c8d7e6f5a4"
#define KEY_UPPER "3F9C1A7BE2D64C0598A1F0E7C3B24D6A9E8F7061B5C4D3E2F1A0B9C8D7E6F5A4"
#define CANARY "0d1e2f3a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a"
#define ENV_VALUE "/usr/share/jupyter:/opt/private-token-path"
#define MARK "[redacted:connection-key]"

static kb_secrets *make(void) {
        kb_secrets *s = NULL;
        assert_int_equal(kb_secrets_new(&s), 0);
        assert_int_equal(kb_secrets_add_token(s, "connection-key", KEY), 0);
        assert_int_equal(kb_secrets_add_token(s, "canary:x", CANARY), 0);
        assert_int_equal(kb_secrets_add(s, "env:JP", ENV_VALUE), 0);
        return s;
}

/* Redacts text and compares with want. */
static void expect(const kb_secrets *s, const char *text, const char *want) {
        size_t len = 0;
        char *out = kb_secrets_redact_text(s, text, strlen(text), &len);
        assert_non_null(out);
        assert_string_equal(out, want);
        assert_int_equal(len, strlen(want));
        free(out);
}

static void test_whole_and_case(void **state) {
        kb_secrets *s = make();
        expect(s, "key " KEY " end", "key " MARK " end");
        expect(s, KEY, MARK);
        expect(s, KEY_UPPER, MARK);
        expect(s, "x" KEY KEY "y", "x" MARK "y"); /* adjacent copies: one marker */
        expect(s, "canary " CANARY, "canary [redacted:canary:x]");
        expect(s, "path " ENV_VALUE "!", "path [redacted:env:JP]!");
        kb_secrets_destroy(&s);
}

static void test_fragments(void **state) {
        kb_secrets *s = make();
        /* Halves (as two stream messages), a cut tail, a middle piece, mixed case. */
        expect(s, "first 3f9c1a7be2d64c0598a1f0e7c3b24d6a.", "first " MARK ".");
        expect(s, "9e8f7061b5c4d3e2f1a0b9c8d7e6f5a4\n", MARK "\n");
        expect(s, "...A0B9C8D7E6F5A4", "..." MARK);
        expect(s, "mid E2D64c0598A1 mid", "mid " MARK " mid");
        /* Exactly KB_SECRET_FRAGMENT_MIN bytes is masked; one fewer is not. */
        expect(s, "<3f9c1a7be2d6>", "<" MARK ">");
        expect(s, "<3f9c1a7be2d>", "<3f9c1a7be2d>");
        /* A fragment followed by different hex: only the matching stretch goes. */
        expect(s, "3f9c1a7be2d6ffff", MARK "ffff");
        /* Overlapping fragments of two tokens become one marker. */
        char both[256];
        snprintf(both, sizeof(both), "[%.20s%.20s]", &KEY[44], CANARY);
        expect(s, both, "[" MARK "]");
        /* Environment values are whole-match only: a fragment of a path is ordinary text. */
        expect(s, "/usr/share/jupyter/kernels/python3", "/usr/share/jupyter/kernels/python3");
        kb_secrets_destroy(&s);
}

static void test_no_false_masking(void **state) {
        kb_secrets *s = make();
        const char *ordinary[] = {
                "the kernel exited with status 3; its log ends: Traceback (most recent call last)",
                "deadbeefcafe0123456789abcdef", /* hex, but not from any token */
                "3f9c1a7be2d  64c0598a1f0",     /* pieces shorter than a fragment */
                "",
                "kbound-escape-0123456789abcdef",
        };
        for (size_t i = 0; i < sizeof(ordinary) / sizeof(ordinary[0]); i++)
                expect(s, ordinary[i], ordinary[i]);
        /* Unchanged JSON comes back as the same object. */
        json_object *o = json_tokener_parse("{\"a\": [\"plain text\", 1, {\"b\": \"more\"}]}");
        json_object *r = kb_secrets_redact(s, o);
        assert_ptr_equal(r, o);
        json_object_put(r);
        json_object_put(o);
        kb_secrets_destroy(&s);
}

static void test_embedded_nul_and_json(void **state) {
        kb_secrets *s = make();
        char text[200];
        size_t n = (size_t) snprintf(text, sizeof(text), "a%cb %s", '\0', "3F9C1A7BE2D64C05");
        size_t len = 0;
        char *out = kb_secrets_redact_text(s, text, n, &len);
        assert_non_null(out);
        assert_int_equal(len, 4 + strlen(MARK));
        assert_memory_equal(out, "a\0b " MARK, len);
        free(out);

        /* Keys and values, nested: every string is redacted, nothing else changes. */
        json_object *o = json_tokener_parse("{\"" KEY "\": {\"impl\": \"" KEY_UPPER "\", \"n\": 7},"
                                            " \"list\": [\"x 3f9c1a7be2d64c0598 y\"]}");
        assert_non_null(o);
        json_object *r = kb_secrets_redact(s, o);
        assert_non_null(r);
        assert_ptr_not_equal(r, o);
        const char *js = json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN);
        assert_null(strcasestr(js, "3f9c1a7be2d6"));
        assert_non_null(strstr(js, "{\"" MARK "\":{\"impl\":\"" MARK "\",\"n\":7}"));
        assert_non_null(strstr(js, "\"x " MARK " y\""));
        json_object_put(r);
        json_object_put(o);
        kb_secrets_destroy(&s);
}

static void test_short_token_and_env_tokens(void **state) {
        kb_secrets *s = NULL;
        assert_int_equal(kb_secrets_new(&s), 0);
        /* Shorter than a fragment: whole match only. */
        assert_int_equal(kb_secrets_add_token(s, "short", "abcdef0123"), 0);
        expect(s, "x abcdef0123 y abcdef012", "x [redacted:short] y abcdef012");
        /* A long hex environment value is treated as a token. */
        char *env[] = {"KBOUND_TEST_TOKEN=" CANARY, NULL};
        assert_int_equal(kb_secrets_add_env(s, env, kb_sandbox_env_allowed, NULL, NULL), 0);
        expect(s,
               "half "
               "0d1e2f3a4b5c6d7e8f90",
               "half [redacted:env:KBOUND_TEST_TOKEN]");
        kb_secrets_destroy(&s);
}

/* Whole-value secrets that occur overlapping: every occurrence goes, not only the ones a search
 * resuming after the previous match finds (found by fuzz_redact: "aba" in "ababa" left "ba"). */
static void test_overlapping_whole_matches(void **state) {
        kb_secrets *s = NULL;
        assert_int_equal(kb_secrets_new(&s), 0);
        assert_int_equal(kb_secrets_add(s, "env:A", "abab-secret-abab"), 0);
        expect(s, "x abab-secret-abab-secret-abab y", "x [redacted:env:A] y");
        assert_int_equal(kb_secrets_add_token(s, "short", "\x01\x01\x01"), 0);
        expect(s,
               "\x01\x01\x01\x01\x01"
               "22",
               "[redacted:short]22");
        kb_secrets_destroy(&s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_whole_and_case),
                cmocka_unit_test(test_fragments),
                cmocka_unit_test(test_no_false_masking),
                cmocka_unit_test(test_embedded_nul_and_json),
                cmocka_unit_test(test_short_token_and_env_tokens),
                cmocka_unit_test(test_overlapping_whole_matches),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
