/* cli.h: helpers shared by the kbound subcommands (messages, signals, kernel lookup). */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <kbound/probe.h>
#include <kbound/kernelspec.h>
#include <kbound/sandbox.h>
#include <kbound/transcript.h>

enum {
        KB_EXIT_PASS = 0,     /* every claim tested and held */
        KB_EXIT_FAIL = 1,     /* a check failed, or the cell raised */
        KB_EXIT_USAGE = 2,    /* bad command line */
        KB_EXIT_ENFORCE = 3,  /* the sandbox cannot be enforced here */
};

extern char **environ;

int cmd_kernelspecs(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_conformance(int argc, char **argv);
int cmd_console(int argc, char **argv);

/* Messages on stderr, prefixed "kbound: ": redacted with every set given to cli_redact_register
 * and sanitized (cli_put_sanitized), since they quote kernel-controlled text. Thread-safe. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_set_quiet(bool quiet);

/* Secret sets (borrowed; they must outlive their use) that every message and every report is
 * redacted with: the canaries and daemon secrets of a check run. Register before starting worker
 * threads. Returns 0 or -E2BIG. cli_redact_clear forgets them (before they are destroyed). */
#define CLI_REDACT_MAX 8
int cli_redact_register(const kb_secrets *s);
void cli_redact_clear(void);
/* A new reference to o redacted with every registered set (o itself when nothing matched); NULL
 * if out of memory. */
json_object *cli_redact_json(json_object *o);

/* Writes untrusted text without anything a terminal would act on: ESC sequences (CSI, OSC,
 * DCS/PM/APC, others), C0 controls but newline and tab, DEL, and the C1 controls U+0080..U+009F. */
void cli_put_sanitized(FILE *out, const char *s);
/* The same for s[0..len), which may hold NULs: each is shown as U+2400 (␀). */
void cli_put_sanitized_len(FILE *out, const char *s, size_t len);

/* SIGINT/SIGTERM make the returned fd readable (a self-pipe); library waits poll it and end with
 * -ECANCELED. cli_signal_received() tells which signal came (0 if none). */
int cli_signals_install(void);
int cli_signal_received(void);

/* kbound adopts whatever its sandboxes orphan (PR_SET_CHILD_SUBREAPER), and before exiting kills
 * and reaps every child it still has: nothing kbound starts outlives it. */
void cli_become_subreaper(void);
void cli_reap_orphans(void);

/* Finds a kernelspec by name or folder path; on failure prints which kernel and why and returns a
 * KB_EXIT_* code (the kernel missing means the run cannot be enforced: KB_EXIT_ENFORCE). */
int cli_find_kernelspec(const char *name, kb_kernelspec **ret);

/* --rootfs DIR: makes it absolute and opens it; it must be a directory with a real usr/ directory
 * (not a symlink). Returns 0, or prints why and returns KB_EXIT_USAGE. */
int cli_rootfs_open(const char *arg, char **ret_path, int *ret_fd);

/* cli_find_kernelspec, or with rootfs (its path, and root_fd open on it) inside that image: the
 * kernelspec is searched in the image's Jupyter folders and its program must exist in the image.
 * On failure prints which kernel, which image and which path, and returns KB_EXIT_ENFORCE. */
int cli_find_kernel(const char *name, const char *rootfs, int root_fd, kb_kernelspec **ret);

/* The name of every kernelspec of the image, broken ones included (check's and conformance's
 * default kernels: validating an image means all of them, and cli_find_kernel then says what is
 * wrong with a broken one). Returns 0 and a vector to free with kb_strv_free; or prints why and
 * returns KB_EXIT_ENFORCE (none at all, or unreadable) or KB_EXIT_USAGE (more than max: never a
 * silent drop). */
int cli_rootfs_kernels(const char *rootfs, int root_fd, size_t max, char ***ret_names);

/* The kernels a command runs (check, conformance): names[0..*n) as given, or with rootfs and no
 * names every kernelspec of the image (*ret_image_names owns them then; kb_strv_free it). Every
 * name is looked up (cli_find_kernel) into specs[], so each one that cannot be run is named; then
 * none runs. Returns 0 or a KB_EXIT_* code. */
int cli_find_kernels(const char *rootfs, int root_fd, const char **names, size_t *n, size_t max,
                     char ***ret_image_names, kb_kernelspec **specs);

/* The bubblewrap to use (--bwrap, else KBOUND_BWRAP, else PATH); on failure prints a diagnosis and
 * returns KB_EXIT_ENFORCE. */
int cli_find_bwrap(const char *explicit_path, char **ret);

/* cli_find_bwrap, then its version (`bwrap --version`): a program that does not answer is not
 * taken for bubblewrap. Prints why and returns KB_EXIT_ENFORCE on failure. */
int cli_find_bwrap_version(const char *explicit_path, char **ret, char **ret_version);

/* The sandbox user: --sandbox-user opt, else $KBOUND_SANDBOX_USER, else the default
 * (kb_sandbox_user_resolve). On failure prints why (naming cmd) and returns KB_EXIT_USAGE (a bad
 * name) or KB_EXIT_ENFORCE (root with no user to run kernels as). */
int cli_sandbox_user(const char *cmd, const char *opt, kb_sandbox_user *ret);

/* Makes a private (0700) base folder for this run's teams, under $KBOUND_RUNTIME_DIR, else
 * $TMPDIR, else /tmp; when user switches, root's with search for the user's group (0710), after
 * checking the user can reach the parent. Returns 0 or prints why and returns KB_EXIT_ENFORCE. */
int cli_make_base_dir(const kb_sandbox_user *user, char **ret);

/* Reads OPENAI4S_KERNEL_SANDBOX / OPENAI4S_KERNEL_ALLOW_RAW_NETWORK. Returns 0, or prints why the
 * value is not accepted and returns KB_EXIT_USAGE. */
int cli_sandbox_env(bool *allow_raw_network);

/* The language packs folder: --kernels-dir, else $KBOUND_KERNELS_DIR, else the installed
 * share/kbound/kernels, else the source tree's kernels/ (build tree). 0 and a realpath, or prints
 * why and returns KB_EXIT_ENFORCE. */
int cli_resolve_kernels_dir(const char *opt, char **ret);

/* kbound-syscall-probe, the program sandbox.attack_surface runs inside the sandbox:
 * $KBOUND_SYSCALL_PROBE, else installed beside kbound (../libexec/kbound/), else in the build tree
 * next to it. *ret is a malloc'd realpath, or NULL when none is found (the check then fails, saying
 * so). Returns 0. */
int cli_resolve_syscall_probe(char **ret);

/* Team names: 1-max characters of [A-Za-z0-9_.-], not starting with '.' (check and conformance
 * take a prefix, to which "-<kernel>" is added: 40; a whole team name: 64). */
bool cli_team_name_ok(const char *team, size_t max);

/* The current UTC time as "YYYY-MM-DDTHH:MM:SSZ", malloc'd (NULL if out of memory). */
char *cli_iso_now(void);

/* Parses a positive number of seconds ("30", "2.5"); returns milliseconds or -1. */
long cli_parse_seconds(const char *s);

/* Option values shared by the commands that start kernels; each prints what is wrong (naming cmd)
 * and returns KB_EXIT_USAGE, or returns 0. --timeout SECONDS into *ret_ms; --ro-bind PATH appended
 * to paths (room for CLI_RO_BIND_MAX, plus the NULL the array ends with). */
#define CLI_RO_BIND_MAX 32
int cli_opt_timeout(const char *cmd, const char *arg, long *ret_ms);
int cli_opt_ro_bind(const char *cmd, char **paths, size_t *n, const char *arg);

/* --sockets MODE and --allow-syscall NAME (repeatable): the seccomp policy of the commands that
 * start kernels (docs/seccomp.md). cli_opt_allow_syscall collects one name (KB_EXIT_USAGE past
 * CLI_ALLOW_SYSCALL_MAX); cli_hardening checks them and builds the hardening: an unknown mode or
 * name is a usage error; under the raw-network override the sockets default to "inet" (and "unix"
 * or "default" with the network shared is a usage error: the network could not be used);
 * --disable-userns when bwrap_version has it. Prints what is wrong, naming cmd. */
#define CLI_ALLOW_SYSCALL_MAX 32
typedef struct cli_hardening_opts {
        const char *sockets;
        char *allow[CLI_ALLOW_SYSCALL_MAX + 1];
        size_t n_allow;
} cli_hardening_opts;
int cli_opt_allow_syscall(const char *cmd, cli_hardening_opts *o, const char *arg);
int cli_hardening(const char *cmd, cli_hardening_opts *o, bool allow_network, const char *bwrap_version,
                  kb_sandbox_hardening *ret);

/* --transcript FILE, shared by every command that talks to a kernel. cli_transcript_open: path
 * NULL → *ret NULL and 0; else opens it (0600, no symlinks, truncated) or prints why and returns
 * KB_EXIT_USAGE. cli_transcript_source: a per-kernel writer (NULL when t is NULL); fills
 * ret_fn and ret_userdata for kb_kernel_options / kb_check_env (both NULL without a transcript).
 * cli_transcript_close: closes, says how many lines were written, and returns KB_EXIT_FAIL if any
 * line was lost (a transcript with holes must not pass for complete), else 0. */
int cli_transcript_open(const char *path, kb_transcript **ret);
int cli_transcript_source(kb_transcript *t, const char *kernel, const char *team, kb_transcript_source **ret,
                          kb_client_msg_fn *ret_fn, void **ret_userdata);
int cli_transcript_close(kb_transcript **t, const char *path);
