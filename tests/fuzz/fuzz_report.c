/* fuzz_report.c: libFuzzer target for the report paths (kb_report_finish, kb_report_human,
 * kb_report_json, kb_report_junit) with every text a kernel or a host can put in a run: kernel
 * names and languages, kernel_info, errors, check ids, statuses and details, the sandbox's and an
 * image's strings, as raw bytes. What must hold whatever they are:
 *   - the JSON is well-formed UTF-8 that json-c parses back strictly;
 *   - the human report holds no control character (newline apart), no C1, no bidi or line
 *     separator, and has exactly the lines of its twin: the same run with every string replaced by
 *     a plain token (equal strings by equal tokens, and strings equal but for ASCII case by tokens
 *     equal but for case: the report compares languages so), so no text added or removed a line;
 *   - the JUnit XML has no character XML 1.0 forbids and exactly the twin's '<' and '>': no text
 *     made markup. */
#include "kbound/report.h"
#include "fuzz_text.h"
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Input layout (tests/fuzz/seeds/report holds examples):
 *   byte 0   bit 0: two kernels, else one; bits 1-2: checks per kernel - 1; bit 3: a "sandbox"
 *            object; bit 4: an image in it; bit 5: each kernel has an "error"; bit 6: the run is
 *            complete; bit 7: untested checks are allowed
 *   then the strings, in the order build() takes them, each ended by a NUL byte (the last one by
 *   the end of the input; missing ones are empty). A check's status is its string's first byte
 *   modulo 7: one of the six statuses, or 6: the string itself. */
#define FIELD_MAX 300
#define TOKENS_MAX 128

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct input {
        const uint8_t *p, *end;
        bool twin;     /* every string as its token */
        uint8_t first; /* the first byte of the last string read, as it was (0: empty) */
        const char *seen[TOKENS_MAX];
        size_t seen_len[TOKENS_MAX], n_seen;
} input;

static bool same_but_case(const char *a, const char *b, size_t n) {
        for (size_t i = 0; i < n; i++) {
                unsigned char x = (unsigned char) a[i], y = (unsigned char) b[i];
                if (x != y && !((x | 0x20) == (y | 0x20) && (x | 0x20) >= 'a' && (x | 0x20) <= 'z'))
                        return false;
        }
        return true;
}

/* The next string (into buf, not NUL-terminated: a length), or, for the twin, its token: "s<class>"
 * for its class of strings equal but for ASCII case, then six letters whose case says which of
 * that class's spellings it is. */
static size_t next(input *in, char *buf) {
        size_t n = 0;
        const uint8_t *start = in->p;
        while (in->p < in->end && *in->p != 0 && n < FIELD_MAX)
                buf[n++] = (char) *in->p++;
        while (in->p < in->end && *in->p != 0)
                in->p++; /* past FIELD_MAX: the rest of the string is dropped */
        if (in->p < in->end)
                in->p++;
        in->first = n ? *start : 0;
        if (!in->twin || n == 0)
                return n;
        size_t i = 0;
        for (; i < in->n_seen; i++)
                if (in->seen_len[i] == n && memcmp(in->seen[i], start, n) == 0)
                        break;
        if (i == in->n_seen && in->n_seen < TOKENS_MAX) {
                in->seen[i] = (const char *) start;
                in->seen_len[i] = n;
                in->n_seen++;
        }
        /* its class: the first string seen equal to it but for case; its spelling: how many
         * different spellings of that class came before it */
        size_t cls = i, variant = 0;
        for (size_t j = 0; j < i && j < in->n_seen; j++)
                if (in->seen_len[j] == n && same_but_case(in->seen[j], (const char *) start, n)) {
                        if (cls == i)
                                cls = j;
                        variant++;
                }
        int len = snprintf(buf, FIELD_MAX, "s%zu", cls);
        for (int b = 0; b < 6; b++)
                buf[len++] = (variant >> b) & 1 ? 'A' : 'a';
        return (size_t) len;
}

static void put(input *in, json_object *o, const char *key) {
        char buf[FIELD_MAX + 1];
        size_t n = next(in, buf);
        json_object_object_add(o, key, json_object_new_string_len(buf, (int) n));
}

static json_object *build(const uint8_t *data, size_t size, bool twin) {
        static const char *const statuses[] = {"pass", "fail", "unsupported", "not_claimed", "untested", "deviation"};
        input in = {.p = data + 1, .end = data + size, .twin = twin};
        uint8_t flags = data[0];
        json_object *run = json_object_new_object(), *kernels = json_object_new_array();
        json_object_object_add(run, "kernels", kernels);
        json_object_object_add(run, "complete", json_object_new_boolean(flags & 0x40));
        json_object_object_add(run, "allow_untested", json_object_new_boolean(flags & 0x80));
        json_object_object_add(run, "claims", json_object_new_object());
        if (flags & 0x08) {
                json_object *sb = json_object_new_object();
                json_object_object_add(run, "sandbox", sb);
                put(&in, sb, "backend");
                put(&in, sb, "bwrap_version");
                put(&in, sb, "bwrap");
                put(&in, sb, "rootfs");
                if (flags & 0x10) {
                        json_object *image = json_object_new_object();
                        json_object_object_add(sb, "image", image);
                        put(&in, image, "tag");
                        put(&in, image, "path");
                        put(&in, image, "format");
                        put(&in, image, "manifest_digest");
                }
        }
        for (int k = 0; k < ((flags & 0x01) ? 2 : 1); k++) {
                json_object *kernel = json_object_new_object(), *checks = json_object_new_array(),
                            *info = json_object_new_object();
                json_object_array_add(kernels, kernel);
                put(&in, kernel, "name");
                put(&in, kernel, "display_name");
                put(&in, kernel, "language");
                put(&in, kernel, "team");
                if (flags & 0x20)
                        put(&in, kernel, "error");
                else
                        json_object_object_add(kernel, "error", NULL);
                json_object_object_add(kernel, "kernel_info", info);
                put(&in, info, "implementation");
                put(&in, info, "implementation_version");
                put(&in, info, "language");
                json_object_object_add(kernel, "startup_ms", json_object_new_int(12));
                json_object_object_add(kernel, "checks", checks);
                for (int c = 0; c <= ((flags >> 1) & 0x03); c++) {
                        json_object *check = json_object_new_object();
                        json_object_array_add(checks, check);
                        put(&in, check, "id");
                        char buf[FIELD_MAX + 1];
                        size_t n = next(&in, buf);
                        unsigned pick = in.first % 7u; /* the same for the twin */
                        if (pick < 6)
                                json_object_object_add(check, "status", json_object_new_string(statuses[pick]));
                        else
                                json_object_object_add(check, "status", json_object_new_string_len(buf, (int) n));
                        put(&in, check, "detail");
                        json_object_object_add(check, "duration_ms", json_object_new_int(1));
                }
        }
        kb_report_finish(run);
        return run;
}

static void fail(const char *what, const char *where, size_t at) {
        fprintf(stderr, "%s: %s at byte %zu\n", where, what, at);
        abort();
}

/* Renders run with render into a string (caller frees); *ret_len its length. */
static char *render(json_object *run, int (*fn)(json_object *, FILE *), size_t *ret_len) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                abort();
        if (fn(run, f) < 0)
                fail("the renderer failed", "report", 0);
        fclose(f);
        *ret_len = len;
        return buf;
}

static size_t count(const char *s, size_t len, char c) {
        size_t n = 0;
        for (size_t i = 0; i < len; i++)
                n += s[i] == c;
        return n;
}

typedef enum { OUT_JSON, OUT_HUMAN, OUT_XML } out_kind;

static void check_utf8(const char *s, size_t len, const char *where, out_kind kind) {
        for (size_t pos = 0; pos < len;) {
                uint32_t cp;
                size_t n = well_formed((const unsigned char *) s + pos, len - pos, &cp);
                if (n == 0)
                        fail("ill-formed UTF-8", where, pos);
                if (kind == OUT_HUMAN && ((is_c0_or_c1(cp) && cp != '\n') || is_format(cp)))
                        fail("a control or format character", where, pos);
                if (kind != OUT_HUMAN && cp < 0x20 && cp != '\n' && cp != '\t' && cp != '\r')
                        fail("a raw control character", where, pos);
                if (kind == OUT_XML && (cp == 0xFFFE || cp == 0xFFFF))
                        fail("a character XML 1.0 forbids", where, pos);
                pos += n;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1 || size > 8192)
                return 0;
        json_object *run = build(data, size, false), *twin = build(data, size, true);
        size_t jl, hl, xl, thl, txl;
        char *human = render(run, kb_report_human, &hl), *thuman = render(twin, kb_report_human, &thl);
        check_utf8(human, hl, "human", OUT_HUMAN);
        if (count(human, hl, '\n') != count(thuman, thl, '\n')) {
                fprintf(stderr, "the run:\n%.*s\nits twin:\n%.*s\n", (int) hl, human, (int) thl, thuman);
                fail("a line added or removed by the text", "human", 0);
        }

        char *xml = render(run, kb_report_junit, &xl), *txml = render(twin, kb_report_junit, &txl);
        check_utf8(xml, xl, "junit", OUT_XML);
        if (count(xml, xl, '<') != count(txml, txl, '<') || count(xml, xl, '>') != count(txml, txl, '>'))
                fail("markup made by the text", "junit", 0);

        /* last: kb_report_json repairs ill-formed UTF-8 in the run itself, which can make two
         * strings the twin keeps apart equal */
        char *json = render(run, kb_report_json, &jl);
        check_utf8(json, jl, "json", OUT_JSON);
        struct json_tokener *tok = json_tokener_new();
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        json_object *back = json_tokener_parse_ex(tok, json, (int) jl);
        if (!back || json_tokener_get_error(tok) != json_tokener_success ||
            !json_object_is_type(back, json_type_object))
                fail("not a JSON object json-c parses back strictly", "json", 0);
        json_object_put(back);
        json_tokener_free(tok);

        free(json);
        free(human);
        free(thuman);
        free(xml);
        free(txml);
        json_object_put(run);
        json_object_put(twin);
        return 0;
}
