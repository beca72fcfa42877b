/* audit.h: `kbound audit`: a kernel sandbox kbound did not build (the kernelspec's own wrapper:
 * bwrap, firejail, crun, ...) checked as `check` checks kbound's own, with the same looks, judges,
 * packs and reports. What differs is who launched the sandbox (so what is bwrap's alone is not
 * claimed) and what each claim is held to: kbound's own claims, or an auditor's expect file, which
 * names what the deployment is meant to allow (docs/audit.md). */
#pragma once

#include <stdbool.h>
#include <json-c/json.h>
#include "kbound/common.h"
#include "kbound/error.h"
#include "kbound/sandbox.h"

/* What an audit run shares (kb_check_env.audit). Read-only while it runs. */
typedef struct kb_audit_env {
        bool as_root;            /* the launcher runs as root: asked for (--as-root), never the default */
        bool tcp;                /* the connection file's transport: tcp on the host's loopback, else ipc in the
                                  * team's runtime folder, which the launcher must show the kernel at the same
                                  * path */
        const char *workspace;   /* the kernel's workspace as it sees it (the expect file's); NULL: its working
                                  * folder */
        const char *expect_path; /* the expect file, for reports; NULL: kbound's own claims */
        json_object *expect;     /* kb_audit_expect_read's; NULL: kbound's own claims */
} kb_audit_env;

/* The version of the expect file's format this kbound reads ("kbound_expect"). */
#define KB_AUDIT_EXPECT_VERSION 1

/* Reads and checks an expect file (docs/audit.md, "The expect file"): a JSON object with
 * "kbound_expect": 1, and optionally "description" (a string), "workspace" (an absolute path as the
 * kernel sees it), "writable" (host folders the deployment lets the kernel write, each an absolute
 * path that exists) and "allow" (check ids, each with why the deployment does not make that claim).
 * Anything else, a check id that is no check, an empty reason, is refused. Returns 0 and a new
 * object, -EINVAL (refused: *ret_error says where), -errno reading it, -ENOMEM. */
KB_EXPORT int kb_audit_expect_read(const char *path, json_object **ret, kb_error **ret_error);

/* The expect file's workspace, or NULL. Borrowed. */
KB_EXPORT const char *kb_audit_expect_workspace(json_object *expect);
/* Its writable folders (an array of strings), or NULL. Borrowed. */
KB_EXPORT json_object *kb_audit_expect_writable(json_object *expect);

/* Holds every check of checks (a kernel's "checks" array, in place) to its expectation: each gets
 * "held_to" (what it was held to: kbound's claim, or the expect file's allowance and its reason) and
 * "as_expected". A check the expect file allows that failed becomes "not_claimed", its detail
 * saying what the host found and that it was expected, so no boundary the auditor did not claim is
 * ever counted as held; one that passed stays a pass of kbound's own claim. Any other check keeps
 * its status, and a failure reads "not as expected". Returns how many checks were not as expected,
 * or -ENOMEM. */
KB_EXPORT int kb_audit_hold(json_object *expect, const char *expect_path, json_object *checks);
