/* judge.c: the verdict builder every check shares (judge-internal.h) and kb_judge_check (judge.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "kbound/bwrap.h"
#include "verdict/judge-internal.h"

#define PROBLEMS_MAX 64 /* kept in the evidence; the count says how many there were */

json_object *kb_judge_check(const char *id, const char *status, json_object *evidence, const char *fmt, ...) {
        char detail[DETAIL_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
        json_object *c = json_object_new_object();
        if (!c || json_object_object_add(c, "id", json_object_new_string(id)) < 0 ||
            json_object_object_add(c, "status", json_object_new_string(status)) < 0 ||
            json_object_object_add(c, "detail", json_object_new_string(detail)) < 0 ||
            json_object_object_add(c, "evidence", evidence ? evidence : json_object_new_object()) < 0) {
                if (!c)
                        json_object_put(evidence);
                json_object_put(c);
                return NULL;
        }
        return c;
}

/* ---- facts ---- */

/* The first of errors (an ERROR array) about what (its words, "/suffix" when suffix is given), as
 * "what: error" in buf, or NULL. */
const char *judge_error_in(json_object *errors, kb_fact_what what, const char *suffix, char *buf, size_t size) {
        json_object *e = kb_fact_error_find(errors, what, suffix);
        if (!e)
                return NULL;
        snprintf(buf, size, "%s: %s", kb_fact_str_or(e, FACT_ERROR_WHAT, "?"),
                 kb_fact_str_or(e, FACT_ERROR_ERROR, "?"));
        return buf;
}

/* The look's error about what, as "what: error" in buf, or NULL. */
const char *judge_look_error(json_object *look, kb_fact_what what, char *buf, size_t size) {
        return judge_error_in(kb_fact_arr_of(look, FACT_LOOK_ERRORS), what, NULL, buf, size);
}

/* The process's error about what (and suffix, when it takes one), as "what: error", or NULL. */
const char *judge_process_error(json_object *p, kb_fact_what what, const char *suffix, char *buf, size_t size) {
        return judge_error_in(kb_fact_arr_of(p, FACT_PROCESS_ERRORS), what, suffix, buf, size);
}

/* The thread's error about what (and suffix), as "what: error", or NULL. */
const char *judge_task_error(json_object *task, kb_fact_what what, const char *suffix, char *buf, size_t size) {
        return judge_error_in(kb_fact_arr_of(task, FACT_TASK_ERRORS), what, suffix, buf, size);
}

/* The last NSpid of a process: its pid inside its own namespace; -1 when not read. */
int64_t judge_inner_pid(json_object *p) {
        json_object *nspid = kb_fact_arr_of(p, FACT_PROCESS_NSPID);
        size_t n = arr_len(nspid);
        json_object *v = n ? at(nspid, n - 1) : NULL;
        return v && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -1;
}

/* Whether the thread (a TASK) has exited (state Z or X): it holds nothing, and runs nothing. */
bool judge_task_exited(json_object *task) {
        const char *state = kb_fact_str_of(task, FACT_TASK_STATE);
        return state && (strcmp(state, "Z") == 0 || strcmp(state, "X") == 0);
}

/* Whether p is a zombie that holds nothing of its own: its main thread exited (state Z) and the
 * host found no live thread of it (none to read it through, its threads listed and every one
 * exited). A zombie leader whose threads live on is read through one of them (READ_THROUGH) and
 * judged as any process; one whose threads were not listed is not known to hold nothing. */
bool judge_zombie(json_object *p) {
        const char *state = kb_fact_str_of(p, FACT_PROCESS_STATE);
        json_object *tasks = kb_fact_arr_of(p, FACT_PROCESS_TASKS);
        if (!state || strcmp(state, "Z") != 0 || kb_fact_has(p, FACT_PROCESS_READ_THROUGH) || !tasks)
                return false;
        for (size_t i = 0; i < arr_len(tasks); i++)
                if (!judge_task_exited(at(tasks, i)))
                        return false;
        return true;
}

json_object *judge_find_task(json_object *snap, int64_t tid, json_object **ret_task) {
        json_object *procs = kb_fact_arr_of(snap, FACT_LOOK_PROCESSES);
        for (size_t i = 0; i < arr_len(procs); i++) {
                json_object *p = at(procs, i), *tasks = kb_fact_arr_of(p, FACT_PROCESS_TASKS);
                if (judge_is_pid(p, tid)) {
                        *ret_task = NULL;
                        return p;
                }
                for (size_t k = 0; k < arr_len(tasks); k++) {
                        int64_t mine;
                        if (kb_fact_int_of(at(tasks, k), FACT_TASK_TID, &mine) && mine == tid) {
                                *ret_task = at(tasks, k);
                                return p;
                        }
                }
        }
        *ret_task = NULL;
        return NULL;
}

const char *judge_task_words(json_object *task, json_object *p, char *buf, size_t size) {
        if (task)
                snprintf(buf, size, "thread %" PRId64 " of pid %" PRId64 " (%s)",
                         kb_fact_int_or(task, FACT_TASK_TID, -1), judge_pid_of(p), judge_name_of(p));
        else
                snprintf(buf, size, "pid %" PRId64 " (%s)", judge_pid_of(p), judge_name_of(p));
        return buf;
}

/* The pinned kernel's host pid (expect "kernel_pid", which facts.def requires), or -1 after a
 * problem saying kbound did not record it: a kernel kbound cannot name is never matched. */
int64_t judge_kernel_pid(verdict *v, const kb_judge_input *in) {
        int64_t pid;
        if (kb_fact_int_of(in->expect, FACT_EXPECT_KERNEL_PID, &pid) && pid > 0)
                return pid;
        verdict_problem(v, "kbound did not record the pinned kernel's host pid");
        return -1;
}

/* A FILE_ID's identity (a program, kbound's /proc, the kernel's log file). */
judge_file judge_file_id(json_object *file) {
        int64_t ino = -1;
        bool ino_known = kb_fact_int_of(file, FACT_FILE_ID_INO, &ino);
        return judge_file_of(kb_fact_str_of(file, FACT_FILE_ID_DEV), ino_known, ino);
}

/* Appends text to strings unless it is there already (every look is judged; a mount that stays the
 * same is one problem). */
void judge_add_unique(json_object *strings, const char *text) {
        if (strings && !str_in(strings, text))
                json_object_array_add(strings, json_object_new_string(text));
}

/* ---- a verdict under construction: every problem is kept, the first one is the detail ---- */

void verdict_init(verdict *v) {
        v->ev = json_object_new_object();
        v->problems = json_object_new_array();
        v->n = 0;
        v->in = NULL;
        v->not_applicable = NULL;
        v->in_part = NULL;
        v->oom = !v->ev || !v->problems || json_object_object_add(v->ev, "problems", v->problems) < 0;
}

void verdict_problem(verdict *v, const char *fmt, ...) {
        char text[DETAIL_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        if (v->n++ < PROBLEMS_MAX && !v->oom && json_object_array_add(v->problems, json_object_new_string(text)) < 0)
                v->oom = true;
}

/* The evidence's not_tested, made (empty) when first needed; NULL when out of memory. */
static json_object *in_part_list(verdict *v) {
        if (!v->in_part && !v->oom) {
                v->in_part = json_object_new_array();
                if (!v->in_part || json_object_object_add(v->ev, "not_tested", v->in_part) < 0) {
                        json_object_put(v->in_part);
                        v->in_part = NULL;
                        v->oom = true;
                }
        }
        return v->in_part;
}

/* One rule for every part a claim leaves unproven (a canary not planted, a socket not placed, a
 * system call left allowed): the report reads any check whose not_tested is not empty as held in
 * part (report.c), so each judge only says what the part is. */
void verdict_in_part(verdict *v, const char *fmt, ...) {
        char text[DETAIL_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        json_object *list = in_part_list(v);
        if (list && json_object_array_add(list, json_object_new_string(text)) < 0)
                v->oom = true;
}

/* Adds a member to the evidence (value taken). */
void verdict_evidence(verdict *v, const char *key, json_object *value) {
        if (v->oom || !v->ev || json_object_object_add(v->ev, key, value) < 0) {
                json_object_put(value);
                v->oom = true;
        }
}

void verdict_evidence_fact(verdict *v, kb_evidence e, json_object *value) {
        const kb_evidence_info *row = kb_evidence_row(e.id);
        if (!row) {
                json_object_put(value);
                v->oom = true; /* no such row: the check fails rather than quote under no name */
                return;
        }
        verdict_evidence(v, row->key, value);
}

bool judge_audited(const kb_judge_input *in) {
        return kb_fact_obj_of(in->expect, FACT_EXPECT_AUDIT) != NULL;
}

void verdict_not_applicable(verdict *v, const char *what) {
        if (!v->ev || v->oom)
                return;
        if (!v->not_applicable) {
                v->not_applicable = json_object_new_array();
                verdict_evidence(v, "not_applicable", v->not_applicable); /* v->ev owns it */
        }
        if (!v->oom && json_object_array_add(v->not_applicable, json_object_new_string(what)) < 0)
                v->oom = true;
}

const char *judge_check_id(kb_check c) {
        return kb_check_id(c);
}

/* Ends the verdict of check c: fail with the first problem (and how many more), else pass with
 * pass_detail. */
/* The evidence's breaks of facts.def (kb_judge_malformed, or the input's own copy), added last,
 * so a judge's own problem stays the detail and a judge that found none still fails. */
static void malformed_problems(verdict *v) {
        if (!v->in || v->oom)
                return;
        json_object *own = v->in->malformed ? NULL : kb_judge_malformed(v->in),
                    *malformed = v->in->malformed ? v->in->malformed : own;
        if (!malformed) {
                v->oom = true;
                return;
        }
        if (arr_len(malformed)) {
                verdict_problem(v, "the host's evidence is not what facts.def declares: %s%s",
                                json_object_get_string(at(malformed, 0)),
                                arr_len(malformed) > 1 ? " (and more: the evidence's malformed)" : "");
                verdict_evidence(v, "malformed", json_object_get(malformed));
        }
        json_object_put(own);
}

json_object *verdict_end(verdict *v, kb_check c, const char *pass_detail) {
        const char *id = kb_check_id(c);
        malformed_problems(v);
        if (v->oom) {
                json_object_put(v->ev);
                return NULL;
        }
        if (v->n == 0)
                return kb_judge_check(id, "pass", v->ev, "%s", pass_detail);
        const char *first = json_object_get_string(at(v->problems, 0));
        if (v->n == 1)
                return kb_judge_check(id, "fail", v->ev, "%s", first);
        return kb_judge_check(id, "fail", v->ev, "%s (and %zu more, see evidence)", first, v->n - 1);
}

/* Ends the verdict of check c with status (not_claimed, unsupported) and the detail fmt says,
 * whatever problems it holds; NULL when out of memory. */
json_object *verdict_end_as(verdict *v, kb_check c, const char *status, const char *fmt, ...) {
        if (v->oom) {
                json_object_put(v->ev);
                return NULL;
        }
        char detail[DETAIL_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
        return kb_judge_check(kb_check_id(c), status, v->ev, "%s", detail);
}

/* Ends the verdict of check c for a kernel that did not start, judged on the look before exec
 * alone (judge.h, the kb_judge_*_before_start): fail with the first problem, said as seen before
 * the kernel ran; else not_run, saying what the look showed nothing wrong with (looked_at): a pass
 * needs the looks at the running kernel. The evidence says it was judged so (before_start). It is
 * not held to facts.def: kbound's expectations then lack what only a started kernel gives (its
 * pid), and nothing judged here can pass; NULL when out of memory. */
json_object *verdict_end_before_start(verdict *v, kb_check c, const char *looked_at) {
        static const char seen[] = "before the kernel ran";
        verdict_evidence(v, "before_start", json_object_new_boolean(true));
        if (v->oom) {
                json_object_put(v->ev);
                return NULL;
        }
        const char *id = kb_check_id(c);
        if (v->n == 0)
                return kb_judge_check(id, "not_run", v->ev,
                                      "not run: the kernel did not start (%s says why); before it ran, the host's look "
                                      "found nothing wrong with %s",
                                      kb_check_id(KB_CHECK_BACKEND), looked_at);
        const char *first = json_object_get_string(at(v->problems, 0));
        const char *prefix = strncmp(first, seen, strlen(seen)) == 0 ? "" : "before the kernel ran, ";
        if (v->n == 1)
                return kb_judge_check(id, "fail", v->ev, "%s%s", prefix, first);
        return kb_judge_check(id, "fail", v->ev, "%s%s (and %zu more, see evidence)", prefix, first, v->n - 1);
}

/* What check c's claim could not rest on: each canary file kbound's expectation "canaries" says
 * c relies on and was not planted, as "not tested: NAME (WHY)" into the evidence's not_tested
 * (verdict_in_part; an empty array when every one was), and as "not tested: NAME (WHY), ...; "
 * into buf to lead the pass detail, where a cut line still shows it ("" when none). Such a check
 * still passes on what was tested, but says what was not, and the report's summary reads it as
 * held in part (report.c). A record that is not there fails the check as facts.def says
 * (REQUIRED). */
void judge_not_tested(verdict *v, const kb_judge_input *in, kb_check c, char *buf, size_t size) {
        json_object *canaries = kb_fact_arr_of(in->expect, FACT_EXPECT_CANARIES), *list = in_part_list(v);
        const char *id = kb_check_id(c);
        size_t used = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < arr_len(canaries); i++) {
                json_object *e = at(canaries, i);
                const char *check = kb_fact_str_of(e, FACT_CANARY_PLANT_CHECK);
                if (!check || strcmp(check, id) != 0 || kb_fact_bool_of(e, FACT_CANARY_PLANT_PLANTED))
                        continue;
                char text[DETAIL_MAX / 2];
                snprintf(text, sizeof text, "not tested: %s (%s)", kb_fact_str_or(e, FACT_CANARY_PLANT_NAME, "?"),
                         kb_fact_str_or(e, FACT_CANARY_PLANT_WHY, "not planted"));
                verdict_in_part(v, "%s", text);
                int n = snprintf(buf + used, size - used, "%s%s",
                                 used ? ", " : "not tested: ", text + strlen("not tested: "));
                if (n > 0 && (size_t) n < size - used)
                        used += (size_t) n;
        }
        if (used && used + 2 < size)
                memcpy(buf + used, "; ", 3);
        if (!list)
                v->oom = true;
}

/* ---- snapshots ---- */

json_object *judge_last_look(const kb_judge_input *in) {
        size_t n = arr_len(in->snapshots);
        return n ? at(in->snapshots, n - 1) : NULL;
}

json_object *judge_look_labelled(const kb_judge_input *in, const char *label) {
        for (size_t i = 0; i < arr_len(in->snapshots); i++) {
                const char *l = kb_fact_str_of(at(in->snapshots, i), FACT_LOOK_LABEL);
                if (l && strcmp(l, label) == 0)
                        return at(in->snapshots, i);
        }
        return NULL;
}

/* Problems every host-judged check shares: no look, a look that missed the kernel or could not
 * list processes; and, at the verdict's end (verdict_end), evidence that breaks its declaration in
 * facts.def (kb_judge_malformed): a fact a judge rests on that is missing or of the wrong kind is a
 * failed check, never a default. */
void judge_look_problems(verdict *v, const kb_judge_input *in) {
        char buf[512];
        v->in = in;
        if (arr_len(in->snapshots) == 0) {
                verdict_problem(v, "the host took no look at the sandbox");
                return;
        }
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *snap = at(in->snapshots, s);
                const char *label = kb_fact_str_or(snap, FACT_LOOK_LABEL, "?");
                if (judge_look_error(snap, WHAT_KERNEL_MISSING, buf, sizeof buf))
                        verdict_problem(v, "the host did not find the pinned kernel among the sandbox's processes (%s)",
                                        label);
                if (judge_look_error(snap, WHAT_PROCESS_LIST, buf, sizeof buf))
                        verdict_problem(v, "the host could not list processes (%s)", buf);
                if (judge_look_error(snap, WHAT_PROCESS_UNREAD, buf, sizeof buf))
                        verdict_problem(v,
                                        "the host could not read a process of the sandbox whose main thread has "
                                        "exited: each thread it was read through ended meanwhile (%s)",
                                        label);
                if (judge_look_error(snap, WHAT_PROCESS_CHURN, buf, sizeof buf))
                        verdict_problem(v,
                                        "sandbox processes kept ending before the host could read them, listing after "
                                        "listing (%s): what a chain of short-lived processes holds was not seen",
                                        label);
                if (judge_look_error(snap, WHAT_TOO_MANY_PROCESSES, buf, sizeof buf))
                        verdict_problem(v, "the host did not inspect every process of the sandbox (%s)", label);
                if (judge_look_error(snap, WHAT_TOO_MANY_MOUNT_TABLES, buf, sizeof buf))
                        verdict_problem(v, "the host did not inspect every mount namespace of the sandbox (%s)", label);
                if (arr_len(kb_fact_arr_of(snap, FACT_LOOK_PROCESSES)) == 0)
                        verdict_problem(v, "the host found no process in the sandbox (%s)", label);
        }
}

/* Each of what, held to type, its problems appended to all prefixed with where ("look 'ready'").
 * false if out of memory. */
static bool malformed_of(json_object *all, json_object *o, kb_fact_object type, const char *where) {
        if (!o)
                return true;
        json_object *problems = json_object_new_array();
        int n = problems ? kb_fact_validate(o, type, true, problems, 8) : -ENOMEM;
        for (size_t i = 0; n > 0 && i < arr_len(problems); i++) {
                char line[1200];
                snprintf(line, sizeof line, "%s: %s", where, json_object_get_string(at(problems, i)));
                if (json_object_array_add(all, json_object_new_string(line)) < 0)
                        n = -ENOMEM;
        }
        json_object_put(problems);
        return n >= 0;
}

json_object *kb_judge_malformed(const kb_judge_input *in) {
        json_object *all = json_object_new_array();
        if (!all || !in)
                return all;
        char where[128];
        bool ok = malformed_of(all, in->host, KB_FACT_OBJECT_HOST, "the host's own facts") &&
                  malformed_of(all, in->pre_exec, KB_FACT_OBJECT_LOOK, "the look before exec") &&
                  malformed_of(all, in->expect, KB_FACT_OBJECT_EXPECT, "what kbound arranged (expect)") &&
                  malformed_of(all, in->probe, KB_FACT_OBJECT_PROBE, "the probe cell's result");
        for (size_t s = 0; ok && s < arr_len(in->snapshots); s++) {
                json_object *snap = at(in->snapshots, s);
                snprintf(where, sizeof where, "look '%s'", kb_fact_str_or(snap, FACT_LOOK_LABEL, "?"));
                ok = malformed_of(all, snap, KB_FACT_OBJECT_LOOK, where);
        }
        if (!ok) {
                json_object_put(all);
                return NULL;
        }
        return all;
}

/* The start of a check judged from the host's looks: a new verdict (verdict_init) with the
 * looks' own problems in it (judge_look_problems). */
void verdict_begin(verdict *v, const kb_judge_input *in) {
        verdict_init(v);
        judge_look_problems(v, in);
}

/* ---- the cell ---- */

/* The first of errors (a cell's CELL_ERROR array) for a sub-probe whose name starts with one of
 * prefixes, as "the cell's NAME sub-probe failed: ERROR" in buf, or NULL. */
const char *judge_cell_error(json_object *errors, const char *const *prefixes, char *buf, size_t size) {
        for (size_t i = 0; i < arr_len(errors); i++) {
                const char *name = kb_fact_str_of(at(errors, i), FACT_CELL_ERROR_PROBE);
                for (const char *const *p = prefixes; name && *p; p++)
                        if (strncmp(name, *p, strlen(*p)) == 0) {
                                snprintf(buf, size, "the cell's %s sub-probe failed: %s", name,
                                         kb_fact_str_or(at(errors, i), FACT_CELL_ERROR_ERROR, "?"));
                                return buf;
                        }
        }
        return NULL;
}

void judge_no_probe(verdict *v, const kb_judge_input *in) {
        if (!in->probe && !in->cells_absent)
                verdict_problem(v, "the probe cell gave no result: %s", in->probe_error ? in->probe_error : "unknown");
}

/* ---- bwrap's command line ---- */

/* bwrap's grammar is the sandbox layer's (kb_bwrap_arity): one table reads every command line. */
int judge_bwrap_arity(const char *opt) {
        return kb_bwrap_arity(opt);
}
