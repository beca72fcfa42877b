/* strv.h: growable NULL-terminated string vectors (internal): the bwrap argv and the kernel's
 * environment (sandbox), kernelspec search lists and argv (kernelspec). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include "kbound/common.h"
#include "base/cleanup.h"

/* Starts as (kb_strv){0}, or with .max set. items is always NULL-terminated once non-NULL. */
typedef struct kb_strv {
        char **items;
        size_t n;
        size_t cap;
        size_t max; /* the most slots, the terminating NULL included (0: no ceiling) */
} kb_strv;

/* Appends s, taking ownership: s is freed on failure, and a NULL s is an allocation that failed
 * already. Returns 0, -ENOMEM, or -E2BIG when the vector is at its max. */
int kb_strv_push_take(kb_strv *v, char *s);
/* Appends a copy of s. Returns as kb_strv_push_take. */
int kb_strv_push(kb_strv *v, const char *s);
bool kb_strv_contains(const kb_strv *v, const char *s);
/* Hands out the vector in *ret (an empty one is still a valid {NULL}; free with kb_strv_free),
 * leaving v empty. Returns 0 or -ENOMEM (v unchanged). */
int kb_strv_take(kb_strv *v, char ***ret);
/* Frees every string and the vector; v is empty afterwards (its max kept). */
void kb_strv_clear(kb_strv *v);
/* A copy of the NULL-terminated vector src, or NULL if out of memory. */
char **kb_strv_copy(char *const *src);

void kb_strv_freep(char ***v);
#define _cleanup_strv_ _cleanup_(kb_strv_freep)
