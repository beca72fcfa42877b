/* sanitize.h: untrusted text (a kernel's output, names and messages) made safe to show: on a
 * terminal, on one line of a report, in XML. */
#pragma once

#include "kbound/common.h"
#include <stddef.h>
#include <stdio.h>

typedef enum kb_sanitize_mode {
        /* Lines for a terminal (what a kernel printed, messages quoting it): newline and tab are
         * kept; an escape sequence (CSI, OSC, DCS, PM, APC, or ESC and one byte) is dropped whole
         * when it is well formed, else only its introducer (ESC and the byte after it), so an
         * unterminated one cannot hide the rest;
         * every other C0 control, DEL and the C1 controls U+0080..U+009F are dropped; NUL is shown
         * as U+2400. */
        KB_SANITIZE_TERMINAL,
        /* One line of a human report: tab, newline and CR become spaces, every other control
         * character (ESC included) '?'. */
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
