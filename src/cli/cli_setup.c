/* cli_setup.c: what check and conformance set up before their kernels start, in the order both
 * follow: report paths, sandbox mode and user, the image or rootfs, the kernels, bwrap, the
 * seccomp policy, the language packs and the run's base folder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <kbound/report.h>
#include "cli.h"

int cli_setup_begin(cli_setup *s, cli_opts *o, int argc, char **argv, bool network_claimed) {
        *s = (cli_setup){
                .cmd = o->cmd,
                .reports =
                        {
                                {.option = "--json", .path = o->json_path, .render = kb_report_json},
                                {.option = "--junit", .path = o->junit_path, .render = kb_report_junit},
                        },
                .root = {.root_fd = -1, .ro_paths = o->ro_paths, .prefixes = o->prefixes, .sandbox = true},
                .color = o->color,
                .verbose = o->verbose,
        };
        s->root.user = &s->user;
        s->team = o->team;
        for (size_t i = 0; i < o->n_kernels && i < CLI_KERNELS_MAX; i++)
                s->names[s->n_names++] = o->kernels[i];
        if (s->n_names == 0 && !o->rootfs && !o->image) {
                s->names[s->n_names++] = "python3";
                s->names[s->n_names++] = "ir";
        }
        s->started_ms = kb_now_ms();
        if (kb_iso_time_now(0, s->started_at, sizeof(s->started_at)) < 0)
                s->started_at[0] = '\0'; /* no clock: the report says "" */
        if (optind < argc) {
                cli_error("%s: unexpected argument '%s'", s->cmd, argv[optind]);
                return KB_EXIT_USAGE;
        }
        /* Every output path is checked before anything is started or created. */
        if (cli_reports_check(s->cmd, s->reports, KB_ELEMENTSOF(s->reports), o->transcript, &s->summary_to_stderr))
                return KB_EXIT_USAGE;
        s->reports_ok = true;
        /* Without a network claim (conformance) the raw-network override is accepted and has no
         * effect: the kernels run without a network either way. */
        bool allow_network = o->allow_network;
        int r = cli_sandbox_env(&allow_network);
        if (r)
                return r;
        s->allow_network = network_claimed && allow_network;
        s->root.allow_network = s->allow_network;
        return cli_sandbox_user(s->cmd, o->sandbox_user, &s->user);
}

int cli_setup_kernels(cli_setup *s, cli_opts *o) {
        size_t n = o->n_kernels;
        if (n == 0 && !o->rootfs && !o->image) {
                o->kernels[n++] = "python3";
                o->kernels[n++] = "ir";
        }
        int r = cli_root_open(s->cmd, o->rootfs, o->image, o->image_max, o->image_no_cache, &s->base, &s->root);
        if (r)
                return r;
        r = cli_find_kernels(&s->root, o->kernels, &n, CLI_KERNELS_MAX, &s->image_kernels, s->specs);
        s->n_kernels = n;
        for (s->n_names = 0; s->n_names < n; s->n_names++)
                s->names[s->n_names] = o->kernels[s->n_names];
        if (r || (r = cli_fds_check(s->cmd, n)))
                return r;
        /* An audit starts each kernelspec as it is: kbound's bwrap and filter are not used. */
        if (!s->audit && (r = cli_find_bwrap_version(o->bwrap, &s->bwrap, &s->bwrap_version, &s->bwrap_info)))
                return r;
        cli_resolve_syscall_probe(&s->syscall_probe);
        cli_resolve_boundary_probe(&s->boundary_probe);
        if (!s->audit && (r = cli_hardening(s->cmd, &o->hardening, s->allow_network, &s->bwrap_info, &s->hardening)))
                return r;
        if ((r = cli_resolve_user_kernels_dir(o->kernels_dir, &s->user_kernels_dir)) ||
            (r = cli_resolve_kernels_dir(s->user_kernels_dir, &s->kernels_dir)))
                return r;
        if (!s->base && (r = cli_make_base_dir(&s->user, &s->base)))
                return r;
        return 0;
}

void cli_setup_end(cli_setup *s, bool keep) {
        cli_root_close(&s->root);
        if (s->base) {
                if (keep)
                        cli_keep_base_dir(s->base);
                else
                        kb_remove_tree(s->base);
        }
        for (size_t i = 0; i < s->n_kernels; i++)
                kb_kernelspec_destroy(&s->specs[i]);
        kb_strv_free(s->image_kernels);
        s->image_kernels = NULL;
        free(s->base);
        free(s->kernels_dir);
        free(s->user_kernels_dir);
        free(s->bwrap);
        free(s->bwrap_version);
        free(s->syscall_probe);
        free(s->boundary_probe);
        s->base = s->kernels_dir = s->user_kernels_dir = s->bwrap = s->bwrap_version = NULL;
        s->n_kernels = 0;
}

void cli_log_progress(void *userdata, int level, const char *message) {
        (void) userdata;
        if (level >= KB_LOG_DEBUG && !cli_verbose())
                return; /* a result: the report's table has it */
        cli_progress("%s", message);
}

kb_harness_env cli_harness_env(const cli_setup *s, const cli_opts *o, int64_t deadline_ms) {
        return (kb_harness_env){
                .kernels_dir = s->kernels_dir,
                .user_kernels_dir = s->user_kernels_dir && strcmp(s->user_kernels_dir, s->kernels_dir) != 0
                                            ? s->user_kernels_dir
                                            : NULL,
                .base_dir = s->base,
                .bwrap = s->bwrap,
                .rootfs = s->root.rootfs,
                .ro_paths = o->ro_paths,
                .host_env = environ,
                .user = &s->user,
                .hardening = &s->hardening,
                .tcp = o->tcp,
                .syscall_probe = s->syscall_probe,
                .boundary_probe = s->boundary_probe,
                .cancel_fd = cli_signals_install(),
                .deadline_ms = deadline_ms,
                .keep = o->keep,
                .log = cli_log_progress,
        };
}

void cli_setup_refused(cli_setup *s, int kind, int exit_code) {
        /* Past option parsing (the report paths checked), a refusal is a run's verdict like any
         * other: its reports, and under GitHub Actions its job summary and annotations, which is
         * where a CI engineer looks first for an exit 3. */
        const char *actions = getenv("GITHUB_ACTIONS"), *summary = getenv("GITHUB_STEP_SUMMARY");
        bool ci = (actions && strcmp(actions, "true") == 0) || (summary && *summary);
        if (!s->reports_ok || (!s->reports[0].path && !s->reports[1].path && !ci))
                return;
        json_object *run = json_object_new_object(), *claims = json_object_new_object();
        if (!run || !claims) {
                json_object_put(run);
                json_object_put(claims);
                cli_error("out of memory: no report written");
                return;
        }
        if (kind == KB_RUN_CONFORMANCE)
                json_object_object_add(run, "kind", json_object_new_string("conformance"));
        json_object_object_add(run, "kbound_version", json_object_new_string(KBOUND_VERSION));
        json_object_object_add(run, "started_at", json_object_new_string(s->started_at));
        json_object_object_add(run, "duration_ms", json_object_new_int64(0));
        json_object_object_add(run, "complete", json_object_new_boolean(false));
        json_object_object_add(run, "refused", json_object_new_boolean(true));
        const char *why = cli_last_error();
        char reason[600];
        snprintf(reason, sizeof reason, "refused before any kernel started: %s",
                 *why ? why : "see kbound's standard error");
        json_object_object_add(run, "incomplete_reason", json_object_new_string(reason));
        json_object_object_add(claims, "raw_network_override", json_object_new_boolean(s->allow_network));
        json_object_object_add(run, "claims", claims);
        json_object_object_add(run, "sandbox", kb_run_sandbox_new(s->bwrap, s->bwrap_version));
        /* Every kernel asked for, with every check (or item) not run and the reason, so that a
         * CI's test history keeps them through a refused run. */
        json_object *kernels = json_object_new_array();
        for (size_t i = 0; kernels && i < s->n_names; i++) {
                const kb_kernelspec *spec = i < s->n_kernels ? s->specs[i] : NULL;
                json_object *k = kb_run_refused_kernel(kind, s->names[i], spec, s->team ? s->team : "kbound",
                                                       *why ? why : "see kbound's standard error");
                if (!k || json_object_array_add(kernels, k) < 0) {
                        json_object_put(k);
                        json_object_put(kernels);
                        kernels = NULL;
                }
        }
        json_object_object_add(run, "kernels", kernels);
        (void) kb_report_finish(run);
        json_object_object_add(run, "exit_code", json_object_new_int(exit_code));
        /* The reason quotes what was refused: redacted like every other message. */
        json_object *clean = cli_redact_json(run);
        json_object_put(run);
        if (!clean) {
                cli_error("out of memory while redacting the report: no report written");
                return;
        }
        cli_ci_output(clean, s->summary_to_stderr ? stderr : stdout);
        fflush(stdout);
        (void) cli_reports_write(s->reports, KB_ELEMENTSOF(s->reports), clean);
        json_object_put(clean);
}

int cli_setup_output(cli_setup *s, kb_run *kernels_run, const kb_run_facts *facts, bool redact, json_object **ret_run,
                     int *exit_code) {
        json_object *run = NULL;
        if (kb_run_report(kernels_run, facts, &run, exit_code) < 0) {
                cli_error("out of memory: no report written");
                *exit_code = KB_EXIT_FAIL;
                return -1;
        }
        if (redact) {
                /* The last pass before anything is rendered: every report sees the run redacted with
                 * every canary and daemon secret (each kernel's key was redacted by the library). */
                json_object *clean = cli_redact_json(run);
                json_object_put(run);
                run = clean;
                if (!run) {
                        cli_error("out of memory while redacting the report: no report written");
                        *exit_code = KB_EXIT_FAIL;
                        return -1;
                }
        }
        *ret_run = run;
        /* With a report on standard output, people read the summary on standard error. */
        FILE *human = s->summary_to_stderr ? stderr : stdout;
        kb_report_style style = cli_report_style(human, s->color, s->verbose);
        kb_report_human_styled(run, human, &style);
        cli_ci_output(run, human);
        fflush(stdout);
        if (cli_reports_write(s->reports, KB_ELEMENTSOF(s->reports), run))
                *exit_code = *exit_code ? *exit_code : KB_EXIT_FAIL;
        return 0;
}

int cli_run_kernels(const cli_setup *s, const cli_opts *o, const kb_check_env *check_env,
                    const kb_conformance_env *conformance_env, kb_transcript **transcript, kb_run **ret_run,
                    bool *transcript_failed) {
        kb_run *run = NULL;
        if (kb_run_new(o->team, s->specs, s->n_kernels, *transcript, &run) < 0) {
                cli_error("out of memory");
                return KB_EXIT_FAIL;
        }
        size_t failed = 0;
        int r = check_env ? kb_run_check(run, check_env, &failed) : kb_run_conformance(run, conformance_env, &failed);
        if (r == -ENOMEM)
                cli_error("out of memory");
        else if (r < 0)
                cli_error("cannot start a thread for kernel '%s'", s->specs[failed]->name);
        if (cli_transcript_close(transcript, o->transcript))
                *transcript_failed = true;
        *ret_run = run;
        return 0;
}

kb_run_facts cli_run_facts(cli_setup *s, const cli_opts *o, kb_run_kind kind, bool transcript_failed,
                           json_object *sandbox) {
        s->timeout_text = cli_seconds(o->timeout_ms);
        return (kb_run_facts){
                .kind = kind,
                .started_at = s->started_at,
                .started_ms = s->started_ms,
                .signal = cli_signal_received(),
                .timeout = s->timeout_text.s,
                .transcript_failed = transcript_failed,
                .sandbox = sandbox,
        };
}
