/* conformance.h: protocol conformance of one kernel, inside the sandbox: kernel_info, execute
 * ordering and outputs, display updates, clear_output, pager, execution counts, stdin,
 * is_complete, complete, inspect, history, comms, the debugger and subshells, interrupts,
 * shutdown, and the shape of every message received. Each item is a check of a kernel object
 * (docs/report-format.md) whose status is pass, fail, deviation (a known, named deviation of this
 * implementation, observed), unsupported (an optional part of the protocol the kernel lacks, with
 * the reason) or untested (with the reason). Code snippets come from the language pack's
 * "conformance" member; known deviations from its "deviations" member, keyed by kernel_info's
 * implementation. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include "kbound/client.h"
#include "kbound/harness.h"
#include "kbound/kernelspec.h"
#include "kbound/sandbox.h"

/* The network stays unshared whatever the caller's override: conformance claims no boundary, so
 * it has no allow_network to honour. */
typedef struct kb_conformance_env {
        kb_harness_env harness; /* the sandbox and the run, as check has them */
        int item_timeout_ms;    /* how long one request may take (<= 0: 10 s) */
        int long_cell_seconds;  /* how long the long cell runs if nobody stops it (<= 0: 60) */
} kb_conformance_env;

/* The ids of every item, in the order they run; NULL-terminated. */
KB_EXPORT const char *const *kb_conformance_items(void);

/* Launches the kernel in the sandbox as team, runs every item, stops it and removes its folder
 * (unless env->harness.keep). Always returns a kernel object in *ret with one check per item (items that
 * could not run are fail or untested with the reason, never missing), "error" set when the kernel
 * could not be started, and "kernel_info" (the reply's content, whole). *ret_outcome: DONE,
 * NOT_ENFORCED (the sandbox could not be set up) or CANCELLED. Returns 0 or -ENOMEM. */
KB_EXPORT int kb_conformance_run(const kb_conformance_env *env, const kb_kernelspec *spec, const char *team,
                                 json_object **ret, kb_check_outcome *ret_outcome);
