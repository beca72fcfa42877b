/* judge_process.c: sandbox.privileges and sandbox.session, what every sandbox process runs as. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "verdict/judge-internal.h"

/* ---- sandbox.privileges ---- */

/* True if the array of ids holds 0; absent or malformed counts as holding it when required (unknown
 * is never "not root"). */
static bool ids_have_root(json_object *ids, bool required) {
        if (!ids || !json_object_is_type(ids, json_type_array))
                return required;
        for (size_t i = 0; i < arr_len(ids); i++) {
                json_object *x = at(ids, i);
                if (!json_object_is_type(x, json_type_int) || json_object_get_int64(x) == 0)
                        return true;
        }
        return required && arr_len(ids) == 0;
}

/* A capability set is empty when its hex digits are all zero; absent or malformed is not empty. */
static bool caps_empty(const char *hex) {
        if (!hex || !*hex)
                return false;
        for (const char *p = hex; *p; p++)
                if (*p != '0')
                        return false;
        return true;
}

static int64_t first_id(json_object *ids) {
        json_object *x = at(ids, 0);
        return x && json_object_is_type(x, json_type_int) ? json_object_get_int64(x) : -1;
}

/* What of p the evidence shows, each fact under its own key. */
static json_object *privilege_summary(json_object *p) {
        static const kb_fact_id facts[] = {KB_FACT_ID_PROCESS_PID,
                                           KB_FACT_ID_PROCESS_NSPID,
                                           KB_FACT_ID_PROCESS_NAME,
                                           KB_FACT_ID_PROCESS_UID,
                                           KB_FACT_ID_PROCESS_GID,
                                           KB_FACT_ID_PROCESS_GROUPS,
                                           KB_FACT_ID_PROCESS_CAP_EFF,
                                           KB_FACT_ID_PROCESS_CAP_PRM,
                                           KB_FACT_ID_PROCESS_CAP_AMB,
                                           KB_FACT_ID_PROCESS_CAP_BND,
                                           KB_FACT_ID_PROCESS_CAP_INH,
                                           KB_FACT_ID_PROCESS_SECCOMP,
                                           KB_FACT_ID_PROCESS_SECCOMP_FILTERS,
                                           KB_FACT_ID_PROCESS_NO_NEW_PRIVS,
                                           KB_FACT_ID_PROCESS_UID_MAP,
                                           KB_FACT_ID_PROCESS_GID_MAP};
        json_object *s = json_object_new_object();
        for (size_t i = 0; s && i < KB_ELEMENTSOF(facts); i++) {
                json_object *x = kb_fact_member(p, facts[i]);
                if (x)
                        json_object_object_add(s, kb_fact_row(facts[i])->key, json_object_get(x));
        }
        return s;
}

/* The credentials of a process (its main thread's status) or of one of its threads (a TASK's): the
 * kernel keeps them per thread, and a raw setuid or capset changes one thread only. */
typedef struct creds {
        json_object *uid, *gid, *groups;
        const char *eff, *prm, *amb;
        bool nnp_known;
        int64_t nnp;
} creds;

static creds process_creds(json_object *p) {
        creds c = {.uid = kb_fact_get(p, FACT_PROCESS_UID),
                   .gid = kb_fact_get(p, FACT_PROCESS_GID),
                   .groups = kb_fact_get(p, FACT_PROCESS_GROUPS),
                   .eff = kb_fact_str_of(p, FACT_PROCESS_CAP_EFF),
                   .prm = kb_fact_str_of(p, FACT_PROCESS_CAP_PRM),
                   .amb = kb_fact_str_of(p, FACT_PROCESS_CAP_AMB)};
        c.nnp_known = kb_fact_int_of(p, FACT_PROCESS_NO_NEW_PRIVS, &c.nnp);
        return c;
}

static creds task_creds(json_object *t) {
        creds c = {.uid = kb_fact_get(t, FACT_TASK_UID),
                   .gid = kb_fact_get(t, FACT_TASK_GID),
                   .groups = kb_fact_get(t, FACT_TASK_GROUPS),
                   .eff = kb_fact_str_of(t, FACT_TASK_CAP_EFF),
                   .prm = kb_fact_str_of(t, FACT_TASK_CAP_PRM),
                   .amb = kb_fact_str_of(t, FACT_TASK_CAP_AMB)};
        c.nnp_known = kb_fact_int_of(t, FACT_TASK_NO_NEW_PRIVS, &c.nnp);
        return c;
}

/* What is wrong with the credentials c of who ("pid N (name)", "thread T of pid N (name)"), the
 * first thing only: a host uid, gid or group 0, a capability, or (but before_exec: bwrap's init
 * sets no_new_privs with the filter, after the block channel) no no_new_privs. */
static void creds_problem(verdict *v, const char *who, const creds *c, bool before_exec) {
        if (ids_have_root(c->uid, true))
                verdict_problem(v, "%s runs as the host's uid 0", who);
        else if (ids_have_root(c->gid, true))
                verdict_problem(v, "%s runs with the host's gid 0", who);
        else if (ids_have_root(c->groups, false))
                verdict_problem(v, "%s is in the host's group 0", who);
        else if (!caps_empty(c->eff) || !caps_empty(c->prm) || !caps_empty(c->amb))
                verdict_problem(v, "%s holds capabilities (effective %s, permitted %s, ambient %s)", who,
                                c->eff ? c->eff : "?", c->prm ? c->prm : "?", c->amb ? c->amb : "?");
        else if (!before_exec && (!c->nnp_known || c->nnp != 1))
                verdict_problem(v, "%s can gain privileges (no_new_privs %s)", who, c->nnp_known ? "0" : "unknown");
}

/* What is wrong with process p's privileges: its status not read, or its credentials' first
 * problem (creds_problem); then each of its threads' the same way (a TASK's status; one that has
 * exited holds none), and threads not listed. */
static void privilege_problem(verdict *v, json_object *p, bool before_exec) {
        char buf[512], who[160];
        if (judge_process_error(p, WHAT_STATUS, NULL, buf, sizeof buf))
                verdict_problem(v, "the host could not read pid %" PRId64 "'s status (%s)", judge_pid_of(p), buf);
        else {
                creds c = process_creds(p);
                creds_problem(v, judge_task_words(NULL, p, who, sizeof who), &c, before_exec);
        }
        json_object *tasks = kb_fact_arr_of(p, FACT_PROCESS_TASKS);
        if (!tasks && !judge_zombie(p))
                verdict_problem(v, "the host could not list the threads of %s: their credentials are not known",
                                judge_task_words(NULL, p, who, sizeof who));
        for (size_t i = 0; i < arr_len(tasks); i++) {
                json_object *task = at(tasks, i);
                judge_task_words(task, p, who, sizeof who);
                if (judge_task_exited(task))
                        continue;
                if (judge_task_error(task, WHAT_STATUS, NULL, buf, sizeof buf)) {
                        verdict_problem(v, "the host could not read the status of %s (%s)", who, buf);
                        continue;
                }
                creds c = task_creds(task);
                creds_problem(v, who, &c, before_exec);
        }
}

json_object *kb_judge_privileges(json_object *snapshots) {
        verdict v;
        verdict_init(&v);
        kb_judge_input in = {.snapshots = snapshots};
        json_object *seen = json_object_new_array();
        verdict_evidence(&v, "snapshots", seen);
        judge_look_problems(&v, &in);
        size_t n_proc = 0;
        int64_t uid = -1, gid = -1, seccomp = -1;
        bool same_uid = true, seccomp_unknown = false;
        const char *uid_map = NULL;
        for (size_t s = 0; s < arr_len(snapshots); s++) {
                json_object *snap = at(snapshots, s), *procs = kb_fact_arr_of(snap, FACT_LOOK_PROCESSES);
                json_object *list = json_object_new_array(), *entry = json_object_new_object();
                if (!list || !entry || !seen) {
                        json_object_put(list);
                        json_object_put(entry);
                        v.oom = true;
                        break;
                }
                json_object_object_add(entry, "label", json_object_get(kb_fact_get(snap, FACT_LOOK_LABEL)));
                json_object_object_add(entry, "processes", list);
                json_object_array_add(seen, entry);
                for (size_t i = 0; i < arr_len(procs); i++) {
                        json_object *p = at(procs, i);
                        json_object_array_add(list, privilege_summary(p));
                        n_proc++;
                        privilege_problem(&v, p, false);
                        int64_t u = first_id(kb_fact_arr_of(p, FACT_PROCESS_UID)), sc;
                        if (uid >= 0 && u != uid)
                                same_uid = false;
                        uid = u;
                        gid = first_id(kb_fact_arr_of(p, FACT_PROCESS_GID));
                        /* The mode the evidence shows is the weakest read; one not read makes it unknown
                         * (-1): sandbox.attack_surface fails that process. */
                        if (!kb_fact_int_of(p, FACT_PROCESS_SECCOMP, &sc))
                                seccomp_unknown = true;
                        else if (seccomp < 0 || sc < seccomp)
                                seccomp = sc;
                        if (!uid_map)
                                uid_map = kb_fact_str_of(p, FACT_PROCESS_UID_MAP);
                }
        }
        char pass[512];
        snprintf(pass, sizeof pass,
                 "%zu process%s in %zu host look%s: host uid %s%" PRId64 ", gid %" PRId64
                 ", no root group, no capabilities, no_new_privs set; uid map %s; seccomp mode %" PRId64,
                 n_proc, n_proc == 1 ? "" : "es", arr_len(snapshots), arr_len(snapshots) == 1 ? "" : "s",
                 same_uid ? "" : "(several) ", uid, gid, uid_map ? uid_map : "?", seccomp_unknown ? -1 : seccomp);
        return verdict_end(&v, KB_CHECK_PRIVILEGES, pass);
}

json_object *kb_judge_privileges_of(const kb_judge_input *in) {
        return kb_judge_privileges(in ? in->snapshots : NULL);
}

json_object *kb_judge_privileges_before_start(const kb_judge_input *in) {
        verdict v;
        verdict_init(&v);
        json_object *procs = kb_fact_arr_of(in->pre_exec, FACT_LOOK_PROCESSES), *list = json_object_new_array();
        for (size_t i = 0; i < arr_len(procs); i++) {
                privilege_problem(&v, at(procs, i), true);
                if (list)
                        json_object_array_add(list, privilege_summary(at(procs, i)));
        }
        verdict_evidence(&v, "processes_before_exec", list);
        return verdict_end_before_start(&v, KB_CHECK_PRIVILEGES,
                                        "the host uid, gid, groups and capabilities of bwrap's init (no_new_privs "
                                        "comes with the filter, after the look)");
}

/* ---- sandbox.session ---- */

/* Reads bwrap's argv (argv[0] first): sets *die_with_parent / *new_session; returns NULL or why the
 * command line cannot be read (an option bwrap does not have, arguments from an fd, cut short),
 * possibly written in buf. */
static const char *bwrap_flags(json_object *argv, bool *die_with_parent, bool *new_session, char *buf, size_t size) {
        *die_with_parent = *new_session = false;
        size_t n = arr_len(argv);
        if (n == 0)
                return "the host could not read it";
        for (size_t i = 1; i < n; i++) {
                const char *a = json_object_get_string(at(argv, i));
                if (!a || strcmp(a, "--") == 0 || strncmp(a, "--", 2) != 0)
                        return NULL; /* the command starts here */
                if (strcmp(a, "--args") == 0)
                        return "options come from a file descriptor (--args) the host cannot see";
                int arity = judge_bwrap_arity(a);
                if (arity < 0) {
                        snprintf(buf, size, "it has an option bwrap 0.8 does not have (%s)", a);
                        return buf;
                }
                if (strcmp(a, "--die-with-parent") == 0)
                        *die_with_parent = true;
                if (strcmp(a, "--new-session") == 0)
                        *new_session = true;
                if (i + (size_t) arity >= n) {
                        snprintf(buf, size, "%s lacks its argument", a);
                        return buf;
                }
                i += (size_t) arity;
        }
        return "it has no command";
}

/* True if the terminal rdev ("maj:min") is a pty of a devpts instance the sandbox made itself: a
 * sandbox process holds it open through a devpts mount of its own mount table whose filesystem
 * the host does not mount (bwrap's --dev makes a new instance). A shell kernel (bash_kernel,
 * metakernel) runs its shell on such a pty; the host's terminals are other instances. */
static bool own_pty(json_object *snap, json_object *host_mounts, const char *rdev) {
        json_object *procs = kb_fact_arr_of(snap, FACT_LOOK_PROCESSES);
        for (size_t i = 0; i < arr_len(procs); i++) {
                json_object *p = at(procs, i), *fds = kb_fact_arr_of(p, FACT_PROCESS_FDS),
                            *mounts = judge_mounts_of(snap, p);
                for (size_t f = 0; f < arr_len(fds); f++) {
                        json_object *fd = at(fds, f);
                        const char *r = kb_fact_str_of(fd, FACT_FD_RDEV), *type = kb_fact_str_of(fd, FACT_FD_TYPE);
                        int64_t mnt_id, id;
                        if (!r || !type || strcmp(r, rdev) != 0 || strcmp(type, "chr") != 0 ||
                            !kb_fact_int_of(fd, FACT_FD_MNT_ID, &mnt_id))
                                continue;
                        for (size_t m = 0; m < arr_len(mounts); m++) {
                                json_object *mt = at(mounts, m);
                                const char *dev = kb_fact_str_of(mt, FACT_MOUNT_DEV);
                                if (kb_fact_int_of(mt, FACT_MOUNT_ID, &id) && id == mnt_id &&
                                    judge_mount_is(mt, "devpts") && dev && !judge_host_has_dev(host_mounts, dev))
                                        return true;
                        }
                }
        }
        return false;
}

/* The bwrap that runs the sandbox (launcher, a look's) is the process kbound spawned, kbound's
 * child, started with --die-with-parent (read with bwrap's grammar: *die_with_parent,
 * *new_session). Returns its pid, -1 when not known. */
static int64_t launcher_problems(verdict *v, json_object *launcher, bool *die_with_parent, bool *new_session) {
        /* -1: not known (by the look, or as facts.def requires): never the process kbound started. */
        int64_t lpid = kb_fact_int_or(launcher, FACT_LAUNCHER_PID, -1),
                spawned = kb_fact_int_or(launcher, FACT_LAUNCHER_SPAWNED, -1),
                ppid = kb_fact_int_or(launcher, FACT_LAUNCHER_PPID, -1),
                kbound = kb_fact_int_or(launcher, FACT_LAUNCHER_KBOUND, -1);
        char why[256];
        const char *unreadable = bwrap_flags(kb_fact_arr_of(launcher, FACT_LAUNCHER_ARGV), die_with_parent, new_session,
                                             why, sizeof why);
        if (!launcher)
                verdict_problem(v, "the host did not find the process that runs bwrap");
        else if (lpid < 0 || spawned < 0 || lpid != spawned)
                verdict_problem(v,
                                "the sandbox's bwrap (pid %" PRId64 ") is not the process kbound started (pid %" PRId64
                                "): nothing ties its life to kbound",
                                lpid, spawned);
        else if (ppid < 0 || kbound < 0 || ppid != kbound)
                verdict_problem(v, "the sandbox's bwrap (pid %" PRId64 ") is not kbound's child", lpid);
        else if (unreadable)
                verdict_problem(v, "cannot tell what the running bwrap was started with: %s", unreadable);
        else if (!*die_with_parent)
                verdict_problem(
                        v, "the running bwrap was started without --die-with-parent: the sandbox can outlive kbound");
        return lpid;
}

/* A controlling terminal of process p of snap (but a pty of the sandbox's own devpts: *own_ptys
 * counts those); false when its session and terminal were not read (said). */
static bool terminal_problem(verdict *v, json_object *snap, json_object *p, json_object *host_mounts,
                             size_t *own_ptys) {
        int64_t pid = judge_pid_of(p), tty, session;
        if (!kb_fact_int_of(p, FACT_PROCESS_TTY_NR, &tty) || !kb_fact_int_of(p, FACT_PROCESS_SESSION, &session)) {
                verdict_problem(v, "the host could not read pid %" PRId64 "'s session and terminal", pid);
                return false;
        }
        char rdev[48];
        snprintf(rdev, sizeof rdev, "%" PRId64 ":%" PRId64, (tty >> 8) & 0xfff, (tty & 0xff) | ((tty >> 12) & 0xfff00));
        if (tty != 0 && own_pty(snap, host_mounts, rdev))
                (*own_ptys)++;
        else if (tty != 0)
                verdict_problem(v,
                                "pid %" PRId64 " (%s) has a controlling terminal (device %s) that is not a pty of the "
                                "sandbox's own",
                                pid, judge_name_of(p), rdev);
        return true;
}

/* A pty of the sandbox's own devpts (its master or a terminal) that a process outside holds: the
 * look's outside channels of a filesystem of the sandbox's own (inspect_shared.c) whose device is a
 * devpts of its mount tables. Each a problem of v. */
static void outside_pty_problems(verdict *v, json_object *snap) {
        json_object *channels = kb_fact_arr_of(snap, FACT_LOOK_OUTSIDE_CHANNELS), *tables[16];
        size_t n = judge_look_tables(snap, tables, KB_ELEMENTSOF(tables));
        for (size_t c = 0; c < arr_len(channels); c++) {
                json_object *ch = at(channels, c);
                const char *dev = kb_fact_str_of(ch, FACT_OUTSIDE_CHANNEL_DEV);
                bool devpts = false;
                for (size_t t = 0; dev && kb_fact_bool_of(ch, FACT_OUTSIDE_CHANNEL_SANDBOX_FS) && !devpts && t < n; t++)
                        for (size_t i = 0; !devpts && i < arr_len(tables[t]); i++) {
                                const char *d = kb_fact_str_of(at(tables[t], i), FACT_MOUNT_DEV),
                                           *type = kb_fact_str_of(at(tables[t], i), FACT_MOUNT_FSTYPE);
                                devpts = d && type && strcmp(d, dev) == 0 && strcmp(type, "devpts") == 0;
                        }
                if (devpts)
                        verdict_problem(v,
                                        "pid %" PRId64
                                        " (%s), a process outside the sandbox, holds %s of the sandbox's own "
                                        "devpts (%s): a terminal into the sandbox",
                                        kb_fact_int_or(ch, FACT_OUTSIDE_CHANNEL_PID, -1),
                                        kb_fact_str_or(ch, FACT_OUTSIDE_CHANNEL_NAME, "?"),
                                        kb_fact_str_or(ch, FACT_OUTSIDE_CHANNEL_TARGET, "?"),
                                        kb_fact_str_or(snap, FACT_LOOK_LABEL, "?"));
        }
}

json_object *kb_judge_session(const kb_judge_input *in) {
        verdict v;
        verdict_init(&v);
        judge_look_problems(&v, in);
        int64_t kbound_session = kb_fact_int_or(in->host, FACT_HOST_SESSION, -1), kernel_pid = judge_kernel_pid(&v, in);
        if (kbound_session < 0)
                verdict_problem(&v, "the host could not read kbound's own session");
        size_t kernel_looks = 0, own_ptys = 0;
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *procs = kb_fact_arr_of(at(in->snapshots, s), FACT_LOOK_PROCESSES);
                outside_pty_problems(&v, at(in->snapshots, s));
                for (size_t i = 0; i < arr_len(procs); i++) {
                        json_object *p = at(procs, i);
                        int64_t session = -1;
                        if (!terminal_problem(&v, at(in->snapshots, s), p, kb_fact_arr_of(in->host, FACT_HOST_MOUNTS),
                                              &own_ptys) ||
                            !judge_is_pid(p, kernel_pid) || !kb_fact_int_of(p, FACT_PROCESS_SESSION, &session))
                                continue;
                        kernel_looks++;
                        bool leader_inside = false;
                        for (size_t j = 0; j < arr_len(procs); j++)
                                leader_inside |= judge_is_pid(at(procs, j), session);
                        if (session == kbound_session)
                                verdict_problem(&v, "the kernel is in kbound's own session (%" PRId64 ")", session);
                        else if (!leader_inside)
                                verdict_problem(&v,
                                                "the kernel's session is led by pid %" PRId64 ", outside the sandbox",
                                                session);
                }
        }
        if (kernel_looks == 0)
                verdict_problem(&v,
                                "the kernel's session was not checked: no look shows the kernel (host pid %" PRId64 ")",
                                kernel_pid);
        /* Lifetime: what the running bwrap was really started with, read from the host. */
        bool dwp = false, ns = false;
        int64_t lpid = -1;
        if (judge_audited(in))
                verdict_not_applicable(&v, "the running bwrap's own flags (--die-with-parent): the launcher is the "
                                           "deployment's, so its lifetime is shown by effect alone");
        else
                lpid = launcher_problems(&v, kb_fact_obj_of(judge_last_look(in), FACT_LOOK_LAUNCHER), &dwp, &ns);
        /* ...and by effect: a twin of the sandbox, its bwrap killed, must die with it. */
        json_object *life = kb_fact_obj_of(in->expect, FACT_EXPECT_LIFETIME);
        /* Not gone by the bound (null) or not known: -1, still there. */
        int64_t init_ms = kb_fact_int_or(life, FACT_LIFETIME_INIT_GONE_MS, -1),
                pid2_ms = kb_fact_int_or(life, FACT_LIFETIME_PID2_GONE_MS, -1);
        const char *life_error = kb_fact_str_of(life, FACT_LIFETIME_ERROR);
        if (!life)
                verdict_problem(&v, "the host did not try whether the sandbox dies with kbound");
        else if (life_error)
                verdict_problem(&v, "the host could not try whether the sandbox dies with kbound: %s", life_error);
        else if ((kb_fact_bool_of(life, FACT_LIFETIME_SURVIVED) || init_ms < 0 || pid2_ms < 0) && judge_audited(in))
                verdict_problem(&v,
                                "a kernel started as this one outlived its launcher: %s still ran %" PRId64
                                " ms after kbound killed the process it started (the kernelspec's program; kbound "
                                "then stopped it): the kernel can outlive whatever runs it",
                                init_ms < 0 && pid2_ms < 0 ? "the kernel and the init of its pid namespace"
                                : init_ms < 0              ? "the init of its pid namespace"
                                                           : "the kernel",
                                kb_fact_int_or(life, FACT_LIFETIME_BOUND_MS, -1));
        else if (kb_fact_bool_of(life, FACT_LIFETIME_SURVIVED) || init_ms < 0 || pid2_ms < 0)
                verdict_problem(&v,
                                "a sandbox started as this one was outlived its bwrap: %s still ran %" PRId64
                                " ms after kbound killed bwrap's outer process (kbound then stopped it): the sandbox "
                                "can outlive kbound%s%s%s",
                                init_ms < 0 && pid2_ms < 0 ? "its init and PID 2"
                                : init_ms < 0              ? "its init"
                                                           : "its PID 2",
                                kb_fact_int_or(life, FACT_LIFETIME_BOUND_MS, -1),
                                kb_fact_str_of(life, FACT_LIFETIME_SURVIVORS) ? " (" : "",
                                kb_fact_str_or(life, FACT_LIFETIME_SURVIVORS, ""),
                                kb_fact_str_of(life, FACT_LIFETIME_SURVIVORS) ? ")" : "");
        verdict_evidence_fact(&v, EVIDENCE_SESSION_LIFETIME, json_object_get(life));
        json_object *flags = json_object_new_object();
        if (flags) {
                json_object_object_add(flags, "die_with_parent", json_object_new_boolean(dwp));
                json_object_object_add(flags, "new_session", json_object_new_boolean(ns));
        }
        verdict_evidence(&v, "bwrap_flags", flags);
        verdict_evidence(&v, "launcher_pid", json_object_new_int64(lpid));
        verdict_evidence(&v, "kbound_session", json_object_new_int64(kbound_session));
        verdict_evidence(&v, "own_pty_terminals", json_object_new_int64((int64_t) own_ptys));
        if (judge_audited(in))
                return verdict_end(&v, KB_CHECK_SESSION,
                                   "no sandbox process has a controlling terminal (but a pty of the sandbox's own); "
                                   "the kernel's session is the sandbox's own; and a kernel started as this one "
                                   "died with its launcher when kbound killed it");
        return verdict_end(&v, KB_CHECK_SESSION,
                           own_ptys
                                   ? "no sandbox process has a controlling terminal but a pty of the sandbox's own "
                                     "devpts; the kernel's session is the sandbox's own; the running bwrap is kbound's "
                                     "child, started with --die-with-parent, and a sandbox started as this one died "
                                     "with its bwrap when kbound killed it"
                                   : "no sandbox process has a controlling terminal; the kernel's session is the "
                                     "sandbox's own; the running bwrap is kbound's child, started with "
                                     "--die-with-parent, and a sandbox started as this one died with its bwrap when "
                                     "kbound killed it");
}

json_object *kb_judge_session_before_start(const kb_judge_input *in) {
        verdict v;
        verdict_init(&v);
        json_object *procs = kb_fact_arr_of(in->pre_exec, FACT_LOOK_PROCESSES);
        size_t own_ptys = 0;
        for (size_t i = 0; i < arr_len(procs); i++)
                (void) terminal_problem(&v, in->pre_exec, at(procs, i), kb_fact_arr_of(in->host, FACT_HOST_MOUNTS),
                                        &own_ptys);
        bool dwp = false, ns = false;
        int64_t lpid = launcher_problems(&v, kb_fact_obj_of(in->pre_exec, FACT_LOOK_LAUNCHER), &dwp, &ns);
        verdict_evidence(&v, "launcher_pid", json_object_new_int64(lpid));
        return verdict_end_before_start(&v, KB_CHECK_SESSION,
                                        "the terminal of bwrap's init and what the running bwrap was started with "
                                        "(the twin sandbox that proves it by effect runs after the kernel's checks)");
}
