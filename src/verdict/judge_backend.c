/* judge_backend.c: sandbox.backend, the namespaces the sandbox runs in and the bwrap that made them. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "verdict/judge-internal.h"

/* ---- sandbox.backend ---- */

/* The pid namespace's owner chain of a process of procs in the sandbox's pid namespace (the one
 * kbound pinned): [the user namespace bwrap made for the sandbox, its parent, ...], or NULL. */
static json_object *sandbox_owner_chain(json_object *procs, int64_t pidns) {
        for (size_t i = 0; i < arr_len(procs); i++) {
                json_object *p = at(procs, i), *chain = judge_map_at(kb_fact_map_of(p, FACT_PROCESS_NS_OWNERS), "pid");
                if (pidns > 0 && judge_ns_inode(kb_fact_map_of(p, FACT_PROCESS_NS), "pid") == pidns &&
                    arr_len(chain) > 0)
                        return chain;
        }
        return NULL;
}

/* Whose namespaces who's are (ns, owners: a PROCESS's, or a TASK's own, which hold only the
 * namespaces it is in apart from its process: only_listed), each owned by the sandbox's user
 * namespace owner or one inside it; errors: who's (ns_owners/<name> not read). */
static void owner_problems(verdict *v, const char *who, json_object *ns, json_object *owners, json_object *errors,
                           json_object *host_ns, int64_t owner, int64_t kbound_net, bool allow_network,
                           bool only_listed) {
        char buf[512];
        json_object_object_foreach(host_ns, name, unused) {
                (void) unused;
                json_object *above = judge_map_at(owners, name);
                int64_t mine = judge_ns_inode(ns, name);
                if (only_listed && mine < 0)
                        continue; /* the process's, judged with it */
                if (strcmp(name, "net") == 0 && allow_network && mine == kbound_net)
                        continue; /* the override shares kbound's own: judged above */
                const char *error = judge_error_in(errors, WHAT_NS_OWNERS, name, buf, sizeof buf);
                if (!above || error) {
                        verdict_problem(v, "the host could not read who owns the %s namespace of %s%s%s", name, who,
                                        error ? ": " : "", error ? error : "");
                        continue;
                }
                bool inside = int_in(above, owner) || (strcmp(name, "user") == 0 && mine == owner);
                if (inside)
                        continue;
                if (strcmp(name, "user") == 0)
                        verdict_problem(v,
                                        "%s is in user namespace %" PRId64 ", not the sandbox's (%" PRId64
                                        ") nor one inside it",
                                        who, mine, owner);
                else
                        verdict_problem(v,
                                        "the %s namespace of %s is owned by user namespace %" PRId64
                                        ", not by the sandbox's (%" PRId64
                                        ") nor one inside it: a namespace made elsewhere",
                                        name, who, arr_len(above) ? json_object_get_int64(at(above, 0)) : -1, owner);
        }
}

/* Whose namespaces the sandbox's are, in one look: every namespace of every process is owned by
 * the user namespace bwrap made with the sandbox's pid namespace (S) or one made inside it, S is
 * a child of kbound's own user namespace, and every process's user namespace is S or inside it. A
 * pre-existing namespace (one a helper made and bwrap joined) is owned by another one. Returns S,
 * or -1. */
static int64_t ownership_problems(verdict *v, const kb_judge_input *in, json_object *look, json_object *host_ns,
                                  bool allow_network) {
        const char *label = kb_fact_str_or(look, FACT_LOOK_LABEL, "?");
        json_object *procs = kb_fact_arr_of(look, FACT_LOOK_PROCESSES);
        int64_t kbound_user = judge_ns_inode(host_ns, "user"), kbound_net = judge_ns_inode(host_ns, "net");
        json_object *chain = sandbox_owner_chain(procs, kb_fact_int_or(in->expect, FACT_EXPECT_PIDNS, -1));
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
        char who[160];
        for (size_t i = 0; i < arr_len(procs); i++) {
                json_object *p = at(procs, i), *tasks = kb_fact_arr_of(p, FACT_PROCESS_TASKS);
                /* A zombie is in no namespace but its pid and user ones any more: those it shows. */
                owner_problems(v, judge_task_words(NULL, p, who, sizeof who), kb_fact_map_of(p, FACT_PROCESS_NS),
                               kb_fact_map_of(p, FACT_PROCESS_NS_OWNERS), kb_fact_arr_of(p, FACT_PROCESS_ERRORS),
                               host_ns, owner, kbound_net, allow_network, judge_zombie(p));
                /* A thread in namespaces of its own (setns, unshare in one thread), the same way. */
                for (size_t k = 0; k < arr_len(tasks); k++)
                        owner_problems(v, judge_task_words(at(tasks, k), p, who, sizeof who),
                                       kb_fact_map_of(at(tasks, k), FACT_TASK_NS),
                                       kb_fact_map_of(at(tasks, k), FACT_TASK_NS_OWNERS),
                                       kb_fact_arr_of(at(tasks, k), FACT_TASK_ERRORS), host_ns, owner, kbound_net,
                                       allow_network, true);
        }
        return owner;
}

/* Processes outside the sandbox in one of its namespaces or holding one open, and bind mounts of
 * them outside, in one look (the look before exec reads no mount tables). */
static void holder_problems(verdict *v, json_object *look, bool pre_exec) {
        const char *label = kb_fact_str_or(look, FACT_LOOK_LABEL, "?");
        char buf[512];
        json_object *outside = kb_fact_obj_of(look, FACT_LOOK_NS_OUTSIDE),
                    *holders = kb_fact_arr_of(look, FACT_LOOK_NS_HOLDERS);
        if (!outside || judge_look_error(look, WHAT_OWN_NAMESPACES, buf, sizeof buf) ||
            judge_look_error(look, WHAT_TOO_MANY_NAMESPACES, buf, sizeof buf)) {
                verdict_problem(
                        v, "the host did not check which processes outside the sandbox are in its namespaces (%s)%s%s",
                        label, outside ? ": " : "", outside ? buf : "");
                return;
        }
        for (size_t i = 0; i < arr_len(holders); i++) {
                json_object *h = at(holders, i);
                char thread[48] = "", name[64];
                const char *hname = kb_fact_str_or(h, FACT_NS_HOLDER_NAME, "?"),
                           *ns = kb_fact_str_or(h, FACT_NS_HOLDER_NS, "?");
                int64_t ppid, tid, fd, pid = kb_fact_int_or(h, FACT_NS_HOLDER_PID, -1);
                if (kb_fact_int_of(h, FACT_NS_HOLDER_PPID, &ppid))
                        snprintf(name, sizeof name, "%s, child of pid %" PRId64, hname, ppid);
                else
                        snprintf(name, sizeof name, "%s", hname);
                if (kb_fact_int_of(h, FACT_NS_HOLDER_THREAD, &tid))
                        snprintf(thread, sizeof thread, "thread %" PRId64 " of ", tid);
                const char *children = strstr(ns, "_for_children");
                if (children && children[strlen("_for_children")] == '\0' && !kb_fact_has(h, FACT_NS_HOLDER_FD))
                        verdict_problem(v,
                                        "%spid %" PRId64
                                        " (%s), outside the sandbox, starts its children in the sandbox's %.*s "
                                        "namespace (ns/%s): each one it forks is born inside (%s)",
                                        thread, pid, name, (int) (children - ns), ns, ns, label);
                else if (kb_fact_int_of(h, FACT_NS_HOLDER_FD, &fd))
                        verdict_problem(v,
                                        "%spid %" PRId64
                                        " (%s), outside the sandbox, holds the sandbox's %s namespace open "
                                        "(fd %" PRId64 "), so it can join it (%s)",
                                        thread, pid, name, ns, fd, label);
                else
                        verdict_problem(
                                v, "%spid %" PRId64 " (%s), outside the sandbox, is in the sandbox's %s namespace (%s)",
                                thread, pid, name, ns, label);
        }
        /* Each count is required: one not there is a walk the host cannot vouch for. */
        int64_t fds_read, fds_unreadable, found;
        if (!kb_fact_int_of(outside, FACT_NS_OUTSIDE_FD_TABLES_READ, &fds_read) ||
            !kb_fact_int_of(outside, FACT_NS_OUTSIDE_FD_TABLES_UNREADABLE, &fds_unreadable))
                verdict_problem(v, "the host did not read the descriptors of the processes outside the sandbox (%s)",
                                label);
        else if (fds_unreadable > 0)
                verdict_problem(v,
                                "the host read the namespaces of %" PRId64
                                " processes outside the sandbox but not all their "
                                "descriptors, so it cannot say none holds the sandbox's namespaces (%s)",
                                fds_unreadable, label);
        if (!kb_fact_int_of(outside, FACT_NS_OUTSIDE_HOLDERS, &found))
                verdict_problem(v, "the host did not count the processes outside the sandbox in its namespaces (%s)",
                                label);
        else if (found > (int64_t) arr_len(holders))
                verdict_problem(
                        v, "%" PRId64 " processes outside the sandbox are in its namespaces or hold them open (%s)",
                        found, label);
        json_object *mounts = kb_fact_arr_of(look, FACT_LOOK_NS_MOUNTS);
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
                        kb_fact_str_or(m, FACT_NS_MOUNT_NS, "?"), kb_fact_str_or(m, FACT_NS_MOUNT_MOUNTPOINT, "?"),
                        kb_fact_int_or(m, FACT_NS_MOUNT_PID, -1), label);
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

/* "the host could not read the running bwrap's WHAT", and what look's error about it (unread) says
 * when it kept one. */
static void launcher_unread(verdict *v, json_object *look, const char *what, kb_fact_what unread) {
        char buf[512];
        const char *error = judge_look_error(look, unread, buf, sizeof buf);
        verdict_problem(v, "the host could not read the running bwrap's %s%s%s", what, error ? ": " : "",
                        error ? error : "");
}

/* The running bwrap is the one kbound built: the program kbound executed, its command line and
 * its environment exactly as planned (read from the host in look: /proc/<launcher>/{exe,cmdline,
 * environ}). */
static void launch_problems(verdict *v, const kb_judge_input *in, json_object *look) {
        json_object *plan = kb_fact_obj_of(in->expect, FACT_EXPECT_LAUNCH),
                    *launcher = kb_fact_obj_of(look, FACT_LOOK_LAUNCHER);
        char buf[512];
        if (!plan) {
                verdict_problem(v, "kbound kept no record of the bwrap it launched");
                return;
        }
        if (!launcher) {
                verdict_problem(v, "the host did not find the process that runs bwrap");
                return;
        }
        json_object *exe = kb_fact_obj_of(launcher, FACT_LAUNCHER_EXE),
                    *program = kb_fact_obj_of(plan, FACT_LAUNCH_PROGRAM);
        const char *exe_path = kb_fact_str_of(exe, FACT_FILE_ID_PATH);
        if (!exe)
                verdict_problem(v, "the host could not read which program the running bwrap is (%s)",
                                kb_fact_str_or(launcher, FACT_LAUNCHER_EXE_ERROR, "?"));
        else if (!judge_same_file(judge_file_id(exe), judge_file_id(program)))
                verdict_problem(v, "the running bwrap (%s) is not the program kbound started (%s)",
                                exe_path ? exe_path : "?", kb_fact_str_or(program, FACT_FILE_ID_PATH, "?"));
        json_object *planned = kb_fact_arr_of(plan, FACT_LAUNCH_ARGV),
                    *running = kb_fact_arr_of(launcher, FACT_LAUNCHER_ARGV);
        size_t np = arr_len(planned), nr = arr_len(running);
        if (nr == 0)
                launcher_unread(v, look, "command line", WHAT_LAUNCHER_CMDLINE);
        else if (judge_look_error(look, WHAT_LAUNCHER_ARGV_MAX, buf, sizeof buf))
                verdict_problem(v, "the host could not read all of the running bwrap's command line (%s)", buf);
        else
                for (size_t i = 0; i < (np > nr ? np : nr); i++) {
                        const char *a = i < nr ? json_object_get_string(at(running, i)) : NULL;
                        const char *b = i < np ? json_object_get_string(at(planned, i)) : NULL;
                        if (a && b && strcmp(a, b) == 0)
                                continue;
                        /* argv[0] may be shown when it names the program the host saw running */
                        const char *shown =
                                i == 0 && a && exe_path && strcmp(a, exe_path) == 0 ? a : shown_arg(planned, a);
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
        json_object *env_plan = kb_fact_arr_of(plan, FACT_LAUNCH_ENV),
                    *env_run = kb_fact_arr_of(launcher, FACT_LAUNCHER_ENVIRON);
        size_t ep = arr_len(env_plan), er = arr_len(env_run);
        char name[300], other[300];
        if (!env_plan)
                verdict_problem(v, "kbound kept no record of the environment it started bwrap with");
        else if (!env_run)
                launcher_unread(v, look, "environment", WHAT_LAUNCHER_ENVIRON);
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
                json_object_object_add(compared, "program", json_object_get(kb_fact_get(program, FACT_FILE_ID_PATH)));
                json_object_object_add(compared, "arguments", json_object_new_int64((int64_t) np));
                json_object_object_add(compared, "environment", json_object_new_int64((int64_t) ep));
        }
        verdict_evidence(v, "launch_compared", compared);
}

/* The processes of look in a namespace of kbound's own (host_ns: kbound's; the network one is
 * shared under the raw-network override) or whose namespace was not read. Returns how many
 * processes the look holds. */
static size_t shared_ns_problems(verdict *v, json_object *look, json_object *host_ns, bool allow_network) {
        json_object *procs = kb_fact_arr_of(look, FACT_LOOK_PROCESSES);
        char who[160], buf[256];
        for (size_t i = 0; host_ns && i < arr_len(procs); i++) {
                json_object *p = at(procs, i), *ns = kb_fact_map_of(p, FACT_PROCESS_NS),
                            *tasks = kb_fact_arr_of(p, FACT_PROCESS_TASKS);
                json_object_object_foreach(host_ns, name, ino) {
                        int64_t mine = json_object_get_int64(ino), theirs;
                        if (!judge_map_int(ns, name, &theirs)) {
                                /* A zombie is in none any more (an unprivileged host may not even
                                 * read its links: the kernel gives a task with no memory to root). */
                                if (!judge_zombie(p))
                                        verdict_problem(
                                                v, "the host could not read the %s namespace of pid %" PRId64 " (%s)",
                                                name, judge_pid_of(p), judge_name_of(p));
                        } else if (theirs == mine && !(allow_network && strcmp(name, "net") == 0))
                                verdict_problem(v, "pid %" PRId64 " (%s) shares kbound's %s namespace", judge_pid_of(p),
                                                judge_name_of(p), name);
                }
                /* Each thread: the namespaces it is in apart from its process (setns, unshare). */
                if (!tasks && !judge_zombie(p))
                        verdict_problem(
                                v, "the host could not list the threads of %s: the namespaces of each are not known",
                                judge_task_words(NULL, p, who, sizeof who));
                for (size_t k = 0; k < arr_len(tasks); k++) {
                        json_object *task = at(tasks, k), *own = kb_fact_map_of(task, FACT_TASK_NS);
                        judge_task_words(task, p, who, sizeof who);
                        if (judge_task_exited(task))
                                continue;
                        if (judge_task_error(task, WHAT_NS, NULL, buf, sizeof buf))
                                verdict_problem(v, "the host could not read the namespaces of %s (%s)", who, buf);
                        json_object_object_foreach(host_ns, tname, tino) {
                                int64_t theirs;
                                if (judge_map_int(own, tname, &theirs) && theirs == json_object_get_int64(tino) &&
                                    !(allow_network && strcmp(tname, "net") == 0))
                                        verdict_problem(v, "%s shares kbound's %s namespace", who, tname);
                        }
                }
        }
        return arr_len(procs);
}

json_object *kb_judge_backend(const kb_judge_input *in) {
        verdict v;
        verdict_init(&v);
        json_object *host_ns = kb_fact_map_of(in->host, FACT_HOST_NS);
        bool allow_network = kb_fact_bool_of(in->expect, FACT_EXPECT_ALLOW_NETWORK);
        char names[128] = "";
        if (!host_ns || json_object_object_length(host_ns) == 0) {
                verdict_problem(&v, "the host could not read its own namespaces");
                host_ns = NULL; /* json_object_object_foreach cannot walk a non-object */
        }
        judge_look_problems(&v, in);
        size_t n_proc = 0;
        for (size_t s = 0; s < arr_len(in->snapshots); s++)
                n_proc += shared_ns_problems(&v, at(in->snapshots, s), host_ns, allow_network);
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
                if (!look && s == 0 && judge_audited(in)) {
                        verdict_not_applicable(&v, "the look before the kernel's program ran: the deployment's "
                                                   "launcher does not wait for kbound's");
                        continue;
                }
                if (!look) {
                        verdict_problem(&v, "the host took no look at the sandbox before the kernel's program ran");
                        continue;
                }
                int64_t owner = ownership_problems(&v, in, look, host_ns, allow_network);
                if (sandbox_user < 0)
                        sandbox_user = owner;
                holder_problems(&v, look, s == 0);
                /* The evidence's counts, as the last look read them (-1: not read, which
                 * holder_problems failed). */
                json_object *outside = kb_fact_obj_of(look, FACT_LOOK_NS_OUTSIDE);
                outside_read = kb_fact_int_or(outside, FACT_NS_OUTSIDE_READ, -1);
                outside_unreadable = kb_fact_int_or(outside, FACT_NS_OUTSIDE_UNREADABLE, -1);
                fds_read = kb_fact_int_or(outside, FACT_NS_OUTSIDE_FD_TABLES_READ, -1);
                fds_unreadable = kb_fact_int_or(outside, FACT_NS_OUTSIDE_FD_TABLES_UNREADABLE, -1);
                transient_holds += kb_fact_int_or(outside, FACT_NS_OUTSIDE_TRANSIENT, 0);
        }
        /* An audited sandbox's launcher and mounts are the deployment's: no plan of kbound's to hold
         * them to (its argv is in the kernel's "audit"; its mounts are judged by write_outside). */
        bool audited = judge_audited(in);
        if (audited) {
                verdict_not_applicable(&v, "the running launcher is the deployment's: its program, command line "
                                           "and environment are reported, not held to a launch of kbound's");
                verdict_not_applicable(&v, "the mounts are the deployment's: no plan of kbound's to match them "
                                           "to (boundary.write_outside judges what they let the kernel write)");
        } else
                launch_problems(&v, in, judge_last_look(in));
        /* bwrap built the mounts kbound planned, and nothing more, in every table of every look */
        json_object *mount_problems = json_object_new_array();
        int mount_tables = audited ? 0 : mount_problems ? judge_plan_problems(in, mount_problems, NULL) : -ENOMEM;
        if (mount_tables < 0)
                v.oom = true;
        for (size_t i = 0; i < arr_len(mount_problems); i++)
                verdict_problem(&v, "%s", json_object_get_string(at(mount_problems, i)));
        json_object_put(mount_problems);
        size_t planned = arr_len(kb_fact_arr_of(kb_fact_obj_of(in->expect, FACT_EXPECT_LAUNCH), FACT_LAUNCH_MOUNTS));
        verdict_evidence(&v, "mounts_planned", json_object_new_int64((int64_t) planned));
        verdict_evidence(&v, "mount_tables_matched", json_object_new_int(mount_tables));
        verdict_evidence_fact(&v, EVIDENCE_BACKEND_KBOUND_NS, json_object_get(host_ns));
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
                if (outside_unreadable > 0 && kb_fact_int_or(in->host, FACT_HOST_UID, -1) != 0)
                        json_object_object_add(
                                outside, "note",
                                json_object_new_string("kbound is not root: the namespaces of other users' processes "
                                                       "cannot be read, and were not judged"));
        }
        verdict_evidence(&v, "processes_outside", outside);
        json_object *kernel = NULL;
        json_object *procs = kb_fact_arr_of(at(in->snapshots, 0), FACT_LOOK_PROCESSES);
        int64_t kernel_pid = judge_kernel_pid(&v, in);
        for (size_t i = 0; i < arr_len(procs); i++)
                if (judge_is_pid(at(procs, i), kernel_pid))
                        kernel = at(procs, i);
        verdict_evidence_fact(&v, EVIDENCE_BACKEND_KERNEL_NS, json_object_get(kb_fact_get(kernel, FACT_PROCESS_NS)));
        verdict_evidence_fact(&v, EVIDENCE_BACKEND_BWRAP, json_object_get(kb_fact_get(in->expect, FACT_EXPECT_BWRAP)));
        verdict_evidence_fact(&v, EVIDENCE_BACKEND_BWRAP_VERSION,
                              json_object_get(kb_fact_get(in->expect, FACT_EXPECT_BWRAP_VERSION)));
        char pass[1280], unread[160] = "";
        bool root = kb_fact_int_or(in->host, FACT_HOST_UID, -1) == 0;
        if (outside_unreadable > 0)
                snprintf(unread, sizeof unread, "; %" PRId64 " %s could not be read%s, not judged", outside_unreadable,
                         root ? "more" : "of other users", root ? "" : " (kbound is not root)");
        snprintf(pass, sizeof pass,
                 "bubblewrap %s (%s); %s namespaces differ from kbound's for all %zu process%s the host saw%s; the "
                 "running "
                 "bwrap is the program, command line and environment kbound launched; every namespace is owned by the "
                 "sandbox's own user namespace (a child of kbound's) and no process outside the sandbox is in one, "
                 "holds one open or bind-mounts one (%" PRId64 " processes outside read%s); every mount of the %d "
                 "mount tables of every look is one of the %zu kbound planned, matched by what it shows, where, and "
                 "its read-only, nodev and nosuid options",
                 kb_fact_str_or(in->expect, FACT_EXPECT_BWRAP_VERSION, "?"),
                 kb_fact_str_or(in->expect, FACT_EXPECT_BWRAP, "?"), names, n_proc, n_proc == 1 ? "" : "es",
                 allow_network ? "; network shared (raw-network override)" : "", outside_read, unread, mount_tables,
                 planned);
        if (audited)
                snprintf(
                        pass, sizeof pass,
                        "a sandbox kbound did not build (kbound audit); %s namespaces differ from kbound's for all "
                        "%zu process%s the host saw%s; every namespace is owned by the sandbox's own user namespace (a "
                        "child of kbound's) and no process outside the sandbox is in one, holds one open or "
                        "bind-mounts one (%" PRId64 " processes outside read%s)",
                        names, n_proc, n_proc == 1 ? "" : "es",
                        allow_network ? "; network shared (raw-network override)" : "", outside_read, unread);
        return verdict_end(&v, KB_CHECK_BACKEND, pass);
}

json_object *kb_judge_backend_before_start(const kb_judge_input *in) {
        verdict v;
        verdict_init(&v);
        json_object *host_ns = kb_fact_map_of(in->host, FACT_HOST_NS), *pe = in->pre_exec;
        bool allow_network = kb_fact_bool_of(in->expect, FACT_EXPECT_ALLOW_NETWORK);
        if (!host_ns || json_object_object_length(host_ns) == 0) {
                verdict_problem(&v, "the host could not read its own namespaces");
                host_ns = NULL;
        }
        /* The same rules as every look's, on bwrap's init, whose namespaces the kernel was to get. */
        (void) shared_ns_problems(&v, pe, host_ns, allow_network);
        if (host_ns) {
                (void) ownership_problems(&v, in, pe, host_ns, allow_network);
                holder_problems(&v, pe, true);
        }
        launch_problems(&v, in, pe);
        return verdict_end_before_start(&v, KB_CHECK_BACKEND,
                                        "the namespaces of bwrap's init, who owns them and who outside holds them, or "
                                        "the bwrap that runs it");
}
