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

/* What a failed sub-probe's object says (probe.py's fallbacks). */
#define PROBE_FAILED "probe failed"

static json_object *empty_list(const probe_ctx *c) {
        return json_object_new_array();
}

/* Each fallback: its object, or NULL when memory runs out. */
static json_object *workspace_fallback(const probe_ctx *c) {
        json_object *o = json_object_new_object();
        if (probe_set_str(o, FACT_PROBE_WORKSPACE_PATH, probe_param_str(c, "workspace")) < 0 ||
            kb_fact_set_bool(o, FACT_PROBE_WORKSPACE_WRITTEN, false) < 0 ||
            kb_fact_set_str(o, FACT_PROBE_WORKSPACE_ERROR, PROBE_FAILED) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static json_object *subprocess_fallback(const probe_ctx *c) {
        json_object *o = json_object_new_object();
        if (kb_fact_set_bool(o, FACT_PROBE_SUBPROCESS_SPAWNED, false) < 0 ||
            kb_fact_set_str(o, FACT_PROBE_SUBPROCESS_ERROR, PROBE_FAILED) < 0 ||
            kb_fact_set_str(o, FACT_PROBE_SUBPROCESS_ENVIRON, "") < 0 ||
            kb_fact_set_arr(o, FACT_PROBE_SUBPROCESS_PROC, json_object_new_array()) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static json_object *keys_fallback(const probe_ctx *c) {
        json_object *o = json_object_new_object();
        if (kb_fact_set_bool(o, FACT_PROBE_KEYS_TESTED, false) < 0 ||
            kb_fact_set_bool(o, FACT_PROBE_KEYS_FOUND, false) < 0 ||
            kb_fact_set_str(o, FACT_PROBE_KEYS_ERROR, PROBE_FAILED) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static json_object *process_fallback(const probe_ctx *c) {
        json_object *o = json_object_new_object();
        if (kb_fact_set_null(o, FACT_PROBE_PROCESS_NO_NEW_PRIVS) < 0 ||
            kb_fact_set_null(o, FACT_PROBE_PROCESS_SECCOMP) < 0 ||
            kb_fact_set_str(o, FACT_PROBE_PROCESS_CAP_EFF, "") < 0 ||
            kb_fact_set_str(o, FACT_PROBE_PROCESS_CAP_PRM, "") < 0 ||
            kb_fact_set_str(o, FACT_PROBE_PROCESS_CAP_BND, "") < 0 ||
            kb_fact_set_int(o, FACT_PROBE_PROCESS_UID, getuid()) < 0 ||
            kb_fact_set_int(o, FACT_PROBE_PROCESS_GID, getgid()) < 0 ||
            kb_fact_set_int(o, FACT_PROBE_PROCESS_VISIBLE_PROCESSES, 0) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

/* A sub-probe, where its part goes in the result (an object or array fact of the result, or of its
 * network or credentials object), and what stands there if it fails. */
typedef struct step {
        kb_fact_id part;
        probe_fn run;
        json_object *(*fallback)(const probe_ctx *c);
} step;

/* The result's fact that holds an object of type (its network, its credentials); -1 for none. */
static kb_fact_id holder_of(kb_fact_object type) {
        kb_fact_id first, end;
        kb_fact_rows_of(KB_FACT_OBJECT_PROBE, &first, &end);
        for (kb_fact_id id = first; id < end; id++)
                if (kb_fact_row(id)->kind == KB_FACT_OBJ && kb_fact_row(id)->of == type)
                        return id;
        return -1;
}

/* Sets part, taken, as the object or array fact id of holder; 0, -ENOMEM, or -EINVAL for a fact of
 * another kind. */
static int set_part(json_object *holder, kb_fact_id id, json_object *part) {
        switch (kb_fact_row(id)->kind) {
        case KB_FACT_OBJ:
                return kb_fact_set_obj(holder, (kb_fact_obj){id}, part);
        case KB_FACT_ARR:
                return kb_fact_set_arr(holder, (kb_fact_arr){id}, part);
        default:
                json_object_put(part);
                return -EINVAL;
        }
}

/* Runs s and puts its part, or its fallback and its failure in errors, in place. A step's name in
 * errors is the key path of its part ("mounts", "network.tcp"). 0, or -ENOMEM (or -EINVAL: a step
 * of the table that names no place) when even that could not be written. */
static int run_step(probe_ctx *c, const step *s, json_object *result, json_object *errors) {
        kb_fact_object type = kb_fact_row(s->part)->object;
        kb_fact_id holder_id = type == KB_FACT_OBJECT_PROBE ? -1 : holder_of(type);
        json_object *holder = type == KB_FACT_OBJECT_PROBE ? result : kb_fact_member(result, holder_id);
        if (!holder)
                return -EINVAL;
        char name[128], why[512] = "";
        snprintf(name, sizeof name, "%s%s%s", holder_id >= 0 ? kb_fact_key(holder_id) : "", holder_id >= 0 ? "." : "",
                 kb_fact_key(s->part));
        json_object *part = NULL;
        int r = s->run(c, &part, why, sizeof why);
        if (r < 0) {
                json_object_put(part);
                part = s->fallback(c);
                json_object *e = json_object_new_object();
                if (kb_fact_set_str(e, FACT_CELL_ERROR_PROBE, name) < 0 ||
                    (why[0] ? probe_set_str(e, FACT_CELL_ERROR_ERROR, why)
                            : probe_set_errno(e, FACT_CELL_ERROR_ERROR, -r)) < 0 ||
                    json_object_array_add(errors, e) < 0) {
                        json_object_put(e);
                        json_object_put(part);
                        return -ENOMEM;
                }
        }
        return set_part(holder, s->part, part);
}

/* The result's members in probe.py's order, each filled in as its step runs (json-c keeps a
 * member's place when its value is replaced); NULL when memory runs out. */
static json_object *result_skeleton(const probe_ctx *c) {
        json_object *result = json_object_new_object();
        if (kb_fact_set_int(result, FACT_PROBE_PID, c->kernel_pid) < 0 ||
            kb_fact_set_null(result, FACT_PROBE_WORKSPACE) < 0 ||
            kb_fact_set_null(result, FACT_PROBE_WRITE_OUTSIDE) < 0 || kb_fact_set_null(result, FACT_PROBE_SYSCTL) < 0 ||
            kb_fact_set_obj(result, FACT_PROBE_NETWORK, json_object_new_object()) < 0 ||
            kb_fact_set_obj(result, FACT_PROBE_CREDENTIALS, json_object_new_object()) < 0 ||
            kb_fact_set_null(result, FACT_PROBE_CROSS_TEAM) < 0 || kb_fact_set_null(result, FACT_PROBE_MOUNTS) < 0 ||
            kb_fact_set_null(result, FACT_PROBE_PROCESS) < 0 ||
            kb_fact_set_arr(result, FACT_PROBE_ERRORS, json_object_new_array()) < 0) {
                json_object_put(result);
                return NULL;
        }
        return result;
}

/* The boundary cell's result in *ret; 0, -ENOMEM, or -EINVAL for a step that names no place. */
static int run_boundary(probe_ctx *c, json_object **ret) {
        /* The sub-probes in the order they run: the mounts first, as the write test reads them. */
        const step steps[] = {
                {FACT_PROBE_MOUNTS.id, probe_mounts, empty_list},
                {FACT_PROBE_WORKSPACE.id, probe_workspace, workspace_fallback},
                {FACT_PROBE_WRITE_OUTSIDE.id, probe_write_outside, empty_list},
                {FACT_PROBE_SYSCTL.id, probe_sysctl, empty_list},
                {FACT_PROBE_NETWORK_INTERFACES.id, probe_interfaces, empty_list},
                {FACT_PROBE_NETWORK_ROUTES_V4.id, probe_routes_v4, empty_list},
                {FACT_PROBE_NETWORK_ROUTES_V6.id, probe_routes_v6, empty_list},
                {FACT_PROBE_NETWORK_TCP.id, probe_tcp, empty_list},
                {FACT_PROBE_NETWORK_ABSTRACT.id, probe_abstract, empty_list},
                {FACT_PROBE_NETWORK_UNIX_VISIBLE.id, probe_unix_visible, empty_list},
                {FACT_PROBE_CREDENTIALS_SUBPROCESS.id, probe_subprocess, subprocess_fallback},
                {FACT_PROBE_CREDENTIALS_FILES.id, probe_credential_files, empty_list},
                {FACT_PROBE_CREDENTIALS_KEYS.id, probe_keys, keys_fallback},
                {FACT_PROBE_CROSS_TEAM.id, probe_cross_team, empty_list},
                {FACT_PROBE_PROCESS.id, probe_process, process_fallback},
        };
        json_object *result = result_skeleton(c), *errors = kb_fact_arr_of(result, FACT_PROBE_ERRORS);
        int r = errors ? 0 : -ENOMEM;
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(steps); i++)
                r = run_step(c, &steps[i], result, errors);
        if (r < 0) {
                json_object_put(result);
                return r;
        }
        *ret = result;
        return 0;
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
        /* SURFACE of facts.def, printed as the tries are (kb_surface_write writes as it goes) */
        fprintf(f, "{\"%s\": %ld, \"%s\": ", kb_fact_key_of(FACT_SURFACE_PID), (long) c->kernel_pid,
                kb_fact_key_of(FACT_SURFACE_CHILD));
        fflush(f); /* before the tries fork */
        kb_surface_write(f, true);
        fprintf(f, ", \"%s\": []}", kb_fact_key_of(FACT_SURFACE_ERRORS));
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
        json_object *result = NULL;
        int r = run_boundary(&c, &result);
        if (r < 0) {
                fprintf(stderr, "kbound-probe: %s\n", r == -ENOMEM ? "out of memory" : strerror(-r));
                r = 1;
        } else
                r = write_result(
                        json_object_to_json_string_ext(result, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
                        result_marker(c.params));
        json_object_put(result);
        for (size_t i = 0; i < c.n_mounts; i++) {
                free(c.mounts[i].point);
                free(c.mounts[i].fstype);
        }
        free(c.mounts);
        json_object_put(c.params);
        return r;
}
