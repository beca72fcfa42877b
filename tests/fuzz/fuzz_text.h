/* fuzz_text.h: what the text fuzzers (fuzz_sanitize, fuzz_report) know of Unicode, written apart
 * from sanitize.c so that a fault there is not copied into the test of it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decodes one character of s (len > 0) by Unicode's table of well-formed sequences (Table 3-7),
 * written independently of sanitize.c. Returns its length, 0 if ill-formed. */
static inline size_t well_formed(const unsigned char *s, size_t len, uint32_t *ret_cp) {
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

static inline bool is_c0_or_c1(uint32_t cp) {
        return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F);
}

/* Bidi formatting characters and the line and paragraph separators, listed apart from
 * sanitize.c's test: none may reach a terminal or a report line. */
static inline bool is_format(uint32_t cp) {
        static const uint32_t list[] = {0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D,
                                        0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x2028, 0x2029};
        for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
                if (cp == list[i])
                        return true;
        return false;
}
