/* jsonget.h: tolerant accessors for JSON that may be partial or hold the wrong types (internal):
 * a kernel's replies, language-pack manifests, image metadata, the host's own facts. A missing
 * member, a member of the wrong type, JSON null and a non-object all read as "absent"; nothing
 * here crashes on what an untrusted peer sent. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

/* The member key of o, or NULL (o NULL or not an object, no such member, or JSON null). Borrowed. */
json_object *kb_json_get(json_object *o, const char *key);
/* The string member key of o, or NULL if absent or not a string. Borrowed from o. */
const char *kb_json_str(json_object *o, const char *key);
/* true and the integer member key of o in *ret (untouched otherwise) if it is a JSON integer. */
bool kb_json_int(json_object *o, const char *key, int64_t *ret);
/* Only a JSON true is true: "yes", 1 and absence are false. */
bool kb_json_true(json_object *o, const char *key);
