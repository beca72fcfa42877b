/* view.h: what a sandbox will see of the host's (or an image's) files, read from the very bwrap argv
 * kb_sandbox_plan makes, and the pre-launch check that a kernel's program, its "#!" interpreter and
 * its resource folder are there, with the --ro-bind folders that would put them there. */
#pragma once

#include "kbound/common.h"
#include "kbound/sandbox.h"
#include <stdbool.h>

typedef struct kb_view kb_view;

/* The mounts of policy's sandbox, in bwrap's order, parsed from kb_sandbox_plan's argv for policy:
 * the preflight reads exactly what bwrap will be told, so the two cannot drift. The team folders
 * (policy->workspace, runtime_dir) may be placeholders that do not exist yet: they start empty.
 * Bind sources are opened on the host (following links, as bwrap does) when a lookup reaches them.
 * Returns 0, -EINVAL (a policy kb_sandbox_plan refuses), -EPROTO (the plan holds an option this
 * parser does not know: a programming error, caught by the unit test), -ENOMEM. */
KB_EXPORT int kb_view_new(const kb_sandbox_policy *policy, kb_view **ret);

/* Frees v; sets *vp to NULL. Accepts NULL. */
KB_EXPORT void kb_view_destroy(kb_view **vp);

/* Resolves path (absolute, inside the sandbox) as the kernel's open() will: component by
 * component through the mount that shows it, every symlink followed inside the sandbox (an
 * absolute target restarts at the sandbox's root), at most 40 of them. Nothing on the host is
 * followed through a link, so an image's links never reach the host's files.
 * On success returns 0, *ret_inside (malloc'd, may be NULL) gets the canonical path inside the
 * sandbox and *ret_fd (may be NULL) an O_PATH descriptor of the object on the host (-1 for a file
 * bwrap makes from a descriptor). Errors: -ENOENT (nothing there; *ret_missing, if not NULL, gets
 * the first path inside the sandbox that does not exist), -ENOTDIR, -ELOOP, -EINVAL (relative),
 * -ENAMETOOLONG, -ENOMEM. */
KB_EXPORT int kb_view_resolve(const kb_view *v, const char *path, char **ret_inside, int *ret_fd, char **ret_missing);

/* Why a kernel would not start in its sandbox, found before it is launched. */
typedef struct kb_view_problem {
        const char *what;  /* static: "program", "interpreter" (a "#!" line's), "resource folder" */
        char *named;       /* as the kernelspec or the "#!" line names it */
        char *missing;     /* the path inside the sandbox that is absent, or not an executable file
                            * (for a bare name: where it is on the host, else NULL) */
        int error;         /* -ENOENT (absent), -EACCES (there, not an executable regular file),
                            * -ENOTDIR, -ELOOP, -ENOEXEC (a "#!" line without a program) */
        bool on_host;      /* missing exists on the host (host view): a bind can fix it */
        char **fix;        /* host folders that, bound read-only (--ro-bind), make the program,
                            * its interpreter and its resource folder all resolve: checked
                            * against the view, never guessed; NULL-terminated, may be empty */
        char *rootfs;      /* host view: an unpacked image that holds the kernelspec and the
                            * missing path (--rootfs would run it there), else NULL */
        char *search_path; /* the kernel's PATH, for a bare program name; else NULL */
} kb_view_problem;

/* The pre-launch check: the kernel's program (kernel_argv[0]: an absolute path as is, a bare name
 * through PATH of env, the kernel's environment from kb_sandbox_env), then, one level only, the
 * interpreter its "#!" line names (and for "#!/usr/bin/env NAME", NAME through PATH), must each
 * resolve in policy's view to an executable regular file; and when an argv word uses
 * "{resource_dir}", resource_dir must resolve to a folder. A python-style "-m module" kernel is
 * judged by its interpreter alone. Returns 0 with *ret_problem NULL (everything is there) or a
 * problem to free with kb_view_problem_free; -errno when the view cannot be built (kb_view_new). */
KB_EXPORT int kb_view_check_kernel(const kb_sandbox_policy *policy, char *const *kernel_argv, char *const *env,
                                   const char *resource_dir, kb_view_problem **ret_problem);

/* Frees p; sets *pp to NULL. Accepts NULL. */
KB_EXPORT void kb_view_problem_free(kb_view_problem **pp);
