/* error.c: the error carrier (error.h): an errno and its message, made without ever aborting. */
#include "kbound/error.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kb_error_make(kb_error **ret, int err, const char *fmt, ...) {
        if (err < 0)
                err = -err;
        if (err == 0)
                err = EIO; /* a failure whose cause was lost is still a failure */
        if (!ret || *ret)
                return -err;
        kb_error *e = calloc(1, sizeof *e);
        if (!e)
                return -err;
        e->err = err;
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&e->msg, fmt, ap) < 0)
                e->msg = NULL; /* vasprintf leaves it undefined on failure */
        va_end(ap);
        *ret = e;
        return -err;
}

void kb_error_prefix(kb_error **e, const char *fmt, ...) {
        if (!e || !*e)
                return;
        char *context = NULL, *longer = NULL;
        va_list ap;
        va_start(ap, fmt);
        int n = vasprintf(&context, fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        const char *rest = (*e)->msg ? (*e)->msg : strerror((*e)->err);
        if (asprintf(&longer, "%s: %s", context, rest) >= 0) {
                free((*e)->msg);
                (*e)->msg = longer;
        }
        free(context);
}

const char *kb_error_text(const kb_error *e, int r) {
        if (e && e->msg)
                return e->msg;
        return strerror(e ? e->err : r < 0 ? -r : r);
}

void kb_error_free(kb_error **e) {
        if (!e || !*e)
                return;
        free((*e)->msg);
        free(*e);
        *e = NULL;
}
