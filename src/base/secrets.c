/* secrets.c: secret sets, and scanning and redacting what a kernel said for them (secrets.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <openssl/crypto.h>
#include "kbound/secrets.h"
#include "base/cleanup.h"

#define SECRETS_MAX 4096
#define SECRET_MIN_LEN 8
#define SCAN_DEPTH_MAX 64

/* A token's fragments are indexed as 12-byte lowercase grams: a byte of a text is masked when it
 * lies inside a 12-byte window equal (case-insensitively) to some window of a token. */
typedef struct gram {
        uint64_t hi;
        uint32_t lo;
        uint32_t secret;
} gram;

struct kb_secrets {
        char **names;
        char **values;
        bool *token;
        size_t n;
        gram *grams;
        size_t n_grams;
        uint32_t *table; /* open addressing over grams: index + 1, 0 = empty */
        size_t table_mask;
        bool alphabet[256]; /* bytes that occur in some token, both cases */
};

int kb_secrets_new(kb_secrets **ret) {
        kb_secrets *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

/* ASCII lowercase of 8 bytes at once: bytes 'A'..'Z' get 0x20 added, nothing else changes. */
static uint64_t lower8(uint64_t w) {
        const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
        uint64_t low7 = w & ~high;
        uint64_t ge_a = low7 + (0x80 - 'A') * ones;     /* high bit set when byte >= 'A' */
        uint64_t gt_z = low7 + (0x80 - 'Z' - 1) * ones; /* high bit set when byte > 'Z' */
        uint64_t upper = (ge_a & ~gt_z) & ~w & high;    /* and the byte itself is ASCII */
        return w | (upper >> 2);
}

/* The lowercase 12-byte gram at p. */
static gram gram_at(const unsigned char *p) {
        gram g = {0};
        uint32_t lo;
        memcpy(&g.hi, p, 8);
        memcpy(&lo, p + 8, 4);
        g.hi = lower8(g.hi);
        g.lo = (uint32_t) lower8(lo);
        return g;
}

static size_t gram_hash(const gram *g, size_t mask) {
        uint64_t h = (g->hi ^ ((uint64_t) g->lo * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;
        return (size_t) (h ^ (h >> 29)) & mask;
}

/* Rebuilds the gram table at twice the grams or more (a power of two). Returns 0 or -ENOMEM. */
static int table_build(kb_secrets *s) {
        size_t size = 64;
        while (size < 2 * s->n_grams)
                size *= 2;
        uint32_t *t = calloc(size, sizeof(uint32_t));
        if (!t)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_grams; i++) {
                size_t h = gram_hash(&s->grams[i], size - 1);
                while (t[h])
                        h = (h + 1) & (size - 1);
                t[h] = (uint32_t) i + 1;
        }
        free(s->table);
        s->table = t;
        s->table_mask = size - 1;
        return 0;
}

static const gram *gram_find(const kb_secrets *s, const gram *key) {
        for (size_t h = gram_hash(key, s->table_mask); s->table[h]; h = (h + 1) & s->table_mask) {
                const gram *g = &s->grams[s->table[h] - 1];
                if (g->hi == key->hi && g->lo == key->lo)
                        return g;
        }
        return NULL;
}

static int secrets_add(kb_secrets *s, const char *name, const char *value, bool token) {
        if (s->n == SECRETS_MAX)
                return -E2BIG;
        size_t vlen = strlen(value);
        /* A token shorter than a fragment is matched whole, like any other secret. */
        if (vlen < KB_SECRET_FRAGMENT_MIN)
                token = false;
        char **names = realloc(s->names, (s->n + 1) * sizeof(char *));
        if (!names)
                return -ENOMEM;
        s->names = names;
        char **values = realloc(s->values, (s->n + 1) * sizeof(char *));
        if (!values)
                return -ENOMEM;
        s->values = values;
        bool *tok = realloc(s->token, (s->n + 1) * sizeof(bool));
        if (!tok)
                return -ENOMEM;
        s->token = tok;
        if (token) {
                size_t add = vlen - KB_SECRET_FRAGMENT_MIN + 1;
                gram *g = realloc(s->grams, (s->n_grams + add) * sizeof(gram));
                if (!g)
                        return -ENOMEM;
                s->grams = g;
        }
        s->names[s->n] = strdup(name);
        s->values[s->n] = strdup(value);
        if (!s->names[s->n] || !s->values[s->n]) {
                free(s->names[s->n]);
                free(s->values[s->n]);
                return -ENOMEM;
        }
        s->token[s->n] = token;
        if (token) {
                size_t old_grams = s->n_grams;
                const unsigned char *v = (const unsigned char *) value;
                for (size_t i = 0; i + KB_SECRET_FRAGMENT_MIN <= vlen; i++) {
                        gram g = gram_at(v + i);
                        g.secret = (uint32_t) s->n;
                        s->grams[s->n_grams++] = g;
                }
                for (size_t i = 0; i < vlen; i++) {
                        unsigned char c = v[i];
                        s->alphabet[c] = true;
                        if (c >= 'a' && c <= 'z')
                                s->alphabet[c - 32] = true;
                        else if (c >= 'A' && c <= 'Z')
                                s->alphabet[c + 32] = true;
                }
                if (table_build(s) < 0) {
                        s->n_grams = old_grams;
                        free(s->names[s->n]);
                        OPENSSL_cleanse(s->values[s->n], vlen);
                        free(s->values[s->n]);
                        return -ENOMEM;
                }
        }
        s->n++;
        return 0;
}

int kb_secrets_add(kb_secrets *s, const char *name, const char *value) {
        return secrets_add(s, name, value, false);
}

int kb_secrets_add_token(kb_secrets *s, const char *name, const char *value) {
        return secrets_add(s, name, value, true);
}

static bool distinctive(const char *value, char *const *legit) {
        size_t len = strlen(value);
        if (len < SECRET_MIN_LEN)
                return false;
        if (strspn(value, "0123456789.-") == len)
                return false;
        /* A path that exists (absolute, or relative to where kbound runs: the shell's "_" holds
         * "build/kbound" when typed so) names a file, not a secret. */
        struct stat st;
        if (strchr(value, '/') && stat(value, &st) == 0)
                return false;
        for (char *const *l = legit; l && *l; l++)
                if (strstr(*l, value))
                        return false;
        return true;
}

/* Long hex strings are keys and tokens (ours and other daemons'): redacted by fragment too. */
static bool looks_random(const char *value) {
        size_t len = strlen(value);
        return len >= 32 && strspn(value, "0123456789abcdefABCDEF") == len;
}

int kb_secrets_add_env(kb_secrets *s, char *const *host_env, bool (*passes)(const char *name), char *const *legit,
                       size_t *ret_skipped) {
        size_t skipped = 0;
        for (char *const *e = host_env; e && *e; e++) {
                const char *eq = strchr(*e, '=');
                if (!eq || eq == *e)
                        continue;
                _cleanup_free_ char *name = strndup(*e, (size_t) (eq - *e));
                if (!name)
                        return -ENOMEM;
                /* "_" is the shell's last argument (the command that started kbound): never a secret. */
                if ((passes && passes(name)) || strcmp(name, "_") == 0)
                        continue;
                if (!distinctive(eq + 1, legit)) {
                        skipped++;
                        continue;
                }
                _cleanup_free_ char *label = NULL;
                if (asprintf(&label, "env:%s", name) < 0)
                        return -ENOMEM;
                int r = secrets_add(s, label, eq + 1, looks_random(eq + 1));
                if (r < 0)
                        return r;
        }
        if (ret_skipped)
                *ret_skipped = skipped;
        return 0;
}

size_t kb_secrets_count(const kb_secrets *s) {
        return s->n;
}

static void scan_string(const kb_secrets *s, const char *str, bool *hit) {
        for (size_t i = 0; i < s->n; i++)
                if (!hit[i] && strstr(str, s->values[i]))
                        hit[i] = true;
}

static void scan(const kb_secrets *s, json_object *o, bool *hit, int depth) {
        if (!o || depth > SCAN_DEPTH_MAX)
                return;
        switch (json_object_get_type(o)) {
        case json_type_string:
                scan_string(s, json_object_get_string(o), hit);
                break;
        case json_type_array:
                for (size_t i = 0; i < json_object_array_length(o); i++)
                        scan(s, json_object_array_get_idx(o, i), hit, depth + 1);
                break;
        case json_type_object: {
                json_object_object_foreach(o, key, value) {
                        scan_string(s, key, hit);
                        scan(s, value, hit, depth + 1);
                }
                break;
        }
        default:
                break;
        }
}

json_object *kb_secrets_scan(const kb_secrets *s, json_object *data) {
        json_object *found = json_object_new_array();
        bool *hit = calloc(s->n ? s->n : 1, sizeof(bool));
        if (!found || !hit) {
                json_object_put(found);
                free(hit);
                return NULL;
        }
        scan(s, data, hit, 0);
        for (size_t i = 0; i < s->n; i++)
                if (hit[i])
                        json_object_array_add(found, json_object_new_string(s->names[i]));
        free(hit);
        return found;
}

/* A stretch [start, end) of a text that belongs to secret. */
typedef struct span {
        size_t start, end;
        size_t secret;
} span;

typedef struct spans {
        span *v;
        size_t n, cap;
        bool any_only; /* stop at the first span: the caller only asks whether there is one */
} spans;

/* Adds [start, end), merging with the last span when they touch. 1 to stop, 0, -ENOMEM. */
static int spans_add(spans *sp, size_t start, size_t end, size_t secret) {
        if (sp->any_only) {
                sp->n = 1;
                return 1;
        }
        if (sp->n > 0 && start <= sp->v[sp->n - 1].end && start >= sp->v[sp->n - 1].start) {
                if (end > sp->v[sp->n - 1].end)
                        sp->v[sp->n - 1].end = end;
                return 0;
        }
        if (sp->n == sp->cap) {
                size_t cap = sp->cap ? 2 * sp->cap : 16;
                span *v = realloc(sp->v, cap * sizeof(span));
                if (!v)
                        return -ENOMEM;
                sp->v = v;
                sp->cap = cap;
        }
        sp->v[sp->n++] = (span){start, end, secret};
        return 0;
}

static int span_cmp(const void *a, const void *b) {
        const span *x = a, *y = b;
        return x->start < y->start ? -1 : x->start > y->start ? 1 : 0;
}

/* Every stretch of str[0..len) that belongs to a secret: whole copies of every secret, and for
 * tokens every fragment of at least KB_SECRET_FRAGMENT_MIN bytes, in any letter case. The spans
 * come back sorted and merged. Returns 0 or -ENOMEM. */
static int find_spans(const kb_secrets *s, const char *str, size_t len, spans *sp) {
        const unsigned char *t = (const unsigned char *) str;
        int r;
        /* Tokens: one pass over the text; a window holding a byte no token has is skipped cheaply,
         * so ordinary prose costs little more than a read. */
        if (s->n_grams > 0 && len >= KB_SECRET_FRAGMENT_MIN) {
                ssize_t last_bad = -1;
                for (size_t j = 0; j < len; j++) {
                        if (!s->alphabet[t[j]])
                                last_bad = (ssize_t) j;
                        if (j + 1 < KB_SECRET_FRAGMENT_MIN)
                                continue;
                        size_t i = j + 1 - KB_SECRET_FRAGMENT_MIN;
                        if (last_bad >= (ssize_t) i)
                                continue;
                        gram key = gram_at(t + i);
                        const gram *g = gram_find(s, &key);
                        if (g && (r = spans_add(sp, i, j + 1, g->secret)) != 0)
                                return r < 0 ? r : 0;
                }
        }
        size_t tokens_end = sp->n;
        for (size_t k = 0; k < s->n; k++) {
                if (s->token[k])
                        continue;
                size_t vlen = strlen(s->values[k]);
                if (vlen == 0)
                        continue;
                const char *p = str, *end = str + len, *hit;
                while ((hit = memmem(p, (size_t) (end - p), s->values[k], vlen))) {
                        size_t at = (size_t) (hit - str);
                        if ((r = spans_add(sp, at, at + vlen, k)) != 0)
                                return r < 0 ? r : 0;
                        /* The next occurrence may overlap this one ("aba" twice in "ababa"):
                         * searching on after its end would leave the tail of that one shown. */
                        p = hit + 1;
                }
        }
        if (sp->n > tokens_end) {
                /* Whole-value matches came per secret: sort everything and merge overlaps. */
                qsort(sp->v, sp->n, sizeof(span), span_cmp);
                size_t w = 0;
                for (size_t i = 0; i < sp->n; i++) {
                        if (w > 0 && sp->v[i].start <= sp->v[w - 1].end) {
                                if (sp->v[i].end > sp->v[w - 1].end)
                                        sp->v[w - 1].end = sp->v[i].end;
                                continue;
                        }
                        sp->v[w++] = sp->v[i];
                }
                sp->n = w;
        }
        return 0;
}

/* Whether any secret occurs in the bytes (not just up to an embedded NUL). Out of memory counts
 * as found, so that redaction fails closed. */
static bool bytes_have_secret(const kb_secrets *s, const char *str, size_t len) {
        spans sp = {.any_only = true};
        int r = find_spans(s, str, len, &sp);
        free(sp.v);
        return r < 0 || sp.n > 0;
}

char *kb_secrets_redact_text(const kb_secrets *s, const char *str, size_t len, size_t *ret_len) {
        spans sp = {0};
        if (find_spans(s, str, len, &sp) < 0) {
                free(sp.v);
                return NULL;
        }
        char *out = NULL;
        size_t out_len = 0;
        FILE *f = open_memstream(&out, &out_len);
        if (!f) {
                free(sp.v);
                return NULL;
        }
        size_t at = 0;
        for (size_t i = 0; i < sp.n; i++) {
                fwrite(str + at, 1, sp.v[i].start - at, f);
                fprintf(f, "[redacted:%s]", s->names[sp.v[i].secret]);
                at = sp.v[i].end;
        }
        fwrite(str + at, 1, len - at, f);
        free(sp.v);
        bool failed = ferror(f);
        if (fclose(f) != 0 || failed) {
                if (out)
                        OPENSSL_cleanse(out, out_len);
                free(out);
                return NULL;
        }
        if (ret_len)
                *ret_len = out_len;
        return out;
}

static bool has_secret(const kb_secrets *s, json_object *o, int depth) {
        if (!o)
                return false;
        if (depth > SCAN_DEPTH_MAX)
                return true; /* unsearched counts as found: redaction fails closed */
        switch (json_object_get_type(o)) {
        case json_type_string:
                return bytes_have_secret(s, json_object_get_string(o), (size_t) json_object_get_string_len(o));
        case json_type_array:
                for (size_t i = 0; i < json_object_array_length(o); i++)
                        if (has_secret(s, json_object_array_get_idx(o, i), depth + 1))
                                return true;
                return false;
        case json_type_object: {
                json_object_object_foreach(o, key, value) {
                        if (bytes_have_secret(s, key, strlen(key)) || has_secret(s, value, depth + 1))
                                return true;
                }
                return false;
        }
        default:
                return false;
        }
}

static json_object *redact(const kb_secrets *s, json_object *o, int depth) {
        if (!o)
                return NULL;
        if (!has_secret(s, o, depth))
                return json_object_get(o);
        if (depth > SCAN_DEPTH_MAX)
                return json_object_new_string("[redacted:too deep]");
        switch (json_object_get_type(o)) {
        case json_type_string: {
                size_t len = 0;
                _cleanup_free_ char *text = kb_secrets_redact_text(s, json_object_get_string(o),
                                                                   (size_t) json_object_get_string_len(o), &len);
                return text && len <= INT_MAX ? json_object_new_string_len(text, (int) len) : NULL;
        }
        case json_type_array: {
                json_object *a = json_object_new_array();
                for (size_t i = 0; a && i < json_object_array_length(o); i++) {
                        json_object *src = json_object_array_get_idx(o, i);
                        json_object *v = redact(s, src, depth + 1);
                        if ((src && !v) || json_object_array_add(a, v) < 0) {
                                json_object_put(v);
                                json_object_put(a);
                                return NULL;
                        }
                }
                return a;
        }
        case json_type_object: {
                json_object *copy = json_object_new_object();
                if (!copy)
                        return NULL;
                json_object_object_foreach(o, key, value) {
                        _cleanup_free_ char *k = kb_secrets_redact_text(s, key, strlen(key), NULL);
                        json_object *v = redact(s, value, depth + 1);
                        if (!k || (value && !v) || json_object_object_add(copy, k, v) < 0) {
                                json_object_put(v);
                                json_object_put(copy);
                                return NULL;
                        }
                }
                return copy;
        }
        default:
                return json_object_get(o);
        }
}

json_object *kb_secrets_redact(const kb_secrets *s, json_object *data) {
        if (!data)
                return NULL;
        return redact(s, data, 0);
}

void kb_secrets_destroy(kb_secrets **sp) {
        if (!sp || !*sp)
                return;
        kb_secrets *s = *sp;
        for (size_t i = 0; i < s->n; i++) {
                OPENSSL_cleanse(s->values[i], strlen(s->values[i]));
                free(s->values[i]);
                free(s->names[i]);
        }
        free(s->names);
        free(s->values);
        free(s->token);
        if (s->grams)
                OPENSSL_cleanse(s->grams, s->n_grams * sizeof(gram));
        free(s->grams);
        free(s->table);
        free(s);
        *sp = NULL;
}
