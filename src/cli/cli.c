/* cli.c: messages, signal self-pipe and lookups shared by the kbound subcommands. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <kbound/canary_set.h>
#include <kbound/kernel.h>
#include <kbound/report.h>
#include <kbound/sandbox.h>
#include <kbound/sanitize.h>
#include <kbound/textwidth.h>
#include "cli.h"

static int signal_pipe[2] = {-1, -1};
static volatile sig_atomic_t signal_received;

static void on_signal(int sig) {
        int saved = errno;
        signal_received = sig;
        if (signal_pipe[1] >= 0) {
                char c = (char) sig;
                ssize_t n = write(signal_pipe[1], &c, 1);
                (void) n;
        }
        errno = saved;
}

int cli_signals_install(void) {
        if (signal_pipe[0] >= 0)
                return signal_pipe[0];
        if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
                return -1;
        struct sigaction sa = {.sa_handler = on_signal};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        /* A kernel or a report reader going away must be an error we see, not a silent death. */
        signal(SIGPIPE, SIG_IGN);
        return signal_pipe[0];
}

int cli_signal_received(void) {
        return signal_received;
}

int cli_find_bwrap(const char *explicit_path, char **ret) {
        int r = kb_sandbox_find_bwrap(explicit_path, environ, ret);
        if (r < 0) {
                if (explicit_path)
                        cli_error("cannot enforce the sandbox: bubblewrap '%s' is not an executable file",
                                  explicit_path);
                else
                        cli_error("cannot enforce the sandbox: bubblewrap (bwrap) not found in KBOUND_BWRAP "
                                  "or PATH; install it (Debian/Ubuntu: apt-get install bubblewrap) or pass "
                                  "--bwrap PATH; `kbound doctor` checks the rest");
                return KB_EXIT_ENFORCE;
        }
        return 0;
}

int cli_find_bwrap_version(const char *explicit_path, char **ret, char **ret_version, kb_bwrap *ret_info) {
        int r = cli_find_bwrap(explicit_path, ret);
        if (r)
                return r;
        r = kb_bwrap_probe(*ret, ret_info);
        if (r < 0) {
                cli_error("cannot enforce the sandbox: '%s --version' or '%s --help' failed (%s); is it bubblewrap?",
                          *ret, *ret, strerror(-r));
                return KB_EXIT_ENFORCE;
        }
        _cleanup_free_ char *account = NULL;
        r = kb_bwrap_describe(ret_info, *ret, &account);
        if (r <= 0) {
                cli_error("cannot enforce the sandbox: %s", account ? account : "out of memory");
                return KB_EXIT_ENFORCE;
        }
        *ret_version = strdup(ret_info->version);
        if (!*ret_version) {
                cli_error("out of memory");
                return KB_EXIT_ENFORCE;
        }
        return 0;
}

int cli_sandbox_user(const char *cmd, const char *opt, kb_sandbox_user *ret) {
        const char *name = opt && *opt ? opt : getenv("KBOUND_SANDBOX_USER");
        int r = kb_sandbox_user_resolve(name, ret);
        if (r == 0)
                return 0;
        if (r == -ENOENT && name && *name)
                cli_error("%s: no user '%s' for the sandbox", cmd, name);
        else if (r == -ENOENT)
                cli_error("%s: kbound is root and neither %s nor %s exists to run kernels as: run scripts/setup, "
                          "or create one (useradd --system --user-group --no-create-home --shell /usr/sbin/nologin "
                          "%s), or name one with --sandbox-user",
                          cmd, KB_SANDBOX_USER_DEFAULT, KB_SANDBOX_USER_FALLBACK, KB_SANDBOX_USER_DEFAULT);
        else if (r == -EPERM && geteuid() == 0)
                cli_error("%s: the sandbox user '%s' is root (uid or gid 0): a kernel never runs as root", cmd,
                          name ? name : "?");
        else if (r == -EPERM)
                cli_error("%s: --sandbox-user '%s': an ordinary user can only run sandboxes as itself", cmd,
                          name ? name : "?");
        else
                cli_error("%s: cannot read the user database: %s", cmd, strerror(-r));
        return r == -ENOENT && !(name && *name) ? KB_EXIT_ENFORCE : KB_EXIT_USAGE;
}

void cli_raise_fd_limit(void) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
                return;
        rl.rlim_cur = rl.rlim_max;
        (void) setrlimit(RLIMIT_NOFILE, &rl);
}

/* Descriptors open now, or -errno (-EMFILE: not even one left to look). */
static long fds_open(void) {
        DIR *d = opendir("/proc/self/fd");
        if (!d)
                return -errno;
        long n = 0;
        for (struct dirent *de = readdir(d); de; de = readdir(d))
                n += de->d_name[0] != '.';
        closedir(d);
        return n - 1; /* the directory's own */
}

int cli_fds_check(const char *cmd, size_t n_kernels) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
                return 0;
        long open_now = fds_open();
        if (open_now == -ENOENT)
                open_now = 3; /* no /proc: count the standard streams */
        unsigned long long need = (unsigned long long) (open_now < 0 ? 0 : open_now) + CLI_FDS_RESERVE +
                                  (unsigned long long) n_kernels * KB_KERNEL_FDS;
        if (open_now >= 0 && need <= (unsigned long long) rl.rlim_cur)
                return 0;
        cli_error("%s: cannot enforce: %zu kernel(s) need about %llu file descriptors (%d each, %d for kbound "
                  "itself, %ld open now) but the limit is %llu (ulimit -n; hard limit %llu): raise the limit or "
                  "run fewer kernels at once; nothing was started",
                  cmd, n_kernels, need, KB_KERNEL_FDS, CLI_FDS_RESERVE, open_now < 0 ? 0 : open_now,
                  (unsigned long long) rl.rlim_cur, (unsigned long long) rl.rlim_max);
        return KB_EXIT_ENFORCE;
}

/* The base folder's lock: its directory open and flock'ed for kbound's life. However a run ends,
 * even by SIGKILL, the kernel releases the lock with the process; a base folder whose lock is free
 * belongs to no live run, and the next run removes it. */
static int base_lock_fd = -1;

#define BASE_PREFIX "kbound-"
#define KEPT_MARKER ".kbound-kept" /* in a base folder kept with --keep: never swept */

const char *cli_runtime_parent(void) {
        const char *parent = getenv("KBOUND_RUNTIME_DIR");
        if (!parent || !*parent)
                parent = getenv("TMPDIR");
        if (!parent || !*parent)
                parent = "/tmp";
        return parent;
}

/* Whether name is what mkdtemp makes of BASE_PREFIX "XXXXXX". */
static bool base_name(const char *name) {
        size_t n = strlen(BASE_PREFIX);
        return strncmp(name, BASE_PREFIX, n) == 0 && strlen(name + n) == 6 &&
               strspn(name + n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == 6;
}

/* Opens the directory name (in dir_fd) and takes its lock without waiting. Returns the fd,
 * -EWOULDBLOCK (a live run holds it), or -errno. */
static int lock_dir(int dir_fd, const char *name) {
        int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

/* Appends a copy of s to the NULL-terminated *v (at most 64 entries are listed). */
static void strv_add(char ***v, size_t *n, const char *s) {
        if (!v || *n >= 64)
                return;
        char **grown = realloc(*v, (*n + 2) * sizeof(char *));
        if (!grown)
                return;
        *v = grown;
        grown[*n] = strdup(s);
        if (grown[*n])
                (*n)++;
        grown[*n] = NULL;
}

/* The home canary a killed run recorded in its base folder (dir_fd), removed if it is one of ours
 * (kb_canary_set_remove_home). Returns its path when removed, else NULL. */
static char *remove_recorded_home_canary(int dir_fd) {
        _cleanup_close_ int fd = openat(dir_fd, KB_CANARY_SET_HOME_RECORD, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        char path[PATH_MAX];
        ssize_t n = read(fd, path, sizeof path - 1);
        if (n <= 0)
                return NULL;
        path[n] = '\0';
        return kb_canary_set_remove_home(path, geteuid()) == 1 ? strdup(path) : NULL;
}

size_t cli_base_dirs_scan(const char *parent, bool remove_stale, char ***ret_stale, char ***ret_kept) {
        size_t n_stale = 0, n_listed = 0, n_kept = 0;
        DIR *d = opendir(parent);
        if (!d)
                return 0;
        for (struct dirent *de = readdir(d); de; de = readdir(d)) {
                struct stat st, locked;
                if (!base_name(de->d_name) || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
                        continue; /* not a folder of ours: another user's, a symlink, a file */
                _cleanup_close_ int fd = lock_dir(dirfd(d), de->d_name);
                if (fd < 0)
                        continue; /* a live run holds it, or it is gone */
                if (fstat(fd, &locked) < 0 || locked.st_dev != st.st_dev || locked.st_ino != st.st_ino ||
                    locked.st_nlink == 0)
                        continue;
                _cleanup_free_ char *path = NULL;
                if (asprintf(&path, "%s/%s", parent, de->d_name) < 0)
                        continue;
                if (faccessat(fd, KEPT_MARKER, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
                        strv_add(ret_kept, &n_kept, path);
                        continue;
                }
                n_stale++;
                if (!remove_stale) {
                        strv_add(ret_stale, &n_listed, path);
                        continue;
                }
                /* Removed while we hold its lock: no run can take it meanwhile. */
                _cleanup_free_ char *home_canary = remove_recorded_home_canary(fd);
                if (home_canary)
                        cli_error("removed %s: the home canary of a kbound run that did not end cleanly", home_canary);
                int r = kb_remove_tree(path);
                if (r < 0)
                        cli_error("cannot remove the stale folder %s: %s", path, strerror(-r));
                else
                        cli_error("removed %s: left by a kbound run that did not end cleanly (killed?), with its "
                                  "team folders and canaries",
                                  path);
        }
        closedir(d);
        return n_stale;
}

/* mkdtemp under parent, then the lock. Another run sweeping parent may take the lock of a folder
 * just made (it is not locked yet, so it looks stale) and remove it: then make another. Returns 0
 * and *ret, or -errno. */
static int make_locked_dir(const char *parent, char **ret) {
        for (int attempt = 0; attempt < 8; attempt++) {
                _cleanup_free_ char *path = NULL;
                if (asprintf(&path, "%s/" BASE_PREFIX "XXXXXX", parent) < 0)
                        return -ENOMEM;
                if (!mkdtemp(path))
                        return -errno;
                int fd = lock_dir(AT_FDCWD, path);
                if (fd == -EWOULDBLOCK || fd == -ENOENT)
                        continue; /* a sweep has it, and removes it */
                if (fd < 0) {
                        (void) rmdir(path);
                        return fd;
                }
                /* Locked; but a sweep may have locked, removed and released it first. */
                struct stat locked, named;
                if (fstat(fd, &locked) == 0 && locked.st_nlink > 0 && stat(path, &named) == 0 &&
                    locked.st_dev == named.st_dev && locked.st_ino == named.st_ino) {
                        base_lock_fd = fd;
                        *ret = TAKE_PTR(path);
                        return 0;
                }
                close(fd);
        }
        return -EBUSY;
}

int cli_make_base_dir(const kb_sandbox_user *user, char **ret) {
        const char *parent = cli_runtime_parent();
        if (user && user->switch_user) {
                /* bwrap runs as the sandbox user and must walk to the team folders it binds. */
                _cleanup_free_ char *blocker = NULL;
                int r = kb_sandbox_user_can_reach(user, parent, &blocker);
                if (r <= 0) {
                        cli_error("the sandbox user %s cannot reach %s (%s): set KBOUND_RUNTIME_DIR to a folder it "
                                  "can traverse, such as /tmp",
                                  user->name, parent,
                                  r < 0     ? strerror(-r)
                                  : blocker ? blocker
                                            : "?");
                        return KB_EXIT_ENFORCE;
                }
        }
        /* What runs that are gone left (a SIGKILL removes nothing): team folders, canaries. */
        (void) cli_base_dirs_scan(parent, true, NULL, NULL);
        char *path = NULL;
        int r = make_locked_dir(parent, &path);
        if (r < 0) {
                cli_error("cannot create a private folder under %s: %s", parent, strerror(-r));
                return KB_EXIT_ENFORCE;
        }
        /* Searchable, not listable, by the sandbox user's group alone (see kb_kernel_start). */
        r = kb_sandbox_user_pass_through(user, path);
        if (r < 0) {
                cli_error("cannot open %s to the sandbox user's group: %s", path, strerror(-r));
                rmdir(path);
                free(path);
                return KB_EXIT_ENFORCE;
        }
        *ret = path;
        return 0;
}

void cli_keep_base_dir(const char *base) {
        _cleanup_free_ char *marker = NULL;
        _cleanup_close_ int fd = -1;
        if (asprintf(&marker, "%s/%s", base, KEPT_MARKER) >= 0)
                fd = open(marker, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                cli_error("kept the team folders under %s, but cannot mark them kept (%s): the next run may "
                          "remove them",
                          base, strerror(errno));
        else
                cli_progress("kept the team folders under %s", base); /* later runs leave it alone */
}

int cli_sandbox_env(bool *allow_raw_network) {
        const char *mode = getenv("OPENAI4S_KERNEL_SANDBOX");
        if (mode && *mode && strcmp(mode, "enforce") != 0) {
                cli_error("OPENAI4S_KERNEL_SANDBOX=%s is not supported: 'enforce' is the only mode "
                          "(kbound never reports boundaries without a sandbox)",
                          mode);
                return KB_EXIT_USAGE;
        }
        const char *raw = getenv("OPENAI4S_KERNEL_ALLOW_RAW_NETWORK");
        if (raw && *raw) {
                if (strcmp(raw, "1") == 0)
                        *allow_raw_network = true;
                else if (strcmp(raw, "0") != 0) {
                        cli_error("OPENAI4S_KERNEL_ALLOW_RAW_NETWORK=%s: expected 1 or 0", raw);
                        return KB_EXIT_USAGE;
                }
        }
        return 0;
}

long cli_parse_seconds(const char *s) {
        /* By hand, not strtod: strtod also takes a sign, leading blanks, exponents ("1e-9" is
         * 0 ms), hex ("0x10" is 16 s), "inf" and "nan". */
        const char *p = s;
        long whole = 0, ms = 0;
        size_t digits = 0;
        for (; *p >= '0' && *p <= '9'; p++, digits++)
                if (whole <= CLI_TIMEOUT_MAX_S) /* past the maximum it only has to stay past it */
                        whole = whole * 10 + (*p - '0');
        if (digits == 0)
                return -EINVAL;
        if (*p == '.') {
                p++;
                if (!(*p >= '0' && *p <= '9'))
                        return -EINVAL;
                /* Milliseconds from the first three digits; finer ones are dropped. */
                for (long scale = 100; *p >= '0' && *p <= '9'; p++, scale /= 10)
                        ms += scale * (*p - '0');
        }
        if (*p)
                return -EINVAL;
        if (whole > CLI_TIMEOUT_MAX_S || (whole == CLI_TIMEOUT_MAX_S && ms > 0))
                return -ERANGE;
        ms += whole * 1000;
        return ms < 1 ? -ERANGE : ms;
}

cli_seconds_text cli_seconds(long ms) {
        cli_seconds_text t;
        int n = snprintf(t.s, sizeof(t.s), "%ld.%03ld", ms / 1000, ms % 1000);
        /* Trailing zeros of the fraction go, and the point with them. */
        while (n > 0 && t.s[n - 1] == '0')
                t.s[--n] = '\0';
        if (n > 0 && t.s[n - 1] == '.')
                t.s[--n] = '\0';
        return t;
}

int cli_opt_timeout(const char *cmd, const char *arg, long *ret_ms) {
        long ms = cli_parse_seconds(arg);
        if (ms == -EINVAL) {
                cli_error("%s: --timeout takes seconds as decimal digits (\"30\", \"2.5\"), not '%.40s'", cmd, arg);
                return KB_EXIT_USAGE;
        }
        if (ms < 0) {
                cli_error("%s: --timeout %.40s is out of range: at least 0.001 s (1 ms), at most %d s (one day)", cmd,
                          arg, CLI_TIMEOUT_MAX_S);
                return KB_EXIT_USAGE;
        }
        *ret_ms = ms;
        return 0;
}

int cli_opt_allow_syscall(const char *cmd, cli_hardening_opts *o, const char *arg) {
        if (o->n_allow == CLI_ALLOW_SYSCALL_MAX) {
                cli_error("%s: --allow-syscall at most %d times", cmd, CLI_ALLOW_SYSCALL_MAX);
                return KB_EXIT_USAGE;
        }
        o->allow[o->n_allow++] = (char *) arg;
        o->allow[o->n_allow] = NULL;
        return 0;
}

int cli_hardening(const char *cmd, cli_hardening_opts *o, bool allow_network, const kb_bwrap *bwrap,
                  kb_sandbox_hardening *ret) {
        kb_sandbox_hardening h = {0};
        if (o->sockets && kb_seccomp_sockets_from_string(o->sockets, &h.seccomp.sockets) < 0) {
                cli_error("%s: --sockets takes default, unix or inet, not '%s'", cmd, o->sockets);
                return KB_EXIT_USAGE;
        }
        if (allow_network && !o->sockets)
                h.seccomp.sockets = KB_SECCOMP_SOCKETS_INET;
        if (allow_network && h.seccomp.sockets != KB_SECCOMP_SOCKETS_INET) {
                cli_error("%s: --sockets %s refuses IP sockets, which the raw-network override is for", cmd,
                          o->sockets);
                return KB_EXIT_USAGE;
        }
        h.seccomp.allow = o->n_allow ? o->allow : NULL;
        for (size_t i = 0; i < o->n_allow; i++) {
                const kb_seccomp_entry *e = kb_seccomp_entry_find(o->allow[i]);
                if (!e || e->match == KB_SECCOMP_MATCH_FAMILY) {
                        cli_error("%s: --allow-syscall %s: %s", cmd, o->allow[i],
                                  e ? "socket families are chosen with --sockets"
                                    : "no such entry in the seccomp filter (docs/seccomp.md lists them)");
                        return KB_EXIT_USAGE;
                }
        }
        if (kb_seccomp_policy_check(&h.seccomp) < 0) {
                cli_error("%s: the seccomp policy is not valid", cmd);
                return KB_EXIT_USAGE;
        }
        h.disable_userns = kb_bwrap_has(bwrap, KB_BWRAP_DISABLE_USERNS);
        kb_limits_default(&h.limits);
        for (size_t i = 0; i < KB_LIMIT_MAX_ID; i++) {
                const kb_limit_info *info = kb_limit_get((kb_limit_id) i);
                if (o->limits[i] && kb_limit_parse((kb_limit_id) i, o->limits[i], &h.limits.max[i]) < 0) {
                        cli_error("%s: %s takes %s, or none, not '%s'", cmd, info->option,
                                  info->bytes ? "a size with K, M or G after it (e.g. 512M)" : "a count (e.g. 512)",
                                  o->limits[i]);
                        return KB_EXIT_USAGE;
                }
        }
        h.tmpfs_size = kb_bwrap_has(bwrap, KB_BWRAP_SIZE);
        *ret = h;
        return 0;
}

int cli_opt_ro_bind(const char *cmd, char **paths, size_t *n, const char *arg) {
        if (*n == CLI_RO_BIND_MAX || arg[0] != '/') {
                cli_error("%s: --ro-bind takes an absolute path (at most %d of them)", cmd, CLI_RO_BIND_MAX);
                return KB_EXIT_USAGE;
        }
        paths[(*n)++] = (char *) arg;
        return 0;
}

void cli_become_subreaper(void) {
        /* Anything a sandbox leaves orphaned (a bwrap whose parent was killed, say) is re-parented
         * to kbound instead of PID 1, so cli_reap_orphans() can end it. */
        (void) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

/* The children of pid found in /proc; returns how many were put in pids (at most max). */
static size_t children_of(pid_t parent, pid_t *pids, size_t max) {
        DIR *d = opendir("/proc");
        size_t n = 0;
        struct dirent *de;
        while (d && n < max && (de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);
                if (*end || pid <= 0)
                        continue;
                char path[64], line[256];
                snprintf(path, sizeof(path), "/proc/%ld/status", pid);
                FILE *f = fopen(path, "re");
                if (!f)
                        continue;
                while (fgets(line, sizeof(line), f))
                        if (strncmp(line, "PPid:", 5) == 0) {
                                if (strtol(line + 5, NULL, 10) == parent)
                                        pids[n++] = (pid_t) pid;
                                break;
                        }
                fclose(f);
        }
        if (d)
                closedir(d);
        return n;
}

void cli_reap_orphans(void) {
        pid_t self = getpid();
        for (int round = 0; round < 50; round++) {
                pid_t pids[64];
                size_t n = children_of(self, pids, 64);
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        ;
                if (n == 0)
                        return;
                for (size_t i = 0; i < n; i++)
                        kill(pids[i], SIGKILL);
                usleep(20000);
        }
}

/* Whether paths a and b name one file: the same string, the same inode, or (neither there yet)
 * the same name in the same folder. */
static bool same_file(const char *a, const char *b) {
        if (strcmp(a, b) == 0)
                return true;
        struct stat sa, sb;
        bool ha = stat(a, &sa) == 0, hb = stat(b, &sb) == 0;
        if (ha && hb)
                return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
        if (ha || hb)
                return false;
        _cleanup_free_ char *da = strdup(a), *db = strdup(b);
        if (!da || !db)
                return false;
        char *slash_a = strrchr(da, '/'), *slash_b = strrchr(db, '/');
        const char *name_a = slash_a ? slash_a + 1 : da, *name_b = slash_b ? slash_b + 1 : db;
        if (strcmp(name_a, name_b) != 0)
                return false;
        if (slash_a)
                *slash_a = '\0';
        if (slash_b)
                *slash_b = '\0';
        _cleanup_free_ char *ra = realpath(slash_a ? (*da ? da : "/") : ".", NULL);
        _cleanup_free_ char *rb = realpath(slash_b ? (*db ? db : "/") : ".", NULL);
        return ra && rb && strcmp(ra, rb) == 0;
}

/* 1 or 2 when path is the file standard output or standard error already is, else -1. */
static int std_stream_of(const char *path) {
        if (strcmp(path, "-") == 0)
                return STDOUT_FILENO;
        struct stat sp, sf;
        if (stat(path, &sp) < 0)
                return -1;
        for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++)
                if (fstat(fd, &sf) == 0 && sf.st_dev == sp.st_dev && sf.st_ino == sp.st_ino)
                        return fd;
        return -1;
}

static const char *report_path_error(int r) {
        switch (r) {
        case -EISDIR:
                return "it is a directory";
        case -EINVAL:
                return "not a regular file, character device or FIFO (a block device or a socket)";
        case -ENOENT:
                return "no such folder, or a symlink to nothing";
        default:
                return strerror(-r);
        }
}

int cli_reports_check(const char *cmd, cli_report *reports, size_t n, const char *transcript_path,
                      bool *ret_stdout_taken) {
        const char *stdout_option = NULL;
        for (size_t i = 0; i < n; i++) {
                cli_report *rep = &reports[i];
                rep->fd = -1;
                if (!rep->path)
                        continue;
                if (!rep->path[0]) {
                        cli_error("%s: %s takes a file name (or - for standard output), not ''", cmd, rep->option);
                        return KB_EXIT_USAGE;
                }
                rep->fd = std_stream_of(rep->path);
                if (rep->fd == STDOUT_FILENO) {
                        if (stdout_option) {
                                cli_error("%s: %s and %s both go to standard output: one of them must go to a file",
                                          cmd, stdout_option, rep->option);
                                return KB_EXIT_USAGE;
                        }
                        stdout_option = rep->option;
                }
                if (rep->fd < 0) {
                        int r = kb_report_check_path(rep->path, NULL);
                        if (r < 0) {
                                cli_error("%s: cannot write the %s report to %s: %s", cmd, rep->option, rep->path,
                                          report_path_error(r));
                                return KB_EXIT_USAGE;
                        }
                }
                for (size_t j = 0; j < i; j++)
                        if (reports[j].path && reports[j].fd < 0 && rep->fd < 0 &&
                            same_file(reports[j].path, rep->path)) {
                                cli_error("%s: %s and %s name the same file %s: the second would replace the first",
                                          cmd, reports[j].option, rep->option, rep->path);
                                return KB_EXIT_USAGE;
                        }
                if (transcript_path && rep->fd < 0 && same_file(transcript_path, rep->path)) {
                        cli_error("%s: %s and --transcript name the same file %s", cmd, rep->option, rep->path);
                        return KB_EXIT_USAGE;
                }
        }
        if (ret_stdout_taken)
                *ret_stdout_taken = stdout_option != NULL;
        return 0;
}

int cli_reports_write(const cli_report *reports, size_t n, json_object *run) {
        int exit_code = 0;
        for (size_t i = 0; i < n; i++) {
                const cli_report *rep = &reports[i];
                if (!rep->path)
                        continue;
                int r;
                if (rep->fd >= 0) {
                        fflush(rep->fd == STDOUT_FILENO ? stdout : stderr);
                        r = kb_report_write_fd(run, rep->fd, rep->render);
                } else {
                        r = kb_report_write_file(run, rep->path, rep->render);
                }
                if (r < 0) {
                        cli_error("cannot write the %s report to %s: %s", rep->option,
                                  rep->fd == STDOUT_FILENO ? "standard output" : rep->path,
                                  r == -ENXIO   ? "a FIFO nobody is reading"
                                  : r == -EFBIG ? "the report is over kbound's size limit"
                                                : report_path_error(r));
                        exit_code = KB_EXIT_FAIL;
                }
        }
        return exit_code;
}

/* The errno of the first write to standard output that failed (0: none). stdio keeps only an
 * error flag, and the errno of a write it made behind our back is gone by the time we look. */
static int stdout_errno;

static ssize_t stdout_write(void *cookie, const char *data, size_t len) {
        size_t done = 0;
        while (done < len) {
                ssize_t n = write(STDOUT_FILENO, data + done, len - done);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        if (!stdout_errno)
                                stdout_errno = n < 0 ? errno : EIO;
                        return done > 0 ? (ssize_t) done : -1;
                }
                done += (size_t) n;
        }
        return (ssize_t) done;
}

void cli_stdout_install(void) {
        /* A terminal keeps the real stdout (line-buffered, as people expect); a file or a pipe,
         * where a full disk or a closed reader can happen, gets one that remembers why. */
        if (isatty(STDOUT_FILENO))
                return;
        FILE *f = fopencookie(NULL, "w", (cookie_io_functions_t){.write = stdout_write});
        if (!f)
                return;
        fflush(stdout);
        stdout = f;
}

int cli_stdout_close(void) {
        errno = 0;
        bool failed = fflush(stdout) != 0;
        int err = stdout_errno ? stdout_errno : errno;
        if (!failed && !ferror(stdout))
                return 0;
        cli_error("cannot write to standard output: %s", err ? strerror(err) : "a write to it failed");
        return KB_EXIT_FAIL;
}

int cli_transcript_open(const char *path, kb_transcript **ret) {
        *ret = NULL;
        if (!path)
                return 0;
        if (strcmp(path, "-") == 0) {
                cli_error("the transcript is written to a file (0600: it records what kernels printed), not to "
                          "standard output: give --transcript a file name");
                return KB_EXIT_USAGE;
        }
        int r = kb_transcript_open(path, ret);
        if (r < 0) {
                cli_error("cannot open the transcript %s: %s", path,
                          r == -ELOOP    ? "it is a symlink (refused)"
                          : r == -EINVAL ? "not a regular file"
                          : r == -EPERM  ? "it exists and belongs to another user or has another hard link "
                                           "(refused: it could not be made private); remove it or choose another path"
                                         : strerror(-r));
                return KB_EXIT_USAGE;
        }
        return 0;
}

int cli_transcript_source(kb_transcript *t, const char *kernel, const char *team, kb_transcript_source **ret,
                          kb_client_msg_fn *ret_fn, void **ret_userdata) {
        *ret = NULL;
        *ret_fn = NULL;
        *ret_userdata = NULL;
        if (!t)
                return 0;
        if (kb_transcript_source_new(t, kernel, team, ret) < 0) {
                cli_error("out of memory");
                return KB_EXIT_FAIL;
        }
        *ret_fn = kb_transcript_on_msg;
        *ret_userdata = *ret;
        return 0;
}

int cli_transcript_close(kb_transcript **t, const char *path) {
        if (!*t)
                return 0;
        uint64_t lines = 0, errors = 0;
        kb_transcript_stats(*t, &lines, &errors);
        bool truncated = kb_transcript_truncated(*t);
        int r = kb_transcript_close(t);
        if (truncated) {
                cli_error("the transcript %s reached its size cap (%llu MiB) and was cut: %llu message(s) not "
                          "written",
                          path, (unsigned long long) (KB_TRANSCRIPT_MAX_BYTES >> 20), (unsigned long long) errors);
                return KB_EXIT_FAIL;
        }
        if (r < 0 || errors > 0) {
                cli_error("the transcript %s is incomplete: %llu message(s) could not be written (%s)", path,
                          (unsigned long long) errors, strerror(r < 0 ? -r : EIO));
                return KB_EXIT_FAIL;
        }
        cli_progress("transcript: %llu message(s) written to %s", (unsigned long long) lines, path);
        return 0;
}

int cli_resolve_user_kernels_dir(const char *opt, char **ret) {
        struct stat st;
        *ret = NULL;
        if (!opt)
                return 0;
        errno = 0;
        if (stat(opt, &st) < 0 || !S_ISDIR(st.st_mode) || !(*ret = realpath(opt, NULL))) {
                cli_error("--kernels-dir %s: %s", opt, errno ? strerror(errno) : "not a folder");
                return KB_EXIT_ENFORCE;
        }
        return 0;
}

int cli_resolve_kernels_dir(const char *user, char **ret) {
        const char *env = getenv("KBOUND_KERNELS_DIR");
        char self[PATH_MAX], candidate[PATH_MAX + 64];
        const char *tries[4] = {NULL, env && *env ? env : NULL, NULL, NULL};
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        char installed[PATH_MAX + 64] = "";
        if (n > 0) {
                self[n] = '\0';
                char *slash = strrchr(self, '/');
                if (slash)
                        *slash = '\0';
                snprintf(installed, sizeof(installed), "%s/../share/kbound/kernels", self);
                tries[2] = installed;
        }
#ifdef KBOUND_SOURCE_KERNELS
        /* Running from the build tree: the source checkout's kernels/. */
        tries[3] = KBOUND_SOURCE_KERNELS;
#endif
        for (size_t i = 0; i < 4; i++) {
                if (!tries[i])
                        continue;
                snprintf(candidate, sizeof(candidate), "%s", tries[i]);
                struct stat st;
                if (stat(candidate, &st) == 0 && S_ISDIR(st.st_mode)) {
                        *ret = realpath(candidate, NULL);
                        if (*ret)
                                return 0;
                }
                if (i < 2 && tries[i]) {
                        cli_error("probe cells folder '%s' does not exist", tries[i]);
                        return KB_EXIT_ENFORCE;
                }
        }
        if (user) /* the user's packs alone */
                return (*ret = strdup(user)) ? 0 : KB_EXIT_ENFORCE;
        cli_error("cannot find the probe cells (kernels/ folder); pass --kernels-dir DIR");
        return KB_EXIT_ENFORCE;
}

int cli_opt_team(const char *cmd, const char *arg, size_t max, const char **ret) {
        static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-";
        size_t len = strlen(arg), ok = strspn(arg, alphabet);
        /* The name is quoted at most 40 bytes long; cli_error shows control characters harmlessly. */
        if (len == 0) {
                cli_error("%s: --team is empty: a team name is 1-%zu characters of [A-Za-z0-9_.-]", cmd, max);
        } else if (ok < len) {
                unsigned char c = (unsigned char) arg[ok];
                char what[48];
                if (c == '/')
                        snprintf(what, sizeof(what), "'/' (a path separator)");
                else if (c < 0x20 || c == 0x7f)
                        snprintf(what, sizeof(what), "a control character (0x%02x)", c);
                else if (c >= 0x80)
                        snprintf(what, sizeof(what), "a non-ASCII byte (0x%02x)", c);
                else
                        snprintf(what, sizeof(what), "'%c'", c);
                cli_error("%s: --team '%.40s%s' has %s at character %zu: a team name is 1-%zu characters of "
                          "[A-Za-z0-9_.-] (it names host folders and the sandbox's hostname)",
                          cmd, arg, len > 40 ? "..." : "", what, ok + 1, max);
        } else if (len > max) {
                cli_error("%s: --team '%.40s...' is %zu characters long: at most %zu", cmd, arg, len, max);
        } else if (arg[0] == '.') {
                cli_error("%s: --team '%s' starts with '.': refused ('.', '..' and hidden folders are not "
                          "team names)",
                          cmd, arg);
        } else {
                *ret = arg;
                return 0;
        }
        return KB_EXIT_USAGE;
}

/* One of kbound's programs: $env_name, else installed beside kbound, else in the build tree. */
static int resolve_program(const char *name, const char *env_name, char **ret) {
        const char *env = getenv(env_name);
        char self[PATH_MAX], installed[PATH_MAX + 64] = "", beside[PATH_MAX + 64] = "";
        const char *tries[3] = {env && *env ? env : NULL, NULL, NULL};
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n > 0) {
                self[n] = '\0';
                char *slash = strrchr(self, '/');
                if (slash)
                        *slash = '\0';
                /* Installed: <prefix>/bin/kbound and <prefix>/libexec/kbound/; built: side by side. */
                snprintf(installed, sizeof(installed), "%s/../libexec/kbound/%s", self, name);
                snprintf(beside, sizeof(beside), "%s/%s", self, name);
                tries[1] = installed;
                tries[2] = beside;
        }
        for (size_t i = 0; i < 3; i++) {
                struct stat st;
                if (!tries[i] || stat(tries[i], &st) < 0 || !S_ISREG(st.st_mode))
                        continue;
                *ret = realpath(tries[i], NULL);
                if (*ret)
                        return 0;
        }
        if (env && *env)
                cli_error("%s=%s is not a file", env_name, env);
        *ret = NULL;
        return 0;
}

int cli_resolve_syscall_probe(char **ret) {
        return resolve_program("kbound-syscall-probe", "KBOUND_SYSCALL_PROBE", ret);
}

int cli_resolve_boundary_probe(char **ret) {
        return resolve_program("kbound-probe", "KBOUND_PROBE", ret);
}

kb_kernel_options cli_kernel_options(const cli_root *root, const kb_kernelspec *spec, const char *team,
                                     const char *base, const char *bwrap, const kb_sandbox_hardening *hardening) {
        return (kb_kernel_options){
                .spec = spec,
                .base_dir = base,
                .team = team,
                .sandbox = root->sandbox,
                .bwrap = bwrap,
                .allow_network = root->allow_network,
                .rootfs = root->rootfs,
                .ro_paths = root->ro_paths,
                .host_env = environ,
                .user = root->user,
                .hardening = hardening,
        };
}

int cli_kernel_start(const kb_kernel_options *ko, const cli_root *root, long timeout_ms, kb_kernel **ret) {
        char *diagnosis = NULL;
        int r = kb_kernel_start(ko, ret, &diagnosis);
        if (r >= 0)
                return 0;
        /* --timeout bounds start-up too: a kernel not ready by then never became ready (3). */
        char within[64] = "";
        if (r == -ETIMEDOUT)
                snprintf(within, sizeof(within), " within %s s (--timeout)", cli_seconds(timeout_ms).s);
        const char *rootfs = root->rootfs;
        cli_error("kernel '%s'%s%s: cannot start%s%s: %s", ko->spec->name, rootfs ? " in image " : "",
                  rootfs ? (root->image ? kb_image_path(root->image) : rootfs) : "",
                  ko->sandbox ? " in the sandbox" : "", within, diagnosis ? diagnosis : strerror(-r));
        free(diagnosis);
        return r == -ECANCELED ? KB_EXIT_FAIL : ko->sandbox ? KB_EXIT_ENFORCE : KB_EXIT_FAIL;
}
