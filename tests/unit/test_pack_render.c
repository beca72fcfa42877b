/* test_pack_render: kb_langpack_render's tokens for packs whose language is a shell: the
 * parameters as bash assignments (checked by letting bash itself read them back, hostile values
 * included) and the prelude as text, base64 and gzip+base64. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kbound/langpack.h"

static char dir[] = "/tmp/kbound-test-pack-XXXXXX";

static void put(const char *name, const char *text) {
        char path[256];
        snprintf(path, sizeof path, "%s/pack/%s", dir, name);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static int setup(void **state) {
        char pack[256];
        if (!mkdtemp(dir))
                return -1;
        snprintf(pack, sizeof pack, "%s/pack", dir);
        if (mkdir(pack, 0700) < 0)
                return -1;
        put("kbound.json", "{\"language\": \"shell-test\", \"transport\": \"stdout\", \"prelude\": \"lib.sh\", "
                           "\"cells\": {\"params\": \"params.sh\", \"raw\": \"raw.sh\", \"b64\": \"b64.sh\", "
                           "\"gz\": \"gz.sh\", \"p64\": \"p64.sh\"}}");
        put("lib.sh", "{{KBOUND_PARAMS_SH}}helper() { :; }\n");
        put("params.sh", "{{KBOUND_PARAMS_SH}}");
        put("raw.sh", "( {{KBOUND_PRELUDE}} )");
        put("b64.sh", "{{KBOUND_PRELUDE_B64}}");
        put("gz.sh", "{{KBOUND_PRELUDE_GZ_B64}}");
        put("p64.sh", "{{KBOUND_PARAMS_B64}}");
        return 0;
}

static int teardown(void **state) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static char *render(const char *cell, const char *params_json) {
        kb_langpack *lp = NULL;
        assert_int_equal(kb_langpack_find(dir, "shell-test", &lp), 0);
        json_object *params = json_tokener_parse(params_json);
        assert_non_null(params);
        char *code = NULL;
        assert_int_equal(kb_langpack_render(lp, cell, params, &code), 0);
        json_object_put(params);
        kb_langpack_destroy(&lp);
        return code;
}

/* Runs script in bash, then prints what expr (bash text) gives; returns its stdout. */
static char *bash_eval(const char *script, const char *expr) {
        char path[256];
        snprintf(path, sizeof path, "%s/run.sh", dir);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "%s\n%s\n", script, expr);
        fclose(f);
        char cmd[300];
        snprintf(cmd, sizeof cmd, "bash '%s'", path);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        static char out[4096];
        size_t n = fread(out, 1, sizeof out - 1, p);
        out[n] = '\0';
        assert_int_equal(pclose(p), 0);
        return out;
}

static void test_params_round_trip(void **state) {
        /* values bash must read back byte for byte, and keys that must never become code */
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"marker\": \"it's a \\\"marker\\\" $(touch %s/pwned) `id` \\\\ \\n end\", "
                 "\"seconds\": 60, \"dirs\": [\"/a b\", \"/c'd\", \"\"], \"flag\": true, "
                 "\"none\": null, \"obj\": {\"k\": [1, 2]}, \"a-b\": \"x\", "
                 "\"$(id)\": \"y\", \"\": \"z\"}",
                 dir);
        char *code = render("params", json);
        char want[512], pwned[300];
        snprintf(want, sizeof want, "it's a \"marker\" $(touch %s/pwned) `id` \\ \n end|", dir);
        assert_string_equal(bash_eval(code, "printf '%s|' \"$KB_marker\""), want);
        snprintf(pwned, sizeof pwned, "%s/pwned", dir);
        assert_int_equal(access(pwned, F_OK), -1); /* the value was never run */
        assert_string_equal(bash_eval(code, "printf '%s|' \"$KB_seconds\" \"${#KB_dirs[@]}\" \"${KB_dirs[@]}\""),
                            "60|3|/a b|/c'd||");
        assert_string_equal(bash_eval(code, "printf '%s|' \"$KB_flag\" \"$KB_none\" \"$KB_obj\""),
                            "true||{\"k\":[1,2]}|");
        /* only [A-Za-z0-9_] keys become names: nothing else of the parameters is code */
        assert_null(strstr(code, "a-b"));
        assert_null(strstr(code, "KB_$"));
        assert_null(strstr(code, "KB_="));
        free(code);
}

/* What docs/probes-cells.md ("What a pack writer meets") tells pack writers: the parameters are
 * json-c's text, which writes every '/' as "\/" (the same JSON string): a cell needs a real JSON
 * decoder, never a pattern match on the text. */
static void test_params_b64_escapes_slashes(void **state) {
        char *code = render("p64", "{\"workspace\": \"/workspace\", \"dirs\": [\"/a/b\"]}");
        char script[512];
        snprintf(script, sizeof script, "p=$(printf %%s '%s' | base64 -d)", code);
        const char *text = bash_eval(script, "printf '%s' \"$p\"");
        assert_non_null(strstr(text, "\"\\/workspace\""));
        assert_non_null(strstr(text, "\"\\/a\\/b\""));
        assert_null(strstr(text, "\"/workspace\""));
        /* and a JSON decoder reads the paths as they are */
        json_object *decoded = json_tokener_parse(text);
        assert_non_null(decoded);
        json_object *ws = NULL;
        assert_true(json_object_object_get_ex(decoded, "workspace", &ws));
        assert_string_equal(json_object_get_string(ws), "/workspace");
        json_object_put(decoded);
        free(code);
}

static void test_prelude_forms(void **state) {
        const char *params = "{\"value\": \"v1\"}";
        char *raw = render("raw", params), *b64 = render("b64", params), *gz = render("gz", params);
        assert_string_equal(raw, "( KB_value='v1'\nhelper() { :; }\n )");
        char script[4096];
        snprintf(script, sizeof script, "p=$(printf %%s '%s' | base64 -d)", b64);
        assert_string_equal(bash_eval(script, "printf '%s' \"$p\""), "KB_value='v1'\nhelper() { :; }");
        snprintf(script, sizeof script, "p=$(printf %%s '%s' | base64 -d | gzip -dc)", gz);
        assert_string_equal(bash_eval(script, "printf '%s' \"$p\""), "KB_value='v1'\nhelper() { :; }");
        free(raw);
        free(b64);
        free(gz);
}

static void test_prelude_missing(void **state) {
        put("kbound.json", "{\"language\": \"shell-test\", \"cells\": {\"raw\": \"raw.sh\"}}");
        kb_langpack *lp = NULL;
        assert_int_equal(kb_langpack_find(dir, "shell-test", &lp), 0);
        json_object *params = json_object_new_object();
        char *code = NULL;
        assert_int_equal(kb_langpack_render(lp, "raw", params, &code), -ENOENT);
        kb_result_transport t;
        assert_int_equal(kb_langpack_transport(lp, &t), 0);
        assert_int_equal(t, KB_RESULT_MIME);
        json_object_put(params);
        kb_langpack_destroy(&lp);
        put("kbound.json", "{\"language\": \"shell-test\", \"transport\": \"carrier-pigeon\", \"cells\": {}}");
        assert_int_equal(kb_langpack_find(dir, "shell-test", &lp), 0);
        assert_int_equal(kb_langpack_transport(lp, &t), -EPROTO);
        kb_langpack_destroy(&lp);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_params_round_trip),
                cmocka_unit_test(test_params_b64_escapes_slashes),
                cmocka_unit_test(test_prelude_forms),
                cmocka_unit_test(test_prelude_missing),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
