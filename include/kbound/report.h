/* report.h: render a check run (a json-c object, see docs/report-format.md) for people and for CI. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <json-c/json.h>
#include "kbound/common.h"
#include "kbound/kernelspec.h"

/* The run's verdict from its checks: "pass" only when the run is complete (a JSON true), there is
 * at least one kernel, no kernel has "error", every kernel has at least one check, and every check
 * has an id and is pass, or unsupported/not_claimed/deviation with a non-empty detail (an
 * unexplained skip fails), or untested with a non-empty detail in a run whose "allow_untested" is
 * JSON true (an item nobody tested proves nothing unless the caller accepted that); else "fail". Sets run["verdict"],
 * run["claims"]["network"] ("claimed" only when the override is provably off -- claims.raw_network_override is JSON
 * false -- and every kernel's boundary.network was tested, pass or fail), ["full_boundary"] (pass, network claimed, and
 * all five boundary.* checks pass for every kernel) and ["summary"], one sentence derived from the data that states
 * exactly what was claimed (without a network claim it says "NOT claimed" and never contains "full boundary"), and each
 * kernel's "warnings" (a list of strings that never changes the verdict: a language_info.name that differs from the
 * kernelspec's language). Leaves exit_code to the caller. Idempotent; tolerates missing or wrongly typed fields (a
 * non-object "claims" is replaced). Returns 0 (pass) or 1 (fail, also for a NULL/non-object run, and when out of
 * memory). */
KB_EXPORT int kb_report_finish(json_object *run);

/* A kernel's entry in a run's "kernels" (check and conformance alike): name, display_name,
 * language, interrupt_mode, resource_dir, team, "error": null and an empty "checks" array. NULL if
 * out of memory. */
KB_EXPORT json_object *kb_report_kernel_new(const kb_kernelspec *spec, const char *team);

/* The report's "kernel_info" summary of a kernel_info_reply content (untrusted: a missing or
 * wrongly typed field becomes null): implementation, implementation_version, protocol_version,
 * language, language_version. */
KB_EXPORT json_object *kb_report_kernel_info(json_object *info);

/* A header line per kernel (name, language, team, startup, implementation and version; its error if
 * any), one line per check ("PASS         python3  boundary.network  detail"), then the verdict
 * sentence (claims.summary, so call kb_report_finish first). Plain text: control characters and
 * invalid UTF-8 become '?', long details are cut. Missing strings print as "?". Never prints
 * secrets: only what is in the run object, which holds none. Returns 0, -EINVAL (out NULL) or -EIO. */
KB_EXPORT int kb_report_human(json_object *run, FILE *out);

/* How kb_report_human_styled fits the table to where it goes. The zero value is kb_report_human's
 * plain text: no colour, one result per line whatever its length (what a pipe or a log wants). */
typedef struct kb_report_style {
        size_t width;         /* a terminal's columns: no line is wider (0: no limit) */
        bool color;           /* the statuses and the verdict's head in ANSI colour (kbound's own
                               * sequences only: the text they surround is cleaned as always) */
        bool whole;           /* with width: every detail whole, wrapped; else only failing ones
                               * are, and the others are cut to their line */
        const char *cut_hint; /* with width: a line printed after the verdict when a detail was cut
                               * (where to read it whole), or NULL */
} kb_report_style;

/* kb_report_human, fitted as style says (NULL: as kb_report_human). With a width, details wrap
 * with a hanging indent under their column, or go on lines of their own when the columns leave
 * them too little room; widths are counted so that a line is never wider than style->width (a
 * character from U+1100 on counts as two columns). Returns 0, -EINVAL (out NULL) or -EIO. */
KB_EXPORT int kb_report_human_styled(json_object *run, FILE *out, const kb_report_style *style);

/* The run object as pretty JSON with a trailing newline. Returns 0, -EINVAL, -ENOMEM or -EIO. */
KB_EXPORT int kb_report_json(json_object *run, FILE *out);

/* JUnit XML: one <testsuite> per kernel, one <testcase> per check (classname kbound.<kernel>,
 * name = check id); fail → <failure>, not_run → <error>, unsupported/not_claimed → <skipped> with
 * the reason; the attributes junit-10.xsd allows (no skipped count on <testsuites>).
 * A kernel with "error" (or no checks) gets a failing test case "kernel.start"; an incomplete run or
 * one without kernels gets a suite "kbound.run" with a failing "run.complete", so CI never sees a
 * failed run as green. Each suite carries <properties> (verdict, summary, raw_network_override,
 * network, full_boundary). Everything XML-escaped; characters XML 1.0 forbids are stripped.
 * Returns 0, -EINVAL (out NULL) or -EIO. */
KB_EXPORT int kb_report_junit(json_object *run, FILE *out);

/* Markdown for a CI page (GitHub's job summary, $GITHUB_STEP_SUMMARY): a heading with the
 * verdict, the summary sentence, a table of every kernel's checks (kernel, check, status, detail),
 * then each failing check's evidence folded in a <details> block as fenced JSON (at most 64). Every
 * string is cleaned to one line and escaped (HTML's specials as entities, ASCII punctuation
 * backslash-escaped), so nothing a kernel said becomes markup, a link or an image; the evidence's
 * fence is longer than any backtick run in it. Returns 0, -EINVAL (out NULL) or -EIO. */
KB_EXPORT int kb_report_markdown(json_object *run, FILE *out);

/* GitHub Actions workflow commands, one "::error title=kbound KERNEL CHECK::detail" line per
 * failing check (and per kernel that could not be checked, and for an incomplete run), the data
 * cleaned to one line and escaped as the runner unescapes it (%, and in the title : and ,). */
KB_EXPORT int kb_report_github_annotations(json_object *run, FILE *out);

/* Ceiling on one rendered report: a run object is small, and a runaway one must not become a
 * runaway allocation. */
#define KB_REPORT_MAX_BYTES (64u << 20)

/* How kb_report_write_file writes to a path. */
typedef enum kb_report_target {
        KB_REPORT_REPLACE = 1, /* a regular file (through symlinks: the link stays) or a new path:
                                * written beside it and renamed over it */
        KB_REPORT_STREAM,      /* a character device or a FIFO: opened and written, never replaced
                                * (renaming over /dev/null would destroy it for the whole machine) */
} kb_report_target;

/* Says, leaving nothing behind, whether path can take a report and how it would be written:
 * callers check every report path before any kernel starts, so a bad one is a usage error then
 * rather than a report lost at the end. A regular file must be writable and so must its folder; a
 * new path needs a writable folder; for both a file is made beside it and removed at once, as the
 * write will (/proc/version passes every permission check for root, and refuses new files); a
 * device or FIFO must be writable.
 * Returns 0 and *ret_target (may be NULL), -EISDIR (a directory), -EINVAL (NULL or empty path; a
 * block device, a socket), -ENOENT (no such folder, or a symlink to nothing), -EOPNOTSUPP (the
 * folder is there but takes no new file: /proc, /sys), or -errno of the
 * check (-EACCES, -EROFS, -ENOTDIR, -ELOOP, -ENAMETOOLONG...). */
KB_EXPORT int kb_report_check_path(const char *path, kb_report_target *ret_target);

/* Renders run with one of the above (in memory, up to KB_REPORT_MAX_BYTES) and writes it to path
 * as kb_report_check_path classifies it, checked again now: KB_REPORT_REPLACE atomically (a
 * temporary file beside it, fsync'd, mode 0644 since a report holds no secrets, renamed over it;
 * on failure, rendering's included, the temporary is removed and so is an existing regular file
 * there: an earlier run's verdict never stands where this run's could not be written);
 * KB_REPORT_STREAM opened for writing without O_CREAT or O_TRUNC, a FIFO without a reader refused
 * (-ENXIO) rather than waited for. Nothing is opened or created when rendering fails.
 * Returns 0, -EINVAL (NULL/empty path or render), -EFBIG (over the ceiling), render's own error,
 * kb_report_check_path's errors, or the real -errno of the write, fsync, close or rename
 * (-ENOSPC for a full disk; -EPIPE for a reader that went away, when SIGPIPE is ignored). */
KB_EXPORT int kb_report_write_file(json_object *run, const char *path, int (*render)(json_object *, FILE *));

/* Renders run as above and writes it to fd (the caller's, left open: standard output for "-").
 * A caller that also writes to fd through stdio flushes it first. Returns 0, -EINVAL, -EFBIG,
 * render's error or the write's -errno. */
KB_EXPORT int kb_report_write_fd(json_object *run, int fd, int (*render)(json_object *, FILE *));
