/* test_sandbox_log.c: the kernel log's keeper (sandbox_log.c) on a real pipe and real files: at most
 * the limit on disk whatever is written, the newest bytes kept, what was written and dropped
 * counted, everything on disk once settled, and the thread ended when the writers are gone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sandbox/sandbox-internal.h"

typedef struct fixture {
        char dir[64];
        char path[128], old[136];
} fixture;

static int setup(void **state) {
        fixture *f = calloc(1, sizeof *f);
        snprintf(f->dir, sizeof f->dir, "/tmp/kbound-log-XXXXXX");
        if (!f || !mkdtemp(f->dir))
                return -1;
        snprintf(f->path, sizeof f->path, "%s/kernel.log", f->dir);
        snprintf(f->old, sizeof f->old, "%s.1", f->path);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        fixture *f = *state;
        unlink(f->path);
        unlink(f->old);
        rmdir(f->dir);
        free(f);
        return 0;
}

static int64_t size_of(const char *path) {
        struct stat st;
        return stat(path, &st) == 0 ? (int64_t) st.st_size : -1;
}

static int64_t fact(json_object *facts, const char *key) {
        json_object *v = NULL;
        assert_true(json_object_object_get_ex(facts, key, &v));
        return json_object_get_int64(v);
}

static int open_log(const fixture *f) {
        int fd = open(f->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        return fd;
}

static void write_all(int fd, const char *buf, size_t n) {
        while (n > 0) {
                ssize_t w = write(fd, buf, n);
                assert_true(w > 0);
                buf += w;
                n -= (size_t) w;
        }
}

/* 10 MiB of numbered lines against a 1 MiB limit: at most 1 MiB on disk, the last line last. */
static void test_bounded(void **state) {
        fixture *f = *state;
        int logfd = open_log(f), w = -1;
        kb_log_keeper *k = NULL;
        assert_int_equal(kb_log_keeper_start(f->path, logfd, 1 << 20, &k, &w), 0);
        close(logfd);
        char line[64];
        uint64_t total = 0;
        int last = 0;
        for (int i = 0; total < (10u << 20); i++) {
                int n = snprintf(line, sizeof line, "line %08d of the kernel's log\n", i);
                write_all(w, line, (size_t) n);
                total += (uint64_t) n;
                last = i;
        }
        kb_log_keeper_settle(k, kb_now_ms() + 5000);
        json_object *facts = kb_log_keeper_facts(k);
        assert_non_null(facts);
        assert_int_equal(fact(facts, "written"), (int64_t) total);
        assert_int_equal(fact(facts, "max"), 1 << 20);
        int64_t kept = size_of(f->path) + size_of(f->old);
        assert_true(kept <= (1 << 20));
        assert_true(kept >= (1 << 19)); /* the older half is kept too, not only the newest bytes */
        assert_int_equal(fact(facts, "kept"), kept);
        assert_int_equal(fact(facts, "dropped"), (int64_t) total - kept);
        json_object_put(facts);
        /* the newest line ends what is kept (kernel.log.1 then kernel.log: a line may span both) */
        char want[64];
        int wn = snprintf(want, sizeof want, "line %08d of the kernel's log\n", last);
        size_t n_all = (size_t) kept, got = 0;
        char *all = malloc(n_all);
        assert_non_null(all);
        const char *parts[] = {f->old, f->path};
        for (size_t i = 0; i < 2; i++) {
                int fd = open(parts[i], O_RDONLY | O_CLOEXEC);
                ssize_t r;
                while (fd >= 0 && got < n_all && (r = read(fd, all + got, n_all - got)) > 0)
                        got += (size_t) r;
                if (fd >= 0)
                        close(fd);
        }
        assert_int_equal(got, n_all);
        assert_true(n_all >= (size_t) wn);
        assert_memory_equal(all + n_all - (size_t) wn, want, (size_t) wn);
        free(all);
        close(w);
        kb_log_keeper_stop(&k, kb_now_ms() + 5000);
        assert_null(k);
}

/* What is written before the writers go is on disk when stop returns; below the limit nothing
 * is rotated or dropped, and what the file held before stays. */
static void test_small_log_whole(void **state) {
        fixture *f = *state;
        int logfd = open_log(f), w = -1;
        write_all(logfd, "before\n", 7);
        kb_log_keeper *k = NULL;
        assert_int_equal(kb_log_keeper_start(f->path, logfd, 16 << 20, &k, &w), 0);
        close(logfd);
        write_all(w, "kernel started\n", 15);
        kb_log_keeper_settle(k, kb_now_ms() + 5000);
        assert_int_equal(size_of(f->path), 22);
        write_all(w, "kernel died\n", 12);
        close(w); /* every writer gone: the keeper drains and ends */
        kb_log_keeper_stop(&k, kb_now_ms() + 5000);
        assert_int_equal(size_of(f->path), 34);
        assert_int_equal(size_of(f->old), -1);
        char buf[64] = "";
        int fd = open(f->path, O_RDONLY | O_CLOEXEC);
        assert_int_equal(read(fd, buf, sizeof buf - 1), 34);
        close(fd);
        assert_string_equal(buf, "before\nkernel started\nkernel died\n");
}

/* A writer that stays (a sandbox not yet stopped) does not hold stop past its deadline. */
static void test_stop_with_a_writer_left(void **state) {
        fixture *f = *state;
        int logfd = open_log(f), w = -1;
        kb_log_keeper *k = NULL;
        assert_int_equal(kb_log_keeper_start(f->path, logfd, 1 << 20, &k, &w), 0);
        close(logfd);
        int64_t t0 = kb_now_ms();
        kb_log_keeper_stop(&k, kb_now_ms() + 200);
        assert_null(k);
        assert_true(kb_now_ms() - t0 < 200 + 10000); /* its deadline bounds it; room for load */
        /* the pipe has no reader now: a write fails rather than blocks */
        signal(SIGPIPE, SIG_IGN);
        assert_true(write(w, "x", 1) < 0);
        close(w);
}

static void test_bad_arguments(void **state) {
        fixture *f = *state;
        kb_log_keeper *k = NULL;
        int w = -1;
        assert_int_equal(kb_log_keeper_start(f->path, -1, 1 << 20, &k, &w), -EINVAL);
        assert_int_equal(kb_log_keeper_start(NULL, 1, 1 << 20, &k, &w), -EINVAL);
        assert_int_equal(kb_log_keeper_start(f->path, 1, 1, &k, &w), -EINVAL);
        assert_null(kb_log_keeper_facts(NULL));
        kb_log_keeper_settle(NULL, 0);
        kb_log_keeper_stop(NULL, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_bounded, setup, teardown),
                cmocka_unit_test_setup_teardown(test_small_log_whole, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stop_with_a_writer_left, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
