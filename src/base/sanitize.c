/* sanitize.c: untrusted text made safe for a terminal, a report line or XML: one UTF-8 walker. */
/* Trust boundary: everything written through here may come from a kernel. Text is decoded to
 * code points first and each is judged alone, so removing one thing can never join its
 * neighbours into another (a lone 0xC2 before a dropped control and a following 0x85 would
 * otherwise make U+0085, a C1 control). */
#include "kbound/sanitize.h"
#include "base/utf8.h"
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ESC 0x1b
#define BEL 0x07

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

bool kb_sanitize_is_format(uint32_t cp) {
        return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
               (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
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
                if (s[pos] == ESC && (mode == KB_SANITIZE_TERMINAL || mode == KB_SANITIZE_MESSAGE)) {
                        size_t n = escape_length(s + pos, len - pos);
                        if (n > max - pos)
                                break;
                        pos += n;
                        continue;
                }
                uint32_t cp = 0;
                size_t n = kb_utf8_decode(s + pos, len - pos, &cp);
                if ((n ? n : 1) > max - pos)
                        break;
                if (n == 0) {
                        fputc('?', out);
                        pos++;
                        continue;
                }
                switch (mode) {
                case KB_SANITIZE_TERMINAL:
                case KB_SANITIZE_MESSAGE:
                        if (cp == 0)
                                fputs("\xe2\x90\x80", out); /* U+2400: a NUL shown, not hiding what follows */
                        else if (mode == KB_SANITIZE_MESSAGE && (cp == '\n' || cp == '\r'))
                                fputs(cp == '\n' ? "\\n" : "\\r", out);
                        else if (cp == '\n' || cp == '\t' || (!is_control(cp) && !kb_sanitize_is_format(cp)))
                                fwrite(s + pos, 1, n, out);
                        break;
                case KB_SANITIZE_LINE:
                        if (cp == '\t' || cp == '\n' || cp == '\r')
                                fputc(' ', out);
                        else if (is_control(cp) || kb_sanitize_is_format(cp))
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

bool kb_utf8_valid(const char *text, size_t len) {
        const unsigned char *s = (const unsigned char *) text;
        uint32_t cp;
        for (size_t pos = 0, n; pos < len; pos += n)
                if ((n = kb_utf8_decode(s + pos, len - pos, &cp)) == 0)
                        return false;
        return true;
}

/* A copy of text[0..len) with each ill-formed byte as U+FFFD (NUL-terminated; NULs kept), or NULL. */
static char *utf8_repaired(const char *text, size_t len, size_t *ret_len) {
        const unsigned char *s = (const unsigned char *) text;
        char *out = malloc(len * 3 + 1);
        if (!out)
                return NULL;
        size_t o = 0;
        for (size_t pos = 0; pos < len;) {
                uint32_t cp;
                size_t n = kb_utf8_decode(s + pos, len - pos, &cp);
                if (n == 0) {
                        memcpy(out + o, "\xef\xbf\xbd", 3);
                        o += 3;
                        pos++;
                        continue;
                }
                memcpy(out + o, s + pos, n);
                o += n;
                pos += n;
        }
        out[o] = '\0';
        *ret_len = o;
        return out;
}

int kb_sanitize_json_utf8(json_object *o) {
        int changed = 0, r;
        switch (json_object_get_type(o)) {
        case json_type_string: {
                const char *v = json_object_get_string(o);
                size_t len = (size_t) json_object_get_string_len(o);
                if (kb_utf8_valid(v, len))
                        return 0;
                size_t n;
                char *fixed = utf8_repaired(v, len, &n);
                if (!fixed || n > INT_MAX || json_object_set_string_len(o, fixed, (int) n) != 1) {
                        free(fixed);
                        return -ENOMEM;
                }
                free(fixed);
                return 1;
        }
        case json_type_array:
                for (size_t i = 0, n = json_object_array_length(o); i < n; i++) {
                        if ((r = kb_sanitize_json_utf8(json_object_array_get_idx(o, i))) < 0)
                                return r;
                        changed += r;
                }
                return changed;
        case json_type_object: {
                /* Keys cannot be renamed in place: a key that is not UTF-8 is re-added, repaired
                 * (after the walk, so the iteration never sees the object change). */
                bool bad_key = false;
                json_object_object_foreach(o, key, value) {
                        if ((r = kb_sanitize_json_utf8(value)) < 0)
                                return r;
                        changed += r;
                        bad_key |= !kb_utf8_valid(key, strlen(key));
                }
                while (bad_key) {
                        bad_key = false;
                        json_object_object_foreach(o, k, v) {
                                if (kb_utf8_valid(k, strlen(k)))
                                        continue;
                                size_t n;
                                char *fixed = utf8_repaired(k, strlen(k), &n);
                                if (!fixed)
                                        return -ENOMEM;
                                json_object_get(v);
                                json_object_object_del(o, k);
                                r = json_object_object_add(o, fixed, v);
                                free(fixed);
                                if (r < 0) {
                                        json_object_put(v);
                                        return -ENOMEM;
                                }
                                changed++;
                                bad_key = true;
                                break; /* the object changed: walk it again */
                        }
                }
                return changed;
        }
        default:
                return 0;
        }
}
