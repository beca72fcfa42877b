/* cli_rootfs.c: --rootfs DIR: open an unpacked image and find a kernel inside it, with messages
 * that name the kernel, the image and the path. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <kbound/sandbox.h>
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
                          path, r < 0                 ? "it has no usr/ directory"
                                : S_ISLNK(st.st_mode) ? "its usr is a symlink, which kbound does not follow in an image"
                                                      : "its usr is not a directory");
                return KB_EXIT_USAGE;
        }
        *ret_path = TAKE_PTR(path);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* Why a kernelspec lookup inside the image failed, naming the kernel, the image and the path. */
static void explain_find_error(const char *name, const char *rootfs, char *const *dirs, int r) {
        if (r == -ENOENT && !strchr(name, '/')) {
                char searched[1024] = "";
                size_t used = 0;
                for (char *const *d = dirs; d && *d && used < sizeof(searched); d++) {
                        int n = snprintf(searched + used, sizeof(searched) - used, "%s%s", used ? ", " : "", *d);
                        if (n < 0)
                                break;
                        used += (size_t) n;
                }
                cli_error("kernel '%s': no kernelspec in image %s (searched, inside the image: %s)", name, rootfs,
                          searched);
        } else if (r == -ENOENT) {
                cli_error("kernel '%s': no kernel.json at that folder inside image %s", name, rootfs);
        } else if (r == -EINVAL) {
                cli_error("kernel '%s': with --rootfs a kernelspec folder is an absolute path inside the image %s",
                          name, rootfs);
        } else if (r == -EPROTO) {
                cli_error("kernel '%s' in image %s: its kernel.json is malformed (argv must be a non-empty list of "
                          "strings; interrupt_mode \"signal\" or \"message\"; env strings)",
                          name, rootfs);
        } else if (r == -ELOOP) {
                cli_error("kernel '%s' in image %s: its kernel.json is a symlink, which kbound does not follow "
                          "inside an image",
                          name, rootfs);
        } else if (r == -ENOSYS) {
                cli_error("kernel '%s': cannot read image %s safely: this kernel lacks openat2 (Linux 5.6+)", name,
                          rootfs);
        } else {
                cli_error("kernel '%s' in image %s: cannot load its kernelspec: %s", name, rootfs, strerror(-r));
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

int cli_find_kernel(const char *name, const char *rootfs, int root_fd, kb_kernelspec **ret) {
        if (!rootfs)
                return cli_find_kernelspec(name, ret);
        if (strchr(name, '/') && name[0] != '/') {
                cli_error("kernel '%s': with --rootfs a kernelspec folder is an absolute path inside the image %s",
                          name, rootfs);
                return KB_EXIT_USAGE;
        }
        char **dirs = NULL;
        int r = kb_kernelspec_rootfs_search_path(&dirs);
        if (r < 0) {
                cli_error("out of memory");
                return KB_EXIT_ENFORCE;
        }
        kb_kernelspec *spec = NULL;
        r = kb_kernelspec_find_in_root(root_fd, name, dirs, &spec);
        if (r < 0) {
                explain_find_error(name, rootfs, dirs, r);
                kb_strv_free(dirs);
                return KB_EXIT_ENFORCE;
        }
        kb_strv_free(dirs);
        r = check_program(spec, rootfs, root_fd);
        if (r) {
                kb_kernelspec_destroy(&spec);
                return r;
        }
        *ret = spec;
        return 0;
}

int cli_rootfs_kernels(const char *rootfs, int root_fd, size_t max, char ***ret_names) {
        char **dirs = NULL, **names = NULL;
        int r = kb_kernelspec_rootfs_search_path(&dirs);
        if (r >= 0)
                r = kb_kernelspec_names_in_root(root_fd, dirs, &names);
        kb_strv_free(dirs);
        if (r < 0) {
                cli_error("image %s: cannot list its kernelspecs: %s", rootfs, strerror(-r));
                return KB_EXIT_ENFORCE;
        }
        size_t n = 0;
        while (names[n])
                n++;
        if (n == 0) {
                cli_error("image %s has no kernelspec (searched, inside the image: /opt/conda/share/jupyter/kernels, "
                          "/usr/local/share/jupyter/kernels, /usr/share/jupyter/kernels)",
                          rootfs);
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

int cli_find_kernels(const char *rootfs, int root_fd, const char **names, size_t *n, size_t max,
                     char ***ret_image_names, kb_kernelspec **specs) {
        /* An image's own kernels by default: validating an image means all of them. */
        if (rootfs && *n == 0) {
                int r = cli_rootfs_kernels(rootfs, root_fd, max, ret_image_names);
                if (r)
                        return r;
                for (char **p = *ret_image_names; *p; p++)
                        names[(*n)++] = *p;
        }
        int failed = 0;
        for (size_t i = 0; i < *n; i++) {
                int r = cli_find_kernel(names[i], rootfs, root_fd, &specs[i]);
                if (r && !failed)
                        failed = r;
        }
        if (failed && rootfs && *ret_image_names)
                cli_error("image %s: not every kernelspec of the image can be checked, so none was "
                          "(name the good ones with --kernel to check only those)", rootfs);
        return failed;
}
