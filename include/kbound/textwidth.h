/* textwidth.h: clean text (sanitize.h's output: valid UTF-8, no controls) measured and laid out in
 * terminal columns, so that a line kbound prints on a terminal is never wider than the terminal. */
#pragma once

#include <stddef.h>
#include <stdio.h>
#include "kbound/common.h"

/* The columns s[0..len) takes: a character from U+1100 on counts as two. That overcounts some
 * (accents, most symbols) and never undercounts (East Asian wide characters, emoji), so text
 * fitted by it is never wider than it should be. */
KB_EXPORT size_t kb_text_columns(const char *s, size_t len);

/* The bytes of s[0..len)'s longest prefix of at most cols columns, never part of a character. */
KB_EXPORT size_t kb_text_fit(const char *s, size_t len, size_t cols);

/* s (one clean line, NUL-terminated) wrapped at spaces: the first line holds first columns (the
 * cursor is already past the rest of it), every further one starts with indent spaces and holds
 * width - indent. A word longer than a line is cut where the line ends. Always ends with a
 * newline. */
KB_EXPORT void kb_text_wrap(FILE *out, const char *s, size_t first, size_t indent, size_t width);
