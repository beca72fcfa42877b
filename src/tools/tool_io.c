/* tool_io.c: bounded file reads and errno names for kbound's static programs. */
#include "tool_io.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *kb_tool_errno_name(int e, char *buf, size_t n) {
        const char *name = strerrorname_np(e);
        if (name)
                return name;
        snprintf(buf, n, "E%d", e);
        return buf;
}

int kb_tool_read_file(const char *path, size_t cap, char **ret, size_t *ret_len) {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        /* Grown as it fills, so a 64 KiB cap costs a small file nothing. */
        size_t size = cap < 4096 ? cap + 1 : 4096, len = 0;
        char *buf = malloc(size);
        int r = buf ? 0 : -ENOMEM;
        while (r == 0 && len < cap) {
                if (len + 1 >= size) {
                        size_t want = size * 2 > cap + 1 ? cap + 1 : size * 2;
                        char *grown = realloc(buf, want);
                        if (!grown) {
                                r = -ENOMEM;
                                break;
                        }
                        buf = grown;
                        size = want;
                }
                ssize_t got = read(fd, buf + len, size - 1 - len);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0)
                        r = -errno;
                else if (got == 0)
                        break;
                else
                        len += (size_t) got;
        }
        close(fd);
        if (r < 0) {
                free(buf);
                return r;
        }
        buf[len] = '\0';
        *ret = buf;
        if (ret_len)
                *ret_len = len;
        return 0;
}

int kb_tool_help_version(int option, const char *program, void (*usage)(FILE *f, const char *argv0),
                         const char *argv0) {
        if (option == 'h')
                usage(stdout, argv0);
        else if (option == 'V')
                printf("%s %s\n", program, KBOUND_VERSION);
        else
                return -1;
        return 0;
}
