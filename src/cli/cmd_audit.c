/* cmd_audit.c: `kbound audit`: a kernel sandbox kbound did not build. Each kernelspec is started as
 * it is, in its own wrapper, and judged as `check` judges kbound's own sandbox (the same set-up,
 * canaries, looks, cells, judges and reports: cli_check_run); each claim is held to kbound's own,
 * or to the auditor's expect file (docs/audit.md). */
#include <stdio.h>
#include <string.h>
#include <kbound/audit.h>
#include <kbound/limits.h>
#include "cli.h"

enum { OPT_EXPECT = 'E', OPT_AS_ROOT = 'R' };

static int take_audit(void *userdata, int c, const char *arg) {
        cli_audit *a = userdata;
        if (c == OPT_EXPECT)
                a->expect_path = arg;
        else
                a->as_root = true;
        return 0;
}

static const cli_command audit_command = {
        .name = "audit",
        .accepts =
                (const char *const[]){
                        CLI_ACCEPTS_REPORTED,
                        "expect",
                        "sandbox-user",
                        "as-root",
                        "transport",
                        "kernels-dir",
                        "timeout",
                        "keep",
                        "transcript",
                        CLI_ACCEPTS_OUTPUT,
                        NULL,
                },
        .own =
                (const struct option[]){
                        {"expect", required_argument, NULL, OPT_EXPECT},
                        {"as-root", no_argument, NULL, OPT_AS_ROOT},
                        {0},
                },
        .own_help =
                (const cli_help[]){
                        {"expect", "--expect FILE",
                         "what the deployment is meant to allow (docs/audit.md); without it every\n"
                         "check is held to kbound's own claims"},
                        {"as-root", "--as-root",
                         "when kbound is root, run the kernelspec's launcher as root too (default:\n"
                         "as --sandbox-user, kbound-sandbox); the report says so"},
                        {0},
                },
        .intro = "Usage: kbound audit --kernel NAME [OPTIONS]\n\n"
                 "Audits a kernel sandbox kbound did not build: starts the kernelspec as it is (its own\n"
                 "wrapper: bwrap, firejail, crun, ...; kbound adds no sandbox) with an ipc connection file in\n"
                 "a folder the wrapper must show the kernel at the same path (or, with --transport tcp or a\n"
                 "kernelspec that speaks only TCP, on 127.0.0.1), finds the kernel as the process of the\n"
                 "wrapper's tree holding the kernel end of kbound's connections, and runs check's looks, probe cells, "
                 "both\n"
                 "interrupts and the persistence cell. Each check is held to kbound's own claim, or to what\n"
                 "--expect says the deployment allows; what only kbound's own launch has (its bwrap's argv and\n"
                 "plan, the look before exec) is not claimed.\n",
        .epilogue = "Exit codes: 0 every check held as expected, 1 a check failed (not as expected) or the run\n"
                    "was cut short, 2 usage (a bad expect file), 3 a kernel cannot be found or started.\n",
        .team = "audit",
        .take = take_audit,
};

int cli_audit_begin(cli_audit *a, cli_setup *s, const cli_opts *o) {
        if (o->n_kernels == 0) {
                cli_error("audit: name the kernelspec to audit (--kernel NAME)");
                return KB_EXIT_USAGE;
        }
        if (a->as_root && geteuid() != 0) {
                cli_error("audit: --as-root needs kbound to run as root");
                return KB_EXIT_USAGE;
        }
        a->env.as_root = a->as_root && geteuid() == 0;
        a->env.tcp = o->tcp; /* 127.0.0.1, for a wrapper that shares the host's network */
        if (a->expect_path) {
                _cleanup_error_ kb_error *error = NULL;
                int r = kb_audit_expect_read(a->expect_path, &a->env.expect, &error);
                if (r < 0) {
                        cli_error("audit: %s", kb_error_text(error, r));
                        return r == -EINVAL ? KB_EXIT_USAGE : KB_EXIT_FAIL;
                }
                a->env.expect_path = a->expect_path;
                a->env.workspace = kb_audit_expect_workspace(a->env.expect);
        }
        /* Held to check's own limits by default: the deployment's memory, tasks, /tmp and processor
         * bounds are read by the host (sandbox.resources). The workspace's size and the log's are
         * kbound's own set-up (a tmpfs at /workspace, the log it drains), not the deployment's: not
         * claimed. */
        kb_limits_default(&s->hardening.limits);
        s->hardening.limits.max[KB_LIMIT_WORKSPACE] = 0;
        s->hardening.limits.max[KB_LIMIT_LOG] = 0;
        return 0;
}

void cli_audit_report(const cli_audit *a, json_object *sandbox) {
        if (!sandbox)
                return;
        json_object_object_add(sandbox, "backend", json_object_new_string("audit"));
        json_object_object_add(sandbox, "launched_by", json_object_new_string("each kernelspec's own argv"));
        json_object_object_add(sandbox, "as_root", json_object_new_boolean(a->env.as_root));
        json_object_object_add(sandbox, "expect_file",
                               a->env.expect_path ? json_object_new_string(a->env.expect_path) : NULL);
}

int cmd_audit(int argc, char **argv) {
        cli_audit audit = {0};
        int r = cli_check_run(argc, argv, &audit_command, &audit, &audit);
        json_object_put(audit.env.expect);
        return r;
}
