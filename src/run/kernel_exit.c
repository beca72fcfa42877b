/* kernel_exit.c: a kernel going: its log's tail, reaping it, why it died, stopping it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "base/cleanup.h"
#include "base/jsonget.h"
#include "sandbox/sandbox-internal.h"
#include "run/kernel-internal.h"

char *kb_kernel_log_tail(const kb_kernel *k, size_t max_bytes) {
        char *buf = calloc(1, max_bytes + 1);
        if (!buf || !k->log_path)
                return buf;
        if (k->sandbox)
                kb_sandbox_log_settle(k->sandbox, kb_now_ms() + 500);
        _cleanup_close_ int fd = open(k->log_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return buf;
        off_t size = lseek(fd, 0, SEEK_END);
        off_t start = size > (off_t) max_bytes ? size - (off_t) max_bytes : 0;
        ssize_t n = 0, got;
        /* A log just rotated (its keeper: sandbox_log.c) has the rest of its tail in .1. */
        if (size >= 0 && size < (off_t) max_bytes) {
                char older[PATH_MAX];
                _cleanup_close_ int ofd = snprintf(older, sizeof older, "%s.1", k->log_path) >= (int) sizeof older
                                                  ? -1
                                                  : open(older, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                off_t osize = ofd >= 0 ? lseek(ofd, 0, SEEK_END) : -1;
                size_t want = max_bytes - (size_t) size;
                if (osize > 0) {
                        off_t ostart = osize > (off_t) want ? osize - (off_t) want : 0;
                        got = pread(ofd, buf, want, ostart);
                        n = got > 0 ? got : 0;
                        start = ostart; /* a cut word at the start is skipped as below */
                }
        }
        got = pread(fd, buf + n, max_bytes - (size_t) n, size > (off_t) max_bytes ? size - (off_t) max_bytes : 0);
        n += got > 0 ? got : 0;
        buf[n] = '\0';
        /* A tail cut in the middle of a word could end in the first bytes of the key, too few to
         * be recognised as a fragment: start at the first whole word. */
        if (start > 0 && n > 0) {
                size_t skip = strcspn(buf, " \t\n");
                if (skip < (size_t) n) {
                        memmove(buf, buf + skip + 1, (size_t) n - skip);
                        n -= (ssize_t) skip + 1;
                } else {
                        n = 0;
                }
                buf[n] = '\0';
        }
        /* Trim trailing whitespace and join the lines so the tail reads as one sentence. */
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
                buf[--n] = '\0';
        for (char *p = buf; *p; p++)
                if (*p == '\n')
                        *p = ' ';
        /* The kernel wrote this log and can read its connection file. */
        if (kb_kernel_redact_in_place(k, &buf, NULL) < 0)
                return NULL;
        return buf;
}

/* The wait status of the exited kernel, reaping it: 1 if known, 0 if it is still running at
 * deadline_ms. Sandboxed, the status is bwrap's, which passes the kernel's on. */
static int reap_exited(kb_kernel *k, int64_t deadline_ms, int *ret_status) {
        for (;;) {
                if (k->stopped) {
                        *ret_status = k->wait_status;
                        return 1;
                }
                if (k->sandbox && kb_sandbox_try_reap(k->sandbox, ret_status) == 1)
                        return 1;
                if (!k->sandbox && k->child > 0) {
                        int status;
                        if (waitpid(k->child, &status, WNOHANG) == k->child) {
                                /* Its session may still hold children: stop_plain kills them. */
                                kill(-k->child, SIGKILL);
                                k->child = 0;
                                k->wait_status = status;
                                k->stopped = true;
                                *ret_status = status;
                                return 1;
                        }
                }
                if (kb_ms_left(deadline_ms) == 0)
                        return 0;
                poll(NULL, 0, 10);
        }
}

/* A kernel that died before making any of its ipc sockets may bind TCP whatever its connection
 * file says (IJavascript does): the way to say so. */
#define TCP_HINT                                                                                                       \
        " (it made none of its ipc sockets: a kernel that speaks only TCP says so in its kernelspec's metadata, "      \
        "{\"kbound\": {\"transport\": \"tcp\"}}; docs/transports.md)"

static bool no_socket_made(const kb_kernel *k) {
        int dir = k->sandbox ? kb_sandbox_runtime_fd(k->sandbox) : -1;
        char name[32];
        struct stat st;
        for (int port = 1; dir >= 0 && port <= 5; port++) {
                snprintf(name, sizeof name, SOCKET_PREFIX "-%d", port);
                if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                        return false;
        }
        return dir >= 0;
}

const char *kb_kernel_tcp_hint(const kb_kernel *k) {
        return !k->tcp && no_socket_made(k) ? TCP_HINT : "";
}

/* Whether what a kernel left says memory ran out: an allocation refused ("Cannot allocate memory",
 * MemoryError, std::bad_alloc, "out of memory"), or a stack that could not grow ("C stack
 * overflow": R's at a small address space). */
static bool says_memory(const char *s) {
        static const char *const words[] = {"memory", "bad_alloc", "ENOMEM", "stack overflow", NULL};
        for (size_t i = 0; s && words[i]; i++)
                if (strcasestr(s, words[i]))
                        return true;
        return false;
}

/* at_start: the kernel died before it answered, where a memory limit kept as RLIMIT_AS is a likely
 * cause worth naming when its end looks like one: killed by a signal, or its log saying memory ran
 * out (not a kernel that exited naming another error: a missing file, its own exception). */
char *kb_kernel_death_words(kb_kernel *k, size_t log_bytes, int64_t deadline_ms, bool at_start) {
        _cleanup_free_ char *tail = kb_kernel_log_tail(k, log_bytes);
        char how[96] = "the kernel process died";
        int status = 0;
        bool signalled = true; /* unknown: as a death by a signal */
        if (reap_exited(k, deadline_ms, &status) == 1) {
                signalled = WIFSIGNALED(status) || (k->sandbox && WIFEXITED(status) && WEXITSTATUS(status) > 128 &&
                                                    WEXITSTATUS(status) < 128 + 65);
                int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
                const char *abbrev = NULL;
                if (WIFSIGNALED(status)) {
                        abbrev = sigabbrev_np(WTERMSIG(status));
                        snprintf(how, sizeof(how), "the kernel was killed by signal %d%s%s", WTERMSIG(status),
                                 abbrev ? " SIG" : "", abbrev ? abbrev : "");
                } else if (k->sandbox && code > 128 && code < 128 + 65) {
                        /* bwrap's init reports a kernel killed by signal N as exit status 128+N. */
                        abbrev = sigabbrev_np(code - 128);
                        snprintf(how, sizeof(how), "the kernel exited with status %d (killed by signal %d%s%s)", code,
                                 code - 128, abbrev ? " SIG" : "", abbrev ? abbrev : "");
                } else
                        snprintf(how, sizeof(how), "the kernel exited with status %d", code);
        }
        /* A SIGKILL the kernel did not ask for: the memory cgroup's counter says whether it was
         * the limit (a process of the sandbox killed at --memory-max), which nothing else shows. */
        int64_t oom = k->sandbox ? kb_sandbox_oom_kills(k->sandbox) : -2;
        /* The line that says why, which a stack trace's frames push out of the tail. */
        _cleanup_free_ char *error = kb_kernel_log_error_line_of(k->log_path, 16384);
        if (error && kb_kernel_redact_in_place(k, &error, NULL) < 0)
                return NULL;
        uint64_t as = k->sandbox && at_start && (signalled || says_memory(error) || says_memory(tail))
                              ? kb_sandbox_rlimit_as(k->sandbox)
                              : 0;
        char why[256] = "";
        if (oom > 0)
                snprintf(why, sizeof why,
                         ", after the sandbox's memory cgroup killed %lld process(es) at its limit (--memory-max)",
                         (long long) oom);
        else if (as) {
                /* No cgroup here: the limit is address space, which a kernel reserves well beyond
                 * what it uses (a malloc arena per thread), so a small one can refuse a start. */
                char limit[32];
                kb_limit_format(KB_LIMIT_MEMORY, as, limit, sizeof limit);
                snprintf(why, sizeof why,
                         " (its memory limit here is each process's address space, RLIMIT_AS %s: a kernel "
                         "reserving more cannot start; raise --memory-max if so)",
                         limit);
        }
        char *d = NULL;
        if (asprintf(&d, "%s%s%s%s%s%s%s", how, why, error ? "; its log's error line: " : "", error ? error : "",
                     at_start ? kb_kernel_tcp_hint(k) : "", tail && *tail ? "; its log ends: " : "",
                     tail ? tail : "") < 0)
                return NULL;
        return d;
}

char *kb_kernel_death_diagnosis(kb_kernel *k, size_t log_bytes, int64_t deadline_ms) {
        return kb_kernel_death_words(k, log_bytes, deadline_ms, false);
}

static int stop_plain(kb_kernel *k, int64_t deadline_ms, int *ret_status) {
        if (k->child <= 0)
                return 0;
        /* The whole session: a kernel's own subprocesses must not outlive kbound either. */
        kill(-k->child, SIGKILL);
        kill(k->child, SIGKILL);
        for (;;) {
                int status;
                pid_t w = waitpid(k->child, &status, WNOHANG);
                if (w == k->child || (w < 0 && errno == ECHILD)) {
                        k->wait_status = w == k->child ? status : 0;
                        break;
                }
                if (kb_ms_left(deadline_ms) == 0)
                        return -ETIMEDOUT;
                struct pollfd p = {.fd = k->child_pidfd, .events = POLLIN};
                poll(&p, 1, 10);
        }
        k->child = 0;
        if (ret_status)
                *ret_status = k->wait_status;
        return 0;
}

int kb_kernel_stop(kb_kernel *k, int grace_ms, int64_t deadline_ms, int *ret_status) {
        if (k->stopped) {
                if (ret_status)
                        *ret_status = k->wait_status;
                return 0;
        }
        if (k->client && grace_ms > 0 && kb_kernel_alive(k)) {
                int64_t grace = kb_now_ms() + grace_ms;
                if (deadline_ms >= 0 && grace > deadline_ms)
                        grace = deadline_ms;
                if (kb_client_shutdown(k->client, grace) == 0) {
                        /* Give it the rest of the grace to exit on its own. */
                        struct pollfd p = {.fd = kb_kernel_pidfd(k), .events = POLLIN};
                        poll(&p, 1, kb_ms_left(grace));
                }
        }
        int r;
        if (k->sandbox)
                r = kb_sandbox_stop(k->sandbox, deadline_ms, &k->wait_status);
        else
                r = stop_plain(k, deadline_ms, &k->wait_status);
        if (r < 0)
                return r;
        k->stopped = true;
        if (ret_status)
                *ret_status = k->wait_status;
        return 0;
}

int kb_kernel_pidfd(const kb_kernel *k) {
        return k->sandbox ? kb_sandbox_pidfd(k->sandbox) : k->child_pidfd;
}

int kb_kernel_alive(const kb_kernel *k) {
        if (k->sandbox)
                return kb_sandbox_alive(k->sandbox);
        if (k->child_pidfd < 0)
                return 0;
        struct pollfd p = {.fd = k->child_pidfd, .events = POLLIN};
        return poll(&p, 1, 0) == 0;
}
