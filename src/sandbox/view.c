/* view.c: the sandbox's view of files (the mounts of kb_sandbox_plan's argv) and the pre-launch
 * check that a kernel's program, interpreter and resource folder resolve in it. */
#include "kbound/view.h"
#include "kbound/bwrap.h"
#include "base/cleanup.h"
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Linux's own limit on symlinks followed in one lookup (MAXSYMLINKS). */
#define VIEW_MAX_LINKS 40
/* Rounds of "bind this folder and look again" before giving up on naming a fix. */
#define VIEW_MAX_FIX_ROUNDS 8
/* What the kernel reads of a "#!" line (BINPRM_BUF_SIZE). */
#define VIEW_SHEBANG_MAX 256

typedef enum mount_kind {
        MOUNT_BIND,      /* a host (or image) folder or file */
        MOUNT_EMPTY_DIR, /* tmpfs, --dir, --proc, --dev, --mqueue: nothing a kernel's program is in */
        MOUNT_SYMLINK,   /* --symlink TARGET DEST */
        MOUNT_OPAQUE,    /* made from a descriptor (--ro-bind-fd, --file): there, no host path */
} mount_kind;

typedef struct view_mount {
        mount_kind kind;
        char *dest;
        char *target; /* MOUNT_SYMLINK */
        char *source; /* MOUNT_BIND: the host path, opened (following links, as bwrap does) when a
                       * lookup reaches it: a view holds no descriptor between lookups */
} view_mount;

struct kb_view {
        view_mount *mounts;
        size_t n;
};

void kb_view_destroy(kb_view **vp) {
        if (!vp || !*vp)
                return;
        kb_view *v = *vp;
        for (size_t i = 0; i < v->n; i++) {
                free(v->mounts[i].dest);
                free(v->mounts[i].target);
                free(v->mounts[i].source);
        }
        free(v->mounts);
        free(v);
        *vp = NULL;
}

static int view_add(kb_view *v, mount_kind kind, const char *dest, const char *target, const char *source) {
        if (!dest || dest[0] != '/')
                return -EPROTO;
        view_mount *mounts = reallocarray(v->mounts, v->n + 1, sizeof(*mounts));
        if (!mounts)
                return -ENOMEM;
        v->mounts = mounts;
        view_mount *m = &v->mounts[v->n];
        *m = (view_mount){.kind = kind};
        m->dest = strdup(dest);
        m->target = target ? strdup(target) : NULL;
        m->source = source ? strdup(source) : NULL;
        if (!m->dest || (target && !m->target) || (source && !m->source)) {
                free(m->dest);
                free(m->target);
                free(m->source);
                return -ENOMEM;
        }
        v->n++;
        return 0;
}

static bool is_any(const char *s, const char *const *names) {
        for (; *names; names++)
                if (strcmp(s, *names) == 0)
                        return true;
        return false;
}

int kb_view_new(const kb_sandbox_policy *policy, kb_view **ret) {
        static const char *const binds[] = {"--bind", "--ro-bind", "--dev-bind", NULL};
        static const char *const binds_try[] = {"--bind-try", "--ro-bind-try", "--dev-bind-try", NULL};
        static const char *const empty_dirs[] = {"--tmpfs", "--dir", "--proc", "--dev", "--mqueue", NULL};
        static const char *const from_fd[] = {"--ro-bind-fd", "--bind-fd",      "--file",
                                              "--bind-data",  "--ro-bind-data", NULL};
        char *dummy_argv[] = {"/kbound-preflight", NULL};
        char **argv = NULL;
        kb_view *v = NULL;
        int r;

        if (!policy || !ret)
                return -EINVAL;
        /* The info descriptor's number only appears in the argv; any valid one will do. */
        r = kb_sandbox_plan(policy, dummy_argv, 3, &argv);
        if (r < 0)
                return r;
        v = calloc(1, sizeof(*v));
        if (!v) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 1; argv[i] && strcmp(argv[i], "--") != 0; i++) {
                const char *opt = argv[i];
                const char *a = argv[i + 1], *b = a ? argv[i + 2] : NULL;
                if (is_any(opt, binds) || is_any(opt, binds_try)) {
                        if (!a || !b) {
                                r = -EPROTO;
                                goto out;
                        }
                        /* bwrap resolves a bind source on the host, following its links; a source
                         * that is not there makes --*-bind-try skip the mount. A --*-bind source not
                         * there yet is a team folder the caller has not made (kb_view_new's
                         * placeholders): an empty folder, as it starts. */
                        struct stat st;
                        if (stat(a, &st) == 0)
                                r = view_add(v, MOUNT_BIND, b, NULL, a);
                        else if (!is_any(opt, binds_try))
                                r = view_add(v, MOUNT_EMPTY_DIR, b, NULL, NULL);
                        if (r < 0)
                                goto out;
                        i += 2;
                } else if (is_any(opt, empty_dirs)) {
                        if (!a || (r = view_add(v, MOUNT_EMPTY_DIR, a, NULL, NULL)) < 0) {
                                r = a ? r : -EPROTO;
                                goto out;
                        }
                        i += 1;
                } else if (strcmp(opt, "--symlink") == 0) {
                        if (!a || !b || (r = view_add(v, MOUNT_SYMLINK, b, a, NULL)) < 0) {
                                r = a && b ? r : -EPROTO;
                                goto out;
                        }
                        i += 2;
                } else if (is_any(opt, from_fd)) {
                        if (!a || !b || (r = view_add(v, MOUNT_OPAQUE, b, NULL, NULL)) < 0) {
                                r = a && b ? r : -EPROTO;
                                goto out;
                        }
                        i += 2;
                } else {
                        /* Any other option makes no mount: its operands are skipped by bwrap's
                         * grammar (kb_bwrap_arity), so none is taken for an option. */
                        int operands = kb_bwrap_arity(opt);
                        if (operands < 0) {
                                r = -EPROTO;
                                goto out;
                        }
                        for (int j = 0; j < operands; j++)
                                if (!argv[++i]) {
                                        r = -EPROTO;
                                        goto out;
                                }
                }
        }
        *ret = TAKE_PTR(v);
        r = 0;
out:
        kb_view_destroy(&v);
        for (char **p = argv; p && *p; p++)
                free(*p);
        free(argv);
        return r;
}

/* True if prefix is path or one of its ancestors ("/" is everyone's). */
static bool path_has_prefix(const char *path, const char *prefix) {
        size_t len = strlen(prefix);
        if (len == 1 && prefix[0] == '/')
                return true;
        return strncmp(path, prefix, len) == 0 && (path[len] == '/' || path[len] == '\0');
}

/* The mount that shows path: the last one in bwrap's order whose destination is path or an
 * ancestor of it (a later mount covers whatever earlier ones put below it). NULL if none. */
static const view_mount *mount_of(const kb_view *v, const char *path) {
        for (size_t i = v->n; i > 0; i--)
                if (path_has_prefix(path, v->mounts[i - 1].dest))
                        return &v->mounts[i - 1];
        return NULL;
}

/* True if bwrap creates path as a folder on the way to some mount's destination. */
static bool implied_dir(const kb_view *v, const char *path) {
        size_t len = strlen(path);
        for (size_t i = 0; i < v->n; i++)
                if (strncmp(v->mounts[i].dest, path, len) == 0 && v->mounts[i].dest[len] == '/')
                        return true;
        return false;
}

typedef enum step_kind { STEP_MISSING, STEP_DIR, STEP_FILE, STEP_LINK } step_kind;

/* What the sandbox shows at path (canonical: no links, no "."/".." in it). For a folder or file
 * *ret_fd gets its O_PATH descriptor on the host (-1 for a fresh or descriptor-made one); for a
 * link *target its target. Returns the kind or -errno. */
static int view_step(const kb_view *v, const char *path, int *ret_fd, char target[PATH_MAX]) {
        const view_mount *m = mount_of(v, path);
        bool at_mount = m && strcmp(m->dest, path) == 0;
        *ret_fd = -1;
        if (!m)
                return implied_dir(v, path) ? STEP_DIR : STEP_MISSING;
        switch (m->kind) {
        case MOUNT_SYMLINK:
                if (!at_mount)
                        return STEP_MISSING;
                size_t len = strlen(m->target);
                if (len >= PATH_MAX)
                        return -ENAMETOOLONG;
                memcpy(target, m->target, len + 1);
                return STEP_LINK;
        case MOUNT_EMPTY_DIR:
                return at_mount || implied_dir(v, path) ? STEP_DIR : STEP_MISSING;
        case MOUNT_OPAQUE:
                return at_mount ? STEP_FILE : STEP_MISSING;
        case MOUNT_BIND:
                break;
        }
        int fd;
        _cleanup_close_ int src_fd = open(m->source, O_PATH | O_CLOEXEC);
        if (src_fd < 0) {
                fd = -1;
        } else if (at_mount) {
                fd = TAKE_FD(src_fd);
        } else {
                /* Below the mount's root, one component more than what was already walked: no
                 * link is followed on the host (RESOLVE_NO_SYMLINKS; a trailing one comes back as
                 * itself with O_NOFOLLOW), so an image's link cannot make kbound look at the
                 * host's files. The caller interprets each link inside the sandbox. */
                const char *rel = path + (strcmp(m->dest, "/") == 0 ? 1 : strlen(m->dest) + 1);
                struct open_how how = {
                        .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
                };
                fd = (int) syscall(SYS_openat2, src_fd, rel, &how, sizeof(how));
        }
        if (fd < 0) {
                if (errno == ENOENT || errno == ENOTDIR)
                        return implied_dir(v, path) ? STEP_DIR : STEP_MISSING;
                return -errno;
        }
        struct stat st;
        if (fstat(fd, &st) < 0) {
                int e = -errno;
                close(fd);
                return e;
        }
        if (S_ISLNK(st.st_mode)) {
                ssize_t n = readlinkat(fd, "", target, PATH_MAX - 1);
                int e = n < 0 ? -errno : 0;
                close(fd);
                if (n <= 0)
                        return n == 0 ? STEP_MISSING : e;
                target[n] = '\0';
                return STEP_LINK;
        }
        *ret_fd = fd;
        return S_ISDIR(st.st_mode) ? STEP_DIR : STEP_FILE;
}

/* *ret (if not NULL) gets the path being looked up when it failed: the part found so far and
 * what was still to come, links already followed ("/root/.pyenv/versions/3.11/bin/python3.11"
 * for a venv's python whose link leads there): the path a bind would have to show. */
static int pending(const char *walked, const char *after, char **ret) {
        if (!ret)
                return 0;
        size_t after_len = strlen(after);
        while (after_len > 0 && after[after_len - 1] == '/')
                after_len--;
        if (asprintf(ret, "%s%s%.*s", walked, after_len ? "/" : "", (int) after_len, after) < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return 0;
}

int kb_view_resolve(const kb_view *v, const char *path, char **ret_inside, int *ret_fd, char **ret_missing) {
        char cur[PATH_MAX] = "", next[PATH_MAX], target[PATH_MAX];
        size_t cur_len = 0;
        int links = 0, r;
        _cleanup_close_ int cur_fd = -1;

        if (!v || !path || path[0] != '/')
                return -EINVAL;
        _cleanup_free_ char *rest = strdup(path);
        if (!rest)
                return -ENOMEM;
        const char *p = rest;
        for (;;) {
                while (*p == '/')
                        p++;
                if (!*p)
                        break;
                const char *end = strchrnul(p, '/');
                size_t clen = (size_t) (end - p);
                if (clen == 1 && p[0] == '.') {
                        p = end;
                        continue;
                }
                if (clen == 2 && p[0] == '.' && p[1] == '.') {
                        /* cur holds no link, so its lexical parent is the real one. */
                        char *slash = strrchr(cur, '/');
                        cur_len = slash ? (size_t) (slash - cur) : 0;
                        cur[cur_len] = '\0';
                        kb_closep(&cur_fd);
                        p = end;
                        continue;
                }
                if (cur_len + 1 + clen >= sizeof(next))
                        return -ENAMETOOLONG;
                memcpy(next, cur, cur_len);
                next[cur_len] = '/';
                memcpy(next + cur_len + 1, p, clen);
                next[cur_len + 1 + clen] = '\0';
                const char *after = end;
                while (*after == '/')
                        after++;
                bool last = *after == '\0';

                int fd = -1;
                r = view_step(v, next, &fd, target);
                if (r < 0)
                        return r;
                if (r == STEP_MISSING)
                        return pending(next, after, ret_missing) < 0 ? -ENOMEM : -ENOENT;
                if (r == STEP_LINK) {
                        if (++links > VIEW_MAX_LINKS)
                                return -ELOOP;
                        /* The target replaces the component; an absolute one starts again at the
                         * sandbox's root, as the kernel's own lookup will. */
                        char *spliced = NULL;
                        if (asprintf(&spliced, "%s%s%s", target, *end ? "/" : "", end) < 0)
                                return -ENOMEM;
                        free(rest);
                        rest = spliced;
                        p = rest;
                        if (target[0] == '/') {
                                cur_len = 0;
                                cur[0] = '\0';
                                kb_closep(&cur_fd);
                        }
                        continue;
                }
                if (r == STEP_FILE && !last) {
                        close(fd);
                        return pending(next, after, ret_missing) < 0 ? -ENOMEM : -ENOTDIR;
                }
                kb_closep(&cur_fd);
                cur_fd = fd;
                memcpy(cur, next, cur_len + 1 + clen + 1);
                cur_len += 1 + clen;
                p = end;
        }
        if (ret_inside && !(*ret_inside = strdup(cur_len ? cur : "/")))
                return -ENOMEM;
        if (ret_fd)
                *ret_fd = TAKE_FD(cur_fd);
        return 0;
}

void kb_view_problem_free(kb_view_problem **pp) {
        if (!pp || !*pp)
                return;
        kb_view_problem *p = *pp;
        free(p->named);
        free(p->missing);
        for (char **f = p->fix; f && *f; f++)
                free(*f);
        free(p->fix);
        free(p->rootfs);
        free(p->search_path);
        free(p);
        *pp = NULL;
}

/* The kernel's PATH, or the one kb_sandbox_env gives. */
static const char *kernel_path(char *const *env) {
        const char *path = kb_env_get(env, "PATH");
        return path ? path : KB_SANDBOX_PATH;
}

/* 0 if path resolves in the view to an executable regular file (its host descriptor in *ret_fd,
 * may be NULL), -EACCES if to something else, or kb_view_resolve's errors. */
static int resolve_executable(const kb_view *v, const char *path, int *ret_fd, char **ret_missing) {
        _cleanup_close_ int fd = -1;
        int r = kb_view_resolve(v, path, NULL, &fd, ret_missing);
        if (r < 0)
                return r;
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & 0111) == 0) {
                if (ret_missing && !(*ret_missing = strdup(path)))
                        return -ENOMEM;
                return -EACCES;
        }
        if (ret_fd)
                *ret_fd = TAKE_FD(fd);
        return 0;
}

static int problem_new(const char *what, const char *named, int error, kb_view_problem **ret) {
        kb_view_problem *p = calloc(1, sizeof(*p));
        if (!p || !(p->named = strdup(named)) || !(p->fix = calloc(1, sizeof(char *)))) {
                kb_view_problem_free(&p);
                return -ENOMEM;
        }
        p->what = what;
        p->error = error;
        *ret = p;
        return 0;
}

/* Finds program as execvp inside the sandbox will: a path with '/' as is (relative to the
 * sandbox's working folder), a bare name in each absolute entry of the kernel's PATH in turn.
 * Returns 0 (and the host descriptor in *ret_fd), or a problem in *ret_problem; -ENOMEM. */
static int find_program(const kb_view *v, bool host_view, const char *what, const char *program, char *const *env,
                        int *ret_fd, kb_view_problem **ret_problem) {
        _cleanup_free_ char *missing = NULL;
        int r;

        if (strchr(program, '/')) {
                _cleanup_free_ char *abs = NULL;
                if (program[0] != '/' && asprintf(&abs, "%s/%s", KB_SANDBOX_WORKSPACE, program) < 0)
                        return -ENOMEM;
                r = resolve_executable(v, abs ? abs : program, ret_fd, &missing);
                if (r == -ENOMEM)
                        return r;
                if (r == 0)
                        return 0;
                int pr = problem_new(what, program, r, ret_problem);
                if (pr < 0)
                        return pr;
                struct stat st;
                (*ret_problem)->on_host = host_view && r == -ENOENT && missing && stat(missing, &st) == 0;
                (*ret_problem)->missing = TAKE_PTR(missing);
                return 0;
        }
        /* execvp: the first executable match wins; "not executable" is remembered but the search
         * goes on, and is what is reported if nothing better turns up. */
        const char *path = kernel_path(env);
        int best = -ENOENT;
        _cleanup_free_ char *on_host = NULL;
        for (const char *cursor = path;;) {
                _cleanup_free_ char *candidate = NULL;
                r = kb_path_next(&cursor, program, &candidate);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                _cleanup_free_ char *pending_path = NULL;
                r = resolve_executable(v, candidate, ret_fd, &pending_path);
                if (r == 0)
                        return 0;
                if (r == -ENOMEM)
                        return r;
                if (r != -ENOENT)
                        best = r;
                struct stat st;
                if (host_view && !on_host && r == -ENOENT && pending_path && stat(pending_path, &st) == 0)
                        on_host = TAKE_PTR(pending_path);
        }
        r = problem_new(what, program, best, ret_problem);
        if (r < 0)
                return r;
        (*ret_problem)->search_path = strdup(path);
        if (!(*ret_problem)->search_path)
                return -ENOMEM;
        if (on_host) {
                (*ret_problem)->missing = TAKE_PTR(on_host);
                (*ret_problem)->on_host = true;
        }
        return 0;
}

/* The "#!" line of the file open as fd (O_PATH): *ret_interp and *ret_arg (NULL if none), or
 * neither when the file does not start with "#!". Returns 0, -ENOEXEC ("#!" and no program),
 * -errno. */
static int read_shebang(int fd, char **ret_interp, char **ret_arg) {
        char proc[64], buf[VIEW_SHEBANG_MAX + 1];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        _cleanup_close_ int rfd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        *ret_interp = *ret_arg = NULL;
        if (rfd < 0)
                return -errno;
        ssize_t n = read(rfd, buf, VIEW_SHEBANG_MAX);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        if (n < 2 || buf[0] != '#' || buf[1] != '!')
                return 0;
        char *line = buf + 2;
        line[strcspn(line, "\n")] = '\0';
        line += strspn(line, " \t");
        size_t ilen = strcspn(line, " \t");
        if (ilen == 0)
                return -ENOEXEC;
        char *arg = line + ilen;
        arg += strspn(arg, " \t");
        size_t alen = strlen(arg);
        while (alen > 0 && (arg[alen - 1] == ' ' || arg[alen - 1] == '\t' || arg[alen - 1] == '\r'))
                alen--;
        *ret_interp = strndup(line, ilen);
        *ret_arg = alen ? strndup(arg, alen) : NULL;
        if (!*ret_interp || (alen && !*ret_arg)) {
                free(*ret_interp);
                free(*ret_arg);
                *ret_interp = *ret_arg = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* For "#!/usr/bin/env [-S] [NAME=value...] PROGRAM ...": PROGRAM (malloc'd), else NULL. */
static char *env_program(const char *interp, const char *arg) {
        const char *base = strrchr(interp, '/');
        if (!arg || strcmp(base ? base + 1 : interp, "env") != 0)
                return NULL;
        for (const char *p = arg;;) {
                p += strspn(p, " \t");
                size_t len = strcspn(p, " \t");
                if (len == 0)
                        return NULL;
                bool option = p[0] == '-', assignment = memchr(p, '=', len) != NULL;
                if (!option && !assignment)
                        return strndup(p, len);
                p += len;
        }
}

static bool uses_resource_dir(char *const *argv) {
        for (char *const *a = argv; *a; a++)
                if (strstr(*a, "{resource_dir}"))
                        return true;
        return false;
}

/* One look in policy's view: the first problem, or none. */
static int check_once(const kb_sandbox_policy *policy, char *const *argv, char *const *env, const char *resource_dir,
                      kb_view_problem **ret_problem) {
        kb_view *v = NULL;
        bool host_view = !policy->rootfs;
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *interp = NULL, *arg = NULL, *via_env = NULL;
        int r = kb_view_new(policy, &v);
        if (r < 0)
                return r;
        *ret_problem = NULL;
        r = find_program(v, host_view, "program", argv[0], env, &fd, ret_problem);
        if (r < 0 || *ret_problem)
                goto out;
        /* One level of "#!": the interpreter must be there too (a venv's console script names
         * the venv's python). What that interpreter loads in turn is not followed. */
        r = read_shebang(fd, &interp, &arg);
        if (r == -ENOEXEC) {
                r = problem_new("interpreter", argv[0], -ENOEXEC, ret_problem);
                goto out;
        }
        if (r < 0)
                goto out;
        if (interp) {
                kb_closep(&fd);
                r = find_program(v, host_view, "interpreter", interp, env, &fd, ret_problem);
                if (r < 0 || *ret_problem)
                        goto out;
                via_env = env_program(interp, arg);
                if (via_env) {
                        kb_closep(&fd);
                        r = find_program(v, host_view, "interpreter", via_env, env, &fd, ret_problem);
                        if (r < 0 || *ret_problem)
                                goto out;
                }
        }
        if (resource_dir && uses_resource_dir(argv)) {
                _cleanup_close_ int dfd = -1;
                _cleanup_free_ char *missing = NULL;
                struct stat st;
                r = kb_view_resolve(v, resource_dir, NULL, &dfd, &missing);
                if (r == -ENOMEM)
                        goto out;
                if (r == 0 && (dfd < 0 || fstat(dfd, &st) < 0 || !S_ISDIR(st.st_mode)))
                        r = -ENOTDIR;
                if (r < 0) {
                        r = problem_new("resource folder", resource_dir, r, ret_problem);
                        if (r < 0)
                                goto out;
                        (*ret_problem)->missing = strdup(resource_dir);
                        r = (*ret_problem)->missing ? 0 : -ENOMEM;
                        (*ret_problem)->on_host = host_view && stat(resource_dir, &st) == 0 && S_ISDIR(st.st_mode);
                }
        }
out:
        kb_view_destroy(&v);
        if (r < 0)
                kb_view_problem_free(ret_problem);
        return r;
}

/* The host folder to bind so that the host path missing shows: a program in PREFIX/bin (a venv, a
 * conda env, ~/.local) means PREFIX, which holds what the program loads too; a folder means
 * itself; any other file its folder. NULL for "/" (binding the host's root is never the fix). */
static char *bind_candidate(const char *missing) {
        struct stat st;
        char *c = NULL;
        if (stat(missing, &st) == 0 && S_ISDIR(st.st_mode)) {
                c = strdup(missing);
        } else {
                const char *slash = strrchr(missing, '/');
                if (!slash)
                        return NULL;
                c = strndup(missing, (size_t) (slash - missing));
                if (!c)
                        return NULL;
                const char *last = strrchr(c, '/');
                if (last && last != c && (strcmp(last, "/bin") == 0 || strcmp(last, "/sbin") == 0))
                        c[last - c] = '\0';
        }
        if (c && (c[0] == '\0' || strcmp(c, "/") == 0)) {
                free(c);
                return NULL;
        }
        return c;
}

static size_t strv_count(char *const *v) {
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

/* The smallest binds that make the kernel resolve, found by binding a candidate for each missing
 * path and looking again; stored in p->fix only if the last look found nothing missing. */
static int find_fix(const kb_sandbox_policy *policy, char *const *argv, char *const *env, const char *resource_dir,
                    kb_view_problem *p) {
        size_t n_base = strv_count(policy->ro_paths);
        char **paths = calloc(n_base + VIEW_MAX_FIX_ROUNDS + 1, sizeof(char *));
        size_t n = n_base;
        int r = 0;
        if (!paths)
                return -ENOMEM;
        memcpy(paths, policy->ro_paths ? policy->ro_paths : paths, n_base * sizeof(char *));
        const char *missing = p->missing;
        kb_view_problem *again = NULL;
        for (int round = 0; round < VIEW_MAX_FIX_ROUNDS && missing; round++) {
                char *c = bind_candidate(missing);
                bool seen = false;
                for (size_t i = 0; c && i < n; i++)
                        seen |= strcmp(paths[i], c) == 0;
                if (!c || seen) {
                        free(c);
                        break;
                }
                paths[n++] = c;
                kb_sandbox_policy wider = *policy;
                wider.ro_paths = paths;
                kb_view_problem_free(&again);
                r = check_once(&wider, argv, env, resource_dir, &again);
                if (r < 0)
                        break;
                if (!again) {
                        char **fix = calloc(n - n_base + 1, sizeof(char *));
                        if (!fix) {
                                r = -ENOMEM;
                                break;
                        }
                        for (size_t i = n_base; i < n; i++)
                                fix[i - n_base] = TAKE_PTR(paths[i]);
                        free(p->fix);
                        p->fix = fix;
                        break;
                }
                missing = again->on_host ? again->missing : NULL;
        }
        kb_view_problem_free(&again);
        for (size_t i = n_base; i < n; i++)
                free(paths[i]);
        free(paths);
        return r;
}

/* Host view: the unpacked image (a folder with a real usr/) that holds the kernelspec and, at
 * the same place inside it, the missing path: --rootfs would run the kernel there. */
static int find_rootfs(const char *resource_dir, const char *missing, char **ret) {
        _cleanup_free_ char *dir = resource_dir ? strdup(resource_dir) : NULL;
        *ret = NULL;
        if (!dir || !missing || missing[0] != '/')
                return resource_dir && !dir ? -ENOMEM : 0;
        for (char *slash = strrchr(dir, '/'); slash && slash != dir; slash = strrchr(dir, '/')) {
                *slash = '\0';
                char usr[PATH_MAX], inside[PATH_MAX];
                struct stat st;
                if (snprintf(usr, sizeof(usr), "%s/usr", dir) >= (int) sizeof(usr) ||
                    snprintf(inside, sizeof(inside), "%s%s", dir, missing) >= (int) sizeof(inside))
                        return 0;
                if (lstat(usr, &st) == 0 && S_ISDIR(st.st_mode) && lstat(inside, &st) == 0) {
                        *ret = strdup(dir);
                        return *ret ? 0 : -ENOMEM;
                }
        }
        return 0;
}

int kb_view_check_kernel(const kb_sandbox_policy *policy, char *const *kernel_argv, char *const *env,
                         const char *resource_dir, kb_view_problem **ret_problem) {
        if (!policy || !kernel_argv || !kernel_argv[0] || !kernel_argv[0][0] || !ret_problem)
                return -EINVAL;
        kb_view_problem *p = NULL;
        int r = check_once(policy, kernel_argv, env, resource_dir, &p);
        if (r < 0 || !p) {
                *ret_problem = NULL;
                return r;
        }
        if (!policy->rootfs) {
                if (p->on_host)
                        r = find_fix(policy, kernel_argv, env, resource_dir, p);
                if (r >= 0 && !p->on_host)
                        r = find_rootfs(resource_dir, p->missing ? p->missing : p->named, &p->rootfs);
        }
        if (r < 0) {
                kb_view_problem_free(&p);
                return r;
        }
        *ret_problem = p;
        return 0;
}
