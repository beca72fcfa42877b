/* sandbox_mounts.c: the mounts a bwrap command line asks for and those bwrap makes for them, as the
 * facts every mount table of the sandbox is matched against (kb_sandbox_planned_mounts). */
#include "sandbox/sandbox-internal.h"
#include "kbound/bwrap.h"
#include "base/cleanup.h"
#include "base/facts.h"
#include "base/procfs.h"
#include "base/strv.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* Linux's own limit on symlinks followed in one lookup (MAXSYMLINKS). */
#define PLAN_MAX_LINKS 40
/* Links a plan may make (--symlink); kb_sandbox_plan makes a handful. */
#define PLAN_LINKS_MAX 256

/* The nodes bwrap 0.4-0.11's --dev binds from the host's /dev, in its order (bubblewrap.c,
 * SETUP_MOUNT_DEV: devnodes[]); /dev/console too when bwrap's stdout is a terminal, which kbound's
 * never is (the kernel's log). */
static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
/* The entries of a fresh /proc that bwrap covers with a read-only bind of themselves, where its
 * access(W_OK) test lets it (bubblewrap.c, SETUP_MOUNT_PROC: cover_proc_dirs[]). */
static const char *const proc_covers[] = {"sys", "sysrq-trigger", "irq", "bus"};

typedef struct plan {
        json_object *mounts;      /* PLANNED_MOUNT facts, in bwrap's order */
        json_object *host_mounts; /* kbound's own mount table: the submounts a bind takes along */
        char *link_dest[PLAN_LINKS_MAX], *link_target[PLAN_LINKS_MAX];
        size_t n_links;
        const char *size; /* --size's operand, for the next --tmpfs */
} plan;

static void plan_done(plan *p) {
        for (size_t i = 0; i < p->n_links; i++) {
                free(p->link_dest[i]);
                free(p->link_target[i]);
        }
        json_object_put(p->mounts);
}

/* Appends component (len bytes) to path (a canonical absolute path, "" for the root). */
static int path_push(char path[PATH_MAX], const char *component, size_t len) {
        size_t at = strlen(path);
        if (at + 1 + len >= PATH_MAX)
                return -ENAMETOOLONG;
        path[at] = '/';
        memcpy(path + at + 1, component, len);
        path[at + 1 + len] = '\0';
        return 0;
}

/* The target of the link the plan made at path (the last one made there), or NULL. */
static const char *link_at(const plan *p, const char *path) {
        for (size_t i = p->n_links; i > 0; i--)
                if (strcmp(p->link_dest[i - 1], path) == 0)
                        return p->link_target[i - 1];
        return NULL;
}

/* Where dest lands in the sandbox as bwrap's mount reaches it: "//", "." and ".." taken lexically,
 * and every link the plan made before (--symlink) followed, the last component's too (mount(2)
 * follows it). The links below a bound folder are the host's, which the plan does not follow: a
 * destination through one lands elsewhere, and the judge finds that mount unplanned. follow_last
 * false: the last component is not followed (a --symlink's own destination). Returns 0, -EINVAL
 * (not absolute), -ELOOP, -ENAMETOOLONG. */
static int resolve_dest(const plan *p, const char *dest, bool follow_last, char out[PATH_MAX]) {
        char rest[PATH_MAX], next[PATH_MAX];
        int links = 0;
        if (!dest || dest[0] != '/')
                return -EINVAL;
        if (snprintf(rest, sizeof rest, "%s", dest) >= (int) sizeof rest)
                return -ENAMETOOLONG;
        out[0] = '\0';
        for (const char *c = rest; *c;) {
                while (*c == '/')
                        c++;
                size_t len = strcspn(c, "/");
                if (len == 0)
                        break;
                const char *after = c + len;
                if (len == 1 && c[0] == '.') {
                        c = after;
                        continue;
                }
                if (len == 2 && c[0] == '.' && c[1] == '.') {
                        char *slash = strrchr(out, '/');
                        if (slash)
                                *slash = '\0';
                        c = after;
                        continue;
                }
                memcpy(next, out, strlen(out) + 1);
                int r = path_push(next, c, len);
                if (r < 0)
                        return r;
                const char *target = link_at(p, next);
                bool last = after[strspn(after, "/")] == '\0';
                if (!target || (last && !follow_last)) {
                        memcpy(out, next, strlen(next) + 1);
                        c = after;
                        continue;
                }
                if (++links > PLAN_MAX_LINKS)
                        return -ELOOP;
                /* the link's target, then what was left after it, resolved from the link's folder */
                char joined[PATH_MAX];
                if (snprintf(joined, sizeof joined, "%s%s", target, after) >= (int) sizeof joined)
                        return -ENAMETOOLONG;
                memcpy(rest, joined, strlen(joined) + 1);
                if (rest[0] == '/')
                        out[0] = '\0';
                c = rest;
        }
        if (out[0] == '\0') {
                out[0] = '/';
                out[1] = '\0';
        }
        return 0;
}

/* A new PLANNED_MOUNT appended to p->mounts (borrowed), or NULL when out of memory. */
static json_object *entry(plan *p, const char *kind, const char *mountpoint, const char *asked, bool read_only,
                          bool nodev, bool optional) {
        json_object *e = json_object_new_object();
        if (!e || kb_fact_set_str(e, FACT_PLANNED_MOUNT_MOUNTPOINT, mountpoint) < 0 ||
            kb_fact_set_str(e, FACT_PLANNED_MOUNT_KIND, kind) < 0 ||
            kb_fact_set_str(e, FACT_PLANNED_MOUNT_ASKED, asked) < 0 ||
            kb_fact_set_bool(e, FACT_PLANNED_MOUNT_READ_ONLY, read_only) < 0 ||
            kb_fact_set_bool(e, FACT_PLANNED_MOUNT_NODEV, nodev) < 0 ||
            (optional && kb_fact_set_bool(e, FACT_PLANNED_MOUNT_OPTIONAL, true) < 0) ||
            json_object_array_add(p->mounts, e) < 0) {
                json_object_put(e);
                return NULL;
        }
        return e;
}

/* A fresh filesystem of fstype at mountpoint. */
static int fresh(plan *p, const char *fstype, const char *mountpoint, const char *asked, bool nodev) {
        json_object *e = entry(p, "fresh", mountpoint, asked, false, nodev, false);
        return e && kb_fact_set_str(e, FACT_PLANNED_MOUNT_FSTYPE, fstype) >= 0 ? 0 : -ENOMEM;
}

json_object *kb_sandbox_file_id(const char *path, const struct stat *st) {
        char dev[KB_PROCFS_DEV_MAX];
        kb_procfs_dev(major(st->st_dev), minor(st->st_dev), dev);
        json_object *f = json_object_new_object();
        if (!f || (path && kb_fact_set_str(f, FACT_FILE_ID_PATH, path) < 0) ||
            kb_fact_set_str(f, FACT_FILE_ID_DEV, dev) < 0 ||
            kb_fact_set_int(f, FACT_FILE_ID_INO, (int64_t) st->st_ino) < 0) {
                json_object_put(f);
                return NULL;
        }
        return f;
}

/* e's source: the object path names on the host, links followed as bwrap's mount follows them. */
static int set_source(json_object *e, const char *path) {
        struct stat st;
        if (stat(path, &st) < 0)
                return kb_fact_set_str(e, FACT_PLANNED_MOUNT_SOURCE_ERROR, strerror(errno)) < 0 ? -ENOMEM : 0;
        json_object *f = kb_sandbox_file_id(path, &st);
        return kb_fact_set_obj(e, FACT_PLANNED_MOUNT_SOURCE, f) < 0 ? -ENOMEM : 0;
}

/* bwrap binds recursively (MS_REC), so every mount of the host below the source's real path comes
 * along, below dest, and is remounted with the bind's read-only and nodev added (bind-mount.c). */
static int submounts(plan *p, const char *source, const char *dest, const char *asked, bool read_only, bool nodev) {
        char real[PATH_MAX];
        if (!realpath(source, real))
                return 0; /* not there: bwrap binds nothing (-try) or refuses to start */
        size_t real_len = strcmp(real, "/") == 0 ? 0 : strlen(real);
        size_t n = json_object_is_type(p->host_mounts, json_type_array) ? json_object_array_length(p->host_mounts) : 0;
        for (size_t i = 0; i < n; i++) {
                json_object *h = json_object_array_get_idx(p->host_mounts, i);
                const char *mp = kb_fact_str_of(h, FACT_MOUNT_MOUNTPOINT);
                if (!mp || !kb_procfs_path_under(mp, real_len ? real : "/") || strcmp(mp, real) == 0)
                        continue;
                char where[PATH_MAX], what[3 * PATH_MAX + 64];
                const char *below = mp + real_len;
                if (snprintf(where, sizeof where, "%s%s", strcmp(dest, "/") == 0 ? "" : dest, below) >=
                    (int) sizeof where)
                        return -ENAMETOOLONG;
                snprintf(what, sizeof what, "%.*s: the host's mount at %s below it", (int) (2 * PATH_MAX), asked, mp);
                json_object *e =
                        entry(p, "submount", where, what, read_only || !kb_fact_bool_of(h, FACT_MOUNT_WRITABLE),
                              nodev || kb_fact_bool_of(h, FACT_MOUNT_NODEV), true);
                if (!e || kb_fact_set_str(e, FACT_PLANNED_MOUNT_DEV, kb_fact_str_or(h, FACT_MOUNT_DEV, "?")) < 0 ||
                    kb_fact_set_str(e, FACT_PLANNED_MOUNT_ROOT, kb_fact_str_or(h, FACT_MOUNT_ROOT, "?")) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* --bind, --ro-bind, --dev-bind and their -try forms. */
static int bind(plan *p, const char *opt, const char *source, const char *dest) {
        char where[PATH_MAX], asked[2 * PATH_MAX + 32];
        bool read_only = strncmp(opt, "--ro-", 5) == 0, devices = strncmp(opt, "--dev-", 6) == 0;
        bool try = strlen(opt) > 4 && strcmp(opt + strlen(opt) - 4, "-try") == 0;
        int r = resolve_dest(p, dest, true, where);
        if (r < 0)
                return r;
        snprintf(asked, sizeof asked, "%s %s %s", opt, source, dest);
        json_object *e = entry(p, "bind", where, asked, read_only, !devices, try);
        if (!e)
                return -ENOMEM;
        r = set_source(e, source);
        if (r >= 0)
                r = submounts(p, source, where, asked, read_only, !devices);
        return r;
}

/* --bind-fd, --ro-bind-fd, --bind-data, --ro-bind-data: what bwrap binds is an object of its own
 * descriptors, which the host cannot name beforehand: planned, never proven (the judge fails it). */
static int bind_from_fd(plan *p, const char *opt, const char *fd, const char *dest) {
        char where[PATH_MAX], asked[PATH_MAX + 64];
        int r = resolve_dest(p, dest, true, where);
        if (r < 0)
                return r;
        snprintf(asked, sizeof asked, "%s %s %s", opt, fd, dest);
        json_object *e = entry(p, "bind", where, asked, strncmp(opt, "--ro-", 5) == 0, true, false);
        if (!e || kb_fact_set_str(e, FACT_PLANNED_MOUNT_SOURCE_ERROR,
                                  "made from a descriptor of bwrap's: kbound cannot name the object beforehand") < 0)
                return -ENOMEM;
        return 0;
}

/* --dev: a tmpfs, the host's harmless device nodes bound in it, and a devpts of its own. */
static int dev(plan *p, const char *dest) {
        char where[PATH_MAX], at[PATH_MAX + 16], host[32], asked[PATH_MAX + 64];
        int r = resolve_dest(p, dest, true, where);
        if (r < 0)
                return r;
        snprintf(asked, sizeof asked, "--dev %s", dest);
        if ((r = fresh(p, "tmpfs", where, asked, true)) < 0)
                return r;
        const char *base = strcmp(where, "/") == 0 ? "" : where;
        for (size_t i = 0; i < KB_ELEMENTSOF(dev_nodes); i++) {
                snprintf(at, sizeof at, "%s/%s", base, dev_nodes[i]);
                snprintf(host, sizeof host, "/dev/%s", dev_nodes[i]);
                snprintf(asked, sizeof asked, "--dev %s: the host's %s", dest, host);
                json_object *e = entry(p, "bind", at, asked, false, false, false);
                if (!e || (r = set_source(e, host)) < 0)
                        return e ? r : -ENOMEM;
        }
        snprintf(at, sizeof at, "%s/pts", base);
        snprintf(asked, sizeof asked, "--dev %s: its own devpts", dest);
        return fresh(p, "devpts", at, asked, false);
}

/* --proc: a proc of the sandbox's pid namespace, and bwrap's read-only covers of its entries. */
static int proc(plan *p, const char *dest) {
        char where[PATH_MAX], at[PATH_MAX + 16], root[32], asked[PATH_MAX + 64];
        int r = resolve_dest(p, dest, true, where);
        if (r < 0)
                return r;
        snprintf(asked, sizeof asked, "--proc %s", dest);
        if ((r = fresh(p, "proc", where, asked, true)) < 0)
                return r;
        for (size_t i = 0; i < KB_ELEMENTSOF(proc_covers); i++) {
                snprintf(at, sizeof at, "%s/%s", strcmp(where, "/") == 0 ? "" : where, proc_covers[i]);
                snprintf(root, sizeof root, "/%s", proc_covers[i]);
                snprintf(asked, sizeof asked, "--proc %s: bwrap's read-only cover of its %s", dest, proc_covers[i]);
                json_object *e = entry(p, "cover", at, asked, true, true, true);
                if (!e || kb_fact_set_str(e, FACT_PLANNED_MOUNT_FSTYPE, "proc") < 0 ||
                    kb_fact_set_str(e, FACT_PLANNED_MOUNT_ROOT, root) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* --tmpfs, with the --size before it; --mqueue (bwrap mounts it with no flags at all). */
static int tmpfs_or_mqueue(plan *p, const char *opt, const char *dest) {
        char where[PATH_MAX], asked[PATH_MAX + 64];
        bool mqueue = strcmp(opt, "--mqueue") == 0;
        int r = resolve_dest(p, dest, true, where);
        if (r < 0)
                return r;
        if (!mqueue && p->size)
                snprintf(asked, sizeof asked, "--size %s --tmpfs %s", p->size, dest);
        else
                snprintf(asked, sizeof asked, "%s %s", opt, dest);
        json_object *e = entry(p, "fresh", where, asked, false, !mqueue, false);
        if (!e || kb_fact_set_str(e, FACT_PLANNED_MOUNT_FSTYPE, mqueue ? "mqueue" : "tmpfs") < 0 ||
            (mqueue && kb_fact_set_bool(e, FACT_PLANNED_MOUNT_NOSUID, false) < 0))
                return -ENOMEM;
        if (!mqueue && p->size) {
                char *end;
                errno = 0;
                unsigned long long bytes = strtoull(p->size, &end, 10);
                if (errno || end == p->size || *end || bytes > INT64_MAX)
                        return -EPROTO;
                if (kb_fact_set_int(e, FACT_PLANNED_MOUNT_SIZE, (int64_t) bytes) < 0)
                        return -ENOMEM;
        }
        p->size = NULL;
        return 0;
}

/* --remount-ro: the last mount planned there becomes read-only; bwrap refuses a path that is no
 * mount point, and so does the plan. */
static int remount_ro(plan *p, const char *dest) {
        char where[PATH_MAX];
        int r = resolve_dest(p, dest, true, where);
        if (r < 0)
                return r;
        for (size_t i = json_object_array_length(p->mounts); i > 0; i--) {
                json_object *e = json_object_array_get_idx(p->mounts, i - 1);
                if (strcmp(kb_fact_str_or(e, FACT_PLANNED_MOUNT_MOUNTPOINT, ""), where) == 0)
                        return kb_fact_set_bool(e, FACT_PLANNED_MOUNT_READ_ONLY, true) < 0 ? -ENOMEM : 0;
        }
        return -EPROTO;
}

static int symlink_op(plan *p, const char *target, const char *dest) {
        char where[PATH_MAX];
        int r = resolve_dest(p, dest, false, where);
        if (r < 0)
                return r;
        if (p->n_links == PLAN_LINKS_MAX)
                return -E2BIG;
        p->link_dest[p->n_links] = strdup(where);
        p->link_target[p->n_links] = strdup(target);
        if (!p->link_dest[p->n_links] || !p->link_target[p->n_links]) {
                free(p->link_dest[p->n_links]);
                free(p->link_target[p->n_links]);
                return -ENOMEM;
        }
        p->n_links++;
        return 0;
}

/* One option of argv (at *i, its operands after it), *i moved past them. */
static int plan_option(plan *p, char *const *argv, size_t *i) {
        const char *opt = argv[*i];
        int arity = kb_bwrap_arity(opt);
        /* --args reads more options from a descriptor the plan cannot see */
        if (arity < 0 || strcmp(opt, "--args") == 0)
                return -EPROTO;
        for (int k = 1; k <= arity; k++)
                if (!argv[*i + (size_t) k])
                        return -EPROTO;
        const char *a = arity > 0 ? argv[*i + 1] : NULL, *b = arity > 1 ? argv[*i + 2] : NULL;
        *i += (size_t) arity;
        if (strstr(opt, "bind-fd") || strstr(opt, "bind-data"))
                return bind_from_fd(p, opt, a, b);
        if (strstr(opt, "bind"))
                return bind(p, opt, a, b);
        if (strcmp(opt, "--dev") == 0)
                return dev(p, a);
        if (strcmp(opt, "--proc") == 0)
                return proc(p, a);
        if (strcmp(opt, "--tmpfs") == 0 || strcmp(opt, "--mqueue") == 0)
                return tmpfs_or_mqueue(p, opt, a);
        if (strcmp(opt, "--remount-ro") == 0)
                return remount_ro(p, a);
        if (strcmp(opt, "--symlink") == 0)
                return symlink_op(p, a, b);
        if (strcmp(opt, "--size") == 0)
                p->size = a;
        return 0; /* no mount: --dir, --file, --chmod, the namespaces, the descriptors... */
}

int kb_sandbox_planned_mounts(char *const *argv, json_object *host_mounts, json_object **ret) {
        if (!argv || !argv[0] || !ret)
                return -EINVAL;
        plan p = {.mounts = json_object_new_array(), .host_mounts = host_mounts};
        int r = p.mounts ? 0 : -ENOMEM;
        /* bwrap's root: a tmpfs of its own, the sandbox's "/" once it pivots into it */
        if (r >= 0)
                r = fresh(&p, "tmpfs", "/", "bwrap's own root (a tmpfs)", true);
        for (size_t i = 1; r >= 0 && argv[i] && strcmp(argv[i], "--") != 0 && strncmp(argv[i], "--", 2) == 0; i++)
                r = plan_option(&p, argv, &i);
        if (r >= 0) {
                *ret = TAKE_PTR(p.mounts);
                r = 0;
        }
        plan_done(&p);
        return r;
}

/* kbound's own mount table, the one bwrap starts in, or NULL when it cannot be read (a submount is
 * then unplanned: fail closed). Returns 0 or -ENOMEM. */
static int host_table(json_object **ret) {
        _cleanup_free_ char *text = NULL;
        *ret = NULL;
        int r = kb_read_file(AT_FDCWD, "/proc/self/mountinfo", 0, KB_PROCFS_MOUNTINFO_MAX, &text, NULL);
        if (r >= 0 && kb_procfs_mountinfo_parse(text, ret) == -ENOMEM)
                return -ENOMEM;
        return 0;
}

int kb_sandbox_launch_mounts(json_object *launch, char *const *argv) {
        _cleanup_json_ json_object *host = NULL;
        json_object *mounts = NULL;
        int r = host_table(&host);
        if (r >= 0)
                r = kb_sandbox_planned_mounts(argv, host, &mounts);
        if (r < 0)
                return r;
        return kb_fact_set_arr(launch, FACT_LAUNCH_MOUNTS, mounts) < 0 ? -ENOMEM : 0;
}

/* Whether planned holds a submount at e's mountpoint showing e's filesystem and root, as e's
 * read-only and nodev. */
static bool submount_planned(json_object *planned, json_object *e) {
        size_t n = json_object_is_type(planned, json_type_array) ? json_object_array_length(planned) : 0;
        for (size_t i = 0; i < n; i++) {
                json_object *p = json_object_array_get_idx(planned, i);
                if (strcmp(kb_fact_str_or(p, FACT_PLANNED_MOUNT_KIND, ""), "submount") == 0 &&
                    strcmp(kb_fact_str_or(p, FACT_PLANNED_MOUNT_MOUNTPOINT, ""),
                           kb_fact_str_or(e, FACT_PLANNED_MOUNT_MOUNTPOINT, "?")) == 0 &&
                    strcmp(kb_fact_str_or(p, FACT_PLANNED_MOUNT_DEV, ""),
                           kb_fact_str_or(e, FACT_PLANNED_MOUNT_DEV, "?")) == 0 &&
                    strcmp(kb_fact_str_or(p, FACT_PLANNED_MOUNT_ROOT, ""),
                           kb_fact_str_or(e, FACT_PLANNED_MOUNT_ROOT, "?")) == 0 &&
                    kb_fact_bool_of(p, FACT_PLANNED_MOUNT_READ_ONLY) ==
                            kb_fact_bool_of(e, FACT_PLANNED_MOUNT_READ_ONLY) &&
                    kb_fact_bool_of(p, FACT_PLANNED_MOUNT_NODEV) == kb_fact_bool_of(e, FACT_PLANNED_MOUNT_NODEV))
                        return true;
        }
        return false;
}

/* The bind of mounts made at e's mount point by e's option, or NULL. */
static json_object *same_bind(json_object *mounts, json_object *e) {
        for (size_t i = 0; i < json_object_array_length(mounts); i++) {
                json_object *b = json_object_array_get_idx(mounts, i);
                if (strcmp(kb_fact_str_or(b, FACT_PLANNED_MOUNT_KIND, ""), "bind") == 0 &&
                    strcmp(kb_fact_str_or(b, FACT_PLANNED_MOUNT_MOUNTPOINT, ""),
                           kb_fact_str_or(e, FACT_PLANNED_MOUNT_MOUNTPOINT, "?")) == 0 &&
                    strcmp(kb_fact_str_or(b, FACT_PLANNED_MOUNT_ASKED, ""),
                           kb_fact_str_or(e, FACT_PLANNED_MOUNT_ASKED, "?")) == 0)
                        return b;
        }
        return NULL;
}

/* Whether FILE_IDs a and b are one object (device and inode). */
static bool same_file_id(json_object *a, json_object *b) {
        int64_t ia, ib;
        return kb_fact_int_of(a, FACT_FILE_ID_INO, &ia) && kb_fact_int_of(b, FACT_FILE_ID_INO, &ib) && ia == ib &&
               strcmp(kb_fact_str_or(a, FACT_FILE_ID_DEV, "?"), kb_fact_str_or(b, FACT_FILE_ID_DEV, "")) == 0;
}

int kb_sandbox_plan_again(json_object *launch, json_object *changed) {
        json_object *argv_facts = kb_fact_arr_of(launch, FACT_LAUNCH_ARGV),
                    *planned = kb_fact_arr_of(launch, FACT_LAUNCH_MOUNTS);
        size_t n = json_object_is_type(argv_facts, json_type_array) ? json_object_array_length(argv_facts) : 0;
        _cleanup_(kb_strv_clear) kb_strv argv = {0};
        for (size_t i = 0; i < n; i++)
                if (kb_strv_push(&argv, json_object_get_string(json_object_array_get_idx(argv_facts, i))) < 0)
                        return -ENOMEM;
        _cleanup_json_ json_object *host = NULL, *now = NULL;
        int r = host_table(&host);
        if (r < 0)
                return r;
        /* the plan made again, as it was made (it was, so only memory can fail it): nothing is then
         * known to have changed, and the plan kept fails closed where it no longer holds */
        r = n > 0 && json_object_is_type(planned, json_type_array) ? kb_sandbox_planned_mounts(argv.items, host, &now)
                                                                   : -EPROTO;
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        int count = 0;
        /* a bind whose source names another object now: the bind shows one of the two */
        for (size_t i = 0; i < json_object_array_length(planned); i++) {
                json_object *e = json_object_array_get_idx(planned, i), *after = NULL,
                            *source = kb_fact_obj_of(e, FACT_PLANNED_MOUNT_SOURCE),
                            *again = kb_fact_obj_of(same_bind(now, e), FACT_PLANNED_MOUNT_SOURCE);
                if (!source || !again || same_file_id(source, again))
                        continue;
                const char *path = kb_fact_str_or(again, FACT_FILE_ID_PATH, "?");
                if (json_object_deep_copy(again, &after, NULL) < 0 ||
                    kb_fact_set_obj(e, FACT_PLANNED_MOUNT_SOURCE_AFTER, after) < 0 ||
                    (changed && json_object_array_add(changed, json_object_new_string(path)) < 0))
                        return -ENOMEM;
                count++;
        }
        /* a submount the plan lacks, while the launch may still be made again (the last keeps its
         * plan, and fails closed on it) */
        for (size_t i = 0; changed && i < json_object_array_length(now); i++) {
                json_object *e = json_object_array_get_idx(now, i);
                if (strcmp(kb_fact_str_or(e, FACT_PLANNED_MOUNT_KIND, ""), "submount") != 0 ||
                    submount_planned(planned, e))
                        continue;
                char what[PATH_MAX + 64];
                snprintf(what, sizeof what, "a host mount below a bind, at %s",
                         kb_fact_str_or(e, FACT_PLANNED_MOUNT_MOUNTPOINT, "?"));
                if (json_object_array_add(changed, json_object_new_string(what)) < 0)
                        return -ENOMEM;
                count++;
        }
        return count;
}
