/* options.c: the one table of the options the commands share, and the getopt_long loop over it. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

/* Every shared option once: its name, whether it takes a value, and the value getopt_long returns
 * for it. --kernel and --quiet answer to -k and -q too, so theirs are those letters; the others are
 * long-only and numbered past any letter, so a command's own letters never collide with them. */
static const struct option shared_options[] = {
        {"kernel", required_argument, NULL, CLI_OPT_KERNEL},
        {"team", required_argument, NULL, CLI_OPT_TEAM},
        {"json", required_argument, NULL, CLI_OPT_JSON},
        {"junit", required_argument, NULL, CLI_OPT_JUNIT},
        {"allow-raw-network", no_argument, NULL, CLI_OPT_ALLOW_RAW_NETWORK},
        {"bwrap", required_argument, NULL, CLI_OPT_BWRAP},
        {"sandbox-user", required_argument, NULL, CLI_OPT_SANDBOX_USER},
        {"sockets", required_argument, NULL, CLI_OPT_SOCKETS},
        {"allow-syscall", required_argument, NULL, CLI_OPT_ALLOW_SYSCALL},
        {"transport", required_argument, NULL, CLI_OPT_TRANSPORT},
        {"kernels-dir", required_argument, NULL, CLI_OPT_KERNELS_DIR},
        {"ro-bind", required_argument, NULL, CLI_OPT_RO_BIND},
        {"timeout", required_argument, NULL, CLI_OPT_TIMEOUT},
        {"keep", no_argument, NULL, CLI_OPT_KEEP},
        {"transcript", required_argument, NULL, CLI_OPT_TRANSCRIPT},
        {"rootfs", required_argument, NULL, CLI_OPT_ROOTFS},
        {"image", required_argument, NULL, CLI_OPT_IMAGE},
        {"image-max-size", required_argument, NULL, CLI_OPT_IMAGE_MAX_SIZE},
        {"image-no-cache", no_argument, NULL, CLI_OPT_IMAGE_NO_CACHE},
        {"prefix", required_argument, NULL, CLI_OPT_PREFIX},
        {"memory-max", required_argument, NULL, CLI_OPT_MEMORY_MAX},
        {"tasks-max", required_argument, NULL, CLI_OPT_TASKS_MAX},
        {"tmp-size", required_argument, NULL, CLI_OPT_TMP_SIZE},
        {"log-max", required_argument, NULL, CLI_OPT_LOG_MAX},
        {"workspace-max", required_argument, NULL, CLI_OPT_WORKSPACE_MAX},
        {"cpu-max", required_argument, NULL, CLI_OPT_CPU_MAX},
        {"color", required_argument, NULL, CLI_OPT_COLOR},
        {"verbose", no_argument, NULL, CLI_OPT_VERBOSE},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
};

/* The --help wording of every shared option: the option as written, what it does (further lines
 * after '\n'; cli_opts_usage indents them), and the commands this wording is for (NULL: every
 * command without an entry of its own). Commands get their own wording where the option does
 * something different to them: many sandboxes or one, kernels checked or tested, a deadline for
 * the whole run or for start-up. */
typedef struct shared_help {
        const char *name;
        const char *const *cmds;
        const char *syntax;
        const char *text;
} shared_help;

static const shared_help shared_helps[] = {
        {"kernel", (const char *const[]){"check", NULL}, "--kernel NAME|PATH",
         "a kernelspec to check (repeatable; default: python3 and ir)"},
        {"kernel", (const char *const[]){"conformance", NULL}, "--kernel NAME|PATH",
         "a kernelspec to test (repeatable; default: python3 and ir)"},
        {"kernel", NULL, "--kernel NAME|PATH", "kernelspec name or folder (required)"},
        {"team", (const char *const[]){"check", NULL}, "--team NAME", "prefix of the team names (default kbound)"},
        {"team", (const char *const[]){"conformance", NULL}, "--team NAME",
         "prefix of the team names (default kbound-conf)"},
        {"team", (const char *const[]){"audit", NULL}, "--team NAME", "prefix of the team names (default audit)"},
        {"team", (const char *const[]){"run", NULL}, "--team NAME", "team name for the sandbox folders (default run)"},
        {"team", (const char *const[]){"console", NULL}, "--team NAME",
         "team name for the sandbox folders (default console)"},
        {"json", (const char *const[]){"conformance", NULL}, "--json FILE",
         "write the JSON report (docs/report-format.md, \"kind\": \"conformance\")"},
        {"json", NULL, "--json FILE", "write the JSON report (docs/report-format.md)"},
        {"junit", (const char *const[]){"conformance", NULL}, "--junit FILE",
         "write a JUnit XML report (one testcase per kernel x item)"},
        {"junit", NULL, "--junit FILE", "write a JUnit XML report (one testcase per kernel x check)"},
        {"allow-raw-network", (const char *const[]){"check", NULL}, "--allow-raw-network",
         "keep the host network; the network boundary is then NOT claimed\n"
         "(also OPENAI4S_KERNEL_ALLOW_RAW_NETWORK=1)"},
        {"allow-raw-network", NULL, "--allow-raw-network",
         "keep the host network (same as OPENAI4S_KERNEL_ALLOW_RAW_NETWORK=1)"},
        {"bwrap", NULL, "--bwrap PATH", "bubblewrap to use (default: $KBOUND_BWRAP, else PATH)"},
        {"sandbox-user", NULL, "--sandbox-user NAME",
         "when kbound is root, run kernels as NAME (default: $KBOUND_SANDBOX_USER,\n"
         "else kbound-sandbox, which must exist); never root"},
        {"sockets", NULL, "--sockets MODE",
         "socket families kernels may create: default (unix, netlink),\n"
         "unix, or inet (also IP; the default under the network override)"},
        {"allow-syscall", NULL, "--allow-syscall NAME",
         "leave one call of the seccomp filter allowed (repeatable;\n"
         "reported as not claimed; docs/seccomp.md)"},
        {"transport", (const char *const[]){"audit", NULL}, "--transport MODE",
         "the connection file's transport: auto (ipc in a folder the wrapper\n"
         "must show the kernel, or TCP where a kernelspec's metadata says so)\n"
         "or tcp (127.0.0.1, for a wrapper that shares the host's network;\n"
         "docs/audit.md)"},
        {"transport", NULL, "--transport MODE",
         "how kbound reaches the kernels: auto (ipc, or TCP through kbound's\n"
         "relay where a kernelspec's metadata says so; the default) or tcp\n"
         "(every kernel binds TCP on its own loopback; docs/transports.md)"},
        {"kernels-dir", (const char *const[]){"check", NULL}, "--kernels-dir DIR",
         "your language packs, searched before kbound's kernels/ folder"},
        {"kernels-dir", NULL, "--kernels-dir DIR", "your language packs, searched before kbound's kernels/ folder"},
        {"ro-bind", (const char *const[]){"run", "console", NULL}, "--ro-bind PATH",
         "also bind PATH read-only into the sandbox (repeatable)"},
        {"ro-bind", NULL, "--ro-bind PATH", "also bind PATH read-only into every sandbox (repeatable)"},
        {"image", NULL, "--image PATH[:TAG]",
         "an OCI image layout folder, or a docker/OCI archive (docker save,\n"
         "podman save): unpacked for the run, then used as --rootfs"},
        {"image-max-size", NULL, "--image-max-size SIZE", "the most the unpacked image may take on disk (default 8G)"},
        {"image-no-cache", NULL, "--image-no-cache",
         "unpack the image for this run alone: neither reuse nor keep a copy in\n"
         "the cache ($XDG_CACHE_HOME/kbound, ~/.cache/kbound; root: /var/cache/kbound)"},
        {"prefix", NULL, "--prefix DIR",
         "also find kernelspecs in DIR/share/jupyter/kernels (a venv's or\n"
         "conda env's sys.prefix; inside the image with --rootfs/--image)"},
        {"rootfs", (const char *const[]){"check", NULL}, "--rootfs DIR",
         "check kernels of an unpacked image: its /usr, /etc, /opt become\n"
         "the sandbox's read-only root; kernelspecs are found inside it\n"
         "(default kernels: every kernelspec of the image)"},
        {"rootfs", (const char *const[]){"conformance", NULL}, "--rootfs DIR",
         "test kernels of an unpacked image (its /usr, /etc, /opt read-only;\n"
         "kernelspecs found inside it; default: every kernelspec of the image)"},
        {"rootfs", (const char *const[]){"run", NULL}, "--rootfs DIR",
         "run on an unpacked image: its /usr, /etc, /opt read-only; the\n"
         "kernelspec is found inside it (docs/rootfs.md)"},
        {"rootfs", (const char *const[]){"console", NULL}, "--rootfs DIR",
         "run the kernel of an unpacked image (docs/rootfs.md)"},
        {"timeout", (const char *const[]){"run", NULL}, "--timeout SECONDS",
         "deadline for start-up and for the cell (default 60)"},
        {"timeout", (const char *const[]){"console", NULL}, "--timeout SECONDS",
         "deadline for start-up (default 60); cells have none"},
        {"timeout", NULL, "--timeout SECONDS", "deadline for the whole run (default 300)"},
        {"keep", NULL, "--keep", "keep the team folders for inspection"},
        {"transcript", (const char *const[]){"check", NULL}, "--transcript FILE",
         "write every message sent and received as JSON lines (0600;\n"
         "the connection key and canaries are redacted)"},
        {"transcript", NULL, "--transcript FILE", "write every message sent and received as JSON lines (0600)"},
        {"quiet", NULL, "--quiet", "no progress on stderr"},
        {"color", NULL, "--color WHEN",
         "colour the results: auto (on a terminal, unless NO_COLOR is set;\n"
         "the default), always or never"},
        {"verbose", NULL, "--verbose",
         "every detail whole in the table (on a terminal passes are cut to\n"
         "one line), and each result on stderr as it is judged"},
        {"memory-max", NULL, "--memory-max SIZE",
         "the most memory one sandbox may use (default 2G; none: no limit,\n"
         "reported as not claimed; docs/limits.md)"},
        {"tasks-max", NULL, "--tasks-max N", "the most processes and threads one sandbox may run (default 512)"},
        {"tmp-size", NULL, "--tmp-size SIZE",
         "the size of the sandbox's /tmp and of its /dev/shm, each (default 512M)"},
        {"log-max", NULL, "--log-max SIZE",
         "the most of the kernel's log kept on disk, the oldest part\n"
         "rotated away (default 16M)"},
        {"workspace-max", NULL, "--workspace-max SIZE",
         "the size of the sandbox's /workspace, in memory (default 1G; none:\n"
         "the team's host folder, unbounded, reported as not claimed)"},
        {"cpu-max", NULL, "--cpu-max N",
         "the most processor time one sandbox may take: N CPUs' worth (a cgroup\n"
         "of its own; default none, reported as not claimed)"},
};

static const struct option *find_option(const struct option *list, const char *name) {
        for (const struct option *o = list; o && o->name; o++)
                if (strcmp(o->name, name) == 0)
                        return o;
        return NULL;
}

int cli_opts_init(cli_opts *o, const char *cmd, const char *const *accepts, const struct option *own) {
        *o = (cli_opts){.cmd = cmd, .kernels_max = 1, .team_max = KB_TEAM_NAME_MAX};
        size_t n = 0;
        for (const char *const *name = accepts; *name; name++) {
                const struct option *def = find_option(own, *name);
                if (!def) {
                        for (size_t i = 0; i < KB_ELEMENTSOF(shared_options) && !def; i++)
                                if (strcmp(shared_options[i].name, *name) == 0)
                                        def = &shared_options[i];
                }
                /* A name in neither table, or too many, is this program's mistake, not the user's. */
                if (!def || n == CLI_OPTS_MAX)
                        return -EINVAL;
                o->longopts[n++] = *def;
        }
        o->longopts[n] = (struct option){0};
        return 0;
}

/* Takes one shared option's value. Returns 0, or KB_EXIT_USAGE after saying what is wrong. */
static int take(cli_opts *o, int c, const char *arg) {
        switch (c) {
        case CLI_OPT_KERNEL:
                /* Commands of one kernel take the last --kernel; those of many take each. */
                if (o->kernels_max == 1) {
                        o->kernels[0] = arg;
                        o->n_kernels = 1;
                        return 0;
                }
                if (o->n_kernels == o->kernels_max) {
                        cli_error("%s: at most %zu kernels at once", o->cmd, o->kernels_max);
                        return KB_EXIT_USAGE;
                }
                o->kernels[o->n_kernels++] = arg;
                return 0;
        case CLI_OPT_TEAM:
                return cli_opt_team(o->cmd, arg, o->team_max, &o->team);
        case CLI_OPT_JSON:
                o->json_path = arg;
                return 0;
        case CLI_OPT_JUNIT:
                o->junit_path = arg;
                return 0;
        case CLI_OPT_ALLOW_RAW_NETWORK:
                o->allow_network = true;
                return 0;
        case CLI_OPT_BWRAP:
                o->bwrap = arg;
                return 0;
        case CLI_OPT_SANDBOX_USER:
                o->sandbox_user = arg;
                return 0;
        case CLI_OPT_SOCKETS:
                o->hardening.sockets = arg;
                return 0;
        case CLI_OPT_ALLOW_SYSCALL:
                return cli_opt_allow_syscall(o->cmd, &o->hardening, arg);
        case CLI_OPT_TRANSPORT:
                if (strcmp(arg, "tcp") != 0 && strcmp(arg, "auto") != 0) {
                        cli_error("%s: --transport takes auto or tcp, not '%s'", o->cmd, arg);
                        return KB_EXIT_USAGE;
                }
                o->tcp = strcmp(arg, "tcp") == 0;
                return 0;
        case CLI_OPT_KERNELS_DIR:
                o->kernels_dir = arg;
                return 0;
        case CLI_OPT_RO_BIND:
                return cli_opt_ro_bind(o->cmd, o->ro_paths, &o->n_ro, arg);
        case CLI_OPT_TIMEOUT:
                return cli_opt_timeout(o->cmd, arg, &o->timeout_ms);
        case CLI_OPT_KEEP:
                o->keep = true;
                return 0;
        case CLI_OPT_TRANSCRIPT:
                o->transcript = arg;
                return 0;
        case CLI_OPT_ROOTFS:
                o->rootfs = arg;
                return 0;
        case CLI_OPT_IMAGE:
                o->image = arg;
                return 0;
        case CLI_OPT_IMAGE_MAX_SIZE:
                return cli_opt_size(o->cmd, "--image-max-size", arg, &o->image_max);
        case CLI_OPT_IMAGE_NO_CACHE:
                o->image_no_cache = true;
                return 0;
        case CLI_OPT_PREFIX:
                return cli_opt_prefix(o->cmd, o->prefixes, &o->n_prefixes, arg);
        case CLI_OPT_MEMORY_MAX:
                o->hardening.limits[KB_LIMIT_MEMORY] = arg;
                return 0;
        case CLI_OPT_TASKS_MAX:
                o->hardening.limits[KB_LIMIT_TASKS] = arg;
                return 0;
        case CLI_OPT_TMP_SIZE:
                o->hardening.limits[KB_LIMIT_TMP] = arg;
                return 0;
        case CLI_OPT_LOG_MAX:
                o->hardening.limits[KB_LIMIT_LOG] = arg;
                return 0;
        case CLI_OPT_WORKSPACE_MAX:
                o->hardening.limits[KB_LIMIT_WORKSPACE] = arg;
                return 0;
        case CLI_OPT_CPU_MAX:
                o->hardening.limits[KB_LIMIT_CPU] = arg;
                return 0;
        case CLI_OPT_COLOR:
                if (strcmp(arg, "auto") == 0)
                        o->color = CLI_COLOR_AUTO;
                else if (strcmp(arg, "always") == 0)
                        o->color = CLI_COLOR_ALWAYS;
                else if (strcmp(arg, "never") == 0)
                        o->color = CLI_COLOR_NEVER;
                else {
                        cli_error("%s: --color takes auto, always or never, not '%s'", o->cmd, arg);
                        return KB_EXIT_USAGE;
                }
                return 0;
        case CLI_OPT_VERBOSE:
                o->verbose = true;
                cli_set_verbose(true);
                return 0;
        case 'q':
                cli_set_quiet(true);
                return 0;
        default:
                return KB_EXIT_USAGE; /* not reached: take() sees only shared values */
        }
}

/* Whether c is one of the shared options this command took in cli_opts_init (a command's own
 * letter, 'h' and getopt's '?' are not). */
static bool is_shared(const cli_opts *o, int c) {
        if (c == 'h' || c == '?')
                return false;
        for (size_t i = 0; o->longopts[i].name; i++) {
                if (o->longopts[i].val != c)
                        continue;
                for (size_t j = 0; j < KB_ELEMENTSOF(shared_options); j++)
                        if (shared_options[j].val == c && strcmp(shared_options[j].name, o->longopts[i].name) == 0)
                                return true;
        }
        return false;
}

/* Edits (insert, delete, substitute, swap two neighbours) from a to b, at most CLI_SUGGEST_MAX + 1. */
#define CLI_SUGGEST_MAX 2
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb) {
        enum { N = 48 };
        if (la >= N || lb >= N)
                return CLI_SUGGEST_MAX + 1;
        size_t d[N][N];
        for (size_t i = 0; i <= la; i++)
                d[i][0] = i;
        for (size_t j = 0; j <= lb; j++)
                d[0][j] = j;
        for (size_t i = 1; i <= la; i++)
                for (size_t j = 1; j <= lb; j++) {
                        size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
                        if (d[i - 1][j] + 1 < best)
                                best = d[i - 1][j] + 1;
                        if (d[i][j - 1] + 1 < best)
                                best = d[i][j - 1] + 1;
                        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                            d[i - 2][j - 2] + 1 < best)
                                best = d[i - 2][j - 2] + 1;
                        d[i][j] = best;
                }
        return d[la][lb];
}

const char *cli_suggest(const char *word, size_t len, const char *const *names, size_t n) {
        const char *best = NULL;
        size_t best_d = CLI_SUGGEST_MAX + 1;
        for (size_t i = 0; i < n; i++) {
                size_t d = edit_distance(word, len, names[i], strlen(names[i]));
                /* A unique prefix getopt_long would have taken is not what brought us here. */
                if (d < best_d) {
                        best_d = d;
                        best = names[i];
                }
        }
        return best;
}

/* What getopt_long refused, said once and short (not the whole --help): the option, why, and the
 * one this command has that it most likely meant. */
static void refused_option(const cli_opts *o, int c, char **argv) {
        const char *arg = argv[optind - 1];
        if (c == ':') {
                cli_error("%s: %s needs a value (`kbound %s --help` lists the options)", o->cmd, arg, o->cmd);
                return;
        }
        if (optopt && strncmp(arg, "--", 2) != 0) {
                cli_error("%s: unknown option '-%c' (`kbound %s --help` lists the options)", o->cmd, optopt, o->cmd);
                return;
        }
        const char *name = arg + (strncmp(arg, "--", 2) == 0 ? 2 : 0);
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t) (eq - name) : strlen(name);
        const char *names[CLI_OPTS_MAX];
        size_t n = 0;
        for (size_t i = 0; o->longopts[i].name && n < CLI_OPTS_MAX; i++)
                names[n++] = o->longopts[i].name;
        /* An option of this command that takes no value but was given one, or an ambiguous prefix. */
        for (size_t i = 0; i < n; i++)
                if (strlen(names[i]) == len && strncmp(names[i], name, len) == 0) {
                        cli_error("%s: --%s takes no value (`kbound %s --help` lists the options)", o->cmd, names[i],
                                  o->cmd);
                        return;
                }
        const char *guess = cli_suggest(name, len, names, n);
        if (guess)
                cli_error("%s: unknown option '--%.*s'; did you mean --%s? (`kbound %s --help` lists the options)",
                          o->cmd, (int) len, name, guess, o->cmd);
        else
                cli_error("%s: unknown option '--%.*s' (`kbound %s --help` lists the options)", o->cmd, (int) len, name,
                          o->cmd);
}

int cli_opts_next(cli_opts *o, int argc, char **argv, const char *shortopts) {
        /* Errors are said here, once, with a suggestion; a leading ':' makes a missing value ':'. */
        char opts[32];
        snprintf(opts, sizeof opts, ":%s", shortopts);
        opterr = 0;
        int c;
        while ((c = getopt_long(argc, argv, opts, o->longopts, NULL)) != -1) {
                if (c == '?' || c == ':') {
                        refused_option(o, c, argv);
                        return '?';
                }
                if (!is_shared(o, c))
                        return c;
                if (take(o, c, optarg))
                        return CLI_OPTS_REFUSED;
        }
        return -1;
}

static bool help_is_for(const shared_help *h, const char *cmd) {
        if (!h->cmds)
                return true;
        for (const char *const *c = h->cmds; *c; c++)
                if (strcmp(*c, cmd) == 0)
                        return true;
        return false;
}

/* The wording of a shared option for cmd: its own entry, else the one for every command. The
 * table lists a command's own entries before the common one, so the first match is it. */
static const shared_help *find_shared_help(const char *name, const char *cmd) {
        for (size_t i = 0; i < KB_ELEMENTSOF(shared_helps); i++)
                if (strcmp(shared_helps[i].name, name) == 0 && help_is_for(&shared_helps[i], cmd))
                        return &shared_helps[i];
        return NULL;
}

static const cli_help *find_own_help(const cli_help *list, const char *name) {
        for (const cli_help *h = list; h && h->name; h++)
                if (strcmp(h->name, name) == 0)
                        return h;
        return NULL;
}

/* The option column is 23 wide ("--require-full-boundary"), then a space; the text is flowed
 * within the terminal's width (80 on a pipe), further lines under its first. */
static void put_help(FILE *out, const char *syntax, const char *text) {
        char head[64];
        snprintf(head, sizeof head, "  %s", syntax);
        cli_put_item(out, head, 26, text);
}

int cli_opts_usage(const cli_opts *o, FILE *out, const char *intro, const cli_help *own, const char *epilogue) {
        /* Every line is found before anything is printed: a --help missing an option is this
         * program's mistake, and half a --help would hide it. */
        for (size_t i = 0; o->longopts[i].name; i++) {
                const char *name = o->longopts[i].name;
                if (strcmp(name, "help") != 0 && !find_own_help(own, name) && !find_shared_help(name, o->cmd))
                        return -EINVAL;
        }
        cli_put_flowed(out, intro);
        fputc('\n', out);
        for (size_t i = 0; o->longopts[i].name; i++) {
                const char *name = o->longopts[i].name;
                if (strcmp(name, "help") == 0)
                        continue;
                const cli_help *h = find_own_help(own, name);
                if (h) {
                        put_help(out, h->syntax, h->text);
                        continue;
                }
                const shared_help *sh = find_shared_help(name, o->cmd);
                put_help(out, sh->syntax, sh->text);
        }
        if (epilogue) {
                fputc('\n', out);
                cli_put_flowed(out, epilogue);
        }
        return 0;
}

void cli_command_usage(const cli_opts *o, const cli_command *cmd, FILE *out) {
        (void) cli_opts_usage(o, out, cmd->intro, cmd->own_help, cmd->epilogue);
}

static bool is_own(const cli_command *cmd, int c) {
        for (const struct option *own = cmd->own; own && own->name; own++)
                if (own->val == c)
                        return true;
        return false;
}

/* Fills o from argv: shared options by cli_opts_next, the command's own by cmd->take. Returns as
 * cli_opts_parse_many. */
static int parse(cli_opts *o, const cli_command *cmd, const char *shortopts, int argc, char **argv, void *userdata) {
        int c;
        while ((c = cli_opts_next(o, argc, argv, shortopts)) != -1) {
                if (c == CLI_OPTS_REFUSED)
                        return KB_EXIT_USAGE;
                if (c == 'h') {
                        cli_command_usage(o, cmd, stdout);
                        return KB_EXIT_PASS;
                }
                if (c == '?')
                        return KB_EXIT_USAGE; /* said by cli_opts_next */
                if (!cmd->take || !is_own(cmd, c)) {
                        cli_command_usage(o, cmd, stderr);
                        return KB_EXIT_USAGE;
                }
                if (cmd->take(userdata, c, optarg))
                        return KB_EXIT_USAGE;
        }
        return CLI_GO_ON;
}

int cli_opts_parse_many(cli_opts *o, const cli_command *cmd, int argc, char **argv, void *userdata) {
        if (cli_opts_init(o, cmd->name, cmd->accepts, cmd->own) < 0)
                return KB_EXIT_USAGE;
        o->kernels_max = CLI_KERNELS_MAX;
        o->team = cmd->team;
        o->team_max = CLI_TEAM_PREFIX_MAX;
        o->timeout_ms = 300000;
        return parse(o, cmd, "k:qh", argc, argv, userdata);
}

int cli_opts_parse_one(cli_opts *o, const cli_command *cmd, int argc, char **argv, void *userdata,
                       const char **ret_operand) {
        if (cli_opts_init(o, cmd->name, cmd->accepts, cmd->own) < 0)
                return KB_EXIT_USAGE;
        o->team = cmd->team;
        o->timeout_ms = 60000;
        int r = parse(o, cmd, "k:qh", argc, argv, userdata);
        if (r != CLI_GO_ON)
                return r;
        int operands = cmd->operand ? 1 : 0;
        if (o->n_kernels == 0)
                cli_error("%s: --kernel is required", cmd->name);
        else if (argc - optind != operands && cmd->operand)
                cli_error("%s: expected exactly one %s argument", cmd->name, cmd->operand);
        else if (argc - optind != operands)
                cli_error("%s: unexpected argument '%s'", cmd->name, argv[optind]);
        if (o->n_kernels == 0 || argc - optind != operands) {
                cli_command_usage(o, cmd, stderr);
                return KB_EXIT_USAGE;
        }
        if (ret_operand)
                *ret_operand = cmd->operand ? argv[optind] : NULL;
        return CLI_GO_ON;
}
