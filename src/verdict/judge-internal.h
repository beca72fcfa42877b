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
#include "verdict/evidence.h"

#define DETAIL_MAX 1024

/* ---- reading facts ----
 *
 * Every fact is read through facts.h's typed names (FACT_<OBJECT>_<NAME>), so its key and what its
 * absence means come from its row of src/base/facts.def; a required fact that is missing also
 * makes every host-judged check fail (kb_judge_malformed), whatever a judge reads in its place.
 * What remains below is JSON plumbing: arrays, and maps, whose keys are data (a namespace's name,
 * an inode, a device, a path), never a fact's key. */

static inline size_t arr_len(json_object *a) {
        return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static inline json_object *at(json_object *a, size_t i) {
        return i < arr_len(a) ? json_object_array_get_idx(a, i) : NULL;
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

/* The value at key of a map fact (kb_fact_map_of: its keys are data), or NULL (absent, JSON null,
 * or map not an object). Borrowed. */
static inline json_object *judge_map_at(json_object *map, const char *key) {
        json_object *v = NULL;
        if (!key || !map || !json_object_is_type(map, json_type_object) || !json_object_object_get_ex(map, key, &v))
                return NULL;
        return v;
}

/* true and the integer at key of a map fact in *ret; false (*ret untouched) when it is not there
 * as an integer. */
static inline bool judge_map_int(json_object *map, const char *key, int64_t *ret) {
        json_object *v = judge_map_at(map, key);
        if (!v || !json_object_is_type(v, json_type_int))
                return false;
        *ret = json_object_get_int64(v);
        return true;
}

/* The inode of namespace name ("net": the kernel's own name for it, a key of the map) in ns (a
 * HOST's or a PROCESS's "ns"), or -1 when it was not read. */
static inline int64_t judge_ns_inode(json_object *ns, const char *name) {
        int64_t v;
        return judge_map_int(ns, name, &v) ? v : -1;
}

/* A process's pid and name as a message shows them ("?" and -1: not read). */
static inline int64_t judge_pid_of(json_object *p) {
        return kb_fact_int_or(p, FACT_PROCESS_PID, -1);
}

static inline const char *judge_name_of(json_object *p) {
        return kb_fact_str_or(p, FACT_PROCESS_NAME, "?");
}

/* Whether process p's pid is there and is pid: a process whose pid was not read is no process. */
static inline bool judge_is_pid(json_object *p, int64_t pid) {
        int64_t mine;
        return kb_fact_int_of(p, FACT_PROCESS_PID, &mine) && mine == pid;
}

/* The process of look snap whose pid is pid, or NULL. */
static inline json_object *judge_find_pid(json_object *snap, int64_t pid) {
        json_object *procs = kb_fact_arr_of(snap, FACT_LOOK_PROCESSES);
        for (size_t i = 0; procs && i < json_object_array_length(procs); i++)
                if (judge_is_pid(json_object_array_get_idx(procs, i), pid))
                        return json_object_array_get_idx(procs, i);
        return NULL;
}

/* A file by its identity, whatever object holds it (a FILE_ID, a descriptor, a mapping, a
 * reference, a descriptor kbound handed bwrap): read from that object's own facts, known only when
 * both its device and its inode are there. */
typedef struct judge_file {
        const char *dev;
        int64_t ino;
        bool known;
} judge_file;

static inline judge_file judge_file_of(const char *dev, bool ino_known, int64_t ino) {
        return (judge_file){.dev = dev, .ino = ino, .known = dev && ino_known};
}

/* Whether a and b are the same file; two files of unknown identity are never the same. */
static inline bool judge_same_file(judge_file a, judge_file b) {
        return a.known && b.known && strcmp(a.dev, b.dev) == 0 && a.ino == b.ino;
}

/* ---- a verdict under construction: every problem is kept, the first one is the detail ---- */

typedef struct verdict {
        json_object *ev;       /* the evidence */
        json_object *problems; /* strings, also in ev */
        size_t n;              /* problems found (more than are kept) */
        bool oom;
        json_object *not_applicable; /* in ev: what of kbound's own launch an audit does not claim */
        const kb_judge_input *in;    /* the evidence judged from the host's looks (judge_look_problems), held to
                                      * facts.def at the verdict's end */
        json_object *in_part;        /* the parts of the claim not proven (verdict_in_part), also in ev */
} verdict;

/* Each function's contract is at its definition. judge.c: */
void verdict_init(verdict *v);
void verdict_problem(verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void verdict_evidence(verdict *v, const char *key, json_object *value);
/* Adds the quote of a fact evidence.def declares (value taken; NULL: the fact was absent). */
void verdict_evidence_fact(verdict *v, kb_evidence e, json_object *value);
/* Records a part of the check's claim the host did not prove, as the words say it ("not claimed:
 * ..." or "not tested: ..."): the check still passes on what was proven, but its evidence's
 * not_tested names the part, and the report reads the check as held in part, never in full. */
void verdict_in_part(verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
json_object *verdict_end(verdict *v, kb_check c, const char *pass_detail);
json_object *verdict_end_as(verdict *v, kb_check c, const char *status, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
json_object *verdict_end_before_start(verdict *v, kb_check c, const char *looked_at);
/* The check table's id of c. The judges name their check by its enum through judge.c alone: the
 * table (check.c) points at every judge, so no judge_*.c calls check.c itself. */
const char *judge_check_id(kb_check c);
/* Whether in is about a sandbox kbound did not build (`kbound audit`: expect "audit"), where what
 * only kbound's own launch has (its bwrap's argv and plan, the look before exec) is not claimed;
 * verdict_not_applicable names such a part in the check's evidence ("not_applicable"). */
bool judge_audited(const kb_judge_input *in);
void verdict_not_applicable(verdict *v, const char *what);

const char *judge_error_in(json_object *errors, kb_fact_what what, const char *suffix, char *buf, size_t size);
const char *judge_look_error(json_object *look, kb_fact_what what, char *buf, size_t size);
const char *judge_process_error(json_object *p, kb_fact_what what, const char *suffix, char *buf, size_t size);
const char *judge_task_error(json_object *task, kb_fact_what what, const char *suffix, char *buf, size_t size);
int64_t judge_inner_pid(json_object *p);
bool judge_zombie(json_object *p);
bool judge_task_exited(json_object *task);
/* The process of look snap one of whose threads is tid: its main one (the process's pid; *ret_task
 * NULL) or one of its TASKs (*ret_task that TASK); NULL when none is. A tracer, a thread's pidfd
 * name a thread, not always a process. */
json_object *judge_find_task(json_object *snap, int64_t tid, json_object **ret_task);
/* "thread T of pid P (name)" for a TASK of p, "pid P (name)" for task NULL, in buf. */
const char *judge_task_words(json_object *task, json_object *p, char *buf, size_t size);
int64_t judge_kernel_pid(verdict *v, const kb_judge_input *in);
judge_file judge_file_id(json_object *file);
void judge_add_unique(json_object *strings, const char *text);
json_object *judge_last_look(const kb_judge_input *in);
json_object *judge_look_labelled(const kb_judge_input *in, const char *label);
void judge_look_problems(verdict *v, const kb_judge_input *in);
void verdict_begin(verdict *v, const kb_judge_input *in);
const char *judge_cell_error(json_object *errors, const char *const *prefixes, char *buf, size_t size);
void judge_no_probe(verdict *v, const kb_judge_input *in);
void judge_not_tested(verdict *v, const kb_judge_input *in, kb_check c, char *buf, size_t size);
int judge_bwrap_arity(const char *opt);

/* judge_identity.c: */
const char *judge_holder_words(json_object *snap, json_object *h, char *buf, size_t size);

/* judge_objects.c: why fd (of p in snap), an anonymous inode or memory file, reaches outside the
 * sandbox, or NULL once every other holder the host found is the sandbox's own. */
const char *judge_object_problem(json_object *snap, json_object *p, json_object *fd, char *buf, size_t size);

/* judge_socket_ends.c: why a socket (target "socket:[inode]") that process p of look snap holds
 * reaches outside the sandbox, or NULL once each of its other ends the host traced is the
 * sandbox's own (or it is the kernel's end of one of kbound's connections). */
const char *judge_socket_problem(json_object *snap, json_object *p, const char *target, int64_t inode, char *buf,
                                 size_t size);
/* The look's own problems with that tracing: a network namespace of the sandbox's whose sockets
 * it could not list with sock_diag, or no tracing at all. */
void judge_socket_look_problems(verdict *v, json_object *snap);

/* judge_plan.c: */
int judge_plan_problems(const kb_judge_input *in, json_object *all, json_object *widening);

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
