/* cli.c: messages, signal self-pipe and lookups shared by the kbound subcommands. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <limits.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <kbound/sandbox.h>
#include "cli.h"

static bool quiet;
static int signal_pipe[2] = { -1, -1 };
static volatile sig_atomic_t signal_received;
/* Secrets every message is redacted with; registered before any worker thread starts and not
 * changed while they run. */
static const kb_secrets *redact_sets[CLI_REDACT_MAX];
static size_t n_redact_sets;

void cli_set_quiet(bool q) {
        quiet = q;
}

int cli_redact_register(const kb_secrets *s) {
        if (n_redact_sets == CLI_REDACT_MAX)
                return -E2BIG;
        redact_sets[n_redact_sets++] = s;
        return 0;
}

void cli_redact_clear(void) {
        n_redact_sets = 0;
}

json_object *cli_redact_json(json_object *o) {
        json_object *cur = json_object_get(o);
        for (size_t i = 0; cur && i < n_redact_sets; i++) {
                json_object *next = kb_secrets_redact(redact_sets[i], cur);
                json_object_put(cur);
                cur = next;
        }
        return cur;
}

void cli_put_sanitized_len(FILE *out, const char *s, size_t len) {
        const unsigned char *p = (const unsigned char *) s, *end = p + len;
        while (p < end) {
                if (*p == 0x1b) {
                        /* A sequence is dropped whole only when it is well formed. One that never
                         * ends loses just its introducer, and what follows is shown (sanitized):
                         * with the ESC gone a terminal acts on none of it, and a kernel cannot hide
                         * the rest of its output behind an unterminated sequence. */
                        p++;
                        if (p < end && *p == '[') {
                                /* CSI: parameter and intermediate bytes, then one final byte. */
                                const unsigned char *q = p + 1;
                                while (q < end && *q >= 0x20 && *q <= 0x3f)
                                        q++;
                                p = q < end && *q >= 0x40 && *q <= 0x7e ? q + 1 : p + 1;
                        } else if (p < end && (*p == ']' || *p == 'P' || *p == '_' || *p == '^')) {
                                /* OSC, DCS, APC, PM: a string up to BEL or ESC \. */
                                const unsigned char *q = p + 1;
                                while (q < end && *q != 0x07 && !(*q == 0x1b && q + 1 < end && q[1] == '\\'))
                                        q++;
                                p = q == end ? p + 1 : q + (*q == 0x07 ? 1 : 2);
                        } else if (p < end)
                                p++;
                        continue;
                }
                if (*p == 0xc2 && p + 1 < end && p[1] >= 0x80 && p[1] <= 0x9f) {
                        p += 2;
                        continue;
                }
                if (*p == '\0') {
                        fputs("\xe2\x90\x80", out); /* U+2400: a NUL shown, not hiding what follows */
                        p++;
                        continue;
                }
                if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f) {
                        p++;
                        continue;
                }
                fputc(*p, out);
                p++;
        }
}

void cli_put_sanitized(FILE *out, const char *s) {
        cli_put_sanitized_len(out, s, strlen(s));
}

/* One message line on stderr. Messages quote kernel-controlled text (log tails, kernel_info,
 * error values), so the line is redacted with every registered set and written without anything
 * a terminal would act on. Nothing of a line that cannot be redacted is shown. */
static void vmessage(const char *fmt, va_list ap) {
        char *text = NULL;
        if (vasprintf(&text, fmt, ap) < 0) {
                fputs("kbound: (out of memory)\n", stderr);
                return;
        }
        for (size_t i = 0; text && i < n_redact_sets; i++) {
                char *r = kb_secrets_redact_text(redact_sets[i], text, strlen(text), NULL);
                free(text);
                text = r;
        }
        flockfile(stderr);
        fputs("kbound: ", stderr);
        cli_put_sanitized(stderr, text ? text : "(a message could not be redacted and is not shown)");
        fputc('\n', stderr);
        funlockfile(stderr);
        free(text);
}

void cli_error(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vmessage(fmt, ap);
        va_end(ap);
}

void cli_progress(const char *fmt, ...) {
        if (quiet)
                return;
        va_list ap;
        va_start(ap, fmt);
        vmessage(fmt, ap);
        va_end(ap);
}

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
        struct sigaction sa = { .sa_handler = on_signal };
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

int cli_find_kernelspec(const char *name, kb_kernelspec **ret) {
        char **dirs = NULL;
        int r = kb_kernelspec_search_path(environ, &dirs);
        if (r < 0) {
                cli_error("kernel '%s': cannot build the kernelspec search path: %s", name, strerror(-r));
                return KB_EXIT_ENFORCE;
        }
        r = kb_kernelspec_find(name, dirs, ret);
        if (r == -ENOENT) {
                cli_error("kernel '%s': no kernelspec found (searched JUPYTER_PATH, the user data dir, "
                          "/usr/local/share/jupyter and /usr/share/jupyter; `kbound kernelspecs` lists "
                          "what exists)",
                          name);
        } else if (r == -EPROTO) {
                cli_error("kernel '%s': its kernel.json is malformed (argv must be a non-empty list of "
                          "strings; interrupt_mode \"signal\" or \"message\"; env strings)",
                          name);
        } else if (r == -EINVAL || r == -EMSGSIZE) {
                cli_error("kernel '%s': its kernel.json is %s", name,
                          r == -EINVAL ? "not a regular file (or the name is not usable)" : "too large");
        } else if (r < 0) {
                cli_error("kernel '%s': cannot load its kernelspec: %s", name, strerror(-r));
        }
        kb_strv_free(dirs);
        return r < 0 ? KB_EXIT_ENFORCE : 0;
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

int cli_find_bwrap_version(const char *explicit_path, char **ret, char **ret_version) {
        int r = cli_find_bwrap(explicit_path, ret);
        if (r)
                return r;
        r = kb_sandbox_bwrap_version(*ret, ret_version);
        if (r < 0) {
                cli_error("cannot enforce the sandbox: '%s --version' failed (%s); is it bubblewrap?", *ret,
                          strerror(-r));
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

int cli_make_base_dir(const kb_sandbox_user *user, char **ret) {
        const char *parent = getenv("KBOUND_RUNTIME_DIR");
        if (!parent || !*parent)
                parent = getenv("TMPDIR");
        if (!parent || !*parent)
                parent = "/tmp";
        if (user && user->switch_user) {
                /* bwrap runs as the sandbox user and must walk to the team folders it binds. */
                _cleanup_free_ char *blocker = NULL;
                int r = kb_sandbox_user_can_reach(user, parent, &blocker);
                if (r <= 0) {
                        cli_error("the sandbox user %s cannot reach %s (%s): set KBOUND_RUNTIME_DIR to a folder it "
                                  "can traverse, such as /tmp",
                                  user->name, parent, r < 0 ? strerror(-r) : blocker ? blocker : "?");
                        return KB_EXIT_ENFORCE;
                }
        }
        char *path = NULL;
        if (asprintf(&path, "%s/kbound-XXXXXX", parent) < 0)
                return KB_EXIT_ENFORCE;
        if (!mkdtemp(path)) {
                cli_error("cannot create a private folder under %s: %s", parent, strerror(errno));
                free(path);
                return KB_EXIT_ENFORCE;
        }
        /* Searchable, not listable, by the sandbox user's group alone (see kb_kernel_start). */
        int r = kb_sandbox_user_pass_through(user, path);
        if (r < 0) {
                cli_error("cannot open %s to the sandbox user's group: %s", path, strerror(-r));
                rmdir(path);
                free(path);
                return KB_EXIT_ENFORCE;
        }
        *ret = path;
        return 0;
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
        char *end = NULL;
        errno = 0;
        double v = strtod(s, &end);
        if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 86400)
                return -1;
        return (long) (v * 1000.0);
}

int cli_opt_timeout(const char *cmd, const char *arg, long *ret_ms) {
        long ms = cli_parse_seconds(arg);
        if (ms < 0) {
                cli_error("%s: --timeout takes a positive number of seconds, not '%s'", cmd, arg);
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

int cli_hardening(const char *cmd, cli_hardening_opts *o, bool allow_network, const char *bwrap_version,
                  kb_sandbox_hardening *ret) {
        kb_sandbox_hardening h = {0};
        if (o->sockets && kb_seccomp_sockets_from_string(o->sockets, &h.seccomp.sockets) < 0) {
                cli_error("%s: --sockets takes default, unix or inet, not '%s'", cmd, o->sockets);
                return KB_EXIT_USAGE;
        }
        if (allow_network && !o->sockets)
                h.seccomp.sockets = KB_SECCOMP_SOCKETS_INET;
        if (allow_network && h.seccomp.sockets != KB_SECCOMP_SOCKETS_INET) {
                cli_error("%s: --sockets %s refuses IP sockets, which the raw-network override is for", cmd, o->sockets);
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
        h.disable_userns = kb_sandbox_bwrap_disables_userns(bwrap_version);
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

int cli_transcript_open(const char *path, kb_transcript **ret) {
        *ret = NULL;
        if (!path)
                return 0;
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

int cli_resolve_kernels_dir(const char *opt, char **ret) {
        const char *env = getenv("KBOUND_KERNELS_DIR");
        char self[PATH_MAX], candidate[PATH_MAX + 64];
        const char *tries[4] = { opt, env && *env ? env : NULL, NULL, NULL };
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
        cli_error("cannot find the probe cells (kernels/ folder); pass --kernels-dir DIR");
        return KB_EXIT_ENFORCE;
}

int cli_resolve_syscall_probe(char **ret) {
        const char *env = getenv("KBOUND_SYSCALL_PROBE");
        char self[PATH_MAX], installed[PATH_MAX + 64] = "", beside[PATH_MAX + 64] = "";
        const char *tries[3] = { env && *env ? env : NULL, NULL, NULL };
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n > 0) {
                self[n] = '\0';
                char *slash = strrchr(self, '/');
                if (slash)
                        *slash = '\0';
                /* Installed: <prefix>/bin/kbound and <prefix>/libexec/kbound/; built: side by side. */
                snprintf(installed, sizeof(installed), "%s/../libexec/kbound/kbound-syscall-probe", self);
                snprintf(beside, sizeof(beside), "%s/kbound-syscall-probe", self);
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
                cli_error("KBOUND_SYSCALL_PROBE=%s is not a file", env);
        *ret = NULL;
        return 0;
}

bool cli_team_name_ok(const char *t, size_t max) {
        size_t n = strlen(t);
        return n >= 1 && n <= max && strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n &&
               t[0] != '.';
}

char *cli_iso_now(void) {
        char buf[32];
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
        return strdup(buf);
}
