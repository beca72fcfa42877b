/* rules.h: judgements `check` and `conformance` share, so the two commands never call the same
 * behaviour of a kernel by different names (issue 12). Pure: facts in, a verdict and its words
 * out; no I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

/* How long after its shutdown_reply a kernel is watched for its exit, in lifecycle.shutdown and
 * conformance's shutdown alike: a bound for a kernel that does not exit, not a measure of speed
 * (scripts/bench measures that). ipykernel 6.17 exits 0.1-0.7 s after its reply, but its own ways
 * out are slower by design: it signals its child processes and waits for them to go (SIGTERM,
 * then SIGKILL, 14.4 s each); and its control thread's last flushes race the main thread's
 * close(): in about one shutdown of 100 each flush waits out its flush_timeout (10 s), and now
 * and then one blocks for good on the event pipe of the IOPub thread close() has just stopped
 * (seen beside two CPU spinners: 1 check in 20), so the process never ends on its own
 * (docs/kernels.md; Positron's issue 7142 is the same race). A kernel manager does not wait for
 * that: jupyter_client (7.4.9, Debian 12's) waits half its shutdown_wait_time (2.5 s) after the
 * reply, sends SIGTERM, waits as long again, then SIGKILL. kbound does the same, later: a kernel
 * still there KB_SHUTDOWN_PROMPT_MS after its reply is reported late, with what it held at that
 * moment (children, threads), and is sent SIGTERM through the pinned pidfd; one still there
 * KB_SHUTDOWN_TERM_MS after that did not shut down. */
#define KB_SHUTDOWN_PROMPT_MS 15000
#define KB_SHUTDOWN_TERM_MS 5000

/* The verdict on interrupt_request sent on control while a cell ran (or while idle), when the
 * kernel ignored it: no interrupt_reply, or the cell ran on. The kernelspec's interrupt_mode says
 * how a client is to interrupt the kernel (the messaging spec's kernelspec section): "message"
 * makes interrupt_request the way, so ignoring it is a failure; "signal" (also when the
 * kernelspec names none, the spec's default) makes SIGINT the way, so interrupt_request is an
 * optional path the kernel lacks: "unsupported", never a failure.
 * Returns "fail" or "unsupported" (static strings); reason (always NUL-terminated) says which
 * mode the kernelspec declares and what follows from it. */
const char *kb_rules_ignored_control_interrupt(const char *interrupt_mode, char *reason, size_t size);

/* Whether language_info.name (kernel_info_reply) and the kernelspec's language differ, compared
 * case-insensitively ("R" and "r" are the same). The messaging spec does not require them to be
 * equal, so a difference is a warning, never a failure. On a difference, warning (always
 * NUL-terminated) names both; an absent or empty name on either side is no difference (nothing
 * to compare). */
bool kb_rules_language_mismatch(const char *info_name, const char *spec_language, char *warning, size_t size);

/* Whether after (an IMAGE of facts.def, kb_inspect_image) shows the same process image as before,
 * an earlier look's: "the same kernel" in persistence.namespace and the interrupt checks is the
 * same image, not only the same pid, so a kernel that replaced itself with execve (keeping its pid
 * and start time, restoring its variables) is not taken for the one first seen. An execve lays the
 * new image out afresh, so any difference in the layout is one; and the sameness is a proof only
 * where layouts are randomized: when host (kb_inspect_host's facts) says randomize_va_space is 0,
 * or the process's personality says ADDR_NO_RANDOMIZE (or cannot be read), or its layout cannot be
 * read (all 0), the same layout proves nothing. Returns NULL when the same image is proven, else
 * words (in buf, at most size bytes) for a detail: what changed, or why it cannot be told. */
const char *kb_rules_image_change(json_object *host, json_object *before, json_object *after, char *buf, size_t size);
