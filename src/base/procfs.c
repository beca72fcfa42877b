/* procfs.c: parsers for /proc/<pid>/{status,stat,mountinfo}: kernel-controlled text in, facts out. */
#include "base/procfs.h"
#include "base/cleanup.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "kbound/common.h"
#include "base/facts.h"

#define FIELD_MAX 4096 /* one mountinfo path or option list */

/* Parses a decimal integer in [min, max] at *p, moving *p past it and the blanks after it. */
static bool take_int(const char **p, long long min, long long max, long long *ret) {
        char *end;
        errno = 0;
        long long v = strtoll(*p, &end, 10);
        if (errno || end == *p || v < min || v > max)
                return false;
        *p = end;
        while (**p == ' ' || **p == '\t')
                (*p)++;
        *ret = v;
        return true;
}

/* Parses a decimal field at *p as an unsigned 64-bit value (a negative one, which no layout field
 * is, as its two's complement), moving *p past it and the blanks after it. */
static bool take_uint(const char **p, unsigned long long *ret) {
        char *end;
        errno = 0;
        unsigned long long v = **p == '-' ? (unsigned long long) strtoll(*p, &end, 10) : strtoull(*p, &end, 10);
        if (errno || end == *p)
                return false;
        *p = end;
        while (**p == ' ' || **p == '\t')
                (*p)++;
        *ret = v;
        return true;
}

/* The rest of a status line after "Key:", blanks skipped. */
static const char *status_value(const char *line, const char *key) {
        size_t len = strlen(key);
        if (strncmp(line, key, len) != 0 || line[len] != ':')
                return NULL;
        const char *v = line + len + 1;
        while (*v == ' ' || *v == '\t')
                v++;
        return v;
}

/* A list of ids ("Uid:", "NSpid:", "Groups:") as a JSON array; want > 0: exactly that many. */
static int id_list(const char *v, size_t want, json_object **ret) {
        json_object *a = json_object_new_array();
        if (!a)
                return -ENOMEM;
        size_t n = 0;
        long long id;
        while (*v && *v != '\n' && take_int(&v, 0, UINT32_MAX, &id)) {
                if (n < KB_PROCFS_IDS_MAX && json_object_array_add(a, json_object_new_int64(id)) < 0) {
                        json_object_put(a);
                        return -ENOMEM;
                }
                n++;
        }
        if ((*v && *v != '\n') || (want && n != want)) {
                json_object_put(a);
                return -EPROTO;
        }
        *ret = a;
        return 0;
}

/* A hex capability set: 1-16 hex digits. */
static bool hex_word(const char *v) {
        size_t n = strspn(v, "0123456789abcdefABCDEF");
        return n >= 1 && n <= 16 && (v[n] == '\0' || v[n] == '\n');
}

int kb_procfs_status_parse(const char *text, json_object **ret) {
        /* Automatic, not static: a fact's typed name is a const object, which clang takes in no static
         * initializer. */
        const struct {
                const char *key;
                kb_fact_arr fact;
                size_t count; /* 0: any number */
                bool required;
        } lists[] = {
                {"Uid", FACT_PROCESS_UID, 4, true},        {"Gid", FACT_PROCESS_GID, 4, true},
                {"Groups", FACT_PROCESS_GROUPS, 0, false}, {"NSpid", FACT_PROCESS_NSPID, 0, true},
                {"NSsid", FACT_PROCESS_NSSID, 0, false},
        };
        const struct {
                const char *key;
                kb_fact_str fact;
        } caps[] = {{"CapInh", FACT_PROCESS_CAP_INH}, {"CapPrm", FACT_PROCESS_CAP_PRM},
                    {"CapEff", FACT_PROCESS_CAP_EFF}, {"CapBnd", FACT_PROCESS_CAP_BND},
                    {"CapAmb", FACT_PROCESS_CAP_AMB}, {"SigPnd", FACT_PROCESS_SIG_PND},
                    {"ShdPnd", FACT_PROCESS_SHD_PND}, {"SigBlk", FACT_PROCESS_SIG_BLK},
                    {"SigIgn", FACT_PROCESS_SIG_IGN}, {"SigCgt", FACT_PROCESS_SIG_CGT}};
        const struct {
                const char *key;
                kb_fact_int fact;
        } ints[] = {{"NoNewPrivs", FACT_PROCESS_NO_NEW_PRIVS},
                    {"Seccomp", FACT_PROCESS_SECCOMP},
                    {"Seccomp_filters", FACT_PROCESS_SECCOMP_FILTERS},
                    {"TracerPid", FACT_PROCESS_TRACER_PID},
                    {"Threads", FACT_PROCESS_THREADS},
                    {"VmRSS", FACT_PROCESS_VM_RSS_KB},
                    {"VmHWM", FACT_PROCESS_VM_HWM_KB}};
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o || !text)
                return o ? -EPROTO : -ENOMEM;
        bool have_ppid = false, have_list[KB_ELEMENTSOF(lists)] = {false};
        int r = 0;
        for (const char *line = text; r >= 0 && *line;) {
                const char *nl = strchr(line, '\n');
                const char *v;
                long long x;
                if ((v = status_value(line, "Name"))) {
                        size_t len = nl ? (size_t) (nl - v) : strlen(v);
                        r = kb_fact_set_strn(o, FACT_PROCESS_NAME, v, len > 64 ? 64 : len);
                } else if ((v = status_value(line, "State"))) {
                        r = kb_fact_set_strn(o, FACT_PROCESS_STATE, v, *v && *v != '\n' ? 1 : 0);
                } else if ((v = status_value(line, "PPid"))) {
                        if (!take_int(&v, 0, INT_MAX, &x))
                                return -EPROTO;
                        have_ppid = true;
                        r = kb_fact_set_int(o, FACT_PROCESS_PPID, x);
                } else {
                        for (size_t i = 0; r >= 0 && i < KB_ELEMENTSOF(lists); i++)
                                if ((v = status_value(line, lists[i].key))) {
                                        json_object *a = NULL;
                                        r = id_list(v, lists[i].count, &a);
                                        if (r >= 0)
                                                r = kb_fact_set_arr(o, lists[i].fact, a);
                                        have_list[i] = r >= 0;
                                }
                        for (size_t i = 0; r >= 0 && i < KB_ELEMENTSOF(caps); i++)
                                if ((v = status_value(line, caps[i].key))) {
                                        if (!hex_word(v))
                                                return -EPROTO;
                                        r = kb_fact_set_strn(o, caps[i].fact, v, strspn(v, "0123456789abcdefABCDEF"));
                                }
                        for (size_t i = 0; r >= 0 && i < KB_ELEMENTSOF(ints); i++)
                                if ((v = status_value(line, ints[i].key))) {
                                        if (!take_int(&v, 0, INT_MAX, &x))
                                                return -EPROTO;
                                        r = kb_fact_set_int(o, ints[i].fact, x);
                                }
                }
                line = nl ? nl + 1 : line + strlen(line);
        }
        if (r < 0)
                return r;
        if (!have_ppid)
                return -EPROTO;
        for (size_t i = 0; i < KB_ELEMENTSOF(lists); i++)
                if (lists[i].required && !have_list[i])
                        return -EPROTO;
        json_object *nspid = kb_fact_arr_of(o, FACT_PROCESS_NSPID);
        if (!nspid || json_object_array_length(nspid) == 0)
                return -EPROTO;
        *ret = TAKE_PTR(o);
        return 0;
}

int kb_procfs_stat_parse(const char *text, kb_procfs_stat *ret) {
        if (!text || !ret)
                return -EPROTO;
        kb_procfs_stat st = {0};
        const char *p = text;
        long long x;
        if (!take_int(&p, 1, INT_MAX, &x) || *p != '(')
                return -EPROTO;
        st.pid = (pid_t) x;
        /* The name may hold ") (": the fields after it start after the last ')'. */
        const char *close = strrchr(p, ')');
        if (!close || close[1] != ' ')
                return -EPROTO;
        size_t len = (size_t) (close - (p + 1));
        if (len > sizeof st.comm - 1)
                len = sizeof st.comm - 1;
        memcpy(st.comm, p + 1, len);
        p = close + 2;
        if (!*p || p[1] != ' ')
                return -EPROTO;
        st.state = *p;
        p += 2;
        long long ppid, pgrp, session, tty;
        if (!take_int(&p, 0, INT_MAX, &ppid) || !take_int(&p, 0, INT_MAX, &pgrp) ||
            !take_int(&p, 0, INT_MAX, &session) || !take_int(&p, INT_MIN, INT_MAX, &tty))
                return -EPROTO;
        st.ppid = (pid_t) ppid;
        st.pgrp = (pid_t) pgrp;
        st.session = (pid_t) session;
        st.tty_nr = (int) tty;
        /* tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice, then
         * num_threads */
        long long skip, threads;
        bool more = true;
        for (int i = 0; more && i < 12; i++)
                more = take_int(&p, LLONG_MIN, LLONG_MAX, &skip);
        if (more && take_int(&p, 0, INT_MAX, &threads))
                st.threads = (long) threads;
        else
                more = false;
        /* Field 21 itrealvalue, 22 starttime; 23-25 vsize rss rsslim; 26-28 startcode endcode
         * startstack; 29-44 (16 fields); 45-51 start_data end_data start_brk arg_start arg_end
         * env_start env_end. Addresses are unsigned 64-bit values. */
        unsigned long long v[31] = {0};
        size_t got = 0;
        while (more && got < KB_ELEMENTSOF(v) && take_uint(&p, &v[got]))
                got++;
        if (got >= 2)
                st.starttime = v[1];
        static const int at[KB_PROCFS_LAYOUT_FIELDS] = {5, 6, 7, 24, 25, 26, 27, 28, 29, 30};
        for (size_t i = 0; i < KB_PROCFS_LAYOUT_FIELDS; i++)
                st.layout[i] = (size_t) at[i] < got ? v[at[i]] : 0;
        *ret = st;
        return 0;
}

/* Copies one space-separated field at *p into a malloc'd string with \ooo escapes decoded. */
static int take_field(const char **p, char **ret) {
        const char *start = *p;
        size_t len = strcspn(start, " \n");
        if (len == 0 || len > FIELD_MAX)
                return -EPROTO;
        char *out = malloc(len + 1);
        if (!out)
                return -ENOMEM;
        size_t n = 0;
        for (size_t i = 0; i < len; i++) {
                if (start[i] == '\\' && i + 3 < len && start[i + 1] >= '0' && start[i + 1] <= '3' &&
                    start[i + 2] >= '0' && start[i + 2] <= '7' && start[i + 3] >= '0' && start[i + 3] <= '7') {
                        out[n++] = (char) (((start[i + 1] - '0') << 6) | ((start[i + 2] - '0') << 3) |
                                           (start[i + 3] - '0'));
                        i += 3;
                } else {
                        out[n++] = start[i];
                }
        }
        out[n] = '\0';
        *p = start + len;
        if (**p == ' ')
                (*p)++;
        *ret = out;
        return 0;
}

static json_object *split_options(const char *s) {
        json_object *a = json_object_new_array();
        for (const char *p = s; a && *p;) {
                size_t len = strcspn(p, ",");
                if (len && json_object_array_add(a, json_object_new_string_len(p, (int) len)) < 0) {
                        json_object_put(a);
                        return NULL;
                }
                p += len + (p[len] == ',' ? 1 : 0);
        }
        return a;
}

static bool has_option(json_object *opts, const char *name) {
        for (size_t i = 0; i < json_object_array_length(opts); i++)
                if (strcmp(json_object_get_string(json_object_array_get_idx(opts, i)), name) == 0)
                        return true;
        return false;
}

/* One mountinfo line: id parent major:minor root mountpoint options [optional...] - fstype source super */
static int mount_line(const char *line, json_object **ret) {
        const char *p = line;
        long long id, parent;
        if (!take_int(&p, 0, INT_MAX, &id) || !take_int(&p, 0, INT_MAX, &parent))
                return -EPROTO;
        _cleanup_free_ char *dev = NULL, *root = NULL, *mp = NULL, *opts = NULL, *fstype = NULL, *source = NULL,
                            *super = NULL;
        int r;
        if ((r = take_field(&p, &dev)) < 0 || (r = take_field(&p, &root)) < 0 || (r = take_field(&p, &mp)) < 0 ||
            (r = take_field(&p, &opts)) < 0)
                return r;
        unsigned maj, min;
        char tail;
        if (sscanf(dev, "%u:%u%c", &maj, &min, &tail) != 2)
                return -EPROTO;
        /* Optional fields end at a lone "-". Of them, the propagation ties: "shared:N" (a member of
         * peer group N), "master:N" (a slave of it), "propagate_from:N". */
        long long peers[3] = {-1, -1, -1};
        static const char *const ties[] = {"shared:", "master:", "propagate_from:"};
        for (;;) {
                if (*p == '-' && (p[1] == ' ' || p[1] == '\n' || p[1] == '\0')) {
                        p += p[1] == ' ' ? 2 : 1;
                        break;
                }
                size_t len = strcspn(p, " \n");
                if (len == 0)
                        return -EPROTO;
                for (size_t t = 0; t < 3; t++) {
                        size_t tl = strlen(ties[t]);
                        const char *q = p + tl;
                        if (len > tl && strncmp(p, ties[t], tl) == 0 && !take_int(&q, 0, INT_MAX, &peers[t]))
                                return -EPROTO;
                }
                p += len + (p[len] == ' ' ? 1 : 0);
        }
        if ((r = take_field(&p, &fstype)) < 0 || (r = take_field(&p, &source)) < 0)
                return r;
        if (*p && *p != '\n' && (r = take_field(&p, &super)) < 0)
                return r;
        _cleanup_json_ json_object *o = json_object_new_object(), *options = split_options(opts),
                                   *super_options = split_options(super ? super : "");
        if (!o || !options || !super_options)
                return -ENOMEM;
        bool writable = !has_option(options, "ro") && !has_option(super_options, "ro");
        bool nodev = has_option(options, "nodev");
        if (kb_fact_set_int(o, FACT_MOUNT_ID, id) < 0 || kb_fact_set_int(o, FACT_MOUNT_PARENT, parent) < 0 ||
            kb_fact_set_str(o, FACT_MOUNT_DEV, dev) < 0 || kb_fact_set_str(o, FACT_MOUNT_ROOT, root) < 0 ||
            kb_fact_set_str(o, FACT_MOUNT_MOUNTPOINT, mp) < 0 ||
            kb_fact_set_arr(o, FACT_MOUNT_OPTIONS, TAKE_PTR(options)) < 0 ||
            kb_fact_set_str(o, FACT_MOUNT_FSTYPE, fstype) < 0 || kb_fact_set_str(o, FACT_MOUNT_SOURCE, source) < 0 ||
            kb_fact_set_arr(o, FACT_MOUNT_SUPER, TAKE_PTR(super_options)) < 0 ||
            kb_fact_set_bool(o, FACT_MOUNT_WRITABLE, writable) < 0 ||
            kb_fact_set_bool(o, FACT_MOUNT_NODEV, nodev) < 0 ||
            (peers[0] >= 0 && kb_fact_set_int(o, FACT_MOUNT_SHARED, peers[0]) < 0) ||
            (peers[1] >= 0 && kb_fact_set_int(o, FACT_MOUNT_MASTER, peers[1]) < 0) ||
            (peers[2] >= 0 && kb_fact_set_int(o, FACT_MOUNT_PROPAGATE_FROM, peers[2]) < 0))
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

int kb_procfs_mountinfo_parse(const char *text, json_object **ret) {
        _cleanup_json_ json_object *a = json_object_new_array();
        if (!a)
                return -ENOMEM;
        size_t n = 0;
        for (const char *line = text ? text : ""; *line;) {
                const char *nl = strchr(line, '\n');
                if (nl == line) {
                        line++;
                        continue;
                }
                if (++n > KB_PROCFS_MOUNTS_MAX)
                        return -E2BIG;
                json_object *m = NULL;
                int r = mount_line(line, &m);
                if (r < 0)
                        return r;
                if (json_object_array_add(a, m) < 0) {
                        json_object_put(m);
                        return -ENOMEM;
                }
                line = nl ? nl + 1 : line + strlen(line);
        }
        *ret = TAKE_PTR(a);
        return 0;
}

bool kb_procfs_path_under(const char *path, const char *prefix) {
        if (!path || !prefix)
                return false;
        if (strcmp(prefix, "/") == 0)
                return path[0] == '/';
        size_t len = strlen(prefix);
        while (len > 1 && prefix[len - 1] == '/')
                len--;
        return strncmp(path, prefix, len) == 0 && (path[len] == '\0' || path[len] == '/');
}

int64_t kb_procfs_tmpfs_size(json_object *super) {
        size_t n = super && json_object_is_type(super, json_type_array) ? json_object_array_length(super) : 0;
        for (size_t i = 0; i < n; i++) {
                const char *o = json_object_get_string(json_object_array_get_idx(super, i));
                if (!o || strncmp(o, "size=", 5) != 0)
                        continue;
                char *end;
                long long v = strtoll(o + 5, &end, 10);
                int64_t mult = *end == 'k' ? 1024 : *end == 'm' ? 1024 * 1024 : *end == 'g' ? 1024 * 1024 * 1024 : 1;
                return v > 0 ? (int64_t) v * mult : -1;
        }
        return -1;
}

json_object *kb_procfs_mount_of(json_object *mounts, const char *path) {
        size_t n = mounts ? json_object_array_length(mounts) : 0;
        json_object *cur = NULL;
        /* The root: the last "/" mount whose parent is not in the table. */
        for (size_t i = 0; i < n; i++) {
                json_object *m = json_object_array_get_idx(mounts, i);
                if (strcmp(kb_fact_str_or(m, FACT_MOUNT_MOUNTPOINT, ""), "/") != 0)
                        continue;
                int64_t parent = kb_fact_int_or(m, FACT_MOUNT_PARENT, -1);
                bool parent_known = false;
                for (size_t j = 0; j < n && !parent_known; j++)
                        parent_known = j != i && kb_fact_int_or(json_object_array_get_idx(mounts, j), FACT_MOUNT_ID,
                                                                -1) == parent;
                if (!parent_known)
                        cur = m;
        }
        /* Down the tree; each step follows one parent link (at most n steps). A child mounted at
         * cur's own mount point is stacked over cur's root and hides everything else of cur, the
         * mounts below it included: it wins over any deeper child. */
        for (size_t depth = 0; cur && depth < n; depth++) {
                json_object *next = NULL, *stacked = NULL;
                size_t best = 0;
                int64_t id = kb_fact_int_or(cur, FACT_MOUNT_ID, -1);
                const char *cur_mp = kb_fact_str_or(cur, FACT_MOUNT_MOUNTPOINT, "");
                for (size_t i = 0; i < n; i++) {
                        json_object *m = json_object_array_get_idx(mounts, i);
                        if (m == cur || kb_fact_int_or(m, FACT_MOUNT_PARENT, -1) != id)
                                continue;
                        const char *mp = kb_fact_str_or(m, FACT_MOUNT_MOUNTPOINT, "");
                        size_t len = strlen(mp);
                        if (strcmp(mp, cur_mp) == 0)
                                stacked = m;
                        else if (kb_procfs_path_under(path, mp) && (!next || len >= best)) {
                                next = m;
                                best = len;
                        }
                }
                if (stacked)
                        next = stacked;
                if (!next)
                        break;
                cur = next;
        }
        return cur;
}

/* The lines of text, each passed to fn with its length (no newline); stops at the first error. */
static int each_line(const char *text, int (*fn)(void *ud, const char *line, size_t len, size_t index), void *ud) {
        size_t index = 0;
        for (const char *line = text ? text : ""; *line;) {
                const char *nl = strchr(line, '\n');
                size_t len = nl ? (size_t) (nl - line) : strlen(line);
                if (len > 0) {
                        if (index >= KB_PROCFS_NET_LINES_MAX)
                                return -E2BIG;
                        int r = fn(ud, line, len, index++);
                        if (r < 0)
                                return r;
                }
                line += len + (nl ? 1 : 0);
        }
        return 0;
}

/* Splits [line, line+len) on blanks into at most max fields (start, length); returns the count. */
static size_t fields(const char *line, size_t len, const char **starts, size_t *lens, size_t max) {
        size_t n = 0, i = 0;
        while (i < len && n < max) {
                while (i < len && (line[i] == ' ' || line[i] == '\t'))
                        i++;
                if (i == len)
                        break;
                size_t start = i;
                while (i < len && line[i] != ' ' && line[i] != '\t')
                        i++;
                starts[n] = line + start;
                lens[n++] = i - start;
        }
        return n;
}

static bool field_int(const char *s, size_t len, int base, long long *ret) {
        char buf[32];
        if (len == 0 || len >= sizeof buf)
                return false;
        memcpy(buf, s, len);
        buf[len] = '\0';
        char *end;
        errno = 0;
        long long v = strtoll(buf, &end, base);
        if (errno || *end || v < 0)
                return false;
        *ret = v;
        return true;
}

static int unix_line(void *ud, const char *line, size_t len, size_t index) {
        json_object *a = ud;
        if (index == 0)
                return strncmp(line, "Num ", 4) == 0 ? 0 : -EPROTO;
        const char *f[8];
        size_t fl[8];
        size_t n = fields(line, len, f, fl, 7);
        long long flags, inode;
        /* Num RefCount Protocol Flags Type St Inode [Path] */
        if (n < 7 || fl[0] < 2 || f[0][fl[0] - 1] != ':' || !field_int(f[3], fl[3], 16, &flags) ||
            !field_int(f[6], fl[6], 10, &inode))
                return -EPROTO;
        const char *rest = f[6] + fl[6];
        size_t rest_len = len - (size_t) (rest - line);
        while (rest_len > 0 && *rest == ' ') {
                rest++;
                rest_len--;
        }
        json_object *o = json_object_new_object();
        if (!o || kb_fact_set_int(o, FACT_UNIX_ENTRY_INODE, inode) < 0 ||
            kb_fact_set_bool(o, FACT_UNIX_ENTRY_LISTENING, (flags & 0x10000) != 0) < 0 ||
            (rest_len > 0 && kb_fact_set_strn(o, FACT_UNIX_ENTRY_PATH, rest, rest_len) < 0) ||
            json_object_array_add(a, o) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        return 0;
}

int kb_procfs_unix_parse(const char *text, json_object **ret) {
        _cleanup_json_ json_object *a = json_object_new_array();
        if (!a)
                return -ENOMEM;
        /* A name is printed raw: one ending in a newline leaves an empty line, one holding a
         * newline a line without the table's shape. Either way a path read from it is wrong. */
        if (text && strstr(text, "\n\n"))
                return -EPROTO;
        int r = each_line(text, unix_line, a);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(a);
        return 0;
}

typedef struct unix_lenient {
        json_object *a;
        size_t skipped;
} unix_lenient;

static int unix_line_lenient(void *ud, const char *line, size_t len, size_t index) {
        unix_lenient *l = ud;
        int r = unix_line(l->a, line, len, index);
        if (r == -EPROTO) {
                l->skipped++;
                return 0;
        }
        return r;
}

int kb_procfs_unix_parse_lenient(const char *text, json_object **ret, size_t *ret_skipped) {
        _cleanup_json_ json_object *a = json_object_new_array();
        if (!a)
                return -ENOMEM;
        unix_lenient l = {a, 0};
        int r = each_line(text, unix_line_lenient, &l);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(a);
        *ret_skipped = l.skipped;
        return 0;
}

typedef struct inode_scan {
        json_object *inodes;
        size_t column; /* index of the inode column, found in the header */
        int added;
} inode_scan;

static int inode_line(void *ud, const char *line, size_t len, size_t index) {
        inode_scan *s = ud;
        const char *f[32];
        size_t fl[32];
        size_t n = fields(line, len, f, fl, 32);
        if (index == 0) {
                /* The ip tables' header names two columns that each hold two of a line's fields
                 * ("tx_queue rx_queue" is "00000000:00000000", "tr tm->when" is "00:00000000"):
                 * their inode is a line's tenth field. The others' headers match their lines. */
                if (n > 0 && fl[0] == 2 && strncmp(f[0], "sl", 2) == 0) {
                        s->column = 9;
                        return 0;
                }
                for (size_t i = 0; i < n; i++)
                        if (fl[i] == 5 && strncasecmp(f[i], "inode", 5) == 0) {
                                s->column = i;
                                return 0;
                        }
                return -EPROTO;
        }
        long long inode;
        if (n <= s->column || !field_int(f[s->column], fl[s->column], 10, &inode))
                return -EPROTO;
        if (json_object_array_add(s->inodes, json_object_new_int64(inode)) < 0)
                return -ENOMEM;
        s->added++;
        return 0;
}

int kb_procfs_sockstat_inuse(const char *text, const char *proto, long *ret) {
        size_t len = strlen(proto);
        for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
                if (strncmp(line, proto, len) != 0 || line[len] != ':')
                        continue;
                const char *p = line + len + 1;
                while (*p == ' ')
                        p++;
                if (strncmp(p, "inuse ", 6) != 0)
                        return -EPROTO;
                char *end;
                errno = 0;
                long v = strtol(p + 6, &end, 10);
                if (errno || end == p + 6 || (*end != ' ' && *end != '\n' && *end != '\0') || v < 0)
                        return -EPROTO;
                *ret = v;
                return 0;
        }
        return -ENOENT;
}

int kb_procfs_net_inodes(const char *text, json_object *inodes) {
        inode_scan s = {.inodes = inodes, .column = (size_t) -1};
        int r = each_line(text, inode_line, &s);
        if (r < 0)
                return r;
        if (s.column == (size_t) -1)
                return -EPROTO;
        return s.added;
}

/* "0100007F:1F91" (an IPv4 address as the kernel's u32 in hex, then the port) as "127.0.0.1:8081". */
static bool tcp_address(const char *f, size_t len, char *out, size_t size) {
        long long ip, port;
        if (len != 13 || f[8] != ':' || !field_int(f, 8, 16, &ip) || !field_int(f + 9, 4, 16, &port))
                return false;
        /* the u32 is printed in the host's byte order; its first byte in memory is the first octet */
        uint32_t raw = (uint32_t) ip;
        const unsigned char *b = (const unsigned char *) &raw;
        return snprintf(out, size, "%u.%u.%u.%u:%lld", b[0], b[1], b[2], b[3], port) < (int) size;
}

static int tcp_line(void *ud, const char *line, size_t len, size_t index) {
        const char *f[16];
        size_t fl[16];
        size_t n = fields(line, len, f, fl, 16);
        if (index == 0)
                return n > 0 && fl[0] == 2 && strncmp(f[0], "sl", 2) == 0 ? 0 : -EPROTO;
        char local[32], remote[32];
        long long state, inode;
        if (n < 10 || !tcp_address(f[1], fl[1], local, sizeof local) ||
            !tcp_address(f[2], fl[2], remote, sizeof remote) || !field_int(f[3], fl[3], 16, &state) ||
            !field_int(f[9], fl[9], 10, &inode))
                return -EPROTO;
        json_object *e = json_object_new_object();
        if (!e || kb_fact_set_int(e, FACT_TCP_ENTRY_INODE, inode) < 0 ||
            kb_fact_set_str(e, FACT_TCP_ENTRY_LOCAL, local) < 0 ||
            kb_fact_set_str(e, FACT_TCP_ENTRY_REMOTE, remote) < 0 ||
            kb_fact_set_int(e, FACT_TCP_ENTRY_STATE, state) < 0 || json_object_array_add(ud, e) < 0) {
                json_object_put(e);
                return -ENOMEM;
        }
        return 0;
}

int kb_procfs_tcp_parse(const char *text, json_object **ret) {
        _cleanup_json_ json_object *a = json_object_new_array();
        if (!a)
                return -ENOMEM;
        int r = each_line(text, tcp_line, a);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(a);
        return 0;
}

static int dev_line(void *ud, const char *line, size_t len, size_t index) {
        if (index < 2)
                return 0; /* two header lines */
        const char *colon = memchr(line, ':', len);
        if (!colon)
                return -EPROTO;
        const char *name = line;
        while (name < colon && *name == ' ')
                name++;
        if (name == colon)
                return -EPROTO;
        return json_object_array_add(ud, json_object_new_string_len(name, (int) (colon - name))) < 0 ? -ENOMEM : 0;
}

int kb_procfs_net_dev_parse(const char *text, json_object **ret) {
        _cleanup_json_ json_object *a = json_object_new_array();
        if (!a)
                return -ENOMEM;
        int r = each_line(text, dev_line, a);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(a);
        return 0;
}

static int route_line(void *ud, const char *line, size_t len, size_t index, bool v6) {
        if (!v6 && index == 0)
                return strncmp(line, "Iface", 5) == 0 ? 0 : -EPROTO;
        const char *f[16];
        size_t fl[16];
        size_t n = fields(line, len, f, fl, 16);
        if (n < (v6 ? 10 : 8))
                return -EPROTO;
        size_t dev = v6 ? n - 1 : 0;
        return json_object_array_add(ud, json_object_new_string_len(f[dev], (int) fl[dev])) < 0 ? -ENOMEM : 0;
}

static int route4_line(void *ud, const char *line, size_t len, size_t index) {
        return route_line(ud, line, len, index, false);
}

static int route6_line(void *ud, const char *line, size_t len, size_t index) {
        return route_line(ud, line, len, index, true);
}

int kb_procfs_routes_parse(const char *text, bool v6, json_object **ret) {
        _cleanup_json_ json_object *a = json_object_new_array();
        if (!a)
                return -ENOMEM;
        int r = each_line(text, v6 ? route6_line : route4_line, a);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(a);
        return 0;
}

/* The value after " key:" in line (a key of fdinfo's space-separated "key:value" fields), parsed
 * as a hexadecimal number; false when absent or malformed. */
static bool hex_field(const char *line, const char *nl, const char *key, unsigned long long *ret) {
        char want[32];
        snprintf(want, sizeof want, "%s:", key);
        size_t len = strlen(want);
        for (const char *p = line; p && (!nl || p < nl); p = strchr(p + 1, ' ')) {
                const char *f = *p == ' ' ? p + 1 : p;
                while (*f == ' ' || *f == '\t')
                        f++;
                if (strncmp(f, want, len) != 0)
                        continue;
                char *end;
                errno = 0;
                unsigned long long v = strtoull(f + len, &end, 16);
                if (errno || end == f + len)
                        return false;
                *ret = v;
                return true;
        }
        return false;
}

/* A kernel dev_t (as fdinfo prints a superblock's s_dev: major << 20 | minor) as "major:minor". */
static const char *kernel_dev(unsigned long long dev, char *buf) {
        return kb_procfs_dev((unsigned) (dev >> 20), (unsigned) (dev & 0xfffff), buf);
}

/* An inode mark's file handle as fdinfo prints it ("f_handle:" and hex digits, at most
 * MAX_HANDLE_SZ bytes) into buf; NULL when the line has none. */
static const char *handle_field(const char *line, const char *nl, char *buf, size_t size) {
        const char *f = strstr(line, " f_handle:");
        if (!f || (nl && f >= nl))
                return NULL;
        f += strlen(" f_handle:");
        size_t n = strspn(f, "0123456789abcdef");
        if (n == 0 || n % 2 || n >= size)
                return NULL;
        memcpy(buf, f, n);
        buf[n] = '\0';
        return buf;
}

/* One WATCH of kind into watches: its device, inode, the epoll descriptor, the mount, an inode
 * mark's file handle. */
static int push_watch(json_object *watches, const char *kind, const char *line, const char *nl) {
        unsigned long long dev, ino, tfd, mnt, handle_type;
        char buf[KB_PROCFS_DEV_MAX], handle[2 * 128 + 1];
        json_object *w = json_object_new_object();
        if (!w || kb_fact_set_str(w, FACT_WATCH_KIND, kind) < 0 ||
            (hex_field(line, nl, "fhandle-type", &handle_type) && handle_field(line, nl, handle, sizeof handle) &&
             (kb_fact_set_int(w, FACT_WATCH_HANDLE_TYPE, (int64_t) handle_type) < 0 ||
              kb_fact_set_str(w, FACT_WATCH_HANDLE, handle) < 0)) ||
            (hex_field(line, nl, "sdev", &dev) && kb_fact_set_str(w, FACT_WATCH_DEV, kernel_dev(dev, buf)) < 0) ||
            (hex_field(line, nl, "ino", &ino) && kb_fact_set_int(w, FACT_WATCH_INO, (int64_t) ino) < 0) ||
            (strcmp(kind, "epoll") == 0 && sscanf(line, "tfd: %llu", &tfd) == 1 &&
             kb_fact_set_int(w, FACT_WATCH_FD, (int64_t) tfd) < 0) ||
            (sscanf(line, "fanotify mnt_id:%llx", &mnt) == 1 &&
             kb_fact_set_int(w, FACT_WATCH_MNT_ID, (int64_t) mnt) < 0) ||
            json_object_array_add(watches, w) < 0) {
                json_object_put(w);
                return -ENOMEM;
        }
        return 0;
}

int kb_procfs_fdinfo_reach(const char *text, json_object *fd) {
        json_object *watches = NULL, *nspid = NULL;
        for (const char *line = text ? text : ""; *line;) {
                const char *nl = strchr(line, '\n'), *v;
                const char *kind = strncmp(line, "tfd:", 4) == 0                ? "epoll"
                                   : strncmp(line, "inotify wd:", 11) == 0      ? "inotify"
                                   : strncmp(line, "fanotify ino:", 13) == 0    ? "fanotify-inode"
                                   : strncmp(line, "fanotify mnt_id:", 16) == 0 ? "fanotify-mount"
                                   : strncmp(line, "fanotify sdev:", 14) == 0   ? "fanotify-filesystem"
                                                                                : NULL;
                long long x;
                if (kind) {
                        if (!watches &&
                            (!(watches = json_object_new_array()) || kb_fact_set_arr(fd, FACT_FD_WATCHES, watches) < 0))
                                return -ENOMEM;
                        if (push_watch(watches, kind, line, nl) < 0)
                                return -ENOMEM;
                } else if ((v = status_value(line, "NSpid"))) {
                        if (!nspid &&
                            (!(nspid = json_object_new_array()) || kb_fact_set_arr(fd, FACT_FD_NSPID, nspid) < 0))
                                return -ENOMEM;
                        while (*v && *v != '\n' && take_int(&v, -1, INT_MAX, &x))
                                if (json_object_array_add(nspid, json_object_new_int64(x)) < 0)
                                        return -ENOMEM;
                } else if ((v = status_value(line, "UserFiles"))) {
                        if (take_int(&v, 0, INT_MAX, &x) && kb_fact_set_int(fd, FACT_FD_REGISTERED_FILES, x) < 0)
                                return -ENOMEM;
                }
                line = nl ? nl + 1 : line + strlen(line);
        }
        return 0;
}

int kb_procfs_fdinfo_parse(const char *text, kb_procfs_fdinfo *ret) {
        kb_procfs_fdinfo fi = {.flags = 0, .mnt_id = -1, .pid = LLONG_MIN};
        bool have_flags = false;
        for (const char *line = text ? text : ""; *line;) {
                const char *nl = strchr(line, '\n');
                const char *v;
                long long x;
                if ((v = status_value(line, "flags"))) {
                        /* printed in octal */
                        char *end;
                        errno = 0;
                        unsigned long f = strtoul(v, &end, 8);
                        if (errno || end == v || (*end && *end != '\n'))
                                return -EPROTO;
                        fi.flags = f;
                        have_flags = true;
                } else if ((v = status_value(line, "mnt_id"))) {
                        if (!take_int(&v, 0, LLONG_MAX, &x))
                                return -EPROTO;
                        fi.mnt_id = x;
                } else if ((v = status_value(line, "Pid"))) {
                        if (!take_int(&v, -1, INT_MAX, &x))
                                return -EPROTO;
                        fi.pid = x;
                }
                line = nl ? nl + 1 : line + strlen(line);
        }
        if (!have_flags)
                return -EPROTO;
        *ret = fi;
        return 0;
}

/* Joins prefix and the rest of path after skip_len bytes ("/" prefix joins without doubling). */
static bool join_rest(const char *prefix, const char *rest, char *out, size_t size) {
        int n = snprintf(out, size, "%s%s", strcmp(prefix, "/") == 0 && *rest ? "" : prefix, rest);
        return n > 0 && (size_t) n < size;
}

bool kb_procfs_path_in_mount(json_object *m, const char *fs_path, char *out, size_t size) {
        const char *root = kb_fact_str_or(m, FACT_MOUNT_ROOT, ""), *mp = kb_fact_str_or(m, FACT_MOUNT_MOUNTPOINT, "");
        if (!*root || !*mp || !kb_procfs_path_under(fs_path, root))
                return false;
        return join_rest(mp, fs_path + (strcmp(root, "/") == 0 ? 0 : strlen(root)), out, size);
}

bool kb_procfs_fs_path(json_object *m, const char *path, char *out, size_t size) {
        const char *root = kb_fact_str_or(m, FACT_MOUNT_ROOT, ""), *mp = kb_fact_str_or(m, FACT_MOUNT_MOUNTPOINT, "");
        if (!*root || !*mp || !kb_procfs_path_under(path, mp))
                return false;
        return join_rest(root, path + (strcmp(mp, "/") == 0 ? 0 : strlen(mp)), out, size);
}

const char *kb_procfs_dev(unsigned major, unsigned minor, char *buf) {
        snprintf(buf, KB_PROCFS_DEV_MAX, "%u:%u", major, minor);
        return buf;
}
