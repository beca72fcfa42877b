/* kernel_log.c: the line of a kernel's log that says why it stopped, quoted when it dies at
 * start-up, since a stack trace's last lines (all that fits a message) are its frames. */
#include "run/kernel-internal.h"
#include "base/cleanup.h"
#include <fcntl.h>
#include <regex.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ERROR_LINE_MAX 300

/* How an error line begins, after blanks: a language's error or exception ("Error: ...",
 * "ValueError: ...", "zmq.error.ZMQError: ...", "java.lang.IllegalStateException: ..."), R's
 * "Error in f(x) :", or a runtime's fatal word. A frame ("at f (file:1:2)", "File ...") is none. */
static const char error_pattern[] =
        "^[[:blank:]]*(([[:alpha:]_][[:alnum:]_.$]*)?(Error|Exception)(:|[[:blank:]]+in[[:blank:]])|"
        "(error|ERROR|FATAL|Fatal|fatal|panic):)";

const char *kb_kernel_log_error_line(const char *text, size_t *ret_len) {
        regex_t re;
        if (!text || regcomp(&re, error_pattern, REG_EXTENDED | REG_NOSUB) != 0)
                return NULL;
        const char *found = NULL;
        size_t found_len = 0;
        char line[1024];
        for (const char *p = text; *p;) {
                size_t len = strcspn(p, "\n");
                size_t copy = len < sizeof line - 1 ? len : sizeof line - 1;
                memcpy(line, p, copy);
                line[copy] = '\0';
                if (regexec(&re, line, 0, NULL, 0) == 0) {
                        found = p;
                        found_len = len;
                }
                p += len + (p[len] == '\n');
        }
        regfree(&re);
        if (found)
                *ret_len = found_len;
        return found;
}

char *kb_kernel_log_error_line_of(const char *path, size_t scan_bytes) {
        _cleanup_close_ int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
        _cleanup_free_ char *buf = fd >= 0 ? calloc(1, scan_bytes + 1) : NULL;
        if (!buf)
                return NULL;
        off_t size = lseek(fd, 0, SEEK_END);
        ssize_t got = pread(fd, buf, scan_bytes, size > (off_t) scan_bytes ? size - (off_t) scan_bytes : 0);
        if (got <= 0)
                return NULL;
        buf[got] = '\0';
        size_t len = 0;
        const char *line = kb_kernel_log_error_line(buf, &len);
        if (!line)
                return NULL;
        size_t lead = strspn(line, " \t");
        line += lead;
        len -= lead < len ? lead : len;
        while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
                len--;
        return strndup(line, len > ERROR_LINE_MAX ? ERROR_LINE_MAX : len);
}
