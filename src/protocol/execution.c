/* execution.c: what one execution keeps of the kernel's messages answering it: its stdout and
 * stderr (bounded), its rich outputs and errors (bounded), its status and its execute_reply. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/jsonget.h"
#include "protocol/execution-internal.h"

/* Appends add bytes of text (NUL bytes included: a kernel must not hide output behind one). */
static int text_append(char **buf, size_t *len, bool *truncated, const char *text, size_t add) {
        if (*len + add > KB_EXECUTION_TEXT_MAX) {
                *truncated = true;
                add = KB_EXECUTION_TEXT_MAX - *len;
        }
        if (add == 0)
                return 0;
        char *n = realloc(*buf, *len + add + 1);
        if (!n)
                return -ENOMEM;
        memcpy(n + *len, text, add);
        *len += add;
        n[*len] = '\0';
        *buf = n;
        return 0;
}

/* Whether ex may keep one more rich output of msg's size; past the ceiling it is dropped and the
 * execution says so. */
static bool outputs_room(kb_execution *ex, const kb_msg *msg) {
        if (msg->wire_size > KB_EXECUTION_OUTPUTS_MAX - ex->outputs_bytes) {
                ex->outputs_truncated = true;
                return false;
        }
        ex->outputs_bytes += msg->wire_size;
        return true;
}

int kb_execution_apply_iopub(kb_execution *ex, const kb_msg *msg) {
        const char *type = msg->msg_type;
        json_object *content = msg->content;
        ex->n_iopub++;
        ex->iopub_bytes += msg->wire_size;
        if (strcmp(type, "status") == 0) {
                const char *state = kb_json_str(content, "execution_state");
                if (state && strcmp(state, "busy") == 0)
                        ex->saw_busy = true;
                else if (state && strcmp(state, "idle") == 0 && !ex->saw_idle) {
                        ex->saw_idle = true;
                        ex->idle_ms = kb_now_ms();
                }
        } else if (strcmp(type, "stream") == 0) {
                const char *name = kb_json_str(content, "name");
                const char *text = kb_json_str(content, "text");
                json_object *text_obj = NULL;
                if (!name || !text || !json_object_object_get_ex(content, "text", &text_obj))
                        return 0;
                size_t text_len = (size_t) json_object_get_string_len(text_obj);
                if (strcmp(name, "stdout") == 0)
                        return text_append(&ex->stdout_text, &ex->stdout_len, &ex->text_truncated, text, text_len);
                if (strcmp(name, "stderr") == 0)
                        return text_append(&ex->stderr_text, &ex->stderr_len, &ex->text_truncated, text, text_len);
        } else if (strcmp(type, "display_data") == 0 || strcmp(type, "update_display_data") == 0 ||
                   strcmp(type, "execute_result") == 0) {
                json_object *data = NULL, *metadata = NULL;
                json_object_object_get_ex(content, "data", &data);
                json_object_object_get_ex(content, "metadata", &metadata);
                if (!data || !json_object_is_type(data, json_type_object) || !outputs_room(ex, msg))
                        return 0;
                json_object *out = json_object_new_object();
                if (!out)
                        return -ENOMEM;
                json_object_object_add(out, "msg_type", json_object_new_string(type));
                json_object_object_add(out, "data", json_object_get(data));
                json_object_object_add(out, "metadata",
                                       metadata ? json_object_get(metadata) : json_object_new_object());
                json_object_array_add(ex->outputs, out);
        } else if (strcmp(type, "error") == 0) {
                if (outputs_room(ex, msg))
                        json_object_array_add(ex->errors, json_object_get(content));
        }
        return 0;
}

int kb_execution_apply_reply(kb_execution *ex, const kb_msg *msg) {
        const char *status = kb_json_str(msg->content, "status");
        ex->got_reply = true;
        ex->reply_ms = kb_now_ms();
        ex->status = strdup(status ? status : "");
        json_object *count = NULL;
        if (json_object_object_get_ex(msg->content, "execution_count", &count) &&
            json_object_is_type(count, json_type_int))
                ex->execution_count = json_object_get_int64(count);
        const char *ename = kb_json_str(msg->content, "ename");
        const char *evalue = kb_json_str(msg->content, "evalue");
        if (ename)
                ex->ename = strdup(ename);
        if (evalue)
                ex->evalue = strdup(evalue);
        ex->reply = json_object_get(msg->content);
        if (!ex->status || (ename && !ex->ename) || (evalue && !ex->evalue))
                return -ENOMEM;
        return 0;
}
