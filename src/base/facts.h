/* facts.h: the evidence's schema, declared once (internal). Every object the host's looks, the
 * launch, kbound's own expectations and the cells hand the judges (a process, a descriptor, a
 * mount, a look, ...) is a row-set of src/base/facts.def: each fact's key, JSON type, whether it is
 * required, and what its absence means. From that one table come typed names for every fact
 * (FACT_PROCESS_PID is an integer fact of a process; passing it where a string fact is expected
 * does not compile), the accessors the judges read through, the writers inspection writes
 * through, and the validator that holds a whole object to its declaration. A key is spelled only in
 * facts.def, so a producer and a reader cannot disagree on it, nor on what a missing value means
 * (after systemd's JsonDispatch tables and crun's generated spec structs). Facts stay json-c
 * objects, so a report can quote them as they are. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

/* The kinds of value a fact holds. */
typedef enum kb_fact_kind {
        KB_FACT_INT,
        KB_FACT_STR,
        KB_FACT_BOOL,
        KB_FACT_ANY, /* opaque data, quoted as it is (a cell's own words) */
        KB_FACT_OBJ, /* an object of the row's element type */
        KB_FACT_ARR, /* an array of the row's element type */
        KB_FACT_MAP, /* an object whose keys are data (a namespace inode, a mount point), values of the element type */
} kb_fact_kind;

/* What a fact's absence means. */
typedef enum kb_fact_presence {
        KB_FACT_REQUIRED,      /* always there: an object without it is malformed, and what rests on it fails */
        KB_FACT_UNKNOWN,       /* absent: not known (not read, or not applicable); never taken as harmless */
        KB_FACT_NONE,          /* absent: none (an empty list, zero, false) */
        KB_FACT_TRUE,          /* a bool whose absence reads as true (the fail-closed side: "survived") */
        KB_FACT_REQUIRED_TRUE, /* required, and a bool that reads as true should it be absent ("writable") */
} kb_fact_presence;

/* The object types, and the pseudo-types an array's or a map's elements may have. */
typedef enum kb_fact_object {
#define KB_FACT_OBJECT(name, source, what) KB_FACT_OBJECT_##name,
#define KB_FACT(object, name, key, kind, of, presence, what)
#define KB_FACT_WHAT(name, text)
#include "base/facts.def"
#undef KB_FACT_OBJECT
#undef KB_FACT
#undef KB_FACT_WHAT
        _KB_FACT_OBJECT_MAX,
} kb_fact_object;

/* Every fact, by its row. An object's rows follow its KB_FACT_OBJECT line in facts.def, so its
 * facts are the ids from KB_FACT_ID_BEGIN_<object> (which takes no number of its own) up to the
 * next object's. */
typedef enum kb_fact_id {
#define KB_FACT_OBJECT(name, source, what)                                                                             \
        KB_FACT_ID_BEGIN_##name, _KB_FACT_ID_BEGIN_##name##_ = KB_FACT_ID_BEGIN_##name - 1,
#define KB_FACT(object, name, key, kind, of, presence, what) KB_FACT_ID_##object##_##name,
#define KB_FACT_WHAT(name, text)
#include "base/facts.def"
#undef KB_FACT_OBJECT
#undef KB_FACT
#undef KB_FACT_WHAT
        _KB_FACT_ID_MAX,
} kb_fact_id;

/* A fact's typed name, one struct per kind, so each accessor takes only facts of its kind. */
typedef struct kb_fact_int {
        kb_fact_id id;
} kb_fact_int;
typedef struct kb_fact_str {
        kb_fact_id id;
} kb_fact_str;
typedef struct kb_fact_bool {
        kb_fact_id id;
} kb_fact_bool;
typedef struct kb_fact_any {
        kb_fact_id id;
} kb_fact_any;
typedef struct kb_fact_obj {
        kb_fact_id id;
} kb_fact_obj;
typedef struct kb_fact_arr {
        kb_fact_id id;
} kb_fact_arr;
typedef struct kb_fact_map {
        kb_fact_id id;
} kb_fact_map;

#define KB_FACT_TYPE_INT kb_fact_int
#define KB_FACT_TYPE_STR kb_fact_str
#define KB_FACT_TYPE_BOOL kb_fact_bool
#define KB_FACT_TYPE_ANY kb_fact_any
#define KB_FACT_TYPE_OBJ kb_fact_obj
#define KB_FACT_TYPE_ARR kb_fact_arr
#define KB_FACT_TYPE_MAP kb_fact_map
#define KB_FACT_OBJECT(name, source, what)
#define KB_FACT(object, name, key, kind, of, presence, what)                                                           \
        static const KB_FACT_TYPE_##kind FACT_##object##_##name = {KB_FACT_ID_##object##_##name};
#define KB_FACT_WHAT(name, text)
#include "base/facts.def"
#undef KB_FACT_OBJECT
#undef KB_FACT
#undef KB_FACT_WHAT

/* One row of facts.def. */
typedef struct kb_fact_info {
        kb_fact_object object;
        const char *key;
        kb_fact_kind kind;
        kb_fact_object of; /* an object's, array's or map's element type (INTS, STRS, BOOLS, ANYS for scalars);
                            * NONE for a scalar fact */
        kb_fact_presence presence;
        const char *what;
} kb_fact_info;

/* What a look could not read, as an ERROR's "what" says it: one typed name per kind, so a producer
 * and the judge looking the error up cannot spell it two ways. */
typedef struct kb_fact_what {
        int id;
} kb_fact_what;
enum {
#define KB_FACT_OBJECT(name, source, what)
#define KB_FACT(object, name, key, kind, of, presence, what)
#define KB_FACT_WHAT(name, text) KB_FACT_WHAT_ID_##name,
#include "base/facts.def"
#undef KB_FACT_OBJECT
#undef KB_FACT
#undef KB_FACT_WHAT
        _KB_FACT_WHAT_MAX,
};
#define KB_FACT_OBJECT(name, source, what)
#define KB_FACT(object, name, key, kind, of, presence, what)
#define KB_FACT_WHAT(name, text) static const kb_fact_what WHAT_##name = {KB_FACT_WHAT_ID_##name};
#include "base/facts.def"
#undef KB_FACT_OBJECT
#undef KB_FACT
#undef KB_FACT_WHAT
/* The words of w ("the launcher's environment"); "?" for a w out of range. */
const char *kb_fact_what_text(kb_fact_what w);
/* Writes w's words into buf (at most size bytes, NUL-terminated), followed by "/" and suffix when
 * suffix is not NULL ("ns_owners/net"); returns buf. */
const char *kb_fact_what_words(kb_fact_what w, const char *suffix, char *buf, size_t size);
/* The error of errors (an array of ERROR objects) about w (and suffix, when it takes one), or NULL. */
json_object *kb_fact_error_find(json_object *errors, kb_fact_what w, const char *suffix);

/* The row of id; NULL for an id out of range. */
const kb_fact_info *kb_fact_row(kb_fact_id id);
/* The key of id as facts.def spells it ("pid"); NULL for an id out of range. Header-only, with no
 * table to link, so that a program that links nothing but libc (kbound-syscall-probe, which prints
 * its JSON by hand) spells its keys through facts.def too. kb_fact_key_of takes a typed name. */
static inline const char *kb_fact_key(kb_fact_id id) {
        switch (id) {
#define KB_FACT_OBJECT(name, source, what)
#define KB_FACT(object, name, key, kind, of, presence, what)                                                           \
        case KB_FACT_ID_##object##_##name:                                                                             \
                return key;
#define KB_FACT_WHAT(name, text)
#include "base/facts.def"
#undef KB_FACT_OBJECT
#undef KB_FACT
#undef KB_FACT_WHAT
        default:
                return NULL;
        }
}
#define kb_fact_key_of(fact) kb_fact_key((fact).id)
/* The rows of object: ids [*ret_first, *ret_end). */
void kb_fact_rows_of(kb_fact_object object, kb_fact_id *ret_first, kb_fact_id *ret_end);
/* An object type's name as facts.def spells it ("PROCESS"), and what it is. */
const char *kb_fact_object_name(kb_fact_object object);
const char *kb_fact_object_what(kb_fact_object object);
/* Whether object is what a cell said (facts.def's CELL), not what kbound made. */
bool kb_fact_object_from_cell(kb_fact_object object);

/* ---- facts.def as JSON Schema, draft 7 (facts_schema.c) ---- */

/* The schema of fact id's value ({"$ref": "#/definitions/OBJECT"} for an object); NULL if out of
 * memory. */
json_object *kb_fact_schema_value(kb_fact_id id);
/* A "definitions" object: each object type of facts.def by its name, its required facts required,
 * the others nullable; a host-made object admits nothing undeclared. NULL if out of memory. */
json_object *kb_fact_schema_definitions(void);

/* ---- reading: o is an object of the fact's type (NULL reads as an object without facts) ---- */

/* The member as it is, whatever its kind; NULL when absent or JSON null. Borrowed. */
#define kb_fact_get(o, fact) kb_fact_member((o), (fact).id)
json_object *kb_fact_member(json_object *o, kb_fact_id id);
/* Whether the fact is there (not absent, not null). */
#define kb_fact_has(o, fact) (kb_fact_member((o), (fact).id) != NULL)
/* true and the value in *ret when the fact is there as an integer; an absent fact of presence
 * NONE reads as 0 (true); anything else false, *ret untouched. */
bool kb_fact_int_of(json_object *o, kb_fact_int f, int64_t *ret);
/* The value, or dflt when it is not there as an integer (NONE: 0): for what a message shows. */
int64_t kb_fact_int_or(json_object *o, kb_fact_int f, int64_t dflt);
/* The string, or NULL when it is not there as one. Borrowed. */
const char *kb_fact_str_of(json_object *o, kb_fact_str f);
const char *kb_fact_str_or(json_object *o, kb_fact_str f, const char *dflt);
/* The bool: its value when there as a JSON boolean, else what its absence means (TRUE: true; else
 * false). */
bool kb_fact_bool_of(json_object *o, kb_fact_bool f);
/* Whether the bool is there as a JSON boolean (*ret its value), so a reader can tell "false" from
 * "not known". */
bool kb_fact_bool_known(json_object *o, kb_fact_bool f, bool *ret);
/* The object, array or map; NULL when absent or of another JSON type. Borrowed. */
json_object *kb_fact_obj_of(json_object *o, kb_fact_obj f);
json_object *kb_fact_arr_of(json_object *o, kb_fact_arr f);
json_object *kb_fact_map_of(json_object *o, kb_fact_map f);
json_object *kb_fact_any_of(json_object *o, kb_fact_any f);

/* ---- writing: each takes the value (puts it on failure); 0 or -ENOMEM (v NULL: out of memory) ---- */

int kb_fact_set_int(json_object *o, kb_fact_int f, int64_t v);
int kb_fact_set_str(json_object *o, kb_fact_str f, const char *v);
int kb_fact_set_strn(json_object *o, kb_fact_str f, const char *v, size_t len);
int kb_fact_set_bool(json_object *o, kb_fact_bool f, bool v);
/* v is taken: an object, array or map of the fact's element type, or any value for ANY. */
int kb_fact_set_obj(json_object *o, kb_fact_obj f, json_object *v);
int kb_fact_set_arr(json_object *o, kb_fact_arr f, json_object *v);
int kb_fact_set_map(json_object *o, kb_fact_map f, json_object *v);
int kb_fact_set_any(json_object *o, kb_fact_any f, json_object *v);
/* Writes JSON null for a fact whose absence is allowed (what a reader then reads as absent: "not
 * by the bound"); -EINVAL for a required fact. */
#define kb_fact_set_null(o, fact) kb_fact_set_none((o), (fact).id)
int kb_fact_set_none(json_object *o, kb_fact_id id);

/* ---- validating ---- */

/* Holds o, an object of type, to facts.def, recursively: every required fact there, every fact
 * that is there of its declared JSON type (null only where its absence is allowed), every element
 * of an array or map of the element type, and, strict, no key that facts.def does not declare
 * (never asked of a CELL object: a pack may say more than is declared). Appends a string per
 * problem, naming where ("processes[3].uid: required, absent"), to problems, at most max in all
 * (the count goes on). Returns the number of problems found, -ENOMEM, or -EINVAL (problems NULL). */
int kb_fact_validate(json_object *o, kb_fact_object type, bool strict, json_object *problems, size_t max);
