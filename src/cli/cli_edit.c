/* cli_edit.c: the console's line editor on a terminal: libedit (BSD-licensed; not GNU readline)
 * through its own interface, so that a line can start with the kernel's indent, Tab asks the
 * kernel, a cell is one history entry, and every key (an incremental search's Enter included)
 * acts when it is typed. Keys are read here, each wait also watching the kernel's pidfd and the
 * signal pipe, and decoded as UTF-8. */
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wchar.h>
#include <histedit.h>
#include "cli.h"

#define HISTORY_MAX 1000
#define CTRL_D 0x04
#define LIST_MAX 100 /* completions listed under the line at most */
/* xterm's bracketed paste mode (most terminals and tmux have it; the others ignore the request). */
#define PASTE_ON "\033[?2004h"
#define PASTE_OFF "\033[?2004l"

static cli_input *input_of(EditLine *el) {
        void *in = NULL;
        el_get(el, EL_CLIENTDATA, &in);
        return in;
}

static char *prompt_of(EditLine *el) {
        return (char *) input_of(el)->prompt;
}

/* libedit's key reader. A wait here watches the kernel and the signals too: one that ends it
 * (or the terminal's end, or a read error) is kept in the input for cli_edit_read and given to
 * libedit as an end of input, which ends the command it was in (an incremental search, say).
 * With in->drain, the first byte is taken only if the terminal already holds it: 0 and in->idle
 * when it does not. Bytes that are not UTF-8 are dropped, as libedit's own reader does. */
static int read_key(EditLine *el, wchar_t *ret) {
        cli_input *in = input_of(el);
        mbstate_t state;
        memset(&state, 0, sizeof(state));
        bool first = true;
        for (;;) {
                if (in->drain) {
                        struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
                        if (poll(&p, 1, 0) <= 0) {
                                in->idle = true;
                                return 0;
                        }
                } else {
                        int w = cli_input_wait(in->pidfd, in->signal_fd, &in->sig, &in->lr.error);
                        if (w < 0) {
                                in->stopped = w;
                                return 0;
                        }
                }
                in->drain = false; /* the rest of a key is waited for */
                unsigned char c;
                ssize_t n = read(STDIN_FILENO, &c, 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        in->lr.error = errno;
                        in->stopped = CLI_INPUT_ERROR;
                        return 0;
                }
                if (n == 0) {
                        in->eof = true;
                        return 0;
                }
                if (first && in->last_key < 0)
                        in->last_key = c;
                first = false;
                wchar_t wc = 0;
                size_t r = mbrtowc(&wc, (const char *) &c, 1, &state);
                if (r == (size_t) -2)
                        continue;
                if (r == (size_t) -1) {
                        memset(&state, 0, sizeof(state));
                        first = true;
                        continue;
                }
                *ret = wc;
                return 1;
        }
}

/* The byte length of the longest beginning all of c's matches share, never part of a character. */
static size_t common_prefix(const cli_completion *c) {
        size_t n = strlen(c->matches[0]);
        for (size_t i = 1; i < c->n; i++) {
                size_t k = 0;
                while (k < n && c->matches[i][k] == c->matches[0][k])
                        k++;
                n = k;
        }
        while (n > 0 && ((unsigned char) c->matches[0][n] & 0xC0) == 0x80)
                n--;
        return n;
}

/* The matches in columns under the line (at most LIST_MAX of them). */
static void list_matches(const cli_completion *c) {
        size_t width = cli_terminal_width(STDOUT_FILENO), widest = 0;
        size_t shown = c->n < LIST_MAX ? c->n : LIST_MAX;
        if (width == 0)
                width = 80;
        for (size_t i = 0; i < shown; i++) {
                size_t w = cli_utf8_chars(c->matches[i], strlen(c->matches[i]));
                if (w > widest)
                        widest = w;
        }
        size_t columns = width / (widest + 2);
        if (columns == 0)
                columns = 1;
        fputc('\n', stdout);
        for (size_t i = 0; i < shown; i++) {
                size_t w = cli_utf8_chars(c->matches[i], strlen(c->matches[i]));
                fputs(c->matches[i], stdout);
                if ((i + 1) % columns == 0 || i + 1 == shown)
                        fputc('\n', stdout);
                else
                        fprintf(stdout, "%*s", (int) (widest + 2 - w), "");
        }
        if (shown < c->n)
                fprintf(stdout, "(and %zu more)\n", c->n - shown);
        fflush(stdout);
}

/* Tab. In a code line: blanks alone before the cursor on its line get four spaces (an indent, as
 * IPython's Tab); otherwise the kernel's completions: one is put in the line, several by their
 * common beginning when it adds to what was typed, else listed under the line. Elsewhere (an
 * answer to input()), or with no completer: Tab itself. */
static unsigned char complete_key(EditLine *el, int ch) {
        (void) ch;
        cli_input *in = input_of(el);
        if (in->kind != CLI_INPUT_CODE || !in->complete)
                return el_insertstr(el, "\t") == 0 ? CC_REFRESH : CC_ERROR;
        const LineInfo *li = el_line(el);
        size_t len = (size_t) (li->lastchar - li->buffer), cursor = (size_t) (li->cursor - li->buffer);
        size_t bol = cursor;
        while (bol > 0 && li->buffer[bol - 1] != '\n')
                bol--;
        if (strspn(li->buffer + bol, " \t") >= cursor - bol)
                return el_insertstr(el, "    ") == 0 ? CC_REFRESH : CC_ERROR;
        char *text = strndup(li->buffer, len); /* li changes with the line */
        if (!text)
                return CC_ERROR;
        cli_completion c = {0};
        int r = in->complete(in->complete_userdata, text, cursor, &c);
        unsigned char ret = CC_REFRESH_BEEP;
        if (r == 1)
                ret = CC_REDISPLAY;
        else if (r == 0 && c.n > 0 && c.start <= c.end && c.end <= len) {
                size_t common = common_prefix(&c), typed = cursor > c.start ? cursor - c.start : 0;
                /* What was typed is never shortened: several matches that share less than it
                 * (case-insensitive ones, say) are listed instead. */
                if (c.n == 1 || common > typed) {
                        char *put = strndup(c.matches[0], common);
                        long forward = (long) cli_utf8_chars(text, c.end) - (long) cli_utf8_chars(text, cursor);
                        if (put) {
                                el_cursor(el, (int) forward);
                                el_deletestr(el, (int) cli_utf8_chars(text + c.start, c.end - c.start));
                                if (*put)
                                        (void) el_insertstr(el, put);
                        }
                        free(put);
                        ret = put ? CC_REFRESH : CC_ERROR;
                } else {
                        list_matches(&c); /* then the prompt and line are drawn again under it */
                        ret = CC_REDISPLAY;
                }
        }
        cli_completion_clear(&c);
        free(text);
        return ret;
}

/* A paste the terminal brackets (ESC [200~ ... ESC [201~, asked for while a line is edited): put
 * in the line as it is, its line ends as newlines, without its last ones, so that nothing runs
 * before Enter and no indent or completion is added to code that carries its own. A paste over
 * CLI_INPUT_LINE_MAX is read to its end and dropped. */
static unsigned char paste_key(EditLine *el, int ch) {
        static const wchar_t end[] = L"\033[201~";
        const size_t end_len = KB_ELEMENTSOF(end) - 1;
        (void) ch;
        size_t len = 0, cap = 256;
        bool over = false;
        wchar_t *text = malloc(cap * sizeof(*text));
        if (!text)
                return CC_ERROR;
        for (;;) {
                wchar_t wc;
                if (el_wgetc(el, &wc) != 1) /* the input's end, a signal or the kernel's death */
                        break;
                if (len + 2 > cap) {
                        wchar_t *grown = cap > CLI_INPUT_LINE_MAX ? NULL : realloc(text, cap * 2 * sizeof(*text));
                        if (!grown) {
                                /* Read to the end of the paste, none of it kept but what may be
                                 * the start of its end. */
                                over = true;
                                wmemmove(text, text + len - (end_len - 1), end_len - 1);
                                len = end_len - 1;
                        } else {
                                text = grown;
                                cap *= 2;
                        }
                }
                text[len++] = wc;
                if (len >= end_len && wmemcmp(text + len - end_len, end, end_len) == 0) {
                        len -= end_len;
                        break;
                }
        }
        size_t out = 0;
        for (size_t i = 0; i < len; i++) {
                if (text[i] == L'\r' && i + 1 < len && text[i + 1] == L'\n')
                        continue;
                text[out++] = text[i] == L'\r' ? L'\n' : text[i];
        }
        while (out > 0 && text[out - 1] == L'\n')
                out--;
        text[out] = L'\0';
        unsigned char ret = over ? CC_REFRESH_BEEP : CC_REFRESH;
        if (!over && out > 0 && el_winsertstr(el, text) < 0)
                ret = CC_ERROR;
        free(text);
        return ret;
}

void cli_completion_clear(cli_completion *c) {
        for (size_t i = 0; i < c->n; i++)
                free(c->matches[i]);
        free(c->matches);
        *c = (cli_completion){0};
}

/* $XDG_STATE_HOME/kbound/console_history, else ~/.local/state/kbound/console_history, its
 * folders made (0700) if missing; NULL when there is no home to put it in. */
static char *history_file(void) {
        const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
        char *dir = NULL, *path = NULL;
        if (state && state[0] == '/') {
                (void) mkdir(state, 0700);
                if (asprintf(&dir, "%s/kbound", state) < 0)
                        return NULL;
        } else if (home && home[0] == '/') {
                char *local = NULL, *st = NULL;
                if (asprintf(&local, "%s/.local", home) < 0)
                        return NULL;
                if (asprintf(&st, "%s/state", local) < 0) {
                        free(local);
                        return NULL;
                }
                (void) mkdir(local, 0700);
                (void) mkdir(st, 0700);
                free(local);
                if (asprintf(&dir, "%s/kbound", st) < 0) {
                        free(st);
                        return NULL;
                }
                free(st);
        } else {
                return NULL;
        }
        if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
                free(dir);
                return NULL;
        }
        if (asprintf(&path, "%s/console_history", dir) < 0)
                path = NULL;
        free(dir);
        return path;
}

/* Code is UTF-8 whatever the locale says: libedit turns keys into characters and back by the
 * locale's character type, so it gets the environment's when that is UTF-8, else C.UTF-8 (glibc
 * has it built in since 2.35). Only LC_CTYPE: messages, numbers and collation stay as they were. */
static void utf8_ctype(void) {
        if (setlocale(LC_CTYPE, "") && strcmp(nl_langinfo(CODESET), "UTF-8") == 0)
                return;
        (void) setlocale(LC_CTYPE, "C.UTF-8");
}

int cli_edit_open(cli_input *in) {
        utf8_ctype();
        EditLine *el = el_init("kbound", stdin, stdout, stderr);
        History *hist = history_init();
        if (!el || !hist) {
                if (el)
                        el_end(el);
                if (hist)
                        history_end(hist);
                return -1;
        }
        HistEvent ev;
        history(hist, &ev, H_SETSIZE, HISTORY_MAX);
        history(hist, &ev, H_SETUNIQUE, 1);
        el_set(el, EL_CLIENTDATA, in);
        /* kbound's own handlers take the signals (the self-pipe): libedit installs none. */
        el_set(el, EL_SIGNAL, 0);
        el_set(el, EL_EDITOR, "emacs");
        el_set(el, EL_PROMPT, prompt_of);
        el_set(el, EL_HIST, history, hist);
        el_set(el, EL_GETCFN, read_key);
        /* Added through el_wset with wide literals: el_set converts a name and its help to wide
         * strings it never frees (libedit 3.1's EL_ADDFN; LeakSanitizer found the four). */
        el_wset(el, EL_ADDFN, L"kbound-complete", L"complete by the kernel (complete_request)", complete_key);
        el_set(el, EL_BIND, "^I", "kbound-complete", NULL);
        el_wset(el, EL_ADDFN, L"kbound-paste", L"a bracketed paste, put in the line as it is", paste_key);
        el_set(el, EL_BIND, "\\e[200~", "kbound-paste", NULL);
        /* The keys readline users expect (libedit's readline layer binds the same). */
        el_set(el, EL_BIND, "^R", "em-inc-search-prev", NULL);
        el_set(el, EL_BIND, "\\e[1~", "ed-move-to-beg", NULL);
        el_set(el, EL_BIND, "\\e[4~", "ed-move-to-end", NULL);
        el_set(el, EL_BIND, "\\e[7~", "ed-move-to-beg", NULL);
        el_set(el, EL_BIND, "\\e[8~", "ed-move-to-end", NULL);
        el_set(el, EL_BIND, "\\e[H", "ed-move-to-beg", NULL);
        el_set(el, EL_BIND, "\\e[F", "ed-move-to-end", NULL);
        el_set(el, EL_BIND, "\\e[3~", "ed-delete-next-char", NULL);
        el_set(el, EL_BIND, "\\e[1;5C", "em-next-word", NULL);
        el_set(el, EL_BIND, "\\e[1;5D", "ed-prev-word", NULL);
        el_set(el, EL_BIND, "^W", "ed-delete-prev-word", NULL);
        /* The auditor's own ~/.editrc, as any libedit program reads it. */
        (void) el_source(el, NULL);
        in->el = el;
        in->hist = hist;
        in->history_path = history_file();
        if (in->history_path)
                (void) history(hist, &ev, H_LOAD, in->history_path);
        return 0;
}

/* The finished line buf[0..n) (its newline gone) into *ret_line. */
static int take_line(const char *buf, size_t n, char **ret_line, size_t *ret_len, int *ret_error) {
        if (n > CLI_INPUT_LINE_MAX)
                return CLI_INPUT_TOO_LONG;
        char *line = strndup(buf, n);
        if (!line) {
                *ret_error = ENOMEM;
                return CLI_INPUT_ERROR;
        }
        *ret_line = line;
        *ret_len = n;
        return CLI_INPUT_LINE;
}

int cli_edit_read(cli_input *in, const char *prompt, const char *initial, char **ret_line, size_t *ret_len,
                  int *ret_sig) {
        EditLine *el = in->el;
        in->prompt = prompt;
        in->stopped = 0;
        in->sig = 0;
        in->eof = false;
        /* A fresh line: the prompt drawn, the terminal in libedit's mode, pastes bracketed. */
        fputs(PASTE_ON, stdout);
        el_set(el, EL_UNBUFFERED, 1);
        if (initial && *initial && el_insertstr(el, initial) == 0) {
                /* libedit draws only what a command changed: the line starts over, holding the
                 * text, from the start of the row the prompt is on. */
                fputc('\r', stdout);
                el_set(el, EL_REFRESH);
        }
        int r = 0;
        bool done = false;
        while (!done) {
                r = cli_input_wait(in->pidfd, in->signal_fd, ret_sig, &in->lr.error);
                if (r < 0)
                        break;
                /* libedit does one command a call. After the first, whatever is there already
                 * is done at once: a key the terminal holds (a paste), or one libedit pushed
                 * back itself (the key that ended an incremental search, Enter say). */
                in->drain = false;
                while (!done) {
                        in->idle = false;
                        in->last_key = -1;
                        int n = 0;
                        const char *buf = el_gets(el, &n);
                        done = true;
                        if (in->stopped) {
                                r = in->stopped;
                                *ret_sig = in->sig;
                        } else if (buf && n > 0 && buf[n - 1] == '\n') {
                                r = take_line(buf, (size_t) n - 1, ret_line, ret_len, &in->lr.error);
                        } else if (in->eof || (buf && n == 1 && buf[0] == CTRL_D && in->last_key == CTRL_D)) {
                                r = CLI_INPUT_EOF; /* Ctrl-D on an empty line, or the terminal gone */
                        } else if (in->idle) {
                                done = false;
                                break; /* nothing more without waiting */
                        } else {
                                done = false;
                        }
                        in->drain = true;
                }
        }
        in->drain = false;
        /* The terminal back in its own mode while a cell runs (Ctrl-C a signal again). */
        el_set(el, EL_UNBUFFERED, 0);
        fputs(PASTE_OFF, stdout);
        fflush(stdout);
        return r;
}

void cli_edit_remember(cli_input *in, const char *cell, size_t len) {
        while (len > 0 &&
               (cell[len - 1] == ' ' || cell[len - 1] == '\t' || cell[len - 1] == '\n' || cell[len - 1] == '\r'))
                len--;
        if (len == 0 || len > CLI_INPUT_LINE_MAX || memchr(cell, '\0', len))
                return;
        char *entry = strndup(cell, len);
        HistEvent ev;
        if (entry)
                (void) history(in->hist, &ev, H_ENTER, entry);
        free(entry);
}

void cli_edit_close(cli_input *in) {
        if (in->history_path) {
                /* Made 0600 from the start: the cells typed are the auditor's own. */
                int fd = open(in->history_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
                FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
                if (f) {
                        HistEvent ev;
                        (void) fchmod(fd, 0600);
                        (void) history(in->hist, &ev, H_SAVE_FP, f);
                        fclose(f);
                } else if (fd >= 0) {
                        close(fd);
                }
        }
        history_end(in->hist);
        el_end(in->el);
        in->hist = NULL;
        in->el = NULL;
}
