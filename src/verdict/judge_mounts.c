/* judge_mounts.c: the sandbox's mount tables: boundary.write_outside, boundary.workspace_writable, reach. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "kbound/inspect.h"
#include "verdict/judge-internal.h"
#include "base/procfs.h"

/* ---- mounts ---- */

/* Unknown writability is writable (facts.def: REQUIRED_TRUE): a mount is proven read-only or it is
 * not. Every judge reads it here. */
bool judge_mount_writable(json_object *m) {
        return kb_fact_bool_of(m, FACT_MOUNT_WRITABLE);
}

/* What a message shows of a mount ("?": not read). */
static const char *mount_point(json_object *m) {
        return kb_fact_str_or(m, FACT_MOUNT_MOUNTPOINT, "?");
}

bool judge_mount_is(json_object *m, const char *fstype) {
        const char *t = kb_fact_str_of(m, FACT_MOUNT_FSTYPE);
        return t && strcmp(t, fstype) == 0;
}

/* True if dev ("maj:min") is mounted anywhere in host_mounts. */
bool judge_host_has_dev(json_object *host_mounts, const char *dev) {
        for (size_t i = 0; dev && i < arr_len(host_mounts); i++) {
                const char *d = kb_fact_str_of(at(host_mounts, i), FACT_MOUNT_DEV);
                if (d && strcmp(d, dev) == 0)
                        return true;
        }
        return false;
}

/* Devices that are harmless to write to: null, zero, full, random, urandom, and the "current
 * terminal" node, which without a controlling terminal (sandbox.session) opens nothing. */
bool judge_harmless_char(const char *rdev, bool tty_too) {
        static const char *const ok[] = {"1:3", "1:5", "1:7", "1:8", "1:9"};
        for (size_t i = 0; rdev && i < KB_ELEMENTSOF(ok); i++)
                if (strcmp(rdev, ok[i]) == 0)
                        return true;
        return tty_too && rdev && strcmp(rdev, "5:0") == 0;
}

/* The team bind (by name) a mount's target is, or NULL: the same file, each read by its own facts
 * (a target not proven, or a bind without its identity, is none). */
static const char *team_bind_of(json_object *m, json_object *team_binds) {
        json_object *target = kb_fact_obj_of(m, FACT_MOUNT_TARGET);
        int64_t ino = -1;
        bool ino_known = kb_fact_int_of(target, FACT_STAT_INO, &ino);
        judge_file root = judge_file_of(kb_fact_str_of(target, FACT_STAT_DEV), ino_known, ino);
        for (size_t i = 0; root.known && i < arr_len(team_binds); i++) {
                json_object *b = at(team_binds, i);
                ino_known = kb_fact_int_of(b, FACT_TEAM_BIND_INO, &ino);
                if (judge_same_file(root, judge_file_of(kb_fact_str_of(b, FACT_TEAM_BIND_DEV), ino_known, ino)))
                        return kb_fact_str_or(b, FACT_TEAM_BIND_NAME, "team folder");
        }
        return NULL;
}

bool judge_same_path(const char *a, const char *b) {
        return kb_procfs_path_under(a, b) && kb_procfs_path_under(b, a);
}

/* The filesystem the running bwrap (its command line argv, read with bwrap's grammar) was told to
 * make fresh at mountpoint, by the last operation that reaches it: "tmpfs" for --tmpfs, --dev and
 * the root bwrap makes itself, "devpts" at --dev's pts, "proc" for --proc, "mqueue" for --mqueue.
 * NULL when the last one there binds something, when nothing was asked there, or when the command
 * line cannot be read. A later mount over a folder hides what an earlier one put below it. */
static const char *planned_fresh(json_object *argv, const char *mountpoint) {
        static const char *const fresh_ops[][2] = {
                {"--tmpfs", "tmpfs"}, {"--dev", "tmpfs"}, {"--proc", "proc"}, {"--mqueue", "mqueue"}};
        static const char *const bind_ops[] = {"--bind",    "--bind-try",    "--dev-bind",    "--dev-bind-try",
                                               "--ro-bind", "--ro-bind-try", "--bind-fd",     "--ro-bind-fd",
                                               "--file",    "--bind-data",   "--ro-bind-data"};
        const char *fresh = mountpoint && strcmp(mountpoint, "/") == 0 ? "tmpfs" : NULL;
        size_t n = arr_len(argv);
        if (!mountpoint || n == 0)
                return NULL;
        for (size_t i = 1; i < n; i++) {
                const char *a = json_object_get_string(at(argv, i));
                if (!a || strcmp(a, "--") == 0 || strncmp(a, "--", 2) != 0)
                        return fresh; /* the command starts here */
                int arity = judge_bwrap_arity(a);
                if (arity < 0 || strcmp(a, "--args") == 0 || i + (size_t) arity >= n)
                        return NULL;
                const char *dest = arity > 0 ? json_object_get_string(at(argv, i + (size_t) arity)) : NULL;
                i += (size_t) arity;
                const char *made = NULL;
                bool mounts = false;
                for (size_t k = 0; k < KB_ELEMENTSOF(fresh_ops) && arity == 1; k++)
                        if (strcmp(a, fresh_ops[k][0]) == 0) {
                                made = fresh_ops[k][1];
                                mounts = true;
                        }
                for (size_t k = 0; k < KB_ELEMENTSOF(bind_ops) && arity == 2; k++)
                        mounts |= strcmp(a, bind_ops[k]) == 0;
                if (!mounts || !dest || !kb_procfs_path_under(mountpoint, dest))
                        continue;
                char pts[4096];
                snprintf(pts, sizeof pts, "%s/pts", dest);
                if (judge_same_path(mountpoint, dest))
                        fresh = made;
                else if (strcmp(a, "--dev") == 0 && judge_same_path(mountpoint, pts))
                        fresh = "devpts";
                else
                        fresh = NULL; /* below dest: hidden by it, or one of --dev's node binds */
        }
        return NULL; /* no command: not a command line bwrap would run */
}

/* Why the filesystem of mount m (of a private type) is not proven the sandbox's own, or NULL:
 * kbound's own mount namespace holds its device, or another namespace outside the sandbox does, or
 * the host could not read every outside process's table and the running bwrap was not told to
 * make that filesystem there. */
const char *judge_not_own(json_object *m, const kb_judge_mount_facts *f, char *buf, size_t size) {
        const char *dev = kb_fact_str_of(m, FACT_MOUNT_DEV);
        json_object *devices = kb_fact_map_of(f->outside, FACT_OUTSIDE_MOUNTS_DEVICES);
        int64_t holder, unreadable = kb_fact_int_or(f->outside, FACT_OUTSIDE_MOUNTS_UNREADABLE, -1);
        if (!dev)
                return "its device is unknown";
        if (judge_host_has_dev(f->host_mounts, dev)) {
                snprintf(buf, size, "kbound's own mount namespace holds its device %s", dev);
                return buf;
        }
        if (judge_map_int(devices, dev, &holder)) {
                snprintf(buf, size,
                         "the mount namespace of pid %" PRId64 ", outside the sandbox, holds its device %s too", holder,
                         dev);
                return buf;
        }
        if (f->before_exec) {
                /* That look reads no mount namespace outside: only what bwrap was told to make there. */
                const char *fresh = planned_fresh(f->bwrap_argv, kb_fact_str_of(m, FACT_MOUNT_MOUNTPOINT));
                if (fresh && judge_mount_is(m, fresh))
                        return NULL;
                return "the host reads no mount namespace outside the sandbox before the kernel runs, and bwrap was "
                       "not told to make it there";
        }
        if (!devices || unreadable < 0)
                return "the host did not read the mount namespaces outside the sandbox";
        const char *fresh =
                unreadable > 0 ? planned_fresh(f->bwrap_argv, kb_fact_str_of(m, FACT_MOUNT_MOUNTPOINT)) : NULL;
        if (unreadable > 0 && !(fresh && judge_mount_is(m, fresh))) {
                snprintf(buf, size,
                         "the host could not read the mount tables of %" PRId64 " process%s outside the sandbox, and "
                         "bwrap was not told to make it there",
                         unreadable, unreadable == 1 ? "" : "es");
                return buf;
        }
        return NULL;
}

/* Why mount m, which lets device nodes be opened (no nodev), is not one of kbound's own /dev nodes,
 * or NULL: those are a single harmless character device bound on its own (null, zero, full,
 * random, urandom, tty: --dev's binds) and --dev's devpts, which must be the sandbox's own. Any
 * other mount that allows devices can show a device node of the host (a read-only mount too: a
 * device is written through its node, not its folder). */
static const char *device_mount(json_object *m, const kb_judge_mount_facts *f, char *buf, size_t size) {
        if (kb_fact_bool_of(m, FACT_MOUNT_NODEV))
                return NULL;
        json_object *target = kb_fact_obj_of(m, FACT_MOUNT_TARGET);
        const char *type = kb_fact_str_of(target, FACT_STAT_TYPE);
        char why[256];
        if (type && strcmp(type, "chr") == 0 && judge_harmless_char(kb_fact_str_of(target, FACT_STAT_RDEV), true))
                return NULL;
        if (judge_mount_is(m, "devpts") && !judge_not_own(m, f, why, sizeof why))
                return NULL;
        snprintf(buf, size,
                 "a mount at %s (%s %s, root %s) lets device nodes be opened (no nodev) and is not one of "
                 "kbound's own /dev nodes",
                 mount_point(m), kb_fact_str_or(m, FACT_MOUNT_FSTYPE, "?"), kb_fact_str_or(m, FACT_MOUNT_SOURCE, "?"),
                 kb_fact_str_or(m, FACT_MOUNT_ROOT, "?"));
        return buf;
}

/* Host-global /proc entries under a writable proc mount must be read-only. */
static int proc_problems(json_object *mounts, json_object *m, json_object *entries, json_object *problems);

static int push_problem(json_object *problems, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int push_problem(json_object *problems, const char *fmt, ...) {
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

static int proc_problems(json_object *mounts, json_object *m, json_object *entries, json_object *problems) {
        int found = 0, r;
        /* A root not read is the whole of proc: every entry under it counts as exposed. */
        const char *root = kb_fact_str_or(m, FACT_MOUNT_ROOT, "/"), *mp = mount_point(m);
        for (size_t i = 0; i < arr_len(entries); i++) {
                const char *e = json_object_get_string(at(entries, i));
                char entry[256], where[4096];
                if (!e || snprintf(entry, sizeof entry, "/%s", e) >= (int) sizeof entry)
                        continue;
                if (kb_procfs_path_under(root, entry)) {
                        r = push_problem(problems, "a writable proc mount at %s exposes /proc%s (its root %s)", mp,
                                         entry, root);
                        if (r < 0)
                                return r;
                        found++;
                        continue;
                }
                if (!kb_procfs_path_in_mount(m, entry, where, sizeof where))
                        continue;
                json_object *cover = kb_procfs_mount_of(mounts, where);
                if (cover && (!judge_mount_is(cover, "proc") || !judge_mount_writable(cover)))
                        continue;
                r = push_problem(problems,
                                 "%s (the host's /proc%s) is writable in the sandbox: no read-only mount covers it",
                                 where, entry);
                if (r < 0)
                        return r;
                found++;
        }
        return found;
}

/* Why a writable mount m is not the sandbox's own, or NULL: a filesystem made for the sandbox alone
 * (tmpfs, ramfs, devpts, mqueue or proc that is the sandbox's own: not_own), one of the team's
 * binds, or a harmless character device are its own. */
static const char *foreign_mount(json_object *m, const kb_judge_mount_facts *f, char *buf, size_t size) {
        static const char *const private_types[] = {"tmpfs", "ramfs", "devpts", "mqueue", "proc"};
        bool private_type = false;
        for (size_t t = 0; t < KB_ELEMENTSOF(private_types); t++)
                private_type |= judge_mount_is(m, private_types[t]);
        const char *dev = kb_fact_str_of(m, FACT_MOUNT_DEV), *shared = NULL;
        char why[256];
        if (private_type) {
                shared = judge_not_own(m, f, why, sizeof why);
                if (!shared)
                        return NULL;
                if (dev && judge_host_has_dev(f->host_mounts, dev))
                        shared = NULL; /* kbound's own: said as "backed by the host" */
        }
        if (team_bind_of(m, f->team_binds))
                return NULL;
        json_object *target = kb_fact_obj_of(m, FACT_MOUNT_TARGET);
        const char *type = kb_fact_str_of(target, FACT_STAT_TYPE),
                   *target_error = kb_fact_str_of(m, FACT_MOUNT_TARGET_ERROR);
        const char *fstype = kb_fact_str_or(m, FACT_MOUNT_FSTYPE, "?"),
                   *source = kb_fact_str_or(m, FACT_MOUNT_SOURCE, "?"), *root = kb_fact_str_or(m, FACT_MOUNT_ROOT, "?");
        if (type && strcmp(type, "chr") == 0 && judge_harmless_char(kb_fact_str_of(target, FACT_STAT_RDEV), true))
                return NULL;
        if (shared)
                snprintf(buf, size, "a writable mount at %s (%s %s, root %s) is not the sandbox's own: %s",
                         mount_point(m), fstype, source, root, shared);
        else if (!target && target_error)
                snprintf(buf, size, "a writable mount at %s (%s %s, root %s) could not be examined by the host (%s)",
                         mount_point(m), fstype, source, root, target_error);
        else
                snprintf(buf, size, "a writable mount at %s (%s %s, root %s) is backed by the host", mount_point(m),
                         fstype, source, root);
        return buf;
}

int kb_judge_mount_problems(json_object *mounts, const kb_judge_mount_facts *facts, json_object *problems) {
        if (!problems || !facts)
                return -EINVAL;
        if (!mounts || !json_object_is_type(mounts, json_type_array) || arr_len(mounts) == 0)
                return push_problem(problems, "the host could not read the sandbox's mount table");
        int found = 0, r;
        char buf[DETAIL_MAX];
        for (size_t i = 0; i < arr_len(mounts); i++) {
                json_object *m = at(mounts, i),
                            *top = kb_procfs_mount_of(mounts, kb_fact_str_or(m, FACT_MOUNT_MOUNTPOINT, ""));
                if (top && top != m)
                        continue; /* hidden under a later mount (a table without a root hides nothing) */
                if (judge_mount_writable(m) && judge_mount_is(m, "proc")) {
                        r = proc_problems(mounts, m, facts->proc_entries, problems);
                        if (r < 0)
                                return r;
                        found += r;
                }
                /* kbound makes every mount of the sandbox private before the kernel runs: one still
                 * tied to a peer group receives mounts made outside (a writable one under /usr). */
                /* Absent: in no peer group (facts.def: NONE, read as 0; a group's id is never 0). */
                int64_t master = kb_fact_int_or(m, FACT_MOUNT_MASTER, 0),
                        shared = kb_fact_int_or(m, FACT_MOUNT_SHARED, 0);
                if (master != 0 || shared != 0) {
                        if ((r = push_problem(problems,
                                              "the sandbox's mount at %s is %s peer group %" PRId64
                                              ": mounts made %s appear in the sandbox",
                                              mount_point(m), master != 0 ? "a slave of" : "a member of",
                                              master != 0 ? master : shared,
                                              master != 0 ? "under it outside the sandbox"
                                                          : "in the group's other mounts")) < 0)
                                return r;
                        found++;
                }
                const char *why = judge_mount_writable(m) ? foreign_mount(m, facts, buf, sizeof buf) : NULL;
                if (!why)
                        why = device_mount(m, facts, buf, sizeof buf);
                if (!why)
                        continue;
                if ((r = push_problem(problems, "%s", why)) < 0)
                        return r;
                found++;
        }
        return found;
}

/* True if a file created at path (inside the sandbox) lands on a writable mount of the sandbox's
 * own, by the host's table. */
static bool lands_privately(json_object *mounts, const kb_judge_mount_facts *f, const char *path) {
        json_object *m = kb_procfs_mount_of(mounts, path);
        char buf[DETAIL_MAX];
        return m && judge_mount_writable(m) && !foreign_mount(m, f, buf, sizeof buf);
}

/* The mount table a process sees. */
json_object *judge_mounts_of(json_object *snap, json_object *p) {
        json_object *kernel_mounts = kb_fact_arr_of(snap, FACT_LOOK_MOUNTS);
        const char *key = NULL;
        char buf[32];
        int64_t mnt = judge_ns_inode(kb_fact_map_of(p, FACT_PROCESS_NS), "mnt");
        if (mnt > 0) {
                snprintf(buf, sizeof buf, "%lld", (long long) mnt);
                key = buf;
        }
        json_object *other = key ? judge_map_at(kb_fact_map_of(snap, FACT_LOOK_MOUNT_TABLES), key) : NULL;
        return other ? other : kernel_mounts;
}

/* What a look's mount tables are judged against. */
kb_judge_mount_facts judge_mount_facts(const kb_judge_input *in, json_object *snap) {
        json_object *launcher = kb_fact_obj_of(judge_last_look(in), FACT_LOOK_LAUNCHER);
        return (kb_judge_mount_facts){.host_mounts = kb_fact_arr_of(in->host, FACT_HOST_MOUNTS),
                                      .proc_entries = kb_fact_arr_of(in->host, FACT_HOST_PROC_ENTRIES),
                                      .team_binds = kb_fact_arr_of(in->expect, FACT_EXPECT_TEAM_BINDS),
                                      .outside = kb_fact_obj_of(snap, FACT_LOOK_OUTSIDE_MOUNTS),
                                      .bwrap_argv = kb_fact_arr_of(launcher, FACT_LAUNCHER_ARGV)};
}

/* The first process of snap in the mount namespace key (an inode, as "mount_tables" keys them). */
static json_object *table_owner(json_object *snap, const char *key) {
        json_object *procs = kb_fact_arr_of(snap, FACT_LOOK_PROCESSES);
        for (size_t i = 0; i < arr_len(procs); i++) {
                char ino[32];
                snprintf(ino, sizeof ino, "%" PRId64,
                         judge_ns_inode(kb_fact_map_of(at(procs, i), FACT_PROCESS_NS), "mnt"));
                if (strcmp(ino, key) == 0)
                        return at(procs, i);
        }
        return NULL;
}

/* The problems of one mount table, into out, each once; one of another mount namespace than the
 * kernel's (other) is said as in that of owner, its first process. 0 or -ENOMEM. */
static int table_problems(json_object *out, json_object *table, const kb_judge_mount_facts *f, bool other,
                          json_object *owner) {
        char buf[DETAIL_MAX];
        json_object *found = json_object_new_array();
        if (!found || kb_judge_mount_problems(table, f, found) < 0) {
                json_object_put(found);
                return -ENOMEM;
        }
        for (size_t i = 0; i < arr_len(found); i++) {
                const char *text = json_object_get_string(at(found, i));
                if (other) {
                        snprintf(buf, sizeof buf, "in the mount namespace of pid %" PRId64 " (%s): %s",
                                 judge_pid_of(owner), judge_name_of(owner), text);
                        text = buf;
                }
                judge_add_unique(out, text);
        }
        json_object_put(found);
        return 0;
}

/* The problems of every mount table of every look (the kernel's and those of any other mount
 * namespace among the sandbox's processes), once each, into out. Returns how many tables the last
 * look had, or -ENOMEM. */
static int every_table_problems(const kb_judge_input *in, json_object *out) {
        int tables = 0;
        char buf[DETAIL_MAX];
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *snap = at(in->snapshots, s);
                kb_judge_mount_facts f = judge_mount_facts(in, snap);
                tables = 1;
                if (table_problems(out, kb_fact_arr_of(snap, FACT_LOOK_MOUNTS), &f, false, NULL) < 0)
                        return -ENOMEM;
                /* The other mount namespaces' tables: not read is never none. */
                json_object *others = kb_fact_map_of(snap, FACT_LOOK_MOUNT_TABLES);
                if (!others) {
                        snprintf(buf, sizeof buf,
                                 "the host did not read the mount tables of the sandbox's other mount namespaces (%s)",
                                 kb_fact_str_or(snap, FACT_LOOK_LABEL, "?"));
                        judge_add_unique(out, buf);
                } else {
                        json_object_object_foreach(others, key, table) {
                                tables++;
                                if (table_problems(out, table, &f, true, table_owner(snap, key)) < 0)
                                        return -ENOMEM;
                        }
                        /* Every mount namespace a process of the look is in has its table: one
                         * missing is a table not judged, never the kernel's by default. */
                        json_object *procs = kb_fact_arr_of(snap, FACT_LOOK_PROCESSES), *kernel = NULL;
                        int64_t kpid = kb_fact_int_or(in->expect, FACT_EXPECT_KERNEL_PID, -1);
                        for (size_t i = 0; i < arr_len(procs); i++)
                                if (judge_pid_of(at(procs, i)) == kpid)
                                        kernel = at(procs, i);
                        int64_t kmnt = judge_ns_inode(kb_fact_map_of(kernel, FACT_PROCESS_NS), "mnt");
                        for (size_t i = 0; kernel && i < arr_len(procs); i++) {
                                json_object *p = at(procs, i);
                                int64_t mnt = judge_ns_inode(kb_fact_map_of(p, FACT_PROCESS_NS), "mnt");
                                /* A namespace not read: which table the process sees is unknown (a
                                 * zombie sees none). The kernel's missing, the look already fails. */
                                if (mnt <= 0 && !judge_zombie(p)) {
                                        snprintf(buf, sizeof buf,
                                                 "the host could not read the mount namespace of pid %" PRId64
                                                 " (%s) (%s): what it reaches there was not judged",
                                                 judge_pid_of(p), judge_name_of(p),
                                                 kb_fact_str_or(snap, FACT_LOOK_LABEL, "?"));
                                        judge_add_unique(out, buf);
                                }
                                char ns[32];
                                snprintf(ns, sizeof ns, "%" PRId64, mnt);
                                if (mnt <= 0 || kmnt <= 0 || mnt == kmnt || judge_map_at(others, ns))
                                        continue;
                                snprintf(buf, sizeof buf,
                                         "the host did not read the mount table of pid %" PRId64
                                         " (%s)'s mount namespace %s (%s): what it reaches there was not judged",
                                         judge_pid_of(p), judge_name_of(p), ns,
                                         kb_fact_str_or(snap, FACT_LOOK_LABEL, "?"));
                                judge_add_unique(out, buf);
                        }
                }
                if (judge_look_error(snap, WHAT_MOUNT_TABLE, buf, sizeof buf)) {
                        char text[DETAIL_MAX + 64];
                        snprintf(text, sizeof text, "the host could not read every mount table of the sandbox (%s)",
                                 buf);
                        judge_add_unique(out, text);
                }
        }
        return tables;
}

json_object *kb_judge_write_outside(const kb_judge_input *in) {
        static const char *const subprobes[] = {"mounts", "write_outside", "sysctl", NULL};
        verdict v;
        verdict_init(&v);
        json_object *host_mounts = kb_fact_arr_of(in->host, FACT_HOST_MOUNTS), *last = judge_last_look(in);
        json_object *mounts = kb_fact_arr_of(last, FACT_LOOK_MOUNTS),
                    *outside = kb_fact_obj_of(last, FACT_LOOK_OUTSIDE_MOUNTS);
        /* Counts of the outside read as they are, -1 when not read (then the writable mounts that
         * rest on them fail: judge_not_own). */
        int64_t outside_namespaces = kb_fact_int_or(outside, FACT_OUTSIDE_MOUNTS_NAMESPACES, -1),
                outside_unreadable = kb_fact_int_or(outside, FACT_OUTSIDE_MOUNTS_UNREADABLE, -1);
        json_object *host_problems = json_object_new_array();
        kb_judge_mount_facts facts = judge_mount_facts(in, last);
        char buf[DETAIL_MAX];
        int tables = 0;
        judge_look_problems(&v, in);
        if (arr_len(host_mounts) == 0)
                verdict_problem(&v, "the host could not read its own mounts");
        else if (host_problems && (tables = every_table_problems(in, host_problems)) < 0)
                v.oom = true;
        /* a mount bwrap was not asked for, or not so, that lets the sandbox write or open devices
         * where the plan did not: whatever lies under it (sandbox.backend names every difference) */
        if (host_problems && judge_plan_problems(in, NULL, host_problems) < 0)
                v.oom = true;
        for (size_t i = 0; i < arr_len(host_problems); i++)
                verdict_problem(&v, "%s", json_object_get_string(at(host_problems, i)));
        verdict_evidence(&v, "host_mount_problems", host_problems);
        verdict_evidence(&v, "mount_tables", json_object_new_int(tables));
        verdict_evidence(&v, "outside_mount_namespaces", json_object_new_int64(outside_namespaces));
        verdict_evidence(&v, "outside_processes_unreadable", json_object_new_int64(outside_unreadable));

        judge_no_probe(&v, in);
        if (judge_cell_error(kb_fact_arr_of(in->probe, FACT_PROBE_ERRORS), subprobes, buf, sizeof buf))
                verdict_problem(&v, "%s", buf);
        json_object *attempts = kb_fact_arr_of(in->probe, FACT_PROBE_WRITE_OUTSIDE),
                    *sysctl = kb_fact_arr_of(in->probe, FACT_PROBE_SYSCTL);
        size_t n = arr_len(attempts), private_writes = 0;
        if (in->probe && n == 0)
                verdict_problem(&v, "the cell reported no write attempts");
        if (in->probe && arr_len(sysctl) == 0)
                verdict_problem(&v, "the cell reported no attempt on host settings");
        for (size_t i = 0; i < n; i++) {
                json_object *a = at(attempts, i);
                const char *path = kb_fact_str_of(a, FACT_PROBE_WRITE_PATH);
                if (!kb_fact_bool_of(a, FACT_PROBE_WRITE_CREATED))
                        continue;
                /* Judged on the host's own table: where would a file at that path land? */
                if (path && lands_privately(mounts, &facts, path))
                        private_writes++;
                else
                        verdict_problem(
                                &v,
                                "the cell created a file in %s, on a mount the host does not class as the sandbox's "
                                "own",
                                path ? path : "?");
        }
        json_object *seen = kb_fact_arr_of(in->expect, FACT_EXPECT_ESCAPES_SEEN);
        for (size_t i = 0; i < arr_len(seen); i++)
                verdict_problem(&v, "the host sees the cell's file at %s", json_object_get_string(at(seen, i)));
        for (size_t i = 0; i < arr_len(sysctl); i++)
                if (kb_fact_bool_of(at(sysctl, i), FACT_PROBE_SYSCTL_OPENED))
                        verdict_problem(&v, "the cell opened the host setting %s for writing",
                                        kb_fact_str_or(at(sysctl, i), FACT_PROBE_SYSCTL_PATH, "?"));
        verdict_evidence(&v, "attempts", json_object_new_int64((int64_t) n));
        verdict_evidence(&v, "sandbox_private_writes", json_object_new_int64((int64_t) private_writes));
        verdict_evidence_fact(&v, EVIDENCE_WRITE_OUTSIDE_SYSCTL, json_object_get(sysctl));
        char pass[768];
        snprintf(pass, sizeof pass,
                 "every writable mount of the sandbox's %d mount table%s (read by the host) is the sandbox's own (no "
                 "mount namespace outside it holds it; %" PRId64 " read) or the team's; none but kbound's /dev nodes "
                 "lets device nodes open; /proc's host-global entries read-only",
                 tables, tables == 1 ? "" : "s", outside_namespaces);
        if (!in->cells_absent)
                snprintf(pass + strlen(pass), sizeof pass - strlen(pass),
                         "; the cell tried %zu places (%zu writes stayed private), nothing appeared in %" PRId64
                         " host folders; %zu host settings refused",
                         n, private_writes, kb_fact_int_or(in->expect, FACT_EXPECT_ESCAPE_DIRS, 0), arr_len(sysctl));
        return verdict_end(&v, KB_CHECK_WRITE_OUTSIDE, pass);
}

json_object *kb_judge_write_outside_before_start(const kb_judge_input *in) {
        verdict v;
        verdict_init(&v);
        json_object *pe = in->pre_exec, *host_mounts = kb_fact_arr_of(in->host, FACT_HOST_MOUNTS);
        kb_judge_mount_facts facts = {
                .host_mounts = host_mounts,
                .proc_entries = kb_fact_arr_of(in->host, FACT_HOST_PROC_ENTRIES),
                .team_binds = kb_fact_arr_of(in->expect, FACT_EXPECT_TEAM_BINDS),
                .bwrap_argv = kb_fact_arr_of(kb_fact_obj_of(pe, FACT_LOOK_LAUNCHER), FACT_LAUNCHER_ARGV),
                .before_exec = true,
        };
        json_object *found = json_object_new_array();
        char buf[DETAIL_MAX];
        if (arr_len(host_mounts) == 0)
                verdict_problem(&v, "the host could not read its own mounts");
        else if (judge_look_error(pe, WHAT_INIT_MOUNTS, buf, sizeof buf))
                verdict_problem(&v, "the host could not read the mount table of bwrap's init (%s)", buf);
        else if (!found || table_problems(found, kb_fact_arr_of(pe, FACT_LOOK_MOUNTS), &facts, false, NULL) < 0)
                v.oom = true;
        for (size_t i = 0; i < arr_len(found); i++)
                verdict_problem(&v, "%s", json_object_get_string(at(found, i)));
        verdict_evidence(&v, "host_mount_problems", found);
        verdict_evidence(&v, "mount_tables", json_object_new_int(1));
        return verdict_end_before_start(&v, KB_CHECK_WRITE_OUTSIDE,
                                        "the mount table of bwrap's init, which the kernel was to run in (its "
                                        "private filesystems held to what bwrap was told to make: no mount "
                                        "namespace outside is read before exec)");
}

json_object *kb_judge_workspace(const kb_judge_input *in) {
        static const char *const subprobes[] = {"workspace", NULL};
        verdict v;
        verdict_init(&v);
        char buf[DETAIL_MAX];
        judge_no_probe(&v, in);
        json_object *ws = kb_fact_obj_of(in->probe, FACT_PROBE_WORKSPACE);
        bool read_back = kb_fact_bool_of(in->expect, FACT_EXPECT_WORKSPACE_READ_BACK);
        if (judge_cell_error(kb_fact_arr_of(in->probe, FACT_PROBE_ERRORS), subprobes, buf, sizeof buf))
                verdict_problem(&v, "%s", buf);
        if (in->probe && !kb_fact_bool_of(ws, FACT_PROBE_WORKSPACE_WRITTEN))
                verdict_problem(&v, "the cell could not write to its workspace (%s)",
                                kb_fact_str_or(ws, FACT_PROBE_WORKSPACE_ERROR, "no reason given"));
        if (!read_back)
                verdict_problem(&v, "the host did not find the cell's nonce in the workspace");
        verdict_evidence_fact(&v, EVIDENCE_WORKSPACE_WRITABLE_CELL, json_object_get(ws));
        verdict_evidence(&v, "host_read_back", json_object_new_boolean(read_back));
        return verdict_end(&v, KB_CHECK_WORKSPACE_WRITABLE,
                           judge_audited(in) ? "the cell wrote a nonce to the kernel's workspace; the host read the "
                                               "same nonce back through the kernel's root"
                                             : "the cell wrote a nonce to /workspace; the host read the same nonce "
                                               "back");
}

/* ---- reachability (sockets, canaries) ---- */

/* The mount tables of a look: the kernel's first (NULL if unread), then those of any other mount
 * namespace among the sandbox's processes (at most max in all). Returns how many. */
size_t judge_look_tables(json_object *snap, json_object **out, size_t max) {
        size_t n = 0;
        out[n++] = kb_fact_arr_of(snap, FACT_LOOK_MOUNTS);
        json_object *others = kb_fact_map_of(snap, FACT_LOOK_MOUNT_TABLES);
        if (others) {
                json_object_object_foreach(others, key, table) {
                        (void) key;
                        if (n < max)
                                out[n++] = table;
                }
        }
        return n;
}

/* A mount of any of snap's mount tables that a lookup reaches and that is on device dev, or NULL. */
static json_object *mount_on_dev(json_object *snap, const char *dev) {
        json_object *tables[KB_INSPECT_MOUNT_TABLES_MAX];
        size_t n = judge_look_tables(snap, tables, KB_INSPECT_MOUNT_TABLES_MAX);
        for (size_t t = 0; dev && t < n; t++)
                for (size_t i = 0; i < arr_len(tables[t]); i++) {
                        json_object *m = at(tables[t], i);
                        const char *d = kb_fact_str_of(m, FACT_MOUNT_DEV);
                        json_object *top = kb_procfs_mount_of(tables[t], kb_fact_str_or(m, FACT_MOUNT_MOUNTPOINT, ""));
                        if (d && strcmp(d, dev) == 0 && (!top || top == m))
                                return m;
                }
        return NULL;
}

/* A problem, unless said is NULL (out of memory: then always) or already holds it. */
static void problem_once(verdict *v, json_object *said, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void problem_once(verdict *v, json_object *said, const char *fmt, ...) {
        char text[DETAIL_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        if (str_in(said, text))
                return;
        if (said)
                json_object_array_add(said, json_object_new_string(text));
        verdict_problem(v, "%s", text);
}

/* The problems of reach entry e (of look s) the mounts expose, each once (said), and e into report
 * (the first look's, once) when there is one. */
static void reach_entry_problems(verdict *v, json_object *snap, size_t s, json_object *e, json_object *said,
                                 json_object *report) {
        const char *name = kb_fact_str_or(e, FACT_REACH_NAME, "?"), *path = kb_fact_str_or(e, FACT_REACH_PATH, "?");
        const char *error = kb_fact_str_of(e, FACT_REACH_ERROR), *dev = kb_fact_str_of(e, FACT_REACH_DEV);
        if (error)
                problem_once(v, said, "the host could not place the %s (%s): %s", name, path, error);
        json_object *exposed = kb_fact_arr_of(e, FACT_REACH_EXPOSED);
        bool listed = false;
        /* Absent where the object is a folder, which has one name (and where it was not placed,
         * which error says). */
        int64_t links = kb_fact_int_or(e, FACT_REACH_LINKS, 1);
        json_object *on_dev = links > 1 ? mount_on_dev(snap, dev) : NULL;
        if (on_dev) {
                problem_once(v, said,
                             "the %s %s has %" PRId64 " names (hard links) and the sandbox's mount at %s is on "
                             "its filesystem (%s): another of its names could be inside the sandbox",
                             name, path, links, mount_point(on_dev), dev ? dev : "?");
                if (report && s == 0)
                        json_object_array_add(report, json_object_get(e));
                listed = true;
        }
        for (size_t x = 0; x < arr_len(exposed); x++) {
                json_object *where = at(exposed, x);
                const char *err = kb_fact_str_of(where, FACT_EXPOSURE_ERROR),
                           *place = kb_fact_str_or(where, FACT_EXPOSURE_AT, "?");
                char table[64] = "";
                int64_t pid;
                if (kb_fact_int_of(where, FACT_EXPOSURE_PID, &pid))
                        snprintf(table, sizeof table, " (in the mount namespace of pid %" PRId64 ")", pid);
                if (kb_fact_bool_of(where, FACT_EXPOSURE_CONFIRMED))
                        problem_once(v, said, "the %s %s is reachable in the sandbox at %s%s", name, path, place,
                                     table);
                else if (!err || strcmp(err, "No such file or directory") != 0)
                        problem_once(v, said,
                                     "the %s %s is exposed at %s%s by the sandbox's mounts (the host could not "
                                     "confirm: %s)",
                                     name, path, place, table, err ? err : "?");
                else
                        continue; /* disproved: not exposed */
                if (report && s == 0 && !listed)
                        json_object_array_add(report, json_object_get(e));
                listed = true;
        }
}

/* Fails for every reach entry of kind/claim that the mounts expose (confirmed by the host, or not
 * disproved: only "no such file there" clears an exposure the table shows), and for every one with
 * more than one name (hard link) on a filesystem a sandbox mount shows: its other names are
 * nowhere the host can enumerate, so any of them may lie under that mount. An entry that names no
 * kind or no check could be anyone's: it fails every check that reads the reach. */
size_t judge_reach_problems(verdict *v, const kb_judge_input *in, const char *kind, kb_check claim_check,
                            json_object *report) {
        const char *claim = judge_check_id(claim_check);
        size_t checked = 0;
        json_object *said = json_object_new_array(); /* every look is read; each problem is said once */
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *reach = kb_fact_arr_of(at(in->snapshots, s), FACT_LOOK_REACH);
                for (size_t i = 0; i < arr_len(reach); i++) {
                        json_object *e = at(reach, i);
                        const char *k = kb_fact_str_of(e, FACT_REACH_KIND), *c = kb_fact_str_of(e, FACT_REACH_CLAIM);
                        if (!k || !c) {
                                problem_once(v, said, "the host's look at the %s (%s) names no %s it belongs to",
                                             kb_fact_str_or(e, FACT_REACH_NAME, "?"),
                                             kb_fact_str_or(e, FACT_REACH_PATH, "?"), !k ? "kind" : "check");
                                continue;
                        }
                        if (strcmp(k, kind) != 0 || strcmp(c, claim) != 0)
                                continue;
                        if (s == 0)
                                checked++;
                        reach_entry_problems(v, at(in->snapshots, s), s, e, said, report);
                }
        }
        json_object_put(said);
        return checked;
}
