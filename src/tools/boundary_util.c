/* boundary_util.c: the helpers every part of kbound-probe uses (boundary_probe.h): text as JSON
 * and as the result's facts (through facts.def's names), files and /proc tables read within caps,
 * paths as Python's posixpath has them, the run's parameters. They call nothing of the sub-probes
 * or of main, which all call them. */
#include "boundary_probe.h"
#include "tool_io.h"
#include "base/utf8.h"
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- text ---- */

/* The length of the valid UTF-8 sequence at s (n > 0 bytes left), or 0 when it is not one. */
static size_t utf8_length(const unsigned char *s, size_t n) {
        uint32_t cp;
        return kb_utf8_decode(s, n, &cp);
}

/* s (n bytes) as valid UTF-8, its length in *ret_len: s itself when it is, else a copy in *ret_copy
 * (malloc'd) with each invalid byte replaced with U+FFFD. NULL when memory runs out. */
static const char *valid_text(const char *s, size_t n, char **ret_copy, size_t *ret_len) {
        const unsigned char *u = (const unsigned char *) s;
        size_t i = 0;
        *ret_copy = NULL;
        *ret_len = n;
        while (i < n && utf8_length(u + i, n - i))
                i += utf8_length(u + i, n - i);
        if (i == n)
                return s;
        char *out = malloc(3 * n); /* every byte a U+FFFD at worst */
        if (!out)
                return NULL;
        size_t len = 0;
        for (i = 0; i < n;) {
                size_t k = utf8_length(u + i, n - i);
                if (k) {
                        memcpy(out + len, s + i, k);
                        len += k;
                        i += k;
                } else {
                        memcpy(out + len, "\xef\xbf\xbd", 3);
                        len += 3;
                        i++;
                }
        }
        *ret_copy = out;
        *ret_len = len;
        return out;
}

json_object *probe_text(const char *s, size_t n) {
        char *copy;
        size_t len;
        const char *text = valid_text(s, n, &copy, &len);
        json_object *j = text ? json_object_new_string_len(text, (int) len) : NULL;
        free(copy);
        return j;
}

json_object *probe_str(const char *s) {
        return s ? probe_text(s, strlen(s)) : NULL;
}

int probe_set_text(json_object *o, kb_fact_str f, const char *s, size_t n) {
        if (!s)
                return kb_fact_set_null(o, f);
        char *copy;
        size_t len;
        const char *text = valid_text(s, n, &copy, &len);
        int r = text ? kb_fact_set_strn(o, f, text, len) : -ENOMEM;
        free(copy);
        return r;
}

int probe_set_str(json_object *o, kb_fact_str f, const char *s) {
        return probe_set_text(o, f, s, s ? strlen(s) : 0);
}

int probe_set_errno(json_object *o, kb_fact_str f, int e) {
        char buf[KB_TOOL_ERRNO_NAME_MAX];
        return e ? kb_fact_set_str(o, f, kb_tool_errno_name(e, buf, sizeof buf)) : kb_fact_set_null(o, f);
}

/* kb_tool_read_file, with errno set when it fails. */
static char *read_capped(const char *path, size_t cap, size_t *ret_len) {
        char *buf = NULL;
        int r = kb_tool_read_file(path, cap, &buf, ret_len);
        errno = r < 0 ? -r : 0;
        return r < 0 ? NULL : buf;
}

char *probe_read_file(const char *path, size_t *ret_len) {
        *ret_len = 0;
        return read_capped(path, PROBE_FILE_CAP, ret_len);
}

json_object *probe_read_lines(const char *path, size_t skip) {
        size_t len = 0;
        char *buf = read_capped(path, PROBE_TABLE_CAP, &len);
        if (!buf)
                return NULL;
        json_object *lines = json_object_new_array();
        size_t index = 0;
        for (size_t start = 0; lines && start < len;) {
                const char *nl = memchr(buf + start, '\n', len - start);
                size_t end = nl ? (size_t) (nl - buf) : len, stop = end;
                while (stop > start && strchr(" \t\r\v\f", buf[stop - 1]) && buf[stop - 1])
                        stop--;
                if (stop > start && index++ >= skip)
                        json_object_array_add(lines, probe_text(buf + start, stop - start));
                start = end + 1;
        }
        free(buf);
        if (!lines)
                errno = ENOMEM;
        return lines;
}

/* ---- paths, as Python's posixpath has them ---- */

bool probe_under(const char *path, const char *root) {
        size_t n = strlen(root);
        while (n > 1 && root[n - 1] == '/')
                n--;
        if (n == 1 && root[0] == '/')
                return true;
        return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

char *probe_normpath(const char *path) {
        if (!*path)
                return strdup(".");
        /* POSIX lets exactly two leading slashes mean something else: Python keeps them. */
        size_t lead = path[0] != '/' ? 0 : path[1] == '/' && path[2] != '/' ? 2 : 1;
        size_t cap = strlen(path) + 2, len = lead, depth = 0;
        char *out = malloc(cap);
        if (!out)
                return NULL;
        memset(out, '/', lead);
        for (const char *p = path; *p;) {
                while (*p == '/')
                        p++;
                size_t k = strcspn(p, "/");
                if (k == 0 || (k == 1 && p[0] == '.')) {
                        p += k;
                        continue;
                }
                if (k == 2 && p[0] == '.' && p[1] == '.' && (depth > 0 || lead)) {
                        if (depth > 0) {
                                while (len > lead && out[len - 1] != '/')
                                        len--;
                                if (len > lead)
                                        len--;
                                depth--;
                        }
                        p += k;
                        continue;
                }
                if (len > lead)
                        out[len++] = '/';
                memcpy(out + len, p, k);
                len += k;
                /* a leading ".." of a relative path stays, and is never taken back */
                if (!(k == 2 && p[0] == '.' && p[1] == '.'))
                        depth++;
                p += k;
        }
        if (len == 0)
                out[len++] = '.';
        out[len] = '\0';
        return out;
}

char *probe_join(const char *a, const char *b) {
        char *out = NULL;
        if (b[0] == '/')
                return strdup(b);
        size_t n = strlen(a);
        if (asprintf(&out, "%s%s%s", a, n == 0 || a[n - 1] == '/' ? "" : "/", b) < 0)
                return NULL;
        return out;
}

/* ---- /proc ---- */

static int pid_order(const void *a, const void *b) {
        pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;
        return (x > y) - (x < y);
}

int probe_proc_pids(pid_t **ret, size_t *ret_n) {
        DIR *d = opendir("/proc");
        if (!d)
                return -errno;
        pid_t *pids = NULL;
        size_t n = 0, cap = 0;
        int r = 0;
        for (struct dirent *e; r == 0 && (e = readdir(d));) {
                char *end = NULL;
                long pid = strtol(e->d_name, &end, 10);
                if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end || pid <= 0 || pid > INT32_MAX)
                        continue;
                if (n == cap) {
                        pid_t *grown = realloc(pids, (cap = cap ? cap * 2 : 256) * sizeof *pids);
                        if (!grown) {
                                r = -ENOMEM;
                                break;
                        }
                        pids = grown;
                }
                pids[n++] = (pid_t) pid;
        }
        closedir(d);
        if (r < 0) {
                free(pids);
                return r;
        }
        if (n)
                qsort(pids, n, sizeof *pids, pid_order);
        *ret = pids;
        *ret_n = n;
        return 0;
}

/* ---- parameters ---- */

const char *probe_param_str(const probe_ctx *c, const char *key) {
        json_object *v = NULL;
        if (!json_object_object_get_ex(c->params, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

int probe_param_list(const probe_ctx *c, const char *key, bool strings, json_object **ret, char *why, size_t n) {
        json_object *v = NULL;
        *ret = NULL;
        if (!json_object_object_get_ex(c->params, key, &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_array)) {
                snprintf(why, n, "parameter %s is not a list", key);
                return -EINVAL;
        }
        for (size_t i = 0; strings && i < json_object_array_length(v); i++)
                if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string)) {
                        snprintf(why, n, "parameter %s: item %zu is not a string", key, i);
                        return -EINVAL;
                }
        *ret = v;
        return 0;
}

int probe_each(probe_ctx *c, const char *key, bool strings, probe_item_fn item, json_object **ret, char *why,
               size_t n) {
        json_object *list = NULL, *out = json_object_new_array();
        int r = out ? probe_param_list(c, key, strings, &list, why, n) : -ENOMEM;
        for (size_t i = 0; r >= 0 && list && i < json_object_array_length(list); i++)
                r = item(c, json_object_array_get_idx(list, i), out, why, n);
        if (r < 0) {
                json_object_put(out);
                return r;
        }
        *ret = out;
        return 0;
}

double probe_param_number(const probe_ctx *c, const char *key, double dflt) {
        json_object *v = NULL;
        if (!json_object_object_get_ex(c->params, key, &v) || !v)
                return dflt;
        double d = dflt;
        if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
                d = json_object_get_double(v);
        else if (json_object_is_type(v, json_type_string)) {
                char *end = NULL;
                d = strtod(json_object_get_string(v), &end);
                if (end == json_object_get_string(v))
                        d = dflt;
        }
        return d == 0 || !isfinite(d) ? dflt : d;
}
