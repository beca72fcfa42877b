/* inspect_fd.c: what a process holds (its descriptors, its program) and descriptor-table walks. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include "evidence/inspect-internal.h"
#include "base/cleanup.h"
#include "base/procfs.h"

#define FDS_MAX 4096 /* descriptors kept per process */
#define TARGET_MAX 512

/* What the descriptor link at link is, as stat says through it, into the FD o: its type, dev, ino
 * and rdev, or why not (stat_error). -ENOMEM only. */
static int stat_facts(const char *link, json_object *o) {
        struct stat st;
        char dev[KB_PROCFS_DEV_MAX];
        if (stat(link, &st) < 0)
                return kb_fact_set_str(o, FACT_FD_STAT_ERROR, strerror(errno));
        if (kb_fact_set_str(o, FACT_FD_TYPE, kb_inspect_file_type(st.st_mode)) < 0 ||
            kb_fact_set_str(o, FACT_FD_DEV, kb_procfs_dev(major(st.st_dev), minor(st.st_dev), dev)) < 0 ||
            kb_fact_set_int(o, FACT_FD_INO, (int64_t) st.st_ino) < 0)
                return -ENOMEM;
        if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
                return 0;
        return kb_fact_set_str(o, FACT_FD_RDEV, kb_procfs_dev(major(st.st_rdev), minor(st.st_rdev), dev));
}

/* The FD of descriptor fd of pid (its link in dir): what it is, and its fdinfo's facts. Its link is
 * read and stat'ed again once the rest was read: a descriptor moved over this number meanwhile
 * (dup2) would pair one file's words with another's facts. Returns 1 and *ret, 0 when it is
 * closed or changed meanwhile, -ENOMEM. */
static int one_fd(const char *proc_root, const char *dir, pid_t pid, long fd, json_object **ret) {
        char link[PATH_MAX + 32], target[TARGET_MAX], again[TARGET_MAX], info_path[PATH_MAX];
        snprintf(link, sizeof link, "%s/%ld", dir, fd);
        ssize_t tl = readlink(link, target, sizeof target - 1);
        struct stat before, after;
        if (tl < 0)
                return 0; /* closed meanwhile */
        target[tl] = '\0';
        bool stated = stat(link, &before) == 0;
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o || kb_fact_set_int(o, FACT_FD_FD, fd) < 0 || kb_fact_set_str(o, FACT_FD_TARGET, target) < 0 ||
            stat_facts(link, o) < 0)
                return -ENOMEM;
        snprintf(info_path, sizeof info_path, "%s/%d/fdinfo/%ld", proc_root, (int) pid, fd);
        _cleanup_free_ char *info = NULL;
        kb_procfs_fdinfo fi;
        if (kb_read_file(AT_FDCWD, info_path, 0, 64 * 1024, &info, NULL) == 0 &&
            kb_procfs_fdinfo_parse(info, &fi) == 0) {
                if (kb_fact_set_int(o, FACT_FD_FLAGS, (int64_t) fi.flags) < 0 ||
                    kb_fact_set_int(o, FACT_FD_MNT_ID, fi.mnt_id) < 0 ||
                    (fi.pid != LLONG_MIN && kb_fact_set_int(o, FACT_FD_PID, fi.pid) < 0) ||
                    kb_procfs_fdinfo_reach(info, o) < 0 || kb_inspect_place_watches(proc_root, pid, o) < 0)
                        return -ENOMEM;
        } else if (kb_fact_set_str(o, FACT_FD_FDINFO_ERROR, "unreadable") < 0)
                return -ENOMEM;
        if (strncmp(target, "pipe:[", 6) == 0 && kb_inspect_pipe_other_end(proc_root, pid, fd, o) < 0)
                return -ENOMEM;
        ssize_t al = readlink(link, again, sizeof again - 1);
        if (al != tl || memcmp(again, target, (size_t) tl) != 0 ||
            (stated && (stat(link, &after) < 0 || after.st_dev != before.st_dev || after.st_ino != before.st_ino)))
                return 0; /* closed, or another file now */
        *ret = TAKE_PTR(o);
        return 1;
}

static bool same_file(json_object *a, kb_fact_str adev, kb_fact_int aino, json_object *b) {
        const char *da = kb_fact_str_of(a, adev), *db = kb_fact_str_of(b, FACT_FD_DEV);
        int64_t ia, ib;
        return da && db && strcmp(da, db) == 0 && kb_fact_int_of(a, aino, &ia) && kb_fact_int_of(b, FACT_FD_INO, &ib) &&
               ia == ib;
}

/* An epoll's watch names the descriptor it was added by (tfd); one opened after the table was
 * listed and added before the epoll's fdinfo was read is read now, if it is still the watched file,
 * so the table holds what the watch watches. A watch added by another process, or whose
 * descriptor is gone or another file now, is left for the judge to place. -ENOMEM only. */
static int complete_watches(const char *proc_root, const char *dir, pid_t pid, json_object *fds) {
        size_t n = json_object_array_length(fds);
        for (size_t i = 0; i < n; i++) {
                json_object *watches = kb_fact_arr_of(json_object_array_get_idx(fds, i), FACT_FD_WATCHES);
                for (size_t w = 0; w < (watches ? json_object_array_length(watches) : 0); w++) {
                        json_object *watch = json_object_array_get_idx(watches, w), *found = NULL;
                        int64_t tfd;
                        if (!kb_fact_int_of(watch, FACT_WATCH_FD, &tfd))
                                continue;
                        for (size_t j = 0; j < json_object_array_length(fds) && !found; j++)
                                if (kb_fact_int_or(json_object_array_get_idx(fds, j), FACT_FD_FD, -1) == tfd)
                                        found = json_object_array_get_idx(fds, j);
                        if (found)
                                continue;
                        json_object *o = NULL;
                        int r = one_fd(proc_root, dir, pid, (long) tfd, &o);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                continue;
                        if (!same_file(watch, FACT_WATCH_DEV, FACT_WATCH_INO, o))
                                json_object_put(o);
                        else if (kb_inspect_push(fds, o) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

/* Which descriptor of pid's own table is the very file each epoll watch watches, by kcmp
 * (KCMP_EPOLL_TFD compares the file an epoll holds for a target with a descriptor's): the one it
 * was added by first, then every other of the same device and inode. Unproven (a watch whose file
 * only another process holds, a process kcmp may not compare) is left without held_at, for the
 * judge: by device and inode, every anonymous object (eventfd, timerfd, signalfd, an epoll) is the
 * same. Only live processes compare; a fake /proc's are not. -ENOMEM only. */
static int confirm_epoll_watches(const char *proc_root, pid_t pid, json_object *fds) {
        if (strcmp(proc_root, "/proc") != 0)
                return 0;
        size_t n = json_object_array_length(fds);
        for (size_t i = 0; i < n; i++) {
                json_object *ep = json_object_array_get_idx(fds, i), *watches = kb_fact_arr_of(ep, FACT_FD_WATCHES);
                int64_t efd = kb_fact_int_or(ep, FACT_FD_FD, -1);
                for (size_t w = 0; efd >= 0 && w < (watches ? json_object_array_length(watches) : 0); w++) {
                        json_object *watch = json_object_array_get_idx(watches, w);
                        int64_t tfd;
                        if (strcmp(kb_fact_str_or(watch, FACT_WATCH_KIND, ""), "epoll") != 0 ||
                            !kb_fact_int_of(watch, FACT_WATCH_FD, &tfd) || tfd < 0)
                                continue;
                        struct kcmp_epoll_slot slot = {.efd = (uint32_t) efd, .tfd = (uint32_t) tfd, .toff = 0};
                        int64_t held = -1;
                        if (syscall(SYS_kcmp, pid, pid, KCMP_EPOLL_TFD, (unsigned long) tfd, (unsigned long) &slot) ==
                            0)
                                held = tfd;
                        for (size_t j = 0; held < 0 && j < n; j++) {
                                json_object *fd = json_object_array_get_idx(fds, j);
                                int64_t num = kb_fact_int_or(fd, FACT_FD_FD, -1);
                                if (num >= 0 && num != tfd && same_file(watch, FACT_WATCH_DEV, FACT_WATCH_INO, fd) &&
                                    syscall(SYS_kcmp, pid, pid, KCMP_EPOLL_TFD, (unsigned long) num,
                                            (unsigned long) &slot) == 0)
                                        held = num;
                        }
                        if (held >= 0 && kb_fact_set_int(watch, FACT_WATCH_HELD_AT, held) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

#define FD_ROUNDS 4 /* readings of a table while descriptors close or change as it is read */

/* One reading of the table at dir into *ret: every descriptor listed, each read (one_fd). *ret_moved
 * counts those that closed or changed between the listing and their read. -ESRCH when the process
 * is gone, -ENOMEM; another error is noted and *ret holds nothing. */
static int read_table(const char *proc_root, const char *dir, pid_t pid, json_object *errors, json_object **ret,
                      size_t *ret_moved) {
        DIR *d = opendir(dir);
        if (!d) {
                int e = errno;
                if (e == ENOENT)
                        return -ESRCH;
                *ret = json_object_new_array();
                return *ret ? kb_inspect_note(errors, WHAT_FD, NULL, -e) : -ENOMEM;
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
                        r = kb_inspect_note(errors, WHAT_FD, NULL, E2BIG); /* more than kbound inspects: unjudged */
                        break;
                }
                json_object *o = NULL;
                r = one_fd(proc_root, dir, pid, fd, &o);
                if (r > 0)
                        r = kb_inspect_push(fds, o);
                else if (r == 0)
                        ++*ret_moved;
        }
        closedir(d);
        if (r >= 0 && n <= FDS_MAX)
                r = complete_watches(proc_root, dir, pid, fds);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(fds);
        return 0;
}

/* The table read again while a descriptor listed closed or changed before it was read: one that
 * closes holds nothing any more, but one moved to another number (dup2, then close), maybe over one
 * read already, would pass a single reading unseen. A reading in which none moved is kept; past
 * FD_ROUNDS readings that each saw one move, the last is kept and the process's errors say the
 * table kept changing (FD_CHURN), which fails boundary.descriptors. */
int kb_inspect_fd_facts(const char *proc_root, pid_t pid, json_object *errors, json_object **ret) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%d/fd", proc_root, (int) pid);
        json_object *fds = NULL;
        size_t moved = 1;
        for (int round = 0; moved > 0 && round < FD_ROUNDS; round++) {
                json_object_put(fds);
                fds = NULL;
                moved = 0;
                int r = read_table(proc_root, dir, pid, errors, &fds, &moved);
                if (r < 0) {
                        json_object_put(fds);
                        return r;
                }
        }
        if ((moved > 0 && kb_inspect_note(errors, WHAT_FD_CHURN, NULL, EAGAIN) < 0) ||
            confirm_epoll_watches(proc_root, pid, fds) < 0) {
                json_object_put(fds);
                return -ENOMEM;
        }
        *ret = fds;
        return 0;
}

int kb_inspect_exe_facts(const char *proc_root, pid_t pid, json_object *o, kb_fact_obj exe_fact,
                         kb_fact_str error_fact) {
        char link[PATH_MAX], target[TARGET_MAX], dev[KB_PROCFS_DEV_MAX];
        struct stat st;
        snprintf(link, sizeof link, "%s/%d/exe", proc_root, (int) pid);
        ssize_t tl = readlink(link, target, sizeof target - 1);
        if (tl < 0 || stat(link, &st) < 0)
                return kb_fact_set_str(o, error_fact, strerror(errno));
        target[tl] = '\0';
        json_object *exe = json_object_new_object();
        if (!exe || kb_fact_set_str(exe, FACT_FILE_ID_PATH, target) < 0 ||
            kb_fact_set_str(exe, FACT_FILE_ID_DEV, kb_procfs_dev(major(st.st_dev), minor(st.st_dev), dev)) < 0 ||
            kb_fact_set_int(exe, FACT_FILE_ID_INO, (int64_t) st.st_ino) < 0) {
                json_object_put(exe);
                return -ENOMEM;
        }
        return kb_fact_set_obj(o, exe_fact, exe);
}

int kb_inspect_fd_targets_at(const char *dir, int (*visit)(int fd, const char *target, void *userdata),
                             void *userdata) {
        DIR *d = opendir(dir);
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        int r = 0;
        struct dirent *de;
        while (r >= 0 && (de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                char target[128];
                /* relative to the open table: one lookup, not the whole /proc/<pid>/fd/<n> path */
                ssize_t n = readlinkat(dirfd(d), de->d_name, target, sizeof target - 1);
                if (n <= 0)
                        continue;
                target[n] = '\0';
                r = visit((int) strtol(de->d_name, NULL, 10), target, userdata);
        }
        closedir(d);
        return r;
}

int kb_inspect_fd_targets(const char *proc_root, pid_t pid, int (*visit)(int fd, const char *target, void *userdata),
                          void *userdata) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%d/fd", proc_root, (int) pid);
        return kb_inspect_fd_targets_at(dir, visit, userdata);
}

static int push_channel(int fd, const char *target, void *inodes) {
        (void) fd;
        if (strncmp(target, "pipe:[", 6) == 0 || strncmp(target, "socket:[", 8) == 0)
                return kb_inspect_push(inodes, json_object_new_string(target));
        return 0;
}

int kb_inspect_channel_inodes(const char *proc_root, pid_t pid, json_object *inodes) {
        return kb_inspect_fd_targets(proc_root, pid, push_channel, inodes);
}
