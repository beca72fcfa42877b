/* main.c: the kbound command: dispatch to a subcommand. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <openssl/crypto.h>
#include "cli.h"
#include "kbound/inspect.h"

static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
        const char *summary;
        bool cancels; /* ends cleanly on SIGINT/SIGTERM (its waits poll the signal pipe) */
} commands[] = {
        {"check", cmd_check, "start sandboxed kernels, probe their boundary, interrupt them, give a verdict", true},
        {"audit", cmd_audit, "audit a kernel sandbox kbound did not build (the kernelspec's own wrapper)", true},
        {"conformance", cmd_conformance, "test a kernel's Jupyter protocol conformance inside the sandbox", true},
        {"run", cmd_run, "run one cell in a (sandboxed) kernel and print what it produced", true},
        {"console", cmd_console, "an interactive prompt to a sandboxed kernel, for audits by hand", true},
        {"doctor", cmd_doctor, "say whether this machine can enforce the sandbox, item by item", false},
        {"kernelspecs", cmd_kernelspecs, "list the kernelspecs kbound finds", false},
};

static void usage(FILE *out) {
        cli_put_flowed(out, "Usage: kbound COMMAND [OPTIONS]\n\n"
                            "Proves what a sandboxed Jupyter kernel can and cannot do.\n\nCommands:\n");
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
                char head[32];
                snprintf(head, sizeof head, "  %s", commands[i].name);
                cli_put_item(out, head, 15, commands[i].summary);
        }
        cli_put_flowed(out, "\n`kbound COMMAND --help` describes a command's options.\n\n"
                            "Exit codes: 0 pass, 1 a check failed, 2 usage error, 3 the sandbox cannot be enforced.\n");
}

int main(int argc, char **argv) {
        /* Before anything is created: a signal from here on ends the command cleanly, with its
         * report (the loader's few milliseconds before main are the only window left). */
        for (size_t i = 0; argc >= 2 && i < sizeof(commands) / sizeof(commands[0]); i++)
                if (commands[i].cancels && strcmp(argv[1], commands[i].name) == 0) {
                        if (cli_signals_install() < 0) {
                                cli_error("cannot set up the signal handlers: %s", strerror(errno));
                                return KB_EXIT_ENFORCE;
                        }
                        cli_signals_unblock();
                }
        if (argc < 2) {
                usage(stderr);
                return KB_EXIT_USAGE;
        }
        /* `kbound help COMMAND` is `kbound COMMAND --help`, as git and cargo have it. */
        char *help_argv[] = {argv[0], argc > 2 ? argv[2] : NULL, "--help", NULL};
        if (strcmp(argv[1], "help") == 0 && argc == 3) {
                argv = help_argv;
                argc = 3;
        } else if (strcmp(argv[1], "help") == 0 && argc > 3) {
                cli_error("help: one command at a time (kbound help COMMAND)");
                return KB_EXIT_USAGE;
        } else if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
                usage(stdout);
                return 0;
        }
        if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
                printf("kbound %s\n", KBOUND_VERSION);
                return 0;
        }
        /* OpenSSL loads its error strings (about 0.5 MB of kbound's memory) when it first
         * initialises; kbound never prints them. How OpenSSL starts is the process's choice, so
         * it is made here and not in the library. */
        OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS, NULL);
        /* One malloc arena for all threads. kbound's threads (one per kernel, libzmq's) mostly wait,
         * so an arena each buys no speed, while each kernel's arena kept its own high-water mark of
         * the host's looks after the kernel was done (with two kernels, 1.2 to 1.9 MiB more at the
         * peak; docs/performance.md). The process's choice, so it is made here. */
        (void) mallopt(M_ARENA_MAX, 1);
        /* A look does not count a kbound process as holding a sandbox's namespace (another run's
         * look enters them all), so none may keep one handed down to it. */
        (void) kb_inspect_drop_inherited_namespaces();
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                if (strcmp(argv[1], commands[i].name) == 0) {
                        cli_stdout_install();
                        cli_raise_fd_limit();
                        cli_become_subreaper();
                        int r = commands[i].run(argc - 1, argv + 1);
                        cli_reap_orphans();
                        /* What never reached standard output (a full disk, a closed pipe) must
                         * not pass for a success. */
                        if (cli_stdout_close() && r == KB_EXIT_PASS)
                                r = KB_EXIT_FAIL;
                        return r;
                }
        const char *names[sizeof(commands) / sizeof(commands[0])];
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                names[i] = commands[i].name;
        const char *guess = cli_suggest(argv[1], strlen(argv[1]), names, sizeof(commands) / sizeof(commands[0]));
        if (guess)
                cli_error("unknown command '%s'; did you mean %s? (kbound --help lists the commands)", argv[1], guess);
        else
                cli_error("unknown command '%s' (kbound --help lists the commands)", argv[1]);
        return KB_EXIT_USAGE;
}
