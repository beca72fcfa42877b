/* inspect_refs.c: every reference a process holds but its descriptors: its working directory, root
 * and program, and its file mappings (each thread's own working directory and root:
 * inspect_threads.c). */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "evidence/inspect-internal.h"
#include "base/cleanup.h"
#include "base/procfs.h"

#define MAPS_MAX (8 << 20)   /* /proc/<pid>/maps read per process */
#define SMAPS_MAX (64 << 20) /* /proc/<pid>/smaps: some twenty lines a mapping */
#define MAPPINGS_MAX 4096    /* distinct mapped files kept per process */
#define REF_PATH_MAX 1024

json_object *kb_inspect_link_facts(const char *link, int *ret_err) {
        char target[REF_PATH_MAX];
        ssize_t n = readlink(link, target, sizeof target - 1);
        struct statx sx;
        if (n < 0 || statx(AT_FDCWD, link, 0, STATX_INO | STATX_TYPE | STATX_MNT_ID, &sx) < 0) {
                *ret_err = errno;
                return NULL;
        }
        target[n] = '\0';
        if (!(sx.stx_mask & STATX_MNT_ID)) {
                *ret_err = ENOSYS; /* this Linux does not say which mount a file is on */
                return NULL;
        }
        char dev[KB_PROCFS_DEV_MAX];
        kb_procfs_dev(sx.stx_dev_major, sx.stx_dev_minor, dev);
        json_object *o = json_object_new_object();
        if (!o || kb_fact_set_str(o, FACT_REF_LINK_TARGET, target) < 0 ||
            kb_fact_set_str(o, FACT_REF_LINK_TYPE, S_ISDIR(sx.stx_mode) ? "dir" : "reg") < 0 ||
            kb_fact_set_str(o, FACT_REF_LINK_DEV, dev) < 0 ||
            kb_fact_set_int(o, FACT_REF_LINK_INO, (int64_t) sx.stx_ino) < 0 ||
            kb_fact_set_int(o, FACT_REF_LINK_MNT_ID, (int64_t) sx.stx_mnt_id) < 0) {
                json_object_put(o);
                *ret_err = ENOMEM;
                return NULL;
        }
        return o;
}

/* Adds the link name of dir (/proc/<pid> or /proc/<pid>/task/<tid>) into o as the fact link, or
 * why not as the fact error (the judge never passes that, but for a zombie, which holds none).
 * -ENOMEM only. */
static int add_link(const char *dir, const char *name, json_object *o, kb_fact_obj link, kb_fact_str error) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        int err = 0;
        json_object *f = kb_inspect_link_facts(path, &err);
        if (!f && err == ENOMEM)
                return -ENOMEM;
        return f ? kb_fact_set_obj(o, link, f) : kb_fact_set_str(o, error, strerror(err));
}

/* Where the mapped file at path (as the host reads it in maps: the path in the process's own mount
 * namespace) is in the sandbox's view, looked up in root_fd (the kernel's root) without leaving
 * it or following a magic link: "reach" "same" with its "mnt_id" when that path is the very file
 * (dev, ino), "other" when another file is there, "none" when nothing is. */
static int map_reach(int root_fd, const char *path, unsigned major, unsigned minor, int64_t ino, json_object *m) {
        struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                               .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
        long fd = root_fd >= 0 ? syscall(SYS_openat2, root_fd, path, &how, sizeof how) : -1;
        if (fd < 0) {
                int e = root_fd >= 0 ? errno : EBADF;
                return e == ENOENT || e == ENOTDIR ? kb_fact_set_str(m, FACT_MAPPING_REACH, "none")
                                                   : kb_fact_set_str(m, FACT_MAPPING_REACH_ERROR, strerror(e));
        }
        struct statx sx;
        int r = statx((int) fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_INO | STATX_MNT_ID, &sx);
        int e = errno;
        close((int) fd);
        if (r < 0 || !(sx.stx_mask & STATX_MNT_ID))
                return kb_fact_set_str(m, FACT_MAPPING_REACH_ERROR, r < 0 ? strerror(e) : strerror(ENOSYS));
        if (sx.stx_dev_major != major || sx.stx_dev_minor != minor || (int64_t) sx.stx_ino != ino)
                return kb_fact_set_str(m, FACT_MAPPING_REACH, "other");
        if (kb_fact_set_str(m, FACT_MAPPING_REACH, "same") < 0)
                return -ENOMEM;
        return kb_fact_set_int(m, FACT_MAPPING_MNT_ID, (int64_t) sx.stx_mnt_id);
}

/* One maps line's file mapping, or 0 when it maps no file (anonymous, [heap], [vdso]...). may_write:
 * whether the mapping's VMA may be made writable (smaps' VmFlags "mw"), 1, 0, or -1 when not read
 * (smaps is read only for a process with a shared mapping that is not writable now: for any
 * other, the permissions say it). */
static int map_line(char *line, int root_fd, json_object *seen, json_object *maps, size_t *n, int may_write) {
        char range[64], perms[8], offset[32], dev[KB_PROCFS_DEV_MAX];
        unsigned long long ino;
        unsigned major, minor;
        int used = 0;
        /* "start-end perms offset maj:min inode path", the device in hex */
        if (sscanf(line, "%63s %7s %31s %x:%x %llu %n", range, perms, offset, &major, &minor, &ino, &used) < 6)
                return 0;
        kb_procfs_dev(major, minor, dev); /* as every other fact names a device */
        char *path = line + used;
        /* inode 0 is no file, but for a SysV segment: its inode is its id, and the first one a
         * namespace makes is 0 */
        if (path[0] != '/' || (ino == 0 && strncmp(path, "/SYSV", 5) != 0))
                return 0;
        bool deleted = false;
        size_t len = strlen(path);
        static const char suffix[] = " (deleted)";
        if (len > sizeof suffix - 1 && strcmp(path + len - (sizeof suffix - 1), suffix) == 0) {
                path[len - (sizeof suffix - 1)] = '\0';
                deleted = true;
        }
        bool shared = perms[3] == 's', writable = perms[1] == 'w';
        /* A writable shared mapping may write, whatever smaps says. */
        if (shared && writable)
                may_write = 1;
        /* One entry per file and kind of mapping: a library is mapped four times over. */
        char key[96];
        snprintf(key, sizeof key, "%s:%llu:%c%c%c", dev, ino, shared ? 's' : 'p', writable ? 'w' : '-',
                 !shared          ? '-'
                 : may_write > 0  ? 'm'
                 : may_write == 0 ? 'n'
                                  : '?');
        if (json_object_object_get_ex(seen, key, NULL))
                return 0;
        if (json_object_object_add(seen, key, NULL) < 0)
                return -ENOMEM;
        if (++*n > MAPPINGS_MAX)
                return -E2BIG;
        _cleanup_json_ json_object *m = json_object_new_object();
        if (!m || kb_fact_set_str(m, FACT_MAPPING_PATH, path) < 0 || kb_fact_set_str(m, FACT_MAPPING_DEV, dev) < 0 ||
            kb_fact_set_int(m, FACT_MAPPING_INO, (int64_t) ino) < 0 ||
            kb_fact_set_bool(m, FACT_MAPPING_SHARED, shared) < 0 ||
            kb_fact_set_bool(m, FACT_MAPPING_WRITABLE, writable) < 0 ||
            (shared && may_write >= 0 && kb_fact_set_bool(m, FACT_MAPPING_MAY_WRITE, may_write > 0) < 0) ||
            (deleted && kb_fact_set_bool(m, FACT_MAPPING_DELETED, true) < 0))
                return -ENOMEM;
        if (!deleted && map_reach(root_fd, path, major, minor, (int64_t) ino, m) < 0)
                return -ENOMEM;
        return kb_inspect_push(maps, TAKE_PTR(m));
}

/* Whether text (maps) has a shared file mapping that is not writable now: one the process may make
 * writable (mprotect) if its file was opened for writing, which only smaps' VmFlags say. */
static bool needs_vm_flags(const char *text) {
        for (const char *line = text; line && *line;) {
                char perms[8];
                int used = 0;
                if (sscanf(line, "%*s %7s %*s %*s %*u %n", perms, &used) == 1 && used > 0 && line[used] == '/' &&
                    perms[3] == 's' && perms[1] != 'w')
                        return true;
                line = strchr(line, '\n');
                line = line ? line + 1 : NULL;
        }
        return false;
}

/* Each mapping of the process's smaps (a maps line, then its fields, VmFlags last), with its "mw"
 * flag, into maps (map_line). Read a line at a time: a process with many mappings has most of a
 * megabyte of it, of which a look keeps only each mapping's first line and that flag (read whole,
 * it was kbound's largest allocation). Returns 0, -E2BIG (too many mappings), -EMSGSIZE (over
 * SMAPS_MAX), -ENOMEM, or -errno of the read (-ESRCH: the process is gone). */
static int smaps_lines(const char *proc_root, pid_t pid, int root_fd, json_object *seen, json_object *maps, size_t *n) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%d/smaps", proc_root, (int) pid) >= (int) sizeof path)
                return -ENAMETOOLONG;
        /* as kb_read_file: a regular file only, never a FIFO or device waited on */
        int fd = kb_open_regular(AT_FDCWD, path, O_RDONLY, 0, NULL);
        if (fd < 0)
                return fd == -ENOENT ? -ESRCH : fd;
        FILE *f = fdopen(fd, "r");
        if (!f) {
                close(fd);
                return -ENOMEM;
        }
        _cleanup_free_ char *line = NULL, *pending = NULL;
        size_t cap = 0, total = 0;
        ssize_t len;
        int r = 0;
        errno = 0;
        while (r >= 0 && (len = getline(&line, &cap, f)) >= 0) {
                total += (size_t) len;
                if (total > SMAPS_MAX) {
                        r = -EMSGSIZE;
                        break;
                }
                if (len > 0 && line[len - 1] == '\n')
                        line[len - 1] = '\0';
                bool header = (*line >= '0' && *line <= '9') || (*line >= 'a' && *line <= 'f');
                if (header) {
                        if (pending) /* a mapping whose flags were not listed */
                                r = map_line(pending, root_fd, seen, maps, n, -1);
                        free(pending);
                        pending = strdup(line);
                        if (!pending && r >= 0)
                                r = -ENOMEM;
                } else if (pending && strncmp(line, "VmFlags:", 8) == 0) {
                        bool mw = strstr(line, " mw") != NULL;
                        r = map_line(pending, root_fd, seen, maps, n, mw ? 1 : 0);
                        free(pending);
                        pending = NULL;
                }
        }
        if (r >= 0 && ferror(f))
                r = errno == ESRCH || errno == ENOENT ? -ESRCH : -(errno ? errno : EIO);
        fclose(f);
        if (r < 0)
                return r;
        return pending ? map_line(pending, root_fd, seen, maps, n, -1) : 0;
}

/* The process's file mappings (its REFS's maps, read at <proc_root>/<pid>), each placed in the
 * sandbox's view (map_reach), with smaps' word on whether a shared one may be made writable where
 * its permissions do not say. */
static int map_refs(const kb_inspect_target *t, const char *proc_root, pid_t pid, json_object *refs,
                    json_object *errors) {
        _cleanup_free_ char *text = NULL;
        int r = kb_inspect_read_proc(proc_root, pid, "maps", MAPS_MAX, &text, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return kb_inspect_note(errors, WHAT_MAPS, NULL, r == -ESRCH ? -ENOENT : r);
        /* The sandbox's view: the kernel's root, or init's before the kernel exists. */
        char root[PATH_MAX];
        snprintf(root, sizeof root, "%s/%d/root", t->proc_root,
                 (int) (t->kernel_pid > 0 ? t->kernel_pid : t->init_pid));
        _cleanup_close_ int root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        _cleanup_json_ json_object *seen = json_object_new_object(), *maps = json_object_new_array();
        if (!seen || !maps)
                return -ENOMEM;
        size_t n = 0;
        r = -ENODATA;
        if (needs_vm_flags(text)) {
                /* smaps costs a walk of every mapping's pages: read only where it says more */
                r = smaps_lines(proc_root, pid, root_fd, seen, maps, &n);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && r != -E2BIG) {
                        if (kb_inspect_note(errors, WHAT_SMAPS, NULL, r == -ESRCH ? -ENOENT : r) < 0)
                                return -ENOMEM;
                        /* what smaps gave before it failed goes: maps alone says it again, each
                         * shared mapping's flag unknown */
                        json_object_put(seen);
                        json_object_put(maps);
                        seen = json_object_new_object();
                        maps = json_object_new_array();
                        if (!seen || !maps)
                                return -ENOMEM;
                        n = 0;
                        r = -ENODATA;
                }
        }
        if (r == -ENODATA) {
                r = 0;
                for (char *line = text, *next; r >= 0 && line && *line; line = next) {
                        next = strchr(line, '\n');
                        if (next)
                                *next++ = '\0';
                        r = map_line(line, root_fd, seen, maps, &n, -1);
                }
        }
        if (r == -E2BIG)
                return kb_inspect_note(errors, WHAT_MAPS, NULL, E2BIG) < 0 ||
                                       kb_fact_set_arr(refs, FACT_REFS_MAPS, TAKE_PTR(maps)) < 0
                               ? -ENOMEM
                               : 0;
        if (r < 0)
                return r;
        return kb_fact_set_arr(refs, FACT_REFS_MAPS, TAKE_PTR(maps));
}

int kb_inspect_map_files(const char *proc_root, pid_t pid, json_object **ret) {
        _cleanup_free_ char *text = NULL;
        int r = kb_inspect_read_proc(proc_root, pid, "maps", MAPS_MAX, &text, NULL);
        if (r < 0)
                return r;
        _cleanup_json_ json_object *seen = json_object_new_object(), *files = json_object_new_array();
        if (!seen || !files)
                return -ENOMEM;
        for (char *line = text, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                unsigned major, minor;
                unsigned long long ino;
                char key[64];
                if (sscanf(line, "%*s %*s %*s %x:%x %llu", &major, &minor, &ino) != 3 || ino == 0)
                        continue;
                snprintf(key, sizeof key, "%u:%u:%llu", major, minor, ino);
                if (json_object_object_get_ex(seen, key, NULL))
                        continue;
                if (json_object_object_add(seen, key, NULL) < 0 ||
                    kb_inspect_push(files, json_object_new_string(key)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(files);
        return 0;
}

int kb_inspect_ref_facts(const kb_inspect_target *t, const char *root, pid_t pid, json_object *errors,
                         json_object *proc) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%d", root, (int) pid);
        json_object *refs = json_object_new_object();
        if (!refs || kb_fact_set_obj(proc, FACT_PROCESS_REFS, refs) < 0)
                return -ENOMEM;
        const struct {
                const char *name;
                kb_fact_obj link;
                kb_fact_str error;
        } links[] = {{"cwd", FACT_REFS_CWD, FACT_REFS_CWD_ERROR},
                     {"root", FACT_REFS_ROOT, FACT_REFS_ROOT_ERROR},
                     {"exe", FACT_REFS_EXE, FACT_REFS_EXE_ERROR}};
        for (size_t i = 0; i < KB_ELEMENTSOF(links); i++) {
                int r = add_link(dir, links[i].name, refs, links[i].link, links[i].error);
                if (r < 0)
                        return r;
        }
        return map_refs(t, root, pid, refs, errors);
}
