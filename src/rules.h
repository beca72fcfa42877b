/* rules.h: judgements `check` and `conformance` share, so the two commands never call the same
 * behaviour of a kernel by different names (issue 12). Pure: facts in, a verdict and its words
 * out; no I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* How long after its shutdown_reply a kernel has to exit, in lifecycle.shutdown and conformance's
 * shutdown alike. ipykernel takes 0.3-0.7 s on two busy cores, but twice more than 5 s in CI runs
 * on a machine running the sanitizer suite three tests at a time beside valgrind: a bound for a
 * kernel that never exits, not a measure of speed (scripts/bench measures that). */
#define KB_SHUTDOWN_EXIT_MS 15000

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
