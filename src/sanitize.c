/* sanitize.c: untrusted text made safe for a terminal, a report line or XML: one UTF-8 walker. */
/* Trust boundary: everything written through here may come from a kernel. Text is decoded to
 * code points first and each is judged alone, so removing one thing can never join its
 * neighbours into another (a lone 0xC2 before a dropped control and a following 0x85 would
 * otherwise make U+0085, a C1 control). */
#include "kbound/sanitize.h"
#include <stdbool.h>
#include <stdint.h>

#define ESC 0x1b
#define BEL 0x07

/* Decodes one UTF-8 character at s (len > 0 bytes available). Returns its length and the code
 * point, or 0 for an invalid sequence (overlong, surrogate, past U+10FFFF, truncated). */
static size_t utf8_decode(const unsigned char *s, size_t len, uint32_t *ret_cp) {
        uint32_t cp;
        size_t n;
        if (s[0] < 0x80) {
                *ret_cp = s[0];
                return 1;
        }
        if (s[0] >= 0xC2 && s[0] <= 0xDF) {
                n = 2;
                cp = s[0] & 0x1F;
        } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
                n = 3;
                cp = s[0] & 0x0F;
        } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
                n = 4;
                cp = s[0] & 0x07;
        } else
                return 0;
        if (len < n)
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xC0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3F);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
                return 0;
        *ret_cp = cp;
        return n;
}

/* The length of the escape sequence starting with the ESC at s[0] (len bytes available), as a
 * terminal would read it: CSI is parameter and intermediate bytes then one final byte; OSC, DCS,
 * APC and PM are a string up to BEL or ESC \; anything else is ESC and one byte. A sequence that
 * is not well formed counts as its introducer alone (ESC and the byte after it): with the ESC gone
 * a terminal acts on none of the rest, and the rest stays visible. */
static size_t escape_length(const unsigned char *s, size_t len) {
        if (len < 2)
                return 1;
        if (s[1] == '[') {
                size_t q = 2;
                while (q < len && s[q] >= 0x20 && s[q] <= 0x3f)
                        q++;
                return q < len && s[q] >= 0x40 && s[q] <= 0x7e ? q + 1 : 2;
        }
        if (s[1] == ']' || s[1] == 'P' || s[1] == '_' || s[1] == '^') {
                for (size_t q = 2; q < len; q++) {
                        if (s[q] == BEL)
                                return q + 1;
                        if (s[q] == ESC && q + 1 < len && s[q + 1] == '\\')
                                return q + 2;
                }
                return 2;
        }
        return 2;
}

static bool is_control(uint32_t cp) {
        return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F);
}

/* Writes one decoded character (its n source bytes at s) for an XML mode. */
static void put_xml(FILE *out, const unsigned char *s, size_t n, uint32_t cp, kb_sanitize_mode mode) {
        switch (cp) {
        case '&':
                fputs("&amp;", out);
                return;
        case '<':
                fputs("&lt;", out);
                return;
        case '>':
                fputs("&gt;", out);
                return;
        case '"':
                fputs("&quot;", out);
                return;
        case '\'':
                fputs("&apos;", out);
                return;
        case '\t':
        case '\n':
        case '\r':
                if (mode == KB_SANITIZE_XML_ATTR)
                        fprintf(out, "&#%u;", (unsigned) cp);
                else
                        fputc((int) cp, out);
                return;
        default:
                /* Not an XML 1.0 Char: stripped (C0 controls, surrogates cannot be decoded). */
                if (cp < 0x20 || cp == 0xFFFE || cp == 0xFFFF)
                        return;
                fwrite(s, 1, n, out);
        }
}

void kb_sanitize_put(FILE *out, const char *text, size_t len, size_t max, kb_sanitize_mode mode) {
        const unsigned char *s = (const unsigned char *) text;
        size_t pos = 0;

        while (pos < len) {
                if (s[pos] == ESC && mode == KB_SANITIZE_TERMINAL) {
                        size_t n = escape_length(s + pos, len - pos);
                        if (n > max - pos)
                                break;
                        pos += n;
                        continue;
                }
                uint32_t cp = 0;
                size_t n = utf8_decode(s + pos, len - pos, &cp);
                if ((n ? n : 1) > max - pos)
                        break;
                if (n == 0) {
                        fputc('?', out);
                        pos++;
                        continue;
                }
                switch (mode) {
                case KB_SANITIZE_TERMINAL:
                        if (cp == 0)
                                fputs("\xe2\x90\x80", out); /* U+2400: a NUL shown, not hiding what follows */
                        else if (cp == '\n' || cp == '\t' || !is_control(cp))
                                fwrite(s + pos, 1, n, out);
                        break;
                case KB_SANITIZE_LINE:
                        if (cp == '\t' || cp == '\n' || cp == '\r')
                                fputc(' ', out);
                        else if (is_control(cp))
                                fputc('?', out);
                        else
                                fwrite(s + pos, 1, n, out);
                        break;
                case KB_SANITIZE_XML_TEXT:
                case KB_SANITIZE_XML_ATTR:
                        put_xml(out, s + pos, n, cp, mode);
                        break;
                }
                pos += n;
        }
        if (pos < len)
                fputs("...", out);
}
