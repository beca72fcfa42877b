/* secrets.h: sets of secret values (daemon secrets, canaries, connection keys) and the search
 * for them in what a kernel said: scanning JSON for their names, redacting text and JSON. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>
#include "kbound/common.h"

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
/* Adds every variable of host_env that passes (a filter the caller gives: kb_sandbox_env_allowed,
 * the variables the sandbox is given) does not let through, as a daemon secret named
 * "env:NAME", unless its value is not distinctive: shorter than 8 bytes, a number, an existing
 * absolute path, or a substring of one of legit (strings the sandbox sees by design: its own
 * environment and argv). A value of 32 or more hex digits is added as a token. *ret_skipped (may be NULL) counts the
 * ones skipped. */
KB_EXPORT int kb_secrets_add_env(kb_secrets *s, char *const *host_env, bool (*passes)(const char *name),
                                 char *const *legit, size_t *ret_skipped);
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
