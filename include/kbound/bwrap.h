/* bwrap.h: what the bubblewrap at hand can do, learnt from the binary itself (its --help), one row
 * per option kbound's sandbox uses: whether kbound needs it, and what stands in when it is absent. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kbound/common.h"
#include "kbound/sandbox.h"

/* Every bwrap option kb_sandbox_plan can put on a command line. */
typedef enum kb_bwrap_option {
        KB_BWRAP_UNSHARE_ALL,
        KB_BWRAP_UNSHARE_PID,
        KB_BWRAP_UNSHARE_USER,
        KB_BWRAP_SHARE_NET,
        KB_BWRAP_DIE_WITH_PARENT,
        KB_BWRAP_NEW_SESSION,
        KB_BWRAP_DISABLE_USERNS,
        KB_BWRAP_SECCOMP,
        KB_BWRAP_CAP_DROP,
        KB_BWRAP_HOSTNAME,
        KB_BWRAP_RO_BIND,
        KB_BWRAP_RO_BIND_TRY,
        KB_BWRAP_BIND,
        KB_BWRAP_SYMLINK,
        KB_BWRAP_PROC,
        KB_BWRAP_DEV,
        KB_BWRAP_TMPFS,
        KB_BWRAP_DIR,
        KB_BWRAP_REMOUNT_RO,
        KB_BWRAP_CHDIR,
        KB_BWRAP_BLOCK_FD,
        KB_BWRAP_INFO_FD,
        KB_BWRAP_FILE,
        KB_BWRAP_SIZE,
        KB_BWRAP_OPTION_MAX
} kb_bwrap_option;

/* One option: its name, what it does for kbound's sandbox, and what kbound does without it (NULL:
 * nothing can stand in, so a bwrap without it cannot run kbound's sandbox; every such option is in
 * bubblewrap 0.4.1, the oldest tried: docs/platforms.md). */
typedef struct kb_bwrap_option_info {
        const char *name;
        const char *enforces;
        const char *without;
} kb_bwrap_option_info;

/* The row of option (never NULL for a valid one). */
KB_EXPORT const kb_bwrap_option_info *kb_bwrap_option_get(kb_bwrap_option option);

/* How many arguments bwrap's option opt takes (0, 1 or 2; bwrap 0.8's --help, with --ro-bind-fd
 * and --bind-fd of 0.10), or -1 when opt is none of bwrap's. Every reader of a bwrap command line
 * (the plan's view and mounts, the judges' reading of the running one) walks it with this grammar,
 * never by searching for a word: "--setenv X --die-with-parent" sets a variable. */
KB_EXPORT int kb_bwrap_arity(const char *opt);

/* A bubblewrap as probed: its version ("0.8.0", as --version prints it) and the options its --help
 * lists. Versions say little (Debian 12's 0.8.0 carries 0.10's --ro-bind-fd), so kbound goes by
 * the options. */
typedef struct kb_bwrap {
        char version[65];
        uint64_t has; /* bit (1 << option) for each option present */
} kb_bwrap;

/* Runs "path --version" and "path --help" (as kbound's user, an empty environment, 5 s each), and
 * tells bubblewrap by what it is: its version line is "bubblewrap VERSION" and its --help starts with
 * bwrap's usage line. Returns 0, -ENOENT (not there), -EIO (either did not run cleanly), -ENOEXEC
 * (a program that is not bubblewrap: /bin/true prints "true (GNU coreutils) 9.1"). */
KB_EXPORT int kb_bwrap_probe(const char *path, kb_bwrap *ret);

/* Reads a --help text into *ret_has (pure; kb_bwrap_probe's parser, for tests). */
KB_EXPORT void kb_bwrap_parse_help(const char *help, uint64_t *ret_has);

KB_EXPORT bool kb_bwrap_has(const kb_bwrap *b, kb_bwrap_option option);

/* How a sandbox run with b refuses nested user namespaces and sizes its in-memory folders: always
 * both, by b's own --disable-userns and --size where it has them, else by kbound's stand-ins
 * (h->host_userns, h->host_sizes; sandbox.h). Sets those four fields of h and nothing else. */
KB_EXPORT void kb_bwrap_hardening(const kb_bwrap *b, kb_sandbox_hardening *h);

/* The options kbound needs and b lacks, as "--a, --b" into buf (at most size bytes). Returns how
 * many are missing (0: this bwrap can run kbound's sandbox). */
KB_EXPORT size_t kb_bwrap_missing(const kb_bwrap *b, char *buf, size_t size);

/* What b lacks that kbound makes up for, one clause each ("no --size: kbound gives each in-memory
 * folder ... its size itself"), "; "-separated into buf. Returns how many. */
KB_EXPORT size_t kb_bwrap_stand_ins(const kb_bwrap *b, char *buf, size_t size);

/* The one-line account of b (found at path) that `check` refuses with and `doctor` prints, into
 * *ret (malloc'd): which options kbound needs and b lacks, else what stands in for what it lacks.
 * Returns 1 (b can run kbound's sandbox), 0 (it cannot), -ENOMEM. */
KB_EXPORT int kb_bwrap_describe(const kb_bwrap *b, const char *path, char **ret);
