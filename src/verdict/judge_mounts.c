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

static bool mount_writable(json_object *m) {
        json_object *w = kb_json_get(m, "writable");
        /* Unknown writability is writable: a mount is proven read-only or it is not. */
        return !w || !json_object_is_type(w, json_type_boolean) || json_object_get_boolean(w);
}

bool judge_mount_writable(json_object *m) {
        return mount_writable(m);
}

bool judge_mount_is(json_object *m, const char *fstype) {
        const char *t = kb_json_str(m, "fstype");
        return t && strcmp(t, fstype) == 0;
}

/* True if dev ("maj:min") is mounted anywhere in host_mounts. */
bool judge_host_has_dev(json_object *host_mounts, const char *dev) {
        for (size_t i = 0; dev && i < arr_len(host_mounts); i++) {
                const char *d = kb_json_str(at(host_mounts, i), "dev");
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

/* The team bind (by name) a mount's target is, or NULL. */
static const char *team_bind_of(json_object *m, json_object *team_binds) {
        json_object *target = kb_json_get(m, "target");
        const char *dev = kb_json_str(target, "dev");
        int64_t ino = int_or(target, "ino", -1);
        for (size_t i = 0; dev && i < arr_len(team_binds); i++) {
                json_object *b = at(team_binds, i);
                const char *bdev = kb_json_str(b, "dev");
                if (bdev && strcmp(bdev, dev) == 0 && int_or(b, "ino", -2) == ino)
                        return str_or(b, "name", "team folder");
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
        const char *dev = kb_json_str(m, "dev");
        json_object *devices = kb_json_get(f->outside, "devices");
        int64_t holder, unreadable = int_or(f->outside, "unreadable", -1);
        if (!dev)
                return "its device is unknown";
        if (judge_host_has_dev(f->host_mounts, dev)) {
                snprintf(buf, size, "kbound's own mount namespace holds its device %s", dev);
                return buf;
        }
        if (kb_json_int(devices, dev, &holder)) {
                snprintf(buf, size,
                         "the mount namespace of pid %" PRId64 ", outside the sandbox, holds its device %s too", holder,
                         dev);
                return buf;
        }
        if (!json_object_is_type(devices, json_type_object) || unreadable < 0)
                return "the host did not read the mount namespaces outside the sandbox";
        const char *fresh = unreadable > 0 ? planned_fresh(f->bwrap_argv, kb_json_str(m, "mountpoint")) : NULL;
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
        if (kb_json_true(m, "nodev"))
                return NULL;
        json_object *target = kb_json_get(m, "target");
        const char *type = kb_json_str(target, "type");
        char why[256];
        if (type && strcmp(type, "chr") == 0 && judge_harmless_char(kb_json_str(target, "rdev"), true))
                return NULL;
        if (judge_mount_is(m, "devpts") && !judge_not_own(m, f, why, sizeof why))
                return NULL;
        snprintf(buf, size,
                 "a mount at %s (%s %s, root %s) lets device nodes be opened (no nodev) and is not one of "
                 "kbound's own /dev nodes",
                 str_or(m, "mountpoint", "?"), str_or(m, "fstype", "?"), str_or(m, "source", "?"),
                 str_or(m, "root", "?"));
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
        const char *root = str_or(m, "root", "/"), *mp = str_or(m, "mountpoint", "?");
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
                if (cover && (!judge_mount_is(cover, "proc") || !mount_writable(cover)))
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
        const char *dev = kb_json_str(m, "dev"), *shared = NULL;
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
        json_object *target = kb_json_get(m, "target");
        const char *type = kb_json_str(target, "type");
        if (type && strcmp(type, "chr") == 0 && judge_harmless_char(kb_json_str(target, "rdev"), true))
                return NULL;
        if (shared)
                snprintf(buf, size, "a writable mount at %s (%s %s, root %s) is not the sandbox's own: %s",
                         str_or(m, "mountpoint", "?"), str_or(m, "fstype", "?"), str_or(m, "source", "?"),
                         str_or(m, "root", "?"), shared);
        else if (!target && kb_json_str(m, "target_error"))
                snprintf(buf, size, "a writable mount at %s (%s %s, root %s) could not be examined by the host (%s)",
                         str_or(m, "mountpoint", "?"), str_or(m, "fstype", "?"), str_or(m, "source", "?"),
                         str_or(m, "root", "?"), kb_json_str(m, "target_error"));
        else
                snprintf(buf, size, "a writable mount at %s (%s %s, root %s) is backed by the host",
                         str_or(m, "mountpoint", "?"), str_or(m, "fstype", "?"), str_or(m, "source", "?"),
                         str_or(m, "root", "?"));
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
                json_object *m = at(mounts, i), *top = kb_procfs_mount_of(mounts, str_or(m, "mountpoint", ""));
                if (top && top != m)
                        continue; /* hidden under a later mount (a table without a root hides nothing) */
                if (mount_writable(m) && judge_mount_is(m, "proc")) {
                        r = proc_problems(mounts, m, facts->proc_entries, problems);
                        if (r < 0)
                                return r;
                        found += r;
                }
                /* kbound makes every mount of the sandbox private before the kernel runs: one still
                 * tied to a peer group receives mounts made outside (a writable one under /usr). */
                int64_t master = int_or(m, "master", -1), shared = int_or(m, "shared", -1);
                if (master >= 0 || shared >= 0) {
                        if ((r = push_problem(problems,
                                              "the sandbox's mount at %s is %s peer group %" PRId64
                                              ": mounts made %s appear in the sandbox",
                                              str_or(m, "mountpoint", "?"), master >= 0 ? "a slave of" : "a member of",
                                              master >= 0 ? master : shared,
                                              master >= 0 ? "under it outside the sandbox"
                                                          : "in the group's other mounts")) < 0)
                                return r;
                        found++;
                }
                const char *why = mount_writable(m) ? foreign_mount(m, facts, buf, sizeof buf) : NULL;
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
        return m && mount_writable(m) && !foreign_mount(m, f, buf, sizeof buf);
}

/* The mount table a process sees. */
json_object *judge_mounts_of(json_object *snap, json_object *p) {
        json_object *kernel_mounts = kb_json_get(snap, "mounts");
        const char *key = NULL;
        char buf[32];
        int64_t mnt = int_or(kb_json_get(p, "ns"), "mnt", -1);
        if (mnt > 0) {
                snprintf(buf, sizeof buf, "%lld", (long long) mnt);
                key = buf;
        }
        json_object *other = key ? kb_json_get(kb_json_get(snap, "mount_tables"), key) : NULL;
        return other ? other : kernel_mounts;
}

/* What a look's mount tables are judged against. */
kb_judge_mount_facts judge_mount_facts(const kb_judge_input *in, json_object *snap) {
        return (kb_judge_mount_facts){.host_mounts = kb_json_get(in->host, "mounts"),
                                      .proc_entries = kb_json_get(in->host, "proc_entries"),
                                      .team_binds = kb_json_get(in->expect, "team_binds"),
                                      .outside = kb_json_get(snap, "outside_mounts"),
                                      .bwrap_argv = kb_json_get(kb_json_get(judge_last_look(in), "launcher"), "argv")};
}

/* The first process of snap in the mount namespace key (an inode, as "mount_tables" keys them). */
static json_object *table_owner(json_object *snap, const char *key) {
        json_object *procs = kb_json_get(snap, "processes");
        for (size_t i = 0; i < arr_len(procs); i++) {
                char ino[32];
                snprintf(ino, sizeof ino, "%" PRId64, int_or(kb_json_get(at(procs, i), "ns"), "mnt", -1));
                if (strcmp(ino, key) == 0)
                        return at(procs, i);
        }
        return NULL;
}

/* The problems of every mount table of every look (the kernel's and those of any other mount
 * namespace among the sandbox's processes), once each, into out. Returns how many tables the last
 * look had, or -ENOMEM. */
static int every_table_problems(const kb_judge_input *in, json_object *out) {
        int tables = 0;
        char buf[DETAIL_MAX];
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *snap = at(in->snapshots, s), *found = json_object_new_array();
                kb_judge_mount_facts f = judge_mount_facts(in, snap);
                tables = 1;
                if (!found || kb_judge_mount_problems(kb_json_get(snap, "mounts"), &f, found) < 0) {
                        json_object_put(found);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < arr_len(found); i++)
                        judge_add_unique(out, json_object_get_string(at(found, i)));
                json_object_put(found);
                json_object *others = kb_json_get(snap, "mount_tables");
                if (!json_object_is_type(others, json_type_object))
                        continue;
                json_object_object_foreach(others, key, table) {
                        json_object *owner = table_owner(snap, key);
                        tables++;
                        found = json_object_new_array();
                        if (!found || kb_judge_mount_problems(table, &f, found) < 0) {
                                json_object_put(found);
                                return -ENOMEM;
                        }
                        for (size_t i = 0; i < arr_len(found); i++) {
                                snprintf(buf, sizeof buf, "in the mount namespace of pid %" PRId64 " (%s): %s",
                                         int_or(owner, "pid", -1), str_or(owner, "name", "?"),
                                         json_object_get_string(at(found, i)));
                                judge_add_unique(out, buf);
                        }
                        json_object_put(found);
                }
                if (judge_fact_error(snap, "a mount table", buf, sizeof buf)) {
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
        json_object *host_mounts = kb_json_get(in->host, "mounts"), *last = judge_last_look(in);
        json_object *mounts = kb_json_get(last, "mounts"), *outside = kb_json_get(last, "outside_mounts");
        json_object *host_problems = json_object_new_array();
        kb_judge_mount_facts facts = judge_mount_facts(in, last);
        char buf[DETAIL_MAX];
        int tables = 0;
        judge_look_problems(&v, in);
        if (arr_len(host_mounts) == 0)
                verdict_problem(&v, "the host could not read its own mounts");
        else if (host_problems && (tables = every_table_problems(in, host_problems)) < 0)
                v.oom = true;
        for (size_t i = 0; i < arr_len(host_problems); i++)
                verdict_problem(&v, "%s", json_object_get_string(at(host_problems, i)));
        verdict_evidence(&v, "host_mount_problems", host_problems);
        verdict_evidence(&v, "mount_tables", json_object_new_int(tables));
        verdict_evidence(&v, "outside_mount_namespaces", json_object_new_int64(int_or(outside, "namespaces", -1)));
        verdict_evidence(&v, "outside_processes_unreadable", json_object_new_int64(int_or(outside, "unreadable", -1)));

        judge_no_probe(&v, in);
        if (judge_cell_error(kb_fact_arr_of(in->probe, FACT_PROBE_ERRORS), subprobes, buf, sizeof buf))
                verdict_problem(&v, "%s", buf);
        json_object *attempts = kb_json_get(in->probe, "write_outside"), *sysctl = kb_json_get(in->probe, "sysctl");
        size_t n = arr_len(attempts), private_writes = 0;
        if (in->probe && n == 0)
                verdict_problem(&v, "the cell reported no write attempts");
        if (in->probe && arr_len(sysctl) == 0)
                verdict_problem(&v, "the cell reported no attempt on host settings");
        for (size_t i = 0; i < n; i++) {
                json_object *a = at(attempts, i);
                const char *path = kb_json_str(a, "path");
                if (!kb_json_true(a, "created"))
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
        json_object *seen = kb_json_get(in->expect, "escapes_seen");
        for (size_t i = 0; i < arr_len(seen); i++)
                verdict_problem(&v, "the host sees the cell's file at %s", json_object_get_string(at(seen, i)));
        for (size_t i = 0; i < arr_len(sysctl); i++)
                if (kb_json_true(at(sysctl, i), "opened"))
                        verdict_problem(&v, "the cell opened the host setting %s for writing",
                                        str_or(at(sysctl, i), "path", "?"));
        verdict_evidence(&v, "attempts", json_object_new_int64((int64_t) n));
        verdict_evidence(&v, "sandbox_private_writes", json_object_new_int64((int64_t) private_writes));
        verdict_evidence(&v, "sysctl", json_object_get(sysctl));
        char pass[768];
        snprintf(pass, sizeof pass,
                 "every writable mount of the sandbox's %d mount table%s (read by the host) is the sandbox's own (no "
                 "mount namespace outside it holds it; %" PRId64 " read) or the team's; none but kbound's /dev nodes "
                 "lets device nodes open; /proc's host-global entries read-only",
                 tables, tables == 1 ? "" : "s", int_or(outside, "namespaces", 0));
        if (!in->cells_absent)
                snprintf(pass + strlen(pass), sizeof pass - strlen(pass),
                         "; the cell tried %zu places (%zu writes stayed private), nothing appeared in %" PRId64
                         " host folders; %zu host settings refused",
                         n, private_writes, int_or(in->expect, "escape_dirs", 0), arr_len(sysctl));
        return verdict_end(&v, KB_CHECK_WRITE_OUTSIDE, pass);
}

json_object *kb_judge_workspace(const kb_judge_input *in) {
        static const char *const subprobes[] = {"workspace", NULL};
        verdict v;
        verdict_init(&v);
        char buf[DETAIL_MAX];
        judge_no_probe(&v, in);
        json_object *ws = kb_json_get(in->probe, "workspace");
        if (judge_cell_error(kb_fact_arr_of(in->probe, FACT_PROBE_ERRORS), subprobes, buf, sizeof buf))
                verdict_problem(&v, "%s", buf);
        if (in->probe && !kb_json_true(ws, "written"))
                verdict_problem(&v, "the cell could not write to its workspace (%s)",
                                str_or(ws, "error", "no reason given"));
        if (!kb_json_true(in->expect, "workspace_read_back"))
                verdict_problem(&v, "the host did not find the cell's nonce in the workspace");
        verdict_evidence(&v, "cell", json_object_get(ws));
        verdict_evidence(&v, "host_read_back",
                         json_object_new_boolean(kb_json_true(in->expect, "workspace_read_back")));
        return verdict_end(&v, KB_CHECK_WORKSPACE_WRITABLE,
                           "the cell wrote a nonce to /workspace; the host read the same nonce back");
}

/* ---- reachability (sockets, canaries) ---- */

/* The mount tables of a look: the kernel's first (NULL if unread), then those of any other mount
 * namespace among the sandbox's processes (at most max in all). Returns how many. */
size_t judge_look_tables(json_object *snap, json_object **out, size_t max) {
        size_t n = 0;
        out[n++] = kb_json_get(snap, "mounts");
        json_object *others = kb_json_get(snap, "mount_tables");
        if (json_object_is_type(others, json_type_object)) {
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
                        const char *d = kb_json_str(m, "dev");
                        json_object *top = kb_procfs_mount_of(tables[t], str_or(m, "mountpoint", ""));
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

/* Fails for every reach entry of kind/claim that the mounts expose (confirmed by the host, or not
 * disproved: only "no such file there" clears an exposure the table shows), and for every one with
 * more than one name (hard link) on a filesystem a sandbox mount shows: its other names are
 * nowhere the host can enumerate, so any of them may lie under that mount. */
size_t judge_reach_problems(verdict *v, const kb_judge_input *in, const char *kind, kb_check claim_check,
                            json_object *report) {
        const char *claim = judge_check_id(claim_check);
        size_t checked = 0;
        json_object *said = json_object_new_array(); /* every look is read; each problem is said once */
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *reach = kb_json_get(at(in->snapshots, s), "reach");
                for (size_t i = 0; i < arr_len(reach); i++) {
                        json_object *e = at(reach, i);
                        const char *k = kb_json_str(e, "kind"), *c = kb_json_str(e, "claim");
                        if (!k || strcmp(k, kind) != 0 || !c || strcmp(c, claim) != 0)
                                continue;
                        if (s == 0)
                                checked++;
                        const char *name = str_or(e, "name", "?"), *path = str_or(e, "path", "?");
                        if (kb_json_str(e, "error"))
                                problem_once(v, said, "the host could not place the %s (%s): %s", name, path,
                                             kb_json_str(e, "error"));
                        json_object *exposed = kb_json_get(e, "exposed");
                        bool listed = false;
                        int64_t links = int_or(e, "links", 1);
                        json_object *on_dev =
                                links > 1 ? mount_on_dev(at(in->snapshots, s), kb_json_str(e, "dev")) : NULL;
                        if (on_dev) {
                                problem_once(v, said,
                                             "the %s %s has %" PRId64
                                             " names (hard links) and the sandbox's mount at %s is on "
                                             "its filesystem (%s): another of its names could be inside the sandbox",
                                             name, path, links, str_or(on_dev, "mountpoint", "?"),
                                             str_or(e, "dev", "?"));
                                if (report && s == 0)
                                        json_object_array_add(report, json_object_get(e));
                                listed = true;
                        }
                        for (size_t x = 0; x < arr_len(exposed); x++) {
                                json_object *where = at(exposed, x);
                                const char *err = kb_json_str(where, "error");
                                char table[64] = "";
                                if (kb_json_get(where, "pid"))
                                        snprintf(table, sizeof table, " (in the mount namespace of pid %" PRId64 ")",
                                                 int_or(where, "pid", -1));
                                if (kb_json_true(where, "confirmed"))
                                        problem_once(v, said, "the %s %s is reachable in the sandbox at %s%s", name,
                                                     path, str_or(where, "at", "?"), table);
                                else if (!err || strcmp(err, "No such file or directory") != 0)
                                        problem_once(v, said,
                                                     "the %s %s is exposed at %s%s by the sandbox's mounts (the host "
                                                     "could not "
                                                     "confirm: %s)",
                                                     name, path, str_or(where, "at", "?"), table, err ? err : "?");
                                else
                                        continue; /* disproved: not exposed */
                                if (report && s == 0 && !listed)
                                        json_object_array_add(report, json_object_get(e));
                                listed = true;
                        }
                }
        }
        json_object_put(said);
        return checked;
}
