/* strv.c: growable NULL-terminated string vectors (strv.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/strv.h"

void kb_strv_free(char **v) {
        if (!v)
                return;
        for (char **p = v; *p; p++)
                free(*p);
        free(v);
}

void kb_strv_freep(char ***v) {
        kb_strv_free(*v);
        *v = NULL;
}

int kb_strv_push_take(kb_strv *v, char *s) {
        if (!s)
                return -ENOMEM;
        if (v->max && v->n + 1 >= v->max) {
                free(s);
                return -E2BIG;
        }
        if (v->n + 2 > v->cap) {
                size_t cap = v->cap ? v->cap * 2 : 16;
                char **items = reallocarray(v->items, cap, sizeof(char *));
                if (!items) {
                        free(s);
                        return -ENOMEM;
                }
                v->items = items;
                v->cap = cap;
        }
        v->items[v->n++] = s;
        v->items[v->n] = NULL;
        return 0;
}

int kb_strv_push(kb_strv *v, const char *s) {
        return kb_strv_push_take(v, strdup(s));
}

bool kb_strv_contains(const kb_strv *v, const char *s) {
        for (size_t i = 0; i < v->n; i++)
                if (strcmp(v->items[i], s) == 0)
                        return true;
        return false;
}

int kb_strv_take(kb_strv *v, char ***ret) {
        if (!v->items) {
                v->items = calloc(1, sizeof(char *));
                if (!v->items)
                        return -ENOMEM;
        }
        *ret = v->items;
        *v = (kb_strv){.max = v->max};
        return 0;
}

void kb_strv_clear(kb_strv *v) {
        kb_strv_free(v->items);
        *v = (kb_strv){.max = v->max};
}

char **kb_strv_copy(char *const *src) {
        size_t n = 0;
        while (src[n])
                n++;
        char **c = calloc(n + 1, sizeof *c);
        for (size_t i = 0; c && i < n; i++)
                if (!(c[i] = strdup(src[i]))) {
                        kb_strv_free(c);
                        return NULL;
                }
        return c;
}
