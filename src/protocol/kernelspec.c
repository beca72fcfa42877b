/* kernelspec.c: Jupyter kernelspec discovery, case-insensitive lookup, kernel.json parsing, argv. */
#include "kbound/kernelspec.h"
#include "kbound/error.h"
#include "protocol/kernelspec-internal.h"
#include "base/cleanup.h"
#include "base/strv.h"
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>

/* jupyter_core's SYSTEM_JUPYTER_PATH on Linux; each gets "/kernels". */
static const char *const system_jupyter_dirs[] = {
        "/usr/local/share/jupyter",
        "/usr/share/jupyter",
};

/* Inside an image kbound reads no environment: only Jupyter's fixed locations. /opt/conda is the
 * sys.prefix of conda-based images (jupyter_core's ENV_JUPYTER_PATH there), which precedes the
 * system ones; the user data dir would be /workspace/.local/share/jupyter, which starts empty. */
static const char *const rootfs_kernels_dirs[] = {
        "/opt/conda/share/jupyter/kernels",
        "/usr/local/share/jupyter/kernels",
        "/usr/share/jupyter/kernels",
};

/* Python's `os.environ.get(X)` truthiness: set and non-empty. */
static const char *env_nonempty(char *const *envp, const char *name) {
        const char *v = kb_env_get(envp, name);
        return v && v[0] ? v : NULL;
}

static char *path_join(const char *a, const char *b) {
        char *out = NULL;
        if (asprintf(&out, "%s/%s", a, b) < 0)
                return NULL;
        return out;
}

/* Adds dir + "/kernels" unless an identical entry is already there (first occurrence wins anyway). */
static int add_kernels_dir(kb_strv *sv, const char *dir, size_t dir_len) {
        /* jupyter_core strips trailing separators from JUPYTER_PATH entries. */
        while (dir_len > 1 && dir[dir_len - 1] == '/')
                dir_len--;
        char *out = NULL;
        if (asprintf(&out, "%.*s/kernels", (int) dir_len, dir) < 0)
                return -ENOMEM;
        if (kb_strv_contains(sv, out)) {
                free(out);
                return 0;
        }
        return kb_strv_push_take(sv, out);
}

/* Home directory: $HOME, or the passwd entry as Python's expanduser falls back to. NULL if neither. */
static char *home_dir(char *const *envp) {
        const char *home = env_nonempty(envp, "HOME");
        if (home)
                return strdup(home);

        struct passwd pw, *result = NULL;
        char buf[4096];
        if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &result) != 0 || !result || !result->pw_dir ||
            result->pw_dir[0] == '\0')
                return NULL;
        return strdup(result->pw_dir);
}

/* jupyter_core's envset(): set, and not one of its false words. */
static bool env_true(const char *v) {
        static const char *const falses[] = {"no", "n", "false", "off", "0", "0.0"};
        for (size_t i = 0; i < KB_ELEMENTSOF(falses); i++)
                if (strcasecmp(v, falses[i]) == 0)
                        return false;
        return true;
}

static bool exists_at(const char *prefix, const char *name, mode_t type) {
        _cleanup_free_ char *path = path_join(prefix, name);
        struct stat st;
        return path && stat(path, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

/* jupyter_core's prefer_environment_over_user() for an environment at prefix. */
static bool prefer_env(char *const *envp, const char *prefix) {
        const char *flag = kb_env_get(envp, "JUPYTER_PREFER_ENV_PATH");
        if (flag)
                return env_true(flag);
        struct stat st;
        if (stat(prefix, &st) < 0 || st.st_uid != geteuid())
                return false;
        if (exists_at(prefix, "pyvenv.cfg", S_IFREG))
                return true;
        return exists_at(prefix, "conda-meta", S_IFDIR) && !exists_at(prefix, "condabin", S_IFDIR);
}

/* PREFIX/share/jupyter of each prefix placed before (first true) or after the user's folder. */
static int add_prefix_dirs(kb_strv *sv, char *const *envp, char *const *prefixes, bool preferred) {
        for (char *const *p = prefixes; p && *p; p++) {
                if ((*p)[0] != '/' || prefer_env(envp, *p) != preferred)
                        continue;
                _cleanup_free_ char *data = path_join(*p, "share/jupyter");
                if (!data)
                        return -ENOMEM;
                /* jupyter_core: ENV_JUPYTER_PATH minus what SYSTEM_JUPYTER_PATH has. */
                bool system = false;
                for (size_t i = 0; i < KB_ELEMENTSOF(system_jupyter_dirs); i++)
                        system |= strcmp(data, system_jupyter_dirs[i]) == 0;
                int r = system ? 0 : add_kernels_dir(sv, data, strlen(data));
                if (r < 0)
                        return r;
        }
        return 0;
}

int kb_kernelspec_search_path(char *const *envp, char ***ret_dirs) {
        return kb_kernelspec_search_path_prefixes(envp, NULL, ret_dirs);
}

int kb_kernelspec_search_path_prefixes(char *const *envp, char *const *prefixes, char ***ret_dirs) {
        kb_strv sv = {0};
        int r = 0;

        if (!ret_dirs)
                return -EINVAL;

        const char *jupyter_path = kb_env_get(envp, "JUPYTER_PATH");
        if (jupyter_path) {
                /* Empty entries would mean "kernels" relative to the cwd: skipped, not guessed at. */
                const char *p = jupyter_path;
                for (;;) {
                        const char *colon = strchr(p, ':');
                        size_t len = colon ? (size_t) (colon - p) : strlen(p);
                        if (len > 0 && (r = add_kernels_dir(&sv, p, len)) < 0)
                                goto fail;
                        if (!colon)
                                break;
                        p = colon + 1;
                }
        }

        if ((r = add_prefix_dirs(&sv, envp, prefixes, true)) < 0)
                goto fail;
        const char *data_dir = env_nonempty(envp, "JUPYTER_DATA_DIR");
        if (data_dir) {
                r = add_kernels_dir(&sv, data_dir, strlen(data_dir));
        } else {
                const char *xdg = env_nonempty(envp, "XDG_DATA_HOME");
                _cleanup_free_ char *base = NULL;
                if (xdg)
                        base = path_join(xdg, "jupyter");
                else {
                        _cleanup_free_ char *home = home_dir(envp);
                        if (home)
                                base = path_join(home, ".local/share/jupyter");
                        else
                                base = NULL; /* no home at all: no user data dir */
                }
                if (base)
                        r = add_kernels_dir(&sv, base, strlen(base));
        }
        if (r < 0 || (r = add_prefix_dirs(&sv, envp, prefixes, false)) < 0)
                goto fail;

        for (size_t i = 0; i < KB_ELEMENTSOF(system_jupyter_dirs); i++) {
                r = add_kernels_dir(&sv, system_jupyter_dirs[i], strlen(system_jupyter_dirs[i]));
                if (r < 0)
                        goto fail;
        }
        return kb_strv_take(&sv, ret_dirs);
fail:
        kb_strv_clear(&sv);
        return r;
}

/* Adds prefix unless it is there already. */
static int add_unique(kb_strv *sv, const char *prefix) {
        return kb_strv_contains(sv, prefix) ? 0 : kb_strv_push_take(sv, strdup(prefix));
}

int kb_kernelspec_env_prefixes(char *const *envp, char ***ret_prefixes) {
        static const char *const activated[] = {"VIRTUAL_ENV", "CONDA_PREFIX"};
        kb_strv sv = {0};
        int r = 0;
        struct stat st;

        if (!ret_prefixes)
                return -EINVAL;
        for (size_t i = 0; r >= 0 && i < KB_ELEMENTSOF(activated); i++) {
                const char *v = env_nonempty(envp, activated[i]);
                if (v && v[0] == '/' && stat(v, &st) == 0 && S_ISDIR(st.st_mode))
                        r = add_unique(&sv, v);
        }
        /* The python3 that `jupyter` on this PATH would most likely run under: its folder's parent
         * is its sys.prefix when it is a venv's or conda env's bin/ (a link to the base python
         * inside a venv is not followed: the venv is the prefix). */
        const char *path = kb_env_get(envp, "PATH");
        for (const char *p = path ? path : ""; r >= 0 && *p;) {
                const char *colon = strchrnul(p, ':');
                size_t len = (size_t) (colon - p);
                _cleanup_free_ char *bin = len > 0 && p[0] == '/' ? strndup(p, len) : NULL;
                if (bin && exists_at(bin, "python3", S_IFREG)) {
                        char *slash = strrchr(bin, '/');
                        if (slash && slash != bin && strcmp(slash, "/bin") == 0) {
                                *slash = '\0';
                                if (exists_at(bin, "pyvenv.cfg", S_IFREG) || exists_at(bin, "conda-meta", S_IFDIR))
                                        r = add_unique(&sv, bin);
                        }
                        break;
                }
                p = *colon ? colon + 1 : colon;
        }
        if (r < 0) {
                kb_strv_clear(&sv);
                return r;
        }
        return kb_strv_take(&sv, ret_prefixes);
}

/* Reads dir/kernel.json (at most KB_KERNELSPEC_MAX_BYTES) into a malloc'd buffer. */
static int read_kernel_json(const char *dir, char **ret_buf, size_t *ret_len) {
        _cleanup_free_ char *path = path_join(dir, "kernel.json");
        if (!path)
                return -ENOMEM;
        return kb_read_file(AT_FDCWD, path, 0, KB_KERNELSPEC_MAX_BYTES, ret_buf, ret_len);
}

static void ascii_lower(char *s) {
        for (; *s; s++)
                *s = (char) tolower((unsigned char) *s);
}

/* Whether a folder name says nothing of a kernel: "", "." or "..". */
static bool says_nothing(const char *name) {
        return name[0] == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

/* A copy of path without trailing slashes ("/" stays) in *ret_copy, and in *ret_base its last
 * component, pointing into that copy. Returns 0 or -ENOMEM (nothing written). */
static int split_base(const char *path, char **ret_copy, const char **ret_base) {
        char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        size_t len = strlen(copy);
        while (len > 1 && copy[len - 1] == '/')
                copy[--len] = '\0';
        const char *slash = strrchr(copy, '/');
        *ret_base = slash ? slash + 1 : copy;
        *ret_copy = copy;
        return 0;
}

/* Loads dir/kernel.json as the kernel called name (already lowercased by the caller); a broken
 * one's error names the file. */
static int load_named(const char *dir, const char *name, kb_kernelspec **ret, kb_error **ret_error) {
        _cleanup_free_ char *resolved = realpath(dir, NULL);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r;

        if (!resolved)
                return -errno;
        r = read_kernel_json(resolved, &buf, &len);
        if (r < 0)
                return r;
        r = kernelspec_parse(buf, len, name, resolved, ret, ret_error);
        if (r < 0)
                kb_error_prefix(ret_error, "%s/kernel.json", resolved);
        return r;
}

/* kb_kernelspec_load with the words of a failure. */
static int load_dir(const char *dir, kb_kernelspec **ret, kb_error **ret_error) {
        if (!dir || !ret || dir[0] == '\0')
                return -EINVAL;

        /* The name is the folder's basename as given (a symlinked spec keeps its link's name, as
         * in Jupyter); "." or ".." say nothing, so those use the resolved folder's name. */
        _cleanup_free_ char *copy = NULL;
        const char *base = NULL;
        if (split_base(dir, &copy, &base) < 0)
                return -ENOMEM;

        _cleanup_free_ char *resolved = NULL;
        if (says_nothing(base)) {
                resolved = realpath(dir, NULL);
                if (!resolved)
                        return -errno;
                const char *slash = strrchr(resolved, '/');
                base = slash ? slash + 1 : resolved;
                if (base[0] == '\0')
                        return -EINVAL; /* "/" itself */
        }
        _cleanup_free_ char *name = strdup(base);
        if (!name)
                return -ENOMEM;
        ascii_lower(name);
        return load_named(dir, name, ret, ret_error);
}

int kb_kernelspec_load(const char *dir, kb_kernelspec **ret) {
        return load_dir(dir, ret, NULL);
}

/* Opens path inside the image whose root folder is root_fd, resolving every symlink and ".." as if
 * root_fd were "/" (RESOLVE_IN_ROOT), which is what the kernel sees once the image is its root.
 * Trust boundary: an image is untrusted content, and this is what keeps its links (say
 * usr/share/jupyter -> /etc) from making kbound read the host's files. Magic links (/proc/self/...)
 * are refused outright. Returns an fd (O_CLOEXEC added) or -errno (-ENOSYS: kernel before 5.6). */
static int open_in_root(int root_fd, const char *path, int flags) {
        /* openat2 refuses O_PATH combined with anything but O_DIRECTORY, O_NOFOLLOW, O_CLOEXEC. */
        struct open_how how = {
                .flags = (uint64_t) (flags | O_CLOEXEC | ((flags & O_PATH) ? 0 : O_NOCTTY)),
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        long fd = syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
        return fd < 0 ? -errno : (int) fd;
}

/* Opens a directory on the host (root_fd < 0) or inside an image (see open_in_root). */
static DIR *open_dir(int root_fd, const char *path) {
        if (root_fd < 0)
                return opendir(path);
        int fd = open_in_root(root_fd, path, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return NULL;
        DIR *d = fdopendir(fd);
        if (!d)
                close(fd);
        return d;
}

/* The name of d's next entry but "." and "..", or NULL at its end (a folder that cannot be read
 * further ends there: unreadable directories count as empty, as in Jupyter). */
static const char *next_entry(DIR *d) {
        struct dirent *de = readdir(d);
        while (de && (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0))
                de = readdir(d);
        return de ? de->d_name : NULL;
}

/* True if kernels_dir/entry is a folder holding a regular kernel.json (jupyter_client's
 * _is_kernel_dir); dir_fd is kernels_dir opened on the host, used when root_fd < 0. */
static bool is_kernel_dir(int root_fd, const char *kernels_dir, int dir_fd, const char *entry) {
        _cleanup_free_ char *rel = path_join(entry, "kernel.json");
        struct stat st;

        if (!rel)
                return false;
        if (root_fd < 0)
                return fstatat(dir_fd, rel, &st, 0) == 0 && S_ISREG(st.st_mode);
        _cleanup_free_ char *full = path_join(kernels_dir, rel);
        if (!full)
                return false;
        _cleanup_close_ int fd = open_in_root(root_fd, full, O_PATH);
        return fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/* Finds, in one kernels directory, the entry whose lowercase name is lower_name and that holds a
 * kernel.json. Several spellings ("IR", "ir") may match: the exact lowercase one wins, then the
 * strcmp-smallest, so the choice never depends on readdir order. Returns 1 and the entry, 0 if
 * none, or -ENOMEM. Unreadable directories count as empty, as in Jupyter. root_fd as open_dir. */
static int find_in_dir(int root_fd, const char *kernels_dir, const char *lower_name, char **ret_entry) {
        DIR *d = open_dir(root_fd, kernels_dir);
        _cleanup_free_ char *best = NULL;

        if (!d)
                return 0;
        for (const char *entry = next_entry(d); entry; entry = next_entry(d)) {
                if (strcasecmp(entry, lower_name) != 0)
                        continue;
                if (best && strcmp(best, lower_name) == 0)
                        continue;
                if (best && strcmp(entry, lower_name) != 0 && strcmp(entry, best) >= 0)
                        continue;
                if (!is_kernel_dir(root_fd, kernels_dir, dirfd(d), entry))
                        continue;
                char *copy = strdup(entry);
                if (!copy) {
                        closedir(d);
                        return -ENOMEM;
                }
                free(best);
                best = copy;
        }
        closedir(d);
        if (!best)
                return 0;
        *ret_entry = TAKE_PTR(best);
        return 1;
}

static int load_named_in_root(int root_fd, const char *spec_dir, const char *name, kb_kernelspec **ret,
                              kb_error **ret_error);

/* The kernel called name (any case) in the first of search_dirs that has it, loaded from the host
 * (root_fd < 0) or from inside the image rooted at root_fd. -ENOENT when none has it. */
static int find_by_name(int root_fd, const char *name, char *const *search_dirs, kb_kernelspec **ret,
                        kb_error **ret_error) {
        if (says_nothing(name))
                return -ENOENT;

        _cleanup_free_ char *lower = strdup(name);
        if (!lower)
                return -ENOMEM;
        ascii_lower(lower);

        for (char *const *dir = search_dirs; dir && *dir; dir++) {
                _cleanup_free_ char *entry = NULL;
                int r = find_in_dir(root_fd, *dir, lower, &entry);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                _cleanup_free_ char *spec_dir = path_join(*dir, entry);
                if (!spec_dir)
                        return -ENOMEM;
                return root_fd < 0 ? load_named(spec_dir, lower, ret, ret_error)
                                   : load_named_in_root(root_fd, spec_dir, lower, ret, ret_error);
        }
        return -ENOENT;
}

static int find_in_root(int root_fd, const char *name_or_path, char *const *search_dirs, kb_kernelspec **ret,
                        kb_error **ret_error);

int kb_kernelspec_lookup(int root_fd, const char *name_or_path, char *const *search_dirs, kb_kernelspec **ret,
                         kb_error **ret_error) {
        if (root_fd >= 0)
                return find_in_root(root_fd, name_or_path, search_dirs, ret, ret_error);
        if (!name_or_path || !ret)
                return -EINVAL;
        if (strchr(name_or_path, '/'))
                return load_dir(name_or_path, ret, ret_error);
        return find_by_name(-1, name_or_path, search_dirs, ret, ret_error);
}

int kb_kernelspec_find(const char *name_or_path, char *const *search_dirs, kb_kernelspec **ret) {
        return kb_kernelspec_lookup(-1, name_or_path, search_dirs, ret, NULL);
}

/* The path of fd as seen from inside the image rooted at root_fd ("/usr/share/..."): both fds'
 * host paths from /proc/self/fd, the root's cut off. -EXDEV if fd is not under the root (cannot
 * happen after RESOLVE_IN_ROOT, unless the image is renamed under us). */
static int path_in_root(int root_fd, int fd, char **ret) {
        char link[64], root_path[PATH_MAX], path[PATH_MAX];
        ssize_t n;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", root_fd);
        n = readlink(link, root_path, sizeof(root_path) - 1);
        if (n <= 0)
                return n < 0 ? -errno : -EIO;
        root_path[n] = '\0';
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, path, sizeof(path) - 1);
        if (n <= 0)
                return n < 0 ? -errno : -EIO;
        path[n] = '\0';
        size_t rl = strcmp(root_path, "/") == 0 ? 0 : strlen(root_path);
        if (strncmp(path, root_path, rl) != 0 || (path[rl] != '/' && path[rl] != '\0'))
                return -EXDEV;
        *ret = strdup(path[rl] ? path + rl : "/");
        return *ret ? 0 : -ENOMEM;
}

/* Loads spec_dir/kernel.json inside the image as the kernel called name: resource_dir is the
 * folder's canonical path inside the image, so "{resource_dir}" means the same folder to the
 * kernel. kernel.json itself must not be a symlink (O_NOFOLLOW), and is read with the same
 * ceilings and strict parser as on the host. */
static int load_named_in_root(int root_fd, const char *spec_dir, const char *name, kb_kernelspec **ret,
                              kb_error **ret_error) {
        _cleanup_close_ int dir_fd = open_in_root(root_fd, spec_dir, O_RDONLY | O_DIRECTORY);
        _cleanup_free_ char *inside = NULL, *buf = NULL;
        size_t len = 0;
        int r;

        if (dir_fd < 0)
                return dir_fd;
        r = path_in_root(root_fd, dir_fd, &inside);
        if (r < 0)
                return r;
        r = kb_read_file(dir_fd, "kernel.json", O_NOFOLLOW, KB_KERNELSPEC_MAX_BYTES, &buf, &len);
        if (r < 0)
                return r;
        r = kernelspec_parse(buf, len, name, inside, ret, ret_error);
        if (r < 0)
                kb_error_prefix(ret_error, "%s/kernel.json", strcmp(inside, "/") == 0 ? "" : inside);
        return r;
}

int kb_kernelspec_rootfs_search_path(char ***ret_dirs) {
        kb_strv sv = {0};
        if (!ret_dirs)
                return -EINVAL;
        for (size_t i = 0; i < KB_ELEMENTSOF(rootfs_kernels_dirs); i++) {
                int r = kb_strv_push_take(&sv, strdup(rootfs_kernels_dirs[i]));
                if (r < 0) {
                        kb_strv_clear(&sv);
                        return r;
                }
        }
        return kb_strv_take(&sv, ret_dirs);
}

/* qsort's comparison for an array of strings (strcmp order). */
static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Adds home/.local/share/jupyter/kernels for each folder in the image's /home, by name. */
static int add_image_homes(int root_fd, kb_strv *sv) {
        DIR *d = open_dir(root_fd, "/home");
        kb_strv names = {0};
        int r = 0;
        if (!d)
                return 0;
        for (struct dirent *de; r >= 0 && (de = readdir(d));) {
                if (de->d_name[0] == '.')
                        continue;
                _cleanup_free_ char *home = path_join("/home", de->d_name);
                if (!home) {
                        r = -ENOMEM;
                        break;
                }
                _cleanup_close_ int fd = open_in_root(root_fd, home, O_RDONLY | O_DIRECTORY);
                if (fd >= 0)
                        r = kb_strv_push_take(&names, strdup(de->d_name));
        }
        closedir(d);
        if (r >= 0 && names.n > 0)
                qsort(names.items, names.n, sizeof(char *), cmp_str);
        for (size_t i = 0; r >= 0 && i < names.n; i++) {
                char *dir = NULL;
                if (asprintf(&dir, "/home/%s/.local/share/jupyter/kernels", names.items[i]) < 0)
                        r = -ENOMEM;
                else
                        r = kb_strv_push_take(sv, dir);
        }
        kb_strv_clear(&names);
        return r;
}

int kb_kernelspec_rootfs_search_path_in(int root_fd, char *const *prefixes, char ***ret_dirs) {
        kb_strv sv = {0};
        int r;
        if (root_fd < 0 || !ret_dirs)
                return -EINVAL;
        /* The users' own folders first, as jupyter_core puts the user's before the environment's
         * (an image's user is not known here, so every home the image has, root's first). */
        r = kb_strv_push_take(&sv, strdup("/root/.local/share/jupyter/kernels"));
        if (r >= 0)
                r = add_image_homes(root_fd, &sv);
        for (char *const *p = prefixes; r >= 0 && p && *p; p++) {
                if ((*p)[0] != '/')
                        continue;
                _cleanup_free_ char *dir = path_join(*p, "share/jupyter/kernels");
                r = dir ? (kb_strv_contains(&sv, dir) ? 0 : kb_strv_push_take(&sv, TAKE_PTR(dir))) : -ENOMEM;
        }
        for (size_t i = 0; r >= 0 && i < KB_ELEMENTSOF(rootfs_kernels_dirs); i++)
                r = kb_strv_contains(&sv, rootfs_kernels_dirs[i])
                            ? 0
                            : kb_strv_push_take(&sv, strdup(rootfs_kernels_dirs[i]));
        if (r < 0) {
                kb_strv_clear(&sv);
                return r;
        }
        return kb_strv_take(&sv, ret_dirs);
}

int kb_kernelspec_find_in_root(int root_fd, const char *name_or_path, char *const *search_dirs, kb_kernelspec **ret) {
        return root_fd < 0 ? -EINVAL : find_in_root(root_fd, name_or_path, search_dirs, ret, NULL);
}

static int find_in_root(int root_fd, const char *name_or_path, char *const *search_dirs, kb_kernelspec **ret,
                        kb_error **ret_error) {
        if (root_fd < 0 || !name_or_path || !ret)
                return -EINVAL;
        if (strchr(name_or_path, '/')) {
                /* A folder inside the image: relative would mean relative to nothing the user sees. */
                if (name_or_path[0] != '/')
                        return -EINVAL;
                _cleanup_free_ char *copy = NULL;
                const char *base = NULL;
                if (split_base(name_or_path, &copy, &base) < 0)
                        return -ENOMEM;
                if (says_nothing(base))
                        return -EINVAL;
                _cleanup_free_ char *name = strdup(base);
                if (!name)
                        return -ENOMEM;
                ascii_lower(name);
                return load_named_in_root(root_fd, copy, name, ret, ret_error);
        }
        return find_by_name(root_fd, name_or_path, search_dirs, ret, ret_error);
}

/* Value of PATH in env, or the sandbox's default. */
static const char *program_search_path(char *const *env) {
        const char *path = kb_env_get(env, "PATH");
        return path ? path : KB_SANDBOX_PATH;
}

/* 0 and the canonical in-image path if candidate is an executable regular file in the image,
 * -ENOENT if absent, -EACCES if there but not executable by anyone, -errno otherwise. */
static int try_program(int root_fd, const char *candidate, char **ret) {
        _cleanup_close_ int fd = open_in_root(root_fd, candidate, O_PATH);
        struct stat st;
        if (fd < 0)
                return fd == -ENOTDIR || fd == -ELOOP ? -ENOENT : fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || (st.st_mode & 0111) == 0)
                return -EACCES;
        return path_in_root(root_fd, fd, ret);
}

int kb_kernelspec_find_program_in_root(int root_fd, const char *program, char *const *env, char **ret_path) {
        if (root_fd < 0 || !program || !program[0] || !ret_path)
                return -EINVAL;
        if (strchr(program, '/'))
                return program[0] == '/' ? try_program(root_fd, program, ret_path) : -EINVAL;
        /* As execvp in bwrap does: each absolute PATH entry in order; a non-executable match is
         * remembered but the search goes on. */
        int best = -ENOENT;
        const char *cursor = program_search_path(env);
        for (;;) {
                _cleanup_free_ char *candidate = NULL;
                int more = kb_path_next(&cursor, program, &candidate);
                if (more <= 0)
                        return more < 0 ? more : best;
                int r = try_program(root_fd, candidate, ret_path);
                if (r >= 0)
                        return 0;
                if (r == -ENOMEM)
                        return r;
                if (r != -ENOENT)
                        best = r;
        }
}

/* Adds the lowercase names of every kernel folder in kernels_dir to names (deduplicated). */
static int collect_names(int root_fd, const char *kernels_dir, kb_strv *names) {
        DIR *d = open_dir(root_fd, kernels_dir);
        int r = 0;

        if (!d)
                return 0;
        for (const char *entry = next_entry(d); entry; entry = next_entry(d)) {
                if (!is_kernel_dir(root_fd, kernels_dir, dirfd(d), entry))
                        continue;
                char *lower = strdup(entry);
                if (!lower) {
                        r = -ENOMEM;
                        break;
                }
                ascii_lower(lower);
                if (kb_strv_contains(names, lower)) {
                        free(lower);
                        continue;
                }
                r = kb_strv_push_take(names, lower);
                if (r < 0)
                        break;
        }
        closedir(d);
        return r;
}

static int cmp_spec_name(const void *a, const void *b) {
        const kb_kernelspec *sa = *(kb_kernelspec *const *) a;
        const kb_kernelspec *sb = *(kb_kernelspec *const *) b;
        return strcmp(sa->name, sb->name);
}

/* Every kernel folder name across search_dirs (lowercase, deduplicated, in search order), on the
 * host (root_fd < 0) or inside an image. */
static int all_names(int root_fd, char *const *search_dirs, char ***ret) {
        kb_strv collected = {0};
        for (char *const *dir = search_dirs; dir && *dir; dir++) {
                int r = collect_names(root_fd, *dir, &collected);
                if (r < 0) {
                        kb_strv_clear(&collected);
                        return r;
                }
        }
        return kb_strv_take(&collected, ret);
}

int kb_kernelspec_names_in_root(int root_fd, char *const *search_dirs, char ***ret_names) {
        char **names = NULL;
        size_t n = 0;
        if (root_fd < 0 || !ret_names)
                return -EINVAL;
        int r = all_names(root_fd, search_dirs, &names);
        if (r < 0)
                return r;
        while (names[n])
                n++;
        qsort(names, n, sizeof(*names), cmp_str);
        *ret_names = names;
        return 0;
}

/* kb_kernelspec_list on the host (root_fd < 0) or inside an image. */
static int list_specs(int root_fd, char *const *search_dirs, kb_kernelspec ***ret, size_t *ret_n_broken) {
        _cleanup_strv_ char **names = NULL;
        kb_kernelspec **list = NULL;
        size_t n = 0, n_broken = 0;
        int r = 0;

        if (!ret)
                return -EINVAL;
        r = all_names(root_fd, search_dirs, &names);
        if (r < 0)
                return r;

        size_t n_names = 0;
        while (names[n_names])
                n_names++;
        list = calloc(n_names + 1, sizeof(*list));
        if (!list)
                return -ENOMEM;

        /* Resolving each name through find gives list exactly find's first-wins rules: a name
         * whose first folder is broken is broken, even if a later folder has a good one. */
        for (size_t i = 0; i < n_names; i++) {
                kb_kernelspec *spec = NULL;
                r = root_fd < 0 ? kb_kernelspec_find(names[i], search_dirs, &spec)
                                : kb_kernelspec_find_in_root(root_fd, names[i], search_dirs, &spec);
                if (r == -ENOMEM) {
                        kb_kernelspec_list_free(list);
                        return r;
                }
                if (r < 0) {
                        n_broken++;
                        continue;
                }
                list[n++] = spec;
        }
        qsort(list, n, sizeof(*list), cmp_spec_name);
        *ret = list;
        if (ret_n_broken)
                *ret_n_broken = n_broken;
        return 0;
}

int kb_kernelspec_list(char *const *search_dirs, kb_kernelspec ***ret, size_t *ret_n_broken) {
        return list_specs(-1, search_dirs, ret, ret_n_broken);
}

int kb_kernelspec_list_in_root(int root_fd, char *const *search_dirs, kb_kernelspec ***ret, size_t *ret_n_broken) {
        if (root_fd < 0)
                return -EINVAL;
        return list_specs(root_fd, search_dirs, ret, ret_n_broken);
}

void kb_kernelspec_list_free(kb_kernelspec **list) {
        if (!list)
                return;
        for (kb_kernelspec **p = list; *p; p++)
                kb_kernelspec_destroy(p);
        free(list);
}

static const struct {
        const char *pattern;
        size_t len;
} placeholders[] = {
        {"{connection_file}", sizeof("{connection_file}") - 1},
        {"{resource_dir}", sizeof("{resource_dir}") - 1},
};

/* Replaces every placeholder in s in one left-to-right pass (replacements are not rescanned, so a
 * connection-file path containing "{resource_dir}" stays as it is). values[] matches placeholders. */
static char *substitute(const char *s, const char *const values[KB_ELEMENTSOF(placeholders)]) {
        size_t out_len = 0;
        size_t value_lens[KB_ELEMENTSOF(placeholders)];

        for (size_t k = 0; k < KB_ELEMENTSOF(placeholders); k++)
                value_lens[k] = strlen(values[k]);

        /* Two passes over the same scan: first measure, then copy. */
        char *out = NULL;
        for (int pass = 0; pass < 2; pass++) {
                size_t o = 0;
                for (const char *p = s; *p;) {
                        size_t k;
                        for (k = 0; k < KB_ELEMENTSOF(placeholders); k++)
                                if (strncmp(p, placeholders[k].pattern, placeholders[k].len) == 0)
                                        break;
                        if (k < KB_ELEMENTSOF(placeholders)) {
                                if (out)
                                        memcpy(out + o, values[k], value_lens[k]);
                                if (__builtin_add_overflow(o, value_lens[k], &o))
                                        return NULL;
                                p += placeholders[k].len;
                        } else {
                                if (out)
                                        out[o] = *p;
                                o++;
                                p++;
                        }
                }
                if (pass == 0) {
                        if (__builtin_add_overflow(o, (size_t) 1, &out_len))
                                return NULL;
                        out = malloc(out_len);
                        if (!out)
                                return NULL;
                } else {
                        out[o] = '\0';
                }
        }
        return out;
}

int kb_kernelspec_argv(const kb_kernelspec *spec, const char *connection_file, char ***ret_argv) {
        kb_strv sv = {0};

        if (!spec || !spec->argv || !connection_file || !ret_argv)
                return -EINVAL;
        const char *const values[KB_ELEMENTSOF(placeholders)] = {connection_file,
                                                                 spec->resource_dir ? spec->resource_dir : ""};
        for (char **a = spec->argv; *a; a++) {
                int r = kb_strv_push_take(&sv, substitute(*a, values));
                if (r < 0) {
                        kb_strv_clear(&sv);
                        return r;
                }
        }
        return kb_strv_take(&sv, ret_argv);
}
