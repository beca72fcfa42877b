/* judge_attack_surface.c: sandbox.attack_surface, kbound's seccomp filter in force and refusing. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "verdict/judge-internal.h"

/* ---- sandbox.attack_surface ---- */

/* The result of entry name in a program's or cell's "results", or NULL. */
static json_object *try_result(json_object *tries, const char *name) {
        json_object *results = kb_fact_arr_of(tries, FACT_SURFACE_TRIES_RESULTS);
        for (size_t i = 0; i < arr_len(results); i++) {
                const char *n = kb_fact_str_of(at(results, i), FACT_TRY_NAME);
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
                json_object *r = try_result(tries, name), *row = judge_map_at(table, name);
                /* An errno kbound could not name (null) matches no answer. */
                const char *expected = json_object_is_type(want, json_type_string) ? json_object_get_string(want) : "?";
                if (!r) {
                        if (required)
                                verdict_problem(v, "the %s did not try %s", side, name);
                        continue;
                }
                const char *got = kb_fact_str_of(r, FACT_TRY_ERRNO);
                bool tested = kb_fact_bool_of(r, FACT_TRY_TESTED);
                if (row)
                        json_object_object_add(row, side,
                                               json_object_new_string(!tested ? "untested"
                                                                      : got   ? got
                                                                              : "allowed"));
                if (!tested)
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
                json_object *pair = kb_fact_obj_of(r, FACT_TRY_SOCKETPAIR);
                if (pair && kb_fact_bool_of(pair, FACT_SOCKETPAIR_TESTED)) {
                        const char *pgot = kb_fact_str_of(pair, FACT_SOCKETPAIR_ERRNO);
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
        verdict_begin(&v, in);
        int64_t own = 0, want;
        if (!kb_fact_int_of(in->host, FACT_HOST_SECCOMP_FILTERS, &own))
                own = 0; /* a kernel that does not count filters: kbound has none it could know of */
        want = own + 1;
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *procs = kb_fact_arr_of(at(in->snapshots, s), FACT_LOOK_PROCESSES);
                for (size_t i = 0; i < arr_len(procs); i++) {
                        json_object *p = at(procs, i), *mode_read = kb_fact_get(p, FACT_PROCESS_SECCOMP),
                                    *count_read = kb_fact_get(p, FACT_PROCESS_SECCOMP_FILTERS);
                        int64_t pid = judge_pid_of(p), mode, count;
                        if (!kb_fact_int_of(p, FACT_PROCESS_SECCOMP, &mode) || mode != 2)
                                verdict_problem(&v, "pid %" PRId64 " (%s) runs without a seccomp filter (mode %s)", pid,
                                                judge_name_of(p),
                                                mode_read ? json_object_get_string(mode_read) : "unknown");
                        /* More filters than kbound's can only refuse more (the strictest action wins), so
                         * a kernel that adds its own is not a leak; fewer means one is missing. */
                        else if (!kb_fact_int_of(p, FACT_PROCESS_SECCOMP_FILTERS, &count) || count < want)
                                verdict_problem(
                                        &v,
                                        "pid %" PRId64
                                        " (%s) runs under %s seccomp filters, fewer than kbound's %" PRId64
                                        " (its own and the sandbox's): the filter kbound built is not in force",
                                        pid, judge_name_of(p),
                                        count_read ? json_object_get_string(count_read) : "an unknown number of", want);
                }
        }
        json_object *seccomp = kb_fact_obj_of(in->expect, FACT_EXPECT_SECCOMP),
                    *blocked = kb_fact_map_of(seccomp, FACT_SECCOMP_BLOCKED);
        json_object *surface = kb_fact_obj_of(in->expect, FACT_EXPECT_SURFACE);
        json_object *table = json_object_new_object();
        if (!blocked || json_object_object_length(blocked) == 0)
                verdict_problem(&v, "kbound has no list of what its filter refuses");
        else {
                json_object_object_foreach(blocked, bname, bwant) {
                        json_object *row = json_object_new_object();
                        json_object_object_add(row, "expected", json_object_get(bwant));
                        json_object_object_add(table, bname, row);
                }
        }
        const char *surface_error = kb_fact_str_of(in->expect, FACT_EXPECT_SURFACE_ERROR);
        if (in->cells_absent)
                ; /* the host's part only: the scenario reports the tries as untested */
        else if (!surface || surface_error)
                verdict_problem(&v, "the attack-surface cell gave no result: %s",
                                surface_error ? surface_error : "none");
        char buf[DETAIL_MAX];
        static const char *const subprobes[] = {"child", "in_process", NULL};
        if (judge_cell_error(kb_fact_arr_of(surface, FACT_SURFACE_ERRORS), subprobes, buf, sizeof buf))
                verdict_problem(&v, "%s", buf);
        size_t child = surface && !surface_error ? judge_tries(&v, kb_fact_obj_of(surface, FACT_SURFACE_CHILD),
                                                               "spawned program", blocked, table, true)
                                                 : 0;
        size_t inside = surface && !surface_error ? judge_tries(&v, kb_fact_obj_of(surface, FACT_SURFACE_IN_PROCESS),
                                                                "kernel process", blocked, table, false)
                                                  : 0;
        json_object *not_claimed = kb_fact_arr_of(seccomp, FACT_SECCOMP_NOT_CLAIMED);
        for (size_t i = 0; i < arr_len(not_claimed); i++) {
                json_object *row = json_object_new_object();
                json_object_object_add(row, "expected", json_object_new_string("not_claimed"));
                json_object_object_add(table, json_object_get_string(at(not_claimed, i)), row);
        }
        verdict_evidence(&v, "calls", table);
        verdict_evidence(&v, "filters_expected", json_object_new_int64(want));
        verdict_evidence_fact(&v, EVIDENCE_ATTACK_SURFACE_SOCKETS,
                              json_object_get(kb_fact_get(seccomp, FACT_SECCOMP_SOCKETS)));
        verdict_evidence_fact(&v, EVIDENCE_ATTACK_SURFACE_NOT_CLAIMED, json_object_get(not_claimed));
        char pass[512], left[256] = "";
        for (size_t i = 0; i < arr_len(not_claimed) && strlen(left) < sizeof left - 40; i++)
                snprintf(left + strlen(left), sizeof left - strlen(left), "%s%s", i ? ", " : "",
                         json_object_get_string(at(not_claimed, i)));
        snprintf(pass, sizeof pass,
                 "every sandbox process runs under kbound's seccomp filter (mode 2, %" PRId64 " filter%s); %zu refused "
                 "calls and socket families tried from a spawned program%s, each refused as the filter says%s%s",
                 want, want == 1 ? "" : "s", child, inside ? " and the kernel itself" : "",
                 *left ? "; NOT claimed: " : "", left);
        return verdict_end(&v, KB_CHECK_ATTACK_SURFACE, pass);
}
