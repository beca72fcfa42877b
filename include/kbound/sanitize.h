/* sanitize.h: untrusted text (a kernel's output, names and messages) made safe to show: on a
 * terminal, on one line of a report, in XML. */
#pragma once

#include "kbound/common.h"
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum kb_sanitize_mode {
        /* Lines for a terminal (what a kernel printed, messages quoting it): newline and tab are
         * kept; an escape sequence (CSI, OSC, DCS, PM, APC, or ESC and one byte) is dropped whole
         * when it is well formed, else only its introducer (ESC and the byte after it), so an
         * unterminated one cannot hide the rest;
         * every other C0 control, DEL and the C1 controls U+0080..U+009F are dropped; so are the
         * bidirectional formatting characters and the line and paragraph separators
         * (kb_sanitize_is_format), which reorder or break what is shown; NUL is shown as U+2400. */
        KB_SANITIZE_TERMINAL,
        /* One message line for a terminal (a progress or error line quoting a kernel): as
         * KB_SANITIZE_TERMINAL, but a newline or carriage return is shown as the two characters
         * "\n" or "\r" rather than obeyed, so quoted text cannot start a line of its own. */
        KB_SANITIZE_MESSAGE,
        /* One line of a human report: tab, newline and CR become spaces, every other control
         * character (ESC included) and every kb_sanitize_is_format character '?'. */
        KB_SANITIZE_LINE,
        /* XML 1.0 character data: & < > " ' escaped, characters XML 1.0 forbids stripped. */
        KB_SANITIZE_XML_TEXT,
        /* An XML 1.0 attribute value: as character data, and tab, newline and CR as character
         * references (attribute normalization would turn them into spaces). */
        KB_SANITIZE_XML_ATTR,
} kb_sanitize_mode;

/* Writes text[0..len) (which may hold NULs) to out, made safe for mode. In every mode the output
 * is valid UTF-8: an invalid sequence (overlong, surrogate, past U+10FFFF, truncated) becomes '?',
 * one per byte. At most max bytes of text are written (SIZE_MAX: no limit), never part of a
 * character; when text is cut, "..." ends the output. Write errors are left in out's error flag. */
KB_EXPORT void kb_sanitize_put(FILE *out, const char *text, size_t len, size_t max, kb_sanitize_mode mode);

/* The characters that change how text around them is shown without being controls: the
 * bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F, U+202A..U+202E,
 * U+2066..U+2069: "Trojan Source") and the line and paragraph separators (U+2028, U+2029). */
KB_EXPORT bool kb_sanitize_is_format(uint32_t cp);

/* Whether text[0..len) is well-formed UTF-8 (RFC 3629). */
KB_EXPORT bool kb_utf8_valid(const char *text, size_t len);

/* Makes every string of the tree o (values and object keys, at any depth) well-formed UTF-8, each
 * ill-formed byte replaced by U+FFFD, so a report quoting a kernel's raw bytes (its log) is still
 * UTF-8 JSON. Returns how many strings it changed, or -ENOMEM. */
KB_EXPORT int kb_sanitize_json_utf8(json_object *o);
