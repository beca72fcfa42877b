/* test_transcript.c: redaction of secrets in JSON, transcript lines (shape, redaction, no
 * signature or buffer bytes), file safety (0600, no symlinks, regular files only) and concurrent
 * writers whose lines never interleave. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kbound/transcript.h"

#define SECRET "c4n4ry-5ecret-value-0123456789"
#define KEY "0011223344556677889900aabbccddeeff"

static char tmpdir[64];

static int setup(void **state) {
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/kbut-XXXXXX");
        assert_non_null(mkdtemp(tmpdir));
        return 0;
}

static int teardown(void **state) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "%s/t.jsonl", tmpdir);
        unlink(cmd);
        snprintf(cmd, sizeof(cmd), "%s/link", tmpdir);
        unlink(cmd);
        snprintf(cmd, sizeof(cmd), "%s/fifo", tmpdir);
        unlink(cmd);
        snprintf(cmd, sizeof(cmd), "%s/hard", tmpdir);
        unlink(cmd);
        rmdir(tmpdir);
        return 0;
}

static char *slurp(const char *path) {
        char *buf = NULL;
        assert_int_equal(kb_read_file(AT_FDCWD, path, 0, 16 << 20, &buf, NULL), 0);
        return buf;
}

static void test_redact_json(void **state) {
        kb_secrets *s = NULL;
        assert_int_equal(kb_secrets_new(&s), 0);
        assert_int_equal(kb_secrets_add(s, "canary:x", SECRET), 0);

        json_object *clean = json_tokener_parse("{\"a\": [1, \"plain\", {\"b\": null}]}");
        json_object *same = kb_secrets_redact(s, clean);
        assert_ptr_equal(same, clean); /* nothing found: the same object, one more reference */
        json_object_put(same);

        json_object *dirty = json_tokener_parse("{\"text\": \"before " SECRET " middle " SECRET "\", "
                                                "\"" SECRET "\": [\"x" SECRET "y\", 2, true, null]}");
        json_object *red = kb_secrets_redact(s, dirty);
        assert_non_null(red);
        assert_ptr_not_equal(red, dirty);
        const char *text = json_object_to_json_string(red);
        assert_null(strstr(text, SECRET));
        assert_non_null(strstr(text, "before [redacted:canary:x] middle [redacted:canary:x]"));
        assert_non_null(strstr(text, "\"[redacted:canary:x]\"")); /* the key */
        assert_non_null(strstr(text, "x[redacted:canary:x]y"));
        /* the original is untouched */
        assert_non_null(strstr(json_object_to_json_string(dirty), SECRET));
        json_object_put(red);
        json_object_put(dirty);

        /* A secret after an embedded NUL is still found. */
        json_object *nul = json_object_new_object();
        json_object_object_add(nul, "t", json_object_new_string_len("ab\0" SECRET, 3 + (int) strlen(SECRET)));
        red = kb_secrets_redact(s, nul);
        assert_ptr_not_equal(red, nul);
        assert_null(memmem(json_object_get_string(json_object_object_get(red, "t")),
                           (size_t) json_object_get_string_len(json_object_object_get(red, "t")), SECRET,
                           strlen(SECRET)));
        json_object_put(red);
        json_object_put(nul);

        /* Deeper than the scan depth: replaced whole, never passed on unsearched. */
        json_object *deep = json_object_new_string("leaf");
        for (int i = 0; i < 80; i++) {
                json_object *a = json_object_new_array();
                json_object_array_add(a, deep);
                deep = a;
        }
        red = kb_secrets_redact(s, deep);
        assert_non_null(strstr(json_object_to_json_string(red), "[redacted:too deep]"));
        json_object_put(red);
        json_object_put(deep);
        json_object_put(clean);
        kb_secrets_destroy(&s);
}

static kb_msg *make_msg(const char *type, const char *text) {
        kb_msg *m = NULL;
        json_object *content = json_object_new_object();
        json_object_object_add(content, "name", json_object_new_string("stdout"));
        json_object_object_add(content, "text", json_object_new_string(text));
        assert_int_equal(kb_msg_new(type, "session-1", "kbound", content, &m), 0);
        return m;
}

static void test_transcript_lines(void **state) {
        char path[128];
        snprintf(path, sizeof(path), "%s/t.jsonl", tmpdir);
        /* An existing world-readable file becomes private and is truncated. */
        FILE *f = fopen(path, "w");
        fputs("old content\n", f);
        fclose(f);
        chmod(path, 0644);

        kb_secrets *s = NULL, *s2 = NULL;
        assert_int_equal(kb_secrets_new(&s), 0);
        assert_int_equal(kb_secrets_new(&s2), 0);
        assert_int_equal(kb_secrets_add(s, "canary:credential-file", SECRET), 0);
        assert_int_equal(kb_secrets_add(s2, "connection-key", KEY), 0);
        kb_transcript *t = NULL;
        assert_int_equal(kb_transcript_open(path, &t), 0);
        assert_int_equal(kb_transcript_redact(t, s), 0);
        assert_int_equal(kb_transcript_redact(t, s2), 0);
        kb_transcript_source *src = NULL;
        assert_int_equal(kb_transcript_source_new(t, "python3", "kbound-python3", &src), 0);

        kb_msg *m = make_msg("stream", "leaked: " SECRET " and " KEY "\nsecond line");
        unsigned char bytes[5] = {1, 2, 3, 4, 5};
        kb_blob buf = {.data = bytes, .size = sizeof(bytes)};
        m->buffers = &buf;
        m->n_buffers = 1;
        kb_transcript_on_msg(src, KB_CHANNEL_IOPUB, "in", m);
        m->buffers = NULL;
        m->n_buffers = 0;
        kb_msg_destroy(&m);
        m = make_msg("execute_request", "clean");
        kb_transcript_on_msg(src, KB_CHANNEL_SHELL, "out", m);
        kb_msg_destroy(&m);

        uint64_t lines = 0, errors = 0;
        kb_transcript_stats(t, &lines, &errors);
        assert_int_equal(lines, 2);
        assert_int_equal(errors, 0);
        kb_transcript_source_destroy(&src);
        assert_int_equal(kb_transcript_close(&t), 0);
        assert_null(t);

        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        char *text = slurp(path);
        assert_null(strstr(text, "old content"));
        assert_null(strstr(text, SECRET));
        assert_null(strstr(text, KEY));
        assert_non_null(strstr(text, "[redacted:canary:credential-file]"));
        assert_non_null(strstr(text, "[redacted:connection-key]"));
        /* Exactly two lines, each a JSON object with the documented fields. */
        char *save = NULL;
        int n = 0;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
                json_object *o = json_tokener_parse(line);
                assert_non_null(o);
                const char *fields[] = {"seq",      "time",      "elapsed_ms", "kernel", "team",
                                        "channel",  "direction", "msg_type",   "header", "parent_header",
                                        "metadata", "content",   "buffers"};
                for (size_t i = 0; i < KB_ELEMENTSOF(fields); i++)
                        assert_true(json_object_object_get_ex(o, fields[i], NULL));
                assert_false(json_object_object_get_ex(o, "signature", NULL));
                assert_int_equal(json_object_get_int(json_object_object_get(o, "seq")), n + 1);
                assert_string_equal(json_object_get_string(json_object_object_get(o, "kernel")), "python3");
                if (n == 0) {
                        assert_string_equal(json_object_get_string(json_object_object_get(o, "channel")), "iopub");
                        assert_string_equal(json_object_get_string(json_object_object_get(o, "direction")), "in");
                        json_object *b = json_object_object_get(o, "buffers");
                        assert_int_equal(json_object_array_length(b), 1);
                        assert_int_equal(json_object_get_int(json_object_array_get_idx(b, 0)), 5);
                } else {
                        assert_string_equal(json_object_get_string(json_object_object_get(o, "msg_type")),
                                            "execute_request");
                }
                json_object_put(o);
        }
        assert_int_equal(n, 2);
        free(text);
        kb_secrets_destroy(&s);
        kb_secrets_destroy(&s2);
}

static void test_open_refuses(void **state) {
        char path[128], link[128], fifo[128];
        snprintf(path, sizeof(path), "%s/t.jsonl", tmpdir);
        snprintf(link, sizeof(link), "%s/link", tmpdir);
        snprintf(fifo, sizeof(fifo), "%s/fifo", tmpdir);
        FILE *f = fopen(path, "w");
        fputs("keep me\n", f);
        fclose(f);
        assert_int_equal(symlink(path, link), 0);
        kb_transcript *t = NULL;
        assert_int_equal(kb_transcript_open(link, &t), -ELOOP);
        char *text = slurp(path);
        assert_string_equal(text, "keep me\n"); /* the symlink's target was not truncated */
        free(text);
        assert_int_equal(mkfifo(fifo, 0600), 0);
        int r = kb_transcript_open(fifo, &t); /* no reader: refused at once, never a hang */
        assert_true(r == -EINVAL || r == -ENXIO);
        assert_int_equal(kb_transcript_open("/dev/null", &t), -EINVAL);
        assert_null(t);
}

/* An existing file of another user, or one with a second hard link, is refused and left as it
 * was: its owner or the other name could read what kernels printed. */
static void test_open_refuses_foreign(void **state) {
        char path[128], hard[128];
        snprintf(path, sizeof(path), "%s/t.jsonl", tmpdir);
        snprintf(hard, sizeof(hard), "%s/hard", tmpdir);
        FILE *f = fopen(path, "w");
        fputs("keep me\n", f);
        fclose(f);
        kb_transcript *t = NULL;
        assert_int_equal(link(path, hard), 0);
        assert_int_equal(kb_transcript_open(path, &t), -EPERM);
        assert_null(t);
        assert_int_equal(unlink(hard), 0);
        if (geteuid() == 0) {
                assert_int_equal(chown(path, 65534, 65534), 0);
                assert_int_equal(kb_transcript_open(path, &t), -EPERM);
                assert_null(t);
                assert_int_equal(chown(path, 0, 0), 0);
        }
        char *text = slurp(path);
        assert_string_equal(text, "keep me\n");
        free(text);
        /* Our own single-link file is taken (and truncated). */
        assert_int_equal(kb_transcript_open(path, &t), 0);
        assert_int_equal(kb_transcript_close(&t), 0);
        text = slurp(path);
        assert_string_equal(text, "");
        free(text);
}

/* Past the size cap: one truncation line, later messages are errors, close reports the failure.
 * A NULL message (one the kernel layer could not redact) is an error too. */
static void test_size_cap_and_lost_messages(void **state) {
        char path[128];
        snprintf(path, sizeof(path), "%s/t.jsonl", tmpdir);
        kb_transcript *t = NULL;
        assert_int_equal(kb_transcript_open(path, &t), 0);
        kb_transcript_source *src = NULL;
        assert_int_equal(kb_transcript_source_new(t, "python3", "team", &src), 0);
        kb_transcript_on_msg(src, KB_CHANNEL_IOPUB, "in", NULL);
        uint64_t lines = 0, errors = 0;
        kb_transcript_stats(t, &lines, &errors);
        assert_int_equal(lines, 0);
        assert_int_equal(errors, 1);

        kb_transcript_set_max_bytes(t, 2048);
        kb_msg *m = make_msg("stream", "some output that takes a few hundred bytes with the headers");
        for (int i = 0; i < 50; i++)
                kb_transcript_on_msg(src, KB_CHANNEL_IOPUB, "in", m);
        kb_msg_destroy(&m);
        kb_transcript_stats(t, &lines, &errors);
        assert_true(lines > 0 && lines < 50);
        assert_int_equal(lines + errors, 51);
        assert_true(kb_transcript_truncated(t));
        kb_transcript_source_destroy(&src);
        assert_true(kb_transcript_close(&t) < 0);

        char *text = slurp(path);
        assert_true(strlen(text) <= 2048 + 200);
        /* The last line says the transcript was cut. */
        size_t len = strlen(text);
        assert_true(len > 1 && text[len - 1] == '\n');
        size_t start = len - 1;
        while (start > 0 && text[start - 1] != '\n')
                start--;
        assert_int_equal(strncmp(text + start, "{\"truncated\":true", 17), 0);
        free(text);
}

#define THREADS 4
#define PER_THREAD 400

static void *writer(void *arg) {
        kb_transcript_source *src = arg;
        /* Long lines, so a torn write would show. */
        char text[8192];
        memset(text, 'x', sizeof(text) - 1);
        text[sizeof(text) - 1] = '\0';
        for (int i = 0; i < PER_THREAD; i++) {
                kb_msg *m = make_msg("stream", text);
                kb_transcript_on_msg(src, KB_CHANNEL_IOPUB, "in", m);
                kb_msg_destroy(&m);
        }
        return NULL;
}

static void test_concurrent_lines_never_interleave(void **state) {
        char path[128];
        snprintf(path, sizeof(path), "%s/t.jsonl", tmpdir);
        kb_transcript *t = NULL;
        assert_int_equal(kb_transcript_open(path, &t), 0);
        pthread_t threads[THREADS];
        kb_transcript_source *srcs[THREADS];
        for (int i = 0; i < THREADS; i++) {
                char name[16];
                snprintf(name, sizeof(name), "k%d", i);
                assert_int_equal(kb_transcript_source_new(t, name, name, &srcs[i]), 0);
                assert_int_equal(pthread_create(&threads[i], NULL, writer, srcs[i]), 0);
        }
        for (int i = 0; i < THREADS; i++) {
                pthread_join(threads[i], NULL);
                kb_transcript_source_destroy(&srcs[i]);
        }
        assert_int_equal(kb_transcript_close(&t), 0);
        char *text = slurp(path);
        char *save = NULL;
        int n = 0, per[THREADS] = {0};
        int64_t last_seq = 0;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
                json_object *o = json_tokener_parse(line);
                assert_non_null(o);
                int64_t seq = json_object_get_int64(json_object_object_get(o, "seq"));
                assert_int_equal(seq, last_seq + 1); /* file order is seq order */
                last_seq = seq;
                const char *k = json_object_get_string(json_object_object_get(o, "kernel"));
                per[k[1] - '0']++;
                json_object_put(o);
        }
        assert_int_equal(n, THREADS * PER_THREAD);
        for (int i = 0; i < THREADS; i++)
                assert_int_equal(per[i], PER_THREAD);
        free(text);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_redact_json),
                cmocka_unit_test_setup_teardown(test_transcript_lines, setup, teardown),
                cmocka_unit_test_setup_teardown(test_open_refuses, setup, teardown),
                cmocka_unit_test_setup_teardown(test_open_refuses_foreign, setup, teardown),
                cmocka_unit_test_setup_teardown(test_size_cap_and_lost_messages, setup, teardown),
                cmocka_unit_test_setup_teardown(test_concurrent_lines_never_interleave, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
