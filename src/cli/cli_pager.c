/* cli_pager.c: text longer than the terminal (what `name?` found, a page a cell sent) shown a
 * screen at a time, as jupyter console pages it, without starting a program of the host's: the
 * text is the kernel's, already cleaned by the caller, and the keys are read here. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
#include <wchar.h>
#include "cli.h"

enum { KEY_QUIT, KEY_PAGE, KEY_LINE };

/* Where the screen row that starts at text[pos] ends, for a terminal of cols columns: at a newline
 * (*ret_next past it) or where the next character would not fit (*ret_next there). Tabs stop
 * every 8 columns; a character of unknown width takes one. */
static size_t row_end(const char *text, size_t len, size_t pos, size_t cols, size_t *ret_next) {
        size_t col = 0;
        mbstate_t state;
        memset(&state, 0, sizeof(state));
        while (pos < len) {
                if (text[pos] == '\n') {
                        *ret_next = pos + 1;
                        return pos;
                }
                wchar_t wc = 0;
                size_t n = mbrtowc(&wc, text + pos, len - pos, &state);
                if (n == (size_t) -1 || n == (size_t) -2 || n == 0) {
                        memset(&state, 0, sizeof(state));
                        n = 1;
                        wc = L'?';
                }
                int w = wc == L'\t' ? (int) (8 - col % 8) : wcwidth(wc);
                if (w < 0)
                        w = 1;
                if (col + (size_t) w > cols && col > 0)
                        break;
                col += (size_t) w;
                pos += n;
        }
        *ret_next = pos;
        return pos;
}

static size_t count_rows(const char *text, size_t len, size_t cols) {
        size_t rows = 0, pos = 0;
        while (pos < len) {
                size_t next;
                row_end(text, len, pos, cols, &next);
                pos = next;
                rows++;
        }
        return rows;
}

/* Writes the next n rows from *pos. */
static void put_rows(const char *text, size_t len, size_t *pos, size_t cols, size_t n) {
        for (size_t i = 0; i < n && *pos < len; i++) {
                size_t next, end = row_end(text, len, *pos, cols, &next);
                fwrite(text + *pos, 1, end - *pos, stdout);
                fputc('\n', stdout);
                *pos = next;
        }
        fflush(stdout);
}

/* One key: Space (or f, PageDown) a page; Enter (or j, Down) a line; anything else ends it, as a
 * signal does (*ret_sig) or the input's end. An escape sequence is read whole so that none of it
 * is left for the prompt. */
static int read_key(int signal_fd, int *ret_sig) {
        for (;;) {
                struct pollfd p[2] = {{.fd = STDIN_FILENO, .events = POLLIN}, {.fd = signal_fd, .events = POLLIN}};
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return KEY_QUIT;
                }
                if (p[1].revents & POLLIN) {
                        *ret_sig = cli_drain_signals(signal_fd);
                        if (*ret_sig)
                                return KEY_QUIT;
                }
                if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
                        continue;
                unsigned char c;
                ssize_t n = read(STDIN_FILENO, &c, 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return KEY_QUIT;
                if (c == ' ' || c == 'f')
                        return KEY_PAGE;
                if (c == '\r' || c == '\n' || c == 'j')
                        return KEY_LINE;
                if (c != 0x1b)
                        return KEY_QUIT;
                /* The rest of a sequence comes with its ESC. */
                char seq[8];
                size_t got = 0;
                struct pollfd more = {.fd = STDIN_FILENO, .events = POLLIN};
                while (got < sizeof(seq) && poll(&more, 1, 0) > 0 && read(STDIN_FILENO, seq + got, 1) == 1)
                        got++;
                if (got == 2 && memcmp(seq, "[B", 2) == 0)
                        return KEY_LINE;
                if (got == 3 && memcmp(seq, "[6~", 3) == 0)
                        return KEY_PAGE;
                return KEY_QUIT;
        }
}

int cli_page(const char *text, size_t len, int signal_fd) {
        struct winsize ws = {0};
        if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0 ||
            ws.ws_row < 3 || ws.ws_col < 20) {
                fwrite(text, 1, len, stdout);
                if (len > 0 && text[len - 1] != '\n')
                        fputc('\n', stdout);
                fflush(stdout);
                return 0;
        }
        size_t cols = ws.ws_col, page = (size_t) ws.ws_row - 1, pos = 0;
        size_t total = count_rows(text, len, cols), shown = 0;
        if (total <= page) {
                put_rows(text, len, &pos, cols, total);
                return 0;
        }
        struct termios saved, keys;
        if (tcgetattr(STDIN_FILENO, &saved) < 0) {
                put_rows(text, len, &pos, cols, total);
                return 0;
        }
        /* Keys one at a time, not echoed; Ctrl-C stays a signal (the self-pipe). */
        keys = saved;
        keys.c_lflag &= ~(tcflag_t) (ICANON | ECHO);
        keys.c_cc[VMIN] = 1;
        keys.c_cc[VTIME] = 0;
        (void) tcsetattr(STDIN_FILENO, TCSANOW, &keys);
        put_rows(text, len, &pos, cols, page);
        shown = page;
        int sig = 0;
        while (shown < total) {
                printf("\033[7m--More-- (%zu%%) Space: next page, Enter: next line, q: quit\033[0m",
                       shown * 100 / total);
                fflush(stdout);
                int key = read_key(signal_fd, &sig);
                fputs("\r\033[K", stdout);
                if (key == KEY_QUIT)
                        break;
                size_t n = key == KEY_PAGE ? page : 1;
                put_rows(text, len, &pos, cols, n);
                shown += n;
        }
        fflush(stdout);
        (void) tcsetattr(STDIN_FILENO, TCSANOW, &saved);
        return sig == SIGINT ? 0 : sig;
}
