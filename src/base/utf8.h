/* utf8.h: the one UTF-8 decoder (internal, header only, libc only): sanitize.c's walker and
 * kbound-probe's text, which is linked without the library. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Decodes one UTF-8 character at s (len > 0 bytes available). Returns its length and the code
 * point, or 0 for an invalid sequence (overlong, surrogate, past U+10FFFF, truncated). */
static inline size_t kb_utf8_decode(const unsigned char *s, size_t len, uint32_t *ret_cp) {
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
