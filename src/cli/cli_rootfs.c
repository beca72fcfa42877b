/* cli_rootfs.c: where kernels come from (the host, --rootfs DIR, --image PATH) and the preflight
 * that their sandbox will show their program, with messages that name the kernel, the image, the
 * path and the fix. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <kbound/sandbox.h>
#include <kbound/view.h>
#include "cli.h"

int cli_rootfs_open(const char *arg, char **ret_path, int *ret_fd) {
        /* The folder's name comes from the user (trusted); its content does not. */
        _cleanup_free_ char *path = realpath(arg, NULL);
        if (!path) {
                cli_error("--rootfs %s: %s", arg, strerror(errno));
                return KB_EXIT_USAGE;
        }
        _cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                cli_error("--rootfs %s: not a directory we can open: %s", arg, strerror(errno));
                return KB_EXIT_USAGE;
        }
        if (strcmp(path, "/") == 0) {
                cli_error("--rootfs /: that is the host's own root; leave --rootfs out to use it");
                return KB_EXIT_USAGE;
        }
        struct stat st;
        int r = fstatat(fd, "usr", &st, AT_SYMLINK_NOFOLLOW);
        if (r < 0 || !S_ISDIR(st.st_mode)) {
                cli_error("--rootfs %s: not a root filesystem: %s; pass the folder an image was unpacked into "
                          "(e.g. `docker export IMAGE | tar -x -C DIR`)",
                          path,
                          r < 0                 ? "it has no usr/ directory"
                          : S_ISLNK(st.st_mode) ? "its usr is a symlink, which kbound does not follow in an image"
                                                : "its usr is not a directory");
                return KB_EXIT_USAGE;
        }
        *ret_path = TAKE_PTR(path);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* The existing kernelspec name nearest to name (a typo: "pyhton3"), or NULL: on the host
 * (root_fd < 0) from kb_kernelspec_list, in an image from kb_kernelspec_names_in_root. Returns a
 * malloc'd name. */
static char *nearest_kernel(const char *name, int root_fd, char *const *dirs) {
        const char *names[256];
        size_t n = 0;
        char *found = NULL;
        kb_kernelspec **list = NULL;
        char **in_root = NULL;
        if (root_fd < 0 && kb_kernelspec_list(dirs, &list, NULL) >= 0) {
                for (kb_kernelspec **s = list; *s && n < KB_ELEMENTSOF(names); s++)
                        names[n++] = (*s)->name;
        } else if (root_fd >= 0 && kb_kernelspec_names_in_root(root_fd, dirs, &in_root) >= 0) {
                for (char **s = in_root; *s && n < KB_ELEMENTSOF(names); s++)
                        names[n++] = *s;
        }
        const char *guess = n ? cli_suggest(name, strlen(name), names, n) : NULL;
        if (guess)
                found = strdup(guess);
        kb_kernelspec_list_free(list);
        kb_strv_free(in_root);
        return found;
}

/* Why a kernelspec lookup failed, naming the kernel (and the image), what was searched and the
 * nearest name for a typo, or the kernel.json and what is wrong with it (error, from
 * kb_kernelspec_lookup). */
static void explain_find_error(const char *name, const char *rootfs, int root_fd, char *const *dirs, int r,
                               const kb_error *error) {
        char where[PATH_MAX + 16] = "";
        if (rootfs)
                snprintf(where, sizeof where, " in image %s", rootfs);
        if (r == -ENOENT && !strchr(name, '/')) {
                char searched[2048] = "";
                size_t used = 0;
                for (char *const *d = dirs; d && *d && used < sizeof(searched); d++) {
                        int n = snprintf(searched + used, sizeof(searched) - used, "%s%s", used ? ", " : "", *d);
                        if (n < 0)
                                break;
                        used += (size_t) n;
                }
                _cleanup_free_ char *guess = nearest_kernel(name, root_fd, dirs);
                char suggestion[300] = "";
                if (guess)
                        snprintf(suggestion, sizeof suggestion, "; did you mean %s?", guess);
                if (rootfs)
                        cli_error("kernel '%s': no kernelspec in image %s%s (searched, inside the image: %s)", name,
                                  rootfs, suggestion, searched);
                else
                        cli_error("kernel '%s': no kernelspec found%s (searched %s; `kbound kernelspecs` lists what "
                                  "exists; --prefix DIR adds a venv's or conda env's)",
                                  name, suggestion, searched);
        } else if (r == -ENOENT) {
                cli_error("kernel '%s': no kernel.json in that folder%s", name, where);
        } else if (r == -EINVAL && rootfs) {
                cli_error("kernel '%s': with --rootfs a kernelspec folder is an absolute path inside the image %s",
                          name, rootfs);
        } else if (r == -EBADMSG || r == -EPROTO || r == -EMSGSIZE) {
                /* The file and what is wrong with it: a syntax error is said as one, never as an
                 * argv or env problem. */
                cli_error("kernel '%s'%s: its kernelspec cannot be loaded: %s", name, where, kb_error_text(error, r));
        } else if (r == -EINVAL) {
                cli_error("kernel '%s': its kernel.json is not a regular file (or the name is not usable)", name);
        } else if (r == -ELOOP && rootfs) {
                cli_error("kernel '%s' in image %s: its kernel.json is a symlink, which kbound does not follow "
                          "inside an image",
                          name, rootfs);
        } else if (r == -ENOSYS && rootfs) {
                cli_error("kernel '%s': cannot read image %s safely: this kernel lacks openat2 (Linux 5.6+)", name,
                          rootfs);
        } else {
                cli_error("kernel '%s'%s: cannot load its kernelspec: %s", name, where, strerror(-r));
        }
}

/* The kernel's program must exist in the image, where the sandbox will look for it. */
static int check_program(const kb_kernelspec *spec, const char *rootfs, int root_fd) {
        char **env = NULL;
        int r = kb_sandbox_env(environ, spec->env, &env);
        if (r < 0) {
                cli_error("kernel '%s': cannot build its environment: %s", spec->name, strerror(-r));
                return KB_EXIT_ENFORCE;
        }
        const char *program = spec->argv[0];
        _cleanup_free_ char *found = NULL;
        r = kb_kernelspec_find_program_in_root(root_fd, program, env, &found);
        const char *path = "";
        for (char **e = env; *e; e++)
                if (strncmp(*e, "PATH=", 5) == 0)
                        path = *e + 5;
        if (r == -ENOENT && program[0] == '/')
                cli_error("kernel '%s' in image %s: its program %s does not exist in the image (no %s%s); "
                          "kernelspec %s/kernel.json",
                          spec->name, rootfs, program, rootfs, program, spec->resource_dir);
        else if (r == -ENOENT)
                cli_error("kernel '%s' in image %s: its program '%s' is not on the kernel's PATH inside the image "
                          "(PATH=%s); kernelspec %s/kernel.json",
                          spec->name, rootfs, program, path, spec->resource_dir);
        else if (r == -EACCES)
                cli_error("kernel '%s' in image %s: its program '%s' is in the image but not an executable file",
                          spec->name, rootfs, program);
        else if (r == -EINVAL)
                cli_error("kernel '%s' in image %s: its program '%s' is a relative path", spec->name, rootfs, program);
        else if (r < 0)
                cli_error("kernel '%s' in image %s: cannot look for its program '%s': %s", spec->name, rootfs, program,
                          strerror(-r));
        else if (!kb_sandbox_rootfs_visible(found))
                cli_error("kernel '%s' in image %s: its program resolves to %s, outside what the sandbox mounts "
                          "from an image (/usr, /etc, /opt, /bin, /sbin, /lib*)",
                          spec->name, rootfs, found);
        kb_strv_free(env);
        return r < 0 || !kb_sandbox_rootfs_visible(found) ? KB_EXIT_ENFORCE : 0;
}

/* "kernel 'x'" or "kernel 'x' in image DIR (IMAGE)", for messages. */
static void kernel_label(const kb_kernelspec *spec, const cli_root *root, char *buf, size_t size) {
        if (!root->rootfs)
                snprintf(buf, size, "kernel '%s'", spec->name);
        else if (root->image)
                snprintf(buf, size, "kernel '%s' in image %s", spec->name, kb_image_path(root->image));
        else
                snprintf(buf, size, "kernel '%s' in image %s", spec->name, root->rootfs);
}

/* The --ro-bind options of p->fix as one string ("--ro-bind /a --ro-bind /b"). */
static void fix_text(const kb_view_problem *p, char *buf, size_t size) {
        size_t used = 0;
        buf[0] = '\0';
        for (char **f = p->fix; *f && used < size; f++) {
                int n = snprintf(buf + used, size - used, "%s--ro-bind %s", used ? " " : "", *f);
                if (n < 0)
                        break;
                used += (size_t) n;
        }
}

/* Says why the preflight found the kernel would not start, and what to do. */
static void explain_problem(const kb_kernelspec *spec, const cli_root *root, const kb_view_problem *p) {
        char label[512], what[PATH_MAX + 128], fix[2048];
        kernel_label(spec, root, label, sizeof(label));
        if (strcmp(p->what, "interpreter") == 0)
                snprintf(what, sizeof(what), "the interpreter '%s' that its program %s names (its \"#!\" line)",
                         p->named, spec->argv[0]);
        else if (strcmp(p->what, "resource folder") == 0)
                snprintf(what, sizeof(what), "its kernelspec folder %s (argv uses {resource_dir})", p->named);
        else
                snprintf(what, sizeof(what), "its program '%s'", p->named);
        fix_text(p, fix, sizeof(fix));
        const char *shows = root->rootfs ? "the image's /usr, /etc, /opt and top-level links, and the --ro-bind "
                                           "folders"
                                         : "/usr, a few files of /etc and the --ro-bind folders";
        if (p->error == -ENOEXEC) {
                cli_error("%s: its program %s starts with \"#!\" but names no interpreter; kernelspec %s/kernel.json",
                          label, p->named, spec->resource_dir);
        } else if (p->error == -EACCES) {
                cli_error("%s: %s is there in the sandbox but is not an executable file (%s)", label, what,
                          p->missing ? p->missing : p->named);
        } else if (*fix) {
                cli_error("%s: %s is not inside the sandbox, which shows only %s; it is on the host (%s): add %s",
                          label, what, shows, p->missing, fix);
        } else if (p->rootfs) {
                cli_error("%s: %s does not exist on this host, but the kernelspec lies in the unpacked image %s, "
                          "which has it: check it there with --rootfs %s --kernel %s",
                          label, what, p->rootfs, p->rootfs, spec->resource_dir + strlen(p->rootfs));
        } else if (p->on_host) {
                cli_error("%s: %s is not inside the sandbox (no %s there), and no --ro-bind of its folder would put "
                          "it there (%s is on the host): bind what it needs with --ro-bind, or check an image with "
                          "--rootfs",
                          label, what, p->missing, p->missing);
        } else if (root->rootfs) {
                cli_error(
                        "%s: %s is not in what the sandbox mounts from the image (%s): %s%s; kernelspec %s/kernel.json",
                        label, what, shows, p->missing ? "no " : "not on the kernel's PATH inside the image: ",
                        p->missing       ? p->missing
                        : p->search_path ? p->search_path
                                         : "?",
                        spec->resource_dir);
        } else if (p->error != -ENOENT && p->error != -ENOTDIR) {
                /* Not an absence: the look itself failed (say openat2, which a kernel before 5.6
                 * or a tool that intercepts system calls lacks), so nothing is known of the path. */
                cli_error("%s: kbound could not look for %s inside the sandbox: %s%s", label, what, strerror(-p->error),
                          p->error == -ENOSYS ? " (openat2 needs Linux 5.6+)" : "");
        } else if (p->search_path) {
                cli_error("%s: %s is not on the kernel's PATH, inside the sandbox or on the host (PATH=%s): install "
                          "it, or correct the kernelspec %s/kernel.json",
                          label, what, p->search_path, spec->resource_dir);
        } else {
                cli_error(
                        "%s: %s does not exist, inside the sandbox or on the host (no %s): install it, or correct the "
                        "kernelspec %s/kernel.json",
                        label, what, p->missing ? p->missing : p->named, spec->resource_dir);
        }
}

/* Every --ro-bind folder must exist, and the sandbox user must reach it (bwrap runs as that user
 * and would otherwise fail late, under sandbox.backend). */
static int check_ro_paths(const cli_root *root) {
        for (char *const *p = root->ro_paths; p && *p; p++) {
                struct stat st;
                if (stat(*p, &st) < 0) {
                        cli_error("--ro-bind %s: %s", *p, strerror(errno));
                        return KB_EXIT_USAGE;
                }
                if (root->user && root->user->switch_user) {
                        _cleanup_free_ char *blocker = NULL;
                        int r = kb_sandbox_user_can_reach(root->user, *p, &blocker);
                        if (r == 0) {
                                cli_error("--ro-bind %s: the sandbox user %s cannot reach it (%s stops it); bubblewrap "
                                          "runs as that user: open the way (chmod o+x) or move the folder",
                                          *p, root->user->name, blocker ? blocker : "a folder");
                                return KB_EXIT_ENFORCE;
                        }
                }
        }
        return 0;
}

/* The preflight: nothing is started for a kernel whose sandbox would not show its program. */
static int preflight(const kb_kernelspec *spec, const cli_root *root) {
        if (!root->sandbox)
                return 0;
        int r = check_ro_paths(root);
        if (r)
                return r;
        char **env = NULL;
        r = kb_sandbox_env(environ, spec->env, &env);
        if (r < 0) {
                cli_error("kernel '%s': cannot build its environment: %s", spec->name, strerror(-r));
                return KB_EXIT_ENFORCE;
        }
        /* The team folders do not exist yet; they start empty, and nothing is looked up there. */
        kb_sandbox_policy policy = {
                .team = "preflight",
                .workspace = "/nonexistent/kbound-preflight/workspace",
                .runtime_dir = "/nonexistent/kbound-preflight/run",
                .rootfs = root->rootfs,
                .allow_network = root->allow_network,
                .ro_paths = root->ro_paths,
                .env = env,
        };
        kb_view_problem *p = NULL;
        r = kb_view_check_kernel(&policy, spec->argv, env, spec->resource_dir, &p);
        kb_strv_free(env);
        if (r < 0) {
                cli_error("kernel '%s': cannot look at what its sandbox would show: %s", spec->name, strerror(-r));
                return KB_EXIT_ENFORCE;
        }
        if (!p)
                return 0;
        explain_problem(spec, root, p);
        if (p->fix[0] && root->user && root->user->switch_user)
                for (char **f = p->fix; *f; f++) {
                        _cleanup_free_ char *blocker = NULL;
                        if (kb_sandbox_user_can_reach(root->user, *f, &blocker) == 0)
                                cli_error("kernel '%s': note that the sandbox user %s cannot reach %s (%s stops it): "
                                          "open the way (chmod o+x) or move the folder",
                                          spec->name, root->user->name, *f, blocker ? blocker : "a folder");
                }
        kb_view_problem_free(&p);
        return KB_EXIT_ENFORCE;
}

int cli_search_dirs(const cli_root *root, char ***ret_dirs) {
        int r;
        if (root->rootfs) {
                r = kb_kernelspec_rootfs_search_path_in(root->root_fd, root->prefixes, ret_dirs);
        } else {
                char **found = NULL, *all[2 * CLI_PREFIX_MAX + 1] = {NULL};
                size_t n = 0;
                r = kb_kernelspec_env_prefixes(environ, &found);
                for (char *const *p = root->prefixes; r >= 0 && p && *p && n < CLI_PREFIX_MAX; p++)
                        all[n++] = *p;
                for (char **p = found; r >= 0 && p && *p && n < 2 * CLI_PREFIX_MAX; p++)
                        all[n++] = *p;
                if (r >= 0)
                        r = kb_kernelspec_search_path_prefixes(environ, all, ret_dirs);
                kb_strv_free(found);
        }
        if (r < 0) {
                cli_error("cannot build the kernelspec search path: %s", strerror(-r));
                return KB_EXIT_ENFORCE;
        }
        return 0;
}

/* The folders searched, for messages ("a, b, c"). */
static void searched_text(char *const *dirs, char *buf, size_t size) {
        size_t used = 0;
        buf[0] = '\0';
        for (char *const *d = dirs; d && *d && used < size; d++) {
                int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", *d);
                if (n < 0)
                        break;
                used += (size_t) n;
        }
}

/* The kernelspec on the host: its search path with --prefix and the environment's prefixes. */
static int find_on_host(const char *name, const cli_root *root, kb_kernelspec **ret) {
        char **dirs = NULL;
        int r = cli_search_dirs(root, &dirs);
        if (r)
                return r;
        _cleanup_error_ kb_error *error = NULL;
        r = kb_kernelspec_lookup(-1, name, dirs, ret, &error);
        if (r < 0)
                explain_find_error(name, NULL, -1, dirs, r, error);
        kb_strv_free(dirs);
        return r < 0 ? KB_EXIT_ENFORCE : 0;
}

int cli_find_kernel(const char *name, const cli_root *root, kb_kernelspec **ret) {
        kb_kernelspec *spec = NULL;
        int r;
        if (!root->rootfs) {
                r = find_on_host(name, root, &spec);
                if (r)
                        return r;
        } else {
                const char *rootfs = root->rootfs;
                int root_fd = root->root_fd;
                if (strchr(name, '/') && name[0] != '/') {
                        cli_error("kernel '%s': with --rootfs a kernelspec folder is an absolute path inside the image "
                                  "%s",
                                  name, rootfs);
                        return KB_EXIT_USAGE;
                }
                char **dirs = NULL;
                if ((r = cli_search_dirs(root, &dirs)))
                        return r;
                _cleanup_error_ kb_error *error = NULL;
                r = kb_kernelspec_lookup(root_fd, name, dirs, &spec, &error);
                if (r < 0) {
                        explain_find_error(name, rootfs, root_fd, dirs, r, error);
                        kb_strv_free(dirs);
                        return KB_EXIT_ENFORCE;
                }
                kb_strv_free(dirs);
                r = check_program(spec, rootfs, root_fd);
                if (r) {
                        kb_kernelspec_destroy(&spec);
                        return r;
                }
        }
        r = preflight(spec, root);
        if (r) {
                kb_kernelspec_destroy(&spec);
                return r;
        }
        *ret = spec;
        return 0;
}

int cli_rootfs_kernels(const cli_root *root, size_t max, char ***ret_names) {
        const char *rootfs = root->rootfs;
        char **dirs = NULL, **names = NULL;
        int r = cli_search_dirs(root, &dirs);
        if (r)
                return r;
        r = kb_kernelspec_names_in_root(root->root_fd, dirs, &names);
        char searched[2048];
        searched_text(dirs, searched, sizeof(searched));
        kb_strv_free(dirs);
        if (r < 0) {
                cli_error("image %s: cannot list its kernelspecs: %s", rootfs, strerror(-r));
                return KB_EXIT_ENFORCE;
        }
        size_t n = 0;
        while (names[n])
                n++;
        if (n == 0) {
                cli_error("image %s has no kernelspec (searched, inside the image: %s)", rootfs, searched);
                kb_strv_free(names);
                return KB_EXIT_ENFORCE;
        }
        if (n > max) {
                cli_error("image %s has %zu kernelspecs, more than the %zu kbound checks at once; name the ones to "
                          "check with --kernel (repeatable), in several runs",
                          rootfs, n, max);
                kb_strv_free(names);
                return KB_EXIT_USAGE;
        }
        *ret_names = names;
        return 0;
}

int cli_find_kernels(const cli_root *root, const char **names, size_t *n, size_t max, char ***ret_image_names,
                     kb_kernelspec **specs) {
        /* An image's own kernels by default: validating an image means all of them. */
        if (root->rootfs && *n == 0) {
                int r = cli_rootfs_kernels(root, max, ret_image_names);
                if (r)
                        return r;
                for (char **p = *ret_image_names; *p; p++)
                        names[(*n)++] = *p;
        }
        int failed = 0;
        for (size_t i = 0; i < *n; i++) {
                int r = cli_find_kernel(names[i], root, &specs[i]);
                if (r && !failed)
                        failed = r;
        }
        if (failed && root->rootfs && *ret_image_names)
                cli_error("image %s: not every kernelspec of the image can be checked, so none was "
                          "(name the good ones with --kernel to check only those)",
                          root->image ? kb_image_path(root->image) : root->rootfs);
        return failed;
}

/* mkdir -p with mode 0700 for what it makes. */
static int make_dirs(const char *path) {
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        for (char *p = copy + 1;; p++) {
                if (*p != '/' && *p != '\0')
                        continue;
                char c = *p;
                *p = '\0';
                if (mkdir(copy, 0700) < 0 && errno != EEXIST)
                        return -errno;
                *p = c;
                if (!c)
                        return 0;
        }
}

int cli_image_cache_dir(char **ret) {
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        char *path = NULL;
        int r;
        if (xdg && xdg[0] == '/')
                r = asprintf(&path, "%s/kbound", xdg);
        else if (geteuid() == 0)
                r = asprintf(&path, "/var/cache/kbound");
        else if (home && home[0] == '/')
                r = asprintf(&path, "%s/.cache/kbound", home);
        else
                return -ENOENT;
        if (r < 0)
                return -ENOMEM;
        if ((r = make_dirs(path)) < 0) {
                free(path);
                return r;
        }
        *ret = path;
        return 0;
}

/* The cache folder for root's image: the image cache, ready for the sandbox user to walk to when it
 * is a user kbound switches to; NULL (said why) when there is none it can reach. */
static char *usable_cache_dir(const cli_root *root) {
        _cleanup_free_ char *dir = NULL, *images = NULL, *blocker = NULL;
        int r = cli_image_cache_dir(&dir);
        if (r < 0) {
                cli_progress("the image cache cannot be made (%s): the image is unpacked for this run alone",
                             strerror(-r));
                return NULL;
        }
        if (root->user && root->user->switch_user) {
                /* bwrap, as the sandbox user, walks to the image's /usr through the cache. */
                _cleanup_free_ char *parent = strdup(dir);
                char *slash = parent ? strrchr(parent, '/') : NULL;
                if (slash)
                        *(slash == parent ? slash + 1 : slash) = '\0';
                if (!parent || kb_sandbox_user_can_reach(root->user, parent, &blocker) <= 0) {
                        cli_progress("the image cache %s is where the sandbox user %s cannot reach it (%s stops it): "
                                     "the image is unpacked for this run alone (set XDG_CACHE_HOME to a folder it "
                                     "can walk to)",
                                     dir, root->user->name, blocker ? blocker : "?");
                        return NULL;
                }
                if (asprintf(&images, "%s/images", dir) < 0)
                        return NULL;
                if ((mkdir(images, 0700) < 0 && errno != EEXIST) || kb_sandbox_user_pass_through(root->user, dir) < 0 ||
                    kb_sandbox_user_pass_through(root->user, images) < 0) {
                        cli_progress("the image cache %s cannot be opened to the sandbox user's group (%s): the "
                                     "image is unpacked for this run alone",
                                     dir, strerror(errno));
                        return NULL;
                }
        }
        return TAKE_PTR(dir);
}

int cli_root_open(const char *cmd, const char *rootfs_opt, const char *image_opt, uint64_t max_bytes, bool no_cache,
                  char **base, cli_root *root) {
        root->rootfs = NULL;
        root->root_fd = -1;
        root->image = NULL;
        if (rootfs_opt && image_opt) {
                cli_error("%s: --rootfs and --image exclude each other (--image unpacks an image into a rootfs)", cmd);
                return KB_EXIT_USAGE;
        }
        if (rootfs_opt)
                return cli_rootfs_open(rootfs_opt, &root->rootfs, &root->root_fd);
        if (!image_opt)
                return 0;
        if (!*base) {
                int r = cli_make_base_dir(root->user, base);
                if (r)
                        return r;
        }
        /* Below the run's own folder: removed with it, and a run that was killed leaves it to
         * the next run's clean-up of stale folders. */
        _cleanup_free_ char *work = NULL;
        if (asprintf(&work, "%s/image", *base) < 0) {
                cli_error("out of memory");
                return KB_EXIT_ENFORCE;
        }
        if (mkdir(work, 0700) < 0 || kb_sandbox_user_pass_through(root->user, work) < 0) {
                cli_error("cannot make %s: %s", work, strerror(errno));
                return KB_EXIT_ENFORCE;
        }
        _cleanup_free_ char *cache = no_cache ? NULL : usable_cache_dir(root);
        cli_progress("image %s: %s%s%sunpacking it with skopeo and umoci (at most %" PRIu64 " MiB)", image_opt,
                     cache ? "looking for it in the image cache " : "", cache ? cache : "",
                     cache      ? ", else "
                     : no_cache ? "not cached (--image-no-cache): "
                                : "",
                     (uint64_t) (max_bytes ? max_bytes : KB_IMAGE_MAX_BYTES_DEFAULT) >> 20);
        kb_image_options o = {
                .image = image_opt,
                .work_dir = work,
                .envp = environ,
                .max_bytes = max_bytes,
                .cancel_fd = cli_signals_install(),
                .deadline_ms = -1,
                .cache_dir = cache,
        };
        _cleanup_error_ kb_error *error = NULL;
        int64_t started = kb_now_ms();
        int r = kb_image_unpack(&o, &root->image, &error);
        if (r < 0) {
                cli_error("--image %s: %s", image_opt, kb_error_text(error, r));
                rmdir(work);
                return r == -ENOENT || r == -EINVAL || r == -ENAMETOOLONG ? KB_EXIT_USAGE
                       : r == -ECANCELED                                  ? KB_EXIT_FAIL
                                                                          : KB_EXIT_ENFORCE;
        }
        const char *tag = kb_image_tag(root->image), *state = kb_image_cache_state(root->image);
        const char *note = kb_image_cache_note(root->image);
        if (note)
                cli_progress("image %s: %s", kb_image_path(root->image), note);
        cli_progress(
                "image %s%s%s: manifest %s, %s %s (%" PRIu64 " MiB) in %" PRId64 " ms%s", kb_image_path(root->image),
                tag ? " tag " : "", tag ? tag : "", kb_image_manifest_digest(root->image),
                state && strcmp(state, "reused") == 0 ? "reused from the cache (its tree verified):" : "unpacked to",
                kb_image_rootfs(root->image), kb_image_unpacked_bytes(root->image) >> 20, kb_now_ms() - started,
                state && strcmp(state, "stored") == 0 ? ", and kept in the cache" : "");
        /* bwrap, as the sandbox user, walks to the image's /usr (through the cache's entry). */
        const char *entry = kb_image_cache_entry(root->image);
        if ((entry && kb_sandbox_user_pass_through(root->user, entry) < 0) ||
            kb_sandbox_user_pass_through(root->user, kb_image_rootfs(root->image)) < 0) {
                cli_error("cannot open %s to the sandbox user's group: %s", kb_image_rootfs(root->image),
                          strerror(errno));
                cli_root_close(root);
                return KB_EXIT_ENFORCE;
        }
        r = cli_rootfs_open(kb_image_rootfs(root->image), &root->rootfs, &root->root_fd);
        if (r) {
                cli_error("--image %s: the unpacked image is not a root filesystem", image_opt);
                cli_root_close(root);
                return KB_EXIT_ENFORCE;
        }
        return 0;
}

void cli_root_close(cli_root *root) {
        if (!root)
                return;
        cli_closep(&root->root_fd);
        free(root->rootfs);
        root->rootfs = NULL;
        if (root->image) {
                /* Everything the image took is removed, also under --keep. */
                _cleanup_free_ char *work = NULL;
                const char *rootfs = kb_image_rootfs(root->image);
                const char *slash = strrchr(rootfs, '/');
                work = slash ? strndup(rootfs, (size_t) (slash - rootfs)) : NULL;
                kb_image_destroy(&root->image);
                if (work)
                        rmdir(work);
        }
}

void cli_root_report(const cli_root *root, json_object *sandbox) {
        json_object_object_add(sandbox, "rootfs", root->rootfs ? json_object_new_string(root->rootfs) : NULL);
        json_object_object_add(sandbox, "image", root->image ? kb_image_json(root->image) : NULL);
}

int cli_opt_size(const char *cmd, const char *option, const char *arg, uint64_t *ret) {
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(arg, &end, 10);
        uint64_t mult = 1;
        if (end && *end) {
                if (strcmp(end, "K") == 0)
                        mult = 1ULL << 10;
                else if (strcmp(end, "M") == 0)
                        mult = 1ULL << 20;
                else if (strcmp(end, "G") == 0)
                        mult = 1ULL << 30;
                else
                        end = NULL;
        }
        if (errno || !end || end == arg || arg[0] == '-' || v == 0 || v > UINT64_MAX / mult) {
                cli_error("%s: %s takes a size in bytes, with K, M or G after it (e.g. 8G)", cmd, option);
                return KB_EXIT_USAGE;
        }
        *ret = (uint64_t) v * mult;
        return 0;
}

int cli_opt_prefix(const char *cmd, char **prefixes, size_t *n, const char *arg) {
        if (*n == CLI_PREFIX_MAX || arg[0] != '/') {
                cli_error("%s: --prefix takes an absolute path (a venv's or conda env's sys.prefix; at most %d)", cmd,
                          CLI_PREFIX_MAX);
                return KB_EXIT_USAGE;
        }
        prefixes[(*n)++] = (char *) arg;
        return 0;
}
