/* inspect.c: the host's own view of a sandbox, read from /proc: processes, credentials,
 * namespaces, sessions, descriptors, environments, mount and network tables, and what of the host
 * the mounts expose. Facts only; judge.c decides what they mean. */
#include "kbound/inspect.h"
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <linux/openat2.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include "kbound/sandbox.h"
#include "procfs.h"

#define PROCS_MAX 65536 /* host processes looked at in one walk */
#define SANDBOX_PROCS_MAX 4096
#define FDS_MAX 4096 /* descriptors kept per process */
#define MAP_MAX 4096
#define ENVIRON_MAX (1024 * 1024)
#define CMDLINE_MAX (256 * 1024)
#define CMDLINE_SHOWN 256
#define TARGET_MAX 512
#define ARGV_MAX 4096
#define LISTENER_NAMESPACES_MAX 4096
#define NS_HOLDERS_MAX 64 /* processes outside the sandbox in its namespaces, kept (all counted) */
/* The kernel allows 32 nested user namespaces: a longer chain of parents is not one. */
#define USERNS_DEPTH_MAX 40

static const char *const namespaces[] = {"user", "mnt", "pid", "net", "ipc", "uts", "cgroup", NULL};
/* Their indices in namespaces[]. */
enum { NS_USER, NS_MNT, NS_PID, NS_NET, NS_IPC, NS_UTS, NS_CGROUP, NS_TYPES };
_Static_assert(KB_ELEMENTSOF(namespaces) == NS_TYPES + 1, "namespaces[] and its indices");

/* The socket tables with an inode column: a socket of the namespace is in one of these or unix. */
static const char *const net_tables[] = {"tcp",     "tcp6", "udp",  "udp6",  "udplite", "udplite6",
                                         "raw",     "raw6", "icmp", "icmp6", "netlink", "packet",
                                         NULL};

const char *const *kb_inspect_namespaces(void) {
        return namespaces;
}

static int add(json_object *o, const char *key, json_object *v) {
        if (!v || json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static int push(json_object *a, json_object *v) {
        if (!v || json_object_array_add(a, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

/* Appends {"what": what, "error": strerror} to errors. */
static int note_error(json_object *errors, const char *what, int err) {
        json_object *e = json_object_new_object();
        if (!e || add(e, "what", json_object_new_string(what)) < 0 ||
            add(e, "error", json_object_new_string(strerror(err > 0 ? err : -err))) < 0)
                goto oom;
        return push(errors, e);
oom:
        json_object_put(e);
        return -ENOMEM;
}

static json_object *dev_string(dev_t dev) {
        char buf[32];
        snprintf(buf, sizeof buf, "%u:%u", major(dev), minor(dev));
        return json_object_new_string(buf);
}

static const char *type_name(mode_t mode) {
        return S_ISREG(mode)    ? "reg"
               : S_ISDIR(mode)  ? "dir"
               : S_ISCHR(mode)  ? "chr"
               : S_ISBLK(mode)  ? "blk"
               : S_ISFIFO(mode) ? "fifo"
               : S_ISSOCK(mode) ? "sock"
               : S_ISLNK(mode)  ? "lnk"
                                : "unknown";
}

/* {type, dev, ino, rdev} of a stat. */
static json_object *stat_facts(const struct stat *st) {
        json_object *o = json_object_new_object();
        if (!o || add(o, "type", json_object_new_string(type_name(st->st_mode))) < 0 ||
            add(o, "dev", dev_string(st->st_dev)) < 0 || add(o, "ino", json_object_new_int64((int64_t) st->st_ino)) < 0 ||
            ((S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) && add(o, "rdev", dev_string(st->st_rdev)) < 0)) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

/* Reads <proc_root>/<pid>/<name> (max bytes). -ESRCH when the process is gone. */
static int read_proc(const char *proc_root, pid_t pid, const char *name, size_t max, char **ret, size_t *ret_len) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%d/%s", proc_root, (int) pid, name) >= (int) sizeof path)
                return -ENAMETOOLONG;
        int r = kb_read_file(AT_FDCWD, path, 0, max, ret, ret_len);
        return r == -ENOENT ? -ESRCH : r;
}

static bool process_exists(const char *proc_root, pid_t pid) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%d", proc_root, (int) pid);
        return access(path, F_OK) == 0;
}

/* Inode of <proc_root>/<pid>/ns/<name>; -ESRCH when the process is gone, -ENOENT when this kernel
 * has no such namespace type. */
static int ns_inode(const char *proc_root, pid_t pid, const char *name, uint64_t *ret) {
        char path[PATH_MAX];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%d/ns/%s", proc_root, (int) pid, name) >= (int) sizeof path)
                return -ENAMETOOLONG;
        if (stat(path, &st) < 0) {
                int e = errno;
                if (e == ENOENT)
                        return process_exists(proc_root, pid) ? -ENOENT : -ESRCH;
                return -e;
        }
        *ret = (uint64_t) st.st_ino;
        return 0;
}

/* "ns": {name: inode} of pid; a type this kernel lacks is left out. */
static int ns_object(const char *proc_root, pid_t pid, json_object *errors, json_object **ret) {
        _cleanup_json_ json_object *ns = json_object_new_object();
        if (!ns)
                return -ENOMEM;
        for (const char *const *n = namespaces; *n; n++) {
                uint64_t ino;
                int r = ns_inode(proc_root, pid, *n, &ino);
                if (r == -ESRCH)
                        return r;
                if (r == -ENOENT)
                        continue;
                if (r < 0) {
                        char what[64];
                        snprintf(what, sizeof what, "ns/%s", *n);
                        if (note_error(errors, what, r) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (add(ns, *n, json_object_new_int64((int64_t) ino)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(ns);
        return 0;
}

/* Every namespace inode of pid (namespaces[] order; 0 for a type this kernel lacks) through one
 * open of its ns folder. The links are read, not followed: "net:[4026531840]" names the inode, and
 * a readlink costs a third of a stat through the link (this runs for every host process in every
 * look). Returns 0, -ESRCH (gone), -EACCES or -EPERM (another user's process: reading a namespace
 * link needs ptrace rights over it), -EPROTO, -errno. */
static int ns_inodes_all(const char *proc_root, pid_t pid, uint64_t ret[NS_TYPES]) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%d/ns", proc_root, (int) pid) >= (int) sizeof path)
                return -ENAMETOOLONG;
        _cleanup_close_ int dfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        for (size_t i = 0; i < NS_TYPES; i++) {
                char link[64];
                ssize_t len = readlinkat(dfd, namespaces[i], link, sizeof link - 1);
                if (len < 0) {
                        int e = errno;
                        /* A process gone meanwhile answers EACCES (not ENOENT): ask whether it is. */
                        if ((e == ENOENT || e == EACCES) && !process_exists(proc_root, pid))
                                return -ESRCH;
                        if (e != ENOENT)
                                return -e;
                        ret[i] = 0; /* a type this kernel lacks, or an exiting process's */
                        continue;
                }
                link[len] = '\0';
                size_t name_len = strlen(namespaces[i]);
                char *end;
                if (strncmp(link, namespaces[i], name_len) != 0 || strncmp(link + name_len, ":[", 2) != 0)
                        return -EPROTO;
                errno = 0;
                unsigned long long ino = strtoull(link + name_len + 2, &end, 10);
                if (errno || strcmp(end, "]") != 0)
                        return -EPROTO;
                ret[i] = (uint64_t) ino;
        }
        return 0;
}

/* Appends to chain the user namespaces above the namespace open at fd, nearest first: its owner
 * (for a user namespace, its parent), that one's parent, and so on as far as kbound's own user
 * namespace lets it see (the kernel answers EPERM above it, and for the first user namespace).
 * Returns 0, -ELOOP, -ENOMEM, -errno. */
static int owner_chain(int fd, bool is_user, json_object *chain) {
        int cur = ioctl(fd, is_user ? NS_GET_PARENT : NS_GET_USERNS);
        int e = cur < 0 ? errno : 0;
        for (int depth = 0; cur >= 0; depth++) {
                struct stat st;
                int r = depth >= USERNS_DEPTH_MAX ? -ELOOP
                        : fstat(cur, &st) < 0     ? -errno
                                                  : push(chain, json_object_new_int64((int64_t) st.st_ino));
                if (r < 0) {
                        close(cur);
                        return r;
                }
                int parent = ioctl(cur, NS_GET_PARENT);
                e = parent < 0 ? errno : 0;
                close(cur);
                cur = parent;
        }
        return e == EPERM ? 0 : -e;
}

/* "ns_owners": {name: [owner, owner's parent, ...]} of pid: who owns each of its namespaces, as user
 * namespace inodes (owner_chain); for "user", the chain starts at its parent. A namespace that
 * cannot be opened or asked is noted in errors as "ns_owners/<name>". -ESRCH when pid is gone. */
static int ns_owners_object(const char *proc_root, pid_t pid, json_object *errors, json_object **ret) {
        _cleanup_json_ json_object *owners = json_object_new_object();
        if (!owners)
                return -ENOMEM;
        for (size_t i = 0; i < NS_TYPES; i++) {
                char path[PATH_MAX], what[64];
                snprintf(path, sizeof path, "%s/%d/ns/%s", proc_root, (int) pid, namespaces[i]);
                snprintf(what, sizeof what, "ns_owners/%s", namespaces[i]);
                _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                int open_error = fd < 0 ? errno : 0;
                if (open_error == ENOENT) {
                        if (!process_exists(proc_root, pid))
                                return -ESRCH;
                        continue; /* a type this kernel does not have */
                }
                json_object *chain = json_object_new_array();
                int r = !chain ? -ENOMEM : open_error ? -open_error : owner_chain(fd, i == NS_USER, chain);
                if (r == -ENOMEM) {
                        json_object_put(chain);
                        return r;
                }
                if (r < 0) {
                        json_object_put(chain);
                        if (note_error(errors, what, r) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (add(owners, namespaces[i], chain) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(owners);
        return 0;
}

int kb_inspect_host(const char *proc_root, json_object **ret) {
        if (!proc_root || !ret)
                return -EINVAL;
        _cleanup_json_ json_object *h = json_object_new_object(), *errors = json_object_new_array();
        if (!h || !errors)
                return -ENOMEM;
        pid_t self = getpid();
        _cleanup_free_ char *stat_text = NULL, *mi = NULL;
        kb_procfs_stat st;
        int r = read_proc(proc_root, self, "stat", KB_PROCFS_STAT_MAX, &stat_text, NULL);
        if (r < 0)
                return r == -ESRCH ? -ENOENT : r;
        if (kb_procfs_stat_parse(stat_text, &st) < 0)
                return -EPROTO;
        json_object *ns = NULL, *mounts = NULL;
        r = ns_object(proc_root, self, errors, &ns);
        if (r < 0)
                return r == -ESRCH ? -ENOENT : r;
        if (json_object_array_length(errors) > 0) {
                json_object_put(ns);
                return -EACCES; /* kbound's own namespaces unreadable: nothing can be compared */
        }
        if (add(h, "ns", ns) < 0)
                return -ENOMEM;
        r = read_proc(proc_root, self, "mountinfo", KB_PROCFS_MOUNTINFO_MAX, &mi, NULL);
        if (r >= 0)
                r = kb_procfs_mountinfo_parse(mi, &mounts);
        if (r < 0)
                return r == -ESRCH ? -ENOENT : r;
        if (add(h, "mounts", mounts) < 0)
                return -ENOMEM;
        json_object *entries = json_object_new_array();
        for (const char *const *e = kb_sandbox_proc_readonly(); entries && *e; e++) {
                char path[PATH_MAX];
                struct stat sst;
                snprintf(path, sizeof path, "%s/%s", proc_root, *e);
                if (lstat(path, &sst) == 0 && push(entries, json_object_new_string(*e)) < 0)
                        entries = NULL;
        }
        /* kbound's own seccomp filters (a container may give it some): every sandbox process has
         * these plus the one kbound hands bwrap. */
        _cleanup_free_ char *status_text = NULL;
        json_object *status = NULL, *filters = NULL;
        if (read_proc(proc_root, self, "status", KB_PROCFS_STATUS_MAX, &status_text, NULL) >= 0 &&
            kb_procfs_status_parse(status_text, &status) >= 0 && json_object_object_get_ex(status, "seccomp_filters", &filters) &&
            add(h, "seccomp_filters", json_object_get(filters)) < 0) {
                json_object_put(status);
                return -ENOMEM;
        }
        json_object_put(status);
        if (add(h, "pid", json_object_new_int(self)) < 0 || add(h, "session", json_object_new_int(st.session)) < 0 ||
            add(h, "uid", json_object_new_int64((int64_t) getuid())) < 0 || add(h, "proc_entries", entries) < 0)
                return -ENOMEM;
        /* Anonymous memory files live on an internal mount no table lists: learn its device. */
        _cleanup_close_ int memfd = memfd_create("kbound-probe", MFD_CLOEXEC);
        struct stat mst;
        if (memfd >= 0 && fstat(memfd, &mst) == 0 && add(h, "memfd_dev", dev_string(mst.st_dev)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(h);
        return 0;
}

/* The first lines of a uid_map/gid_map, squeezed ("999 999 1"; several joined by "; "). */
static json_object *map_text(const char *text) {
        char out[256];
        size_t n = 0;
        bool space = true;
        for (const char *p = text; *p && n + 3 < sizeof out; p++) {
                char c = *p == '\n' ? ';' : *p;
                if (c == ' ' || c == '\t') {
                        if (!space)
                                out[n++] = ' ';
                        space = true;
                        continue;
                }
                if (c == ';') {
                        while (n > 0 && out[n - 1] == ' ')
                                n--;
                        if (p[1]) {
                                out[n++] = ';';
                                out[n++] = ' ';
                        }
                        space = true;
                        continue;
                }
                out[n++] = c;
                space = false;
        }
        while (n > 0 && out[n - 1] == ' ')
                n--;
        return json_object_new_string_len(out, (int) n);
}

/* Names of the secrets of t found in buf[0..len) (NULs count as separators). */
static int secrets_in(const kb_inspect_target *t, char *buf, size_t len, json_object **ret) {
        for (size_t i = 0; i < len; i++)
                if (buf[i] == '\0')
                        buf[i] = '\n';
        _cleanup_json_ json_object *s = json_object_new_string_len(buf, (int) len), *names = json_object_new_array();
        if (!s || !names)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_secrets; i++) {
                if (!t->secrets || !t->secrets[i])
                        continue;
                json_object *found = kb_secrets_scan(t->secrets[i], s);
                if (!found)
                        return -ENOMEM;
                for (size_t j = 0; j < json_object_array_length(found); j++)
                        if (push(names, json_object_get(json_object_array_get_idx(found, j))) < 0) {
                                json_object_put(found);
                                return -ENOMEM;
                        }
                json_object_put(found);
        }
        *ret = TAKE_PTR(names);
        return 0;
}

/* environ and cmdline of pid: secret names found in each, and the start of the command line. */
static int scan_texts(const kb_inspect_target *t, pid_t pid, json_object *proc, json_object *errors) {
        static const struct {
                const char *file, *key;
                size_t max;
        } texts[] = {{"environ", "environ_secrets", ENVIRON_MAX}, {"cmdline", "cmdline_secrets", CMDLINE_MAX}};
        for (size_t i = 0; i < KB_ELEMENTSOF(texts); i++) {
                _cleanup_free_ char *buf = NULL;
                size_t len = 0;
                int r = read_proc(t->proc_root, pid, texts[i].file, texts[i].max, &buf, &len);
                if (r == -ESRCH)
                        return r;
                if (r < 0) {
                        if (note_error(errors, texts[i].file, r) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (i == 1) {
                        size_t shown = len < CMDLINE_SHOWN ? len : CMDLINE_SHOWN;
                        char line[CMDLINE_SHOWN + 1];
                        for (size_t j = 0; j < shown; j++)
                                line[j] = buf[j] == '\0' ? ' ' : buf[j];
                        while (shown > 0 && line[shown - 1] == ' ')
                                shown--;
                        if (add(proc, "cmdline", json_object_new_string_len(line, (int) shown)) < 0)
                                return -ENOMEM;
                }
                json_object *names = NULL;
                if (secrets_in(t, buf, len, &names) < 0 || add(proc, texts[i].key, names) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Every open descriptor of pid: what it refers to, without opening it (stat follows the magic
 * link to the object; opening a terminal or a FIFO could have side effects). */
static int fd_facts(const char *proc_root, pid_t pid, json_object *errors, json_object **ret) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%d/fd", proc_root, (int) pid);
        DIR *d = opendir(dir);
        if (!d) {
                int e = errno;
                if (e == ENOENT)
                        return -ESRCH;
                *ret = json_object_new_array();
                return *ret ? note_error(errors, "fd", -e) : -ENOMEM;
        }
        _cleanup_json_ json_object *fds = json_object_new_array();
        int r = fds ? 0 : -ENOMEM;
        size_t n = 0;
        struct dirent *de;
        while (r >= 0 && (de = readdir(d))) {
                char *end;
                long fd = strtol(de->d_name, &end, 10);
                if (*end || fd < 0 || de->d_name[0] == '\0')
                        continue;
                if (++n > FDS_MAX) {
                        r = note_error(errors, "fd", E2BIG); /* more than kbound inspects: unjudged */
                        break;
                }
                char link[PATH_MAX + 32], target[TARGET_MAX], info_path[PATH_MAX];
                snprintf(link, sizeof link, "%s/%ld", dir, fd);
                ssize_t tl = readlink(link, target, sizeof target - 1);
                if (tl < 0)
                        continue; /* closed meanwhile */
                target[tl] = '\0';
                json_object *o = json_object_new_object();
                if (!o || add(o, "fd", json_object_new_int((int) fd)) < 0 || add(o, "target", json_object_new_string(target)) < 0) {
                        json_object_put(o);
                        r = -ENOMEM;
                        break;
                }
                struct stat st;
                if (stat(link, &st) == 0) {
                        json_object *sf = stat_facts(&st);
                        if (!sf) {
                                json_object_put(o);
                                r = -ENOMEM;
                                break;
                        }
                        json_object_object_foreach(sf, key, value) json_object_object_add(o, key, json_object_get(value));
                        json_object_put(sf);
                } else if (add(o, "stat_error", json_object_new_string(strerror(errno))) < 0) {
                        json_object_put(o);
                        r = -ENOMEM;
                        break;
                }
                snprintf(info_path, sizeof info_path, "%s/%d/fdinfo/%ld", proc_root, (int) pid, fd);
                _cleanup_free_ char *info = NULL;
                kb_procfs_fdinfo fi;
                if (kb_read_file(AT_FDCWD, info_path, 0, 64 * 1024, &info, NULL) == 0 && kb_procfs_fdinfo_parse(info, &fi) == 0) {
                        if (add(o, "flags", json_object_new_int64((int64_t) fi.flags)) < 0 ||
                            add(o, "mnt_id", json_object_new_int64(fi.mnt_id)) < 0 ||
                            (fi.pid != LLONG_MIN && add(o, "pid", json_object_new_int64(fi.pid)) < 0)) {
                                json_object_put(o);
                                r = -ENOMEM;
                                break;
                        }
                } else if (add(o, "fdinfo_error", json_object_new_string("unreadable")) < 0) {
                        json_object_put(o);
                        r = -ENOMEM;
                        break;
                }
                r = push(fds, o);
        }
        closedir(d);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(fds);
        return 0;
}

/* "exe": {"path", "dev", "ino"} of the program pid runs (stat through /proc/<pid>/exe, the file
 * the kernel holds, whatever its path now names), or "exe_error". -ENOMEM only. */
static int exe_facts(const char *proc_root, pid_t pid, json_object *proc) {
        char link[PATH_MAX], target[TARGET_MAX];
        struct stat st;
        snprintf(link, sizeof link, "%s/%d/exe", proc_root, (int) pid);
        ssize_t tl = readlink(link, target, sizeof target - 1);
        if (tl < 0 || stat(link, &st) < 0)
                return add(proc, "exe_error", json_object_new_string(strerror(errno)));
        target[tl] = '\0';
        json_object *exe = json_object_new_object();
        if (!exe || add(exe, "path", json_object_new_string(target)) < 0 || add(exe, "dev", dev_string(st.st_dev)) < 0 ||
            add(exe, "ino", json_object_new_int64((int64_t) st.st_ino)) < 0) {
                json_object_put(exe);
                return -ENOMEM;
        }
        return add(proc, "exe", exe);
}

/* Everything about one sandbox process. -ESRCH if it ended meanwhile. */
static int inspect_process(const kb_inspect_target *t, pid_t pid, json_object **ret) {
        _cleanup_json_ json_object *errors = json_object_new_array();
        _cleanup_free_ char *status_text = NULL, *stat_text = NULL;
        json_object *p = NULL;
        if (!errors)
                return -ENOMEM;
        int r = read_proc(t->proc_root, pid, "status", KB_PROCFS_STATUS_MAX, &status_text, NULL);
        if (r == -ESRCH)
                return r;
        if (r >= 0)
                r = kb_procfs_status_parse(status_text, &p);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                /* Unreadable status: the process is still listed, with only the error. */
                p = json_object_new_object();
                if (!p || note_error(errors, "status", r) < 0) {
                        json_object_put(p);
                        return -ENOMEM;
                }
        }
        _cleanup_json_ json_object *proc = p;
        if (add(proc, "pid", json_object_new_int(pid)) < 0)
                return -ENOMEM;
        kb_procfs_stat st;
        r = read_proc(t->proc_root, pid, "stat", KB_PROCFS_STAT_MAX, &stat_text, NULL);
        if (r == -ESRCH)
                return r;
        if (r >= 0)
                r = kb_procfs_stat_parse(stat_text, &st);
        if (r >= 0) {
                if (add(proc, "session", json_object_new_int(st.session)) < 0 ||
                    add(proc, "pgrp", json_object_new_int(st.pgrp)) < 0 ||
                    add(proc, "tty_nr", json_object_new_int(st.tty_nr)) < 0)
                        return -ENOMEM;
        } else if (note_error(errors, "stat", r) < 0)
                return -ENOMEM;
        json_object *ns = NULL;
        r = ns_object(t->proc_root, pid, errors, &ns);
        if (r < 0)
                return r;
        if (add(proc, "ns", ns) < 0)
                return -ENOMEM;
        json_object *owners = NULL;
        r = ns_owners_object(t->proc_root, pid, errors, &owners);
        if (r < 0)
                return r;
        if (add(proc, "ns_owners", owners) < 0)
                return -ENOMEM;
        r = exe_facts(t->proc_root, pid, proc);
        if (r < 0)
                return r;
        static const char *const maps[] = {"uid_map", "gid_map"};
        for (size_t i = 0; i < KB_ELEMENTSOF(maps); i++) {
                _cleanup_free_ char *text = NULL;
                r = read_proc(t->proc_root, pid, maps[i], MAP_MAX, &text, NULL);
                if (r == -ESRCH)
                        return r;
                if (r >= 0 ? add(proc, maps[i], map_text(text)) < 0 : note_error(errors, maps[i], r) < 0)
                        return -ENOMEM;
        }
        r = scan_texts(t, pid, proc, errors);
        if (r < 0)
                return r;
        json_object *fds = NULL;
        r = fd_facts(t->proc_root, pid, errors, &fds);
        if (r < 0)
                return r;
        if (add(proc, "fds", fds) < 0 || add(proc, "errors", TAKE_PTR(errors)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(proc);
        return 0;
}

typedef struct proc_entry {
        pid_t pid, ppid;
        bool member;  /* of the sandbox */
        bool launch;  /* kbound or one of its descendants outside the sandbox */
        int ns_read;  /* outside the sandbox: 1 ns[] read, 0 gone meanwhile, -1 not readable (another
                       * user's process) */
        uint64_t ns[NS_TYPES];
        char comm[17];
} proc_entry;

/* Every process of proc_root with its parent; *ret is malloc'd. */
static int list_processes(const char *proc_root, proc_entry **ret, size_t *ret_n) {
        DIR *d = opendir(proc_root);
        if (!d)
                return -errno;
        size_t n = 0, cap = 256;
        proc_entry *v = malloc(cap * sizeof *v);
        int r = v ? 0 : -ENOMEM;
        struct dirent *de;
        while (r >= 0 && (de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);
                if (*end || pid <= 0 || pid > INT_MAX)
                        continue;
                _cleanup_free_ char *text = NULL;
                kb_procfs_stat st;
                if (read_proc(proc_root, (pid_t) pid, "stat", KB_PROCFS_STAT_MAX, &text, NULL) < 0 ||
                    kb_procfs_stat_parse(text, &st) < 0)
                        continue; /* gone meanwhile */
                if (n == cap) {
                        if (cap >= PROCS_MAX) {
                                r = -E2BIG;
                                break;
                        }
                        proc_entry *nv = realloc(v, 2 * cap * sizeof *v);
                        if (!nv) {
                                r = -ENOMEM;
                                break;
                        }
                        v = nv;
                        cap *= 2;
                }
                v[n] = (proc_entry) {.pid = (pid_t) pid, .ppid = st.ppid};
                memcpy(v[n].comm, st.comm, sizeof v[n].comm);
                n++;
        }
        closedir(d);
        if (r < 0) {
                free(v);
                return r;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

/* Orders entries by pid, so a pid is found by binary search. */
static int by_pid(const void *a, const void *b) {
        pid_t x = ((const proc_entry *) a)->pid, y = ((const proc_entry *) b)->pid;
        return (x > y) - (x < y);
}

#define NO_ENTRY SIZE_MAX

/* Index of pid in procs (sorted by pid), or NO_ENTRY. */
static size_t entry_of(const proc_entry *procs, size_t n, pid_t pid) {
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (procs[mid].pid == pid)
                        return mid;
                if (procs[mid].pid < pid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NO_ENTRY;
}

/* Who is whose child, as index lists: the children of entry i are child[first[i] .. first[i + 1]). */
typedef struct proc_tree {
        size_t *first, *child, *queue;
} proc_tree;

static void proc_tree_free(proc_tree *tree) {
        free(tree->first);
        free(tree->child);
        free(tree->queue);
}

/* Built in two passes over procs (sorted by pid): count each parent's children, then place them. */
static int proc_tree_build(const proc_entry *procs, size_t n, proc_tree *tree) {
        tree->first = calloc(n + 1, sizeof(size_t));
        tree->child = malloc((n ? n : 1) * sizeof(size_t));
        tree->queue = malloc((n ? n : 1) * sizeof(size_t));
        _cleanup_free_ size_t *parent = malloc((n ? n : 1) * sizeof(size_t)), *next = NULL;
        if (!tree->first || !tree->child || !tree->queue || !parent)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                parent[i] = procs[i].ppid > 0 && procs[i].ppid != procs[i].pid ? entry_of(procs, n, procs[i].ppid) : NO_ENTRY;
                if (parent[i] != NO_ENTRY)
                        tree->first[parent[i] + 1]++;
        }
        for (size_t i = 0; i < n; i++)
                tree->first[i + 1] += tree->first[i];
        next = malloc((n ? n : 1) * sizeof(size_t));
        if (!next)
                return -ENOMEM;
        memcpy(next, tree->first, n * sizeof(size_t));
        for (size_t i = 0; i < n; i++)
                if (parent[i] != NO_ENTRY)
                        tree->child[next[parent[i]]++] = i;
        return 0;
}

enum { MARK_MEMBER, MARK_LAUNCH };

static bool *mark_of(proc_entry *e, int mark) {
        return mark == MARK_MEMBER ? &e->member : &e->launch;
}

/* Gives every descendant of an entry that has the mark the mark too, never entering a sandbox
 * member when marking the launch side. Each entry is queued at most once: linear in n. */
static void mark_descendants(proc_entry *procs, size_t n, const proc_tree *tree, int mark) {
        size_t head = 0, tail = 0;
        for (size_t i = 0; i < n; i++)
                if (*mark_of(&procs[i], mark))
                        tree->queue[tail++] = i;
        while (head < tail) {
                size_t i = tree->queue[head++];
                for (size_t c = tree->first[i]; c < tree->first[i + 1]; c++) {
                        proc_entry *e = &procs[tree->child[c]];
                        if (*mark_of(e, mark) || (mark == MARK_LAUNCH && e->member))
                                continue;
                        *mark_of(e, mark) = true;
                        tree->queue[tail++] = tree->child[c];
                }
        }
}

/* The sandbox: init_pid, its descendants, whatever else is in its pid namespace and their
 * descendants; and the launch side: kbound and its descendants outside the sandbox. procs is
 * sorted by pid here, and the parent links indexed once, so the cost is linear in the number of
 * host processes (plus the sort). Returns 0 or -ENOMEM. */
static int classify(const kb_inspect_target *t, proc_entry *procs, size_t n) {
        pid_t self = getpid();
        qsort(procs, n, sizeof *procs, by_pid);
        proc_tree tree = {0};
        int r = proc_tree_build(procs, n, &tree);
        if (r < 0) {
                proc_tree_free(&tree);
                return r;
        }
        for (size_t i = 0; i < n; i++) {
                procs[i].member = procs[i].pid == t->init_pid;
                procs[i].launch = procs[i].pid == self;
        }
        mark_descendants(procs, n, &tree, MARK_MEMBER);
        /* A process of the sandbox's pid namespace that is not a descendant (reparented past init,
         * or started into it from outside) is still the sandbox's, and so are its children. Every
         * namespace of the others is read here once: ns_holder_facts compares them. */
        for (size_t i = 0; i < n; i++) {
                if (procs[i].member)
                        continue;
                int nr = ns_inodes_all(t->proc_root, procs[i].pid, procs[i].ns);
                procs[i].ns_read = nr == 0 ? 1 : nr == -ESRCH ? 0 : -1;
                if (nr == 0 && procs[i].ns[NS_PID] == t->pidns_ino)
                        procs[i].member = true;
        }
        mark_descendants(procs, n, &tree, MARK_MEMBER);
        mark_descendants(procs, n, &tree, MARK_LAUNCH);
        proc_tree_free(&tree);
        return 0;
}

/* Opens path as the sandbox would resolve it from root_fd (absolute links stay inside) and stats
 * what it names, without following a last symlink. */
static int stat_in_root(int root_fd, const char *path, struct stat *st) {
        struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                               .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
        long fd = syscall(SYS_openat2, root_fd, path, &how, sizeof how);
        if (fd < 0)
                return -errno;
        int r = fstat((int) fd, st) < 0 ? -errno : 0;
        close((int) fd);
        return r;
}

static const char *str_of(json_object *o, const char *key) {
        json_object *v = NULL;
        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* The kernel's mount table, each mount with what its mount point is inside the sandbox. */
static int kernel_mounts(const kb_inspect_target *t, int root_fd, json_object *snap, json_object *errors) {
        _cleanup_free_ char *mi = NULL;
        json_object *mounts = NULL;
        int r = read_proc(t->proc_root, t->kernel_pid, "mountinfo", KB_PROCFS_MOUNTINFO_MAX, &mi, NULL);
        if (r >= 0)
                r = kb_procfs_mountinfo_parse(mi, &mounts);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return note_error(errors, "the kernel's mountinfo", r);
        for (size_t i = 0; i < json_object_array_length(mounts); i++) {
                json_object *m = json_object_array_get_idx(mounts, i);
                const char *mp = str_of(m, "mountpoint");
                struct stat st;
                int e = root_fd < 0 ? -EBADF : mp ? stat_in_root(root_fd, mp, &st) : -EPROTO;
                if (e == 0 ? add(m, "target", stat_facts(&st)) < 0
                           : add(m, "target_error", json_object_new_string(strerror(-e))) < 0) {
                        json_object_put(mounts);
                        return -ENOMEM;
                }
        }
        return add(snap, "mounts", mounts);
}

/* The network tables of the namespace pid is in. */
static int net_facts(const kb_inspect_target *t, pid_t pid, json_object *errors, json_object **ret) {
        _cleanup_json_ json_object *net = json_object_new_object(), *inodes = json_object_new_array();
        if (!net || !inodes)
                return -ENOMEM;
        int r;
        _cleanup_free_ char *unix_text = NULL;
        json_object *unix_list = NULL;
        r = read_proc(t->proc_root, pid, "net/unix", KB_PROCFS_NET_MAX, &unix_text, NULL);
        if (r >= 0)
                r = kb_procfs_unix_parse(unix_text, &unix_list);
        if (r == -ENOMEM || (r < 0 ? note_error(errors, "net/unix", r) : add(net, "unix", unix_list)) < 0)
                return -ENOMEM;
        for (const char *const *table = net_tables; *table; table++) {
                char name[32];
                _cleanup_free_ char *text = NULL;
                snprintf(name, sizeof name, "net/%s", *table);
                r = read_proc(t->proc_root, pid, name, KB_PROCFS_NET_MAX, &text, NULL);
                if (r == -ESRCH && process_exists(t->proc_root, pid))
                        continue; /* a table this kernel does not have (no IPv6, no udplite...) */
                if (r >= 0)
                        r = kb_procfs_net_inodes(text, inodes);
                if (r == -ENOMEM || (r < 0 && note_error(errors, name, r) < 0))
                        return -ENOMEM;
        }
        if (add(net, "socket_inodes", TAKE_PTR(inodes)) < 0)
                return -ENOMEM;
        static const struct {
                const char *file, *key;
                int kind; /* 0 dev, 1 route, 2 ipv6_route */
        } lists[] = {{"net/dev", "interfaces", 0}, {"net/route", "routes_v4", 1}, {"net/ipv6_route", "routes_v6", 2}};
        for (size_t i = 0; i < KB_ELEMENTSOF(lists); i++) {
                _cleanup_free_ char *text = NULL;
                json_object *v = NULL;
                r = read_proc(t->proc_root, pid, lists[i].file, KB_PROCFS_NET_MAX, &text, NULL);
                if (r == -ESRCH && i == 2 && process_exists(t->proc_root, pid)) {
                        /* no IPv6 in this kernel: no IPv6 routes */
                        if (add(net, lists[i].key, json_object_new_array()) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (r >= 0)
                        r = lists[i].kind == 0 ? kb_procfs_net_dev_parse(text, &v) : kb_procfs_routes_parse(text, lists[i].kind == 2, &v);
                if (r == -ENOMEM || (r < 0 ? note_error(errors, lists[i].file, r) : add(net, lists[i].key, v)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(net);
        return 0;
}

static int64_t int_of(json_object *o, const char *key) {
        json_object *v = NULL;
        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -1;
}

/* Per endpoint: the listening sockets bound at its path in the kernel's namespace, and which
 * sandbox processes hold them. */
static int endpoint_facts(const kb_inspect_target *t, json_object *kernel_net, json_object *processes, json_object **ret) {
        _cleanup_json_ json_object *out = json_object_new_array();
        if (!out)
                return -ENOMEM;
        json_object *unix_list = NULL;
        json_object_object_get_ex(kernel_net, "unix", &unix_list);
        for (const char *const *ep = t->endpoints; ep && *ep; ep++) {
                json_object *e = json_object_new_object(), *inodes = json_object_new_array(), *holders = json_object_new_array();
                if (!e || !inodes || !holders || add(e, "path", json_object_new_string(*ep)) < 0) {
                        json_object_put(e);
                        json_object_put(inodes);
                        json_object_put(holders);
                        return -ENOMEM;
                }
                json_object_object_add(e, "inodes", inodes);
                json_object_object_add(e, "holders", holders);
                if (push(out, e) < 0)
                        return -ENOMEM;
                for (size_t i = 0; unix_list && i < json_object_array_length(unix_list); i++) {
                        json_object *u = json_object_array_get_idx(unix_list, i), *l = NULL;
                        const char *path = str_of(u, "path");
                        if (!path || strcmp(path, *ep) != 0 || !json_object_object_get_ex(u, "listening", &l) ||
                            !json_object_get_boolean(l))
                                continue;
                        int64_t inode = int_of(u, "inode");
                        if (push(inodes, json_object_new_int64(inode)) < 0)
                                return -ENOMEM;
                        char want[64];
                        snprintf(want, sizeof want, "socket:[%lld]", (long long) inode);
                        for (size_t p = 0; p < json_object_array_length(processes); p++) {
                                json_object *proc = json_object_array_get_idx(processes, p), *fds = NULL;
                                json_object_object_get_ex(proc, "fds", &fds);
                                bool holds = false;
                                for (size_t f = 0; fds && f < json_object_array_length(fds) && !holds; f++) {
                                        const char *target = str_of(json_object_array_get_idx(fds, f), "target");
                                        holds = target && strcmp(target, want) == 0;
                                }
                                if (holds && push(holders, json_object_new_int64(int_of(proc, "pid"))) < 0)
                                        return -ENOMEM;
                        }
                }
        }
        *ret = TAKE_PTR(out);
        return 0;
}

/* Pipe and socket inodes in pid's descriptor table, appended to inodes as "pipe:[N]"/"socket:[N]". */
static int channel_inodes(const char *proc_root, pid_t pid, json_object *inodes) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%d/fd", proc_root, (int) pid);
        DIR *d = opendir(dir);
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        int r = 0;
        struct dirent *de;
        while (r >= 0 && (de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                char link[PATH_MAX + 288], target[128];
                snprintf(link, sizeof link, "%s/%s", dir, de->d_name);
                ssize_t n = readlink(link, target, sizeof target - 1);
                if (n <= 0)
                        continue;
                target[n] = '\0';
                if (strncmp(target, "pipe:[", 6) == 0 || strncmp(target, "socket:[", 8) == 0)
                        r = push(inodes, json_object_new_string(target));
        }
        closedir(d);
        return r;
}

/* "NAME=sha256:<hex>" for one environment entry of len bytes: the name in clear (at most 256 bytes
 * of it), the whole entry only as a digest, so the launcher's environment can be compared with
 * the one kbound passed without the facts holding a value: a daemon's secret never reaches a
 * report. An entry without '=' has an empty name. NULL if out of memory. */
static json_object *env_digest(const char *entry, size_t len) {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int md_len = 0;
        if (!EVP_Digest(entry, len, md, &md_len, EVP_sha256(), NULL))
                return NULL;
        const char *eq = memchr(entry, '=', len);
        size_t name_len = eq ? (size_t) (eq - entry) : 0;
        if (name_len > 256)
                name_len = 256;
        char out[256 + sizeof "=sha256:" + 2 * EVP_MAX_MD_SIZE];
        memcpy(out, entry, name_len);
        size_t n = name_len + (size_t) snprintf(out + name_len, sizeof out - name_len, "=sha256:");
        for (unsigned int i = 0; i < md_len; i++)
                n += (size_t) snprintf(out + n, sizeof out - n, "%02x", md[i]);
        return json_object_new_string_len(out, (int) n);
}

json_object *kb_inspect_env_digests(char *const *env) {
        _cleanup_json_ json_object *out = json_object_new_array();
        for (char *const *e = env; out && e && *e; e++)
                if (push(out, env_digest(*e, strlen(*e))) < 0)
                        return NULL;
        return TAKE_PTR(out);
}

/* The launcher's environment as env_digest entries, in order ("environ"), and the program it runs
 * ("exe"); what cannot be read is noted in errors. -ENOMEM only. */
static int launcher_identity(const kb_inspect_target *t, pid_t launcher, json_object *l, json_object *errors) {
        _cleanup_free_ char *env = NULL;
        size_t len = 0;
        int r = launcher > 0 ? read_proc(t->proc_root, launcher, "environ", ENVIRON_MAX, &env, &len) : -ESRCH;
        if (r < 0)
                return note_error(errors, "the launcher's environment", r);
        _cleanup_json_ json_object *digests = json_object_new_array();
        if (!digests)
                return -ENOMEM;
        for (size_t i = 0; i < len;) {
                size_t elen = strnlen(env + i, len - i);
                if (push(digests, env_digest(env + i, elen)) < 0)
                        return -ENOMEM;
                i += elen + 1;
        }
        if (add(l, "environ", TAKE_PTR(digests)) < 0)
                return -ENOMEM;
        return exe_facts(t->proc_root, launcher, l);
}

/* The process running bwrap outside the sandbox (init's parent), what it was started with, and the
 * channels the launch side (kbound, the launcher and its helpers) holds. */
static int launcher_facts(const kb_inspect_target *t, const proc_entry *procs, size_t n, json_object *errors,
                          json_object **ret) {
        _cleanup_json_ json_object *l = json_object_new_object(), *argv = json_object_new_array(),
                                   *inodes = json_object_new_array();
        if (!l || !argv || !inodes)
                return -ENOMEM;
        pid_t launcher = -1, launcher_parent = -1;
        for (size_t i = 0; i < n; i++)
                if (procs[i].pid == t->init_pid)
                        launcher = procs[i].ppid;
        for (size_t i = 0; i < n; i++)
                if (procs[i].pid == launcher)
                        launcher_parent = procs[i].ppid;
        if (add(l, "pid", json_object_new_int(launcher)) < 0 || add(l, "ppid", json_object_new_int(launcher_parent)) < 0 ||
            add(l, "spawned", json_object_new_int(t->launcher_pid)) < 0 || add(l, "kbound", json_object_new_int(getpid())) < 0)
                return -ENOMEM;
        _cleanup_free_ char *cmd = NULL;
        size_t len = 0;
        int r = launcher > 0 ? read_proc(t->proc_root, launcher, "cmdline", CMDLINE_MAX, &cmd, &len) : -ESRCH;
        if (r < 0) {
                if (note_error(errors, "the launcher's command line", r) < 0)
                        return -ENOMEM;
        } else {
                size_t count = 0;
                for (size_t i = 0; i < len && count < ARGV_MAX; count++) {
                        size_t alen = strnlen(cmd + i, len - i);
                        if (push(argv, json_object_new_string_len(cmd + i, (int) alen)) < 0)
                                return -ENOMEM;
                        i += alen + 1;
                }
                if (count == ARGV_MAX && note_error(errors, "the launcher's command line (too many arguments)", E2BIG) < 0)
                        return -ENOMEM;
        }
        if (add(l, "argv", TAKE_PTR(argv)) < 0 || launcher_identity(t, launcher, l, errors) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (!procs[i].launch)
                        continue;
                r = channel_inodes(t->proc_root, procs[i].pid, inodes);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && note_error(errors, "the launch side's descriptors", r) < 0)
                        return -ENOMEM;
        }
        if (add(l, "outside_inodes", TAKE_PTR(inodes)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

/* A few namespace inodes (the sandbox's, kbound's), looked up linearly: there are tens. */
#define NS_SET_MAX 1024
typedef struct ns_set {
        uint64_t ino[NS_SET_MAX];
        size_t n;
} ns_set;

static bool ns_set_has(const ns_set *set, uint64_t ino) {
        for (size_t i = 0; i < set->n; i++)
                if (set->ino[i] == ino)
                        return true;
        return false;
}

/* Adds ino unless it is 0, already there, or in except. -E2BIG when full. */
static int ns_set_add(ns_set *set, uint64_t ino, const ns_set *except) {
        if (ino == 0 || ns_set_has(set, ino) || (except && ns_set_has(except, ino)))
                return 0;
        if (set->n == NS_SET_MAX)
                return -E2BIG;
        set->ino[set->n++] = ino;
        return 0;
}

/* "ns_holders" [{"pid", "name", "ns", "inode"}] and "ns_outside" {"read", "unreadable", "holders"}:
 * the processes outside the sandbox (the launch side too) that are in one of the sandbox's
 * namespaces. The sandbox's namespaces are those of its processes and the user namespaces above
 * them, less kbound's own and those above kbound's user namespace, which every host process
 * shares. A process outside whose namespaces kbound cannot read (another user's, when kbound is
 * not root) is counted as unreadable, not judged. -ENOMEM only. */
static int ns_holder_facts(const kb_inspect_target *t, const proc_entry *procs, size_t n, json_object *processes,
                           json_object *snap, json_object *errors) {
        _cleanup_free_ ns_set *own = calloc(1, sizeof *own), *sandbox = calloc(1, sizeof *sandbox);
        _cleanup_json_ json_object *holders = json_object_new_array(), *own_chain = json_object_new_array();
        if (!own || !sandbox || !holders || !own_chain)
                return -ENOMEM;
        uint64_t mine[NS_TYPES];
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%d/ns/user", t->proc_root, (int) getpid());
        _cleanup_close_ int user_fd = open(path, O_RDONLY | O_CLOEXEC);
        int r = ns_inodes_all(t->proc_root, getpid(), mine);
        if (r >= 0)
                r = user_fd < 0 ? -errno : owner_chain(user_fd, true, own_chain);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return note_error(errors, "kbound's own namespaces", r);
        for (size_t i = 0; i < NS_TYPES; i++)
                (void) ns_set_add(own, mine[i], NULL);
        for (size_t i = 0; i < json_object_array_length(own_chain); i++)
                (void) ns_set_add(own, (uint64_t) json_object_get_int64(json_object_array_get_idx(own_chain, i)), NULL);
        r = 0;
        for (size_t p = 0; r >= 0 && p < json_object_array_length(processes); p++) {
                json_object *proc = json_object_array_get_idx(processes, p), *ns = NULL, *owners = NULL;
                json_object_object_get_ex(proc, "ns", &ns);
                json_object_object_get_ex(proc, "ns_owners", &owners);
                if (ns) {
                        json_object_object_foreach(ns, name, ino) {
                                (void) name;
                                r = r < 0 ? r : ns_set_add(sandbox, (uint64_t) json_object_get_int64(ino), own);
                        }
                }
                if (owners) {
                        json_object_object_foreach(owners, oname, chain) {
                                (void) oname;
                                for (size_t c = 0; r >= 0 && c < json_object_array_length(chain); c++)
                                        r = ns_set_add(sandbox, (uint64_t) json_object_get_int64(json_object_array_get_idx(chain, c)), own);
                        }
                }
        }
        if (r < 0 && note_error(errors, "the sandbox's namespaces (too many)", r) < 0)
                return -ENOMEM;
        int64_t read = 0, unreadable = 0, found = 0;
        for (size_t i = 0; i < n; i++) {
                if (procs[i].member || procs[i].ns_read == 0)
                        continue;
                if (procs[i].ns_read < 0) {
                        unreadable++;
                        continue;
                }
                read++;
                for (size_t k = 0; k < NS_TYPES; k++) {
                        if (!procs[i].ns[k] || !ns_set_has(sandbox, procs[i].ns[k]))
                                continue;
                        if (found++ >= NS_HOLDERS_MAX)
                                continue;
                        json_object *h = json_object_new_object();
                        if (!h || add(h, "pid", json_object_new_int(procs[i].pid)) < 0 ||
                            add(h, "name", json_object_new_string(procs[i].comm)) < 0 ||
                            add(h, "ns", json_object_new_string(namespaces[k])) < 0 ||
                            add(h, "inode", json_object_new_int64((int64_t) procs[i].ns[k])) < 0 || push(holders, h) < 0) {
                                json_object_put(h);
                                return -ENOMEM;
                        }
                }
        }
        json_object *outside = json_object_new_object();
        if (!outside || add(outside, "read", json_object_new_int64(read)) < 0 ||
            add(outside, "unreadable", json_object_new_int64(unreadable)) < 0 ||
            add(outside, "holders", json_object_new_int64(found)) < 0) {
                json_object_put(outside);
                return -ENOMEM;
        }
        if (add(snap, "ns_outside", outside) < 0 || add(snap, "ns_holders", TAKE_PTR(holders)) < 0)
                return -ENOMEM;
        return 0;
}

/* Where the sandbox's mounts expose the host object at path: every mount of the same filesystem
 * whose root holds it and that is not covered at that place, confirmed by a stat through the
 * kernel's root. */
static int reach_one(const kb_inspect_target *t, json_object *mounts, int root_fd, const char *name, const char *path,
                     const char *kind, const char *claim, json_object *out) {
        json_object *e = json_object_new_object(), *exposed = json_object_new_array();
        if (!e || !exposed || add(e, "name", json_object_new_string(name)) < 0 ||
            add(e, "path", json_object_new_string(path)) < 0 || add(e, "kind", json_object_new_string(kind)) < 0 ||
            (claim && add(e, "claim", json_object_new_string(claim)) < 0)) {
                json_object_put(e);
                json_object_put(exposed);
                return -ENOMEM;
        }
        json_object_object_add(e, "exposed", exposed);
        if (push(out, e) < 0)
                return -ENOMEM;
        struct stat host_st;
        json_object *host_mounts = NULL;
        json_object_object_get_ex(t->host, "mounts", &host_mounts);
        json_object *hm = kb_procfs_mount_of(host_mounts, path);
        char rel[PATH_MAX];
        if (lstat(path, &host_st) < 0)
                return add(e, "error", json_object_new_string(strerror(errno)));
        if (!hm || !mounts || !kb_procfs_fs_path(hm, path, rel, sizeof rel))
                return add(e, "error", json_object_new_string("no host mount holds it"));
        const char *dev = str_of(hm, "dev");
        for (size_t i = 0; i < json_object_array_length(mounts); i++) {
                json_object *m = json_object_array_get_idx(mounts, i);
                const char *mdev = str_of(m, "dev");
                char at[PATH_MAX];
                if (!mdev || !dev || strcmp(mdev, dev) != 0 || !kb_procfs_path_in_mount(m, rel, at, sizeof at))
                        continue;
                if (kb_procfs_mount_of(mounts, at) != m)
                        continue; /* covered there by another mount */
                struct stat st;
                int r = root_fd < 0 ? -EBADF : stat_in_root(root_fd, at, &st);
                bool confirmed = r == 0 && st.st_dev == host_st.st_dev && st.st_ino == host_st.st_ino;
                json_object *x = json_object_new_object();
                if (!x || add(x, "at", json_object_new_string(at)) < 0 ||
                    add(x, "confirmed", json_object_new_boolean(confirmed)) < 0 ||
                    (r < 0 && add(x, "error", json_object_new_string(strerror(-r))) < 0) ||
                    (r == 0 && !confirmed && add(x, "error", json_object_new_string("a different object is there")) < 0)) {
                        json_object_put(x);
                        return -ENOMEM;
                }
                if (push(exposed, x) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Listening pathname unix sockets of every network namespace the host lets kbound read (one
 * process per namespace), except the sandbox's and those under the team's own runtime folder. */
static int host_listeners(const kb_inspect_target *t, const proc_entry *procs, size_t n, json_object *snap,
                          json_object *mounts, int root_fd, json_object *reach) {
        _cleanup_free_ uint64_t *seen = calloc(LISTENER_NAMESPACES_MAX, sizeof(uint64_t));
        _cleanup_json_ json_object *paths = json_object_new_object();
        if (!seen || !paths)
                return -ENOMEM;
        size_t n_seen = 0, unreadable = 0;
        for (size_t i = 0; i < n && n_seen < LISTENER_NAMESPACES_MAX; i++) {
                /* Keyed by the table's own inode, which differs per network namespace and, unlike
                 * ns/net, can be read for another user's process without ptrace rights. */
                char table[PATH_MAX];
                struct stat tst;
                snprintf(table, sizeof table, "%s/%d/net/unix", t->proc_root, (int) procs[i].pid);
                if (procs[i].member || stat(table, &tst) < 0)
                        continue;
                uint64_t ino = (uint64_t) tst.st_ino;
                bool known = false;
                for (size_t j = 0; j < n_seen && !known; j++)
                        known = seen[j] == ino;
                if (known)
                        continue;
                seen[n_seen++] = ino;
                _cleanup_free_ char *text = NULL;
                json_object *list = NULL;
                int r = read_proc(t->proc_root, procs[i].pid, "net/unix", KB_PROCFS_NET_MAX, &text, NULL);
                if (r >= 0)
                        r = kb_procfs_unix_parse(text, &list);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        unreadable++;
                        continue;
                }
                for (size_t k = 0; k < json_object_array_length(list); k++) {
                        json_object *u = json_object_array_get_idx(list, k), *l = NULL;
                        const char *path = str_of(u, "path");
                        if (!path || path[0] != '/' || !json_object_object_get_ex(u, "listening", &l) ||
                            !json_object_get_boolean(l) || (t->own_runtime && kb_procfs_path_under(path, t->own_runtime)))
                                continue;
                        json_object_object_add(paths, path, NULL);
                }
                json_object_put(list);
        }
        if (add(snap, "listener_namespaces", json_object_new_int((int) n_seen)) < 0 ||
            add(snap, "listener_namespaces_unreadable", json_object_new_int((int) unreadable)) < 0)
                return -ENOMEM;
        json_object_object_foreach(paths, path, unused) {
                (void) unused;
                int r = reach_one(t, mounts, root_fd, "listening unix socket", path, "socket", "boundary.sockets", reach);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* "kbound_net_sockets": the entries of kbound's own network namespace's unix table whose inode a
 * sandbox process holds. */
static int kbound_side_sockets(const kb_inspect_target *t, json_object *processes, json_object *snap, json_object *errors) {
        _cleanup_free_ char *text = NULL;
        json_object *list = NULL;
        int r = read_proc(t->proc_root, getpid(), "net/unix", KB_PROCFS_NET_MAX, &text, NULL);
        if (r >= 0)
                r = kb_procfs_unix_parse(text, &list);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return note_error(errors, "kbound's own net/unix", r);
        _cleanup_json_ json_object *held = json_object_new_object(), *out = json_object_new_array();
        if (!held || !out) {
                json_object_put(list);
                return -ENOMEM;
        }
        for (size_t i = 0; i < json_object_array_length(processes); i++) {
                json_object *fds = NULL;
                json_object_object_get_ex(json_object_array_get_idx(processes, i), "fds", &fds);
                for (size_t f = 0; fds && f < json_object_array_length(fds); f++) {
                        const char *target = str_of(json_object_array_get_idx(fds, f), "target");
                        if (target && strncmp(target, "socket:[", 8) == 0)
                                json_object_object_add(held, target, NULL);
                }
        }
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *u = json_object_array_get_idx(list, i);
                char key[64];
                snprintf(key, sizeof key, "socket:[%lld]", (long long) int_of(u, "inode"));
                if (json_object_object_get_ex(held, key, NULL) && push(out, json_object_get(u)) < 0) {
                        json_object_put(list);
                        return -ENOMEM;
                }
        }
        json_object_put(list);
        return add(snap, "kbound_net_sockets", TAKE_PTR(out));
}

/* What every look starts with: snap gets "label", "taken_ms", "processes" (each sandbox process
 * inspected), "errors", "vanished", "ns_holders" and "ns_outside"; the host's processes, listed
 * and classified, are returned for the rest of the look (*ret_procs, malloc'd). *ret_kernel_seen:
 * t->kernel_pid was among the sandbox's processes. -ENOMEM only. */
static int look_at_processes(const kb_inspect_target *t, const char *label, json_object *snap, proc_entry **ret_procs,
                             size_t *ret_n, bool *ret_kernel_seen) {
        json_object *processes = json_object_new_array(), *errors = json_object_new_array();
        if (add(snap, "label", json_object_new_string(label ? label : "")) < 0 ||
            add(snap, "taken_ms", json_object_new_int64(kb_now_ms())) < 0 || add(snap, "processes", processes) < 0 ||
            add(snap, "errors", errors) < 0)
                return -ENOMEM;
        _cleanup_free_ proc_entry *procs = NULL;
        size_t n = 0;
        int r = list_processes(t->proc_root, &procs, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && note_error(errors, "the process list", r) < 0)
                return -ENOMEM;
        if (classify(t, procs, n) < 0)
                return -ENOMEM;
        int vanished = 0;
        bool kernel_seen = false;
        size_t kept = 0;
        for (size_t i = 0; i < n; i++) {
                if (!procs[i].member)
                        continue;
                if (kept == SANDBOX_PROCS_MAX) {
                        if (note_error(errors, "more sandbox processes than kbound inspects", E2BIG) < 0)
                                return -ENOMEM;
                        break;
                }
                json_object *p = NULL;
                r = inspect_process(t, procs[i].pid, &p);
                if (r == -ESRCH) {
                        vanished++;
                        continue;
                }
                if (r < 0 || push(processes, p) < 0)
                        return -ENOMEM;
                kept++;
                kernel_seen |= procs[i].pid == t->kernel_pid;
        }
        if (add(snap, "vanished", json_object_new_int(vanished)) < 0 ||
            ns_holder_facts(t, procs, n, processes, snap, errors) < 0)
                return -ENOMEM;
        *ret_procs = TAKE_PTR(procs);
        *ret_n = n;
        *ret_kernel_seen = kernel_seen;
        return 0;
}

/* "init": {"pid", "syscall" (the start of /proc/<pid>/syscall: the call it is in and its first
 * argument), "reads_fd" (the descriptor it is blocked reading, -1 when it is not in read(2))} of
 * bwrap's init; what cannot be read is noted in errors. -ENOMEM only. */
static int init_facts(const kb_inspect_target *t, json_object *snap, json_object *errors) {
        _cleanup_free_ char *text = NULL;
        int r = read_proc(t->proc_root, t->init_pid, "syscall", 4096, &text, NULL);
        if (r < 0)
                return note_error(errors, "bwrap's init's system call", r);
        size_t cut = strcspn(text, "\n");
        const char *second = strchr(text, ' ');
        if (second && (size_t) (second - text) < cut) {
                const char *third = strchr(second + 1, ' ');
                if (third && (size_t) (third - text) < cut)
                        cut = (size_t) (third - text); /* the call and its first argument, no addresses */
        }
        char *end;
        errno = 0;
        long nr = strtol(text, &end, 10);
        int64_t fd = -1;
        if (!errno && end != text && *end == ' ' && nr == SYS_read) {
                unsigned long long v = strtoull(end + 1, &end, 16);
                fd = v <= INT_MAX ? (int64_t) v : -1;
        }
        json_object *init = json_object_new_object();
        if (!init || add(init, "pid", json_object_new_int(t->init_pid)) < 0 ||
            add(init, "syscall", json_object_new_string_len(text, (int) cut)) < 0 ||
            add(init, "reads_fd", json_object_new_int64(fd)) < 0) {
                json_object_put(init);
                return -ENOMEM;
        }
        return add(snap, "init", init);
}

int kb_inspect_pre_exec(const kb_inspect_target *t, json_object **ret) {
        if (!t || !t->proc_root || !ret)
                return -EINVAL;
        _cleanup_json_ json_object *snap = json_object_new_object();
        _cleanup_free_ proc_entry *procs = NULL;
        size_t n = 0;
        bool kernel_seen = false;
        json_object *errors = NULL, *launcher = NULL;
        if (!snap || look_at_processes(t, "pre-exec", snap, &procs, &n, &kernel_seen) < 0)
                return -ENOMEM;
        json_object_object_get_ex(snap, "errors", &errors);
        /* The init's call first: it shows whether it was still waiting while everything was read. */
        if (init_facts(t, snap, errors) < 0 || launcher_facts(t, procs, n, errors, &launcher) < 0 ||
            add(snap, "launcher", launcher) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(snap);
        return 0;
}

int kb_inspect_snapshot(const kb_inspect_target *t, const char *label, json_object **ret) {
        if (!t || !t->proc_root || !ret)
                return -EINVAL;
        _cleanup_json_ json_object *snap = json_object_new_object();
        json_object *net = json_object_new_object(), *tables = json_object_new_object(), *reach = json_object_new_array();
        if (!snap || add(snap, "net", net) < 0 || add(snap, "mount_tables", tables) < 0 || add(snap, "reach", reach) < 0)
                return -ENOMEM;
        _cleanup_free_ proc_entry *procs = NULL;
        size_t n = 0;
        bool kernel_seen = false;
        json_object *processes = NULL, *errors = NULL;
        if (look_at_processes(t, label, snap, &procs, &n, &kernel_seen) < 0)
                return -ENOMEM;
        json_object_object_get_ex(snap, "processes", &processes);
        json_object_object_get_ex(snap, "errors", &errors);
        int r;
        json_object *kernel_net = NULL;
        uint64_t kernel_mnt = 0;

        /* The kernel's mounts, seen through its own root; the tables of any other mount namespace
         * and every network namespace among the sandbox's processes. */
        char root_path[PATH_MAX];
        snprintf(root_path, sizeof root_path, "%s/%d/root", t->proc_root, (int) t->kernel_pid);
        _cleanup_close_ int root_fd = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0 && note_error(errors, "the kernel's root", -errno) < 0)
                return -ENOMEM;
        if (kernel_mounts(t, root_fd, snap, errors) < 0)
                return -ENOMEM;
        (void) ns_inode(t->proc_root, t->kernel_pid, "mnt", &kernel_mnt);
        for (size_t i = 0; i < json_object_array_length(processes); i++) {
                json_object *p = json_object_array_get_idx(processes, i), *ns = NULL;
                json_object_object_get_ex(p, "ns", &ns);
                pid_t pid = (pid_t) int_of(p, "pid");
                int64_t mnt = int_of(ns, "mnt"), netns = int_of(ns, "net");
                char key[32];
                if (mnt > 0 && (uint64_t) mnt != kernel_mnt) {
                        snprintf(key, sizeof key, "%lld", (long long) mnt);
                        if (!json_object_object_get_ex(tables, key, NULL)) {
                                _cleanup_free_ char *mi = NULL;
                                json_object *m = NULL;
                                r = read_proc(t->proc_root, pid, "mountinfo", KB_PROCFS_MOUNTINFO_MAX, &mi, NULL);
                                if (r >= 0)
                                        r = kb_procfs_mountinfo_parse(mi, &m);
                                if (r == -ENOMEM || (r < 0 ? note_error(errors, "a mountinfo", r) : add(tables, key, m)) < 0)
                                        return -ENOMEM;
                        }
                }
                if (netns > 0) {
                        snprintf(key, sizeof key, "%lld", (long long) netns);
                        if (!json_object_object_get_ex(net, key, NULL)) {
                                json_object *facts = NULL;
                                r = net_facts(t, pid, errors, &facts);
                                if (r == -ESRCH)
                                        continue;
                                if (r < 0 || add(net, key, facts) < 0)
                                        return -ENOMEM;
                        }
                        if (pid == t->kernel_pid) {
                                json_object_object_get_ex(net, key, &kernel_net);
                                if (add(snap, "kernel_net", json_object_new_string(key)) < 0)
                                        return -ENOMEM;
                        }
                }
        }
        /* Sockets of the sandbox's processes that live in kbound's own network namespace: a unix
         * socket accepted by a listener gets the namespace of the side that connected, so the
         * kernel's end of each of kbound's own connections is here, named by its listener. */
        if (kbound_side_sockets(t, processes, snap, errors) < 0)
                return -ENOMEM;
        json_object *endpoints = NULL, *launcher = NULL, *mounts = NULL;
        if (endpoint_facts(t, kernel_net, processes, &endpoints) < 0 || add(snap, "endpoints", endpoints) < 0 ||
            launcher_facts(t, procs, n, errors, &launcher) < 0 || add(snap, "launcher", launcher) < 0)
                return -ENOMEM;

        /* What of the host the mounts expose: the canaries, and every listening socket. */
        json_object_object_get_ex(snap, "mounts", &mounts);
        for (size_t i = 0; i < t->n_canaries; i++)
                if (t->canaries[i].path && reach_one(t, mounts, root_fd, t->canaries[i].name, t->canaries[i].path, "canary",
                                                     t->canaries[i].claim, reach) < 0)
                        return -ENOMEM;
        if (host_listeners(t, procs, n, snap, mounts, root_fd, reach) < 0)
                return -ENOMEM;

        r = 0;
        if (!kernel_seen) {
                if (note_error(errors, "the pinned kernel among the sandbox's processes", ESRCH) < 0)
                        return -ENOMEM;
                r = -ESRCH;
        }
        *ret = TAKE_PTR(snap);
        return r;
}
