/* boundary_probe.h: what the parts of kbound-probe share: the run's parameters and result, the
 * sub-probes' signature and the helpers every sub-probe uses (docs/probes-cells.md, "kbound-probe"). */
#pragma once

#include "base/facts.h"
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The caps probe.py uses: bytes kept per file read (and per process field), bytes read of a /proc
 * table, processes read by the credential dump. */
#define PROBE_FILE_CAP 65536
#define PROBE_TABLE_CAP 1048576
#define PROBE_PROCS_MAX 256

/* One mount of /proc/self/mountinfo, as the write test needs it. */
typedef struct probe_mount {
        char *point; /* unescaped (\040 and the like decoded) */
        char *fstype;
        bool ro; /* the per-mount options (field 6) hold "ro" */
} probe_mount;

typedef struct probe_ctx {
        json_object *params; /* the cell's parameters (a JSON object), read only */
        pid_t kernel_pid;    /* the kernel process: --kernel-pid, else the parent */
        probe_mount *mounts; /* parsed by "mounts", which runs first */
        size_t n_mounts;
} probe_ctx;

/* A sub-probe: sets *ret to its part of the result and returns 0, or returns -errno and may say
 * why in why (else the errno's name is the error). A failed sub-probe is listed in the result's
 * errors and its part of the result gets the fallback, so one failure never hides the others. */
typedef int (*probe_fn)(probe_ctx *c, json_object **ret, char *why, size_t why_size);

/* ---- helpers (boundary_util.c) ---- */

/* A JSON string of n bytes of text, each invalid UTF-8 byte replaced with U+FFFD (as Python's
 * decode("utf-8", "replace") does); NUL bytes are kept. */
json_object *probe_text(const char *s, size_t n);
/* probe_text of a C string; JSON null for NULL. */
json_object *probe_str(const char *s);

/* The result's facts are written only through facts.def's names (base/facts.h), the names the
 * judges read them by. Each writer returns 0 or -ENOMEM (o NULL: out of memory). */
/* n bytes of text (probe_text's rules) as the string fact f of o; JSON null for s NULL. */
int probe_set_text(json_object *o, kb_fact_str f, const char *s, size_t n);
/* A C string as the string fact f of o (probe_text's rules); JSON null for NULL. */
int probe_set_str(json_object *o, kb_fact_str f, const char *s);
/* The errno's name ("EROFS") as the string fact f of o; JSON null for 0 (no error). */
int probe_set_errno(json_object *o, kb_fact_str f, int e);

/* The first PROBE_FILE_CAP bytes of path, malloc'd, their length in *ret_len; NULL (errno set)
 * when it is unreadable or a directory. */
char *probe_read_file(const char *path, size_t *ret_len);
/* The lines of a /proc table (at most PROBE_TABLE_CAP bytes), each without its trailing white
 * space, blank ones left out, from line skip on; NULL with errno set when it cannot be read. */
json_object *probe_read_lines(const char *path, size_t skip);
/* Whether path is root or under it (root "/" holds everything; a trailing "/" of root is ignored). */
bool probe_under(const char *path, const char *root);
/* Python's posixpath.normpath, in a malloc'd string (NULL: out of memory). */
char *probe_normpath(const char *path);
/* Python's os.path.join of two parts (b absolute replaces a), malloc'd. */
char *probe_join(const char *a, const char *b);

/* The numeric entries of /proc, in pid order, malloc'd; 0, or -errno. */
int probe_proc_pids(pid_t **ret, size_t *ret_n);

/* A string parameter, or NULL when it is missing, null or not a string. */
const char *probe_param_str(const probe_ctx *c, const char *key);
/* A list parameter: 0 and *ret the array (NULL: missing or null, which count as empty), or
 * -EINVAL and why when it is something else or holds an item that is not a string (strings
 * false: any items). */
int probe_param_list(const probe_ctx *c, const char *key, bool strings, json_object **ret, char *why, size_t n);
/* One item of a list parameter: appends its part to out; 0, or -errno (and why) to fail the
 * sub-probe. */
typedef int (*probe_item_fn)(probe_ctx *c, json_object *item, json_object *out, char *why, size_t n);
/* A sub-probe over a list parameter (probe_param_list's rules): *ret the array of the parts
 * item made, one item after another; 0, or the first failure. */
int probe_each(probe_ctx *c, const char *key, bool strings, probe_item_fn item, json_object **ret, char *why, size_t n);
/* A number parameter (an integer, a fraction or a string of one, as Python's float() reads it):
 * its value, or dflt when it is missing, null, 0 or unreadable. */
double probe_param_number(const probe_ctx *c, const char *key, double dflt);

/* ---- the sub-probes, in the order they run ---- */

/* boundary_files.c */
int probe_mounts(probe_ctx *c, json_object **ret, char *why, size_t n);
int probe_workspace(probe_ctx *c, json_object **ret, char *why, size_t n);
int probe_write_outside(probe_ctx *c, json_object **ret, char *why, size_t n);
int probe_sysctl(probe_ctx *c, json_object **ret, char *why, size_t n);
int probe_credential_files(probe_ctx *c, json_object **ret, char *why, size_t n);
int probe_cross_team(probe_ctx *c, json_object **ret, char *why, size_t n);
int probe_process(probe_ctx *c, json_object **ret, char *why, size_t n);

/* boundary_net.c: loopback and abstract unix only; nothing else is ever contacted. */
int probe_interfaces(probe_ctx *c, json_object **ret, char *why, size_t n);
int probe_routes_v4(probe_ctx *c, json_object **ret, char *why, size_t n);
int probe_routes_v6(probe_ctx *c, json_object **ret, char *why, size_t n);
int probe_tcp(probe_ctx *c, json_object **ret, char *why, size_t n);
int probe_abstract(probe_ctx *c, json_object **ret, char *why, size_t n);
int probe_unix_visible(probe_ctx *c, json_object **ret, char *why, size_t n);

/* boundary_child.c: this program is the spawned child the host looks at. */
int probe_subprocess(probe_ctx *c, json_object **ret, char *why, size_t n);
int probe_keys(probe_ctx *c, json_object **ret, char *why, size_t n);
