/* cmd_run.c: `kbound run`: one cell in one kernel, sandboxed unless told otherwise. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <kbound/kernel.h>
#include "cli.h"

/* What run's own options say (--sandbox, --raw). */
typedef struct run_flags {
        bool sandbox, raw;
} run_flags;

/* Writes len bytes of kernel output. By default nothing a terminal would act on goes through
 * (kb_sanitize_put's terminal mode: escape sequences, controls but newline and tab, bidi
 * overrides), whether or not out is a terminal: a log shown later in one obeys them as well. With
 * --raw the bytes go as sent, but each NUL as U+2400 (␀): whoever reads the output as C strings
 * would stop at a NUL, and a kernel could hide the rest behind one. */
static void put_output(FILE *out, const char *s, size_t len, bool raw) {
        if (!raw) {
                cli_put_sanitized_len(out, s, len);
                return;
        }
        const char *end = s + len;
        while (s < end) {
                const char *nul = memchr(s, '\0', (size_t) (end - s));
                fwrite(s, 1, nul ? (size_t) (nul - s) : (size_t) (end - s), out);
                if (!nul)
                        break;
                fputs("\xe2\x90\x80", out);
                s = nul + 1;
        }
}

static void print_outputs(const kb_execution *ex, bool raw) {
        size_t n = json_object_array_length(ex->outputs);
        for (size_t i = 0; i < n; i++) {
                json_object *out = json_object_array_get_idx(ex->outputs, i);
                json_object *data = NULL, *text = NULL;
                if (!json_object_object_get_ex(out, "data", &data))
                        continue;
                if (json_object_object_get_ex(data, "text/plain", &text) &&
                    json_object_is_type(text, json_type_string)) {
                        put_output(stdout, json_object_get_string(text), (size_t) json_object_get_string_len(text),
                                   raw);
                        fputc('\n', stdout);
                } else {
                        /* Name what could not be shown as text rather than hide it. */
                        json_object_object_foreach(data, mime, value) {
                                (void) value;
                                fputc('[', stdout);
                                cli_put_sanitized(stdout, mime);
                                fputs(" output]\n", stdout);
                        }
                }
        }
}

/* --sandbox on|off and --raw into userdata (run_flags). */
static int take_flag(void *userdata, int c, const char *arg) {
        run_flags *f = userdata;
        if (c == 'r') {
                f->raw = true;
                return 0;
        }
        if (strcmp(arg, "on") != 0 && strcmp(arg, "off") != 0) {
                cli_error("run: --sandbox takes on or off, not '%s'", arg);
                return KB_EXIT_USAGE;
        }
        f->sandbox = strcmp(arg, "on") == 0;
        return 0;
}

static const cli_command run_command = {
        .name = "run",
        .accepts =
                (const char *const[]){
                        "kernel",
                        "sandbox",
                        "raw",
                        "timeout",
                        "team",
                        CLI_ACCEPTS_SANDBOX,
                        "allow-raw-network",
                        CLI_ACCEPTS_LIMITS,
                        "rootfs",
                        "keep",
                        "transcript",
                        "quiet",
                        "help",
                        NULL,
                },
        .own =
                (const struct option[]){
                        {"sandbox", required_argument, NULL, 's'},
                        {"raw", no_argument, NULL, 'r'},
                        {0},
                },
        .own_help =
                (const cli_help[]){
                        {"sandbox", "--sandbox on|off", "off is for protocol debugging only (default on)"},
                        {"raw", "--raw",
                         "print the cell's output as the kernel sent it, terminal controls and\n"
                         "all (by default they are dropped)"},
                        {0},
                },
        .intro = "Usage: kbound run --kernel NAME|PATH [OPTIONS] CODE\n\n"
                 "Starts the kernel (in bubblewrap unless --sandbox off), runs CODE as one cell, prints its\n"
                 "stdout, stderr and results, and exits 0 if the cell succeeded, 1 if it raised.\n",
        .team = "run",
        .operand = "CODE",
        .take = take_flag,
};

/* The traceback of a cell that raised, on stderr as a frontend shows it (jupyter console prints
 * each error message's traceback lines): from iopub's error messages, else the reply's. Kernel
 * text, so cleaned of terminal controls unless raw (ipykernel colours it with escape codes). */
static void print_traceback(const kb_execution *ex, bool raw) {
        json_object *errors = ex->errors;
        json_object *from_reply = json_object_new_array();
        if (from_reply && (!errors || json_object_array_length(errors) == 0) && ex->reply) {
                json_object_array_add(from_reply, json_object_get(ex->reply));
                errors = from_reply;
        }
        for (size_t i = 0; errors && i < json_object_array_length(errors); i++) {
                json_object *tb = NULL;
                json_object *err = json_object_array_get_idx(errors, i);
                if (!json_object_is_type(err, json_type_object) || !json_object_object_get_ex(err, "traceback", &tb) ||
                    !json_object_is_type(tb, json_type_array))
                        continue;
                for (size_t j = 0; j < json_object_array_length(tb); j++) {
                        json_object *line = json_object_array_get_idx(tb, j);
                        if (!json_object_is_type(line, json_type_string))
                                continue;
                        size_t len = (size_t) json_object_get_string_len(line);
                        put_output(stderr, json_object_get_string(line), len, raw);
                        if (len == 0 || json_object_get_string(line)[len - 1] != '\n')
                                fputc('\n', stderr);
                }
        }
        json_object_put(from_reply);
}

/* Runs code as one cell of s's kernel and prints what it produced; returns the exit code. The
 * execution is left in *ret_ex for the caller to destroy. */
static int run_cell(cli_single *s, const char *code, bool raw, kb_execution **ret_ex) {
        int exit_code;
        kb_execute_options eo = {.store_history = true, .stop_on_error = true};
        kb_execution *ex = NULL;
        int r = kb_client_execute_start(kb_kernel_client(s->kernel), code, &eo, &ex);
        *ret_ex = ex; /* the caller destroys it */
        if (r >= 0)
                r = kb_client_execute_wait(kb_kernel_client(s->kernel), ex, kb_now_ms() + s->opts->timeout_ms, NULL,
                                           NULL);
        if (r < 0) {
                if (r == -ESRCH) {
                        char *death = kb_kernel_death_diagnosis(s->kernel, 400, kb_now_ms() + 1000);
                        cli_error("kernel '%s': died while running the cell: %s", s->spec->name,
                                  death ? death : "the kernel process died");
                        free(death);
                } else if (r == -ETIMEDOUT && ex) {
                        char why[256];
                        kb_execution_explain_timeout(kb_kernel_client(s->kernel), ex, why, sizeof(why));
                        cli_error("kernel '%s': the cell did not complete within %.1f s: %s", s->spec->name,
                                  s->opts->timeout_ms / 1000.0, why);
                } else if (r == -ECANCELED) {
                        cli_error("kernel '%s': cancelled by signal %d", s->spec->name, cli_signal_received());
                } else {
                        _cleanup_error_ kb_error *error = NULL;
                        kb_client_error(kb_kernel_client(s->kernel), r, &error);
                        cli_error("kernel '%s': %s", s->spec->name, kb_error_text(error, r));
                }
                return KB_EXIT_FAIL;
        }
        /* The cell can read its connection file: what it printed is shown without the key. */
        if (kb_kernel_redact_execution(s->kernel, ex) < 0) {
                cli_error("kernel '%s': out of memory while redacting the cell's output", s->spec->name);
                return KB_EXIT_FAIL;
        }
        if (ex->stdout_text)
                put_output(stdout, ex->stdout_text, ex->stdout_len, raw);
        print_outputs(ex, raw);
        fflush(stdout);
        if (ex->stderr_text)
                put_output(stderr, ex->stderr_text, ex->stderr_len, raw);
        if (ex->outputs_truncated) {
                cli_error("kernel '%s': the cell's rich output went past kbound's %d MiB limit and the rest was "
                          "dropped (execute_reply status '%s')",
                          s->spec->name, KB_EXECUTION_OUTPUTS_MAX >> 20, ex->status);
                exit_code = KB_EXIT_FAIL;
        } else if (ex->text_truncated) {
                /* What was printed is not all the cell produced: say so, and do not call it a
                 * success whatever the reply said. */
                cli_error("kernel '%s': the cell's output went past kbound's %d MiB limit per stream and was "
                          "cut (execute_reply status '%s')",
                          s->spec->name, KB_EXECUTION_TEXT_MAX >> 20, ex->status);
                exit_code = KB_EXIT_FAIL;
        } else if (strcmp(ex->status, "ok") == 0) {
                exit_code = KB_EXIT_PASS;
        } else {
                if (strcmp(ex->status, "error") == 0)
                        print_traceback(ex, raw);
                if (strcmp(ex->status, "error") == 0)
                        cli_error("kernel '%s': the cell raised %s: %s", s->spec->name,
                                  ex->ename ? ex->ename : "an error", ex->evalue ? ex->evalue : "");
                else
                        cli_error("kernel '%s': execute_reply status '%s'", s->spec->name, ex->status);
                exit_code = KB_EXIT_FAIL;
        }
        return exit_code;
}

int cmd_run(int argc, char **argv) {
        cli_opts o;
        run_flags flags = {.sandbox = true};
        const char *code = NULL;
        int r = cli_opts_parse_one(&o, &run_command, argc, argv, &flags, &code);
        if (r != CLI_GO_ON)
                return r;
        cli_single s;
        kb_execution *ex = NULL;
        int exit_code = cli_single_prepare(&s, "run", &o, flags.sandbox);
        if (!exit_code)
                exit_code = cli_single_start(&s, cli_signals_install());
        if (!exit_code)
                exit_code = run_cell(&s, code, flags.raw, &ex);
        if (s.kernel)
                kb_execution_destroy(kb_kernel_client(s.kernel), &ex);
        return cli_single_end(&s, exit_code);
}
