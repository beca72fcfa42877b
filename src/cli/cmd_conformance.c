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

#define MAX_KERNELS CLI_KERNELS_MAX

static void conformance_usage(FILE *out) {
        fputs("Usage: kbound conformance [OPTIONS]\n\n"
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
              "language pack or snippet for it).\n\n"
              "  --kernel NAME|PATH      a kernelspec to test (repeatable; default: python3 and ir)\n"
              "  --team NAME             prefix of the team names (default kbound-conf)\n"
              "  --json FILE             write the JSON report (docs/report-format.md, \"kind\": \"conformance\")\n"
              "  --junit FILE            write a JUnit XML report (one testcase per kernel x item)\n"
              "  --bwrap PATH            bubblewrap to use (default: $KBOUND_BWRAP, else PATH)\n"
              "  --sandbox-user NAME     when kbound is root, run kernels as NAME (default: $KBOUND_SANDBOX_USER,\n"
              "                          else kbound-sandbox, else nobody); never root\n"
              "  --sockets MODE          socket families kernels may create: default (unix, netlink),\n"
              "                          unix, or inet (also IP; the default under the network override)\n"
              "  --allow-syscall NAME    leave one call of the seccomp filter allowed (repeatable;\n"
              "                          reported as not claimed; docs/seccomp.md)\n"
              "  --kernels-dir DIR       language packs (default: the installed kernels/ folder)\n"
              "  --ro-bind PATH          also bind PATH read-only into every sandbox (repeatable)\n"
              "  --image PATH[:TAG]      an OCI image layout folder, or a docker/OCI archive (docker save,\n"
              "                          podman save): unpacked for the run, then used as --rootfs\n"
              "  --image-max-size SIZE   the most the unpacked image may take on disk (default 8G)\n"
              "  --prefix DIR            also find kernelspecs in DIR/share/jupyter/kernels (a venv's or\n"
              "                          conda env's sys.prefix; inside the image with --rootfs/--image)\n"
              "  --rootfs DIR            test kernels of an unpacked image (its /usr, /etc, /opt read-only;\n"
              "                          kernelspecs found inside it; default: every kernelspec of the image)\n"
              "  --timeout SECONDS       deadline for the whole run (default 300)\n"
              "  --transcript FILE       write every message sent and received as JSON lines (0600)\n"
              "  --allow-untested        accept untested items (the summary still names them)\n"
              "  --keep                  keep the team folders for inspection\n"
              "  --quiet                 no progress on stderr\n\n"
              "Exit codes: 0 every item passed or is a known deviation (untested items only with\n"
              "--allow-untested), 1 an item failed or went untested (or the run was cut short), 2 usage,\n"
              "3 the sandbox cannot be enforced or a kernel cannot be found (see `kbound doctor`).\n",
              out);
}

static void log_to_stderr(void *userdata, int level, const char *message) {
        cli_progress("%s", message);
}

int cmd_conformance(int argc, char **argv) {
        static const struct option own[] = {
                { "allow-untested", no_argument, NULL, 'A' },
                {},
        };
        static const char *const accepts[] = {
                "kernel", "team", "json", "junit", "bwrap", "sandbox-user", "sockets", "allow-syscall",
                "kernels-dir", "ro-bind", "timeout", "transcript", "rootfs", "image", "image-max-size",
                "prefix", "keep", "allow-untested", "quiet", "help", NULL,
        };
        cli_opts o;
        if (cli_opts_init(&o, "conformance", accepts, own) < 0)
                return KB_EXIT_USAGE;
        o.kernels_max = MAX_KERNELS;
        o.team = "kbound-conf";
        o.team_max = CLI_TEAM_PREFIX_MAX;
        o.timeout_ms = 300000;
        kb_sandbox_hardening hardening;
        bool allow_untested = false, unused_raw_network = false;
        int c;
        while ((c = cli_opts_next(&o, argc, argv, "k:qh")) != -1) {
                switch (c) {
                case 'A':
                        allow_untested = true;
                        break;
                case CLI_OPTS_REFUSED:
                        return KB_EXIT_USAGE;
                case 'h':
                        conformance_usage(stdout);
                        return 0;
                default:
                        conformance_usage(stderr);
                        return KB_EXIT_USAGE;
                }
        }
        const char **kernel_names = o.kernels;
        size_t n_kernels = o.n_kernels;
        const char *team = o.team, *transcript_path = o.transcript, *rootfs_opt = o.rootfs, *image_opt = o.image;
        bool keep = o.keep;
        long timeout_ms = o.timeout_ms;
        if (optind < argc) {
                cli_error("conformance: unexpected argument '%s'", argv[optind]);
                return KB_EXIT_USAGE;
        }
        /* Every output path is checked before anything is started or created. */
        cli_report reports[] = {
                { .option = "--json", .path = o.json_path, .render = kb_report_json },
                { .option = "--junit", .path = o.junit_path, .render = kb_report_junit },
        };
        bool summary_to_stderr = false;
        if (cli_reports_check("conformance", reports, KB_ELEMENTSOF(reports), transcript_path, &summary_to_stderr))
                return KB_EXIT_USAGE;
        /* Only "enforce" exists; the raw-network override claims nothing here (the kernels run
         * without a network either way), so it is accepted and has no effect. */
        int r = cli_sandbox_env(&unused_raw_network);
        if (r)
                return r;
        kb_sandbox_user sandbox_user;
        if ((r = cli_sandbox_user("conformance", o.sandbox_user, &sandbox_user)))
                return r;
        if (n_kernels == 0 && !rootfs_opt && !image_opt) {
                kernel_names[n_kernels++] = "python3";
                kernel_names[n_kernels++] = "ir";
        }
        int64_t started = kb_now_ms();
        int exit_code = KB_EXIT_ENFORCE;
        kb_kernelspec *specs[MAX_KERNELS] = { 0 };
        char *bwrap = NULL, *bwrap_version = NULL, *kernels_dir = NULL, *base = NULL;
        kb_transcript *transcript = NULL;
        json_object *run = NULL;
        kb_run *kernels_run = NULL;
        char started_at[32];
        if (kb_iso_time_now(0, started_at, sizeof(started_at)) < 0)
                started_at[0] = '\0'; /* no clock: the report says "" */
        bool transcript_failed = false;
        cli_root root = { .root_fd = -1, .ro_paths = o.ro_paths, .prefixes = o.prefixes, .sandbox = true,
                          .user = &sandbox_user };
        char **image_kernels = NULL;

        if ((exit_code = cli_root_open("conformance", rootfs_opt, image_opt, o.image_max, &base, &root)))
                goto out;
        const char *rootfs = root.rootfs;
        exit_code = KB_EXIT_ENFORCE;
        r = cli_find_kernels(&root, kernel_names, &n_kernels, MAX_KERNELS, &image_kernels, specs);
        if (r || (r = cli_fds_check("conformance", n_kernels))) {
                exit_code = r;
                goto out;
        }
        if (cli_find_bwrap_version(o.bwrap, &bwrap, &bwrap_version))
                goto out;
        if ((r = cli_hardening("conformance", &o.hardening, false, bwrap_version, &hardening))) {
                exit_code = r;
                goto out;
        }
        if (cli_resolve_kernels_dir(o.kernels_dir, &kernels_dir) ||
            (!base && cli_make_base_dir(&sandbox_user, &base)))
                goto out;
        if ((r = cli_transcript_open(transcript_path, &transcript))) {
                exit_code = r;
                goto out;
        }
        cli_progress("testing protocol conformance of %zu kernel(s) with %s %s", n_kernels, bwrap, bwrap_version);

        kb_conformance_env env = {
                .kernels_dir = kernels_dir,
                .base_dir = base,
                .bwrap = bwrap,
                .ro_paths = o.ro_paths,
                .rootfs = rootfs,
                .host_env = environ,
                .user = &sandbox_user,
                .hardening = &hardening,
                .cancel_fd = cli_signals_install(),
                .deadline_ms = started + timeout_ms,
                .keep = keep,
                .log = log_to_stderr,
        };
        if (kb_run_new(team, specs, n_kernels, transcript, &kernels_run) < 0) {
                cli_error("out of memory");
                exit_code = KB_EXIT_FAIL;
                goto out;
        }
        size_t failed = 0;
        r = kb_run_conformance(kernels_run, &env, &failed);
        cli_run_started(r, specs, failed);
        if (cli_transcript_close(&transcript, transcript_path))
                transcript_failed = true;

        /* The report: the same run object as check's, marked as a conformance run. Conformance
         * claims no boundary: the network stays unshared, but nothing about it is tested. */
        json_object *sandbox = kb_run_sandbox_new(bwrap, bwrap_version);
        if (sandbox) {
                json_object_object_add(sandbox, "base_dir", keep ? json_object_new_string(base) : NULL);
                cli_root_report(&root, sandbox);
        }
        cli_seconds_text timeout_text = cli_seconds(timeout_ms);
        kb_run_facts facts = {
                .kind = KB_RUN_CONFORMANCE,
                .started_at = started_at,
                .started_ms = started,
                .signal = cli_signal_received(),
                .timeout = timeout_text.s,
                .allow_untested = allow_untested,
                .transcript_failed = transcript_failed,
                .sandbox = sandbox,
        };
        if (kb_run_report(kernels_run, &facts, &run, &exit_code) < 0) {
                cli_error("out of memory: no report written");
                exit_code = KB_EXIT_FAIL;
                goto out;
        }
        /* With a report on standard output, people read the summary on standard error. */
        kb_report_human(run, summary_to_stderr ? stderr : stdout);
        fflush(stdout);
        if (cli_reports_write(reports, KB_ELEMENTSOF(reports), run))
                exit_code = exit_code ? exit_code : KB_EXIT_FAIL;

out:
        kb_run_destroy(&kernels_run);
        kb_transcript_close(&transcript);
        cli_root_close(&root);
        if (base) {
                if (keep)
                        cli_keep_base_dir(base);
                else
                        kb_remove_tree(base);
        }
        json_object_put(run);
        for (size_t i = 0; i < n_kernels; i++)
                kb_kernelspec_destroy(&specs[i]);
        free(base);
        free(kernels_dir);
        free(bwrap);
        free(bwrap_version);
        kb_strv_free(image_kernels);
        return exit_code;
}
