/* judge_plan.c: every mount of every mount table of every look is one kbound planned (LAUNCH's
 * mounts), matched by what it shows, where, and with which options: what bwrap did not build as
 * planned (sandbox.backend), and what of that lets the sandbox write or open devices beyond the plan
 * (boundary.write_outside). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "verdict/judge-internal.h"
#include "base/procfs.h"

/* A tmpfs's size is kept in pages: what the table says may lie above the bytes asked by up to one
 * page (64 KiB: the largest page of the architectures kbound runs on). */
#define PLAN_SIZE_SLACK 65536

/* What one table is matched with, and where its problems go. */
typedef struct table_ctx {
        json_object *plan;        /* LAUNCH's mounts (PLANNED_MOUNT) */
        json_object *host_mounts; /* kbound's own table: no fresh filesystem is on a device of it */
        json_object *outside;     /* the look's OUTSIDE_MOUNTS devices, or NULL (the look before exec) */
        const char *where;        /* how a problem names the table: "", "before the kernel ran: "... */
        json_object *all;         /* every problem (sandbox.backend); may be NULL */
        json_object *widening;    /* those that widen the writes (boundary.write_outside); may be NULL */
        int oom;
} table_ctx;

/* Why mount m does not show what plan entry p asks, or NULL. buf holds the words; *widens is set
 * when the difference lets the sandbox write or open devices where the plan did not. */
static const char *what_differs(json_object *p, json_object *m, json_object *const *matched, const table_ctx *c,
                                char *buf, size_t size, bool *widens);

static bool mount_writable(json_object *m) {
        return kb_fact_bool_of(m, FACT_MOUNT_WRITABLE);
}

/* Lets the sandbox write in it or open device nodes through it. */
static bool mount_opens(json_object *m) {
        return mount_writable(m) || !kb_fact_bool_of(m, FACT_MOUNT_NODEV);
}

/* (judge_mounts.c calls this file: its helpers are not called back, so no two files call each
 * other.) */
static bool is_type(json_object *m, const char *fstype) {
        const char *t = kb_fact_str_of(m, FACT_MOUNT_FSTYPE);
        return t && strcmp(t, fstype) == 0;
}

static bool has_dev(json_object *mounts, const char *dev) {
        for (size_t i = 0; dev && i < arr_len(mounts); i++) {
                const char *d = kb_fact_str_of(at(mounts, i), FACT_MOUNT_DEV);
                if (d && strcmp(d, dev) == 0)
                        return true;
        }
        return false;
}

static bool same_path(const char *a, const char *b) {
        return a && b && kb_procfs_path_under(a, b) && kb_procfs_path_under(b, a);
}

/* "/mnt/etc (ext4 /dev/vda, root /etc, read-only)": a mount as a problem names it. */
static const char *describe(json_object *m, char *buf, size_t size) {
        snprintf(buf, size, "%s (%s %s, root %s, %s%s)", kb_fact_str_or(m, FACT_MOUNT_MOUNTPOINT, "?"),
                 kb_fact_str_or(m, FACT_MOUNT_FSTYPE, "?"), kb_fact_str_or(m, FACT_MOUNT_SOURCE, "?"),
                 kb_fact_str_or(m, FACT_MOUNT_ROOT, "?"), mount_writable(m) ? "writable" : "read-only",
                 kb_fact_bool_of(m, FACT_MOUNT_NODEV) ? "" : ", device nodes allowed");
        return buf;
}

/* The bytes of a tmpfs's "size=" superblock option, or -1 when it has none. */
static int64_t tmpfs_size(json_object *m) {
        json_object *super = kb_fact_arr_of(m, FACT_MOUNT_SUPER);
        for (size_t i = 0; i < arr_len(super); i++) {
                const char *o = json_object_get_string(at(super, i));
                char *end;
                if (!o || strncmp(o, "size=", 5) != 0)
                        continue;
                unsigned long long n = strtoull(o + 5, &end, 10);
                int shift = *end == 'k' ? 10 : *end == 'm' ? 20 : *end == 'g' ? 30 : *end == '\0' ? 0 : -1;
                return shift < 0 || n > (UINT64_MAX >> 31) ? -1 : (int64_t) (n << shift);
        }
        return -1;
}

/* What differs in what a bind shows: the host object it was planned to show, by device and inode. */
static const char *bind_differs(json_object *p, json_object *m, char *buf, size_t size) {
        json_object *source = kb_fact_obj_of(p, FACT_PLANNED_MOUNT_SOURCE),
                    *target = kb_fact_obj_of(m, FACT_MOUNT_TARGET);
        int64_t ino = -1, planned_ino = -1;
        if (!source) {
                snprintf(buf, size, "kbound could not name the object it planned there (%s)",
                         kb_fact_str_or(p, FACT_PLANNED_MOUNT_SOURCE_ERROR, "no reason kept"));
                return buf;
        }
        if (!target) {
                snprintf(buf, size, "the host could not see what it shows (%s)",
                         kb_fact_str_or(m, FACT_MOUNT_TARGET_ERROR, "no reason kept"));
                return buf;
        }
        /* The path may have named another object once bwrap's mounts were made (replaced by a
         * rename in between): the bind shows one of the two, each the host's at that path. */
        json_object *after = kb_fact_obj_of(p, FACT_PLANNED_MOUNT_SOURCE_AFTER);
        int64_t after_ino = -1;
        bool known = kb_fact_int_of(target, FACT_STAT_INO, &ino),
             planned_known = kb_fact_int_of(source, FACT_FILE_ID_INO, &planned_ino),
             after_known = kb_fact_int_of(after, FACT_FILE_ID_INO, &after_ino);
        judge_file shows = judge_file_of(kb_fact_str_of(target, FACT_STAT_DEV), known, ino),
                   planned = judge_file_of(kb_fact_str_of(source, FACT_FILE_ID_DEV), planned_known, planned_ino),
                   later = judge_file_of(kb_fact_str_of(after, FACT_FILE_ID_DEV), after_known, after_ino);
        if (judge_same_file(shows, planned) || (after && judge_same_file(shows, later)))
                return NULL;
        int n = snprintf(
                buf, size, "it shows device %s inode %" PRId64 ", not %s (device %s inode %" PRId64 " on the host",
                shows.dev ? shows.dev : "?", ino, kb_fact_str_or(source, FACT_FILE_ID_PATH, "the planned source"),
                planned.dev ? planned.dev : "?", planned_ino);
        if (n >= 0 && (size_t) n < size)
                snprintf(buf + n, size - (size_t) n,
                         after ? ", then device %s inode %" PRId64 " once bwrap's mounts were made)" : ")",
                         later.dev ? later.dev : "?", after_ino);
        return buf;
}

/* What differs in a fresh filesystem: its type, that it is new (no device kbound's own mount
 * namespace or one outside the sandbox holds), its size. *opens_more: the difference is in what it
 * is, not in how big. */
static const char *fresh_differs(json_object *p, json_object *m, const table_ctx *c, char *buf, size_t size,
                                 bool *opens_more) {
        const char *want = kb_fact_str_or(p, FACT_PLANNED_MOUNT_FSTYPE, "?"), *dev = kb_fact_str_of(m, FACT_MOUNT_DEV);
        int64_t holder, asked;
        *opens_more = true;
        if (!is_type(m, want))
                snprintf(buf, size, "its filesystem is %s, not a new %s", kb_fact_str_or(m, FACT_MOUNT_FSTYPE, "?"),
                         want);
        else if (!dev || has_dev(c->host_mounts, dev))
                snprintf(buf, size, "a filesystem of kbound's own mount namespace (device %s), not a new one",
                         dev ? dev : "?");
        else if (judge_map_int(kb_fact_map_of(c->outside, FACT_OUTSIDE_MOUNTS_DEVICES), dev, &holder))
                snprintf(buf, size,
                         "a filesystem the mount namespace of pid %" PRId64
                         ", outside the sandbox, holds (device %s), not a new one",
                         holder, dev);
        else if (kb_fact_int_of(p, FACT_PLANNED_MOUNT_SIZE, &asked)) {
                int64_t has = tmpfs_size(m);
                *opens_more = false;
                if (has >= asked && has - asked < PLAN_SIZE_SLACK)
                        return NULL;
                if (has < 0)
                        snprintf(buf, size, "no size, where kbound asked %" PRId64 " bytes", asked);
                else
                        snprintf(buf, size, "a size of %" PRId64 " bytes, where kbound asked %" PRId64, has, asked);
        } else
                return NULL;
        return buf;
}

/* What differs in one of bwrap's covers of its own /proc: a proc of the same device as the one the
 * plan's --proc above it matched, at the planned root. */
static const char *cover_differs(json_object *p, json_object *m, json_object *const *matched, const table_ctx *c,
                                 char *buf, size_t size) {
        const char *mp = kb_fact_str_or(p, FACT_PLANNED_MOUNT_MOUNTPOINT, "/"),
                   *dev = kb_fact_str_of(m, FACT_MOUNT_DEV);
        const char *root = kb_fact_str_or(p, FACT_PLANNED_MOUNT_ROOT, "?");
        for (size_t i = 0; i < arr_len(c->plan); i++) {
                json_object *q = at(c->plan, i);
                const char *q_mp = kb_fact_str_of(q, FACT_PLANNED_MOUNT_MOUNTPOINT);
                const char *type = kb_fact_str_of(q, FACT_PLANNED_MOUNT_FSTYPE);
                if (!matched[i] || !type || strcmp(type, "proc") != 0 || !q_mp || !kb_procfs_path_under(mp, q_mp) ||
                    strcmp(kb_fact_str_or(q, FACT_PLANNED_MOUNT_KIND, ""), "fresh") != 0)
                        continue;
                const char *proc_dev = kb_fact_str_of(matched[i], FACT_MOUNT_DEV);
                if (is_type(m, "proc") && dev && proc_dev && strcmp(dev, proc_dev) == 0 &&
                    strcmp(kb_fact_str_or(m, FACT_MOUNT_ROOT, ""), root) == 0)
                        return NULL;
        }
        snprintf(buf, size, "not %s of the sandbox's own proc (device %s, root %s)", root, dev ? dev : "?",
                 kb_fact_str_or(m, FACT_MOUNT_ROOT, "?"));
        return buf;
}

static bool has_option(json_object *m, const char *option) {
        return str_in(kb_fact_arr_of(m, FACT_MOUNT_OPTIONS), option);
}

static const char *what_differs(json_object *p, json_object *m, json_object *const *matched, const table_ctx *c,
                                char *buf, size_t size, bool *widens) {
        const char *kind = kb_fact_str_or(p, FACT_PLANNED_MOUNT_KIND, "?"), *why = NULL;
        bool read_only = kb_fact_bool_of(p, FACT_PLANNED_MOUNT_READ_ONLY),
             nodev = kb_fact_bool_of(p, FACT_PLANNED_MOUNT_NODEV);
        bool opens_more = true;
        *widens = false;
        if (strcmp(kind, "bind") == 0)
                why = bind_differs(p, m, buf, size);
        else if (strcmp(kind, "fresh") == 0)
                why = fresh_differs(p, m, c, buf, size, &opens_more);
        else if (strcmp(kind, "cover") == 0)
                why = cover_differs(p, m, matched, c, buf, size);
        else if (strcmp(kind, "submount") == 0) {
                const char *dev = kb_fact_str_or(p, FACT_PLANNED_MOUNT_DEV, "?"),
                           *root = kb_fact_str_or(p, FACT_PLANNED_MOUNT_ROOT, "?");
                if (strcmp(kb_fact_str_or(m, FACT_MOUNT_DEV, ""), dev) != 0 ||
                    strcmp(kb_fact_str_or(m, FACT_MOUNT_ROOT, ""), root) != 0) {
                        snprintf(buf, size, "it shows %s of device %s, not %s of %s",
                                 kb_fact_str_or(m, FACT_MOUNT_ROOT, "?"), kb_fact_str_or(m, FACT_MOUNT_DEV, "?"), root,
                                 dev);
                        why = buf;
                }
        } else {
                snprintf(buf, size, "kbound's plan names a kind of mount it does not know (%s)", kind);
                why = buf;
        }
        if (why) {
                *widens = opens_more && mount_opens(m);
                return why;
        }
        if (mount_writable(m) && read_only) {
                *widens = true;
                snprintf(buf, size, "it is writable, where kbound planned it read-only");
        } else if (!mount_writable(m) && !read_only)
                snprintf(buf, size, "it is read-only, where kbound planned it writable");
        else if (!kb_fact_bool_of(m, FACT_MOUNT_NODEV) && nodev) {
                *widens = true;
                snprintf(buf, size, "it lets device nodes be opened (no nodev), where kbound planned nodev");
        } else if (kb_fact_bool_of(m, FACT_MOUNT_NODEV) && !nodev)
                snprintf(buf, size, "it refuses device nodes, where kbound planned them allowed");
        else if (kb_fact_bool_of(p, FACT_PLANNED_MOUNT_NOSUID) && !has_option(m, "nosuid"))
                snprintf(buf, size, "set-user-ID bits work on it (no nosuid), where kbound planned nosuid");
        else
                return NULL;
        return buf;
}

static void say(const table_ctx *c, bool widens, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(const table_ctx *c, bool widens, const char *fmt, ...) {
        char text[DETAIL_MAX + 256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        judge_add_unique(c->all, text);
        if (widens)
                judge_add_unique(c->widening, text);
}

/* Whether plan entry j's mount point lies below an earlier planned bind's: in a host folder, whose
 * links the plan does not follow (sandbox_mounts.c), so bwrap may have mounted it elsewhere. */
static bool below_a_bind(json_object *plan, size_t j) {
        const char *mp = kb_fact_str_of(at(plan, j), FACT_PLANNED_MOUNT_MOUNTPOINT);
        for (size_t k = 0; mp && k < j; k++) {
                json_object *b = at(plan, k);
                const char *b_mp = kb_fact_str_of(b, FACT_PLANNED_MOUNT_MOUNTPOINT);
                if (strcmp(kb_fact_str_or(b, FACT_PLANNED_MOUNT_KIND, ""), "bind") == 0 && b_mp &&
                    kb_procfs_path_under(mp, b_mp) && !same_path(mp, b_mp))
                        return true;
        }
        return false;
}

/* The plan entry mount m of table is matched to (first a free one planned at its mount point that
 * fits; else a free bind or submount planned below a bound host folder whose own mount point the
 * table has no mount at, which shows what m shows: a destination the plan reaches through a link
 * of that folder lands elsewhere), or -1 with *ret_first the first free one planned at its mount
 * point (-1: none). A mount of the root's own tree is where the plan says or it is not planned. */
static ssize_t match_one(const table_ctx *c, json_object *table, json_object *m, json_object **matched,
                         ssize_t *ret_first) {
        const char *mp = kb_fact_str_of(m, FACT_MOUNT_MOUNTPOINT);
        char buf[DETAIL_MAX];
        bool widens;
        *ret_first = -1;
        for (size_t j = 0; j < arr_len(c->plan); j++) {
                json_object *p = at(c->plan, j);
                if (matched[j] || !same_path(kb_fact_str_of(p, FACT_PLANNED_MOUNT_MOUNTPOINT), mp))
                        continue;
                if (*ret_first < 0)
                        *ret_first = (ssize_t) j;
                if (!what_differs(p, m, matched, c, buf, sizeof buf, &widens))
                        return (ssize_t) j;
        }
        for (size_t j = 0; j < arr_len(c->plan); j++) {
                json_object *p = at(c->plan, j);
                const char *kind = kb_fact_str_or(p, FACT_PLANNED_MOUNT_KIND, "");
                if (matched[j] || (strcmp(kind, "bind") != 0 && strcmp(kind, "submount") != 0) ||
                    !below_a_bind(c->plan, j))
                        continue;
                bool taken = false;
                for (size_t k = 0; k < arr_len(table) && !taken; k++)
                        taken = same_path(kb_fact_str_of(at(table, k), FACT_MOUNT_MOUNTPOINT),
                                          kb_fact_str_of(p, FACT_PLANNED_MOUNT_MOUNTPOINT));
                if (!taken && !what_differs(p, m, matched, c, buf, sizeof buf, &widens))
                        return (ssize_t) j;
        }
        return -1;
}

/* Every mount of table against the plan, and every planned mount the table lacks. */
static void match_table(table_ctx *c, json_object *table) {
        size_t n_plan = arr_len(c->plan);
        json_object **matched = calloc(n_plan + 1, sizeof *matched);
        char mount[DETAIL_MAX], why[DETAIL_MAX];
        if (!matched) {
                c->oom = 1;
                return;
        }
        for (size_t i = 0; i < arr_len(table); i++) {
                json_object *m = at(table, i);
                ssize_t first, hit = match_one(c, table, m, matched, &first);
                bool widens = false;
                if (hit >= 0) {
                        matched[hit] = m;
                        continue;
                }
                describe(m, mount, sizeof mount);
                if (first >= 0) {
                        json_object *p = at(c->plan, (size_t) first);
                        what_differs(p, m, matched, c, why, sizeof why, &widens);
                        matched[first] = m; /* said here, not again as missing */
                        say(c, widens, "%sthe mount at %s is not the one kbound planned there (%s): %s", c->where,
                            mount, kb_fact_str_or(p, FACT_PLANNED_MOUNT_ASKED, "?"), why);
                } else
                        say(c, mount_opens(m),
                            "%sa mount at %s that kbound did not plan: nothing of its bwrap command line makes one "
                            "there",
                            c->where, mount);
        }
        for (size_t j = 0; j < n_plan; j++) {
                json_object *p = at(c->plan, j);
                if (!matched[j] && !kb_fact_bool_of(p, FACT_PLANNED_MOUNT_OPTIONAL))
                        say(c, false, "%skbound planned a mount at %s (%s) and the table has none", c->where,
                            kb_fact_str_or(p, FACT_PLANNED_MOUNT_MOUNTPOINT, "?"),
                            kb_fact_str_or(p, FACT_PLANNED_MOUNT_ASKED, "?"));
        }
        free(matched);
}

/* "in the mount namespace of pid N (name): " for the table of mount namespace key of look. */
static const char *owner_words(json_object *look, const char *key, char *buf, size_t size) {
        json_object *procs = kb_fact_arr_of(look, FACT_LOOK_PROCESSES), *owner = NULL;
        for (size_t i = 0; i < arr_len(procs) && !owner; i++) {
                char ino[32];
                snprintf(ino, sizeof ino, "%" PRId64,
                         judge_ns_inode(kb_fact_map_of(at(procs, i), FACT_PROCESS_NS), "mnt"));
                if (strcmp(ino, key) == 0)
                        owner = at(procs, i);
        }
        snprintf(buf, size, "in the mount namespace of pid %" PRId64 " (%s): ", judge_pid_of(owner),
                 judge_name_of(owner));
        return buf;
}

/* Every mount of every mount table of every look (the look before exec's, bwrap's init's, first;
 * then each snapshot's kernel table and those of the sandbox's other mount namespaces) against
 * kbound's plan (expect's LAUNCH mounts): a mount that matches no planned one (by what it shows:
 * a bind's host object by device and inode, a submount's device and root, a fresh filesystem's
 * type and that no mount namespace outside holds it, a cover's proc; then read-only, nodev, nosuid
 * and a tmpfs's size), one planned at its mount point that shows something else or has other
 * options, and a planned mount a table lacks (unless optional) are each said once into all
 * (sandbox.backend's); those that let the sandbox write or open device nodes where the plan did
 * not, into widening (boundary.write_outside's). all and widening may be NULL. Returns the number
 * of tables matched, or -ENOMEM. */
int judge_plan_problems(const kb_judge_input *in, json_object *all, json_object *widening) {
        json_object *plan = kb_fact_arr_of(kb_fact_obj_of(in->expect, FACT_EXPECT_LAUNCH), FACT_LAUNCH_MOUNTS);
        table_ctx c = {.plan = plan,
                       .host_mounts = kb_fact_arr_of(in->host, FACT_HOST_MOUNTS),
                       .all = all,
                       .widening = widening};
        int tables = 0;
        char where[128];
        if (!plan) {
                /* nothing to match against: every mount is unplanned, and nothing said widens */
                say(&c, false, "kbound kept no record of the mounts it planned");
                return 0;
        }
        for (size_t s = 0; s < arr_len(in->snapshots) + 1; s++) {
                json_object *look = s == 0 ? in->pre_exec : at(in->snapshots, s - 1);
                const char *label = kb_fact_str_or(look, FACT_LOOK_LABEL, "?");
                json_object *mounts = kb_fact_arr_of(look, FACT_LOOK_MOUNTS),
                            *others = kb_fact_map_of(look, FACT_LOOK_MOUNT_TABLES);
                if (!look)
                        continue; /* said by sandbox.backend's own account of the looks */
                c.outside = kb_fact_obj_of(look, FACT_LOOK_OUTSIDE_MOUNTS);
                c.where = s == 0 ? "before the kernel ran: " : "";
                if (!mounts)
                        say(&c, false,
                            "the host could not read the sandbox's mount table (%s): nothing shows bwrap "
                            "built the mounts kbound planned",
                            label);
                else {
                        match_table(&c, mounts);
                        tables++;
                }
                if (s > 0 && !others)
                        say(&c, false,
                            "the host did not read the mount tables of the sandbox's other mount "
                            "namespaces (%s)",
                            label);
                if (!others)
                        continue;
                json_object_object_foreach(others, key, table) {
                        c.where = owner_words(look, key, where, sizeof where);
                        match_table(&c, table);
                        tables++;
                }
        }
        return c.oom ? -ENOMEM : tables;
}
