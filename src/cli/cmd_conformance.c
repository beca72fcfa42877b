/* cmd_conformance.c: `kbound conformance`: does each kernel speak the Jupyter protocol as
 * specified, inside the same sandbox check uses? Item by item, with known deviations named. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <kbound/conformance.h>
#include <kbound/kernel.h>
#include <kbound/report.h>
#include <kbound/run.h>
#include <kbound/sandbox.h>
#include "cli.h"

static int take_allow_untested(void *userdata, int c, const char *arg) {
        *(bool *) userdata = true; /* --allow-untested, its only option */
        return 0;
}

static const cli_command conformance_command = {
        .name = "conformance",
        .accepts =
                (const char *const[]){
                        CLI_ACCEPTS_REPORTED,
                        CLI_ACCEPTS_SANDBOX,
                        "kernels-dir",
                        CLI_ACCEPTS_LIMITS,
                        "rootfs",
                        "timeout",
                        "transcript",
                        "allow-untested",
                        "keep",
                        CLI_ACCEPTS_OUTPUT,
                        NULL,
                },
        .own =
                (const struct option[]){
                        {"allow-untested", no_argument, NULL, 'A'},
                        {0},
                },
        .own_help =
                (const cli_help[]){
                        {"allow-untested", "--allow-untested", "accept untested items (the summary still names them)"},
                        {0},
                },
        .intro = "Usage: kbound conformance [OPTIONS]\n\n"
                 "Starts each kernel in its own team sandbox (bubblewrap) and tests its protocol conformance:\n"
                 "kernel_info fields, busy → execute_input → outputs → idle with correct parents, the shape of\n"
                 "every message (the messaging spec's fields and types), stdout and stderr streams,\n"
                 "execute_result, display_data and its updates, clear_output, pager payloads, error replies,\n"
                 "execution_count, silent requests, stdin (input_request answered), is_complete, complete,\n"
                 "inspect, history (tail, range, search, with output), comms and comm_info, interrupts (idle,\n"
                 "busy via control and via the pidfd), debug and subshells when claimed, and shutdown: at least\n"
                 "what jupyter_kernel_test covers. Code snippets and known deviations come from\n"
                 "kernels/<language>/. Each item is pass, fail, deviation (known for this implementation, and\n"
                 "every problem it showed listed), unsupported (an optional feature the kernel neither claims\n"
                 "nor answers, or an interrupt_request a kernelspec in signal mode may ignore) or untested (no\n"
                 "language pack or snippet for it).\n",
        .epilogue = "Exit codes: 0 every item passed or is a known deviation (untested items only with\n"
                    "--allow-untested), 1 an item failed or went untested (or the run was cut short), 2 usage,\n"
                    "3 the sandbox cannot be enforced or a kernel cannot be found (see `kbound doctor`).\n",
        .team = "kbound-conf",
        .take = take_allow_untested,
};

int cmd_conformance(int argc, char **argv) {
        cli_opts o;
        bool allow_untested = false;
        int r = cli_opts_parse_many(&o, &conformance_command, argc, argv, &allow_untested);
        if (r != CLI_GO_ON)
                return r;
        cli_setup setup;
        r = cli_setup_begin(&setup, &o, argc, argv, false);
        if (r)
                return r;
        kb_transcript *transcript = NULL;
        json_object *run = NULL;
        kb_run *kernels_run = NULL;
        bool transcript_failed = false;
        int exit_code = cli_setup_kernels(&setup, &o);
        if (exit_code)
                goto out;
        exit_code = KB_EXIT_ENFORCE;
        size_t n_kernels = setup.n_kernels;
        if ((r = cli_transcript_open(o.transcript, &transcript))) {
                exit_code = r;
                goto out;
        }
        cli_progress("testing protocol conformance of %zu kernel(s) with %s %s", n_kernels, setup.bwrap,
                     setup.bwrap_version);

        kb_conformance_env env = {.harness = cli_harness_env(&setup, &o, setup.started_ms + o.timeout_ms)};
        exit_code = cli_run_kernels(&setup, &o, NULL, &env, &transcript, &kernels_run, &transcript_failed);
        if (exit_code)
                goto out;

        /* The report: the same run object as check's, marked as a conformance run. Conformance
         * claims no boundary: the network stays unshared, but nothing about it is tested. */
        json_object *sandbox = kb_run_sandbox_new(setup.bwrap, setup.bwrap_version);
        if (sandbox) {
                json_object_object_add(sandbox, "base_dir", o.keep ? json_object_new_string(setup.base) : NULL);
                cli_root_report(&setup.root, sandbox);
        }
        kb_run_facts facts = cli_run_facts(&setup, &o, KB_RUN_CONFORMANCE, transcript_failed, sandbox);
        facts.allow_untested = allow_untested;
        (void) cli_setup_output(&setup, kernels_run, &facts, false, &run,
                                &exit_code); /* says why when there is no report */

out:
        if (!run && exit_code)
                cli_setup_refused(&setup, KB_RUN_CONFORMANCE, exit_code);
        kb_run_destroy(&kernels_run);
        kb_transcript_close(&transcript);
        cli_setup_end(&setup, o.keep);
        json_object_put(run);
        return exit_code;
}
