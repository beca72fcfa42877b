/* tmp_tree.h: a scratch folder under /tmp for a unit test, made before each test and removed
 * (without following links) after it, for cmocka's setup/teardown; and that removal alone
 * (tmp_tree_remove), for tests whose fixture holds more than one folder. Include after cmocka.h. */
#pragma once

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct tree {
        char root[64];
} tree;

/* *state = a new tree whose root is /tmp/<prefix>-XXXXXX, made; -1 if it cannot be. */
static inline int tmp_tree_setup(void **state, const char *prefix) {
        tree *t = calloc(1, sizeof(*t));
        if (!t)
                return -1;
        snprintf(t->root, sizeof(t->root), "/tmp/%s-XXXXXX", prefix);
        if (!mkdtemp(t->root)) {
                free(t);
                return -1;
        }
        *state = t;
        return 0;
}

static inline int tmp_tree_remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path);
}

/* Removes path and everything below it, never following a symlink out of it (FTW_PHYS). */
static inline void tmp_tree_remove(const char *path) {
        nftw(path, tmp_tree_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static inline int tree_teardown(void **state) {
        tree *t = *state;
        tmp_tree_remove(t->root);
        free(t);
        return 0;
}
