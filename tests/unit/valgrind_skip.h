/* valgrind_skip.h: what the unit tests leave out under valgrind, saying so. valgrind 3.19
 * (Debian 12) implements neither openat2 (syscall 437), which every lookup below a bind or inside an
 * image uses, nor pidfd_open (434); scripts/test runs the unit tests under it with
 * KBOUND_TEST_SKIP_OPENAT2=1 and KBOUND_TEST_SKIP_PIDFD=1, and each test left out prints a
 * "NOT running" line (which scripts/test repeats). The normal and ASan passes run them all.
 * Include after cmocka.h. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Skips the running test (cmocka's skip()) when the variable is "1", naming file, test and why. */
static inline void kb_test_skip_under_valgrind(const char *variable, const char *file, const char *test,
                                               const char *needs) {
        const char *value = getenv(variable);
        if (value && strcmp(value, "1") == 0) {
                fprintf(stderr, "%s: %s=1: NOT running %s (it needs %s, which valgrind 3.19 does not implement)\n",
                        file, variable, test, needs);
                skip();
        }
}

#define KB_TEST_SKIP_WITHOUT_OPENAT2(file, test)                                                                       \
        kb_test_skip_under_valgrind("KBOUND_TEST_SKIP_OPENAT2", file, test, "openat2")

#define KB_TEST_SKIP_WITHOUT_PIDFD(file, test)                                                                         \
        kb_test_skip_under_valgrind("KBOUND_TEST_SKIP_PIDFD", file, test, "pidfd_open")
