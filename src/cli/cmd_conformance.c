/* cmd_conformance.c: `kbound conformance`: does each kernel speak the Jupyter protocol as
 * specified, inside the same sandbox check uses? Item by item, with known deviations named. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <kbound/conformance.h>
#include <kbound/kernel.h>
#include <kbound/report.h>
#include <kbound/sandbox.h>
#include "cli.h"

#define MAX_KERNELS 32

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

typedef struct worker {
        pthread_t thread;
        kb_conformance_env env;
        kb_transcript_source *source;
        kb_kernelspec *spec;
        char team[65];
        json_object *result;
        kb_check_outcome outcome;
} worker;

static void *worker_main(void *arg) {
        worker *w = arg;
        if (kb_conformance_run(&w->env, w->spec, w->team, &w->result, &w->outcome) < 0)
                w->result = NULL;
        return NULL;
}

static void log_to_stderr(void *userdata, int level, const char *message) {
        cli_progress("%s", message);
}

int cmd_conformance(int argc, char **argv) {
        static const struct option options[] = {
                { "kernel", required_argument, NULL, 'k' },
                { "team", required_argument, NULL, 'T' },
                { "json", required_argument, NULL, 'j' },
                { "junit", required_argument, NULL, 'u' },
                { "bwrap", required_argument, NULL, 'b' },
                { "sandbox-user", required_argument, NULL, 'U' },
                { "sockets", required_argument, NULL, 'S' },
                { "allow-syscall", required_argument, NULL, 'Y' },
                { "kernels-dir", required_argument, NULL, 'D' },
                { "ro-bind", required_argument, NULL, 'r' },
                { "timeout", required_argument, NULL, 't' },
                { "transcript", required_argument, NULL, 'X' },
                { "rootfs", required_argument, NULL, 'R' },
                { "image", required_argument, NULL, 'I' },
                { "image-max-size", required_argument, NULL, 'M' },
                { "prefix", required_argument, NULL, 'P' },
                { "keep", no_argument, NULL, 'K' },
                { "allow-untested", no_argument, NULL, 'A' },
                { "quiet", no_argument, NULL, 'q' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *kernel_names[MAX_KERNELS];
        size_t n_kernels = 0;
        const char *team = "kbound-conf", *json_path = NULL, *junit_path = NULL, *bwrap_opt = NULL,
                   *kernels_opt = NULL, *transcript_path = NULL, *rootfs_opt = NULL, *sandbox_user_opt = NULL;
        cli_hardening_opts hardening_opts = { 0 };
        kb_sandbox_hardening hardening;
        bool keep = false, allow_untested = false, unused_raw_network = false;
        long timeout_ms = 300000;
        char *ro_paths[CLI_RO_BIND_MAX + 1] = { 0 };
        size_t n_ro = 0;
        const char *image_opt = NULL;
        uint64_t image_max = 0;
        char *prefixes[CLI_PREFIX_MAX + 1] = { 0 };
        size_t n_prefixes = 0;
        int c;
        while ((c = getopt_long(argc, argv, "k:qh", options, NULL)) != -1) {
                switch (c) {
                case 'k':
                        if (n_kernels == MAX_KERNELS) {
                                cli_error("conformance: at most %d kernels at once", MAX_KERNELS);
                                return KB_EXIT_USAGE;
                        }
                        kernel_names[n_kernels++] = optarg;
                        break;
                case 'T':
                        if (cli_opt_team("conformance", optarg, CLI_TEAM_PREFIX_MAX, &team))
                                return KB_EXIT_USAGE;
                        break;
                case 'j':
                        json_path = optarg;
                        break;
                case 'u':
                        junit_path = optarg;
                        break;
                case 'b':
                        bwrap_opt = optarg;
                        break;
                case 'U':
                        sandbox_user_opt = optarg;
                        break;
                case 'S':
                        hardening_opts.sockets = optarg;
                        break;
                case 'Y':
                        if (cli_opt_allow_syscall("conformance", &hardening_opts, optarg))
                                return KB_EXIT_USAGE;
                        break;
                case 'D':
                        kernels_opt = optarg;
                        break;
                case 'r':
                        if (cli_opt_ro_bind("conformance", ro_paths, &n_ro, optarg))
                                return KB_EXIT_USAGE;
                        break;
                case 't':
                        if (cli_opt_timeout("conformance", optarg, &timeout_ms))
                                return KB_EXIT_USAGE;
                        break;
                case 'X':
                        transcript_path = optarg;
                        break;
                case 'R':
                        rootfs_opt = optarg;
                        break;
                case 'I':
                        image_opt = optarg;
                        break;
                case 'M':
                        if (cli_opt_size("conformance", "--image-max-size", optarg, &image_max))
                                return KB_EXIT_USAGE;
                        break;
                case 'P':
                        if (cli_opt_prefix("conformance", prefixes, &n_prefixes, optarg))
                                return KB_EXIT_USAGE;
                        break;
                case 'K':
                        keep = true;
                        break;
                case 'A':
                        allow_untested = true;
                        break;
                case 'q':
                        cli_set_quiet(true);
                        break;
                case 'h':
                        conformance_usage(stdout);
                        return 0;
                default:
                        conformance_usage(stderr);
                        return KB_EXIT_USAGE;
                }
        }
        if (optind < argc) {
                cli_error("conformance: unexpected argument '%s'", argv[optind]);
                return KB_EXIT_USAGE;
        }
        /* Every output path is checked before anything is started or created. */
        cli_report reports[] = {
                { .option = "--json", .path = json_path, .render = kb_report_json },
                { .option = "--junit", .path = junit_path, .render = kb_report_junit },
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
        if ((r = cli_sandbox_user("conformance", sandbox_user_opt, &sandbox_user)))
                return r;
        if (n_kernels == 0 && !rootfs_opt && !image_opt) {
                kernel_names[n_kernels++] = "python3";
                kernel_names[n_kernels++] = "ir";
        }
        int64_t started = kb_now_ms();
        int exit_code = KB_EXIT_ENFORCE;
        kb_kernelspec *specs[MAX_KERNELS] = { 0 };
        worker workers[MAX_KERNELS];
        memset(workers, 0, sizeof(workers));
        char *bwrap = NULL, *bwrap_version = NULL, *kernels_dir = NULL, *base = NULL;
        kb_transcript *transcript = NULL;
        json_object *run = NULL;
        _cleanup_free_ char *started_at = cli_iso_now();
        bool transcript_failed = false;
        cli_root root = { .root_fd = -1, .ro_paths = ro_paths, .prefixes = prefixes, .sandbox = true,
                          .user = &sandbox_user };
        char **image_kernels = NULL;

        if ((exit_code = cli_root_open("conformance", rootfs_opt, image_opt, image_max, &base, &root)))
                goto out;
        const char *rootfs = root.rootfs;
        exit_code = KB_EXIT_ENFORCE;
        r = cli_find_kernels(&root, kernel_names, &n_kernels, MAX_KERNELS, &image_kernels, specs);
        if (r || (r = cli_fds_check("conformance", n_kernels))) {
                exit_code = r;
                goto out;
        }
        if (cli_find_bwrap_version(bwrap_opt, &bwrap, &bwrap_version))
                goto out;
        if ((r = cli_hardening("conformance", &hardening_opts, false, bwrap_version, &hardening))) {
                exit_code = r;
                goto out;
        }
        if (cli_resolve_kernels_dir(kernels_opt, &kernels_dir) ||
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
                .ro_paths = ro_paths,
                .rootfs = rootfs,
                .host_env = environ,
                .user = &sandbox_user,
                .hardening = &hardening,
                .cancel_fd = cli_signals_install(),
                .deadline_ms = started + timeout_ms,
                .keep = keep,
                .log = log_to_stderr,
        };
        size_t n_started = 0;
        for (size_t i = 0; i < n_kernels; i++) {
                worker *w = &workers[i];
                w->env = env;
                w->spec = specs[i];
                bool repeated = false;
                for (size_t j = 0; j < n_kernels; j++)
                        if (j != i && strcmp(specs[j]->name, specs[i]->name) == 0)
                                repeated = true;
                if (repeated)
                        snprintf(w->team, sizeof(w->team), "%s-%.16s-%zu", team, specs[i]->name, i + 1);
                else
                        snprintf(w->team, sizeof(w->team), "%s-%.20s", team, specs[i]->name);
                if (cli_transcript_source(transcript, specs[i]->name, w->team, &w->source, &w->env.on_msg,
                                          &w->env.on_msg_userdata))
                        break;
                if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
                        cli_error("cannot start a thread for kernel '%s'", specs[i]->name);
                        break;
                }
                n_started++;
        }
        for (size_t i = 0; i < n_started; i++)
                pthread_join(workers[i].thread, NULL);
        for (size_t i = 0; i < n_kernels; i++)
                kb_transcript_source_destroy(&workers[i].source);
        if (cli_transcript_close(&transcript, transcript_path))
                transcript_failed = true;

        /* The report: the same run object as check's, marked as a conformance run. */
        run = json_object_new_object();
        json_object_object_add(run, "kind", json_object_new_string("conformance"));
        json_object_object_add(run, "kbound_version", json_object_new_string(KBOUND_VERSION));
        json_object_object_add(run, "started_at", json_object_new_string(started_at ? started_at : ""));
        json_object_object_add(run, "duration_ms", json_object_new_int64(kb_now_ms() - started));
        bool not_enforced = false, cancelled = cli_signal_received() != 0 || n_started < n_kernels;
        json_object *kernels = json_object_new_array();
        for (size_t i = 0; i < n_started; i++) {
                if (workers[i].result)
                        json_object_array_add(kernels, workers[i].result);
                not_enforced |= workers[i].outcome == KB_CHECK_NOT_ENFORCED;
                cancelled |= workers[i].outcome == KB_CHECK_CANCELLED || !workers[i].result;
        }
        json_object_object_add(run, "complete", json_object_new_boolean(!cancelled));
        /* An untested item proves nothing: it fails the run unless the caller accepted that. */
        json_object_object_add(run, "allow_untested", json_object_new_boolean(allow_untested));
        char reason[128] = "";
        if (cli_signal_received())
                snprintf(reason, sizeof(reason), "interrupted by signal %d", cli_signal_received());
        else if (cancelled)
                snprintf(reason, sizeof(reason), "the %s s deadline passed (--timeout)", cli_seconds(timeout_ms).s);
        json_object_object_add(run, "incomplete_reason", *reason ? json_object_new_string(reason) : NULL);
        json_object *claims = json_object_new_object();
        /* Conformance claims no boundary: the network stays unshared, but nothing about it is tested. */
        json_object_object_add(claims, "raw_network_override", json_object_new_boolean(0));
        json_object_object_add(run, "claims", claims);
        json_object *sandbox = json_object_new_object();
        json_object_object_add(sandbox, "backend", json_object_new_string("bubblewrap"));
        json_object_object_add(sandbox, "bwrap", json_object_new_string(bwrap));
        json_object_object_add(sandbox, "bwrap_version", json_object_new_string(bwrap_version));
        json_object_object_add(sandbox, "uid", json_object_new_int((int) getuid()));
        json_object_object_add(sandbox, "base_dir", keep ? json_object_new_string(base) : NULL);
        cli_root_report(&root, sandbox);
        json_object_object_add(run, "sandbox", sandbox);
        json_object_object_add(run, "kernels", kernels);

        int verdict = kb_report_finish(run);
        exit_code = not_enforced ? KB_EXIT_ENFORCE : (verdict != 0 || cancelled) ? KB_EXIT_FAIL : KB_EXIT_PASS;
        if (transcript_failed && exit_code == KB_EXIT_PASS)
                exit_code = KB_EXIT_FAIL;
        json_object_object_add(run, "exit_code", json_object_new_int(exit_code));
        /* With a report on standard output, people read the summary on standard error. */
        kb_report_human(run, summary_to_stderr ? stderr : stdout);
        fflush(stdout);
        if (cli_reports_write(reports, KB_ELEMENTSOF(reports), run))
                exit_code = exit_code ? exit_code : KB_EXIT_FAIL;

out:
        for (size_t i = 0; i < n_kernels; i++)
                kb_transcript_source_destroy(&workers[i].source);
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
