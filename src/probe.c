/* probe.c: language packs (probe cells as data), probe results, canary listeners and secrets. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <zlib.h>
#include "kbound/probe.h"
#include "kbound/sandbox.h"

#define MANIFEST_MAX (64 * 1024)
#define MANIFEST_DEPTH_MAX 8
#define SECRETS_MAX 4096
#define SECRET_MIN_LEN 8
#define SCAN_DEPTH_MAX 64

/* ---- language packs ---- */

struct kb_langpack {
        char *dir;
        char *language;
        json_object *manifest;
};

/* 1 if manifest names language (or an alias of it), 0 if not, -EPROTO if malformed. */
static int manifest_matches(json_object *m, const char *language) {
        json_object *lang = NULL, *aliases = NULL, *cells = NULL;
        if (!json_object_is_type(m, json_type_object) || !json_object_object_get_ex(m, "language", &lang) ||
            !json_object_is_type(lang, json_type_string) || !json_object_object_get_ex(m, "cells", &cells) ||
            !json_object_is_type(cells, json_type_object))
                return -EPROTO;
        if (strcasecmp(json_object_get_string(lang), language) == 0)
                return 1;
        if (json_object_object_get_ex(m, "aliases", &aliases) && json_object_is_type(aliases, json_type_array))
                for (size_t i = 0; i < json_object_array_length(aliases); i++) {
                        json_object *a = json_object_array_get_idx(aliases, i);
                        if (json_object_is_type(a, json_type_string) &&
                            strcasecmp(json_object_get_string(a), language) == 0)
                                return 1;
                }
        return 0;
}

int kb_langpack_find(const char *kernels_dir, const char *language, kb_langpack **ret) {
        DIR *d = opendir(kernels_dir);
        if (!d)
                return -errno;
        int r = -ENOENT;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                _cleanup_close_ int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (sub < 0)
                        continue;
                _cleanup_free_ char *text = NULL;
                size_t len = 0;
                if (kb_read_file(sub, KB_LANGPACK_MANIFEST, O_NOFOLLOW, MANIFEST_MAX, &text, &len) < 0)
                        continue;
                json_object *m = NULL;
                int match = kb_json_parse_strict(text, len, MANIFEST_DEPTH_MAX, &m) < 0 ? -EPROTO
                                                                                      : manifest_matches(m, language);
                if (match <= 0) {
                        json_object_put(m);
                        if (match < 0 && r == -ENOENT)
                                r = -EPROTO;
                        continue;
                }
                kb_langpack *lp = calloc(1, sizeof(*lp));
                if (!lp || asprintf(&lp->dir, "%s/%s", kernels_dir, de->d_name) < 0) {
                        free(lp);
                        json_object_put(m);
                        r = -ENOMEM;
                        break;
                }
                json_object *lang = NULL;
                json_object_object_get_ex(m, "language", &lang);
                lp->language = strdup(json_object_get_string(lang));
                lp->manifest = m;
                if (!lp->language) {
                        kb_langpack_destroy(&lp);
                        r = -ENOMEM;
                        break;
                }
                *ret = lp;
                r = 0;
                break;
        }
        closedir(d);
        return r;
}

const char *kb_langpack_language(const kb_langpack *lp) {
        return lp->language;
}

const char *kb_langpack_dir(const kb_langpack *lp) {
        return lp->dir;
}

json_object *kb_langpack_get(const kb_langpack *lp, const char *key) {
        json_object *v = NULL;
        return json_object_object_get_ex(lp->manifest, key, &v) ? v : NULL;
}

/* Appends s to the growing string *buf (length *len) as one POSIX shell word in single quotes. */
static int sh_quote(char **buf, size_t *len, const char *s) {
        size_t extra = 2 + strlen(s) * 4;
        char *grown = realloc(*buf, *len + extra + 1);
        if (!grown)
                return -ENOMEM;
        *buf = grown;
        char *w = grown + *len;
        *w++ = '\'';
        for (const char *p = s; *p; p++) {
                if (*p == '\'') {
                        memcpy(w, "'\\''", 4); /* close, an escaped quote, reopen */
                        w += 4;
                } else
                        *w++ = *p;
        }
        *w++ = '\'';
        *w = '\0';
        *len = (size_t) (w - grown);
        return 0;
}

static int sh_append(char **buf, size_t *len, const char *s) {
        size_t n = strlen(s);
        char *grown = realloc(*buf, *len + n + 1);
        if (!grown)
                return -ENOMEM;
        memcpy(grown + *len, s, n + 1);
        *buf = grown;
        *len += n;
        return 0;
}

/* A JSON value as a shell word: strings and numbers as themselves, booleans as true/false, null as
 * the empty string, objects as their JSON text. */
static int sh_value(char **buf, size_t *len, json_object *v) {
        if (!v)
                return sh_quote(buf, len, "");
        if (json_object_is_type(v, json_type_string))
                return sh_quote(buf, len, json_object_get_string(v));
        if (json_object_is_type(v, json_type_boolean))
                return sh_quote(buf, len, json_object_get_boolean(v) ? "true" : "false");
        return sh_quote(buf, len, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

/* params as bash assignments, one per line: KB_<key>=word for a scalar, KB_<key>=(word ...) for an
 * array. Keys that are not [A-Za-z0-9_]+ are left out: no name a kernel's parameters could choose
 * becomes code. */
static int params_sh(json_object *params, char **ret) {
        char *buf = NULL;
        size_t len = 0;
        int r = sh_append(&buf, &len, "");
        json_object_object_foreach(params, key, v) {
                if (r < 0)
                        break;
                if (!*key || strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != strlen(key))
                        continue;
                r = sh_append(&buf, &len, "KB_");
                if (r >= 0)
                        r = sh_append(&buf, &len, key);
                if (r >= 0 && json_object_is_type(v, json_type_array)) {
                        r = sh_append(&buf, &len, "=(");
                        for (size_t i = 0; r >= 0 && i < json_object_array_length(v); i++) {
                                if (i)
                                        r = sh_append(&buf, &len, " ");
                                if (r >= 0)
                                        r = sh_value(&buf, &len, json_object_array_get_idx(v, i));
                        }
                        if (r >= 0)
                                r = sh_append(&buf, &len, ")");
                } else if (r >= 0) {
                        r = sh_append(&buf, &len, "=");
                        if (r >= 0)
                                r = sh_value(&buf, &len, v);
                }
                if (r >= 0)
                        r = sh_append(&buf, &len, "\n");
        }
        if (r < 0) {
                free(buf);
                return r;
        }
        *ret = buf;
        return 0;
}

/* Replaces every token in *text by value (a new string in *text). */
static int replace_all(char **text, const char *token, const char *value) {
        size_t tok_len = strlen(token), val_len = strlen(value), n = 0;
        for (const char *p = *text; (p = strstr(p, token)); p += tok_len)
                n++;
        if (n == 0)
                return 0;
        char *out = malloc(strlen(*text) - n * tok_len + n * val_len + 1);
        if (!out)
                return -ENOMEM;
        char *w = out;
        const char *p = *text, *hit;
        while ((hit = strstr(p, token))) {
                memcpy(w, p, (size_t) (hit - p));
                w += hit - p;
                memcpy(w, value, val_len);
                w += val_len;
                p = hit + tok_len;
        }
        strcpy(w, p);
        free(*text);
        *text = out;
        return 0;
}

/* Standard base64 of text, malloc'd. */
static int base64_of(const char *text, char **ret) {
        size_t len = strlen(text);
        char *b64 = malloc(4 * ((len + 2) / 3) + 1);
        if (!b64)
                return -ENOMEM;
        EVP_EncodeBlock((unsigned char *) b64, (const unsigned char *) text, (int) len);
        *ret = b64;
        return 0;
}

/* Standard base64 of the gzip of text (gzip -dc undoes it), malloc'd. */
static int gzip_base64_of(const char *text, char **ret) {
        z_stream z = {0};
        /* windowBits 15 + 16: a gzip header and trailer, as gzip(1) reads */
        if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
                return -ENOMEM;
        size_t len = strlen(text);
        uLong bound = deflateBound(&z, (uLong) len) + 32;
        _cleanup_free_ unsigned char *gz = malloc(bound);
        if (!gz) {
                deflateEnd(&z);
                return -ENOMEM;
        }
        z.next_in = (Bytef *) text;
        z.avail_in = (uInt) len;
        z.next_out = gz;
        z.avail_out = (uInt) bound;
        int zr = deflate(&z, Z_FINISH);
        size_t n = z.total_out;
        deflateEnd(&z);
        if (zr != Z_STREAM_END)
                return -EIO;
        char *b64 = malloc(4 * ((n + 2) / 3) + 1);
        if (!b64)
                return -ENOMEM;
        EVP_EncodeBlock((unsigned char *) b64, gz, (int) n);
        *ret = b64;
        return 0;
}

/* Every parameters token in *text rendered (a new string in *text). */
static int substitute_params(char **text, json_object *params) {
        _cleanup_free_ char *b64 = NULL;
        int r = base64_of(json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN), &b64);
        if (r >= 0)
                r = replace_all(text, KB_PROBE_PARAMS_TOKEN, b64);
        if (r >= 0 && strstr(*text, KB_PROBE_PARAMS_SH_TOKEN)) {
                _cleanup_free_ char *sh = NULL;
                r = params_sh(params, &sh);
                if (r >= 0)
                        r = replace_all(text, KB_PROBE_PARAMS_SH_TOKEN, sh);
        }
        return r;
}

int kb_langpack_render(const kb_langpack *lp, const char *cell, json_object *params, char **ret_code) {
        json_object *cells = NULL, *file = NULL;
        json_object_object_get_ex(lp->manifest, "cells", &cells);
        if (!json_object_object_get_ex(cells, cell, &file) || !json_object_is_type(file, json_type_string))
                return -ENOENT;
        const char *name = json_object_get_string(file);
        if (strchr(name, '/') || name[0] == '.')
                return -EPROTO;
        _cleanup_close_ int dfd = open(lp->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        _cleanup_free_ char *tmpl = NULL;
        int r = kb_read_file(dfd, name, O_NOFOLLOW, KB_LANGPACK_CELL_MAX, &tmpl, NULL);
        if (r < 0)
                return r;

        /* The pack's shared helpers, where a cell asks for them: as they are, or as base64 (for
         * kernels fed line by line, such as a shell behind a pty, one line is much faster). */
        bool raw = strstr(tmpl, KB_PROBE_PRELUDE_TOKEN), encoded = strstr(tmpl, KB_PROBE_PRELUDE_B64_TOKEN),
             packed = strstr(tmpl, KB_PROBE_PRELUDE_GZ_B64_TOKEN);
        if (raw || encoded || packed) {
                json_object *prelude = NULL;
                if (!json_object_object_get_ex(lp->manifest, "prelude", &prelude) ||
                    !json_object_is_type(prelude, json_type_string))
                        return -ENOENT;
                const char *pname = json_object_get_string(prelude);
                if (strchr(pname, '/') || pname[0] == '.')
                        return -EPROTO;
                _cleanup_free_ char *ptext = NULL, *pb64 = NULL;
                r = kb_read_file(dfd, pname, O_NOFOLLOW, KB_LANGPACK_CELL_MAX, &ptext, NULL);
                if (r >= 0)
                        r = substitute_params(&ptext, params);
                if (r >= 0 && encoded)
                        r = base64_of(ptext, &pb64);
                if (r >= 0 && encoded)
                        r = replace_all(&tmpl, KB_PROBE_PRELUDE_B64_TOKEN, pb64);
                if (r >= 0 && packed) {
                        _cleanup_free_ char *pgz = NULL;
                        r = gzip_base64_of(ptext, &pgz);
                        if (r >= 0)
                                r = replace_all(&tmpl, KB_PROBE_PRELUDE_GZ_B64_TOKEN, pgz);
                }
                if (r >= 0 && raw)
                        r = replace_all(&tmpl, KB_PROBE_PRELUDE_TOKEN, ptext);
                if (r < 0)
                        return r;
        }
        r = substitute_params(&tmpl, params);
        if (r < 0)
                return r;
        *ret_code = TAKE_PTR(tmpl);
        return 0;
}

int kb_langpack_transport(const kb_langpack *lp, kb_result_transport *ret) {
        json_object *t = kb_langpack_get(lp, "transport");
        if (!t) {
                *ret = KB_RESULT_MIME;
                return 0;
        }
        const char *name = json_object_is_type(t, json_type_string) ? json_object_get_string(t) : "";
        if (strcmp(name, "mime") == 0)
                *ret = KB_RESULT_MIME;
        else if (strcmp(name, "stdout") == 0)
                *ret = KB_RESULT_STDOUT;
        else
                return -EPROTO;
        return 0;
}

void kb_langpack_destroy(kb_langpack **lpp) {
        if (!lpp || !*lpp)
                return;
        free((*lpp)->dir);
        free((*lpp)->language);
        json_object_put((*lpp)->manifest);
        free(*lpp);
        *lpp = NULL;
}

int kb_probe_result(const kb_execution *ex, json_object **ret) {
        json_object *found = NULL;
        size_t n = ex->outputs ? json_object_array_length(ex->outputs) : 0;
        for (size_t i = 0; i < n; i++) {
                json_object *out = json_object_array_get_idx(ex->outputs, i), *data = NULL, *v = NULL;
                if (!json_object_object_get_ex(out, "data", &data) || !json_object_object_get_ex(data, KB_PROBE_MIME, &v))
                        continue;
                if (found)
                        return -EPROTO;
                found = v;
        }
        if (!found)
                return -ENOMSG;
        /* Some kernels send a JSON MIME value as a string holding JSON; accept both forms. */
        if (json_object_is_type(found, json_type_string)) {
                json_object *parsed = NULL;
                const char *text = json_object_get_string(found);
                if (kb_json_parse_strict(text, strlen(text), SCAN_DEPTH_MAX, &parsed) < 0 ||
                    !json_object_is_type(parsed, json_type_object)) {
                        json_object_put(parsed);
                        return -EPROTO;
                }
                *ret = parsed;
                return 0;
        }
        if (!json_object_is_type(found, json_type_object))
                return -EPROTO;
        *ret = json_object_get(found);
        return 0;
}

/* ---- canary listeners ---- */

struct kb_canary_net {
        int tcp_fd, unix_fd;
        int tcp_port;
        char unix_name[64];
        unsigned tcp_hits, unix_hits;
};

int kb_canary_net_open(kb_canary_net **ret) {
        kb_canary_net *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->tcp_fd = c->unix_fd = -1;
        int r;
        struct sockaddr_in in = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(in);
        c->tcp_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (c->tcp_fd < 0 || bind(c->tcp_fd, (struct sockaddr *) &in, sizeof(in)) < 0 || listen(c->tcp_fd, 16) < 0 ||
            getsockname(c->tcp_fd, (struct sockaddr *) &in, &len) < 0)
                goto fail;
        c->tcp_port = ntohs(in.sin_port);

        char nonce[17];
        if ((r = kb_random_hex(nonce, 8)) < 0) {
                errno = -r;
                goto fail;
        }
        snprintf(c->unix_name, sizeof(c->unix_name), "kbound-canary-%s", nonce);
        struct sockaddr_un un = { .sun_family = AF_UNIX };
        /* Abstract namespace: sun_path[0] is NUL; abstract sockets belong to the network namespace,
         * so only a sandbox sharing the host's can reach this one. */
        size_t name_len = strlen(c->unix_name);
        memcpy(un.sun_path + 1, c->unix_name, name_len);
        socklen_t un_len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + name_len);
        c->unix_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (c->unix_fd < 0 || bind(c->unix_fd, (struct sockaddr *) &un, un_len) < 0 || listen(c->unix_fd, 16) < 0)
                goto fail;
        *ret = c;
        return 0;
fail:
        r = -errno;
        kb_canary_net_destroy(&c);
        return r;
}

int kb_canary_net_params(const kb_canary_net *c, json_object *params) {
        json_object *ports = json_object_new_array(), *names = json_object_new_array();
        if (!ports || !names) {
                json_object_put(ports);
                json_object_put(names);
                return -ENOMEM;
        }
        json_object_array_add(ports, json_object_new_int(c->tcp_port));
        json_object_array_add(names, json_object_new_string(c->unix_name));
        json_object_object_add(params, "tcp_ports", ports);
        json_object_object_add(params, "abstract_sockets", names);
        return 0;
}

static unsigned drain_accept(int fd) {
        unsigned n = 0;
        for (;;) {
                int a = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
                if (a < 0)
                        break;
                close(a);
                n++;
        }
        return n;
}

void kb_canary_net_count(kb_canary_net *c, unsigned *ret_tcp, unsigned *ret_unix) {
        c->tcp_hits += drain_accept(c->tcp_fd);
        c->unix_hits += drain_accept(c->unix_fd);
        if (ret_tcp)
                *ret_tcp = c->tcp_hits;
        if (ret_unix)
                *ret_unix = c->unix_hits;
}

void kb_canary_net_destroy(kb_canary_net **cp) {
        if (!cp || !*cp)
                return;
        kb_closep(&(*cp)->tcp_fd);
        kb_closep(&(*cp)->unix_fd);
        free(*cp);
        *cp = NULL;
}

/* ---- secrets ---- */

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
        uint32_t *table;      /* open addressing over grams: index + 1, 0 = empty */
        size_t table_mask;
        bool alphabet[256];   /* bytes that occur in some token, both cases */
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
        uint64_t ge_a = low7 + (0x80 - 'A') * ones;      /* high bit set when byte >= 'A' */
        uint64_t gt_z = low7 + (0x80 - 'Z' - 1) * ones;  /* high bit set when byte > 'Z' */
        uint64_t upper = (ge_a & ~gt_z) & ~w & high;     /* and the byte itself is ASCII */
        return w | (upper >> 2);
}

/* The lowercase 12-byte gram at p. */
static gram gram_at(const unsigned char *p) {
        gram g = { 0 };
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
        struct stat st;
        if (value[0] == '/' && stat(value, &st) == 0)
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

int kb_secrets_add_env(kb_secrets *s, char *const *host_env, char *const *legit, size_t *ret_skipped) {
        size_t skipped = 0;
        for (char *const *e = host_env; e && *e; e++) {
                const char *eq = strchr(*e, '=');
                if (!eq || eq == *e)
                        continue;
                _cleanup_free_ char *name = strndup(*e, (size_t) (eq - *e));
                if (!name)
                        return -ENOMEM;
                if (kb_sandbox_env_allowed(name))
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
        bool any_only;    /* stop at the first span: the caller only asks whether there is one */
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
        sp->v[sp->n++] = (span) { start, end, secret };
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
        spans sp = { .any_only = true };
        int r = find_spans(s, str, len, &sp);
        free(sp.v);
        return r < 0 || sp.n > 0;
}

char *kb_secrets_redact_text(const kb_secrets *s, const char *str, size_t len, size_t *ret_len) {
        spans sp = { 0 };
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

int kb_probe_result_text(const kb_execution *ex, const char *marker, json_object **ret) {
        if (!ex || !marker || !*marker || !ret)
                return -EINVAL;
        const char *text = ex->stdout_text, *end = text ? text + ex->stdout_len : NULL;
        size_t mlen = strlen(marker);
        const char *found = NULL, *found_end = NULL;
        for (const char *line = text; line && line < end;) {
                const char *nl = memchr(line, '\n', (size_t) (end - line));
                const char *stop = nl ? nl : end;
                if ((size_t) (stop - line) > mlen && memcmp(line, marker, mlen) == 0 && line[mlen] == ' ') {
                        if (found)
                                return -EPROTO;
                        found = line + mlen + 1;
                        found_end = stop;
                }
                line = nl ? nl + 1 : end;
        }
        if (!found)
                return -ENOMSG;
        while (found_end > found && (found_end[-1] == '\r' || found_end[-1] == ' '))
                found_end--;
        size_t b64_len = (size_t) (found_end - found);
        if (b64_len == 0 || b64_len % 4 != 0 || b64_len > KB_LANGPACK_CELL_MAX * 8 ||
            strspn(found, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") < b64_len)
                return -EPROTO;
        const char *pad = memchr(found, '=', b64_len);
        if (pad && (found_end - pad > 2 || strspn(pad, "=") < (size_t) (found_end - pad)))
                return -EPROTO; /* padding only at the end, at most two */
        _cleanup_free_ unsigned char *raw = malloc(b64_len / 4 * 3 + 1);
        if (!raw)
                return -ENOMEM;
        int n = EVP_DecodeBlock(raw, (const unsigned char *) found, (int) b64_len);
        if (n < 0)
                return -EPROTO;
        /* EVP_DecodeBlock counts the padding's bytes too. */
        for (const char *p = found_end; p > found && p[-1] == '='; p--)
                n--;
        json_object *parsed = NULL;
        if (kb_json_parse_strict((const char *) raw, (size_t) n, SCAN_DEPTH_MAX, &parsed) < 0 ||
            !json_object_is_type(parsed, json_type_object)) {
                json_object_put(parsed);
                return -EPROTO;
        }
        *ret = parsed;
        return 0;
}
