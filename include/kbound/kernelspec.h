/* kernelspec.h: discover kernelspecs the way Jupyter does, parse kernel.json, build argv. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include "kbound/common.h"
#include "kbound/error.h"

#define KB_KERNELSPEC_MAX_BYTES (256 * 1024)

typedef struct kb_kernelspec {
        char *name;         /* folder name, e.g. "python3" */
        char *resource_dir; /* absolute folder holding kernel.json */
        char **argv;        /* NULL-terminated, unsubstituted */
        char *display_name;
        char *language;       /* as written, e.g. "python", "R" */
        char *interrupt_mode; /* "signal" (the default) or "message" */
        char **env;           /* NULL-terminated "NAME=value" strings from kernel.json "env" */
        char *metadata_json;  /* kernel.json "metadata" as compact JSON text (NULL: none, or not an
                               * object); kept for listing; only its "kbound" key is read: */
        bool tcp_only;        /* metadata {"kbound": {"transport": "tcp"}}: the kernel binds TCP whatever
                               * its connection file says; kbound relays it (docs/transports.md) */
} kb_kernelspec;

/* The "kernels" directories in Jupyter's search order for the environment envp (NULL-terminated
 * "NAME=value"): each entry of JUPYTER_PATH (colon-separated) + "/kernels", then JUPYTER_DATA_DIR
 * (or $XDG_DATA_HOME/jupyter, or $HOME/.local/share/jupyter) + "/kernels", then
 * /usr/local/share/jupyter/kernels and /usr/share/jupyter/kernels. Earlier wins. Returns 0 and a
 * NULL-terminated vector, or -ENOMEM. */
KB_EXPORT int kb_kernelspec_search_path(char *const *envp, char ***ret_dirs);

/* kb_kernelspec_search_path with environment prefixes (a venv's or conda env's sys.prefix), each
 * adding PREFIX/share/jupyter/kernels as jupyter_core's environment path does: after the user's
 * data folder, or before it where jupyter_core prefers the environment (JUPYTER_PREFER_ENV_PATH
 * set to a true value; with it unset, a venv (PREFIX/pyvenv.cfg) or a conda env that is not a base
 * install (PREFIX/conda-meta without PREFIX/condabin) owned by the effective user). A prefix whose
 * folder is a system one adds nothing. Returns 0 and a NULL-terminated vector, or -ENOMEM. */
KB_EXPORT int kb_kernelspec_search_path_prefixes(char *const *envp, char *const *prefixes, char ***ret_dirs);

/* The sys.prefix of the Python environment envp is in, as Jupyter started from it would have:
 * VIRTUAL_ENV, CONDA_PREFIX (absolute, existing folders), and the folder above the bin/ of the
 * first python3 on PATH when that folder is a venv or conda env. Deduplicated, in that order.
 * Returns 0 and a NULL-terminated vector (possibly empty), or -ENOMEM. */
KB_EXPORT int kb_kernelspec_env_prefixes(char *const *envp, char ***ret_prefixes);

/* Parses kernel.json text (untrusted) for a kernel called name in resource_dir. argv must be a
 * non-empty array of strings; env an object of strings; interrupt_mode "signal" or "message".
 * Missing display_name defaults to name, language to "", interrupt_mode to "signal", env to an
 * empty vector (never NULL).
 * Returns 0, -EBADMSG (not JSON at all: a syntax error), -EPROTO (JSON, but not a kernelspec's),
 * -EMSGSIZE, -ENOMEM; kb_kernelspec_lookup says which file and what is wrong. */
KB_EXPORT int kb_kernelspec_parse(const char *json, size_t len, const char *name, const char *resource_dir,
                                  kb_kernelspec **ret);

/* Loads dir/kernel.json; the kernel's name is the folder's basename, lowercased as Jupyter does.
 * resource_dir is dir made absolute (realpath). Returns parse errors or
 * -errno (-ENOENT if there is no kernel.json). */
KB_EXPORT int kb_kernelspec_load(const char *dir, kb_kernelspec **ret);

/* Finds a kernelspec: if name_or_path contains a '/', it is a kernelspec folder to load; otherwise
 * the first search dir holding name/kernel.json wins. Names are matched case-insensitively like
 * Jupyter. Returns 0, -ENOENT (not found), or the load's errors for the first match. */
KB_EXPORT int kb_kernelspec_find(const char *name_or_path, char *const *search_dirs, kb_kernelspec **ret);

/* The "kernels" directories searched inside an image (paths inside it), in order:
 * /opt/conda/share/jupyter/kernels, /usr/local/share/jupyter/kernels, /usr/share/jupyter/kernels.
 * Nothing from kbound's environment (JUPYTER_PATH, HOME) applies to an image. Returns 0 or -ENOMEM. */
KB_EXPORT int kb_kernelspec_rootfs_search_path(char ***ret_dirs);

/* The "kernels" folders searched inside the image at root_fd, in Jupyter's order for an image
 * whose user is unknown: each user's ~/.local/share/jupyter/kernels (/root's first, then
 * /home/NAME's by name: the homes the image has), then PREFIX/share/jupyter/kernels for each
 * prefix (paths inside the image), then those of kb_kernelspec_rootfs_search_path. Returns 0,
 * -EINVAL, -ENOMEM. */
KB_EXPORT int kb_kernelspec_rootfs_search_path_in(int root_fd, char *const *prefixes, char ***ret_dirs);

/* kb_kernelspec_find inside an image whose root folder is open as root_fd (O_DIRECTORY). Every
 * path (search_dirs, an absolute name_or_path) is inside the image and resolved with openat2
 * RESOLVE_IN_ROOT, so the image's symlinks and ".." never leave it; kernel.json must not itself
 * be a symlink. The spec's resource_dir is the folder's canonical path inside the image.
 * Returns 0, -ENOENT (not found), -EINVAL (a relative path), -ENOSYS (no openat2), or the
 * load's errors (-ELOOP: kernel.json is a symlink). */
KB_EXPORT int kb_kernelspec_find_in_root(int root_fd, const char *name_or_path, char *const *search_dirs,
                                         kb_kernelspec **ret);

/* The one lookup both of the above wrap: kb_kernelspec_find when root_fd < 0, else
 * kb_kernelspec_find_in_root; with ret_error (may be NULL) it also gives, for a kernel.json that is
 * there but cannot be loaded, the words: the file (inside the image for root_fd >= 0) and what is
 * wrong, "not valid JSON (line 3, column 14: unexpected character)" for a syntax error (-EBADMSG),
 * what is wrong with argv, env or interrupt_mode for a kernelspec that is JSON (-EPROTO). Returns
 * as the function it stands for. */
KB_EXPORT int kb_kernelspec_lookup(int root_fd, const char *name_or_path, char *const *search_dirs, kb_kernelspec **ret,
                                   kb_error **ret_error);

/* Resolves a kernel's program (argv[0]) inside the image at root_fd as execvp would inside the
 * sandbox: an absolute path as is, a bare name through PATH of env (the kernel's environment, see
 * kb_sandbox_env). Returns 0 and the program's canonical path inside the image, -ENOENT (no such
 * file), -EACCES (there but not an executable regular file), -EINVAL (a relative path with '/'),
 * -ENOMEM. */
KB_EXPORT int kb_kernelspec_find_program_in_root(int root_fd, const char *program, char *const *env, char **ret_path);

/* Lists every loadable kernelspec across search_dirs, first occurrence of a name winning, sorted
 * by name. Folders whose kernel.json is broken are skipped and counted in *ret_n_broken (may be
 * NULL). Returns 0 and a NULL-terminated array the caller frees with kb_kernelspec_list_free. */
KB_EXPORT int kb_kernelspec_list(char *const *search_dirs, kb_kernelspec ***ret, size_t *ret_n_broken);
KB_EXPORT void kb_kernelspec_list_free(kb_kernelspec **list);

/* kb_kernelspec_list inside the image at root_fd, with kb_kernelspec_find_in_root's rules. */
KB_EXPORT int kb_kernelspec_list_in_root(int root_fd, char *const *search_dirs, kb_kernelspec ***ret,
                                         size_t *ret_n_broken);

/* The name of every kernelspec folder (one with a kernel.json, broken or not) across search_dirs
 * inside the image at root_fd: lowercase, deduplicated, sorted. Validating an image means all of
 * them, so a broken one must be reported rather than skipped (kb_kernelspec_find_in_root on each
 * name says what is wrong). Returns 0 and a NULL-terminated vector (free with kb_strv_free),
 * -EINVAL or -ENOMEM. */
KB_EXPORT int kb_kernelspec_names_in_root(int root_fd, char *const *search_dirs, char ***ret_names);

/* The argv to start the kernel: every "{connection_file}" replaced by connection_file and
 * "{resource_dir}" by the spec's folder. Returns 0 and a NULL-terminated vector, or -ENOMEM. */
KB_EXPORT int kb_kernelspec_argv(const kb_kernelspec *spec, const char *connection_file, char ***ret_argv);

/* Frees spec; sets *specp to NULL. Accepts NULL. */
KB_EXPORT void kb_kernelspec_destroy(kb_kernelspec **specp);
