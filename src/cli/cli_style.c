/* cli_style.c: how the human report fits where it goes: a terminal's width and colour (--color,
 * NO_COLOR, TERM), or plain lines for a pipe or a file, which stay greppable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
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
