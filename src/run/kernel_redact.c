/* kernel_redact.c: what the kernel says, with the connection key taken out before anyone keeps it
 * (the kernel can read its own connection file and echo the key). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "run/kernel-internal.h"
#include "kbound/secrets.h"

char *kb_kernel_redact_text(const kb_kernel *k, const char *text) {
        if (!text)
                return NULL;
        if (!k->key_secret)
                return strdup(text);
        return kb_secrets_redact_text(k->key_secret, text, strlen(text), NULL);
}

json_object *kb_kernel_redact(const kb_kernel *k, json_object *o) {
        if (!o)
                return NULL;
        return k->key_secret ? kb_secrets_redact(k->key_secret, o) : json_object_get(o);
}

int kb_kernel_redact_in_place(const kb_kernel *k, char **text, size_t *len) {
        if (!*text)
                return 0;
        size_t n = len ? *len : strlen(*text), out_len = 0;
        char *r = k->key_secret ? kb_secrets_redact_text(k->key_secret, *text, n, &out_len) : NULL;
        if (!k->key_secret) {
                r = malloc(n + 1);
                if (r) {
                        memcpy(r, *text, n);
                        r[n] = '\0';
                        out_len = n;
                }
        }
        free(*text);
        *text = r;
        if (len)
                *len = r ? out_len : 0;
        return r ? 0 : -ENOMEM;
}

int kb_kernel_redact_json_in_place(const kb_kernel *k, json_object **o) {
        if (!*o)
                return 0;
        json_object *r = kb_kernel_redact(k, *o);
        json_object_put(*o);
        *o = r;
        return r ? 0 : -ENOMEM;
}

int kb_kernel_redact_execution(const kb_kernel *k, kb_execution *ex) {
        int r = 0;
        /* The streams by length: they may hold NULs, which `run` and `console` show. */
        if (kb_kernel_redact_in_place(k, &ex->stdout_text, &ex->stdout_len) < 0 ||
            kb_kernel_redact_in_place(k, &ex->stderr_text, &ex->stderr_len) < 0 ||
            kb_kernel_redact_in_place(k, &ex->ename, NULL) < 0 || kb_kernel_redact_in_place(k, &ex->evalue, NULL) < 0)
                r = -ENOMEM;
        if (kb_kernel_redact_json_in_place(k, &ex->reply) < 0 || kb_kernel_redact_json_in_place(k, &ex->outputs) < 0 ||
            kb_kernel_redact_json_in_place(k, &ex->errors) < 0)
                r = -ENOMEM;
        return r;
}
