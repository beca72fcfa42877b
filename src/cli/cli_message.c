/* cli_message.c: kbound's messages on stderr: redacted with every registered secret set, one line
 * whatever they quote (a newline shown, not obeyed), wrapped within a terminal's width; progress
 * that --quiet silences and --verbose widens; the last error kept for a refused run's report. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <kbound/sanitize.h>
#include <kbound/textwidth.h>
#include "cli.h"

static bool quiet, verbose;
/* Secrets every message is redacted with; registered before any worker thread starts and not
 * changed while they run. */
static const kb_secrets *redact_sets[CLI_REDACT_MAX];
static size_t n_redact_sets;

void cli_set_quiet(bool q) {
        quiet = q;
}

void cli_set_verbose(bool v) {
        verbose = v;
}

bool cli_verbose(void) {
        return verbose;
}

int cli_redact_register(const kb_secrets *s) {
        if (n_redact_sets == CLI_REDACT_MAX)
                return -E2BIG;
        redact_sets[n_redact_sets++] = s;
        return 0;
}

void cli_redact_clear(void) {
        n_redact_sets = 0;
}

json_object *cli_redact_json(json_object *o) {
        json_object *cur = json_object_get(o);
        for (size_t i = 0; cur && i < n_redact_sets; i++) {
                json_object *next = kb_secrets_redact(redact_sets[i], cur);
                json_object_put(cur);
                cur = next;
        }
        return cur;
}

void cli_put_sanitized_len(FILE *out, const char *s, size_t len) {
        kb_sanitize_put(out, s, len, SIZE_MAX, KB_SANITIZE_TERMINAL);
}

void cli_put_sanitized(FILE *out, const char *s) {
        cli_put_sanitized_len(out, s, strlen(s));
}

/* One message line on stderr. Messages quote kernel-controlled text (log tails, kernel_info,
 * error values), so the line is redacted with every registered set and written without anything
 * a terminal would act on. Nothing of a line that cannot be redacted is shown. */
/* The last error said, redacted, for the report of a run refused before any kernel started. */
static char last_error[512];

static void vmessage(bool error, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void vmessage(bool error, const char *fmt, va_list ap) {
        char *text = NULL;
        if (vasprintf(&text, fmt, ap) < 0) {
                fputs("kbound: (out of memory)\n", stderr);
                return;
        }
        for (size_t i = 0; text && i < n_redact_sets; i++) {
                char *r = kb_secrets_redact_text(redact_sets[i], text, strlen(text), NULL);
                free(text);
                text = r;
        }
        /* One line whatever it quotes: a newline in it is shown, not obeyed. */
        const char *line = text ? text : "(a message could not be redacted and is not shown)";
        char *shown = NULL;
        size_t shown_size = 0;
        FILE *m = open_memstream(&shown, &shown_size);
        if (m) {
                fputs("kbound: ", m);
                kb_sanitize_put(m, line, strlen(line), SIZE_MAX, KB_SANITIZE_MESSAGE);
                if (fclose(m) != 0) {
                        free(shown);
                        shown = NULL;
                }
        }
        flockfile(stderr);
        size_t width = cli_terminal_width(STDERR_FILENO);
        if (!shown) {
                fputs("kbound: (out of memory)\n", stderr);
        } else if (width && kb_text_columns(shown, strlen(shown)) > width) {
                /* On a terminal, within its width: continuation lines under the text. */
                for (char *p = shown; *p; p++)
                        if (*p == '\t')
                                *p = ' ';
                kb_text_wrap(stderr, shown, width, 8, width);
        } else {
                fputs(shown, stderr);
                fputc('\n', stderr);
        }
        free(shown);
        if (error)
                snprintf(last_error, sizeof last_error, "%s", line);
        funlockfile(stderr);
        free(text);
}

void cli_error(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vmessage(true, fmt, ap);
        va_end(ap);
}

const char *cli_last_error(void) {
        return last_error;
}

void cli_progress(const char *fmt, ...) {
        if (quiet)
                return;
        va_list ap;
        va_start(ap, fmt);
        vmessage(false, fmt, ap);
        va_end(ap);
}
