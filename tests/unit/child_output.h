/* child_output.h: reading what a program a unit test started prints, for cmocka tests. Include
 * after cmocka.h. */
#pragma once

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* Reads what fd has next into buf + len, at most max - len bytes; returns how many (0: the end).
 * Fails the test on a read error or when the output fills max (named as who's). */
static inline size_t child_output_read(int fd, char *buf, size_t len, size_t max, const char *who) {
        ssize_t n;
        do
                n = read(fd, buf + len, max - len);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                fail_msg("%s: reading its output: %s", who, strerror(errno));
        if (len + (size_t) n == max)
                fail_msg("%s: more than %zu bytes of output", who, max);
        return (size_t) n;
}
