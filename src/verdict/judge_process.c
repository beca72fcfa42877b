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

static json_object *privilege_summary(json_object *p) {
        static const char *const keys[] = {
                "pid",     "nspid",   "name",    "uid",     "gid",     "groups",          "cap_eff",
                "cap_prm", "cap_amb", "cap_bnd", "cap_inh", "seccomp", "seccomp_filters", "no_new_privs",
                "uid_map", "gid_map"};
        json_object *s = json_object_new_object();
        for (size_t i = 0; s && i < KB_ELEMENTSOF(keys); i++) {
                json_object *x = kb_json_get(p, keys[i]);
                if (x)
                        json_object_object_add(s, keys[i], json_object_get(x));
        }
        return s;
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
        bool same_uid = true;
        const char *uid_map = NULL;
        char buf[512];
        for (size_t s = 0; s < arr_len(snapshots); s++) {
                json_object *snap = at(snapshots, s), *procs = kb_json_get(snap, "processes");
                json_object *list = json_object_new_array(), *entry = json_object_new_object();
                if (!list || !entry || !seen) {
                        json_object_put(list);
                        json_object_put(entry);
                        v.oom = true;
                        break;
                }
                json_object_object_add(entry, "label", json_object_get(kb_json_get(snap, "label")));
                json_object_object_add(entry, "processes", list);
                json_object_array_add(seen, entry);
                for (size_t i = 0; i < arr_len(procs); i++) {
                        json_object *p = at(procs, i);
                        json_object_array_add(list, privilege_summary(p));
                        n_proc++;
                        int64_t pid = int_or(p, "pid", -1), nnp = 0;
                        const char *name = str_or(p, "name", "?");
                        if (judge_fact_error(p, "status", buf, sizeof buf))
                                verdict_problem(&v, "the host could not read pid %" PRId64 "'s status (%s)", pid, buf);
                        else if (ids_have_root(kb_json_get(p, "uid"), true))
                                verdict_problem(&v, "pid %" PRId64 " (%s) runs as the host's uid 0", pid, name);
                        else if (ids_have_root(kb_json_get(p, "gid"), true))
                                verdict_problem(&v, "pid %" PRId64 " (%s) runs with the host's gid 0", pid, name);
                        else if (ids_have_root(kb_json_get(p, "groups"), false))
                                verdict_problem(&v, "pid %" PRId64 " (%s) is in the host's group 0", pid, name);
                        else if (!caps_empty(kb_json_str(p, "cap_eff")) || !caps_empty(kb_json_str(p, "cap_prm")) ||
                                 !caps_empty(kb_json_str(p, "cap_amb")))
                                verdict_problem(&v,
                                                "pid %" PRId64
                                                " (%s) holds capabilities (effective %s, permitted %s, ambient %s)",
                                                pid, name, str_or(p, "cap_eff", "?"), str_or(p, "cap_prm", "?"),
                                                str_or(p, "cap_amb", "?"));
                        else if (!kb_json_int(p, "no_new_privs", &nnp) || nnp != 1)
                                verdict_problem(&v, "pid %" PRId64 " (%s) can gain privileges (no_new_privs %s)", pid,
                                                name, kb_json_get(p, "no_new_privs") ? "0" : "unknown");
                        int64_t u = first_id(kb_json_get(p, "uid")), sc;
                        if (uid >= 0 && u != uid)
                                same_uid = false;
                        uid = u;
                        gid = first_id(kb_json_get(p, "gid"));
                        if (kb_json_int(p, "seccomp", &sc) && (seccomp < 0 || sc < seccomp))
                                seccomp = sc;
                        if (!uid_map)
                                uid_map = kb_json_str(p, "uid_map");
                }
        }
        char pass[512];
        snprintf(pass, sizeof pass,
                 "%zu process%s in %zu host look%s: host uid %s%" PRId64 ", gid %" PRId64
                 ", no root group, no capabilities, no_new_privs set; uid map %s; seccomp mode %" PRId64,
                 n_proc, n_proc == 1 ? "" : "es", arr_len(snapshots), arr_len(snapshots) == 1 ? "" : "s",
                 same_uid ? "" : "(several) ", uid, gid, uid_map ? uid_map : "?", seccomp);
        return verdict_end(&v, KB_CHECK_PRIVILEGES, pass);
}

json_object *kb_judge_privileges_of(const kb_judge_input *in) {
        return kb_judge_privileges(in ? in->snapshots : NULL);
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
        json_object *procs = kb_json_get(snap, "processes");
        for (size_t i = 0; i < arr_len(procs); i++) {
                json_object *p = at(procs, i), *fds = kb_json_get(p, "fds"), *mounts = judge_mounts_of(snap, p);
                for (size_t f = 0; f < arr_len(fds); f++) {
                        json_object *fd = at(fds, f);
                        const char *r = kb_json_str(fd, "rdev"), *type = kb_json_str(fd, "type");
                        if (!r || !type || strcmp(r, rdev) != 0 || strcmp(type, "chr") != 0)
                                continue;
                        int64_t mnt_id = int_or(fd, "mnt_id", -1);
                        for (size_t m = 0; m < arr_len(mounts); m++) {
                                json_object *mt = at(mounts, m);
                                if (int_or(mt, "id", -2) == mnt_id && judge_mount_is(mt, "devpts") &&
                                    !judge_host_has_dev(host_mounts, kb_json_str(mt, "dev")))
                                        return true;
                        }
                }
        }
        return false;
}

json_object *kb_judge_session(const kb_judge_input *in) {
        verdict v;
        verdict_init(&v);
        judge_look_problems(&v, in);
        int64_t kbound_session = int_or(in->host, "session", -1), kernel_pid = int_or(in->expect, "kernel_pid", -1);
        if (kbound_session < 0)
                verdict_problem(&v, "the host could not read kbound's own session");
        size_t kernel_looks = 0, own_ptys = 0;
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *procs = kb_json_get(at(in->snapshots, s), "processes");
                for (size_t i = 0; i < arr_len(procs); i++) {
                        json_object *p = at(procs, i);
                        int64_t pid = int_or(p, "pid", -1), tty, session;
                        if (!kb_json_int(p, "tty_nr", &tty) || !kb_json_int(p, "session", &session)) {
                                verdict_problem(&v, "the host could not read pid %" PRId64 "'s session and terminal",
                                                pid);
                                continue;
                        }
                        char rdev[48];
                        snprintf(rdev, sizeof rdev, "%" PRId64 ":%" PRId64, (tty >> 8) & 0xfff,
                                 (tty & 0xff) | ((tty >> 12) & 0xfff00));
                        if (tty != 0 && own_pty(at(in->snapshots, s), kb_json_get(in->host, "mounts"), rdev))
                                own_ptys++;
                        else if (tty != 0)
                                verdict_problem(&v,
                                                "pid %" PRId64
                                                " (%s) has a controlling terminal (device %s) that is not a pty "
                                                "of the sandbox's own",
                                                pid, str_or(p, "name", "?"), rdev);
                        if (pid != kernel_pid)
                                continue;
                        kernel_looks++;
                        bool leader_inside = false;
                        for (size_t j = 0; j < arr_len(procs); j++)
                                leader_inside |= int_or(at(procs, j), "pid", -1) == session;
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
        json_object *launcher = kb_json_get(judge_last_look(in), "launcher");
        int64_t lpid = int_or(launcher, "pid", -1), spawned = int_or(launcher, "spawned", -2);
        bool dwp = false, ns = false;
        char why[256];
        const char *unreadable = bwrap_flags(kb_json_get(launcher, "argv"), &dwp, &ns, why, sizeof why);
        if (!launcher)
                verdict_problem(&v, "the host did not find the process that runs bwrap");
        else if (lpid != spawned)
                verdict_problem(&v,
                                "the sandbox's bwrap (pid %" PRId64 ") is not the process kbound started (pid %" PRId64
                                "): nothing ties its life to kbound",
                                lpid, spawned);
        else if (int_or(launcher, "ppid", -1) != int_or(launcher, "kbound", -2))
                verdict_problem(&v, "the sandbox's bwrap (pid %" PRId64 ") is not kbound's child", lpid);
        else if (unreadable)
                verdict_problem(&v, "cannot tell what the running bwrap was started with: %s", unreadable);
        else if (!dwp)
                verdict_problem(
                        &v, "the running bwrap was started without --die-with-parent: the sandbox can outlive kbound");
        /* ...and by effect: a twin of the sandbox, its bwrap killed, must die with it. */
        json_object *life = kb_json_get(in->expect, "lifetime");
        int64_t init_ms = int_or(life, "init_gone_ms", -1), pid2_ms = int_or(life, "pid2_gone_ms", -1);
        if (!life)
                verdict_problem(&v, "the host did not try whether the sandbox dies with kbound");
        else if (kb_json_str(life, "error"))
                verdict_problem(&v, "the host could not try whether the sandbox dies with kbound: %s",
                                kb_json_str(life, "error"));
        else if (kb_json_true(life, "survived") || init_ms < 0 || pid2_ms < 0)
                verdict_problem(&v,
                                "a sandbox started as this one was outlived its bwrap: %s still ran %" PRId64
                                " ms after kbound killed bwrap's outer process (kbound then stopped it): the sandbox "
                                "can outlive kbound",
                                init_ms < 0 && pid2_ms < 0 ? "its init and PID 2"
                                : init_ms < 0              ? "its init"
                                                           : "its PID 2",
                                int_or(life, "bound_ms", -1));
        verdict_evidence(&v, "lifetime", json_object_get(life));
        json_object *flags = json_object_new_object();
        if (flags) {
                json_object_object_add(flags, "die_with_parent", json_object_new_boolean(dwp));
                json_object_object_add(flags, "new_session", json_object_new_boolean(ns));
        }
        verdict_evidence(&v, "bwrap_flags", flags);
        verdict_evidence(&v, "launcher_pid", json_object_new_int64(lpid));
        verdict_evidence(&v, "kbound_session", json_object_new_int64(kbound_session));
        verdict_evidence(&v, "own_pty_terminals", json_object_new_int64((int64_t) own_ptys));
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
