/* judge_attack_surface.c: sandbox.attack_surface, kbound's seccomp filter in force and refusing, on
 * every system-call ABI the kernel accepts; as root, the filter in force read by the host and held
 * to the program kbound built, instruction for instruction. */
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "verdict/judge-internal.h"

/* ---- sandbox.attack_surface ---- */

/* The result of entry name in a program's or cell's results, or NULL. */
static json_object *try_result(json_object *results, const char *name) {
        for (size_t i = 0; i < arr_len(results); i++) {
                const char *n = kb_fact_str_of(at(results, i), FACT_TRY_NAME);
                if (n && strcmp(n, name) == 0)
                        return at(results, i);
        }
        return NULL;
}

/* Who tried, for the messages: "spawned program", "kernel process", with " on i386 (int 0x80)" for
 * another ABI than the native one. */
typedef struct side {
        const char *who;   /* the table's column and the messages' subject */
        const char *where; /* " on i386 (int 0x80)", or "" */
} side;

/* One answer against the filter's: a try that was killed by SIGSYS got an answer too (kbound's filter
 * never kills a refused call, so a filter that does is another one). what: "" for the call itself, or
 * the way in ("socketpair", "socketcall(SOCKETPAIR)": "AF_VSOCK through socketpair"). Returns
 * whether it was tried. */
static bool judge_answer(verdict *v, const char *name, const char *what, const side *s, const char *expected,
                         const char *got, bool tested, int64_t sig) {
        char call[160];
        if (*what)
                snprintf(call, sizeof call, "%s through %s", name, what);
        else
                snprintf(call, sizeof call, "%s", name);
        if (!tested) {
                if (sig == SIGSYS)
                        verdict_problem(v,
                                        "%s%s kills the %s's process (SIGSYS), where kbound's filter answers %s: the "
                                        "filter kbound built is not the one in force",
                                        call, s->where, s->who, expected);
                return false; /* else: the call does not exist there (another ABI's), said with why */
        }
        if (!got)
                verdict_problem(
                        v, "the sandbox lets %s through%s (the %s's call succeeded; the filter refuses it with %s)",
                        call, s->where, s->who, expected);
        else if (strcmp(got, expected) != 0)
                verdict_problem(
                        v,
                        "%s answers %s in the %s%s, not the filter's %s: the filter kbound built is not the one "
                        "in force",
                        call, got, s->who, s->where, expected);
        return true;
}

/* A family's other ways in (socketpair(2); socketcall(2)'s two on i386): each refused as socket(2). */
static void judge_routes(verdict *v, json_object *r, const char *name, const side *s, const char *expected) {
        const struct { /* automatic: facts are not constant expressions (clang) */
                kb_fact_obj fact;
                const char *what;
        } routes[] = {{FACT_TRY_SOCKETPAIR, "socketpair"},
                      {FACT_TRY_SOCKETCALL, "socketcall(SOCKET)"},
                      {FACT_TRY_SOCKETCALL_PAIR, "socketcall(SOCKETPAIR)"}};
        for (size_t i = 0; i < KB_ELEMENTSOF(routes); i++) {
                json_object *o = kb_fact_obj_of(r, routes[i].fact);
                if (o)
                        (void) judge_answer(v, name, routes[i].what, s, expected, kb_fact_str_of(o, FACT_ROUTE_ERRNO),
                                            kb_fact_bool_of(o, FACT_ROUTE_TESTED),
                                            kb_fact_int_or(o, FACT_ROUTE_SIGNAL, 0));
        }
}

/* Judges one side's tries (tries: the spawned program's result, or its tries through one ABI, or
 * the cell's in its own process; results: their list) against what the filter refuses; records each
 * entry's answer in table[name][column]. Returns how many were tried. */
static size_t judge_tries(verdict *v, json_object *tries, json_object *results, const side *s, const char *column,
                          json_object *blocked, json_object *table, bool required) {
        size_t tried = 0;
        if (!tries) {
                if (required)
                        verdict_problem(v, "the %s gave no result%s", s->who, s->where);
                return 0;
        }
        if (!blocked)
                return 0; /* already a problem: kbound has no list to judge against */
        json_object_object_foreach(blocked, name, want) {
                json_object *r = try_result(results, name), *row = judge_map_at(table, name);
                /* An errno kbound could not name (null) matches no answer. */
                const char *expected = json_object_is_type(want, json_type_string) ? json_object_get_string(want) : "?";
                if (!r) {
                        if (required)
                                verdict_problem(v, "the %s did not try %s%s", s->who, name, s->where);
                        continue;
                }
                const char *got = kb_fact_str_of(r, FACT_TRY_ERRNO);
                bool tested = kb_fact_bool_of(r, FACT_TRY_TESTED);
                if (row)
                        json_object_object_add(row, column,
                                               json_object_new_string(!tested ? "untested"
                                                                      : got   ? got
                                                                              : "allowed"));
                if (!judge_answer(v, name, "", s, expected, got, tested, kb_fact_int_or(r, FACT_TRY_SIGNAL, 0)))
                        continue;
                tried++;
                judge_routes(v, r, name, s, expected);
        }
        return tried;
}

/* The spawned program's tries through abi_name, one of the ABIs it tried besides the native one. */
static json_object *compat_of(json_object *child, const char *abi_name) {
        json_object *compat = kb_fact_arr_of(child, FACT_SURFACE_TRIES_COMPAT);
        for (size_t i = 0; i < arr_len(compat); i++) {
                const char *n = kb_fact_str_of(at(compat, i), FACT_SURFACE_ABI_ABI);
                if (n && strcmp(n, abi_name) == 0)
                        return at(compat, i);
        }
        return NULL;
}

/* Appends to out (size n) ", name: what" for the pass's list of ABIs. */
static void abi_note(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void abi_note(char *out, size_t n, const char *fmt, ...) {
        size_t len = strlen(out);
        if (len + 2 >= n)
                return;
        if (len)
                snprintf(out + len, n - len, "; ");
        len = strlen(out);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(out + len, n - len, fmt, ap);
        va_end(ap);
}

/* Every ABI the host found the kernel to accept must have been tried from inside, each refused call
 * answering the filter's errno there too; one the kernel does not run cannot carry a call past the
 * filter, which the host's own getpid through it showed. Notes each ABI in notes. */
static void judge_abis(verdict *v, const kb_judge_input *in, json_object *child, json_object *blocked,
                       json_object *table, char *notes, size_t n) {
        json_object *abis = kb_fact_map_of(in->host, FACT_HOST_ABIS);
        if (!abis || json_object_object_length(abis) == 0) {
                verdict_problem(v, "the host did not find which system-call ABIs the kernel accepts");
                return;
        }
        json_object_object_foreach(abis, name, abi) {
                const char *how = kb_fact_str_of(abi, FACT_HOST_ABI_HOW),
                           *answer = kb_fact_str_of(abi, FACT_HOST_ABI_ANSWER);
                json_object *accepted = kb_fact_get(abi, FACT_HOST_ABI_ACCEPTED);
                if (kb_fact_bool_of(abi, FACT_HOST_ABI_NATIVE)) {
                        abi_note(notes, n, "%s", name);
                        continue;
                }
                if (!accepted) {
                        abi_note(notes, n, "%s not tried (%s)", name, answer ? answer : "?");
                        continue;
                }
                if (!json_object_get_boolean(accepted)) {
                        abi_note(notes, n, "%s not accepted by this kernel (%s)", name, answer ? answer : "?");
                        continue;
                }
                char where[96], column[128];
                snprintf(where, sizeof where, " on %s (%s)", name, how ? how : "?");
                snprintf(column, sizeof column, "spawned program on %s", name);
                const side s = {.who = "spawned program", .where = where};
                json_object *tries = child ? compat_of(child, name) : NULL;
                if (child && !tries) {
                        verdict_problem(v, "the spawned program made no tries%s, which this kernel accepts (%s)", where,
                                        answer ? answer : "?");
                        continue;
                }
                if (tries && !kb_fact_bool_of(tries, FACT_SURFACE_ABI_ACCEPTED)) {
                        const char *why = kb_fact_str_of(tries, FACT_SURFACE_ABI_WHY);
                        verdict_problem(v,
                                        "the spawned program found %s closed (%s), where the host's getpid through it "
                                        "answered (%s) and kbound's filter allows getpid: the filter kbound built is "
                                        "not the one in force",
                                        name, why ? why : "no reason given", answer ? answer : "?");
                        continue;
                }
                if (!tries)
                        continue; /* no spawned program's result at all: already a problem */
                size_t tried = judge_tries(v, tries, kb_fact_arr_of(tries, FACT_SURFACE_ABI_RESULTS), &s, column,
                                           blocked, table, true);
                abi_note(notes, n, "%s (%s): %zu tried", name, how ? how : "?", tried);
        }
}

/* One FILTER_DIFF as words: "on i386, keyctl (nr 288) is allow, where kbound's program answers errno
 * EPERM". */
static void diff_words(json_object *d, char *out, size_t n) {
        const char *abi = kb_fact_str_of(d, FACT_FILTER_DIFF_ABI), *call = kb_fact_str_of(d, FACT_FILTER_DIFF_CALL),
                   *built = kb_fact_str_of(d, FACT_FILTER_DIFF_BUILT),
                   *in_force = kb_fact_str_of(d, FACT_FILTER_DIFF_IN_FORCE);
        snprintf(out, n, "on %s, %s (nr %" PRId64 ") answers %s, where kbound's program answers %s", abi ? abi : "?",
                 call ? call : "?", kb_fact_int_or(d, FACT_FILTER_DIFF_NR, -1), in_force ? in_force : "?",
                 built ? built : "?");
}

/* One process's filters as the host read them (as root): kbound's program must be one of them,
 * instruction for instruction (more filters only refuse more). Returns 1 when it was, 0 for a zombie
 * that was not read (it makes no calls), -1 after a problem. */
static int judge_filter_read(verdict *v, json_object *p) {
        int64_t pid = judge_pid_of(p);
        json_object *f = kb_fact_obj_of(p, FACT_PROCESS_FILTER);
        if (!f && judge_zombie(p))
                return 0; /* a zombie whose threads are all gone makes no calls */
        if (!f) {
                verdict_problem(v, "pid %" PRId64 " (%s): the host did not read the seccomp filters in force", pid,
                                judge_name_of(p));
                return -1;
        }
        const char *error = kb_fact_str_of(f, FACT_FILTER_ERROR);
        if (error) {
                verdict_problem(v, "pid %" PRId64 " (%s): the host could not read the seccomp filters in force: %s",
                                pid, judge_name_of(p), error);
                return -1;
        }
        if (kb_fact_get(f, FACT_FILTER_KBOUND))
                return 1;
        json_object *lengths = kb_fact_arr_of(f, FACT_FILTER_LENGTHS),
                    *diffs = kb_fact_arr_of(f, FACT_FILTER_DIFFERENCES);
        char first[96] = "", what[DETAIL_MAX / 2] = "";
        int64_t at_insn;
        if (kb_fact_int_of(f, FACT_FILTER_FIRST_DIFFERENCE, &at_insn))
                snprintf(first, sizeof first, "; the first differs from it at instruction %" PRId64, at_insn);
        for (size_t i = 0; i < arr_len(diffs) && i < 3; i++) {
                char one[256];
                diff_words(at(diffs, i), one, sizeof one);
                abi_note(what, sizeof what, "%s", one);
        }
        int64_t more =
                kb_fact_int_or(f, FACT_FILTER_DIFFERENCES_MORE, 0) + (arr_len(diffs) > 3 ? arr_len(diffs) - 3 : 0);
        if (more > 0)
                abi_note(what, sizeof what, "%" PRId64 " more", more);
        verdict_problem(v,
                        "pid %" PRId64 " (%s) runs under %zu seccomp filter%s, none of them the program kbound built "
                        "(%" PRId64 " instructions)%s: %s",
                        pid, judge_name_of(p), arr_len(lengths), arr_len(lengths) == 1 ? "" : "s",
                        kb_fact_int_or(f, FACT_FILTER_BUILT, -1), first,
                        *what ? what
                              : "no call of kbound's table answers otherwise on any ABI, yet the program differs");
        return -1;
}

/* The seccomp mode and filter count of who (a process's main thread, or one of its threads: the
 * kernel keeps filters per thread, and seccomp(2) without TSYNC filters the calling thread alone),
 * mode_read and count_read as the status said them (NULL: not read). */
static void mode_problem(verdict *v, const char *who, json_object *mode_read, json_object *count_read, int64_t want) {
        int64_t mode = mode_read && json_object_is_type(mode_read, json_type_int) ? json_object_get_int64(mode_read)
                                                                                  : -1,
                count = count_read && json_object_is_type(count_read, json_type_int) ? json_object_get_int64(count_read)
                                                                                     : -1;
        if (mode != 2)
                verdict_problem(v, "%s runs without a seccomp filter (mode %s)", who,
                                mode_read ? json_object_get_string(mode_read) : "unknown");
        /* More filters than kbound's can only refuse more (the strictest action wins), so a kernel
         * that adds its own is not a leak; fewer means one is missing. */
        else if (count < want)
                verdict_problem(v,
                                "%s runs under %s seccomp filters, fewer than kbound's %" PRId64
                                " (its own and the sandbox's): the filter kbound built is not in force",
                                who, count_read ? json_object_get_string(count_read) : "an unknown number of", want);
}

/* Each thread of p but its main one (its TASKs; one that has exited makes no calls), and threads
 * not listed. */
static void thread_mode_problems(verdict *v, json_object *p, int64_t want) {
        char who[160];
        json_object *tasks = kb_fact_arr_of(p, FACT_PROCESS_TASKS);
        if (!tasks && !judge_zombie(p))
                verdict_problem(v, "the host could not list the threads of %s: the seccomp state of each is not known",
                                judge_task_words(NULL, p, who, sizeof who));
        for (size_t i = 0; i < arr_len(tasks); i++) {
                json_object *task = at(tasks, i);
                if (!judge_task_exited(task))
                        mode_problem(v, judge_task_words(task, p, who, sizeof who),
                                     kb_fact_get(task, FACT_TASK_SECCOMP), kb_fact_get(task, FACT_TASK_SECCOMP_FILTERS),
                                     want);
        }
}

#define NAMED_MAX 64 /* processes whose filters a failure names once, whatever the number of looks */

/* Every process's seccomp mode and filter count, and, where the host can read them, the filters
 * themselves. Returns how many processes' filters were read and found to hold kbound's program. */
static size_t judge_processes(verdict *v, const kb_judge_input *in, int64_t want, bool read) {
        size_t proven = 0, n_named = 0;
        int64_t named[NAMED_MAX];
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *procs = kb_fact_arr_of(at(in->snapshots, s), FACT_LOOK_PROCESSES);
                for (size_t i = 0; i < arr_len(procs); i++) {
                        json_object *p = at(procs, i);
                        int64_t pid = judge_pid_of(p);
                        char who[160];
                        mode_problem(v, judge_task_words(NULL, p, who, sizeof who),
                                     kb_fact_get(p, FACT_PROCESS_SECCOMP), kb_fact_get(p, FACT_PROCESS_SECCOMP_FILTERS),
                                     want);
                        thread_mode_problems(v, p, want);
                        bool again = false;
                        for (size_t k = 0; k < n_named; k++)
                                again |= named[k] == pid;
                        if (!read || again)
                                continue;
                        int read_one = judge_filter_read(v, p);
                        if (read_one > 0)
                                proven++;
                        else if (read_one < 0 && n_named < NAMED_MAX)
                                named[n_named++] = pid; /* one look's account of it is enough */
                }
        }
        return proven;
}

/* The table of every blocked call's expected answer, and the not-claimed ones. */
static json_object *calls_table(verdict *v, json_object *blocked, json_object *not_claimed) {
        json_object *table = json_object_new_object();
        if (!blocked || json_object_object_length(blocked) == 0)
                verdict_problem(v, "kbound has no list of what its filter refuses");
        else {
                json_object_object_foreach(blocked, bname, bwant) {
                        json_object *row = json_object_new_object();
                        json_object_object_add(row, "expected", json_object_get(bwant));
                        json_object_object_add(table, bname, row);
                }
        }
        for (size_t i = 0; i < arr_len(not_claimed); i++) {
                json_object *row = json_object_new_object();
                json_object_object_add(row, "expected", json_object_new_string("not_claimed"));
                json_object_object_add(table, json_object_get_string(at(not_claimed, i)), row);
        }
        return table;
}

json_object *kb_judge_attack_surface(const kb_judge_input *in) {
        verdict v;
        verdict_begin(&v, in);
        int64_t own = 0, want;
        if (!kb_fact_int_of(in->host, FACT_HOST_SECCOMP_FILTERS, &own))
                own = 0; /* a kernel that does not count filters: kbound has none it could know of */
        want = own + 1;
        bool read = kb_fact_bool_of(in->host, FACT_HOST_FILTER_READ);
        size_t proven = judge_processes(&v, in, want, read);

        json_object *seccomp = kb_fact_obj_of(in->expect, FACT_EXPECT_SECCOMP),
                    *blocked = kb_fact_map_of(seccomp, FACT_SECCOMP_BLOCKED);
        json_object *not_claimed = kb_fact_arr_of(seccomp, FACT_SECCOMP_NOT_CLAIMED);
        json_object *surface = kb_fact_obj_of(in->expect, FACT_EXPECT_SURFACE);
        json_object *table = calls_table(&v, blocked, not_claimed);
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
        bool have = surface && !surface_error;
        json_object *child = have ? kb_fact_obj_of(surface, FACT_SURFACE_CHILD) : NULL,
                    *in_process = have ? kb_fact_obj_of(surface, FACT_SURFACE_IN_PROCESS) : NULL;
        static const side spawned = {.who = "spawned program", .where = ""},
                          kernel = {.who = "kernel process", .where = ""};
        size_t tried_child = have ? judge_tries(&v, child, kb_fact_arr_of(child, FACT_SURFACE_TRIES_RESULTS), &spawned,
                                                spawned.who, blocked, table, true)
                                  : 0;
        size_t tried_inside = have ? judge_tries(&v, in_process, kb_fact_arr_of(in_process, FACT_SURFACE_TRIES_RESULTS),
                                                 &kernel, kernel.who, blocked, table, false)
                                   : 0;
        char abis[512] = "";
        judge_abis(&v, in, have ? child : NULL, blocked, table, abis, sizeof abis);

        verdict_evidence(&v, "calls", table);
        verdict_evidence(&v, "filters_expected", json_object_new_int64(want));
        verdict_evidence_fact(&v, EVIDENCE_ATTACK_SURFACE_SOCKETS,
                              json_object_get(kb_fact_get(seccomp, FACT_SECCOMP_SOCKETS)));
        verdict_evidence_fact(&v, EVIDENCE_ATTACK_SURFACE_NOT_CLAIMED, json_object_get(not_claimed));
        verdict_evidence_fact(&v, EVIDENCE_ATTACK_SURFACE_FILTER_READ,
                              json_object_get(kb_fact_get(in->host, FACT_HOST_FILTER_READ)));
        char pass[DETAIL_MAX], left[256] = "", proof[320];
        for (size_t i = 0; i < arr_len(not_claimed) && strlen(left) < sizeof left - 40; i++)
                snprintf(left + strlen(left), sizeof left - strlen(left), "%s%s", i ? ", " : "",
                         json_object_get_string(at(not_claimed, i)));
        /* A call the filter leaves allowed (--allow-syscall) is a part of the claim not made: held in
         * part, as any other check's part not proven. */
        if (*left)
                verdict_in_part(&v, "not claimed: %s (left allowed by --allow-syscall)", left);
        if (read)
                snprintf(proof, sizeof proof,
                         "the host read the filters in force of every sandbox process at every look (%zu reads): each "
                         "holds kbound's program, instruction for instruction",
                         proven);
        else {
                const char *why = kb_fact_str_of(in->host, FACT_HOST_FILTER_READ_WHY);
                snprintf(proof, sizeof proof,
                         "the host could not read the filters in force (%s): the proof is the tries on every ABI the "
                         "kernel accepts",
                         why ? why : "no reason recorded");
        }
        /* What is not claimed first: a table line cut to the terminal still shows it (and a detail
         * cut to pass's size keeps it too; the evidence holds every part whole). */
        if (snprintf(pass, sizeof pass,
                     "%s%s%severy sandbox process runs under kbound's seccomp filter (mode 2, %" PRId64
                     " filter%s); %zu "
                     "refused calls and socket families tried from a spawned program%s, each refused as the filter "
                     "says; "
                     "ABIs: %s; %s",
                     *left ? "NOT claimed: " : "", left, *left ? "; " : "", want, want == 1 ? "" : "s", tried_child,
                     tried_inside ? " and the kernel itself" : "", abis, proof) >= (int) sizeof pass)
                memcpy(pass + sizeof pass - 4, "...", 4);
        return verdict_end(&v, KB_CHECK_ATTACK_SURFACE, pass);
}
