/* langpack.c: language packs (probe cells as data), rendering, and probe results (langpack.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <openssl/evp.h>
#include <zlib.h>
#include "kbound/langpack.h"
#include "base/cleanup.h"

#define MANIFEST_MAX (64 * 1024)
#define MANIFEST_DEPTH_MAX 8
/* How deep a cell's result may nest. */
#define RESULT_DEPTH_MAX 64

struct kb_langpack {
        char *dir;
        char *language;
        json_object *manifest;
};

void kb_langpack_folder_name(const char *language, char buf[static KB_LANGPACK_FOLDER_MAX]) {
        const char *name = language ? language : "";
        const char *slash = strrchr(name, '/');
        if (slash)
                name = slash + 1;
        if (strncasecmp(name, "x-", 2) == 0)
                name += 2;
        size_t n = 0;
        bool only_dots = true;
        for (; *name && n < KB_LANGPACK_FOLDER_MAX - 1; name++) {
                char c = *name >= 'A' && *name <= 'Z' ? (char) (*name - 'A' + 'a') : *name;
                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '_' || c == '.' || c == '-'))
                        c = '-';
                only_dots = only_dots && c == '.';
                buf[n++] = c;
        }
        buf[only_dots ? 0 : n] = '\0';
}

/* 1 if manifest names language (or an alias of it), or its language has language's folder name;
 * 0 if not, -EPROTO if malformed. */
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
        char want[KB_LANGPACK_FOLDER_MAX], have[KB_LANGPACK_FOLDER_MAX];
        kb_langpack_folder_name(language, want);
        kb_langpack_folder_name(json_object_get_string(lang), have);
        return want[0] && strcmp(want, have) == 0;
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
                if (!*key ||
                    strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != strlen(key))
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
        memcpy(w, p, strlen(p) + 1); /* the rest and its NUL: sized above */
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

/* The pack file that the manifest's value v names (a plain name in the pack's folder; no link
 * followed), read whole into *ret; *dfd is the pack's folder, opened on first use (-1 before).
 * Returns 0, -ENOENT (v is no string), -EPROTO (a name that would leave the folder or hide in it),
 * or as kb_read_file. */
static int pack_file_read(const kb_langpack *lp, int *dfd, json_object *v, char **ret) {
        if (!json_object_is_type(v, json_type_string))
                return -ENOENT;
        const char *name = json_object_get_string(v);
        if (strchr(name, '/') || name[0] == '.')
                return -EPROTO;
        if (*dfd < 0) {
                *dfd = open(lp->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (*dfd < 0)
                        return -errno;
        }
        return kb_read_file(*dfd, name, O_NOFOLLOW, KB_LANGPACK_CELL_MAX, ret, NULL);
}

int kb_langpack_render(const kb_langpack *lp, const char *cell, json_object *params, char **ret_code) {
        json_object *cells = NULL, *file = NULL;
        json_object_object_get_ex(lp->manifest, "cells", &cells);
        json_object_object_get_ex(cells, cell, &file);
        _cleanup_close_ int dfd = -1;
        _cleanup_free_ char *tmpl = NULL;
        int r = pack_file_read(lp, &dfd, file, &tmpl);
        if (r < 0)
                return r;

        /* The pack's shared helpers, where a cell asks for them: as they are, or as base64 (for
         * kernels fed line by line, such as a shell behind a pty, one line is much faster). */
        bool raw = strstr(tmpl, KB_PROBE_PRELUDE_TOKEN), encoded = strstr(tmpl, KB_PROBE_PRELUDE_B64_TOKEN),
             packed = strstr(tmpl, KB_PROBE_PRELUDE_GZ_B64_TOKEN);
        if (raw || encoded || packed) {
                json_object *prelude = NULL;
                json_object_object_get_ex(lp->manifest, "prelude", &prelude);
                _cleanup_free_ char *ptext = NULL, *pb64 = NULL;
                r = pack_file_read(lp, &dfd, prelude, &ptext);
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
                if (!json_object_object_get_ex(out, "data", &data) ||
                    !json_object_object_get_ex(data, KB_PROBE_MIME, &v))
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
                if (kb_json_parse_strict(text, strlen(text), RESULT_DEPTH_MAX, &parsed) < 0 ||
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
        if (kb_json_parse_strict((const char *) raw, (size_t) n, RESULT_DEPTH_MAX, &parsed) < 0 ||
            !json_object_is_type(parsed, json_type_object)) {
                json_object_put(parsed);
                return -EPROTO;
        }
        *ret = parsed;
        return 0;
}
