/* test_kernel_log.c: the line of a kernel's log that says why it stopped (kernel_log.c), as logs of
 * real kernels that died at start-up write it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "run/kernel-internal.h"

static void expect_line(const char *log, const char *want) {
        size_t len = 0;
        const char *line = kb_kernel_log_error_line(log, &len);
        if (!want) {
                if (line)
                        fail_msg("an error line in a log without one: %.*s", (int) len, line);
                return;
        }
        if (!line || len != strlen(want) || strncmp(line, want, len) != 0)
                fail_msg("want '%s', got '%.*s'", want, line ? (int) len : 6, line ? line : "(none)");
}

static void test_error_lines(void **state) {
        (void) state;
        /* IJavascript on an ipc connection file: node's error, then its stack */
        expect_line("/opt/ijs/node_modules/zeromq/lib/index.js:510\n"
                    "  this._zmq.bindSync(addr);\n"
                    "            ^\n\n"
                    "Error: No such device\n"
                    "    at exports.Socket.Socket.bindSync (/opt/ijs/node_modules/zeromq/lib/index.js:510:13)\n"
                    "    at new Kernel (/opt/ijs/node_modules/jp-kernel/lib/jp-kernel.js:252:10)\n",
                    "Error: No such device");
        /* a Python traceback: the last line is the exception */
        expect_line("Traceback (most recent call last):\n"
                    "  File \"/usr/lib/python3/dist-packages/ipykernel/kernelapp.py\", line 200, in init_sockets\n"
                    "    self.shell_port = self._bind_socket(self.shell_socket, self.shell_port)\n"
                    "zmq.error.ZMQError: Address already in use\n",
                    "zmq.error.ZMQError: Address already in use");
        /* R */
        expect_line("Error in library(IRkernel) : there is no package called 'IRkernel'\nExecution halted\n",
                    "Error in library(IRkernel) : there is no package called 'IRkernel'");
        /* the last of several */
        expect_line("error: first\nsome output\nFATAL: second\n", "FATAL: second");
        /* no error line: a frame or an ordinary word is none */
        expect_line("    at Module._compile (node:internal/modules/cjs/loader:1521:14)\nErrors are handled\n", NULL);
        expect_line("", NULL);
}

static void test_error_line_of_file(void **state) {
        (void) state;
        char path[] = "/tmp/kbound-test-log-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        static const char log[] = "starting\n   Error: No such device  \n    at f (x.js:1:2)\n";
        assert_int_equal(write(fd, log, sizeof log - 1), (ssize_t) (sizeof log - 1));
        close(fd);
        char *line = kb_kernel_log_error_line_of(path, 16384);
        assert_non_null(line);
        assert_string_equal(line, "Error: No such device");
        free(line);
        /* only the end is read: an error line before it is not found */
        line = kb_kernel_log_error_line_of(path, 20);
        assert_null(line);
        unlink(path);
        assert_null(kb_kernel_log_error_line_of("/nonexistent/kernel.log", 100));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_error_lines),
                cmocka_unit_test(test_error_line_of_file),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
