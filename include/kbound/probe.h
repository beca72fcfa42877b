/* probe.h: probe cells as data (language packs), their results, and the host-side evidence:
 * canary listeners, canary secrets, and the search for secrets in what a cell saw. */
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

/* Finds the language pack for language under kernels_dir: the folder whose kbound.json names
 * language (or an alias) case-insensitively. Returns 0, -ENOENT (no pack: the caller says which
 * folder to add), -EPROTO (a manifest is malformed), -errno. */
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
 * KB_PROBE_PRELUDE_B64_TOKEN the same as base64, KB_PROBE_PRELUDE_GZ_B64_TOKEN as gzip then base64. Returns 0 and malloc'd code, -ENOENT (no such cell, or a
 * prelude asked for but not named), -EMSGSIZE. */
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

/* Canary listeners on the host's loopback: one TCP socket on 127.0.0.1 and one abstract unix
 * socket, both listening, both counting every connection that reaches them. Loopback only: a
 * probe never needs another host. */
typedef struct kb_canary_net kb_canary_net;
KB_EXPORT int kb_canary_net_open(kb_canary_net **ret);
/* Adds "tcp_ports" and "abstract_sockets" to params. */
KB_EXPORT int kb_canary_net_params(const kb_canary_net *c, json_object *params);
/* Accepts (and closes) whatever connected since the last call; returns the running totals. */
KB_EXPORT void kb_canary_net_count(kb_canary_net *c, unsigned *ret_tcp, unsigned *ret_unix);
KB_EXPORT void kb_canary_net_destroy(kb_canary_net **cp);

/* A set of named secret values. Values are never copied anywhere but here and are wiped on
 * destroy; only names leave this object. */
typedef struct kb_secrets kb_secrets;

/* Tokens (random keys and canaries) are redacted by fragment: any stretch of at least this many
 * bytes that also occurs in the token, in any letter case. Twelve hex digits are 48 random bits:
 * ordinary text never holds such a stretch of a fresh random token by accident. */
#define KB_SECRET_FRAGMENT_MIN 12

KB_EXPORT int kb_secrets_new(kb_secrets **ret);
/* A secret matched whole and exactly (an environment value: fragments of a path or a word could
 * occur anywhere). Returns 0, -ENOMEM, -E2BIG past 4096 secrets. */
KB_EXPORT int kb_secrets_add(kb_secrets *s, const char *name, const char *value);
/* A random token (connection key, canary): redaction also masks every fragment of at least
 * KB_SECRET_FRAGMENT_MIN bytes of it, case-insensitively (a key printed in halves, upper-cased, or
 * cut by a log tail). Scanning (kb_secrets_scan) still looks for the whole value. A token shorter
 * than KB_SECRET_FRAGMENT_MIN is matched whole. Returns as kb_secrets_add. */
KB_EXPORT int kb_secrets_add_token(kb_secrets *s, const char *name, const char *value);
/* Adds every variable of host_env that kb_sandbox_env_allowed() refuses, as a daemon secret named
 * "env:NAME", unless its value is not distinctive: shorter than 8 bytes, a number, an existing
 * absolute path, or a substring of one of legit (strings the sandbox sees by design: its own
 * environment and argv). A value of 32 or more hex digits is added as a token. *ret_skipped (may be NULL) counts the ones skipped. */
KB_EXPORT int kb_secrets_add_env(kb_secrets *s, char *const *host_env, char *const *legit, size_t *ret_skipped);
KB_EXPORT size_t kb_secrets_count(const kb_secrets *s);
/* Searches every string (keys and values) in data for every secret; returns a new array of the
 * names found (empty if none), or NULL if out of memory. */
KB_EXPORT json_object *kb_secrets_scan(const kb_secrets *s, json_object *data);
/* A malloc'd copy of str[0..len) (embedded NULs included) where every occurrence of a secret (for
 * tokens: every fragment, see kb_secrets_add_token) is replaced by "[redacted:NAME]"; overlapping
 * or adjacent matches become one marker. *ret_len (may be NULL) gets the new length; the copy is
 * NUL-terminated. NULL if out of memory (callers must then show nothing of str). */
KB_EXPORT char *kb_secrets_redact_text(const kb_secrets *s, const char *str, size_t len, size_t *ret_len);
/* Redaction for anything that records what a kernel said (transcripts, reports): returns a new
 * reference to data itself when no secret occurs in any string (keys and values, embedded NULs
 * included), else to a deep copy where every match (as kb_secrets_redact_text) is replaced. A
 * subtree nested deeper than the scan depth is replaced whole by "[redacted:too deep]", so
 * nothing unsearched is ever passed on. Returns NULL if out of memory (callers must then write
 * nothing). */
KB_EXPORT json_object *kb_secrets_redact(const kb_secrets *s, json_object *data);
KB_EXPORT void kb_secrets_destroy(kb_secrets **sp);
