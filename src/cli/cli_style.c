/* cli_style.c: how the human report fits where it goes: a terminal's width and colour (--color,
 * NO_COLOR, TERM), or plain lines for a pipe or a file, which stay greppable. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <kbound/textwidth.h>
#include "cli.h"

#define WIDTH_MIN 20
#define WIDTH_MAX 1000
#define WIDTH_DEFAULT 80

/* $COLUMNS when it is a sane number, else 0. */
static size_t columns_env(void) {
        const char *s = getenv("COLUMNS");
        if (!s || !*s)
                return 0;
        char *end;
        long n = strtol(s, &end, 10);
        return *end == '\0' && n >= WIDTH_MIN && n <= WIDTH_MAX ? (size_t) n : 0;
}

static size_t terminal_width(int fd) {
        struct winsize ws;
        if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
                return ws.ws_col < WIDTH_MIN ? WIDTH_MIN : ws.ws_col;
        size_t env = columns_env();
        return env ? env : WIDTH_DEFAULT;
}

/* https://no-color.org: set to anything but the empty string, no colour unless asked for. */
static bool terminal_wants_color(void) {
        const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");
        if (no_color && *no_color)
                return false;
        return term && *term && strcmp(term, "dumb") != 0;
}

size_t cli_terminal_width(int fd) {
        return fd >= 0 && isatty(fd) ? terminal_width(fd) : 0;
}

kb_report_style cli_report_style(FILE *out, cli_color color, bool verbose) {
        int fd = fileno(out);
        bool tty = fd >= 0 && isatty(fd);
        kb_report_style st = {
                .width = tty ? terminal_width(fd) : 0,
                .color = color == CLI_COLOR_ALWAYS || (color == CLI_COLOR_AUTO && tty && terminal_wants_color()),
                .whole = verbose,
                .cut_hint = "(passing details were cut to fit the terminal: --verbose shows them whole, --json "
                            "keeps them with their evidence)",
        };
        return st;
}

size_t cli_text_width(FILE *out) {
        int fd = out ? fileno(out) : -1;
        return fd >= 0 && isatty(fd) ? terminal_width(fd) : WIDTH_DEFAULT;
}

/* s[0..len) wrapped within width, its further lines indented by indent. */
static void put_wrapped(FILE *out, const char *s, size_t len, size_t first, size_t indent, size_t width) {
        char *line = strndup(s, len);
        if (!line) {
                fwrite(s, 1, len, out);
                fputc('\n', out);
                return;
        }
        for (char *p = line; *p; p++)
                if (*p == '\n' || *p == '\t')
                        *p = ' ';
        kb_text_wrap(out, line, first, indent, width);
        free(line);
}

/* Where a line of flowed text starts one of its own, and how far its further lines are indented. */
static bool line_of_its_own(const char *line, size_t *ret_indent) {
        size_t spaces = strspn(line, " ");
        if (spaces > 0 || strncmp(line, "- ", 2) == 0 || strncmp(line, "Usage:", 6) == 0) {
                *ret_indent = spaces + (strncmp(line + spaces, "- ", 2) == 0 ? 2 : 0) +
                              (strncmp(line, "Usage:", 6) == 0 ? 7 : 0);
                return true;
        }
        *ret_indent = 0;
        return false;
}

void cli_put_flowed(FILE *out, const char *text) {
        size_t width = cli_text_width(out);
        const char *p = text;
        while (*p) {
                if (*p == '\n') { /* a blank line */
                        fputc('\n', out);
                        p++;
                        continue;
                }
                /* A paragraph: this line and every following one until a blank line or a line of
                 * its own. */
                size_t indent = 0;
                (void) line_of_its_own(p, &indent);
                const char *end = strchr(p, '\n');
                while (end && end[1] && end[1] != '\n') {
                        size_t ignored;
                        if (line_of_its_own(end + 1, &ignored))
                                break;
                        end = strchr(end + 1, '\n');
                }
                size_t len = end ? (size_t) (end - p) : strlen(p);
                size_t lead = strspn(p, " ");
                for (size_t i = 0; i < lead; i++)
                        fputc(' ', out);
                put_wrapped(out, p + lead, len - lead, width > lead ? width - lead : 1, indent, width);
                p += len;
                if (*p == '\n')
                        p++;
        }
}

void cli_put_item(FILE *out, const char *head, size_t indent, const char *text) {
        size_t width = cli_text_width(out), used = kb_text_columns(head, strlen(head));
        /* Text too narrow to read beside the head goes under it. */
        if (width < indent + 20)
                indent = width > 28 ? 8 : 2;
        fputs(head, out);
        if (used + 1 > indent || used + 1 >= width) {
                fputc('\n', out);
                for (size_t i = 0; i < indent; i++)
                        fputc(' ', out);
                used = indent;
        } else {
                for (; used < indent; used++)
                        fputc(' ', out);
        }
        put_wrapped(out, text, strlen(text), width > used ? width - used : 1, indent, width);
}

void cli_put_line(FILE *out, size_t indent, const char *fmt, ...) {
        char *line = NULL;
        va_list ap;
        va_start(ap, fmt);
        int n = vasprintf(&line, fmt, ap);
        va_end(ap);
        if (n < 0) {
                fputs("(out of memory)\n", out);
                return;
        }
        size_t width = cli_text_width(out);
        put_wrapped(out, line, (size_t) n, width, indent, width);
        free(line);
}
