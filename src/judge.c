/* judge.c: verdicts as pure functions of host facts and probe results (judge.h). */
#include "kbound/judge.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "procfs.h"

#define DETAIL_MAX 1024

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

/* ---- tolerant accessors: facts are ours, but a missing field must read as "unknown" ---- */

static json_object *get(json_object *o, const char *key) {
        json_object *v = NULL;
        return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *get_str(json_object *o, const char *key) {
        json_object *v = get(o, key);
        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static size_t arr_len(json_object *a) {
        return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static bool get_int(json_object *o, const char *key, int64_t *ret) {
        json_object *v = get(o, key);
        if (!v || !json_object_is_type(v, json_type_int))
                return false;
        *ret = json_object_get_int64(v);
        return true;
}

/* The first error a process's facts carry about what (NULL: any), or NULL. */
static const char *fact_error(json_object *o, const char *what) {
        json_object *errors = get(o, "errors");
        for (size_t i = 0; i < arr_len(errors); i++) {
                json_object *e = json_object_array_get_idx(errors, i);
                const char *w = get_str(e, "what");
                if (!what || (w && strcmp(w, what) == 0))
                        return w ? w : "?";
        }
        return NULL;
}

static const char *fact_error_text(json_object *o, const char *what) {
        json_object *errors = get(o, "errors");
        for (size_t i = 0; i < arr_len(errors); i++) {
                json_object *e = json_object_array_get_idx(errors, i);
                const char *w = get_str(e, "what");
                if (!what || (w && strcmp(w, what) == 0))
                        return get_str(e, "error") ? get_str(e, "error") : "?";
        }
        return "?";
}

/* True if the array of ids holds 0; an absent or malformed array counts as holding it (unknown is
 * never "not root"). */
static bool ids_have_root(json_object *ids, bool required) {
        if (!ids || !json_object_is_type(ids, json_type_array))
                return required;
        for (size_t i = 0; i < arr_len(ids); i++) {
                json_object *v = json_object_array_get_idx(ids, i);
                if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) == 0)
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
        json_object *v = arr_len(ids) ? json_object_array_get_idx(ids, 0) : NULL;
        return v && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -1;
}

/* What of a process the privileges evidence shows. */
static json_object *privilege_summary(json_object *p) {
        static const char *const keys[] = {"pid",     "nspid",   "name",    "uid",          "gid",
                                           "groups",  "cap_eff", "cap_prm", "cap_amb",      "cap_bnd",
                                           "cap_inh", "seccomp", "seccomp_filters", "no_new_privs", "uid_map",
                                           "gid_map"};
        json_object *s = json_object_new_object();
        for (size_t i = 0; s && i < KB_ELEMENTSOF(keys); i++) {
                json_object *v = get(p, keys[i]);
                if (v)
                        json_object_object_add(s, keys[i], json_object_get(v));
        }
        return s;
}

json_object *kb_judge_privileges(json_object *snapshots) {
        const char *id = "sandbox.privileges";
        char why[512] = "";
        json_object *ev = json_object_new_object(), *seen = json_object_new_array();
        if (!ev || !seen || json_object_object_add(ev, "snapshots", seen) < 0) {
                json_object_put(ev);
                json_object_put(seen);
                return NULL;
        }
        size_t n_snap = arr_len(snapshots), n_proc = 0;
        int64_t uid = -1, gid = -1, seccomp = -1;
        bool same_uid = true;
        const char *uid_map = NULL;
        for (size_t s = 0; s < n_snap; s++) {
                json_object *snap = json_object_array_get_idx(snapshots, s);
                json_object *procs = get(snap, "processes"), *list = json_object_new_array(), *entry = json_object_new_object();
                if (!list || !entry) {
                        json_object_put(list);
                        json_object_put(entry);
                        json_object_put(ev);
                        return NULL;
                }
                json_object_object_add(entry, "label", json_object_get(get(snap, "label")));
                json_object_object_add(entry, "processes", list);
                json_object_array_add(seen, entry);
                if (!*why && fact_error(snap, "the pinned kernel among the sandbox's processes"))
                        snprintf(why, sizeof why, "the host did not find the pinned kernel among the sandbox's processes (%s)",
                                 get_str(snap, "label") ? get_str(snap, "label") : "?");
                if (!*why && fact_error(snap, "the process list"))
                        snprintf(why, sizeof why, "the host could not list processes: %s",
                                 fact_error_text(snap, "the process list"));
                if (!*why && arr_len(procs) == 0)
                        snprintf(why, sizeof why, "the host found no process in the sandbox");
                for (size_t i = 0; i < arr_len(procs); i++) {
                        json_object *p = json_object_array_get_idx(procs, i);
                        json_object_array_add(list, privilege_summary(p));
                        n_proc++;
                        int64_t pid = -1;
                        get_int(p, "pid", &pid);
                        const char *name = get_str(p, "name") ? get_str(p, "name") : "?";
                        if (*why)
                                continue;
                        if (fact_error(p, "status"))
                                snprintf(why, sizeof why, "the host could not read pid %" PRId64 "'s status: %s", pid,
                                         fact_error_text(p, "status"));
                        else if (ids_have_root(get(p, "uid"), true))
                                snprintf(why, sizeof why, "pid %" PRId64 " (%s) runs as the host's uid 0", pid, name);
                        else if (ids_have_root(get(p, "gid"), true))
                                snprintf(why, sizeof why, "pid %" PRId64 " (%s) runs with the host's gid 0", pid, name);
                        else if (ids_have_root(get(p, "groups"), false))
                                snprintf(why, sizeof why, "pid %" PRId64 " (%s) is in the host's group 0", pid, name);
                        else if (!caps_empty(get_str(p, "cap_eff")) || !caps_empty(get_str(p, "cap_prm")) ||
                                 !caps_empty(get_str(p, "cap_amb")))
                                snprintf(why, sizeof why,
                                         "pid %" PRId64 " (%s) holds capabilities (effective %s, permitted %s, ambient %s)", pid,
                                         name, get_str(p, "cap_eff") ? get_str(p, "cap_eff") : "?",
                                         get_str(p, "cap_prm") ? get_str(p, "cap_prm") : "?",
                                         get_str(p, "cap_amb") ? get_str(p, "cap_amb") : "?");
                        else {
                                int64_t nnp = 0;
                                if (!get_int(p, "no_new_privs", &nnp) || nnp != 1)
                                        snprintf(why, sizeof why, "pid %" PRId64 " (%s) can gain privileges (no_new_privs %s)",
                                                 pid, name, get(p, "no_new_privs") ? "0" : "unknown");
                        }
                        int64_t u = first_id(get(p, "uid"));
                        if (uid >= 0 && u != uid)
                                same_uid = false;
                        uid = u;
                        gid = first_id(get(p, "gid"));
                        int64_t sc;
                        if (get_int(p, "seccomp", &sc) && (seccomp < 0 || sc < seccomp))
                                seccomp = sc;
                        if (!uid_map)
                                uid_map = get_str(p, "uid_map");
                }
        }
        if (!*why && n_snap == 0)
                snprintf(why, sizeof why, "the host took no look at the sandbox's processes");
        if (*why)
                return kb_judge_check(id, "fail", ev, "%s", why);
        return kb_judge_check(id, "pass", ev,
                              "%zu process%s in %zu host look%s: host uid %s%" PRId64 ", gid %" PRId64
                              ", no root group, no capabilities, no_new_privs set; uid map %s; seccomp mode %" PRId64,
                              n_proc, n_proc == 1 ? "" : "es", n_snap, n_snap == 1 ? "" : "s", same_uid ? "" : "(several) ",
                              uid, gid, uid_map ? uid_map : "?", seccomp);
}

/* ---- mounts ---- */

static int problem(json_object *problems, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int problem(json_object *problems, const char *fmt, ...) {
        char text[DETAIL_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        json_object *s = json_object_new_string(text);
        if (!s || json_object_array_add(problems, s) < 0) {
                json_object_put(s);
                return -ENOMEM;
        }
        return 1;
}

static bool mount_writable(json_object *m) {
        json_object *w = get(m, "writable");
        /* Unknown writability is writable: a mount is proven read-only or it is not. */
        return !w || !json_object_is_type(w, json_type_boolean) || json_object_get_boolean(w);
}

static bool mount_is(json_object *m, const char *fstype) {
        const char *t = get_str(m, "fstype");
        return t && strcmp(t, fstype) == 0;
}

/* The sandbox path at which fs_path (a path inside the filesystem of m) appears, given m's root;
 * false if fs_path is not below m's root. */
static bool path_in_mount(json_object *m, const char *fs_path, char *out, size_t size) {
        const char *root = get_str(m, "root"), *mp = get_str(m, "mountpoint");
        if (!root || !mp || !kb_procfs_path_under(fs_path, root))
                return false;
        const char *rest = fs_path + (strcmp(root, "/") == 0 ? 0 : strlen(root));
        int n = snprintf(out, size, "%s%s", strcmp(mp, "/") == 0 && *rest ? "" : mp, rest);
        return n > 0 && (size_t) n < size;
}

/* Host-global /proc entries under every writable proc mount must be read-only. */
static int proc_problems(json_object *mounts, json_object *m, json_object *entries, json_object *problems) {
        int found = 0, r;
        const char *root = get_str(m, "root") ? get_str(m, "root") : "/";
        const char *mp = get_str(m, "mountpoint") ? get_str(m, "mountpoint") : "?";
        for (size_t i = 0; i < arr_len(entries); i++) {
                const char *e = json_object_get_string(json_object_array_get_idx(entries, i));
                char entry[256], at[4096];
                if (!e || snprintf(entry, sizeof entry, "/%s", e) >= (int) sizeof entry)
                        continue;
                if (kb_procfs_path_under(root, entry)) {
                        r = problem(problems, "a writable proc mount at %s exposes /proc%s (its root %s)", mp, entry, root);
                        if (r < 0)
                                return r;
                        found++;
                        continue;
                }
                if (!path_in_mount(m, entry, at, sizeof at))
                        continue;
                json_object *cover = kb_procfs_mount_of(mounts, at);
                if (cover && (!mount_is(cover, "proc") || !mount_writable(cover)))
                        continue;
                r = problem(problems, "%s (the host's /proc%s) is writable in the sandbox: no read-only mount covers it",
                            at, entry);
                if (r < 0)
                        return r;
                found++;
        }
        return found;
}

int kb_judge_mount_problems(json_object *mounts, json_object *proc_entries, json_object *problems) {
        if (!problems)
                return -EINVAL;
        if (!mounts || !json_object_is_type(mounts, json_type_array) || arr_len(mounts) == 0)
                return problem(problems, "the host could not read the sandbox's mount table");
        int found = 0;
        for (size_t i = 0; i < arr_len(mounts); i++) {
                json_object *m = json_object_array_get_idx(mounts, i);
                if (!mount_writable(m) || !mount_is(m, "proc"))
                        continue;
                int r = proc_problems(mounts, m, proc_entries, problems);
                if (r < 0)
                        return r;
                found += r;
        }
        return found;
}
