/* cmd_console.c: `kbound console`: an interactive prompt to one sandboxed kernel, for audits by hand,
 * typed as in jupyter console: the kernel's indent put in the line, Tab completed by the kernel,
 * `name?` answered by it. Ctrl-C interrupts a running cell with SIGINT through the pinned pidfd,
 * never the control channel. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <kbound/kernel.h>
#include <kbound/sanitize.h>
#include "cli.h"

#define CELL_MAX_BYTES (16 * 1024 * 1024)
#define IS_COMPLETE_TIMEOUT_MS 3000
#define COMPLETE_TIMEOUT_MS 3000
#define INSPECT_TIMEOUT_MS 10000
#define STOP_GRACE_MS 3000
#define INPUT_POLL_MS 100

/* Writes a JSON string's whole value (by its length: it may hold NUL bytes), sanitized. */
static void put_json_string(FILE *out, json_object *str) {
        cli_put_sanitized_len(out, json_object_get_string(str), (size_t) json_object_get_string_len(str));
}

/* The string member key of obj, or NULL. */
static json_object *member_string_obj(json_object *obj, const char *key) {
        json_object *v = NULL;
        if (!obj || !json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return v;
}

static const char *member_string(json_object *obj, const char *key) {
        json_object *v = member_string_obj(obj, key);
        return v ? json_object_get_string(v) : NULL;
}

static void put_text_plain(json_object *content, const char *prefix) {
        json_object *data = NULL;
        if (!json_object_object_get_ex(content, "data", &data) || !json_object_is_type(data, json_type_object))
                return;
        json_object *text = member_string_obj(data, "text/plain");
        fputs(prefix, stdout);
        if (text) {
                put_json_string(stdout, text);
                fputc('\n', stdout);
                return;
        }
        /* Name what cannot be shown as text rather than hide it. */
        json_object_object_foreach(data, mime, value) {
                (void) value;
                fputs("[", stdout);
                cli_put_sanitized(stdout, mime);
                fputs(" output]\n", stdout);
        }
}

static json_object *redact_content(void *userdata, json_object *content);

/* Prints each output of the running cell as it arrives. */
static int on_iopub(void *userdata, kb_execution *ex, const kb_msg *msg) {
        const char *type = msg->msg_type;
        _cleanup_json_ json_object *content = redact_content(userdata, msg->content);
        if (strcmp(type, "stream") == 0) {
                json_object *text = member_string_obj(content, "text");
                const char *name = member_string(content, "name");
                FILE *out = name && strcmp(name, "stderr") == 0 ? stderr : stdout;
                if (text)
                        put_json_string(out, text);
                fflush(out);
        } else if (strcmp(type, "execute_result") == 0) {
                json_object *count = NULL;
                char prefix[48] = "Out: ";
                if (json_object_object_get_ex(content, "execution_count", &count) &&
                    json_object_is_type(count, json_type_int))
                        snprintf(prefix, sizeof(prefix), "Out[%lld]: ", (long long) json_object_get_int64(count));
                put_text_plain(content, prefix);
        } else if (strcmp(type, "display_data") == 0 || strcmp(type, "update_display_data") == 0) {
                put_text_plain(content, "");
        } else if (strcmp(type, "error") == 0) {
                json_object *tb = NULL;
                if (json_object_object_get_ex(content, "traceback", &tb) && json_object_is_type(tb, json_type_array) &&
                    json_object_array_length(tb) > 0) {
                        for (size_t i = 0; i < json_object_array_length(tb); i++) {
                                json_object *line = json_object_array_get_idx(tb, i);
                                if (json_object_is_type(line, json_type_string)) {
                                        put_json_string(stderr, line);
                                        fputc('\n', stderr);
                                }
                        }
                } else {
                        json_object *ename = member_string_obj(content, "ename");
                        json_object *evalue = member_string_obj(content, "evalue");
                        if (ename)
                                put_json_string(stderr, ename);
                        else
                                fputs("error", stderr);
                        fputs(": ", stderr);
                        if (evalue)
                                put_json_string(stderr, evalue);
                        fputc('\n', stderr);
                }
                fflush(stderr);
        }
        fflush(stdout);
        return 0;
}

typedef struct console {
        const kb_kernelspec *spec;
        const char *rootfs;
        kb_kernel *kernel;
        int signal_fd;
        bool is_complete_works; /* cleared when the kernel does not answer is_complete_request */
        bool complete_works;    /* cleared when it does not answer complete_request */
        const char *cell;       /* the lines of the cell typed so far (cell_len bytes), for Tab */
        size_t cell_len;
        int64_t next_count; /* the execution count of the next cell, for the prompt */
        cli_input input;
        kb_client_msg_fn on_msg; /* the transcript's hook, called after the console's */
        void *on_msg_userdata;
        json_object *input_request; /* an input_request not answered yet (its content), or NULL */
        const char *cell_id;        /* the running cell's msg_id: the request's parent */
} console;

/* Every message kbound sends or receives: an input_request for the running cell is kept for
 * run_cell to answer; the transcript's hook sees everything as before. */
static void on_msg(void *userdata, kb_channel channel, const char *direction, const kb_msg *msg) {
        console *con = userdata;
        json_object *type = NULL, *parent = NULL;
        if (channel == KB_CHANNEL_STDIN && strcmp(direction, "in") == 0 && con->cell_id && !con->input_request &&
            json_object_object_get_ex(msg->header, "msg_type", &type) &&
            strcmp(json_object_get_string(type), "input_request") == 0 && msg->parent_header &&
            json_object_object_get_ex(msg->parent_header, "msg_id", &parent) &&
            strcmp(json_object_get_string(parent), con->cell_id) == 0)
                con->input_request = json_object_get(msg->content);
        if (con->on_msg)
                con->on_msg(con->on_msg_userdata, channel, direction, msg);
}

/* "complete", "incomplete" (with *ret_indent), "invalid" or "unknown"; a kernel that does not
 * answer in time is asked no more (one line = one cell from then on). NULL if a signal came
 * while waiting for the answer (the signal pipe is readable). */
static const char *is_complete(console *con, const char *code, char *ret_indent, size_t indent_size) {
        static const char *const statuses[] = {"complete", "incomplete", "invalid", "unknown"};
        ret_indent[0] = '\0';
        if (!con->is_complete_works)
                return "complete";
        json_object *content = json_object_new_object();
        if (!content)
                return "complete";
        json_object_object_add(content, "code", json_object_new_string(code));
        kb_msg *reply = NULL;
        int r = kb_client_request(kb_kernel_client(con->kernel), KB_CHANNEL_SHELL, "is_complete_request", content,
                                  kb_now_ms() + IS_COMPLETE_TIMEOUT_MS, &reply);
        if (r == -ECANCELED)
                return NULL; /* a signal while asking: the caller decides what it means */
        if (r < 0) {
                if (r == -ETIMEDOUT) {
                        con->is_complete_works = false;
                        cli_progress("kernel '%s' did not answer is_complete_request: one line is one cell from now on",
                                     con->spec->name);
                }
                return "complete";
        }
        const char *status = kb_msg_content_string(reply, "status");
        const char *indent = kb_msg_content_string(reply, "indent");
        const char *result = "unknown";
        for (size_t i = 0; status && i < KB_ELEMENTSOF(statuses); i++)
                if (strcmp(status, statuses[i]) == 0)
                        result = statuses[i];
        /* Only blanks are echoed back as indentation. */
        if (indent && strspn(indent, " \t") == strlen(indent))
                snprintf(ret_indent, indent_size, "%s", indent);
        kb_msg_destroy(&reply);
        return result;
}

/* The cell may print the kernel's connection file: never show its key (NULL if out of memory,
 * and then nothing is shown). */
static json_object *redact_content(void *userdata, json_object *content) {
        return kb_kernel_redact(((console *) userdata)->kernel, content);
}

static void explain_death(console *con) {
        int status = 0;
        /* bwrap exits with the kernel's status once its init has seen the kernel go: give it a
         * moment to do so on its own, since stopping it first would report the kill instead. */
        kb_sandbox *sb = kb_kernel_sandbox(con->kernel);
        int64_t until = kb_now_ms() + 2000;
        while (kb_sandbox_try_reap(sb, &status) == 0 && kb_ms_left(until) > 0)
                usleep(20000);
        kb_kernel_stop(con->kernel, 0, kb_now_ms() + 5000, NULL);
        _cleanup_free_ char *tail = kb_kernel_log_tail(con->kernel, 400);
        char how[128] = "";
        /* bwrap passes the kernel's exit status on, and a kernel killed by signal N as 128+N. */
        if (WIFEXITED(status) && WEXITSTATUS(status) > 128 && WEXITSTATUS(status) < 128 + 32)
                snprintf(how, sizeof(how), "exit status %d: killed by signal %d, %s", WEXITSTATUS(status),
                         WEXITSTATUS(status) - 128, strsignal(WEXITSTATUS(status) - 128));
        else if (WIFEXITED(status))
                snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(status));
        else if (WIFSIGNALED(status))
                snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(status));
        else
                snprintf(how, sizeof(how), "wait status %d", status);
        cli_error("kernel '%s' died (%s)%s%s", con->spec->name, how, tail && *tail ? "; its log ends: " : "",
                  tail ? tail : "");
}

/* Tab: the kernel's completions (complete_request) for the line being edited, the cell typed so
 * far before it as jupyter console sends the whole cell. A kernel that does not answer in time is
 * asked no more. A completion reaching into the lines already entered cannot be put in this one
 * and is dropped. */
static int complete_line(void *userdata, const char *text, size_t cursor, cli_completion *ret) {
        console *con = userdata;
        if (!con->complete_works)
                return -1;
        size_t before = con->cell_len, len = strlen(text);
        _cleanup_free_ char *code = malloc(before + len + 1);
        if (!code)
                return -1;
        memcpy(code, con->cell, before);
        memcpy(code + before, text, len + 1);
        int r = cli_assist_complete(con->kernel, code, before + cursor, kb_now_ms() + COMPLETE_TIMEOUT_MS, ret);
        if (r == -ETIMEDOUT) {
                con->complete_works = false;
                fputc('\n', stdout);
                fflush(stdout);
                cli_error("kernel '%s' did not answer complete_request within %d s: Tab completes no more",
                          con->spec->name, COMPLETE_TIMEOUT_MS / 1000);
                return 1;
        }
        /* A signal (Ctrl-C) is left in its pipe for the prompt's wait; a dead kernel for the pidfd's. */
        if (r < 0)
                return -1;
        if (ret->start < before) {
                cli_completion_clear(ret);
                return -1;
        }
        ret->start -= before;
        ret->end -= before;
        return 0;
}

/* Ends a wait that a signal cancelled: SIGINT (or none) goes back to the prompt (0); another
 * ends the console (KB_EXIT_FAIL). */
static int after_cancel(console *con) {
        int sig = cli_drain_signals(con->signal_fd);
        if (sig == SIGINT || sig == 0) {
                fputs("^C\n", stdout);
                return 0;
        }
        cli_error("kernel '%s': ending the console on signal %d", con->spec->name, sig);
        return KB_EXIT_FAIL;
}

/* Shows clean text a screen at a time. Returns 0, or KB_EXIT_FAIL when a signal ended it. */
static int page(console *con, char *text, size_t len) {
        int sig = cli_page(text, len, con->signal_fd);
        free(text);
        if (!sig)
                return 0;
        cli_error("kernel '%s': ending the console on signal %d", con->spec->name, sig);
        return KB_EXIT_FAIL;
}

/* `name?` and `name??`: what the kernel knows of the name (inspect_request, detail_level 0 or 1),
 * paged. Returns 0, or a KB_EXIT_* code that ends the console. */
static int inspect(console *con, const char *line, size_t start, size_t end, int detail) {
        _cleanup_free_ char *name = strndup(line + start, end - start);
        char *text = NULL;
        size_t len = 0;
        if (!name)
                return KB_EXIT_FAIL;
        int r = cli_assist_inspect(con->kernel, name, end - start, detail, kb_now_ms() + INSPECT_TIMEOUT_MS, &text,
                                   &len);
        if (r == -ECANCELED)
                return after_cancel(con);
        if (r == -ESRCH) {
                explain_death(con);
                return KB_EXIT_FAIL;
        }
        if (r == -ETIMEDOUT) {
                cli_error("kernel '%s' did not answer inspect_request for '%s' within %d s", con->spec->name, name,
                          INSPECT_TIMEOUT_MS / 1000);
                return 0;
        }
        if (r < 0) {
                _cleanup_error_ kb_error *error = NULL;
                kb_client_error(kb_kernel_client(con->kernel), r, &error);
                cli_error("kernel '%s': %s", con->spec->name, kb_error_text(error, r));
                return KB_EXIT_FAIL;
        }
        if (!text) {
                fputs("Object '", stderr);
                cli_put_sanitized(stderr, name);
                fputs("' not found.\n", stderr);
                return 0;
        }
        return page(con, text, len);
}

/* The pages a cell's reply carries (IPython's `%magic?` and help inside a cell: execute_reply's
 * payload, source "page"), as jupyter console shows them. Returns 0 or KB_EXIT_FAIL (a signal). */
static int show_pages(console *con, json_object *reply) {
        json_object *payload = NULL;
        if (!reply || !json_object_object_get_ex(reply, "payload", &payload) ||
            !json_object_is_type(payload, json_type_array))
                return 0;
        for (size_t i = 0; i < json_object_array_length(payload); i++) {
                json_object *item = json_object_array_get_idx(payload, i), *data = NULL;
                const char *source = member_string(item, "source");
                size_t len = 0;
                if (!source || strcmp(source, "page") != 0 || !json_object_object_get_ex(item, "data", &data))
                        continue;
                char *text = cli_assist_bundle_text(con->kernel, data, &len);
                if (text && page(con, text, len))
                        return KB_EXIT_FAIL;
        }
        return 0;
}

/* Answers the kept input_request (input() in the cell) with a line read at its prompt, as
 * jupyter console does: a password prompt with echo off. Ctrl-C there interrupts the cell (SIGINT
 * through the pidfd) instead. Returns 0, or -1 when the console must end (the error said). */
static int answer_input(console *con) {
        json_object *req = con->input_request, *prompt = NULL, *password = NULL;
        con->input_request = NULL;
        json_object_object_get_ex(req, "prompt", &prompt);
        json_object_object_get_ex(req, "password", &password);
        bool secret = password && json_object_get_boolean(password);
        /* The prompt is the kernel's text: shown cleaned, on one line. */
        char *shown = NULL;
        size_t size = 0;
        FILE *m = open_memstream(&shown, &size);
        if (m) {
                const char *text =
                        prompt && json_object_is_type(prompt, json_type_string) ? json_object_get_string(prompt) : "";
                kb_sanitize_put(m, text, strlen(text), 400, KB_SANITIZE_MESSAGE);
                if (fclose(m) != 0) {
                        free(shown);
                        shown = NULL;
                }
        }
        json_object_put(req);
        fflush(stdout);
        char *line = NULL;
        size_t len = 0;
        int sig = 0;
        int r = cli_input_read(&con->input, shown ? shown : "", NULL, secret ? CLI_INPUT_SECRET : CLI_INPUT_ANSWER,
                               kb_kernel_pidfd(con->kernel), con->signal_fd, &line, &len, &sig);
        free(shown);
        if (r == CLI_INPUT_SIGNAL && sig == SIGINT) {
                fputs("^C\n", stdout);
                (void) kb_kernel_signal(con->kernel, SIGINT);
                return 0;
        }
        if (r == CLI_INPUT_KERNEL_DIED || r == CLI_INPUT_SIGNAL || r == CLI_INPUT_ERROR)
                return r == CLI_INPUT_KERNEL_DIED ? 0 : -1; /* the wait then sees the death */
        json_object *reply = json_object_new_object();
        json_object_object_add(
                reply, "value",
                json_object_new_string_len(r == CLI_INPUT_LINE ? line : "", r == CLI_INPUT_LINE ? (int) len : 0));
        free(line);
        _cleanup_free_ char *id = NULL;
        int s = kb_client_request_send(kb_kernel_client(con->kernel), KB_CHANNEL_STDIN, "input_reply", reply, &id);
        if (s < 0) {
                cli_error("kernel '%s': cannot answer input(): %s", con->spec->name, strerror(-s));
                return -1;
        }
        return 0;
}

/* Runs one cell to its end, forwarding Ctrl-C to the kernel as SIGINT through the pidfd.
 * Returns 0, or a KB_EXIT_* code that ends the console. */
static int run_cell(console *con, const char *code) {
        kb_client *client = kb_kernel_client(con->kernel);
        kb_execute_options eo = {.store_history = true, .stop_on_error = false, .allow_stdin = true};
        kb_execution *ex = NULL;
        int r = kb_client_execute_start(client, code, &eo, &ex);
        if (r < 0) {
                cli_error("kernel '%s': cannot send the cell: %s", con->spec->name, strerror(-r));
                return KB_EXIT_FAIL;
        }
        con->cell_id = ex->msg_id;
        int exit_code = 0;
        for (;;) {
                /* In slices, so that an input_request the hook kept is answered while the cell waits. */
                r = kb_client_execute_wait(client, ex, kb_now_ms() + INPUT_POLL_MS, on_iopub, con);
                if (r >= 0)
                        break;
                if (r == -ETIMEDOUT) {
                        if (con->input_request && answer_input(con) < 0) {
                                exit_code = KB_EXIT_FAIL;
                                break;
                        }
                        continue;
                }
                if (r == -ECANCELED) {
                        int sig = cli_drain_signals(con->signal_fd);
                        if (sig == SIGINT || sig == 0) {
                                int s = kb_kernel_signal(con->kernel, SIGINT);
                                if (s < 0 && s != -ESRCH)
                                        cli_error("kernel '%s': SIGINT through the pidfd failed: %s", con->spec->name,
                                                  strerror(-s));
                                else if (s == 0)
                                        fputs("\n^C: SIGINT sent to the kernel (PID 2) through its pidfd\n", stderr);
                                continue;
                        }
                        cli_error("kernel '%s': ending the console on signal %d", con->spec->name, sig);
                        exit_code = KB_EXIT_FAIL;
                } else if (r == -ESRCH) {
                        explain_death(con);
                        exit_code = KB_EXIT_FAIL;
                } else {
                        _cleanup_error_ kb_error *error = NULL;
                        kb_client_error(client, r, &error);
                        cli_error("kernel '%s': %s", con->spec->name, kb_error_text(error, r));
                        exit_code = KB_EXIT_FAIL;
                }
                break;
        }
        if (exit_code == 0) {
                if (ex->status && strcmp(ex->status, "ok") != 0 && strcmp(ex->status, "error") != 0) {
                        /* The kernel's word: redacted, and on its one line with nothing a
                         * terminal acts on. */
                        _cleanup_free_ char *status = kb_kernel_redact_text(con->kernel, ex->status);
                        fputs("[execute_reply status '", stderr);
                        if (status)
                                kb_sanitize_put(stderr, status, strlen(status), 200, KB_SANITIZE_MESSAGE);
                        fputs("']\n", stderr);
                }
                if (ex->execution_count >= 0)
                        con->next_count = ex->execution_count + 1;
                fflush(stdout);
                exit_code = show_pages(con, ex->reply);
        }
        con->cell_id = NULL;
        json_object_put(con->input_request);
        con->input_request = NULL;
        kb_execution_destroy(client, &ex);
        fflush(stdout);
        return exit_code;
}

static void print_banner(console *con, const char *team, bool allow_network) {
        json_object *info = kb_kernel_info(con->kernel);
        json_object *lang = NULL;
        json_object_object_get_ex(info, "language_info", &lang);
        kb_sandbox *sb = kb_kernel_sandbox(con->kernel);
        int verified = kb_sandbox_verify(sb);

        printf("kbound console: kernel %s (", con->spec->name);
        cli_put_sanitized(stdout, con->spec->display_name);
        fputs("), ", stdout);
        const char *implementation = member_string(info, "implementation");
        const char *implementation_version = member_string(info, "implementation_version");
        const char *language = member_string(lang, "name");
        const char *language_version = member_string(lang, "version");
        cli_put_sanitized(stdout, implementation ? implementation : "?");
        fputc(' ', stdout);
        cli_put_sanitized(stdout, implementation_version ? implementation_version : "");
        fputs(", ", stdout);
        cli_put_sanitized(stdout, language ? language : con->spec->language);
        fputc(' ', stdout);
        cli_put_sanitized(stdout, language_version ? language_version : "");
        fputc('\n', stdout);
        printf("  team:       %s\n", team);
        struct statfs ws;
        if (fstatfs(kb_kernel_workspace_fd(con->kernel), &ws) == 0 && ws.f_type == TMPFS_MAGIC)
                printf("  workspace:  %s in the sandbox, in memory (a tmpfs of %.1f MiB); copied to %s on the host "
                       "at the end with --keep, else gone with the sandbox\n",
                       KB_SANDBOX_WORKSPACE, (double) ws.f_blocks * (double) ws.f_bsize / (1024.0 * 1024.0),
                       kb_kernel_workspace(con->kernel));
        else
                printf("  workspace:  %s on the host, %s in the sandbox\n", kb_kernel_workspace(con->kernel),
                       KB_SANDBOX_WORKSPACE);
        printf("  process:    host pid %d, PID 2 in the sandbox's pid namespace, pinned by a pidfd (%s)\n",
               (int) kb_sandbox_kernel_pid(sb), verified == 0 ? "identity verified" : "IDENTITY NOT VERIFIED");
        if (allow_network)
                printf("  network:    NOT isolated: the host's network is shared (raw-network override)\n");
        else
                printf("  network:    isolated: a private network namespace with loopback (lo) only\n");
        if (con->rootfs)
                printf("  root:       image %s, read-only\n", con->rootfs);
        else
                printf("  root:       the host's system paths, read-only\n");
        printf("  Ctrl-C interrupts a running cell (SIGINT through the pidfd); Ctrl-D shuts the kernel down.\n");
        fflush(stdout);
}

/* The prompt loop. Returns the console's exit code. */
static int console_loop(console *con) {
        _cleanup_free_ char *cell = NULL;
        size_t cell_len = 0;
        char indent[64] = "";
        int exit_code = KB_EXIT_PASS;
        con->next_count = 1;
        char prompt[64] = "";
        for (;;) {
                /* The cell's lines after its first are prompted by "...: " under the end of its
                 * "In [n]: ", and start with the indent the kernel suggested, as typed. */
                if (cell_len == 0)
                        snprintf(prompt, sizeof prompt, "In [%lld]: ", (long long) con->next_count);
                else
                        snprintf(prompt, sizeof prompt, "%*s", (int) strlen(prompt), "...: ");
                char *line = NULL;
                size_t add = 0;
                int sig = 0;
                con->cell = cell;
                con->cell_len = cell_len;
                int r = cli_input_read(&con->input, prompt, indent, CLI_INPUT_CODE, kb_kernel_pidfd(con->kernel),
                                       con->signal_fd, &line, &add, &sig);
                if (r == CLI_INPUT_SIGNAL) {
                        if (sig == SIGINT) {
                                /* Ctrl-C at the prompt: forget the input so far. */
                                fputs("^C\n", stdout);
                                cell_len = 0;
                                indent[0] = '\0';
                                cli_input_discard(&con->input);
                                continue;
                        }
                        fputc('\n', stdout);
                        cli_error("kernel '%s': ending the console on signal %d", con->spec->name, sig);
                        exit_code = KB_EXIT_FAIL;
                        break;
                }
                if (r == CLI_INPUT_KERNEL_DIED) {
                        fputc('\n', stdout);
                        explain_death(con);
                        exit_code = KB_EXIT_FAIL;
                        break;
                }
                if (r == CLI_INPUT_ERROR) {
                        fputc('\n', stdout);
                        cli_error("console: cannot read the input: %s", strerror(con->input.lr.error));
                        exit_code = KB_EXIT_FAIL;
                        break;
                }
                if (r == CLI_INPUT_TOO_LONG) {
                        /* Running what fits would run code nobody typed whole: drop it, and the
                         * cell it belonged to, and go on. */
                        fputc('\n', stdout);
                        cli_error("console: input line over %d bytes: dropped, with the cell so far; "
                                  "nothing was sent to the kernel",
                                  CLI_INPUT_LINE_MAX);
                        cell_len = 0;
                        indent[0] = '\0';
                        continue;
                }
                if (r == CLI_INPUT_EOF) {
                        fputc('\n', stdout);
                        if (cell_len > 0) { /* an unfinished cell at the end of input still runs */
                                cli_input_remember(&con->input, cell, cell_len);
                                exit_code = run_cell(con, cell);
                        }
                        break;
                }
                /* A NUL byte would end the code for the kernel (a C string, or Python's "source
                 * code cannot contain null bytes"): the cell it ran would not be what was typed.
                 * Refuse it rather than escape it, since no escape means the same inside and
                 * outside a string literal. */
                const char *nul = memchr(line, '\0', add);
                if (nul) {
                        cli_error("console: input line has a NUL byte (at byte %zu): dropped, with the cell so far; "
                                  "nothing was sent to the kernel",
                                  (size_t) (nul - line) + 1);
                        free(line);
                        cell_len = 0;
                        indent[0] = '\0';
                        continue;
                }
                /* `name?` on a cell's first line asks the kernel about the name, as IPython's help. */
                size_t name_start = 0, name_end = 0;
                int detail = 0;
                if (cell_len == 0 && !memchr(line, '\n', add) &&
                    cli_help_request(line, add, &name_start, &name_end, &detail)) {
                        cli_input_remember(&con->input, line, add);
                        exit_code = inspect(con, line, name_start, name_end, detail);
                        free(line);
                        indent[0] = '\0';
                        if (exit_code)
                                break;
                        continue;
                }
                /* Append the line (with its newline) to the cell. */
                if (cell_len + add + 2 > CELL_MAX_BYTES) {
                        free(line);
                        cli_error("console: cell over %d bytes, dropped", CELL_MAX_BYTES);
                        cell_len = 0;
                        continue;
                }
                char *grown = realloc(cell, cell_len + add + 2);
                if (!grown) {
                        free(line);
                        exit_code = KB_EXIT_FAIL;
                        break;
                }
                cell = grown;
                memcpy(cell + cell_len, line, add);
                cell_len += add;
                cell[cell_len++] = '\n';
                cell[cell_len] = '\0';
                bool blank = strspn(line, " \t\r") == add;
                free(line);
                if (cell_len == 1 || (blank && cell_len == add + 1)) {
                        cell_len = 0; /* an empty line at the prompt is no cell */
                        continue;
                }
                /* Asked without the final newline, as IPython's own terminal does: then an indented
                 * block stays open until a blank line ends it. */
                cell[cell_len - 1] = '\0';
                const char *status = is_complete(con, cell, indent, sizeof(indent));
                cell[cell_len - 1] = '\n';
                if (!status) {
                        sig = cli_drain_signals(con->signal_fd);
                        if (sig == SIGINT || sig == 0) {
                                fputs("^C\n", stdout);
                                cell_len = 0;
                                indent[0] = '\0';
                                continue;
                        }
                        cli_error("kernel '%s': ending the console on signal %d", con->spec->name, sig);
                        exit_code = KB_EXIT_FAIL;
                        break;
                }
                if (strcmp(status, "incomplete") == 0)
                        continue;
                indent[0] = '\0';
                cli_input_remember(&con->input, cell, cell_len);
                exit_code = run_cell(con, cell);
                cell_len = 0;
                if (exit_code)
                        break;
        }
        return exit_code;
}

static const cli_command console_command = {
        .name = "console",
        .accepts =
                (const char *const[]){
                        "kernel",
                        "team",
                        "rootfs",
                        "timeout",
                        CLI_ACCEPTS_SANDBOX,
                        "allow-raw-network",
                        CLI_ACCEPTS_LIMITS,
                        "keep",
                        "transcript",
                        "quiet",
                        "help",
                        NULL,
                },
        .intro = "Usage: kbound console --kernel NAME|PATH [OPTIONS]\n\n"
                 "Starts the kernel in its team sandbox and gives a prompt to it, as jupyter console does: one\n"
                 "line is one cell, or more while the kernel says the code is incomplete, the next line starting\n"
                 "with the kernel's indent; Tab completes by the kernel, NAME? and NAME?? show what it knows\n"
                 "of NAME (paged); a cell is one history entry (Up, Ctrl-R). Ctrl-C interrupts a running cell\n"
                 "(SIGINT through the pidfd pinned to the kernel, PID 2 in the sandbox) or clears the input;\n"
                 "Ctrl-D shuts the kernel down and removes the team folders. stdin may be a file or a pipe\n"
                 "(scripted audits). Kernel output is shown with terminal control sequences removed.\n",
        .epilogue = "Exit codes: 0 after Ctrl-D (end of input), 1 the kernel died or a signal ended the console,\n"
                    "2 usage, 3 the kernel could not be started in the sandbox.\n",
        .team = "console",
};

int cmd_console(int argc, char **argv) {
        cli_opts o;
        int r = cli_opts_parse_one(&o, &console_command, argc, argv, NULL, NULL);
        if (r != CLI_GO_ON)
                return r;
        cli_single s;
        console con = {.is_complete_works = true, .complete_works = true, .signal_fd = -1};
        int exit_code = cli_single_prepare(&s, "console", &o, true);
        if (!exit_code) {
                con.spec = s.spec;
                con.rootfs = s.root.image ? kb_image_path(s.root.image) : s.root.rootfs;
                con.signal_fd = cli_signals_install();
                if (con.signal_fd < 0) {
                        cli_error("console: cannot install the signal handlers: %s", strerror(errno));
                        exit_code = KB_EXIT_ENFORCE;
                }
        }
        if (!exit_code) {
                /* The console's hook first (input_request), then the transcript's. */
                con.on_msg = s.on_msg;
                con.on_msg_userdata = s.on_msg_userdata;
                s.on_msg = on_msg;
                s.on_msg_userdata = &con;
                exit_code = cli_single_start(&s, con.signal_fd);
        }
        if (!exit_code) {
                con.kernel = s.kernel;
                print_banner(&con, o.team, s.allow_network);
                cli_input_open(&con.input, true);
                cli_input_set_completion(&con.input, complete_line, &con);
                exit_code = console_loop(&con);
                cli_input_close(&con.input);
                if (kb_kernel_alive(con.kernel)) {
                        int status = 0;
                        /* shutdown_request first (a clean exit), then the sandbox is stopped. */
                        cli_drain_signals(con.signal_fd);
                        kb_kernel_stop(con.kernel, STOP_GRACE_MS, kb_now_ms() + STOP_GRACE_MS + 5000, &status);
                }
        }
        return cli_single_end(&s, exit_code);
}
