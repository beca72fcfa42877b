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
                char link[PATH_MAX + 32], target[TARGET_MAX], info_path[PATH_MAX];
                snprintf(link, sizeof link, "%s/%ld", dir, fd);
                ssize_t tl = readlink(link, target, sizeof target - 1);
                if (tl < 0)
                        continue; /* closed meanwhile */
                target[tl] = '\0';
                json_object *o = json_object_new_object();
                if (!o || kb_fact_set_int(o, FACT_FD_FD, fd) < 0 || kb_fact_set_str(o, FACT_FD_TARGET, target) < 0 ||
                    stat_facts(link, o) < 0) {
                        json_object_put(o);
                        r = -ENOMEM;
                        break;
                }
                snprintf(info_path, sizeof info_path, "%s/%d/fdinfo/%ld", proc_root, (int) pid, fd);
                _cleanup_free_ char *info = NULL;
                kb_procfs_fdinfo fi;
                if (kb_read_file(AT_FDCWD, info_path, 0, 64 * 1024, &info, NULL) == 0 &&
                    kb_procfs_fdinfo_parse(info, &fi) == 0) {
                        if (kb_fact_set_int(o, FACT_FD_FLAGS, (int64_t) fi.flags) < 0 ||
                            kb_fact_set_int(o, FACT_FD_MNT_ID, fi.mnt_id) < 0 ||
                            (fi.pid != LLONG_MIN && kb_fact_set_int(o, FACT_FD_PID, fi.pid) < 0) ||
                            kb_procfs_fdinfo_reach(info, o) < 0) {
                                json_object_put(o);
                                r = -ENOMEM;
                                break;
                        }
                } else if (kb_fact_set_str(o, FACT_FD_FDINFO_ERROR, "unreadable") < 0) {
                        json_object_put(o);
                        r = -ENOMEM;
                        break;
                }
                r = kb_inspect_push(fds, o);
        }
        closedir(d);
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
