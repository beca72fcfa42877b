/* fuzz_sanitize.c: libFuzzer target for kb_sanitize_put (hostile text in every mode, and what
 * must never come out of it) and kb_sanitize_json_utf8 (a report quoting raw bytes). */
#include "kbound/sanitize.h"
#include "fuzz_text.h"
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Input layout (tests/fuzz/seeds/sanitize holds examples):
 *   byte 0   bits 0-2: the mode (KB_SANITIZE_TERMINAL, _LINE, _XML_TEXT, _XML_ATTR, _MESSAGE),
 *            or 5..7: the text as a string and a key of a JSON report, through
 *            kb_sanitize_json_utf8;
 *            bit 3: a byte ceiling follows in byte 1 (0..255), else no ceiling
 *   then the text, NUL bytes and all. */
#define MODE_BITS 0x07
#define MODE_JSON 5
#define FLAG_MAX 0x08

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool is_terminal_mode(kb_sanitize_mode mode) {
        return mode == KB_SANITIZE_TERMINAL || mode == KB_SANITIZE_MESSAGE;
}

/* Whether the input is text every mode must pass through unchanged: well-formed UTF-8 without
 * any control character (the terminal keeps newline and tab too) and, for XML, no character it
 * escapes or strips. */
static bool plain(const unsigned char *s, size_t len, kb_sanitize_mode mode) {
        for (size_t pos = 0; pos < len;) {
                uint32_t cp;
                size_t n = well_formed(s + pos, len - pos, &cp);
                if (n == 0)
                        return false;
                bool keep = !is_c0_or_c1(cp) || (mode == KB_SANITIZE_TERMINAL && (cp == '\n' || cp == '\t')) ||
                            (mode == KB_SANITIZE_MESSAGE && cp == '\t');
                if (!keep || ((is_terminal_mode(mode) || mode == KB_SANITIZE_LINE) && is_format(cp)))
                        return false;
                if (mode == KB_SANITIZE_MESSAGE && cp == '\\')
                        return false; /* "\\n" in the text could not be told from a shown newline */
                if ((mode == KB_SANITIZE_XML_TEXT || mode == KB_SANITIZE_XML_ATTR) &&
                    (strchr("&<>\"'", (int) cp) || cp == 0xFFFE || cp == 0xFFFF))
                        return false;
                pos += n;
        }
        return true;
}

static const char *const xml_references[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#9;", "&#10;", "&#13;"};

static void fail(const char *what, kb_sanitize_mode mode, size_t at) {
        fprintf(stderr, "mode %d: %s at output byte %zu\n", (int) mode, what, at);
        abort();
}

static void check_output(const unsigned char *out, size_t out_len, kb_sanitize_mode mode) {
        for (size_t pos = 0; pos < out_len;) {
                uint32_t cp;
                size_t n = well_formed(out + pos, out_len - pos, &cp);
                if (n == 0)
                        fail("ill-formed UTF-8", mode, pos);
                switch (mode) {
                case KB_SANITIZE_TERMINAL:
                        /* Nothing a terminal acts on: no ESC, no C0 but newline and tab, no DEL,
                         * no C1 (as UTF-8 or as a raw byte: a raw byte is ill-formed, above). */
                        if ((is_c0_or_c1(cp) && cp != '\n' && cp != '\t') || is_format(cp))
                                fail("a control character", mode, pos);
                        break;
                case KB_SANITIZE_MESSAGE:
                        /* As on a terminal, and no line break: the message stays one line. */
                        if ((is_c0_or_c1(cp) && cp != '\t') || is_format(cp))
                                fail("a control character or line break in a message", mode, pos);
                        break;
                case KB_SANITIZE_LINE:
                        if (is_c0_or_c1(cp) || is_format(cp))
                                fail("a control character or line break", mode, pos);
                        break;
                case KB_SANITIZE_XML_TEXT:
                case KB_SANITIZE_XML_ATTR:
                        if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xFFFE || cp == 0xFFFF)
                                fail("a character XML 1.0 forbids", mode, pos);
                        if (mode == KB_SANITIZE_XML_ATTR && (cp == '\t' || cp == '\n' || cp == '\r'))
                                fail("a raw tab or line break in an attribute", mode, pos);
                        if (cp == '<' || cp == '>' || cp == '"' || cp == '\'')
                                fail("an unescaped XML special", mode, pos);
                        if (cp == '&') {
                                bool known = false;
                                for (size_t i = 0; i < sizeof(xml_references) / sizeof(xml_references[0]); i++) {
                                        size_t rl = strlen(xml_references[i]);
                                        known |= out_len - pos >= rl && memcmp(out + pos, xml_references[i], rl) == 0;
                                }
                                if (!known)
                                        fail("an '&' that starts no reference", mode, pos);
                        }
                        break;
                }
                pos += n;
        }
}

/* The text as a value and as a key of two objects in an array: after kb_sanitize_json_utf8, every
 * string is well-formed UTF-8, the whole serializes to text json-c parses back strictly, and
 * well-formed text came through unchanged. */
static void check_json(const unsigned char *text, size_t len) {
        if (len > INT32_MAX)
                return;
        char key[256];
        size_t klen = len < sizeof key - 1 ? len : sizeof key - 1;
        /* Cut on a character boundary, or well-formed text would make an ill-formed key. */
        while (klen < len && klen > 0 && (text[klen] & 0xC0) == 0x80)
                klen--;
        memcpy(key, text, klen);
        key[klen] = '\0'; /* a key is a C string: up to the first NUL */
        /* The key in an object of its own: text that is "value" must not replace the value. */
        json_object *root = json_object_new_array(), *o = json_object_new_object(), *keyed = json_object_new_object();
        json_object *v = json_object_new_string_len((const char *) text, (int) len);
        if (!root || !o || !keyed || !v || json_object_array_add(root, o) < 0 ||
            json_object_array_add(root, keyed) < 0 || json_object_object_add(o, "value", v) < 0 ||
            json_object_object_add(keyed, key, json_object_new_int(1)) < 0)
                abort();
        int changed = kb_sanitize_json_utf8(root);
        if (changed < 0)
                abort();
        bool valid = true;
        for (size_t pos = 0; pos < len;) {
                uint32_t cp;
                size_t n = well_formed(text + pos, len - pos, &cp);
                if (n == 0) {
                        valid = false;
                        break;
                }
                pos += n;
        }
        if (valid && changed != 0)
                fail("well-formed text changed", MODE_JSON, 0);
        if (!valid && changed == 0)
                fail("ill-formed text left as it was", MODE_JSON, 0);
        json_object *value = json_object_object_get(o, "value");
        if (valid && ((size_t) json_object_get_string_len(value) != len ||
                      memcmp(json_object_get_string(value), text, len) != 0))
                fail("well-formed value changed", MODE_JSON, 0);
        const char *out = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
        if (!out)
                abort();
        size_t out_len = strlen(out);
        for (size_t pos = 0; pos < out_len;) {
                uint32_t cp;
                size_t n = well_formed((const unsigned char *) out + pos, out_len - pos, &cp);
                if (n == 0)
                        fail("a report that is not UTF-8", MODE_JSON, pos);
                pos += n;
        }
        struct json_tokener *tok = json_tokener_new();
        if (!tok)
                abort();
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        json_object *back = json_tokener_parse_ex(tok, out, (int) out_len);
        if (!back)
                fail("a report a strict parser refuses", MODE_JSON, 0);
        json_object_put(back);
        json_tokener_free(tok);
        json_object_put(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;
        if ((data[0] & MODE_BITS) >= MODE_JSON) {
                check_json(data + 1, size - 1);
                return 0;
        }
        kb_sanitize_mode mode = (kb_sanitize_mode) (data[0] & MODE_BITS);
        size_t max = SIZE_MAX, skip = 1;
        if (data[0] & FLAG_MAX) {
                if (size < 2)
                        return 0;
                max = data[1];
                skip = 2;
        }
        const unsigned char *text = data + skip;
        size_t len = size - skip;

        char *out = NULL;
        size_t out_len = 0;
        FILE *f = open_memstream(&out, &out_len);
        if (!f)
                abort();
        kb_sanitize_put(f, (const char *) text, len, max, mode);
        if (fclose(f) != 0)
                abort();

        check_output((const unsigned char *) out, out_len, mode);
        /* Bounded: at most 6 bytes for each byte of text read ("&quot;"), 3 for a NUL on a terminal,
         * 1 on a report line; no more text read than the ceiling; "..." when cut. */
        size_t factor = mode == KB_SANITIZE_LINE ? 1 : is_terminal_mode(mode) ? 3 : 6;
        size_t read = len < max ? len : max;
        if (out_len > factor * read + 3)
                fail("output out of bounds", mode, out_len);
        /* Plain text in, the same text out (a ceiling may cut it: then a prefix of it and "..."). */
        if (plain(text, len, mode)) {
                if (max >= len && (out_len != len || memcmp(out, text, len) != 0))
                        fail("plain text changed", mode, 0);
                if (max < len && (out_len < 3 || out_len - 3 > max || memcmp(out, text, out_len - 3) != 0 ||
                                  memcmp(out + out_len - 3, "...", 3) != 0))
                        fail("plain text cut wrongly", mode, 0);
        }
        free(out);
        return 0;
}
