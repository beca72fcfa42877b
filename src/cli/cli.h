/* cli.h: helpers shared by the kbound subcommands (messages, signals, kernel lookup). */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>
#include <kbound/bwrap.h>
#include <kbound/harness.h>
#include <kbound/run.h>
#include <kbound/secrets.h>
#include <kbound/image.h>
#include <kbound/kernel.h>
#include <kbound/report.h>
#include <kbound/kernelspec.h>
#include <kbound/sandbox.h>
#include <kbound/transcript.h>
#include "cli_cleanup.h"

enum {
        KB_EXIT_PASS = KB_RUN_EXIT_PASS,            /* every claim tested and held */
        KB_EXIT_FAIL = KB_RUN_EXIT_FAIL,            /* a check failed, or the cell raised */
        KB_EXIT_USAGE = 2,                          /* bad command line */
        KB_EXIT_ENFORCE = KB_RUN_EXIT_NOT_ENFORCED, /* the sandbox cannot be enforced here */
};

extern char **environ;

int cmd_kernelspecs(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_conformance(int argc, char **argv);
int cmd_console(int argc, char **argv);

/* Messages on stderr, prefixed "kbound: ": redacted with every set given to cli_redact_register
 * and sanitized (cli_put_sanitized), since they quote kernel-controlled text. Thread-safe. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* --color=auto|always|never. */
typedef enum cli_color {
        CLI_COLOR_AUTO = 0,
        CLI_COLOR_ALWAYS,
        CLI_COLOR_NEVER,
} cli_color;

/* How the human report fits out (cli_style.c): on a terminal, its width (TIOCGWINSZ, else
 * $COLUMNS, else 80) and, with color auto, colour unless NO_COLOR is set to anything or TERM is
 * unset or "dumb"; piped, no width (one result per line), colour only with always. verbose: every
 * detail whole. */
kb_report_style cli_report_style(FILE *out, cli_color color, bool verbose);

/* fd's width in columns when it is a terminal (as cli_report_style finds it), else 0. */
size_t cli_terminal_width(int fd);

/* The width text for people is laid out in on out (--help, doctor): the terminal's, else 80 (a
 * pipe, a file), so that no line is wider than the terminal, nor than 80 columns in a log. */
size_t cli_text_width(FILE *out);

/* Writes text (kbound's own words) flowed within cli_text_width(out): lines joined by one newline
 * are one paragraph, re-wrapped at spaces; a blank line stays; a line that starts with a space,
 * "- " or "Usage:" starts a line of its own, its further lines under its text. */
void cli_put_flowed(FILE *out, const char *text);

/* One item of a list ("  --opt ARG   text", "[ OK ] name: detail"): head then text, wrapped within
 * cli_text_width(out), text's further lines indented by indent columns (head is at most that wide
 * plus the space after it; a longer head puts the text on the next line). text's newlines are
 * spaces. */
void cli_put_item(FILE *out, const char *head, size_t indent, const char *text);

/* One line fmt formats, wrapped within cli_text_width(out), its further lines indented by indent
 * columns (doctor's "[ OK ] name: detail"). */
void cli_put_line(FILE *out, size_t indent, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The console's input (cli_input.c): libedit on a terminal (cli_edit.c), the raw reader otherwise. */
#define CLI_INPUT_LINE_MAX (1024 * 1024) /* one input line; a cell may hold many */
enum {
        CLI_INPUT_LINE = 1,
        CLI_INPUT_EOF = 0,
        CLI_INPUT_SIGNAL = -1,
        CLI_INPUT_KERNEL_DIED = -2,
        CLI_INPUT_ERROR = -3,
        CLI_INPUT_TOO_LONG = -4,
};
/* Line input straight from fd 0 (no stdio buffering), so a wait can also watch the kernel's pidfd
 * and the signal pipe. */
typedef struct cli_line_reader {
        char *buf;
        size_t len, cap;
        bool eof;
        bool discarding; /* inside a line over CLI_INPUT_LINE_MAX: dropping bytes up to its newline */
        int error;       /* the errno of CLI_INPUT_ERROR */
} cli_line_reader;
typedef enum cli_input_kind {
        CLI_INPUT_CODE,   /* code: edited, Tab completes by the kernel, whole cells kept in the history */
        CLI_INPUT_ANSWER, /* an answer to input() in a cell: edited, never kept */
        CLI_INPUT_SECRET, /* an answer to a password prompt: echo off, never kept */
} cli_input_kind;
/* What Tab puts in the line: bytes [start, end) of the text replaced by one of matches (clean
 * UTF-8 text, no controls), or by their longest common beginning when there are several. */
typedef struct cli_completion {
        char **matches;
        size_t n;
        size_t start, end;
} cli_completion;
void cli_completion_clear(cli_completion *c);
/* Asked for the completions of text (the whole line being edited) at byte cursor. Returns 0 with
 * *ret filled (n may be 0), -1 when there is nothing to offer, or 1 when it wrote a line of its
 * own below the prompt (the editor then draws the prompt again). */
typedef int (*cli_complete_fn)(void *userdata, const char *text, size_t cursor, cli_completion *ret);
struct editline;
struct history;
typedef struct cli_input {
        bool edit;          /* stdin and stdout are a terminal: libedit edits the line */
        char *history_path; /* where the history is kept (NULL: none) */
        cli_line_reader lr; /* the raw reader: a pipe or file, and secrets */
        struct editline *el;
        struct history *hist;
        cli_complete_fn complete;
        void *complete_userdata;
        /* The read in progress, for libedit's callbacks (cli_edit.c). */
        cli_input_kind kind;
        const char *prompt;
        int pidfd, signal_fd;
        int stopped;  /* a wait inside libedit ended it: CLI_INPUT_SIGNAL, _KERNEL_DIED or _ERROR */
        int sig;      /* the signal of CLI_INPUT_SIGNAL */
        bool eof;     /* the terminal's input ended inside libedit */
        int last_key; /* the first byte of the last key libedit read, -1 if none */
        bool drain;   /* the next key is taken only if the terminal holds it already, never waited for */
        bool idle;    /* in drain: there was none */
} cli_input;
/* Sets in up for the process's stdin; with history, the terminal's history is read from and kept
 * in $XDG_STATE_HOME/kbound/console_history (default ~/.local/state), mode 0600. */
void cli_input_open(cli_input *in, bool history);
/* Tab in a CODE line asks fn (none: Tab inserts itself). */
void cli_input_set_completion(cli_input *in, cli_complete_fn fn, void *userdata);
/* Shows prompt (clean text) and reads one line; on a terminal the line starts as initial (clean
 * text, may be NULL), which the typist may edit like the rest. Returns CLI_INPUT_LINE with
 * *ret_line (malloc'd, no final newline, NUL-terminated; a cell recalled from the history holds
 * newlines) and *ret_len (the line may hold NUL bytes from a pipe), CLI_INPUT_EOF,
 * CLI_INPUT_SIGNAL (*ret_sig set; the line so far is dropped), CLI_INPUT_KERNEL_DIED,
 * CLI_INPUT_TOO_LONG (dropped up to its newline: input goes on) or CLI_INPUT_ERROR (in->lr.error
 * says why). */
int cli_input_read(cli_input *in, const char *prompt, const char *initial, cli_input_kind kind, int pidfd,
                   int signal_fd, char **ret_line, size_t *ret_len, int *ret_sig);
/* Puts a cell (all its lines, as run) into the terminal's history as one entry, without its
 * trailing blanks; nothing without a terminal, for an empty cell, or one the same as the last. */
void cli_input_remember(cli_input *in, const char *cell, size_t len);
/* Forgets input read ahead (after Ctrl-C). */
void cli_input_discard(cli_input *in);
/* Writes the history back; frees in. */
void cli_input_close(cli_input *in);
/* Reads signal numbers from the self-pipe; returns the last one (0 if none). */
int cli_drain_signals(int signal_fd);
/* Waits until standard input can be read (or is at its end), the kernel's pidfd says it died, or
 * a signal came through the self-pipe. Returns 1 when input is there (nothing read yet),
 * CLI_INPUT_SIGNAL (*ret_sig set), CLI_INPUT_KERNEL_DIED, or CLI_INPUT_ERROR (*ret_error: poll's
 * errno). pidfd may be -1 (not watched). */
int cli_input_wait(int pidfd, int signal_fd, int *ret_sig, int *ret_error);

/* The terminal's line editor (cli_edit.c), for cli_input on a terminal. cli_edit_open returns 0,
 * or -1 when libedit cannot be set up (the raw reader is used then). cli_edit_read reads as
 * cli_input_read. */
int cli_edit_open(cli_input *in);
int cli_edit_read(cli_input *in, const char *prompt, const char *initial, char **ret_line, size_t *ret_len,
                  int *ret_sig);
void cli_edit_remember(cli_input *in, const char *cell, size_t len);
void cli_edit_close(cli_input *in);

/* Shows text (clean: sanitized by the caller) a screen at a time when it is longer than the
 * terminal (cli_pager.c): Space the next screen, Enter or Down the next line, q, Esc or Ctrl-C
 * ends it. Not a terminal: the whole text. Returns 0, or the signal (other than SIGINT) that came
 * through signal_fd while it waited for a key. */
int cli_page(const char *text, size_t len, int signal_fd);

/* Unicode code points (what Jupyter's cursor positions count) and UTF-8 bytes (cli_assist.c):
 * how many code points s[0..len) holds; the byte offset of code point n of s[0..len) (len when n
 * is past the end). */
size_t cli_utf8_chars(const char *s, size_t len);
size_t cli_utf8_offset(const char *s, size_t len, size_t n);
/* Whether line is a request for help on a name, as IPython's `name?` (detail 0) and `name??`
 * (detail 1): a name (letters, digits, '_', '.', '%', and non-ASCII letters), then one or two
 * '?', blanks around. Sets the name's bytes [*ret_start, *ret_end) and *ret_detail. */
bool cli_help_request(const char *line, size_t len, size_t *ret_start, size_t *ret_end, int *ret_detail);
/* complete_request for code at byte cursor: the kernel's matches (redacted; a match that is not
 * clean text is dropped) and the bytes they replace. Returns 0, -EPROTO (a reply without the
 * positions, or with positions outside code), or kb_client_request's errors (-ETIMEDOUT,
 * -ECANCELED, -ESRCH, ...). */
int cli_assist_complete(kb_kernel *k, const char *code, size_t cursor, int64_t deadline_ms, cli_completion *ret);
/* inspect_request for code at byte cursor with detail_level detail: the reply's text/plain,
 * redacted and sanitized for the terminal (malloc'd; *ret_text NULL when the kernel found
 * nothing). Returns 0, -ENOMEM, or kb_client_request's errors. */
int cli_assist_inspect(kb_kernel *k, const char *code, size_t cursor, int detail, int64_t deadline_ms, char **ret_text,
                       size_t *ret_len);
/* The text/plain of a mime bundle (an inspect reply's data, a page payload's), redacted and
 * sanitized for the terminal (malloc'd); NULL when it has none or out of memory. */
char *cli_assist_bundle_text(kb_kernel *k, json_object *bundle, size_t *ret_len);

/* For a CI job (cli_ci.c): with $GITHUB_STEP_SUMMARY set, the markdown summary appended to that
 * file; with $GITHUB_ACTIONS "true", an ::error annotation per failing check on out. A summary that
 * cannot be written is said on stderr; the verdict and exit code stay what they are. */
void cli_ci_output(json_object *run, FILE *out);

void cli_set_quiet(bool quiet);
/* Whether progress also carries each result as it is judged (KB_LOG_DEBUG lines; --verbose). */
void cli_set_verbose(bool verbose);
bool cli_verbose(void);
/* The last cli_error line, redacted ("" if none). */
const char *cli_last_error(void);

/* Secret sets (borrowed; they must outlive their use) that every message and every report is
 * redacted with: the canaries and daemon secrets of a check run. Register before starting worker
 * threads. Returns 0 or -E2BIG. cli_redact_clear forgets them (before they are destroyed). */
#define CLI_REDACT_MAX 8
int cli_redact_register(const kb_secrets *s);
void cli_redact_clear(void);
/* A new reference to o redacted with every registered set (o itself when nothing matched); NULL
 * if out of memory. */
json_object *cli_redact_json(json_object *o);

/* Writes untrusted text without anything a terminal would act on (kb_sanitize_put's
 * KB_SANITIZE_TERMINAL): ESC sequences (CSI, OSC, DCS/PM/APC, others), C0 controls but newline and
 * tab, DEL, the C1 controls U+0080..U+009F; invalid UTF-8 shown as '?'. */
void cli_put_sanitized(FILE *out, const char *s);
/* The same for s[0..len), which may hold NULs: each is shown as U+2400 (␀). */
void cli_put_sanitized_len(FILE *out, const char *s, size_t len);

/* SIGINT/SIGTERM make the returned fd readable (a self-pipe); library waits poll it and end with
 * -ECANCELED. cli_signal_received() tells which signal came (0 if none). main installs them
 * before a command that ends cleanly on them (check, conformance, run, console) creates anything,
 * and unblocks them then: a signal that came while they were blocked (across check's re-exec,
 * cli_signals_hold) is delivered to the handler at that moment. */
int cli_signals_install(void);
int cli_signal_received(void);
void cli_signals_unblock(void);
/* Before an exec of kbound itself: blocks the three, and makes a signal already received pending
 * again, so the new image's handler gets it instead of the default action killing it.
 * cli_signals_unblock undoes it when the exec failed. */
void cli_signals_hold(void);

/* kbound adopts whatever its sandboxes orphan (PR_SET_CHILD_SUBREAPER), and before exiting kills
 * and reaps every child it still has: nothing kbound starts outlives it. */
void cli_become_subreaper(void);
void cli_reap_orphans(void);

/* --rootfs DIR: makes it absolute and opens it; it must be a directory with a real usr/ directory
 * (not a symlink). Returns 0, or prints why and returns KB_EXIT_USAGE. */
int cli_rootfs_open(const char *arg, char **ret_path, int *ret_fd);

/* Where a command's kernels come from and what their sandbox will show: the host's system paths,
 * or an image (--rootfs DIR, or --image PATH unpacked for the run); the --ro-bind folders; the
 * sys.prefix-style folders (--prefix) whose kernelspecs are searched too. */
typedef struct cli_root {
        char *rootfs;          /* the image's root folder (as given, or unpacked); NULL: the host */
        int root_fd;           /* open on rootfs, else -1 */
        kb_image *image;       /* --image: the unpacked image (removed by cli_root_close) */
        char *const *ro_paths; /* --ro-bind, NULL-terminated */
        char *const *prefixes; /* --prefix, NULL-terminated */
        bool allow_network;
        bool sandbox; /* false (run --sandbox off): no sandbox, nothing to look at */
        const kb_sandbox_user *user;
} cli_root;

/* Opens the image of --rootfs or --image (at most one of them) into root, whose other fields the
 * caller has set (root->rootfs NULL and root_fd -1 for the host). --image is reused from the image
 * cache (cli_image_cache_dir) when the cache holds it verified, else unpacked and kept there; with
 * no_cache (--image-no-cache), or a cache the sandbox user cannot reach, it is unpacked below the
 * run's base folder (made now if *base is NULL: the caller then owns it) for this run alone. Either
 * way in folders only the sandbox user may search, within --image-max-size (max_bytes; 0: the
 * default). Prints why and returns a KB_EXIT_* code on failure: 2 for a missing path or something
 * that is no image, 3 for missing tools or an image that cannot be unpacked. */
int cli_root_open(const char *cmd, const char *rootfs_opt, const char *image_opt, uint64_t max_bytes, bool no_cache,
                  char **base, cli_root *root);

/* The image cache: $XDG_CACHE_HOME/kbound (an absolute XDG_CACHE_HOME), else, as root,
 * /var/cache/kbound (root's home is no place the sandbox user may enter), else ~/.cache/kbound;
 * made (0700) if missing. Returns 0 and the malloc'd path, or -errno. */
int cli_image_cache_dir(char **ret);

/* Removes the unpacked image (also under --keep: nothing of an image outlives kbound) and closes
 * the folder. Safe on a zeroed or already closed root. */
void cli_root_close(cli_root *root);

/* The report's account of the root: "rootfs" (the folder or null) and "image" (kb_image_json or
 * null) added to the sandbox object. */
void cli_root_report(const cli_root *root, json_object *sandbox);

/* --image-max-size BYTES[K|M|G]: into *ret, or prints why and returns KB_EXIT_USAGE. */
int cli_opt_size(const char *cmd, const char *option, const char *arg, uint64_t *ret);

/* --prefix DIR (a venv's or conda env's sys.prefix; inside the image with --rootfs/--image):
 * appended to prefixes (room for CLI_PREFIX_MAX plus the NULL). Prints why and returns
 * KB_EXIT_USAGE, or 0. */
#define CLI_PREFIX_MAX 8
int cli_opt_prefix(const char *cmd, char **prefixes, size_t *n, const char *arg);

/* Finds a kernelspec (on the host, or inside root's image: its Jupyter folders, its program
 * there) and, unless the command runs unsandboxed, runs the preflight: the kernel's program, its
 * "#!" interpreter and its resource folder (when argv uses it) must be there in the sandbox that
 * root describes. On failure prints which kernel, which image, which path and the fix
 * (--ro-bind DIR, --rootfs DIR), and returns KB_EXIT_ENFORCE (KB_EXIT_USAGE for a bad name). */
int cli_find_kernel(const char *name, const cli_root *root, kb_kernelspec **ret);

/* The name of every kernelspec of the image, broken ones included (check's and conformance's
 * default kernels: validating an image means all of them, and cli_find_kernel then says what is
 * wrong with a broken one). Returns 0 and a vector to free with kb_strv_free; or prints why and
 * returns KB_EXIT_ENFORCE (none at all, or unreadable) or KB_EXIT_USAGE (more than max: never a
 * silent drop). */
int cli_rootfs_kernels(const cli_root *root, size_t max, char ***ret_names);

/* The kernels a command runs (check, conformance): names[0..*n) as given, or with an image and no
 * names every kernelspec of the image (*ret_image_names owns them then; kb_strv_free it). Every
 * name is looked up (cli_find_kernel) into specs[], so each one that cannot be run is named; then
 * none runs. Returns 0 or a KB_EXIT_* code. */
int cli_find_kernels(const cli_root *root, const char **names, size_t *n, size_t max, char ***ret_image_names,
                     kb_kernelspec **specs);

/* The kernelspec search folders for root: on the host kb_kernelspec_search_path_prefixes with
 * --prefix and the prefixes found from the environment; in an image its own folders. Prints why
 * and returns KB_EXIT_ENFORCE on failure. */
int cli_search_dirs(const cli_root *root, char ***ret_dirs);

/* The bubblewrap to use (--bwrap, else KBOUND_BWRAP, else PATH); on failure prints a diagnosis and
 * returns KB_EXIT_ENFORCE. */
int cli_find_bwrap(const char *explicit_path, char **ret);

/* cli_find_bwrap, then its version and options (kb_bwrap_probe): a program that does not answer is
 * not taken for bubblewrap, and one that lacks an option kbound's sandbox needs is refused, in the
 * words `kbound doctor` uses (kb_bwrap_describe). Prints why and returns KB_EXIT_ENFORCE on failure. */
int cli_find_bwrap_version(const char *explicit_path, char **ret, char **ret_version, kb_bwrap *ret_info);

/* The sandbox user: --sandbox-user opt, else $KBOUND_SANDBOX_USER, else the default
 * (kb_sandbox_user_resolve). On failure prints why (naming cmd) and returns KB_EXIT_USAGE (a bad
 * name) or KB_EXIT_ENFORCE (root with no user to run kernels as). */
int cli_sandbox_user(const char *cmd, const char *opt, kb_sandbox_user *ret);

/* Raises the soft limit on open files to the hard limit, as systemd does for itself (kernels
 * started later inherit it, and need it: a Python kernel holds some 60 descriptors). */
void cli_raise_fd_limit(void);

/* Before any kernel starts: whether the descriptors n_kernels kernels need (KB_KERNEL_FDS each,
 * CLI_FDS_RESERVE for kbound itself, plus those open now) fit under the limit. A run that would
 * run out partway would fail with kernels half started; this one fails first. Prints the numbers
 * and returns KB_EXIT_ENFORCE, or returns 0. */
#define CLI_FDS_RESERVE                                                                                                \
        24 /* libzmq's context (its mailboxes and pollers), removing team folders                                      \
            * (nftw: up to 16 levels at once), reports, transcript, /proc reads */
int cli_fds_check(const char *cmd, size_t n_kernels);

/* Where base folders are made: $KBOUND_RUNTIME_DIR, else $TMPDIR, else /tmp; a relative one made
 * absolute from the working directory (resolved when it exists). */
const char *cli_runtime_parent(void);

/* Makes a private (0700) base folder for this run's teams (kbound-XXXXXX under
 * cli_runtime_parent()) and holds its lock (flock) for kbound's life; when user switches, root's
 * with search for the user's group (0710), after checking the user can reach the parent. First
 * removes the base folders of this user that no live run holds (their lock is free) and that were
 * not kept with --keep, saying so on stderr: a run that was killed left its team folders and
 * canaries there. Returns 0 or prints why and returns KB_EXIT_ENFORCE. */
int cli_make_base_dir(const kb_sandbox_user *user, char **ret);

/* Marks base as kept (--keep): later runs leave it alone. Says where it is. */
void cli_keep_base_dir(const char *base);

/* The base folders of this user under parent that no live run holds: stale ones (left by a run
 * that is gone) are removed with remove_stale, else listed in *ret_stale; kept ones listed in
 * *ret_kept (each may be NULL; NULL-terminated, free with kb_strv_free; at most 64 listed).
 * Returns how many stale ones were found. */
size_t cli_base_dirs_scan(const char *parent, bool remove_stale, char ***ret_stale, char ***ret_kept);

/* Reads OPENAI4S_KERNEL_SANDBOX / OPENAI4S_KERNEL_ALLOW_RAW_NETWORK. Returns 0, or prints why the
 * value is not accepted and returns KB_EXIT_USAGE. */
int cli_sandbox_env(bool *allow_raw_network);

/* The language packs folder: --kernels-dir, else $KBOUND_KERNELS_DIR, else the installed
 * share/kbound/kernels, else the source tree's kernels/ (build tree). 0 and a realpath, or prints
 * why and returns KB_EXIT_ENFORCE. */
/* --kernels-dir DIR, a user's language packs searched before kbound's: its real path, or NULL when
 * not given; an error when it is no folder. */
int cli_resolve_user_kernels_dir(const char *opt, char **ret);
/* kbound's language packs: $KBOUND_KERNELS_DIR, the installed share/kbound/kernels, the source
 * tree's; failing those, the user's folder alone (user, when not NULL). */
int cli_resolve_kernels_dir(const char *user, char **ret);

/* --team NAME, the one validation every command uses: 1-max characters of [A-Za-z0-9_.-], not
 * starting with '.' (kb_team_name_valid's rule; check and conformance take a prefix, to which
 * "-<kernel>" is added: CLI_TEAM_PREFIX_MAX; a whole team name: KB_TEAM_NAME_MAX). Sets *ret to
 * arg and returns 0, or prints which rule the name breaks (naming cmd) and returns KB_EXIT_USAGE. */
#define CLI_TEAM_PREFIX_MAX KB_RUN_TEAM_PREFIX_MAX
int cli_opt_team(const char *cmd, const char *arg, size_t max, const char **ret);

/* kbound-syscall-probe, the program sandbox.attack_surface runs inside the sandbox:
 * $KBOUND_SYSCALL_PROBE, else installed beside kbound (../libexec/kbound/), else in the build tree
 * next to it. *ret is a malloc'd realpath, or NULL when none is found (the check then fails, saying
 * so). Returns 0. */
int cli_resolve_syscall_probe(char **ret);
/* kbound-probe, the boundary probe program the cells spawn: $KBOUND_PROBE, else found as
 * cli_resolve_syscall_probe finds its program. *ret as there. Returns 0. */
int cli_resolve_boundary_probe(char **ret);

/* Parses seconds written as decimal digits with an optional fraction ("30", "2.5", "0.001"): no
 * sign, blanks, exponent, hex, "inf" or "nan". Returns milliseconds (digits past the third
 * decimal are dropped), -EINVAL (not written that way) or -ERANGE (under 1 ms, or over
 * CLI_TIMEOUT_MAX_S). */
#define CLI_TIMEOUT_MAX_S 86400
long cli_parse_seconds(const char *s);

/* Milliseconds as the seconds a user would have written: "300", "0.5", "0.001". */
typedef struct cli_seconds_text {
        char s[32];
} cli_seconds_text;
cli_seconds_text cli_seconds(long ms);

/* Option values shared by the commands that start kernels; each prints what is wrong (naming cmd)
 * and returns KB_EXIT_USAGE, or returns 0. --timeout SECONDS into *ret_ms; --ro-bind PATH appended
 * to paths (room for CLI_RO_BIND_MAX, plus the NULL the array ends with). */
#define CLI_RO_BIND_MAX 32
int cli_opt_timeout(const char *cmd, const char *arg, long *ret_ms);
int cli_opt_ro_bind(const char *cmd, char **paths, size_t *n, const char *arg);

/* A report asked for on the command line (--json FILE, --junit FILE). FILE "-" is standard
 * output, and so is a path naming the file standard output already is (/dev/stdout, or the file
 * it was redirected to); the same for standard error. Anything else is written by
 * kb_report_write_file: a regular file or a new path replaced atomically, a device or FIFO written
 * in place, never replaced. */
typedef struct cli_report {
        const char *option; /* "--json" */
        const char *path;   /* NULL: not asked for */
        int (*render)(json_object *, FILE *);
        int fd; /* set by cli_reports_check: 1 or 2, else -1 */
} cli_report;

/* Checks every report path before anything is started: a directory, an unwritable path or a
 * block device, two reports on standard output, and two outputs (reports or transcript_path) that
 * name one file are usage errors. Prints which option, which path and why; returns 0 or
 * KB_EXIT_USAGE. *ret_stdout_taken says whether a report goes to standard output (the human
 * summary then goes to standard error, so the report stays parseable). */
int cli_reports_check(const char *cmd, cli_report *reports, size_t n, const char *transcript_path,
                      bool *ret_stdout_taken);

/* Writes every report asked for (stdout flushed first). A failure names the option, the path and
 * the errno's own words ("No space left on device"). Returns 0 or KB_EXIT_FAIL. */
int cli_reports_write(const cli_report *reports, size_t n, json_object *run);

/* Makes stdout (when not a terminal) remember the errno of a write that failed, for
 * cli_stdout_close. Call first, before anything is written. */
void cli_stdout_install(void);

/* Flushes standard output at exit: output that never arrived (a full disk, a closed pipe) must not
 * pass for a success. Prints why and returns KB_EXIT_FAIL, or returns 0. */
int cli_stdout_close(void);
/* --sockets MODE and --allow-syscall NAME (repeatable): the seccomp policy of the commands that
 * start kernels (docs/seccomp.md). cli_opt_allow_syscall collects one name (KB_EXIT_USAGE past
 * CLI_ALLOW_SYSCALL_MAX); cli_hardening checks them and builds the hardening: an unknown mode or
 * name is a usage error; under the raw-network override the sockets default to "inet" (and "unix"
 * or "default" with the network shared is a usage error: the network could not be used);
 * nested user namespaces refused and the in-memory folders sized as bwrap (NULL: no sandbox) can
 * (kb_bwrap_hardening: its own options, or kbound's stand-ins). Prints what is wrong, naming cmd. */
#define CLI_ALLOW_SYSCALL_MAX 32
typedef struct cli_hardening_opts {
        const char *sockets;
        char *allow[CLI_ALLOW_SYSCALL_MAX + 1];
        size_t n_allow;
        const char *limits[KB_LIMIT_MAX_ID]; /* --memory-max, --tasks-max, --tmp-size, --log-max as given */
} cli_hardening_opts;
int cli_opt_allow_syscall(const char *cmd, cli_hardening_opts *o, const char *arg);
int cli_hardening(const char *cmd, cli_hardening_opts *o, bool allow_network, const kb_bwrap *bwrap,
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

/* A one-kernel command's (run, console) kb_kernel_options for spec as team in base, from what
 * root says of the sandbox (on or off, its user, image, --ro-bind folders, network); the caller
 * adds its transcript hook, cancel fd and deadline. */
kb_kernel_options cli_kernel_options(const cli_root *root, const kb_kernelspec *spec, const char *team,
                                     const char *base, const char *bwrap, const kb_sandbox_hardening *hardening);

/* kb_kernel_start, and when it fails says so: "kernel 'NAME' in image PATH: cannot start in the
 * sandbox within N s (--timeout): why", and returns KB_EXIT_FAIL when cancelled (or unsandboxed),
 * else KB_EXIT_ENFORCE. timeout_ms is the --timeout the deadline came from. Returns 0 and *ret. */
int cli_kernel_start(const kb_kernel_options *ko, const cli_root *root, long timeout_ms, kb_kernel **ret);

/* The options the commands share (options.c: one table, one getopt_long loop, one wording for
 * --help). A command names the long options it takes, in the order its --help lists them
 * (cli_opts_usage prints them so; getopt_long's messages follow that order too), from the shared
 * table or from its own; the shared ones are parsed into a cli_opts, each with the validation
 * above, and a command sees only its own options, 'h' and getopt's '?'. */
enum {
        CLI_OPT_KERNEL = 'k', /* also -k */
        CLI_OPT_TEAM = 0x100,
        CLI_OPT_JSON,
        CLI_OPT_JUNIT,
        CLI_OPT_ALLOW_RAW_NETWORK,
        CLI_OPT_BWRAP,
        CLI_OPT_SANDBOX_USER,
        CLI_OPT_SOCKETS,
        CLI_OPT_ALLOW_SYSCALL,
        CLI_OPT_TRANSPORT,
        CLI_OPT_KERNELS_DIR,
        CLI_OPT_RO_BIND,
        CLI_OPT_TIMEOUT,
        CLI_OPT_KEEP,
        CLI_OPT_TRANSCRIPT,
        CLI_OPT_ROOTFS,
        CLI_OPT_IMAGE,
        CLI_OPT_IMAGE_MAX_SIZE,
        CLI_OPT_IMAGE_NO_CACHE,
        CLI_OPT_PREFIX,
        CLI_OPT_MEMORY_MAX,
        CLI_OPT_TASKS_MAX,
        CLI_OPT_TMP_SIZE,
        CLI_OPT_LOG_MAX,
        CLI_OPT_WORKSPACE_MAX,
        CLI_OPT_CPU_MAX,
        CLI_OPT_COLOR,
        CLI_OPT_VERBOSE,
};
#define CLI_OPTS_MAX 32
#define CLI_KERNELS_MAX KB_RUN_KERNELS_MAX
#define CLI_OPTS_REFUSED (-2) /* cli_opts_next: a shared option's value was refused (and said why) */

typedef struct cli_opts {
        const char *cmd;                      /* "check": named in every message */
        size_t kernels_max;                   /* 1 (the default): the last --kernel wins; else at
                                               * most this many (<= CLI_KERNELS_MAX) */
        const char *kernels[CLI_KERNELS_MAX]; /* --kernel NAME|PATH */
        size_t n_kernels;
        const char *team;                    /* --team, checked against team_max */
        size_t team_max;                     /* default KB_TEAM_NAME_MAX */
        const char *json_path, *junit_path;  /* --json FILE, --junit FILE */
        bool allow_network;                  /* --allow-raw-network */
        const char *bwrap, *sandbox_user;    /* --bwrap, --sandbox-user */
        cli_hardening_opts hardening;        /* --sockets, --allow-syscall */
        bool tcp;                            /* --transport tcp: every kernel speaks TCP through the relay */
        const char *kernels_dir;             /* --kernels-dir */
        char *ro_paths[CLI_RO_BIND_MAX + 1]; /* --ro-bind, NULL-terminated */
        size_t n_ro;
        long timeout_ms;                    /* --timeout */
        bool keep;                          /* --keep */
        const char *transcript;             /* --transcript FILE */
        const char *rootfs, *image;         /* --rootfs DIR, --image PATH */
        uint64_t image_max;                 /* --image-max-size (0: the default) */
        bool image_no_cache;                /* --image-no-cache */
        char *prefixes[CLI_PREFIX_MAX + 1]; /* --prefix, NULL-terminated */
        size_t n_prefixes;
        cli_color color;                          /* --color */
        bool verbose;                             /* --verbose */
        struct option longopts[CLI_OPTS_MAX + 1]; /* what getopt_long is given */
} cli_opts;

/* Empties o for cmd (the command then sets its defaults: team, timeout_ms, kernels_max, team_max)
 * and builds its getopt_long table from accepts (NULL-terminated long option names), each looked up
 * in own (the command's options, {0}-terminated, may be NULL) and then in the shared table.
 * Returns 0, or -EINVAL for a name in neither or more than CLI_OPTS_MAX (a programming error). */
int cli_opts_init(cli_opts *o, const char *cmd, const char *const *accepts, const struct option *own);

/* getopt_long over argv with shortopts and o's table, taking every shared option into o (--quiet
 * calls cli_set_quiet). Returns the next value for the command to handle (one of its own, 'h', or
 * '?' for what getopt_long refused and reported), CLI_OPTS_REFUSED for a shared option whose value
 * is wrong (already reported, naming cmd: a usage error), or -1 at the end (optind is then the
 * first operand). */
int cli_opts_next(cli_opts *o, int argc, char **argv, const char *shortopts);

/* The name among names[0..n) nearest to word[0..len) (at most two edits: a typo), or NULL: the
 * "did you mean" of a mistyped option or command. */
const char *cli_suggest(const char *word, size_t len, const char *const *names, size_t n);

/* One of a command's own options in its --help: the long option, as written ("--sandbox on|off"),
 * and what it does (further lines after '\n'). */
typedef struct cli_help {
        const char *name; /* "sandbox" */
        const char *syntax;
        const char *text;
} cli_help;

/* Prints o->cmd's --help to out: intro, a blank line, the line(s) of every option o accepts in
 * cli_opts_init's order (a shared option in options.c's wording for o->cmd, a command's own from
 * own, {0}-terminated, may be NULL; --help itself has none), then a blank line and epilogue (may be
 * NULL). Returns 0, or -EINVAL without printing anything when an option has no line (a
 * programming error). */
int cli_opts_usage(const cli_opts *o, FILE *out, const char *intro, const cli_help *own, const char *epilogue);

/* The head of a report command's options (check, conformance): which kernels, as which team, and
 * the reports it writes. */
#define CLI_ACCEPTS_REPORTED "kernel", "team", "json", "junit"
/* The options every command that starts a sandbox accepts, as runs of cli_command.accepts in
 * --help order: who runs the sandbox, and then what it binds and how far it is bounded. */
#define CLI_ACCEPTS_SANDBOX "bwrap", "sandbox-user", "sockets", "allow-syscall", "transport"
#define CLI_ACCEPTS_LIMITS                                                                                             \
        "ro-bind", "image", "image-max-size", "image-no-cache", "memory-max", "tasks-max", "tmp-size",                 \
                "workspace-max", "cpu-max", "log-max", "prefix"
/* And how a command that writes a report speaks: its progress, colours, detail, and --help. */
#define CLI_ACCEPTS_OUTPUT "quiet", "color", "verbose", "help"

/* What a command that starts kernels is on its command line: its options (cli_opts_init's accepts
 * and own), its --help (cli_opts_usage's intro, own lines and epilogue), its default team, and what
 * it does with one of its own options. */
typedef struct cli_command {
        const char *name;             /* "check" */
        const char *const *accepts;   /* long option names, in --help order, NULL-terminated */
        const struct option *own;     /* its own options, {0}-terminated; may be NULL */
        const cli_help *own_help;     /* their --help lines, {0}-terminated; may be NULL */
        const char *intro, *epilogue; /* epilogue may be NULL */
        const char *team;             /* --team's default */
        const char *operand;          /* "CODE": the one operand it takes (run); NULL: none */
        /* Takes one of own's values (arg: its argument, or NULL): returns 0, or says what is wrong
         * and returns KB_EXIT_USAGE. NULL when the command has none. */
        int (*take)(void *userdata, int c, const char *arg);
} cli_command;

/* Prints cmd's --help (cli_opts_usage) to out. */
void cli_command_usage(const cli_opts *o, const cli_command *cmd, FILE *out);

/* The one loop over a command's options. cli_opts_parse_many (check, conformance): many kernels
 * (--kernel repeatable, up to CLI_KERNELS_MAX), --team a prefix, --timeout the whole run's (default
 * 300 s), -q; operands are left for cli_setup_begin to refuse. cli_opts_parse_one (run, console):
 * one kernel, required (the last --kernel wins), --team a whole name, --timeout start-up's
 * (default 60 s), and exactly the operand cmd->operand names (into *ret_operand; NULL when there is none) or none. Each
 * fills o and hands the command's own options to cmd->take with userdata. --help prints the usage on standard output;
 * an option getopt_long refuses, a missing --kernel or a wrong operand count prints it on standard error after the
 * error. Returns CLI_GO_ON when the command goes on, else the exit code it ends with (0 after --help, KB_EXIT_USAGE).
 */
#define CLI_GO_ON (-1)
int cli_opts_parse_many(cli_opts *o, const cli_command *cmd, int argc, char **argv, void *userdata);
int cli_opts_parse_one(cli_opts *o, const cli_command *cmd, int argc, char **argv, void *userdata,
                       const char **ret_operand);

/* The one kernel of run and console, set up from the options (cli_single.c). cli_single_prepare:
 * the sandbox mode (environment override) and user, the image or rootfs, the kernelspec, the
 * descriptors, the transcript, bwrap and its version (when sandbox), the seccomp policy and the
 * base folder, each saying what went wrong; returns 0 or the exit code. cli_single_start: the
 * kernel (cancel_fd readable → stop), 0 or the exit code (cli_kernel_start). cli_single_end: the
 * kernel destroyed (its folder kept with --keep), the transcript closed, the image and base folder
 * removed; returns exit_code, or KB_EXIT_FAIL when it was a pass and the transcript is incomplete.
 * Call it after either of the others, whatever they returned. */
typedef struct cli_single {
        const char *cmd;
        cli_opts *opts;
        bool allow_network; /* --allow-raw-network or the environment's override */
        kb_sandbox_user user;
        cli_root root;
        kb_kernelspec *spec;
        kb_transcript *transcript;
        kb_transcript_source *source;
        kb_client_msg_fn on_msg;
        void *on_msg_userdata;
        char *bwrap, *bwrap_version, *base;
        char *syscall_probe;  /* kbound's program in the sandbox (limits, attack surface); may be NULL */
        char *boundary_probe; /* kbound-probe, bound beside it; may be NULL */
        kb_bwrap bwrap_info;
        kb_sandbox_hardening hardening;
        kb_kernel *kernel;
} cli_single;
int cli_single_prepare(cli_single *s, const char *cmd, cli_opts *o, bool sandbox);
int cli_single_start(cli_single *s, int cancel_fd);
int cli_single_end(cli_single *s, int exit_code);

/* What check and conformance set up before their kernels start (cli_setup.c), in two halves so a
 * command can check its own options in between (check --require-full-boundary). */
typedef struct cli_setup {
        const char *cmd;
        cli_report reports[2];  /* --json, --junit */
        bool summary_to_stderr; /* a report goes to standard output */
        bool allow_network;     /* the raw-network override (--allow-raw-network or the
                                 * environment's), when the command claims a network boundary */
        kb_sandbox_user user;
        cli_root root; /* root.user is &user: a cli_setup is not moved */
        kb_kernelspec *specs[CLI_KERNELS_MAX];
        size_t n_kernels;
        char **image_kernels;               /* the names found in the image, when none were given */
        const char *names[CLI_KERNELS_MAX]; /* the kernels asked for (or the defaults, or the image's):
                                             * a refused run's report lists them */
        size_t n_names;
        const char *team; /* --team (the teams' prefix) */
        char *bwrap, *bwrap_version, *kernels_dir, *user_kernels_dir, *base;
        char *syscall_probe;  /* kbound's program in the sandbox (limits); may be NULL */
        char *boundary_probe; /* kbound-probe, bound beside it; may be NULL */
        kb_bwrap bwrap_info;
        kb_sandbox_hardening hardening;
        bool reports_ok;               /* the report paths were checked: a refusal can still be reported */
        cli_color color;               /* --color, for the human report */
        bool verbose;                  /* --verbose: every detail whole */
        int64_t started_ms;            /* kb_now_ms() at cli_setup_begin: when the run started */
        char started_at[32];           /* and as the report's "YYYY-MM-DDTHH:MM:SSZ" ("" without a clock) */
        cli_seconds_text timeout_text; /* --timeout as written, for the report (cli_run_facts) */
        bool audit;                    /* `kbound audit`: the kernelspecs start as they are (no bwrap of kbound's) */
} cli_setup;

/* Before anything is created: no operand after the options, the report paths
 * (cli_reports_check), the sandbox mode of the environment (cli_sandbox_env; its raw-network
 * override counts only when network_claimed), the sandbox user. Prints why and returns a KB_EXIT_*
 * code, or 0. Nothing to undo either way. */
int cli_setup_begin(cli_setup *s, cli_opts *o, int argc, char **argv, bool network_claimed);

/* Then: the default kernels (python3 and ir, unless an image gives them), the image or rootfs,
 * every kernel found (cli_find_kernels) and the descriptors for them, bwrap and its version, the
 * seccomp policy, the language packs and the run's base folder. Prints why and returns a KB_EXIT_*
 * code, or 0. Call cli_setup_end either way. */
int cli_setup_kernels(cli_setup *s, cli_opts *o);

/* Closes the image, removes the base folder (marks it kept under --keep), frees the rest. */
void cli_setup_end(cli_setup *s, bool keep);

/* The library's log callback for progress: each line through cli_progress. */
void cli_log_progress(void *userdata, int level, const char *message);

/* The sandbox and run every kernel of check or conformance shares (kb_harness_env), from what s
 * set up and o asked for: language packs, base folder, bwrap, image, --ro-bind, the user and the
 * seccomp policy, --keep, the signal pipe as cancel fd, deadline_ms, progress on stderr. */
kb_harness_env cli_harness_env(const cli_setup *s, const cli_opts *o, int64_t deadline_ms);

/* After the kernels ran: the run object (kb_run_report with facts), redacted with every registered
 * secret set when redact is true (check), the human summary (on standard error when a report goes
 * to standard output), then every report file. Stores the run in *ret_run (the caller's to put)
 * and the command's exit code in *exit_code; prints why and returns -1 when no report could be
 * made. */
/* A run refused after its options were read (a kernel not found, a sandbox that cannot be enforced,
 * --require-full-boundary under the network override): when the report paths were checked, every
 * report asked for is still written, an incomplete run whose incomplete_reason is the refusal
 * (cli_last_error), whose kernels are those asked for with every check (item) not run
 * (kb_run_refused_kernel) and whose exit_code is exit_code, so a CI job's artifact step always has
 * the verdict and its test history every check. kind: KB_RUN_CHECK or KB_RUN_CONFORMANCE. */
void cli_setup_refused(cli_setup *s, int kind, int exit_code);

int cli_setup_output(cli_setup *s, kb_run *run, const kb_run_facts *facts, bool redact, json_object **ret_run,
                     int *exit_code);

/* The facts of a run of kind that check's and conformance's reports share: when it started
 * (cli_setup_begin), the signal that cut it short, --timeout as written, whether the transcript
 * lost a line, and sandbox (kb_run_report takes it). The command adds its own claims. */
kb_run_facts cli_run_facts(cli_setup *s, const cli_opts *o, kb_run_kind kind, bool transcript_failed,
                           json_object *sandbox);

/* The kernels' run of check (check_env) or conformance (conformance_env; exactly one is given):
 * kb_run_new over s's kernelspecs as o's team, every kernel run, and then the transcript closed
 * (cli_transcript_close). Says why kernels were left unstarted (kernel N had no thread, or no
 * memory for its transcript writer) and sets *transcript_failed when the transcript lost a line.
 * Returns 0 and *ret_run (what ran, even when some kernels did not start), or KB_EXIT_FAIL
 * (out of memory; said) with nothing made. */
int cli_run_kernels(const cli_setup *s, const cli_opts *o, const kb_check_env *check_env,
                    const kb_conformance_env *conformance_env, kb_transcript **transcript, kb_run **ret_run,
                    bool *transcript_failed);

/* ---- `kbound audit` (cmd_audit.c): check's run on kernelspecs started as they are ---- */

typedef struct cli_audit {
        kb_audit_env env;
        const char *expect_path; /* --expect */
        bool as_root;            /* --as-root */
} cli_audit;

/* check's whole run (cmd_check.c) for command; audit NULL: check, with flags_userdata its own flags;
 * else an audit, audit its userdata. Returns the exit code. */
int cli_check_run(int argc, char **argv, const cli_command *command, void *flags_userdata, cli_audit *audit);
/* After cli_setup_begin: the expect file read, who the launcher runs as. Prints why and returns a
 * KB_EXIT_* code, or 0. */
int cli_audit_begin(cli_audit *a, cli_setup *s, const cli_opts *o);
/* The report's "sandbox" for an audit: no bwrap of kbound's, who the launchers ran as, the expect
 * file. */
void cli_audit_report(const cli_audit *a, json_object *sandbox);
