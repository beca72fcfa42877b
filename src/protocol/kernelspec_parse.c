/* kernelspec_parse.c: kernel.json's text (untrusted) made a kernelspec, and what is wrong with one
 * that cannot be: a JSON syntax error said as one (line, column), else the member at fault. */
#include "kbound/kernelspec.h"
#include "kbound/error.h"
#include "base/cleanup.h"
#include "base/strv.h"
#include "protocol/kernelspec-internal.h"
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* kernel.json's metadata may nest a little; nothing legitimate goes this deep. */
#define KERNELSPEC_JSON_MAX_DEPTH 32
/* Ceilings on untrusted vectors: far above any real kernelspec, far below trouble. */
#define KERNELSPEC_MAX_ARGV 1024
#define KERNELSPEC_MAX_ENV 1024

/* The C string of a JSON string value, or NULL if val is not a string or holds a NUL (which would
 * silently cut an argv word or env value short). */
static const char *json_cstr(struct json_object *val) {
        if (!json_object_is_type(val, json_type_string))
                return NULL;
        const char *s = json_object_get_string(val);
        if (strlen(s) != (size_t) json_object_get_string_len(val))
                return NULL;
        return s;
}

/* Optional string field: absent → a copy of fallback; present but not a clean string → -EPROTO. */
static int optional_string(struct json_object *root, const char *key, const char *fallback, char **ret,
                           kb_error **ret_error) {
        struct json_object *val;
        const char *s = fallback;
        if (json_object_object_get_ex(root, key, &val)) {
                s = json_cstr(val);
                if (!s)
                        return kb_error_make(ret_error, EPROTO, "\"%s\" is not a string (or holds a NUL)", key);
        }
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

static int parse_argv(struct json_object *root, char ***ret, kb_error **ret_error) {
        struct json_object *arr;
        kb_strv sv = {0};
        int r;

        if (!json_object_object_get_ex(root, "argv", &arr) || !json_object_is_type(arr, json_type_array))
                return kb_error_make(ret_error, EPROTO, "\"argv\" is missing or not a list");
        size_t n = json_object_array_length(arr);
        if (n == 0 || n > KERNELSPEC_MAX_ARGV)
                return kb_error_make(ret_error, EPROTO, "\"argv\" has %zu words (1 to %d)", n, KERNELSPEC_MAX_ARGV);
        for (size_t i = 0; i < n; i++) {
                const char *s = json_cstr(json_object_array_get_idx(arr, i));
                if (!s) {
                        kb_strv_clear(&sv);
                        return kb_error_make(ret_error, EPROTO, "\"argv\"[%zu] is not a string (or holds a NUL)", i);
                }
                r = kb_strv_push_take(&sv, strdup(s));
                if (r < 0) {
                        kb_strv_clear(&sv);
                        return r;
                }
        }
        /* An empty program name would make execvp fail late with a confusing error. */
        if (sv.items[0][0] == '\0') {
                kb_strv_clear(&sv);
                return kb_error_make(ret_error, EPROTO, "\"argv\"[0], the program, is empty");
        }
        return kb_strv_take(&sv, ret);
}

static int parse_env(struct json_object *root, char ***ret, kb_error **ret_error) {
        struct json_object *obj;
        kb_strv sv = {0};
        size_t count = 0;
        int r = 0;

        if (json_object_object_get_ex(root, "env", &obj)) {
                if (!json_object_is_type(obj, json_type_object))
                        return kb_error_make(ret_error, EPROTO, "\"env\" is not an object");
                json_object_object_foreach(obj, name, val) {
                        const char *value = json_cstr(val);
                        /* A name with '=' would smuggle another variable's value past whoever
                         * filters the kernel's environment by name. */
                        if (!value || name[0] == '\0' || strchr(name, '=') || ++count > KERNELSPEC_MAX_ENV) {
                                if (count > KERNELSPEC_MAX_ENV)
                                        r = kb_error_make(ret_error, EPROTO, "\"env\" has over %d variables",
                                                          KERNELSPEC_MAX_ENV);
                                else if (!value)
                                        r = kb_error_make(ret_error, EPROTO,
                                                          "\"env\": the value of %s is not a string (or holds a NUL)",
                                                          name);
                                else
                                        r = kb_error_make(ret_error, EPROTO, "\"env\": a name is empty or has '='");
                                break;
                        }
                        char *entry = NULL;
                        if (asprintf(&entry, "%s=%s", name, value) < 0) {
                                r = -ENOMEM;
                                break;
                        }
                        r = kb_strv_push_take(&sv, entry);
                        if (r < 0)
                                break;
                }
        }
        if (r < 0) {
                kb_strv_clear(&sv);
                return r;
        }
        return kb_strv_take(&sv, ret);
}

/* Parses text as kbound parses every untrusted JSON (kb_json_parse_strict), and when it is not
 * JSON says where and why: the line and column json-c stopped at and its description. */
static int parse_json_explained(const char *text, size_t len, struct json_object **ret, kb_error **ret_error) {
        if (len > INT_MAX)
                return -EMSGSIZE;
        const char *nul = memchr(text, '\0', len);
        struct json_tokener *tok = nul ? NULL : json_tokener_new_ex(KERNELSPEC_JSON_MAX_DEPTH);
        if (!nul && !tok)
                return -ENOMEM;
        const char *why = "a NUL byte";
        size_t at = nul ? (size_t) (nul - text) : 0;
        if (tok) {
                json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
                struct json_object *obj = json_tokener_parse_ex(tok, text, (int) len);
                enum json_tokener_error err = json_tokener_get_error(tok);
                at = json_tokener_get_parse_end(tok);
                json_tokener_free(tok);
                if (obj && err == json_tokener_success && at == len) {
                        *ret = obj;
                        return 0;
                }
                bool value_then_more = obj != NULL;
                json_object_put(obj);
                if (err == json_tokener_continue)
                        at = len; /* where it ends */
                why = value_then_more                ? "text after the JSON value"
                      : err == json_tokener_continue ? "the text ends inside a value"
                                                     : json_tokener_error_desc(err);
        }
        size_t line = 1, column = 1;
        for (size_t i = 0; i < at && i < len; i++) {
                if (text[i] == '\n') {
                        line++;
                        column = 1;
                } else {
                        column++;
                }
        }
        return kb_error_make(ret_error, EBADMSG, "not valid JSON (line %zu, column %zu: %s)", line, column, why);
}

int kernelspec_parse(const char *json, size_t len, const char *name, const char *resource_dir, kb_kernelspec **ret,
                     kb_error **ret_error) {
        _cleanup_json_ struct json_object *root = NULL;
        kb_kernelspec *spec = NULL;
        int r;

        if (!json || !name || !resource_dir || !ret)
                return -EINVAL;
        if (len > KB_KERNELSPEC_MAX_BYTES)
                return kb_error_make(ret_error, EMSGSIZE, "over %u bytes", (unsigned) KB_KERNELSPEC_MAX_BYTES);
        r = parse_json_explained(json, len, &root, ret_error);
        if (r < 0)
                return r;
        if (!json_object_is_type(root, json_type_object))
                return kb_error_make(ret_error, EPROTO, "not a JSON object");

        spec = calloc(1, sizeof(*spec));
        if (!spec)
                return -ENOMEM;
        spec->name = strdup(name);
        spec->resource_dir = strdup(resource_dir);
        if (!spec->name || !spec->resource_dir) {
                r = -ENOMEM;
                goto fail;
        }
        r = parse_argv(root, &spec->argv, ret_error);
        if (r < 0)
                goto fail;
        /* Jupyter defaults display_name and language to ""; a display name is more useful than
         * nothing, and an empty language simply matches no probe set (fail closed downstream). */
        r = optional_string(root, "display_name", name, &spec->display_name, ret_error);
        if (r < 0)
                goto fail;
        r = optional_string(root, "language", "", &spec->language, ret_error);
        if (r < 0)
                goto fail;
        r = optional_string(root, "interrupt_mode", "signal", &spec->interrupt_mode, ret_error);
        if (r < 0)
                goto fail;
        if (strcmp(spec->interrupt_mode, "signal") != 0 && strcmp(spec->interrupt_mode, "message") != 0) {
                r = kb_error_make(ret_error, EPROTO, "\"interrupt_mode\" must be \"signal\" or \"message\"");
                goto fail;
        }
        r = parse_env(root, &spec->env, ret_error);
        if (r < 0)
                goto fail;
        json_object *metadata = NULL;
        if (json_object_object_get_ex(root, "metadata", &metadata) && json_object_is_type(metadata, json_type_object)) {
                spec->metadata_json = strdup(json_object_to_json_string_ext(metadata, JSON_C_TO_STRING_PLAIN));
                if (!spec->metadata_json) {
                        r = -ENOMEM;
                        goto fail;
                }
                /* "metadata": {"kbound": {"transport": "tcp"}}: a kernel that binds TCP whatever its
                 * connection file says (docs/transports.md). Anything else there: ipc. */
                json_object *kbound = NULL, *transport = NULL;
                spec->tcp_only = json_object_object_get_ex(metadata, "kbound", &kbound) &&
                                 json_object_is_type(kbound, json_type_object) &&
                                 json_object_object_get_ex(kbound, "transport", &transport) &&
                                 json_object_is_type(transport, json_type_string) &&
                                 strcmp(json_object_get_string(transport), "tcp") == 0;
        }

        *ret = spec;
        return 0;
fail:
        kb_kernelspec_destroy(&spec);
        return r;
}

int kb_kernelspec_parse(const char *json, size_t len, const char *name, const char *resource_dir, kb_kernelspec **ret) {
        return kernelspec_parse(json, len, name, resource_dir, ret, NULL);
}

void kb_kernelspec_destroy(kb_kernelspec **specp) {
        if (!specp || !*specp)
                return;
        kb_kernelspec *spec = *specp;
        free(spec->name);
        free(spec->resource_dir);
        kb_strv_free(spec->argv);
        free(spec->display_name);
        free(spec->language);
        free(spec->interrupt_mode);
        kb_strv_free(spec->env);
        free(spec->metadata_json);
        free(spec);
        *specp = NULL;
}
