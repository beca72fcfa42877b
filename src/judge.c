/* judge.c: verdicts as pure functions of host facts and probe results (judge.h). */
#include "judge-internal.h"
#include <inttypes.h>
#include <limits.h>
#include "kbound/inspect.h"
#include <stdio.h>
#include <string.h>
#include "jsonget.h"
#include "procfs.h"

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

/* The first error facts carry about what (NULL: any), as "what: error", or NULL. */
const char *judge_fact_error(json_object *o, const char *what, char *buf, size_t size) {
        json_object *errors = kb_json_get(o, "errors");
        for (size_t i = 0; i < arr_len(errors); i++) {
                json_object *e = at(errors, i);
                const char *w = kb_json_str(e, "what");
                if (!what || (w && strcmp(w, what) == 0)) {
                        snprintf(buf, size, "%s: %s", w ? w : "?", str_or(e, "error", "?"));
                        return buf;
                }
        }
        return NULL;
}

/* The last NSpid of a process: its pid inside its own namespace. */
int64_t judge_inner_pid(json_object *p) {
        json_object *nspid = kb_json_get(p, "nspid");
        size_t n = arr_len(nspid);
        json_object *v = n ? at(nspid, n - 1) : NULL;
        return v && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -1;
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

/* Adds a member to the evidence (value taken). */
void verdict_evidence(verdict *v, const char *key, json_object *value) {
        if (v->oom || !v->ev || json_object_object_add(v->ev, key, value) < 0) {
                json_object_put(value);
                v->oom = true;
        }
}

/* Ends the verdict: fail with the first problem (and how many more), else pass with pass_detail. */
json_object *verdict_end(verdict *v, const char *id, const char *pass_detail) {
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

/* ---- snapshots ---- */

json_object *judge_last_look(const kb_judge_input *in) {
        size_t n = arr_len(in->snapshots);
        return n ? at(in->snapshots, n - 1) : NULL;
}

json_object *judge_look_labelled(const kb_judge_input *in, const char *label) {
        for (size_t i = 0; i < arr_len(in->snapshots); i++) {
                const char *l = kb_json_str(at(in->snapshots, i), "label");
                if (l && strcmp(l, label) == 0)
                        return at(in->snapshots, i);
        }
        return NULL;
}

/* Problems every host-judged check shares: no look, a look that missed the kernel or could not
 * list processes. */
void judge_look_problems(verdict *v, const kb_judge_input *in) {
        char buf[512];
        if (arr_len(in->snapshots) == 0) {
                verdict_problem(v, "the host took no look at the sandbox");
                return;
        }
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *snap = at(in->snapshots, s);
                if (judge_fact_error(snap, "the pinned kernel among the sandbox's processes", buf, sizeof buf))
                        verdict_problem(v, "the host did not find the pinned kernel among the sandbox's processes (%s)",
                                        str_or(snap, "label", "?"));
                if (judge_fact_error(snap, "the process list", buf, sizeof buf))
                        verdict_problem(v, "the host could not list processes (%s)", buf);
                if (judge_fact_error(snap, "more sandbox processes than kbound inspects", buf, sizeof buf))
                        verdict_problem(v, "the host did not inspect every process of the sandbox (%s)",
                                        str_or(snap, "label", "?"));
                if (judge_fact_error(snap, "more mount namespaces than kbound inspects", buf, sizeof buf))
                        verdict_problem(v, "the host did not inspect every mount namespace of the sandbox (%s)",
                                        str_or(snap, "label", "?"));
                if (arr_len(kb_json_get(snap, "processes")) == 0)
                        verdict_problem(v, "the host found no process in the sandbox (%s)", str_or(snap, "label", "?"));
        }
}

/* ---- the cell ---- */

/* The first error the cell reported for a sub-probe whose name starts with one of prefixes. */
const char *judge_cell_error(json_object *probe, const char *const *prefixes, char *buf, size_t size) {
        json_object *errors = kb_json_get(probe, "errors");
        for (size_t i = 0; i < arr_len(errors); i++) {
                const char *name = kb_json_str(at(errors, i), "probe");
                for (const char *const *p = prefixes; name && *p; p++)
                        if (strncmp(name, *p, strlen(*p)) == 0) {
                                snprintf(buf, size, "the cell's %s sub-probe failed: %s", name,
                                         str_or(at(errors, i), "error", "?"));
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

/* bwrap's options and how many arguments each takes (bwrap 0.8's --help). A command line is read
 * with this grammar, never by searching for a word: "--setenv X --die-with-parent" sets a variable. */
int judge_bwrap_arity(const char *opt) {
        static const char *const zero[] = {"--help",
                                           "--version",
                                           "--unshare-all",
                                           "--share-net",
                                           "--unshare-user",
                                           "--unshare-user-try",
                                           "--unshare-ipc",
                                           "--unshare-pid",
                                           "--unshare-net",
                                           "--unshare-uts",
                                           "--unshare-cgroup",
                                           "--unshare-cgroup-try",
                                           "--disable-userns",
                                           "--assert-userns-disabled",
                                           "--clearenv",
                                           "--new-session",
                                           "--die-with-parent",
                                           "--as-pid-1",
                                           NULL};
        static const char *const one[] = {"--args",
                                          "--userns",
                                          "--userns2",
                                          "--pidns",
                                          "--uid",
                                          "--gid",
                                          "--hostname",
                                          "--chdir",
                                          "--unsetenv",
                                          "--lock-file",
                                          "--sync-fd",
                                          "--remount-ro",
                                          "--exec-label",
                                          "--file-label",
                                          "--proc",
                                          "--dev",
                                          "--tmpfs",
                                          "--mqueue",
                                          "--dir",
                                          "--seccomp",
                                          "--add-seccomp-fd",
                                          "--block-fd",
                                          "--userns-block-fd",
                                          "--info-fd",
                                          "--json-status-fd",
                                          "--cap-add",
                                          "--cap-drop",
                                          "--perms",
                                          "--size",
                                          NULL};
        static const char *const two[] = {
                "--setenv",    "--bind",         "--bind-try", "--dev-bind",   "--dev-bind-try",
                "--ro-bind",   "--ro-bind-try",  "--bind-fd",  "--ro-bind-fd", "--file",
                "--bind-data", "--ro-bind-data", "--symlink",  "--chmod",      NULL};
        const char *const *lists[] = {zero, one, two};
        for (int n = 0; n < 3; n++)
                for (const char *const *o = lists[n]; *o; o++)
                        if (strcmp(*o, opt) == 0)
                                return n;
        return -1;
}

/* ---- sandbox.attack_surface ---- */

/* The result of entry name in a program's or cell's "results", or NULL. */
static json_object *try_result(json_object *tries, const char *name) {
        json_object *results = kb_json_get(tries, "results");
        for (size_t i = 0; i < arr_len(results); i++) {
                const char *n = kb_json_str(at(results, i), "name");
                if (n && strcmp(n, name) == 0)
                        return at(results, i);
        }
        return NULL;
}

/* Judges one side's tries (the spawned program, or the cell in its own process) against what the
 * filter refuses; records each entry's answer in table[name][side]. Returns how many were tried. */
static size_t judge_tries(verdict *v, json_object *tries, const char *side, json_object *blocked, json_object *table,
                          bool required) {
        size_t tried = 0;
        if (!tries) {
                if (required)
                        verdict_problem(v, "the %s gave no result", side);
                return 0;
        }
        if (!blocked)
                return 0; /* already a problem: kbound has no list to judge against */
        json_object_object_foreach(blocked, name, want) {
                json_object *r = try_result(tries, name), *row = kb_json_get(table, name);
                const char *expected = json_object_get_string(want);
                if (!r) {
                        if (required)
                                verdict_problem(v, "the %s did not try %s", side, name);
                        continue;
                }
                json_object *err = kb_json_get(r, "errno");
                const char *got =
                        err && json_object_is_type(err, json_type_string) ? json_object_get_string(err) : NULL;
                if (row)
                        json_object_object_add(row, side,
                                               json_object_new_string(!kb_json_true(r, "tested") ? "untested"
                                                                      : got                      ? got
                                                                                                 : "allowed"));
                if (!kb_json_true(r, "tested"))
                        continue; /* the call does not exist here (another ABI's), said with why */
                tried++;
                if (!got)
                        verdict_problem(
                                v,
                                "the sandbox lets %s through (the %s's call succeeded; the filter refuses it with %s)",
                                name, side, expected);
                else if (strcmp(got, expected) != 0)
                        verdict_problem(
                                v,
                                "%s answers %s in the %s, not the filter's %s: the filter kbound built is not the one "
                                "in force",
                                name, got, side, expected);
                /* A family is refused for socketpair(2) as well as socket(2). */
                json_object *pair = kb_json_get(r, "socketpair");
                if (pair && kb_json_true(pair, "tested")) {
                        const char *pgot = kb_json_str(pair, "errno");
                        if (!pgot)
                                verdict_problem(
                                        v,
                                        "the sandbox lets socketpair(%s) through (the %s's call succeeded; the filter "
                                        "refuses it with %s)",
                                        name, side, expected);
                        else if (strcmp(pgot, expected) != 0)
                                verdict_problem(v, "socketpair(%s) answers %s in the %s, not the filter's %s", name,
                                                pgot, side, expected);
                }
        }
        return tried;
}

json_object *kb_judge_attack_surface(const kb_judge_input *in) {
        verdict v;
        verdict_init(&v);
        judge_look_problems(&v, in);
        int64_t own = 0, want;
        if (!kb_json_int(in->host, "seccomp_filters", &own))
                own = 0; /* a kernel that does not count filters: kbound has none it could know of */
        want = own + 1;
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *procs = kb_json_get(at(in->snapshots, s), "processes");
                for (size_t i = 0; i < arr_len(procs); i++) {
                        json_object *p = at(procs, i);
                        int64_t pid = int_or(p, "pid", -1), mode, count;
                        if (!kb_json_int(p, "seccomp", &mode) || mode != 2)
                                verdict_problem(&v, "pid %" PRId64 " (%s) runs without a seccomp filter (mode %s)", pid,
                                                str_or(p, "name", "?"),
                                                kb_json_get(p, "seccomp")
                                                        ? json_object_get_string(kb_json_get(p, "seccomp"))
                                                        : "unknown");
                        /* More filters than kbound's can only refuse more (the strictest action wins), so
                         * a kernel that adds its own is not a leak; fewer means one is missing. */
                        else if (!kb_json_int(p, "seccomp_filters", &count) || count < want)
                                verdict_problem(&v,
                                                "pid %" PRId64
                                                " (%s) runs under %s seccomp filters, fewer than kbound's %" PRId64
                                                " (its own and the sandbox's): the filter kbound built is not in force",
                                                pid, str_or(p, "name", "?"),
                                                kb_json_get(p, "seccomp_filters")
                                                        ? json_object_get_string(kb_json_get(p, "seccomp_filters"))
                                                        : "an unknown number of",
                                                want);
                }
        }
        json_object *seccomp = kb_json_get(in->expect, "seccomp"), *blocked = kb_json_get(seccomp, "blocked");
        json_object *surface = kb_json_get(in->expect, "surface");
        json_object *table = json_object_new_object();
        if (blocked && !json_object_is_type(blocked, json_type_object))
                blocked = NULL; /* json_object_object_foreach cannot walk a non-object */
        if (!blocked || json_object_object_length(blocked) == 0)
                verdict_problem(&v, "kbound has no list of what its filter refuses");
        else {
                json_object_object_foreach(blocked, bname, bwant) {
                        json_object *row = json_object_new_object();
                        json_object_object_add(row, "expected", json_object_get(bwant));
                        json_object_object_add(table, bname, row);
                }
        }
        const char *surface_error = kb_json_str(surface, "error");
        if (in->cells_absent)
                ; /* the host's part only: the scenario reports the tries as untested */
        else if (!surface || surface_error)
                verdict_problem(&v, "the attack-surface cell gave no result: %s",
                                surface_error ? surface_error : "none");
        char buf[DETAIL_MAX];
        static const char *const subprobes[] = {"child", "in_process", NULL};
        if (judge_cell_error(surface, subprobes, buf, sizeof buf))
                verdict_problem(&v, "%s", buf);
        size_t child = surface && !surface_error
                               ? judge_tries(&v, kb_json_get(surface, "child"), "spawned program", blocked, table, true)
                               : 0;
        size_t inside = surface && !surface_error ? judge_tries(&v, kb_json_get(surface, "in_process"),
                                                                "kernel process", blocked, table, false)
                                                  : 0;
        json_object *not_claimed = kb_json_get(seccomp, "not_claimed");
        for (size_t i = 0; i < arr_len(not_claimed); i++) {
                json_object *row = json_object_new_object();
                json_object_object_add(row, "expected", json_object_new_string("not_claimed"));
                json_object_object_add(table, json_object_get_string(at(not_claimed, i)), row);
        }
        verdict_evidence(&v, "calls", table);
        verdict_evidence(&v, "filters_expected", json_object_new_int64(want));
        verdict_evidence(&v, "sockets", json_object_get(kb_json_get(seccomp, "sockets")));
        verdict_evidence(&v, "not_claimed", json_object_get(not_claimed));
        char pass[512], left[256] = "";
        for (size_t i = 0; i < arr_len(not_claimed) && strlen(left) < sizeof left - 40; i++)
                snprintf(left + strlen(left), sizeof left - strlen(left), "%s%s", i ? ", " : "",
                         json_object_get_string(at(not_claimed, i)));
        snprintf(pass, sizeof pass,
                 "every sandbox process runs under kbound's seccomp filter (mode 2, %" PRId64 " filter%s); %zu refused "
                 "calls and socket families tried from a spawned program%s, each refused as the filter says%s%s",
                 want, want == 1 ? "" : "s", child, inside ? " and the kernel itself" : "",
                 *left ? "; NOT claimed: " : "", left);
        return verdict_end(&v, "sandbox.attack_surface", pass);
}
