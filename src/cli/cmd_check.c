/* cmd_check.c: `kbound check`: the main job. Sets up canaries, checks every kernel concurrently in
 * its own team sandbox, and reports a verdict for people (stdout) and CI (JSON, JUnit, exit code). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <kbound/canary_set.h>
#include <kbound/check.h>
#include <kbound/kernel.h>
#include <kbound/report.h>
#include <kbound/run.h>
#include <kbound/sandbox.h>
#include <kbound/scenario.h>
#include "cli.h"

#define CANARY_ENV "KBOUND_CANARY_SECRET"

/* A canary in kbound's own environment has to be in the environment block the kernel would see
 * through /proc/<pid>/environ, which setenv() does not change: so put it there and exec again. */
static void reexec_with_canary(char **argv) {
        if (getenv(CANARY_ENV))
                return;
        char value[65];
        if (kb_random_hex(value, 32) < 0)
                return;
        if (setenv(CANARY_ENV, value, 1) < 0)
                return;
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n <= 0)
                return;
        self[n] = '\0';
        /* A signal from now until the new image's main installs its handlers would kill kbound
         * with nothing said: held pending across the exec instead (cli.h). */
        cli_signals_hold();
        execv(self, argv);
        cli_signals_unblock();
        /* Still protected by the setenv copy; the report says how many secrets were checked. */
}

/* check's own options. */
typedef struct check_flags {
        bool require_full; /* --require-full-boundary */
        bool list_checks;  /* --list-checks */
} check_flags;

static int take_flag(void *userdata, int c, const char *arg) {
        check_flags *f = userdata;
        if (c == 'L')
                f->list_checks = true;
        else
                f->require_full = true;
        return 0;
}

/* --list-checks: the table of checks (check.h), one line each, tab-separated: id, phase, what it
 * needs (the host's looks alone, or a cell of the language's pack), what a pass claims. */
static int list_checks(void) {
        for (kb_check c = 0; c < _KB_CHECK_MAX; c++) {
                const kb_check_info *i = kb_check_get(c);
                printf("%s\t%s\t%s\t%s\n", i->id, kb_check_phase_name(i->phase), kb_check_needs_name(i->needs),
                       i->claim);
        }
        return fflush(stdout) == 0 && !ferror(stdout) ? KB_EXIT_PASS : KB_EXIT_FAIL;
}

static const cli_command check_command = {
        .name = "check",
        .accepts =
                (const char *const[]){
                        CLI_ACCEPTS_REPORTED,
                        "allow-raw-network",
                        "require-full-boundary",
                        "list-checks",
                        CLI_ACCEPTS_SANDBOX,
                        "kernels-dir",
                        CLI_ACCEPTS_LIMITS,
                        "rootfs",
                        "timeout",
                        "keep",
                        "transcript",
                        CLI_ACCEPTS_OUTPUT,
                        NULL,
                },
        .own =
                (const struct option[]){
                        {"require-full-boundary", no_argument, NULL, 'F'},
                        {"list-checks", no_argument, NULL, 'L'},
                        {0},
                },
        .own_help =
                (const cli_help[]){
                        {"require-full-boundary", "--require-full-boundary",
                         "fail if the raw-network override is set (for full-boundary CI jobs)"},
                        {"list-checks", "--list-checks",
                         "print the checks every kernel gets and exit: id, phase, what it needs\n"
                         "(host: the host's looks; cell: a cell of the language's probe set), claim"},
                        {0},
                },
        .intro = "Usage: kbound check [OPTIONS]\n\n"
                 "Starts each kernel in its own team sandbox (bubblewrap), probes the boundary (writes outside\n"
                 "the workspace, a writable workspace, network, daemon secrets, another team's files), checks the\n"
                 "kernel is PID 2 behind a pinned pidfd, interrupts a running cell through the control channel and\n"
                 "through the pidfd, and proves the same namespace still answers. Kernels run concurrently.\n",
        .epilogue = "Exit codes: 0 every claim held, 1 a check failed (or the run was cut short), 2 usage,\n"
                    "3 the sandbox cannot be enforced or a kernel cannot be found or loaded (also any of an\n"
                    "image's kernelspecs; see `kbound doctor`).\n",
        .team = "kbound",
        .take = take_flag,
};

/* The canaries and secret sets (canary_set.h): a credential file, another team's folder with a
 * canary, a canary in the user's home and in kbound's session keyring, and (by re-exec) one in our
 * own environment. Says what failed. */
static int plant_canaries(cli_setup *setup, const cli_opts *o, kb_canary_set **ret) {
        kb_canary_set_options plant = {
                .base_dir = setup->base,
                .team = o->team,
                .user = &setup->user,
                .specs = (const kb_kernelspec *const *) setup->specs,
                .n_specs = setup->n_kernels,
                .host_env = environ,
                .log = cli_log_progress,
        };
        kb_canary_set_step step = KB_CANARY_SET_MEMORY;
        int r = kb_canary_set_plant(&plant, ret, &step);
        if (r >= 0)
                return 0;
        if (step == KB_CANARY_SET_FILES)
                cli_error("cannot create the canaries under %s: %s", setup->base, strerror(-r));
        else if (step == KB_CANARY_SET_KEYRING)
                cli_error("cannot plant the keyring canary: %s", strerror(-r));
        else if (step == KB_CANARY_SET_SECRETS)
                cli_error("cannot collect the daemon secrets: %s", strerror(-r));
        else
                cli_error("out of memory");
        return r;
}

/* The report's "sandbox": who the kernels ran as, the keyring canary, the root, the secrets. */
static json_object *sandbox_facts(const cli_setup *setup, const cli_opts *o, const kb_canary_set *canaries) {
        json_object *sandbox = kb_run_sandbox_new(setup->bwrap, setup->bwrap_version);
        if (!sandbox)
                return NULL;
        json_object *user = json_object_new_object();
        json_object_object_add(user, "name", json_object_new_string(setup->user.name));
        json_object_object_add(user, "uid", json_object_new_int64((int64_t) setup->user.uid));
        json_object_object_add(user, "gid", json_object_new_int64((int64_t) setup->user.gid));
        json_object_object_add(user, "switched_from_root", json_object_new_boolean(setup->user.switch_user));
        json_object_object_add(sandbox, "user", user);
        int keyring = canaries->keyring_canary;
        json_object_object_add(sandbox, "keyring_canary",
                               json_object_new_string(keyring == 0 ? "planted" : strerror(-keyring)));
        cli_root_report(&setup->root, sandbox);
        json_object_object_add(sandbox, "base_dir", o->keep ? json_object_new_string(setup->base) : NULL);
        json_object_object_add(sandbox, "secrets_guarded",
                               json_object_new_int((int) kb_secrets_count(canaries->secrets)));
        json_object_object_add(sandbox, "env_values_skipped", json_object_new_int((int) canaries->env_values_skipped));
        return sandbox;
}

/* check, or audit (cmd_audit.c) when audit is not NULL: the same set-up, canaries, checks and
 * reports; an audit starts each kernelspec as it is (kb_check_env.audit). */
int cli_check_run(int argc, char **argv, const cli_command *command, void *flags_userdata, cli_audit *audit) {
        /* Re-exec first (argv is still whole), so the canary sits in our initial environment. */
        char **full_argv = argv - 1;
        reexec_with_canary(full_argv);

        cli_opts o;
        check_flags local = {0}, *flags = audit ? &local : flags_userdata;
        bool transcript_failed = false;
        int r = cli_opts_parse_many(&o, command, argc, argv, flags_userdata);
        if (r != CLI_GO_ON)
                return r;
        if (flags->list_checks)
                return list_checks();
        cli_setup setup;
        r = cli_setup_begin(&setup, &o, argc, argv, true);
        if (r)
                return r;
        setup.audit = audit != NULL;
        setup.root.sandbox = !audit; /* its kernelspecs run where their own wrappers put them */
        if (audit && (r = cli_audit_begin(audit, &setup, &o)))
                return r;
        bool allow_network = setup.allow_network;
        if (allow_network && flags->require_full) {
                cli_error("check: the raw-network override is set but the full boundary was required "
                          "(--require-full-boundary): network isolation could not be claimed");
                cli_setup_refused(&setup, KB_RUN_CHECK, KB_EXIT_FAIL);
                return KB_EXIT_FAIL;
        }
        int64_t deadline = kb_now_ms() + o.timeout_ms;
        kb_canary_set *canaries = NULL;
        kb_transcript *transcript = NULL;
        json_object *run = NULL;
        kb_run *kernels_run = NULL;
        _cleanup_free_ char *syscall_probe = NULL;
        int exit_code = cli_setup_kernels(&setup, &o);
        if (exit_code)
                goto out;
        exit_code = KB_EXIT_ENFORCE;
        size_t n_kernels = setup.n_kernels;
        cli_resolve_syscall_probe(&syscall_probe);

        if (plant_canaries(&setup, &o, &canaries) < 0)
                goto out;
        kb_secrets *secrets = canaries->secrets, *sibling = canaries->sibling_secrets;
        /* Messages and reports quote what kernels said: a leaked canary must not reach them. */
        if (cli_redact_register(secrets) < 0 || cli_redact_register(sibling) < 0) {
                cli_error("cannot set up the redaction of messages");
                goto out;
        }
        /* The transcript records what kernels said: a leaked canary must not reach it either. */
        if ((r = cli_transcript_open(o.transcript, &transcript))) {
                exit_code = r;
                goto out;
        }
        if (transcript &&
            (kb_transcript_redact(transcript, secrets) < 0 || kb_transcript_redact(transcript, sibling) < 0)) {
                cli_error("cannot set up the transcript's redaction");
                goto out;
        }
        cli_progress(audit ? "auditing %zu kernel(s) as their kernelspecs start them (%s %s: not used); %zu secrets"
                           : "checking %zu kernel(s) with %s %s; %zu secrets and canaries guarded (%zu environment "
                             "values skipped as not distinctive)",
                     n_kernels, setup.bwrap ? setup.bwrap : "bwrap", setup.bwrap_version ? setup.bwrap_version : "-",
                     kb_secrets_count(secrets), canaries->env_values_skipped);

        kb_check_env env = {
                .harness = cli_harness_env(&setup, &o, deadline),
                .bwrap_version = setup.bwrap_version,
                .allow_network = allow_network,
                .syscall_probe = syscall_probe,
                .keyring_canary = canaries->keyring_canary,
                .keyring_canary_name = canaries->keyring_canary == 0 ? canaries->keyring_canary_name : NULL,
                .secrets = secrets,
                .sibling_secrets = sibling,
                .escape_dirs = canaries->escape_dirs,
                .credential_paths = canaries->credential_paths,
                .sibling_paths = canaries->sibling_paths,
                .canaries_planted = canaries->planted,
                .canaries = canaries->canaries,
                .n_canaries = canaries->n_canaries,
                .long_cell_seconds = 60,
                .interrupt_timeout_ms = 10000,
                .audit = audit ? &audit->env : NULL,
        };
        exit_code = cli_run_kernels(&setup, &o, &env, NULL, &transcript, &kernels_run, &transcript_failed);
        if (exit_code)
                goto out;

        /* The report. */
        json_object *sandbox = sandbox_facts(&setup, &o, canaries);
        if (audit)
                cli_audit_report(audit, sandbox);
        kb_run_facts facts = cli_run_facts(&setup, &o, KB_RUN_CHECK, transcript_failed, sandbox);
        facts.raw_network_override = allow_network;
        (void) cli_setup_output(&setup, kernels_run, &facts, true, &run,
                                &exit_code); /* says why when there is no report */

out:
        if (!run && exit_code)
                cli_setup_refused(&setup, KB_RUN_CHECK, exit_code);
        /* The base folder goes before the redaction sets are let go: its messages are redacted
         * like every other. */
        cli_setup_end(&setup, o.keep);
        json_object_put(run);
        kb_run_destroy(&kernels_run);
        kb_transcript_close(&transcript);
        cli_redact_clear();
        /* After everything that borrows its secret sets; removes the home canary. */
        kb_canary_set_destroy(&canaries);
        return exit_code;
}

int cmd_check(int argc, char **argv) {
        check_flags flags = {0};
        return cli_check_run(argc, argv, &check_command, &flags, NULL);
}
