/* textwidth.c: clean text measured and wrapped in terminal columns (textwidth.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "kbound/textwidth.h"

static size_t char_bytes(unsigned char lead) {
        return lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
}

static size_t char_cols(const char *s, size_t n) {
        if (n == 1)
                return 1;
        uint32_t cp = n == 2   ? ((uint32_t) (s[0] & 0x1F) << 6) | (s[1] & 0x3F)
                      : n == 3 ? ((uint32_t) (s[0] & 0x0F) << 12) | ((uint32_t) (s[1] & 0x3F) << 6) | (s[2] & 0x3F)
                               : 0x10000;
        return cp >= 0x1100 ? 2 : 1;
}

size_t kb_text_columns(const char *s, size_t len) {
        size_t cols = 0;
        for (size_t i = 0; i < len;) {
                size_t n = char_bytes((unsigned char) s[i]);
                if (n > len - i)
                        n = len - i;
                cols += char_cols(s + i, n);
                i += n;
        }
        return cols;
}

size_t kb_text_fit(const char *s, size_t len, size_t cols) {
        size_t used = 0, i = 0;
        while (i < len) {
                size_t n = char_bytes((unsigned char) s[i]);
                if (n > len - i)
                        n = len - i;
                size_t c = char_cols(s + i, n);
                if (used + c > cols)
                        break;
                used += c;
                i += n;
        }
        return i;
}

void kb_text_wrap(FILE *out, const char *s, size_t first, size_t indent, size_t width) {
        size_t room = first ? first : 1, line_room = width > indent ? width - indent : 1;
        while (*s == ' ')
                s++;
        if (!*s)
                fputc('\n', out);
        while (*s) {
                size_t len = strlen(s);
                size_t fit = kb_text_fit(s, len, room);
                if (fit < len) {
                        /* Break at the last space that fits; none: cut the word where the line ends. */
                        size_t brk = fit;
                        while (brk > 0 && s[brk] != ' ')
                                brk--;
                        if (brk > 0)
                                fit = brk;
                        else if (fit == 0)
                                fit = char_bytes((unsigned char) s[0]);
                }
                fwrite(s, 1, fit, out);
                s += fit;
                while (*s == ' ')
                        s++;
                fputc('\n', out);
                if (*s) {
                        for (size_t i = 0; i < indent; i++)
                                fputc(' ', out);
                        room = line_room;
                }
        }
}
