/* inspect_still.c: whether a process outside still holds an object of the sandbox, wherever it holds it now. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "evidence/inspect-internal.h"
#include "base/cleanup.h"

/* A table read while it changed (a descriptor listed, then gone before its link was read: closed,
 * or moved to another number) is read again, up to this many times in all: a holder that moves
 * its descriptor every millisecond is found at its new number by the next read. */
#define TABLE_READS_MAX 16
/* Whole reads of a process (every thread, every table) before an object is taken as let go. */
#define PROCESS_READS_MAX 4
/* Threads of one process read; past it the process is not read in full. */
#define THREADS_MAX 4096
/* Distinct descriptor tables of one process (threads made without CLONE_FILES) kept to tell the
 * next thread's apart (kcmp); past it, every further thread's table is read. */
#define TABLES_MAX 64

typedef struct still_walk {
        kb_held *objects;
        size_t n;
        pid_t tid;
        size_t left;  /* objects not found yet */
        size_t files; /* files among them */
} still_walk;

static void found(still_walk *w, kb_held *o, const char *type, int fd) {
        o->found = true;
        o->tid = w->tid;
        o->fd = fd;
        o->type = type;
        w->left--;
}

static int seen_link(const char *link, uint64_t ino, void *userdata) {
        still_walk *w = userdata;
        for (size_t i = 0; i < w->n; i++)
                if (!w->objects[i].found && !w->objects[i].socket && !w->objects[i].file && w->objects[i].ino == ino)
                        found(w, &w->objects[i], link, -1);
        return 0;
}

/* What dirfd/name names, links followed (a descriptor's or a thread's cwd or root link: the file it
 * refers to), against the file objects of w. */
static void seen_file(still_walk *w, int dirfd, const char *name, const char *type, int fd) {
        struct statx sx;
        char dev[KB_PROCFS_DEV_MAX];
        if (w->files == 0 || statx(dirfd, name, AT_STATX_DONT_SYNC, STATX_INO, &sx) < 0)
                return;
        kb_procfs_dev(sx.stx_dev_major, sx.stx_dev_minor, dev);
        for (size_t i = 0; i < w->n; i++)
                if (!w->objects[i].found && w->objects[i].file && w->objects[i].ino == sx.stx_ino &&
                    strcmp(w->objects[i].dev, dev) == 0)
                        found(w, &w->objects[i], type, fd);
}

static void seen_target(still_walk *w, int fd, const char *target) {
        uint64_t ino = 0;
        const char *type = kb_inspect_nsfs_target(target, &ino);
        bool socket = !type && strncmp(target, "socket:[", 8) == 0;
        if (socket)
                ino = strtoull(target + 8, NULL, 10);
        else if (!type)
                return;
        for (size_t i = 0; i < w->n; i++)
                if (!w->objects[i].found && !w->objects[i].file && w->objects[i].socket == socket &&
                    w->objects[i].ino == ino)
                        found(w, &w->objects[i], socket ? "socket" : type, fd);
}

/* Reads the descriptor table dir into w, again while it changes under the read and an object is
 * still not found (TABLE_READS_MAX in all). Returns 0 (also for a table gone), -errno. */
static int read_table(const char *dir, still_walk *w) {
        DIR *d = opendir(dir);
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        for (int reads = 0; w->left > 0 && reads < TABLE_READS_MAX; reads++) {
                bool moved = false;
                struct dirent *de;
                if (reads > 0)
                        rewinddir(d);
                while (w->left > 0 && (de = readdir(d))) {
                        if (de->d_name[0] == '.')
                                continue;
                        char target[128];
                        ssize_t len = readlinkat(dirfd(d), de->d_name, target, sizeof target - 1);
                        if (len <= 0) {
                                moved = moved || errno == ENOENT;
                                continue;
                        }
                        target[len] = '\0';
                        if (target[0] == '/')
                                seen_file(w, dirfd(d), de->d_name, "file", (int) strtol(de->d_name, NULL, 10));
                        else
                                seen_target(w, (int) strtol(de->d_name, NULL, 10), target);
                }
                if (!moved)
                        break;
        }
        closedir(d);
        return 0;
}

/* One read of every thread of pid into w (see kb_inspect_still_holds). */
static int read_process(const char *proc_root, pid_t pid, still_walk *w) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%d/task", proc_root, (int) pid);
        DIR *d = opendir(dir);
        if (!d)
                return errno == ENOENT ? -ESRCH : -errno;
        pid_t tables[TABLES_MAX];
        size_t n_tables = 0, n_threads = 0;
        int r = 0;
        struct dirent *de;
        while (r >= 0 && w->left > 0 && (de = readdir(d))) {
                char *end;
                long tid = strtol(de->d_name, &end, 10);
                if (*end || tid <= 0)
                        continue;
                if (++n_threads > THREADS_MAX) {
                        r = -E2BIG;
                        break;
                }
                w->tid = (pid_t) tid;
                r = kb_inspect_ns_links(proc_root, pid, (pid_t) tid, false, seen_link, w);
                if (r < 0)
                        break;
                /* each thread's own working directory and root (a thread may unshare them) */
                char link[PATH_MAX + 64];
                snprintf(link, sizeof link, "%s/%ld/cwd", dir, tid);
                seen_file(w, AT_FDCWD, link, "cwd", -1);
                snprintf(link, sizeof link, "%s/%ld/root", dir, tid);
                seen_file(w, AT_FDCWD, link, "root", -1);
                bool shared = false;
                for (size_t k = 0; k < n_tables && !shared; k++)
                        shared = syscall(SYS_kcmp, tables[k], (pid_t) tid, KCMP_FILES, 0, 0) == 0;
                if (shared)
                        continue; /* a table read already */
                if (n_tables < TABLES_MAX)
                        tables[n_tables++] = (pid_t) tid;
                char fds[PATH_MAX + 32];
                snprintf(fds, sizeof fds, "%s/%ld/fd", dir, tid);
                r = read_table(fds, w);
        }
        closedir(d);
        if (r >= 0 && n_threads == 0 && w->left > 0)
                return -ESRCH; /* every thread gone: a zombie's task folder is empty */
        return r;
}

int kb_inspect_still_holds(const char *proc_root, pid_t pid, kb_held *objects, size_t n) {
        still_walk w = {.objects = objects, .n = n, .left = n};
        for (size_t i = 0; i < n; i++) {
                objects[i].found = false;
                w.files += objects[i].file;
        }
        /* An object not found is looked for again through the whole process: a descriptor moved
         * to a number the listing had passed already, or to another thread's table, while it was
         * read shows in no table that one read listed. Only an object let go is read so often
         * (candidates are few: what the walk saw held outside). */
        int r = 0;
        for (int pass = 0; r >= 0 && w.left > 0 && pass < PROCESS_READS_MAX; pass++)
                r = read_process(proc_root, pid, &w);
        /* gone after a read that found some: what it was seen holding stays held (fail closed) */
        return r == -ESRCH && w.left < n ? 0 : r;
}
