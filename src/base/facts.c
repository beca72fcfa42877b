/* facts.c: the evidence's schema (facts.def) as a table, its typed accessors and writers, and the
 * validator that holds an object to it (facts.h). */
#include "base/facts.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define KB_FACT_SOURCE_HOST false
#define KB_FACT_SOURCE_CELL true

static const struct {
        const char *name, *what;
        bool cell; /* what a cell said: held to its declaration leniently */
} objects[_KB_FACT_OBJECT_MAX] = {
#define KB_FACT_OBJECT(name, source, what) [KB_FACT_OBJECT_##name] = {#name, what, KB_FACT_SOURCE_##source},
#define KB_FACT(object, name, key, kind, of, presence, what)
#define KB_FACT_WHAT(name, text)
#include "base/facts.def"
#undef KB_FACT_OBJECT
#undef KB_FACT
#undef KB_FACT_WHAT
};

/* Where each object's rows begin (its rows follow its KB_FACT_OBJECT line). */
static const kb_fact_id first_row[_KB_FACT_OBJECT_MAX] = {
#define KB_FACT_OBJECT(name, source, what) [KB_FACT_OBJECT_##name] = KB_FACT_ID_BEGIN_##name,
#define KB_FACT(object, name, key, kind, of, presence, what)
#define KB_FACT_WHAT(name, text)
#include "base/facts.def"
#undef KB_FACT_OBJECT
#undef KB_FACT
#undef KB_FACT_WHAT
};

static const kb_fact_info rows[_KB_FACT_ID_MAX] = {
#define KB_FACT_OBJECT(name, source, what)
#define KB_FACT(object, name, key, kind, of, presence, what)                                                           \
        [KB_FACT_ID_##object##_##                                                                                      \
                name] = {KB_FACT_OBJECT_##object, key, KB_FACT_##kind, KB_FACT_OBJECT_##of, KB_FACT_##presence, what},
#define KB_FACT_WHAT(name, text)
#include "base/facts.def"
#undef KB_FACT_OBJECT
#undef KB_FACT
#undef KB_FACT_WHAT
};

static const char *const what_texts[_KB_FACT_WHAT_MAX] = {
#define KB_FACT_OBJECT(name, source, what)
#define KB_FACT(object, name, key, kind, of, presence, what)
#define KB_FACT_WHAT(name, text) [KB_FACT_WHAT_ID_##name] = text,
#include "base/facts.def"
#undef KB_FACT_OBJECT
#undef KB_FACT
#undef KB_FACT_WHAT
};

const char *kb_fact_what_text(kb_fact_what w) {
        return w.id >= 0 && w.id < _KB_FACT_WHAT_MAX ? what_texts[w.id] : "?";
}

const char *kb_fact_what_words(kb_fact_what w, const char *suffix, char *buf, size_t size) {
        snprintf(buf, size, "%s%s%s", kb_fact_what_text(w), suffix ? "/" : "", suffix ? suffix : "");
        return buf;
}

json_object *kb_fact_error_find(json_object *errors, kb_fact_what w, const char *suffix) {
        char words[256];
        kb_fact_what_words(w, suffix, words, sizeof words);
        size_t n = errors && json_object_is_type(errors, json_type_array) ? json_object_array_length(errors) : 0;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(errors, i);
                const char *what = kb_fact_str_of(e, FACT_ERROR_WHAT);
                if (what && strcmp(what, words) == 0)
                        return e;
        }
        return NULL;
}

const kb_fact_info *kb_fact_row(kb_fact_id id) {
        return id >= 0 && id < _KB_FACT_ID_MAX ? &rows[id] : NULL;
}

void kb_fact_rows_of(kb_fact_object object, kb_fact_id *ret_first, kb_fact_id *ret_end) {
        if ((unsigned) object >= _KB_FACT_OBJECT_MAX) {
                *ret_first = *ret_end = _KB_FACT_ID_MAX;
                return;
        }
        *ret_first = first_row[object];
        *ret_end = object + 1 < _KB_FACT_OBJECT_MAX ? first_row[object + 1] : _KB_FACT_ID_MAX;
}

const char *kb_fact_object_name(kb_fact_object object) {
        return (unsigned) object < _KB_FACT_OBJECT_MAX ? objects[object].name : "?";
}

bool kb_fact_object_from_cell(kb_fact_object object) {
        return (unsigned) object < _KB_FACT_OBJECT_MAX && objects[object].cell;
}

const char *kb_fact_object_what(kb_fact_object object) {
        return (unsigned) object < _KB_FACT_OBJECT_MAX ? objects[object].what : "?";
}

/* ---- reading ---- */

json_object *kb_fact_member(json_object *o, kb_fact_id id) {
        json_object *v = NULL;
        if (!o || !json_object_is_type(o, json_type_object) || id < 0 || id >= _KB_FACT_ID_MAX ||
            !json_object_object_get_ex(o, rows[id].key, &v))
                return NULL;
        return v; /* JSON null is a NULL member */
}

static json_object *typed(json_object *o, kb_fact_id id, json_type type) {
        json_object *v = kb_fact_member(o, id);
        return v && json_object_is_type(v, type) ? v : NULL;
}

bool kb_fact_int_of(json_object *o, kb_fact_int f, int64_t *ret) {
        json_object *v = typed(o, f.id, json_type_int);
        if (v) {
                *ret = json_object_get_int64(v);
                return true;
        }
        if (!kb_fact_member(o, f.id) && rows[f.id].presence == KB_FACT_NONE) {
                *ret = 0;
                return true;
        }
        return false;
}

int64_t kb_fact_int_or(json_object *o, kb_fact_int f, int64_t dflt) {
        int64_t v;
        return kb_fact_int_of(o, f, &v) ? v : dflt;
}

const char *kb_fact_str_of(json_object *o, kb_fact_str f) {
        json_object *v = typed(o, f.id, json_type_string);
        return v ? json_object_get_string(v) : NULL;
}

const char *kb_fact_str_or(json_object *o, kb_fact_str f, const char *dflt) {
        const char *s = kb_fact_str_of(o, f);
        return s ? s : dflt;
}

bool kb_fact_bool_known(json_object *o, kb_fact_bool f, bool *ret) {
        json_object *v = typed(o, f.id, json_type_boolean);
        if (v)
                *ret = json_object_get_boolean(v);
        return v != NULL;
}

bool kb_fact_bool_of(json_object *o, kb_fact_bool f) {
        bool v;
        if (kb_fact_bool_known(o, f, &v))
                return v;
        /* Absent, null or of another type: what the row says its absence means. */
        return rows[f.id].presence == KB_FACT_TRUE || rows[f.id].presence == KB_FACT_REQUIRED_TRUE;
}

json_object *kb_fact_obj_of(json_object *o, kb_fact_obj f) {
        return typed(o, f.id, json_type_object);
}

json_object *kb_fact_arr_of(json_object *o, kb_fact_arr f) {
        return typed(o, f.id, json_type_array);
}

json_object *kb_fact_map_of(json_object *o, kb_fact_map f) {
        return typed(o, f.id, json_type_object);
}

json_object *kb_fact_any_of(json_object *o, kb_fact_any f) {
        return kb_fact_member(o, f.id);
}

/* ---- writing ---- */

static int set(json_object *o, kb_fact_id id, json_object *v) {
        if (!v || !o || json_object_object_add(o, rows[id].key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int kb_fact_set_int(json_object *o, kb_fact_int f, int64_t v) {
        return set(o, f.id, json_object_new_int64(v));
}

int kb_fact_set_str(json_object *o, kb_fact_str f, const char *v) {
        return set(o, f.id, v ? json_object_new_string(v) : NULL);
}

int kb_fact_set_strn(json_object *o, kb_fact_str f, const char *v, size_t len) {
        return set(o, f.id, v ? json_object_new_string_len(v, (int) len) : NULL);
}

int kb_fact_set_bool(json_object *o, kb_fact_bool f, bool v) {
        return set(o, f.id, json_object_new_boolean(v));
}

int kb_fact_set_obj(json_object *o, kb_fact_obj f, json_object *v) {
        return set(o, f.id, v);
}

int kb_fact_set_arr(json_object *o, kb_fact_arr f, json_object *v) {
        return set(o, f.id, v);
}

int kb_fact_set_map(json_object *o, kb_fact_map f, json_object *v) {
        return set(o, f.id, v);
}

int kb_fact_set_none(json_object *o, kb_fact_id id) {
        if (id < 0 || id >= _KB_FACT_ID_MAX || rows[id].presence == KB_FACT_REQUIRED ||
            rows[id].presence == KB_FACT_REQUIRED_TRUE)
                return -EINVAL;
        return o && json_object_object_add(o, rows[id].key, NULL) == 0 ? 0 : -ENOMEM;
}

int kb_fact_set_any(json_object *o, kb_fact_any f, json_object *v) {
        return set(o, f.id, v);
}

/* ---- validating ---- */

typedef struct checker {
        json_object *problems;
        size_t max, n;
        bool strict, oom;
        char path[512]; /* where the walk is: "processes[3].fds[0]" */
} checker;

static void problem(checker *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(checker *c, const char *fmt, ...) {
        if (c->n++ >= c->max)
                return;
        char text[1024], what[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        snprintf(text, sizeof text, "%s%s%s", c->path, c->path[0] ? ": " : "", what);
        json_object *s = json_object_new_string(text);
        if (!s || json_object_array_add(c->problems, s) < 0) {
                json_object_put(s);
                c->oom = true;
        }
}

static const char *json_kind_name(json_object *v) {
        return v ? json_type_to_name(json_object_get_type(v)) : "null";
}

/* Whether v is a scalar of kind; an element of a scalar array or map has the row's own kind. */
static bool scalar_is(json_object *v, kb_fact_kind kind) {
        switch (kind) {
        case KB_FACT_INT:
                return json_object_is_type(v, json_type_int);
        case KB_FACT_STR:
                return json_object_is_type(v, json_type_string);
        case KB_FACT_BOOL:
                return json_object_is_type(v, json_type_boolean);
        default:
                return true;
        }
}

static void walk(checker *c, json_object *o, kb_fact_object type, int depth);
static size_t push(checker *c, const char *key, long index);

/* An element of an array or map row: an object of row->of, or a scalar of the pseudo-objects INTS,
 * STRS, BOOLS (of that kind) or ANYS (anything). */
static void element(checker *c, const kb_fact_info *row, json_object *v, int depth) {
        switch (row->of) {
        case KB_FACT_OBJECT_INTS:
                if (!scalar_is(v, KB_FACT_INT))
                        problem(c, "%s, not an integer", json_kind_name(v));
                return;
        case KB_FACT_OBJECT_STRS:
                if (!scalar_is(v, KB_FACT_STR))
                        problem(c, "%s, not a string", json_kind_name(v));
                return;
        case KB_FACT_OBJECT_BOOLS:
                if (!scalar_is(v, KB_FACT_BOOL))
                        problem(c, "%s, not a bool", json_kind_name(v));
                return;
        case KB_FACT_OBJECT_ANYS:
                return;
        case KB_FACT_OBJECT_INT_LISTS:
        case KB_FACT_OBJECT_MOUNT_LISTS:
                if (!json_object_is_type(v, json_type_array)) {
                        problem(c, "%s, not an array", json_kind_name(v));
                        return;
                }
                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        json_object *e = json_object_array_get_idx(v, i);
                        size_t len = push(c, NULL, (long) i);
                        if (row->of == KB_FACT_OBJECT_INT_LISTS && !scalar_is(e, KB_FACT_INT))
                                problem(c, "%s, not an integer", json_kind_name(e));
                        else if (row->of == KB_FACT_OBJECT_MOUNT_LISTS && !json_object_is_type(e, json_type_object))
                                problem(c, "%s, not an object (MOUNT)", json_kind_name(e));
                        else if (row->of == KB_FACT_OBJECT_MOUNT_LISTS)
                                walk(c, e, KB_FACT_OBJECT_MOUNT, depth + 1);
                        c->path[len] = '\0';
                }
                return;
        default:
                if (!json_object_is_type(v, json_type_object))
                        problem(c, "%s, not an object (%s)", json_kind_name(v), kb_fact_object_name(row->of));
                else
                        walk(c, v, row->of, depth + 1);
        }
}

/* Extends c->path by a member name or an index for the span of one step; returns the old length. */
static size_t push(checker *c, const char *key, long index) {
        size_t len = strlen(c->path);
        if (key)
                snprintf(c->path + len, sizeof c->path - len, "%s%s", len ? "." : "", key);
        else
                snprintf(c->path + len, sizeof c->path - len, "[%ld]", index);
        return len;
}

static void one_fact(checker *c, const kb_fact_info *row, json_object *v, int depth) {
        switch (row->kind) {
        case KB_FACT_INT:
        case KB_FACT_STR:
        case KB_FACT_BOOL:
                if (!scalar_is(v, row->kind))
                        problem(c, "%s, not %s", json_kind_name(v),
                                row->kind == KB_FACT_INT   ? "an integer"
                                : row->kind == KB_FACT_STR ? "a string"
                                                           : "a bool");
                break;
        case KB_FACT_ANY:
                break;
        case KB_FACT_OBJ:
                if (!json_object_is_type(v, json_type_object))
                        problem(c, "%s, not an object (%s)", json_kind_name(v), kb_fact_object_name(row->of));
                else
                        walk(c, v, row->of, depth + 1);
                break;
        case KB_FACT_ARR:
                if (!json_object_is_type(v, json_type_array)) {
                        problem(c, "%s, not an array", json_kind_name(v));
                        break;
                }
                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        size_t len = push(c, NULL, (long) i);
                        element(c, row, json_object_array_get_idx(v, i), depth);
                        c->path[len] = '\0';
                }
                break;
        case KB_FACT_MAP:
                if (!json_object_is_type(v, json_type_object)) {
                        problem(c, "%s, not an object (a map)", json_kind_name(v));
                        break;
                }
                json_object_object_foreach(v, key, value) {
                        size_t len = push(c, key, 0);
                        element(c, row, value, depth);
                        c->path[len] = '\0';
                }
                break;
        }
}

static void walk(checker *c, json_object *o, kb_fact_object type, int depth) {
        if (depth > 32) {
                problem(c, "nested deeper than any declared object");
                return;
        }
        kb_fact_id first, end;
        kb_fact_rows_of(type, &first, &end);
        /* Every declared fact of type: there when required, of its kind when there. */
        for (kb_fact_id id = first; id < end; id++) {
                const kb_fact_info *row = &rows[id];
                json_object *v = NULL;
                bool there = json_object_object_get_ex(o, row->key, &v);
                size_t len = push(c, row->key, 0);
                if (!there || !v) {
                        if (row->presence == KB_FACT_REQUIRED || row->presence == KB_FACT_REQUIRED_TRUE)
                                problem(c, "required, %s", there ? "null" : "absent");
                } else
                        one_fact(c, row, v, depth);
                c->path[len] = '\0';
        }
        if (!c->strict || objects[type].cell)
                return;
        /* And nothing facts.def does not declare. */
        json_object_object_foreach(o, key, value) {
                (void) value;
                bool declared = false;
                for (kb_fact_id id = first; id < end && !declared; id++)
                        declared = strcmp(rows[id].key, key) == 0;
                if (!declared) {
                        size_t len = push(c, key, 0);
                        problem(c, "not a declared fact of %s", kb_fact_object_name(type));
                        c->path[len] = '\0';
                }
        }
}

int kb_fact_validate(json_object *o, kb_fact_object type, bool strict, json_object *problems, size_t max) {
        if (!problems || (unsigned) type >= _KB_FACT_OBJECT_MAX)
                return -EINVAL;
        checker c = {.problems = problems, .max = max, .strict = strict};
        if (!json_object_is_type(o, json_type_object))
                problem(&c, "%s, not an object (%s)", json_kind_name(o), kb_fact_object_name(type));
        else
                walk(&c, o, type, 0);
        return c.oom ? -ENOMEM : (int) c.n;
}
