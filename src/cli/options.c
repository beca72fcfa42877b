/* options.c: the one table of the options the commands share, and the getopt_long loop over it. */
#include <errno.h>
#include <getopt.h>
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
        {"kernels-dir", required_argument, NULL, CLI_OPT_KERNELS_DIR},
        {"ro-bind", required_argument, NULL, CLI_OPT_RO_BIND},
        {"timeout", required_argument, NULL, CLI_OPT_TIMEOUT},
        {"keep", no_argument, NULL, CLI_OPT_KEEP},
        {"transcript", required_argument, NULL, CLI_OPT_TRANSCRIPT},
        {"rootfs", required_argument, NULL, CLI_OPT_ROOTFS},
        {"image", required_argument, NULL, CLI_OPT_IMAGE},
        {"image-max-size", required_argument, NULL, CLI_OPT_IMAGE_MAX_SIZE},
        {"prefix", required_argument, NULL, CLI_OPT_PREFIX},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
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
        case CLI_OPT_PREFIX:
                return cli_opt_prefix(o->cmd, o->prefixes, &o->n_prefixes, arg);
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

int cli_opts_next(cli_opts *o, int argc, char **argv, const char *shortopts) {
        int c;
        while ((c = getopt_long(argc, argv, shortopts, o->longopts, NULL)) != -1) {
                if (!is_shared(o, c))
                        return c;
                if (take(o, c, optarg))
                        return CLI_OPTS_REFUSED;
        }
        return -1;
}
