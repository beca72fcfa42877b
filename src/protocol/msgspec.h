/* msgspec.h: the Jupyter messaging spec (protocol 5.3, jupyter_client's messaging.rst) as data:
 * the header every message carries and the content fields of each message type a client
 * receives, with their JSON types; and one walker that checks a received message against it.
 * Conformance's messages.shape item runs every message of a run through it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

typedef enum kb_msgspec_kind {
        KB_MS_STRING,
        KB_MS_INT, /* a JSON integer */
        KB_MS_BOOL,
        KB_MS_OBJECT,
        KB_MS_ARRAY,
        KB_MS_STRING_ARRAY,
        KB_MS_OBJECT_ARRAY,
        KB_MS_MIMEBUNDLE, /* an object whose keys are MIME types ("type/subtype") */
        KB_MS_VERSION,    /* a string "X.Y" or "X.Y.Z" */
} kb_msgspec_kind;

/* When a row applies to a reply that has a status: always, or only for that status. */
typedef enum kb_msgspec_when {
        KB_MS_ALWAYS,
        KB_MS_IF_OK,
        KB_MS_IF_ERROR,
} kb_msgspec_when;

typedef struct kb_msgspec_field {
        const char *msg_type; /* "header" for the header's fields; "*reply" for every status reply */
        const char *field;    /* a top-level member */
        kb_msgspec_kind kind;
        bool required;
        kb_msgspec_when when;
        const char *values; /* the allowed values of a string, '|'-separated, or NULL */
} kb_msgspec_field;

/* The rows, in the table's order; *ret_n gets their number. */
const kb_msgspec_field *kb_msgspec_fields(size_t *ret_n);

/* Whether the spec (this table) describes msg_type's content. */
bool kb_msgspec_known(const char *msg_type);

/* Called once per problem: code is "<msg_type or header>.<field>:<missing|type|value>", detail
 * says it in words ("interrupt_reply: content has no 'status' (a string, required)"). Both are
 * valid only during the call. */
typedef void (*kb_msgspec_problem_fn)(void *userdata, const char *code, const char *detail);

/* Checks a received message: the header always, the content when kb_msgspec_known(msg_type).
 * A reply's rows for "ok" apply only when its status is "ok", its rows for "error" only when it
 * is "error" (the spec: an error reply carries ename, evalue and traceback instead of the usual
 * content); every other row whenever present. Unknown members are allowed (the spec: "Both sides
 * should allow ... extra fields"). header and content may be NULL (checked as missing).
 * Returns the number of problems found (fn called that many times; fn may be NULL). */
size_t kb_msgspec_check(const char *msg_type, json_object *header, json_object *content, kb_msgspec_problem_fn fn,
                        void *userdata);
