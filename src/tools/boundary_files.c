/* boundary_files.c: kbound-probe's file attempts: the mount table, the workspace write, writes
 * outside it, host settings opened for writing, the host's credential files, another team's files,
 * and the kernel's privileges as /proc shows them (docs/probes-cells.md). */
#include "boundary_probe.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes all of text to fd; 0 or -errno. */
static int write_all(int fd, const char *text) {
        for (size_t len = strlen(text), done = 0; done < len;) {
                ssize_t n = write(fd, text + done, len - done);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                done += (size_t) n;
        }
        return 0;
}

/* Creates path with flags, writes text and closes it. Returns 0, or -errno; *ret_created says
 * whether the file was made (a write can still fail after). */
static int create_with(const char *path, int flags, mode_t mode, const char *text, bool *ret_created) {
        *ret_created = false;
        int fd = open(path, flags | O_CLOEXEC, mode);
        if (fd < 0)
                return -errno;
        *ret_created = true;
        int r = write_all(fd, text);
        close(fd);
        return r;
}

/* ---- mounts ---- */

/* The kernel's escapes in a mountinfo field (\040 for a space and the like) decoded in place. */
static void unescape(char *s) {
        char *out = s;
        for (const char *p = s; *p;) {
                if (p[0] == '\\' && p[1] >= '0' && p[1] <= '7' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' &&
                    p[3] <= '7') {
                        *out++ = (char) ((p[1] - '0') << 6 | (p[2] - '0') << 3 | (p[3] - '0'));
                        p += 4;
                } else
                        *out++ = *p++;
        }
        *out = '\0';
}

/* One mountinfo line into m: the mount point, the filesystem type (after the "-" that ends the
 * optional fields) and whether its per-mount options say ro. Returns 0, -EINVAL for a line of
 * another shape (left out, as probe.py leaves it), -ENOMEM. */
static int parse_mount(const char *line, probe_mount *m) {
        char *copy = strdup(line), *fields[64];
        size_t n = 0;
        if (!copy)
                return -ENOMEM;
        for (char *save = NULL, *f = strtok_r(copy, " ", &save); f && n < 64; f = strtok_r(NULL, " ", &save))
                fields[n++] = f;
        size_t sep = 6;
        while (sep + 1 < n && strcmp(fields[sep], "-") != 0)
                sep++;
        if (n < 8 || sep + 1 >= n) {
                free(copy);
                return -EINVAL;
        }
        m->ro = false;
        for (char *save = NULL, *o = strtok_r(fields[5], ",", &save); o; o = strtok_r(NULL, ",", &save))
                m->ro |= strcmp(o, "ro") == 0;
        unescape(fields[4]);
        m->point = strdup(fields[4]);
        m->fstype = strdup(fields[sep + 1]);
        free(copy);
        if (!m->point || !m->fstype) {
                free(m->point);
                free(m->fstype);
                return -ENOMEM;
        }
        return 0;
}

int probe_mounts(probe_ctx *c, json_object **ret, char *why, size_t n) {
        json_object *lines = probe_read_lines("/proc/self/mountinfo", 0);
        if (!lines)
                return -errno;
        size_t count = json_object_array_length(lines);
        c->mounts = calloc(count ? count : 1, sizeof *c->mounts);
        if (!c->mounts) {
                json_object_put(lines);
                return -ENOMEM;
        }
        for (size_t i = 0; i < count; i++) {
                int r = parse_mount(json_object_get_string(json_object_array_get_idx(lines, i)),
                                    &c->mounts[c->n_mounts]);
                if (r == -ENOMEM) {
                        json_object_put(lines);
                        return r;
                }
                if (r == 0)
                        c->n_mounts++;
        }
        *ret = lines;
        return 0;
}

/* The mount with the longest mount point holding path (the later line wins a tie: it is mounted on
 * top), or NULL. */
static const probe_mount *containing_mount(const probe_ctx *c, const char *path) {
        const probe_mount *best = NULL;
        for (size_t i = 0; i < c->n_mounts; i++)
                if (probe_under(path, c->mounts[i].point) &&
                    (!best || strlen(c->mounts[i].point) >= strlen(best->point)))
                        best = &c->mounts[i];
        return best;
}

/* ---- the workspace: the one place the kernel must be able to write ---- */

/* The string parameters keys (NULL-terminated) into values; -EINVAL naming the first missing. */
static int need_params(const probe_ctx *c, const char *const *keys, const char **values, char *why, size_t n) {
        for (size_t i = 0; keys[i]; i++)
                if (!(values[i] = probe_param_str(c, keys[i]))) {
                        snprintf(why, n, "parameter %s is missing or not a string", keys[i]);
                        return -EINVAL;
                }
        return 0;
}

int probe_workspace(probe_ctx *c, json_object **ret, char *why, size_t n) {
        static const char *const keys[] = {"workspace", "workspace_file", "nonce", NULL};
        const char *v[3];
        int r = need_params(c, keys, v, why, n);
        if (r < 0)
                return r;
        char *path = probe_join(v[0], v[1]);
        if (!path)
                return -ENOMEM;
        bool created;
        r = create_with(path, O_WRONLY | O_CREAT | O_TRUNC, 0666, v[2], &created);
        json_object *o = json_object_new_object();
        bool written = probe_set_str(o, FACT_PROBE_WORKSPACE_PATH, path) == 0 &&
                       kb_fact_set_bool(o, FACT_PROBE_WORKSPACE_WRITTEN, r == 0) == 0 &&
                       probe_set_errno(o, FACT_PROBE_WORKSPACE_ERROR, -r) == 0;
        free(path);
        if (!written) {
                json_object_put(o);
                return -ENOMEM;
        }
        *ret = o;
        return 0;
}

/* ---- write_outside: every writable-looking mount point and the usual scratch places ---- */

static bool in_list(json_object *list, const char *s) {
        for (size_t i = 0; i < json_object_array_length(list); i++)
                if (strcmp(json_object_get_string(json_object_array_get_idx(list, i)), s) == 0)
                        return true;
        return false;
}

/* Adds path, normalised, to dirs unless it is there already or under one of skips. */
static int add_candidate(json_object *dirs, const char *path, json_object *skips) {
        char *p = probe_normpath(path);
        if (!p)
                return -ENOMEM;
        bool skipped = in_list(dirs, p);
        for (size_t i = 0; !skipped && skips && i < json_object_array_length(skips); i++)
                skipped = probe_under(p, json_object_get_string(json_object_array_get_idx(skips, i)));
        if (!skipped)
                json_object_array_add(dirs, json_object_new_string(p));
        free(p);
        return 0;
}

/* The folders to try, in probe.py's order. */
static int write_candidates(const probe_ctx *c, const char *workspace, json_object *dirs, char *why, size_t n) {
        json_object *skip_list = NULL, *escape_dirs = NULL, *skips = json_object_new_array();
        int r = probe_param_list(c, "skip_mounts", true, &skip_list, why, n);
        if (r >= 0)
                r = probe_param_list(c, "escape_dirs", true, &escape_dirs, why, n);
        for (size_t i = 0; r >= 0 && skip_list && i < json_object_array_length(skip_list); i++) {
                char *s = probe_normpath(json_object_get_string(json_object_array_get_idx(skip_list, i)));
                if (!s)
                        r = -ENOMEM;
                else
                        json_object_array_add(skips, json_object_new_string(s));
                free(s);
        }
        for (size_t i = 0; r >= 0 && i < c->n_mounts; i++)
                if (!c->mounts[i].ro)
                        r = add_candidate(dirs, c->mounts[i].point, skips);
        static const char *const usual[] = {"/", "/tmp", "/var/tmp", "/dev/shm"};
        for (size_t i = 0; r >= 0 && i < sizeof usual / sizeof usual[0]; i++)
                r = add_candidate(dirs, usual[i], skips);
        const char *home = getenv("HOME");
        char *home_n = home && home[0] == '/' ? probe_normpath(home) : NULL, *ws_n = probe_normpath(workspace);
        if (r >= 0 && home_n && ws_n && !probe_under(home_n, ws_n))
                r = add_candidate(dirs, home, skips);
        free(home_n);
        free(ws_n);
        /* Asked for explicitly: never skipped. */
        for (size_t i = 0; r >= 0 && escape_dirs && i < json_object_array_length(escape_dirs); i++)
                r = add_candidate(dirs, json_object_get_string(json_object_array_get_idx(escape_dirs, i)), NULL);
        json_object_put(skips);
        return r;
}

int probe_write_outside(probe_ctx *c, json_object **ret, char *why, size_t n) {
        static const char *const keys[] = {"workspace", "escape_name", "nonce", NULL};
        const char *v[3];
        json_object *dirs = json_object_new_array(), *out = json_object_new_array();
        int r = need_params(c, keys, v, why, n);
        if (r >= 0)
                r = dirs && out ? write_candidates(c, v[0], dirs, why, n) : -ENOMEM;
        for (size_t i = 0; r >= 0 && i < json_object_array_length(dirs); i++) {
                const char *d = json_object_get_string(json_object_array_get_idx(dirs, i));
                char real[PATH_MAX];
                const probe_mount *m = containing_mount(c, realpath(d, real) ? real : d);
                char *target = probe_join(d, v[1]);
                if (!target) {
                        r = -ENOMEM;
                        break;
                }
                bool created;
                /* O_EXCL|O_NOFOLLOW: never clobber, never through a planted link. The file is left
                 * in place on purpose: the host looks for it, and removes what it finds. */
                int w = create_with(target, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600, v[2], &created);
                free(target);
                json_object *o = json_object_new_object();
                if (probe_set_str(o, FACT_PROBE_WRITE_PATH, d) < 0 ||
                    probe_set_str(o, FACT_PROBE_WRITE_FSTYPE, m ? m->fstype : NULL) < 0 ||
                    probe_set_str(o, FACT_PROBE_WRITE_MOUNT_POINT, m ? m->point : NULL) < 0 ||
                    kb_fact_set_bool(o, FACT_PROBE_WRITE_CREATED, created) < 0 ||
                    probe_set_errno(o, FACT_PROBE_WRITE_ERROR, -w) < 0 || json_object_array_add(out, o) < 0) {
                        json_object_put(o);
                        r = -ENOMEM;
                }
        }
        json_object_put(dirs);
        if (r < 0) {
                json_object_put(out);
                return r;
        }
        *ret = out;
        return 0;
}

/* ---- host-global kernel settings: opened for writing to see whether it is allowed, never written ---- */

static int sysctl_one(probe_ctx *c, json_object *item, json_object *out, char *why, size_t n) {
        const char *p = json_object_get_string(item);
        /* O_NONBLOCK: a FIFO named there refuses (ENXIO) instead of holding the probe */
        int fd = open(p, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        int e = fd < 0 ? errno : 0;
        if (fd >= 0)
                close(fd); /* nothing written */
        json_object *o = json_object_new_object();
        if (probe_set_str(o, FACT_PROBE_SYSCTL_PATH, p) < 0 ||
            kb_fact_set_bool(o, FACT_PROBE_SYSCTL_OPENED, fd >= 0) < 0 ||
            probe_set_errno(o, FACT_PROBE_SYSCTL_ERROR, e) < 0 || json_object_array_add(out, o) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        return 0;
}

int probe_sysctl(probe_ctx *c, json_object **ret, char *why, size_t n) {
        return probe_each(c, "sysctl_paths", true, sysctl_one, ret, why, n);
}

/* ---- the host's credential files and another team's files ---- */

static int credential_files_one(probe_ctx *c, json_object *item, json_object *out, char *why, size_t n) {
        const char *p = json_object_get_string(item);
        struct stat st;
        size_t len;
        char *content = probe_read_file(p, &len);
        json_object *o = json_object_new_object();
        int r = 0;
        if (probe_set_str(o, FACT_PROBE_CRED_FILE_PATH, p) < 0 ||
            kb_fact_set_bool(o, FACT_PROBE_CRED_FILE_EXISTS, stat(p, &st) == 0) < 0 ||
            probe_set_text(o, FACT_PROBE_CRED_FILE_CONTENT, content, len) < 0 || json_object_array_add(out, o) < 0) {
                json_object_put(o);
                r = -ENOMEM;
        }
        free(content);
        return r;
}

int probe_credential_files(probe_ctx *c, json_object **ret, char *why, size_t n) {
        return probe_each(c, "credential_paths", true, credential_files_one, ret, why, n);
}

static int name_order(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* A folder's entry names, sorted in byte order and joined with "\n" (malloc'd, its length in
 * *ret_len), or NULL (errno set). */
static char *listing(const char *path, size_t *ret_len) {
        DIR *d = opendir(path);
        if (!d)
                return NULL;
        char **names = NULL;
        size_t count = 0, cap = 0, bytes = 0;
        bool oom = false;
        errno = 0;
        for (struct dirent *e; !oom && (e = readdir(d));) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                        continue;
                char **grown = count == cap ? realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names) : names;
                char *name = grown ? strdup(e->d_name) : NULL;
                if (grown)
                        names = grown;
                if (!name) {
                        oom = true;
                        break;
                }
                names[count++] = name;
                bytes += strlen(name) + 1;
        }
        int e = oom ? ENOMEM : errno;
        closedir(d);
        char *text = e ? NULL : malloc(bytes + 1);
        size_t len = 0;
        if (count)
                qsort(names, count, sizeof *names, name_order);
        for (size_t i = 0; i < count; i++) {
                if (text) {
                        if (i)
                                text[len++] = '\n';
                        memcpy(text + len, names[i], strlen(names[i]));
                        len += strlen(names[i]);
                }
                free(names[i]);
        }
        free(names);
        *ret_len = len;
        errno = text ? 0 : e ? e : ENOMEM;
        return text;
}

static int cross_team_one(probe_ctx *c, json_object *item, json_object *out, char *why, size_t n) {
        const char *p = json_object_get_string(item);
        struct stat st;
        bool exists = stat(p, &st) == 0;
        size_t len = 0;
        char *content = exists && S_ISDIR(st.st_mode) ? listing(p, &len) : probe_read_file(p, &len);
        json_object *o = json_object_new_object();
        int r = 0;
        if (probe_set_str(o, FACT_PROBE_CROSS_TEAM_PATH, p) < 0 ||
            kb_fact_set_bool(o, FACT_PROBE_CROSS_TEAM_EXISTS, exists) < 0 ||
            kb_fact_set_bool(o, FACT_PROBE_CROSS_TEAM_READABLE, content != NULL) < 0 ||
            probe_set_text(o, FACT_PROBE_CROSS_TEAM_CONTENT, content, len) < 0 || json_object_array_add(out, o) < 0) {
                json_object_put(o);
                r = -ENOMEM;
        }
        free(content);
        return r;
}

int probe_cross_team(probe_ctx *c, json_object **ret, char *why, size_t n) {
        return probe_each(c, "sibling_paths", true, cross_team_one, ret, why, n);
}

/* ---- process: the privileges the kernel runs with, from its /proc/<pid>/status ---- */

/* The value of key in status lines (white space around it removed), or NULL. */
static const char *status_value(json_object *lines, const char *key) {
        size_t k = strlen(key);
        for (size_t i = 0; i < json_object_array_length(lines); i++) {
                const char *line = json_object_get_string(json_object_array_get_idx(lines, i));
                if (strncmp(line, key, k) == 0 && line[k] == ':')
                        return line + k + 1 + strspn(line + k + 1, " \t");
        }
        return NULL;
}

/* A decimal field of the status lines (its first number for Uid and Gid: the real id) as the
 * integer fact f of o; when the field is absent, *dflt, or JSON null for dflt NULL. -EINVAL (and
 * why) when it is there but no number, -ENOMEM. */
static int set_status_number(json_object *o, kb_fact_int f, json_object *lines, const char *field, const int64_t *dflt,
                             char *why, size_t n) {
        const char *v = status_value(lines, field);
        if (!v)
                return dflt ? kb_fact_set_int(o, f, *dflt) : kb_fact_set_null(o, f);
        char *end = NULL;
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (errno || end == v || (*end && !strchr(" \t", *end))) {
                snprintf(why, n, "the kernel's %s is not a number: %.40s", field, v);
                return -EINVAL;
        }
        return kb_fact_set_int(o, f, x);
}

/* A capability field of the status lines, as it is ("" when absent), as the string fact f of o. */
static int set_status_caps(json_object *o, kb_fact_str f, json_object *lines, const char *field) {
        const char *v = status_value(lines, field);
        return probe_set_str(o, f, v ? v : "");
}

int probe_process(probe_ctx *c, json_object **ret, char *why, size_t n) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/status", (long) c->kernel_pid);
        json_object *lines = probe_read_lines(path, 0);
        if (!lines)
                return -errno;
        pid_t *pids = NULL;
        size_t n_pids = 0;
        int r = probe_proc_pids(&pids, &n_pids);
        free(pids);
        /* Absent, the ids are this program's own, as probe.py falls back to the kernel's. */
        int64_t uid = getuid(), gid = getgid();
        json_object *o = json_object_new_object();
        if (r >= 0)
                r = set_status_number(o, FACT_PROBE_PROCESS_NO_NEW_PRIVS, lines, "NoNewPrivs", NULL, why, n);
        if (r >= 0)
                r = set_status_number(o, FACT_PROBE_PROCESS_SECCOMP, lines, "Seccomp", NULL, why, n);
        if (r >= 0)
                r = set_status_caps(o, FACT_PROBE_PROCESS_CAP_EFF, lines, "CapEff");
        if (r >= 0)
                r = set_status_caps(o, FACT_PROBE_PROCESS_CAP_PRM, lines, "CapPrm");
        if (r >= 0)
                r = set_status_caps(o, FACT_PROBE_PROCESS_CAP_BND, lines, "CapBnd");
        if (r >= 0)
                r = set_status_number(o, FACT_PROBE_PROCESS_UID, lines, "Uid", &uid, why, n);
        if (r >= 0)
                r = set_status_number(o, FACT_PROBE_PROCESS_GID, lines, "Gid", &gid, why, n);
        if (r >= 0)
                r = kb_fact_set_int(o, FACT_PROBE_PROCESS_VISIBLE_PROCESSES, (int64_t) n_pids);
        json_object_put(lines);
        if (r < 0) {
                json_object_put(o);
                return r;
        }
        *ret = o;
        return 0;
}
