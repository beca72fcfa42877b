/* langpack.h: probe cells as data (language packs under kernels/<language>/), rendering a cell
 * with its parameters, and reading back the result a cell published. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>
#include "kbound/client.h"
#include "kbound/common.h"

#define KB_PROBE_MIME "application/vnd.kbound.probe+json"
#define KB_PROBE_PARAMS_TOKEN "{{KBOUND_PARAMS_B64}}"
/* For shell languages: the parameters as bash assignments (KB_<key>=... one per line). */
#define KB_PROBE_PARAMS_SH_TOKEN "{{KBOUND_PARAMS_SH}}"
/* The pack's shared helpers (the file its kbound.json names as "prelude"), pasted where a cell asks. */
#define KB_PROBE_PRELUDE_TOKEN "{{KBOUND_PRELUDE}}"
/* The same, rendered (its own parameters tokens replaced), as one line of standard base64. */
#define KB_PROBE_PRELUDE_B64_TOKEN "{{KBOUND_PRELUDE_B64}}"
/* The same, gzip'd first (`base64 -d | gzip -dc`): a third of the size, for kernels that read a
 * cell through a terminal, where every byte of a line costs. */
#define KB_PROBE_PRELUDE_GZ_B64_TOKEN "{{KBOUND_PRELUDE_GZ_B64}}"
#define KB_LANGPACK_MANIFEST "kbound.json"
#define KB_LANGPACK_CELL_MAX (256 * 1024)

typedef struct kb_langpack kb_langpack;

/* The folder name a language's name stands for, safe as one path component: the part after its
 * last '/' (a kernelspec may name a MIME type: "text/x-macaulay2"), without an "x-" prefix, lower
 * case, each byte but [a-z0-9+_.-] a '-'; "" when nothing is left or only dots. At most
 * KB_LANGPACK_FOLDER_MAX - 1 bytes (longer names are cut). */
#define KB_LANGPACK_FOLDER_MAX 64
KB_EXPORT void kb_langpack_folder_name(const char *language, char buf[static KB_LANGPACK_FOLDER_MAX]);

/* Finds the language pack for language under kernels_dir: the folder whose kbound.json names
 * language (or an alias) case-insensitively, or whose language has the same folder name
 * (kb_langpack_folder_name: a pack "macaulay2" serves "text/x-macaulay2"). Returns 0, -ENOENT (no
 * pack: the caller says which folder to add), -EPROTO (a manifest is malformed), -errno. */
KB_EXPORT int kb_langpack_find(const char *kernels_dir, const char *language, kb_langpack **ret);
KB_EXPORT const char *kb_langpack_language(const kb_langpack *lp);
KB_EXPORT const char *kb_langpack_dir(const kb_langpack *lp);
/* A top-level member of the pack's kbound.json (e.g. "conformance", "deviations"), borrowed, or
 * NULL if absent. The manifest is untrusted data: callers check types. */
KB_EXPORT json_object *kb_langpack_get(const kb_langpack *lp, const char *key);

/* Renders cell (a key of the manifest's "cells") with params: every KB_PROBE_PARAMS_TOKEN becomes
 * the base64 of params' JSON; every KB_PROBE_PARAMS_SH_TOKEN the top-level parameters as bash
 * assignments (KB_<key>='value', arrays as KB_<key>=('a' 'b'), objects as their JSON text, each
 * single-quoted); KB_PROBE_PRELUDE_TOKEN the pack's prelude file (its own parameters tokens rendered);
 * KB_PROBE_PRELUDE_B64_TOKEN the same as base64, KB_PROBE_PRELUDE_GZ_B64_TOKEN as gzip then base64. Returns 0 and
 * malloc'd code, -ENOENT (no such cell, or a prelude asked for but not named), -EMSGSIZE. */
KB_EXPORT int kb_langpack_render(const kb_langpack *lp, const char *cell, json_object *params, char **ret_code);
KB_EXPORT void kb_langpack_destroy(kb_langpack **lpp);

/* The one KB_PROBE_MIME object an execution published. Returns 0 and a new reference, -ENOMSG
 * (none), -EPROTO (not an object, or more than one). */
KB_EXPORT int kb_probe_result(const kb_execution *ex, json_object **ret);

/* How a pack's cells return their result (its manifest's "transport"): the KB_PROBE_MIME
 * display_data (KB_RESULT_MIME, the default), or one marked line on stdout (KB_RESULT_STDOUT:
 * for kernels that can only print, such as bash). -EPROTO for an unknown transport. */
typedef enum kb_result_transport { KB_RESULT_MIME, KB_RESULT_STDOUT } kb_result_transport;
KB_EXPORT int kb_langpack_transport(const kb_langpack *lp, kb_result_transport *ret);

/* The result a cell printed as one line "MARKER BASE64" on stdout (BASE64: standard base64 of a
 * JSON object; a trailing '\r' from a terminal is ignored). marker is fresh per run (kbound passes
 * it as the cell's "result_marker" parameter), so output of an earlier run cannot pass for it.
 * Returns 0 and a new reference, -ENOMSG (no such line), -EPROTO (malformed, not an object, or
 * more than one). */
KB_EXPORT int kb_probe_result_text(const kb_execution *ex, const char *marker, json_object **ret);
