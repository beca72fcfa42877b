/* cli.c: the lookups and option values the kbound subcommands share: bwrap and the sandbox user,
 * descriptor limits, the sandbox mode of the environment, --timeout, --allow-syscall, --ro-bind,
 * --team, the transcript, the language packs and kbound's programs, and a kernel's start (cli.h). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <kbound/kernel.h>
#include <kbound/sandbox.h>
#include "cli.h"

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
        if (r == -ENOEXEC) {
                cli_error("cannot enforce the sandbox: %s is not bubblewrap (its --version does not say \"bubblewrap "
                          "VERSION\", or its --help is not bwrap's): install bubblewrap (apt-get install bubblewrap) "
                          "and pass --bwrap the path of its bwrap, or leave --bwrap and KBOUND_BWRAP out",
                          *ret);
                return KB_EXIT_ENFORCE;
        }
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
                cli_error("%s: kbound is root and the sandbox user %s, which kernels run as, does not exist (kbound "
                          "never runs them as root, nor as a shared account such as nobody): run scripts/setup or "
                          "install the kbound package, or create it (useradd --system --user-group "
                          "--no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin %s), or name a "
                          "user of its own with --sandbox-user",
                          cmd, KB_SANDBOX_USER_DEFAULT, KB_SANDBOX_USER_DEFAULT);
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
        /* Nested user namespaces refused and the in-memory folders sized, by this bwrap's options or
         * by kbound's stand-ins for them (no sandbox: none of it). */
        if (bwrap)
                kb_bwrap_hardening(bwrap, &h);
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
        _cleanup_error_ kb_error *error = NULL;
        int r = kb_kernel_start(ko, ret, &error);
        if (r >= 0)
                return 0;
        /* --timeout bounds start-up too: a kernel not ready by then never became ready (3). */
        char within[64] = "";
        if (r == -ETIMEDOUT)
                snprintf(within, sizeof(within), " within %s s (--timeout)", cli_seconds(timeout_ms).s);
        const char *rootfs = root->rootfs;
        cli_error("kernel '%s'%s%s: cannot start%s%s: %s", ko->spec->name, rootfs ? " in image " : "",
                  rootfs ? (root->image ? kb_image_path(root->image) : rootfs) : "",
                  ko->sandbox ? " in the sandbox" : "", within, kb_error_text(error, r));
        return r == -ECANCELED ? KB_EXIT_FAIL : ko->sandbox ? KB_EXIT_ENFORCE : KB_EXIT_FAIL;
}
