/* cmd_doctor.c: `kbound doctor`: can this machine enforce the sandbox? Item by item. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <kbound/kernelspec.h>
#include <kbound/sandbox.h>
#include "cli.h"

/* An item's further lines start under its words, past "[ OK ] ". */
#define DOCTOR_INDENT 7

int cmd_doctor(int argc, char **argv) {
        static const char *const accepts[] = {"bwrap", "sandbox-user", "help", NULL};
        cli_opts o;
        if (cli_opts_init(&o, "doctor", accepts, NULL) < 0)
                return KB_EXIT_USAGE;
        int c;
        while ((c = cli_opts_next(&o, argc, argv, "h")) != -1) {
                switch (c) {
                case 'h':
                        cli_put_flowed(stdout,
                                       "Usage: kbound doctor [--bwrap PATH] [--sandbox-user NAME]\n\n"
                                       "Checks, item by item, whether this machine can enforce kbound's sandbox:\n"
                                       "the user kernels run as (never root), bubblewrap and its version, user\n"
                                       "namespaces (a sandbox started as that user), the seccomp filter, the AppArmor\n"
                                       "restriction on Ubuntu 24.04+, pidfd support, ipc socket path room, and\n"
                                       "kernelspecs; lists the folders runs that did not end cleanly left behind (the\n"
                                       "next run removes them).\n\n"
                                       "Exit 0 only if everything required is there, else 3. Lines fit the terminal\n"
                                       "(80 columns in a pipe or a file); an item's further lines are indented.\n");
                        return 0;
                default:
                        return KB_EXIT_USAGE;
                }
        }
        const char *bwrap_opt = o.bwrap, *sandbox_user_opt = o.sandbox_user;
        bool ok = true;
        char *bwrap = NULL;
        if (kb_sandbox_find_bwrap(bwrap_opt, environ, &bwrap) < 0) {
                cli_put_line(stdout, DOCTOR_INDENT,
                             "[FAIL] bwrap: %s not found; install it (apt-get install bubblewrap) or pass --bwrap PATH",
                             bwrap_opt ? bwrap_opt : "bubblewrap (bwrap)");
                ok = false;
        }
        const char *base = cli_runtime_parent();
        /* A base name like the real one (kbound-XXXXXX) so the path-length check is honest. */
        char *probe_base = NULL;
        if (asprintf(&probe_base, "%s/kbound-XXXXXX", base) < 0)
                return KB_EXIT_ENFORCE;
        if (bwrap) {
                kb_preflight_item **items = NULL;
                const char *user =
                        sandbox_user_opt && *sandbox_user_opt ? sandbox_user_opt : getenv("KBOUND_SANDBOX_USER");
                /* The trial sandbox binds the syscall probe as check does (none found: none bound,
                 * as check then does too). */
                _cleanup_free_ char *syscall_probe = NULL;
                cli_resolve_syscall_probe(&syscall_probe);
                int r = kb_sandbox_preflight(bwrap, probe_base, user, syscall_probe, &items);
                if (r < 0) {
                        cli_put_line(stdout, DOCTOR_INDENT, "[FAIL] preflight: %s", strerror(-r));
                        ok = false;
                } else {
                        for (kb_preflight_item **it = items; *it; it++) {
                                cli_put_line(stdout, DOCTOR_INDENT, "[%s] %s: %s",
                                             (*it)->ok         ? " OK "
                                             : (*it)->required ? "FAIL"
                                                               : "WARN",
                                             (*it)->name, (*it)->detail ? (*it)->detail : "");
                                if (!(*it)->ok && (*it)->required)
                                        ok = false;
                        }
                        kb_preflight_free(items);
                }
        }
        free(probe_base);
        free(bwrap);

        char **dirs = NULL;
        kb_kernelspec **list = NULL;
        size_t broken = 0;
        char *line = NULL;
        size_t line_size = 0;
        FILE *m;
        if (kb_kernelspec_search_path(environ, &dirs) >= 0 && kb_kernelspec_list(dirs, &list, &broken) >= 0 &&
            (m = open_memstream(&line, &line_size))) {
                size_t n = 0;
                for (kb_kernelspec **s = list; *s; s++)
                        n++;
                fprintf(m, "[%s] kernelspecs: %zu found", n ? " OK " : "WARN", n);
                for (kb_kernelspec **s = list; *s; s++)
                        fprintf(m, "%s%s (%s)", s == list ? ": " : ", ", (*s)->name,
                                (*s)->language ? (*s)->language : "?");
                if (broken)
                        fprintf(m, "; %zu broken kernel.json skipped", broken);
                if (fclose(m) == 0)
                        cli_put_line(stdout, DOCTOR_INDENT, "%s", line);
                free(line);
                line = NULL;
        }
        kb_kernelspec_list_free(list);
        kb_strv_free(dirs);

        /* Folders of runs that are gone (killed: nothing removed them) still hold team folders
         * and canaries; the next run removes them, and says so. */
        char **stale = NULL, **kept = NULL;
        size_t n_stale = cli_base_dirs_scan(base, false, &stale, &kept);
        if (n_stale == 0)
                cli_put_line(stdout, DOCTOR_INDENT, "[ OK ] stale folders: none of yours under %s", base);
        else if ((m = open_memstream(&line, &line_size))) {
                fprintf(m,
                        "[WARN] stale folders: %zu under %s, left by kbound runs that did not end cleanly (their "
                        "team folders and canaries; the next check, run, conformance or console removes them):",
                        n_stale, base);
                for (char **p = stale; p && *p; p++)
                        fprintf(m, " %s", *p);
                if (fclose(m) == 0)
                        cli_put_line(stdout, DOCTOR_INDENT, "%s", line);
                free(line);
                line = NULL;
        }
        if (kept && *kept && (m = open_memstream(&line, &line_size))) {
                fputs("[ OK ] kept folders (--keep; remove them when done):", m);
                for (char **p = kept; *p; p++)
                        fprintf(m, " %s", *p);
                if (fclose(m) == 0)
                        cli_put_line(stdout, DOCTOR_INDENT, "%s", line);
                free(line);
                line = NULL;
        }
        kb_strv_free(stale);
        kb_strv_free(kept);
        printf("%s\n", ok ? "doctor: this machine can enforce the sandbox"
                          : "doctor: this machine cannot enforce the sandbox (see FAIL lines)");
        return ok ? 0 : KB_EXIT_ENFORCE;
}
