/* cmd_run.c: `kbound run`: one cell in one kernel, sandboxed unless told otherwise. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <kbound/kernel.h>
#include "cli.h"

/* Writes len bytes of kernel output as they are, but each NUL byte as U+2400 (␀): whoever reads
 * the output as C strings (a terminal log, a grep) would stop at a NUL, and a kernel could hide
 * the rest from the auditor behind one. */
static void put_output(FILE *out, const char *s, size_t len) {
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

static void print_outputs(const kb_execution *ex) {
        size_t n = json_object_array_length(ex->outputs);
        for (size_t i = 0; i < n; i++) {
                json_object *out = json_object_array_get_idx(ex->outputs, i);
                json_object *data = NULL, *text = NULL;
                if (!json_object_object_get_ex(out, "data", &data))
                        continue;
                if (json_object_object_get_ex(data, "text/plain", &text) &&
                    json_object_is_type(text, json_type_string)) {
                        put_output(stdout, json_object_get_string(text), (size_t) json_object_get_string_len(text));
                        fputc('\n', stdout);
                } else {
                        /* Name what could not be shown as text rather than hide it. */
                        json_object_object_foreach(data, mime, value) {
                                (void) value;
                                printf("[%s output]\n", mime);
                        }
                }
        }
}

/* --sandbox on|off into userdata (a bool). */
static int take_sandbox(void *userdata, int c, const char *arg) {
        if (strcmp(arg, "on") != 0 && strcmp(arg, "off") != 0) {
                cli_error("run: --sandbox takes on or off, not '%s'", arg);
                return KB_EXIT_USAGE;
        }
        *(bool *) userdata = strcmp(arg, "on") == 0;
        return 0;
}

static const cli_command run_command = {
        .name = "run",
        .accepts =
                (const char *const[]){
                        "kernel",
                        "sandbox",
                        "timeout",
                        "team",
                        "bwrap",
                        "sandbox-user",
                        "sockets",
                        "allow-syscall",
                        "allow-raw-network",
                        "ro-bind",
                        "image",
                        "image-max-size",
                        "prefix",
                        "rootfs",
                        "keep",
                        "transcript",
                        "help",
                        NULL,
                },
        .own =
                (const struct option[]){
                        {"sandbox", required_argument, NULL, 's'},
                        {0},
                },
        .own_help =
                (const cli_help[]){
                        {"sandbox", "--sandbox on|off", "off is for protocol debugging only (default on)"},
                        {0},
                },
        .intro = "Usage: kbound run --kernel NAME|PATH [OPTIONS] CODE\n\n"
                 "Starts the kernel (in bubblewrap unless --sandbox off), runs CODE as one cell, prints its\n"
                 "stdout, stderr and results, and exits 0 if the cell succeeded, 1 if it raised.\n",
        .team = "run",
        .operand = "CODE",
        .take = take_sandbox,
};

int cmd_run(int argc, char **argv) {
        cli_opts o;
        bool sandbox = true;
        const char *code = NULL;
        int r = cli_opts_parse_one(&o, &run_command, argc, argv, &sandbox, &code);
        if (r != CLI_GO_ON)
                return r;
        const char *kernel_name = o.kernels[0], *team = o.team, *transcript_path = o.transcript;
        const char *rootfs_opt = o.rootfs, *image_opt = o.image;
        bool allow_network = o.allow_network, keep = o.keep;
        long timeout_ms = o.timeout_ms;
        r = cli_sandbox_env(&allow_network);
        if (r)
                return r;
        kb_sandbox_user sandbox_user;
        if ((r = cli_sandbox_user("run", o.sandbox_user, &sandbox_user)))
                return r;

        if ((rootfs_opt || image_opt) && !sandbox) {
                cli_error("run: %s needs the sandbox (an image's programs only run with the image as root)",
                          rootfs_opt ? "--rootfs" : "--image");
                return KB_EXIT_USAGE;
        }

        kb_kernelspec *spec = NULL;
        char *bwrap = NULL, *bwrap_version = NULL, *base = NULL;
        kb_sandbox_hardening hardening;
        cli_root root = {.root_fd = -1,
                         .ro_paths = o.ro_paths,
                         .prefixes = o.prefixes,
                         .allow_network = allow_network,
                         .sandbox = sandbox,
                         .user = &sandbox_user};
        kb_kernel *kernel = NULL;
        kb_execution *ex = NULL;
        kb_transcript *transcript = NULL;
        kb_transcript_source *source = NULL;
        kb_client_msg_fn on_msg = NULL;
        void *on_msg_userdata = NULL;
        int exit_code = KB_EXIT_ENFORCE;

        if ((r = cli_root_open("run", rootfs_opt, image_opt, o.image_max, &base, &root)) ||
            (r = cli_find_kernel(kernel_name, &root, &spec)) || (r = cli_fds_check("run", 1))) {
                exit_code = r;
                goto out;
        }
        if ((r = cli_transcript_open(transcript_path, &transcript)) ||
            (r = cli_transcript_source(transcript, spec->name, team, &source, &on_msg, &on_msg_userdata))) {
                exit_code = r;
                goto out;
        }
        if (sandbox && cli_find_bwrap_version(o.bwrap, &bwrap, &bwrap_version))
                goto out;
        if ((r = cli_hardening("run", &o.hardening, allow_network, bwrap_version, &hardening))) {
                exit_code = r;
                goto out;
        }
        if (!base && cli_make_base_dir(&sandbox_user, &base))
                goto out;

        kb_kernel_options ko = cli_kernel_options(&root, spec, team, base, bwrap, &hardening);
        ko.on_msg = on_msg;
        ko.on_msg_userdata = on_msg_userdata;
        ko.cancel_fd = cli_signals_install();
        ko.deadline_ms = kb_now_ms() + timeout_ms;
        if ((r = cli_kernel_start(&ko, &root, timeout_ms, &kernel))) {
                exit_code = r;
                goto out;
        }
        kb_execute_options eo = {.store_history = true, .stop_on_error = true};
        r = kb_client_execute_start(kb_kernel_client(kernel), code, &eo, &ex);
        if (r >= 0)
                r = kb_client_execute_wait(kb_kernel_client(kernel), ex, kb_now_ms() + timeout_ms, NULL, NULL);
        if (r < 0) {
                if (r == -ESRCH) {
                        char *death = kb_kernel_death_diagnosis(kernel, 400, kb_now_ms() + 1000);
                        cli_error("kernel '%s': died while running the cell: %s", spec->name,
                                  death ? death : "the kernel process died");
                        free(death);
                } else if (r == -ETIMEDOUT && ex) {
                        char why[256];
                        kb_execution_explain_timeout(kb_kernel_client(kernel), ex, why, sizeof(why));
                        cli_error("kernel '%s': the cell did not complete within %.1f s: %s", spec->name,
                                  timeout_ms / 1000.0, why);
                } else if (r == -ECANCELED) {
                        cli_error("kernel '%s': cancelled by signal %d", spec->name, cli_signal_received());
                } else {
                        char why[256];
                        kb_client_explain_error(kb_kernel_client(kernel), why, sizeof(why));
                        cli_error("kernel '%s': %s", spec->name, why);
                }
                exit_code = KB_EXIT_FAIL;
                goto out;
        }
        /* The cell can read its connection file: what it printed is shown without the key. */
        if (kb_kernel_redact_execution(kernel, ex) < 0) {
                cli_error("kernel '%s': out of memory while redacting the cell's output", spec->name);
                exit_code = KB_EXIT_FAIL;
                goto out;
        }
        if (ex->stdout_text)
                put_output(stdout, ex->stdout_text, ex->stdout_len);
        print_outputs(ex);
        fflush(stdout);
        if (ex->stderr_text)
                put_output(stderr, ex->stderr_text, ex->stderr_len);
        if (ex->outputs_truncated) {
                cli_error("kernel '%s': the cell's rich output went past kbound's %d MiB limit and the rest was "
                          "dropped (execute_reply status '%s')",
                          spec->name, KB_EXECUTION_OUTPUTS_MAX >> 20, ex->status);
                exit_code = KB_EXIT_FAIL;
        } else if (ex->text_truncated) {
                /* What was printed is not all the cell produced: say so, and do not call it a
                 * success whatever the reply said. */
                cli_error("kernel '%s': the cell's output went past kbound's %d MiB limit per stream and was "
                          "cut (execute_reply status '%s')",
                          spec->name, KB_EXECUTION_TEXT_MAX >> 20, ex->status);
                exit_code = KB_EXIT_FAIL;
        } else if (strcmp(ex->status, "ok") == 0) {
                exit_code = KB_EXIT_PASS;
        } else {
                if (strcmp(ex->status, "error") == 0)
                        cli_error("kernel '%s': the cell raised %s: %s", spec->name, ex->ename ? ex->ename : "an error",
                                  ex->evalue ? ex->evalue : "");
                else
                        cli_error("kernel '%s': execute_reply status '%s'", spec->name, ex->status);
                exit_code = KB_EXIT_FAIL;
        }
out:
        if (kernel)
                kb_execution_destroy(kb_kernel_client(kernel), &ex);
        kb_kernel_destroy(&kernel, keep);
        kb_transcript_source_destroy(&source);
        if (cli_transcript_close(&transcript, transcript_path) && !exit_code)
                exit_code = KB_EXIT_FAIL;
        cli_root_close(&root);
        if (base) {
                if (keep)
                        cli_keep_base_dir(base);
                else
                        kb_remove_tree(base);
        }
        free(base);
        free(bwrap);
        free(bwrap_version);
        kb_kernelspec_destroy(&spec);
        return exit_code;
}
