/* inspect_fd.c: what a process holds (its descriptors, its program) and descriptor-table walks. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

/* The FD of descriptor fd of pid (its link in dir): what it is, and its fdinfo's facts. Returns 1
 * and *ret, 0 when it is closed, -ENOMEM. */
static int one_fd(const char *proc_root, const char *dir, pid_t pid, long fd, json_object **ret) {
        char link[PATH_MAX + 32], target[TARGET_MAX], info_path[PATH_MAX];
        snprintf(link, sizeof link, "%s/%ld", dir, fd);
        ssize_t tl = readlink(link, target, sizeof target - 1);
        if (tl < 0)
                return 0; /* closed meanwhile */
        target[tl] = '\0';
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

int kb_inspect_fd_facts(const char *proc_root, pid_t pid, json_object *errors, json_object **ret) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%d/fd", proc_root, (int) pid);
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
        }
        closedir(d);
        if (r >= 0 && n <= FDS_MAX)
                r = complete_watches(proc_root, dir, pid, fds);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(fds);
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
