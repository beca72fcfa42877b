/* fuzz_redact.c: libFuzzer target for the redactor (kb_secrets_redact_text, kb_secrets_redact):
 * hostile text holding secrets whole, cut, upper-cased, overlapping, next to each other, and an
 * independent account of which bytes must go. */
#include "kbound/secrets.h"
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Input layout (tests/fuzz/seeds/redact holds examples):
 *   byte 0        bits 0-1: number of secrets - 1; bits 2-5: which of them are tokens
 *   per secret    one length byte (taken modulo SECRET_MAX + 1), then that many bytes (a NUL ends
 *                 the value early: secrets are C strings)
 *   then the text, where INSERT b [start len] puts a copy of a secret in place: secret b & 3,
 *                 upper-cased if b & 4, only the part [start, start + len) (modulo its length)
 *                 if b & 8; every other byte is itself. */
#define SECRETS_MAX 4
#define SECRET_MAX 40
#define TEXT_MAX 1024 /* patterns matter, not size: small texts keep the naive account fast */
#define INSERT 0xFE

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct secret {
        char value[SECRET_MAX + 1];
        size_t len;
        bool token;
        char name[8];
} secret;

static void fail(const char *what, size_t at) {
        fprintf(stderr, "redaction: %s (byte %zu)\n", what, at);
        abort();
}

/* Which bytes of text[0..len) a secret covers, by the contract in secrets.h, computed the naive
 * way: every occurrence of a secret matched whole (overlapping ones too), and for a token of at
 * least KB_SECRET_FRAGMENT_MIN bytes every window of that many bytes that equals one of the
 * token's, ignoring ASCII letter case. */
static void cover(const secret *secrets, size_t n, const unsigned char *text, size_t len, bool *covered) {
        const size_t frag = KB_SECRET_FRAGMENT_MIN;
        memset(covered, 0, len);
        for (size_t k = 0; k < n; k++) {
                const secret *s = &secrets[k];
                if (s->len == 0)
                        continue;
                if (s->token && s->len >= frag) {
                        for (size_t i = 0; i + frag <= len; i++)
                                for (size_t j = 0; j + frag <= s->len; j++) {
                                        size_t m = 0;
                                        while (m < frag &&
                                               tolower(text[i + m]) == tolower((unsigned char) s->value[j + m]))
                                                m++;
                                        if (m == frag) {
                                                memset(covered + i, 1, frag);
                                                break;
                                        }
                                }
                } else {
                        for (size_t i = 0; i + s->len <= len; i++)
                                if (memcmp(text + i, s->value, s->len) == 0)
                                        memset(covered + i, 1, s->len);
                }
        }
}

/* out must be text with every maximal covered run replaced by one "[redacted:NAME]" of some
 * secret, and nothing else changed. */
static void check_redacted(const secret *secrets, size_t n, const unsigned char *text, size_t len, const bool *covered,
                           const char *out, size_t out_len) {
        size_t o = 0;
        for (size_t i = 0; i < len;) {
                if (!covered[i]) {
                        if (o >= out_len || (unsigned char) out[o] != text[i])
                                fail("output differs from the text at a byte no secret covers (or a covered "
                                     "byte was left)",
                                     i);
                        o++;
                        i++;
                        continue;
                }
                bool marker = false;
                for (size_t k = 0; k < n && !marker; k++) {
                        char m[32];
                        int ml = snprintf(m, sizeof(m), "[redacted:%s]", secrets[k].name);
                        if (out_len - o >= (size_t) ml && memcmp(out + o, m, (size_t) ml) == 0) {
                                marker = true;
                                o += (size_t) ml;
                        }
                }
                if (!marker)
                        fail("a covered byte was not replaced by one marker", i);
                while (i < len && covered[i])
                        i++;
        }
        if (o != out_len)
                fail("more output than text and markers", o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static unsigned char text[TEXT_MAX];
        static bool covered[TEXT_MAX];
        secret secrets[SECRETS_MAX];
        size_t pos = 0;

        if (size < 1)
                return 0;
        size_t n = (size_t) (data[pos] & 3) + 1;
        unsigned tokens = (data[pos] >> 2) & 0x0F;
        pos++;
        for (size_t k = 0; k < n; k++) {
                secret *s = &secrets[k];
                size_t want = pos < size ? data[pos++] % (SECRET_MAX + 1) : 0;
                if (want > size - pos)
                        want = size - pos;
                memcpy(s->value, data + pos, want);
                s->value[want] = '\0';
                s->len = strlen(s->value);
                pos += want;
                s->token = (tokens >> k) & 1;
                snprintf(s->name, sizeof(s->name), "s%zu", k);
        }
        size_t len = 0;
        while (pos < size && len < TEXT_MAX) {
                if (data[pos] != INSERT) {
                        text[len++] = data[pos++];
                        continue;
                }
                if (size - pos < 2) {
                        pos = size;
                        break;
                }
                unsigned b = data[pos + 1];
                pos += 2;
                const secret *s = &secrets[(b & 3) % n];
                size_t start = 0, count = s->len;
                if ((b & 8) && s->len > 0) {
                        start = pos < size ? data[pos++] % s->len : 0;
                        count = pos < size ? (size_t) data[pos++] % (s->len - start + 1) : s->len - start;
                }
                for (size_t i = 0; i < count && len < TEXT_MAX; i++) {
                        unsigned char c = (unsigned char) s->value[start + i];
                        text[len++] = (b & 4) ? (unsigned char) toupper(c) : c;
                }
        }

        kb_secrets *set = NULL;
        if (kb_secrets_new(&set) != 0)
                abort();
        for (size_t k = 0; k < n; k++) {
                int r = secrets[k].token ? kb_secrets_add_token(set, secrets[k].name, secrets[k].value)
                                         : kb_secrets_add(set, secrets[k].name, secrets[k].value);
                if (r != 0)
                        abort();
        }

        /* The text as bytes (NULs and all). */
        cover(secrets, n, text, len, covered);
        size_t out_len = 0;
        char *out = kb_secrets_redact_text(set, (const char *) text, len, &out_len);
        if (!out)
                abort();
        if (out[out_len] != '\0')
                fail("not NUL-terminated", out_len);
        check_redacted(secrets, n, text, len, covered, out, out_len);

        /* The same text as a JSON string value and (up to its first NUL) as an object key, nested:
         * what transcripts and reports redact. */
        json_object *doc = json_object_new_object(), *list = json_object_new_array();
        size_t key_len = strnlen((const char *) text, len);
        char *key = strndup((const char *) text, key_len);
        if (!doc || !list || !key)
                abort();
        json_object_array_add(list, json_object_new_string_len((const char *) text, (int) len));
        json_object_object_add(doc, key, list);
        bool any = false;
        for (size_t i = 0; i < len; i++)
                any |= covered[i];
        json_object *red = kb_secrets_redact(set, doc);
        if (!red)
                abort();
        if (!any && red != doc)
                fail("a copy made though no secret occurs", 0);
        if (json_object_object_length(red) != 1)
                fail("the object lost or gained a member", 0);
        json_object_object_foreach(red, rkey, rlist) {
                size_t rkey_len = 0;
                char *want_key = kb_secrets_redact_text(set, key, key_len, &rkey_len);
                if (!want_key || strcmp(rkey, want_key) != 0)
                        fail("the key was redacted differently from the text", 0);
                free(want_key);
                json_object *rstr = json_object_array_get_idx(rlist, 0);
                if (!json_object_is_type(rstr, json_type_string) ||
                    (size_t) json_object_get_string_len(rstr) != out_len ||
                    memcmp(json_object_get_string(rstr), out, out_len) != 0)
                        fail("the string value was redacted differently from the text", 0);
        }
        json_object_put(red);
        json_object_put(doc);
        free(key);
        free(out);
        kb_secrets_destroy(&set);
        return 0;
}
