/* judge_backend.c: sandbox.backend, the namespaces the sandbox runs in and the bwrap that made them. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "verdict/judge-internal.h"

/* ---- sandbox.backend ---- */

/* The pid namespace's owner chain of a process of procs in the sandbox's pid namespace (the one
 * kbound pinned): [the user namespace bwrap made for the sandbox, its parent, ...], or NULL. */
static json_object *sandbox_owner_chain(json_object *procs, int64_t pidns) {
        for (size_t i = 0; i < arr_len(procs); i++) {
                json_object *p = at(procs, i), *chain = kb_json_get(kb_json_get(p, "ns_owners"), "pid");
                if (int_or(kb_json_get(p, "ns"), "pid", -1) == pidns && arr_len(chain) > 0)
                        return chain;
        }
        return NULL;
}

/* Whose namespaces the sandbox's are, in one look: every namespace of every process is owned by
 * the user namespace bwrap made with the sandbox's pid namespace (S) or one made inside it, S is
 * a child of kbound's own user namespace, and every process's user namespace is S or inside it. A
 * pre-existing namespace (one a helper made and bwrap joined) is owned by another one. Returns S,
 * or -1. */
static int64_t ownership_problems(verdict *v, const kb_judge_input *in, json_object *look, json_object *host_ns,
                                  bool allow_network) {
        const char *label = str_or(look, "label", "?");
        json_object *procs = kb_json_get(look, "processes");
        int64_t kbound_user = int_or(host_ns, "user", -1), kbound_net = int_or(host_ns, "net", -1);
        json_object *chain = sandbox_owner_chain(procs, int_or(in->expect, "pidns", -2));
        char buf[512];
        if (!chain) {
                verdict_problem(
                        v,
                        "the host could not tell which user namespace owns the sandbox (%s): no process shows who owns "
                        "the pid namespace kbound pinned",
                        label);
                return -1;
        }
        int64_t owner = json_object_get_int64(at(chain, 0));
        int64_t parent = arr_len(chain) > 1 ? json_object_get_int64(at(chain, 1)) : -1;
        if (owner == kbound_user)
                verdict_problem(v, "the sandbox's namespaces are owned by kbound's own user namespace (%s)", label);
        else if (parent != kbound_user) {
                char p[32] = "none the host can see";
                if (parent >= 0)
                        snprintf(p, sizeof p, "%" PRId64, parent);
                verdict_problem(v,
                                "the sandbox's user namespace (%" PRId64 ") is not a child of kbound's (%" PRId64
                                "): its parent is %s (%s)",
                                owner, kbound_user, p, label);
        }
        for (size_t i = 0; i < arr_len(procs); i++) {
                json_object *p = at(procs, i), *ns = kb_json_get(p, "ns"), *owners = kb_json_get(p, "ns_owners");
                int64_t pid = int_or(p, "pid", -1);
                const char *pname = str_or(p, "name", "?");
                json_object_object_foreach(host_ns, name, unused) {
                        (void) unused;
                        char what[64];
                        snprintf(what, sizeof what, "ns_owners/%s", name);
                        json_object *above = kb_json_get(owners, name);
                        int64_t mine = int_or(ns, name, -1);
                        if (strcmp(name, "net") == 0 && allow_network && mine == kbound_net)
                                continue; /* the override shares kbound's own: judged above */
                        if (!above || judge_fact_error(p, what, buf, sizeof buf)) {
                                verdict_problem(
                                        v,
                                        "the host could not read who owns the %s namespace of pid %" PRId64 " (%s)%s%s",
                                        name, pid, pname, judge_fact_error(p, what, buf, sizeof buf) ? ": " : "",
                                        judge_fact_error(p, what, buf, sizeof buf) ? buf : "");
                                continue;
                        }
                        bool inside = int_in(above, owner) || (strcmp(name, "user") == 0 && mine == owner);
                        if (inside)
                                continue;
                        if (strcmp(name, "user") == 0)
                                verdict_problem(v,
                                                "pid %" PRId64 " (%s) is in user namespace %" PRId64
                                                ", not the sandbox's (%" PRId64 ") nor one inside it",
                                                pid, pname, mine, owner);
                        else
                                verdict_problem(v,
                                                "the %s namespace of pid %" PRId64
                                                " (%s) is owned by user namespace %" PRId64
                                                ", not by the sandbox's (%" PRId64
                                                ") nor one inside it: a namespace made elsewhere",
                                                name, pid, pname,
                                                arr_len(above) ? json_object_get_int64(at(above, 0)) : -1, owner);
                }
        }
        return owner;
}

/* Processes outside the sandbox in one of its namespaces or holding one open, and bind mounts of
 * them outside, in one look (the look before exec reads no mount tables). */
static void holder_problems(verdict *v, json_object *look, bool pre_exec) {
        const char *label = str_or(look, "label", "?");
        char buf[512];
        json_object *outside = kb_json_get(look, "ns_outside"), *holders = kb_json_get(look, "ns_holders");
        if (!outside || judge_fact_error(look, "kbound's own namespaces", buf, sizeof buf) ||
            judge_fact_error(look, "the sandbox's namespaces (too many)", buf, sizeof buf)) {
                verdict_problem(
                        v, "the host did not check which processes outside the sandbox are in its namespaces (%s)%s%s",
                        label, outside ? ": " : "", outside ? buf : "");
                return;
        }
        for (size_t i = 0; i < arr_len(holders); i++) {
                json_object *h = at(holders, i);
                char thread[48] = "", name[64];
                if (kb_json_get(h, "ppid"))
                        snprintf(name, sizeof name, "%s, child of pid %" PRId64, str_or(h, "name", "?"),
                                 int_or(h, "ppid", -1));
                else
                        snprintf(name, sizeof name, "%s", str_or(h, "name", "?"));
                if (kb_json_get(h, "thread"))
                        snprintf(thread, sizeof thread, "thread %" PRId64 " of ", int_or(h, "thread", -1));
                if (kb_json_get(h, "fd"))
                        verdict_problem(
                                v,
                                "%spid %" PRId64 " (%s), outside the sandbox, holds the sandbox's %s namespace open "
                                "(fd %" PRId64 "), so it can join it (%s)",
                                thread, int_or(h, "pid", -1), name, str_or(h, "ns", "?"), int_or(h, "fd", -1), label);
                else
                        verdict_problem(
                                v, "%spid %" PRId64 " (%s), outside the sandbox, is in the sandbox's %s namespace (%s)",
                                thread, int_or(h, "pid", -1), name, str_or(h, "ns", "?"), label);
        }
        if (!kb_json_get(outside, "fd_tables_read"))
                verdict_problem(v, "the host did not read the descriptors of the processes outside the sandbox (%s)",
                                label);
        else if (int_or(outside, "fd_tables_unreadable", 0) > 0)
                verdict_problem(v,
                                "the host read the namespaces of %" PRId64
                                " processes outside the sandbox but not all their "
                                "descriptors, so it cannot say none holds the sandbox's namespaces (%s)",
                                int_or(outside, "fd_tables_unreadable", 0), label);
        if (int_or(outside, "holders", 0) > (int64_t) arr_len(holders))
                verdict_problem(
                        v, "%" PRId64 " processes outside the sandbox are in its namespaces or hold them open (%s)",
                        int_or(outside, "holders", 0), label);
        json_object *mounts = kb_json_get(look, "ns_mounts");
        if (!mounts && !pre_exec)
                verdict_problem(
                        v, "the host did not check the mount namespaces outside the sandbox for its namespaces (%s)",
                        label);
        for (size_t i = 0; i < arr_len(mounts); i++) {
                json_object *m = at(mounts, i);
                verdict_problem(
                        v,
                        "the sandbox's %s namespace is bind-mounted at %s in the mount namespace of pid %" PRId64
                        ", outside the sandbox, so whoever can open it can join it (%s)",
                        str_or(m, "ns", "?"), str_or(m, "mountpoint", "?"), int_or(m, "pid", -1), label);
        }
}

/* An argument of a command line as the judge may show it: one of kbound's own (the plan holds it)
 * or a bwrap option's name. Anything else a stand-in added could be a secret. */
static const char *shown_arg(json_object *planned, const char *a) {
        if (a && (str_in(planned, a) || judge_bwrap_arity(a) >= 0))
                return a;
        return "(an argument kbound did not plan, not shown)";
}

/* The name part of an env digest ("NAME=sha256:..."), into buf. */
static const char *env_name(const char *digest, char *buf, size_t size) {
        const char *eq = digest ? strrchr(digest, '=') : NULL;
        snprintf(buf, size, "%.*s", eq ? (int) (eq - digest) : 0, digest ? digest : "");
        return buf;
}

static bool env_has_name(json_object *digests, const char *name) {
        char buf[300];
        for (size_t i = 0; i < arr_len(digests); i++)
                if (strcmp(env_name(json_object_get_string(at(digests, i)), buf, sizeof buf), name) == 0)
                        return true;
        return false;
}

/* "the host could not read the running bwrap's WHAT", and what the last look's error about fact
 * says when it kept one. */
static void launcher_unread(verdict *v, const kb_judge_input *in, const char *what, const char *fact) {
        char buf[512];
        const char *error = judge_fact_error(judge_last_look(in), fact, buf, sizeof buf);
        verdict_problem(v, "the host could not read the running bwrap's %s%s%s", what, error ? ": " : "",
                        error ? error : "");
}

/* The running bwrap is the one kbound built: the program kbound executed, its command line and
 * its environment exactly as planned (read from the host: /proc/<launcher>/{exe,cmdline,environ}). */
static void launch_problems(verdict *v, const kb_judge_input *in) {
        json_object *plan = kb_json_get(in->expect, "launch"), *launcher = kb_json_get(judge_last_look(in), "launcher");
        char buf[512];
        if (!plan) {
                verdict_problem(v, "kbound kept no record of the bwrap it launched");
                return;
        }
        if (!launcher) {
                verdict_problem(v, "the host did not find the process that runs bwrap");
                return;
        }
        json_object *exe = kb_json_get(launcher, "exe"), *program = kb_json_get(plan, "program");
        if (!exe)
                verdict_problem(v, "the host could not read which program the running bwrap is (%s)",
                                str_or(launcher, "exe_error", "?"));
        else if (!kb_json_str(exe, "dev") || !kb_json_str(program, "dev") ||
                 strcmp(kb_json_str(exe, "dev"), kb_json_str(program, "dev")) != 0 ||
                 int_or(exe, "ino", -1) != int_or(program, "ino", -2))
                verdict_problem(v, "the running bwrap (%s) is not the program kbound started (%s)",
                                str_or(exe, "path", "?"), str_or(program, "path", "?"));
        json_object *planned = kb_json_get(plan, "argv"), *running = kb_json_get(launcher, "argv");
        size_t np = arr_len(planned), nr = arr_len(running);
        if (nr == 0)
                launcher_unread(v, in, "command line", "the launcher's command line");
        else if (judge_fact_error(judge_last_look(in), "the launcher's command line (too many arguments)", buf,
                                  sizeof buf))
                verdict_problem(v, "the host could not read all of the running bwrap's command line (%s)", buf);
        else
                for (size_t i = 0; i < (np > nr ? np : nr); i++) {
                        const char *a = i < nr ? json_object_get_string(at(running, i)) : NULL;
                        const char *b = i < np ? json_object_get_string(at(planned, i)) : NULL;
                        if (a && b && strcmp(a, b) == 0)
                                continue;
                        /* argv[0] may be shown when it names the program the host saw running */
                        const char *shown =
                                i == 0 && a && kb_json_str(exe, "path") && strcmp(a, kb_json_str(exe, "path")) == 0
                                        ? a
                                        : shown_arg(planned, a);
                        if (a && b)
                                verdict_problem(
                                        v,
                                        "the running bwrap's command line is not the one kbound built: argument %zu is "
                                        "'%s' where "
                                        "kbound's is '%s'",
                                        i, shown, b);
                        else if (a)
                                verdict_problem(
                                        v,
                                        "the running bwrap's command line is not the one kbound built: it goes on past "
                                        "kbound's "
                                        "last argument with '%s'",
                                        shown_arg(planned, a));
                        else
                                verdict_problem(
                                        v,
                                        "the running bwrap's command line is not the one kbound built: it ends before "
                                        "kbound's "
                                        "argument %zu ('%s')",
                                        i, b);
                        break;
                }
        json_object *env_plan = kb_json_get(plan, "env"), *env_run = kb_json_get(launcher, "environ");
        size_t ep = arr_len(env_plan), er = arr_len(env_run);
        char name[300], other[300];
        if (!env_plan)
                verdict_problem(v, "kbound kept no record of the environment it started bwrap with");
        else if (!env_run)
                launcher_unread(v, in, "environment", "the launcher's environment");
        else
                for (size_t i = 0; i < (ep > er ? ep : er); i++) {
                        const char *a = i < er ? json_object_get_string(at(env_run, i)) : NULL;
                        const char *b = i < ep ? json_object_get_string(at(env_plan, i)) : NULL;
                        if (a && b && strcmp(a, b) == 0)
                                continue;
                        const char *ra = a ? env_name(a, name, sizeof name) : NULL,
                                   *pb = b ? env_name(b, other, sizeof other) : NULL;
                        if (ra && pb && strcmp(ra, pb) == 0)
                                verdict_problem(
                                        v,
                                        "the running bwrap's environment is not the one kbound passed: %s has another "
                                        "value "
                                        "(values never shown)",
                                        ra);
                        else if (ra && !env_has_name(env_plan, ra))
                                verdict_problem(
                                        v,
                                        "the running bwrap's environment is not the one kbound passed: it has %s, "
                                        "which kbound "
                                        "did not pass",
                                        ra);
                        else if (pb && !env_has_name(env_run, pb))
                                verdict_problem(
                                        v, "the running bwrap's environment is not the one kbound passed: it lacks %s",
                                        pb);
                        else
                                verdict_problem(
                                        v,
                                        "the running bwrap's environment is not the one kbound passed: its order "
                                        "differs at %s",
                                        ra ? ra : pb);
                        break;
                }
        json_object *compared = json_object_new_object();
        if (compared) {
                json_object_object_add(compared, "program", json_object_get(kb_json_get(program, "path")));
                json_object_object_add(compared, "arguments", json_object_new_int64((int64_t) np));
                json_object_object_add(compared, "environment", json_object_new_int64((int64_t) ep));
        }
        verdict_evidence(v, "launch_compared", compared);
}

json_object *kb_judge_backend(const kb_judge_input *in) {
        verdict v;
        verdict_init(&v);
        json_object *host_ns = kb_json_get(in->host, "ns");
        bool allow_network = kb_json_true(in->expect, "allow_network");
        char names[128] = "";
        if (!json_object_is_type(host_ns, json_type_object) || json_object_object_length(host_ns) == 0) {
                verdict_problem(&v, "the host could not read its own namespaces");
                host_ns = NULL; /* json_object_object_foreach cannot walk a non-object */
        }
        judge_look_problems(&v, in);
        size_t n_proc = 0;
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *procs = kb_json_get(at(in->snapshots, s), "processes");
                for (size_t i = 0; i < arr_len(procs); i++) {
                        json_object *p = at(procs, i), *ns = kb_json_get(p, "ns");
                        n_proc++;
                        if (!host_ns)
                                continue;
                        json_object_object_foreach(host_ns, name, ino) {
                                int64_t mine = json_object_get_int64(ino), theirs;
                                if (!kb_json_int(ns, name, &theirs))
                                        verdict_problem(
                                                &v, "the host could not read the %s namespace of pid %" PRId64 " (%s)",
                                                name, int_or(p, "pid", -1), str_or(p, "name", "?"));
                                else if (theirs == mine && !(allow_network && strcmp(name, "net") == 0))
                                        verdict_problem(&v, "pid %" PRId64 " (%s) shares kbound's %s namespace",
                                                        int_or(p, "pid", -1), str_or(p, "name", "?"), name);
                        }
                }
        }
        if (host_ns) {
                json_object_object_foreach(host_ns, name, unused) {
                        (void) unused;
                        if (allow_network && strcmp(name, "net") == 0)
                                continue;
                        size_t len = strlen(names);
                        snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", name);
                }
        }
        /* Whose namespaces they are, and who else is in them: every look, the one before exec too. */
        int64_t sandbox_user = -1, outside_read = 0, outside_unreadable = 0, fds_read = 0, fds_unreadable = 0,
                transient_holds = 0;
        for (size_t s = 0; host_ns && s < arr_len(in->snapshots) + 1; s++) {
                json_object *look = s == 0 ? in->pre_exec : at(in->snapshots, s - 1);
                if (!look) {
                        verdict_problem(&v, "the host took no look at the sandbox before the kernel's program ran");
                        continue;
                }
                int64_t owner = ownership_problems(&v, in, look, host_ns, allow_network);
                if (sandbox_user < 0)
                        sandbox_user = owner;
                holder_problems(&v, look, s == 0);
                outside_read = int_or(kb_json_get(look, "ns_outside"), "read", 0);
                outside_unreadable = int_or(kb_json_get(look, "ns_outside"), "unreadable", 0);
                fds_read = int_or(kb_json_get(look, "ns_outside"), "fd_tables_read", 0);
                fds_unreadable = int_or(kb_json_get(look, "ns_outside"), "fd_tables_unreadable", 0);
                transient_holds += int_or(kb_json_get(look, "ns_outside"), "transient", 0);
        }
        launch_problems(&v, in);
        verdict_evidence(&v, "kbound_ns", json_object_get(host_ns));
        verdict_evidence(&v, "sandbox_userns", json_object_new_int64(sandbox_user));
        json_object *outside = json_object_new_object();
        if (outside) {
                json_object_object_add(outside, "read", json_object_new_int64(outside_read));
                json_object_object_add(outside, "unreadable", json_object_new_int64(outside_unreadable));
                json_object_object_add(outside, "descriptor_tables_read", json_object_new_int64(fds_read));
                json_object_object_add(outside, "descriptor_tables_unreadable", json_object_new_int64(fds_unreadable));
                /* seen holding or in one of the sandbox's namespaces and no longer NS_CONFIRM_MS later
                 * (a kbound look's moment, this run's or another's), over all looks: not holders
                 * (inspect.c, ns_holder_facts) */
                json_object_object_add(outside, "transient_seen", json_object_new_int64(transient_holds));
                if (outside_unreadable > 0 && int_or(in->host, "uid", -1) != 0)
                        json_object_object_add(
                                outside, "note",
                                json_object_new_string("kbound is not root: the namespaces of other users' processes "
                                                       "cannot be read, and were not judged"));
        }
        verdict_evidence(&v, "processes_outside", outside);
        json_object *kernel = NULL;
        json_object *procs = kb_json_get(at(in->snapshots, 0), "processes");
        for (size_t i = 0; i < arr_len(procs); i++)
                if (int_or(at(procs, i), "pid", -1) == int_or(in->expect, "kernel_pid", -2))
                        kernel = at(procs, i);
        verdict_evidence(&v, "kernel_ns", json_object_get(kb_json_get(kernel, "ns")));
        verdict_evidence(&v, "bwrap", json_object_get(kb_json_get(in->expect, "bwrap")));
        verdict_evidence(&v, "bwrap_version", json_object_get(kb_json_get(in->expect, "bwrap_version")));
        char pass[1024], unread[160] = "";
        bool root = int_or(in->host, "uid", -1) == 0;
        if (outside_unreadable > 0)
                snprintf(unread, sizeof unread, "; %" PRId64 " %s could not be read%s, not judged", outside_unreadable,
                         root ? "more" : "of other users", root ? "" : " (kbound is not root)");
        snprintf(pass, sizeof pass,
                 "bubblewrap %s (%s); %s namespaces differ from kbound's for all %zu process%s the host saw%s; the "
                 "running "
                 "bwrap is the program, command line and environment kbound launched; every namespace is owned by the "
                 "sandbox's own user namespace (a child of kbound's) and no process outside the sandbox is in one, "
                 "holds one open or bind-mounts one (%" PRId64 " processes outside read%s)",
                 str_or(in->expect, "bwrap_version", "?"), str_or(in->expect, "bwrap", "?"), names, n_proc,
                 n_proc == 1 ? "" : "es", allow_network ? "; network shared (raw-network override)" : "", outside_read,
                 unread);
        return verdict_end(&v, KB_CHECK_BACKEND, pass);
}
