/* cli_assist.c: what the console asks the kernel for the typist, as jupyter console does: its
 * completions (complete_request, for Tab) and what it knows of a name (inspect_request, for
 * `name?` and `name??`). Replies are the kernel's text: redacted of its connection key and made
 * clean for the terminal before anything shows them or puts them in the line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <kbound/sanitize.h>
#include "cli.h"

#define MATCHES_MAX 1000 /* completions taken from one reply at most */

size_t cli_utf8_chars(const char *s, size_t len) {
        size_t n = 0;
        for (size_t i = 0; i < len; i++)
                n += ((unsigned char) s[i] & 0xC0) != 0x80;
        return n;
}

size_t cli_utf8_offset(const char *s, size_t len, size_t n) {
        size_t i = 0;
        for (size_t seen = 0; i < len; i++) {
                if (((unsigned char) s[i] & 0xC0) != 0x80 && seen++ == n)
                        return i;
        }
        return len;
}

static bool name_byte(unsigned char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
               c == '%' || c >= 0x80;
}

bool cli_help_request(const char *line, size_t len, size_t *ret_start, size_t *ret_end, int *ret_detail) {
        size_t start = 0, end = len;
        while (start < end && (line[start] == ' ' || line[start] == '\t'))
                start++;
        while (end > start && (line[end - 1] == ' ' || line[end - 1] == '\t'))
                end--;
        size_t marks = 0;
        while (end > start && marks < 3 && line[end - 1] == '?') {
                end--;
                marks++;
        }
        if (marks == 0 || marks > 2 || end == start)
                return false;
        for (size_t i = start; i < end; i++)
                if (!name_byte((unsigned char) line[i]))
                        return false;
        *ret_start = start;
        *ret_end = end;
        *ret_detail = (int) marks - 1;
        return true;
}

/* Text the terminal shows as it is: what the sanitizer would leave unchanged, on one line. */
static bool clean_text(const char *s, size_t len) {
        if (len == 0 || memchr(s, '\n', len) || memchr(s, '\t', len))
                return false;
        char *out = NULL;
        size_t size = 0;
        FILE *m = open_memstream(&out, &size);
        if (!m)
                return false;
        kb_sanitize_put(m, s, len, SIZE_MAX, KB_SANITIZE_TERMINAL);
        bool same = fclose(m) == 0 && size == len && memcmp(out, s, len) == 0;
        free(out);
        return same;
}

/* reply's integer member key, or -1. */
static int64_t member_int(json_object *o, const char *key) {
        json_object *v = NULL;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
                return -1;
        return json_object_get_int64(v);
}

/* Sends msg_type for code with the cursor at byte cursor (as code points, which Jupyter counts)
 * and returns the reply's content, redacted (a new reference), or NULL with *ret_r. */
static json_object *ask(kb_kernel *k, const char *msg_type, const char *code, size_t cursor, int detail,
                        int64_t deadline_ms, int *ret_r) {
        json_object *content = json_object_new_object();
        if (!content) {
                *ret_r = -ENOMEM;
                return NULL;
        }
        json_object_object_add(content, "code", json_object_new_string(code));
        json_object_object_add(content, "cursor_pos", json_object_new_int64((int64_t) cli_utf8_chars(code, cursor)));
        if (detail >= 0)
                json_object_object_add(content, "detail_level", json_object_new_int(detail));
        kb_msg *reply = NULL;
        *ret_r = kb_client_request(kb_kernel_client(k), KB_CHANNEL_SHELL, msg_type, content, deadline_ms, &reply);
        if (*ret_r < 0)
                return NULL;
        json_object *redacted = kb_kernel_redact(k, reply->content);
        kb_msg_destroy(&reply);
        if (!redacted)
                *ret_r = -ENOMEM;
        return redacted;
}

/* Whether a reply says it failed: a status other than "ok" (IRkernel sends none). */
static bool reply_failed(json_object *content) {
        json_object *status = NULL;
        return json_object_object_get_ex(content, "status", &status) &&
               (!json_object_is_type(status, json_type_string) || strcmp(json_object_get_string(status), "ok") != 0);
}

int cli_assist_complete(kb_kernel *k, const char *code, size_t cursor, int64_t deadline_ms, cli_completion *ret) {
        *ret = (cli_completion){0};
        int r = 0;
        _cleanup_json_ json_object *content = ask(k, "complete_request", code, cursor, -1, deadline_ms, &r);
        if (!content)
                return r;
        if (reply_failed(content))
                return 0;
        size_t len = strlen(code), chars = cli_utf8_chars(code, len);
        int64_t start = member_int(content, "cursor_start"), end = member_int(content, "cursor_end");
        json_object *matches = NULL;
        if (start < 0 || end < start || (uint64_t) end > chars ||
            !json_object_object_get_ex(content, "matches", &matches) || !json_object_is_type(matches, json_type_array))
                return -EPROTO;
        size_t n = json_object_array_length(matches);
        if (n > MATCHES_MAX)
                n = MATCHES_MAX;
        ret->matches = calloc(n + 1, sizeof(char *));
        if (!ret->matches)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *m = json_object_array_get_idx(matches, i);
                if (!json_object_is_type(m, json_type_string) ||
                    !clean_text(json_object_get_string(m), (size_t) json_object_get_string_len(m)))
                        continue; /* never put a control character in the line */
                char *copy = strdup(json_object_get_string(m));
                if (!copy) {
                        cli_completion_clear(ret);
                        return -ENOMEM;
                }
                ret->matches[ret->n++] = copy;
        }
        ret->start = cli_utf8_offset(code, len, (size_t) start);
        ret->end = cli_utf8_offset(code, len, (size_t) end);
        return 0;
}

/* Help text formatted for a printer (R's, man's): "_\bX" underlines X and "X\bX" makes it bold.
 * A pager shows X; the sanitizer would drop the backspace and show both. Each backspace that
 * follows a character on its line takes that character away, in place (text shrinks). */
static size_t strike_over(char *text, size_t len) {
        size_t out = 0;
        for (size_t i = 0; i < len; i++) {
                if (text[i] == '\b' && out > 0 && text[out - 1] != '\n') {
                        do
                                out--;
                        while (out > 0 && ((unsigned char) text[out] & 0xC0) == 0x80);
                        continue;
                }
                text[out++] = text[i];
        }
        return out;
}

char *cli_assist_bundle_text(kb_kernel *k, json_object *bundle, size_t *ret_len) {
        _cleanup_json_ json_object *redacted = kb_kernel_redact(k, bundle);
        json_object *text = NULL;
        if (!redacted || !json_object_object_get_ex(redacted, "text/plain", &text) ||
            !json_object_is_type(text, json_type_string))
                return NULL;
        size_t len = (size_t) json_object_get_string_len(text);
        _cleanup_free_ char *plain = malloc(len + 1);
        if (!plain)
                return NULL;
        memcpy(plain, json_object_get_string(text), len);
        len = strike_over(plain, len);
        char *out = NULL;
        size_t size = 0;
        FILE *m = open_memstream(&out, &size);
        if (!m)
                return NULL;
        kb_sanitize_put(m, plain, len, SIZE_MAX, KB_SANITIZE_TERMINAL);
        if (fclose(m) != 0) {
                free(out);
                return NULL;
        }
        *ret_len = size;
        return out;
}

int cli_assist_inspect(kb_kernel *k, const char *code, size_t cursor, int detail, int64_t deadline_ms, char **ret_text,
                       size_t *ret_len) {
        *ret_text = NULL;
        *ret_len = 0;
        int r = 0;
        _cleanup_json_ json_object *content = ask(k, "inspect_request", code, cursor, detail, deadline_ms, &r);
        if (!content)
                return r;
        json_object *found = NULL, *data = NULL;
        if (reply_failed(content) || !json_object_object_get_ex(content, "found", &found) ||
            !json_object_get_boolean(found) || !json_object_object_get_ex(content, "data", &data) ||
            !json_object_is_type(data, json_type_object))
                return 0;
        *ret_text = cli_assist_bundle_text(k, data, ret_len);
        return 0;
}
