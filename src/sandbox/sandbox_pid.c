/* sandbox_pid.c: the sandbox's processes as the host's /proc shows them: pidfds, a process's
 * status and pid namespace, the system call it is in, and PID 2 found, verified and pinned by a
 * pidfd. */
#include "kbound/sandbox.h"
#include "base/cleanup.h"
#include "sandbox/sandbox-internal.h"
#include "base/procfs.h"
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Retry interval while the kernel has not appeared yet. */
#define PIN_RETRY_MS 5
#define STATUS_MAX 8192

int kb_sandbox_pidfd_open(pid_t pid) {
        long fd = syscall(SYS_pidfd_open, pid, 0);
        return fd < 0 ? -errno : (int) fd;
}

int kb_sandbox_pidfd_send_signal(int pidfd, int sig) {
        return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0 ? -errno : 0;
}

int kb_sandbox_pidfd_alive(int pidfd) {
        if (pidfd < 0)
                return 0;
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        int n = poll(&p, 1, 0);
        return n == 0 ? 1 : 0;
}

/* Reads a small file under proc_root into buf (NUL-terminated). */
int kb_sandbox_read_small(const char *path, char *buf, size_t size) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return errno == ENOENT || errno == ESRCH ? -ESRCH : -errno;
        size_t used = 0;
        while (used + 1 < size) {
                ssize_t n = read(fd, buf + used, size - 1 - used);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return errno == ESRCH ? -ESRCH : -errno;
                }
                if (n == 0)
                        break;
                used += (size_t) n;
        }
        buf[used] = '\0';
        return 0;
}

/* Parses a decimal pid; false for anything else. */
bool kb_sandbox_parse_pid(const char *s, char **end, pid_t *ret) {
        errno = 0;
        long v = strtol(s, end, 10);
        if (errno != 0 || *end == s || v <= 0 || v > INT_MAX)
                return false;
        *ret = (pid_t) v;
        return true;
}

int kb_sandbox_proc_status(const char *proc_root, pid_t pid, kb_proc_status *ret) {
        char path[PATH_MAX], buf[STATUS_MAX];
        if (snprintf(path, sizeof path, "%s/%d/status", proc_root, (int) pid) >= (int) sizeof path)
                return -ENAMETOOLONG;
        int r = kb_sandbox_read_small(path, buf, sizeof buf);
        if (r < 0)
                return r;
        kb_proc_status st = {.ppid = -1, .nspid_last = -1, .nspid_depth = 0, .state = '?'};
        for (char *line = buf; line && *line;) {
                char *next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                char *end;
                if (strncmp(line, "PPid:", 5) == 0) {
                        pid_t v;
                        /* PPid is 0 for a process whose parent is outside our namespace. */
                        st.ppid = kb_sandbox_parse_pid(line + 5, &end, &v) ? v : 0;
                } else if (strncmp(line, "NSpid:", 6) == 0) {
                        const char *p = line + 6;
                        pid_t v;
                        while (kb_sandbox_parse_pid(p, &end, &v)) {
                                st.nspid_last = v;
                                st.nspid_depth++;
                                p = end;
                        }
                } else if (strncmp(line, "State:", 6) == 0) {
                        const char *p = line + 6;
                        while (*p == ' ' || *p == '\t')
                                p++;
                        st.state = *p ? *p : '?';
                }
                line = next;
        }
        if (st.ppid < 0 || st.nspid_depth == 0)
                return -EPROTO;
        *ret = st;
        return 0;
}

int kb_sandbox_proc_pidns(const char *proc_root, pid_t pid, uint64_t *ret_ino) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%d/ns/pid", proc_root, (int) pid) >= (int) sizeof path)
                return -ENAMETOOLONG;
        struct stat st;
        if (stat(path, &st) < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        *ret_ino = (uint64_t) st.st_ino;
        return 0;
}

static bool is_pid2_of(const kb_proc_status *st, pid_t init_pid) {
        /* Two NSpid levels at least: a lone "2" would be a pid in our own namespace. */
        return st->ppid == init_pid && st->nspid_depth >= 2 && st->nspid_last == 2;
}

int kb_sandbox_find_pid2(const char *proc_root, pid_t init_pid, pid_t *ret_pid) {
        DIR *d = opendir(proc_root);
        if (!d)
                return -errno;
        int r = -ESRCH;
        struct dirent *de;
        while ((de = readdir(d))) {
                char *end;
                pid_t pid;
                if (!kb_sandbox_parse_pid(de->d_name, &end, &pid) || *end != '\0')
                        continue;
                kb_proc_status st;
                if (kb_sandbox_proc_status(proc_root, pid, &st) < 0)
                        continue; /* gone meanwhile, or not a process directory */
                if (is_pid2_of(&st, init_pid)) {
                        *ret_pid = pid;
                        r = 0;
                        break;
                }
        }
        closedir(d);
        return r;
}

int kb_sandbox_verify_identity(const char *proc_root, pid_t pid, int pidfd, pid_t init_pid, uint64_t pidns_ino) {
        if (!kb_sandbox_pidfd_alive(pidfd))
                return -ESRCH;
        uint64_t ino;
        int r = kb_sandbox_proc_pidns(proc_root, pid, &ino);
        if (r < 0)
                return r == -ESRCH ? -ESRCH : -EPERM;
        kb_proc_status st;
        r = kb_sandbox_proc_status(proc_root, pid, &st);
        if (r < 0)
                return r == -ESRCH ? -ESRCH : -EPERM;
        /* Only now, after the reads, does "still alive" prove the reads were about the process the
         * pidfd holds: a pid cannot be reused while its pidfd's process has not exited. */
        if (!kb_sandbox_pidfd_alive(pidfd))
                return -ESRCH;
        if (ino != pidns_ino || !is_pid2_of(&st, init_pid))
                return -EPERM;
        return 0;
}

/* True while init_pid still exists and is not a zombie: otherwise PID 2 can never appear. */
static bool init_running(const char *proc_root, pid_t init_pid) {
        kb_proc_status st;
        int r = kb_sandbox_proc_status(proc_root, init_pid, &st);
        if (r == -ESRCH)
                return false;
        return r < 0 || (st.state != 'Z' && st.state != 'X');
}

int kb_sandbox_pin_pid2(const char *proc_root, pid_t init_pid, uint64_t pidns_ino, int64_t deadline_ms, pid_t *ret_pid,
                        int *ret_pidfd) {
        for (;;) {
                pid_t pid;
                int r = kb_sandbox_find_pid2(proc_root, init_pid, &pid);
                if (r == 0) {
                        _cleanup_close_ int pidfd = kb_sandbox_pidfd_open(pid);
                        if (pidfd < 0)
                                return pidfd == -ESRCH ? -ESRCH : pidfd;
                        r = kb_sandbox_verify_identity(proc_root, pid, pidfd, init_pid, pidns_ino);
                        if (r < 0)
                                return r;
                        *ret_pid = pid;
                        *ret_pidfd = TAKE_FD(pidfd);
                        return 0;
                }
                if (r != -ESRCH)
                        return r;
                if (!init_running(proc_root, init_pid) || kb_ms_left(deadline_ms) == 0)
                        return -ESRCH;
                int left = kb_ms_left(deadline_ms);
                (void) poll(NULL, 0, left < 0 || left > PIN_RETRY_MS ? PIN_RETRY_MS : left);
        }
}

/* Field 22 of /proc/<pid>/stat: when the process started. Returns 0, -ESRCH, -EPROTO, -errno. */
int kb_sandbox_start_time(pid_t pid, uint64_t *ret) {
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        int r = kb_sandbox_read_small(path, buf, sizeof buf);
        if (r < 0)
                return r;
        kb_procfs_stat st;
        if (kb_procfs_stat_parse(buf, &st) < 0 || st.starttime == 0)
                return -EPROTO;
        *ret = st.starttime;
        return 0;
}

int kb_sandbox_audit_verify(pid_t pid, int pidfd, uint64_t start) {
        if (!kb_sandbox_pidfd_alive(pidfd))
                return -ESRCH;
        uint64_t now = 0;
        int r = kb_sandbox_start_time(pid, &now);
        /* Only after the read does "still alive" prove it was about the process the pidfd holds. */
        if (!kb_sandbox_pidfd_alive(pidfd))
                return -ESRCH;
        if (r < 0)
                return r == -ESRCH ? -ESRCH : -EPERM;
        return now == start ? 0 : -EPERM;
}

int kb_sandbox_current_call(const char *proc_root, pid_t pid, long *ret_nr, unsigned long long *ret_arg0) {
        char path[PATH_MAX], buf[256];
        if (snprintf(path, sizeof path, "%s/%d/syscall", proc_root, (int) pid) >= (int) sizeof path)
                return -ENAMETOOLONG;
        int r = kb_sandbox_read_small(path, buf, sizeof buf);
        if (r < 0)
                return r;
        /* "<nr> <arg0> <arg1> ...", all but nr in hex; "running" or "-1 ..." when not in a call. */
        char *end;
        errno = 0;
        long nr = strtol(buf, &end, 10);
        if (errno || end == buf || *end != ' ' || nr < 0) {
                *ret_nr = -1;
                *ret_arg0 = 0;
                return 0;
        }
        errno = 0;
        unsigned long long arg0 = strtoull(end + 1, &end, 16);
        *ret_nr = nr;
        *ret_arg0 = errno ? ULLONG_MAX : arg0;
        return 0;
}

int kb_sandbox_waits_on(const char *proc_root, pid_t pid, int *ret_fd) {
        long nr;
        unsigned long long fd;
        int r = kb_sandbox_current_call(proc_root, pid, &nr, &fd);
        if (r < 0)
                return r;
        *ret_fd = nr == SYS_read && fd <= INT_MAX ? (int) fd : -1;
        return 0;
}
