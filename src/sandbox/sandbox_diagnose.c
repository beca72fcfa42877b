/* sandbox_diagnose.c: why a sandbox did not start, in one line: the line of bwrap's log that says so
 * (read from the end of the log, never a partial line that could begin inside the key), made safe
 * for a terminal, with a hint for the well-known causes. */
#include "sandbox/sandbox-internal.h"
#include "base/cleanup.h"
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_TAIL_MAX 4096

static bool contains(const char *hay, const char *needle) {
        return hay && strstr(hay, needle) != NULL;
}

char *kb_sandbox_diagnose(const char *what, const char *log_tail) {
        /* The line that says why: the last line bwrap wrote itself, else the last non-empty one. */
        const char *best = NULL, *last = NULL;
        size_t best_len = 0, last_len = 0;
        for (const char *p = log_tail ? log_tail : ""; *p;) {
                const char *e = strchr(p, '\n');
                size_t len = e ? (size_t) (e - p) : strlen(p);
                if (len > 0) {
                        last = p;
                        last_len = len;
                        if (strncmp(p, "bwrap:", 6) == 0) {
                                best = p;
                                best_len = len;
                        }
                }
                p += len + (e ? 1 : 0);
        }
        if (!best) {
                best = last;
                best_len = last_len;
        }
        char line[512] = "";
        if (best) {
                size_t n = best_len < sizeof line - 1 ? best_len : sizeof line - 1;
                for (size_t i = 0; i < n; i++) /* hostile bytes never reach a terminal */
                        line[i] = (best[i] >= 0x20 && best[i] < 0x7f) ? best[i] : '?';
                /* A cut line ends at a whole word: a cut through the kernel's key would leave a
                 * piece too short for the caller's redaction to recognise. */
                if (n < best_len)
                        while (n > 0 && line[n - 1] != ' ')
                                n--;
                line[n] = '\0';
        }
        const char *hint = "";
        if (contains(line, "uid map") || contains(line, "gid map") || contains(line, "setting up uid") ||
            contains(line, "No permissions to create new namespace") ||
            (contains(line, "namespace") &&
             (contains(line, "Operation not permitted") || contains(line, "Permission denied"))))
                hint = " (user namespaces are refused: check sysctl user.max_user_namespaces and "
                       "kernel.unprivileged_userns_clone; on Ubuntu 24.04+ load the distribution's "
                       "bwrap-userns-restrict AppArmor profile; `kbound doctor` checks all of this)";
        char *out = NULL;
        if (asprintf(&out, "%s%s%s%s", what, *line ? ": " : "", line, hint) < 0)
                return NULL;
        return out;
}

/* The end of what bwrap wrote to the log since offset (at most LOG_TAIL_MAX bytes). */
static char *log_tail(const char *log_path, off_t offset) {
        _cleanup_close_ int fd = open(log_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return NULL;
        off_t start = st.st_size - LOG_TAIL_MAX > offset ? st.st_size - LOG_TAIL_MAX : offset;
        if (start > st.st_size)
                start = st.st_size;
        size_t len = (size_t) (st.st_size - start);
        char *buf = malloc(len + 1);
        if (!buf)
                return NULL;
        ssize_t n = pread(fd, buf, len, start);
        buf[n > 0 ? (size_t) n : 0] = '\0';
        /* Cut in the middle of a line: drop that partial line (it could begin inside the key). */
        if (start > offset && n > 0) {
                char *nl = memchr(buf, '\n', (size_t) n);
                size_t skip = nl ? (size_t) (nl - buf) + 1 : (size_t) n;
                memmove(buf, buf + skip, (size_t) n - skip + 1);
        }
        return buf;
}

int kb_sandbox_error(kb_error **ret_error, int err, const char *log_path, off_t log_offset, const char *fmt, ...) {
        if (!ret_error) /* the errno alone, made negative as kb_error_make makes it */
                return kb_error_make(NULL, err, "%s", fmt);
        _cleanup_free_ char *what = NULL;
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&what, fmt, ap) < 0)
                what = NULL; /* vasprintf leaves it undefined on failure */
        va_end(ap);
        _cleanup_free_ char *tail = log_path ? log_tail(log_path, log_offset) : NULL;
        _cleanup_free_ char *line = what ? kb_sandbox_diagnose(what, tail) : NULL;
        if (!line) /* no memory for the words: the errno's own, or none */
                return kb_error_make(ret_error, err, "%s", strerror(err < 0 ? -err : err));
        return kb_error_make(ret_error, err, "%s", line);
}
