/* fuzz_sanitize.c: libFuzzer target for kb_sanitize_put: hostile text in every mode, and what
 * must never come out of it. */
#include "kbound/sanitize.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Input layout (tests/fuzz/seeds/sanitize holds examples):
 *   byte 0   bits 0-1: the mode (KB_SANITIZE_TERMINAL, _LINE, _XML_TEXT, _XML_ATTR);
 *            bit 2: a byte ceiling follows in byte 1 (0..255), else no ceiling
 *   then the text, NUL bytes and all. */
#define FLAG_MAX 0x04

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Decodes one character of s (len > 0) by Unicode's table of well-formed sequences (Table 3-7),
 * written independently of sanitize.c. Returns its length, 0 if ill-formed. */
static size_t well_formed(const unsigned char *s, size_t len, uint32_t *ret_cp) {
        unsigned char b0 = s[0];
        size_t n;
        unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
        if (b0 <= 0x7F) {
                *ret_cp = b0;
                return 1;
        } else if (b0 >= 0xC2 && b0 <= 0xDF)
                n = 2;
        else if (b0 >= 0xE0 && b0 <= 0xEF) {
                n = 3;
                if (b0 == 0xE0)
                        lo = 0xA0;
                if (b0 == 0xED)
                        hi = 0x9F;
        } else if (b0 >= 0xF0 && b0 <= 0xF4) {
                n = 4;
                if (b0 == 0xF0)
                        lo = 0x90;
                if (b0 == 0xF4)
                        hi = 0x8F;
        } else
                return 0;
        if (len < n || s[1] < lo || s[1] > hi)
                return 0;
        for (size_t i = 2; i < n; i++)
                if (s[i] < 0x80 || s[i] > 0xBF)
                        return 0;
        uint32_t cp = b0 & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
        for (size_t i = 1; i < n; i++)
                cp = (cp << 6) | (s[i] & 0x3F);
        *ret_cp = cp;
        return n;
}

static bool is_c0_or_c1(uint32_t cp) {
        return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F);
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
                bool keep = !is_c0_or_c1(cp) || (mode == KB_SANITIZE_TERMINAL && (cp == '\n' || cp == '\t'));
                if (!keep)
                        return false;
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
                        if (is_c0_or_c1(cp) && cp != '\n' && cp != '\t')
                                fail("a control character", mode, pos);
                        break;
                case KB_SANITIZE_LINE:
                        if (is_c0_or_c1(cp))
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;
        kb_sanitize_mode mode = (kb_sanitize_mode) (data[0] & 3);
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
        size_t factor = mode == KB_SANITIZE_LINE ? 1 : mode == KB_SANITIZE_TERMINAL ? 3 : 6;
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
