/* cli_input.c: the console's input: a line typed at a terminal (edited by cli_edit.c), or read
 * straight from a pipe or file; either way the wait also watches the kernel's pidfd and the signal
 * pipe, so a dying kernel or Ctrl-C is seen at once. A secret (a kernel's password prompt) is read
 * with echo off and kept out of the history. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>
#include <kbound/sanitize.h>
#include "cli.h"

/* Reads signal numbers from the self-pipe; returns the last one (0 if none). */
int cli_drain_signals(int signal_fd) {
        unsigned char c;
        int sig = 0;
        while (read(signal_fd, &c, 1) == 1)
                sig = c;
        return sig;
}

/* Every read of the console waits here (cli.h). */
int cli_input_wait(int pidfd, int signal_fd, int *ret_sig, int *ret_error) {
        for (;;) {
                struct pollfd p[3] = {
                        {.fd = STDIN_FILENO, .events = POLLIN},
                        {.fd = pidfd, .events = POLLIN},
                        {.fd = signal_fd, .events = POLLIN},
                };
                if (poll(p, 3, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        *ret_error = errno;
                        return CLI_INPUT_ERROR;
                }
                if (p[2].revents & POLLIN) {
                        *ret_sig = cli_drain_signals(signal_fd);
                        if (*ret_sig)
                                return CLI_INPUT_SIGNAL;
                }
                if (p[1].revents & POLLIN)
                        return CLI_INPUT_KERNEL_DIED;
                if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
                        return 1;
        }
}

/* Returns CLI_INPUT_LINE with *ret_line (malloc'd, no newline, NUL-terminated) and *ret_len (its length:
 * the line itself may hold NUL bytes), or CLI_INPUT_EOF, CLI_INPUT_SIGNAL (*ret_sig set), CLI_INPUT_KERNEL_DIED,
 * CLI_INPUT_TOO_LONG (a line over CLI_INPUT_LINE_MAX was read and dropped up to its newline: input goes on),
 * CLI_INPUT_ERROR (lr->error says why). *ret_line gets nothing but with CLI_INPUT_LINE. */
static int read_line(cli_line_reader *lr, int pidfd, int signal_fd, char **ret_line, size_t *ret_len, int *ret_sig) {
        for (;;) {
                char *nl = lr->len ? memchr(lr->buf, '\n', lr->len) : NULL;
                if (lr->discarding) {
                        /* Drop the rest of the over-long line, up to and with its newline. */
                        size_t used = nl ? (size_t) (nl - lr->buf) + 1 : lr->len;
                        memmove(lr->buf, lr->buf + used, lr->len - used);
                        lr->len -= used;
                        if (nl || lr->eof) {
                                lr->discarding = false;
                                return CLI_INPUT_TOO_LONG;
                        }
                } else if (nl || (lr->eof && lr->len)) {
                        size_t n = nl ? (size_t) (nl - lr->buf) : lr->len;
                        if (n > CLI_INPUT_LINE_MAX) {
                                lr->discarding = true;
                                continue;
                        }
                        char *line = malloc(n + 1);
                        if (!line) {
                                lr->error = ENOMEM;
                                return CLI_INPUT_ERROR;
                        }
                        memcpy(line, lr->buf, n);
                        line[n] = '\0';
                        size_t used = nl ? n + 1 : n;
                        memmove(lr->buf, lr->buf + used, lr->len - used);
                        lr->len -= used;
                        *ret_line = line;
                        *ret_len = n;
                        return CLI_INPUT_LINE;
                } else if (lr->len > CLI_INPUT_LINE_MAX) {
                        /* No newline yet and already too long: no need to hold the rest. */
                        lr->discarding = true;
                        continue;
                }
                if (lr->eof)
                        return CLI_INPUT_EOF;
                int w = cli_input_wait(pidfd, signal_fd, ret_sig, &lr->error);
                if (w < 0)
                        return w;
                /* The buffer holds no newline here, so at most CLI_INPUT_LINE_MAX of one line: it
                 * never grows past twice that. */
                if (lr->cap - lr->len < 4096) {
                        size_t cap = lr->cap ? lr->cap * 2 : 8192;
                        char *b = realloc(lr->buf, cap);
                        if (!b) {
                                lr->error = ENOMEM;
                                return CLI_INPUT_ERROR;
                        }
                        lr->buf = b;
                        lr->cap = cap;
                }
                ssize_t n = read(STDIN_FILENO, lr->buf + lr->len, lr->cap - lr->len);
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n < 0) {
                        lr->error = errno;
                        return CLI_INPUT_ERROR;
                }
                if (n == 0)
                        lr->eof = true;
                lr->len += (size_t) n;
        }
}

/* One line read a byte at a time (nothing read ahead, so libedit still gets what follows), each
 * byte waited for by wait_input. */
static int read_bytes(cli_input *in, int pidfd, int signal_fd, char **ret_line, size_t *ret_len, int *ret_sig) {
        size_t len = 0, cap = 256;
        char *line = malloc(cap);
        if (!line) {
                in->lr.error = ENOMEM;
                return CLI_INPUT_ERROR;
        }
        for (;;) {
                int w = cli_input_wait(pidfd, signal_fd, ret_sig, &in->lr.error);
                if (w < 0) {
                        free(line);
                        return w;
                }
                char c;
                ssize_t n = read(STDIN_FILENO, &c, 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0 || c == '\n' || c == '\r') {
                        if (n <= 0 && len == 0) {
                                free(line);
                                return n < 0 ? (in->lr.error = errno, CLI_INPUT_ERROR) : CLI_INPUT_EOF;
                        }
                        line[len] = '\0';
                        *ret_line = line;
                        *ret_len = len;
                        return CLI_INPUT_LINE;
                }
                if (len + 2 > cap) {
                        if (cap > CLI_INPUT_LINE_MAX) {
                                free(line);
                                return CLI_INPUT_TOO_LONG;
                        }
                        char *grown = realloc(line, cap * 2);
                        if (!grown) {
                                free(line);
                                in->lr.error = ENOMEM;
                                return CLI_INPUT_ERROR;
                        }
                        line = grown;
                        cap *= 2;
                }
                line[len++] = c;
        }
}

/* A secret line with the terminal's echo off (and back on, whatever happens). */
static int read_secret(cli_input *in, const char *prompt, int pidfd, int signal_fd, char **ret_line, size_t *ret_len,
                       int *ret_sig) {
        struct termios saved, quiet;
        bool tty = tcgetattr(STDIN_FILENO, &saved) == 0;
        /* Echo off before the prompt shows: what is typed as soon as it does is never echoed. */
        if (tty) {
                quiet = saved;
                quiet.c_lflag &= ~(tcflag_t) ECHO;
                (void) tcsetattr(STDIN_FILENO, TCSANOW, &quiet); /* typed-ahead input kept */
        }
        fputs(prompt, stdout);
        fflush(stdout);
        int r = in->edit ? read_bytes(in, pidfd, signal_fd, ret_line, ret_len, ret_sig)
                         : read_line(&in->lr, pidfd, signal_fd, ret_line, ret_len, ret_sig);
        if (tty) {
                (void) tcsetattr(STDIN_FILENO, TCSANOW, &saved);
                fputc('\n', stdout);
        }
        return r;
}

void cli_input_open(cli_input *in, bool history) {
        *in = (cli_input){.pidfd = -1, .signal_fd = -1, .last_key = -1};
        if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
                return;
        in->edit = cli_edit_open(in) == 0;
        if (in->edit && !history) {
                free(in->history_path);
                in->history_path = NULL;
        }
}

void cli_input_set_completion(cli_input *in, cli_complete_fn fn, void *userdata) {
        in->complete = fn;
        in->complete_userdata = userdata;
}

int cli_input_read(cli_input *in, const char *prompt, const char *initial, cli_input_kind kind, int pidfd,
                   int signal_fd, char **ret_line, size_t *ret_len, int *ret_sig) {
        if (kind == CLI_INPUT_SECRET)
                return read_secret(in, prompt, pidfd, signal_fd, ret_line, ret_len, ret_sig);
        if (in->edit) {
                in->kind = kind;
                in->pidfd = pidfd;
                in->signal_fd = signal_fd;
                return cli_edit_read(in, prompt, initial, ret_line, ret_len, ret_sig);
        }
        fputs(prompt, stdout);
        fflush(stdout);
        return read_line(&in->lr, pidfd, signal_fd, ret_line, ret_len, ret_sig);
}

void cli_input_remember(cli_input *in, const char *cell, size_t len) {
        if (in->edit)
                cli_edit_remember(in, cell, len);
}

void cli_input_discard(cli_input *in) {
        in->lr.len = 0;
        in->lr.discarding = false;
}

void cli_input_close(cli_input *in) {
        if (in->edit)
                cli_edit_close(in);
        free(in->history_path);
        free(in->lr.buf);
        *in = (cli_input){.pidfd = -1, .signal_fd = -1, .last_key = -1};
}
