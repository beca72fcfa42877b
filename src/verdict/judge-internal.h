/* judge-internal.h: what the judge's checks (judge_*.c) share: accessors, the verdict builder, helpers. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <json-c/json.h>
#include "kbound/check.h"
#include "kbound/judge.h"
#include "base/facts.h"
#include "base/jsonget.h"

#define DETAIL_MAX 1024

/* ---- tolerant accessors: facts are ours, but a missing field must read as "unknown" ---- */

static inline const char *str_or(json_object *o, const char *key, const char *dflt) {
        const char *s = kb_json_str(o, key);
        return s ? s : dflt;
}

static inline size_t arr_len(json_object *a) {
        return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static inline json_object *at(json_object *a, size_t i) {
        return i < arr_len(a) ? json_object_array_get_idx(a, i) : NULL;
}

static inline int64_t int_or(json_object *o, const char *key, int64_t dflt) {
        int64_t v;
        return kb_json_int(o, key, &v) ? v : dflt;
}

static inline bool str_in(json_object *strings, const char *s) {
        for (size_t i = 0; s && i < arr_len(strings); i++) {
                json_object *v = at(strings, i);
                if (json_object_is_type(v, json_type_string) && strcmp(json_object_get_string(v), s) == 0)
                        return true;
        }
        return false;
}

static inline bool int_in(json_object *ints, int64_t x) {
        for (size_t i = 0; i < arr_len(ints); i++) {
                json_object *v = at(ints, i);
                if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) == x)
                        return true;
        }
        return false;
}

/* ---- a verdict under construction: every problem is kept, the first one is the detail ---- */

typedef struct verdict {
        json_object *ev;       /* the evidence */
        json_object *problems; /* strings, also in ev */
        size_t n;              /* problems found (more than are kept) */
        bool oom;
        const kb_judge_input *in; /* the evidence judged from the host's looks (judge_look_problems), held to
                                   * facts.def at the verdict's end */
} verdict;

/* Each function's contract is at its definition. judge.c: */
void verdict_init(verdict *v);
void verdict_problem(verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void verdict_evidence(verdict *v, const char *key, json_object *value);
json_object *verdict_end(verdict *v, kb_check c, const char *pass_detail);
json_object *verdict_end_as(verdict *v, kb_check c, const char *status, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* The check table's id of c. The judges name their check by its enum through judge.c alone: the
 * table (check.c) points at every judge, so no judge_*.c calls check.c itself. */
const char *judge_check_id(kb_check c);

const char *judge_fact_error(json_object *o, const char *what, char *buf, size_t size);
const char *judge_look_error(json_object *look, kb_fact_what what, char *buf, size_t size);
const char *judge_process_error(json_object *p, kb_fact_what what, const char *suffix, char *buf, size_t size);
int64_t judge_inner_pid(json_object *p);
void judge_add_unique(json_object *strings, const char *text);
json_object *judge_last_look(const kb_judge_input *in);
json_object *judge_look_labelled(const kb_judge_input *in, const char *label);
void judge_look_problems(verdict *v, const kb_judge_input *in);
void verdict_begin(verdict *v, const kb_judge_input *in);
const char *judge_cell_error(json_object *probe, const char *const *prefixes, char *buf, size_t size);
void judge_no_probe(verdict *v, const kb_judge_input *in);
int judge_bwrap_arity(const char *opt);

/* judge_identity.c: */
const char *judge_holder_words(json_object *snap, json_object *h, char *buf, size_t size);

/* judge_mounts.c: */
bool judge_mount_is(json_object *m, const char *fstype);
/* Whether mount m is writable; unknown writability is writable. */
bool judge_mount_writable(json_object *m);
bool judge_host_has_dev(json_object *host_mounts, const char *dev);
bool judge_harmless_char(const char *rdev, bool tty_too);
bool judge_same_path(const char *a, const char *b);
const char *judge_not_own(json_object *m, const kb_judge_mount_facts *f, char *buf, size_t size);
json_object *judge_mounts_of(json_object *snap, json_object *p);
kb_judge_mount_facts judge_mount_facts(const kb_judge_input *in, json_object *snap);
size_t judge_look_tables(json_object *snap, json_object **out, size_t max);
size_t judge_reach_problems(verdict *v, const kb_judge_input *in, const char *kind, kb_check claim,
                            json_object *report);
