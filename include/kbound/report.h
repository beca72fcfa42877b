/* report.h: render a check run (a json-c object, see docs/report-format.md) for people and for CI. */
#pragma once

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

/* The run object as pretty JSON with a trailing newline. Returns 0, -EINVAL, -ENOMEM or -EIO. */
KB_EXPORT int kb_report_json(json_object *run, FILE *out);

/* JUnit XML: one <testsuite> per kernel, one <testcase> per check (classname kbound.<kernel>,
 * name = check id); fail → <failure>, unsupported/not_claimed → <skipped> with the reason.
 * A kernel with "error" (or no checks) gets a failing test case "kernel.start"; an incomplete run or
 * one without kernels gets a suite "kbound.run" with a failing "run.complete", so CI never sees a
 * failed run as green. Each suite carries <properties> (verdict, summary, raw_network_override,
 * network, full_boundary). Everything XML-escaped; characters XML 1.0 forbids are stripped.
 * Returns 0, -EINVAL (out NULL) or -EIO. */
KB_EXPORT int kb_report_junit(json_object *run, FILE *out);

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

/* Says, writing nothing, whether path can take a report and how it would be written: callers
 * check every report path before any kernel starts, so a bad one is a usage error then rather than
 * a report lost at the end. A regular file must be writable and so must its folder; a new path
 * needs a writable folder; a device or FIFO must be writable.
 * Returns 0 and *ret_target (may be NULL), -EISDIR (a directory), -EINVAL (NULL or empty path; a
 * block device, a socket), -ENOENT (no such folder, or a symlink to nothing), or -errno of the
 * check (-EACCES, -EROFS, -ENOTDIR, -ELOOP, -ENAMETOOLONG...). */
KB_EXPORT int kb_report_check_path(const char *path, kb_report_target *ret_target);

/* Renders run with one of the above (in memory, up to KB_REPORT_MAX_BYTES) and writes it to path
 * as kb_report_check_path classifies it, checked again now: KB_REPORT_REPLACE atomically (a
 * temporary file beside it, fsync'd, mode 0644 since a report holds no secrets, renamed over it;
 * on failure the temporary is removed and an existing file is untouched); KB_REPORT_STREAM
 * opened for writing without O_CREAT or O_TRUNC, a FIFO without a reader refused (-ENXIO) rather
 * than waited for. Nothing is opened or created when rendering fails.
 * Returns 0, -EINVAL (NULL/empty path or render), -EFBIG (over the ceiling), render's own error,
 * kb_report_check_path's errors, or the real -errno of the write, fsync, close or rename
 * (-ENOSPC for a full disk; -EPIPE for a reader that went away, when SIGPIPE is ignored). */
KB_EXPORT int kb_report_write_file(json_object *run, const char *path, int (*render)(json_object *, FILE *));

/* Renders run as above and writes it to fd (the caller's, left open: standard output for "-").
 * A caller that also writes to fd through stdio flushes it first. Returns 0, -EINVAL, -EFBIG,
 * render's error or the write's -errno. */
KB_EXPORT int kb_report_write_fd(json_object *run, int fd, int (*render)(json_object *, FILE *));
