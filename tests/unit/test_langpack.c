/* test_langpack.c: language packs as data: finding a pack by language or alias, and rendering a cell
 * (the params placeholder replaced by the base64 of the params' JSON, every time it occurs; a
 * template without one unchanged; missing, misnamed and oversized cells refused). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "kbound/langpack.h"

typedef struct packs {
        char root[64]; /* the kernels folder */
        char pack[96]; /* its one pack, "testlang" */
} packs;

static void write_file(const char *dir, const char *name, const char *text) {
        char path[256];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        assert_int_equal(fputs(text, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
}

static int packs_setup(void **state) {
        packs *p = calloc(1, sizeof(*p));
        snprintf(p->root, sizeof(p->root), "/tmp/kb-probe-XXXXXX");
        if (!mkdtemp(p->root))
                return -1;
        snprintf(p->pack, sizeof(p->pack), "%s/testlang", p->root);
        if (mkdir(p->pack, 0700) < 0)
                return -1;
        write_file(p->pack, KB_LANGPACK_MANIFEST,
                   "{\"language\": \"TestLang\", \"aliases\": [\"tl\"], \"cells\": {"
                   "\"probe\": \"probe.tl\", \"plain\": \"plain.tl\", \"absent\": \"absent.tl\","
                   " \"escape\": \"../probe.tl\", \"hidden\": \".probe.tl\", \"number\": 5, \"big\": \"big.tl\"},"
                   " \"conformance\": {\"x\": 1}}");
        write_file(p->pack, "probe.tl",
                   "p = decode('" KB_PROBE_PARAMS_TOKEN "')\nq = '" KB_PROBE_PARAMS_TOKEN "'\n# {{KBOUND_PARAMS}}\n");
        write_file(p->pack, "plain.tl", "print(1)  # no placeholder: {{KBOUND_PARAMS_B6}}\n");
        char *big = malloc(KB_LANGPACK_CELL_MAX + 2);
        memset(big, '#', KB_LANGPACK_CELL_MAX + 1);
        big[KB_LANGPACK_CELL_MAX + 1] = '\0';
        write_file(p->pack, "big.tl", big);
        free(big);
        /* A second folder that is not a pack (no manifest): skipped. */
        char other[128];
        snprintf(other, sizeof(other), "%s/notes", p->root);
        mkdir(other, 0700);
        *state = p;
        return 0;
}

static int packs_teardown(void **state) {
        packs *p = *state;
        const char *files[] = {KB_LANGPACK_MANIFEST, "probe.tl", "plain.tl", "big.tl"};
        char path[256];
        for (size_t i = 0; i < KB_ELEMENTSOF(files); i++) {
                snprintf(path, sizeof(path), "%s/%s", p->pack, files[i]);
                unlink(path);
        }
        rmdir(p->pack);
        snprintf(path, sizeof(path), "%s/notes", p->root);
        rmdir(path);
        rmdir(p->root);
        free(p);
        return 0;
}

static kb_langpack *find(const packs *p, const char *language) {
        kb_langpack *lp = NULL;
        assert_int_equal(kb_langpack_find(p->root, language, &lp), 0);
        assert_non_null(lp);
        return lp;
}

static void test_find_by_name_and_alias(void **state) {
        packs *p = *state;
        const char *names[] = {"testlang", "TESTLANG", "tl", "Tl"};
        for (size_t i = 0; i < KB_ELEMENTSOF(names); i++) {
                kb_langpack *lp = find(p, names[i]);
                assert_string_equal(kb_langpack_language(lp), "TestLang");
                assert_string_equal(kb_langpack_dir(lp), p->pack);
                assert_non_null(kb_langpack_get(lp, "conformance"));
                assert_null(kb_langpack_get(lp, "deviations"));
                kb_langpack_destroy(&lp);
                assert_null(lp);
        }
        kb_langpack *lp = NULL;
        assert_int_equal(kb_langpack_find(p->root, "cobol", &lp), -ENOENT);
        assert_null(lp);
        assert_int_equal(kb_langpack_find("/nonexistent-kbound-dir", "tl", &lp), -ENOENT);
        kb_langpack_destroy(NULL);
}

/* A language's name becomes one safe path component, whatever the kernelspec says. */
static void test_folder_name(void **state) {
        (void) state;
        static const struct {
                const char *language, *folder;
        } cases[] = {
                {"python", "python"},
                {"Octave", "octave"},
                {"text/x-macaulay2", "macaulay2"},
                {"C++", "c++"},
                {"x-sh", "sh"},
                {"my lang;rm -rf", "my-lang-rm--rf"},
                {"../..", ""},
                {"..", ""},
                {"a/../b", "b"},
                {"", ""},
                {NULL, ""},
                {"text/", ""},
                {"\xc3\xa9t\xc3\xa9", "--t--"},
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(cases); i++) {
                char buf[KB_LANGPACK_FOLDER_MAX];
                kb_langpack_folder_name(cases[i].language, buf);
                assert_string_equal(buf, cases[i].folder);
        }
        char lang[200], buf[KB_LANGPACK_FOLDER_MAX];
        memset(lang, 'a', sizeof lang - 1);
        lang[sizeof lang - 1] = '\0';
        kb_langpack_folder_name(lang, buf);
        assert_int_equal(strlen(buf), KB_LANGPACK_FOLDER_MAX - 1);
}

/* A kernelspec whose language is a MIME type finds the pack of the same folder name. */
static void test_find_by_folder_name(void **state) {
        packs *p = *state;
        kb_langpack *lp = find(p, "text/x-testlang");
        assert_string_equal(kb_langpack_language(lp), "TestLang");
        kb_langpack_destroy(&lp);
        assert_int_equal(kb_langpack_find(p->root, "text/x-cobol", &lp), -ENOENT);
        assert_int_equal(kb_langpack_find(p->root, "..", &lp), -ENOENT);
        assert_int_equal(kb_langpack_find(p->root, "", &lp), -ENOENT);
        assert_null(lp);
}

/* Decodes base64 text (OpenSSL's decoder, the inverse of what render uses) into a NUL-terminated
 * string without its padding bytes. */
static char *unbase64(const char *b64, size_t len) {
        unsigned char *out = calloc(1, len + 1);
        assert_non_null(out);
        int n = EVP_DecodeBlock(out, (const unsigned char *) b64, (int) len);
        assert_true(n >= 0);
        size_t pad = len >= 2 && b64[len - 1] == '=' ? (b64[len - 2] == '=' ? 2 : 1) : 0;
        out[n - (int) pad] = '\0';
        return (char *) out;
}

static void test_render_substitutes_every_placeholder(void **state) {
        packs *p = *state;
        kb_langpack *lp = find(p, "tl");

        /* A known answer: {"a":1} in base64, written by hand. */
        json_object *small = json_object_new_object();
        json_object_object_add(small, "a", json_object_new_int(1));
        char *code = NULL;
        assert_int_equal(kb_langpack_render(lp, "probe", small, &code), 0);
        assert_string_equal(code, "p = decode('eyJhIjoxfQ==')\nq = 'eyJhIjoxfQ=='\n# {{KBOUND_PARAMS}}\n");
        free(code);
        json_object_put(small);

        /* Params a cell must read back exactly: quotes, a slash, UTF-8, a newline, nesting. */
        json_object *params = json_object_new_object();
        json_object_object_add(params, "nonce", json_object_new_string("n'0\"/\xc3\xa9\n"));
        json_object *ports = json_object_new_array();
        json_object_array_add(ports, json_object_new_int(41234));
        json_object_object_add(params, "tcp_ports", ports);
        assert_int_equal(kb_langpack_render(lp, "probe", params, &code), 0);
        const char *start = code + strlen("p = decode('");
        const char *end = strchr(start, '\'');
        assert_non_null(end);
        /* Base64 only: nothing of the params can break out of the cell's string literal. */
        assert_int_equal(strspn(start, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="),
                         (size_t) (end - start));
        char *json = unbase64(start, (size_t) (end - start));
        json_object *back = json_tokener_parse(json);
        assert_non_null(back);
        assert_true(json_object_equal(back, params));
        json_object_put(back);
        /* The second placeholder carries the same text. */
        char *second = strstr(end, "q = '");
        assert_non_null(second);
        assert_memory_equal(second + strlen("q = '"), start, (size_t) (end - start));
        free(json);
        free(code);
        json_object_put(params);
        kb_langpack_destroy(&lp);
}

static void test_render_without_placeholder(void **state) {
        packs *p = *state;
        kb_langpack *lp = find(p, "testlang");
        json_object *params = json_object_new_object();
        char *code = NULL;
        assert_int_equal(kb_langpack_render(lp, "plain", params, &code), 0);
        assert_string_equal(code, "print(1)  # no placeholder: {{KBOUND_PARAMS_B6}}\n");
        free(code);
        json_object_put(params);
        kb_langpack_destroy(&lp);
}

static void test_render_refusals(void **state) {
        packs *p = *state;
        kb_langpack *lp = find(p, "testlang");
        json_object *params = json_object_new_object();
        char *code = (char *) "untouched";
        /* No such cell in the manifest, or not a file name. */
        assert_int_equal(kb_langpack_render(lp, "nope", params, &code), -ENOENT);
        assert_int_equal(kb_langpack_render(lp, "number", params, &code), -ENOENT);
        /* Named, but the file is missing. */
        assert_int_equal(kb_langpack_render(lp, "absent", params, &code), -ENOENT);
        /* A name that would leave the pack's folder, or a hidden file. */
        assert_int_equal(kb_langpack_render(lp, "escape", params, &code), -EPROTO);
        assert_int_equal(kb_langpack_render(lp, "hidden", params, &code), -EPROTO);
        /* Past the ceiling on a cell's size. */
        assert_int_equal(kb_langpack_render(lp, "big", params, &code), -EMSGSIZE);
        assert_string_equal(code, "untouched");
        json_object_put(params);
        kb_langpack_destroy(&lp);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_find_by_name_and_alias),
                cmocka_unit_test(test_folder_name),
                cmocka_unit_test(test_find_by_folder_name),
                cmocka_unit_test(test_render_substitutes_every_placeholder),
                cmocka_unit_test(test_render_without_placeholder),
                cmocka_unit_test(test_render_refusals),
        };
        return cmocka_run_group_tests(tests, packs_setup, packs_teardown);
}
