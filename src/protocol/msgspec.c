/* msgspec.c: the messaging spec's message shapes as a table, and the walker over it (msgspec.h). */
#include <stdio.h>
#include <string.h>
#include "kbound/common.h"
#include "protocol/msgspec.h"

#define REQ true
#define OPT false

/* Protocol 5.3 (jupyter_client docs/messaging.rst). Required means the spec lists the field for
 * every such message; jupyter_kernel_test's msgspec_v5.py requires the same ones, except that
 * kbound also types the optional fields it knows when they are present. */
static const kb_msgspec_field fields[] = {
        /* Every message: the header (date is mandatory since 5.1). */
        {"header", "msg_id", KB_MS_STRING, REQ, KB_MS_ALWAYS, NULL},
        {"header", "username", KB_MS_STRING, REQ, KB_MS_ALWAYS, NULL},
        {"header", "session", KB_MS_STRING, REQ, KB_MS_ALWAYS, NULL},
        {"header", "date", KB_MS_STRING, REQ, KB_MS_ALWAYS, NULL},
        {"header", "msg_type", KB_MS_STRING, REQ, KB_MS_ALWAYS, NULL},
        {"header", "version", KB_MS_VERSION, REQ, KB_MS_ALWAYS, NULL},

        /* Every reply with a status ("All reply messages have a 'status' field"); the error form. */
        {"*reply", "status", KB_MS_STRING, REQ, KB_MS_ALWAYS, "ok|error|abort"},
        {"*reply", "ename", KB_MS_STRING, REQ, KB_MS_IF_ERROR, NULL},
        {"*reply", "evalue", KB_MS_STRING, REQ, KB_MS_IF_ERROR, NULL},
        {"*reply", "traceback", KB_MS_STRING_ARRAY, REQ, KB_MS_IF_ERROR, NULL},

        /* shell and control */
        {"execute_reply", "execution_count", KB_MS_INT, REQ, KB_MS_IF_OK, NULL},
        {"execute_reply", "payload", KB_MS_OBJECT_ARRAY, OPT, KB_MS_IF_OK, NULL},
        {"execute_reply", "user_expressions", KB_MS_OBJECT, OPT, KB_MS_IF_OK, NULL},
        {"inspect_reply", "found", KB_MS_BOOL, REQ, KB_MS_IF_OK, NULL},
        {"inspect_reply", "data", KB_MS_MIMEBUNDLE, REQ, KB_MS_IF_OK, NULL},
        {"inspect_reply", "metadata", KB_MS_OBJECT, REQ, KB_MS_IF_OK, NULL},
        {"complete_reply", "matches", KB_MS_STRING_ARRAY, REQ, KB_MS_IF_OK, NULL},
        {"complete_reply", "cursor_start", KB_MS_INT, REQ, KB_MS_IF_OK, NULL},
        {"complete_reply", "cursor_end", KB_MS_INT, REQ, KB_MS_IF_OK, NULL},
        {"complete_reply", "metadata", KB_MS_OBJECT, REQ, KB_MS_IF_OK, NULL},
        {"history_reply", "history", KB_MS_ARRAY, REQ, KB_MS_IF_OK, NULL},
        {"is_complete_reply", "status", KB_MS_STRING, REQ, KB_MS_ALWAYS, "complete|incomplete|invalid|unknown"},
        {"is_complete_reply", "indent", KB_MS_STRING, OPT, KB_MS_ALWAYS, NULL},
        {"comm_info_reply", "comms", KB_MS_OBJECT, REQ, KB_MS_IF_OK, NULL},
        {"kernel_info_reply", "protocol_version", KB_MS_VERSION, REQ, KB_MS_IF_OK, NULL},
        {"kernel_info_reply", "implementation", KB_MS_STRING, REQ, KB_MS_IF_OK, NULL},
        {"kernel_info_reply", "implementation_version", KB_MS_STRING, OPT, KB_MS_IF_OK, NULL},
        {"kernel_info_reply", "language_info", KB_MS_OBJECT, REQ, KB_MS_IF_OK, NULL},
        {"kernel_info_reply", "banner", KB_MS_STRING, REQ, KB_MS_IF_OK, NULL},
        {"kernel_info_reply", "help_links", KB_MS_OBJECT_ARRAY, OPT, KB_MS_IF_OK, NULL},
        {"kernel_info_reply", "debugger", KB_MS_BOOL, OPT, KB_MS_IF_OK, NULL},
        {"kernel_info_reply", "supported_features", KB_MS_STRING_ARRAY, OPT, KB_MS_IF_OK, NULL},
        {"shutdown_reply", "restart", KB_MS_BOOL, REQ, KB_MS_IF_OK, NULL},
        {"interrupt_reply", NULL, KB_MS_OBJECT, OPT, KB_MS_ALWAYS, NULL}, /* its status only */
        {"create_subshell_reply", "subshell_id", KB_MS_STRING, REQ, KB_MS_IF_OK, NULL},
        {"list_subshell_reply", "subshell_id", KB_MS_STRING_ARRAY, REQ, KB_MS_IF_OK, NULL},
        {"delete_subshell_reply", NULL, KB_MS_OBJECT, OPT, KB_MS_ALWAYS, NULL},
        /* debug_reply and debug_event carry Debug Adapter Protocol messages, not a status. */
        {"debug_reply", "type", KB_MS_STRING, REQ, KB_MS_ALWAYS, "response"},
        {"debug_reply", "success", KB_MS_BOOL, OPT, KB_MS_ALWAYS, NULL},
        {"debug_reply", "command", KB_MS_STRING, OPT, KB_MS_ALWAYS, NULL},
        {"debug_event", "type", KB_MS_STRING, REQ, KB_MS_ALWAYS, "event"},
        {"debug_event", "event", KB_MS_STRING, REQ, KB_MS_ALWAYS, NULL},

        /* iopub */
        {"status", "execution_state", KB_MS_STRING, REQ, KB_MS_ALWAYS, "busy|idle|starting"},
        {"execute_input", "code", KB_MS_STRING, REQ, KB_MS_ALWAYS, NULL},
        {"execute_input", "execution_count", KB_MS_INT, REQ, KB_MS_ALWAYS, NULL},
        {"stream", "name", KB_MS_STRING, REQ, KB_MS_ALWAYS, "stdout|stderr"},
        {"stream", "text", KB_MS_STRING, REQ, KB_MS_ALWAYS, NULL},
        {"display_data", "data", KB_MS_MIMEBUNDLE, REQ, KB_MS_ALWAYS, NULL},
        {"display_data", "metadata", KB_MS_OBJECT, REQ, KB_MS_ALWAYS, NULL},
        {"display_data", "transient", KB_MS_OBJECT, OPT, KB_MS_ALWAYS, NULL},
        /* "must contain a transient field with a display_id" */
        {"update_display_data", "data", KB_MS_MIMEBUNDLE, REQ, KB_MS_ALWAYS, NULL},
        {"update_display_data", "metadata", KB_MS_OBJECT, REQ, KB_MS_ALWAYS, NULL},
        {"update_display_data", "transient", KB_MS_OBJECT, REQ, KB_MS_ALWAYS, NULL},
        {"execute_result", "execution_count", KB_MS_INT, REQ, KB_MS_ALWAYS, NULL},
        {"execute_result", "data", KB_MS_MIMEBUNDLE, REQ, KB_MS_ALWAYS, NULL},
        {"execute_result", "metadata", KB_MS_OBJECT, REQ, KB_MS_ALWAYS, NULL},
        {"execute_result", "transient", KB_MS_OBJECT, OPT, KB_MS_ALWAYS, NULL},
        {"error", "ename", KB_MS_STRING, REQ, KB_MS_ALWAYS, NULL},
        {"error", "evalue", KB_MS_STRING, REQ, KB_MS_ALWAYS, NULL},
        {"error", "traceback", KB_MS_STRING_ARRAY, REQ, KB_MS_ALWAYS, NULL},
        {"clear_output", "wait", KB_MS_BOOL, REQ, KB_MS_ALWAYS, NULL},
        /* comms ("The data key is always a dict") */
        {"comm_open", "comm_id", KB_MS_STRING, REQ, KB_MS_ALWAYS, NULL},
        {"comm_open", "target_name", KB_MS_STRING, REQ, KB_MS_ALWAYS, NULL},
        {"comm_open", "data", KB_MS_OBJECT, REQ, KB_MS_ALWAYS, NULL},
        {"comm_open", "target_module", KB_MS_STRING, OPT, KB_MS_ALWAYS, NULL},
        {"comm_msg", "comm_id", KB_MS_STRING, REQ, KB_MS_ALWAYS, NULL},
        {"comm_msg", "data", KB_MS_OBJECT, REQ, KB_MS_ALWAYS, NULL},
        {"comm_close", "comm_id", KB_MS_STRING, REQ, KB_MS_ALWAYS, NULL},
        {"comm_close", "data", KB_MS_OBJECT, REQ, KB_MS_ALWAYS, NULL},

        /* stdin */
        {"input_request", "prompt", KB_MS_STRING, REQ, KB_MS_ALWAYS, NULL},
        {"input_request", "password", KB_MS_BOOL, REQ, KB_MS_ALWAYS, NULL},
};

/* The replies whose content has a status (the "*reply" rows apply to them). */
static const char *const status_replies[] = {
        "execute_reply",         "inspect_reply",       "complete_reply",        "history_reply",
        "comm_info_reply",       "kernel_info_reply",   "shutdown_reply",        "interrupt_reply",
        "create_subshell_reply", "list_subshell_reply", "delete_subshell_reply",
};

const kb_msgspec_field *kb_msgspec_fields(size_t *ret_n) {
        *ret_n = KB_ELEMENTSOF(fields);
        return fields;
}

static bool is_status_reply(const char *msg_type) {
        for (size_t i = 0; i < KB_ELEMENTSOF(status_replies); i++)
                if (strcmp(status_replies[i], msg_type) == 0)
                        return true;
        return false;
}

bool kb_msgspec_known(const char *msg_type) {
        if (!msg_type)
                return false;
        for (size_t i = 0; i < KB_ELEMENTSOF(fields); i++)
                if (strcmp(fields[i].msg_type, msg_type) == 0)
                        return true;
        return false;
}

static const char *kind_words(kb_msgspec_kind kind) {
        switch (kind) {
        case KB_MS_STRING:
                return "a string";
        case KB_MS_INT:
                return "an integer";
        case KB_MS_BOOL:
                return "a boolean";
        case KB_MS_OBJECT:
                return "an object";
        case KB_MS_ARRAY:
                return "a list";
        case KB_MS_STRING_ARRAY:
                return "a list of strings";
        case KB_MS_OBJECT_ARRAY:
                return "a list of objects";
        case KB_MS_MIMEBUNDLE:
                return "an object keyed by MIME type";
        case KB_MS_VERSION:
                return "a version string X.Y[.Z]";
        }
        return "?";
}

static bool array_of(json_object *v, json_type t) {
        if (!json_object_is_type(v, json_type_array))
                return false;
        for (size_t i = 0; i < json_object_array_length(v); i++)
                if (!json_object_is_type(json_object_array_get_idx(v, i), t))
                        return false;
        return true;
}

/* "type/subtype": both parts non-empty, of letters, digits and the characters jupyter_kernel_test
 * allows (\w - + .). */
static bool mime_type(const char *s) {
        const char *slash = strchr(s, '/');
        if (!slash || slash == s || !slash[1] || strchr(slash + 1, '/'))
                return false;
        for (const char *p = s; *p; p++) {
                unsigned char c = (unsigned char) *p;
                bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                          c == '-' || c == '+' || c == '.' || c == '/' || c >= 0x80;
                if (!ok)
                        return false;
        }
        return true;
}

/* "5.3", "5.3.1": digits, a dot, digits, optionally once more. */
static bool version_string(const char *s) {
        int parts = 0;
        while (*s) {
                if (*s < '0' || *s > '9')
                        return false;
                while (*s >= '0' && *s <= '9')
                        s++;
                parts++;
                if (*s == '.' && s[1])
                        s++;
                else if (*s)
                        return false;
        }
        return parts == 2 || parts == 3;
}

static bool value_allowed(const char *values, const char *v) {
        size_t len = strlen(v);
        for (const char *p = values; p && *p;) {
                const char *bar = strchr(p, '|');
                size_t n = bar ? (size_t) (bar - p) : strlen(p);
                if (n == len && strncmp(p, v, n) == 0)
                        return true;
                p = bar ? bar + 1 : NULL;
        }
        return false;
}

static bool kind_matches(kb_msgspec_kind kind, json_object *v) {
        switch (kind) {
        case KB_MS_STRING:
                return json_object_is_type(v, json_type_string);
        case KB_MS_INT:
                return json_object_is_type(v, json_type_int);
        case KB_MS_BOOL:
                return json_object_is_type(v, json_type_boolean);
        case KB_MS_OBJECT:
                return json_object_is_type(v, json_type_object);
        case KB_MS_ARRAY:
                return json_object_is_type(v, json_type_array);
        case KB_MS_STRING_ARRAY:
                return array_of(v, json_type_string);
        case KB_MS_OBJECT_ARRAY:
                return array_of(v, json_type_object);
        case KB_MS_MIMEBUNDLE:
                if (!json_object_is_type(v, json_type_object))
                        return false;
                json_object_object_foreach(v, key, value) {
                        (void) value;
                        if (!mime_type(key))
                                return false;
                }
                return true;
        case KB_MS_VERSION:
                return json_object_is_type(v, json_type_string) && version_string(json_object_get_string(v));
        }
        return false;
}

typedef struct walk {
        kb_msgspec_problem_fn fn;
        void *userdata;
        size_t n;
} walk;

static void report(walk *w, const char *where, const char *field, const char *what, const char *fmt_detail) {
        char code[160];
        snprintf(code, sizeof(code), "%s.%s:%s", where, field, what);
        w->n++;
        if (w->fn)
                w->fn(w->userdata, code, fmt_detail);
}

static void check_row(walk *w, const kb_msgspec_field *row, const char *msg_type, json_object *obj) {
        const char *where = strcmp(row->msg_type, "header") == 0 ? "header" : msg_type;
        const char *part = strcmp(row->msg_type, "header") == 0 ? "the header" : "content";
        char detail[320];
        json_object *v = NULL;
        if (!row->field)
                return;
        if (!obj || !json_object_is_type(obj, json_type_object) || !json_object_object_get_ex(obj, row->field, &v)) {
                if (row->required) {
                        snprintf(detail, sizeof(detail), "%s: %s has no '%s' (%s, required)", msg_type, part,
                                 row->field, kind_words(row->kind));
                        report(w, where, row->field, "missing", detail);
                }
                return;
        }
        if (!kind_matches(row->kind, v)) {
                snprintf(detail, sizeof(detail), "%s: %s '%s' is %s, not %s", msg_type, part, row->field,
                         !v ? "null" : json_type_to_name(json_object_get_type(v)), kind_words(row->kind));
                report(w, where, row->field, "type", detail);
                return;
        }
        if (row->values && !value_allowed(row->values, json_object_get_string(v))) {
                snprintf(detail, sizeof(detail), "%s: %s '%s' is '%.64s', not one of %s", msg_type, part, row->field,
                         json_object_get_string(v), row->values);
                report(w, where, row->field, "value", detail);
        }
}

size_t kb_msgspec_check(const char *msg_type, json_object *header, json_object *content, kb_msgspec_problem_fn fn,
                        void *userdata) {
        walk w = {.fn = fn, .userdata = userdata};
        const char *type = msg_type ? msg_type : "?";
        for (size_t i = 0; i < KB_ELEMENTSOF(fields); i++)
                if (strcmp(fields[i].msg_type, "header") == 0)
                        check_row(&w, &fields[i], type, header);
        if (!kb_msgspec_known(type))
                return w.n;
        json_object *status_obj = NULL;
        const char *status = NULL;
        if (content && json_object_is_type(content, json_type_object) &&
            json_object_object_get_ex(content, "status", &status_obj) &&
            json_object_is_type(status_obj, json_type_string))
                status = json_object_get_string(status_obj);
        bool with_status = is_status_reply(type);
        for (size_t i = 0; i < KB_ELEMENTSOF(fields); i++) {
                const kb_msgspec_field *row = &fields[i];
                bool mine = strcmp(row->msg_type, type) == 0 || (with_status && strcmp(row->msg_type, "*reply") == 0);
                if (!mine)
                        continue;
                if (row->when == KB_MS_IF_OK && !(status && strcmp(status, "ok") == 0))
                        continue;
                if (row->when == KB_MS_IF_ERROR && !(status && strcmp(status, "error") == 0))
                        continue;
                check_row(&w, row, type, content);
        }
        return w.n;
}
