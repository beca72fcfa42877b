/* boundary_probe.c: kbound-probe, the boundary probe every language's cell spawns. Inside the
 * sandbox it tries every way out a spawned child can try (writes outside the workspace, host
 * settings, the host's loopback canaries, credentials, another team's files) and prints the result
 * object the probe cell publishes (docs/probes-cells.md), which the host's judges read as they read
 * a cell's: the program reports, it never decides. Each sub-probe catches its own failure (the
 * result's "errors"), so one failure never hides the others. Its attack-surface cell runs the
 * syscall table as kbound-syscall-probe does (syscall_surface.c). Linked statically (libc and
 * json-c), so it runs in any image's rootfs. */
#include "boundary_probe.h"
#include "syscall_surface.h"
#include "tool_io.h"
#include <errno.h>
#include <getopt.h>
#include <resolv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
/* The parameters are a few KiB; anything far larger is not them. */
#define PARAMS_MAX (1u << 20)
#define PARAMS_DEPTH 16

/* The parameters from arg: the standard base64 of the JSON object, or "-": its text on stdin. */
static int read_params(const char *arg, json_object **ret, char *why, size_t n) {
        char *text = NULL;
        size_t len = 0;
        if (strcmp(arg, "-") == 0) {
                text = malloc(PARAMS_MAX + 1);
                while (text && len < PARAMS_MAX) {
                        ssize_t got = read(STDIN_FILENO, text + len, PARAMS_MAX - len);
                        if (got < 0 && errno == EINTR)
                                continue;
                        if (got <= 0)
                                break;
                        len += (size_t) got;
                }
        } else if (strlen(arg) / 4 * 3 + 3 <= PARAMS_MAX) {
                text = malloc(strlen(arg) / 4 * 3 + 3);
                int got = text ? b64_pton(arg, (unsigned char *) text, strlen(arg) / 4 * 3 + 3) : 0;
                if (text && got < 0) {
                        snprintf(why, n, "the parameters are not base64");
                        free(text);
                        return -EINVAL;
                }
                len = got > 0 ? (size_t) got : 0;
        }
        if (!text) {
                snprintf(why, n, "the parameters are too long or memory ran out");
                return -ENOMEM;
        }
        json_tokener *tok = json_tokener_new_ex(PARAMS_DEPTH);
        json_object *params = NULL;
        if (tok) {
                json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
                params = json_tokener_parse_ex(tok, text, (int) len);
                if (params && tok->char_offset != (int) len) {
                        json_object_put(params); /* something after the object */
                        params = NULL;
                }
                json_tokener_free(tok);
        }
        free(text);
        if (!params || !json_object_is_type(params, json_type_object)) {
                json_object_put(params);
                snprintf(why, n, "the parameters are not one JSON object");
                return -EINVAL;
        }
        *ret = params;
        return 0;
}

/* ---- the boundary cell ---- */

static json_object *empty_list(const probe_ctx *c) {
        return json_object_new_array();
}

static json_object *workspace_fallback(const probe_ctx *c) {
        return probe_object("path", probe_str(probe_param_str(c, "workspace")), "written", json_object_new_boolean(0),
                            "error", json_object_new_string("probe failed"), NULL);
}

static json_object *subprocess_fallback(const probe_ctx *c) {
        return probe_object("spawned", json_object_new_boolean(0), "error", json_object_new_string("probe failed"),
                            "environ", json_object_new_string(""), "proc", json_object_new_array(), NULL);
}

static json_object *keys_fallback(const probe_ctx *c) {
        return probe_object("tested", json_object_new_boolean(0), "found", json_object_new_boolean(0), "error",
                            json_object_new_string("probe failed"), NULL);
}

static json_object *process_fallback(const probe_ctx *c) {
        return probe_object("no_new_privs", NULL, "seccomp", NULL, "cap_eff", json_object_new_string(""), "cap_prm",
                            json_object_new_string(""), "cap_bnd", json_object_new_string(""), "uid",
                            json_object_new_int64(getuid()), "gid", json_object_new_int64(getgid()),
                            "visible_processes", json_object_new_int(0), NULL);
}

/* The sub-probes in the order they run (the mounts first: the write test reads them), each with
 * its name in "errors", where its part goes in the result, and what stands there if it fails. */
static const struct step {
        const char *name;
        const char *parent; /* the result's member holding it, or NULL: the top level */
        const char *key;
        probe_fn run;
        json_object *(*fallback)(const probe_ctx *c);
} steps[] = {
        {"mounts", NULL, "mounts", probe_mounts, empty_list},
        {"workspace", NULL, "workspace", probe_workspace, workspace_fallback},
        {"write_outside", NULL, "write_outside", probe_write_outside, empty_list},
        {"sysctl", NULL, "sysctl", probe_sysctl, empty_list},
        {"network.interfaces", "network", "interfaces", probe_interfaces, empty_list},
        {"network.routes_v4", "network", "routes_v4", probe_routes_v4, empty_list},
        {"network.routes_v6", "network", "routes_v6", probe_routes_v6, empty_list},
        {"network.tcp", "network", "tcp", probe_tcp, empty_list},
        {"network.abstract", "network", "abstract", probe_abstract, empty_list},
        {"network.unix_visible", "network", "unix_visible", probe_unix_visible, empty_list},
        {"credentials.subprocess", "credentials", "subprocess", probe_subprocess, subprocess_fallback},
        {"credentials.files", "credentials", "files", probe_credential_files, empty_list},
        {"credentials.keys", "credentials", "keys", probe_keys, keys_fallback},
        {"cross_team", NULL, "cross_team", probe_cross_team, empty_list},
        {"process", NULL, "process", probe_process, process_fallback},
};

/* The result's members in probe.py's order, filled in as the steps run (json-c keeps a member's
 * place when its value is replaced). */
static json_object *result_skeleton(const probe_ctx *c) {
        static const char *const top[] = {"workspace",  "write_outside", "sysctl",  "network", "credentials",
                                          "cross_team", "mounts",        "process", "errors"};
        json_object *result = json_object_new_object();
        if (!result)
                return NULL;
        json_object_object_add(result, "pid", json_object_new_int64(c->kernel_pid));
        for (size_t i = 0; i < ELEMENTSOF(top); i++)
                json_object_object_add(result, top[i], NULL);
        json_object_object_add(result, "network", json_object_new_object());
        json_object_object_add(result, "credentials", json_object_new_object());
        json_object_object_add(result, "errors", json_object_new_array());
        return result;
}

static json_object *run_boundary(probe_ctx *c) {
        json_object *result = result_skeleton(c), *errors = NULL;
        if (!result || !json_object_object_get_ex(result, "errors", &errors) || !errors) {
                json_object_put(result);
                return NULL;
        }
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                const struct step *s = &steps[i];
                char why[512] = "";
                json_object *part = NULL, *holder = result;
                int r = s->run(c, &part, why, sizeof why);
                if (r < 0) {
                        json_object_put(part);
                        json_object *e = json_object_new_object();
                        json_object_object_add(e, "probe", json_object_new_string(s->name));
                        json_object_object_add(e, "error", why[0] ? probe_str(why) : probe_errno(-r));
                        json_object_array_add(errors, e);
                        part = s->fallback(c);
                }
                if (s->parent && !json_object_object_get_ex(result, s->parent, &holder))
                        holder = NULL;
                if (holder)
                        json_object_object_add(holder, s->key, part);
                else
                        json_object_put(part);
        }
        return result;
}

/* ---- the command ---- */

static void usage(FILE *f, const char *argv0) {
        fprintf(f,
                "usage: %s [--kernel-pid PID] boundary PARAMS\n"
                "       %s [--kernel-pid PID] attack-surface [PARAMS]\n"
                "Runs one probe cell's attempts inside kbound's sandbox and prints the cell's result\n"
                "object as one line: `RESULT_MARKER BASE64` when the parameters name a result_marker,\n"
                "else the JSON itself (docs/probes-cells.md, \"kbound-probe\"). PARAMS is the\n"
                "standard base64 of the cell's parameters (a JSON object), or - to read the JSON\n"
                "text on stdin. The boundary cell first prints `CHILD_MARKER PID` when the\n"
                "parameters name a child_marker, then waits for child_go. Exit 0 when the result was\n"
                "written, 1 when it could not be, 2 for bad usage or parameters.\n"
                "  --kernel-pid PID  the kernel process the cell runs in (default: the parent)\n"
                "  -h, --help        this text\n"
                "  -V, --version     the version\n",
                argv0, argv0);
}

static int write_line(const char *text) {
        if (fputs(text, stdout) == EOF || fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
                fprintf(stderr, "kbound-probe: writing the result: %s\n", strerror(errno));
                return 1;
        }
        return 0;
}

/* The parameters' result_marker when it can start a line of its own: one word of printable ASCII. */
static const char *result_marker(json_object *params) {
        json_object *m = NULL;
        if (!json_object_object_get_ex(params, "result_marker", &m) || !json_object_is_type(m, json_type_string))
                return NULL;
        const char *s = json_object_get_string(m);
        if (!*s || strlen(s) > 128)
                return NULL;
        for (const char *p = s; *p; p++)
                if (*p <= ' ' || *p > '~')
                        return NULL;
        return s;
}

/* The result as its last line: `MARKER BASE64` (the stdout transport, docs/probes-cells.md) when
 * the parameters carry a result_marker, so that a cell need only relay what the program prints;
 * else the JSON text itself. */
static int write_result(const char *json, const char *marker) {
        if (!marker)
                return write_line(json);
        size_t n = strlen(json), size = (n + 2) / 3 * 4 + 1;
        char *b64 = malloc(size);
        int r = b64 && b64_ntop((const unsigned char *) json, n, b64, size) >= 0 ? 0 : -1;
        if (r == 0)
                r = printf("%s ", marker) < 0 ? 1 : write_line(b64);
        else
                fprintf(stderr, "kbound-probe: out of memory\n");
        free(b64);
        return r == 0 ? 0 : 1;
}

/* The attack-surface cell's result: the table's tries (kb_surface_write) inside the one object. */
static int run_surface(const probe_ctx *c) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f) {
                fprintf(stderr, "kbound-probe: out of memory\n");
                return 1;
        }
        fprintf(f, "{\"pid\": %ld, \"child\": ", (long) c->kernel_pid);
        fflush(f); /* before the tries fork */
        kb_surface_write(f, true);
        fputs(", \"errors\": []}", f);
        int r = fclose(f) == 0 && text ? write_result(text, result_marker(c->params)) : 1;
        free(text);
        return r;
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                {"help", no_argument, NULL, 'h'},
                {"version", no_argument, NULL, 'V'},
                {"kernel-pid", required_argument, NULL, 'k'},
                {0},
        };
        probe_ctx c = {.kernel_pid = getppid()};
        int opt;
        while ((opt = getopt_long(argc, argv, "+hV", options, NULL)) != -1) {
                char *end = NULL;
                if (kb_tool_help_version(opt, "kbound-probe", usage, argv[0]) == 0)
                        return 0;
                switch (opt) {
                case 'k':
                        errno = 0;
                        long pid = strtol(optarg, &end, 10);
                        if (errno || end == optarg || *end || pid <= 0 || pid > INT32_MAX) {
                                fprintf(stderr, "kbound-probe: --kernel-pid %s is not a pid\n", optarg);
                                return 2;
                        }
                        c.kernel_pid = (pid_t) pid;
                        break;
                default:
                        usage(stderr, argv[0]);
                        return 2;
                }
        }
        const char *cell = optind < argc ? argv[optind] : NULL;
        const char *params = optind + 1 < argc ? argv[optind + 1] : NULL;
        bool boundary = cell && strcmp(cell, "boundary") == 0;
        if (!cell || (!boundary && strcmp(cell, "attack-surface") != 0) || (boundary && !params) || optind + 2 < argc) {
                usage(stderr, argv[0]);
                return 2;
        }
        char why[256];
        if (params && read_params(params, &c.params, why, sizeof why) < 0) {
                fprintf(stderr, "kbound-probe: %s\n", why);
                return 2;
        }
        if (!boundary) {
                int r = run_surface(&c);
                json_object_put(c.params);
                return r;
        }
        json_object *result = run_boundary(&c);
        int r = result ? write_result(json_object_to_json_string_ext(result, JSON_C_TO_STRING_PLAIN |
                                                                                     JSON_C_TO_STRING_NOSLASHESCAPE),
                                      result_marker(c.params))
                       : (fprintf(stderr, "kbound-probe: out of memory\n"), 1);
        json_object_put(result);
        for (size_t i = 0; i < c.n_mounts; i++) {
                free(c.mounts[i].point);
                free(c.mounts[i].fstype);
        }
        free(c.mounts);
        json_object_put(c.params);
        return r;
}
